"""Projects: the list, and a project's personal dashboard."""

from __future__ import annotations

from starlette.responses import Response

from app.api import models as m
from sandbox.responses import json_response
from sandbox.routes.answers import ok
from sandbox.routes.deps import absent_path
from sandbox.routes.endpoint import Area, Call, Endpoint
from sandbox.store import Refusal


async def list_projects(call: Call[None]) -> Response:
    return json_response(call.store.list_projects())


async def personal_dashboard(call: Call[None]) -> Response:
    played, who = call.played, call.who
    if played is not None and not played.dashboard:
        raise absent_path()  # before 6.3
    if played is not None and who.kind == "admin":  # Unleash: no user behind an admin API token
        raise Refusal(500, "UnknownError", "Unexpected error: the request has no user")
    return json_response(call.store.dashboard(call.path("projectId"), who))


AREA = Area(
    None,
    (
        Endpoint("GET", "/api/admin/projects", list_projects, ok(m.ProjectList), tag="projects"),
        Endpoint("GET", "/api/admin/personal-dashboard/{projectId}", personal_dashboard,
                 ok(m.PersonalDashboardProjectDetails, 404), tag="dashboard"),
    ),
)  # fmt: skip
