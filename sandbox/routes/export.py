"""The batch export, `POST /api/admin/features-batch/export` (open source since Unleash 4.22;
any admin-side token, as Unleash's permission NONE): what `sandbox.store.export` says."""

from __future__ import annotations

import json

from starlette.responses import Response

from app.api import models as m
from sandbox.routes.answers import ok
from sandbox.routes.endpoint import Area, Call, Endpoint


async def export(call: Call[m.ExportQuery]) -> Response:
    answer = call.store.export(call.body, call.who)
    return Response(json.dumps(answer, separators=(",", ":")).encode(),
                    media_type="application/json")  # fmt: skip


AREA = Area(
    "Export",
    (
        Endpoint("POST", "/api/admin/features-batch/export", export,
                 ok(m.ExportResult, 400, 404, 415), body=m.ExportQuery),
    ),
)  # fmt: skip
