"""Project access (Unleash Pro and Enterprise), served with the groups (left out as open-source
Unleash leaves it out: 404, also for every played release): the read, the add, and setting or
removing a user's or a group's roles in a project, as `sandbox.store.project_access` says.
Any admin-side token reads; changes need the Admin root role or the project's Owner role.
Enterprise's access overview (`GET /api/admin/access/overview`, every user's projects at once)
is served with them, to the Admin root role only."""

from __future__ import annotations

from starlette.responses import Response

from app.api import models as m
from sandbox.responses import json_response
from sandbox.routes.answers import no_body, ok
from sandbox.routes.deps import require_root
from sandbox.routes.endpoint import PATH_ID, Area, Call, Endpoint
from sandbox.store import ADMIN_ROLE


async def project_access(call: Call[None]) -> Response:
    return json_response(call.store.project_access(call.path("projectId")))


async def access_overview(call: Call[None]) -> Response:
    """Every user's access at once (Enterprise): the Admin root role's (Unleash: `ADMIN`)."""
    require_root(call.store, call.who, (ADMIN_ROLE,), "read the access overview")
    return json_response(call.store.access_overview())


async def add_project_access(call: Call[m.AddProjectAccess]) -> Response:
    """200 with no body (as Unleash answers)."""
    call.store.add_project_access(call.path("projectId"), call.body, call.who)
    return Response(status_code=200)


async def set_user_roles(call: Call[m.ProjectRoles]) -> Response:
    call.store.set_project_roles(call.path("projectId"), "user", call.value("id", int),
                                 call.body, call.who)  # fmt: skip
    return Response(status_code=200)


async def remove_user_access(call: Call[None]) -> Response:
    call.store.remove_project_access(call.path("projectId"), "user", call.value("id", int),
                                     call.who)  # fmt: skip
    return Response(status_code=200)


async def set_group_roles(call: Call[m.ProjectRoles]) -> Response:
    call.store.set_project_roles(call.path("projectId"), "group", call.value("id", int),
                                 call.body, call.who)  # fmt: skip
    return Response(status_code=200)


async def remove_group_access(call: Call[None]) -> Response:
    call.store.remove_project_access(call.path("projectId"), "group", call.value("id", int),
                                     call.who)  # fmt: skip
    return Response(status_code=200)


ACCESS = "/api/admin/projects/{projectId}/access"
USER_ROLES = "/api/admin/projects/{projectId}/users/{id}/roles"
GROUP_ROLES = "/api/admin/projects/{projectId}/groups/{id}/roles"
OVERVIEW = "/api/admin/access/overview"

AREA = Area(
    "Project access",
    (
        Endpoint("GET", ACCESS, project_access, ok(m.ProjectAccess, 404)),
        Endpoint("GET", OVERVIEW, access_overview, ok(m.AccessOverview, 403)),
        Endpoint("POST", ACCESS, add_project_access, no_body(200, "Added", 400, 404, 415),
                 body=m.AddProjectAccess),
        Endpoint("PUT", USER_ROLES, set_user_roles, no_body(200, "Set", 400, 404, 415),
                 body=m.ProjectRoles, params=(PATH_ID,)),
        Endpoint("DELETE", USER_ROLES, remove_user_access, no_body(200, "Removed", 400, 404),
                 params=(PATH_ID,)),
        Endpoint("PUT", GROUP_ROLES, set_group_roles, no_body(200, "Set", 400, 404, 415),
                 body=m.ProjectRoles, params=(PATH_ID,)),
        Endpoint("DELETE", GROUP_ROLES, remove_group_access, no_body(200, "Removed", 400, 404),
                 params=(PATH_ID,)),
    ),
)  # fmt: skip
