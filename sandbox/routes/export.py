"""The batch export, `POST /api/admin/features-batch/export` (open source since Unleash 4.22;
any admin-side token, as Unleash's permission NONE): what `sandbox.store.export` says."""

from __future__ import annotations

from starlette.responses import Response

from app.api import models as m
from sandbox.responses import data_response
from sandbox.routes.answers import ok
from sandbox.routes.endpoint import Area, Call, Endpoint


async def export(call: Call[m.ExportQuery]) -> Response:
    return data_response(call.store.export(call.body, call.who))


AREA = Area(
    "Export",
    (
        Endpoint("POST", "/api/admin/features-batch/export", export,
                 ok(m.ExportResult, 400, 404, 415), body=m.ExportQuery),
    ),
)  # fmt: skip
