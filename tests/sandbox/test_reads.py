"""Endpoints 3 to 6: archived features, dashboard, context-field strategies, inactive users."""

from __future__ import annotations

import json
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pydantic_core
import pytest
import uvicorn

from app.api.models import (
    ArchivedFeatures,
    ContextFieldStrategies,
    GroupOwner,
    InactiveUsers,
    OnboardingStatusFirstFlag,
    OnboardingStatusPlain,
    PersonalDashboardProjectDetails,
    SystemOwner,
    UserList,
    UserOwner,
)
from sandbox import db
from sandbox.app import create_app, wrap
from sandbox.demo import load_demo
from sandbox.process import SandboxProcess
from sandbox.server import bind
from sandbox.store import (
    ARCHIVED_FEATURES_QUERY,
    DAY_MS,
    INACTIVE_USERS_QUERY,
    Store,
    to_wire_time,
)
from tests.conftest import personal_token_of
from tests.sandbox.conftest import assert_error

ADMIN_READS = [
    "/api/admin/archive/features/web-shop",
    "/api/admin/personal-dashboard/web-shop",
    "/api/admin/context/region/strategies",
    "/api/admin/user-admin/inactive",
]


@pytest.mark.parametrize("path", ADMIN_READS)
def test_reads_need_an_admin_side_token(demo_sandbox, path):
    assert_error(httpx.get(demo_sandbox.url + path), 401, "AuthenticationRequired")
    assert_error(
        httpx.get(demo_sandbox.url + path, headers={"Authorization": "x"}),
        401,
        "AuthenticationRequired",
    )
    with demo_sandbox.client() as http:
        assert_error(http.get(path), 403, "NoAccessError")


# ------------------------------------------------------------------ 3: archived features


def sql_wire_time(column: str) -> str:
    """The old inactive-users code's SQL for `to_wire_time(column)`."""
    return (
        f"CASE WHEN {column} IS NULL THEN NULL ELSE strftime('%Y-%m-%dT%H:%M:%S', {column} / 1000,"
        f" 'unixepoch') || printf('.%03dZ', {column} % 1000) END"
    )


def test_archived_features_envelope_and_fields(demo_sandbox):
    with demo_sandbox.admin() as http:
        r = http.get("/api/admin/archive/features/web-shop")
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    archive = ArchivedFeatures.model_validate(r.json())
    assert archive.version == 1
    assert len(archive.features) >= 5
    now = datetime.now(UTC)
    for f in archive.features:
        assert f.project == "web-shop"
        assert f.archivedAt is not None and f.createdAt is not None
        assert f.archivedAt >= f.createdAt
        raw = next(x for x in r.json()["features"] if x["name"] == f.name)
        assert {e["name"] for e in raw["environments"]} == {"development", "production"}
        age = now - f.createdAt
        expected = {"release": 40, "experiment": 40, "operational": 7}.get(f.type or "")
        assert f.stale == (expected is not None and age > timedelta(days=expected)), f
        seen = [e["lastSeenAt"] for e in raw["environments"] if e["lastSeenAt"]]
        assert (raw["lastSeenAt"] is None) == (not seen)
    assert any(x["lastSeenAt"] for x in r.json()["features"]), "demo has sightings"
    total = sum(
        len(
            ArchivedFeatures.model_validate(
                http_get(demo_sandbox, f"/api/admin/archive/features/{p}")
            ).features
        )
        for p in ("default", "web-shop", "payments", "mobile-app")
    )
    assert total == 15


def http_get(sb, path):
    with sb.admin() as http:
        return http.get(path).json()


def test_archive_of_unknown_project_is_empty(demo_sandbox):
    assert http_get(demo_sandbox, "/api/admin/archive/features/no-such-project") == {
        "version": 1,
        "features": [],
    }


def test_archiving_shows_up_with_last_seen_from_metrics(sandbox):
    with sandbox.admin() as admin, sandbox.client() as client:
        r = admin.post(
            "/api/admin/projects/mobile-app/features",
            json={"name": "push-v2", "type": "kill-switch"},
        )
        assert r.status_code == 201, r.text
        metric = {
            "featureName": "push-v2",
            "appName": "ios",
            "environment": "development",  # the client token's
            "yes": 3,
            "no": 1,
        }
        assert (
            client.post(
                "/api/client/metrics/bulk", json={"applications": [], "metrics": [metric]}
            ).status_code
            == 202
        )
        assert admin.delete("/api/admin/projects/mobile-app/features/push-v2").status_code == 202
        raw = admin.get("/api/admin/archive/features/mobile-app").json()
    [f] = ArchivedFeatures.model_validate(raw).features
    assert f.name == "push-v2" and f.stale is False  # kill switches never go stale
    envs = {e["name"]: e for e in raw["features"][0]["environments"]}
    assert envs["development"]["lastSeenAt"] is not None
    assert envs["production"]["lastSeenAt"] is None
    assert raw["features"][0]["lastSeenAt"] == envs["development"]["lastSeenAt"]


