"""The project dashboard window against real sandboxes over HTTP: owners, roles, events and the
onboarding status as the server returned them; an unknown project; tokens that cannot read the
dashboard; markdown summaries that fetch nothing and open links only when clicked; two dashboards
side by side; F5.

Faults a sandbox cannot produce (Unleash's 500 for an admin API token) come from a transport
that forwards every other request to the real sandbox."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt, QUrl
from PySide6.QtGui import QColor, QDesktopServices, QImage, QTextCursor
from PySide6.QtWidgets import QVBoxLayout, QWidget

from app.api import errors as e
from app.api.client import AdminClient
from app.api.models import CreateFeature, CreateFeatureStrategy, OnboardingStatusFirstFlag
from app.connection import ConnectionSpec
from app.viewmodels.avatars import AvatarCache
from app.viewmodels.dashboard import (
    NEEDS_PAT_TITLE,
    PAT_STEPS,
    SYSTEM_OWNER_NAME,
    explain,
    relative_time,
)
from app.viewmodels.session import Session
from app.viewmodels.tools import TOOLS_BY_KEY, ToolModel
from sandbox import db
from sandbox.process import SandboxProcess
from tests.conftest import REVOKE
from ui.avatar import Avatar
from ui.dashboard import ProjectDashboard
from ui.markdown import MarkdownView, SafeDocument, link_target
from ui.states import StatePanel
from ui.tool_page import ToolPage

# ---------------------------------------------------------------------------- helpers


def png(colour: str) -> bytes:
    image = QImage(8, 8, QImage.Format.Format_ARGB32)
    image.fill(QColor(colour))
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    return bytes(data.data())


def offline_pictures(session: Session) -> list[httpx.Request]:
    """Give the session a picture cache that answers every picture with a small PNG, so tests
    never reach gravatar.com; returns the requests it saw."""
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, content=png("red"), headers={"content-type": "image/png"})

    session._avatars = AvatarCache(transport=httpx.MockTransport(answer), parent=session)
    return seen


def dashboard(qtbot: Any, session: Session) -> ProjectDashboard:
    view = ProjectDashboard(session)
    qtbot.addWidget(view)
    view.resize(900, 700)
    view.show()
    return view


def loaded(qtbot: Any, view: ProjectDashboard, project: str) -> None:
    m = view.model
    qtbot.waitUntil(
        lambda: m.loaded_project == project and m.has_data and not m.busy, timeout=15_000
    )
    assert view.states.state == StatePanel.CONTENT


def failed(qtbot: Any, view: ProjectDashboard) -> None:
    m = view.model
    qtbot.waitUntil(lambda: bool(m.error) and not m.busy, timeout=15_000)
    assert view.states.state == StatePanel.ERROR


def close(view: ProjectDashboard) -> None:
    view.close_content()


def type_project(qtbot: Any, view: ProjectDashboard, text: str) -> None:
    """Type `text` in the picker and press Enter (set, not keyed in: key clicks would open the
    completer's popup, which the offscreen platform warns about)."""
    edit = view.picker.combo.lineEdit()
    edit.setFocus()
    edit.setText(text)
    qtbot.keyClick(edit, Qt.Key.Key_Return)


class Refusing(httpx.AsyncBaseTransport):
    """Unleash 8.2 with an admin API token: 500 on the personal dashboard (for `refused`
    projects, or all of them), every other request forwarded to the real sandbox."""

    def __init__(self, refused: Callable[[str], bool]) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.refused = refused
        self.dashboard_requests: list[str] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        prefix = "/api/admin/personal-dashboard/"
        if request.url.path.startswith(prefix):
            project = request.url.path.removeprefix(prefix)
            self.dashboard_requests.append(project)
            if self.refused(project):
                return httpx.Response(
                    500,
                    json={"id": "0b8c", "name": "UnknownError", "message": "Unexpected error"},
                )
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.fixture
def refusing(monkeypatch: pytest.MonkeyPatch) -> Callable[[Callable[[str], bool]], Refusing]:
    """Connections opened after `refusing(rule)` talk through a `Refusing` transport."""

    def install(rule: Callable[[str], bool]) -> Refusing:
        transport = Refusing(rule)

        def client(spec: ConnectionSpec) -> AdminClient:
            return AdminClient(
                spec.url, spec.token, client_token=spec.client_token, transport=transport
            )

        monkeypatch.setattr(ConnectionSpec, "client", client)
        return transport

    return install


class Pictures(BaseHTTPRequestHandler):
    """A picture server that counts what it is asked."""

    requests: list[str] = []

    def do_GET(self) -> None:
        type(self).requests.append(self.path)
        body = png("blue")
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def picture_server() -> Iterator[tuple[str, list[str]]]:
    """(base URL, paths requested) of a real HTTP server on 127.0.0.1."""
    seen: list[str] = []
    handler = type("CountingPictures", (Pictures,), {"requests": seen})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", seen
    server.shutdown()
    server.server_close()
    thread.join()


def link_point(view: MarkdownView, href: str) -> Any:
    """Where, in the view's viewport, the link to `href` is drawn."""
    for position, length, target in view.links():
        if target == href:
            cursor = QTextCursor(view.document())
            cursor.setPosition(position + length // 2)
            return view.cursorRect(cursor).center()
    raise AssertionError(f"no link to {href} in {view.links()}")


# ---------------------------------------------------------------------------- the happy path


def test_owners_roles_events_and_onboarding_as_the_server_returned_them(
    qtbot: Any,
    sandbox: SandboxProcess,
    personal_token: Callable[[SandboxProcess, str], str],
    connect: Callable[..., Session],
    arun: Callable[..., Any],
) -> None:
    token = personal_token(sandbox, "elena.garcia")
    session = connect(sandbox, token=token)
    pictures = offline_pictures(session)
    client = arun(session.client())
    view = dashboard(qtbot, session)
    titles: list[str] = []
    view.title_changed.connect(titles.append)
    assert view.states.state == StatePanel.EMPTY
    assert view.states.empty_title.text() == "Choose a project"

    # ---- default: no owner (the system owner), the user's root role, ten events
    qtbot.waitUntil(lambda: bool(view.model.choices.choices))
    index = view.picker.combo.findData("default")
    view.picker.combo.setCurrentIndex(index)
    view.picker.combo.activated.emit(index)
    assert view.states.state == StatePanel.LOADING
    loaded(qtbot, view, "default")
    server = arun(client.personal_dashboard("default"))
    assert view.project_title.full_text == "Default (default)"
    assert titles[-1] == "Default (default)"
    rows = view.owner_rows()
    assert [(r.owner.kind, r.name_label.full_text) for r in rows] == [("system", SYSTEM_OWNER_NAME)]
    assert "No user or group holds the Owner role" in rows[0].detail_label.full_text
    assert [b.text() for b in view.role_badges()] == ["Editor · root"]
    assert view.roles_heading.text() == "Roles of Elena García"
    assert view.onboarding_badge.text() == "Onboarded"
    cards = view.event_cards()
    assert len(cards) == len(server.latestEvents) == 10
    for card, event in zip(cards, server.latestEvents, strict=True):
        assert card.author_label.full_text == event.createdBy
        assert event.createdAt is not None
        local = event.createdAt.astimezone().strftime("%Y-%m-%d %H:%M")
        assert card.time_label.text() == local
        assert card.time_label.toolTip().endswith("ago")
        assert card.summary.markdown == event.summary
        assert event.createdBy in card.summary.toPlainText()
        assert "**" not in card.summary.toPlainText()  # rendered, not shown raw
    assert not view.no_events.isVisible()

    # ---- web-shop, typed: two user owners and a group, roles of every type the user holds
    type_project(qtbot, view, "web-shop")
    loaded(qtbot, view, "web-shop")
    assert titles[-1] == "Web shop (web-shop)"
    server = arun(client.personal_dashboard("web-shop"))
    rows = view.owner_rows()
    assert [(r.owner.kind, r.name_label.full_text, r.detail_label.full_text) for r in rows] == [
        ("user", "Elena García", "elena.garcia@example.com"),
        ("user", "Farid Haddad", "farid.haddad@example.com"),
        ("group", "Checkout squad", "Group"),
    ]
    assert [o.ownerType for o in server.owners] == ["user", "user", "group"]
    assert (
        [b.text() for b in view.role_badges()]
        == [f"{r.name} · {r.type}" for r in server.roles]
        == ["Owner · project", "Member · project", "Editor · root"]
    )
    assert "root role on the whole server" in view.role_badges()[2].toolTip()
    assert len(view.event_cards()) == len(server.latestEvents)
    # pictures load in the background, without the connection's token
    qtbot.waitUntil(
        lambda: all(isinstance(r.picture, Avatar) and r.picture.has_picture for r in rows[:2])
    )
    qtbot.waitUntil(lambda: all(c.avatar.has_picture for c in view.event_cards()))
    assert pictures and all("authorization" not in r.headers for r in pictures)
    assert {str(r.url) for r in pictures} >= {o.imageUrl for o in server.owners[:2]}

    # ---- payments: the onboarding badge names the first flag
    view.open_item("payments")
    assert view.picker.combo.currentText() == "Payments (payments)"
    loaded(qtbot, view, "payments")
    server = arun(client.personal_dashboard("payments"))
    assert server.onboardingStatus.status == "first-flag-created"
    assert isinstance(server.onboardingStatus, OnboardingStatusFirstFlag)
    feature = server.onboardingStatus.feature
    assert view.onboarding_badge.text() == f"First flag created: {feature}"
    assert feature in view.onboarding_badge.toolTip()
    close(view)


def test_a_project_without_events_says_so_and_f5_loads_again(
    qtbot: Any,
    sandbox: SandboxProcess,
    personal_token: Callable[[SandboxProcess, str], str],
    connect: Callable[..., Session],
    arun: Callable[..., Any],
) -> None:
    session = connect(sandbox, token=personal_token(sandbox, "elena.garcia"))
    offline_pictures(session)
    client = arun(session.client())
    page = ToolPage(ToolModel(TOOLS_BY_KEY["project_dashboard"], session))
    qtbot.addWidget(page)
    page.resize(900, 700)
    page.show()
    page.open_item("mobile-app")
    view = page.tool_content
    assert isinstance(view, ProjectDashboard)
    loaded(qtbot, view, "mobile-app")
    assert view.event_cards() == []
    assert view.no_events.isVisible()
    assert view.no_events_label.text() == "No events in Mobile app yet"
    assert view.onboarding_badge.text() == "Onboarding started"
    assert [r.owner.kind for r in view.owner_rows()] == ["system"]

    # a flag is made elsewhere; F5 shows it
    arun(client.create_feature("mobile-app", CreateFeature(name="push-v2")))
    before = view.model.details
    page.activateWindow()
    qtbot.waitUntil(page.isActiveWindow)
    view.picker.combo.lineEdit().setFocus()
    qtbot.keyClick(view.picker.combo.lineEdit(), Qt.Key.Key_F5)
    qtbot.waitUntil(lambda: view.model.details is not before and not view.model.busy)
    assert view.states.state == StatePanel.CONTENT
    assert not view.no_events.isVisible()
    cards = view.event_cards()
    assert len(cards) == 1
    assert cards[0].author_label.full_text == "elena.garcia"
    assert "push-v2" in cards[0].summary.toPlainText()
    assert view.onboarding_badge.text() == "First flag created: push-v2"
    assert view.events_heading.text() == "Latest events (1)"
    page.close_page()


# ---------------------------------------------------------------------------- failures


def test_an_unknown_project_is_named_and_what_was_typed_stays(
    qtbot: Any, demo_sandbox: SandboxProcess, connect: Callable[..., Session]
) -> None:
    session = connect(demo_sandbox)
    offline_pictures(session)
    view = dashboard(qtbot, session)
    type_project(qtbot, view, "no-such-project")
    failed(qtbot, view)
    assert view.states.error_title.text() == "No project no-such-project on this server"
    assert session.last_error.splitlines()[0] == "No project no-such-project on this server"
    assert "pick a project from the list" in view.states.error_label.text()
    assert "404" not in view.states.error_label.text()
    assert view.states.retry_button.isVisible()
    assert view.picker.combo.currentText() == "no-such-project"
    # Retry asks again, and still keeps the text
    qtbot.mouseClick(view.states.retry_button, Qt.MouseButton.LeftButton)
    failed(qtbot, view)
    assert view.picker.combo.currentText() == "no-such-project"
    # the project list arriving later does not wipe it either
    view.model.choices.load()
    qtbot.waitUntil(lambda: not view.model.choices.busy)
    assert view.picker.combo.currentText() == "no-such-project"
    # and a real project after that shows
    type_project(qtbot, view, "default")
    loaded(qtbot, view, "default")
    assert not view.model.error
    close(view)


def test_an_admin_token_refused_at_request_time_gets_the_personal_token_steps(
    qtbot: Any,
    demo_sandbox: SandboxProcess,
    connect: Callable[..., Session],
    refusing: Callable[[Callable[[str], bool]], Refusing],
) -> None:
    # the probe (which reads `default`) passes; the project asked for gets Unleash's 500
    transport = refusing(lambda project: project != "default")
    session = connect(demo_sandbox)
    assert session.capabilities is not None
    assert session.capabilities.token_kind == "admin"
    assert session.capabilities.operation("project_dashboard").available
    offline_pictures(session)
    view = dashboard(qtbot, session)
    type_project(qtbot, view, "web-shop")
    failed(qtbot, view)
    assert transport.dashboard_requests[-1] == "web-shop"
    assert view.model.needs_personal_token
    assert view.states.error_title.text() == NEEDS_PAT_TITLE
    text = view.states.error_label.text()
    assert "admin API token has no user" in text
    assert "Profile > Personal API tokens > New token" in text
    assert "File > Connections" in text
    assert "500" not in text and "UnknownError" not in text  # never the raw error
    assert view.picker.combo.currentText() == "web-shop"
    assert session.last_error.splitlines()[0] == NEEDS_PAT_TITLE  # what the status bar shows
    close(view)


def test_an_admin_token_ruled_out_by_the_probe_explains_and_sends_nothing(
    qtbot: Any,
    demo_sandbox: SandboxProcess,
    connect: Callable[..., Session],
    refusing: Callable[[Callable[[str], bool]], Refusing],
) -> None:
    transport = refusing(lambda project: True)
    session = connect(demo_sandbox)
    assert session.capabilities is not None
    assert not session.capabilities.operation("project_dashboard").available
    assert transport.dashboard_requests == ["default"]  # the probe's
    offline_pictures(session)
    page = ToolPage(ToolModel(TOOLS_BY_KEY["project_dashboard"], session))
    qtbot.addWidget(page)
    page.show()
    view = page.tool_content
    assert isinstance(view, ProjectDashboard)
    assert page.banner.isVisible()
    assert view.states.state == StatePanel.EMPTY
    assert view.states.empty_title.text() == NEEDS_PAT_TITLE
    assert view.states.empty_label.text() == PAT_STEPS
    view.open_item("web-shop")
    qtbot.keyClick(page, Qt.Key.Key_F5)
    qtbot.wait(200)
    assert transport.dashboard_requests == ["default"]
    assert view.states.state == StatePanel.EMPTY
    page.close_page()


def test_a_revoked_personal_token_gets_the_steps_to_make_a_new_one(
    qtbot: Any,
    sandbox: SandboxProcess,
    personal_token: Callable[[SandboxProcess, str], str],
    connect: Callable[..., Session],
) -> None:
    token = personal_token(sandbox, "farid.haddad")
    session = connect(sandbox, token=token)
    offline_pictures(session)
    view = dashboard(qtbot, session)
    view.open_item("web-shop")
    loaded(qtbot, view, "web-shop")
    conn = db.connect(sandbox.db)
    try:
        with conn:
            conn.execute(REVOKE, (token,))
    finally:
        conn.close()
    view.refresh()
    failed(qtbot, view)
    assert view.states.error_title.text() == NEEDS_PAT_TITLE
    text = view.states.error_label.text()
    assert "expired or been deleted" in text and PAT_STEPS in text
    assert "401" not in text and "AuthenticationRequired" not in text
    assert view.picker.value == "web-shop"
    close(view)


def test_failures_are_explained_by_kind() -> None:
    pat = explain(e.Unauthorized(401, "AuthenticationRequired", "no"), "p", "personal")
    assert pat[0] == NEEDS_PAT_TITLE and pat[2] and PAT_STEPS in pat[1]
    admin = explain(e.Forbidden(403, "NoAccessError", "no"), "p", "admin")
    assert admin[0] == NEEDS_PAT_TITLE and admin[2]
    user = explain(e.Forbidden(403, "NoAccessError", "no"), "p", "personal", "Ada")
    assert user[0] == "No access to the dashboard of p" and "Ada may not read" in user[1]
    server = explain(e.ServerError(500, "UnknownError", "boom"), "p", "admin")
    assert server[0] == NEEDS_PAT_TITLE and "500" not in server[1]
    # a server error with a personal access token is a server error, said as such
    broken = explain(e.ServerError(500, "UnknownError", "boom"), "p", "personal")
    assert broken == ("Could not load the dashboard of p", "500 UnknownError: boom", False)
    missing = explain(e.NotFound(404, "NotFoundError", "Could not find project"), "p", "admin")
    assert missing == (
        "No project p on this server",
        "Check the project id, or pick a project from the list.",
        False,
    )
    route = explain(e.NotFound(404, "NotFound", "The path you were looking for"), "p", "admin")
    assert route[0] == "This server has no project dashboard"


def test_relative_times() -> None:
    now = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
    assert relative_time(now - timedelta(seconds=10), now) == "just now"
    assert relative_time(now - timedelta(seconds=70), now) == "1 minute ago"
    assert relative_time(now - timedelta(minutes=42), now) == "42 minutes ago"
    assert relative_time(now - timedelta(hours=3, minutes=5), now) == "3 hours ago"
    assert relative_time(now - timedelta(days=2), now) == "2 days ago"
    assert relative_time(now - timedelta(days=75), now) == "2 months ago"
    assert relative_time(now - timedelta(days=800), now) == "2 years ago"
    assert relative_time(now + timedelta(hours=2), now) == "in 2 hours"


# ---------------------------------------------------------------------------- markdown


def test_links_are_opened_only_when_they_are_safe() -> None:
    base = "https://unleash.example.com"
    assert link_target("https://docs.example.com/x", base) == QUrl("https://docs.example.com/x")
    assert link_target("/projects/p/features/f", base) == QUrl(
        "https://unleash.example.com/projects/p/features/f"
    )
    assert link_target("mailto:ops@example.com", base) == QUrl("mailto:ops@example.com")
    for bad in ("javascript:alert(1)", "file:///etc/passwd", "data:text/html,x", "", "http://"):
        assert link_target(bad, base) is None, bad
    assert link_target("/projects/p", "") is None  # relative with no server


def test_summaries_fetch_nothing_and_open_links_only_on_click(
    qtbot: Any,
    sandbox: SandboxProcess,
    connect: Callable[..., Session],
    arun: Callable[..., Any],
    picture_server: tuple[str, list[str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pictures_url, picture_requests = picture_server
    image = f"{pictures_url}/img.png"
    asked: list[str] = []

    def load_resource(self: Any, kind: int, url: QUrl) -> None:
        asked.append(url.toString())
        return None

    monkeypatch.setattr(SafeDocument, "loadResource", load_resource)
    monkeypatch.setattr(MarkdownView, "loadResource", load_resource)
    opened: list[QUrl] = []

    def open_url(url: QUrl) -> bool:
        opened.append(url)
        return True

    monkeypatch.setattr(QDesktopServices, "openUrl", open_url)

    session = connect(sandbox)
    offline_pictures(session)
    client = arun(session.client())
    arun(client.create_feature("default", CreateFeature(name="md-test")))
    for name in (
        f"![x]({image})",
        "[the guide](https://docs.example.com/guide)",
        "[run me](javascript:alert(1))",
        f"<img src='{image}'>",
    ):
        arun(client.add_strategy("default", "md-test", "development",
                                 CreateFeatureStrategy(name=name)))  # fmt: skip
    view = dashboard(qtbot, session)
    view.open_item("default")
    loaded(qtbot, view, "default")
    # newest first: the strategies in reverse order, then the flag's creation
    raw_html, javascript, guide, picture, created = (c.summary for c in view.event_cards()[:5])
    view.grab()  # lay out and paint everything
    qtbot.wait(300)
    assert asked == []  # no resource was even asked for
    assert picture_requests == []  # and nothing reached the picture server

    # the image is a link with its alt text; raw HTML is text
    assert image in [href for _, _, href in picture.links()]
    assert "added strategy x to md-test" in picture.toPlainText()
    assert f"<img src='{image}'>" in raw_html.toPlainText()
    assert raw_html.links() == []
    assert opened == []

    # hovering says where a link goes; nothing opens until a click
    qtbot.mouseMove(guide.viewport(), link_point(guide, "https://docs.example.com/guide"))
    assert guide.toolTip() == "Open https://docs.example.com/guide in the browser"
    assert opened == []
    qtbot.mouseClick(
        guide.viewport(),
        Qt.MouseButton.LeftButton,
        pos=link_point(guide, "https://docs.example.com/guide"),
    )
    assert opened == [QUrl("https://docs.example.com/guide")]
    # links relative to the server are opened on the server
    href = "/projects/default/features/md-test"
    qtbot.mouseClick(created.viewport(), Qt.MouseButton.LeftButton,
                     pos=link_point(created, href))  # fmt: skip
    assert opened[-1] == QUrl(f"{sandbox.url}{href}")
    # a javascript: link is never opened
    with qtbot.waitSignal(javascript.link_refused):
        qtbot.mouseClick(
            javascript.viewport(),
            Qt.MouseButton.LeftButton,
            pos=link_point(javascript, "javascript:alert(1)"),
        )
    assert len(opened) == 2
    # from the keyboard: Tab reaches the link, Enter opens it
    guide.setFocus()
    qtbot.keyClick(guide, Qt.Key.Key_Tab)
    qtbot.keyClick(guide, Qt.Key.Key_Return)
    assert opened[-1] == QUrl("https://docs.example.com/guide") and len(opened) == 3
    assert picture_requests == [] and asked == []
    close(view)


def test_a_long_summary_wraps_inside_its_width(qtbot: Any) -> None:
    holder = QWidget()
    layout = QVBoxLayout(holder)
    view = MarkdownView()
    layout.addWidget(view)
    qtbot.addWidget(holder)
    holder.resize(300, 400)
    word = "an-extremely-long-flag-name-" * 8
    view.set_markdown(f"**someone** changed `{word}` and said " + "more words here " * 20)
    holder.show()
    qtbot.waitExposed(holder)
    line = view.fontMetrics().height()
    assert view.width() <= 300
    assert view.height() > 4 * line  # wrapped over several lines, none cut off
    assert view.document().size().width() <= view.viewport().width() + 1
    assert view.height() >= view.document().size().height()


# ---------------------------------------------------------------------------- side by side


def test_two_dashboards_side_by_side_are_independent(
    qtbot: Any, demo_sandbox: SandboxProcess, connect: Callable[..., Session]
) -> None:
    session = connect(demo_sandbox)
    offline_pictures(session)
    left, right = dashboard(qtbot, session), dashboard(qtbot, session)
    left_titles: list[str] = []
    left.title_changed.connect(left_titles.append)
    left.open_item("web-shop")
    right.open_item("payments")
    loaded(qtbot, left, "web-shop")
    loaded(qtbot, right, "payments")
    assert left.project_title.full_text == "Web shop (web-shop)"
    assert right.project_title.full_text == "Payments (payments)"
    assert [r.name_label.full_text for r in left.owner_rows()] == [
        "Elena García",
        "Farid Haddad",
        "Checkout squad",
    ]
    assert [r.name_label.full_text for r in right.owner_rows()] == ["Keiko Sato"]
    assert left.onboarding_badge.text() == "Onboarded"
    assert right.onboarding_badge.text().startswith("First flag created: ")
    # the sandbox's admin API token is no user: the root Admin role alone, in every project
    assert left.roles_heading.text() == right.roles_heading.text() == "Your roles"
    assert [b.text() for b in left.role_badges()] == ["Admin · root"]
    assert [b.text() for b in right.role_badges()] == ["Admin · root"]

    # one fails, the other is untouched; one reloads, the other does not
    right_details = right.model.details
    type_project(qtbot, left, "nope")
    failed(qtbot, left)
    assert right.states.state == StatePanel.CONTENT and right.model.details is right_details
    left.open_item("web-shop")
    loaded(qtbot, left, "web-shop")
    assert right.model.details is right_details
    assert "nope" in left_titles and left_titles[-1] == "Web shop (web-shop)"
    close(left)
    close(right)


def test_the_latest_choice_wins_when_answers_cross(
    qtbot: Any, demo_sandbox: SandboxProcess, connect: Callable[..., Session]
) -> None:
    session = connect(demo_sandbox)
    offline_pictures(session)
    view = dashboard(qtbot, session)
    view.open_item("web-shop")
    view.open_item("payments")
    loaded(qtbot, view, "payments")
    qtbot.wait(200)
    assert view.model.loaded_project == "payments"
    assert [r.name_label.full_text for r in view.owner_rows()] == ["Keiko Sato"]
    close(view)
