"""What the server is: health and UI config (with, as Unleash, whether it is in maintenance
and the frontend API's CORS origins: `sandbox.store.instance`)."""

from __future__ import annotations

from starlette.responses import Response

from app import __version__
from app.api import models as m
from sandbox.responses import json_response
from sandbox.routes.answers import ok
from sandbox.routes.endpoint import Area, Call, Endpoint

SERVER_NAME = "flagdesk sandbox"


async def health(call: Call[None]) -> Response:
    return json_response(m.Health(health="GOOD"))


async def ui_config(call: Call[None]) -> Response:
    played = call.played
    if played is not None:  # as open-source Unleash says it
        return json_response(
            m.UiConfig.model_validate(
                {
                    "version": played.release,
                    "environment": "Open Source",
                    "versionInfo": {
                        "current": {"oss": played.release, "enterprise": ""},
                        "latest": {},
                        "isLatest": True,
                        "instanceId": call.store.instance_id(),
                    },
                    "authenticationType": "open-source",
                    "maintenanceMode": call.store.in_maintenance(),
                    "frontendApiOrigins": call.store.frontend_origins(),
                }
            )
        )
    return json_response(
        m.UiConfig(
            name=SERVER_NAME,
            version=__version__,
            versionInfo=m.VersionInfo(
                current={"sandbox": __version__}, instanceId=call.store.instance_id()
            ),
            authenticationType="open-source",
            maintenanceMode=call.store.in_maintenance(),
            frontendApiOrigins=call.store.frontend_origins(),
        )
    )


AREA = Area(
    "server",
    (
        Endpoint("GET", "/health", health, ok(m.Health), side="open"),
        Endpoint("GET", "/api/admin/ui-config", ui_config, ok(m.UiConfig)),
    ),
)
