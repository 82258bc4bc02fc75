"""The who-can-do-what-where window (`AccessOverviewView` over `AccessOverviewModel`, issue 36)
against sandboxes over HTTP: one user's projects with the roles and why (root role, directly,
through a group, a group's root role), one project's people with why and the groups holding
roles there, the same answers as `flagdesk access show` computes; unknown users and projects
said; a played open-source release answered from root roles with the note; and the scale set
(`serve --scale`: 500 projects, 2,000 users): an Admin asked as the window opens answered over
every project after reading only the few projects the access overview lists for them, a
project answered reading that project alone, and, as on Pro (no access overview), a user's
read of every project stopped half-way (Stop) ending in an error with Retry, then asked again
reading what is left, its progress counted to the end."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from app.viewmodels.session import Session
from app.viewmodels.tools import LoadPhase
from sandbox.process import SandboxProcess
from ui.access_overview import AccessOverviewView
from ui.states import StatePanel


def email_of(sb: SandboxProcess, user_id: int) -> str:
    with sb.admin() as http:
        users = http.get("/api/admin/user-admin").json()["users"]
    return str(next(u["email"] for u in users if u["id"] == user_id))


def open_view(qtbot: Any, session: Session) -> AccessOverviewView:
    view = AccessOverviewView(session)
    qtbot.addWidget(view)
    view.resize(1100, 640)
    view.show()
    m = view.model
    qtbot.waitUntil(lambda: not m.busy and (m.loaded or bool(m.error)
                                            or m.phase is LoadPhase.UNAVAILABLE),
                    timeout=60_000)  # fmt: skip
    return view


def answered(qtbot: Any, view: AccessOverviewView, mode: str, value: str) -> None:
    """Asked, to the answer shown (a question's reads say what they read for first)."""
    with qtbot.waitSignal(view.model.answer_changed, timeout=20_000):
        view.ask(mode, value)
    qtbot.waitUntil(lambda: not view.model.answering, timeout=20_000)


def test_a_users_projects_and_a_projects_people(
    qtbot: Any, connect: Callable[..., Session], demo_sandbox: SandboxProcess
) -> None:
    sb = demo_sandbox
    view = open_view(qtbot, connect(sb))
    m = view.model
    assert view.states.state == StatePanel.CONTENT
    assert m.summary.startswith("Read ") and "Pick a user or a project." in m.summary
    assert not view.progress_row.isVisible()
    assert view.search_combo.count() == len(m.data.people)  # type: ignore[union-attr]

    # user 6: an Editor, web-shop's Owner directly and through Checkout squad, a Member of
    # web-shop through Platform team, payments' Member through Checkout squad (as the CLI's
    # test of `access show --user` reads it)
    answered(qtbot, view, "user", email_of(sb, 6).upper())
    rows = {r.project: r for r in m.where_table.all_rows}
    assert set(rows) == {"default", "web-shop", "payments"}
    assert rows["web-shop"].roles == "Owner, Member"
    assert rows["web-shop"].why == ("Owner directly; Owner through group “Checkout squad”; "
                                    "Member through group “Platform team”")  # fmt: skip
    assert rows["default"].why.startswith("Editor root role (the default project)")
    assert "holds roles in 3 of " in m.summary and "root role Editor" in m.summary
    assert view.stack.currentWidget() is view.where_table
    assert view.where_table.count_label.text() == "3 projects"
    assert not view.note_label.isVisible()

    # picked from the search's list (its label), as a person would
    label = next(p.label for p in m.people() if p.id == 6)
    index = view.search_combo.findText(label)
    with qtbot.waitSignal(m.answer_changed, timeout=20_000):
        view.search_combo.activated.emit(index)
    qtbot.waitUntil(lambda: not m.answering, timeout=20_000)
    assert {r.project for r in m.where_table.all_rows} == set(rows)

    answered(qtbot, view, "user", "nobody@example.com")
    assert m.summary.startswith("No user or service account has the email, username or id")
    assert m.where_table.total_count == 0

    answered(qtbot, view, "project", "payments")
    assert view.stack.currentWidget() is view.who_table
    people = {r.holding.person.id: r for r in m.who_table.all_rows}
    assert all(r.account for r in people.values())
    assert any("Admin root role" in r.why for r in people.values())
    assert any(r.why.startswith("Owner directly") for r in people.values())
    assert "can change Payments" in m.summary or "can change payments" in m.summary
    assert m.groups_text.startswith("Groups holding roles here: Checkout squad (Member; ")
    assert view.groups_label.isVisible()

    answered(qtbot, view, "project", "nope")
    assert m.summary == "No project “nope” on test sandbox."


def test_open_source_answers_from_root_roles(
    qtbot: Any, connect: Callable[..., Session], tmp_path: Path
) -> None:
    with SandboxProcess(tmp_path / "oss.sqlite3", "--demo", "--as-version", "8.2") as sb:
        view = open_view(qtbot, connect(sb))
        m = view.model
        assert m.phase is LoadPhase.READY
        answered(qtbot, view, "user", email_of(sb, 6))
        assert [(r.project, r.why) for r in m.where_table.all_rows] == [
            ("default", "Editor root role (the default project)")]  # fmt: skip
        assert "derived from root roles only" in m.note
        assert view.note_label.isVisible() and view.note_label.text() == m.note


@pytest.fixture(scope="module")
def scaled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxProcess]:
    with SandboxProcess(tmp_path_factory.mktemp("scale") / "s.sqlite3", "--empty",
                        "--scale") as sb:  # fmt: skip
        yield sb


