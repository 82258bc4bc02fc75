"""The client's roles methods against sandboxes over HTTP: the requests' exact bytes (what
`--dry-run` prints and the journal records), the list, one role with its permissions, the
catalogue, a role's use per project, creating, changing and deleting a role, the server's
refusals as the client's errors; the capability probe's `roles` answer (available on the
sandbox, "custom roles need Unleash Enterprise" on a played open-source release, where the
actions send nothing to the roles routes and the built-in root roles are still read)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from app.api import errors as e
from app.api.capabilities import NEEDS_ENTERPRISE_ROLES
from app.api.client import (
    AdminClient,
    create_role_request,
    delete_role_request,
    update_role_request,
)
from app.api.models import CreateRole, Role, RolePermission
from app.registry import CREATE_ROLE, DELETE_ROLE, EDIT_ROLE, version_cell
from sandbox.process import SandboxProcess
from tests.compat.test_operations import CountingTransport

ROLES = "/api/admin/roles"


def test_the_requests_are_exact() -> None:
    body = CreateRole(name="Deployer", type="custom", permissions=[
        RolePermission(name="CREATE_FEATURE"),
        RolePermission(name="UPDATE_FEATURE_ENVIRONMENT", environment="development")])  # fmt: skip
    made = create_role_request(body)
    assert (made.method, made.path) == ("POST", ROLES)
    assert made.body == (b'{"name":"Deployer","type":"custom","permissions":[{"name":'
                         b'"CREATE_FEATURE"},{"name":"UPDATE_FEATURE_ENVIRONMENT",'
                         b'"environment":"development"}]}')  # fmt: skip
    changed = update_role_request(7, CreateRole(name="Ops", description="", permissions=[]))
    assert (changed.method, changed.path) == ("PUT", f"{ROLES}/7")
    assert changed.body == b'{"name":"Ops","description":"","permissions":[]}'
    assert delete_role_request(7).describe() == {"method": "DELETE", "path": f"{ROLES}/7"}
    assert delete_role_request(7).body == b""
    for refused in ({"name": ""}, {"name": "a\x1b[2J"}, {"name": "x", "type": "root"},
                    {"name": "x", "permissions": [{"name": ""}]}):  # fmt: skip
        with pytest.raises(ValueError):
            CreateRole.model_validate(refused)


def test_read_create_change_and_delete(sandbox: SandboxProcess) -> None:
    async def job() -> None:
        async with AdminClient(sandbox.url, sandbox.admin_token) as c:
            caps = await c.capabilities()
            assert all(caps.action(a).available for a in (CREATE_ROLE, EDIT_ROLE, DELETE_ROLE))
            names = {r.name for r in (await c.roles()).roles}
            assert {"Admin", "Editor", "Viewer", "Owner", "Member"} <= names
            catalogue = (await c.permissions()).permissions
            assert "CREATE_PROJECT" in {p.name for p in catalogue.root}
            member = await c.get_role(5)
            assert member.type == "project" and member.permissions

            made = await c.create_role(CreateRole(name="Deployer", permissions=[
                RolePermission(name="CREATE_FEATURE")]))  # fmt: skip
            assert (made.name, made.type) == ("Deployer", "custom")
            with pytest.raises(e.Conflict, match="There already exists a role with the name"):
                await c.create_role(CreateRole(name="Admin"))
            with pytest.raises(e.BadRequest, match="don't exist: FLY"):
                await c.create_role(CreateRole(name="N", permissions=[
                    RolePermission(name="FLY")]))  # fmt: skip
            with pytest.raises(e.Forbidden, match="You cannot change built in roles"):
                await c.update_role(1, CreateRole(name="Boss"))
            changed = await c.update_role(made.id, CreateRole(name="Shipper", type="custom"))
            assert changed.name == "Shipper"
            assert [p.name for p in (await c.get_role(made.id)).permissions] == ["CREATE_FEATURE"]
            assert (await c.role_access(4)).projects  # Owner: held in the demo's projects
            held = await _held_custom(c)
            with pytest.raises(e.BadRequest, match=r"Role is in use by users\(1\)"):
                await c.delete_role(held.id)
            assert await c.delete_role(made.id) == 200
            with pytest.raises(e.NotFound):
                await c.get_role(made.id)

    asyncio.run(job())


async def _held_custom(c: AdminClient) -> Role:
    """A custom root role a new user holds."""
    from app.api.models import CreateUser

    role = await c.create_role(CreateRole(name="Held", type="root-custom"))
    await c.create_user(CreateUser(email="held@example.com", rootRole=role.id))
    return role


def test_an_open_source_release_has_no_custom_roles(tmp_path: Path) -> None:
    transport = CountingTransport()

    async def job() -> None:
        with SandboxProcess(tmp_path / "s.sqlite3", "--demo", "--as-version", "8.2") as sb:
            async with AdminClient(sb.url, sb.admin_token, transport=transport) as c:
                caps = await c.capabilities()
                assert caps.operation("roles").available  # listing works everywhere
                for action in (CREATE_ROLE, EDIT_ROLE, DELETE_ROLE):
                    assert caps.action(action).reason == NEEDS_ENTERPRISE_ROLES
                sent = len(transport.to(ROLES))
                for call in (c.create_role(CreateRole(name="X")),
                             c.update_role(6, CreateRole(name="X")), c.delete_role(6)):  # fmt: skip
                    with pytest.raises(e.Unsupported, match="need Unleash Enterprise"):
                        await call
                assert len(transport.to(ROLES)) == sent == 1  # the probe's alone
                with pytest.raises(e.NotFound, match="path you were looking for"):
                    await c.roles()
                roots = (await c.list_users()).rootRoles
                assert [r.name for r in roots] == ["Admin", "Editor", "Viewer"]

    asyncio.run(job())
    assert not [p for m, p in transport.requests if m != "GET" and p.startswith(ROLES)]


def test_the_version_table_says_custom_roles_are_enterprise() -> None:
    from app.registry import ROLES as TOOL

    for release in ("5.12.8", "8.2.0"):
        assert version_cell((TOOL.needs,), release) == "yes"
        assert version_cell((TOOL.needs, CREATE_ROLE.needs), release) == "Enterprise"
