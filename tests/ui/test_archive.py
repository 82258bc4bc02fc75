"""The archived feature browser against real sandboxes: a project's archived flags (rows, count,
default order, detail pane, filter, copy, CSV), a project without any, an unknown project, F5, a
server that goes away (error, Retry), 100,000 flags, and a server without the archive endpoint
(an emulated Unleash 8.2, as in tests/api/test_fallbacks.py: the sandbox always serves it)."""

from __future__ import annotations

import csv
import socket
import sqlite3
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QLabel, QWidget

from app.api.client import AdminClient
from app.api.models import ArchivedFeature, ArchivedFeatureEnvironment, CreateFeature
from app.connection import ConnectionSpec
from app.profiles import ProfileStore
from app.viewmodels.archive import (
    ARCHIVED_COLUMN,
    COLUMNS,
    CONTENT,
    EMPTY,
    ERROR,
    IDLE,
    LOADING,
    environments,
    last_seen,
    last_seen_source,
)
from app.viewmodels.session import FAILED, READY, Session
from app.viewmodels.table import MISSING, cell_text
from sandbox.process import SandboxProcess
from tests.api.test_fallbacks import ARCHIVED, FAST, TOKEN, Sleeps, Unleash82
from ui.archive import NO_SELECTION, ArchiveBrowser
from ui.tool_page import ToolPage

TITLES = [c.title for c in COLUMNS]


@pytest.fixture
def open_page(tool_page: Callable[..., ToolPage]) -> Callable[[Session], ToolPage]:
    """`open_page(session)`: the archived features page, shown, its window built."""

    def make(session: Session) -> ToolPage:
        page = tool_page("archived_features", session)
        assert isinstance(page.tool_content, ArchiveBrowser)
        return page

    return make


def browser(page: ToolPage) -> ArchiveBrowser:
    assert isinstance(page.tool_content, ArchiveBrowser)
    return page.tool_content


def wait_state(qtbot: Any, content: ArchiveBrowser, state: str, timeout: int = 20_000) -> None:
    qtbot.waitUntil(lambda: content.model.state == state, timeout=timeout)
    assert content.states.state == {CONTENT: "content", ERROR: "error"}.get(state, "empty")


def choose(qtbot: Any, content: ArchiveBrowser, project: str) -> None:
    """Put a project id in the picker and press Enter (the text is set rather than typed: typed
    keys open the completer's popup, which the offscreen platform cannot raise)."""
    content.picker.combo.setEditText(project)
    qtbot.keyClick(content.picker.combo.lineEdit(), Qt.Key.Key_Return)


def press_f5(qtbot: Any, page: ToolPage) -> None:
    page.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is page)
    browser(page).table.view.setFocus()
    qtbot.keyClick(browser(page).table.view, Qt.Key.Key_F5)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# ---------------------------------------------------------------------------- the happy path


def test_the_columns_fit_the_page_without_scrolling_sideways(
    qtbot: Any,
    connect: Callable[..., Session],
    demo_sandbox: SandboxProcess,
    open_page: Callable[[Session], ToolPage],
) -> None:
    """At the main window's default size every column shown fits, the description taking the
    width left; the creation date and impression data (in the details below) start hidden."""
    content = browser(open_page(connect(demo_sandbox)))
    choose(qtbot, content, "web-shop")
    wait_state(qtbot, content, CONTENT)
    table = content.table.view
    header = table.horizontalHeader()
    shown = [TITLES[c] for c in range(header.count()) if not header.isSectionHidden(c)]
    assert shown == ["Name", "Type", "Description", "Archived", "Stale", "Last seen"]
    qtbot.waitUntil(lambda: table.isVisible() and table.viewport().width() > 0)
    assert header.length() <= table.viewport().width()
    assert not table.horizontalScrollBar().isVisible()
    widest = max(table.fontMetrics().horizontalAdvance(r.description or "")
                 for r in content.model.table.rows)  # fmt: skip
    assert header.sectionSize(2) > widest  # no demo description is cut


