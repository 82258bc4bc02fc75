"""`POST /api/admin/events/search`, the event search of Unleash 5.x and 6.x (7.0 removed it):
served only while the sandbox plays one of them (`sandbox.app.create_app`), so that elsewhere
any request, a bad body too, gets the 404 of an unknown path, as on 7.6 and 8.2. What it does:
`sandbox.store.events`."""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse, Response

from app.api import models as m
from sandbox.routes.answers import ok
from sandbox.routes.endpoint import Area, Call, Endpoint
from sandbox.store.events import FILTER_COLUMNS, EventQuery


async def search_events_body(call: Call[m.SearchEventsSchema]) -> Response:
    body = call.body
    named = {"type": body.type, "project": body.project, "feature": body.feature}
    equal: dict[str, tuple[str, ...]] = {
        FILTER_COLUMNS[k]: (v,) for k, v in named.items() if v is not None
    }
    filters = EventQuery(equal=equal, text=body.query or "")
    return JSONResponse(
        call.store.search_events_body(filters, offset=body.offset, limit=body.limit)
    )


AREA = Area(
    "events",
    (
        Endpoint("POST", "/api/admin/events/search", search_events_body, ok(Any, 400),
                 body=m.SearchEventsSchema),
    ),
)  # fmt: skip
