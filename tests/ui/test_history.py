"""The History page (`HistoryPage` over `HistoryModel`) against real sandboxes: the journal of the
connection, newest first, with each change's outcome; a change made in another window appears at
once; the changes in doubt counted in the sidebar and checked against the server on request (the
verdict written to the journal, nothing sent again), including the one a process killed between
its request and the answer left behind; and what cannot be checked says so."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from app.actions.check import can_check
from app.actions.groups import plan_edit, request_of
from app.actions.inactive_users import journal_of
from app.actions.journal import JOURNAL_NAME, Actor, Journal, State, read_journal
from app.actions.runner import carry_out
from app.api import errors
from app.api.client import Answer, WriteRequest
from app.viewmodels.history import HistoryModel, history_count_text
from app.viewmodels.session import Session
from sandbox.process import SandboxProcess
from tests.ui.test_users import GRETA, choose, open_editor, retype, save_with_enter
from ui.history import HistoryPage
from ui.inactive_users import InactiveUsersView
from ui.main_window import HISTORY, MainWindow

LEON_ID, PRIYA_ID = 39, 43  # inactive in the demo


def open_page(qtbot: Any, session: Session) -> HistoryPage:
    model = HistoryModel(session)
    page = HistoryPage(model)
    qtbot.addWidget(page)
    page.resize(1000, 500)
    page.show()
    model.refresh()
    qtbot.waitUntil(lambda: not model.tasks, timeout=10_000)
    return page


def begin_only(session: Session, arun: Any, ids: list[int]) -> None:
    """A deletion whose request went out and whose answer never came (the `sent` line alone):
    what a process killed at that moment leaves."""
    caps = session.capabilities
    assert caps is not None
    journal = journal_of(session.name, caps)
    arun(journal.begin("inactive_users.delete", ids, before={"snapshot": "x.csv"}))


def test_an_empty_history_says_so(
    qtbot: Any, connect: Callable[..., Session], demo_sandbox: SandboxProcess, data_folder: Path
) -> None:
    page = open_page(qtbot, connect(demo_sandbox))
    assert page.summary_label.text() == "No changes made through flagdesk on test sandbox yet."
    assert page.model.table.rowCount() == 0
    assert page.check_button.isHidden() and page.doubt_label.isHidden()


def test_a_change_made_in_another_window_appears_newest_first_with_its_outcome(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, data_folder: Path
) -> None:
    session = connect(sandbox)
    page = open_page(qtbot, session)
    view = InactiveUsersView(session)
    qtbot.addWidget(view)
    view.show()
    qtbot.waitUntil(lambda: view.model.loaded, timeout=20_000)
    for user_id in (LEON_ID, PRIYA_ID):
        view.model.select([r for r in view.model.table.all_rows if r.id == user_id])
        plan = view.model.plan_delete()
        assert plan is not None
        task = view.model.delete(plan)
        assert task is not None
        qtbot.waitUntil(task.done, timeout=20_000)
    # the deletions told the session; the History read the journal again
    qtbot.waitUntil(lambda: page.model.table.rowCount() == 2, timeout=10_000)
    table = page.model.table
    assert [table.text(r, 1) for r in range(2)] == ["Delete inactive users"] * 2
    assert [table.text(r, 2) for r in range(2)] == [f"1 item: {PRIYA_ID}", f"1 item: {LEON_ID}"]
    assert [table.text(r, 3) for r in range(2)] == ["done (200)", "done (200)"]
    assert table.text(0, 4) == "admin"
    assert page.summary_label.text() == "2 changes on test sandbox"
    assert page.table.count_label.text() == "2 changes"
    page.table.filter_edit.setText("failed")
    assert page.table.count_label.text() == "0 of 2 changes"
    page.table.filter_edit.setText("done")
    assert page.table.count_label.text() == "2 changes"


def test_changes_in_doubt_are_checked_against_the_server_and_settled(
    qtbot: Any,
    connect: Callable[..., Session],
    sandbox: SandboxProcess,
    data_folder: Path,
    arun: Any,
) -> None:
    """Three deletions without an answer: one the server made, one it did not, one it made in
    part; the check settles each from one read of the users and says how; nothing is sent."""
    session = connect(sandbox)
    client = arun(session.client())
    begin_only(session, arun, [LEON_ID])
    arun(client.delete_inactive_users([LEON_ID]))  # made, but its answer "never came"
    begin_only(session, arun, [PRIYA_ID])  # never made
    begin_only(session, arun, [PRIYA_ID, LEON_ID])  # Leon gone, Priya still there
    page = open_page(qtbot, session)
    assert page.doubt_label.text().startswith("3 changes in doubt")
    assert page.check_button.isVisible() and page.check_button.isEnabled()
    assert all(can_check(e) for e in page.model.entries)

    page.check_button.click()
    qtbot.waitUntil(lambda: not page.model.in_doubt and not page.model.busy, timeout=20_000)
    entries = {tuple(e.ids): e for e in read_journal(page.model.journal_folder / JOURNAL_NAME)}
    made, not_made, partly = (entries[(LEON_ID,)], entries[(PRIYA_ID,)],
                              entries[(PRIYA_ID, LEON_ID)])  # fmt: skip
    assert made.state is State.DONE and made.message.endswith("every one of the 1 user is deleted")
    assert not_made.state is State.FAILED
    assert not_made.message.endswith(f"no user was deleted: {PRIYA_ID} still there")
    assert partly.state is State.FAILED
    assert partly.message.endswith(f"partly: 1 of 2 users deleted; still there: {PRIYA_ID}")
    assert all(e.message.startswith("checked against the server on ") for e in entries.values())
    assert page.doubt_label.text() == "Checked 3 changes in doubt: 3 settled."
    assert page.check_button.isHidden()
    assert PRIYA_ID in {u.id for u in arun(client.list_users()).users}  # nothing sent again


def test_archive_changes_in_doubt_are_checked_from_the_projects_archive_and_flags(
    qtbot: Any,
    connect: Callable[..., Session],
    sandbox: SandboxProcess,
    data_folder: Path,
    arun: Any,
) -> None:
    """A revive of two flags the server made one of, a deletion it made, an archiving it did
    not make: settled from one read of the project's archive and one of its flags."""
    session = connect(sandbox)
    client = arun(session.client())
    caps = session.capabilities
    assert caps is not None
    journal = journal_of(session.name, caps)
    archived = [f.name for f in arun(client.archived_features("web-shop")).features]
    revived, kept, deleted = archived[:3]
    live = arun(client.project_features("web-shop")).features[0].name
    for action, names in (
        ("archived_features.revive_bulk", [revived, kept]),
        ("archived_features.delete", [deleted]),
        ("archived_features.archive", [live]),
    ):
        arun(journal.begin(action, names, before={"snapshot": "-", "project": "web-shop"}))
    arun(client.revive_feature(revived))
    arun(client.delete_feature(deleted))
    page = open_page(qtbot, session)
    assert len(page.model.checkable) == 3
    page.check_button.click()
    qtbot.waitUntil(lambda: not page.model.in_doubt and not page.model.busy, timeout=20_000)
    outcome = {e.action: e for e in read_journal(page.model.journal_folder / JOURNAL_NAME)}
    revive = outcome["archived_features.revive_bulk"]
    assert revive.state is State.FAILED
    assert revive.message.endswith(f"partly: 1 of 2 flags revived; still archived: {kept}")
    delete = outcome["archived_features.delete"]
    assert delete.state is State.DONE and delete.message.endswith(
        "every one of the 1 flag is deleted"
    )
    archive = outcome["archived_features.archive"]
    assert archive.state is State.FAILED
    assert archive.message.endswith(f"no flag was archived: {live} still live")


