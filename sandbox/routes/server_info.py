"""What the server is: health and UI config."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.responses import Response

from app import __version__
from app.api import models as m
from sandbox.responses import json_response
from sandbox.routes.answers import TOKEN_ERRORS, ok
from sandbox.routes.deps import Admin, PlayedDep

SERVER_NAME = "flagdesk sandbox"

router = APIRouter(tags=["server"])


@router.get("/health", responses=ok(m.Health))
async def health() -> Response:
    return json_response(m.Health(health="GOOD"))


@router.get("/api/admin/ui-config", responses=ok(m.UiConfig, *TOKEN_ERRORS))
async def ui_config(_: Admin, played: PlayedDep) -> Response:
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
                    },
                    "authenticationType": "open-source",
                }
            )
        )
    return json_response(
        m.UiConfig(
            name=SERVER_NAME,
            version=__version__,
            versionInfo=m.VersionInfo(current={"sandbox": __version__}),
            authenticationType="open-source",
        )
    )
