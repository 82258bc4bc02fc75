"""Reviving and deleting archived flags in the archived feature browser (`ArchiveBrowser` over
`ArchiveBrowserModel`) against sandboxes of their own, state read back from the server: revive
one, the confirmation's words and keyboard, the journal and the snapshot, Undo (archiving them
again); revive many in one request (requests counted on the wire); delete for good with the
typed confirmation (wrong text keeps the button disabled); cancel changes nothing; an error
answer shown as the client's message; the buttons disabled with their reasons; and the same on
an Unleash 8.2 whose archive is read through the search API."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from PySide6.QtCore import Qt

from app.actions.journal import JOURNAL_NAME, Actor, Journal, State, journal_folder, read_journal
from app.changes import Changes, Resource
from app.viewmodels.archive import CONTENT, DELETE, EMPTY, REVIVE
from app.viewmodels.session import Session
from sandbox.process import SandboxProcess
from tests.qt_fixtures import select_where
from tests.sandbox.test_inactive_delete import sql
from tests.ui.test_archive import (
    Unleash82WithProjects,
    browser,
    choose,
    emulated_session,
    wait_state,
)
from ui.archive import ArchiveBrowser, ArchiveConfirmation
from ui.states import StatePanel
from ui.tool_page import ToolPage

#: the `tool_page` fixture of tests/ui/conftest.py
OpenPage = Callable[..., ToolPage]


@pytest.fixture
def wire(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, str]]]:
    """Every request the client sends, as (method, path), in order."""
    sent: list[tuple[str, str]] = []
    real = httpx.AsyncClient.send

    async def send(self: httpx.AsyncClient, request: httpx.Request, **kw: Any) -> httpx.Response:
        sent.append((request.method, request.url.path))
        return await real(self, request, **kw)

    monkeypatch.setattr(httpx.AsyncClient, "send", send)
    yield sent


def shown(qtbot: Any, tool_page: OpenPage, session: Session, project: str) -> ArchiveBrowser:
    """The archived features page on `session`, showing `project`'s archived flags."""
    content = browser(tool_page("archived_features", session))
    choose(qtbot, content, project)
    wait_state(qtbot, content, CONTENT)
    return content


def select(content: ArchiveBrowser, *names: str) -> None:
    select_where(content.table.view, lambda f: f.name in names)


def archived(sb: SandboxProcess, project: str) -> set[str]:
    return {str(r[0]) for r in sql(sb, "SELECT name FROM features WHERE project = ? AND "
                                   "archived_at IS NOT NULL", project)}  # fmt: skip


def live(sb: SandboxProcess, project: str) -> set[str]:
    return {str(r[0]) for r in sql(sb, "SELECT name FROM features WHERE project = ? AND "
                                   "archived_at IS NULL", project)}  # fmt: skip


def confirm_by_keyboard(qtbot: Any, box: ArchiveConfirmation) -> None:
    box.action_button.setFocus()
    qtbot.keyClick(box.action_button, Qt.Key.Key_Space)


def wait_done(qtbot: Any, content: ArchiveBrowser) -> None:
    model = content.model
    qtbot.waitUntil(lambda: bool(model.outcome or model.outcome_error) and not model.acting,
                    timeout=20_000)  # fmt: skip
    qtbot.waitUntil(lambda: not model.busy and model.loaded_project == model.project,
                    timeout=20_000)  # fmt: skip


