"""`app.api.exported`: msgspec's strict decoding of a batch export (`strictly`) gives exactly
what pydantic, the authority, validates from the same bytes, on the demo sandbox's real exports
(variants with payloads, constraints, segments, tags) and where
Unleash's own bodies differ; what only pydantic's leniency takes, or nothing takes, msgspec
refuses, and `AdminClient.exported` then answers as pydantic does."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from app.api import errors as e
from app.api.client import AdminClient
from app.api.exported import EXPORTED, strictly
from sandbox.process import SandboxProcess

EXPORT = "/api/admin/features-batch/export"


def test_strict_decoding_agrees_with_pydantic_on_the_demos_exports(
    demo_sandbox: SandboxProcess,
) -> None:
    with demo_sandbox.admin() as http:
        projects = [p["id"] for p in http.get("/api/admin/projects").json()["projects"]]
        environments = [
            x["name"] for x in http.get("/api/admin/environments").json()["environments"]
        ]
        bodies = [http.post(EXPORT, json={"environment": env, "project": p}).content
                  for p in projects for env in environments]  # fmt: skip
    for part in (b'"payload":{', b'"constraints":[{', b'"segments":[1', b'"featureTags":[{'):
        assert any(part in b for b in bodies), part
    for body in bodies:
        found = strictly(body)
        assert found is not None
        assert found == EXPORTED.validate_json(body)
        assert json.dumps(found, sort_keys=True) == json.dumps(EXPORTED.validate_json(body),
                                                               sort_keys=True)  # fmt: skip


AS_UNLEASH = {
    "features": [{"name": "f", "project": "p", "type": "release", "description": None,
                  "impressionData": False, "stale": False, "archived": False,
                  "createdAt": "2024-01-01T00:00:00.000Z", "lastSeenAt": None}],
    "featureStrategies": [{"id": "7b2c", "name": "flexibleRollout", "featureName": "f",
                           "title": None, "constraints": [{"contextName": "region",
                           "operator": "IN", "values": ["eu"], "caseInsensitive": False,
                           "inverted": False}], "parameters": {"rollout": "50"},
                           "disabled": None, "sortOrder": 0, "segments": [3],
                           "variants": [{"name": "a", "weight": 1000, "weightType": "variable",
                                         "stickiness": "default",
                                         "payload": {"type": "string", "value": "x"}}]}],
    "featureEnvironments": [{"featureName": "f", "enabled": True, "environment": "production",
                             "variants": [{"name": "v", "weight": 500.0, "weightType": "fix",
                                           "stickiness": None, "overrides": []}],
                             "name": "f"}],
    "featureTags": [{"featureName": "f", "tagType": "simple", "tagValue": "x"}],
    "dependencies": [{"feature": "f", "dependencies": [{"feature": "g", "enabled": True}]}],
    "contextFields": [], "segments": [{"id": 3, "name": "s"}], "tagTypes": [],
}  # fmt: skip


def test_what_unleash_sends_is_decoded_strictly_and_the_same() -> None:
    body = json.dumps(AS_UNLEASH).encode()
    found = strictly(body)
    assert found is not None and found == EXPORTED.validate_json(body)
    assert found["featureEnvironments"][0]["variants"][0]["weight"] == 500.0
    assert "createdAt" not in found["features"][0] and "contextFields" not in found


@pytest.mark.parametrize(
    ("where", "value"),
    [
        (("featureStrategies", 0, "sortOrder"), "2"),  # a number as text: pydantic takes it
        (("featureEnvironments", 0, "enabled"), 1),  # 0/1 for a bool: pydantic takes it
        (("featureEnvironments", 0, "enabled"), "sometimes"),  # nobody takes it
        (("features", 0, "name"), 5),  # a number for a name: nobody takes it
    ],
)
def test_what_msgspec_refuses_goes_to_pydantic(where: tuple[Any, ...], value: object) -> None:
    data = json.loads(json.dumps(AS_UNLEASH))
    place = data
    for key in where[:-1]:
        place = place[key]
    place[where[-1]] = value
    body = json.dumps(data).encode()
    assert strictly(body) is None
    transport = _answering(body)

    async def go() -> Any:
        async with AdminClient("http://unleash.test", "*:*.secret", transport=transport) as client:
            return await client.exported("production", "p")

    try:
        expected: Any = EXPORTED.validate_json(body)
    except ValueError:
        with pytest.raises(e.BadResponse) as raised:
            asyncio.run(go())
        assert raised.value.field.startswith(".".join(map(str, where[:1])))
    else:
        assert asyncio.run(go()) == expected


def test_a_body_that_is_no_json_is_refused_strictly() -> None:
    assert strictly(b"<html>") is None and strictly(b"[]") is None


def _answering(body: bytes) -> Any:
    import httpx

    return httpx.MockTransport(lambda request: httpx.Response(200, content=body))
