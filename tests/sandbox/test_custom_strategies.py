"""Strategy definitions as Unleash 8.2 serves them (measured on the 8.2 peer): its four built-in
ones in its order, not editable (deprecable all the same), custom ones created (201; 409
"Strategy with name x already exist!"; 400 for a name not URL friendly or a parameter type it
does not know), replaced (200, the description kept when left out), deprecated, reactivated and
deleted (404 "No strategy found", "Could not find strategy with name x"), the events with
`data`, the Viewer's 403, and the demo's `byTenant` (not in an `--empty` sandbox)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import httpx

from app.api.models import StrategyDefinition, StrategyDefinitions
from sandbox import db
from sandbox.process import SandboxProcess
from tests.sandbox.conftest import assert_error

PersonalToken = Callable[[SandboxProcess, str], str]
S = "/api/admin/strategies"
BUILT_IN = ["flexibleRollout", "default", "remoteAddress", "applicationHostname"]
BY_REGION = {
    "name": "byRegion",
    "description": "On in the regions listed",
    "parameters": [{"name": "regions", "type": "list", "description": "Regions", "required": True}],
}


def test_built_in_strategies_as_8_2_lists_them(tmp_path: Path) -> None:
    with SandboxProcess(tmp_path / "empty.sqlite3", "--empty") as sb, sb.admin() as http:
        listed = StrategyDefinitions.model_validate(http.get(S).json()).strategies
        assert [s.name for s in listed] == BUILT_IN
        assert {(s.editable, s.deprecated) for s in listed} == {(False, False)}
        rollout = listed[0]
        assert (rollout.displayName, rollout.title) == ("Gradual rollout", None)
        assert [(p.name, p.type, p.required) for p in rollout.parameters] == [
            ("rollout", "percentage", False),
            ("stickiness", "string", True),
            ("groupId", "string", True),
        ]
        for r in (http.put(f"{S}/default", json={"parameters": []}), http.delete(f"{S}/default")):
            assert assert_error(r, 400, "BadDataError")["message"] == "Cannot edit strategy default"
        assert http.post(f"{S}/default/deprecate").status_code == 200
        assert StrategyDefinition.model_validate(http.get(f"{S}/default").json()).deprecated
        assert http.post(f"{S}/default/reactivate").status_code == 200
        assert not StrategyDefinition.model_validate(http.get(f"{S}/default").json()).deprecated


def test_a_custom_strategy_made_changed_and_deleted_with_events(sandbox: SandboxProcess) -> None:
    with sandbox.admin() as http:
        r = http.post(S, json=BY_REGION)
        assert r.status_code == 201, r.text
        assert r.headers["location"] == "strategies/byRegion"
        made = StrategyDefinition.model_validate(r.json())
        assert (made.editable, made.deprecated, made.description) == (
            True,
            False,
            "On in the regions listed",
        )
        assert [(p.name, p.type, p.required) for p in made.parameters] == [
            ("regions", "list", True)
        ]
        body = assert_error(
            http.post(S, json={**BY_REGION, "parameters": []}), 409, "NameExistsError"
        )
        assert body["message"] == "Strategy with name byRegion already exist!"
        assert_error(
            http.post(S, json={"name": "by region", "parameters": []}), 400, "ValidationError"
        )
        r = http.post(S, json={"name": "odd", "parameters": [{"name": "a", "type": "weird"}]})
        assert_error(r, 400, "ValidationError")

        r = http.put(f"{S}/byRegion", json={"parameters": [{"name": "regions", "type": "list"}]})
        assert (r.status_code, r.content) == (200, b"")
        after = StrategyDefinition.model_validate(http.get(f"{S}/byRegion").json())
        assert after.description == "On in the regions listed"  # kept, as 8.2
        assert [(p.name, p.required) for p in after.parameters] == [("regions", None)]

        assert http.post(f"{S}/byRegion/deprecate").status_code == 200
        listed = http.get(S).json()["strategies"]
        assert next(s for s in listed if s["name"] == "byRegion")["deprecated"] is True
        assert http.post(f"{S}/byRegion/reactivate").status_code == 200
        assert http.delete(f"{S}/byRegion").status_code == 200

        for r in (
            http.get(f"{S}/byRegion"),
            http.delete(f"{S}/byRegion"),
            http.put(f"{S}/byRegion", json={"parameters": []}),
            http.post(f"{S}/byRegion/reactivate"),
        ):
            assert assert_error(r, 404, "NotFoundError")["message"] == "No strategy found"
        r = http.post(f"{S}/byRegion/deprecate")
        assert assert_error(r, 404, "NotFoundError")["message"] == (
            "Could not find strategy with name byRegion"
        )

    conn = db.connect(sandbox.db)
    try:
        found = conn.execute(
            "SELECT e.type, p.data FROM events e LEFT JOIN event_data p ON p.event_id = e.id"
            " WHERE e.type LIKE 'strategy-%' ORDER BY e.id"
        ).fetchall()
    finally:
        conn.close()
    assert [(t, json.loads(d)) for t, d in found] == [
        ("strategy-created", {**BY_REGION, "editable": True, "deprecated": False}),
        (
            "strategy-updated",
            {"name": "byRegion", "parameters": [{"name": "regions", "type": "list"}]},
        ),
        ("strategy-deprecated", {"name": "byRegion"}),
        ("strategy-reactivated", {"name": "byRegion"}),
        ("strategy-deleted", {"name": "byRegion"}),
    ]


def test_a_viewer_may_read_but_not_change(
    sandbox: SandboxProcess, personal_token: PersonalToken
) -> None:
    viewer = {"Authorization": personal_token(sandbox, "uma.iyer")}
    url = sandbox.url + S
    assert httpx.get(url, headers=viewer).status_code == 200
    for r in (
        httpx.post(url, json=BY_REGION, headers=viewer),
        httpx.delete(url + "/byTenant", headers=viewer),
        httpx.post(url + "/byTenant/deprecate", headers=viewer),
    ):
        assert_error(r, 403, "NoAccessError")


def test_the_demo_has_by_tenant(demo_sandbox: SandboxProcess) -> None:
    with demo_sandbox.admin() as http:
        listed = StrategyDefinitions.model_validate(http.get(S).json()).strategies
    assert [s.name for s in listed] == [*BUILT_IN, "byTenant"]
    tenant = listed[-1]
    assert (tenant.editable, tenant.title) == (True, "By tenant")
    assert [(p.name, p.type, p.required) for p in tenant.parameters] == [("tenants", "list", True)]
