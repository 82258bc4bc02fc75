"""Roles and permissions (left out of the app when it plays an open-source release, which has
none of these routes: 404), as Unleash Enterprise answers them: see `sandbox.store.roles`.
Reading is any admin-API caller's; creating, changing and deleting a role need the Admin root
role (Unleash's UI: `ADMIN`)."""

from __future__ import annotations

from starlette.responses import Response

from app.api import models as m
from sandbox.responses import json_response
from sandbox.routes.answers import no_body, ok
from sandbox.routes.deps import require_root
from sandbox.routes.endpoint import PATH_ID, Area, Call, Endpoint, Param
from sandbox.store import ADMIN_ROLE


async def list_roles(call: Call[None]) -> Response:
    return json_response(call.store.list_roles())


async def get_role(call: Call[None]) -> Response:
    return json_response(call.store.get_role(call.value("id", int)))


async def create_role(call: Call[m.CreateRole]) -> Response:
    """200 (not 201) with `{version, roles: <the role>}`, as Unleash answers."""
    require_root(call.store, call.who, (ADMIN_ROLE,), "create roles")
    return json_response(call.store.create_role(call.body, call.who))


async def validate_role(call: Call[m.CreateRole]) -> Response:
    require_root(call.store, call.who, (ADMIN_ROLE,), "create roles")
    call.store.validate_role(call.body)
    return Response(status_code=200)


async def update_role(call: Call[m.CreateRole]) -> Response:
    require_root(call.store, call.who, (ADMIN_ROLE,), "update roles")
    return json_response(call.store.update_role(call.value("id", int), call.body, call.who))


async def delete_role(call: Call[None]) -> Response:
    require_root(call.store, call.who, (ADMIN_ROLE,), "delete roles")
    call.store.delete_role(call.value("id", int), call.who)
    return Response(status_code=200)


async def permissions(call: Call[None]) -> Response:
    return json_response(call.store.permission_catalogue())


async def role_access(call: Call[None]) -> Response:
    return json_response(call.store.role_access(call.value("roleId", int)))


ROLES, ROLE = "/api/admin/roles", "/api/admin/roles/{id}"
ROLE_ID = Param("roleId", "path", PATH_ID.type)

AREA = Area(
    "Roles",
    (
        Endpoint("GET", ROLES, list_roles, ok(m.RoleList)),
        Endpoint("POST", ROLES, create_role, ok(m.RoleAnswer, 400, 409, 415),
                 body=m.CreateRole),
        Endpoint("POST", ROLES + "/validate", validate_role,
                 no_body(200, "Valid", 400, 409, 415), body=m.CreateRole),
        Endpoint("GET", ROLE, get_role, ok(m.RoleWithPermissions, 400, 404), params=(PATH_ID,)),
        Endpoint("PUT", ROLE, update_role, ok(m.RoleAnswer, 400, 404, 409, 415),
                 body=m.CreateRole, params=(PATH_ID,)),
        Endpoint("DELETE", ROLE, delete_role, no_body(200, "Deleted", 400, 404),
                 params=(PATH_ID,)),
        Endpoint("GET", "/api/admin/permissions", permissions, ok(m.AdminPermissions)),
        Endpoint("GET", "/api/admin/projects/roles/{roleId}/access", role_access,
                 ok(m.ProjectRoleUsages, 400), params=(ROLE_ID,)),
    ),
)  # fmt: skip
