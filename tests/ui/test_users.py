"""The user editor (`UserEditor` over `UserEditorModel`) against real sandboxes over HTTP: an edit
end to end and read back, validation before sending, every error status of `PUT user` the window
can meet (400 on its field, 401, 403, 404 and the refreshed list), SCIM users, opening a user from
another window, the error state with Retry, and the remembered splitter.

Faults come from the real server: the test changes the sandbox's database under it (a token
revoked, the Admin role taken away, a user deleted), as another administrator would. 415 cannot be
caused from the window (the client always sends JSON), so it has no test here."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from itertools import pairwise
from typing import Any

import httpx
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLineEdit, QWidget

from app.api.models import CreateUser, User
from app.viewmodels.session import Session
from app.viewmodels.table import Column, TableModel
from app.viewmodels.tools import LoadPhase
from app.viewmodels.users import (
    EMAIL,
    NAME,
    ROOT_ROLE,
    field_of,
    merged_user,
)
from sandbox import db
from sandbox.process import SandboxProcess
from sandbox.store import ADMIN_ROLE, EDITOR_ROLE, VIEWER_ROLE
from tests.conftest import RESTORE, REVOKE, personal_token_of
from ui.settings import window_settings
from ui.states import StatePanel
from ui.users import SPLITTER_KEY, UserEditor

#: demo people used below (see sandbox/demo.py: user id = index + 2)
GRETA = "greta.schmidt"  # id 8, Editor
CARMEN_ID = 30  # carmen.ortiz: in no group, no project role, no event
SCIM_ID = 45  # sofia.mendes, managed by SCIM
LEON_ID = 39  # leon.weber, inactive


def open_editor(qtbot: Any, session: Session) -> UserEditor:
    editor = UserEditor(session)
    qtbot.addWidget(editor)
    editor.resize(1100, 640)
    editor.show()
    qtbot.waitUntil(lambda: editor.model.phase is LoadPhase.READY, timeout=20_000)
    return editor


def choose(qtbot: Any, editor: UserEditor, text: str) -> User:
    """Search for `text` and click the one row found."""
    table = editor.table
    table.filter_edit.clear()
    qtbot.keyClicks(table.filter_edit, text)
    assert table.model.shown_count == 1, table.count_label.text()
    rect = table.view.visualRect(table.model.index(0, 0))
    qtbot.mouseClick(table.view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    user = editor.model.current
    assert user is not None
    return user


def retype(qtbot: Any, edit: QLineEdit, text: str) -> None:
    """Replace the field's text as a person does: select all, then type (ASCII only)."""
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClick(edit, Qt.Key.Key_Backspace)
    if text:
        qtbot.keyClicks(edit, text)


