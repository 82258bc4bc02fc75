"""Unexpected errors shown in a dialog instead of vanishing into a terminal nobody watches.

`install()` sets `sys.excepthook`; exceptions in Qt slots and in view-model tasks end there
(see `app.viewmodels.base`). Each one goes to the log (`app.logs`, through the logger
`flagdesk`), to stderr as before, and into a dialog with the traceback and a "Copy details"
button for bug reports. Everything shown, printed or logged is passed through
`app.logs.redact()` first, so a token in an exception message stays out of all three.
"""

from __future__ import annotations

import logging
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

import PySide6
from PySide6.QtCore import qVersion
from PySide6.QtWidgets import QApplication

from app import __version__

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMessageBox

ExceptHook = Callable[[type[BaseException], BaseException, TracebackType | None], object]

log = logging.getLogger("flagdesk")

#: open dialogs, referenced until they close
_boxes: set[QMessageBox] = set()  # the dialogs open now
#: more open at once than this and further errors only go to the log (an error in a timer
#: would otherwise bury the desktop in dialogs)
MAX_OPEN_BOXES = 3
SUMMARY_LENGTH = 300
_showing = False


# `app.logs` is imported on first use: the hook is installed before the window is shown, and
# logging.handlers is not needed for that.


def _redact(text: str) -> str:
    from app.logs import redact

    return redact(text)


def _current_log_file() -> Path | None:
    from app.logs import current_log_file

    return current_log_file()


def summary(exc_type: type[BaseException], exc: BaseException) -> str:
    """`Type: first line of the message`, redacted and cut to one short line."""
    try:
        message = str(exc).strip().splitlines()
    except Exception:  # an exception whose __str__ fails
        message = []
    text = f"{exc_type.__name__}: {message[0]}" if message else exc_type.__name__
    text = _redact(text)
    return text if len(text) <= SUMMARY_LENGTH else text[: SUMMARY_LENGTH - 1] + "…"


def version_info() -> str:
    import platform

    return (
        f"flagdesk {__version__}\n"
        f"Python {sys.version.split()[0]} ({platform.python_implementation()})\n"
        f"PySide6 {PySide6.__version__}, Qt {qVersion()}\n"
        f"Platform {platform.platform()}"
    )


def details_for_copy(trace: str) -> str:
    """What "Copy details" puts on the clipboard: versions, then the (redacted) traceback."""
    return f"{version_info()}\n\n{trace}"


def show_unexpected_error(
    exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None
) -> None:
    try:
        trace = _redact("".join(traceback.format_exception(exc_type, exc, tb)))
    except Exception:  # an exception whose __str__ fails, say
        trace = f"{exc_type.__name__} (its traceback could not be formatted)\n"
    _print(trace)
    if issubclass(exc_type, KeyboardInterrupt):
        return
    line = summary(exc_type, exc)
    if log.hasHandlers():  # else logging's last resort would print it to stderr a second time
        # already redacted text rather than exc_info: every handler gets the safe version,
        # not only the log file's
        log.error("Unexpected error: %s\n%s", line, trace.rstrip("\n"))
    _show_dialog(line, trace)


def _print(text: str) -> None:
    stream = sys.stderr
    if stream is None:  # pythonw on Windows
        return
    try:
        stream.write(text)
        stream.flush()
    except Exception:
        pass


def _show_dialog(line: str, trace: str) -> None:
    global _showing
    app = QApplication.instance()
    if _showing or not isinstance(app, QApplication) or len(_boxes) >= MAX_OPEN_BOXES:
        return
    _showing = True  # an error while building the dialog must not recurse
    try:
        _build_dialog(app, line, trace)
    except Exception:
        _print("flagdesk: the error dialog could not be shown:\n" + _redact(_format_current()))
    finally:
        _showing = False


def _format_current() -> str:
    return "".join(traceback.format_exception(*sys.exc_info()))


def _build_dialog(app: QApplication, line: str, trace: str) -> QMessageBox:
    # imported here: the hook is installed before the window is shown, the dialog is rare (and
    # `Qt` creates its namespace's enums when first named: not before the frame is on screen)
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QLabel, QMessageBox, QPushButton

    box = QMessageBox(app.activeWindow())
    box.setObjectName("unexpectedErrorBox")
    box.setIcon(QMessageBox.Icon.Critical)
    box.setWindowTitle("flagdesk: unexpected error")
    box.setTextFormat(Qt.TextFormat.PlainText)
    text = "Something went wrong that flagdesk did not expect."
    path = _current_log_file()
    if path is not None:
        text += f"\n\nDetails were written to {path}"
    box.setText(text)
    box.setInformativeText(line)
    informative = box.findChild(QLabel, "qt_msgbox_informativelabel")
    if isinstance(informative, QLabel):  # "<...>" in a message is not markup
        informative.setTextFormat(Qt.TextFormat.PlainText)
    box.setDetailedText(trace)

    copy = QPushButton("Copy details")
    copy.setObjectName("copyDetailsButton")
    copy.setToolTip("Copy the versions and the traceback, for a bug report")
    box.addButton(copy, QMessageBox.ButtonRole.ActionRole)
    # QMessageBox closes on every button; this one must not close it: drop the button box's
    # connection to it, then connect the copying alone
    copy.clicked.disconnect()
    details = details_for_copy(trace)

    def copy_details() -> None:
        clipboard = QApplication.clipboard()
        clipboard.setText(details)
        copy.setText("Copied")

    copy.clicked.connect(copy_details)
    box.addButton(QMessageBox.StandardButton.Close)
    box.setDefaultButton(QMessageBox.StandardButton.Close)
    box.setEscapeButton(QMessageBox.StandardButton.Close)

    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    _boxes.add(box)
    box.finished.connect(lambda _result, box=box: _boxes.discard(box))
    box.open()  # not exec(): a nested event loop inside an asyncio callback invites trouble
    return box


def install() -> ExceptHook:
    """Show unexpected errors in a dialog from now on; returns the previous hook."""
    previous = sys.excepthook
    sys.excepthook = show_unexpected_error
    return previous