def test_a_user_edit_whose_answer_was_lost_is_checked_by_the_body_sent(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, data_folder: Path,
    arun: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """Two saves in the Users window whose answers are lost (the connection breaks: in doubt),
    one after the server took it and one before it got there; the History's check reads each
    user back against the body the journal holds: done, and failed (not applied)."""
    session = connect(sandbox)
    client = arun(session.client())
    send = client.send_write
    reached: list[bool] = []

    async def lost(request: WriteRequest, **kw: Any) -> Answer:
        if reached[-1]:
            await send(request, **kw)
        raise errors.ConnectionLost(client.base_url, "the connection closed before the answer")

    monkeypatch.setattr(client, "send_write", lost)
    editor = open_editor(qtbot, session)
    for who, new_name, sent in ((GRETA, "Greta Took It", True), ("leon.weber", "Leon Not", False)):
        reached.append(sent)
        choose(qtbot, editor, who)
        retype(qtbot, editor.name_edit, new_name)
        save_with_enter(qtbot, editor, editor.name_edit)
        assert "Cannot reach" in editor.form_error_label.text()
    page = open_page(qtbot, session)
    assert page.doubt_label.text().startswith("2 changes in doubt")
    assert all(can_check(e) for e in page.model.entries)
    page.check_button.click()
    qtbot.waitUntil(lambda: not page.model.in_doubt and not page.model.busy, timeout=20_000)
    done, failed = read_journal(page.model.journal_folder / JOURNAL_NAME)
    assert (done.action, done.state) == ("users.edit", State.DONE)
    assert done.message.endswith("is as the change left it")
    assert (failed.action, failed.state) == ("users.edit", State.FAILED)
    assert failed.message.endswith("not applied: user 39 is as it was before the change")
    names = {u.id: u.name for u in arun(client.list_users()).users}
    assert names[done.ids[0]] == "Greta Took It" and names[39] == "Leon Weber"


def test_a_change_flagdesk_cannot_check_stays_in_doubt_and_says_so(
    qtbot: Any, connect: Callable[..., Session], demo_sandbox: SandboxProcess, data_folder: Path,
    arun: Any,
) -> None:  # fmt: skip
    session = connect(demo_sandbox)
    caps = session.capabilities
    assert caps is not None
    journal = Journal(Actor(session.name, caps.base_url, "admin"))
    arun(journal.begin("some.future_action", ["x"]))
    page = open_page(qtbot, session)
    assert page.doubt_label.text() == (
        "1 change in doubt: the request went out and no answer said what came of it. "
        "1 cannot be checked by flagdesk."
    )
    assert page.check_button.isVisible() and not page.check_button.isEnabled()
    assert page.model.table.text(0, 1) == "some.future_action"
    assert page.model.table.text(0, 3) == "in doubt"


def test_an_upload_in_doubt_is_listed_and_its_resume_named_not_checked_here(
    qtbot: Any, connect: Callable[..., Session], demo_sandbox: SandboxProcess, data_folder: Path,
    arun: Any,
) -> None:  # fmt: skip
    """A metrics upload's entry left `sent` (the process died mid-upload): the History lists
    it, counts it in doubt, and says its resume (the ledger) settles it; Check does not try."""
    session = connect(demo_sandbox)
    journal = Journal(Actor(session.name, session.url, "client"))
    before = {"ledger": "/data/uploads/20261121-101500-3fa2c1", "bodies": 12, "metrics": 5000,
              "pending": 12, "resume": False}  # fmt: skip
    arun(journal.begin("metrics.upload", [], before=before,
                       request={"method": "POST", "path": "/api/client/metrics/bulk"}))  # fmt: skip
    page = open_page(qtbot, session)
    table = page.model.table
    assert [table.text(0, c) for c in range(1, 5)] == [
        "Upload metrics",
        "12 bodies (5,000 metrics)",
        "in doubt",
        "client",
    ]
    assert page.doubt_label.text() == (
        "1 change in doubt: the request went out and no answer said what came of it. "
        "1 upload of metrics: resume it on the Metrics page, which checks the server's totals."
    )
    assert page.check_button.isVisible() and not page.check_button.isEnabled()
    assert page.model.checkable == [] and page.model.check_in_doubt() is None


def test_after_a_kill_the_next_start_counts_the_change_in_doubt_and_checks_it(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, data_folder: Path,
    arun: Any,
) -> None:  # fmt: skip
    """`flagdesk users inactive delete` killed (SIGKILL) after its journal's `sent` line, before
    its request: the window opened next shows "History (1 in doubt)"; the check finds the user
    still there and records that nothing was deleted."""
    env = {**os.environ, "FLAGDESK_TOKEN": sandbox.admin_token,
           "FLAGDESK_DATA_DIR": str(data_folder)}  # fmt: skip
    script = (
        "import os, signal, sys\n"
        "import app.actions.journal as j\n"
        "begin = j.Journal.begin\n"
        "async def killed(self, *a, **k):\n"
        "    await begin(self, *a, **k)\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
        "j.Journal.begin = killed\n"
        "from app.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    child = subprocess.run(
        [sys.executable, "-c", script, "users", "inactive", "delete", "--ids", str(LEON_ID),
         "--yes", "--url", sandbox.url],
        env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=60, check=False,
    )  # fmt: skip
    assert child.returncode == -9, child.stderr
    cli_journal = next((data_folder / "journal").iterdir())
    (entry,) = read_journal(cli_journal / JOURNAL_NAME)
    assert entry.in_doubt

    # the window on the same server by the same name (`--url` names a connection by its URL)
    window = MainWindow(connect(sandbox, label=sandbox.url))
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.history_model.in_doubt != [], timeout=10_000)
    assert window.history_item.text(0) == "History (1 in doubt)"
    window.show_page(HISTORY)
    assert window.pages.currentWidget() is window.history
    window.history.check_button.click()
    qtbot.waitUntil(lambda: not window.history_model.in_doubt, timeout=20_000)
    assert window.history_item.text(0) == "History"
    (settled,) = read_journal(cli_journal / JOURNAL_NAME)
    assert settled.state is State.FAILED and settled.message.endswith(
        f"no user was deleted: {LEON_ID} still there"
    )


