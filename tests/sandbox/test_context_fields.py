"""Context fields as Unleash 8.2 changes them: `POST /api/admin/context` (201 with the field and
its location, 409 `NameExistsError` for a name taken, 400 for a bad body), `PUT` and `DELETE
/api/admin/context/:name` (200 with no body; 404 for an unknown field; PUT replaces the whole
field; DELETE is 409 `ConflictError` while a strategy uses the field), the legal-value routes,
401/403 (Viewers may not; Editors may, as on Unleash), an event for each change, and the state
read back over HTTP."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from app.api.models import ContextField
from sandbox import db
from sandbox.process import SandboxProcess
from tests.sandbox.conftest import assert_error

PersonalToken = Callable[[SandboxProcess, str], str]


def field(http: httpx.Client, name: str) -> ContextField:
    r = http.get(f"/api/admin/context/{name}")
    assert r.status_code == 200, r.text
    return ContextField.model_validate(r.json())


def events(sb: SandboxProcess, kind: str) -> list[tuple[str, str]]:
    conn = db.connect(sb.db)
    try:
        rows = conn.execute(
            "SELECT created_by, summary FROM events WHERE type = ? ORDER BY id", (kind,)
        ).fetchall()
        return [(r[0], r[1]) for r in rows]
    finally:
        conn.close()


def test_create_edit_and_delete_a_field_with_events(sandbox: SandboxProcess) -> None:
    with sandbox.admin() as http:
        body = {"name": "plan", "description": "The customer's plan", "stickiness": True,
                "sortOrder": 7, "legalValues": [{"value": "gold", "description": "Top"},
                                                {"value": "free"}]}  # fmt: skip
        r = http.post("/api/admin/context", json=body)
        assert r.status_code == 201, r.text
        assert r.headers["location"] == "context/plan"
        created = ContextField.model_validate(r.json())
        assert (created.name, created.description, created.stickiness, created.sortOrder) == (
            "plan", "The customer's plan", True, 7)  # fmt: skip
        values = [(v.value, v.description) for v in created.legalValues]
        assert values == [("gold", "Top"), ("free", None)]
        assert created.createdAt is not None
        assert "plan" in {f["name"] for f in http.get("/api/admin/context").json()}
        assert field(http, "plan").legalValues == created.legalValues

        # PUT replaces the field: what it leaves out is emptied, as on Unleash 8.2, but for the
        # description, which 8.2 keeps
        r = http.put("/api/admin/context/plan", json={"description": "Plan",
                     "legalValues": [{"value": "silver"}]})  # fmt: skip
        assert (r.status_code, r.content) == (200, b"")
        after = field(http, "plan")
        assert (after.description, after.stickiness, after.sortOrder) == ("Plan", False, 0)
        assert [v.value for v in after.legalValues] == ["silver"]
        r = http.put("/api/admin/context/plan", json={"legalValues": [{"value": "silver"}]})
        assert r.status_code == 200 and field(http, "plan").description == "Plan"

        # one legal value at a time: added, its description replaced in place, removed
        legal = "/api/admin/context/plan/legal-values"
        assert http.post(legal, json={"value": "gold"}).status_code == 200
        assert (
            http.post(legal, json={"value": "silver", "description": "Middle"}).status_code == 200
        )
        assert [(v.value, v.description) for v in field(http, "plan").legalValues] == [
            ("silver", "Middle"), ("gold", None)]  # fmt: skip
        assert http.delete("/api/admin/context/plan/legal-values/silver").status_code == 200
        assert http.delete("/api/admin/context/plan/legal-values/nothing").status_code == 200
        assert [v.value for v in field(http, "plan").legalValues] == ["gold"]

        r = http.delete("/api/admin/context/plan")
        assert (r.status_code, r.content) == (200, b"")
        assert_error(http.get("/api/admin/context/plan"), 404, "NotFoundError")
        assert "plan" not in {f["name"] for f in http.get("/api/admin/context").json()}
    assert events(sandbox, "context-field-created") == [
        ("admin", "**admin** created context field **plan**")]  # fmt: skip
    assert len(events(sandbox, "context-field-updated")) == 6
    assert events(sandbox, "context-field-deleted") == [
        ("admin", "**admin** deleted context field **plan**")]  # fmt: skip


def test_a_name_taken_is_409_and_a_bad_body_400(demo_sandbox: SandboxProcess) -> None:
    with demo_sandbox.admin() as http:
        before = http.get("/api/admin/context").json()
        taken = assert_error(http.post("/api/admin/context", json={"name": "region"}), 409,
                             "NameExistsError")  # fmt: skip
        assert taken["message"] == "A context field with that name already exist"
        for body, path in (
            ({}, "$.name"),
            ({"name": ""}, "$.name"),
            ({"name": "has space"}, "$.name"),
            ({"name": "x" * 101}, "$.name"),
            ({"name": "ok", "stickiness": "very"}, "$.stickiness"),
            ({"name": "ok", "sortOrder": "first"}, "$.sortOrder"),
            ({"name": "ok", "description": "d" * 251}, "$.description"),
            ({"name": "ok", "legalValues": [{"description": "none"}]}, "$.legalValues[0].value"),
            ({"name": "ok", "legalValues": [{"value": "a", "colour": "red"}]},
             "$.legalValues[0].colour"),
            ({"name": "ok", "legalValues": [{"value": "a"}, {"value": "a"}]}, "$.legalValues"),
        ):  # fmt: skip
            error = assert_error(http.post("/api/admin/context", json=body), 400,
                                 "ValidationError")  # fmt: skip
            assert any(d.get("path") == path for d in error["details"]), (body, error)
        bad_put = http.put("/api/admin/context/region", json={"legalValues": [{"value": ""}]})
        assert_error(bad_put, 400, "ValidationError")
        bad_value = http.post("/api/admin/context/region/legal-values", json={"value": "x" * 101})
        assert_error(bad_value, 400, "ValidationError")
        assert http.get("/api/admin/context").json() == before


def test_an_unknown_field_is_404(demo_sandbox: SandboxProcess) -> None:
    with demo_sandbox.admin() as http:
        for r in (
            http.put("/api/admin/context/nothing", json={"description": "x"}),
            http.delete("/api/admin/context/nothing"),
            http.post("/api/admin/context/nothing/legal-values", json={"value": "x"}),
            http.delete("/api/admin/context/nothing/legal-values/x"),
        ):
            error = assert_error(r, 404, "NotFoundError")
            assert error["message"] == "Could not find context field with name nothing"
        assert_error(http.get("/api/admin/context/nothing"), 404, "NotFoundError")


def test_a_field_in_use_cannot_be_deleted(demo_sandbox: SandboxProcess) -> None:
    with demo_sandbox.admin() as http:
        assert http.get("/api/admin/context/region/strategies").json()["strategies"]
        error = assert_error(http.delete("/api/admin/context/region"), 409, "ConflictError")
        assert error["message"] == (
            "This context field is in use by existing flags. To delete it, first remove its "
            "usage from all flags."
        )
        assert field(http, "region").name == "region"
    assert events(demo_sandbox, "context-field-deleted") == []


def test_who_may_change_context_fields(
    sandbox: SandboxProcess, personal_token: PersonalToken
) -> None:
    url = sandbox.url
    body = {"name": "byEditor"}
    assert_error(httpx.post(url + "/api/admin/context", json=body), 401,
                 "AuthenticationRequired")  # fmt: skip
    viewer = {"Authorization": personal_token(sandbox, "uma.iyer")}
    editor = {"Authorization": personal_token(sandbox, "greta.schmidt")}
    for r in (
        httpx.post(url + "/api/admin/context", json=body, headers=viewer),
        httpx.put(url + "/api/admin/context/tenantId", json={}, headers=viewer),
        httpx.delete(url + "/api/admin/context/tenantId", headers=viewer),
        httpx.post(url + "/api/admin/context/tenantId/legal-values", json={"value": "a"},
                   headers=viewer),
        httpx.delete(url + "/api/admin/context/tenantId/legal-values/a", headers=viewer),
    ):  # fmt: skip
        assert_error(r, 403, "NoAccessError")
    with sandbox.client() as client:
        assert_error(client.delete("/api/admin/context/tenantId"), 403, "NoAccessError")
    assert httpx.post(url + "/api/admin/context", json=body, headers=editor).status_code == 201
    assert httpx.delete(url + "/api/admin/context/byEditor", headers=editor).status_code == 200
    with sandbox.admin() as http:
        assert field(http, "tenantId").name == "tenantId"
        assert_error(http.get("/api/admin/context/byEditor"), 404, "NotFoundError")
