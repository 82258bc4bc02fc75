"""The client's API-token reads and writes against a sandbox: the list, by name, a project's
(404 `NotFound` for none), `create_api_token` (the whole secret in its answer, a project's path
naming the project in its body too) and `delete_api_token` by the listed secret; the requests as
`--dry-run` prints them, a secret in a path shown as its last four only."""

from __future__ import annotations

import asyncio
import json

import pytest

from app.api import errors as e
from app.api.client import (
    AdminClient,
    create_api_token_request,
    delete_api_token_request,
    secret_tail,
)
from app.api.models import CreateApiToken
from sandbox.process import SandboxProcess


def test_the_requests() -> None:
    body = CreateApiToken(tokenName="n", type="client", environment="production")
    plain = create_api_token_request(body)
    assert (plain.method, plain.path) == ("POST", "/api/admin/api-tokens")
    assert json.loads(plain.body) == {"tokenName": "n", "type": "client",
                                      "environment": "production"}  # fmt: skip
    scoped = create_api_token_request(body, "my/proj")
    assert scoped.path == "/api/admin/projects/my%2Fproj/api-tokens"
    assert json.loads(scoped.body)["projects"] == ["my/proj"]  # 5.x and 6.x need them there
    secret = "default:development." + "ab" * 28
    delete = delete_api_token_request(secret)
    assert delete.path == "/api/admin/api-tokens/default%3Adevelopment." + "ab" * 28
    assert delete.describe() == {"method": "DELETE", "path": "/api/admin/api-tokens/…abab"}
    assert secret not in repr(delete) and secret_tail(secret) == "…abab"


def test_reads_and_writes(sandbox: SandboxProcess) -> None:
    async def job() -> None:
        async with AdminClient(sandbox.url, sandbox.admin_token) as client:
            names = {t.name for t in (await client.api_tokens()).tokens}
            assert {"admin", "client"} <= names
            made = await client.create_api_token(
                CreateApiToken(tokenName="api", type="frontend"), "default"
            )
            assert made.secret and made.secret.startswith("default:development.")
            (listed,) = (await client.api_tokens_named("api")).tokens
            assert listed.secret == "default:development.…" + made.secret[-8:]
            assert "api" in {t.name for t in (await client.api_tokens("default")).tokens}
            with pytest.raises(e.NotFound):
                await client.api_tokens("no-such-project")
            assert await client.delete_api_token(listed.secret) == 200
            assert (await client.api_tokens_named("api")).tokens == []

    asyncio.run(job())
