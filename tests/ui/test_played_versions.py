"""The windows on a sandbox playing an older Unleash (`flagdesk serve --as-version`): each
capability state that depends on the version, shown with the version's reason, without a real
server (tests/compat checks the sandbox plays each version as the real one answers)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from app.actions.journal import State
from app.api.client import AdminClient
from app.viewmodels.archive import CONTENT
from app.viewmodels.session import Session
from sandbox.process import SandboxProcess
from tests.ui.test_archive import browser, choose, wait_state
from tests.ui.test_user_actions import GRETA, confirm, journal
from tests.ui.test_users import choose as choose_user
from tests.ui.test_users import open_editor
from ui.tool_page import ToolPage


@pytest.fixture
def data_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where the journal goes (as tests/ui/test_user_actions.py's)."""
    folder = tmp_path / "data"
    monkeypatch.setenv("FLAGDESK_DATA_DIR", str(folder))
    return folder


@pytest.fixture
def playing(tmp_path: Path) -> Iterator[Callable[[str], SandboxProcess]]:
    """`playing("5.12")`: a demo sandbox of this test's own playing that Unleash version."""
    started: list[SandboxProcess] = []

    def make(line: str) -> SandboxProcess:
        sb = SandboxProcess(tmp_path / f"as-{line}.sqlite3", "--demo", "--as-version", line)
        started.append(sb.start())
        return sb

    yield make
    for sb in started:
        sb.stop()


def test_the_dashboard_on_5_12_names_the_version_it_needs(
    qtbot: Any,
    playing: Callable[[str], SandboxProcess],
    connect: Callable[..., Session],
    personal_token: Callable[[SandboxProcess, str], str],
    tool_page: Callable[..., ToolPage],
) -> None:
    sb = playing("5.12")
    session = connect(sb, personal_token(sb, "admin"))
    page = tool_page("project_dashboard", session)
    reason = "The personal dashboard needs Unleash 6.3 or later; this server is 5.12.8"
    assert page.banner.isVisible()
    assert page.reason.text() == reason
    # and on 6.10, with the same token, it works
    later = playing("6.10")
    session = connect(later, personal_token(later, "admin"))
    page = tool_page("project_dashboard", session)
    assert not page.banner.isVisible()


@pytest.mark.parametrize(("line", "through_search"), [("6.10", False), ("7.6", True)])
def test_the_archive_through_the_endpoint_or_the_search_api(
    qtbot: Any,
    arun: Callable[..., Any],
    playing: Callable[[str], SandboxProcess],
    connect: Callable[..., Session],
    tool_page: Callable[..., ToolPage],
    line: str,
    through_search: bool,
) -> None:
    """6.10 lists the archive through its endpoint; 7.6 has none, and the window says it reads
    the search API, with the same flags."""
    sb = playing(line)
    session = connect(sb)
    client: AdminClient = arun(session.client())
    expected = {f.name for f in arun(client.archived_features("default")).features}
    assert expected
    page = tool_page("archived_features", session)
    assert page.note.isVisible() is through_search
    if through_search:
        assert "search API" in page.note.text()
    content = browser(page)
    qtbot.waitUntil(lambda: bool(content.model.projects.choices))
    choose(qtbot, content, "default")
    wait_state(qtbot, content, CONTENT)
    assert {f.name for f in content.model.table.rows} == expected


@pytest.mark.parametrize(("line", "said"), [
    ("5.12", "500 UnknownError"), ("6.10", "429 RateLimitError")])  # fmt: skip
def test_a_second_reset_link_refused_by_the_release(
    qtbot: Any,
    playing: Callable[[str], SandboxProcess],
    connect: Callable[..., Session],
    data_folder: Path,
    line: str,
    said: str,
) -> None:
    """A second reset link within the minute: 6.10 and later refuse it with 429, 5.12 fails
    with a 500 (tests/compat/test_versions.py measured both); the window shows either, the 500
    with what it means and what to do, and journals it as failed."""
    sb = playing(line)
    session = connect(sb)
    editor = open_editor(qtbot, session)
    choose_user(qtbot, editor, GRETA)
    qtbot.mouseClick(editor.reset_button, Qt.MouseButton.LeftButton)
    confirm(qtbot, editor)
    qtbot.waitUntil(lambda: editor.reset_link_row.isVisible(), timeout=20_000)
    assert editor.reset_link_edit.text().startswith(f"{sb.url}/reset-password?token=")
    qtbot.mouseClick(editor.reset_button, Qt.MouseButton.LeftButton)
    confirm(qtbot, editor)
    qtbot.waitUntil(lambda: editor.action_error_label.isVisible(), timeout=20_000)
    shown = editor.action_error_label.text()
    assert said in shown
    if line == "5.12":
        assert "second reset link for the same user within a minute" in shown
        assert "try again in a minute" in shown
    assert editor.reset_button.isEnabled()
    assert [(e.state, e.status) for e in journal(data_folder)] == [
        (State.DONE, 200), (State.FAILED, int(said[:3]))]  # fmt: skip
