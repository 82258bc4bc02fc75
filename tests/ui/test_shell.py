"""The application shell against real sandboxes: first start, switching, errors, a server that
goes away and comes back, a server without groups, navigation, tool windows, the connections
dialog."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QAbstractScrollArea,
    QApplication,
    QLabel,
    QPushButton,
    QWidget,
)

from app import __version__
from app.connection import ConnectionSpec
from app.profiles import Profile, ProfileStore
from app.registry import TOOLS_BY_KEY
from app.viewmodels.session import CONNECTING, FAILED, READY, Session
from sandbox.process import SandboxProcess
from tests.conftest import MemoryKeyring
from ui.connection_dialog import ConnectionDialog
from ui.main_window import MainWindow, ToolWindow


@pytest.fixture
def shell(
    qtbot: Any, qloop: Any, tmp_path: Path, arun: Callable[..., Any]
) -> Iterator[tuple[MainWindow, Session]]:
    """A main window on a session of its own: profiles in tmp_path, its sandbox on a database
    in tmp_path."""
    store = ProfileStore(tmp_path / "config")
    session = Session(
        store,
        sandbox_factory=lambda: SandboxProcess(tmp_path / "sandbox.sqlite3", session_tokens=True),
    )
    window = MainWindow(session)
    qtbot.addWidget(window)
    window.show()
    yield window, session
    window.close()
    arun(session.aclose())


def wait_state(qtbot: Any, session: Session, state: str, timeout: int = 30_000) -> None:
    qtbot.waitUntil(lambda: session.state == state, timeout=timeout)


def wait_overview(qtbot: Any, window: MainWindow) -> None:
    model = window.overview_model
    qtbot.waitUntil(
        lambda: not model.busy and (model.has_data or bool(model.error)), timeout=20_000
    )


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_first_start_spawns_the_sandbox_and_shows_demo_data(
    qtbot: Any, shell: tuple[MainWindow, Session]
) -> None:
    window, session = shell
    session.open_last()  # nothing saved yet: the sandbox
    assert session.state == "connecting"
    assert window.overview.loading_label.text() == "Starting the local sandbox…"
    wait_state(qtbot, session, READY)
    wait_overview(qtbot, window)
    assert window.connection_button.text() == "Local sandbox"
    assert window.server_label.text() == f"flagdesk sandbox {__version__}"
    assert window.token_label.text() == "Admin API token"
    assert window.overview.source_label.text() == "Local sandbox with demo data"
    hint = window.overview.hint_label
    assert hint.isVisible() and "Connections" in hint.text()
    assert window.overview.projects_table.model().rowCount() == 4
    assert not window.error_button.isVisible()
    sandbox = session._sandbox
    assert sandbox is not None and sandbox.running
    # every tool can be used on the sandbox, but the user's own tokens: the sandbox's admin API
    # token has no user (issue 36), which the page says
    for key, page in window.tool_pages.items():
        if key == "personal_tokens":
            assert not page.model.available and not page.banner.isHidden()
            assert page.model.reason.startswith("This needs a personal access token")
            continue
        assert page.model.available and page.banner.isHidden(), page.model.reason


def test_the_overview_asks_beside_the_probe_and_loads_once(
    qtbot: Any, shell: tuple[MainWindow, Session]
) -> None:
    """The overview reads nothing the probe finds: its requests leave while the connection is
    still being probed (its first data comes a round trip sooner), and the connection then
    becoming ready does not make it load again."""
    window, session = shell
    sent: list[tuple[str, str]] = []  # (path, the session's state as it left)

    def watch_requests() -> None:
        async def seen(request: Any) -> None:
            sent.append((request.url.path, session.state))

        assert session.connection is not None
        session.connection.client._http.event_hooks["request"].append(seen)

    session.connection_opened.connect(watch_requests)
    session.open_last()
    wait_state(qtbot, session, READY)
    wait_overview(qtbot, window)
    qtbot.wait(300)  # time for a second load, if one were coming
    overview = [(p, s) for p, s in sent if p in ("/api/admin/projects", "/api/admin/user-admin")]
    assert sorted(overview) == [("/api/admin/projects", CONNECTING),
                                ("/api/admin/user-admin", CONNECTING)]  # fmt: skip
    assert window.overview.projects_table.model().rowCount() == 4
    assert window.overview.version_label.text()


#: two of the overview's requests, and two of the capability probe's
OVERVIEW_PATHS = ("/api/admin/projects", "/api/admin/user-admin")
PROBE_PATHS = ("/api/admin/archive/features/flagdesk-capability-probe", "/api/client/metrics/bulk")


def record_requests(
    session: Session, events: list[tuple[str, str]], *, answers: bool = True
) -> None:
    """On each connection `session` opens, append to `events` every request its client sends,
    ("sent", path), and with `answers` every answer it gets, ("answered", path)."""

    def watch() -> None:
        async def sent(request: Any) -> None:
            events.append(("sent", request.url.path))

        async def answered(response: Any) -> None:
            events.append(("answered", response.request.url.path))

        assert session.connection is not None
        hooks = session.connection.client._http.event_hooks
        hooks["request"].append(sent)
        if answers:
            hooks["response"].append(answered)

    session.connection_opened.connect(watch)


def test_the_probe_asks_once_the_overview_has_its_answers(
    qtbot: Any, shell: tuple[MainWindow, Session]
) -> None:
    """The overview's requests are answered before the probe's leave: sent beside them, the
    probe's held the overview's first data back (the sandbox answers one request at a time)."""
    window, session = shell
    events: list[tuple[str, str]] = []  # ("sent" or "answered", path)
    record_requests(session, events)
    session.open_last()
    wait_state(qtbot, session, READY)
    wait_overview(qtbot, window)
    last_answer = max(events.index(("answered", path)) for path in OVERVIEW_PATHS)
    first_probe = min(events.index(("sent", path)) for path in PROBE_PATHS)
    assert last_answer < first_probe, events


def test_reading_the_overview_s_answers_is_prepared_while_they_are_on_their_way(
    qtbot: Any, shell: tuple[MainWindow, Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the overview's requests have left, the validators of its answers that are not
    built yet are built while the answers are on their way, before the probe's requests go:
    the warm-up during the sandbox's boot stops as the sandbox answers, and a window whose
    sandbox was already up built none. (Every validator of this process was built long ago:
    each answer is given a step here, watched.)"""
    from app.api import client

    window, session = shell
    events: list[tuple[str, str]] = []

    def every_step(answers: Any) -> tuple[Any, ...]:
        def watched(answer: Any) -> Any:
            return lambda: events.append(("built", answer.__name__))

        return tuple(watched(answer) for answer in answers)

    monkeypatch.setattr(client, "validators_to_build", every_step)
    record_requests(session, events, answers=False)
    session.open_last()
    wait_state(qtbot, session, READY)
    wait_overview(qtbot, window)
    overview_sent = max(events.index(("sent", path)) for path in OVERVIEW_PATHS)
    first_probe = min(events.index(("sent", path)) for path in PROBE_PATHS)
    assert events[overview_sent + 1 : first_probe][:3] == [
        ("built", "UiConfig"), ("built", "ProjectList"), ("built", "UserList")
    ], events  # fmt: skip


