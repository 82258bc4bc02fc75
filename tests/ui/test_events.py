"""The event log's window (`EventLogView` over `EventLogModel`, issue 38) against sandboxes over
HTTP: the list newest first, a page at a time as it is scrolled, Load all (its progress and
Stop); the server's filters giving exactly what `flagdesk events` gives; an event opened as its
change (`preData` and `data` field by field, the project opened in its window, names copied);
the CSV and JSON export (0600, the command's own rows; from the button too); the quick filter a
keystroke at a time; the empty, error (the server's words, Retry), unavailable (the registry's
reason) and stopped states; no secret in an opened event; a page's repeated texts one object."""

from __future__ import annotations

import csv
import io
import json
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QToolButton

import app.viewmodels.events as events_vm
from app.api.events import EventFilter
from app.snapshot.compare import Change
from app.viewmodels.events import EVENT_COLUMNS, event_change, filters_from, plain_summary
from app.viewmodels.session import Session
from app.viewmodels.tools import LoadPhase
from sandbox import db
from sandbox.process import SandboxProcess
from tests.app.test_cli_users import run_flagdesk
from tests.conftest import RESTORE, REVOKE
from ui.events import EventLogView
from ui.states import StatePanel


def open_view(qtbot: Any, session: Session, timeout: int = 20_000) -> EventLogView:
    view = EventLogView(session)
    qtbot.addWidget(view)
    view.resize(1200, 800)
    view.show()
    wait_read(qtbot, view, timeout)
    return view


def wait_read(qtbot: Any, view: EventLogView, timeout: int = 20_000) -> None:
    m = view.model
    qtbot.waitUntil(lambda: (m.loaded or bool(m.error)) and not m.busy and not m.fetching
                    and not m.reading_ahead, timeout=timeout)  # fmt: skip


@pytest.fixture(scope="module")
def demo_sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxProcess]:
    """A demo sandbox of this module's own (not the run's shared one): the counts held here
    (148 events, 15 flags archived) are the demo data's, whatever the modules before changed on
    the shared one (a whole run had made 240 events of it)."""
    with SandboxProcess(tmp_path_factory.mktemp("events-demo") / "demo.sqlite3", "--demo") as sb:
        yield sb


def db_ids(sb: SandboxProcess, where: str = "1", *args: object) -> list[int]:
    conn = db.connect(sb.db)
    try:
        rows = conn.execute(f"SELECT id FROM events WHERE {where} ORDER BY id DESC", args)
        return [r[0] for r in rows]
    finally:
        conn.close()


def shown_ids(view: EventLogView) -> list[int]:
    return [e.id for e in view.model.table.rows]


