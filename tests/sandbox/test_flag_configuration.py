"""The sandbox's flag configuration per environment (issue 37, slice 1) over HTTP, as Unleash 8.2
answers it: the environments and a project's (adding one, removing one and the flags'
configuration in it with it); a flag's whole configuration; its metadata (`PUT`, `PATCH`, stale
marks); on and off per environment; strategies (create with everything createFeatureStrategySchema
holds, read, update, patch, delete, their order); the flag's variants per environment (`PUT`,
JSON Patch); Unleash's 404 texts and 400s; the events with their `preData` and `data`; the
demo's environments that differ; and the routes when the sandbox plays a release."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.api import models as m
from sandbox import demo
from sandbox.process import SandboxProcess
from tests.sandbox.conftest import assert_error

PROJECT = "/api/admin/projects/{}"
FLAG = PROJECT + "/features/{}"
FLAG_ENV = FLAG + "/environments/{}"
STRATEGIES = FLAG_ENV + "/strategies"
VARIANTS = FLAG_ENV + "/variants"


@pytest.fixture
def admin(sandbox: SandboxProcess) -> Iterator[httpx.Client]:
    with sandbox.admin() as http:
        yield http


def ok(answer: httpx.Response, status: int = 200) -> Any:
    assert answer.status_code == status, answer.text
    return answer.json() if answer.content else None


def events(sb: SandboxProcess, kind: str, feature: str | None = None) -> list[dict[str, Any]]:
    """The events of `kind` (of `feature` alone when given: the demo has events of its own),
    oldest first, with their preData and data."""
    with sqlite3.connect(sb.db) as conn:
        conn.row_factory = sqlite3.Row
        rows = conn.execute(
            "SELECT e.*, d.pre_data, d.data FROM events e LEFT JOIN event_data d"
            " ON d.event_id = e.id WHERE e.type = ? AND (? IS NULL OR e.feature = ?)"
            " ORDER BY e.id",
            (kind, feature, feature),
        ).fetchall()
    return [{**dict(r), "pre_data": r["pre_data"] and json.loads(r["pre_data"]),
             "data": r["data"] and json.loads(r["data"])} for r in rows]  # fmt: skip


def assert_bad_data(response: httpx.Response, message: str) -> None:
    """Unleash's BadDataError of a service: 400, its message after the common words."""
    body = assert_error(response, 400, "BadDataError")
    assert body["details"] == [{"message": message}]
    assert body["message"] == (
        "Request validation failed: your request body or params contain invalid data: " + message
    )


def sql(sb: SandboxProcess, query: str, *args: Any) -> list[tuple[Any, ...]]:
    with sqlite3.connect(sb.db) as conn:
        return [tuple(r) for r in conn.execute(query, args).fetchall()]


def new_flag(http: httpx.Client, project: str, name: str) -> None:
    ok(http.post(PROJECT.format(project) + "/features", json={"name": name}), 201)


def live_flags(http: httpx.Client, project: str) -> list[str]:
    return [f["name"] for f in ok(http.get(PROJECT.format(project) + "/features"))["features"]]


# --------------------------------------------------------------------------- environments


def test_the_environments(admin: httpx.Client) -> None:
    got = m.Environments.model_validate(ok(admin.get("/api/admin/environments")))
    assert [(e.name, e.type, e.sortOrder) for e in got.environments] == [
        ("development", "development", 1), ("staging", "test", 2),
        ("production", "production", 3)]  # fmt: skip
    assert all(e.enabled and not e.protected and e.projectCount == 4 for e in got.environments)
    one = m.Environment.model_validate(ok(admin.get("/api/admin/environments/staging")))
    assert one == got.environments[1]
    body = assert_error(admin.get("/api/admin/environments/nope"), 404, "NotFoundError")
    assert body["message"] == "Could not find environment with name: nope"