def test_the_sandbox_is_launched_before_the_window_has_loaded(
    qtbot: Any, shell: tuple[MainWindow, Session], demo_sandbox: SandboxProcess
) -> None:
    """`prelaunch()` starts the sandbox child at once when it is what opens; the connection
    then uses that very process. With a saved profile it starts nothing."""
    _window, session = shell
    session.prelaunch()
    sandbox = session._sandbox
    assert sandbox is not None and sandbox.launched
    pid = sandbox.pid
    session.open_last()
    wait_state(qtbot, session, READY)
    assert session._sandbox is sandbox and sandbox.pid == pid and sandbox.running

    other = Session(ProfileStore(session.store.directory.parent / "other-config"))
    other.store.save(
        Profile(name="Saved", url=demo_sandbox.url, token_store="file"),
        token=demo_sandbox.admin_token,
    )
    other.store.set_last("Saved")
    other.prelaunch()
    assert other._sandbox is None


def test_switching_to_a_second_server_needs_no_restart(
    qtbot: Any, shell: tuple[MainWindow, Session], demo_sandbox: SandboxProcess
) -> None:
    window, session = shell
    session.store.save(
        Profile(name="Second", url=demo_sandbox.url, token_store="file"),
        token=demo_sandbox.admin_token,
    )
    session.open_profile("Second")
    wait_state(qtbot, session, READY)
    wait_overview(qtbot, window)
    assert window.overview.url_label.text() == demo_sandbox.url
    assert window.overview.source_label.text() == "Second"
    assert not window.overview.hint_label.isVisible()
    assert window.connection_button.text() == "Second"
    assert window.windowTitle() == "flagdesk — Second"
    assert session.store.last == "Second"  # reopened on the next start