# ------------------------------------------------------------------ 4: dashboard


def test_dashboard_of_an_onboarded_project(demo_sandbox):
    with demo_sandbox.admin() as http:
        r = http.get("/api/admin/personal-dashboard/web-shop")
    assert r.status_code == 200
    d = PersonalDashboardProjectDetails.model_validate(r.json())
    assert isinstance(d.onboardingStatus, OnboardingStatusPlain)
    assert d.onboardingStatus.status == "onboarded"
    assert len(d.latestEvents) == 10
    ids = [e.id for e in d.latestEvents]
    assert ids == sorted(ids, reverse=True)
    assert all(e.summary and "**" in e.summary for e in d.latestEvents)
    users = [o for o in d.owners if isinstance(o, UserOwner)]
    groups = [o for o in d.owners if isinstance(o, GroupOwner)]
    assert len(users) == 2 and all(u.email for u in users)
    assert [g.name for g in groups] == ["Checkout squad"]
    # the admin token is no user: the root Admin role alone
    assert [(x.name, x.type) for x in d.roles] == [("Admin", "root")]
    # the admin user's own token: a Member of web-shop, and root Admin
    mine = personal_token_of(demo_sandbox, "admin")
    with httpx.Client(base_url=demo_sandbox.url, headers={"Authorization": mine}) as http:
        d = PersonalDashboardProjectDetails.model_validate(
            http.get("/api/admin/personal-dashboard/web-shop").json()
        )
    assert {(x.name, x.type) for x in d.roles} == {("Member", "project"), ("Admin", "root")}


def test_dashboard_onboarding_started_has_the_system_owner(demo_sandbox):
    d = PersonalDashboardProjectDetails.model_validate(
        http_get(demo_sandbox, "/api/admin/personal-dashboard/mobile-app")
    )
    assert d.onboardingStatus.status == "onboarding-started"
    assert len(d.owners) == 1 and isinstance(d.owners[0], SystemOwner)
    assert d.latestEvents == []


def test_dashboard_first_flag_created(demo_sandbox):
    d = PersonalDashboardProjectDetails.model_validate(
        http_get(demo_sandbox, "/api/admin/personal-dashboard/payments")
    )
    assert isinstance(d.onboardingStatus, OnboardingStatusFirstFlag)
    assert d.onboardingStatus.feature


def test_dashboard_of_unknown_project_is_404(demo_sandbox):
    with demo_sandbox.admin() as http:
        assert_error(http.get("/api/admin/personal-dashboard/nope"), 404, "NotFoundError")


def test_dashboard_roles_follow_the_token(sandbox, personal_token):
    token = personal_token(sandbox, "farid.haddad")  # owner of web-shop, in two groups
    r = httpx.get(
        sandbox.url + "/api/admin/personal-dashboard/web-shop", headers={"Authorization": token}
    )
    roles = {(x["name"], x["type"]) for x in r.json()["roles"]}
    assert ("Owner", "project") in roles and ("Member", "project") in roles


# ------------------------------------------------------------------ 5: context strategies


def test_context_strategies(demo_sandbox):
    found = {}
    for field in ("userId", "appName", "region"):
        s = ContextFieldStrategies.model_validate(
            http_get(demo_sandbox, f"/api/admin/context/{field}/strategies")
        )
        assert s.strategies, field
        for item in s.strategies:
            assert item.id and item.featureName and item.projectId and item.environment
            assert item.strategyName == "flexibleRollout"
        found[field] = s
    assert len({s.projectId for s in found["region"].strategies}) >= 2


def test_context_strategies_unknown_or_unused_field_is_empty(demo_sandbox):
    for field in ("no-such-field", "tenantId"):
        assert http_get(demo_sandbox, f"/api/admin/context/{field}/strategies") == {
            "strategies": []
        }


def test_a_new_constrained_strategy_is_listed(sandbox):
    with sandbox.admin() as http:
        http.post("/api/admin/projects/default/features", json={"name": "geo-banner"})
        r = http.post(
            "/api/admin/projects/default/features/geo-banner/environments/production/strategies",
            json={
                "name": "default",
                "constraints": [{"contextName": "tenantId", "operator": "IN", "values": ["acme"]}],
            },
        )
        assert r.status_code == 200, r.text
        s = http.get("/api/admin/context/tenantId/strategies").json()["strategies"]
    assert s == [
        {
            "id": r.json()["id"],
            "featureName": "geo-banner",
            "projectId": "default",
            "environment": "production",
            "strategyName": "default",
        }
    ]


