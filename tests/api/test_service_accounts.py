"""The client's service account methods: the requests' exact bytes (what `--dry-run` prints and
the journal names); the reads and writes against a sandbox over HTTP (a created token's secret
kept out of `repr`, the server's refusals as the client's errors); the capability decided from
the probe's `GET /api/admin/service-account` alone (a list: there; the 404 of an unknown path:
"needs Unleash Enterprise"; 403: may not read); and a played open-source release refused by the
capabilities with nothing sent but the probe's read."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from app.api import errors as e
from app.api.capabilities import (
    NEEDS_ENTERPRISE_SERVICE_ACCOUNTS,
    ProbeOutcomes,
    capabilities_of,
)
from app.api.client import (
    AdminClient,
    create_service_account_request,
    create_service_account_token_request,
    delete_service_account_request,
    delete_service_account_token_request,
    update_service_account_request,
)
from app.api.models import (
    CreatePersonalAccessToken,
    CreateServiceAccount,
    ServiceAccounts,
    UpdateServiceAccount,
)
from app.registry import SERVICE_ACCOUNTS, version_rows
from sandbox.process import SandboxProcess
from tests.api.test_capabilities import ADMIN, not_found, outcomes
from tests.compat.test_operations import CountingTransport

ACCOUNTS = "/api/admin/service-account"
LATER = datetime(2031, 1, 31, tzinfo=UTC)


def test_the_requests_are_exact() -> None:
    create = create_service_account_request(
        CreateServiceAccount(name="Deployer", username="deployer", rootRole=2)
    )
    assert (create.method, create.path) == ("POST", ACCOUNTS)
    assert create.body == b'{"name":"Deployer","username":"deployer","rootRole":2}'
    update = update_service_account_request(7, UpdateServiceAccount(rootRole=1))
    assert (update.method, update.path, update.body) == ("PUT", f"{ACCOUNTS}/7", b'{"rootRole":1}')
    assert delete_service_account_request(7).describe() == {"method": "DELETE",
                                                            "path": f"{ACCOUNTS}/7"}  # fmt: skip
    token = create_service_account_token_request(
        7, CreatePersonalAccessToken(description="ci", expiresAt=LATER)
    )
    assert (token.method, token.path) == ("POST", f"{ACCOUNTS}/7/token")
    assert token.body == b'{"description":"ci","expiresAt":"2031-01-31T00:00:00.000Z"}'
    gone = delete_service_account_token_request(7, 12)
    assert (gone.method, gone.path, gone.body) == ("DELETE", f"{ACCOUNTS}/7/token/12", b"")
    for refused in ({"name": "n", "username": "u", "rootRole": "Viewer"},
                    {"name": "n", "username": "u\x1b[2J", "rootRole": 3},
                    {"name": "n", "rootRole": 3},
                    {"name": "n", "username": "u", "rootRole": 2**63}):  # fmt: skip
        with pytest.raises(ValueError):
            CreateServiceAccount.model_validate(refused)


def test_reads_and_writes_against_a_sandbox(sandbox: SandboxProcess) -> None:
    async def job() -> None:
        async with AdminClient(sandbox.url, sandbox.admin_token) as c:
            listed = await c.service_accounts()
            assert [a.username for a in listed.serviceAccounts] == ["ci-deploy-bot"]
            assert [r.name for r in listed.rootRoles] == ["Viewer"]
            made = await c.create_service_account(
                CreateServiceAccount(name="Deployer", username="deployer", rootRole=2)
            )
            assert made.username == "deployer" and made.rootRole == 2
            with pytest.raises(e.Conflict):
                await c.create_service_account(
                    CreateServiceAccount(name="x", username="deployer", rootRole=2)
                )
            with pytest.raises(e.BadRequest):
                await c.create_service_account(
                    CreateServiceAccount(name="x", username="other", rootRole=5)
                )
            changed = await c.update_service_account(made.id, UpdateServiceAccount(name="D"))
            assert (changed.name, changed.rootRole) == ("D", 2)
            token = await c.create_service_account_token(
                made.id, CreatePersonalAccessToken(description="ci", expiresAt=LATER)
            )
            assert token.secret.startswith("user:") and token.secret not in repr(token)
            assert [t.id for t in (await c.service_account_tokens(made.id)).pats] == [token.id]
            assert await c.delete_service_account_token(made.id, token.id) == 200
            with pytest.raises(e.NotFound):
                await c.delete_service_account_token(made.id, token.id)
            assert await c.delete_service_account(made.id) == 200
            with pytest.raises(e.NotFound):
                await c.service_account_tokens(made.id)

    asyncio.run(job())


def test_the_probe_answer_decides() -> None:
    there = capabilities_of(outcomes(service_accounts=ServiceAccounts(serviceAccounts=[])))
    assert there.operation(SERVICE_ACCOUNTS).available
    assert all(there.action(a).available for a in SERVICE_ACCOUNTS.actions)
    oss = capabilities_of(outcomes(service_accounts=not_found()))
    assert oss.operation(SERVICE_ACCOUNTS).reason == NEEDS_ENTERPRISE_SERVICE_ACCOUNTS
    assert "Service accounts need Unleash Enterprise" in NEEDS_ENTERPRISE_SERVICE_ACCOUNTS
    assert all(oss.action(a).reason == NEEDS_ENTERPRISE_SERVICE_ACCOUNTS
               for a in SERVICE_ACCOUNTS.actions)  # fmt: skip
    denied = capabilities_of(outcomes(service_accounts=e.Forbidden(403, "NoAccessError", "no")))
    assert denied.operation(SERVICE_ACCOUNTS).reason == "The token may not read service accounts"
    # the Admin root role is checked first
    editor = ADMIN.model_copy(update={"permissions": []})
    assert (
        "Admin root role"
        in capabilities_of(
            outcomes(user=editor, service_accounts=ServiceAccounts(serviceAccounts=[]))
        )
        .operation(SERVICE_ACCOUNTS)
        .reason
    )
    # not probed (an older probe's outcomes): not available, saying so
    unasked = outcomes()
    assert isinstance(unasked, ProbeOutcomes) and unasked.service_accounts is None
    assert "not probed" in capabilities_of(unasked).operation(SERVICE_ACCOUNTS).reason
    # the version table: Enterprise on every open-source release
    rows = dict(version_rows())
    assert set(rows["service_accounts"].values()) == {"Enterprise"}
    assert set(rows["service_accounts.create_token"].values()) == {"Enterprise"}


def test_open_source_sends_nothing_but_the_probe(tmp_path: object) -> None:
    from pathlib import Path

    assert isinstance(tmp_path, Path)
    transport = CountingTransport()
    body = CreateServiceAccount(name="n", username="u", rootRole=3)
    with SandboxProcess(tmp_path / "oss.sqlite3", "--demo", "--as-version", "6.10") as sb:

        async def job() -> None:
            async with AdminClient(sb.url, sb.admin_token, transport=transport) as c:
                for call in (c.service_accounts(), c.create_service_account(body),
                             c.delete_service_account(1), c.service_account_tokens(1),
                             c.delete_service_account_token(1, 1)):  # fmt: skip
                    with pytest.raises(e.Unsupported, match="need Unleash Enterprise"):
                        await call

        asyncio.run(job())
    assert transport.requests  # the probe's
    touched = [r for r in transport.requests if r[1].startswith(ACCOUNTS)]
    assert touched == [("GET", ACCOUNTS)]