def test_a_project_loses_an_environment_and_its_configuration_there(
    sandbox: SandboxProcess, admin: httpx.Client
) -> None:
    flag = live_flags(admin, "web-shop")[0]
    staging = ok(admin.get(STRATEGIES.format("web-shop", flag, "staging")))
    assert staging
    (before,) = sql(sandbox, "SELECT count(*) FROM strategy_segments")
    unknown = admin.post(STRATEGIES.format("web-shop", flag, "staging"),
                         json={"name": "default", "segments": [9999]})  # fmt: skip
    assert assert_error(unknown, 404, "NotFoundError")["message"] == (
        'No segment exists with ID "9999"')  # fmt: skip
    segment = next(g["id"] for g in ok(admin.get("/api/admin/segments"))["segments"])
    added = admin.post(STRATEGIES.format("web-shop", flag, "staging"),
                       json={"name": "default", "segments": [segment]})  # fmt: skip
    assert added.status_code == 200, added.text
    assert sql(sandbox, "SELECT count(*) FROM strategy_segments") == [(before[0] + 1,)]

    assert ok(admin.delete(PROJECT.format("web-shop") + "/environments/staging")) is None
    project = m.EnvironmentsProject.model_validate(
        ok(admin.get("/api/admin/environments/project/web-shop")))  # fmt: skip
    assert [(e.name, e.visible) for e in project.environments] == [
        ("development", True), ("staging", False), ("production", True)]  # fmt: skip
    config = m.Feature.model_validate(ok(admin.get(FLAG.format("web-shop", flag))))
    assert [e.name for e in config.environments] == ["development", "production"]
    body = assert_error(admin.get(STRATEGIES.format("web-shop", flag, "staging")), 404,
                        "NotFoundError")  # fmt: skip
    assert body["message"] == f"Feature {flag} does not have environment staging"
    assert sql(
        sandbox,
        "SELECT count(*) FROM strategies s JOIN features f ON f.name = s.feature"
        " WHERE f.project = 'web-shop' AND s.environment = 'staging'",
    ) == [(0,)]
    assert sql(sandbox, "SELECT count(*) FROM strategy_segments") == [before]
    # another project keeps it
    other = live_flags(admin, "payments")[0]
    assert ok(admin.get(STRATEGIES.format("payments", other, "staging")))
    # a strategy there now: the project lacks the environment
    assert_bad_data(
        admin.post(STRATEGIES.format("web-shop", flag, "staging"), json={"name": "default"}),
        "You have not added the current environment to the project",
    )

    # back again: every flag of the project in it, off, with no strategy
    ok(admin.post(PROJECT.format("web-shop") + "/environments", json={"environment": "staging"}))
    config = m.Feature.model_validate(ok(admin.get(FLAG.format("web-shop", flag))))
    staging_again = next(e for e in config.environments if e.name == "staging")
    assert not staging_again.enabled and staging_again.strategies == []
    assert [(e["project"], e["environment"]) for e in events(sandbox, "project-environment-removed")
            ] == [("web-shop", "staging")]  # fmt: skip
    assert [(e["project"], e["environment"]) for e in events(sandbox, "project-environment-added")
            ] == [("web-shop", "staging")]  # fmt: skip

    body = assert_error(
        admin.post(PROJECT.format("web-shop") + "/environments", json={"environment": "staging"}),
        409,
        "NameExistsError",
    )
    assert body["message"] == "web-shop already has the environment staging enabled"
    assert_bad_data(
        admin.post(PROJECT.format("web-shop") + "/environments", json={"environment": "qa"}),
        "Environment qa does not exist",
    )
    body = assert_error(
        admin.post(PROJECT.format("nope") + "/environments", json={"environment": "staging"}),
        404,
        "NotFoundError",
    )
    assert body["message"] == "No project found"
    assert_error(admin.post(PROJECT.format("web-shop") + "/environments", json={}), 400,
                 "ValidationError")  # fmt: skip


def test_a_projects_environments_count_its_flags_on_and_tokens(admin: httpx.Client) -> None:
    """`projectEnabledToggleCount` per environment as the flags' configuration says, and
    `projectApiTokenCount` one more where a token for the project was made (one grouped count
    each in the sandbox)."""

    def counts() -> dict[str, tuple[int, int]]:
        project = m.EnvironmentsProject.model_validate(
            ok(admin.get("/api/admin/environments/project/default")))  # fmt: skip
        return {e.name: (e.projectEnabledToggleCount, e.projectApiTokenCount)
                for e in project.environments}  # fmt: skip

    before = counts()
    new_flag(admin, "default", "counted")
    ok(admin.post(FLAG_ENV.format("default", "counted", "staging") + "/on"))
    ok(admin.post("/api/admin/api-tokens", json={
        "tokenName": "counted", "type": "client", "environment": "staging",
        "projects": ["default"]}), 201)  # fmt: skip
    ok(admin.post("/api/admin/api-tokens", json={
        "tokenName": "elsewhere", "type": "client", "environment": "production",
        "projects": ["web-shop"]}), 201)  # fmt: skip
    after = counts()
    flags = [m.Feature.model_validate(ok(admin.get(FLAG.format("default", f))))
             for f in live_flags(admin, "default")]  # fmt: skip
    assert {name: on for name, (on, _) in after.items()} == {
        name: sum(1 for f in flags for x in f.environments if x.name == name and x.enabled)
        for name in after}  # fmt: skip
    assert after["staging"][0] == before["staging"][0] + 1
    assert {name: tokens - before[name][1] for name, (_, tokens) in after.items()} == {
        "development": 0, "staging": 1, "production": 0}  # fmt: skip


def test_the_tokens_of_every_project_are_counted_again_after_a_change(
    sandbox: SandboxProcess, admin: httpx.Client
) -> None:
    """A token of every project (`*`) counts in each project's environments; the sandbox counts
    them again only when the database has changed: after a token made over HTTP (its own
    connection's change) and after one written by another connection (its commit)."""

    def tokens(project: str) -> dict[str, int]:
        found = m.EnvironmentsProject.model_validate(
            ok(admin.get(f"/api/admin/environments/project/{project}")))  # fmt: skip
        return {e.name: e.projectApiTokenCount for e in found.environments}

    before = {p: tokens(p) for p in ("default", "web-shop")}
    ok(admin.post("/api/admin/api-tokens", json={
        "tokenName": "everywhere", "type": "client", "environment": "production",
        "projects": ["*"]}), 201)  # fmt: skip
    made = {p: tokens(p) for p in ("default", "web-shop")}
    for project in made:
        assert made[project] == {**before[project],
                                 "production": before[project]["production"] + 1}  # fmt: skip
    conn = sqlite3.connect(sandbox.db)
    try:
        with conn:
            conn.execute(
                "INSERT INTO tokens(secret_hash, kind, environment, created_at, served, name,"
                " api_type, projects, handle) VALUES('sha256:other', 'client', 'staging', 0, 0,"
                " 'other', 'frontend', '[\"*\"]', 'other-handle')"
            )
    finally:
        conn.close()
    assert tokens("web-shop") == {**made["web-shop"], "staging": made["web-shop"]["staging"] + 1}