def test_strategies_of_archived_flags_are_not_a_use_of_the_field(sandbox):
    """Unleash 8.2 leaves archived flags out of a context field's strategies and of its
    `usedInFeatures`/`usedInProjects` counts: what is archived uses nothing."""

    def tenant_use(http: httpx.Client) -> tuple[list[str], int | None, int | None]:
        strategies = http.get("/api/admin/context/tenantId/strategies").json()["strategies"]
        field = next(f for f in http.get("/api/admin/context").json() if f["name"] == "tenantId")
        return ([s["featureName"] for s in strategies], field["usedInFeatures"],
                field["usedInProjects"])  # fmt: skip

    constraint = {"contextName": "tenantId", "operator": "IN", "values": ["acme"]}
    with sandbox.admin() as http:
        for project, name in (("default", "tenant-kept"), ("web-shop", "tenant-archived")):
            http.post(f"/api/admin/projects/{project}/features", json={"name": name})
            for env in ("development", "production"):
                r = http.post(
                    f"/api/admin/projects/{project}/features/{name}/environments/{env}/strategies",
                    json={"name": "default", "constraints": [constraint]},
                )
                assert r.status_code == 200, r.text
        assert tenant_use(http) == (["tenant-kept"] * 2 + ["tenant-archived"] * 2, 2, 2)
        r = http.delete("/api/admin/projects/web-shop/features/tenant-archived")
        assert r.status_code == 202
        assert tenant_use(http) == (["tenant-kept"] * 2, 1, 1)


def test_the_demo_lists_no_strategy_of_an_archived_flag(demo_sandbox):
    """The demo has strategies constrained on userId and region on archived flags too: none of
    them is listed, and each field's counts agree with its list."""
    archived = {
        f["name"]
        for project in ("default", "web-shop", "payments", "mobile-app")
        for f in http_get(demo_sandbox, f"/api/admin/archive/features/{project}")["features"]
    }
    fields = {f["name"]: f for f in http_get(demo_sandbox, "/api/admin/context")}
    for field in ("userId", "region"):
        strategies = ContextFieldStrategies.model_validate(
            http_get(demo_sandbox, f"/api/admin/context/{field}/strategies")
        ).strategies
        assert strategies, field
        assert not {s.featureName for s in strategies} & archived, field
        assert fields[field]["usedInFeatures"] == len({s.featureName for s in strategies})
        assert fields[field]["usedInProjects"] == len({s.projectId for s in strategies})
    with closing(sqlite3.connect(demo_sandbox.db)) as conn:
        on_archived = conn.execute(
            "SELECT count(DISTINCT scf.context_name) FROM strategy_context_fields scf"
            " JOIN strategies s ON s.id = scf.strategy_id"
            " JOIN features f ON f.name = s.feature WHERE f.archived_at IS NOT NULL"
        ).fetchone()[0]
    assert on_archived == 2  # userId and region: the demo has what the test is about


# ------------------------------------------------------------------ 6: inactive users


def test_inactive_users_of_the_demo(demo_sandbox):
    r = http_get(demo_sandbox, "/api/admin/user-admin/inactive")
    inactive = InactiveUsers.model_validate(r)
    assert inactive.version == 1
    assert len(inactive.inactiveUsers) == 12
    assert len({u.id for u in inactive.inactiveUsers}) == 12
    cutoff = datetime.now(UTC) - timedelta(days=180)
    never = [u for u in inactive.inactiveUsers if u.seenAt is None]
    assert len(never) == 4 and all(u.createdAt < cutoff for u in never)
    assert all(u.seenAt < cutoff for u in inactive.inactiveUsers if u.seenAt)
    names = {u.username for u in inactive.inactiveUsers}
    assert "ci-deploy-bot" not in names  # service accounts are excluded
    # kept active by a personal access token used 3 days ago, despite a login 420 days ago
    users = UserList.model_validate(http_get(demo_sandbox, "/api/admin/user-admin")).users
    pat_user = next(u for u in users if u.username == "ravi.kumar")
    assert pat_user.seenAt < cutoff and "ravi.kumar" not in names


def test_inactive_days_threshold(tmp_path):
    from sandbox.process import SandboxProcess

    with SandboxProcess(tmp_path / "x.sqlite3", "--inactive-days", "30") as sb:
        inactive = InactiveUsers.model_validate(http_get(sb, "/api/admin/user-admin/inactive"))
    assert len(inactive.inactiveUsers) > 12


def test_using_a_personal_token_makes_a_user_active(sandbox, personal_token):
    def names():
        inactive = http_get(sandbox, "/api/admin/user-admin/inactive")["inactiveUsers"]
        return {u["username"] for u in inactive}

    assert "leon.weber" in names()
    token = personal_token(sandbox, "leon.weber")
    httpx.get(sandbox.url + "/api/admin/projects", headers={"Authorization": token})
    assert "leon.weber" not in names()


