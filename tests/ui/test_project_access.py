"""The project access window (`ProjectAccessView` over `ProjectAccessModel`, issue 36) against
sandboxes of their own over HTTP, state read back from the server: a project's holders listed
(users, the service account, groups with their members in a tooltip); a grant to a user and a
group through the dialog and its confirmation; a change of one holder's roles; a revocation of
two at once; nothing sent while asking; the journal's entries; the dialogs' refusals; the
dashboard's owners opening this window on their project; and a played open-source release,
where the page says project access needs Pro or Enterprise and nothing is read."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.actions.journal import JOURNAL_NAME, State, journal_folder, read_journal
from app.api.models import ProjectAccess
from app.viewmodels.session import Session
from app.viewmodels.tools import LoadPhase
from sandbox.process import SandboxProcess
from tests.conftest import personal_token_of
from tests.qt_fixtures import select_where
from ui.dashboard import ProjectDashboard
from ui.project_access import ChangeRolesDialog, GrantDialog, ProjectAccessView
from ui.states import StatePanel

ACCESS = "/api/admin/projects/{}/access"


def held(sb: SandboxProcess, project: str) -> tuple[dict[int, set[str]], dict[int, set[str]]]:
    """(user id -> role names, group id -> role names) in `project`, read from the server."""
    with sb.admin() as http:
        got = ProjectAccess.model_validate(http.get(ACCESS.format(project)).json())
    names = {r.id: r.name for r in got.roles}
    return ({u.id: {names[r] for r in u.roles} for u in got.users},
            {g.id: {names[r] for r in g.roles} for g in got.groups})  # fmt: skip


def open_view(qtbot: Any, session: Session, project: str = "") -> ProjectAccessView:
    view = ProjectAccessView(session)
    qtbot.addWidget(view)
    view.resize(1100, 640)
    view.show()
    m = view.model
    if project:
        view.open_item(project)
    qtbot.waitUntil(
        lambda: not m.busy and (m.phase in (LoadPhase.READY, LoadPhase.EMPTY, LoadPhase.FAILED,
                                            LoadPhase.UNAVAILABLE)),
        timeout=20_000,
    )  # fmt: skip
    return view


def confirm(qtbot: Any, view: ProjectAccessView, question: str) -> None:
    qtbot.waitUntil(lambda: view.confirmation is not None)
    box = view.confirmation
    assert box is not None
    assert box.text() == question  # type: ignore[attr-defined]
    box.action_button.click()  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: not view.model.acting, timeout=20_000)
    qtbot.waitUntil(lambda: not view.model.busy, timeout=20_000)


def test_holders_grant_change_and_revoke(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, data_folder: Path
) -> None:
    view = open_view(qtbot, connect(sandbox), "payments")
    m = view.model
    assert view.states.state == StatePanel.CONTENT
    users, groups = held(sandbox, "payments")
    rows = m.table.all_rows
    assert {r.subject.id for r in rows if r.subject.kind == "user"} == set(users)
    assert {r.subject.id for r in rows if r.subject.kind == "group"} == set(groups)
    squad = next(r for r in rows if r.kind == "Group")
    assert squad.members is not None and squad.members > 0
    assert squad.members_text.startswith(f"{squad.members} member")  # the group's tooltip
    assert not view.change_button.isEnabled() and not view.revoke_button.isEnabled()

    # a grant: a user who holds nothing and a group, the Member role
    before = held(sandbox, "payments")
    view.grant_button.click()
    dialog = view.grant_dialog
    assert isinstance(dialog, GrantDialog)
    dialog.grant_button.click()
    assert dialog.isVisible() and dialog.error_label.text() == "Choose at least one user or group."
    viewer = next(c for c in m.candidates if c.kind == "User" and c.subject.id not in users)
    support = next(c for c in m.candidates if c.label == "Group: Support")
    dialog.filter_edit.setText("support")
    assert [dialog.who_list.item(i).text() for i in range(dialog.who_list.count())
            if not dialog.who_list.item(i).isHidden()] == ["Group: Support"]  # fmt: skip
    robots = [c for c in m.candidates if c.kind == "Service account"]
    assert robots and all(c.label.endswith("(service account)") for c in robots)
    dialog.check(viewer.label)
    dialog.check(support.label)
    dialog.check(robots[0].label)  # a service account, which the users' list leaves out
    dialog.grant_button.click()
    assert dialog.error_label.text() == "Choose at least one role."
    dialog.check_role("Member")
    dialog.grant_button.click()
    assert held(sandbox, "payments") == before  # nothing sent while asking
    confirm(qtbot, view, "Grant Member in project “payments” to 3 users and groups?")
    users, groups = held(sandbox, "payments")
    assert users[viewer.subject.id] == {"Member"} and groups[support.subject.id] == {"Member"}
    assert users[robots[0].subject.id] == {"Member"}
    qtbot.waitUntil(lambda: any(r.kind == "Service account" for r in m.table.all_rows),
                    timeout=20_000)  # fmt: skip
    assert m.outcome.startswith("Granted in “payments”: ")
    qtbot.waitUntil(lambda: any(r.subject == viewer.subject for r in m.table.all_rows),
                    timeout=20_000)  # fmt: skip

    # a change of one holder's roles: Member -> Owner
    select_where(view.table.view, lambda r: r.subject == viewer.subject)
    assert view.change_button.isEnabled()
    view.change_button.click()
    change = view.change_dialog
    assert isinstance(change, ChangeRolesDialog)
    change.set_role("Member", False)
    change.change_button.click()
    assert "at least one role" in change.error_label.text()
    change.set_role("Owner", True)
    change.change_button.click()
    confirm(qtbot, view, f"Change the roles of {viewer.subject.text} in project “payments”?")
    assert held(sandbox, "payments")[0][viewer.subject.id] == {"Owner"}

    # a revocation of two at once (the Delete key's button)
    qtbot.waitUntil(lambda: any(r.subject == support.subject for r in m.table.all_rows),
                    timeout=20_000)  # fmt: skip
    select_where(view.table.view, lambda r: r.subject in (viewer.subject, support.subject))
    assert len(m.selected) == 2 and view.revoke_button.isEnabled()
    view.revoke_button.click()
    confirm(qtbot, view, "Revoke every role of 2 users and groups in project “payments”?")
    users, groups = held(sandbox, "payments")
    assert viewer.subject.id not in users and support.subject.id not in groups
    assert m.outcome.startswith("Revoked in “payments”")
    qtbot.waitUntil(lambda: not any(r.subject == viewer.subject for r in m.table.all_rows),
                    timeout=20_000)  # fmt: skip

    entries = read_journal(journal_folder("test sandbox") / JOURNAL_NAME)
    assert [(e.action, e.state) for e in entries] == [
        ("project_access.grant", State.DONE),
        ("project_access.set_roles", State.DONE),
        ("project_access.revoke", State.DONE),
        ("project_access.revoke", State.DONE),
    ]


def test_an_unknown_project_and_a_project_of_nobody(
    qtbot: Any, connect: Callable[..., Session], demo_sandbox: SandboxProcess
) -> None:
    view = open_view(qtbot, connect(demo_sandbox))
    assert view.states.state == StatePanel.EMPTY
    assert view.states.empty_title.text() == "Choose a project"
    assert not view.grant_button.isEnabled()
    assert view.grant_button.toolTip() == "Choose a project first."
    view.open_item("no-such-project")
    qtbot.waitUntil(lambda: view.model.phase is LoadPhase.FAILED, timeout=20_000)
    assert "No project “no-such-project”" in view.model.error
    assert view.states.state == StatePanel.ERROR


def test_the_dashboards_owners_open_it_on_their_project(
    qtbot: Any, connect: Callable[..., Session], demo_sandbox: SandboxProcess,
    personal_token: Callable[[SandboxProcess, str], str],
) -> None:  # fmt: skip
    session = connect(demo_sandbox, personal_token(demo_sandbox, "admin"))
    dashboard = ProjectDashboard(session)
    qtbot.addWidget(dashboard)
    dashboard.show()
    dashboard.open_item("web-shop")
    qtbot.waitUntil(lambda: dashboard.model.loaded_project == "web-shop", timeout=20_000)
    assert dashboard.access_link.isVisible()
    with qtbot.waitSignal(dashboard.open_requested) as opened:
        dashboard.access_link.linkActivated.emit("access")
    assert opened.args == ["project_access", "web-shop"]
    view = open_view(qtbot, session)
    view.open_item(opened.args[1])
    qtbot.waitUntil(lambda: view.model.loaded_project == "web-shop" and not view.model.busy,
                    timeout=20_000)  # fmt: skip
    assert view.picker.value == "web-shop"
    assert len(view.model.table.all_rows) == sum(map(len, held(demo_sandbox, "web-shop")))


def test_open_source_says_it_needs_pro_or_enterprise(
    qtbot: Any, connect: Callable[..., Session], tmp_path: Path
) -> None:
    with SandboxProcess(tmp_path / "oss.sqlite3", "--demo", "--as-version", "8.2") as sb:
        view = open_view(qtbot, connect(sb))
        assert view.model.phase is LoadPhase.UNAVAILABLE
        assert "Pro or Enterprise" in view.model.unavailable_reason
        assert not view.grant_button.isEnabled()
        assert "Pro or Enterprise" in view.grant_button.toolTip()
        view.open_item("default")
        qtbot.wait(200)
        assert view.model.access is None and view.model.phase is LoadPhase.UNAVAILABLE
        # the dashboard's owners have no link there: it would lead nowhere
        dashboard = ProjectDashboard(connect(sb, personal_token_of(sb, "admin")))
        qtbot.addWidget(dashboard)
        dashboard.show()
        dashboard.open_item("web-shop")
        qtbot.waitUntil(lambda: dashboard.model.loaded_project == "web-shop", timeout=20_000)
        assert dashboard.owner_rows() and not dashboard.access_link.isVisible()
