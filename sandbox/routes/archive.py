"""The archive: a project's archived flags (endpoint 3, deprecated in the spec), streamed."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.responses import Response

from sandbox.responses import streamed_json
from sandbox.routes.deps import Admin, StoreDep

router = APIRouter(tags=["archive"])


@router.get("/api/admin/archive/features/{projectId}", deprecated=True)
async def archived_features(projectId: str, _: Admin, store: StoreDep) -> Response:
    return await streamed_json(store, lambda reading: reading.archived_features(projectId))