def cli_json(sb: SandboxProcess, tmp_path: Path, *args: str) -> dict[str, Any]:
    done = run_flagdesk(("events",), sb, (*args, "--json"), tmp_path / "data", None)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_the_list_newest_first_read_page_by_page_as_it_is_scrolled(
    qtbot: Any, connect: Callable[..., Session], demo_sandbox: SandboxProcess,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.setattr(events_vm, "PAGE_SIZE", 40)
    view = open_view(qtbot, connect(demo_sandbox))
    m = view.model
    every = db_ids(demo_sandbox)
    assert view.states.state == StatePanel.CONTENT
    titles = [c.title for c in EVENT_COLUMNS]
    assert titles[:7] == ["Time", "Type", "Who", "Project", "Flag", "Environment", "Summary"]
    # the first page (the view, not filled, may have asked for the next one already)
    qtbot.waitUntil(lambda: not m.fetching)
    loaded = m.table.total_count
    assert loaded % 40 == 0 and 40 <= loaded < len(every)
    assert set(shown_ids(view)) == set(every[:loaded])
    times = [e.createdAt for e in m.table.rows]
    assert times == sorted(times, reverse=True)  # newest first
    assert m.more and view.load_all_button.isEnabled()
    assert "loaded of 148; scroll for more" in view.table.count_label.text()
    first = m.table.rows[0]
    assert view.table.view.model().index(0, 1).data() == (first.label or first.type)

    # scrolled to its end: the next page, the rows before kept with the current row
    view.table.view.setCurrentIndex(m.table.index(0, 0))
    bar = view.table.view.verticalScrollBar()
    bar.setValue(bar.maximum())
    qtbot.waitUntil(lambda: m.table.total_count > loaded and not m.fetching)
    assert view.table.view.currentIndex().row() == 0
    assert m.opened is not None and m.opened.event.id == first.id

    # Load all: every event, the progress shown meanwhile, then Load all disabled
    view.load_all_button.click()
    qtbot.waitUntil(lambda: not m.loading_all and not m.more)
    assert shown_ids(view) == sorted(every, reverse=True) or set(shown_ids(view)) == set(every)
    assert len(shown_ids(view)) == len(every) == 148
    assert not view.load_all_button.isEnabled()
    assert view.table.count_label.text() == "148 events"
    assert not view.progress_row.isVisible()


def test_load_all_stops_where_it_is_told(
    qtbot: Any, connect: Callable[..., Session], demo_sandbox: SandboxProcess,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.setattr(events_vm, "PAGE_SIZE", 5)
    monkeypatch.setattr(events_vm, "_HELD_FOR", 0)  # each page to the table as it comes
    view = open_view(qtbot, connect(demo_sandbox))
    m = view.model
    qtbot.waitUntil(lambda: not m.fetching)
    seen: list[tuple[int, int]] = []
    m.progress_changed.connect(lambda loaded, total: seen.append((loaded, total)))
    m.load_all()
    qtbot.waitUntil(lambda: len(seen) >= 2)
    assert view.progress_row.isVisible() and view.stop_button.isEnabled()
    assert view.progress_bar.maximum() == 148
    view.stop_button.click()
    qtbot.waitUntil(lambda: not m.loading_all)
    assert m.stopped and m.more
    assert m.table.total_count < 148
    assert not view.progress_row.isVisible()
    assert all(total == 148 for _, total in seen)


def test_the_server_filters_give_what_the_command_gives(
    qtbot: Any, connect: Callable[..., Session], demo_sandbox: SandboxProcess, tmp_path: Path
) -> None:
    view = open_view(qtbot, connect(demo_sandbox))
    m = view.model
    view.set_filter_texts(projects="web-shop", types="feature-created, feature-archived",
                          since="2020-01-01")  # fmt: skip
    wait_read(qtbot, view)
    assert m.filters == EventFilter(types=("feature-created", "feature-archived"),
                                    projects=("web-shop",), since=m.filters.since)  # fmt: skip
    listed = cli_json(
        demo_sandbox,
        tmp_path,
        "--project",
        "web-shop",
        "--type",
        "feature-created",
        "--type",
        "feature-archived",
        "--since",
        "2020-01-01",
    )
    assert shown_ids(view) == [e["id"] for e in listed["events"]]
    assert shown_ids(view) and len(shown_ids(view)) == listed["count"]
    assert set(shown_ids(view)) == set(
        db_ids(
            demo_sandbox, "project = 'web-shop' AND type IN ('feature-created', 'feature-archived')"
        )
    )

    # who, by name: the command's answer again
    view.set_filter_texts(users="tariq.rahman")
    wait_read(qtbot, view)
    listed = cli_json(demo_sandbox, tmp_path, "--user", "tariq.rahman")
    assert shown_ids(view) == [e["id"] for e in listed["events"]] and listed["count"] == 13

    # nothing matches: the empty state says so, and the filters stay to be changed
    view.set_filter_texts(flags="no-such-flag")
    wait_read(qtbot, view)
    assert m.phase is LoadPhase.EMPTY
    assert view.states.state == StatePanel.EMPTY
    assert view.states.empty_title.text() == "No events match these filters"
    assert view.filter_edits["flags"].isEnabled()

    # a wrong time is said beside the fields, nothing read
    view.set_filter_texts(since="yesterday")
    assert view.filter_error.isVisibleTo(view)
    assert view.filter_error.text().startswith("Since: 'yesterday' is not a time")
    assert m.filters.flags == ("no-such-flag",)
    view.clear_button.click()
    wait_read(qtbot, view)
    assert not view.filter_error.isVisibleTo(view)
    assert m.filters.empty and m.table.total_count == 148


def test_filters_from_the_fields() -> None:
    f = filters_from({"types": "a, b,", "users": "42", "since": "2026-01-31",
                      "until": "2026-01-31"})  # fmt: skip
    assert f.types == ("a", "b") and f.users == ("42",)
    assert f.until is not None and f.since is not None and (f.until - f.since).days == 1
    with pytest.raises(ValueError, match="Since must be before Until"):
        filters_from({"since": "2026-02-01", "until": "2026-01-01"})
    with pytest.raises(ValueError, match=r"^Until: "):
        filters_from({"until": "soon"})


def test_an_event_opened_shows_its_fields_before_and_after(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess
) -> None:
    conn = db.connect(sandbox.db)
    try:
        flag, project, description = conn.execute(
            "SELECT name, project, description FROM features WHERE archived_at IS NULL"
            " ORDER BY name LIMIT 1").fetchone()  # fmt: skip
    finally:
        conn.close()
    with sandbox.admin() as http:
        made = http.post(
            f"/api/admin/projects/{project}/features",
            json={"name": "made-for-the-event-log", "description": "new"},
        )
        assert made.status_code in (200, 201), made.text
        answer = http.patch(f"/api/admin/projects/{project}/features/{flag}",
                            json=[{"op": "replace", "path": "/description",
                                   "value": "Checked by the event log"}])  # fmt: skip
        assert answer.status_code == 200, answer.text
    view = open_view(qtbot, connect(sandbox))
    m = view.model
    event = m.table.rows[0]
    assert event.type == "feature-metadata-updated" and event.featureName == flag
    view.table.view.setCurrentIndex(m.table.index(0, 0))
    opened = m.opened
    assert opened is not None and opened.event is event
    assert f"event {event.id}" in view.heading.text()
    fields = {d.where: d for d in opened.differences}
    assert set(fields) == {"description"}
    assert fields["description"].change is Change.CHANGED
    assert (fields["description"].old, fields["description"].new) == (
        description,
        "Checked by the event log",
    )
    changes = view.changes_view.model()
    assert changes.rowCount() == 1
    assert [changes.index(0, c).data() for c in range(4)] == [
        "description",
        "changed",
        description or "—",
        "Checked by the event log",
    ]
    # the whole event until a field is chosen, then that field
    assert json.loads(view.value_edits["before"].toPlainText()) == event.preData
    assert json.loads(view.value_edits["after"].toPlainText()) == event.data
    view.changes_view.setCurrentIndex(changes.index(0, 0))
    assert view.value_heading.text() == "description: changed"
    assert json.loads(view.value_edits["after"].toPlainText()) == "Checked by the event log"

    # the project opens in its window; the flag's name is copied
    opened_items: list[tuple[str, object]] = []
    view.open_requested.connect(lambda tool, item: opened_items.append((tool, item)))
    open_project = view.findChild(QToolButton, "eventsOpenProject")
    assert open_project is not None
    open_project.click()
    assert opened_items == [("project_dashboard", project)]
    copy_flag = view.findChild(QToolButton, "eventsCopyFlag")
    assert copy_flag is not None
    copy_flag.click()
    assert QGuiApplication.clipboard().text() == flag
    # the flag has no window: "Its events" shows them here (through the main window, which
    # hands the item back to this view)
    flag_events = view.findChild(QToolButton, "eventsOpenFlag")
    assert flag_events is not None and flag_events.text() == "Its events"
    flag_events.click()
    assert opened_items[-1] == ("events", EventFilter(flags=(flag,)))
    view.open_item(opened_items[-1][1])
    assert view.filter_edits["flags"].text() == flag
    qtbot.waitUntil(lambda: m.loaded and not m.busy, timeout=10_000)
    assert m.table.rowCount() > 0 and {e.featureName for e in m.table.rows} == {flag}
    view.clear_filters()
    qtbot.waitUntil(lambda: m.loaded and not m.busy, timeout=10_000)

    # an event with no preData: every field added
    created = next(e for e in m.table.rows if e.type == "feature-created")
    assert created.featureName == "made-for-the-event-log"
    change = event_change(created)
    assert change.before is None and change.said.startswith("Made:")
    assert [d.change for d in change.differences] == [Change.ONLY_IN_SOURCE]
    assert change.differences[0].new["name"] == "made-for-the-event-log"


def test_export_writes_what_the_filters_show_as_the_command_does(
    qtbot: Any, connect: Callable[..., Session], demo_sandbox: SandboxProcess, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.setattr(events_vm, "PAGE_SIZE", 30)
    view = open_view(qtbot, connect(demo_sandbox))
    m = view.model
    view.set_filter_texts(projects="web-shop")
    wait_read(qtbot, view)
    assert m.more  # 72 events, 30 read: the export reads the rest first
    done: list[tuple[str, bool]] = []
    m.exported.connect(lambda text, failed: done.append((text, failed)))
    path = tmp_path / "events.csv"
    m.export(path, "csv")
    qtbot.waitUntil(lambda: bool(done), timeout=20_000)
    assert done[-1] == (f"Exported 72 events to {path}.", False)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert not path.with_name("events.csv.part").exists()
    cli_csv = tmp_path / "cli.csv"
    ran = run_flagdesk(
        ("events",),
        demo_sandbox,
        ("--project", "web-shop", "--csv", str(cli_csv)),
        tmp_path / "data",
        None,
    )
    assert ran.returncode == 0, ran.stderr
    assert path.read_text() == cli_csv.read_text()
    assert view.table.count_label.text() == f"Exported 72 events to {path}."

    # the quick filter narrows the export too; JSON as `--json` gives the events
    view.table.filter_edit.setText("archived")
    path = tmp_path / "events.json"
    m.export(path, "json")
    qtbot.waitUntil(lambda: len(done) == 2, timeout=20_000)
    written = json.loads(path.read_text())
    listed = cli_json(demo_sandbox, tmp_path, "--project", "web-shop", "--type",
                      "feature-archived")  # fmt: skip
    assert written["events"] == listed["events"] and written["count"] == listed["count"] > 0
    assert written["filters"] == {"projects": ["web-shop"]}
    assert written["quickFilter"] == "archived"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    rows = list(csv.reader(io.StringIO(cli_csv.read_text())))
    assert len(rows) == 73


def test_the_quick_filter_answers_each_keystroke(
    qtbot: Any, connect: Callable[..., Session], demo_sandbox: SandboxProcess
) -> None:
    view = open_view(qtbot, connect(demo_sandbox))
    m = view.model
    view.table.filter_edit.setFocus()
    took: list[float] = []
    for key in "archived":
        start = time.perf_counter()
        qtbot.keyClicks(view.table.filter_edit, key)
        took.append(time.perf_counter() - start)
    archived = [e for e in m.table.all_rows if e.type == "feature-archived"]
    assert {e.id for e in m.table.rows} == {e.id for e in archived} and len(archived) == 15
    assert view.table.count_label.text() == "15 of 148 events"
    assert max(took) < 0.05, took
    # no page is asked for while a quick filter is typed (it filters what is loaded)
    assert not m.table.canFetchMore(m.table.index(-1, -1))


def test_the_error_state_says_the_servers_words_and_retry_reads_again(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess
) -> None:
    view = open_view(qtbot, connect(sandbox))
    conn = db.connect(sandbox.db)
    try:
        conn.execute(REVOKE, (sandbox.admin_token,))
    finally:
        conn.close()
    view.refresh()
    qtbot.waitUntil(lambda: view.states.state == StatePanel.ERROR, timeout=20_000)
    assert view.states.error_title.text() == "Could not load the event log"
    assert view.states.error_label.text().startswith("401 AuthenticationRequired")
    conn = db.connect(sandbox.db)
    try:
        conn.execute(RESTORE, (sandbox.admin_token,))
    finally:
        conn.close()
    qtbot.mouseClick(view.states.retry_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: view.states.state == StatePanel.CONTENT and not view.model.busy)
    assert view.model.table.total_count == len(db_ids(sandbox))


def test_summaries_are_shown_as_plain_text() -> None:
    from datetime import UTC, datetime

    from app.api.models import Event

    said = "**admin** created [`flag`](/projects/p/features/flag) in *dev*"
    event = Event(id=1, type="x", createdAt=datetime.now(UTC), summary=said)
    assert plain_summary(event) == "admin created flag in dev"


def test_a_connection_without_the_reads_says_the_registrys_reason(
    qtbot: Any, connect: Callable[..., Session], demo_sandbox: SandboxProcess
) -> None:
    """A token that cannot read the event log (a client token): the registry's reason in the
    window, the filters disabled, nothing read."""
    session = connect(demo_sandbox, demo_sandbox.client_token)
    view = EventLogView(session)
    qtbot.addWidget(view)
    view.show()
    caps = session.capabilities
    assert caps is not None
    reason = caps.operation("events").reason
    assert reason and view.model.phase is LoadPhase.UNAVAILABLE
    assert view.states.state == StatePanel.EMPTY
    assert view.states.empty_label.text() == reason
    assert not view.apply_button.isEnabled() and not view.filter_edits["types"].isEnabled()
    view.apply_filters()
    assert not view.model.tasks and view.model.table.total_count == 0


def test_equal_short_texts_of_a_page_are_one_object() -> None:
    from datetime import UTC, datetime

    from app.api.models import Event
    from app.viewmodels.events import share_values

    def made(k: int) -> Event:
        return Event(id=k, type="t", createdAt=datetime.now(UTC), featureName="".join(["f", "x"]),
                     tags=[], data={"name": "".join(["flexible", "Rollout"]),
                                    "parameters": {"rollout": str(50)}, "list": ["".join("ab")],
                                    "description": "".join(["d"] * 60)})  # fmt: skip

    table: dict[str, str] = {}
    first, second = made(1), made(2)
    share_values([first], table)
    share_values([second], table)
    assert second.featureName is first.featureName
    assert second.data["name"] is first.data["name"]
    assert second.data["parameters"]["rollout"] is first.data["parameters"]["rollout"]
    assert second.data["list"][0] is first.data["list"][0]
    assert second.data["description"] is not first.data["description"]  # long: kept apart
    assert second.tags == [] and second.tags is first.tags
    assert second.data == made(3).data


def test_stop_before_the_first_page_says_so_and_f5_reads_again(
    qtbot: Any, connect: Callable[..., Session], demo_sandbox: SandboxProcess
) -> None:
    session = connect(demo_sandbox)
    view = EventLogView(session)
    qtbot.addWidget(view)
    view.show()
    m = view.model
    assert m.busy and not m.loaded  # the first page asked for, not come yet
    assert view.progress_row.isVisibleTo(view) and view.stop_button.isEnabled()
    view.stop_button.click()
    qtbot.waitUntil(lambda: not m.busy)
    assert m.phase is LoadPhase.EMPTY and m.stopped
    assert view.states.empty_title.text() == "Reading stopped"
    assert not view.progress_row.isVisibleTo(view)
    view.refresh()
    wait_read(qtbot, view)
    assert m.table.total_count == 148 and not m.stopped


def test_export_from_the_button_writes_the_format_the_name_says(
    qtbot: Any, connect: Callable[..., Session], demo_sandbox: SandboxProcess, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    import ui.events

    view = open_view(qtbot, connect(demo_sandbox))
    path = tmp_path / "chosen.json"
    monkeypatch.setattr(ui.events, "ask_export_path", lambda *_: str(path))
    assert view.table.export_button.text() == "Export…"
    view.table.export_button.click()
    assert not view.table.export_button.isEnabled()  # while it writes
    qtbot.waitUntil(lambda: view.table.count_label.text().startswith("Exported"), timeout=20_000)
    assert view.table.count_label.text() == f"Exported 148 events to {path}."
    assert json.loads(path.read_text())["count"] == 148
    assert view.table.export_button.isEnabled()


def test_an_opened_event_shows_no_secret() -> None:
    from datetime import UTC, datetime

    from app.api.models import Event

    before = {"tokenName": "ci", "secret": "*:*.abcdef"}
    after = {**before, "expiresAt": "2027-01-01"}
    event = Event(id=7, type="api-token-updated", createdAt=datetime.now(UTC), preData=before,
                  data=after)  # fmt: skip
    change = event_change(event)
    assert change.before["secret"] == change.after["secret"] == "***"
    assert [(d.where, d.change) for d in change.differences] == [
        ("expiresAt", Change.ONLY_IN_SOURCE)
    ]
    assert "abcdef" not in json.dumps([change.before, change.after])
