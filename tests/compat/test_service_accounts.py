"""Service accounts (Unleash Enterprise) on a real open-source Unleash (each of `VERSIONS`) and
on the sandbox playing it (`target`): every route of section 1 of
../shared/reference/unleash-enterprise-admin-api.md is absent, a 404 of an unknown path ("The
path you were looking for (...) is not available.", the same on every release and for an admin
API token and a personal access token alike: section 7 of
../shared/reference/unleash-admin-console-behaviour.md); and flagdesk says "needs Unleash
Enterprise" for the tool and each of its actions, through the capabilities and through
`flagdesk service-accounts`, sending nothing to those routes but the probe's one read. Nothing
is created on the peer."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

from app.api import errors as e
from app.api.capabilities import NEEDS_ENTERPRISE_SERVICE_ACCOUNTS
from app.api.client import AdminClient
from app.api.models import CreatePersonalAccessToken, CreateServiceAccount
from app.registry import SERVICE_ACCOUNTS
from tests.compat.test_operations import CountingTransport

if TYPE_CHECKING:
    from tests.compat.conftest import Peer

ACCOUNTS = "/api/admin/service-account"
#: every route of the reference's section 1, with a body where it takes one
ROUTES = (
    ("GET", ACCOUNTS, None),
    ("POST", ACCOUNTS, {"name": "n", "username": "flagdesk-compat-none", "rootRole": 3}),
    ("PUT", f"{ACCOUNTS}/1", {"name": "n"}),
    ("DELETE", f"{ACCOUNTS}/1", None),
    ("GET", f"{ACCOUNTS}/1/token", None),
    ("POST", f"{ACCOUNTS}/1/token", {"description": "d", "expiresAt": "2031-01-31T00:00:00Z"}),
    ("DELETE", f"{ACCOUNTS}/1/token/1", None),
    ("GET", f"{ACCOUNTS}/1/permissions", None),
)


@pytest.mark.parametrize("kind", ["admin", "pat"])
def test_every_route_is_absent(target: Peer, kind: str) -> None:
    """No release answers 401, 403 or a licence message: the routes are not mounted (the same
    table on every version, so no `per_version`)."""
    token = target.admin_token if kind == "admin" else target.require_pat()
    with httpx.Client(base_url=target.url, timeout=30, headers={"Authorization": token}) as http:
        for method, path, body in ROUTES:
            answer = http.request(method, path, json=body)
            assert answer.status_code == 404, (method, path, answer.text)
            assert answer.json()["message"] == (
                f"The path you were looking for ({path}) is not available."
            ), answer.text


@pytest.mark.parametrize("kind", ["admin", "pat"])
def test_the_tool_needs_enterprise_and_sends_nothing(target: Peer, kind: str) -> None:
    token = target.admin_token if kind == "admin" else target.require_pat()
    transport = CountingTransport()
    body = CreateServiceAccount(name="n", username="flagdesk-compat-none", rootRole=3)
    pat = CreatePersonalAccessToken(description="d", expiresAt="2031-01-31T00:00:00Z")

    async def job() -> None:
        async with AdminClient(target.url, token, transport=transport) as c:
            caps = await c.capabilities()
            tool = caps.operation(SERVICE_ACCOUNTS)
            assert not tool.available and tool.reason == NEEDS_ENTERPRISE_SERVICE_ACCOUNTS
            for action in SERVICE_ACCOUNTS.actions:
                assert caps.action(action).reason == NEEDS_ENTERPRISE_SERVICE_ACCOUNTS
            for call in (c.service_accounts(), c.service_account_tokens(1),
                         c.create_service_account(body), c.delete_service_account(1),
                         c.create_service_account_token(1, pat),
                         c.delete_service_account_token(1, 1)):  # fmt: skip
                with pytest.raises(e.Unsupported, match="need Unleash Enterprise"):
                    await call

    asyncio.run(job())
    touched = [r for r in transport.requests if r[1].startswith(ACCOUNTS)]
    assert touched == [("GET", ACCOUNTS)]  # the probe's read alone


def test_the_command_says_so(target: Peer, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLAGDESK_")}
    env.update(FLAGDESK_TOKEN=target.admin_token, FLAGDESK_DATA_DIR=str(tmp_path))
    for args in (("list",), ("delete", "1", "--yes"),
                 ("tokens", "create", "1", "--description", "d", "--expires", "2031-01-31",
                  "--yes")):  # fmt: skip
        done = subprocess.run(
            [sys.executable, "-m", "app", "service-accounts", *args, "--url", target.url],
            capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=120,
        )  # fmt: skip
        assert done.returncode == 4, (args, done.stderr)
        assert "Service accounts need Unleash Enterprise" in done.stderr
    assert not (tmp_path / "journal").exists()
