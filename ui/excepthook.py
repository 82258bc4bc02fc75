"""Unexpected errors shown in a dialog instead of vanishing into a terminal nobody watches.

`install()` sets `sys.excepthook`; exceptions in Qt slots and in view-model tasks end there
(see `app.viewmodels.base`). The traceback also goes to stderr, as before.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable
from types import TracebackType

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMessageBox

ExceptHook = Callable[[type[BaseException], BaseException, TracebackType | None], object]

#: open dialogs, referenced until they close
_boxes: set[QMessageBox] = set()
_showing = False


def show_unexpected_error(
    exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None
) -> None:
    sys.__excepthook__(exc_type, exc, tb)
    global _showing
    app = QApplication.instance()
    if _showing or not isinstance(app, QApplication) or issubclass(exc_type, KeyboardInterrupt):
        return
    _showing = True  # an error while building the dialog must not recurse
    try:
        box = QMessageBox(app.activeWindow())
        box.setObjectName("unexpectedErrorBox")
        box.setIcon(QMessageBox.Icon.Critical)
        box.setWindowTitle("flagdesk: unexpected error")
        box.setText("Something went wrong that flagdesk did not expect.")
        box.setInformativeText(f"{exc_type.__name__}: {exc}")
        box.setDetailedText("".join(traceback.format_exception(exc_type, exc, tb)))
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        _boxes.add(box)
        box.finished.connect(lambda _result, box=box: _boxes.discard(box))
        box.open()  # not exec(): a nested event loop inside an asyncio callback invites trouble
    finally:
        _showing = False


def install() -> ExceptHook:
    """Show unexpected errors in a dialog from now on; returns the previous hook."""
    previous = sys.excepthook
    sys.excepthook = show_unexpected_error
    return previous