def _database_before(migration: int) -> sqlite3.Connection:
    """A database in memory made by the migrations before `MIGRATIONS[migration]`."""
    from sandbox import db

    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.create_function("token_hash", 1, db.token_hash, deterministic=True)
    for version in range(migration):
        _migrate(conn, version)
    return conn


def _migrate(conn: sqlite3.Connection, migration: int) -> None:
    """`MIGRATIONS[migration]` run on `conn`."""
    from sandbox import db

    for statement in db._split_sql(db.MIGRATIONS[migration]):
        conn.execute(statement)


def test_token_projects_follow_the_tokens() -> None:
    """Migration 15's `token_projects`: filled from the tokens there were, then kept by its
    triggers as a token is made, its projects changed, and it is deleted."""
    conn = _database_before(14)  # MIGRATIONS[14]: 14 -> 15
    conn.execute("PRAGMA foreign_keys=ON")
    insert = ("INSERT INTO tokens(secret_hash, kind, created_at, projects, handle, environment)"
              " VALUES(?, 'client', 0, ?, ?, 'production')")  # fmt: skip
    conn.execute(insert, ("before", '["web-shop", "payments"]', "h1"))
    conn.execute(insert, ("admin", None, "h2"))
    _migrate(conn, 14)

    def held() -> set[tuple[str, str]]:
        return set(conn.execute("SELECT token, project, environment FROM token_projects"))

    assert held() == {("before", "web-shop", "production"), ("before", "payments", "production")}
    conn.execute(insert, ("after", '["*"]', "h3"))
    assert ("after", "*", "production") in held()
    conn.execute("UPDATE tokens SET projects = '[\"default\"]', environment = 'development'"
                 " WHERE secret_hash = 'before'")  # fmt: skip
    conn.execute("UPDATE tokens SET seen_at = 5 WHERE secret_hash = 'after'")
    assert held() == {("before", "default", "development"), ("after", "*", "production")}
    conn.execute("DELETE FROM tokens WHERE secret_hash = 'after'")
    assert held() == {("before", "default", "development")}


def test_a_constrained_strategy_names_its_flag_beside_the_context_field() -> None:
    """Migration 19's `strategy_context_fields.feature` (what a context field's use is counted
    through): filled from the strategies there were, then by its trigger as a row is made."""
    conn = _database_before(18)  # MIGRATIONS[18]: 18 -> 19
    strategy = ("INSERT INTO strategies(id, feature, project, environment, name, created_at)"
                " VALUES(?, ?, 'default', 'production', 'default', 0)")  # fmt: skip
    field = "INSERT INTO strategy_context_fields(strategy_id, context_name) VALUES(?, ?)"
    conn.execute(strategy, ("s1", "before"))
    conn.execute(field, ("s1", "region"))
    _migrate(conn, 18)
    conn.execute(strategy, ("s2", "after"))
    conn.execute(field, ("s2", "region"))
    conn.execute(field, ("s2", "userId"))
    found = set(
        conn.execute("SELECT strategy_id, context_name, feature FROM strategy_context_fields")
    )
    assert found == {
        ("s1", "region", "before"),
        ("s2", "region", "after"),
        ("s2", "userId", "after"),
    }


def test_a_new_flag_is_in_its_projects_environments(admin: httpx.Client) -> None:
    ok(admin.delete(PROJECT.format("default") + "/environments/staging"))
    new_flag(admin, "default", "only-two")
    config = m.Feature.model_validate(ok(admin.get(FLAG.format("default", "only-two"))))
    assert [(e.name, e.enabled, e.strategies) for e in config.environments] == [
        ("development", False, []), ("production", False, [])]  # fmt: skip


# --------------------------------------------------------------------------- a flag's configuration


