"""The skeleton every tool's window shares, driven through each real tool against a sandbox over
HTTP: the view-model's `phase` (`ToolViewModel`: waiting, unavailable, loading, failed, empty,
ready) shown on the window's `StatePanel` by `ToolContent.show_phase`, F5 and Retry
(`ToolContent.refresh`), closing (`ToolContent.close_content`).

The tools are every tool of the registry whose window needs a connection: a tool added to the
registry and to `ui.tool_page.WINDOWS` is tested here with nothing to write (only, when its window
shows nothing until something is chosen, the item to open in `ITEMS`; when the demo data holds
nothing it lists, what to plant in `PLANTED`). The metrics tool is the
exception, tested for it below: it reads and checks files with no connection
(`usable_when_unavailable`), so it never waits for one nor is unavailable."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import qasync
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QWidget

from app.connection import ConnectionSpec
from app.profiles import ProfileStore
from app.registry import TOOLS, TOOLS_BY_KEY
from app.viewmodels.avatars import AvatarCache
from app.viewmodels.session import FAILED, READY, Session
from app.viewmodels.tools import LoadPhase, ToolModel, ToolViewModel
from sandbox import db
from sandbox.process import SandboxProcess
from tests.conftest import RESTORE, REVOKE, personal_token_of
from tests.faults import closed_port
from ui.states import StatePanel
from ui.tool_content import ToolContent
from ui.tool_page import ToolPage, content_class

#: what to open in a tool whose window shows nothing until something is chosen
ITEMS: dict[str, str] = {
    "project_dashboard": "default",
    "archived_features": "web-shop",
    "context_usage": "region",
    # issue 36: the project access window shows nothing until a project is chosen
    "project_access": "web-shop",
}

#: the tools that a sandbox's admin API token cannot serve: the token each is opened with (the
#: connected user's personal access tokens need one of that user's: issue 36)
TOKENS: dict[str, Callable[[SandboxProcess], str]] = {
    "personal_tokens": lambda sb: personal_token_of(sb, "admin"),
}


def _plant_banner(sb: SandboxProcess) -> None:
    httpx.post(f"{sb.url}/api/admin/banners", json={"message": "Planted for the skeleton"},
               headers={"Authorization": sb.admin_token}).raise_for_status()  # fmt: skip


#: what a tool lists that the demo data holds none of (its window would be empty, never ready):
#: planted on a sandbox of the test's own before the tool opens (issue 38: the demo plants no
#: banners, as other tests count the demo's banners and events)
PLANTED: dict[str, Callable[[SandboxProcess], None]] = {
    "banners": _plant_banner,
}

#: the tools whose window needs a connection (all but those usable without one)
CONNECTED_TOOLS = [
    tool.key
    for tool in TOOLS
    if (cls := content_class(tool)) is not None and not cls.usable_when_unavailable
]


def test_every_tool_but_the_metrics_tool_follows_the_connection() -> None:
    # issue 37, slice 5: Compare too compares two files with no server (tested below)
    assert set(CONNECTED_TOOLS) == set(TOOLS_BY_KEY) - {"metrics_upload", "compare"}


# ---------------------------------------------------------------------------- helpers


@pytest.fixture
def unconnected(
    qtbot: Any, qloop: qasync.QEventLoop, arun: Callable[..., Any], tmp_path: Path
) -> Iterator[Session]:
    """A session that has opened nothing yet (closed after the test); people's pictures are
    answered 404 at once, never fetched from the network."""
    session = Session(ProfileStore(tmp_path / "config-unconnected"))
    session.avatars = AvatarCache(transport=httpx.MockTransport(lambda _: httpx.Response(404)))
    yield session
    arun(session.aclose())


def open_sandbox(session: Session, sb: SandboxProcess, token: str | None = None) -> None:
    session.open_spec(
        ConnectionSpec(url=sb.url, token=token or sb.admin_token, client_token=sb.client_token,
                       label="skeleton sandbox")
    )  # fmt: skip


def page_of(qtbot: Any, key: str, session: Session) -> tuple[ToolPage, ToolContent]:
    page = ToolPage(ToolModel(TOOLS_BY_KEY[key], session))
    qtbot.addWidget(page)
    page.resize(1100, 700)
    page.show()
    content = page.tool_content
    assert content is not None
    return page, content


def panel(content: ToolContent) -> StatePanel:
    assert content.states is not None, f"{type(content).__name__} shows no StatePanel"
    return content.states


def press_f5(qtbot: Any, page: ToolPage) -> None:
    """F5 as a person presses it: in the page's window, from a widget that has the focus."""
    page.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is page)
    target = next(
        w
        for w in page.findChildren(QWidget)
        if w.focusPolicy() != Qt.FocusPolicy.NoFocus and w.isVisible() and w.isEnabled()
    )
    target.setFocus()
    qtbot.keyClick(target, Qt.Key.Key_F5)