def test_the_scale_set_with_progress_and_stop(
    qtbot: Any, connect: Callable[..., Session], scaled: SandboxProcess
) -> None:
    session = connect(scaled)
    view = AccessOverviewView(session)
    qtbot.addWidget(view)
    view.show()
    m = view.model
    seen: list[tuple[int, int]] = []
    m.progress.connect(lambda done, total: seen.append((done, total)))
    # asked as the window opens: answered once who there is has been read, after reading only
    # the projects the access overview lists for the user and their groups
    admin = "scale.user.0000@access.example.com"  # an Admin: every project
    view.ask("user", admin)
    qtbot.waitUntil(lambda: m.loaded and not m.answering, timeout=60_000)
    data = m.data
    assert data is not None
    projects = len(data.projects)
    assert projects >= 500
    assert m.where_table.total_count == projects
    assert f"holds roles in {projects:,} of {projects:,} projects" in m.summary
    assert 0 < len(data.read) < 50, len(data.read)
    assert seen[0] == (0, len(data.read)) and seen[-1] == (len(data.read), len(data.read))
    qtbot.waitUntil(lambda: not view.progress_row.isVisible(), timeout=5_000)

    # a project: its access alone
    seen.clear()
    before = set(data.read)
    answered(qtbot, view, "project", "scale-project-250")
    assert data.read - before <= {"scale-project-250"}
    assert m.who_table.total_count > 0

    # as on Pro (project access, no access overview): a user's answer reads every project;
    # stopped half-way, an error saying so, with Retry
    data.reach = None
    view.ask("user", "scale.user.0001@access.example.com")
    qtbot.waitUntil(lambda: view.progress_row.isVisible() and m.read_count[0] >= 20,
                    timeout=60_000)  # fmt: skip
    # meanwhile the window says what it reads for, and shows no earlier answer
    assert view.summary_label.text().startswith("Reading the access of ")
    assert "scale.user.0001@access.example.com" in view.summary_label.text()
    assert m.where_table.total_count == 0 and not view.groups_label.isVisible()
    view.stop_button.click()
    qtbot.waitUntil(lambda: not m.busy and bool(m.error), timeout=20_000)
    assert m.phase is LoadPhase.FAILED and view.states.state == StatePanel.ERROR
    assert m.error.startswith("The read was stopped after ") and "Retry" in m.error
    assert not view.progress_row.isVisible()

    # asked again, it reads what is left (what was read before the Stop is kept) to the end,
    # its progress counted in order
    stopped_at = len(data.read)
    seen.clear()
    view.ask("user", "scale.user.0001@access.example.com")
    qtbot.waitUntil(lambda: not m.busy and data.complete, timeout=60_000)
    left = seen[0][1]
    assert seen[0] == (0, left) and seen[-1] == (left, left)
    assert left == projects - stopped_at and stopped_at >= 20
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    print(f"read the rest, {left} projects' access, at {m.status or 'the end'}")
