"""The clean-up report's window (`CleanupView` over `CleanupModel`, issue 36) against sandboxes
of its own over HTTP, state read back from the server: on what `flagdesk serve --scale` makes,
the kinds with exactly the planted counts and one line for what an admin API token cannot
report, each line's why, the days setting reading the report again (the event loop turning all
the while); acting on findings through their tools' own plans and the one runner: a custom role
deleted after its confirmation, several service accounts after their number is typed, a
revocation of many API tokens counted and stopped between two requests, an empty group, a
personal access token and two inactive users each through their own plan, a role taken since the
report refused before anything is sent, a cancelled confirmation sending nothing; Open asking
for the finding's tool (or saying why not); an open-source release played saying what it
cannot report; and a new connection dropping the report."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from PySide6.QtCore import Qt, QTimer

from app.actions.journal import JOURNAL_NAME, State, journal_folder, read_journal
from app.api.models import ApiTokenList, RoleList, ServiceAccounts
from app.connection import ConnectionSpec
from app.registry import TOOLS_BY_KEY
from app.viewmodels import cleanup as cleanup_model
from app.viewmodels.session import READY, Session
from app.viewmodels.tools import LoadPhase
from sandbox import demo
from sandbox.process import SandboxProcess
from tests.conftest import personal_token_of
from tests.qt_fixtures import select_where
from ui.cleanup import CleanupView
from ui.states import StatePanel


@pytest.fixture(scope="module")
def scaled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxProcess]:
    """What `flagdesk serve --scale` makes of a new database (read only here)."""
    with SandboxProcess(tmp_path_factory.mktemp("cleanup-window") / "s.sqlite3", "--scale") as sb:
        yield sb


def http(sb: SandboxProcess) -> httpx.Client:
    return httpx.Client(base_url=sb.url, headers={"Authorization": sb.admin_token})


def make_role(sb: SandboxProcess, name: str, kind: str = "custom") -> int:
    with http(sb) as client:
        answer = client.post("/api/admin/roles", json={"name": name, "type": kind,
                                                       "description": "for the test",
                                                       "permissions": []})  # fmt: skip
        assert answer.status_code == 200, answer.text
        return int(answer.json()["roles"]["id"])


def make_account(sb: SandboxProcess, username: str) -> int:
    with http(sb) as client:
        answer = client.post("/api/admin/service-account",
                             json={"name": username.title(), "username": username,
                                   "rootRole": 3})  # fmt: skip
        assert answer.status_code == 201, answer.text
        return int(answer.json()["id"])


def make_tokens(sb: SandboxProcess, names: list[str]) -> None:
    with http(sb) as client:
        for name in names:
            answer = client.post("/api/admin/api-tokens", json={
                "tokenName": name, "type": "client", "environment": "development"})  # fmt: skip
            assert answer.status_code == 201, answer.text


def served_roles(sb: SandboxProcess) -> set[str]:
    with http(sb) as client:
        return {
            r.name for r in RoleList.model_validate(client.get("/api/admin/roles").json()).roles
        }


def served_accounts(sb: SandboxProcess) -> set[str]:
    with http(sb) as client:
        listed = ServiceAccounts.model_validate(client.get("/api/admin/service-account").json())
    return {a.username or "" for a in listed.serviceAccounts}


def served_tokens(sb: SandboxProcess) -> set[str]:
    with http(sb) as client:
        listed = ApiTokenList.model_validate(client.get("/api/admin/api-tokens").json())
    return {t.name for t in listed.tokens}


def open_view(qtbot: Any, session: Session) -> CleanupView:
    view = CleanupView(session)
    qtbot.addWidget(view)
    view.resize(1200, 650)
    view.show()
    wait_loaded(qtbot, view)
    return view


def wait_loaded(qtbot: Any, view: CleanupView) -> None:
    qtbot.waitUntil(lambda: not view.model.busy and (view.model.loaded or bool(view.model.error)),
                    timeout=30_000)  # fmt: skip


def wait_idle(qtbot: Any, view: CleanupView) -> None:
    qtbot.waitUntil(lambda: not view.model.acting and not view.model.busy, timeout=30_000)


def choose(qtbot: Any, view: CleanupView, key: str) -> None:
    """Click the kind `key` in the list, as a person would, and wait for its rows."""
    items = [view.kinds_list.topLevelItem(i) for i in range(view.kinds_list.topLevelItemCount())]
    (item,) = [i for i in items if i is not None and i.data(0, Qt.ItemDataRole.UserRole) == key]
    rect = view.kinds_list.visualItemRect(item)
    qtbot.mouseClick(view.kinds_list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())

    def shown() -> bool:
        m = view.model
        rows = m.table.all_rows
        wanted = len(m.report.of_kind(key)) if m.report is not None else -1
        return m.kind == key and len(rows) == wanted and all(r.finding.kind == key for r in rows)

    qtbot.waitUntil(shown, timeout=10_000)


def kinds_shown(view: CleanupView) -> list[str]:
    """The kinds listed, each as "title (count)"."""
    items = [view.kinds_list.topLevelItem(i) for i in range(view.kinds_list.topLevelItemCount())]
    return [f"{i.text(0)} ({i.text(1)})" for i in items if i is not None]


def ask(qtbot: Any, view: CleanupView) -> Any:
    """The action's button pressed: the confirmation, once its plan is made."""
    assert view.act_button.isEnabled(), view.act_button.toolTip()
    view.act_button.click()
    qtbot.waitUntil(lambda: view.confirmation is not None or bool(view.model.outcome_error),
                    timeout=10_000)  # fmt: skip
    return view.confirmation


