"""Opening, editing, deleting and undoing a group in the group editor (`GroupEditor` over
`GroupEditorModel`) against sandboxes over HTTP, keyboard where a person would use it: a group
opens with its members; Save asks first, naming what changes, with Cancel the default (Escape
changes nothing: no request, no snapshot, no journal); saved changes are read back from the
server, journaled with a JSON snapshot, and told to other windows; a refused save keeps what was
typed; Undo puts the previous group back; a deletion is undone by recreating the group with its
members; a token without the Admin role sees Save and Delete disabled with the reason."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from app.actions.groups import read_snapshot
from app.actions.journal import JOURNAL_NAME, Actor, Journal, State, journal_folder, read_journal
from app.api.models import Group, GroupList
from app.changes import Changes, Resource
from app.registry import TOOLS_BY_KEY
from app.viewmodels.session import Session
from sandbox.process import SandboxProcess
from tests.ui.test_groups import chosen
from ui.groups import GroupConfirmation, GroupEditor
from ui.main_window import MainWindow
from ui.tool_page import ToolPage

PLATFORM = 1  # "Platform team" in the demo: 6 members, root role Editor
Opener = Callable[..., tuple[ToolPage, GroupEditor]]


@pytest.fixture
def own_editor(sandbox: SandboxProcess, open_editor: Opener, data_folder: Path) -> GroupEditor:
    """The group editor, loaded, on a sandbox of this test's own (free to change), journaling
    into a data folder of its own."""
    return open_editor(sandbox)[1]


def served(sb: SandboxProcess, group_id: int) -> Group | None:
    with sb.admin() as http:
        r = http.get(f"/api/admin/groups/{group_id}")
    return Group.model_validate(r.json()) if r.status_code == 200 else None


def served_names(sb: SandboxProcess) -> set[str]:
    with sb.admin() as http:
        return {
            g.name for g in GroupList.model_validate(http.get("/api/admin/groups").json()).groups
        }


def held(group: Group | None) -> tuple[Any, ...]:
    assert group is not None
    return (group.name, group.description, group.mappingsSSO, group.rootRole,
            sorted(m.user.id for m in group.users))  # fmt: skip


def open_platform(qtbot: Any, editor: GroupEditor) -> None:
    """Select the "Platform team" row and press Enter on it."""
    table, view = editor.model.groups, editor.table.view
    row = table.row_of(lambda g: g.id == PLATFORM)
    view.setFocus()
    view.setCurrentIndex(table.index(row, 0))
    qtbot.keyClick(view, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: editor.model.editing is not None and not editor.model.opening,
                    timeout=20_000)  # fmt: skip


def answer(qtbot: Any, editor: GroupEditor, confirm: bool) -> GroupConfirmation:
    """The open confirmation, answered by keyboard: Space on the confirming button, or Escape;
    then wait for the change to end."""
    box = editor.confirmations.box
    assert box is not None and box.isVisible()
    assert box.defaultButton() is box.cancel_button  # Enter does not change anything
    if confirm:
        box.confirm_button.setFocus()
        qtbot.keyClick(box.confirm_button, Qt.Key.Key_Space)
    else:
        qtbot.keyClick(box, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: editor.confirmations.box is None)
    qtbot.waitUntil(lambda: not editor.model.changing and not editor.model.opening,
                    timeout=20_000)  # fmt: skip
    return box


def test_open_shows_the_group_with_its_members(
    qtbot: Any,
    demo_sandbox: SandboxProcess,
    open_editor: Opener,
) -> None:
    _page, editor = open_editor(demo_sandbox)
    assert not editor.delete_button.isVisible() and editor.create_button.text() == "Create group"
    open_platform(qtbot, editor)
    m = editor.model
    group = served(demo_sandbox, PLATFORM)
    assert group is not None
    assert editor.form_heading.text() == "Group “Platform team” (id 1)"
    assert editor.name_edit.text() == "Platform team"
    assert editor.description_edit.toPlainText() == group.description
    assert [editor.mappings.list.item(i).text() for i in range(editor.mappings.list.count())] \
        == ["okta-platform", "platform-oncall"]  # fmt: skip
    assert editor.root_role_combo.currentText() == "Editor"
    assert len(chosen(editor)) == 6 == len(group.users)
    assert [m.id for m in m.members] == [u.user.id for u in group.users]
    assert editor.create_button.text() == "Save changes"
    assert not editor.create_button.isEnabled()  # nothing changed yet
    assert editor.create_button.toolTip() == "Nothing has changed."
    assert editor.delete_button.isVisible() and editor.delete_button.isEnabled()
    assert m.name_problem == ""  # its own name is not "taken"

    qtbot.mouseClick(editor.new_button, Qt.MouseButton.LeftButton)
    assert m.editing is None and editor.name_edit.text() == "" and chosen(editor) == []
    assert editor.form_heading.text() == "New group"
    editor.table.view.setCurrentIndex(m.groups.index(m.groups.row_of(lambda g: g.id == 2), 0))
    qtbot.mouseClick(editor.open_button, Qt.MouseButton.LeftButton)  # the Open button
    qtbot.waitUntil(lambda: m.editing is not None and m.editing.id == 2, timeout=20_000)
    assert editor.name_edit.text() == "Checkout squad"


def test_save_asks_cancel_changes_nothing_then_saves_reads_back_and_undo_restores(
    qtbot: Any, sandbox: SandboxProcess, own_editor: GroupEditor, data_folder: Path
) -> None:
    editor = own_editor
    m, session = editor.model, editor.session
    changes: list[Changes] = []
    session.data_changed.connect(lambda c, _source: changes.append(c))
    before = served(sandbox, PLATFORM)
    open_platform(qtbot, editor)

    editor.name_edit.selectAll()
    qtbot.keyClicks(editor.name_edit, "Platform crew")
    editor.description_edit.setPlainText("Runs the servers.")
    editor.members.chosen.setCurrentRow(0)
    leaving = chosen(editor)[0].split("\n")[0]
    qtbot.mouseClick(editor.members.remove_button, Qt.MouseButton.LeftButton)
    editor.root_role_combo.setCurrentIndex(editor.root_role_combo.findData(""))
    assert editor.create_button.isEnabled()

    qtbot.keyClick(editor.name_edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    box = editor.confirmations.box
    assert box is not None and box.text() == "Save the changes to group “Platform team”?"
    said = box.informativeText().split("\n\n")
    assert said[0].startswith(
        f"Group “Platform team” (id 1, 6 members) will change on {sandbox.url} (connection "
        "“test sandbox”): name “Platform team” → “Platform crew”; description changed; "
        f"root role Editor → none; 1 leaving ({leaving})"
    ), said[0]
    assert said[1] == f"A snapshot of the group is written first to {box.plan.snapshot}."
    assert said[2] == "This can be undone: Undo puts the group back as it is now."
    answer(qtbot, editor, confirm=False)
    assert held(served(sandbox, PLATFORM)) == held(before)
    assert not data_folder.exists()  # no snapshot, no journal
    assert editor.name_edit.text() == "Platform crew"  # the draft stays

    qtbot.mouseClick(editor.create_button, Qt.MouseButton.LeftButton)
    box = answer(qtbot, editor, confirm=True)
    after = served(sandbox, PLATFORM)
    assert after is not None
    assert (after.name, after.description, after.rootRole, len(after.users)) == (
        "Platform crew", "Runs the servers.", None, 5)  # fmt: skip
    assert m.editing is not None and held(m.editing) == held(after)  # read back into the form
    assert editor.form_heading.text() == "Group “Platform crew” (id 1)"
    assert editor.outcome_label.text().startswith("Saved group “Platform crew”.")
    assert editor.undo_button.isVisible() and editor.undo_button.text() == "Undo the edit"
    qtbot.waitUntil(lambda: "Platform crew" in m.group_names)
    assert Changes.of(Resource.GROUPS, PLATFORM) in changes
    (entry,) = read_journal(journal_folder("test sandbox") / JOURNAL_NAME)
    assert (entry.action, entry.ids, entry.state, entry.status) == (
        "groups.edit", [PLATFORM], State.DONE, 200)  # fmt: skip
    assert held(read_snapshot(box.plan.snapshot)) == held(before)

    qtbot.mouseClick(editor.new_button, Qt.MouseButton.LeftButton)  # away from the group
    assert editor.undo_button.isVisible() and not editor.undo_button.isEnabled()
    assert editor.undo_button.toolTip() == "Open group “Platform crew” again to undo its edit."
    open_platform(qtbot, editor)
    assert editor.undo_button.isEnabled()
    qtbot.mouseClick(editor.undo_button, Qt.MouseButton.LeftButton)
    undo = editor.confirmations.box
    assert undo is not None and undo.text() == "Put back group “Platform crew”?"
    assert "name “Platform crew” → “Platform team”" in undo.informativeText()
    answer(qtbot, editor, confirm=True)
    assert held(served(sandbox, PLATFORM)) == held(before)
    assert editor.name_edit.text() == "Platform team" and len(chosen(editor)) == 6
    assert editor.outcome_label.text().startswith("Put back group “Platform team”.")
    assert not editor.undo_button.isVisible()  # an undo is not undone again
    entries = read_journal(journal_folder("test sandbox") / JOURNAL_NAME)
    assert [(e.action, e.state, e.before["undo"]) for e in entries] == [
        ("groups.edit", State.DONE, False), ("groups.edit", State.DONE, True)]  # fmt: skip


def test_a_refused_save_keeps_what_was_typed(
    qtbot: Any, sandbox: SandboxProcess, own_editor: GroupEditor, data_folder: Path
) -> None:
    editor = own_editor
    open_platform(qtbot, editor)
    with sandbox.admin() as http:  # another admin takes the name meanwhile
        assert http.post("/api/admin/groups", json={"name": "Night shift"}).status_code == 201
    editor.name_edit.selectAll()
    qtbot.keyClicks(editor.name_edit, "Night shift")
    editor.description_edit.setPlainText("Typed with care.")
    qtbot.mouseClick(editor.create_button, Qt.MouseButton.LeftButton)
    answer(qtbot, editor, confirm=True)
    assert "already exists" in editor.name_error.text() and editor.name_error.isVisible()
    assert editor.name_edit.text() == "Night shift"
    assert editor.description_edit.toPlainText() == "Typed with care."
    assert "Night shift" in editor.outcome_label.text()  # the server's message
    assert served(sandbox, PLATFORM).name == "Platform team"  # type: ignore[union-attr]
    (entry,) = read_journal(journal_folder("test sandbox") / JOURNAL_NAME)
    assert (entry.state, entry.status) == (State.FAILED, 409)
    assert not editor.undo_button.isVisible()

    # a 400: a member deleted on the server meanwhile lands on the members field
    editor.name_edit.selectAll()
    qtbot.keyClicks(editor.name_edit, "Day shift")
    gone = editor.model.members[2]
    with sandbox.admin() as http:  # deletes any user it is given (as Unleash 8.2)
        r = http.post("/api/admin/user-admin/inactive/delete", json={"ids": [gone.id]})
        assert r.status_code == 200
    qtbot.mouseClick(editor.create_button, Qt.MouseButton.LeftButton)
    answer(qtbot, editor, confirm=True)
    assert f"No user with id {gone.id}" in editor.members.error.text()
    assert editor.members.error.isVisible()
    assert editor.name_edit.text() == "Day shift" and len(chosen(editor)) == 6  # as typed
    assert editor.description_edit.toPlainText() == "Typed with care."
    assert served(sandbox, PLATFORM).name == "Platform team"  # type: ignore[union-attr]
    statuses = [e.status for e in read_journal(journal_folder("test sandbox") / JOURNAL_NAME)]
    assert statuses == [409, 400]

    # a plan made on another connection is not carried out
    assert not editor.create_button.isEnabled()  # until the refused member is taken out
    editor.model.remove_member(gone.id)
    assert editor.create_button.isEnabled() and not editor.members.error.isVisible()
    plan = editor.model.plan_save()
    assert plan is not None
    assert (
        editor.model.change(replace(plan, journal=Journal(Actor("another", plan.server)))) is None
    )
    assert editor.outcome_label.text().startswith("Nothing was changed: the connection changed")
    assert served(sandbox, PLATFORM).name == "Platform team"  # type: ignore[union-attr]
    assert len(read_journal(journal_folder("test sandbox") / JOURNAL_NAME)) == 2


def test_a_group_deleted_elsewhere_cannot_be_opened_and_leaves_the_list(
    qtbot: Any, sandbox: SandboxProcess, open_editor: Opener
) -> None:
    _page, editor = open_editor(sandbox)
    with sandbox.admin() as http:  # another admin deletes it after the list was read
        assert http.delete(f"/api/admin/groups/{PLATFORM}").status_code == 200
    open_platform_row = editor.model.groups.row_of(lambda g: g.id == PLATFORM)
    editor.table.view.setCurrentIndex(editor.model.groups.index(open_platform_row, 0))
    qtbot.mouseClick(editor.open_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(editor.model.outcome_error), timeout=20_000)
    said = editor.outcome_label.text()
    assert said.startswith("Could not open the group: ") and "404" in said
    assert "Could not find group with id 1" in said
    assert editor.model.editing is None and editor.form_heading.text() == "New group"
    qtbot.waitUntil(lambda: "Platform team" not in editor.model.group_names, timeout=20_000)


def test_delete_asks_then_undo_recreates_the_group_with_its_members(
    qtbot: Any, sandbox: SandboxProcess, own_editor: GroupEditor, data_folder: Path
) -> None:
    editor = own_editor
    m = editor.model
    before = served(sandbox, PLATFORM)
    open_platform(qtbot, editor)
    qtbot.mouseClick(editor.delete_button, Qt.MouseButton.LeftButton)
    box = editor.confirmations.box
    assert box is not None and box.text() == "Delete group “Platform team”?"
    assert box.informativeText().startswith("Group “Platform team” (id 1, 6 members (")
    assert f"will be deleted on {sandbox.url} (connection “test sandbox”)." in box.informativeText()
    assert "Undo recreates it from the snapshot" in box.informativeText()
    answer(qtbot, editor, confirm=False)
    assert held(served(sandbox, PLATFORM)) == held(before) and not data_folder.exists()

    qtbot.mouseClick(editor.delete_button, Qt.MouseButton.LeftButton)
    box = answer(qtbot, editor, confirm=True)
    assert served(sandbox, PLATFORM) is None
    assert m.editing is None and editor.form_heading.text() == "New group"
    assert (
        editor.outcome_label.text()
        == f"Deleted group “Platform team”. Snapshot: {box.plan.snapshot}"
    )
    qtbot.waitUntil(lambda: "Platform team" not in m.group_names)
    assert editor.undo_button.text() == "Undo: recreate the group"

    qtbot.keyClick(editor.undo_button, Qt.Key.Key_Space)
    undo = editor.confirmations.box
    assert undo is not None and undo.text() == "Recreate group “Platform team”?"
    assert "it gets a new id (it had 1)" in undo.informativeText()
    answer(qtbot, editor, confirm=True)
    assert m.editing is not None and m.editing.id != PLATFORM
    again = served(sandbox, m.editing.id)
    assert held(again) == held(before)  # same name, description, mappings, role and members
    assert "Platform team" in served_names(sandbox)
    assert editor.outcome_label.text().startswith("Recreated group “Platform team” (new id ")
    entries = read_journal(journal_folder("test sandbox") / JOURNAL_NAME)
    assert [(e.action, e.state, e.status) for e in entries] == [
        ("groups.delete", State.DONE, 200), ("groups.create", State.DONE, 201)]  # fmt: skip


def test_without_the_admin_role_save_and_delete_are_disabled_and_say_why(
    qtbot: Any,
    sandbox: SandboxProcess,
    open_editor: Opener,
    personal_token: Callable[[SandboxProcess, str], str],
) -> None:
    _page, editor = open_editor(sandbox, personal_token(sandbox, "sofia.mendes"))  # a Viewer
    open_platform(qtbot, editor)
    editor.description_edit.setPlainText("A change a viewer may not make")
    assert editor.delete_button.isVisible() and not editor.delete_button.isEnabled()
    assert "Admin" in editor.delete_button.toolTip()
    assert not editor.create_button.isEnabled() and "Admin" in editor.create_button.toolTip()
    assert editor.model.plan_save() is None and editor.model.plan_delete() is None
    with httpx.Client(base_url=sandbox.url, headers={"Authorization": sandbox.admin_token}) as h:
        assert h.get(f"/api/admin/groups/{PLATFORM}").json()["description"] != (
            "A change a viewer may not make")  # fmt: skip


def test_quitting_with_an_unsaved_edit_asks_and_cancel_keeps_it(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, data_folder: Path
) -> None:
    """Closing the main window (quitting) while an opened group has changes not saved asks
    first, naming the group: Cancel (the default; Escape) keeps the window and the edit and
    shows the Groups page again; Discard quits. Nothing is sent either way. Without unsaved
    changes the window closes at once."""
    session = connect(sandbox)
    window = MainWindow(session)
    qtbot.addWidget(window)
    window.show()
    window.show_page("groups")
    editor = window.tool_pages["groups"].ensure_content()
    assert isinstance(editor, GroupEditor)
    qtbot.waitUntil(lambda: editor.model.loaded and not editor.model.busy, timeout=20_000)
    open_platform(qtbot, editor)
    before = held(served(sandbox, PLATFORM))
    editor.description_edit.setPlainText("Typed, not saved.")
    window.show_page("overview")

    window.close()  # as File > Quit does
    assert window.isVisible()
    box = window.findChild(QMessageBox, "unsavedChangesConfirmation")
    assert box is not None and box.isVisible()
    assert box.text() == "Quit flagdesk and lose the unsaved changes?"
    assert "“Platform team” (id 1)" in box.informativeText()
    assert box.defaultButton() is box.cancel_button and box.escapeButton() is box.cancel_button
    qtbot.keyClick(box, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: window.findChild(QMessageBox, "unsavedChangesConfirmation") is None)
    assert window.isVisible() and window.current_key == "groups"
    assert editor.model.description == "Typed, not saved."
    assert editor.description_edit.toPlainText() == "Typed, not saved."

    window.close()
    box = window.findChild(QMessageBox, "unsavedChangesConfirmation")
    assert box is not None and box.isVisible()
    box.action_button.setFocus()
    qtbot.keyClick(box.action_button, Qt.Key.Key_Space)  # Discard, by keyboard
    qtbot.waitUntil(lambda: not window.isVisible())
    assert held(served(sandbox, PLATFORM)) == before
    assert not (data_folder / "journal").exists()

    # nothing unsaved: closed at once
    other = MainWindow(session)
    qtbot.addWidget(other)
    other.show()
    other.show_page("groups")
    other.close()
    assert not other.isVisible()
    assert other.findChild(QMessageBox, "unsavedChangesConfirmation") is None


def test_a_group_window_of_its_own_asks_too_and_quitting_names_it(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, data_folder: Path
) -> None:
    """The Groups tool in a window of its own, with an unsaved edit: closing that window asks
    (Cancel keeps it); quitting names its changes, and Discard closes both windows."""
    session = connect(sandbox)
    window = MainWindow(session)
    qtbot.addWidget(window)
    window.show()
    own = window.open_tool_window(TOOLS_BY_KEY["groups"])
    editor = own.page.tool_content
    assert isinstance(editor, GroupEditor)
    qtbot.waitUntil(lambda: editor.model.loaded and not editor.model.busy, timeout=20_000)
    open_platform(qtbot, editor)
    editor.description_edit.setPlainText("Typed in a window of its own.")

    own.close()
    box = own.findChild(QMessageBox, "unsavedChangesConfirmation")
    assert box is not None and box.isVisible() and own.isVisible()
    assert box.text() == "Close the window and lose the unsaved changes?"
    qtbot.keyClick(box, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: own.findChild(QMessageBox, "unsavedChangesConfirmation") is None)
    assert own.isVisible() and editor.model.description == "Typed in a window of its own."

    window.close()
    box = window.findChild(QMessageBox, "unsavedChangesConfirmation")
    assert box is not None and "“Platform team” (id 1)" in box.informativeText()
    qtbot.mouseClick(box.action_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.isVisible())
    qtbot.waitUntil(lambda: window.tool_windows == set())  # closed, and so deleted


HOSTILE = "\x1b]0;PWNED\x07\x1b[2J"


def test_a_group_whose_texts_hold_control_characters_opens_and_says_what_to_fix(
    qtbot: Any, sandbox: SandboxProcess, open_editor: Opener, data_folder: Path
) -> None:
    """A server of someone else's may hold a name the requests refuse (issue 35): the group
    still lists and opens, the form marks the name, the description and the mapping, Save says
    why not, and once they are fixed the group saves."""
    conn = sqlite3.connect(sandbox.db)
    with conn:
        conn.execute(
            "INSERT INTO groups_(name, description, mappings_sso, created_at) VALUES (?, ?, ?, 0)",
            (HOSTILE, "bell\x07", json.dumps(["ok", "csi\x9b"])),
        )
    conn.close()
    _page, editor = open_editor(sandbox)
    m = editor.model
    table, view = m.groups, editor.table.view
    row = table.row_of(lambda g: g.name == HOSTILE)
    view.setFocus()
    view.setCurrentIndex(table.index(row, 0))
    qtbot.keyClick(view, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: m.editing is not None and not m.opening, timeout=20_000)
    assert m.editing is not None and m.editing.name == HOSTILE
    assert m.name_problem == "Control characters are not allowed: U+001B at character 1."
    assert m.field_errors["description"].startswith("Control characters are not allowed")
    assert "U+009B" in m.field_errors["mappingsSSO"]
    assert not m.valid
    assert not editor.create_button.isEnabled()
    assert editor.create_button.toolTip() == "Fix what is marked to save the group."
    assert m.unsaved_changes == ""  # nothing typed yet: nothing to lose

    m.set_name("Renamed")
    m.set_description("A bell no more")
    m.remove_mapping(1)
    assert m.valid and m.save_reason == ""
    assert (
        m.add_mapping("tab\there") == "Control characters are not allowed: U+0009 at character 4."
    )
