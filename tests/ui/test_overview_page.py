"""The main window against a real sandbox (and against a dead address)."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QLabel,
    QProgressBar,
    QPushButton,
    QStackedWidget,
    QTableView,
    QWidget,
)

from app.api.client import AdminClient, RetryPolicy
from app.api.errors import ServerUnreachable
from app.connection import ConnectionSpec
from app.profiles import ProfileStore
from app.viewmodels.overview import OverviewModel
from app.viewmodels.session import READY, SANDBOX_SOURCE, Session
from sandbox.process import SandboxProcess
from ui.overview_page import OverviewPage


@pytest.fixture
def clients(qloop: Any, arun: Callable[..., Any]) -> Iterator[list[AdminClient]]:
    """AdminClients made by a test, closed on the loop when it ends."""
    made: list[AdminClient] = []
    yield made
    for client in made:
        arun(client.aclose())


def connector(client: AdminClient) -> Callable[[], Any]:
    async def connect() -> AdminClient:
        return client

    return connect


def idle(qtbot: Any, model: OverviewModel) -> Any:
    """Waits (as a context manager) for the model to stop being busy: a load ended, either way."""
    return qtbot.waitSignal(model.busy_changed, timeout=10_000, check_params_cb=lambda b: not b)


def dead_url() -> str:
    """An address nothing listens on: a port the OS just gave out and took back."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def child(window: QWidget, cls: type[Any], name: str) -> Any:
    widget = window.findChild(cls, name)
    assert widget is not None, f"no {cls.__name__} named {name!r}"
    return widget


def test_shows_the_demo_projects_and_user_count(
    qtbot: Any, qloop: Any, demo_sandbox: SandboxProcess, clients: list[AdminClient]
) -> None:
    client = AdminClient(demo_sandbox.url, demo_sandbox.admin_token)
    clients.append(client)
    model = OverviewModel(connector(client), source=SANDBOX_SOURCE)
    window = OverviewPage(model)
    qtbot.addWidget(window)
    window.show()
    stack = child(window, QStackedWidget, "stateStack")

    with qtbot.waitSignal(model.loaded), idle(qtbot, model):
        model.load()
        assert stack.currentWidget().objectName() == "loadingPage"

    with demo_sandbox.admin() as http:
        expected_users = len(http.get("/api/admin/user-admin").json()["users"])
    assert stack.currentWidget().objectName() == "projectsPage"
    assert child(window, QLabel, "sourceLabel").text() == "Local sandbox with demo data"
    assert child(window, QLabel, "urlValue").text() == demo_sandbox.url
    assert child(window, QLabel, "versionValue").text().startswith("flagdesk sandbox ")
    assert child(window, QLabel, "usersValue").text() == f"{expected_users:,}"
    assert child(window, QLabel, "projectsHeading").text() == "Projects (4)"

    table = child(window, QTableView, "projectsTable")
    table_model = table.model()
    assert table_model.rowCount() == 4
    headers = [
        table_model.headerData(c, Qt.Orientation.Horizontal)
        for c in range(table_model.columnCount())
    ]
    assert headers == ["Name", "ID", "Flags", "Members", "Onboarding"]
    rows = [
        [table_model.index(r, c).data() for c in range(table_model.columnCount())]
        for r in range(table_model.rowCount())
    ]
    # sorted by name; ids and onboarding states as the demo data has them
    assert [r[0] for r in rows] == sorted((r[0] for r in rows), key=str.casefold)
    assert {r[1] for r in rows} == {"default", "mobile-app", "payments", "web-shop"}
    by_id = {r[1]: r for r in rows}
    assert by_id["mobile-app"][2] == "0"
    assert by_id["mobile-app"][4] == "Onboarding started"
    assert by_id["payments"][4] == "First flag created"
    assert all(r[2].isdigit() and r[3].isdigit() for r in rows)

    # clicking a header sorts in the model: flags, descending
    table.sortByColumn(2, Qt.SortOrder.DescendingOrder)
    flags = [int(table_model.index(r, 2).data()) for r in range(4)]
    assert flags == sorted(flags, reverse=True)

    window.close_page()
    assert model.closed


