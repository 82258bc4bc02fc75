"""Segments as Unleash 8.2 serves them (measured on the 8.2 peer): the list with what uses each,
one segment, creating (201 with its location), replacing (204) and deleting one (204; 409
while a strategy uses it; 404 'No segment exists with ID "N"'), validating a name (204, 409),
the strategies using one and a strategy's segments, the events with `preData`/`data`, the
Viewer's 403, and the demo's segments (none in an `--empty` sandbox)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import httpx

from app.api.models import FeatureStrategySegments, Segment, Segments, SegmentStrategies
from sandbox import db
from sandbox.process import SandboxProcess
from tests.sandbox.conftest import assert_error

PersonalToken = Callable[[SandboxProcess, str], str]

BETA = {
    "name": "Early birds",
    "description": "First in line",
    "constraints": [{"contextName": "userId", "operator": "IN", "values": ["7", "8"]}],
}


def events(sb: SandboxProcess, kind: str) -> list[tuple[object, ...]]:
    conn = db.connect(sb.db)
    try:
        return [
            tuple(r)
            for r in conn.execute(
                "SELECT e.created_by, e.summary, p.pre_data, p.data FROM events e"
                " LEFT JOIN event_data p ON p.event_id = e.id WHERE e.type = ? ORDER BY e.id",
                (kind,),
            )
        ]
    finally:
        conn.close()


def a_strategy(http: httpx.Client, flag: str = "seg-flag", env: str = "development") -> str:
    if http.post("/api/admin/projects/default/features", json={"name": flag}).status_code == 201:
        pass
    r = http.post(
        f"/api/admin/projects/default/features/{flag}/environments/{env}/strategies",
        json={"name": "default"},
    )
    assert r.status_code == 200, r.text
    return str(r.json()["id"])


def test_create_read_replace_and_delete_a_segment_with_events(sandbox: SandboxProcess) -> None:
    with sandbox.admin() as http:
        r = http.post("/api/admin/segments", json=BETA)
        assert r.status_code == 201, r.text
        made = Segment.model_validate(r.json())
        assert r.headers["location"] == f"segments/{made.id}"
        assert (made.name, made.description, made.createdBy) == (
            "Early birds",
            "First in line",
            "admin",
        )
        assert [(c.contextName, c.operator, c.values) for c in made.constraints] == [
            ("userId", "IN", ["7", "8"])
        ]
        assert "usedInFeatures" not in r.json()  # only the list counts them, as 8.2
        listed = Segments.model_validate(http.get("/api/admin/segments").json()).segments
        mine = next(s for s in listed if s.id == made.id)
        assert (mine.usedInFeatures, mine.usedInProjects) == (0, 0)
        assert [s.name for s in listed] == sorted(s.name for s in listed)

        r = http.put(
            f"/api/admin/segments/{made.id}", json={"name": "Early owls", "constraints": []}
        )
        assert (r.status_code, r.content) == (204, b"")
        after = Segment.model_validate(http.get(f"/api/admin/segments/{made.id}").json())
        assert (after.name, after.description, after.constraints) == ("Early owls", None, [])

        r = http.delete(f"/api/admin/segments/{made.id}")
        assert (r.status_code, r.content) == (204, b"")
        body = assert_error(http.get(f"/api/admin/segments/{made.id}"), 404, "NotFoundError")
        assert body["message"] == f'No segment exists with ID "{made.id}"'

    created = events(sandbox, "segment-created")[-1]
    assert created[0] == "admin" and "Early birds" in str(created[1])
    assert created[2] is None and json.loads(str(created[3]))["name"] == "Early birds"
    updated = events(sandbox, "segment-updated")[-1]
    assert json.loads(str(updated[2]))["name"] == "Early birds"
    assert json.loads(str(updated[3]))["name"] == "Early owls"
    deleted = events(sandbox, "segment-deleted")[-1]
    assert json.loads(str(deleted[2]))["name"] == "Early owls" and deleted[3] is None


def test_names_are_unique_and_bodies_checked(sandbox: SandboxProcess) -> None:
    with sandbox.admin() as http:
        body = assert_error(
            http.post("/api/admin/segments", json={**BETA, "name": "EU customers"}),
            409,
            "NameExistsError",
        )
        assert body["message"] == "Segment name already exists"
        r = http.post("/api/admin/segments/validate", json={"name": "Beta testers"})
        assert assert_error(r, 409, "NameExistsError")["message"] == "Segment name already exists"
        r = http.post("/api/admin/segments/validate", json={"name": "Nobody yet"})
        assert (r.status_code, r.content) == (204, b"")
        r = http.post("/api/admin/segments/validate", json={"name": ""})
        assert assert_error(r, 400, "BadDataError")["message"] == "Segment name cannot be empty"
        assert_error(
            http.post("/api/admin/segments", json={"name": "No constraints"}),
            400,
            "ValidationError",
        )
        too_many = {
            "name": "Huge",
            "constraints": [
                {"contextName": "userId", "operator": "IN", "values": [str(i) for i in range(1001)]}
            ],
        }
        r = http.post("/api/admin/segments", json=too_many)
        assert assert_error(r, 400, "BadDataError")["message"] == (
            "Segments may not have more than 1000 values"
        )
        # another's name on PUT; an unknown id; an id that is no number
        ids = {s["name"]: s["id"] for s in http.get("/api/admin/segments").json()["segments"]}
        r = http.put(
            f"/api/admin/segments/{ids['Internal staff']}",
            json={"name": "Beta testers", "constraints": []},
        )
        assert_error(r, 409, "NameExistsError")
        assert_error(http.put("/api/admin/segments/9999", json=BETA), 404, "NotFoundError")
        assert_error(http.delete("/api/admin/segments/9999"), 404, "NotFoundError")
        assert_error(http.get("/api/admin/segments/abc"), 400, "ValidationError")


def test_a_segment_in_use_is_not_deleted(sandbox: SandboxProcess) -> None:
    with sandbox.admin() as http:
        segment = http.post("/api/admin/segments", json=BETA).json()["id"]
        strategy = a_strategy(http)
        body = {
            "projectId": "default",
            "strategyId": strategy,
            "environmentId": "development",
            "segmentIds": [segment],
        }
        r = http.post("/api/admin/segments/strategies", json=body)
        assert r.status_code == 201, r.text
        assert FeatureStrategySegments.model_validate(r.json()).segmentIds == [segment]
        assert r.headers["location"] == f"strategies/{strategy}"

        using = SegmentStrategies.model_validate(
            http.get(f"/api/admin/segments/{segment}/strategies").json()
        )
        assert [
            (s.id, s.featureName, s.projectId, s.environment, s.strategyName)
            for s in using.strategies
        ] == [(strategy, "seg-flag", "default", "development", "default")]
        assert using.changeRequestStrategies == []
        of = Segments.model_validate(http.get(f"/api/admin/segments/strategies/{strategy}").json())
        assert [s.id for s in of.segments] == [segment]
        listed = http.get("/api/admin/segments").json()["segments"]
        assert next(s for s in listed if s["id"] == segment)["usedInFeatures"] == 1

        r = http.delete(f"/api/admin/segments/{segment}")
        message = assert_error(r, 409, "ConflictError")["message"]
        assert "seg-flag in development" in message
        # a project other than the one using it is refused, as 8.2
        r = http.put(f"/api/admin/segments/{segment}", json={**BETA, "project": "payments"})
        assert assert_error(r, 400, "BadDataError")["message"] == (
            "Invalid project. Segment is being used by strategies in other projects: default"
        )

        # the strategy's segments from now on: none; then the segment goes
        r = http.post("/api/admin/segments/strategies", json={**body, "segmentIds": []})
        assert r.status_code == 201
        assert http.get(f"/api/admin/segments/strategies/{strategy}").json() == {"segments": []}
        assert http.delete(f"/api/admin/segments/{segment}").status_code == 204


def test_setting_a_strategys_segments_checks_them(sandbox: SandboxProcess) -> None:
    with sandbox.admin() as http:
        strategy = a_strategy(http)
        body = {"projectId": "default", "strategyId": strategy, "environmentId": "development"}
        r = http.post("/api/admin/segments/strategies", json={**body, "segmentIds": [1] * 6})
        assert assert_error(r, 400, "BadDataError")["message"] == (
            "Strategies may not have more than 5 segments"
        )
        r = http.post("/api/admin/segments/strategies", json={**body, "segmentIds": [9999]})
        assert "No segment with id 9999" in assert_error(r, 400, "ValidationError")["message"]
        r = http.post(
            "/api/admin/segments/strategies", json={**body, "strategyId": "nope", "segmentIds": [1]}
        )
        assert "No strategy with id nope" in assert_error(r, 400, "ValidationError")["message"]
        assert http.get("/api/admin/segments/strategies/nope").json() == {"segments": []}


def test_a_viewer_may_read_but_not_change(
    sandbox: SandboxProcess, personal_token: PersonalToken
) -> None:
    viewer = {"Authorization": personal_token(sandbox, "uma.iyer")}
    url = sandbox.url
    assert httpx.get(url + "/api/admin/segments", headers=viewer).status_code == 200
    for r in (
        httpx.post(url + "/api/admin/segments", json=BETA, headers=viewer),
        httpx.put(url + "/api/admin/segments/1", json=BETA, headers=viewer),
        httpx.delete(url + "/api/admin/segments/3", headers=viewer),
    ):
        assert_error(r, 403, "NoAccessError")
    with sandbox.admin() as http:
        assert len(http.get("/api/admin/segments").json()["segments"]) == 3


def test_the_demo_has_segments_and_an_empty_sandbox_none(
    demo_sandbox: SandboxProcess, tmp_path: Path
) -> None:
    with demo_sandbox.admin() as http:
        listed = Segments.model_validate(http.get("/api/admin/segments").json()).segments
    assert [(s.name, s.usedInFeatures, s.project) for s in listed] == [
        ("Beta testers", 2, None),
        ("EU customers", 1, None),
        ("Internal staff", 0, "web-shop"),
    ]
    assert all(s.constraints for s in listed)
    with SandboxProcess(tmp_path / "empty.sqlite3", "--empty") as sb, sb.admin() as http:
        assert http.get("/api/admin/segments").json() == {"segments": []}


def test_the_migration_makes_the_shared_table_with_the_agreed_words(tmp_path: Path) -> None:
    """`strategy_segments` is made by this migration and by the strategies' configuration's,
    in the same words and only if missing: a database where the other made it first migrates,
    keeping its rows."""
    agreed = (
        "CREATE TABLE IF NOT EXISTS strategy_segments (strategy_id TEXT NOT NULL, segment_id "
        "INTEGER NOT NULL, PRIMARY KEY (strategy_id, segment_id));"
    )
    mine = next(i for i, sql in enumerate(db.MIGRATIONS) if "CREATE TABLE segments" in sql)
    assert agreed in db._split_sql(db.MIGRATIONS[mine])
    conn = sqlite3.connect(tmp_path / "s.sqlite3", isolation_level=None)
    conn.create_function("token_hash", 1, db.token_hash)
    for version in range(mine):
        conn.execute("BEGIN")
        for statement in db._split_sql(db.MIGRATIONS[version]):
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {version + 1}")
        conn.execute("COMMIT")
    conn.execute(agreed)
    conn.execute("INSERT INTO strategy_segments VALUES('s1', 1)")
    db.migrate(conn)
    assert conn.execute("SELECT * FROM strategy_segments").fetchall() == [("s1", 1)]
    assert conn.execute("SELECT name FROM tag_types").fetchall() == [("simple",)]
    conn.close()


def test_playing_a_release_a_segment_in_use_is_a_bare_409(tmp_path: Path) -> None:
    """As Unleash 8.2 answers it (measured): 409 with no body; segments are served when the
    sandbox plays an open-source release, as they are open source."""
    with (
        SandboxProcess(tmp_path / "s.sqlite3", "--demo", "--as-version", "8.2") as sb,
        sb.admin() as http,
    ):
        ids = {s["name"]: s["id"] for s in http.get("/api/admin/segments").json()["segments"]}
        r = http.delete(f"/api/admin/segments/{ids['Beta testers']}")
        assert (r.status_code, r.content) == (409, b"")
        assert http.delete(f"/api/admin/segments/{ids['Internal staff']}").status_code == 204