def test_a_flags_configuration(admin: httpx.Client) -> None:
    flag = live_flags(admin, "web-shop")[0]
    raw = ok(admin.get(FLAG.format("web-shop", flag)))
    config = m.Feature.model_validate(raw)
    assert config.name == flag and config.project == "web-shop" and config.archived is False
    assert [e.name for e in config.environments] == ["development", "staging", "production"]
    # the fields 8.2 sends (measured); the variants only when asked for
    assert [set(env) for env in raw["environments"]] == [
        {"name", "lastSeenAt", "enabled", "type", "sortOrder", "strategies"}
    ] * 3
    asked = ok(admin.get(FLAG.format("web-shop", flag), params={"variantEnvironments": "true"}))
    assert all("variants" in env for env in asked["environments"])
    for env in config.environments:
        assert env.type and env.strategies
        for s in env.strategies:
            assert set(raw["environments"][0]["strategies"][0]) >= {
                "id", "name", "title", "parameters", "constraints", "segments", "variants",
                "disabled", "sortOrder"}  # fmt: skip
            assert s.name == "flexibleRollout" and s.parameters["groupId"] == flag
    one = m.FeatureEnvironment.model_validate(
        ok(admin.get(FLAG_ENV.format("web-shop", flag, "production"))))  # fmt: skip
    assert one.name == flag and one.environment == "production"
    assert [s.id for s in one.strategies] == [s.id for s in config.environments[2].strategies]


def test_unknown_projects_flags_and_environments(admin: httpx.Client) -> None:
    flag = live_flags(admin, "web-shop")[0]
    body = assert_error(admin.get(FLAG.format("web-shop", "nope")), 404, "NotFoundError")
    assert body["message"] == 'There\'s no feature named "nope" in project "web-shop".'
    body = assert_error(admin.get(FLAG.format("payments", flag)), 404, "NotFoundError")
    assert body["message"] == (
        f'There\'s no feature named "{flag}" in project "payments", '
        'but there\'s a feature with that name in project "web-shop"'
    )
    body = assert_error(admin.get(FLAG_ENV.format("web-shop", flag, "qa")), 404, "NotFoundError")
    assert body["message"] == f"Could not find {flag} in qa"
    body = assert_error(admin.post(FLAG_ENV.format("web-shop", flag, "qa") + "/on"), 404,
                        "NotFoundError")  # fmt: skip
    assert body["message"] == f"Could not find environment qa for feature: {flag}"
    body = assert_error(admin.get(STRATEGIES.format("web-shop", flag, "qa")), 404,
                        "NotFoundError")  # fmt: skip
    assert body["message"] == f"Feature {flag} does not have environment qa"
    body = assert_error(admin.get(STRATEGIES.format("web-shop", flag, "production") + "/x-1"),
                        404, "NotFoundError")  # fmt: skip
    assert body["message"] == "Could not find strategy with id: x-1"
    body = assert_error(admin.put(STRATEGIES.format("web-shop", flag, "production") + "/x-1",
                                  json={}), 404, "NotFoundError")  # fmt: skip
    assert body["message"] == "Could not find strategy with id=x-1"
    body = assert_error(admin.delete(STRATEGIES.format("web-shop", flag, "production") + "/x-1"),
                        404, "NotFoundError")  # fmt: skip
    assert body["message"] == "Could not find strategy with id=x-1"
    body = assert_error(admin.get(VARIANTS.format("web-shop", flag, "qa")), 404, "NotFoundError")
    assert body["message"] == f"Could not find {flag} in qa"
    body = assert_error(admin.get(VARIANTS.format("nope", flag, "production")), 404,
                        "NotFoundError")  # fmt: skip
    assert body["message"].startswith(f'There\'s no feature named "{flag}" in project "nope"')
    # an archived flag's configuration is not read here
    admin.delete(FLAG.format("web-shop", flag))
    body = assert_error(admin.get(FLAG.format("web-shop", flag)), 404, "NotFoundError")
    assert body["message"] == f"Could not find feature flag with name {flag}"
    body = assert_error(admin.post(FLAG_ENV.format("web-shop", flag, "production") + "/on"), 400,
                        "ArchivedFeatureError")  # fmt: skip
    assert body["message"] == "Cannot perform this operation on archived features"


# --------------------------------------------------------------------------- metadata


