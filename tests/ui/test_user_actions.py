"""The Users window's actions end to end against sandboxes over HTTP, state read back from the
server: New user… (confirmed, created, read back and selected; a refused create keeps the form
as typed; the server's creation limit waited out with the wait shown), Delete… (the confirmation's
words, keyboard only, Cancel changes nothing, the snapshot and the journal), the last Admin
refused before anything is sent (delete and demotion), the reset link shown and copied, Undo
right after a save, and each action disabled with its reason on a token that cannot use it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication, QLabel, QMessageBox

from app.actions.journal import JOURNAL_NAME, State, journal_folder, read_journal
from app.api.models import UserList
from app.changes import Changes, Resource
from app.registry import CREATE_USER
from app.viewmodels.session import Session
from sandbox.process import SandboxProcess
from tests.sandbox.test_inactive_delete import sql
from tests.ui.test_users import choose, confirm_save, open_editor, record_puts, retype
from ui.users import UserEditor

GRETA = "greta.schmidt"  # id 8, Editor
VIEWER = 3


@pytest.fixture
def data_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "data"
    monkeypatch.setenv("FLAGDESK_DATA_DIR", str(folder))
    return folder


def served(arun: Any, session: Session) -> UserList:
    return arun(arun(session.client()).list_users())  # type: ignore[no-any-return]


def by_email(arun: Any, session: Session, email: str) -> Any:
    return next((u for u in served(arun, session).users if u.email == email), None)


def journal(data_folder: Path) -> list[Any]:
    return read_journal(journal_folder("test sandbox", data_folder) / JOURNAL_NAME)


def fill_create(qtbot: Any, editor: UserEditor, email: str, name: str, role: str) -> Any:
    qtbot.mouseClick(editor.new_button, Qt.MouseButton.LeftButton)
    dialog = editor.create_dialog
    assert dialog is not None and dialog.isVisible()
    qtbot.keyClicks(dialog.email_edit, email)
    qtbot.keyClicks(dialog.name_edit, name)
    dialog.role_combo.setCurrentText(role)
    qtbot.mouseClick(dialog.create_button, Qt.MouseButton.LeftButton)
    return dialog


def confirm(qtbot: Any, editor: UserEditor) -> Any:
    box = editor.confirmation
    assert box is not None and box.isVisible()
    assert box.defaultButton() is box.cancel_button  # Enter does not go ahead
    box.action_button.setFocus()
    qtbot.keyClick(box.action_button, Qt.Key.Key_Space)  # keyboard only
    return box


def test_create_a_user_confirmed_read_back_and_selected(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, arun: Any,
    data_folder: Path,
) -> None:  # fmt: skip
    session = connect(sandbox)
    editor = open_editor(qtbot, session)
    changes: list[Changes] = []
    session.data_changed.connect(lambda c, _source: changes.append(c))
    assert editor.new_button.isEnabled() and editor.new_button.toolTip() == "Create a user"
    fill_create(qtbot, editor, "new.person@example.com", "New Person", "Editor")
    box = editor.confirmation
    assert box is not None and box.text() == "Create New Person?"
    said = box.informativeText().split("\n\n")
    assert said[0] == (f"A user will be created on {sandbox.url} (connection “test sandbox”): "
                       "New Person, new.person@example.com, root role Editor.")  # fmt: skip
    assert said[1].startswith("No email is sent")
    assert by_email(arun, session, "new.person@example.com") is None  # nothing sent yet
    confirm(qtbot, editor)
    qtbot.waitUntil(lambda: editor.create_dialog is None, timeout=20_000)
    made = by_email(arun, session, "new.person@example.com")
    assert made is not None and made.name == "New Person" and made.emailSent is False
    qtbot.waitUntil(lambda: editor.model.current_id == made.id, timeout=20_000)
    assert editor.name_edit.text() == "New Person" and editor.role_combo.currentText() == "Editor"
    assert editor.saved_label.text() == f"Created New Person (id {made.id})."
    assert editor.invite_link.text().startswith(f"{sandbox.url}/new-user?token=")
    assert changes == [Changes.of(Resource.USERS)]  # which user is not known until answered
    (entry,) = journal(data_folder)
    assert (entry.action, entry.state, entry.status) == ("users.create", State.DONE, 201)


def test_a_refused_create_keeps_the_form_and_cancel_creates_nothing(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, arun: Any,
    data_folder: Path,
) -> None:  # fmt: skip
    session = connect(sandbox)
    editor = open_editor(qtbot, session)
    count = len(served(arun, session).users)
    # Cancel at the confirmation: nothing sent, nothing journaled, the form as typed
    dialog = fill_create(qtbot, editor, "amara.okafor@example.com", "Amara Two", "Viewer")
    box = editor.confirmation
    assert box is not None
    qtbot.keyClick(box, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: editor.confirmation is None)
    assert not box.confirmed and not data_folder.exists()
    assert dialog.isVisible() and dialog.email_edit.text() == "amara.okafor@example.com"
    # confirmed: the server refuses the taken email; the dialog stays with what was typed
    qtbot.mouseClick(dialog.create_button, Qt.MouseButton.LeftButton)
    confirm(qtbot, editor)
    qtbot.waitUntil(lambda: dialog.error_label.isVisible(), timeout=20_000)
    assert "User already exists" in dialog.error_label.text()
    assert dialog.isVisible() and editor.create_dialog is dialog
    assert (dialog.email_edit.text(), dialog.name_edit.text(), dialog.role) == (
        "amara.okafor@example.com", "Amara Two", "Viewer")  # fmt: skip
    assert len(served(arun, session).users) == count
    (entry,) = journal(data_folder)
    assert (entry.state, entry.status) == (State.FAILED, 400)
    # a form that cannot be sent says why, before anything is sent
    dialog.email_edit.setText("not an email")
    qtbot.mouseClick(dialog.create_button, Qt.MouseButton.LeftButton)
    assert editor.confirmation is None and "not an email address" in dialog.error_label.text()


def test_the_creation_limit_is_waited_out_with_the_wait_shown(
    qtbot: Any, connect: Callable[..., Session], limited_sandbox: SandboxProcess, arun: Any,
    data_folder: Path,
) -> None:  # fmt: skip
    session = connect(limited_sandbox)
    editor = open_editor(qtbot, session)
    with limited_sandbox.admin() as http:  # the one creation of this window is used up
        assert http.post("/api/admin/user-admin",
                         json={"email": "first@example.com", "rootRole": "Viewer"}
                         ).status_code == 201  # fmt: skip
    dialog = fill_create(qtbot, editor, "second@example.com", "Second", "Viewer")
    confirm(qtbot, editor)
    qtbot.waitUntil(lambda: dialog.progress_label.isVisible(), timeout=10_000)
    assert "waiting" in dialog.progress_label.text()
    assert not dialog.create_button.isEnabled() and not dialog.error_label.isVisible()
    qtbot.waitUntil(lambda: editor.create_dialog is None, timeout=20_000)
    assert by_email(arun, session, "second@example.com") is not None
    (entry,) = journal(data_folder)
    assert (entry.state, entry.status) == (State.DONE, 201)  # never a failure


def test_delete_with_confirmation_snapshot_and_journal(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, arun: Any,
    data_folder: Path,
) -> None:  # fmt: skip
    session = connect(sandbox)
    editor = open_editor(qtbot, session)
    assert not editor.delete_button.isEnabled()
    assert editor.delete_button.toolTip() == "Select a user first."
    greta = choose(qtbot, editor, GRETA)
    assert editor.delete_button.isEnabled()
    qtbot.mouseClick(editor.delete_button, Qt.MouseButton.LeftButton)
    box = editor.confirmation
    assert box is not None and box.text() == "Delete Greta Schmidt?"
    said = box.informativeText().split("\n\n")
    assert said[0].startswith(f"The user Greta Schmidt, {GRETA}, greta.schmidt@example.com "
                              f"(id {greta.id}, root role Editor) will be deleted on "
                              f"{sandbox.url} (connection “test sandbox”)")  # fmt: skip
    assert said[2] == "A deleted user cannot be brought back: this cannot be undone."
    # Cancel: nothing changes
    qtbot.keyClick(box, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: editor.confirmation is None)
    assert greta.id in {u.id for u in served(arun, session).users} and not data_folder.exists()

    qtbot.mouseClick(editor.delete_button, Qt.MouseButton.LeftButton)
    box = confirm(qtbot, editor)
    qtbot.waitUntil(lambda: greta.id not in {u.id for u in editor.model.users.all_rows},
                    timeout=20_000)  # fmt: skip
    assert greta.id not in {u.id for u in served(arun, session).users}
    assert editor.model.current is None and "Deleted Greta Schmidt" in editor.model.notice
    (entry,) = journal(data_folder)
    assert (entry.action, entry.ids, entry.state, entry.status) == (
        "users.delete", [greta.id], State.DONE, 200)  # fmt: skip
    snapshot = journal_folder("test sandbox", data_folder) / entry.before["snapshot"]
    assert json.loads(snapshot.read_text())["email"] == "greta.schmidt@example.com"


def test_the_last_admin_is_neither_deleted_nor_demoted(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, arun: Any,
    data_folder: Path,
) -> None:  # fmt: skip
    """Refused before any confirmation (it used to be said after the person had confirmed)."""
    # the built-in admin (user 1, as whom the admin token acts) is left the only Admin
    sql(sandbox, "UPDATE users SET root_role = ? WHERE id IN (2, 3, 4)", VIEWER)
    session = connect(sandbox)
    editor = open_editor(qtbot, session)
    choose(qtbot, editor, "Admin")
    qtbot.mouseClick(editor.delete_button, Qt.MouseButton.LeftButton)
    assert editor.confirmation is None  # no question: the answer is known
    qtbot.waitUntil(lambda: editor.action_error_label.isVisible(), timeout=20_000)
    assert "only Admin" in editor.action_error_label.text()
    assert 1 in {u.id for u in served(arun, session).users}
    editor.role_combo.setCurrentIndex(editor.role_combo.findText("Viewer"))
    qtbot.mouseClick(editor.save_button, Qt.MouseButton.LeftButton)
    assert editor.confirmation is None
    qtbot.waitUntil(lambda: editor.form_error_label.isVisible(), timeout=20_000)
    assert "only Admin" in editor.form_error_label.text()
    assert next(u for u in served(arun, session).users if u.id == 1).rootRole == 1
    assert journal(data_folder) == []  # refused before anything was written or sent


def test_reset_link_shown_and_copied(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, data_folder: Path
) -> None:
    session = connect(sandbox)
    editor = open_editor(qtbot, session)
    choose(qtbot, editor, GRETA)
    assert not editor.reset_link_row.isVisible()
    qtbot.mouseClick(editor.reset_button, Qt.MouseButton.LeftButton)
    box = confirm(qtbot, editor)
    assert box.text() == "Make a password reset link for Greta Schmidt?"
    assert "Anyone with the link can set Greta Schmidt's password" in box.informativeText()
    assert "expires after 24 hours" in box.informativeText()
    qtbot.waitUntil(lambda: editor.reset_link_row.isVisible(), timeout=20_000)
    link = editor.reset_link_edit.text()
    assert link.startswith(sandbox.url + "/reset-password?token=")
    qtbot.mouseClick(editor.copy_link_button, Qt.MouseButton.LeftButton)
    assert QApplication.clipboard().text() == link
    # a second link within a minute: the server's refusal, shown
    qtbot.mouseClick(editor.reset_button, Qt.MouseButton.LeftButton)
    confirm(qtbot, editor)
    qtbot.waitUntil(lambda: editor.action_error_label.isVisible(), timeout=20_000)
    assert "per minute" in editor.action_error_label.text()
    assert [(e.action, e.state) for e in journal(data_folder)] == [
        ("users.reset_password", State.DONE), ("users.reset_password", State.FAILED)]  # fmt: skip
    # a user without an email: disabled, saying why
    editor.model.select(1)  # the built-in admin
    assert editor.model.current is not None and editor.model.current.email is None
    assert not editor.reset_button.isEnabled()
    assert "no email address" in editor.reset_button.toolTip()


def test_undo_right_after_a_save(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, arun: Any,
    data_folder: Path,
) -> None:  # fmt: skip
    session = connect(sandbox)
    editor = open_editor(qtbot, session)
    greta = choose(qtbot, editor, GRETA)
    assert not editor.undo_button.isVisible()
    retype(qtbot, editor.name_edit, "Greta Berg")
    editor.role_combo.setCurrentIndex(editor.role_combo.findText("Viewer"))
    qtbot.mouseClick(editor.save_button, Qt.MouseButton.LeftButton)
    confirm_save(qtbot, editor)
    qtbot.waitUntil(lambda: editor.undo_button.isVisible(), timeout=20_000)
    after = arun(arun(session.client()).get_user(greta.id))
    assert (after.name, after.rootRole) == ("Greta Berg", VIEWER)
    qtbot.mouseClick(editor.undo_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: editor.model.notice.startswith("Undone"), timeout=20_000)
    back = arun(arun(session.client()).get_user(greta.id))
    assert (back.name, back.rootRole) == ("Greta Schmidt", 2)
    assert (
        editor.name_edit.text() == "Greta Schmidt" and editor.role_combo.currentText() == "Editor"
    )
    assert not editor.undo_button.isVisible()
    entries = journal(data_folder)
    assert [(e.action, e.state, e.before["undo"]) for e in entries] == [
        ("users.edit", State.DONE, False), ("users.edit", State.DONE, True)]  # fmt: skip
    assert entries[0].before["user"] == {"name": "Greta Schmidt", "rootRole": 2}


def test_actions_disabled_with_the_reason_without_the_admin_role(
    qtbot: Any,
    connect: Callable[..., Session],
    sandbox: SandboxProcess,
    personal_token: Callable[[SandboxProcess, str], str],
) -> None:
    session = connect(sandbox, personal_token(sandbox, GRETA))  # an Editor
    editor = UserEditor(session)
    qtbot.addWidget(editor)
    caps = session.capabilities
    assert caps is not None
    reason = caps.action(CREATE_USER).reason
    assert "Admin" in reason
    assert not editor.new_button.isEnabled() and editor.new_button.toolTip() == reason
    planned = editor.model.plan_create("someone@example.com", "", "", "Viewer", False)
    assert planned is None  # nothing can be planned either
    assert not editor.delete_button.isEnabled() and editor.delete_button.toolTip() == reason


def test_the_save_confirmation_names_each_change_and_cancel_keeps_the_draft(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, arun: Any,
    data_folder: Path,
) -> None:  # fmt: skip
    session = connect(sandbox)
    editor = open_editor(qtbot, session)
    puts = record_puts(session)
    greta = choose(qtbot, editor, GRETA)
    retype(qtbot, editor.name_edit, "Greta Berg")
    editor.role_combo.setCurrentIndex(editor.role_combo.findText("Admin"))
    qtbot.keyClick(editor.name_edit, Qt.Key.Key_Return)
    box = editor.confirmation
    assert box is not None and box.isVisible() and puts == []
    assert box.text() == "Save the changes to Greta Schmidt?"
    said = box.informativeText().split("\n\n")
    assert said[0] == f"Greta Schmidt on {sandbox.url} (connection “test sandbox”) will change:"
    assert said[1].splitlines() == [
        "Name: “Greta Schmidt” → “Greta Berg”",
        "Root role: “Editor” → “Admin” (the root role: what they may do on the whole server)",
    ]
    assert said[2] == "It can be undone: Undo puts back the previous values."
    assert box.defaultButton() is box.action_button and box.escapeButton() is box.cancel_button
    assert box.icon() == QMessageBox.Icon.Question  # a promotion demotes nobody

    qtbot.keyClick(box, Qt.Key.Key_Escape)  # cancel: nothing sent, the draft kept
    qtbot.waitUntil(lambda: editor.confirmation is None)
    assert puts == [] and not editor.model.saving
    assert editor.name_edit.text() == "Greta Berg" and editor.role_combo.currentText() == "Admin"
    assert editor.model.dirty and editor.save_button.isEnabled()
    back = arun(arun(session.client()).get_user(greta.id))
    assert (back.name, back.rootRole) == ("Greta Schmidt", 2)
    assert journal(data_folder) == []

    # Cancel with the mouse too; then Save again, confirmed: sent as drafted
    qtbot.mouseClick(editor.save_button, Qt.MouseButton.LeftButton)
    box = editor.confirmation
    assert box is not None
    qtbot.mouseClick(box.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: editor.confirmation is None)
    assert puts == [] and editor.name_edit.text() == "Greta Berg"
    qtbot.mouseClick(editor.save_button, Qt.MouseButton.LeftButton)
    confirm_save(qtbot, editor)
    qtbot.waitUntil(lambda: not editor.model.saving, timeout=20_000)
    assert puts == [{"name": "Greta Berg", "rootRole": 1}]
    back = arun(arun(session.client()).get_user(greta.id))
    assert (back.name, back.rootRole) == ("Greta Berg", 1)


def test_cancelling_the_reset_link_makes_none(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, data_folder: Path
) -> None:
    session = connect(sandbox)
    editor = open_editor(qtbot, session)
    choose(qtbot, editor, GRETA)
    qtbot.mouseClick(editor.reset_button, Qt.MouseButton.LeftButton)
    box = editor.confirmation
    assert box is not None and box.isVisible()
    assert box.defaultButton() is box.cancel_button  # Enter does not make a link
    qtbot.keyClick(box, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: editor.confirmation is None)
    assert not editor.model.acting and editor.model.reset_link == ""
    assert not editor.reset_link_row.isVisible()
    assert journal(data_folder) == []  # nothing asked of the server, nothing journaled


def test_the_invite_link_is_shown_whole_and_copied(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, arun: Any,
    data_folder: Path,
) -> None:  # fmt: skip
    """After New user… (no welcome email), the invite link the server made is in the form,
    whole at the form's width (wrapped, nothing cut off, selectable), and Copy puts it on the
    clipboard; it is the new user's alone (another user selected: gone)."""
    session = connect(sandbox)
    editor = open_editor(qtbot, session)
    fill_create(qtbot, editor, "invited.person@example.com", "Invited Person", "Viewer")
    confirm(qtbot, editor)
    qtbot.waitUntil(lambda: editor.create_dialog is None, timeout=20_000)
    made = by_email(arun, session, "invited.person@example.com")
    qtbot.waitUntil(lambda: editor.model.current_id == made.id, timeout=20_000)
    qtbot.wait(50)  # laid out
    viewport = editor.form_area.viewport()
    # no text of the form runs past its label's edge (a URL does not wrap in a label)
    for label in editor.form.findChildren(QLabel):
        if label.isVisibleTo(editor.form) and label.text():
            widest = max(label.fontMetrics().horizontalAdvance(word)
                         for word in label.text().split())  # fmt: skip
            assert widest <= label.width(), (label.objectName(), label.text())
    assert editor.saved_label.text() == f"Created Invited Person (id {made.id})."
    field = editor.invite_link
    assert field.isVisible()
    link = field.text()
    assert link.startswith(f"{sandbox.url}/new-user?token=") and len(link) > 60
    # whole: inside the form's width, every line of it shown, nothing to scroll
    right = field.mapTo(viewport, QPoint(field.width(), 0)).x()
    assert right <= viewport.width()
    view = field.view
    assert view.toPlainText() == link
    assert view.verticalScrollBar().maximum() == 0
    assert view.horizontalScrollBar().maximum() == 0
    assert view.document().size().height() <= view.viewport().height() + 1
    # one line of text, wrapped on the screen
    block = view.document().firstBlock()
    assert view.document().blockCount() == 1 and block.layout().lineCount() > 1
    assert view.textInteractionFlags() & Qt.TextInteractionFlag.TextSelectableByMouse
    assert view.textInteractionFlags() & Qt.TextInteractionFlag.TextSelectableByKeyboard
    assert "invite" in field.caption.text().lower() and "no email" in field.caption.text()
    QApplication.clipboard().clear()
    qtbot.mouseClick(field.copy_button, Qt.MouseButton.LeftButton)
    assert QApplication.clipboard().text() == link
    # the link is this user's: choosing another user takes it away
    choose(qtbot, editor, GRETA)
    assert not field.isVisible()
    editor.model.open_user(made.id)
    assert not field.isVisible()


def test_a_custom_root_role_chosen_in_the_new_user_dialog_is_sent_by_id(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, arun: Any,
    data_folder: Path,
) -> None:  # fmt: skip
    """The dialog offers the server's root roles, a custom one included; the request names a
    custom one by its id (its schema names only the predefined ones by name). It used to send
    the name, which the request's model refused before anything was sent."""
    sql(sandbox, "INSERT INTO roles(id, name, type, description) VALUES(90, 'Auditor',"
                 " 'root-custom', 'Reads everything')")  # fmt: skip
    session = connect(sandbox)
    editor = open_editor(qtbot, session)
    fill_create(qtbot, editor, "audit@example.com", "Audrey Auditor", "Auditor")
    box = editor.confirmation
    assert box is not None and "root role Auditor" in box.informativeText()
    confirm(qtbot, editor)
    qtbot.waitUntil(lambda: editor.create_dialog is None, timeout=20_000)
    made = by_email(arun, session, "audit@example.com")
    assert made is not None and made.rootRole == 90
    (entry,) = journal(data_folder)
    assert (entry.action, entry.state) == ("users.create", State.DONE)
