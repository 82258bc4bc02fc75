"""Roles on a real open-source Unleash (each of `VERSIONS`) and on the sandbox playing it
(`target`): what `flagdesk roles` relies on there (../shared/reference/unleash-admin-console-
behaviour.md section 7, measured with an admin API token and a personal access token on every
release): the roles routes and the permission catalogue are not mounted (404 "The path you were
looking for (...) is not available."), nor is a role's use per project; the built-in root roles
Admin 1, Editor 2 and Viewer 3 are listed with the users (`rootRoles` of `GET
/api/admin/user-admin`). Then through the client: the capability probe says custom roles need
Unleash Enterprise, `read_roles` lists the built-in root roles and says so, and no action sends
anything to the roles routes."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

from app.actions.journal import Actor, Journal
from app.actions.roles import read_roles
from app.actions.runner import require
from app.api import errors as e
from app.api.capabilities import NEEDS_ENTERPRISE_ROLES
from app.api.client import AdminClient
from app.api.models import UserList
from app.registry import CREATE_ROLE, DELETE_ROLE, EDIT_ROLE
from tests.compat.conftest import per_version
from tests.compat.test_operations import CountingTransport

if TYPE_CHECKING:
    from tests.compat.conftest import Peer

ROLES = "/api/admin/roles"
#: every route of the roles API, none mounted on open-source Unleash
ROUTES = (
    ("GET", ROLES), ("POST", ROLES), ("GET", f"{ROLES}/1"), ("PUT", f"{ROLES}/1"),
    ("DELETE", f"{ROLES}/1"), ("POST", f"{ROLES}/validate"), ("GET", "/api/admin/permissions"),
    ("GET", "/api/admin/projects/roles/4/access"),
)  # fmt: skip


@pytest.mark.parametrize("token_kind", ["admin", "personal"])
def test_the_roles_routes_are_not_there(target: Peer, token_kind: str) -> None:
    token = target.admin_token if token_kind == "admin" else target.require_pat()
    with httpx.Client(base_url=target.url, timeout=30, headers={"Authorization": token}) as http:
        for method, path in ROUTES:
            body = {"name": "flagdesk-compat-role"} if method in ("POST", "PUT") else None
            answer = http.request(method, path, json=body)
            assert answer.status_code == 404, (method, path, answer.text)
            message = answer.json()["message"]
            assert message == f"The path you were looking for ({path}) is not available.", (
                method, path)  # fmt: skip


def test_the_built_in_root_roles_come_with_the_users(target: Peer) -> None:
    with target.raw() as http:
        answer = http.get("/api/admin/user-admin")
    assert answer.status_code == 200, answer.text
    roots = UserList.model_validate(answer.json()).rootRoles
    expected = per_version(target, {"5.12 6.10 7.6 8.2": [(1, "Admin", "root"),
                                                          (2, "Editor", "root"),
                                                          (3, "Viewer", "root")]})  # fmt: skip
    assert [(r.id, r.name, r.type) for r in roots] == expected


def test_the_client_lists_them_and_changes_nothing(target: Peer, tmp_path: Path) -> None:
    transport = CountingTransport()
    journal = Journal(Actor("compat", target.url, "admin", None), tmp_path)

    async def job() -> None:
        async with AdminClient(target.url, target.admin_token, transport=transport) as c:
            caps = await c.capabilities()
            assert caps.operation("roles").available
            for action in (CREATE_ROLE, EDIT_ROLE, DELETE_ROLE):
                assert caps.action(action).reason == NEEDS_ENTERPRISE_ROLES
                with pytest.raises(e.Unsupported, match="Custom roles need Unleash Enterprise"):
                    require(caps, action)
            listing = await read_roles(c)
            assert not listing.custom and "need Unleash Enterprise" in listing.note
            assert [r.name for r in listing.roles] == ["Admin", "Editor", "Viewer"]

    asyncio.run(job())
    # the probe's one GET (the listing reads its answer), nothing else to the roles routes
    assert [r for r in transport.requests if r[1].startswith(ROLES)] == [("GET", ROLES)]
    assert not journal.path.exists()
