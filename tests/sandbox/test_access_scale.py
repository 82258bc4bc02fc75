"""`flagdesk serve --scale` alone (issue 36): the credentials and access set planted exactly as
`sandbox.demo.load_access_scale` documents it (projects, users, groups and their empty ones,
project roles, 10,000 API tokens by case, personal access tokens by case, service accounts and
custom roles by case), once per database,
in one transaction with the hook for what other slices plant (`ACCESS_SCALE_PLANTERS`); and
`--scale N` keeping its meaning. How long the start takes is printed, not asserted."""

from __future__ import annotations

import argparse
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from app.api.models import (
    ApiTokenList,
    GroupList,
    InactiveUsers,
    ProjectList,
    ProjectRoleUsages,
    RoleList,
    ServiceAccount,
    ServiceAccounts,
    UserList,
)
from sandbox import db, demo
from sandbox.options import add_arguments, options_of
from sandbox.process import SandboxProcess
from sandbox.store import ADMIN_USER_ID, Store


@pytest.fixture(scope="module")
def scaled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxProcess]:
    path = tmp_path_factory.mktemp("access") / "access.sqlite3"
    started = time.perf_counter()
    with SandboxProcess(path, "--empty", "--scale") as sb:
        print(f"flagdesk serve --empty --scale answered /health in "
              f"{time.perf_counter() - started:.2f} s")  # fmt: skip
        yield sb


def test_projects_users_groups_and_roles_are_planted_exactly(scaled: SandboxProcess) -> None:
    with scaled.admin() as http:
        projects = ProjectList.model_validate(http.get("/api/admin/projects").json()).projects
        users = UserList.model_validate(http.get("/api/admin/user-admin").json()).users
        inactive = InactiveUsers.model_validate(
            http.get("/api/admin/user-admin/inactive").json()
        ).inactiveUsers
        groups = GroupList.model_validate(http.get("/api/admin/groups").json()).groups
    assert len([p for p in projects if p.id.startswith("scale-project-")]) == 500
    planted = [u for u in users if (u.email or "").endswith("@access.example.com")]
    assert len(planted) == demo.ACCESS_USERS == 2_000
    assert Counter(u.rootRole for u in planted) == {3: 1_800, 2: 190, 1: 10}  # viewer/editor/admin
    inactive_planted = [u for u in inactive if (u.email or "").endswith("@access.example.com")]
    assert len(inactive_planted) == demo.INACTIVE_PLANTED_USERS == 100
    assert len([u for u in inactive_planted if u.seenAt is None]) == demo.NEVER_LOGGED_IN == 20
    assert len(inactive) == 100  # --empty: nobody else
    assert len(groups) == demo.ACCESS_GROUPS == 200
    sizes = [g.userCount for g in groups]
    assert sizes.count(0) == demo.EMPTY_GROUPS == 20
    assert {s for s in sizes if s} <= set(range(1, 26)) and len(set(sizes)) > 10  # varied
    assert all(g.name.startswith("Scale group ") for g in groups)
    conn = db.connect(scaled.db)
    try:
        by_kind = dict(conn.execute(
            "SELECT user_id IS NOT NULL, count(*) FROM project_roles"
            " WHERE project LIKE 'scale-project-%' AND role_id IN (4, 5)"
            " GROUP BY 1").fetchall())  # fmt: skip
        owners = conn.execute(
            "SELECT count(DISTINCT project) FROM project_roles WHERE role_id = 4"
            " AND user_id IS NOT NULL AND project LIKE 'scale-project-%'"
        ).fetchone()[0]
    finally:
        conn.close()
    assert by_kind == {1: 1_748, 0: 321}  # 2,069 project roles, as the docstring says
    assert owners == 500  # every project has an Owner


def test_the_api_tokens_are_planted_by_case(scaled: SandboxProcess) -> None:
    with scaled.admin() as http:
        tokens = ApiTokenList.model_validate(http.get("/api/admin/api-tokens").json()).tokens
    planted = [t for t in tokens if t.name.startswith("scale-token-")]
    assert len(planted) == demo.ACCESS_TOKENS == 10_000
    assert len({t.secret for t in planted}) == 10_000  # unique handles, masked
    assert all((t.secret or "").count("…") == 1 for t in planted)
    now = datetime.now(UTC)
    expired = [t for t in planted if t.expiresAt is not None and t.expiresAt <= now]
    live = [t for t in planted if t.expiresAt is None or t.expiresAt > now]
    never = [t for t in live if t.seenAt is None]
    stale = [t for t in live if t.seenAt is not None and t.seenAt <= now - timedelta(days=30)]
    assert (len(expired), len(never), len(stale)) == (1_000, 1_000, 1_000)
    assert len(live) - len(never) - len(stale) == demo.TOKENS_IN_USE == 7_000
    assert len([t for t in live if t.expiresAt is not None]) == 1_000  # expiring later
    assert Counter(t.type for t in planted) == {"client": 3_334, "frontend": 3_333,
                                                "backend": 3_333}  # fmt: skip
    assert Counter(t.environment for t in planted) == {"development": 5_001, "production": 4_999}
    scopes = Counter("all" if t.scope == ["*"] else len(t.scope) for t in planted)
    assert scopes == {"all": 1_429, 2: 1_429, 1: 7_142}
    week = [t for t in live if t.seenAt is not None and t.seenAt <= now - timedelta(days=7)]
    assert len(week) == demo.tokens_not_seen_for(7) == 6_334