# ---------------------------------------------------------------------------- the report


def test_the_planted_cases_grouped_by_kind_with_counts_and_why(
    qtbot: Any, connect: Callable[..., Session], scaled: SandboxProcess
) -> None:
    view = open_view(qtbot, connect(scaled))
    assert view.states.state == StatePanel.CONTENT
    assert kinds_shown(view) == [
        "API tokens expired (1,000)",
        # (the client token `flagdesk serve` keeps is seen: the connection's probe used it)
        "API tokens never seen (1,000)",
        "API tokens not seen lately (1,000)",
        "Groups with no members (20)",
        "Inactive users (112)",  # and the demo's 12
        f"Service accounts with no token used lately ({demo.service_accounts_unused_for(30)})",
        f"Custom roles nobody holds ({demo.CUSTOM_ROLES_UNUSED})",
    ]
    # an admin API token has no user: one line says so
    assert view.unavailable_label.isVisible()
    assert view.unavailable_label.text().startswith(
        "Your personal access tokens: not available here. This needs a personal access token"
    )
    # the first kind is shown, its rows made off the GUI thread
    assert view.model.kind == "api_token_expired" and view.model.table.total_count == 1_000
    assert view.act_button.text() == "Revoke…" and not view.act_button.isEnabled()
    assert view.act_button.toolTip().startswith("Select the findings")

    choose(qtbot, view, "role_unused")
    rows = {r.name: r for r in view.model.table.all_rows}
    assert set(rows) == {"Scale root role 3", "Scale root role 4", "Scale project role 3",
                         "Scale project role 4"}  # fmt: skip
    assert rows["Scale project role 3"].why == "held in no project"
    assert rows["Scale root role 4"].why == "no user, service account or group has it as root role"
    assert view.act_button.text() == "Delete…"
    assert view.kind_label.text() == "Custom roles nobody holds · Delete role"

    choose(qtbot, view, "service_account_unused")
    why = {r.detail: r.why for r in view.model.table.all_rows}
    assert why["scale-sa-06"].startswith("the newest of its 2 tokens last used 90 days ago")
    assert why["scale-sa-08"] == "none of its 2 tokens was ever used"
    assert why["scale-sa-10"].startswith("no tokens, created ")
    assert "scale-sa-01" not in why  # a token used yesterday
    view.close_content()


