"""Projects: the list, and a project's personal dashboard."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.responses import Response

from app.api import models as m
from sandbox.responses import json_response
from sandbox.routes.answers import TOKEN_ERRORS, errors, ok
from sandbox.routes.deps import Admin, PlayedDep, StoreDep, absent_path
from sandbox.store import Refusal

router = APIRouter(responses=errors(*TOKEN_ERRORS))


@router.get("/api/admin/projects", tags=["projects"], responses=ok(m.ProjectList))
async def list_projects(_: Admin, store: StoreDep) -> Response:
    return json_response(store.list_projects())


@router.get(
    "/api/admin/personal-dashboard/{projectId}",
    tags=["dashboard"],
    responses=ok(m.PersonalDashboardProjectDetails, 404),
)
async def personal_dashboard(
    projectId: str, who: Admin, store: StoreDep, played: PlayedDep
) -> Response:
    if played is not None and not played.dashboard:
        raise absent_path()  # before 6.3
    if played is not None and who.kind == "admin":  # Unleash: no user behind an admin API token
        raise Refusal(500, "UnknownError", "Unexpected error: the request has no user")
    return json_response(store.dashboard(projectId, who))
