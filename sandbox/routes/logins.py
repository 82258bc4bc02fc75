"""Login history (Unleash Enterprise 4.22+; left out of the app when it plays an open-source
release, which answers 404), as `sandbox.store.logins` keeps it: `GET /api/admin/logins`, every
event of the last 14 days, newest first, as JSON `{events}` or, asked with `Accept: text/csv`,
as CSV. Reading it needs the Admin root role (Unleash: `ADMIN` or `READ_LOGS`)."""

from __future__ import annotations

import json
from typing import Any

from starlette.responses import Response

from app.api import models as m
from sandbox.responses import json_response
from sandbox.routes.answers import ok
from sandbox.routes.deps import require_root
from sandbox.routes.endpoint import Area, Call, Endpoint
from sandbox.routes.instance import csv_cell
from sandbox.store import ADMIN_ROLE, to_wire_time
from sandbox.store.logins import CSV_FIELDS


def wants_csv(accept: str) -> bool:
    """Whether an `Accept` header asks for CSV before JSON (`text/csv` named, and ranked above
    `application/json`, or alike and named first)."""
    ranks: dict[str, float] = {}
    order: list[str] = []
    for part in accept.lower().split(","):
        kind, *params = (p.strip() for p in part.split(";"))
        quality = 1.0
        for param in params:
            if param.startswith("q="):
                try:
                    quality = float(param[2:])
                except ValueError:
                    quality = 0.0
        ranks[kind] = max(quality, ranks.get(kind, 0.0))
        order.append(kind)
    csv_rank, json_rank = ranks.get("text/csv", 0.0), ranks.get("application/json", 0.0)
    if csv_rank != json_rank:
        return csv_rank > json_rank
    return csv_rank > 0 and order.index("text/csv") < order.index("application/json")


def logins_csv_text(events: m.LoginEvents) -> str:
    """The events as CSV: a header row of the quoted field names, then a row per event
    (json2csv's way, as the statistics' CSV: text quoted, booleans bare, nothing for null)."""
    lines = [",".join(csv_cell(name) for name in CSV_FIELDS)]
    for event in events.events:
        fields: dict[str, Any] = json.loads(event.model_dump_json())
        if event.created_at is not None:  # as the API writes times: milliseconds, Z
            fields["created_at"] = to_wire_time(int(event.created_at.timestamp() * 1000))
        lines.append(",".join(csv_cell(fields.get(name)) for name in CSV_FIELDS))
    return "\n".join(lines)


async def list_logins(call: Call[None]) -> Response:
    """200 `{events}`, or `text/csv` when the caller's `Accept` asks for it."""
    require_root(call.store, call.who, (ADMIN_ROLE,), "read the login history")
    events = call.store.login_events()
    if wants_csv(call.request.headers.get("accept", "")):
        return Response(
            logins_csv_text(events).encode(),
            media_type="text/csv; charset=utf-8",
            headers={"Content-Disposition": 'attachment; filename="login-history.csv"'},
        )
    return json_response(events)


LOGINS_PATH = "/api/admin/logins"

AREA = Area(
    "Login history",
    (Endpoint("GET", LOGINS_PATH, list_logins, ok(m.LoginEvents)),),
)