def paste(qtbot: Any, edit: QLineEdit, text: str) -> None:
    """Replace the field's text by pasting `text` (Ctrl+V), which may hold what no key types."""
    QApplication.clipboard().setText(text)
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClick(edit, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    assert edit.text() == text


def run_sql(sb: SandboxProcess, sql: str, *args: object) -> None:
    """Change the running sandbox's database, as another administrator's action would."""
    conn = db.connect(sb.db)
    try:
        conn.execute(sql, args)
    finally:
        conn.close()


def record_puts(session: Session) -> list[dict[str, Any]]:
    """The JSON bodies of the PUT requests the session's client sends from now on."""
    bodies: list[dict[str, Any]] = []

    async def hook(request: httpx.Request) -> None:
        if request.method == "PUT":
            bodies.append(json.loads(request.content))

    assert session.connection is not None
    session.connection.client._http.event_hooks["request"].append(hook)
    return bodies


def confirm_save(qtbot: Any, editor: UserEditor) -> Any:
    """The Save confirmation, open over the editor with nothing sent yet: its Save is the
    default button, so Enter saves. Returns the box, closed."""
    box = editor.confirmation
    assert box is not None and box.isVisible()
    assert box.objectName() == "usersSaveConfirmation" and not editor.model.saving
    assert box.defaultButton() is box.action_button  # Enter then Enter saves
    qtbot.keyClick(box, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: editor.confirmation is None)
    return box


def save_with_enter(qtbot: Any, editor: UserEditor, field: QWidget) -> None:
    """Enter in `field` asks, Enter in the confirmation saves; until the answer is in."""
    qtbot.keyClick(field, Qt.Key.Key_Return)
    confirm_save(qtbot, editor)
    assert editor.model.saving
    qtbot.waitUntil(lambda: not editor.model.saving, timeout=10_000)


def row_texts(editor: UserEditor, user_id: int) -> list[str]:
    model = editor.model.users
    row = model.row_of(lambda u: u.id == user_id)
    assert row >= 0
    return model.row_texts(row)


# ---------------------------------------------------------------------------- the happy path


def test_edit_a_user_end_to_end_and_read_it_back(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, arun: Any
) -> None:
    session = connect(sandbox)
    editor = open_editor(qtbot, session)
    assert editor.states.state == StatePanel.CONTENT
    assert editor.table.count_label.text() == "45 users"  # the admin and 44 people
    puts = record_puts(session)

    user = choose(qtbot, editor, GRETA)
    assert (user.name, user.username) == ("Greta Schmidt", GRETA)
    assert editor.title.text() == "Greta Schmidt"
    assert editor.name_edit.text() == "Greta Schmidt"
    assert editor.email_edit.text() == "greta.schmidt@example.com"
    assert editor.role_combo.currentText() == "Editor"  # by name, not id 2
    roles = [editor.role_combo.itemText(i) for i in range(editor.role_combo.count())]
    assert roles == ["Admin", "Editor", "Viewer"]
    assert editor.detail_values["username"].text() == GRETA
    assert editor.detail_values["accountType"].text() == "User"
    assert not editor.scim_badge.isVisible()
    assert not editor.save_button.isEnabled() and not editor.revert_button.isEnabled()

    retype(qtbot, editor.name_edit, "Greta Schmidt-Berg")
    retype(qtbot, editor.email_edit, "greta.berg@example.com")
    editor.role_combo.setCurrentIndex(editor.role_combo.findText("Viewer"))
    assert editor.save_button.isEnabled() and editor.revert_button.isEnabled()
    save_with_enter(qtbot, editor, editor.email_edit)

    # only what changed was sent, the role by its id
    assert puts == [
        {"name": "Greta Schmidt-Berg", "email": "greta.berg@example.com", "rootRole": VIEWER_ROLE}
    ]
    assert editor.form_error_label.isHidden()
    assert editor.saved_label.text().startswith("Saved at ")
    assert "name, email and root role changed." in editor.saved_label.text()
    assert not editor.save_button.isEnabled()
    client = arun(session.client())
    back = arun(client.get_user(user.id))
    assert (back.name, back.email, back.rootRole) == (
        "Greta Schmidt-Berg",
        "greta.berg@example.com",
        VIEWER_ROLE,
    )
    # the answer is shown, and the row in the list is updated in place
    assert editor.title.text() == "Greta Schmidt-Berg"
    assert row_texts(editor, user.id)[:4] == [
        "Greta Schmidt-Berg",
        GRETA,
        "greta.berg@example.com",
        "Viewer",
    ]
    assert editor.model.users.total_count == 45

    # one field changed: one field sent
    editor.role_combo.setFocus()
    editor.role_combo.setCurrentIndex(editor.role_combo.findText("Editor"))
    save_with_enter(qtbot, editor, editor.role_combo)  # Enter on the role saves too
    assert puts[-1] == {"rootRole": EDITOR_ROLE}
    back = arun(client.get_user(user.id))
    assert (back.name, back.rootRole) == ("Greta Schmidt-Berg", EDITOR_ROLE)
    assert editor.saved_label.text().endswith("root role changed.")

    # typing on while a save is under way: the answer does not wipe what was typed since
    retype(qtbot, editor.name_edit, "Greta A")
    qtbot.keyClick(editor.name_edit, Qt.Key.Key_Return)
    confirm_save(qtbot, editor)
    assert editor.model.saving and not editor.save_button.isEnabled()
    qtbot.keyClicks(editor.name_edit, "B")
    qtbot.waitUntil(lambda: not editor.model.saving, timeout=10_000)
    assert puts[-1] == {"name": "Greta A"}
    assert arun(client.get_user(user.id)).name == "Greta A"
    assert editor.name_edit.text() == "Greta AB" and editor.save_button.isEnabled()


def test_escape_reverts_and_problems_are_shown_before_anything_is_sent(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, arun: Any
) -> None:
    session = connect(sandbox)
    client = arun(session.client())
    solo = arun(client.create_user(CreateUser(email="solo@example.com", name="Solo")))
    editor = open_editor(qtbot, session)
    puts = record_puts(session)

    choose(qtbot, editor, GRETA)
    retype(qtbot, editor.email_edit, "greta.example.com")
    assert editor.email_error.isVisible()
    assert "not an email address" in editor.email_error.text()
    assert not editor.save_button.isEnabled()
    qtbot.keyClick(editor.email_edit, Qt.Key.Key_Return)  # Enter does not send an invalid form
    assert not editor.model.saving and puts == [] and editor.confirmation is None

    # a control character (pasted) is said under its field, and Save is not offered
    paste(qtbot, editor.name_edit, "Greta\x1b[2J")
    assert editor.name_error.text() == "Control characters are not allowed: U+001B at character 6."
    assert not editor.save_button.isEnabled()
    paste(qtbot, editor.email_edit, "greta\x07@example.com")
    assert editor.email_error.text() == "Control characters are not allowed: U+0007 at character 6."
    qtbot.keyClick(editor.name_edit, Qt.Key.Key_Return)
    assert not editor.model.saving and puts == [] and editor.confirmation is None

    retype(qtbot, editor.name_edit, "")
    assert "A name cannot be removed" in editor.name_error.text()
    retype(qtbot, editor.email_edit, "")
    assert "cannot be removed, only changed" in editor.email_error.text()
    assert not editor.save_button.isEnabled()

    qtbot.keyClick(editor.name_edit, Qt.Key.Key_Escape)
    assert editor.name_edit.text() == "Greta Schmidt"
    assert editor.email_edit.text() == "greta.schmidt@example.com"
    assert editor.name_error.isHidden() and editor.email_error.isHidden()
    assert not editor.save_button.isEnabled() and not editor.revert_button.isEnabled()

    # whitespace alone is no change
    retype(qtbot, editor.name_edit, "Greta Schmidt ")
    assert not editor.model.dirty and not editor.save_button.isEnabled()

    # a user without a username must keep an email
    choose(qtbot, editor, "solo@example.com")
    assert editor.detail_values["username"].text() == "—"
    retype(qtbot, editor.email_edit, "")
    assert editor.email_error.text() == (
        "This user has no username, so they must keep an email address."
    )
    assert not editor.save_button.isEnabled()
    editor.revert_button.click()
    assert editor.email_edit.text() == "solo@example.com"
    assert puts == []
    assert arun(client.get_user(solo.id)).email == "solo@example.com"


def test_edits_of_another_user_are_kept_when_the_selection_moves(
    qtbot: Any, connect: Callable[..., Session], demo_sandbox: SandboxProcess
) -> None:
    editor = open_editor(qtbot, connect(demo_sandbox))
    greta = choose(qtbot, editor, GRETA)
    retype(qtbot, editor.name_edit, "Greta S.")
    choose(qtbot, editor, "leon.weber")
    assert editor.name_edit.text() == "Leon Weber" and not editor.save_button.isEnabled()
    choose(qtbot, editor, GRETA)
    assert editor.model.current_id == greta.id
    assert editor.name_edit.text() == "Greta S." and editor.save_button.isEnabled()


# ---------------------------------------------------------------------------- error statuses


def test_a_400_puts_the_servers_detail_on_the_email_field_and_keeps_the_form(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, arun: Any
) -> None:
    session = connect(sandbox)
    editor = open_editor(qtbot, session)
    user = choose(qtbot, editor, GRETA)
    retype(qtbot, editor.name_edit, "Greta Two")
    retype(qtbot, editor.email_edit, "amara.okafor@example.com")  # someone else's
    save_with_enter(qtbot, editor, editor.name_edit)

    assert editor.email_error.isVisible()
    assert editor.email_error.text() == (
        "The email amara.okafor@example.com is already used by another user"
    )
    assert editor.name_error.isHidden()
    assert editor.form_error_label.text() == "The server refused the change (see email)."
    # what was typed is still there, ready to be corrected
    assert editor.name_edit.text() == "Greta Two"
    assert editor.email_edit.text() == "amara.okafor@example.com"
    assert editor.save_button.isEnabled()
    client = arun(session.client())
    assert arun(client.get_user(user.id)).name == "Greta Schmidt"

    retype(qtbot, editor.email_edit, "greta.two@example.com")
    assert editor.email_error.isHidden()  # typing again clears what the server said
    save_with_enter(qtbot, editor, editor.email_edit)
    assert editor.form_error_label.isHidden()
    back = arun(client.get_user(user.id))
    assert (back.name, back.email) == ("Greta Two", "greta.two@example.com")


def test_a_403_is_shown_as_its_message_and_the_form_is_kept(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, arun: Any
) -> None:
    # the admin user's own token: the admin API token is no user's, and stays an Admin
    session = connect(sandbox, personal_token_of(sandbox, "admin"))
    editor = open_editor(qtbot, session)
    user = choose(qtbot, editor, GRETA)
    retype(qtbot, editor.name_edit, "Greta Three")
    # the token's user (id 1) loses the Admin role meanwhile
    run_sql(sandbox, "UPDATE users SET root_role = ? WHERE id = 1", EDITOR_ROLE)
    save_with_enter(qtbot, editor, editor.name_edit)

    text = editor.form_error_label.text()
    assert text.startswith("Not saved: 403 NoAccessError")
    assert "You need the Admin root role to update users." in text
    assert editor.name_edit.text() == "Greta Three" and editor.save_button.isEnabled()
    assert session.last_error.startswith("403 NoAccessError")  # the status bar has it too

    run_sql(sandbox, "UPDATE users SET root_role = ? WHERE id = 1", ADMIN_ROLE)
    save_with_enter(qtbot, editor, editor.name_edit)
    assert editor.form_error_label.isHidden()
    assert arun(arun(session.client()).get_user(user.id)).name == "Greta Three"


def test_a_401_is_shown_as_its_message_and_the_form_is_kept(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, arun: Any
) -> None:
    session = connect(sandbox)
    editor = open_editor(qtbot, session)
    choose(qtbot, editor, GRETA)
    retype(qtbot, editor.email_edit, "greta.four@example.com")
    run_sql(sandbox, REVOKE, sandbox.admin_token)  # revoked
    save_with_enter(qtbot, editor, editor.email_edit)

    text = editor.form_error_label.text()
    assert text.startswith("Not saved: 401 AuthenticationRequired")
    assert "The token is not valid" in text
    assert editor.email_edit.text() == "greta.four@example.com"
    assert editor.email_error.isHidden()  # not a problem of the field
    assert editor.save_button.isEnabled()


def test_a_404_says_the_user_no_longer_exists_and_refreshes_the_list(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess
) -> None:
    session = connect(sandbox)
    editor = open_editor(qtbot, session)
    user = choose(qtbot, editor, "carmen.ortiz")
    assert user.id == CARMEN_ID
    retype(qtbot, editor.name_edit, "Carmen O.")
    run_sql(sandbox, "DELETE FROM users WHERE id = ?", CARMEN_ID)  # deleted meanwhile
    save_with_enter(qtbot, editor, editor.name_edit)

    assert editor.form_error_label.text() == (
        "Carmen Ortiz no longer exists on the server (deleted meanwhile?). "
        "The list has been refreshed."
    )
    qtbot.waitUntil(lambda: editor.model.users.total_count == 44 and not editor.model.busy)
    assert editor.table.count_label.text() == "0 of 44 users"  # the search is kept
    editor.table.filter_edit.clear()
    assert editor.model.users.row_of(lambda u: u.id == CARMEN_ID) == -1
    # the form stays on screen, read-only, with what was typed
    assert editor.name_edit.text() == "Carmen O." and editor.name_edit.isReadOnly()
    assert not editor.save_button.isEnabled()
    assert "no longer exists" in editor.reason_label.text()


# ---------------------------------------------------------------------------- other states


def test_a_scim_user_is_read_only_with_the_reason(
    qtbot: Any, connect: Callable[..., Session], demo_sandbox: SandboxProcess
) -> None:
    editor = open_editor(qtbot, connect(demo_sandbox))
    editor.open_item(SCIM_ID)
    user = editor.model.current
    assert user is not None and user.scimId
    assert editor.scim_badge.isVisible() and editor.scim_badge.text() == "Managed by SCIM"
    assert editor.reason_label.text() == (
        "Changes would be overwritten by the identity provider; change this user there."
    )
    assert editor.name_edit.isReadOnly() and editor.email_edit.isReadOnly()
    assert not editor.role_combo.isEnabled()
    qtbot.keyClicks(editor.name_edit, "x")
    assert editor.name_edit.text() == "Sofia Mendes" and not editor.model.dirty
    assert not editor.save_button.isEnabled() and not editor.revert_button.isEnabled()
    assert editor.detail_values["scimId"].text() == user.scimId
    assert editor.detail_values["scimId"].isVisible()


def test_open_item_selects_the_user_loading_the_list_first_and_says_when_it_is_not_there(
    qtbot: Any, connect: Callable[..., Session], demo_sandbox: SandboxProcess
) -> None:
    editor = UserEditor(connect(demo_sandbox))
    qtbot.addWidget(editor)
    editor.show()
    editor.open_item(LEON_ID)  # before the list is here
    qtbot.waitUntil(lambda: editor.model.current_id == LEON_ID)
    assert editor.title.text() == "Leon Weber"
    view = editor.table.view
    assert editor.model.users.row_at(view.currentIndex().row()).id == LEON_ID

    editor.table.filter_edit.setText("greta")  # hides Leon...
    editor.open_item(LEON_ID - 1)  # ...and Katarina: the search is cleared to show her
    assert editor.table.filter_edit.text() == ""
    assert editor.model.users.row_at(view.currentIndex().row()).id == LEON_ID - 1

    editor.open_item(99999)
    assert editor.notice_label.isVisible()
    assert editor.notice_label.text().startswith("User 99999 is not in the list of users")
    assert editor.placeholder.isVisible() and editor.editor.isHidden()


def test_a_failed_load_shows_the_error_with_retry_and_keeps_what_was_typed(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, arun: Any
) -> None:
    session = connect(sandbox)
    editor = open_editor(qtbot, session)
    user = choose(qtbot, editor, GRETA)
    retype(qtbot, editor.name_edit, "Greta Typed")
    run_sql(sandbox, REVOKE, sandbox.admin_token)
    editor.refresh()  # F5
    qtbot.waitUntil(lambda: editor.states.state == StatePanel.ERROR)
    assert editor.states.error_title.text() == "Could not load the users"
    assert editor.states.error_label.text().startswith("401 AuthenticationRequired")
    assert editor.states.retry_button.isVisible()

    run_sql(
        sandbox,
        RESTORE,
        sandbox.admin_token,
    )
    qtbot.mouseClick(editor.states.retry_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: editor.states.state == StatePanel.CONTENT and not editor.model.busy)
    assert editor.model.current_id == user.id
    assert editor.name_edit.text() == "Greta Typed" and editor.save_button.isEnabled()
    assert editor.table.count_label.text() == "1 of 45 users"  # the search is kept too


def test_the_splitter_is_remembered(
    qtbot: Any, connect: Callable[..., Session], demo_sandbox: SandboxProcess
) -> None:
    session = connect(demo_sandbox)
    first = open_editor(qtbot, session)
    first.splitter.setSizes([700, 380])
    sizes = first.splitter.sizes()
    first.close_content()
    second = open_editor(qtbot, session)
    assert second.splitter.sizes() == sizes
    second.close_content()


def test_enter_on_a_user_goes_to_the_form_and_tab_goes_through_it(
    qtbot: Any, connect: Callable[..., Session], demo_sandbox: SandboxProcess
) -> None:
    editor = open_editor(qtbot, connect(demo_sandbox))
    qtbot.waitActive(editor)
    choose(qtbot, editor, GRETA)
    editor.table.view.setFocus()
    qtbot.keyClick(editor.table.view, Qt.Key.Key_Return)  # Enter on a user: on to the form
    assert editor.name_edit.hasFocus() and editor.name_edit.selectedText() == "Greta Schmidt"
    retype(qtbot, editor.name_edit, "Greta T.")  # so Save and Revert take focus
    chain = [editor.table.view, editor.name_edit, editor.email_edit, editor.role_combo,
             editor.save_button, editor.revert_button]  # fmt: skip
    for here, there in pairwise(chain):
        assert here.nextInFocusChain() is there or _next_focusable(here) is there


def _next_focusable(widget: Any) -> Any:
    nxt = widget.nextInFocusChain()
    while nxt is not widget and not (nxt.focusPolicy() & Qt.FocusPolicy.TabFocus):
        nxt = nxt.nextInFocusChain()
    return nxt


# ---------------------------------------------------------------------------- pieces


def test_field_of_maps_a_detail_to_its_field() -> None:
    assert field_of("email", "") == EMAIL
    assert field_of("body.rootRole", "") == ROOT_ROLE
    assert field_of("name", "anything") == NAME
    assert field_of("", '"Email" must be a valid email') == EMAIL
    assert field_of("", "Could not find rootRole=9999") == ROOT_ROLE
    assert field_of("id", "must be a number") is None


def test_merged_user_keeps_what_the_answer_leaves_out() -> None:
    old = User(id=3, name="Old", email="o@example.com", rootRole=2,
               seenAt=datetime(2026, 1, 1, tzinfo=UTC))  # fmt: skip
    # Unleash sends no rootRole back when none was sent
    answer = User.model_validate({"id": 3, "name": "New", "email": "o@example.com"})
    merged = merged_user(old, answer)
    assert (merged.name, merged.rootRole, merged.seenAt) == ("New", 2, old.seenAt)


def test_replace_row_updates_cells_and_filter_text_in_place(qtbot: Any) -> None:
    model: TableModel[tuple[str, int]] = TableModel(
        [Column("Name", lambda r: r[0]), Column("N", lambda r: r[1], numeric=True)]
    )
    rows = [("ann", 1), ("bob", 2), ("cid", 3)]
    model.set_rows(rows)
    model.sort(0, Qt.SortOrder.DescendingOrder)
    changed: list[int] = []
    model.dataChanged.connect(lambda top, _bottom: changed.append(top.row()))
    assert model.replace_row(rows[1], ("zed", 9))
    assert changed == [1]  # in place, not moved
    assert model.row_texts(1) == ["zed", "9"]
    model.set_filter("zed")
    assert [r[0] for r in model.rows] == ["zed"]
    model.set_filter("")
    model.sort(0, Qt.SortOrder.DescendingOrder)
    assert [r[0] for r in model.rows] == ["zed", "cid", "ann"]
    assert not model.replace_row(("nobody", 0), ("x", 0))


def name_cell(editor: UserEditor, user_id: int) -> tuple[str, str]:
    """The list's first cell of a user: (text, tooltip)."""
    users = editor.model.users
    index = users.index(users.row_of(lambda u: u.id == user_id), 0)
    return users.data(index), users.data(index, Qt.ItemDataRole.ToolTipRole) or ""


def test_unsaved_drafts_are_marked_in_the_list_and_the_title(
    qtbot: Any, connect: Callable[..., Session], demo_sandbox: SandboxProcess
) -> None:
    editor = open_editor(qtbot, connect(demo_sandbox))
    titles: list[str] = []
    editor.title_changed.connect(titles.append)
    greta = choose(qtbot, editor, GRETA)
    assert name_cell(editor, greta.id)[0] == "Greta Schmidt"
    retype(qtbot, editor.name_edit, "Greta S.")
    assert editor.title.text() == "Greta Schmidt •"
    leon = choose(qtbot, editor, "leon.weber")
    editor.table.filter_edit.clear()  # everyone in the list again
    text, tooltip = name_cell(editor, greta.id)
    assert text == "• Greta Schmidt" and tooltip.startswith("Unsaved changes")
    assert name_cell(editor, leon.id)[0] == "Leon Weber"
    assert editor.title.text() == "Leon Weber"
    assert titles[-1] == "1 user with unsaved changes"
    # Ctrl+C and the CSV export take the names, not the mark
    assert editor.model.users.text(editor.model.users.row_of(lambda u: u.id == greta.id), 0) \
        == "Greta Schmidt"  # fmt: skip

    choose(qtbot, editor, GRETA)
    qtbot.keyClick(editor.name_edit, Qt.Key.Key_Escape)  # reverted: nothing unsaved
    assert name_cell(editor, greta.id)[0] == "Greta Schmidt"
    assert editor.title.text() == "Greta Schmidt" and titles[-1] == ""
    editor.close_content()


@pytest.fixture
def usual_size(qtbot: Any) -> Iterator[Callable[[Session], UserEditor]]:
    """`usual_size(session)`: the Users page at the main window's usual size with nothing
    remembered (splitter, columns), shown and loaded; its splitter forgotten afterwards."""
    settings = window_settings()
    for key in (SPLITTER_KEY, "tables/users"):
        settings.remove(key)
    settings.sync()
    editors: list[UserEditor] = []

    def make(session: Session) -> UserEditor:
        editor = UserEditor(session)
        editors.append(editor)
        qtbot.addWidget(editor)
        editor.resize(860, 600)  # the page's content in a 1100-pixel main window
        editor.show()
        qtbot.waitUntil(lambda: editor.model.phase is LoadPhase.READY, timeout=20_000)
        return editor

    yield make
    for editor in editors:
        editor.close_content()
    settings.remove(SPLITTER_KEY)
    settings.sync()


def open_user(qtbot: Any, editor: UserEditor, user_id: int) -> None:
    """Open a user in the form, as a link to them does, and let the form lay itself out."""
    editor.open_item(user_id)
    qtbot.waitUntil(lambda: editor.model.current_id == user_id)
    QApplication.processEvents()


def test_every_column_of_the_list_is_in_view_beside_the_form(
    qtbot: Any,
    connect: Callable[..., Session],
    demo_sandbox: SandboxProcess,
    usual_size: Callable[[Session], UserEditor],
) -> None:
    """At the window's usual size the list showed Email half and Last login not at all (behind
    a scroll bar) while the form beside it was mostly empty."""
    editor = usual_size(connect(demo_sandbox))
    view = editor.table.view
    qtbot.waitUntil(lambda: editor.table._fitted)
    QApplication.processEvents()
    last = editor.model.users.columnCount() - 1
    assert editor.model.users.headerData(last, Qt.Orientation.Horizontal) == "Last login"
    assert view.columnViewportPosition(last) + view.columnWidth(last) <= view.viewport().width()
    assert not view.horizontalScrollBar().isVisible()
    # the emails (the column that takes what is left) are not squeezed to nothing either
    assert view.columnWidth(2) > view.fontMetrics().horizontalAdvance("maya.patel@examp")
    # the dates are whole in their column
    text = editor.model.users.text(0, last)
    assert view.fontMetrics().horizontalAdvance(text) < view.columnWidth(last)


def test_the_form_fits_its_pane_without_scrolling_sideways(
    qtbot: Any,
    connect: Callable[..., Session],
    sandbox: SandboxProcess,
    usual_size: Callable[[Session], UserEditor],
) -> None:
    """The SCIM badge beside a user's name, or a long name, took the form wider than its pane at
    the window's usual size, and the pane scrolled sideways: the name wraps instead."""
    long_name = "Maximiliana Alexandrovna Montgomery-Featherstonehaugh"
    run_sql(sandbox, "UPDATE users SET name = ? WHERE id = ?", long_name, CARMEN_ID)
    editor = usual_size(connect(sandbox))
    bar = editor.form_area.horizontalScrollBar()
    for user_id in (SCIM_ID, CARMEN_ID, LEON_ID):
        open_user(qtbot, editor, user_id)
        assert editor.form.width() <= editor.form_area.viewport().width(), user_id
        assert not bar.isVisible(), user_id
        assert editor.scim_badge.isVisible() == (user_id == SCIM_ID)
        if user_id == CARMEN_ID:  # whole, on two lines
            assert editor.title.text() == long_name
            assert editor.title.height() > editor.title.fontMetrics().height() * 1.5


def test_quitting_with_a_user_s_unsaved_changes_asks(
    qtbot: Any, connect: Callable[..., Session], demo_sandbox: SandboxProcess
) -> None:
    """A user's changes typed and not saved are lost by quitting: the main window asks first,
    as for a group's; Cancel keeps them."""
    from PySide6.QtWidgets import QMessageBox

    from ui.main_window import MainWindow

    window = MainWindow(connect(demo_sandbox))
    qtbot.addWidget(window)
    window.show()
    window.show_page("users")
    editor = window.tool_pages["users"].ensure_content()
    assert isinstance(editor, UserEditor)
    qtbot.waitUntil(lambda: editor.model.phase is LoadPhase.READY, timeout=20_000)
    choose(qtbot, editor, "greta")
    retype(qtbot, editor.name_edit, "Greta S.")
    assert editor.model.dirty
    window.close()
    box = window.findChild(QMessageBox, "unsavedChangesConfirmation")
    assert box is not None and box.isVisible() and window.isVisible()
    assert "1 user with unsaved changes." in box.informativeText()
    qtbot.keyClick(box, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: window.findChild(QMessageBox, "unsavedChangesConfirmation") is None)
    assert window.isVisible() and editor.name_edit.text() == "Greta S."
    editor.model.revert()
    window.close()  # nothing unsaved now
    assert not window.isVisible()