def test_the_personal_access_tokens_are_planted_by_case(scaled: SandboxProcess) -> None:
    conn = db.connect(scaled.db)
    try:
        rows = conn.execute(
            "SELECT t.user_id, p.description, p.expires_at, p.seen_at FROM"
            " personal_access_tokens p JOIN tokens t ON t.secret_hash = p.secret_hash"
        ).fetchall()
    finally:
        conn.close()
    now = db.now_ms()
    admin = [r for r in rows if r[0] == ADMIN_USER_ID and r[1].startswith("scale-pat-admin-")]
    assert len(admin) == 8
    expired = [r for r in admin if r[2] <= now]
    assert len(expired) == demo.ADMIN_PATS_EXPIRED == 3
    live = [r for r in admin if r[2] > now]
    assert len([r for r in live if r[3] is None]) == demo.ADMIN_PATS_NEVER_USED == 2
    assert len([r for r in live if r[3] is not None and r[3] < now - 30 * 86_400_000]) == 1
    others = [r for r in rows if r[1].startswith("scale-pat-") and r not in admin]
    assert len(others) == demo.USER_PATS == 200
    assert len([r for r in others if r[2] <= now]) == demo.USER_PATS_EXPIRED == 50


def test_service_accounts_and_custom_roles_are_planted_by_case(scaled: SandboxProcess) -> None:
    """`ACCESS_SCALE_PLANTERS`' two: 12 service accounts (4 in use, 4 stale, 4 with no token)
    and 8 custom roles (2 root and 2 project roles held, 2 of each held by nobody)."""
    with scaled.admin() as http:
        accounts = ServiceAccounts.model_validate(
            http.get("/api/admin/service-account").json()
        ).serviceAccounts
        roles = RoleList.model_validate(http.get("/api/admin/roles").json()).roles
        usage = {r.name: ProjectRoleUsages.model_validate(
            http.get(f"/api/admin/projects/roles/{r.id}/access").json()).projects
            for r in roles if r.type == "custom"}  # fmt: skip
    planted = [a for a in accounts if (a.username or "").startswith("scale-sa-")]
    assert len(planted) == demo.SCALE_SERVICE_ACCOUNTS == 12
    assert [a for a in accounts if a not in planted] == []  # --empty: no demo account
    now = datetime.now(UTC)

    def newest(a: ServiceAccount) -> int | None:
        used = [t.seenAt for t in a.tokens if t.seenAt is not None]
        return (now - max(used)).days if used else None

    assert [newest(a) for a in planted if a.tokens] == [1, 5, 10, 20, 45, 90, 180, None]
    assert len([a for a in planted if not a.tokens]) == demo.SERVICE_ACCOUNTS_NO_TOKENS == 4
    assert all(len(a.tokens) == 2 for a in planted if a.tokens)
    custom = {r.name: r for r in roles if r.type in ("root-custom", "custom")}
    assert len(custom) == 8
    by_id = {a.rootRole for a in planted}
    assert [n for n in custom if custom[n].type == "root-custom" and custom[n].id in by_id] == [
        "Scale root role 1", "Scale root role 2"]  # fmt: skip
    held = {n: [(p.project, p.serviceAccountCount, p.groupCount) for p in u]
            for n, u in usage.items()}  # fmt: skip
    assert held == {"Scale project role 1": [("scale-project-001", 1, 0)],
                    "Scale project role 2": [("scale-project-002", 0, 1)],
                    "Scale project role 3": [], "Scale project role 4": []}  # fmt: skip


def test_it_is_planted_once_per_database(scaled: SandboxProcess, tmp_path: Path) -> None:
    copy = tmp_path / "again.sqlite3"
    conn = db.connect(scaled.db)
    try:
        conn.execute("VACUUM INTO ?", (str(copy),))
    finally:
        conn.close()
    with SandboxProcess(copy, "--scale") as again, again.admin() as http:
        tokens = ApiTokenList.model_validate(http.get("/api/admin/api-tokens").json()).tokens
        groups = GroupList.model_validate(http.get("/api/admin/groups").json()).groups
    assert any("holds the --scale access set already" in line for line in again.output)
    assert len([t for t in tokens if t.name.startswith("scale-token-")]) == 10_000
    assert len(groups) == 200


