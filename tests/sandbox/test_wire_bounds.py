"""What the wire models let into the sandbox's database: every integer a request carries (body,
path or query) within `INT64` (the schema of each says so, and larger ones are 400s naming the
field, never the 500 of SQLite's "Python int too large to convert to SQLite INTEGER"), and no
control characters in names and other one-line texts (issue 35, items 5 and 7): a group named
`"\\x1b]0;PWNED\\x07\\x1b[2J"` retitled and cleared the terminal that listed it.

The walks read the JSON schemas (the OpenAPI document built from the sandbox's endpoints, and
every `Request` model of `app.api.models`), so that a field added later without the bound, or a
text field without its refusal, fails here until it has one (or is listed below, with why)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from pydantic import BaseModel, ValidationError

from app.api import models as m
from sandbox.app import create_app, openapi
from sandbox.process import SandboxProcess
from sandbox.routes.users import NewUser
from tests.sandbox.conftest import assert_error

#: what a 64-bit signed column holds (`app.api.models.INT64`)
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

#: text fields of requests that may hold any character, and why
ANY_TEXT = {
    # looked up, never stored: an unknown one is a 404 or is left out
    "ResetPasswordRequest.id", "BatchFeatures.features[]",
    "BatchStale.features[]",
    # a password is never shown
    "NewUser.password",
    # what a constraint compares with, as the SDKs read it: any text
    "Constraint.values[]", "Constraint.value", "CreateFeatureStrategy.parameters{}",
    "UpdateFeatureStrategy.parameters{}", "ImportStrategy.parameters{}",
    # metrics as SDKs send them (Unleash takes any text); the client's metrics core validates
    # its 100,000s of items with these, where a check per text would cost (docs/performance.md)
    "BulkApplication.appName", "BulkApplication.environment", "BulkApplication.instanceId",
    "BulkApplication.sdkVersion", "BulkApplication.strategies[]", "ConnectVia.appName",
    "ConnectVia.instanceId", "BulkMetric.featureName", "BulkMetric.appName",
    "BulkMetric.environment", "BulkMetric.variants{}",
    # path parameters the sandbox reads as text: a name looked up (404 when unknown)
    "path:contextField", "path:legalValue", "path:name", "path:projectId", "path:project",
    "path:feature", "path:featureName", "path:environment", "path:strategyId",
    # an API token's secret or masked handle, looked up by its hash or as it is (unknown: 200
    # with nothing done, as Unleash)
    "path:token",
    # read as Unleash 8.2 reads it: any text, 24 hours unless 1 to 48
    "query:hoursBack",
    # flag extras (issue 37, slice 2): names looked up (404, or nothing, when unknown)
    "path:child", "path:parent", "path:strategyName", "path:type", "path:value",
}  # fmt: skip


def _nodes(
    schema: Any, defs: dict[str, Any], where: str, seen: frozenset[str] = frozenset()
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every leaf schema under `schema` with where it is (`Model.field[]`), `$ref`s followed."""
    if not isinstance(schema, dict):
        return
    ref = schema.get("$ref")
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[-1]
        if name not in seen:
            yield from _nodes(defs[name], defs, name, seen | {name})
        return
    for key in ("anyOf", "oneOf", "allOf"):
        for part in schema.get(key, []):
            yield from _nodes(part, defs, where, seen)
    for name, sub in schema.get("properties", {}).items():
        yield from _nodes(sub, defs, f"{where}.{name}", seen)
    if "items" in schema:
        yield from _nodes(schema["items"], defs, where + "[]", seen)
    if isinstance(schema.get("additionalProperties"), dict):
        yield from _nodes(schema["additionalProperties"], defs, where + "{}", seen)
    if "type" in schema:
        yield where, schema


def _types(node: dict[str, Any]) -> set[str]:
    kind = node.get("type")
    return set(kind) if isinstance(kind, list) else {kind}