# ------------------------------------------------------------------ 3 and 6, streamed
# The two answers that run to 100,000 items are streamed in chunks as they are read; these tests
# hold them to the bytes the whole-body implementation sent (kept below as it was).


def whole_inactive_users(store: Store) -> bytes:
    """The body as the sandbox built it before streaming: all of it, then `to_json`."""
    cutoff = store.clock() - store.inactive_days * DAY_MS
    rows = store.conn.execute(
        f"SELECT id, name, email, username, {sql_wire_time('seen_at')},"
        f" {sql_wire_time('created_at')}, {sql_wire_time('pat_seen_at')} FROM users"
        " WHERE account_type = 'User'"
        " AND max(coalesce(seen_at, created_at), coalesce(pat_seen_at, 0)) < ?"
        " ORDER BY coalesce(seen_at, created_at), id",
        (cutoff,),
    )
    keys = ("id", "name", "email", "username", "seenAt", "createdAt", "patSeenAt")
    body = {"version": 1, "inactiveUsers": [dict(zip(keys, row, strict=True)) for row in rows]}
    return pydantic_core.to_json(body)


def whole_archived_features(store: Store, project: str) -> bytes:
    """The body as the sandbox built it before streaming: all of it, then `to_json`."""
    rows = store.conn.execute(
        "SELECT name, type, description, project, created_at, archived_at, impression_data"
        " FROM features WHERE project = ? AND archived_at IS NOT NULL"
        " ORDER BY archived_at DESC, name",
        (project,),
    ).fetchall()
    last_seen = {
        (feature, env): seen
        for feature, env, seen in store.conn.execute(
            "SELECT cm.feature, cm.environment, max(cm.updated_at) FROM client_metrics cm"
            " JOIN features f ON f.name = cm.feature"
            " WHERE f.project = ? AND f.archived_at IS NOT NULL"
            " GROUP BY cm.feature, cm.environment",
            (project,),
        )
    }
    environments: dict[str, list[dict[str, Any]]] = {}
    latest: dict[str, int] = {}
    for feature, env, enabled in store.conn.execute(
        "SELECT fe.feature, fe.environment, fe.enabled"
        " FROM feature_environments fe JOIN features f ON f.name = fe.feature"
        " JOIN environments e ON e.name = fe.environment"
        " WHERE f.project = ? AND f.archived_at IS NOT NULL ORDER BY e.sort_order",
        (project,),
    ):
        seen = last_seen.get((feature, env))
        environments.setdefault(feature, []).append(
            {"name": env, "lastSeenAt": to_wire_time(seen), "enabled": bool(enabled)}
        )
        if seen is not None and seen > latest.get(feature, -1):
            latest[feature] = seen
    features = [
        {
            "name": name,
            "type": type_,
            "description": description,
            "project": project_,
            "stale": store.is_stale(type_, created),
            "impressionData": bool(impression),
            "createdAt": to_wire_time(created),
            "archivedAt": to_wire_time(archived),
            "lastSeenAt": to_wire_time(latest.get(name)),
            "environments": environments.get(name, []),
        }
        for name, type_, description, project_, created, archived, impression in rows
    ]
    return pydantic_core.to_json({"version": 1, "features": features})


@contextmanager
def store_of(sb: SandboxProcess) -> Iterator[Store]:
    """A Store on the running sandbox's database (WAL: reading beside the server is fine)."""
    conn = db.connect(sb.db)
    try:
        yield Store(conn)
    finally:
        conn.close()


PROJECTS = ("default", "web-shop", "payments", "mobile-app")
ODD_TEXT = 'Quotes " and \\ backslashes,\ttabs,\nnew lines, \x01\x1f controls, é, 😀 and \u2028.'
#: what a request may name a thing with: no control characters (`app.api.models.OneLine`)
ODD_NAME = 'Quotes " and \\ backslashes, é, 😀 and \u2028.'


def hold(sb: SandboxProcess, sql: str, *args: object) -> None:
    """Write `ODD_TEXT`'s like into the database as a request no longer can (control
    characters): what a database made before holds, which the answers still escape."""
    with store_of(sb) as store, store.tx() as c:
        c.execute(sql, args)


