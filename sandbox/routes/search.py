"""`GET /api/admin/search/features`, as far as flagdesk reads it: a project's archived flags a
page at a time, oldest created first, with `total` (the archive's replacement from Unleash 7.0).
Which filter asks for archived flags depends on the release played (`sandbox.versions`); the
sandbox itself takes both. Without one, the project's live flags are listed."""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from sandbox.routes.answers import TOKEN_ERRORS, errors
from sandbox.routes.deps import Admin, PlayedDep, StoreDep
from sandbox.store import Refusal

router = APIRouter(tags=["search"], responses=errors(*TOKEN_ERRORS))


@router.get("/api/admin/search/features", responses=errors(400))  # 400: offset, limit not ints
async def search_features(
    request: Request, _: Admin, store: StoreDep, played: PlayedDep, offset: int = 0, limit: int = 50
) -> Response:
    params = dict(request.query_params)
    project = params.get("project", "").removeprefix("IS:") or "default"
    if played is not None:
        archived = played.archived_filter(params)
    else:
        archived = params.get("archived") == "IS:true" or params.get("lifecycle") == "IS:archived"
    items: list[dict[str, Any]]
    if archived:
        body = json.loads(b"".join(store.archived_features(project)))
        items = sorted(body["features"], key=lambda f: (f["createdAt"], f["name"]))
    else:
        try:
            live = store.project_features(project).features
        except Refusal:  # an unknown project: nothing found
            live = []
        items = [f.model_dump(mode="json", exclude_unset=True) for f in live]
    page = items[offset : offset + limit]
    content = json.dumps({"features": page, "total": len(items)}).encode()
    return Response(content, media_type="application/json")