def test_the_days_setting_reads_the_report_again_and_the_loop_keeps_turning(
    qtbot: Any, connect: Callable[..., Session], scaled: SandboxProcess
) -> None:
    view = open_view(qtbot, connect(scaled))
    choose(qtbot, view, "service_account_unused")
    ticks: list[float] = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    timer.start(10)
    view.days_spin.setValue(7)  # as the arrows or Enter would
    assert view.model.days == 7
    qtbot.waitUntil(lambda: view.model.busy, timeout=5_000)
    wait_loaded(qtbot, view)
    qtbot.waitUntil(lambda: not view.model.busy, timeout=30_000)
    timer.stop()
    # ~10,000 tokens read and ~1,000 rows made while the GUI thread kept turning
    assert len(ticks) >= 10, len(ticks)
    gaps = [b - a for a, b in itertools.pairwise(ticks)]
    print(f"the report read with the loop turning: {len(ticks)} ticks, longest gap "
          f"{max(gaps) * 1000:.0f} ms")  # fmt: skip
    assert view.model.kind == "service_account_unused"  # the kind stays chosen
    assert view.model.table.total_count == demo.service_accounts_unused_for(7) == 11
    assert f"API tokens not seen lately ({demo.tokens_not_seen_for(7):,})" in kinds_shown(view)
    with pytest.raises(ValueError, match="days: -1 is not between 0 and 10,000"):
        view.model.set_days(-1)
    # changed again while a read is under way: the report is read again with the last value
    view.days_spin.setValue(60)
    qtbot.waitUntil(lambda: view.model.busy, timeout=5_000)
    view.days_spin.setValue(45)
    qtbot.waitUntil(lambda: view.model.report is not None and view.model.report.days == 45
                    and not view.model.busy, timeout=30_000)  # fmt: skip
    assert view.model.table.total_count == demo.service_accounts_unused_for(45) == 9
    view.close_content()


def test_an_open_source_release_says_what_it_cannot_report(
    qtbot: Any, connect: Callable[..., Session], tmp_path: Path
) -> None:
    with SandboxProcess(tmp_path / "oss.sqlite3", "--as-version", "8.2") as sb:
        view = open_view(qtbot, connect(sb))
        text = view.unavailable_label.text()
        assert "Groups: not available here. User groups need Unleash Enterprise" in text
        assert "Service accounts: not available here. Service accounts need Unleash Enterprise" \
            in text  # fmt: skip
        assert "Custom roles: not available here. Custom roles need Unleash Enterprise" in text
        assert not any(k.startswith(("Groups", "Service accounts", "Custom roles"))
                       for k in kinds_shown(view))  # fmt: skip
        view.close_content()


# ---------------------------------------------------------------------------- acting


def test_delete_a_custom_role_after_its_confirmation(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, data_folder: Path
) -> None:
    make_role(sandbox, "Auditors", "root-custom")
    make_role(sandbox, "Release managers")
    view = open_view(qtbot, connect(sandbox))
    choose(qtbot, view, "role_unused")
    select_where(view.table.view, lambda r: r.name == "Auditors")
    box = ask(qtbot, view)
    assert box is not None and box.question.text() == "Delete the role “Auditors”?"
    assert box.typed.isHidden()  # one: nothing to type
    # the cancelled confirmation sends nothing
    box.cancel_button.click()
    qtbot.waitUntil(lambda: view.confirmation is None)
    assert "Auditors" in served_roles(sandbox)

    box = ask(qtbot, view)
    box.action_button.click()
    wait_idle(qtbot, view)
    assert view.model.outcome.startswith("Deleted 1 role: “Auditors”. Snapshot: ")
    assert "Auditors" not in served_roles(sandbox) and "Release managers" in served_roles(sandbox)
    entries = read_journal(journal_folder("test sandbox") / JOURNAL_NAME)
    assert [(e.action, e.state) for e in entries] == [("roles.delete", State.DONE)]
    wait_loaded(qtbot, view)
    qtbot.waitUntil(lambda: not view.model.busy)
    assert [r.name for r in view.model.table.all_rows] == ["Release managers"]  # read again
    assert view.outcome_label.text().startswith("Deleted 1 role")
    view.close_content()


def test_a_role_taken_since_the_report_is_refused_before_anything_is_sent(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, data_folder: Path
) -> None:
    role = make_role(sandbox, "Night shift", "root-custom")
    view = open_view(qtbot, connect(sandbox))
    choose(qtbot, view, "role_unused")
    select_where(view.table.view, lambda r: r.name == "Night shift")
    with http(sandbox) as client:  # another administrator gives it to someone meanwhile
        user = client.get("/api/admin/user-admin").json()["users"][0]
        answer = client.put(f"/api/admin/user-admin/{user['id']}", json={"rootRole": role})
        assert answer.status_code == 200, answer.text
    assert ask(qtbot, view) is None
    assert view.model.outcome_error.startswith("Nothing was changed: The role “Night shift”")
    assert "cannot be deleted: it is held by 1 user" in view.model.outcome_error
    assert "Night shift" in served_roles(sandbox)
    assert not (journal_folder("test sandbox") / JOURNAL_NAME).exists()
    view.close_content()