def test_streamed_answers_are_the_bytes_of_the_whole_body_answers(sandbox):
    """Same keys, order, times, nulls and escapes as before, sightings and odd text included."""
    with sandbox.admin() as admin, sandbox.client() as client:
        created = admin.post(
            "/api/admin/projects/web-shop/features",
            json={"name": "odd-text", "description": ODD_NAME, "impressionData": True},
        )
        assert created.status_code == 201, created.text
        hold(sandbox, "UPDATE features SET description = ? WHERE name = 'odd-text'", ODD_TEXT)
        metric = {"featureName": "odd-text", "appName": "web", "environment": "development",
                  "yes": 1, "no": 0}  # fmt: skip
        sent = client.post(
            "/api/client/metrics/bulk", json={"applications": [], "metrics": [metric]}
        )
        assert sent.status_code == 202, sent.text
        assert admin.delete("/api/admin/projects/web-shop/features/odd-text").status_code == 202
        answers = {p: admin.get(f"/api/admin/archive/features/{p}") for p in PROJECTS}
        inactive = admin.get("/api/admin/user-admin/inactive")
    with store_of(sandbox) as store:
        for project, r in answers.items():
            assert r.status_code == 200 and r.headers["content-type"] == "application/json"
            assert r.headers.get("transfer-encoding") == "chunked", "streamed, not sent whole"
            assert r.content == whole_archived_features(store, project), project
            ArchivedFeatures.model_validate_json(r.content)
        assert inactive.headers.get("transfer-encoding") == "chunked"
        assert inactive.content == whole_inactive_users(store)
        assert len(InactiveUsers.model_validate_json(inactive.content).inactiveUsers) == 12
    [odd] = [f for f in answers["web-shop"].json()["features"] if f["name"] == "odd-text"]
    assert odd["description"] == ODD_TEXT and odd["impressionData"] is True
    assert odd["lastSeenAt"] is not None and odd["environments"][0]["lastSeenAt"] is not None


def test_the_archive_keeps_up_with_every_change_to_a_flags_environments(sandbox):
    """The archive keeps each flag's JSON on the flag's row (migration 5 -> 6): after each kind
    of write, the answers are still the bytes the whole-body implementation makes from the
    tables themselves. Metrics before the flag exists, metrics raised, lowered and removed, an
    environment that sorts before the others by its sort order but not its name, then after
    them, a flag revived (its environments turned off) and archived again, and one deleted."""
    now = int(time.time() * 1000)
    metrics = ("INSERT INTO client_metrics(feature, app_name, environment, window_start, yes,"
               " no, updated_at) VALUES(?, 'web', ?, ?, 1, 0, ?)")  # fmt: skip
    with store_of(sandbox) as store, store.tx() as c:  # metrics of a flag not made yet
        c.execute(metrics, ("latecomer", "production", now - 7_200_000, now - 5_000))
        c.execute(metrics, ("latecomer", "development", now - 3_600_000, now - 9_000))
    with sandbox.admin() as admin:
        for name, description in (("latecomer", 'say "hi" {to} you ✓'), ("quiet", None)):
            body = {"name": name, "description": description, "type": "operational"}
            assert admin.post("/api/admin/projects/web-shop/features", json=body).status_code == 201
    with store_of(sandbox) as store, store.tx() as c:
        c.execute("INSERT INTO environments(name, type, sort_order) VALUES('canary', 'test', 0)")
        c.execute("INSERT INTO feature_environments(feature, environment, enabled)"
                  " VALUES('latecomer', 'canary', 1)")  # fmt: skip
        c.execute("UPDATE feature_environments SET enabled = 1 WHERE feature = 'quiet'")
        c.execute(metrics, ("latecomer", "canary", now - 3_600_000, now - 1_000))
        # the same window again, later (the metrics store's upsert), then earlier, then gone
        upsert = metrics + " ON CONFLICT DO UPDATE SET updated_at = excluded.updated_at"
        for at in (now - 4_000, now - 2_000):
            c.execute(upsert, ("quiet", "development", now - 3_600_000, at))
        c.execute("UPDATE client_metrics SET updated_at = ? WHERE feature = 'latecomer'"
                  " AND environment = 'canary'", (now - 60_000,))  # fmt: skip
        c.execute("DELETE FROM client_metrics WHERE feature = 'latecomer'"
                  " AND environment = 'development'")  # fmt: skip
    with sandbox.admin() as admin:
        body = {"features": ["latecomer", "quiet"]}
        assert admin.post("/api/admin/projects/web-shop/archive", json=body).status_code == 202
        before = ArchivedFeatures.model_validate_json(
            admin.get("/api/admin/archive/features/web-shop").content
        ).features
        assert len(before) >= 3, "the demo archived another flag of web-shop"
        revived = next(f.name for f in before if f.name not in body["features"])
        gone = next(f.name for f in before[1:] if f.name not in (revived, *body["features"]))
        assert admin.post(f"/api/admin/archive/revive/{revived}").status_code == 200
        again = {"features": [revived]}
        assert admin.post("/api/admin/projects/web-shop/archive", json=again).status_code == 202
        assert admin.delete(f"/api/admin/archive/{gone}").status_code == 200
        answers = {p: admin.get(f"/api/admin/archive/features/{p}").content for p in PROJECTS}
    with store_of(sandbox) as store:
        for project, content in answers.items():
            assert content == whole_archived_features(store, project), project
    flags = {f["name"]: f for f in json.loads(answers["web-shop"])["features"]}
    assert gone not in flags
    assert all(not e["enabled"] for e in flags[revived]["environments"])
    late = flags["latecomer"]
    # (web-shop has the demo's staging too: flag configuration, issue 37 slice 1)
    assert [e["name"] for e in late["environments"]] == [
        "canary", "development", "staging", "production"]  # fmt: skip
    assert [e["enabled"] for e in late["environments"]] == [True, False, False, False]
    seen = [e["lastSeenAt"] for e in late["environments"]]
    assert seen == [to_wire_time(now - 60_000), None, None, to_wire_time(now - 5_000)]
    assert late["lastSeenAt"] == to_wire_time(now - 5_000)
    assert flags["quiet"]["description"] is None
    assert flags["quiet"]["lastSeenAt"] == to_wire_time(now - 2_000)
    with store_of(sandbox) as store, store.tx() as c:
        c.execute("UPDATE environments SET sort_order = 9 WHERE name = 'canary'")
    with sandbox.admin() as admin:
        content = admin.get("/api/admin/archive/features/web-shop").content
    with store_of(sandbox) as store:
        assert content == whole_archived_features(store, "web-shop")
    [late] = [f for f in json.loads(content)["features"] if f["name"] == "latecomer"]
    assert [e["name"] for e in late["environments"]] == [
        "development", "staging", "production", "canary"]  # fmt: skip