def test_metadata_put_patch_and_stale(sandbox: SandboxProcess, admin: httpx.Client) -> None:
    new_flag(admin, "default", "meta-flag")
    put = m.Feature.model_validate(
        ok(
            admin.put(
                FLAG.format("default", "meta-flag"),
                json={
                    "description": "Checkout copy",
                    "type": "kill-switch",
                    "impressionData": True,
                },
            )
        )
    )
    assert (put.description, put.type, put.impressionData, put.stale) == (
        "Checkout copy", "kill-switch", True, False)  # fmt: skip
    [updated] = events(sandbox, "feature-metadata-updated")
    assert (updated["project"], updated["feature"]) == ("default", "meta-flag")
    assert updated["pre_data"]["type"] == "release" and updated["data"]["type"] == "kill-switch"
    assert updated["data"]["description"] == "Checkout copy"
    # a PUT leaving things out: Unleash's defaults, no description (measured on 8.2)
    put = m.Feature.model_validate(ok(admin.put(FLAG.format("default", "meta-flag"), json={})))
    assert (put.description, put.type, put.impressionData) == (None, "release", False)
    assert_bad_data(admin.put(FLAG.format("default", "meta-flag"), json={"name": "other"}),
                    "Cannot change name of feature flag")  # fmt: skip
    assert_error(admin.put(FLAG.format("default", "meta-flag"), json={"type": "nope"}), 400,
                 "ValidationError")  # fmt: skip

    patched = m.Feature.model_validate(ok(admin.patch(FLAG.format("default", "meta-flag"), json=[
        {"op": "replace", "path": "/description", "value": "Patched"},
        {"op": "replace", "path": "/stale", "value": True}])))  # fmt: skip
    assert patched.description == "Patched" and patched.stale is True
    [stale_on] = events(sandbox, "feature-stale-on")
    assert (stale_on["project"], stale_on["feature"]) == ("default", "meta-flag")
    config = m.Feature.model_validate(ok(admin.get(FLAG.format("default", "meta-flag"))))
    assert config.stale is True and config.description == "Patched"
    body = assert_error(
        admin.patch(
            FLAG.format("default", "meta-flag"),
            json=[{"op": "add", "path": "/variants/0", "value": {}}],
        ),
        403,
        "OperationDeniedError",
    )
    assert "/variants" in body["message"]
    # removing what is not there does nothing (as Unleash's fast-json-patch); a path through
    # nothing cannot be applied
    ok(admin.patch(FLAG.format("default", "meta-flag"), json=[
        {"op": "remove", "path": "/nothing"}]))  # fmt: skip
    body = assert_error(admin.patch(FLAG.format("default", "meta-flag"), json=[
        {"op": "remove", "path": "/nothing/deeper"}]), 400, "BadDataError")  # fmt: skip
    assert body["details"][0]["message"].startswith("Could not apply provided patch")
    assert_error(admin.patch(FLAG.format("default", "meta-flag"), json=[{"op": "shout",
                 "path": "/x"}]), 400, "ValidationError")  # fmt: skip

    # many at once: only those that change get an event
    new_flag(admin, "default", "meta-two")
    assert ok(admin.post(PROJECT.format("default") + "/stale",
                         json={"features": ["meta-flag", "meta-two", "ghost"], "stale": True}),
              202) is None  # fmt: skip
    assert [e["feature"] for e in events(sandbox, "feature-stale-on")] == ["meta-flag", "meta-two"]
    ok(admin.post(PROJECT.format("default") + "/stale",
                  json={"features": ["meta-two"], "stale": False}), 202)  # fmt: skip
    assert [e["feature"] for e in events(sandbox, "feature-stale-off")] == ["meta-two"]
    web = live_flags(admin, "web-shop")[0]
    assert_error(admin.post(PROJECT.format("default") + "/stale",
                            json={"features": [web], "stale": True}), 403,
                 "InvalidOperationError")  # fmt: skip


# --------------------------------------------------------------------------- on and off


def test_on_and_off(sandbox: SandboxProcess, admin: httpx.Client) -> None:
    new_flag(admin, "default", "switch")
    where = FLAG_ENV.format("default", "switch", "production")
    assert ok(admin.post(where + "/off")) is None
    assert events(sandbox, "feature-environment-disabled") == []  # it was off: no change
    ok(admin.post(where + "/on"))
    [on] = events(sandbox, "feature-environment-enabled", "switch")
    assert (on["project"], on["feature"], on["environment"]) == ("default", "switch", "production")
    # turned on with no strategy: a gradual rollout to everyone first
    [added] = events(sandbox, "feature-strategy-add")
    assert added["data"]["parameters"] == {"rollout": "100", "stickiness": "default",
                                           "groupId": "switch"}  # fmt: skip
    strategies = [
        m.FeatureStrategy.model_validate(s)
        for s in ok(admin.get(STRATEGIES.format("default", "switch", "production")))
    ]
    assert [(s.name, s.parameters["rollout"]) for s in strategies] == [("flexibleRollout", "100")]
    ok(admin.post(where + "/on"))
    assert len(events(sandbox, "feature-environment-enabled", "switch")) == 1
    ok(admin.post(where + "/off"))
    [off] = events(sandbox, "feature-environment-disabled")
    assert off["environment"] == "production"
    config = m.Feature.model_validate(ok(admin.get(FLAG.format("default", "switch"))))
    assert {e.name: e.enabled for e in config.environments} == {
        "development": False, "staging": False, "production": False}  # fmt: skip


# --------------------------------------------------------------------------- strategies


