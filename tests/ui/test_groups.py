"""The group editor (`GroupEditor` over `GroupEditorModel`) against real sandboxes over HTTP: a
group made with members, an SSO mapping and a root role and then listed by the server; "Create
another"; Create enabled only when the form is valid; the SSO list refusing blanks and
duplicates; a 409 on the name, 400 details on their fields, 403 and 401 said under the form (all
keeping what was typed); the error state with Retry; a server without groups (disabled, no
request sent); a server that refuses to list its groups; an empty server; the splitter's memory."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from PySide6.QtCore import QByteArray, Qt
from PySide6.QtWidgets import QListWidget

from app.actions.journal import State, read_journal
from app.api.client import AdminClient
from app.api.models import CreateGroup, CreateUser
from app.viewmodels.groups import GroupEditorModel, field_of_path
from app.viewmodels.session import Session
from sandbox import db
from sandbox.process import SandboxProcess
from tests.conftest import RESTORE, REVOKE
from ui.groups import SPLITTER_KEY, GroupEditor
from ui.settings import window_settings
from ui.states import StatePanel
from ui.tool_page import ToolPage

AMARA = 2  # amara.okafor, the first demo user
MAYA = 14  # maya.patel
EDITOR_ROLE = 2


def run_sql(sb: SandboxProcess, sql: str, *args: object) -> None:
    """Change the running sandbox's database behind its back (as another admin would)."""
    conn = db.connect(sb.db)
    try:
        conn.execute(sql, args)
    finally:
        conn.close()


def admin_client(sb: SandboxProcess) -> AdminClient:
    return AdminClient(sb.url, sb.admin_token)


def chosen(editor: GroupEditor) -> list[str]:
    view = editor.members.chosen
    return [view.item(i).text() for i in range(view.count())]


def texts(view: QListWidget) -> list[str]:
    return [view.item(i).text() for i in range(view.count())]


def add_member(qtbot: Any, editor: GroupEditor, search: str) -> None:
    """Find one person by typing and press Enter in the search box."""
    box = editor.members.search
    box.clear()
    qtbot.keyClicks(box, search)
    assert editor.members.results.count() == 1, texts(editor.members.results)
    qtbot.keyClick(box, Qt.Key.Key_Return)


def wait_answered(qtbot: Any, model: GroupEditorModel) -> None:
    qtbot.waitUntil(lambda: not model.creating, timeout=20_000)


# ---------------------------------------------------------------------------- the happy path


