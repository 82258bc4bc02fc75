"""`ToolContent`, the base of a tool's own window: the part of a `ToolPage` below its title.

A module of its own so that the windows (`ui.groups`, ...) import it without importing
`ui.tool_page`, which imports them (lazily, `ui.tool_page.WINDOWS`): no import cycle."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget

from app.viewmodels.session import Session


class ToolContent(QWidget):
    """The base of a tool's own window: the part of a `ToolPage` below its title."""

    #: show another tool with an item in it: ("users", user id), ("project_dashboard", "default")
    open_requested = Signal(str, object)
    #: what the window shows now ("Web shop (web-shop)"), for a window of its own's title
    title_changed = Signal(str)
    #: the window is of use where the tool is not available (the metrics tool reads and checks
    #: files with no connection): the page still says why, but leaves the window enabled
    usable_when_unavailable = False

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session

    def refresh(self) -> None:
        """F5: load again."""

    def open_item(self, item: Any) -> None:
        """Show `item` (what another tool's `open_requested` carried)."""

    def close_content(self) -> None:
        """The page is closing: close the view-model (cancelling its tasks)."""

    def unsaved_changes(self) -> str:
        """What closing the window now would lose, in a sentence ("" when nothing, the
        default): the main window and a tool's window of its own ask before they close."""
        return ""

    def focus_filter(self) -> bool:
        """Ctrl+F: focus this window's own filter box (one that is not a `DataTable`'s) and
        return True; False (the default) lets the page look for a `DataTable`."""
        return False