def test_texts() -> None:
    assert history_count_text(3, 3) == "3 changes" and history_count_text(1, 3) == "1 of 3 changes"


def test_undo_takes_back_the_selected_change_after_asking(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, data_folder: Path,
    arun: Any,
) -> None:  # fmt: skip
    """A group's edit, made elsewhere, undone from the History: Undo… reads the server, asks
    with the plan's words, and puts the group back, journaled as an undo; a change without an
    undo keeps Undo… disabled, saying why."""
    session = connect(sandbox)
    client = arun(session.client())
    group = arun(client.get_group(1))
    caps = session.capabilities
    assert caps is not None
    plan = plan_edit(group, request_of(group).model_copy(update={"name": "Renamed"}),
                     journal_of(session.name, caps))  # fmt: skip
    arun(carry_out(client, plan))
    begin_only(session, arun, [LEON_ID])  # in doubt: cannot be undone
    page = open_page(qtbot, session)
    assert not page.undo_button.isEnabled()
    assert page.undo_button.toolTip() == "Select a change to undo."
    view = page.table.view
    rows = {page.model.table.row_at(r).action: r for r in range(page.model.table.rowCount())}
    view.selectRow(rows["inactive_users.delete"])
    assert not page.undo_button.isEnabled()
    assert "in doubt: check it against the server first" in page.undo_button.toolTip()
    view.selectRow(rows["groups.edit"])
    assert page.undo_button.isEnabled()
    qtbot.mouseClick(page.undo_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.confirmations.box is not None, timeout=20_000)
    box = page.confirmations.box
    assert box.text() == "Put back group “Renamed”?"
    assert arun(client.get_group(1)).name == "Renamed"  # nothing sent before the answer
    box.action_button.click()
    qtbot.waitUntil(lambda: page.outcome_label.isVisible(), timeout=20_000)
    assert page.outcome_label.text().startswith("Undone: “Edit group” of ")
    assert arun(client.get_group(1)).name == group.name
    entries = read_journal(journal_of(session.name, caps).path)
    assert [e.action for e in entries] == ["groups.edit", "inactive_users.delete", "groups.edit"]
    assert entries[-1].before["undo"] is True and entries[-1].state is State.DONE