def test_strategies(sandbox: SandboxProcess, admin: httpx.Client) -> None:
    new_flag(admin, "default", "strat")
    where = STRATEGIES.format("default", "strat", "staging")
    created = ok(admin.post(where, json={
        "name": "flexibleRollout", "title": "Beta users", "disabled": False,
        "constraints": [{"contextName": "region", "operator": "IN", "values": ["eu-west"]}],
        "parameters": {"rollout": "40"},
        "variants": [{"name": "a", "weight": 0, "weightType": "variable", "stickiness": "default",
                      "payload": {"type": "string", "value": "x"}},
                     {"name": "b", "weight": 100, "weightType": "fix", "stickiness": "default"}],
        "segments": [3, 1]}))  # fmt: skip
    first = m.FeatureStrategy.model_validate(created)
    assert set(created) >= {"id", "name", "title", "disabled", "constraints", "parameters",
                            "variants", "segments", "sortOrder"}  # fmt: skip
    assert (first.title, first.disabled, first.sortOrder, first.segments) == (
        "Beta users", False, 0, [1, 3])  # fmt: skip
    assert first.parameters == {"rollout": "40", "stickiness": "default", "groupId": "strat"}
    assert [(v.name, v.weight, v.weightType) for v in first.variants] == [
        ("a", 900, "variable"), ("b", 100, "fix")]  # fmt: skip
    assert first.constraints[0]["contextName"] == "region"
    [add] = events(sandbox, "feature-strategy-add")
    assert (add["feature"], add["environment"], add["data"]["id"]) == ("strat", "staging",
                                                                       first.id)  # fmt: skip
    second = m.FeatureStrategy.model_validate(ok(admin.post(where, json={"name": "default"})))
    assert second.sortOrder == 1 and second.segments == [] and second.parameters == {}
    listed = [m.FeatureStrategy.model_validate(s) for s in ok(admin.get(where))]
    assert [s.id for s in listed] == [first.id, second.id]
    assert m.FeatureStrategy.model_validate(ok(admin.get(f"{where}/{first.id}"))) == first

    # an update keeps the title it leaves out, but not the constraints and variants (as 8.2:
    # measured), nor parameters; nor does it change the order
    put = m.FeatureStrategy.model_validate(ok(admin.put(f"{where}/{first.id}", json={
        "parameters": {"rollout": "60"}, "segments": [2], "sortOrder": 7})))  # fmt: skip
    assert (put.title, put.parameters, put.segments) == ("Beta users", {"rollout": "60"}, [2])
    assert (put.variants, put.constraints, put.sortOrder) == ([], [], 0)
    [update] = events(sandbox, "feature-strategy-update")
    assert update["pre_data"]["segments"] == [1, 3] and update["data"]["segments"] == [2]
    assert update["pre_data"]["parameters"]["rollout"] == "40"
    assert [v["name"] for v in update["pre_data"]["variants"]] == ["a", "b"]
    assert update["data"]["variants"] == []
    ok(
        admin.put(
            f"{where}/{first.id}",
            json={
                "parameters": {"rollout": "60"},
                "variants": [
                    {"name": "a", "weight": 0, "weightType": "variable", "stickiness": "default"},
                    {"name": "b", "weight": 100, "weightType": "fix", "stickiness": "default"},
                ],
            },
        )
    )
    patched = m.FeatureStrategy.model_validate(ok(admin.patch(f"{where}/{first.id}", json=[
        {"op": "replace", "path": "/title", "value": "Beta"},
        {"op": "add", "path": "/parameters/rollout", "value": "75"},
        {"op": "remove", "path": "/variants/1"}])))  # fmt: skip
    assert patched.title == "Beta" and patched.parameters["rollout"] == "75"
    assert [(v.name, v.weight) for v in patched.variants] == [("a", 1000)]
    assert_error(
        admin.patch(
            f"{where}/{first.id}",
            json=[{"op": "replace", "path": "/variants/0/weight", "value": 5000}],
        ),
        400,
        "ValidationError",
    )

    # another flag's strategy is not this flag's
    new_flag(admin, "default", "other")
    body = assert_error(admin.get(STRATEGIES.format("default", "other", "staging")
                                  + f"/{first.id}"), 403, "NoAccessError")  # fmt: skip
    assert first.id in body["message"]
    body = assert_error(
        admin.delete(STRATEGIES.format("default", "other", "staging") + f"/{first.id}"),
        403,
        "InvalidOperationError",
    )
    assert body["message"] == "You can not change the featureName for an activation strategy."

    # deleting: its segments' rows go; with none left enabled the environment is off
    ok(admin.post(FLAG_ENV.format("default", "strat", "staging") + "/on"))
    assert sql(sandbox, "SELECT segment_id FROM strategy_segments WHERE strategy_id = ?",
               first.id) == [(2,)]  # fmt: skip
    assert ok(admin.delete(f"{where}/{first.id}")) is None
    assert sql(sandbox, "SELECT count(*) FROM strategy_segments WHERE strategy_id = ?",
               first.id) == [(0,)]  # fmt: skip
    [removed] = events(sandbox, "feature-strategy-remove")
    assert removed["pre_data"]["id"] == first.id and removed["data"] is None
    ok(admin.put(f"{where}/{second.id}", json={"disabled": True}))
    config = m.Feature.model_validate(ok(admin.get(FLAG.format("default", "strat"))))
    staging = next(e for e in config.environments if e.name == "staging")
    assert staging.enabled is False and [s.disabled for s in staging.strategies] == [True]
    assert [e["environment"] for e in events(sandbox, "feature-environment-disabled")] == [
        "staging"]  # fmt: skip