def test_several_service_accounts_after_their_number_is_typed(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, data_folder: Path
) -> None:
    for name in ("idle-bot-1", "idle-bot-2", "idle-bot-3"):
        make_account(sandbox, name)
    view = open_view(qtbot, connect(sandbox))
    choose(qtbot, view, "service_account_unused")
    assert {r.detail for r in view.model.table.all_rows} >= {"ci-deploy-bot", "idle-bot-1"}
    select_where(view.table.view, lambda r: r.detail.startswith("idle-bot-"))
    assert not view.open_button.isEnabled()  # three: Open takes one
    view.table.view.setFocus()
    qtbot.keyClick(view.table.view, Qt.Key.Key_Delete)  # the Delete key, as the button
    qtbot.waitUntil(lambda: view.confirmation is not None, timeout=10_000)
    box: Any = view.confirmation
    assert box is not None and box.question.text() == "Delete 3 service accounts?"
    assert "no tokens, created " in box.details.text()  # why each was found
    assert not box.action_button.isEnabled()
    qtbot.keyClicks(box.typed, "3")
    box.action_button.click()
    wait_idle(qtbot, view)
    assert view.model.outcome.startswith("Deleted 3 service accounts: “Idle-Bot-1”")
    assert not {"idle-bot-1", "idle-bot-2", "idle-bot-3"} & served_accounts(sandbox)
    assert "ci-deploy-bot" in served_accounts(sandbox)
    entries = read_journal(journal_folder("test sandbox") / JOURNAL_NAME)
    assert [(e.action, e.state) for e in entries] == [("service_accounts.delete", State.DONE)] * 3
    view.close_content()


def test_many_revocations_count_their_progress_and_stop_between_two_requests(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, data_folder: Path
) -> None:
    names = [f"unused-{i:02}" for i in range(20)]
    make_tokens(sandbox, names)
    view = open_view(qtbot, connect(sandbox))
    choose(qtbot, view, "api_token_never_seen")
    select_where(view.table.view, lambda r: r.name.startswith("unused-"))
    assert len(view.model.selected) == 20
    box = ask(qtbot, view)
    assert box is not None and box.question.text() == "Delete 20 API tokens?"
    assert box.action_button.text() == "&Revoke 20 API tokens"
    qtbot.keyClicks(box.typed, "20")
    seen: list[tuple[int, int]] = []
    shown: list[str] = []

    def on_progress(number: int, total: int) -> None:
        seen.append((number, total))
        shown.append(view.outcome_label.text())
        if number == 2:
            assert view.stop_button.isVisible()
            view.stop_button.click()  # as a person would, while it runs

    view.model.progress_changed.connect(on_progress)
    box.action_button.click()
    wait_idle(qtbot, view)
    assert seen == [(0, 20), (1, 20), (2, 20)]
    assert shown[-1] == "Revoking API token 3 of 20…"
    assert view.model.outcome.startswith(
        "Stopped: 3 of 20 API tokens revoked, the other 17 not sent. Snapshot: "
    )
    assert len(served_tokens(sandbox) & set(names)) == 17
    entries = read_journal(journal_folder("test sandbox") / JOURNAL_NAME)
    assert len(entries) == 3 and all(e.action == "api_tokens.delete" for e in entries)
    assert not view.stop_button.isVisible()
    view.close_content()