# the main window raises itself to show the tool asked for, which offscreen cannot
@pytest.mark.qt_log_ignore(r"^This plugin does not support (raise|propagateSizeHints)\(\)")
def test_the_selected_change_shows_what_the_server_recorded_and_opens_it_in_the_event_log(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, data_folder: Path,
    arun: Any,
) -> None:  # fmt: skip
    """A group's edit, selected in the History: below the table, the event the server recorded
    of it (read once the selection stays); "Open in the event log" shows the Event log with
    the filter that finds it, and it there, the group as the edit left it."""
    session = connect(sandbox)
    client = arun(session.client())
    group = arun(client.get_group(1))
    caps = session.capabilities
    assert caps is not None
    plan = plan_edit(group, request_of(group).model_copy(update={"name": "Renamed"}),
                     journal_of(session.name, caps))  # fmt: skip
    arun(carry_out(client, plan))
    window = MainWindow(session)
    qtbot.addWidget(window)
    window.show()
    window.show_page(HISTORY)
    page = window.history
    qtbot.waitUntil(lambda: page.model.table.rowCount() == 1, timeout=10_000)
    assert page.record_label.isHidden() and page.record_button.isHidden()  # nothing selected

    page.table.view.selectRow(0)
    assert page.record_label.text() == "Reading what the server recorded of this change…"
    qtbot.waitUntil(lambda: "recorded it" in page.record_label.text(), timeout=10_000)
    assert page.record_label.text().startswith("The server recorded it: event ")
    assert "(group-updated) at " in page.record_label.text()
    assert page.record_button.isVisible()

    page.record_button.click()
    events = window.tool_pages["events"]
    assert window.pages.currentWidget() is events
    view: Any = events.tool_content
    qtbot.waitUntil(lambda: view.model.loaded, timeout=10_000)
    assert view.filter_edits["types"].text() == "group-updated"
    assert view.filter_edits["since"].text() and view.filter_edits["until"].text()
    (event,) = view.model.table.all_rows
    assert event.type == "group-updated" and event.data["name"] == "Renamed"

    page.table.view.clearSelection()
    assert page.record_label.isHidden() and page.record_button.isHidden()