def test_strategy_order(sandbox: SandboxProcess, admin: httpx.Client) -> None:
    new_flag(admin, "default", "ordered")
    where = STRATEGIES.format("default", "ordered", "production")
    ids = [ok(admin.post(where, json={"name": "default", "title": t}))["id"] for t in "abc"]
    assert ok(admin.post(where + "/set-sort-order", json=[
        {"id": ids[2], "sortOrder": 0}, {"id": ids[0], "sortOrder": 1},
        {"id": ids[1], "sortOrder": 2}])) is None  # fmt: skip
    assert [s["title"] for s in ok(admin.get(where))] == ["c", "a", "b"]
    [changed] = events(sandbox, "strategy-order-changed")
    assert changed["pre_data"] == {"strategyIds": ids}
    assert changed["data"] == {"strategyIds": [ids[2], ids[0], ids[1]]}
    assert changed["environment"] == "production"
    assert_bad_data(
        admin.post(where + "/set-sort-order", json=[{"id": "x", "sortOrder": 0}]),
        "trying to change strategies for environment via update sortOrder",
    )
    assert_error(admin.post(where + "/set-sort-order", json=[{"id": ids[0]}]), 400,
                 "ValidationError")  # fmt: skip
    config = m.Feature.model_validate(ok(admin.get(FLAG.format("default", "ordered"))))
    assert [s.title for s in config.environments[2].strategies] == ["c", "a", "b"]


def test_bad_strategy_bodies(admin: httpx.Client) -> None:
    flag = live_flags(admin, "web-shop")[0]
    where = STRATEGIES.format("web-shop", flag, "production")
    for body in ({"name": ""},
                 {"variants": [{"name": "a", "weight": 2000, "weightType": "variable",
                                "stickiness": "default"}]},
                 {"constraints": [{"contextName": "x", "operator": "LIKE"}]},
                 {"segments": ["one"]}, {"sortOrder": 2**70}):  # fmt: skip
        assert_error(admin.post(where, json=body), 400, "ValidationError")
    assert_bad_data(admin.post(where, json={"variants": [
        {"name": "a", "weight": 1, "weightType": "fix", "stickiness": "default"}]}),
        'There must be at least one "variable" variant')  # fmt: skip


# --------------------------------------------------------------------------- variants


def variant_flag(http: httpx.Client) -> tuple[str, str]:
    """A demo flag with variants of its own in production, and its project."""
    for project in ("web-shop", "default", "payments"):
        for name in live_flags(http, project):
            got = ok(http.get(VARIANTS.format(project, name, "production")))
            if got["variants"]:
                return project, name
    raise AssertionError("the demo has a flag with variants")


def test_variants_per_environment(sandbox: SandboxProcess, admin: httpx.Client) -> None:
    project, flag = variant_flag(admin)
    prod = m.FeatureVariants.model_validate(
        ok(admin.get(VARIANTS.format(project, flag, "production")))
    )
    assert [(v.name, v.weight, v.weightType) for v in prod.variants] == [
        ("blue", 700, "variable"), ("green", 300, "fix")]  # fmt: skip
    where = VARIANTS.format(project, flag, "staging")
    assert ok(admin.get(where)) == {"version": 1, "variants": []}
    put = m.FeatureVariants.model_validate(ok(admin.put(where, json=[
        {"name": "one", "weightType": "variable", "stickiness": "default"},
        {"name": "two", "weight": 0, "weightType": "variable"}])))  # fmt: skip
    assert [(v.name, v.weight) for v in put.variants] == [("one", 500), ("two", 500)]
    [saved] = events(sandbox, "feature-environment-variants-updated")
    assert (saved["project"], saved["feature"], saved["environment"]) == (project, flag, "staging")
    assert saved["pre_data"] == {"variants": []}
    assert [v["name"] for v in saved["data"]["variants"]] == ["one", "two"]

    # JSON Patch as Unleash's console sends it
    patched = m.FeatureVariants.model_validate(ok(admin.patch(where, json=[
        {"op": "add", "path": "/2", "value": {"name": "three", "weight": 100,
                                              "weightType": "fix", "stickiness": "default"}},
        {"op": "replace", "path": "/0/stickiness", "value": "userId"},
        {"op": "remove", "path": "/1"}])))  # fmt: skip
    assert [(v.name, v.weight, v.stickiness) for v in patched.variants] == [
        ("one", 900, "userId"), ("three", 100, "default")]  # fmt: skip
    asked = admin.get(FLAG.format(project, flag), params={"variantEnvironments": "true"})
    config = m.Feature.model_validate(ok(asked))
    assert {e.name: [v.name for v in e.variants] for e in config.environments} == {
        "development": [],
        "staging": ["one", "three"],
        "production": ["blue", "green"],
    }
    ok(admin.patch(where, json=[{"op": "remove", "path": "/9"}]))  # not there: nothing done
    for bad in ([{"op": "remove", "path": "/9/name"}],
                [{"op": "replace", "path": "/0/weight", "value": -1}]):  # fmt: skip
        body = assert_error(admin.patch(where, json=bad), 400, "BadDataError")
        assert body["details"][0]["message"].startswith("Could not apply provided patch")
    assert_bad_data(admin.put(where, json=[{"name": "x", "weight": 5, "weightType": "fix"}]),
                    'There must be at least one "variable" variant')  # fmt: skip
    assert_error(admin.put(where, json=[{"name": "x"}, {"name": "x"}]), 400, "ValidationError")
    assert_error(admin.put(where, json={"name": "x"}), 400, "ValidationError")
    assert len(events(sandbox, "feature-environment-variants-updated")) == 3

    # a flag with no variants anywhere: 8.2 refuses its environments' variants
    new_flag(admin, "default", "plain")
    body = assert_error(admin.put(VARIANTS.format("default", "plain", "production"), json=[]),
                        403, "InvalidOperationError")  # fmt: skip
    assert body["message"] == (
        "Environment variants deprecated for feature: plain. Use strategy variants instead."
    )