def test_inactive_users_keep_up_with_changes_to_them(sandbox):
    """Each inactive user's JSON is kept on their row (migration 6 -> 7): after a user is
    renamed (odd text included), given another email, and one made with nulls, the answer is
    still the bytes the whole-body implementation makes of the table."""
    with sandbox.admin() as admin:
        listed = InactiveUsers.model_validate_json(
            admin.get("/api/admin/user-admin/inactive").content
        ).inactiveUsers
        first, second, third = listed[0].id, listed[1].id, listed[2].id
        for user_id, body in ((first, {"name": ODD_NAME}), (second, {"email": "né@x.example"})):
            assert admin.put(f"/api/admin/user-admin/{user_id}", json=body).status_code == 200
    hold(sandbox, "UPDATE users SET name = ? WHERE id = ?", ODD_TEXT, third)
    with store_of(sandbox) as store, store.tx() as c:
        c.execute("INSERT INTO users(username, created_at) VALUES('long-gone', 0)")
        c.execute("UPDATE users SET pat_seen_at = 1234 WHERE id = ?", (second,))
    with sandbox.admin() as admin:
        inactive = admin.get("/api/admin/user-admin/inactive").content
    with store_of(sandbox) as store:
        assert inactive == whole_inactive_users(store)
    users = {u["id"]: u for u in json.loads(inactive)["inactiveUsers"]}
    assert users[first]["name"] == ODD_NAME and users[second]["email"] == "né@x.example"
    assert users[third]["name"] == ODD_TEXT
    assert users[second]["patSeenAt"] == "1970-01-01T00:00:01.234Z"
    [gone] = [u for u in users.values() if u["username"] == "long-gone"]
    assert gone["name"] is None and gone["seenAt"] is None
    assert gone["createdAt"] == "1970-01-01T00:00:00.000Z"


def test_a_database_made_before_the_large_answers_kept_their_items_answers_the_same(tmp_path):
    """A database at schema 5 with archived flags, metrics and inactive users, served after
    migrations 5 -> 6 and 6 -> 7, gives the answers the whole-body implementation makes of its
    tables."""
    path = tmp_path / "old.sqlite3"
    conn = sqlite3.connect(path, isolation_level=None)
    for version in range(5):
        conn.execute("BEGIN")
        for statement in db._split_sql(db.MIGRATIONS[version]):
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {version + 1}")
        conn.execute("COMMIT")
    old = Store(conn)
    old.initialise()
    load_demo(old)
    conn.close()
    with SandboxProcess(path) as sb, sb.admin() as admin, store_of(sb) as store:
        answers = {p: admin.get(f"/api/admin/archive/features/{p}").content for p in PROJECTS}
        for project, content in answers.items():
            assert content == whole_archived_features(store, project), project
        inactive = admin.get("/api/admin/user-admin/inactive").content
        assert inactive == whole_inactive_users(store)
        assert len(json.loads(inactive)["inactiveUsers"]) == 12
    seen = [f["lastSeenAt"] for p in PROJECTS for f in json.loads(answers[p])["features"]]
    assert any(seen), "the demo's archived flags include some with metrics"


def test_an_archive_with_no_archived_flags_is_an_empty_list(demo_sandbox):
    with demo_sandbox.admin() as http:
        for project in ("mobile-app", "no-such-project"):  # the demo archived none in mobile-app
            r = http.get(f"/api/admin/archive/features/{project}")
            assert r.status_code == 200 and r.content == b'{"version":1,"features":[]}'


