"""Client metrics: a flag's usage, and bulk batches in (endpoint 7).

The bulk route takes the raw request: it refuses a body with 413 the moment it passes the
limit (never reading it whole first), then validates it with pydantic's JSON parser in one pass,
into plain dicts (`m.BulkMetricsItems`: the fields and constraints of `m.BulkMetrics`).
"""

from __future__ import annotations

import math
import re
from functools import cache
from typing import Any

from pydantic import TypeAdapter, ValidationError
from starlette.responses import Response

from app.api import models as m
from app.api.wire import BULK_METRICS_BODY_LIMIT, accepted_environment
from sandbox.responses import json_response, read_limited, validation_error
from sandbox.routes.answers import no_body, ok
from sandbox.routes.endpoint import Area, Call, Endpoint, Param
from sandbox.versions import Played


@cache
def bulk_metrics_items() -> TypeAdapter[m.BulkMetricsItems]:
    """A bulk body's fields and constraints (`m.BulkMetrics`), validated into plain dicts.
    Built for the first bulk body, not as the sandbox boots: the first validator a process
    builds pays for pydantic's schema machinery too, and the window waits for that boot."""
    return TypeAdapter(m.BulkMetricsItems)


async def feature_usage(call: Call[None]) -> Response:
    return json_response(call.store.feature_usage(call.path("name")))


#: the hours the raw read takes (Unleash 8.2's HOURS_BACK_MIN and HOURS_BACK_MAX, without the
#: `extendedUsageMetrics` flag, off by default), and what it reads for any other value
HOURS_BACK_MIN, HOURS_BACK_MAX, HOURS_BACK_DEFAULT = 1, 48, 24
#: what JavaScript's Number() reads as a number (after trimming), besides "" (0)
_JS_DECIMAL = re.compile(r"[+-]?(?:Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)")
_JS_RADIX = re.compile(r"0(?:[xX][0-9a-fA-F]+|[oO][0-7]+|[bB][01]+)")


def js_number(text: str) -> float:
    """`Number(text)` as JavaScript reads a string: trimmed, "" is 0, decimal with an optional
    sign, fraction and exponent, "Infinity", or 0x/0o/0b integers; NaN for anything else."""
    text = text.strip(" \t\n\r\v\f\u00a0\ufeff\u2028\u2029")
    if text == "":
        return 0.0
    if _JS_DECIMAL.fullmatch(text):
        return float(text.replace("Infinity", "inf"))
    if _JS_RADIX.fullmatch(text):
        return float(int(text[2:], {"x": 16, "o": 8, "b": 2}[text[1].lower()]))
    return math.nan


def hours_back(values: list[str]) -> float:
    """The hours the raw read covers for the `hoursBack` values of a query, as Unleash 8.2's
    `parseHoursBackQueryParam`: one value that `Number()` reads as 1 to 48 (1.5 and "0x10"
    too); else (none, two, 0, 49, "abc") 24. Never an error."""
    if len(values) != 1:
        return HOURS_BACK_DEFAULT
    n = js_number(values[0])
    return n if HOURS_BACK_MIN <= n <= HOURS_BACK_MAX else HOURS_BACK_DEFAULT


async def feature_metrics_raw(call: Call[None]) -> Response:
    back = hours_back(call.request.query_params.getlist("hoursBack"))
    return json_response(call.store.feature_metrics_raw(call.path("name"), back))


async def bulk_metrics(call: Call[None]) -> Response:
    store, played = call.store, call.played
    body = await read_limited(call.request, BULK_METRICS_BODY_LIMIT)
    try:
        batch = bulk_metrics_items().validate_json(body)
    except ValidationError as exc:
        raise validation_error(exc.errors(), "metrics batch") from None
    nulls, missing = application_problems(batch["applications"], played)
    if nulls:  # Unleash's request schema refuses these before anything is stored
        raise validation_error(nulls, "metrics batch")
    if missing:
        lacking = {e["loc"][1] for e in missing}
        batch["applications"] = [a for k, a in enumerate(batch["applications"]) if k not in lacking]
    # answered 202 as Unleash does, also when some metrics are not stored (`ingest_bulk`)
    store.ingest_bulk(
        batch,
        accepted_environment(call.who.environment),
        drop_unknown_flags=played is None or played.drops_unknown_flag_metrics,
    )
    if missing:  # Unleash stores the rest of the body, then answers 400
        if played is not None:
            return Response(status_code=400)  # the release's empty 400 (its log says why)
        raise validation_error(missing, "metrics batch")
    return Response(status_code=202)


def application_problems(
    applications: list[dict[str, Any]], played: Played | None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """What Unleash refuses in a bulk body's application items, as pydantic-shaped errors:
    (`started` or `interval` given as null, which its request schema refuses with 400 before
    anything is stored; the fields its registration needs and an item lacks: `started` and
    `interval`, and on 5.12 `strategies`). An item lacking them makes Unleash 8.2 answer 400
    (with an empty body: the sandbox's when it plays a release; else its error body) *after*
    it has stored the body's metrics and its other application items
    (`ClientMetricsController.bulkMetrics` waits for every registration, then answers 400 if
    one failed): the sandbox does the same. Not asked
    of an item without an `appName` (8.2 skips it) or of a frontend SDK's (`sdkType`
    "frontend" with an `sdkVersion` string, which 8.2 registers without them; 5.12 does not)."""
    needed = ["started", "interval"]
    if played is not None and played.bulk_applications_need_strategies:
        needed.append("strategies")
    nulls: list[dict[str, Any]] = []
    missing: list[dict[str, Any]] = []
    for k, app in enumerate(applications):
        for name in ("started", "interval"):
            if name in app and app[name] is None:
                nulls.append({"loc": ("applications", k, name), "type": "null",
                              "msg": "must not be null"})  # fmt: skip
        if not app.get("appName"):
            continue
        frontend = app.get("sdkType") == "frontend" and app.get("sdkVersion") is not None
        if frontend and (played is None or played.frontend_applications_need_no_start):
            continue
        missing += [{"loc": ("applications", k, name), "type": "missing"}
                    for name in needed if name not in app]  # fmt: skip
    return nulls, missing


#: read by the handler as Unleash 8.2 reads it (`hours_back`): any string, never an error
HOURS_BACK = Param("hoursBack", "query", str, default=None,
                   description="hours back, the current one included: 1 to 48; any other value "
                   "reads 24, as Unleash 8.2")  # fmt: skip

AREA = Area(
    "metrics",
    (
        Endpoint("GET", "/api/admin/client-metrics/features/{name}", feature_usage,
                 ok(m.FeatureUsage)),
        Endpoint("GET", "/api/admin/client-metrics/features/{name}/raw", feature_metrics_raw,
                 ok(m.FeatureMetricsRaw), params=(HOURS_BACK,)),
        Endpoint("POST", "/api/client/metrics/bulk", bulk_metrics,
                 no_body(202, "Accepted, with no body; as on Unleash, metrics it drops are "
                         "answered 202 too", 400, 413, 415),
                 side="client", reads_body=m.BulkMetrics),
    ),
)  # fmt: skip