def wait_phase(qtbot: Any, model: ToolViewModel, phase: LoadPhase, timeout: int = 20_000) -> None:
    qtbot.waitUntil(lambda: model.phase is phase and not model.busy, timeout=timeout)


def run_sql(sb: SandboxProcess, sql: str, *args: object) -> None:
    conn = db.connect(sb.db)
    try:
        with conn:
            conn.execute(sql, args)
    finally:
        conn.close()


def token_of(key: str, sb: SandboxProcess) -> str:
    """The token the tool `key` is opened with: the sandbox's admin API token, or `TOKENS`'."""
    return TOKENS[key](sb) if key in TOKENS else sb.admin_token


def revoke(sb: SandboxProcess, token: str) -> None:
    run_sql(sb, REVOKE, token)


def restore(sb: SandboxProcess, token: str) -> None:
    """Give `token` back as it was: an admin API token, or the personal access token of the
    user "admin" (its row among that user's tokens too, which the revocation took with it)."""
    if token == sb.admin_token:
        run_sql(sb, RESTORE, token)
        return
    run_sql(sb, "INSERT INTO tokens(secret_hash, kind, user_id, created_at) VALUES("
            "token_hash(?), 'personal', (SELECT id FROM users WHERE username = 'admin'), 0)",
            token)  # fmt: skip
    run_sql(sb, "INSERT INTO personal_access_tokens(secret_hash, description, expires_at)"
            " VALUES(token_hash(?), 'restored', 4070908800000)", token)  # fmt: skip


def is_in_order(seen: list[LoadPhase], wanted: list[LoadPhase]) -> bool:
    """`wanted` appears in `seen` in this order (other phases between them allowed)."""
    rest = iter(seen)
    return all(phase in rest for phase in wanted)


# ---------------------------------------------------------------------------- the skeleton


@pytest.mark.parametrize("key", CONNECTED_TOOLS)
def test_waits_then_loads_f5_loads_again_a_failure_retries_and_closing_cancels(
    qtbot: Any, unconnected: Session, sandbox: SandboxProcess, key: str
) -> None:
    session = unconnected
    page, content = page_of(qtbot, key, session)
    m = content.model
    states = panel(content)
    seen: list[LoadPhase] = []
    m.phase_changed.connect(lambda: seen.append(m.phase))

    # ---- no connection yet: waiting for it, nothing sent
    assert m.phase is LoadPhase.WAITING
    assert states.state == StatePanel.LOADING
    assert states.loading_label.text() == (m.waiting_text or "Loading…")
    assert not m.busy

    # ---- the connection opens: loading, then ready
    if key in PLANTED:
        PLANTED[key](sandbox)
    token = token_of(key, sandbox)
    open_sandbox(session, sandbox, token)
    qtbot.waitUntil(lambda: session.state in (READY, FAILED), timeout=30_000)
    assert session.state == READY, session.message
    if key in ITEMS:
        wait_phase(qtbot, m, LoadPhase.EMPTY)  # nothing chosen yet: the window asks for it
        assert states.state == StatePanel.EMPTY
        assert states.empty_title.text() == m.empty_title
        content.open_item(ITEMS[key])
    wait_phase(qtbot, m, LoadPhase.READY)
    assert states.state == StatePanel.CONTENT
    assert is_in_order(seen, [LoadPhase.WAITING, LoadPhase.LOADING, LoadPhase.READY]), seen

    # ---- F5 loads again
    with qtbot.waitSignal(m.busy_changed, check_params_cb=lambda busy: busy, timeout=5_000):
        press_f5(qtbot, page)
    wait_phase(qtbot, m, LoadPhase.READY)
    assert states.state == StatePanel.CONTENT

    # ---- a failed load: its error and Retry, which loads again
    revoke(sandbox, token)
    press_f5(qtbot, page)
    wait_phase(qtbot, m, LoadPhase.FAILED)
    assert states.state == StatePanel.ERROR
    assert states.error_title.text() == m.failed_title
    assert states.error_label.text() == m.failed_text != ""
    assert states.retry_button.isVisible()
    restore(sandbox, token)
    qtbot.mouseClick(states.retry_button, Qt.MouseButton.LeftButton)
    assert m.busy  # Retry started the load at once
    wait_phase(qtbot, m, LoadPhase.READY)
    assert states.state == StatePanel.CONTENT
    assert not m.error

    # ---- closing cancels what runs, and the model says nothing more
    press_f5(qtbot, page)
    running = m.tasks
    assert running
    said = len(seen)
    page.close_page()
    assert m.closed
    qtbot.waitUntil(lambda: all(t.done() for t in running), timeout=5_000)
    assert all(t.cancelled() for t in running)
    qtbot.wait(50)
    assert len(seen) == said


