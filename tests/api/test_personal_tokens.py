"""The client's personal access token methods against a sandbox over HTTP: the requests' exact
bytes (what `--dry-run` prints and the journal names), the list, a creation's answer with its
secret (kept out of `repr`), a deletion, the server's refusals as the client's errors, and an
admin API token refused by the capabilities with nothing sent to these endpoints."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from app.api import errors as e
from app.api.client import AdminClient, create_pat_request, delete_pat_request
from app.api.models import CreatePersonalAccessToken
from sandbox.process import SandboxProcess
from tests.compat.test_operations import CountingTransport
from tests.conftest import personal_token_of

PATS = "/api/admin/user/tokens"


def test_the_requests_are_exact() -> None:
    body = CreatePersonalAccessToken(description="ci", expiresAt="2031-01-31T01:00:00+01:00")
    request = create_pat_request(body)
    assert (request.method, request.path) == ("POST", PATS)
    assert request.body == b'{"description":"ci","expiresAt":"2031-01-31T00:00:00.000Z"}'
    assert delete_pat_request(12).describe() == {"method": "DELETE", "path": f"{PATS}/12"}
    assert delete_pat_request(12).body == b""
    for refused in ({"description": "ci", "expiresAt": "2031-01-31"},
                    {"description": "ci", "expiresAt": 1900000000000},
                    {"description": "ci\x1b[2J", "expiresAt": "2031-01-31T00:00:00Z"}):  # fmt: skip
        with pytest.raises(ValueError):
            CreatePersonalAccessToken.model_validate(refused)


def test_list_create_and_delete(sandbox: SandboxProcess) -> None:
    later = datetime(2031, 1, 31, tzinfo=UTC)

    async def job() -> None:
        async with AdminClient(sandbox.url, personal_token_of(sandbox, "admin")) as c:
            (own,) = (await c.personal_tokens()).pats
            made = await c.create_personal_token(
                CreatePersonalAccessToken(description="api", expiresAt=later)
            )
            assert made.secret.startswith("user:") and made.secret not in repr(made)
            assert made.expiresAt == later and made.userId == own.userId
            with pytest.raises(e.Conflict):
                await c.create_personal_token(
                    CreatePersonalAccessToken(description="api", expiresAt=later)
                )
            assert [t.id for t in (await c.personal_tokens()).pats] == [own.id, made.id]
            assert await c.delete_personal_token(made.id) == 200
            assert [t.id for t in (await c.personal_tokens()).pats] == [own.id]

    asyncio.run(job())


def test_an_admin_api_token_sends_nothing_to_them(sandbox: SandboxProcess) -> None:
    transport = CountingTransport()
    later = datetime(2031, 1, 31, tzinfo=UTC)

    async def job() -> None:
        async with AdminClient(sandbox.url, sandbox.admin_token, transport=transport) as c:
            body = CreatePersonalAccessToken(description="x", expiresAt=later)
            for call in (c.personal_tokens(), c.delete_personal_token(1),
                         c.create_personal_token(body)):  # fmt: skip
                with pytest.raises(e.Unsupported, match="needs a personal access token"):
                    await call

    asyncio.run(job())
    assert transport.requests  # the probe's
    assert not [path for _, path in transport.requests if path.startswith(PATS)]