def test_dead_server_shows_the_error_and_retry_without_freezing(
    qtbot: Any, qloop: Any, clients: list[AdminClient]
) -> None:
    url = dead_url()
    # real retries with short waits: backing off must not block the GUI thread either
    client = AdminClient(
        url, "*:*.secret-admin-token", retry=RetryPolicy(attempts=3, base_delay=0.05, max_delay=0.1)
    )
    clients.append(client)
    model = OverviewModel(connector(client), source="Dead server")
    window = OverviewPage(model)
    qtbot.addWidget(window)
    window.show()

    # a timer that must keep firing the whole time: proof the GUI thread never blocks
    ticks: list[float] = []
    timer = QTimer(window)
    timer.setInterval(10)
    timer.timeout.connect(lambda: ticks.append(time.monotonic()))
    timer.start()

    with idle(qtbot, model):
        model.load()
    stack = child(window, QStackedWidget, "stateStack")
    error = child(window, QLabel, "errorLabel")
    retry = child(window, QPushButton, "retryButton")
    assert stack.currentWidget().objectName() == "errorPage"
    assert error.isVisible() and retry.isVisible() and retry.isEnabled()
    assert error.text().startswith(f"Cannot reach {url}: connection refused")
    assert "secret-admin-token" not in error.text()
    assert child(window, QLabel, "versionValue").text() == "—"

    # Retry tries again (and fails again, the port is still dead)
    with idle(qtbot, model):
        qtbot.mouseClick(retry, Qt.MouseButton.LeftButton)
        assert model.busy
        assert stack.currentWidget().objectName() == "loadingPage"
    assert stack.currentWidget().objectName() == "errorPage"
    qtbot.wait(50)
    timer.stop()

    assert len(ticks) >= 3  # the timer kept firing while the requests failed


def test_retry_connects_again_after_a_failed_start(
    qtbot: Any, qloop: Any, demo_sandbox: SandboxProcess, clients: list[AdminClient]
) -> None:
    attempts = 0

    async def connect() -> AdminClient:
        nonlocal attempts
        attempts += 1
        if attempts == 1:
            raise ServerUnreachable("the local sandbox", "it did not start")
        client = AdminClient(demo_sandbox.url, demo_sandbox.admin_token)
        clients.append(client)
        return client

    model = OverviewModel(connect, source=SANDBOX_SOURCE)
    window = OverviewPage(model)
    qtbot.addWidget(window)
    window.show()
    with idle(qtbot, model):
        model.load()
    assert child(window, QLabel, "errorLabel").text() == (
        "Cannot reach the local sandbox: it did not start"
    )
    with qtbot.waitSignal(model.loaded), idle(qtbot, model):
        qtbot.mouseClick(child(window, QPushButton, "retryButton"), Qt.MouseButton.LeftButton)
    assert attempts == 2
    assert child(window, QStackedWidget, "stateStack").currentWidget().objectName() == (
        "projectsPage"
    )
    assert child(window, QTableView, "projectsTable").model().rowCount() == 4


def test_every_widget_has_an_object_name(qtbot: Any, qloop: Any) -> None:
    async def never() -> AdminClient:
        raise AssertionError("not called")

    window = OverviewPage(OverviewModel(never, source="x"))
    qtbot.addWidget(window)

    # every widget built here carries a name; the insides of Qt's composite widgets (a table's
    # scroll bars and viewport, say) are Qt's business, so the walk does not go into those
    def built(widget: QWidget) -> Iterator[QWidget]:
        for c in widget.children():
            if isinstance(c, QWidget):
                yield c
                if not isinstance(c, QAbstractScrollArea | QProgressBar):
                    yield from built(c)

    widgets = [window, *built(window)]
    assert len(widgets) > 15
    unnamed = [
        f"{type(w).__name__} under {parent.objectName() if (parent := w.parent()) else ''!r}"
        for w in widgets
        if not w.objectName()
    ]
    assert not unnamed, unnamed


def test_the_overviews_requests_leave_before_the_probes(
    qtbot: Any, qloop: Any, arun: Callable[..., Any], demo_sandbox: SandboxProcess, tmp_path: Any
) -> None:
    """The overview loads as the connection opens (the window's first data), beside the probe:
    its requests leave with the probe's first, so the server (one thread, answering in turn)
    answers them before the rest of the probe's; they used to leave after all of them."""
    session = Session(ProfileStore(tmp_path / "config"), health_interval=0)
    model = OverviewModel(session.opened_client, source="test sandbox")
    sent: list[str] = []

    async def hook(request: Any) -> None:
        sent.append(request.url.path)

    def opened() -> None:  # as the main window does (on_session_connection_opened)
        assert session.connection is not None
        session.connection.client._http.event_hooks["request"].append(hook)
        model.load()

    session.connection_opened.connect(opened)
    try:
        session.open_spec(
            ConnectionSpec(url=demo_sandbox.url, token=demo_sandbox.admin_token,
                           client_token=demo_sandbox.client_token, label="test sandbox")
        )  # fmt: skip
        qtbot.waitUntil(lambda: session.state == READY and model.has_data, timeout=30_000)
    finally:
        arun(session.aclose())
    # the three of the overview among the first four: the probe's first request (its own
    # ui-config) may leave beside them, the rest after
    overview = {"/api/admin/projects", "/api/admin/ui-config", "/api/admin/user-admin"}
    assert len(sent) > 4 and overview <= set(sent[:4]), sent
