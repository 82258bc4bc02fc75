"""Connections never leak into each other (issue 14, section 4), on two real sandboxes: a project
typed against one server is checked against the next one's projects before anything is asked
about it; a window's error leaves the status bar with its window or its connection; what an
action did is shown on its own connection only, and again when it comes back (issue 34,
section 2); a change made in one window reloads every other window that shows it."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from app.actions.journal import journal_folder
from app.changes import Changes, Resource
from app.connection import ConnectionSpec
from app.profiles import ProfileStore
from app.viewmodels.archive import CONTENT, REVIVE
from app.viewmodels.session import READY, Session
from sandbox import db
from sandbox.process import SandboxProcess
from ui.archive import ArchiveBrowser
from ui.context_usage import ContextUsageViewer
from ui.dashboard import ProjectDashboard
from ui.groups import GroupEditor
from ui.inactive_users import InactiveUsersView
from ui.main_window import MainWindow
from ui.tool_page import ToolPage
from ui.users import UserEditor

#: a project only the second sandbox has
SOLO = "solo"


@pytest.fixture
def window(
    qtbot: Any, qloop: Any, tmp_path: Path, arun: Callable[..., Any]
) -> Iterator[tuple[MainWindow, Session]]:
    session = Session(ProfileStore(tmp_path / "config"), health_interval=0)
    main = MainWindow(session)
    qtbot.addWidget(main)
    main.show()
    yield main, session
    main.close()
    arun(session.aclose())


def open_on(qtbot: Any, session: Session, sb: SandboxProcess, label: str) -> None:
    session.open_spec(ConnectionSpec(sb.url, sb.admin_token, sb.client_token, label=label))
    qtbot.waitUntil(lambda: session.state == READY, timeout=30_000)


def add_project(sb: SandboxProcess, project: str) -> None:
    conn = db.connect(sb.db)
    try:
        with conn:
            conn.execute(
                "INSERT INTO projects(id, name, description, created_at) VALUES(?, ?, ?, ?)",
                (project, "Solo", "Only on this server", int(time.time() * 1000)),
            )
    finally:
        conn.close()


def content(main: MainWindow, key: str) -> Any:
    main.show_page(key)
    page: ToolPage = main.tool_pages[key]
    built = page.ensure_content()
    assert built is not None
    return built


def test_a_project_typed_on_one_server_is_checked_against_the_next_ones_projects(
    qtbot: Any,
    window: tuple[MainWindow, Session],
    sandbox: SandboxProcess,
    demo_sandbox: SandboxProcess,
) -> None:
    main, session = window
    add_project(sandbox, SOLO)
    open_on(qtbot, session, sandbox, "first")
    dashboard = content(main, "project_dashboard")
    archive = content(main, "archived_features")
    assert isinstance(dashboard, ProjectDashboard) and isinstance(archive, ArchiveBrowser)
    for view in (dashboard, archive):
        view.open_item(SOLO)
    qtbot.waitUntil(lambda: dashboard.model.has_data and not dashboard.model.busy, timeout=15_000)
    qtbot.waitUntil(lambda: archive.model.loaded_project == SOLO, timeout=15_000)
    assert not session.last_error

    open_on(qtbot, session, demo_sandbox, "second")  # the demo server has no project "solo"
    d, a = dashboard.model, archive.model
    d.refresh()  # F5 while the project is checked does not ask for "solo" either
    a.refresh()
    qtbot.waitUntil(lambda: d.has_data and not d.busy, timeout=15_000)
    qtbot.waitUntil(lambda: a.state == CONTENT and not a.busy, timeout=15_000)
    # not re-run blindly: the new server's default project instead, and each window says so
    assert d.project == d.loaded_project == "default"
    assert a.project == a.loaded_project == "default"
    assert dashboard.picker.value == archive.picker.value == "default"
    for view in (dashboard, archive):
        assert not view.notice.isHidden()
        assert view.notice.text().startswith("second has no project “solo”"), view.notice.text()
        assert "showing Default (default) instead" in view.notice.text()
    assert not d.error and not a.error
    assert session.last_error == "" and not main.error_button.isVisible()

    # a project the new server has is shown as asked, and the note goes
    dashboard.open_item("web-shop")
    qtbot.waitUntil(lambda: d.loaded_project == "web-shop" and not d.busy, timeout=15_000)
    assert dashboard.notice.isHidden()


def test_a_windows_error_leaves_the_status_bar_with_its_window_and_its_connection(
    qtbot: Any,
    window: tuple[MainWindow, Session],
    sandbox: SandboxProcess,
    demo_sandbox: SandboxProcess,
) -> None:
    main, session = window
    open_on(qtbot, session, demo_sandbox, "demo")
    dashboard = content(main, "project_dashboard")
    dashboard.open_item("nope")
    qtbot.waitUntil(lambda: bool(dashboard.model.error) and not dashboard.model.busy)
    assert session.last_error.startswith("No project nope on this server")
    assert main.error_button.isVisible()

    # another window: the dashboard's error is not about it
    users = content(main, "users")
    assert session.last_error == "" and not main.error_button.isVisible()
    qtbot.waitUntil(lambda: users.model.loaded, timeout=15_000)
    assert session.last_error == ""

    # back, and again: it leaves with a new connection too
    main.show_page("project_dashboard")
    dashboard.open_item("nope")
    qtbot.waitUntil(lambda: bool(dashboard.model.error) and not dashboard.model.busy)
    assert session.last_error.startswith("No project nope on this server")
    open_on(qtbot, session, sandbox, "other")
    assert session.last_error == "" and not main.error_button.isVisible()
    # and the window's next successful load clears its own
    dashboard.open_item("nope")
    qtbot.waitUntil(lambda: bool(dashboard.model.error) and not dashboard.model.busy)
    assert session.last_error.startswith("No project nope")
    dashboard.open_item("default")
    qtbot.waitUntil(lambda: dashboard.model.has_data and not dashboard.model.busy)
    assert session.last_error == ""


def test_a_window_out_of_view_that_reloads_and_fails_keeps_its_error_off_the_status_bar(
    qtbot: Any, window: tuple[MainWindow, Session], demo_sandbox: SandboxProcess
) -> None:
    """The dashboard (left on an unknown project) reloads when users change elsewhere; its
    error is its own page's, not the status bar's, while another page is in view."""
    main, session = window
    open_on(qtbot, session, demo_sandbox, "demo")
    dashboard = content(main, "project_dashboard")
    dashboard.open_item("nope")
    qtbot.waitUntil(lambda: bool(dashboard.model.error) and not dashboard.model.busy)
    main.show_page("overview")
    assert session.last_error == ""
    reloads = dashboard.model.busy_changed
    with qtbot.waitSignal(reloads, timeout=10_000):
        session.notify(Changes.of(Resource.USERS, 36))
    qtbot.waitUntil(lambda: not dashboard.model.busy, timeout=10_000)
    assert dashboard.model.error.startswith("No project nope")  # its page still says it
    assert session.last_error == "" and not main.error_button.isVisible()


def delete_an_inactive_user(qtbot: Any, view: InactiveUsersView) -> None:
    m = view.model
    qtbot.waitUntil(lambda: m.loaded and not m.busy, timeout=15_000)
    m.select(m.table.rows[:1])
    plan = m.plan_delete()
    assert plan is not None, m.delete_reason
    assert m.delete(plan) is not None


def revive_a_flag(qtbot: Any, view: ArchiveBrowser) -> None:
    m = view.model
    view.open_item("web-shop")
    qtbot.waitUntil(lambda: m.loaded_project == "web-shop" and not m.busy, timeout=15_000)
    m.select_rows(m.table.rows[:1])
    plan = m.plan(REVIVE)
    assert plan is not None, m.reason(REVIVE)
    assert m.carry_out(plan) is not None


def delete_a_context_field(qtbot: Any, view: ContextUsageViewer) -> None:
    m = view.model
    view.open_item("tenantId")
    # `field_known` is None while the fields load: waitUntil takes a None as "done"
    qtbot.waitUntil(lambda: m.loaded_field == "tenantId" and m.field_known is True,
                    timeout=15_000)  # fmt: skip
    assert m.delete_field() is not None
    qtbot.waitUntil(lambda: view.confirmation is not None, timeout=15_000)
    box = view.confirmation
    assert box is not None
    box.confirm_button.click()


def shown_again(qtbot: Any, view: Any) -> None:
    """The window has loaded what it shows on the connection just opened."""
    m = view.model
    if isinstance(view, InactiveUsersView):
        qtbot.waitUntil(lambda: m.loaded and not m.busy, timeout=15_000)
    elif isinstance(view, ArchiveBrowser):
        qtbot.waitUntil(lambda: m.loaded_project == "web-shop" and not m.busy, timeout=15_000)
    else:
        qtbot.waitUntil(lambda: m.loaded_field == "tenantId" and not m.busy, timeout=15_000)


@pytest.mark.parametrize(
    ("key", "act"),
    [
        ("inactive_users", delete_an_inactive_user),
        ("archived_features", revive_a_flag),
        ("context_usage", delete_a_context_field),
    ],
)
def test_what_an_action_did_is_shown_on_its_own_connection_only(
    qtbot: Any,
    window: tuple[MainWindow, Session],
    sandbox: SandboxProcess,
    demo_sandbox: SandboxProcess,
    data_folder: Path,
    key: str,
    act: Callable[[Any, Any], None],
) -> None:
    """An action on the first server, then Ctrl+K to another: the window there does not say
    what was done on the first (its snapshot's path names the first's journal); back on the
    first, it says it again."""
    main, session = window
    open_on(qtbot, session, sandbox, "first")
    view = content(main, key)
    act(qtbot, view)
    m = view.model
    qtbot.waitUntil(lambda: bool(m.outcome or m.outcome_error) and not m.busy, timeout=20_000)
    did = m.outcome
    first = str(journal_folder("first"))
    assert did and f"Snapshot: {first}" in did, (did, m.outcome_error)
    assert view.outcome_label.text() == did

    open_on(qtbot, session, demo_sandbox, "second")
    shown_again(qtbot, view)
    assert (m.outcome, m.outcome_error) == ("", "")
    assert view.outcome_label.text() == ""  # neither what was done there, nor its snapshot

    open_on(qtbot, session, sandbox, "first")  # its connection again: what it did is its own
    shown_again(qtbot, view)
    assert m.outcome == did and view.outcome_label.text() == did


def test_a_change_in_one_window_reloads_every_window_that_shows_it(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess
) -> None:
    """Two group editors and a user editor on one session: a group created in one editor is
    listed by the other; a user renamed in the user editor is renamed in the group editors'
    member search and in the inactive users list. Windows never call each other."""
    session = connect(sandbox)
    views: list[Any] = [
        GroupEditor(session),
        GroupEditor(session),
        UserEditor(session),
        InactiveUsersView(session),
    ]
    for view in views:
        qtbot.addWidget(view)
    left, right, users, inactive = views
    qtbot.waitUntil(
        lambda: left.model.loaded and right.model.loaded and users.model.loaded, timeout=15_000
    )
    qtbot.waitUntil(lambda: inactive.model.loaded, timeout=15_000)

    left.model.set_name("Night shift")
    task = left.model.create()
    assert task is not None
    qtbot.waitUntil(lambda: left.model.created is not None, timeout=15_000)
    qtbot.waitUntil(lambda: "Night shift" in right.model.group_names, timeout=15_000)

    someone = next(r for r in inactive.model.table.all_rows)
    users.model.open_user(someone.id)
    users.model.edit("name", "Renamed Person")
    plan = users.model.plan_save()
    assert plan is not None
    saved = users.model.save(plan)
    assert saved is not None
    qtbot.waitUntil(lambda: saved.done(), timeout=15_000)
    for editor in (left, right):
        qtbot.waitUntil(
            lambda e=editor: any(
                u.name == "Renamed Person" for u in e.model.search_users("renamed")[0]
            ),
            timeout=15_000,
        )
    qtbot.waitUntil(
        lambda: any(r.name == "Renamed Person" for r in inactive.model.table.all_rows),
        timeout=15_000,
    )
    for view in views:
        view.close_content()