def _sandbox_document() -> dict[str, Any]:
    return openapi(create_app(store=None))  # type: ignore[arg-type]  # the document needs none


def _request_leaves() -> Iterator[tuple[str, dict[str, Any]]]:
    """The leaves of every request body and parameter the sandbox takes, and of every `Request`
    model of the client (some only the client sends, such as `CreateUser`)."""
    document = _sandbox_document()
    defs = document["components"]["schemas"]
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            for param in operation.get("parameters", []):
                yield from _nodes(param["schema"], defs, f"{param['in']}:{param['name']}")
            body = operation.get("requestBody")
            if body is not None:
                schema = body["content"]["application/json"]["schema"]
                yield from _nodes(schema, defs, f"{method.upper()} {path}")
    models = [NewUser, *(v for v in vars(m).values() if isinstance(v, type)
                         and issubclass(v, m.Request) and v is not m.Request)]  # fmt: skip
    for model in models:
        schema = model.model_json_schema(mode="validation")
        yield from _nodes(schema, schema.get("$defs", {}), model.__name__)


def test_every_integer_of_a_request_is_bounded_to_64_bits() -> None:
    unbounded = []
    for where, node in _request_leaves():
        if "integer" not in _types(node):
            continue
        low = node.get("minimum", node.get("exclusiveMinimum"))
        high = node.get("maximum", node.get("exclusiveMaximum"))
        if low is None or high is None or low < INT64_MIN or high > INT64_MAX:
            unbounded.append(f"{where}: {low}..{high}")
    assert not unbounded, "integers without the INT64 bound: " + ", ".join(sorted(unbounded))


def test_every_text_of_a_request_refuses_control_characters() -> None:
    open_texts = set()
    for where, node in _request_leaves():
        if "string" not in _types(node) or "enum" in node or "format" in node:
            continue
        if "pattern" in node or where in ANY_TEXT:
            continue
        open_texts.add(where)
    assert not open_texts, "texts that take control characters: " + ", ".join(sorted(open_texts))


def test_the_walk_sees_what_it_must() -> None:
    """The walks are not vacuous: they reach the fields of issue 35 and the path's id."""
    leaves = {where: node for where, node in _request_leaves() if node.get("type") != "null"}
    assert leaves["CreateContextField.sortOrder"]["maximum"] == INT64_MAX
    assert leaves["CreateGroup.name"]["pattern"] == m.ONE_LINE_PATTERN
    assert leaves["CreateGroup.description"]["pattern"] == m.TEXT_PATTERN
    assert leaves["path:id"]["maximum"] == INT64_MAX
    assert leaves["query:limit"]["maximum"] == INT64_MAX
    roles = [where for where, node in _request_leaves() if where == "NewUser.rootRole"
             and "integer" in _types(node)]  # fmt: skip
    assert roles


# --------------------------------------------------------------------------- the models


@pytest.mark.parametrize("value", [2**63, -(2**63) - 1, 2**64, 10**30])
@pytest.mark.parametrize(
    ("model", "body", "field"),
    [
        (m.CreateContextField, {"name": "n"}, "sortOrder"),
        (m.UpdateContextField, {}, "sortOrder"),
        (m.CreateUser, {"email": "a@example.com"}, "rootRole"),
        (m.UpdateUser, {}, "rootRole"),
        (NewUser, {"email": "a@example.com"}, "rootRole"),
        (m.CreateGroup, {"name": "n"}, "rootRole"),
    ],
)
def test_the_models_refuse_an_integer_past_64_bits(
    model: type[BaseModel], body: dict[str, Any], field: str, value: int
) -> None:
    with pytest.raises(ValidationError) as refused:
        model.model_validate({**body, field: value})
    assert [e["loc"][0] for e in refused.value.errors()] == [field] * len(refused.value.errors())
    # and the last numbers within are taken
    for edge in (INT64_MAX, INT64_MIN):
        assert getattr(model.model_validate({**body, field: edge}), field) == edge