SCALE = 30_000  # 15 chunks of each answer: more than the server buffers for a client


@pytest.fixture(scope="module")
def scaled_sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxProcess]:
    path = tmp_path_factory.mktemp("scaled") / "scaled.sqlite3"
    with SandboxProcess(path, "--scale", str(SCALE)) as sb:
        yield sb


def test_large_answers_arrive_complete_and_in_order(scaled_sandbox):
    with scaled_sandbox.admin() as http:
        inactive = http.get("/api/admin/user-admin/inactive")
        archive = http.get("/api/admin/archive/features/default")
    with store_of(scaled_sandbox) as store:
        assert inactive.content == whole_inactive_users(store)
        assert archive.content == whole_archived_features(store, "default")
    users = InactiveUsers.model_validate_json(inactive.content).inactiveUsers
    assert len(users) == SCALE + 12 and len({u.id for u in users}) == len(users)
    keys = [((u.seenAt or u.createdAt), u.id) for u in users]
    assert keys == sorted(keys)
    flags = ArchivedFeatures.model_validate_json(archive.content).features
    assert len(flags) > SCALE and len({f.name for f in flags}) == len(flags)
    assert all(f.project == "default" for f in flags)
    order = [(-f.archivedAt.timestamp(), f.name) for f in flags]  # newest first, then by name
    assert order == sorted(order)


def test_a_client_gone_midway_stops_the_reader_and_the_next_request_is_whole(scaled_sandbox):
    sb = scaled_sandbox
    path = "/api/admin/archive/features/default"
    with sb.admin() as http:  # a write, so the answer's snapshot is one the WAL must keep
        r = http.post("/api/admin/projects/payments/features", json={"name": "midway-probe"})
        assert r.status_code == 201, r.text
    probe = sqlite3.connect(sb.db, isolation_level=None)
    try:
        probe.execute("PRAGMA busy_timeout = 0")
        host, port = sb.url.removeprefix("http://").split(":")
        stalled = socket.socket()
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 32_768)  # a slow reader
        stalled.connect((host, int(port)))
        stalled.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n"
                        f"Authorization: {sb.admin_token}\r\n\r\n".encode())  # fmt: skip
        received = b""
        while b"\r\n\r\n" not in received or len(received) < 100_000:
            data = stalled.recv(65_536)
            assert data, received[:500]
            received += data
        assert received.startswith(b"HTTP/1.1 200 "), received[:500]
        # midway: the answer's reader still holds its snapshot, so the WAL cannot be reset
        assert probe.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] == 1
        with sb.admin() as http:  # the server answers others meanwhile
            other = InactiveUsers.model_validate_json(
                http.get("/api/admin/user-admin/inactive").content
            )
        assert len(other.inactiveUsers) == SCALE + 12
        stalled.close()  # unread data: the peer gets a reset
        # the reader ends its transaction once it sees the client went away (waited for here
        # by SQLite's busy handler; a reader left running would keep the checkpoint busy)
        probe.execute("PRAGMA busy_timeout = 30000")
        assert probe.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] == 0
    finally:
        probe.close()
    with sb.admin() as http:
        whole = http.get(path)
    assert whole.status_code == 200
    flags = ArchivedFeatures.model_validate_json(whole.content).features
    assert len(flags) > SCALE and whole.content.endswith(b"]}")


def test_large_answers_are_read_in_index_order_without_a_sort(scaled_sandbox):
    """The first chunk is ready after a few thousand rows only if no step sorts them all; and
    each row is read from the index alone (a covering index), not looked up in its table nor
    anywhere else."""
    queries = [(INACTIVE_USERS_QUERY, (0, 0), "users_last_login"),
               (ARCHIVED_FEATURES_QUERY, {"project": "default", "now": 0},
                "features_archived")]  # fmt: skip
    read = {
        "users_last_login": ("seen_at", "created_at", "pat_seen_at", "inactive_json"),
        "features_archived": ("type", "created_at", "archived_head", "archived_tail"),
    }  # fmt: skip
    fresh = db.connect(":memory:")
    with store_of(scaled_sandbox) as store:
        for conn in (fresh, store.conn):
            for query, args, index in queries:
                plan = " | ".join(r[3] for r in conn.execute("EXPLAIN QUERY PLAN " + query, args))
                assert f"USING INDEX {index}" in plan or f"USING COVERING INDEX {index}" in plan
                assert "TEMP B-TREE" not in plan, plan
                # SQLite 3.40 names an index on an expression "covering" only from 3.41 on: what
                # the answer reads must be among the index's columns
                held = {r[2] for r in conn.execute(f"PRAGMA index_xinfo({index})") if r[2]}
                assert set(read[index]) <= held, (index, set(read[index]) - held)
            # a flag's environments come with it: nothing is looked up per flag
            only = "USING COVERING INDEX features_archived (project=? AND archived_at>?)"
            assert plan == f"SEARCH features {only}", plan
    fresh.close()


