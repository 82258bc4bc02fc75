"""The windows on a sandbox playing an older Unleash (`flagdesk serve --as-version`): each
capability state that depends on the version, shown with the version's reason, without a real
server (tests/compat checks the sandbox plays each version as the real one answers)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from app.api.client import AdminClient
from app.viewmodels.archive import CONTENT
from app.viewmodels.session import Session
from sandbox.process import SandboxProcess
from tests.ui.test_archive import browser, choose, wait_state
from ui.tool_page import ToolPage


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