def test_a_group_with_two_members_and_a_mapping_is_created_and_listed_by_the_server(
    qtbot: Any,
    sandbox: SandboxProcess,
    open_editor: Callable[..., tuple[ToolPage, GroupEditor]],
    arun: Callable[..., Any],
    data_folder: Path,
) -> None:
    _page, editor = open_editor(sandbox)
    m = editor.model
    assert editor.states.state == StatePanel.CONTENT
    assert editor.table.count_label.text() == "3 groups"
    assert [editor.root_role_combo.itemText(i) for i in range(editor.root_role_combo.count())] \
        == ["No root role", "Admin", "Editor", "Viewer"]  # fmt: skip
    assert not editor.create_button.isEnabled()

    qtbot.keyClicks(editor.name_edit, "Release managers")
    editor.description_edit.setPlainText("Approve releases.\nSecond line.")
    qtbot.keyClicks(editor.mappings.edit, "okta-release-managers")
    qtbot.keyClick(editor.mappings.edit, Qt.Key.Key_Return)
    assert texts(editor.mappings.list) == ["okta-release-managers"]
    assert editor.mappings.edit.text() == ""
    editor.root_role_combo.setCurrentIndex(editor.root_role_combo.findData("Editor"))
    assert m.root_role == "Editor"
    assert "editor" in editor.root_role_hint.text()  # the role's description

    # members: by email part with Enter, by last name with a double-click, one added twice
    add_member(qtbot, editor, "amara.okafor@")
    box, results = editor.members.search, editor.members.results
    box.clear()
    qtbot.keyClicks(box, "PATEL")  # any case
    item = results.item(0)
    qtbot.waitUntil(lambda: not results.visualItemRect(item).isEmpty())  # laid out
    where = results.visualItemRect(item).center()
    qtbot.mouseClick(results.viewport(), Qt.MouseButton.LeftButton, pos=where)
    assert len(m.members) == 1  # a click only selects
    qtbot.mouseDClick(results.viewport(), Qt.MouseButton.LeftButton, pos=where)
    assert chosen(editor) == [
        "Amara Okafor\namara.okafor@example.com",
        "Maya Patel\nmaya.patel@example.com",
    ]
    assert not editor.members.chosen.item(0).icon().isNull()  # the picture (or its initials)
    assert editor.members.chosen_label.text() == "Chosen members (2)"
    assert results.count() == 0 and editor.members.found.text() == "No user matches."
    box.clear()
    qtbot.keyClicks(box, "okafor")
    assert results.count() == 0  # a member is not offered again
    qtbot.keyClick(box, Qt.Key.Key_Escape)  # Escape clears the search: everyone else is shown
    assert box.text() == "" and results.count() == len(m.users) - 2
    # Up and Down in the search box move through the users found
    qtbot.keyClicks(box, "example.com")
    qtbot.keyClick(box, Qt.Key.Key_Down)
    qtbot.keyClick(box, Qt.Key.Key_Down)
    assert results.currentRow() == 2
    qtbot.keyClick(box, Qt.Key.Key_Up)
    assert results.currentRow() == 1
    # a third one, taken out again with Delete
    add_member(qtbot, editor, "ravi")
    assert len(chosen(editor)) == 3
    editor.members.chosen.setCurrentRow(2)
    editor.members.chosen.setFocus()
    qtbot.keyClick(editor.members.chosen, Qt.Key.Key_Delete)
    assert [u.id for u in m.members] == [AMARA, MAYA]

    assert editor.create_button.isEnabled()
    editor.name_edit.setFocus()
    qtbot.keyClick(editor.name_edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: m.created is not None, timeout=20_000)
    created = m.created
    assert created is not None
    assert editor.form_stack.currentWidget() is not editor.form_page

    # the created-group view shows what the server returned
    view = editor.created_view
    assert view.title.text() == "Group “Release managers” created"
    shown = {caption: label.text() for caption, label in view.values.items()}
    assert shown["Id"] == str(created.id)
    assert shown["Description"] == "Approve releases.\nSecond line."
    assert shown["SSO mappings"] == "okta-release-managers"
    assert shown["Root role"] == "Editor"
    assert shown["Users"] == "2" == str(created.userCount)
    assert shown["Created by"] == created.createdBy == "admin"
    assert shown["Created at"] not in ("", "—")
    members = texts(view.members)
    assert [t.split("\n")[0] for t in members] == ["Amara Okafor", "Maya Patel"]
    assert all("joined 20" in t for t in members)

    # the server lists it with those members and that mapping
    client = admin_client(sandbox)
    listed = arun(client.list_groups()).groups
    arun(client.aclose())
    group = next(g for g in listed if g.name == "Release managers")
    assert group.id == created.id
    assert sorted(u.user.id for u in group.users) == [AMARA, MAYA]
    assert group.mappingsSSO == ["okta-release-managers"]
    assert group.rootRole == EDITOR_ROLE
    assert group.description == "Approve releases.\nSecond line."
    # journaled, as every change a window makes (the window used to call the client itself)
    (entry,) = [e for f in data_folder.glob("journal/*/journal.jsonl") for e in read_journal(f)]
    assert (entry.action, entry.ids, entry.state, entry.status) == (
        "groups.create", ["Release managers"], State.DONE, 201)  # fmt: skip
    assert entry.request["method"] == "POST" and entry.request["body"]["name"] == "Release managers"
    # and so does the list beside the form
    qtbot.waitUntil(lambda: "Release managers" in m.group_names)
    assert editor.table.count_label.text() == "4 groups"

    # "Create another" clears the form
    qtbot.mouseClick(view.another_button, Qt.MouseButton.LeftButton)
    assert editor.form_stack.currentWidget() is editor.form_page
    assert editor.name_edit.text() == "" and editor.description_edit.toPlainText() == ""
    assert texts(editor.mappings.list) == [] and chosen(editor) == []
    assert editor.root_role_combo.currentText() == "No root role"
    assert not editor.create_button.isEnabled()
    assert editor.name_error.isHidden()  # an untouched empty name is not an error yet
    assert editor.members.results.count() == len(m.users)  # everyone can be chosen again

    # the same name again: the live check already says no
    qtbot.keyClicks(editor.name_edit, "Release managers")
    assert editor.name_error.text() == "A group named “Release managers” already exists."
    assert not editor.create_button.isEnabled()