def test_revive_one_then_undo(
    qtbot: Any,
    connect: Callable[..., Session],
    tool_page: OpenPage,
    sandbox: SandboxProcess,
    data_folder: Path,
    wire: list[tuple[str, str]],
) -> None:
    session = connect(sandbox)
    changes: list[Changes] = []
    session.data_changed.connect(lambda c, _source: changes.append(c))
    content = shown(qtbot, tool_page, session, "web-shop")
    model = content.model
    assert not content.revive_button.isEnabled() and not content.undo_button.isVisible()
    assert content.revive_button.toolTip().startswith("Select the flags first")
    assert content.delete_button.toolTip().startswith("Select the flags first")
    name = model.table.rows[0].name
    before = archived(sandbox, "web-shop")

    select(content, name)
    assert [f.name for f in model.selected_rows] == [name]
    assert content.revive_button.isEnabled()
    assert content.revive_button.toolTip() == "Revive the selected flags"
    qtbot.mouseClick(content.revive_button, Qt.MouseButton.LeftButton)
    box = content.confirmation
    assert box is not None and box.isVisible()
    assert box.question.text() == "Revive 1 flag?"
    said = box.details.text().split("\n\n")
    assert said == [
        f"1 flag of project “web-shop” will be revived on {sandbox.url} (connection “test "
        f"sandbox”): {name}.",
        "Revived flags come back with every environment turned off.",
        f"A snapshot of them is written first to {box.plan.snapshot}.",
        "This can be undone: Undo archives them again.",
    ]
    assert not box.typed.isVisible() and box.action_button.isEnabled()
    assert box.cancel_button.isDefault()
    assert box.plan.snapshot.parent == journal_folder("test sandbox")
    assert archived(sandbox, "web-shop") == before  # nothing sent while asking
    wire.clear()
    confirm_by_keyboard(qtbot, box)
    wait_done(qtbot, content)
    assert content.confirmation is None
    assert (wire[0]) == ("POST", f"/api/admin/archive/revive/{name}")
    assert model.outcome == (f"1 flag of project web-shop revived. Snapshot: {box.plan.snapshot}")
    assert content.outcome_label.text() == model.outcome
    assert archived(sandbox, "web-shop") == before - {name} and name in live(sandbox, "web-shop")
    assert name not in {f.name for f in model.table.all_rows}  # listed again
    assert changes == [Changes.of(Resource.ARCHIVED_FEATURES, name),
                       Changes.of(Resource.FEATURES, name)]  # fmt: skip
    snapshot = json.loads(box.plan.snapshot.read_text(encoding="utf-8"))
    assert [f["name"] for f in snapshot["features"]] == [name]
    assert snapshot["features"][0]["project"] == "web-shop"

    # Undo, right after: the flag archived again, journaled
    assert content.undo_button.isVisible() and content.undo_button.isEnabled()
    qtbot.mouseClick(content.undo_button, Qt.MouseButton.LeftButton)
    undo = content.confirmation
    assert undo is not None and undo.question.text() == "Archive 1 flag again?"
    assert undo.action_button.text() == "&Archive 1 flag again"
    wire.clear()
    confirm_by_keyboard(qtbot, undo)
    wait_done(qtbot, content)
    assert wire[0] == ("POST", "/api/admin/projects/web-shop/archive")
    assert archived(sandbox, "web-shop") == before
    assert model.outcome.startswith("1 flag of project web-shop archived again.")
    assert not content.undo_button.isVisible()
    entries = read_journal(journal_folder("test sandbox") / JOURNAL_NAME)
    assert [(x.action, x.ids, x.state, x.status) for x in entries] == [
        ("archived_features.revive", [name], State.DONE, 200),
        ("archived_features.archive", [name], State.DONE, 202),
    ]
    assert entries[0].token == "admin" and entries[0].server == sandbox.url


