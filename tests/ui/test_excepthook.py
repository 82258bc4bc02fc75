"""The unexpected-error dialog: summary, traceback, "Copy details", the log file, no token."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication, QMessageBox, QPushButton

from app import __version__, logs
from ui import excepthook

TOKEN = "*:*.excepthook-test-admin-token-0123456789"


@pytest.fixture
def log_file(tmp_path: Path) -> Iterator[Path]:
    logs.reset_logging()
    logs.register_secret(TOKEN)
    path = logs.setup_logging(directory=tmp_path)
    yield path
    logs.reset_logging()
    logs.forget_secret(TOKEN)


@pytest.fixture
def close_boxes(qtbot: Any) -> Iterator[None]:
    yield
    for box in list(excepthook._boxes):
        box.close()
    qtbot.waitUntil(lambda: not excepthook._boxes)


def error_boxes() -> list[QMessageBox]:
    return [
        w
        for w in QApplication.topLevelWidgets()
        if isinstance(w, QMessageBox) and w.objectName() == "unexpectedErrorBox" and w.isVisible()
    ]


def fail_with_token() -> None:
    raise ValueError(f"the server said no to {TOKEN}")


def caught() -> tuple[type[BaseException], BaseException, TracebackType | None]:
    try:
        fail_with_token()
    except ValueError:
        exc_type, exc, tb = sys.exc_info()
    assert exc_type is not None and exc is not None
    return exc_type, exc, tb


def test_the_dialog_shows_the_error_without_the_token(
    qtbot: Any, log_file: Path, close_boxes: None, capsys: pytest.CaptureFixture[str]
) -> None:
    excepthook.show_unexpected_error(*caught())
    [box] = error_boxes()
    assert box.informativeText() == "ValueError: the server said no to ***"
    assert f"Details were written to {log_file}" in box.text()
    assert "fail_with_token" in box.detailedText()
    everything = box.text() + box.informativeText() + box.detailedText()
    assert TOKEN not in everything
    err = capsys.readouterr().err
    assert "ValueError: the server said no to ***" in err  # still printed, redacted
    assert TOKEN not in err


def test_copy_details_copies_versions_and_traceback_and_keeps_the_dialog_open(
    qtbot: Any, log_file: Path, close_boxes: None
) -> None:
    QApplication.clipboard().clear()
    excepthook.show_unexpected_error(*caught())
    [box] = error_boxes()
    button = box.findChild(QPushButton, "copyDetailsButton")
    assert isinstance(button, QPushButton)
    button.click()
    qtbot.wait(50)
    copied = QApplication.clipboard().text()
    assert f"flagdesk {__version__}" in copied
    assert "Python " in copied and "PySide6 " in copied and "Qt " in copied
    assert "Platform " in copied
    assert "Traceback (most recent call last)" in copied and "fail_with_token" in copied
    assert TOKEN not in copied
    assert box.isVisible()
    assert error_boxes() == [box]


def test_the_error_goes_to_the_log_without_the_token(
    qtbot: Any, log_file: Path, close_boxes: None
) -> None:
    with qtbot.captureExceptions() as exceptions:
        excepthook.install()
        try:
            try:
                fail_with_token()
            except ValueError:
                sys.excepthook(*sys.exc_info())
        finally:
            sys.excepthook = sys.__excepthook__
    assert exceptions == []  # the hook itself did not fail
    for handler in logging.getLogger().handlers:
        handler.flush()
    text = log_file.read_text(encoding="utf-8")
    assert "ERROR" in text and "flagdesk: Unexpected error: ValueError" in text
    assert "Traceback (most recent call last)" in text and "fail_with_token" in text
    assert TOKEN not in text
    assert len(error_boxes()) == 1


def test_keyboard_interrupt_shows_no_dialog(qtbot: Any, log_file: Path) -> None:
    try:
        raise KeyboardInterrupt
    except KeyboardInterrupt:
        exc_type, exc, tb = sys.exc_info()
    assert exc_type is not None and exc is not None
    excepthook.show_unexpected_error(exc_type, exc, tb)
    assert error_boxes() == []
    assert "KeyboardInterrupt" not in log_file.read_text(encoding="utf-8")


def test_a_failing_dialog_does_not_recurse(
    qtbot: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = []

    def broken(*args: object) -> None:
        calls.append(args)
        excepthook.show_unexpected_error(*caught())  # as if the hook were reached again
        raise RuntimeError("no dialog today")

    monkeypatch.setattr(excepthook, "_build_dialog", broken)
    excepthook.show_unexpected_error(*caught())
    assert len(calls) == 1
    assert error_boxes() == []
    err = capsys.readouterr().err
    assert "the error dialog could not be shown" in err and "no dialog today" in err
    assert TOKEN not in err  # redacted by the pattern, though not registered here


def test_markup_in_a_message_is_shown_as_text(qtbot: Any, close_boxes: None) -> None:
    try:
        raise ValueError("<b>bold</b> & <i>co</i>")
    except ValueError:
        exc_type, exc, tb = sys.exc_info()
    assert exc_type is not None and exc is not None
    excepthook.show_unexpected_error(exc_type, exc, tb)
    [box] = error_boxes()
    assert box.informativeText() == "ValueError: <b>bold</b> & <i>co</i>"
    assert "Details were written" not in box.text()  # no log set up: no path to show


def test_the_excepthook_shows_a_dialog(qtbot: Any, capsys: pytest.CaptureFixture[str]) -> None:
    try:
        raise KeyError("lost")
    except KeyError:
        exc_type, exc, tb = sys.exc_info()
    assert exc_type is not None and exc is not None
    excepthook.show_unexpected_error(exc_type, exc, tb)
    boxes = [
        w
        for w in QApplication.topLevelWidgets()
        if isinstance(w, QMessageBox) and w.objectName() == "unexpectedErrorBox"
    ]
    assert len(boxes) == 1
    box = boxes[0]
    assert box.isVisible()
    assert box.informativeText() == "KeyError: 'lost'"
    assert "Traceback" in box.detailedText()
    assert "KeyError: 'lost'" in capsys.readouterr().err  # still printed as before
    box.close()
    qtbot.waitUntil(lambda: not excepthook._boxes)