def test_groups_personal_tokens_and_inactive_users_go_through_their_own_plans(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, data_folder: Path
) -> None:
    """The three other actions, with an Admin's personal access token (its own tokens are
    reported only then): an empty group, an unused token of the user's, two inactive users."""
    pat = personal_token_of(sandbox, "admin")
    with httpx.Client(base_url=sandbox.url, headers={"Authorization": pat}) as client:
        answer = client.post("/api/admin/groups", json={"name": "Q3 hackathon", "users": []})
        assert answer.status_code == 201, answer.text
        later = (datetime.now(UTC) + timedelta(days=30)).isoformat().replace("+00:00", "Z")
        answer = client.post("/api/admin/user/tokens",
                             json={"description": "old laptop", "expiresAt": later})  # fmt: skip
        assert answer.status_code == 201, answer.text
    view = open_view(qtbot, connect(sandbox, pat))
    assert view.unavailable_label.isHidden()  # every part, with a personal access token

    def act(key: str, keep: Callable[[Any], bool], typed: str = "") -> None:
        choose(qtbot, view, key)
        select_where(view.table.view, keep)
        box = ask(qtbot, view)
        assert box is not None, view.model.outcome_error
        if typed:
            qtbot.keyClicks(box.typed, typed)
        box.action_button.click()
        wait_idle(qtbot, view)
        wait_loaded(qtbot, view)
        qtbot.waitUntil(lambda: not view.model.busy, timeout=30_000)

    act("group_empty", lambda r: r.name == "Q3 hackathon")
    assert view.model.outcome.startswith("Deleted 1 group: “Q3 hackathon”. Snapshot: ")
    act("pat_never_used", lambda r: r.name == "old laptop")
    assert view.model.outcome.startswith("Deleted 1 personal access token: “old laptop”")
    choose(qtbot, view, "user_inactive")
    two = {r.finding.id for r in view.model.table.rows[:2]}
    act("user_inactive", lambda r: r.finding.id in two, typed="2")
    assert view.model.outcome.startswith("Deleted 2 users: ")
    with httpx.Client(base_url=sandbox.url, headers={"Authorization": pat}) as client:
        groups = client.get("/api/admin/groups").json()["groups"]
        tokens = client.get("/api/admin/user/tokens").json()["pats"]
        users = client.get("/api/admin/user-admin").json()["users"]
    assert "Q3 hackathon" not in {g["name"] for g in groups}
    assert "old laptop" not in {t["description"] for t in tokens}
    assert not two & {str(u["id"]) for u in users}
    entries = read_journal(journal_folder("test sandbox") / JOURNAL_NAME)
    assert [(e.action, e.state) for e in entries] == [
        ("groups.delete", State.DONE), ("personal_tokens.delete", State.DONE),
        ("inactive_users.delete", State.DONE),
    ]  # fmt: skip
    view.close_content()


def test_open_asks_for_the_findings_tool(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    with http(sandbox) as client:
        answer = client.post("/api/admin/groups", json={"name": "Nobody here", "users": []})
        assert answer.status_code == 201, answer.text
        group = answer.json()["id"]
    view = open_view(qtbot, connect(sandbox))
    choose(qtbot, view, "group_empty")
    select_where(view.table.view, lambda r: r.name == "Nobody here")
    assert view.open_button.isEnabled()
    with qtbot.waitSignal(view.open_requested, timeout=2_000) as asked:
        view.open_button.click()
    assert asked.args == ["groups", group]
    # Enter on a finding opens it too
    with qtbot.waitSignal(view.open_requested, timeout=2_000) as asked:
        view.table.row_activated.emit(view.model.selected[0])
    assert asked.args == ["groups", group]
    # a tool with no window (yet): Open says so, and which command has it
    monkeypatch.setattr(cleanup_model, "TOOLS_BY_KEY",
                        {k: t for k, t in TOOLS_BY_KEY.items() if k != "groups"})  # fmt: skip
    view.model.actions_changed.emit()
    assert not view.open_button.isEnabled()
    assert view.open_button.toolTip() == (
        "Groups with no members belong to a tool with no window yet: use its command "
        "(flagdesk groups)."
    )
    view.close_content()


def test_a_new_connection_drops_the_report(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess,
    tmp_path: Path, data_folder: Path,
) -> None:  # fmt: skip
    make_role(sandbox, "Only here")
    session = connect(sandbox)
    view = open_view(qtbot, session)
    choose(qtbot, view, "role_unused")
    select_where(view.table.view, lambda r: r.name == "Only here")
    assert view.model.selected
    with SandboxProcess(tmp_path / "oss.sqlite3", "--as-version", "8.2") as other:
        session.open_spec(ConnectionSpec(url=other.url, token=other.admin_token, label="other"))
        qtbot.waitUntil(lambda: session.state == READY, timeout=30_000)
        qtbot.waitUntil(lambda: view.model.phase is LoadPhase.READY and not view.model.busy,
                        timeout=30_000)  # fmt: skip
        assert view.model.selected == []
        assert "Only here" not in {r.name for r in view.model.table.all_rows}
        assert not any(k.startswith("Custom roles") for k in kinds_shown(view))
        assert not view.act_button.isEnabled()
        view.close_content()