def test_a_projects_archived_flags_with_count_order_details_filter_copy_and_csv(
    qtbot: Any,
    arun: Callable[..., Any],
    connect: Callable[..., Session],
    demo_sandbox: SandboxProcess,
    open_page: Callable[[Session], ToolPage],
    tmp_path: Path,
) -> None:
    session = connect(demo_sandbox)
    client: AdminClient = arun(session.client())
    expected: list[ArchivedFeature] = arun(client.archived_features("default")).features
    assert len(expected) > 3  # the demo archives some flags of every project but mobile-app

    page = open_page(session)
    content = browser(page)
    model = content.model
    assert model.state == IDLE
    assert content.states.empty_title.text() == "Choose a project"
    assert page.note.isHidden()  # the sandbox has the archive endpoint: no note
    qtbot.waitUntil(lambda: bool(model.projects.choices))

    choose(qtbot, content, "default")
    assert model.state == LOADING and content.states.state == "loading"
    assert "project Default (default)" in content.states.loading_label.text()
    wait_state(qtbot, content, CONTENT)

    # rows and count as the server sent them, newest archived first
    table = model.table
    assert table.total_count == len(expected)
    assert content.table.count_label.text() == f"{len(expected)} archived flags"
    assert {f.name for f in table.rows} == {f.name for f in expected}
    archived = [f.archivedAt for f in table.rows]
    assert all(a is not None for a in archived)
    assert archived == sorted(archived, reverse=True)  # type: ignore[type-var]
    header = content.table.view.horizontalHeader()
    assert header.sortIndicatorSection() == ARCHIVED_COLUMN
    assert header.sortIndicatorOrder() == Qt.SortOrder.DescendingOrder
    first = table.rows[0]
    assert table.row_texts(0) == [
        first.name,
        first.type,
        first.description or MISSING,
        cell_text(first.createdAt),
        cell_text(first.archivedAt),
        cell_text(first.stale),
        cell_text(first.impressionData),
        cell_text(last_seen(first)),
    ]
    assert [table.headerData(i, Qt.Orientation.Horizontal) for i in range(8)] == TITLES

    # the detail pane: a hint until a flag is selected, then its fields and environments
    detail = content.detail
    assert detail.currentWidget() is detail.empty_label
    assert detail.empty_label.text() == NO_SELECTION
    seen = next(i for i, f in enumerate(table.rows) if environments(f))
    content.table.view.setCurrentIndex(table.index(seen, 0))
    flag = table.rows[seen]
    assert model.selected is flag
    assert detail.currentWidget() is detail.detail_page
    assert detail.name_label.text() == flag.name
    assert detail.values["Project"].text() == "default"
    assert detail.values["Archived"].text() == cell_text(flag.archivedAt)
    envs = model.environments
    assert [envs.text(r, 0) for r in range(envs.rowCount())] == [e.name for e in environments(flag)]
    assert [envs.text(r, 1) for r in range(envs.rowCount())] == [
        cell_text(e.enabled) for e in environments(flag)
    ]
    assert detail.environments_view.isVisible() and detail.no_environments.isHidden()

    # the filter: every word, any cell, any case; the selection follows its flag
    kind = flag.type or ""
    content.table.filter_edit.setText(kind.upper())
    wanted = [f for f in expected if f.type == kind]
    assert {f.name for f in table.rows} == {f.name for f in wanted}
    assert content.table.count_label.text() == f"{len(wanted)} of {len(expected)} archived flags"
    current = content.table.view.currentIndex()
    assert current.isValid() and table.row_at(current.row()) is flag

    # Ctrl+C copies the selected rows
    QGuiApplication.clipboard().clear()
    content.table.view.setFocus()
    qtbot.keyClick(content.table.view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QGuiApplication.clipboard().text().split("\t")[0] == flag.name

    # CSV: the rows shown, in the order shown, with the column titles
    path = tmp_path / "archived.csv"
    task = content.table.export(str(path))
    qtbot.waitUntil(task.done)
    assert task.result() == len(wanted)
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert rows[0] == TITLES
    assert [r[0] for r in rows[1:]] == [f.name for f in table.rows]
    assert rows[1][ARCHIVED_COLUMN] == cell_text(table.rows[0].archivedAt)
    # the count says so from the task's done callback, a turn of the loop after the task ends
    qtbot.waitUntil(lambda: f"{len(wanted)} exported" in content.table.count_label.text())


def test_a_project_without_archived_flags_and_an_unknown_project_say_so(
    qtbot: Any,
    connect: Callable[..., Session],
    demo_sandbox: SandboxProcess,
    open_page: Callable[[Session], ToolPage],
) -> None:
    page = open_page(connect(demo_sandbox))
    content = browser(page)
    qtbot.waitUntil(lambda: bool(content.model.projects.choices))

    content.open_item("mobile-app")  # what another tool's "open" does
    assert content.picker.combo.currentText() == "Mobile app (mobile-app)"
    wait_state(qtbot, content, EMPTY)
    assert content.states.empty_title.text() == (
        "No archived flags in project Mobile app (mobile-app)"
    )
    assert "none was archived" in content.states.empty_label.text()

    # the sandbox answers an unknown project as the spec's endpoint does: 200, no flags; the
    # window says the server lists no such project
    choose(qtbot, content, "no-such-project")
    wait_state(qtbot, content, EMPTY)
    assert content.states.empty_title.text() == "No archived flags in project no-such-project"
    assert content.states.empty_label.text().startswith(
        "The server lists no project with the id “no-such-project”"
    )
    assert content.picker.combo.currentText() == "no-such-project"  # what was typed stays


def test_a_new_connection_loads_the_project_again_and_every_control_is_named(
    qtbot: Any,
    connect: Callable[..., Session],
    demo_sandbox: SandboxProcess,
    open_page: Callable[[Session], ToolPage],
    tmp_path: Path,
) -> None:
    session = connect(demo_sandbox)
    page = open_page(session)
    content = browser(page)
    content.open_item("default")
    wait_state(qtbot, content, CONTENT)
    content.table.view.setCurrentIndex(content.model.table.index(0, 0))
    assert content.model.selected is not None

    for widget in content.findChildren(QWidget):
        if widget.focusPolicy() != Qt.FocusPolicy.NoFocus and widget.isVisible():
            assert widget.objectName().startswith("archivedFeatures"), widget
            assert widget.accessibleName() or widget.objectName().endswith(
                ("Button", "Filter", "PickerEdit")
            ), widget

    with SandboxProcess(tmp_path / "empty.sqlite3", "--empty") as empty:
        # a server that lists no projects at all (a fresh one has `default`, so take it away)
        with closing(sqlite3.connect(empty.db)) as conn, conn:
            conn.execute("DELETE FROM projects")
        session.open_spec(ConnectionSpec(empty.url, empty.admin_token, label="empty"))
        wait_state(qtbot, content, EMPTY)
        qtbot.waitUntil(lambda: not content.model.projects.busy)
        assert content.model.loaded_project == "default"
        assert content.model.table.total_count == 0
        assert content.model.selected is None
        assert content.detail.currentWidget() is content.detail.empty_label
        # a server with no projects at all
        assert content.states.empty_title.text() == "No archived flags in project default"
        assert content.states.empty_label.text().startswith(
            "The server lists no project with the id “default”"
        )
        assert content.picker.note.text() == "The server lists no projects; type one instead."


# ---------------------------------------------------------------------------- F5, errors, Retry


def test_f5_reloads_and_a_server_that_goes_away_gives_an_error_with_retry(
    qtbot: Any,
    arun: Callable[..., Any],
    connect: Callable[..., Session],
    open_page: Callable[[Session], ToolPage],
    tmp_path: Path,
) -> None:
    server = SandboxProcess(tmp_path / "flaky.sqlite3", "--demo", "--port", str(closed_port()))
    server.start()
    try:
        session = connect(server)
        page = open_page(session)
        content = browser(page)
        choose(qtbot, content, "payments")
        wait_state(qtbot, content, CONTENT)
        before = content.model.table.total_count

        # F5 loads again: a flag archived meanwhile shows up
        client: AdminClient = arun(session.client())
        arun(client.create_feature("payments", CreateFeature(name="archived-meanwhile")))
        arun(client.archive_feature("payments", "archived-meanwhile"))
        content.table.filter_edit.setText("a")
        view = content.table.view
        view.setCurrentIndex(content.model.table.index(0, 0))
        chosen = content.model.selected
        assert chosen is not None
        press_f5(qtbot, page)
        qtbot.waitUntil(lambda: content.model.table.total_count == before + 1, timeout=20_000)
        wait_state(qtbot, content, CONTENT)
        assert content.table.filter_edit.text() == "a"
        assert content.table.view.hasFocus()  # back where it was before the loading page
        # the same flag is still selected, in the pane and in the table
        selected = content.model.selected
        assert selected is not None and selected.name == chosen.name
        assert content.model.table.row_at(view.currentIndex().row()) is selected

        server.stop()
        press_f5(qtbot, page)
        wait_state(qtbot, content, ERROR, timeout=30_000)
        assert content.states.error_title.text() == (
            "Could not load the archived flags of project Payments (payments)"
        )
        assert "connection refused" in content.states.error_label.text()
        assert content.states.retry_button.isVisible()
        assert content.states.retry_button.hasFocus()
        # what the person typed is kept
        assert content.picker.combo.currentText() == "payments"
        assert content.table.filter_edit.text() == "a"

        server.start()
        qtbot.mouseClick(content.states.retry_button, Qt.MouseButton.LeftButton)
        wait_state(qtbot, content, CONTENT, timeout=30_000)
        assert content.model.table.total_count == before + 1
        assert content.model.loaded_project == "payments"
    finally:
        server.stop()


# ---------------------------------------------------------------------------- 100,000 flags


def test_a_hundred_thousand_archived_flags(
    qtbot: Any,
    connect: Callable[..., Session],
    open_page: Callable[[Session], ToolPage],
    tmp_path: Path,
) -> None:
    """Correctness at scale: all rows, newest archived first, filter, detail pane. How fast, and
    how long the window ever stalls meanwhile, is measured by bench/ui_tables.py."""
    with SandboxProcess(tmp_path / "scale.sqlite3", "--empty", "--scale", "100000") as big:
        page = open_page(connect(big))
        content = browser(page)
        model = content.model
        content.open_item("default")
        wait_state(qtbot, content, CONTENT, timeout=120_000)

        assert model.table.total_count == 100_000
        assert content.table.count_label.text() == "100,000 archived flags"
        archived = [f.archivedAt for f in model.table.rows[:1000]]
        assert archived == sorted(archived, reverse=True)  # type: ignore[type-var]

        content.table.filter_edit.setText("scale-00999")  # may wait for the filter texts
        qtbot.waitUntil(lambda: not model.table.filter_pending, timeout=30_000)
        assert model.table.shown_count == 100  # scale-0099900 to scale-0099999
        content.table.view.setCurrentIndex(model.table.index(0, 0))
        assert content.detail.values["Project"].text() == "default"
        assert model.environments.rowCount() == 2


# ---------------------------------------------------------------------------- last seen


def test_last_seen_falls_back_on_the_environments_and_says_so(qtbot: Any) -> None:
    at = datetime(2024, 3, 10, 9, 30, tzinfo=UTC)
    envs = [
        ArchivedFeatureEnvironment(name="development", enabled=True, lastSeenAt=at.replace(day=1)),
        ArchivedFeatureEnvironment(name="production", enabled=False, lastSeenAt=at),
        ArchivedFeatureEnvironment(name="staging", enabled=False),
    ]
    derived = ArchivedFeature(name="a", project="p", environments=envs)
    assert last_seen(derived) == at
    assert last_seen_source(derived) == (
        "Last seen in production: the latest of its environments' times; the server gives no "
        "time for the flag itself"
    )
    own = ArchivedFeature(name="b", project="p", lastSeenAt=at.replace(day=20), environments=envs)
    assert last_seen(own) == at.replace(day=20)
    assert last_seen_source(own) == "Last seen: the time the server gives for the flag as a whole"
    never = ArchivedFeature(name="c", project="p", environments=envs[2:])
    assert last_seen(never) is None
    assert last_seen_source(never) == "Never seen in any of its environments"
    bare = ArchivedFeature(name="d", project="p")
    assert last_seen(bare) is None and environments(bare) == []
    assert "Never seen" in last_seen_source(bare)
    # the tooltip of the column is that text
    last = COLUMNS[-1]
    assert last.tooltip is not None and last.tooltip(derived) == last_seen_source(derived)


# ---------------------------------------------------------------------------- no archive endpoint


class Unleash82WithProjects(Unleash82):
    """The emulated Unleash 8.2 of tests/api/test_fallbacks.py (no archive endpoint: 404; the
    search API instead), which also lists its projects."""

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.url.path == "/api/admin/projects":
            self.hits[request.url.path] += 1
            return httpx.Response(
                200, json={"version": 1, "projects": [{"id": "default", "name": "Default"}]}
            )
        return super().__call__(request)


@dataclass(frozen=True, repr=False)
class EmulatedSpec(ConnectionSpec):
    """A connection whose client talks to `server` through an `httpx.MockTransport`."""

    server: Any = None

    def client(self) -> AdminClient:
        return AdminClient(
            self.url,
            self.token,
            transport=httpx.MockTransport(self.server),
            retry=FAST,
            sleep=Sleeps(),
        )


def emulated_session(qtbot: Any, server: Unleash82, tmp_path: Path) -> Session:
    """A session connected (READY) to the emulated `server`; the caller closes it."""
    session = Session(ProfileStore(tmp_path / "config"))
    session.open_spec(EmulatedSpec("http://unleash.test", TOKEN, label="8.2", server=server))
    qtbot.waitUntil(lambda: session.state in (READY, FAILED), timeout=20_000)
    assert session.state == READY, session.message
    return session


def test_a_server_without_the_archive_endpoint_is_read_through_the_search_api(
    qtbot: Any,
    arun: Callable[..., Any],
    open_page: Callable[[Session], ToolPage],
    tmp_path: Path,
) -> None:
    server = Unleash82WithProjects()
    session = emulated_session(qtbot, server, tmp_path)
    try:
        page = open_page(session)
        content = browser(page)

        # the page's quiet note says how the flags are read; the window does not repeat it
        assert page.note.isVisible()
        assert page.note.text().startswith("Through the feature search API")
        choose(qtbot, content, "default")
        assert "through the search API" in content.states.loading_label.text()
        wait_state(qtbot, content, CONTENT)
        assert server.searches, "the search API was not used"
        assert server.hits["/api/admin/archive/features/default"] == 0

        model = content.model
        newest_first = sorted(ARCHIVED, key=lambda f: f["archivedAt"], reverse=True)
        assert [f.name for f in model.table.rows] == [f["name"] for f in newest_first]
        assert content.table.count_label.text() == f"{len(ARCHIVED)} archived flags"
        notes = [
            label
            for label in page.findChildren(QLabel)
            if label.isVisible() and "search API" in label.text()
        ]
        assert notes == [page.note]

        # the same detail pane: environments as the search API gave them
        row = model.table.row_of(lambda f: f.name == "exp-checkout")
        content.table.view.setCurrentIndex(model.table.index(row, 0))
        envs = model.environments
        assert [envs.text(r, 0) for r in range(envs.rowCount())] == [
            "development",
            "production",
            "staging",
        ]
        assert model.table.text(row, TITLES.index("Last seen")) == cell_text(
            datetime(2024, 3, 10, tzinfo=UTC)
        )
        tooltip = model.table.data(
            model.table.index(row, TITLES.index("Last seen")), Qt.ItemDataRole.ToolTipRole
        )
        assert tooltip.startswith("Last seen in production: the latest of its environments")
    finally:
        arun(session.aclose())