def test_a_wrong_url_and_a_wrong_token_give_distinct_errors(
    qtbot: Any, shell: tuple[MainWindow, Session], demo_sandbox: SandboxProcess
) -> None:
    window, session = shell
    session.open_spec(ConnectionSpec(f"http://127.0.0.1:{closed_port()}", "*:*.whatever"))
    wait_state(qtbot, session, FAILED)
    wait_overview(qtbot, window)
    refused = session.last_error
    assert "connection refused" in refused
    assert window.overview.error_label.text() == refused
    assert window.error_button.isVisible()
    assert "Not connected" in window.tool_pages["groups"].reason.text()

    session.open_spec(ConnectionSpec(demo_sandbox.url, "*:*.not-the-token-0123456789"))
    wait_state(qtbot, session, FAILED)
    wrong_token = session.last_error
    assert "401" in wrong_token and "token" in wrong_token and wrong_token != refused
    assert "not-the-token-0123456789" not in wrong_token

    # the window stays usable: a good connection works at once
    session.open_spec(ConnectionSpec(demo_sandbox.url, demo_sandbox.admin_token))
    wait_state(qtbot, session, READY)
    wait_overview(qtbot, window)
    assert window.overview.projects_table.model().rowCount() == 4
    assert not window.error_button.isVisible()


def test_the_server_stops_and_comes_back(
    qtbot: Any, shell: tuple[MainWindow, Session], tmp_path: Path
) -> None:
    window, session = shell
    port = closed_port()
    server = SandboxProcess(tmp_path / "flaky.sqlite3", "--port", str(port))
    server.start()
    try:
        session.open_spec(ConnectionSpec(server.url, server.admin_token))
        wait_state(qtbot, session, READY)
        server.stop()
        qtbot.keyClick(window, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier)  # Reconnect
        wait_state(qtbot, session, FAILED)
        assert "connection refused" in session.message
        assert not window.tool_pages["users"].banner.isHidden()
        server.start()
        wait_overview(qtbot, window)  # the overview says why, and offers Retry
        assert window.overview_model.error == session.message
        window.overview.retry_button.click()  # Retry on the overview opens it again
        wait_state(qtbot, session, READY)
        wait_overview(qtbot, window)
        assert not window.overview_model.error
        assert window.tool_pages["users"].banner.isHidden()
    finally:
        server.stop()


def test_a_server_that_goes_away_is_noticed_and_reconnected_without_a_click(
    qtbot: Any, shell: tuple[MainWindow, Session], tmp_path: Path
) -> None:
    window, session = shell
    session.health_interval = 0.3
    port = closed_port()
    server = SandboxProcess(tmp_path / "flaky.sqlite3", "--port", str(port))
    server.start()
    try:
        session.open_spec(ConnectionSpec(server.url, server.admin_token))
        wait_state(qtbot, session, READY)
        wait_overview(qtbot, window)
        server.stop()
        wait_state(qtbot, session, FAILED, timeout=10_000)
        assert "connection refused" in session.message
        assert "checks again every 0.3 s" in session.message
        assert "connection refused" in window.error_button.text()
        assert not window.tool_pages["users"].banner.isHidden()
        server.start()
        wait_state(qtbot, session, READY, timeout=15_000)
        wait_overview(qtbot, window)
        assert window.tool_pages["users"].banner.isHidden()
        assert not window.error_button.isVisible()
    finally:
        server.stop()


def test_groups_are_explained_and_disabled_without_groups(
    qtbot: Any, shell: tuple[MainWindow, Session], tmp_path: Path
) -> None:
    window, session = shell
    with SandboxProcess(tmp_path / "oss.sqlite3", "--without-groups") as oss:
        session.open_spec(ConnectionSpec(oss.url, oss.admin_token))
        wait_state(qtbot, session, READY)
        window.show_page("groups")
        page = window.tool_pages["groups"]
        assert window.pages.currentWidget() is page
        assert not page.banner.isHidden() and not page.content.isEnabled()
        assert "Unleash Enterprise" in page.reason.text()
        item = window.items["groups"]
        assert item.font(0).italic() and "Enterprise" in item.toolTip(0)
        users = window.tool_pages["users"]
        assert users.model.available and users.banner.isHidden()