def test_revive_many_is_one_request(
    qtbot: Any,
    connect: Callable[..., Session],
    tool_page: OpenPage,
    sandbox: SandboxProcess,
    data_folder: Path,
    wire: list[tuple[str, str]],
) -> None:
    content = shown(qtbot, tool_page, connect(sandbox), "web-shop")
    model = content.model
    content.table.view.setFocus()
    qtbot.keyClick(content.table.view, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    names = [f.name for f in model.table.rows]
    assert len(names) > 2 and [f.name for f in model.selected_rows] == names
    plan = model.plan(REVIVE)
    assert plan is not None and plan.action.key == "archived_features.revive_bulk"
    wire.clear()
    model.carry_out(plan)
    wait_done(qtbot, content)
    writes = [w for w in wire if w[0] != "GET"]
    assert writes == [("POST", "/api/admin/projects/web-shop/revive")]
    assert archived(sandbox, "web-shop") == set() and set(names) <= live(sandbox, "web-shop")
    assert model.outcome.startswith(f"{len(names)} flags of project web-shop revived.")
    (entry,) = read_journal(journal_folder("test sandbox") / JOURNAL_NAME)
    assert (entry.action, entry.ids, entry.status) == ("archived_features.revive_bulk", names,
                                                       200)  # fmt: skip


def test_delete_for_good_asks_for_the_project_id(
    qtbot: Any,
    connect: Callable[..., Session],
    tool_page: OpenPage,
    sandbox: SandboxProcess,
    data_folder: Path,
) -> None:
    content = shown(qtbot, tool_page, connect(sandbox), "default")
    model = content.model
    names = [f.name for f in model.table.rows[:2]]
    select(content, *names)
    qtbot.mouseClick(content.delete_button, Qt.MouseButton.LeftButton)
    box = content.confirmation
    assert box is not None and box.question.text() == "Delete 2 flags for good?"
    said = box.details.text().split("\n\n")
    assert said[2] == "A flag deleted for good cannot be brought back: this cannot be undone."
    assert said[3] == "To confirm, type the project's id: default"
    assert box.typed.isVisible() and box.focusWidget() is box.typed
    assert not box.action_button.isEnabled()
    qtbot.keyClicks(box.typed, "defaul")
    assert not box.action_button.isEnabled()  # wrong text: still disabled
    qtbot.keyClick(box.typed, Qt.Key.Key_T)
    assert box.action_button.isEnabled()
    assert box.action_button.text() == "&Delete 2 flags for good"
    assert set(names) <= archived(sandbox, "default")
    qtbot.keyClick(box.typed, Qt.Key.Key_Tab)  # to the buttons, by keyboard
    confirm_by_keyboard(qtbot, box)
    wait_done(qtbot, content)
    assert not set(names) & (archived(sandbox, "default") | live(sandbox, "default"))
    assert not content.undo_button.isVisible()  # a deletion cannot be undone
    (entry,) = read_journal(journal_folder("test sandbox") / JOURNAL_NAME)
    assert (entry.action, entry.ids, entry.state) == ("archived_features.delete_bulk", names,
                                                      State.DONE)  # fmt: skip
    snapshot = json.loads(box.plan.snapshot.read_text(encoding="utf-8"))
    assert [f["name"] for f in snapshot["features"]] == names
    assert entry.before["snapshot"] == box.plan.snapshot.name

    # one flag: its name is what is typed
    select(content, model.table.rows[0].name)
    plan = model.plan(DELETE)
    assert plan is not None and plan.confirm_text == model.table.rows[0].name


def test_enter_in_the_typed_field_deletes_once_the_id_matches_else_says_what_to_type(
    qtbot: Any,
    connect: Callable[..., Session],
    tool_page: OpenPage,
    sandbox: SandboxProcess,
    data_folder: Path,
) -> None:
    """Enter after a typed confirmation: with the project's id mistyped the box stays open and
    says, under the field, exactly what to type (nothing is sent); typed right, it deletes."""
    content = shown(qtbot, tool_page, connect(sandbox), "default")
    model = content.model
    names = [f.name for f in model.table.rows[:2]]
    select(content, *names)
    qtbot.mouseClick(content.delete_button, Qt.MouseButton.LeftButton)
    box = content.confirmation
    assert box is not None and box.focusWidget() is box.typed
    qtbot.keyClicks(box.typed, "defaul")
    qtbot.keyClick(box.typed, Qt.Key.Key_Return)
    qtbot.wait(50)  # a closing box would be gone by now
    assert content.confirmation is box and box.isVisible() and box.result() == 0
    assert box.hint.isVisible()
    assert box.hint.text() == "Type “default” to confirm, or press Escape to cancel."
    assert set(names) <= archived(sandbox, "default")  # nothing sent
    assert not data_folder.exists()  # no snapshot, no journal

    qtbot.keyClicks(box.typed, "default")  # the wrong text was selected: typing replaces it
    assert box.hint.isHidden()
    qtbot.keyClick(box.typed, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: content.confirmation is None)
    assert box.confirmed
    wait_done(qtbot, content)
    assert model.outcome.startswith("2 flags of project default deleted for good.")
    assert not set(names) & (archived(sandbox, "default") | live(sandbox, "default"))


def test_what_deleting_every_flag_did_stays_in_sight_over_the_empty_list(
    qtbot: Any,
    connect: Callable[..., Session],
    tool_page: OpenPage,
    sandbox: SandboxProcess,
    data_folder: Path,
) -> None:
    """A project's last archived flags deleted for good: the window says there are none, and
    the outcome line, the only place that names the snapshot, stays in sight above it."""
    content = shown(qtbot, tool_page, connect(sandbox), "web-shop")
    model = content.model
    content.table.view.setFocus()
    qtbot.keyClick(content.table.view, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    count = len(model.selected_rows)
    assert count == model.table.total_count > 1
    qtbot.keyClick(content.table.view, Qt.Key.Key_Delete)
    box = content.confirmation
    assert box is not None
    qtbot.keyClicks(box.typed, "web-shop")
    qtbot.keyClick(box.typed, Qt.Key.Key_Return)
    wait_done(qtbot, content)
    wait_state(qtbot, content, EMPTY)
    assert archived(sandbox, "web-shop") == set()
    assert content.states.state == StatePanel.EMPTY and content.states.empty_page.isVisible()
    assert model.outcome == (f"{count} flags of project web-shop deleted for good. "
                             f"Snapshot: {box.plan.snapshot}")  # fmt: skip
    assert content.outcome_label.isVisible() and content.outcome_label.text() == model.outcome


def test_cancel_changes_nothing(
    qtbot: Any,
    connect: Callable[..., Session],
    tool_page: OpenPage,
    demo_sandbox: SandboxProcess,
    data_folder: Path,
) -> None:
    content = shown(qtbot, tool_page, connect(demo_sandbox), "web-shop")
    model = content.model
    before = archived(demo_sandbox, "web-shop")
    name = model.table.rows[0].name
    select(content, name)
    # Escape at a revive, and at a delete with the name typed
    qtbot.mouseClick(content.revive_button, Qt.MouseButton.LeftButton)
    box = content.confirmation
    assert box is not None
    qtbot.keyClick(box, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: content.confirmation is None)
    assert not box.confirmed
    qtbot.mouseClick(content.delete_button, Qt.MouseButton.LeftButton)
    box = content.confirmation
    assert box is not None
    qtbot.keyClicks(box.typed, name)
    assert box.action_button.isEnabled()
    qtbot.keyClick(box.typed, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: content.confirmation is None)
    assert not box.confirmed and not model.acting
    assert archived(demo_sandbox, "web-shop") == before
    assert not data_folder.exists()  # no snapshot, no journal
    assert content.outcome_label.text() == ""
    # a plan made for another connection is not carried out
    plan = model.plan(REVIVE)
    assert plan is not None
    assert model.carry_out(replace(plan, journal=Journal(Actor("another", plan.server)))) is None
    assert content.outcome_label.text().startswith("Nothing was revived: the connection changed")
    assert archived(demo_sandbox, "web-shop") == before and not data_folder.exists()


def test_an_error_answer_is_shown_as_the_clients_message(
    qtbot: Any,
    connect: Callable[..., Session],
    tool_page: OpenPage,
    sandbox: SandboxProcess,
    data_folder: Path,
) -> None:
    session = connect(sandbox)
    content = shown(qtbot, tool_page, session, "payments")
    model = content.model
    name = model.table.rows[0].name
    select(content, name)
    for table in ("feature_environments", "strategy_context_fields", "strategies"):
        if table == "strategy_context_fields":
            sql(sandbox, "DELETE FROM strategy_context_fields WHERE strategy_id IN "
                "(SELECT id FROM strategies WHERE feature = ?)", name)  # fmt: skip
        else:
            sql(sandbox, f"DELETE FROM {table} WHERE feature = ?", name)
    sql(sandbox, "DELETE FROM features WHERE name = ?", name)  # gone behind the window's back
    plan = model.plan(REVIVE)
    assert plan is not None
    model.carry_out(plan)
    wait_done(qtbot, content)
    message = f"404 NotFoundError (POST /api/admin/archive/revive/{name}): No feature flag found"
    assert (model.outcome_error, model.outcome) == (message, "")
    assert content.outcome_label.text() == message
    assert session.last_error == message
    assert not content.undo_button.isVisible()
    assert name not in {f.name for f in model.table.all_rows}  # loaded again
    (entry,) = read_journal(journal_folder("test sandbox") / JOURNAL_NAME)
    assert (entry.state, entry.status, entry.message) == (State.FAILED, 404, message)


def test_the_actions_work_through_the_search_fallback(
    qtbot: Any, arun: Callable[..., Any], tool_page: OpenPage, tmp_path: Path, data_folder: Path
) -> None:
    server = Unleash82WithProjects()
    session = emulated_session(qtbot, server, tmp_path)
    try:
        assert session.capabilities is not None
        assert session.capabilities.archive_endpoint is False
        content = shown(qtbot, tool_page, session, "default")
        model = content.model
        names = [f.name for f in model.table.rows[:2]]
        select(content, *names)
        assert content.revive_button.isEnabled()
        plan = model.plan(REVIVE)
        assert plan is not None
        model.carry_out(plan)
        wait_done(qtbot, content)
        assert model.outcome.startswith("2 flags of project default revived.")
        assert server.hits["/api/admin/projects/default/revive"] == 1
        assert not set(names) & {f.name for f in model.table.all_rows}  # read again, by search
    finally:
        arun(session.aclose())


def test_the_delete_key_asks_to_delete_for_good(
    qtbot: Any,
    connect: Callable[..., Session],
    tool_page: OpenPage,
    demo_sandbox: SandboxProcess,
    data_folder: Path,
) -> None:
    """Delete in the table starts Delete for good… with its confirmation, as in the inactive
    users' window; in the filter box it deletes text; with nothing selected it asks nothing."""
    content = shown(qtbot, tool_page, connect(demo_sandbox), "web-shop")
    model = content.model
    before = archived(demo_sandbox, "web-shop")
    assert content.delete_button.toolTip() != "" and not content.delete_button.isEnabled()
    content.table.view.setFocus()
    qtbot.keyClick(content.table.view, Qt.Key.Key_Delete)
    assert content.confirmation is None  # nothing selected: nothing to ask
    names = [f.name for f in model.table.rows[:2]]
    select(content, *names)
    content.table.filter_edit.setFocus()
    qtbot.keyClick(content.table.filter_edit, Qt.Key.Key_Delete)
    assert content.confirmation is None  # the filter box's own Delete
    content.table.view.setFocus()
    qtbot.keyClick(content.table.view, Qt.Key.Key_Delete)
    box = content.confirmation
    assert box is not None and box.isVisible()
    assert box.question.text() == "Delete 2 flags for good?"
    assert box.typed.isVisible() and not box.action_button.isEnabled()
    qtbot.keyClick(box, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: content.confirmation is None)
    assert not box.confirmed and archived(demo_sandbox, "web-shop") == before
    assert not data_folder.exists()
    # the button says its key, as the inactive users' does
    assert content.delete_button.toolTip() == "Delete the selected flags for good (Delete)"
