"""Client metrics: a flag's usage, and bulk batches in (endpoint 7).

The bulk route takes the raw request: it refuses a body with 413 the moment it passes the
limit (never reading it whole first), then validates it with pydantic's JSON parser in one pass,
into plain dicts (`m.BulkMetricsItems`: the fields and constraints of `m.BulkMetrics`).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from pydantic import TypeAdapter, ValidationError
from starlette.responses import Response

from app.api import models as m
from app.api.wire import BULK_METRICS_BODY_LIMIT, accepted_environment
from sandbox.responses import json_response, read_limited, validation_error
from sandbox.routes.answers import TOKEN_ERRORS, errors, no_body, ok
from sandbox.routes.deps import Admin, Client, PlayedDep, StoreDep

router = APIRouter(tags=["metrics"], responses=errors(*TOKEN_ERRORS))

#: a bulk body's fields and constraints (`m.BulkMetrics`), validated into plain dicts
BULK_METRICS_ITEMS: TypeAdapter[m.BulkMetricsItems] = TypeAdapter(m.BulkMetricsItems)


@router.get("/api/admin/client-metrics/features/{name}", responses=ok(m.FeatureUsage))
async def feature_usage(name: str, _: Admin, store: StoreDep) -> Response:
    return json_response(store.feature_usage(name))


@router.get("/api/admin/client-metrics/features/{name}/raw", responses=ok(m.FeatureMetricsRaw, 400))
async def feature_metrics_raw(
    name: str,
    _: Admin,
    store: StoreDep,
    hoursBack: Annotated[int, Query(ge=1, le=24 * 366)] = 1,
) -> Response:
    return json_response(store.feature_metrics_raw(name, hoursBack))


@router.post(
    "/api/client/metrics/bulk",
    status_code=202,
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/BulkMetrics"}}
            },
        }
    },
    response_class=Response,
    responses=no_body(
        202,
        "Accepted, with no body; as on Unleash, metrics it drops are answered 202 too",
        400,
        413,
        415,
    ),
)
async def bulk_metrics(
    request: Request, client: Client, store: StoreDep, played: PlayedDep
) -> Response:
    body = await read_limited(request, BULK_METRICS_BODY_LIMIT)
    try:
        batch = BULK_METRICS_ITEMS.validate_json(body)
    except ValidationError as exc:
        raise validation_error(exc.errors(), "metrics batch") from None
    if played is not None and not all(map(played.takes_application, batch["applications"])):
        return Response(status_code=400)  # Unleash's empty 400 (its log says why)
    # answered 202 as Unleash does, also when some metrics are not stored (`ingest_bulk`)
    store.ingest_bulk(batch, accepted_environment(client.environment))
    return Response(status_code=202)
