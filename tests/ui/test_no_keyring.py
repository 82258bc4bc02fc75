"""The connection dialog on a machine without an OS keyring: it says so and lets the person
choose memory or a labelled plain-text file; it never writes a token without that choice."""

from __future__ import annotations

import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import keyring
import pytest
from keyring.backends import fail
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox, QPushButton

from app.profiles import ProfileStore
from app.viewmodels.session import READY, Session
from sandbox.process import SandboxProcess
from ui.connection_dialog import ConnectionDialog


@pytest.fixture
def no_keyring() -> Iterator[None]:
    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    yield
    keyring.set_keyring(previous)


@pytest.fixture
def dialog(
    qtbot: Any, qloop: Any, tmp_path: Path, arun: Callable[..., Any], no_keyring: None
) -> Iterator[tuple[ConnectionDialog, Session]]:
    session = Session(ProfileStore(tmp_path / "config"))
    dialog = ConnectionDialog(session)
    qtbot.addWidget(dialog)
    dialog.show()
    yield dialog, session
    arun(session.aclose())


def answer_with(button_name: str | None, seen: list[str]) -> None:
    """When the question box opens, note its text and press `button_name` (None: Cancel)."""

    def press() -> None:
        box = QApplication.activeModalWidget()
        if not isinstance(box, QMessageBox):
            QTimer.singleShot(10, press)
            return
        seen.append(box.objectName() + ": " + box.text() + " " + box.informativeText())
        if button_name is None:
            box.button(QMessageBox.StandardButton.Cancel).click()
        else:
            button = box.findChild(QPushButton, button_name)
            assert button is not None, button_name
            button.click()

    QTimer.singleShot(0, press)


def fill(dialog: ConnectionDialog, name: str, sb: SandboxProcess) -> None:
    dialog.add_button.click()
    dialog.name_edit.setText(name)
    dialog.url_edit.setText(sb.url)
    dialog.token_edit.setText(sb.admin_token)


def test_keep_in_memory_saves_no_token_anywhere_and_connects(
    qtbot: Any, dialog: tuple[ConnectionDialog, Session], demo_sandbox: SandboxProcess
) -> None:
    window, session = dialog
    fill(window, "Memory", demo_sandbox)
    seen: list[str] = []
    answer_with("keepInMemoryButton", seen)
    assert window.save() == "Memory"
    assert seen and seen[0].startswith("noKeyringBox: There is no OS keyring")
    assert str(session.store.tokens_file) in seen[0]  # the file choice names the file
    assert session.store.get("Memory").token_store == "memory"
    for path in session.store.directory.iterdir():
        assert demo_sandbox.admin_token not in path.read_text()
    assert not session.store.tokens_file.exists()
    session.open_profile("Memory")
    qtbot.waitUntil(lambda: session.state == READY, timeout=20_000)


def test_the_file_fallback_is_chosen_explicitly_and_private(
    dialog: tuple[ConnectionDialog, Session], demo_sandbox: SandboxProcess
) -> None:
    window, session = dialog
    fill(window, "In file", demo_sandbox)
    seen: list[str] = []
    answer_with("saveInFileButton", seen)
    assert window.save() == "In file"
    assert session.store.get("In file").token_store == "file"
    tokens = session.store.tokens_file
    assert demo_sandbox.admin_token in tokens.read_text()
    assert stat.S_IMODE(tokens.stat().st_mode) == 0o600


def test_cancel_saves_nothing_and_keeps_the_form(
    dialog: tuple[ConnectionDialog, Session], demo_sandbox: SandboxProcess
) -> None:
    window, session = dialog
    fill(window, "Undecided", demo_sandbox)
    seen: list[str] = []
    answer_with(None, seen)
    assert window.save() is None
    assert seen
    assert "no place to keep the token was chosen" in window.problems.text()
    assert window.name_edit.text() == "Undecided"
    assert window.token_edit.text() == demo_sandbox.admin_token
    assert [p.name for p in session.store.profiles()] == []
    assert not session.store.tokens_file.exists()


def test_the_storage_question_is_asked_once_and_each_token_says_where_it_is(
    qtbot: Any, dialog: tuple[ConnectionDialog, Session], demo_sandbox: SandboxProcess
) -> None:
    window, session = dialog
    seen: list[str] = []
    boxes: list[QMessageBox] = []

    def press_memory_if_asked() -> None:
        box = QApplication.activeModalWidget()
        if isinstance(box, QMessageBox):
            boxes.append(box)
            seen.append(box.informativeText())
            button = box.findChild(QPushButton, "keepInMemoryButton")
            assert button is not None
            button.click()

    timer = QTimer()
    timer.timeout.connect(press_memory_if_asked)
    timer.start(10)
    try:
        fill(window, "First", demo_sandbox)
        window.client_token_edit.setText(demo_sandbox.client_token)
        assert window.save() == "First"
        fill(window, "Second", demo_sandbox)
        assert window.save() == "Second"
    finally:
        timer.stop()
    assert len(seen) == 1  # the answer holds for the second connection
    # keyring's reason, whole (it used to be cut at 160 characters, mid-word)
    assert "See https://pypi.org/project/keyring for details." in seen[0]
    assert session.store.get("Second").token_store == "memory"

    for name in ("First", "Second"):
        window.reload(select=name)
        where = window.token_places.text()
        assert where.startswith("Token: in memory until flagdesk exits (not saved)."), where
        assert "leave empty to keep it" in window.token_edit.placeholderText()
        assert window.token_edit.placeholderText().startswith("Kept in memory until")
    window.reload(select="First")
    assert window.token_places.text().endswith(
        "Client token: in memory until flagdesk exits (not saved)."
    )
    assert window.client_token_edit.placeholderText().startswith("Kept in memory")
    window.reload(select="Second")
    assert window.token_places.text().endswith("Client token: not set.")
    assert window.client_token_edit.placeholderText().startswith("not set")
