"""The login history window (`LoginHistoryView` over `LoginHistoryModel`; issue 38, Unleash
Enterprise's) against sandboxes over HTTP: the demo's two weeks newest first, the filter box
finding a user and an address, "Failed only" (the count saying of how many), the CSV and JSON
exports of what is shown, F5 reading again, the empty state of a new server, an Editor's token
and a played open-source release told why (Enterprise's), nothing read."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from app.api.capabilities import NEEDS_ENTERPRISE_LOGINS
from app.viewmodels.session import Session
from app.viewmodels.tools import LoadPhase
from sandbox import db
from sandbox.process import SandboxProcess
from sandbox.store import Store
from ui.logins import LoginHistoryView
from ui.states import StatePanel
from ui.tool_page import ToolPage


def open_view(qtbot: Any, session: Session) -> LoginHistoryView:
    view = LoginHistoryView(session)
    qtbot.addWidget(view)
    view.resize(1100, 600)
    view.show()
    qtbot.waitUntil(
        lambda: not view.model.busy and (view.model.loaded or bool(view.model.error)),
        timeout=20_000,
    )
    return view


def served(sb: SandboxProcess) -> list[dict[str, Any]]:
    with sb.admin() as http:
        events: list[dict[str, Any]] = http.get("/api/admin/logins").json()["events"]
    return events


def test_newest_first_filtered_and_exported(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, tmp_path: Path
) -> None:
    events = served(sandbox)
    view = open_view(qtbot, connect(sandbox))
    table = view.model.table
    assert view.states.state == StatePanel.CONTENT and view.model.phase is LoadPhase.READY
    assert [c.title for c in table.columns] == ["Time", "User", "Outcome", "Address", "Sign-in",
                                                "Why it failed", "Id"]  # fmt: skip
    # newest first, as the server sent them
    assert [r.event.id for r in table.rows] == [e["id"] for e in events]
    assert view.table.count_label.text() == f"{len(events)} login events"
    assert len(table.text(0, 0)) == len("2026-12-07 17:33:44")  # a time to the second

    # the filter finds an address, then a user
    view.table.filter_edit.setText("192.0.2.66")
    guessed = [e for e in events if e["ip"] == "192.0.2.66"]
    qtbot.waitUntil(lambda: table.shown_count == len(guessed))
    assert {r.event.username for r in table.rows} >= {"root", "admin"}
    view.table.filter_edit.setText("bjorn")
    qtbot.waitUntil(lambda: 0 < table.shown_count < len(events))
    assert all("bjorn" in (r.event.username or "") for r in table.rows)
    view.table.filter_edit.clear()

    # failed only, and the count says of how many
    failed = [e for e in events if not e["successful"]]
    view.failed_check.click()
    assert view.model.failed_only
    assert table.shown_count == len(failed) and all(r.failed for r in table.rows)
    assert view.table.count_label.text() == (
        f"{len(failed)} failed logins ({len(events)} login events in all)"
    )
    view.table.filter_edit.setText("192.0.2.66")
    qtbot.waitUntil(lambda: table.shown_count == len(guessed))
    assert view.table.count_label.text().startswith(f"{len(guessed)} of {len(failed)} failed")

    # the exports write what is shown
    target = tmp_path / "logins.csv"
    task = view.table.export(str(target))
    qtbot.waitUntil(task.done)
    rows = list(csv.DictReader(target.open(encoding="utf-8")))
    assert len(rows) == len(guessed) and {r["Address"] for r in rows} == {"192.0.2.66"}
    assert {r["Outcome"] for r in rows} == {"Failed"}
    written = tmp_path / "logins.json"
    assert view.json_button.isEnabled()
    done = view.export_json(str(written))
    qtbot.waitUntil(done.done)
    assert done.result() == len(guessed)
    exported = json.loads(written.read_text(encoding="utf-8"))
    assert [e["id"] for e in exported] == [e["id"] for e in events if e["ip"] == "192.0.2.66"]
    assert exported[0].keys() == events[0].keys()
    assert written.stat().st_mode & 0o777 == 0o600
    assert view.table.count_label.text().endswith(f" · {len(guessed)} exported")

    # all again; an event made meanwhile shows after F5, first
    view.table.filter_edit.clear()
    view.failed_check.click()
    assert table.shown_count == len(events)
    conn = db.connect(sandbox.db)
    try:
        Store(conn).record_login("new.person@example.com", successful=False, ip="198.51.100.9",
                                 failure_reason="Wrong password, try again.")  # fmt: skip
    finally:
        conn.close()
    view.refresh()
    qtbot.waitUntil(lambda: not view.model.busy and table.total_count == len(events) + 1)
    assert table.rows[0].event.username == "new.person@example.com"
    assert table.rows[0].outcome == "Failed"
    view.close_content()


def test_the_sort_is_the_time_newest_first(
    qtbot: Any, connect: Callable[..., Session], demo_sandbox: SandboxProcess
) -> None:
    view = open_view(qtbot, connect(demo_sandbox))
    header = view.table.view.horizontalHeader()
    assert header.sortIndicatorSection() == 0
    assert header.sortIndicatorOrder() == Qt.SortOrder.DescendingOrder
    times = [r.event.created_at for r in view.model.table.rows]
    assert times == sorted(times, reverse=True)  # type: ignore[type-var]
    view.close_content()


def test_a_new_server_has_no_logins(
    qtbot: Any, connect: Callable[..., Session], tmp_path: Path
) -> None:
    with SandboxProcess(tmp_path / "empty.sqlite3", "--empty") as empty:
        view = open_view(qtbot, connect(empty))
        assert view.model.phase is LoadPhase.EMPTY
        assert view.states.state == StatePanel.EMPTY
        assert view.states.empty_title.text() == "No logins in the last 14 days"
        assert "keeps 14 days" in view.states.empty_label.text()
        view.close_content()


def test_open_source_says_login_history_is_enterprises(
    qtbot: Any, connect: Callable[..., Session], tmp_path: Path,
    tool_page: Callable[..., ToolPage],
) -> None:  # fmt: skip
    with SandboxProcess(tmp_path / "oss.sqlite3", "--demo", "--as-version", "8.2") as oss:
        page = tool_page("logins", connect(oss), (1100, 700))
        view = page.tool_content
        assert isinstance(view, LoginHistoryView)
        assert view.model.phase is LoadPhase.UNAVAILABLE
        assert page.banner.isVisible() and page.reason.text() == NEEDS_ENTERPRISE_LOGINS
        assert view.states.empty_label.text() == NEEDS_ENTERPRISE_LOGINS
        assert "Unleash Enterprise" in NEEDS_ENTERPRISE_LOGINS
        view.refresh()
        assert not view.model.busy and not view.model.loaded and view.model.table.total_count == 0


def test_an_editor_is_told_it_needs_an_admin(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess,
    personal_token: Callable[[SandboxProcess, str], str], tool_page: Callable[..., ToolPage],
) -> None:  # fmt: skip
    session = connect(sandbox, personal_token(sandbox, "dmitri.volkov"))
    page = tool_page("logins", session)
    view = page.tool_content
    assert isinstance(view, LoginHistoryView)
    assert view.model.phase is LoadPhase.UNAVAILABLE
    assert "Admin" in page.reason.text()
