"""The event log's reads (issue 38), as each played release answers them
(`sandbox.store.events` says what each does): the newest events, a flag's events, the event
search and who made events (5.x's and 6.x's `POST` search: `sandbox.routes.event_search_body`).
Any admin token or user reads them (Unleash's permission NONE on the search; the sandbox serves
the others alike)."""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse, Response

from sandbox.routes.answers import ok
from sandbox.routes.deps import absent_path
from sandbox.routes.endpoint import Area, Call, Endpoint
from sandbox.store.events import EventQuery

#: `GET /api/admin/events`: the newest events given, of all (every release) and of a project
#: when asked (Unleash 8.2 unplayed: 50)
LATEST, PROJECT_LATEST = 100, 50


def _groups(call: Call[None]) -> bool:
    return call.played is None or call.played.event_groups


async def latest_events(call: Call[None]) -> Response:
    project = call.request.query_params.get("project")
    played = call.played
    count = LATEST if project is None else (played.project_events if played else PROJECT_LATEST)
    return JSONResponse(call.store.latest_events(project, count, groups=_groups(call)))


async def feature_events(call: Call[None]) -> Response:
    return JSONResponse(call.store.feature_events(call.path("featureName"), groups=_groups(call)))


async def search_events(call: Call[None]) -> Response:
    played = call.played
    if played is not None and not played.event_search:
        raise absent_path()  # before 6.0
    by_id = played is None or played.event_search_by_id
    query = EventQuery.of(dict(call.request.query_params), by_id=by_id)
    body = call.store.search_events(query, groups=_groups(call))
    return Response(body.encode(), media_type="application/json")


async def event_creators(call: Call[None]) -> Response:
    if call.played is not None and not call.played.event_creators:
        raise absent_path()  # before 6.0
    return JSONResponse(call.store.event_creators())


AREA = Area(
    "events",
    (
        Endpoint("GET", "/api/admin/events", latest_events, ok(Any)),
        Endpoint("GET", "/api/admin/events/{featureName}", feature_events, ok(Any)),
        # 400: a filter of the wrong form; 404: not on 5.x
        Endpoint("GET", "/api/admin/search/events", search_events, ok(Any, 400, 404)),
        Endpoint("GET", "/api/admin/event-creators", event_creators, ok(Any, 404)),
    ),
)