def _parse(*words: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(list(words))


def test_scale_alone_is_the_access_set_and_scale_n_keeps_its_meaning(
    capsys: pytest.CaptureFixture[str],
) -> None:
    alone = options_of(_parse("--scale", "--port", "0"))
    assert (alone.scale, alone.scale_access) == (0, True)
    numbered = options_of(_parse("--scale", "300"))
    assert (numbered.scale, numbered.scale_access) == (300, False)
    neither = options_of(_parse())
    assert (neither.scale, neither.scale_access) == (0, False)
    with pytest.raises(SystemExit):
        _parse("--scale", "-5")
    assert "-5: a number of users and flags is 0 or more" in capsys.readouterr().err


def test_the_planters_hook_runs_inside_the_one_transaction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What service accounts and custom roles will plant runs with the set's ids, in its
    transaction: a planter that fails leaves nothing planted."""
    seen: list[tuple[int, int, int]] = []

    def counting(scale: demo.AccessScale) -> None:
        seen.append((len(scale.projects), len(scale.user_ids), len(scale.group_ids)))
        inside = scale.c.execute("SELECT count(*) FROM tokens WHERE name LIKE 'scale-token-%'")
        assert inside.fetchone()[0] == 10_000

    def failing(scale: demo.AccessScale) -> None:
        raise RuntimeError("a planter that fails")

    store = Store(db.connect(tmp_path / "hook.sqlite3"))
    store.initialise()
    monkeypatch.setattr(demo, "ACCESS_SCALE_PLANTERS", [counting, failing])
    with pytest.raises(RuntimeError, match="a planter that fails"):
        demo.load_access_scale(store)
    assert store.conn.execute("SELECT count(*) FROM tokens WHERE name LIKE 'scale-%'").fetchone()[
        0
    ] == 0  # fmt: skip
    monkeypatch.setattr(demo, "ACCESS_SCALE_PLANTERS", [counting])
    started = time.perf_counter()
    assert demo.load_access_scale(store) is True
    print(f"load_access_scale: {time.perf_counter() - started:.2f} s")
    assert seen == [(500, 2_000, 200), (500, 2_000, 200)]
    assert demo.load_access_scale(store) is False  # once per database
    assert len(seen) == 2


def test_the_flags_are_planted_with_their_configuration(scaled: SandboxProcess) -> None:
    """10,000 flags in 20 projects, each in development, staging and production with two
    strategies there (issue 37: what bench/promote.py compares and copies); read through the
    batch export, one request an environment."""
    with scaled.admin() as http:
        started = time.perf_counter()
        answer = http.post("/api/admin/features-batch/export",
                           json={"environment": "production", "features": []})  # fmt: skip
        print(f"exported production's {demo.SCALE_FLAGS:,} flags in "
              f"{time.perf_counter() - started:.2f} s")  # fmt: skip
        assert answer.status_code == 200, answer.text[:300]
        production = answer.json()
        staging = http.get(
            "/api/admin/projects/scale-project-020/features/scale-flag-09999/environments/staging"
        ).json()
    planted = [f for f in production["features"] if f["name"].startswith("scale-flag-")]
    assert len(planted) == demo.SCALE_FLAGS
    assert {f["project"] for f in planted} == {f"scale-project-{p:03d}" for p in range(1, 21)}
    ours = [s for s in production["featureStrategies"] if s["featureName"].startswith("scale-")]
    assert len(ours) == 2 * demo.SCALE_FLAGS
    on = [e for e in production["featureEnvironments"]
          if e["featureName"].startswith("scale-flag-") and e["enabled"]]  # fmt: skip
    assert len(on) == demo.SCALE_FLAGS // 2
    assert staging["enabled"] is True and len(staging["strategies"]) == 2
    assert "region" in {f["name"] for f in production["contextFields"]}


def test_100000_events_are_planted_exactly(scaled: SandboxProcess) -> None:
    """Issue 38: the event log at scale (`demo._plant_events`), read by the search at once."""
    conn = db.connect(scaled.db)
    try:
        planted = "FROM events WHERE feature LIKE 'scale-flag-%'"
        kinds = dict(conn.execute(f"SELECT type, count(*) {planted} GROUP BY type").fetchall())
        by_token = conn.execute(f"SELECT count(*) {planted} AND created_by_user_id = -42")
        span = conn.execute(f"SELECT min(created_at), max(created_at), count(*) {planted}")
        logged = conn.execute(
            "SELECT count(*) FROM event_data d JOIN events e ON e.id = d.event_id"
            " WHERE e.feature LIKE 'scale-flag-%'"
        ).fetchone()[0]
        (token_count,), (oldest, newest, count) = by_token.fetchone(), span.fetchone()
    finally:
        conn.close()
    assert count == demo.SCALE_EVENTS == 100_000
    assert kinds == {kind: 12_500 for kind, *_ in demo.SCALE_EVENT_KINDS} | {
        "feature-environment-enabled": 25_000}  # fmt: skip
    assert token_count == 10_000 and logged == 62_500
    assert newest - oldest == 99_999 * demo.SCALE_EVENT_STEP_MS
    with scaled.admin() as http:
        started = time.perf_counter()
        page = http.get("/api/admin/search/events",
                        params={"type": "IS:feature-updated", "limit": "1000"}).json()  # fmt: skip
        took = time.perf_counter() - started
    assert page["total"] == 12_500 and len(page["events"]) == 1_000
    assert page["events"][0]["preData"]["description"].startswith("flag ")
    print(f"a page of 1,000 of 100,000 events in {took * 1000:.0f} ms")
