"""Fixtures of the window tests: the Qt and qasync ones shared with tests/viewmodels
(`tests/qt_fixtures.py`), `tool_page`, `open_editor` (the Groups page's editor), and
`data_folder` (a data folder of the test's own, for the journal of the windows that change a
server)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from app.registry import TOOLS_BY_KEY
from app.viewmodels.session import Session
from app.viewmodels.tools import ToolModel
from sandbox.process import SandboxProcess
from tests.qt_fixtures import (  # noqa: F401 (fixtures)
    _fonts_exist,
    _free_closed_loops_on_gui_thread,
    arun,
    connect,
    qloop,
)
from ui.groups import GroupEditor
from ui.tool_page import ToolPage


@pytest.fixture
def tool_page(qtbot: Any) -> Iterator[Callable[..., ToolPage]]:
    """`tool_page(key, session, size=(900, 640))`: the tool's page, shown, its window built;
    closed (its view-models too) after the test."""
    pages: list[ToolPage] = []

    def make(key: str, session: Session, size: tuple[int, int] = (900, 640)) -> ToolPage:
        page = ToolPage(ToolModel(TOOLS_BY_KEY[key], session))
        pages.append(page)
        qtbot.addWidget(page)
        page.resize(*size)
        page.show()
        return page

    yield make
    for page in pages:
        page.close_page()


@pytest.fixture
def open_editor(
    qtbot: Any,
    connect: Callable[..., Session],  # noqa: F811 - the fixture imported above
    tool_page: Callable[..., ToolPage],
) -> Callable[..., tuple[ToolPage, GroupEditor]]:
    """`open_editor(sandbox, token=None)`: the Groups page on a connected session, shown, with
    its editor loaded (or failed)."""

    def make(sb: SandboxProcess, token: str | None = None) -> tuple[ToolPage, GroupEditor]:
        session = connect(sb, token)
        page = tool_page("groups", session, (1100, 760))
        qtbot.waitActive(page)
        editor = page.tool_content
        assert isinstance(editor, GroupEditor)
        m = editor.model
        if m.available:
            qtbot.waitUntil(lambda: (m.loaded or bool(m.error)) and not m.busy, timeout=20_000)
        return page, editor

    return make


@pytest.fixture
def data_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A data folder of this test's own: its journal and snapshots."""
    folder = tmp_path / "data"
    monkeypatch.setenv("FLAGDESK_DATA_DIR", str(folder))
    return folder
