"""A closed window is freed with what it showed: its view-model and rows do not outlive it.

The large lists are loaded with cyclic garbage collection paused, and what is alive at the end
is frozen out of the collector's sight (`app.startup.paused_gc`); a window holds reference
cycles (a confirmation flow's callback naming its window), which only the collector frees. So
once a window is deleted, what was frozen is collected again (`collect_frozen`): without it,
`bench/ui_tables.py` ended at 688 MB after opening each 100,000-row table three times."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import pytest

from app.registry import TOOLS_BY_KEY
from app.viewmodels.session import Session
from app.viewmodels.tools import ToolModel
from sandbox.process import SandboxProcess
from ui.tool_page import ToolPage


@pytest.mark.parametrize(
    ("key", "item"),
    # issue 38: the event log, its next page read ahead when it is closed
    [("inactive_users", None), ("archived_features", "web-shop"), ("events", None)],
)
def test_a_closed_window_frees_its_view_model_and_rows(
    qtbot: Any,
    connect: Callable[..., Session],
    demo_sandbox: SandboxProcess,
    key: str,
    item: str | None,
) -> None:
    session = connect(demo_sandbox)
    page = ToolPage(ToolModel(TOOLS_BY_KEY[key], session))
    page.show()
    content = page.ensure_content()
    assert content is not None
    if item is not None:
        content.open_item(item)
    freed = weakref.ref(content.model)
    rows = weakref.ref(content.model.table)  # the table model holds the rows
    qtbot.waitUntil(lambda: getattr(rows(), "total_count", 0) > 0, timeout=20_000)
    page.close_page()
    page.deleteLater()
    del page, content
    qtbot.waitUntil(lambda: freed() is None and rows() is None, timeout=5_000)