@pytest.mark.parametrize("key", CONNECTED_TOOLS)
def test_a_token_that_cannot_serve_the_tool_says_why_and_sends_nothing(
    qtbot: Any, connect: Callable[..., Session], demo_sandbox: SandboxProcess, key: str
) -> None:
    """A client token as the connection's token: every tool of the admin API is unavailable,
    the window saying why as the page's banner does; F5, Retry and opening an item send
    nothing."""
    session = connect(demo_sandbox, demo_sandbox.client_token)
    page, content = page_of(qtbot, key, session)
    m = content.model
    states = panel(content)
    assert m.phase is LoadPhase.UNAVAILABLE
    assert states.state == StatePanel.EMPTY
    assert states.empty_title.text() == m.unavailable_title
    assert states.empty_label.text() == m.unavailable_reason
    assert page.banner.isVisible() and page.reason.text()
    assert "client token" in states.empty_label.text()
    assert page.reason.text() == states.empty_label.text()

    press_f5(qtbot, page)  # from the banner's Connections… button: the content is disabled
    states.retry_requested.emit()
    content.open_item(ITEMS.get(key, 1))
    assert not m.busy and not m.tasks
    assert m.phase is LoadPhase.UNAVAILABLE
    page.close_page()


@pytest.mark.parametrize("key", CONNECTED_TOOLS)
def test_a_failed_connection_says_not_connected_and_why(
    qtbot: Any, connect: Callable[..., Session], demo_sandbox: SandboxProcess, key: str,
    request: pytest.FixtureRequest,
) -> None:  # fmt: skip
    """The connection goes to a server that does not answer: whatever the window showed, it
    says it is not connected and the session's reason (the archive and the context usage
    windows said "Choose a project" / "Choose a context field" here, under the banner)."""
    # a token of its own is made, and data planted, on a sandbox of its own: the demo one is
    # shared
    sb = request.getfixturevalue("sandbox") if key in TOKENS or key in PLANTED else demo_sandbox
    if key in PLANTED:
        PLANTED[key](sb)
    session = connect(sb, token_of(key, sb))
    page, content = page_of(qtbot, key, session)
    m = content.model
    states = panel(content)
    if key in ITEMS:
        content.open_item(ITEMS[key])
    wait_phase(qtbot, m, LoadPhase.READY)

    session.open_spec(ConnectionSpec(url=f"http://127.0.0.1:{closed_port()}",
                                     token=demo_sandbox.admin_token, label="gone"))  # fmt: skip
    assert m.phase is LoadPhase.WAITING and states.state == StatePanel.LOADING
    qtbot.waitUntil(lambda: session.state == FAILED, timeout=30_000)
    assert m.phase is LoadPhase.UNAVAILABLE
    assert states.state == StatePanel.EMPTY
    assert states.empty_title.text() == m.unavailable_title
    assert session.message and session.message in states.empty_label.text()
    assert not m.busy and not m.tasks
    page.close_page()


# ---------------------------------------------------------------------------- the exception


def test_the_metrics_tool_works_without_a_connection(qtbot: Any, unconnected: Session) -> None:
    """Files are read and checked with no connection: the window is enabled under the banner,
    its files part empty (not waiting for a connection), and F5 reads the files again."""
    page, content = page_of(qtbot, "metrics_upload", unconnected)
    m = content.model
    assert page.banner.isVisible() and page.content.isEnabled()
    assert m.phase is LoadPhase.EMPTY
    assert content.states is None  # its files part has a panel of its own
    page.refresh()
    assert m.phase is LoadPhase.EMPTY
    page.close_page()
    assert m.closed


# issue 37, slice 5: the Compare window, the other exception


def test_the_compare_tool_works_without_a_connection(
    qtbot: Any, unconnected: Session, connect: Callable[..., Session],
    demo_sandbox: SandboxProcess,
) -> None:  # fmt: skip
    """Two snapshot files compare with no server: with no connection, and with a token that
    cannot read a snapshot (a client token), the page says why under its banner and the window
    stays enabled, asking for two sides (never waiting for the connection); F5 with no sides
    sends nothing."""
    for session in (unconnected, connect(demo_sandbox, demo_sandbox.client_token)):
        page, content = page_of(qtbot, "compare", session)
        m = content.model
        states = panel(content)
        assert page.banner.isVisible() and page.reason.text()
        assert page.content.isEnabled()
        assert m.phase is LoadPhase.EMPTY and states.state == StatePanel.EMPTY
        assert states.empty_title.text() == m.empty_title == "Nothing compared yet"
        page.refresh()
        assert not m.busy and not m.tasks
        page.close_page()
        assert m.closed
