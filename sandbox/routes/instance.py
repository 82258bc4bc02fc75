"""The instance's statistics (and their CSV), maintenance mode and the frontend API's CORS
origins (open source, every release),, as `sandbox.store.instance` keeps them (banners:
`sandbox.routes.banners`). Reading is any admin-API caller's; a change needs the Admin root
role (Unleash: `ADMIN`). While maintenance is on, the writes are refused before
any handler (`sandbox.routes.endpoint`), but the maintenance switch."""

from __future__ import annotations

import json
from typing import Any

from starlette.responses import Response

from app import __version__
from app.api import models as m
from sandbox.responses import json_response
from sandbox.routes.answers import Answer, no_body, ok
from sandbox.routes.deps import absent_path, require_root
from sandbox.routes.endpoint import Area, Call, Endpoint
from sandbox.store import ADMIN_ROLE


def _statistics(call: Call[None]) -> m.InstanceStatistics:
    played = call.played
    stats = call.store.statistics(
        None if played is None else played.statistics_fields,
        tokens_by_type=played is None or played.counts_tokens_in_statistics,
    )
    stats.versionOSS = __version__ if played is None else played.release
    return stats


async def statistics(call: Call[None]) -> Response:
    return json_response(_statistics(call))


def csv_cell(value: Any) -> str:
    """A value as Unleash's json2csv writes it: text quoted (quotes doubled), numbers and
    booleans bare, objects and lists as their JSON text quoted, nothing for null."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
    return '"' + text.replace('"', '""') + '"'


def statistics_csv_text(stats: m.InstanceStatistics) -> str:
    """The statistics as `…/statistics/csv` answers: a header row of the quoted field names and
    one row of values (no line break after it)."""
    fields: dict[str, Any] = json.loads(stats.model_dump_json(exclude_unset=True))
    header = ",".join(csv_cell(name) for name in fields)
    return header + "\n" + ",".join(csv_cell(value) for value in fields.values())


async def statistics_csv(call: Call[None]) -> Response:
    """200 `text/csv; charset=utf-8`, an attachment named
    `unleash-<instanceId>-<epoch ms>.csv` (as Unleash)."""
    stats = _statistics(call)
    name = f"unleash-{stats.instanceId}-{call.store.clock()}.csv"
    return Response(
        statistics_csv_text(stats).encode(),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


async def get_maintenance(call: Call[None]) -> Response:
    return json_response(call.store.maintenance())


async def set_maintenance(call: Call[m.ToggleMaintenance]) -> Response:
    require_root(call.store, call.who, (ADMIN_ROLE,), "change maintenance mode")
    call.store.set_maintenance(call.body.enabled, call.who)
    return Response(status_code=204)


async def set_cors(call: Call[m.SetCors]) -> Response:
    """6.x on (404 playing 5.x)."""
    if call.played is not None and not call.played.cors_route:
        raise absent_path()
    require_root(call.store, call.who, (ADMIN_ROLE,), "change the CORS origins")
    call.store.set_frontend_origins(call.body.frontendApiOrigins, call.who)
    return Response(status_code=204)


async def set_ui_config(call: Call[m.SetUiConfig]) -> Response:
    """5.x's way to the CORS origins (6.x too; 404 from 7.0, and unplayed as 8.2)."""
    if call.played is None or not call.played.ui_config_sets_origins:
        raise absent_path()
    require_root(call.store, call.who, (ADMIN_ROLE,), "change the CORS origins")
    settings = call.body.frontendSettings
    call.store.set_frontend_origins(None if settings is None else settings.frontendApiOrigins,
                                    call.who)  # fmt: skip
    return Response(status_code=204)


STATS = "/api/admin/instance-admin/statistics"
MAINTENANCE = "/api/admin/maintenance"
CSV = {200: Answer("The statistics as CSV: a header row and one row of values", None,
                   "text/csv", {"type": "string"})}  # fmt: skip

AREA = Area(
    "Instance",
    (
        Endpoint("GET", STATS, statistics, ok(m.InstanceStatistics)),
        Endpoint("GET", STATS + "/csv", statistics_csv, CSV),
        Endpoint("GET", MAINTENANCE, get_maintenance, ok(m.Maintenance)),
        Endpoint("POST", MAINTENANCE, set_maintenance, no_body(204, "Switched", 400, 415),
                 body=m.ToggleMaintenance),
        Endpoint("POST", "/api/admin/ui-config/cors", set_cors,
                 no_body(204, "Set", 400, 404, 415), body=m.SetCors),
        Endpoint("POST", "/api/admin/ui-config", set_ui_config,
                 no_body(204, "Set", 400, 404, 415), body=m.SetUiConfig),
    ),
)  # fmt: skip