def test_shortcuts_and_tools_in_windows_of_their_own(
    qtbot: Any, shell: tuple[MainWindow, Session]
) -> None:
    window, _session = shell
    for number, key in enumerate(list(window.tool_pages)[:9], start=1):  # Ctrl+1 to Ctrl+9
        qtbot.keyClick(window, Qt.Key(Qt.Key.Key_0 + number), Qt.KeyboardModifier.ControlModifier)
        assert window.current_key == key
        assert window.pages.currentWidget().objectName().endswith("Page")
    window.show_page("project_dashboard")
    first = window.open_tool_window(window.tool_pages["project_dashboard"].model.tool)
    window.new_window_action.trigger()
    assert len(window.tool_windows) == 2
    assert all(isinstance(w, ToolWindow) and w.isVisible() for w in window.tool_windows)
    assert first.objectName() == "projectDashboardWindow"
    first.close()
    qtbot.waitUntil(lambda: len(window.tool_windows) == 1)


def test_every_control_has_an_object_name(shell: tuple[MainWindow, Session]) -> None:
    window, _ = shell
    for widget in [
        window,
        window.sidebar,
        window.pages,
        window.splitter,
        window.connection_button,
        window.error_button,
        *window.tool_pages.values(),
        *window.findChildren(QPushButton),
    ]:
        assert widget.objectName(), widget
    for action in window.findChildren(type(window.connections_action)):
        if action.text() and not action.isSeparator() and action.parent() is window:
            assert action.objectName(), action.text()


def _named(widget: QWidget) -> str:
    """How assistive technology names a control: its accessible name, its own text, or the text
    of the label whose buddy it is ("" when it has none)."""
    if widget.accessibleName():
        return widget.accessibleName()
    text = getattr(widget, "text", None)
    if callable(text) and isinstance(text(), str) and text().strip():
        return str(text())
    window = widget.window()
    for label in window.findChildren(QLabel):
        if label.buddy() is widget and label.text().strip():
            return label.text()
    return ""


def test_every_focusable_control_of_every_tool_is_named(
    qtbot: Any, shell: tuple[MainWindow, Session]
) -> None:
    """Control by control, on the sandbox: every widget that takes keyboard focus in the main
    window and in each tool's window has a stable objectName and a name for screen readers."""
    window, session = shell
    session.open_sandbox()
    wait_state(qtbot, session, READY)
    problems: list[str] = []
    checked = 0
    for key in ["overview", *window.tool_pages]:
        window.show_page(key)
        qtbot.wait(300)  # the tool's window is built and loads
        for widget in window.findChildren(QWidget):
            if widget.focusPolicy() == Qt.FocusPolicy.NoFocus or not widget.isVisibleTo(window):
                continue
            if isinstance(widget, QAbstractScrollArea) and not isinstance(
                widget, QAbstractItemView
            ):
                continue  # a scroll area passes focus to what it holds
            checked += 1
            kind = type(widget).__name__
            if not widget.objectName() or widget.objectName().startswith("qt_"):
                problems.append(f"{key}: {kind} without objectName (in {widget.parent()!r})")
            elif not _named(widget):
                problems.append(f"{key}: {kind} {widget.objectName()} has no accessible name")
    assert checked > 40, checked  # the sidebar, pickers, filters, tables, forms, buttons...
    assert not problems, "\n".join(problems)


def test_layout_is_remembered(qtbot: Any, qloop: Any, tmp_path: Path) -> None:
    session = Session(ProfileStore(tmp_path))
    first = MainWindow(session)
    qtbot.addWidget(first)
    first.resize(731, 517)  # within the offscreen screen (800 x 600)
    first.show_page("context_usage")
    first.save_layout()
    again = MainWindow(session)
    qtbot.addWidget(again)
    assert again.current_key == "context_usage"
    assert (again.size().width(), again.size().height()) == (731, 517)

    # a tool's own window remembers its size; a second one opens beside the first
    tool = TOOLS_BY_KEY["context_usage"]
    window = again.open_tool_window(tool)
    window.resize(611, 433)
    window.close()
    reopened = again.open_tool_window(tool)
    assert (reopened.width(), reopened.height()) == (611, 433)
    beside = again.open_tool_window(tool)
    assert beside.pos() == reopened.pos() + QPoint(32, 32)
    for w in (reopened, beside):
        w.close()