@pytest.mark.parametrize("text", ["\x1b]0;PWNED\x07\x1b[2J", "a\x00b", "tab\there", "line\n",
                                  "del\x7f", "csi\x9b2J", "cr\r"])  # fmt: skip
def test_names_refuse_control_characters(text: str) -> None:
    for model, body, field in [
        (m.CreateGroup, {}, "name"),
        (m.CreateUser, {}, "name"),
        (m.CreateUser, {}, "username"),
        (m.UpdateUser, {}, "name"),
        (NewUser, {"rootRole": "Viewer"}, "name"),
        (NewUser, {"rootRole": "Viewer"}, "username"),
        (m.LegalValueBody, {}, "value"),
    ]:
        with pytest.raises(ValidationError) as refused:
            model.model_validate({**body, field: text})
        (error,) = refused.value.errors()
        assert error["loc"] == (field,)
        assert "control character" in error["msg"]
    with pytest.raises(ValidationError, match="control character"):
        m.CreateGroup(name="g", mappingsSSO=[text])
    with pytest.raises(ValidationError, match="control character"):
        m.UpdateUser(email=f"a{text}@example.com")


def test_descriptions_take_tabs_and_line_breaks_but_no_other_control() -> None:
    text = "Two lines,\r\nand a\ttab"
    assert m.CreateGroup(name="g", description=text).description == text
    assert m.UpdateContextField(description=text).description == text
    assert m.LegalValueBody(value="v", description=text).description == text
    for bad in ("\x1b[2J", "\x00", "\x07", "\x85"):
        with pytest.raises(ValidationError, match="control character"):
            m.CreateGroup(name="g", description=f"before{bad}after")
        with pytest.raises(ValidationError, match="control character"):
            m.UpdateContextField(description=bad)


def test_what_a_server_sends_is_read_whatever_it_holds() -> None:
    """Reading never breaks on a hostile server: the answers' models take any text and number."""
    hostile = "\x1b]0;PWNED\x07\x1b[2J"
    group = m.Group.model_validate({"id": 2**70, "name": hostile, "description": "\x00",
                                    "mappingsSSO": [hostile], "rootRole": 2**64})  # fmt: skip
    assert group.name == hostile and group.rootRole == 2**64
    field = m.ContextField.model_validate({"name": hostile, "sortOrder": -(2**70)})
    assert field.name == hostile and field.sortOrder == -(2**70)
    user = m.User.model_validate({"id": 1, "name": hostile, "username": hostile,
                                  "rootRole": 2**63})  # fmt: skip
    assert user.name == hostile


# --------------------------------------------------------------------------- over HTTP


@pytest.fixture
def http(sandbox: SandboxProcess) -> Iterator[httpx.Client]:
    with sandbox.admin() as client:
        yield client


def _refused(response: httpx.Response, path: str) -> str:
    body = assert_error(response, 400, "ValidationError")
    assert [d["path"] for d in body["details"]] == [path], body
    assert path in body["message"]
    return str(body["message"])


@pytest.mark.parametrize("value", [2**63, -(2**63) - 1])
def test_a_sort_order_past_64_bits_is_400_naming_it(http: httpx.Client, value: int) -> None:
    r = http.post("/api/admin/context", json={"name": "huge", "sortOrder": value})
    _refused(r, "$.sortOrder")
    assert http.get("/api/admin/context/huge").status_code == 404
    assert http.post("/api/admin/context", json={"name": "huge", "sortOrder": 5}).status_code == 201
    r = http.put("/api/admin/context/huge", json={"sortOrder": value})
    _refused(r, "$.sortOrder")
    # the last numbers within are stored and read back
    for edge in (INT64_MAX, INT64_MIN):
        r = http.post("/api/admin/context", json={"name": f"edge{edge}", "sortOrder": edge})
        assert r.status_code == 201, r.text
        assert http.get(f"/api/admin/context/edge{edge}").json()["sortOrder"] == edge