@contextmanager
def served_in_thread(store: Store) -> Iterator[str]:
    """The sandbox app over `store`, on a real socket, served by uvicorn on a thread here: for a
    database in memory, which a `flagdesk serve` child cannot share."""
    sock = bind("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(wrap(create_app(store)), log_level="warning",
                                           lifespan="off", http="httptools"))  # fmt: skip
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started:
            assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.01)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()


def test_a_database_in_memory_answers_whole(tmp_path):
    """No second connection can open an in-memory database: there the answer is read on the
    loop thread at once, and is still the same body."""
    store = Store(db.connect(":memory:"))
    assert store.reader() is None
    store.initialise()
    load_demo(store)
    token, _ = store.ensure_token("admin", None)
    expected = {p: whole_archived_features(store, p) for p in PROJECTS}
    expected["inactive"] = whole_inactive_users(store)
    with (
        served_in_thread(store) as url,
        httpx.Client(base_url=url, headers={"Authorization": token}, timeout=30) as http,
    ):
        got = {p: http.get(f"/api/admin/archive/features/{p}").content for p in PROJECTS}
        got["inactive"] = http.get("/api/admin/user-admin/inactive").content
    store.conn.close()
    assert got == expected
    assert len(InactiveUsers.model_validate_json(got["inactive"]).inactiveUsers) == 12
    assert sum(len(ArchivedFeatures.model_validate_json(got[p]).features) for p in PROJECTS) == 15


def test_a_streamed_answer_needs_no_anyio_backend(tmp_path):
    """A streamed answer watches for the client going away with asyncio's own tasks: Starlette's
    anyio task group imported anyio's asyncio backend in the middle of the first one (25-40 ms,
    among the connection's first requests the GUI's first data waits for). Served as `flagdesk
    serve` serves it (uvicorn, httptools), in a process of its own."""
    code = f"""
import http.client, sys, threading, time
import uvicorn
from sandbox import db
from sandbox.app import create_app, wrap
from sandbox.demo import load_demo
from sandbox.server import bind
from sandbox.store import Store

store = Store(db.connect({str(tmp_path / "s.sqlite3")!r}))
store.initialise()
load_demo(store)
token, _ = store.ensure_token("admin", "secret")
sock = bind("127.0.0.1", 0)
server = uvicorn.Server(uvicorn.Config(wrap(create_app(store)), log_level="warning",
                                       lifespan="off", http="httptools", ws="none"))
threading.Thread(target=server.run, kwargs={{"sockets": [sock]}}, daemon=True).start()
while not server.started:
    time.sleep(0.01)
conn = http.client.HTTPConnection("127.0.0.1", sock.getsockname()[1], timeout=30)
for path in ("/api/admin/archive/features/default", "/api/admin/user-admin/inactive"):
    conn.request("GET", path, headers={{"Authorization": token}})
    answer = conn.getresponse()
    print(answer.status, answer.getheader("transfer-encoding"), answer.read()[-2:])
print("anyio._backends._asyncio" in sys.modules)
server.should_exit = True
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=Path(__file__).resolve().parents[2], timeout=60)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:3] == ["200 chunked b']}'"] * 2 + ["False"]


def test_a_failure_midway_cuts_the_answer_short(tmp_path, monkeypatch):
    """Once bytes have left, a failure cannot become an error status: the connection is cut
    before the end, so a client never takes part of an answer for all of it. Before the first
    byte it is still a 500."""
    store = Store(db.connect(tmp_path / "db.sqlite3"))
    store.initialise()
    load_demo(store)
    token, _ = store.ensure_token("admin", None)
    whole = Store.archived_features

    def failing_midway(self: Store, project: str) -> Iterator[bytes]:
        with closing(whole(self, project)) as chunks:
            yield next(chunks)
        raise RuntimeError("the disk went away")

    def failing_at_once(self: Store, project: str) -> Iterator[bytes]:
        raise RuntimeError("the disk went away")
        yield b""

    with served_in_thread(store) as url:

        def get() -> httpx.Response:  # a connection each: uvicorn drops one after a failure
            url_path = url + "/api/admin/archive/features/web-shop"
            return httpx.get(url_path, headers={"Authorization": token}, timeout=30)

        monkeypatch.setattr(Store, "archived_features", failing_midway)
        with pytest.raises(httpx.RemoteProtocolError, match="incomplete chunked read"):
            get()
        monkeypatch.setattr(Store, "archived_features", failing_at_once)
        assert get().status_code == 500
        monkeypatch.setattr(Store, "archived_features", whole)
        assert len(ArchivedFeatures.model_validate_json(get().content).features) >= 5
    store.conn.close()