def test_a_viewer_reads_but_does_not_change(sandbox: SandboxProcess) -> None:
    from tests.conftest import personal_token_of

    with sandbox.admin() as http:
        users = http.get("/api/admin/user-admin").json()["users"]
        viewer = next(u for u in users if u.get("rootRole") == 3)
        flag = live_flags(http, "web-shop")[0]
    token = personal_token_of(sandbox, viewer["username"])
    with httpx.Client(base_url=sandbox.url, headers={"Authorization": token}) as http:
        ok(http.get(FLAG.format("web-shop", flag)))
        assert_error(http.post(FLAG_ENV.format("web-shop", flag, "production") + "/off"), 403,
                     "NoAccessError")  # fmt: skip
        assert_error(http.delete(PROJECT.format("web-shop") + "/environments/staging"), 403,
                     "NoAccessError")  # fmt: skip


# --------------------------------------------------------------------------- the demo


def test_the_demos_environments_differ(demo_sandbox: SandboxProcess) -> None:
    with demo_sandbox.admin() as http:
        configs = [
            m.Feature.model_validate(
                ok(http.get(FLAG.format(p, name), params={"variantEnvironments": "true"}))
            )
            for p in ("web-shop", "default", "payments")
            for name in live_flags(http, p)
        ]

    def envs(f: m.Feature) -> dict[str, m.FeatureEnvironment]:
        return {e.name: e for e in f.environments}

    assert all(list(envs(f)) == ["development", "staging", "production"] for f in configs)
    on_dev_off_prod = [
        f.name
        for f in configs
        if envs(f)["development"].enabled and not envs(f)["production"].enabled
    ]
    assert len(on_dev_off_prod) >= 3

    def rollout(f: m.Feature, env: str) -> str:
        return str(envs(f)[env].strategies[0].parameters["rollout"])

    staged = [f.name for f in configs if rollout(f, "staging") == "100"
              and rollout(f, "production") == "25"]  # fmt: skip
    assert len(staged) >= 3
    one_side = [f.name for f in configs if envs(f)["production"].strategies[0].constraints
                and not envs(f)["staging"].strategies[0].constraints
                and not envs(f)["development"].strategies[0].constraints]  # fmt: skip
    assert one_side
    strategy_variants = [f for f in configs if envs(f)["staging"].strategies[0].variants]
    assert strategy_variants
    for f in strategy_variants:
        staging = [v.name for v in envs(f)["staging"].strategies[0].variants]
        production = [v.name for v in envs(f)["production"].strategies[0].variants]
        assert staging == ["control", "treatment"] and production == ["control"]
    with_variants = [f for f in configs if any(e.variants for e in f.environments)]
    assert with_variants
    assert all([e.name for e in f.environments if e.variants] == ["production"]
               for f in with_variants)  # fmt: skip
    # the same every time: the demo's rules pick them by their place in its list
    assert len(staged) >= sum(1 for i in range(60) if i % 4 and demo.gradual_in_stages(i))


def test_an_empty_sandbox_has_two_environments(tmp_path: Path) -> None:
    with SandboxProcess(tmp_path / "e.sqlite3", "--empty") as sb, sb.admin() as http:
        got = m.Environments.model_validate(ok(http.get("/api/admin/environments")))
        assert [e.name for e in got.environments] == ["development", "production"]
        assert sql(sb, "SELECT count(*) FROM strategies") == [(0,)]
        assert sql(sb, "SELECT project, environment FROM project_environments ORDER BY 2") == [
            ("default", "development"), ("default", "production")]  # fmt: skip


def test_played_releases_serve_it(tmp_path: Path) -> None:
    with SandboxProcess(tmp_path / "p.sqlite3", "--as-version", "5.12") as sb, sb.admin() as h:
        ok(h.get("/api/admin/environments"))
        flag = live_flags(h, "web-shop")[0]
        m.Feature.model_validate(ok(h.get(FLAG.format("web-shop", flag))))
        body = h.get(FLAG.format("web-shop", "nope")).json()
        assert body["name"] == "NotFoundError" and "id" in body  # 5.x's handler errors: an id
        # 5.x writes variants per environment for any flag (6.x on: only one that has some)
        new_flag(h, "default", "plain")
        put = h.put(VARIANTS.format("default", "plain", "development"), json=[{"name": "v"}])
        assert [v["name"] for v in ok(put)["variants"]] == ["v"]
    with SandboxProcess(tmp_path / "q.sqlite3", "--as-version", "6.10") as sb, sb.admin() as h:
        new_flag(h, "default", "plain")
        put = h.put(VARIANTS.format("default", "plain", "development"), json=[{"name": "v"}])
        assert put.status_code == 403 and put.json()["name"] == "InvalidOperationError"
