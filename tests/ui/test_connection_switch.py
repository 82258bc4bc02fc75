"""Connections never leak into each other (issue 14, section 4), on two real sandboxes: a project
typed against one server is checked against the next one's projects before anything is asked
about it; a window's error leaves the status bar with its window or its connection; a change
made in one window reloads every other window that shows it."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from app.changes import Changes, Resource
from app.connection import ConnectionSpec
from app.profiles import ProfileStore
from app.viewmodels.archive import CONTENT
from app.viewmodels.session import READY, Session
from sandbox import db
from sandbox.process import SandboxProcess
from ui.archive import ArchiveBrowser
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