def test_create_is_enabled_only_when_the_form_is_valid(
    qtbot: Any,
    demo_sandbox: SandboxProcess,
    open_editor: Callable[..., tuple[ToolPage, GroupEditor]],
) -> None:
    _page, editor = open_editor(demo_sandbox)
    m = editor.model
    button = editor.create_button
    assert not button.isEnabled()
    assert editor.create_hint.text() == "Give the group a name to create it."
    qtbot.keyClicks(editor.name_edit, "Platform team")  # a demo group
    assert not button.isEnabled()
    assert editor.name_error.isVisible()
    assert editor.name_error.text() == "A group named “Platform team” already exists."
    qtbot.keyClicks(editor.name_edit, " 2")
    assert button.isEnabled() and editor.name_error.isHidden()
    editor.name_edit.clear()
    qtbot.keyClicks(editor.name_edit, "   ")
    assert not button.isEnabled()
    assert editor.name_error.text() == "A name is required."
    assert editor.create_hint.text() == "Fix what is marked to create the group."
    # Enter and Ctrl+Enter do nothing while the form is not valid
    qtbot.keyClick(editor.name_edit, Qt.Key.Key_Return)
    qtbot.keyClick(editor.name_edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert not m.creating and m.created is None
    editor.name_edit.clear()
    qtbot.keyClicks(editor.name_edit, "platform TEAM")  # another case: allowed, but pointed out
    assert button.isEnabled()
    assert editor.name_hint.text() == "Note: a group named “Platform team” exists."
    # the whole list is searchable
    qtbot.keyClicks(editor.table.filter_edit, "zendesk")
    assert [g.name for g in m.groups.rows] == ["Support"]
    assert editor.table.count_label.text() == "1 of 3 groups"


def test_the_sso_list_refuses_blanks_and_duplicates(
    qtbot: Any,
    demo_sandbox: SandboxProcess,
    open_editor: Callable[..., tuple[ToolPage, GroupEditor]],
) -> None:
    _page, editor = open_editor(demo_sandbox)
    m, mappings = editor.model, editor.mappings
    qtbot.keyClicks(mappings.edit, "   ")
    qtbot.mouseClick(mappings.add_button, Qt.MouseButton.LeftButton)
    assert m.mappings == []
    assert mappings.error.isVisible()
    assert mappings.error.text() == "An SSO group mapping cannot be blank."
    mappings.edit.clear()
    assert mappings.error.isHidden()  # typing again clears the complaint
    for name in ("okta-a", " okta-b "):
        qtbot.keyClicks(mappings.edit, name)
        qtbot.keyClick(mappings.edit, Qt.Key.Key_Return)
    assert m.mappings == ["okta-a", "okta-b"]  # trimmed
    qtbot.keyClicks(mappings.edit, "okta-a")
    qtbot.keyClick(mappings.edit, Qt.Key.Key_Return)
    assert m.mappings == ["okta-a", "okta-b"]
    assert mappings.error.text() == "“okta-a” is already in the list."
    assert mappings.edit.text() == "okta-a"  # kept, to be corrected
    qtbot.keyClick(mappings.edit, Qt.Key.Key_Escape)
    assert mappings.edit.text() == "" and mappings.error.isHidden()

    # editing in the list: a duplicate or a blank is refused and the old text comes back
    second = mappings.list.item(1)
    second.setText("okta-a")  # what the list's editor does when F2 editing ends
    assert m.mappings == ["okta-a", "okta-b"] and second.text() == "okta-b"
    assert mappings.error.text() == "“okta-a” is already in the list."
    second.setText("  ")
    assert m.mappings == ["okta-a", "okta-b"] and second.text() == "okta-b"
    assert mappings.error.text() == "An SSO group mapping cannot be blank."
    second.setText("okta-c")
    assert m.mappings == ["okta-a", "okta-c"]
    assert mappings.error.isHidden()

    # Delete removes the current one
    mappings.list.setCurrentRow(0)
    mappings.list.setFocus()
    qtbot.keyClick(mappings.list, Qt.Key.Key_Delete)
    assert m.mappings == ["okta-c"]
    qtbot.mouseClick(mappings.remove_button, Qt.MouseButton.LeftButton)
    assert m.mappings == [] and not mappings.remove_button.isEnabled()


# ---------------------------------------------------------------------------- refusals


def test_a_name_taken_meanwhile_gives_409_on_the_name_and_keeps_the_form(
    qtbot: Any,
    sandbox: SandboxProcess,
    open_editor: Callable[..., tuple[ToolPage, GroupEditor]],
    arun: Callable[..., Any],
) -> None:
    _page, editor = open_editor(sandbox)
    m = editor.model
    qtbot.keyClicks(editor.name_edit, "Release managers")
    qtbot.keyClicks(editor.mappings.edit, "okta-release")
    qtbot.keyClick(editor.mappings.edit, Qt.Key.Key_Return)
    add_member(qtbot, editor, "okafor")
    assert editor.name_error.isHidden() and editor.create_button.isEnabled()

    # another client takes the name after the list was loaded
    client = admin_client(sandbox)
    arun(client.create_group(CreateGroup(name="Release managers")))
    arun(client.aclose())

    qtbot.mouseClick(editor.create_button, Qt.MouseButton.LeftButton)
    wait_answered(qtbot, m)
    assert m.created is None
    assert editor.form_stack.currentWidget() is editor.form_page
    assert editor.name_error.isVisible()
    assert editor.name_error.text() == "Group name 'Release managers' already exists"
    assert editor.submit_error.isHidden()
    assert not editor.create_button.isEnabled()
    # what was typed is all still there
    assert editor.name_edit.text() == "Release managers"
    assert texts(editor.mappings.list) == ["okta-release"]
    assert chosen(editor) == ["Amara Okafor\namara.okafor@example.com"]
    # the list was read again, so the live check knows the name from now on
    qtbot.waitUntil(lambda: "Release managers" in m.group_names)
    qtbot.keyClicks(editor.name_edit, " (web)")
    assert editor.name_error.isHidden() and editor.create_button.isEnabled()
    editor.name_edit.setText("")
    qtbot.keyClicks(editor.name_edit, "Release managers")
    assert editor.name_error.text() == "A group named “Release managers” already exists."


def test_400_details_land_on_the_fields_they_name(
    qtbot: Any,
    sandbox: SandboxProcess,
    open_editor: Callable[..., tuple[ToolPage, GroupEditor]],
    arun: Callable[..., Any],
) -> None:
    # a custom root role and a new person, both removed by someone else after the form loaded
    run_sql(sandbox, "INSERT INTO roles(id, name, type, description) VALUES(90, 'Auditor',"
                     " 'root-custom', 'Reads everything')")  # fmt: skip
    client = admin_client(sandbox)
    temp = arun(client.create_user(CreateUser(name="Temp Person", email="temp@example.com")))
    arun(client.aclose())
    _page, editor = open_editor(sandbox)
    m = editor.model
    assert "Auditor" in m.root_role_names
    qtbot.keyClicks(editor.name_edit, "Auditors")
    editor.root_role_combo.setCurrentIndex(editor.root_role_combo.findData("Auditor"))
    add_member(qtbot, editor, "okafor")
    add_member(qtbot, editor, "temp@")
    run_sql(sandbox, "DELETE FROM roles WHERE id = 90")
    run_sql(sandbox, "DELETE FROM users WHERE id = ?", temp.id)

    qtbot.mouseClick(editor.create_button, Qt.MouseButton.LeftButton)
    wait_answered(qtbot, m)
    assert m.field_errors == {"rootRole": m.field_errors["rootRole"]}
    assert editor.root_role_error.isVisible()
    assert editor.root_role_error.text().startswith("rootRole 90 is not the id of a root role")
    assert editor.submit_error.isHidden() and editor.name_error.isHidden()
    assert not editor.create_button.isEnabled()  # until the field is changed
    editor.root_role_combo.setCurrentIndex(editor.root_role_combo.findData(""))
    assert editor.root_role_error.isHidden() and editor.create_button.isEnabled()

    qtbot.mouseClick(editor.create_button, Qt.MouseButton.LeftButton)
    wait_answered(qtbot, m)
    assert editor.members.error.isVisible()
    assert editor.members.error.text() == f"Temp Person: No user with id {temp.id}"
    assert m.member_errors == {temp.id: editor.members.error.text()}
    assert "No user with id" in editor.members.chosen.item(1).toolTip()
    assert not editor.create_button.isEnabled()
    assert editor.name_edit.text() == "Auditors"  # kept
    editor.members.chosen.setCurrentRow(1)
    qtbot.mouseClick(editor.members.remove_button, Qt.MouseButton.LeftButton)
    assert editor.members.error.isHidden() and editor.create_button.isEnabled()

    qtbot.mouseClick(editor.create_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: m.created is not None, timeout=20_000)
    assert m.created is not None and [u.user.id for u in m.created.users] == [AMARA]


def test_paths_of_details_name_the_fields() -> None:
    assert field_of_path("users[1].user.id") == ("members", 1)
    assert field_of_path("$.users[0].user.id") == ("members", 0)
    assert field_of_path("rootRole") == ("rootRole", None)
    assert field_of_path("mappingsSSO[2]") == ("mappingsSSO", 2)
    assert field_of_path("name") == ("name", None)
    assert field_of_path("") == ("", None)
    assert field_of_path("projects") == ("", None)


def test_a_token_that_cannot_create_groups_is_told_and_the_form_is_kept(
    qtbot: Any,
    sandbox: SandboxProcess,
    open_editor: Callable[..., tuple[ToolPage, GroupEditor]],
    personal_token: Callable[[SandboxProcess, str], str],
) -> None:
    # an Editor's personal access token: may read groups, not users, and not create groups
    _page, editor = open_editor(sandbox, personal_token(sandbox, "dmitri.volkov"))
    m = editor.model
    assert editor.states.state == StatePanel.CONTENT
    assert editor.table.count_label.text() == "3 groups"
    assert editor.members.note.isVisible()
    assert editor.members.note.text().startswith("The server did not list its users (403: ")
    assert editor.members.picker.isHidden() and not editor.root_role_combo.isEnabled()
    assert editor.root_role_hint.text() == "The server did not list its root roles to this token."
    assert editor.root_role_combo.currentText() == "No root role"
    qtbot.keyClicks(editor.name_edit, "Editors' club")
    qtbot.keyClicks(editor.mappings.edit, "okta-editors")
    qtbot.keyClick(editor.mappings.edit, Qt.Key.Key_Return)
    qtbot.mouseClick(editor.create_button, Qt.MouseButton.LeftButton)
    wait_answered(qtbot, m)
    assert editor.submit_error.isVisible()
    # known from the token's capabilities: said without sending (a 403 used to say it)
    said = editor.submit_error.text()
    assert said.startswith("The token cannot create groups: ") and "Admin root role" in said
    assert said.endswith("Nothing was sent.")
    assert editor.name_error.isHidden()
    assert editor.name_edit.text() == "Editors' club"
    assert texts(editor.mappings.list) == ["okta-editors"]
    assert editor.create_button.isEnabled()  # the form is fine; another token could send it
    assert m.session.last_error == editor.submit_error.text()  # the status bar has it too
    qtbot.keyClicks(editor.name_edit, "!")
    assert editor.submit_error.isHidden()  # an edit clears the old complaint


def test_401_is_said_under_the_form_and_the_form_is_kept(
    qtbot: Any,
    sandbox: SandboxProcess,
    open_editor: Callable[..., tuple[ToolPage, GroupEditor]],
) -> None:
    _page, editor = open_editor(sandbox)
    m = editor.model
    qtbot.keyClicks(editor.name_edit, "Night shift")
    add_member(qtbot, editor, "okafor")
    run_sql(sandbox, REVOKE, sandbox.admin_token)  # revoked
    qtbot.mouseClick(editor.create_button, Qt.MouseButton.LeftButton)
    wait_answered(qtbot, m)
    assert editor.submit_error.text() == (
        "The server did not accept the token (was it deleted or has it expired?). "
        "The server said: The token is not valid."
    )
    assert editor.name_edit.text() == "Night shift" and len(chosen(editor)) == 1
    assert m.created is None


def test_a_failed_load_shows_the_error_with_retry_and_keeps_what_was_typed(
    qtbot: Any,
    sandbox: SandboxProcess,
    open_editor: Callable[..., tuple[ToolPage, GroupEditor]],
) -> None:
    page, editor = open_editor(sandbox)
    m = editor.model
    qtbot.keyClicks(editor.name_edit, "Night shift")
    qtbot.keyClicks(editor.mappings.edit, "okta-night")
    qtbot.keyClick(editor.mappings.edit, Qt.Key.Key_Return)
    add_member(qtbot, editor, "okafor")

    run_sql(sandbox, REVOKE, sandbox.admin_token)  # revoked
    editor.name_edit.setFocus()
    qtbot.keyClick(editor.name_edit, Qt.Key.Key_F5)  # F5 from anywhere in the page
    qtbot.waitUntil(lambda: editor.states.state == StatePanel.ERROR, timeout=20_000)
    assert editor.states.error_title.text() == "Could not load the groups"
    assert editor.states.error_label.text().startswith("401 AuthenticationRequired")
    assert editor.states.retry_button.isVisible()

    run_sql(sandbox, RESTORE, sandbox.admin_token)
    qtbot.mouseClick(editor.states.retry_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: editor.states.state == StatePanel.CONTENT, timeout=20_000)
    assert not m.error
    assert editor.name_edit.text() == "Night shift"
    assert texts(editor.mappings.list) == ["okta-night"]
    assert chosen(editor) == ["Amara Okafor\namara.okafor@example.com"]
    assert editor.create_button.isEnabled()
    assert page.isVisible()


# ---------------------------------------------------------------------------- other servers


class Requests:
    """Counts the requests a client sends, by path."""

    def __init__(self, client: AdminClient) -> None:
        self.paths: list[str] = []
        client._http.event_hooks["request"].append(self.on_request)

    async def on_request(self, request: httpx.Request) -> None:
        self.paths.append(request.url.path)


def test_without_groups_the_window_is_disabled_and_sends_nothing(
    qtbot: Any,
    tmp_path: Path,
    open_editor: Callable[..., tuple[ToolPage, GroupEditor]],
) -> None:
    with SandboxProcess(tmp_path / "oss.sqlite3", "--demo", "--without-groups") as oss:
        page, editor = open_editor(oss)
        session = editor.session
        assert session.connection is not None
        sent = Requests(session.connection.client)
        assert not editor.model.available
        assert page.banner.isVisible()
        assert "Unleash Enterprise" in page.reason.text()
        assert not page.content.isEnabled() and not editor.isEnabled()
        assert not editor.create_button.isEnabled()
        assert editor.states.state == StatePanel.EMPTY
        assert editor.states.empty_title.text() == "Groups cannot be used on this connection"
        for _ in range(5):  # F5 and Retry pressed again and again
            qtbot.keyClick(page, Qt.Key.Key_F5)
            editor.refresh()
            editor.states.retry_requested.emit()
        assert editor.model.create() is None
        qtbot.wait(300)
        assert sent.paths == []
        assert not editor.model.tasks and not editor.model.busy


class RefuseGroupList(httpx.AsyncBaseTransport):
    """A server that answers 403 to `GET /api/admin/groups` but lets the rest through (a token
    that may create groups but not read them; the sandbox has no such permission)."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "GET" and request.url.path == "/api/admin/groups":
            return httpx.Response(
                403, json={"name": "NoAccessError", "message": "You may not read groups."}
            )
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def test_a_server_that_cannot_list_groups_hides_the_list_and_still_creates(
    qtbot: Any,
    sandbox: SandboxProcess,
    connect: Callable[..., Session],
    arun: Callable[..., Any],
) -> None:
    session = connect(sandbox)
    assert session.connection is not None
    http = session.connection.client._http
    http._transport = RefuseGroupList(http._transport)  # after the probe saw the groups
    editor = GroupEditor(session)
    qtbot.addWidget(editor)
    editor.resize(1000, 700)
    editor.show()
    m = editor.model
    qtbot.waitUntil(lambda: m.loaded and not m.busy, timeout=20_000)
    assert editor.states.state == StatePanel.CONTENT
    assert editor.list_pane.isHidden()
    assert editor.groups_note.isVisible()
    assert editor.groups_note.text() == (
        "The server did not list its groups (403: You may not read groups.), so a name "
        "already taken is found only when you press Create."
    )
    qtbot.keyClicks(editor.name_edit, "Platform team")  # taken, but nothing to check against
    assert editor.create_button.isEnabled()
    qtbot.mouseClick(editor.create_button, Qt.MouseButton.LeftButton)
    wait_answered(qtbot, m)
    assert editor.name_error.text() == "Group name 'Platform team' already exists"
    editor.name_edit.clear()
    qtbot.keyClicks(editor.name_edit, "Platform team 2")
    qtbot.mouseClick(editor.create_button, Qt.MouseButton.LeftButton)
    try:
        qtbot.waitUntil(lambda: m.created is not None, timeout=20_000)
    finally:
        editor.close_content()


def test_an_empty_server_says_there_are_no_groups_yet(
    qtbot: Any,
    tmp_path: Path,
    open_editor: Callable[..., tuple[ToolPage, GroupEditor]],
) -> None:
    with SandboxProcess(tmp_path / "empty.sqlite3", "--empty") as empty:
        _page, editor = open_editor(empty)
        assert editor.states.state == StatePanel.CONTENT
        assert editor.list_states.state == StatePanel.EMPTY
        assert editor.list_states.empty_title.text() == "No groups yet"
        assert "create the first one" in editor.list_states.empty_label.text()
        assert editor.members.found.text() == "1 user"  # the admin


def test_the_splitter_is_remembered(
    qtbot: Any,
    demo_sandbox: SandboxProcess,
    open_editor: Callable[..., tuple[ToolPage, GroupEditor]],
) -> None:
    page, editor = open_editor(demo_sandbox)
    editor.splitter.setSizes([300, 700])
    sizes = editor.splitter.sizes()
    page.close_page()
    state = window_settings().value(SPLITTER_KEY)
    assert isinstance(state, QByteArray)
    again = GroupEditor(editor.session)
    qtbot.addWidget(again)
    try:
        assert again.splitter.saveState() == state
        again.resize(editor.size())
        again.show()
        qtbot.waitUntil(lambda: again.model.loaded and not again.model.busy, timeout=20_000)
        restored = again.splitter.sizes()
        assert restored[0] < restored[1], (restored, sizes)
    finally:
        again.close_content()


def test_nobody_is_chosen_for_the_person_and_long_names_are_whole(
    qtbot: Any,
    sandbox: SandboxProcess,
    open_editor: Callable[..., tuple[ToolPage, GroupEditor]],
    arun: Callable[..., Any],
) -> None:
    """The first user ("Admin") used to be selected, so Add member added them; a group's name
    was cut at 16 characters while the SSO mappings column was wide."""
    long_name = "Release managers of the web shop and the mobile app"

    client = admin_client(sandbox)
    arun(client.create_group(CreateGroup(name=long_name, mappingsSSO=["okta-release"])))
    arun(client.aclose())
    settings = window_settings()
    settings.remove("tables/groupsList")
    settings.sync()
    _page, editor = open_editor(sandbox)
    members = editor.members
    assert members.results.count() > 1
    assert members.results.currentRow() == -1
    assert not members.add_button.isEnabled()
    members.add_button.click()
    qtbot.keyClick(members.search, Qt.Key.Key_Return)
    assert editor.model.members == []
    qtbot.keyClicks(members.search, "okafor")  # what is typed picks its first match
    assert members.add_button.isEnabled()
    qtbot.keyClick(members.search, Qt.Key.Key_Escape)  # and an empty search picks nobody
    assert members.results.currentRow() == -1 and not members.add_button.isEnabled()
    item = members.results.item(1)
    members.results.setCurrentItem(item)  # picked: now it can be added
    assert members.add_button.isEnabled()
    picked = members.results.user_id(item)
    members.add_button.click()
    assert [u.id for u in editor.model.members] == [picked]

    view = editor.table.view
    qtbot.waitUntil(lambda: editor.table._fitted)
    width = view.fontMetrics().horizontalAdvance(long_name)
    assert view.columnWidth(0) > width  # whole, not "Release manag…"


def test_the_columns_fit_the_page_with_the_sso_mappings_whole(
    qtbot: Any,
    demo_sandbox: SandboxProcess,
    open_editor: Callable[..., tuple[ToolPage, GroupEditor]],
) -> None:
    """In the main window at its default size, the SSO mappings column was left 75 pixels: its
    title read "SSO mappin" and every mapping was cut, beside a creation date nobody asked for
    (the header's menu shows it)."""
    settings = window_settings()
    settings.remove("tables/groupsList")
    settings.sync()
    page, editor = open_editor(demo_sandbox)
    page.resize(880, 650)  # the page's part of an 1100 by 700 main window
    view = editor.table.view
    header = view.horizontalHeader()
    qtbot.waitUntil(lambda: editor.table._fitted and view.viewport().width() > 0)
    model = editor.model.groups
    shown = [model.headerData(c, Qt.Orientation.Horizontal) for c in range(header.count())
             if not header.isSectionHidden(c)]  # fmt: skip
    assert shown == ["Name", "Members", "Root role", "SSO mappings"]
    assert header.length() <= view.viewport().width()
    assert not view.horizontalScrollBar().isVisible()
    assert header.sectionSize(3) >= header.sectionSizeHint(3)  # its title whole
    widest = max(view.fontMetrics().horizontalAdvance(model.text(r, 3) or "")
                 for r in range(model.rowCount()))  # fmt: skip
    assert widest > 0 and header.sectionSize(3) > widest  # and every demo mapping


def test_no_undo_is_offered_before_anything_was_changed(
    sandbox: SandboxProcess,
    open_editor: Callable[..., tuple[ToolPage, GroupEditor]],
) -> None:
    """The editor opened with an "Undo" button under the form, enabled, when nothing had been
    changed yet: Undo is offered once a change was made (see tests/ui/test_group_edit.py)."""
    _page, editor = open_editor(sandbox)
    assert editor.model.undoable is None
    assert editor.undo_button.isHidden()
    assert editor.outcome_label.isHidden()
