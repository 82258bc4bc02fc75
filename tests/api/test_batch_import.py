"""The client's batch validate and import (issue 37) against a sandbox: validate answers the
model with the server's errors and warnings, for any admin-side token; an import with a
personal access token creates the flags; with the admin API token the client refuses it before
sending (`Unsupported`: the action `compare.import` needs a user's token), and the request
itself, sent anyway, is the server's 400; a body past Unleash's 500 kB is refused before it
is built into a request."""

from __future__ import annotations

import pytest

from app.api import errors as e
from app.api import models as m
from app.api.client import AdminClient, WriteRequest, import_request
from app.api.wire import BATCH_BODY_LIMIT
from sandbox.process import SandboxProcess
from tests.api.test_operations import with_client
from tests.conftest import personal_token_of


def query(*flags: str, strategy: str = "flexibleRollout") -> m.ImportQuery:
    return m.ImportQuery.model_validate({
        "project": "default", "environment": "development",
        "data": {
            "features": [{"name": f, "type": "release", "description": "batch"} for f in flags],
            "featureStrategies": [{"name": strategy, "featureName": f,
                                   "parameters": {"rollout": "40"}} for f in flags],
            "featureEnvironments": [{"name": f, "featureName": f, "enabled": True}
                                    for f in flags],
            "tagTypes": [],
        },
    })  # fmt: skip


def test_validate_and_import_with_a_personal_access_token(sandbox: SandboxProcess) -> None:
    token = personal_token_of(sandbox, "admin")

    async def job(c: AdminClient) -> tuple[m.ImportValidation, m.ImportValidation, m.Feature]:
        missing = await c.validate_import(query("api-imp-1", strategy="api-missing"))
        fine = await c.validate_import(query("api-imp-1", "api-imp-2"))
        await c.import_features(query("api-imp-1", "api-imp-2"))
        return missing, fine, await c.feature("default", "api-imp-2")

    missing, fine, made = with_client(sandbox, job, token)
    assert [(x.message, x.affectedItems) for x in missing.errors] == [(
        "We detected the following custom strategy that needs to be created first:",
        ["api-missing"])]  # fmt: skip
    assert fine.errors == [] and fine.warnings == [] and fine.permissions == []
    development = next(x for x in made.environments if x.name == "development")
    assert development.enabled is True
    assert [x.parameters["rollout"] for x in development.strategies] == ["40"]


def test_the_admin_token_may_validate_but_not_import(sandbox: SandboxProcess) -> None:
    async def job(c: AdminClient) -> m.ImportValidation:
        with pytest.raises(e.Unsupported) as refused:
            await c.import_features(query("api-imp-admin"))
        assert "personal access token" in str(refused.value)
        with pytest.raises(e.BadRequest) as server:
            await c.send_write(import_request(query("api-imp-admin")))
        assert "You can't use an admin token to import features" in str(server.value)
        return await c.validate_import(query("api-imp-admin"))

    assert with_client(sandbox, job).errors == []


def test_a_body_past_the_limit_is_refused_before_it_is_sent() -> None:
    names = [f"api-imp-{i:06d}-{'x' * 180}" for i in range(BATCH_BODY_LIMIT // 300)]
    with pytest.raises(ValueError, match="more than the 512,000 Unleash takes"):
        import_request(query(*names))
    small = import_request(query("api-imp-small"))
    assert isinstance(small, WriteRequest) and small.path == "/api/admin/features-batch/import"