def test_a_root_role_past_64_bits_is_400_naming_it(http: httpx.Client) -> None:
    r = http.post("/api/admin/user-admin",
                  json={"email": "huge@example.com", "rootRole": 2**63})  # fmt: skip
    _refused(r, "$.rootRole")
    r = http.put("/api/admin/user-admin/2", json={"rootRole": 2**63})
    _refused(r, "$.rootRole")
    # within 64 bits: the role that does not exist, as before
    r = http.put("/api/admin/user-admin/2", json={"rootRole": INT64_MAX})
    assert (
        assert_error(r, 400, "ValidationError")["message"] == f"Could not find rootRole={INT64_MAX}"
    )
    # and the server still answers on
    assert http.get("/api/admin/user-admin/2").status_code == 200


@pytest.mark.parametrize(
    "query",
    ["offset=99999999999999999999", "limit=99999999999999999999", "limit=-9223372036854775809"],
)
def test_search_paging_past_64_bits_is_400(http: httpx.Client, query: str) -> None:
    r = http.get(f"/api/admin/search/features?{query}")
    body = assert_error(r, 400, "ValidationError")
    assert query.split("=")[0] in body["message"]


@pytest.mark.parametrize(
    "path",
    ["/api/admin/user-admin/99999999999999999999", "/api/admin/groups/99999999999999999999"],
)
def test_an_id_past_64_bits_in_a_path_is_400(http: httpx.Client, path: str) -> None:
    for method in ("GET", "DELETE"):
        r = http.request(method, path)
        assert "path parameter id" in assert_error(r, 400, "ValidationError")["message"]


HOSTILE = "\x1b]0;PWNED\x07\x1b[2J"


def test_a_group_named_with_escapes_is_400_and_not_made(http: httpx.Client) -> None:
    r = http.post("/api/admin/groups", json={"name": HOSTILE})
    message = _refused(r, "$.name")
    assert "control character" in message
    assert HOSTILE not in {g["name"] for g in http.get("/api/admin/groups").json()["groups"]}
    made = http.post("/api/admin/groups", json={"name": "Plain", "description": "a\nb"})
    assert made.status_code == 201, made.text
    r = http.put(f"/api/admin/groups/{made.json()['id']}", json={"name": "Plain\x00"})
    _refused(r, "$.name")
    r = http.post("/api/admin/groups", json={"name": "Other", "mappingsSSO": ["ok", "\x9b"]})
    _refused(r, "$.mappingsSSO[1]")


def test_users_named_with_controls_are_400(http: httpx.Client) -> None:
    for body, path in [
        ({"email": "c1@example.com", "name": HOSTILE, "rootRole": "Viewer"}, "$.name"),
        ({"username": "bell\x07", "rootRole": "Viewer"}, "$.username"),
        ({"email": "c\x1b@example.com", "rootRole": "Viewer"}, "$.email"),
    ]:
        _refused(http.post("/api/admin/user-admin", json=body), path)
    _refused(http.put("/api/admin/user-admin/2", json={"name": "nul\x00"}), "$.name")
    assert "nul\x00" not in {u["name"] for u in http.get("/api/admin/user-admin").json()["users"]}


def test_context_texts_with_controls_are_400(http: httpx.Client) -> None:
    _refused(http.post("/api/admin/context", json={"name": "tier", "description": "\x1b[2J"}),
             "$.description")  # fmt: skip
    body = {"name": "tier", "legalValues": [{"value": "gold\x07"}]}
    _refused(http.post("/api/admin/context", json=body), "$.legalValues[0].value")
    body = {"name": "tier", "description": "Two\nlines\tand a tab"}
    assert http.post("/api/admin/context", json=body).status_code == 201
    _refused(http.post("/api/admin/context/tier/legal-values", json={"value": "\x00"}), "$.value")
