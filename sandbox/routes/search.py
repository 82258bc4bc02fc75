"""`GET /api/admin/search/features`, as far as flagdesk reads it: a project's archived flags a
page at a time, oldest created first, with `total` (the archive's replacement from Unleash 7.0).
Which filter asks for archived flags depends on the release played (`sandbox.versions`); the
sandbox itself takes both. Without one, the project's live flags are listed."""

from __future__ import annotations

import json
from typing import Any

from starlette.responses import Response

from app.api import models as m
from sandbox.routes.answers import ok
from sandbox.routes.endpoint import Area, Call, Endpoint, Param
from sandbox.store import Refusal


async def search_features(call: Call[None]) -> Response:
    store, played = call.store, call.played
    offset, limit = call.value("offset", int), call.value("limit", int)
    params = dict(call.request.query_params)
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


AREA = Area(
    "search",
    (
        Endpoint(
            "GET",
            "/api/admin/search/features",
            search_features,
            ok(Any, 400),  # 400: offset, limit not 64-bit integers
            params=(
                Param("offset", "query", m.Int64, default=0),
                Param("limit", "query", m.Int64, default=50),
            ),
        ),
    ),
)
