"""Fixtures of the window tests: the Qt and qasync ones shared with tests/viewmodels
(`tests/qt_fixtures.py`), `tool_page` and `data_folder`."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from app.registry import TOOLS_BY_KEY
from app.viewmodels.session import Session
from app.viewmodels.tools import ToolModel
from tests.qt_fixtures import (  # noqa: F401 (fixtures)
    _fonts_exist,
    _free_closed_loops_on_gui_thread,
    arun,
    connect,
    qloop,
)
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
def data_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A data folder of this test's own: its journal and snapshots (the windows that change a
    server write them there)."""
    folder = tmp_path / "data"
    monkeypatch.setenv("FLAGDESK_DATA_DIR", str(folder))
    return folder
