"""Projects: the list, and a project's personal dashboard."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.responses import Response

from sandbox.responses import json_response
from sandbox.routes.deps import Admin, PlayedDep, StoreDep, absent_path
from sandbox.store import Refusal

router = APIRouter()


@router.get("/api/admin/projects", tags=["projects"])
async def list_projects(_: Admin, store: StoreDep) -> Response:
    return json_response(store.list_projects())


@router.get("/api/admin/personal-dashboard/{projectId}", tags=["dashboard"])
async def personal_dashboard(
    projectId: str, who: Admin, store: StoreDep, played: PlayedDep
) -> Response:
    if played is not None and not played.dashboard:
        raise absent_path()  # before 6.3
    if played is not None and who.kind == "admin":  # Unleash: no user behind an admin API token
        raise Refusal(500, "UnknownError", "Unexpected error: the request has no user")
    return json_response(store.dashboard(projectId, who))