def test_the_connections_dialog_adds_tests_and_switches(
    qtbot: Any,
    shell: tuple[MainWindow, Session],
    demo_sandbox: SandboxProcess,
    memory_keyring: MemoryKeyring,
) -> None:
    window, session = shell
    dialog = ConnectionDialog(session, window)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.add_button.click()
    dialog.name_edit.setText("Demo")
    dialog.url_edit.setText(demo_sandbox.url + "/")
    dialog.test_button.click()
    qtbot.waitUntil(lambda: "failed" in dialog.report.toPlainText(), timeout=10_000)
    assert "Give an admin API token" in dialog.report.toPlainText()
    dialog.token_edit.setText(demo_sandbox.admin_token)
    dialog.test_button.click()
    qtbot.waitUntil(lambda: "✓ Groups" in dialog.report.toPlainText(), timeout=20_000)
    assert f"flagdesk sandbox {__version__}" in dialog.report.toPlainText()

    dialog.url_edit.setText("localhost:4242")  # no scheme: refused, and what was typed stays
    assert dialog.save() is None
    assert "no scheme" in dialog.problems.text()
    assert dialog.name_edit.text() == "Demo" and dialog.token_edit.text()

    dialog.url_edit.setText(demo_sandbox.url)
    dialog.connect_button.click()
    wait_state(qtbot, session, READY)
    assert session.name == "Demo" and session.url == demo_sandbox.url
    assert memory_keyring.passwords == {("flagdesk", "Demo/admin"): demo_sandbox.admin_token}
    saved = (session.store.path).read_text()
    assert demo_sandbox.admin_token not in saved


def test_removing_a_saved_connection_asks_with_the_shared_confirmation(
    qtbot: Any, shell: tuple[MainWindow, Session]
) -> None:
    """Remove asks with the confirmation box every window uses (window-modal, Cancel the
    default: Enter keeps the connection), naming the connection and what goes with it."""
    window, session = shell
    session.store.save(
        Profile(name="Staging", url="https://staging.example.com", token_store="file"),
        token="staging-token",
    )
    dialog = ConnectionDialog(session, window)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.reload(select="Staging")
    assert dialog.editing == "Staging" and dialog.remove_button.isEnabled()
    qtbot.mouseClick(dialog.remove_button, Qt.MouseButton.LeftButton)
    box = dialog.confirmation
    assert box is not None and box.isVisible() and box.plan == "Staging"
    assert box.windowModality() == Qt.WindowModality.WindowModal
    assert box.text() == "Remove the connection “Staging”?"
    assert box.informativeText().startswith(
        "“Staging” (https://staging.example.com) is removed from the saved connections"
    )
    assert box.defaultButton() is box.cancel_button
    qtbot.keyClick(box, Qt.Key.Key_Return)  # Enter: Cancel, the default
    qtbot.waitUntil(lambda: dialog.confirmation is None)
    assert [p.name for p in session.store.profiles()] == ["Staging"]

    qtbot.mouseClick(dialog.remove_button, Qt.MouseButton.LeftButton)
    box = dialog.confirmation
    assert box is not None
    box.action_button.click()
    qtbot.waitUntil(lambda: dialog.confirmation is None)
    assert session.store.profiles() == []
    items = [dialog.list.item(row).text() for row in range(dialog.list.count())]
    assert "Staging" not in items


def test_about_names_the_server_and_the_libraries(
    qtbot: Any, shell: tuple[MainWindow, Session], demo_sandbox: SandboxProcess
) -> None:
    window, session = shell
    session.open_spec(ConnectionSpec(demo_sandbox.url, demo_sandbox.admin_token, label="Demo"))
    wait_state(qtbot, session, READY)
    window.on_about_triggered()
    dialog = next(w for w in QApplication.topLevelWidgets() if w.objectName() == "aboutDialog")
    text = dialog.findChild(QLabel, "aboutText").text()
    assert __version__ in text and "flagdesk sandbox" in text
    for library in ("PySide6-Essentials", "httpx", "pydantic", "LGPL-3.0", "MIT"):
        assert library in text
    dialog.close()


def test_f5_and_ctrl_f_work_after_a_tool_is_picked_with_the_mouse(
    qtbot: Any, shell: tuple[MainWindow, Session], demo_sandbox: SandboxProcess
) -> None:
    """The focus stays in the sidebar after a click on a tool: F5 still reloads the tool shown
    and Ctrl+F still goes to its filter (also from the status bar)."""
    window, session = shell
    session.open_spec(ConnectionSpec(demo_sandbox.url, demo_sandbox.admin_token, label="demo"))
    wait_state(qtbot, session, READY)
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    rect = window.sidebar.visualItemRect(window.items["users"])
    qtbot.mouseClick(window.sidebar.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert window.current_key == "users"
    assert QApplication.focusWidget() is window.sidebar
    users = window.tool_pages["users"].tool_content
    assert users is not None
    qtbot.waitUntil(lambda: users.model.loaded and not users.model.busy, timeout=15_000)

    qtbot.keyClick(window.sidebar, Qt.Key.Key_F5)
    assert users.model.busy  # loading again
    qtbot.waitUntil(lambda: not users.model.busy, timeout=15_000)
    qtbot.keyClick(window.sidebar, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert QApplication.focusWidget() is users.table.filter_edit

    window.connection_button.setFocus()
    qtbot.keyClick(window.connection_button, Qt.Key.Key_F5)
    assert users.model.busy
    qtbot.waitUntil(lambda: not users.model.busy, timeout=15_000)


def test_the_other_pages_are_built_once_the_first_data_is_shown(
    qtbot: Any, shell: tuple[MainWindow, Session], demo_sandbox: SandboxProcess
) -> None:
    """The overview's first data comes first: the History page and the tools' pages (a tenth
    of a second of imports and widgets) are built the turn after it is shown, not before the
    connection's first requests go out."""
    window, session = shell
    assert window._tool_pages == {} and window._history is None
    model = window.overview_model
    built_with_data: list[bool] = []
    model.loaded.connect(lambda: built_with_data.append(bool(window._tool_pages)))
    session.open_spec(ConnectionSpec(demo_sandbox.url, demo_sandbox.admin_token, label="demo"))
    wait_state(qtbot, session, READY)
    qtbot.waitUntil(lambda: model.has_data, timeout=20_000)
    qtbot.waitUntil(lambda: window._history is not None, timeout=5_000)
    assert built_with_data == [False]  # not while the data was being shown
    assert set(window._tool_pages) == set(TOOLS_BY_KEY)
    # each tool's availability reached the sidebar as its page was built
    assert window.items["groups"].toolTip(0) == TOOLS_BY_KEY["groups"].description


def test_a_page_asked_for_before_the_first_data_is_built_at_once(
    qtbot: Any, shell: tuple[MainWindow, Session]
) -> None:
    """Picking a tool (or History) while the connection is still starting shows its page
    then, and a connection that never brings data still gets its pages in the end."""
    window, _session = shell
    assert window._history is None
    window.show_page("users")
    assert window.pages.currentWidget() is window._tool_pages["users"]
    assert window._history is not None  # built together: one step, once
    window.show_page("history")
    assert window.pages.currentWidget() is window.history


def test_with_no_first_data_the_pages_are_built_after_a_while(
    qtbot: Any, shell: tuple[MainWindow, Session]
) -> None:
    """A connection that fails (here: nothing listens) brings no data: the pages come anyway,
    so the History entry counts the changes in doubt."""
    window, session = shell
    session.open_spec(ConnectionSpec(f"http://127.0.0.1:{closed_port()}", "t" * 30))
    assert window._history is None
    qtbot.waitUntil(lambda: window._history is not None, timeout=10_000)
    assert set(window._tool_pages) == set(TOOLS_BY_KEY)
    wait_state(qtbot, session, FAILED)
    assert not window.overview_model.has_data


def test_a_sandbox_that_does_not_start_is_said_on_the_overview_with_retry(
    qtbot: Any, qloop: Any, tmp_path: Path, arun: Callable[..., Any]
) -> None:
    """The sandbox child exits at once (its database's path is a folder): the overview says why,
    with Retry, instead of "Starting the local sandbox…" and its busy bar for good (the status
    bar alone said it: the session failed before it had a connection, and only a connection's
    failure reached the overview). Retry, once the path is free, opens the sandbox."""
    db = tmp_path / "sandbox.sqlite3"
    db.mkdir()
    session = Session(
        ProfileStore(tmp_path / "config"),
        sandbox_factory=lambda: SandboxProcess(db, session_tokens=True),
    )
    window = MainWindow(session)
    qtbot.addWidget(window)
    window.show()
    try:
        session.open_last()
        wait_state(qtbot, session, FAILED)
        wait_overview(qtbot, window)
        page = window.overview
        assert page.stack.currentWidget() is page.error_page
        assert "The local sandbox did not start" in page.error_label.text()
        assert "Is a directory" in page.error_label.text()
        assert page.retry_button.isEnabled()
        db.rmdir()
        page.retry_button.click()
        wait_state(qtbot, session, READY)
        wait_overview(qtbot, window)
        assert window.overview_model.has_data and not window.overview_model.error
    finally:
        window.close()
        arun(session.aclose())
