"""Segments (open source since Unleash 5): the list, one, creating, replacing and deleting one,
validating a name, which strategies use one, and a strategy's segments, as Unleash 8.2 answers
(Admin or Editor root role for changes: Unleash gives the Editor the segment permissions)."""

from __future__ import annotations

from starlette.responses import Response

from app.api import models as m
from sandbox.responses import json_response
from sandbox.routes.answers import no_body, ok
from sandbox.routes.deps import CHANGERS, require_root
from sandbox.routes.endpoint import PATH_ID, Area, Call, Endpoint
from sandbox.store import Refusal


async def list_segments(call: Call[None]) -> Response:
    return json_response(call.store.list_segments())


async def create_segment(call: Call[m.UpsertSegment]) -> Response:
    require_root(call.store, call.who, CHANGERS, "create segments")
    segment = call.store.create_segment(call.body, call.who)
    response = json_response(segment, 201)
    response.headers["location"] = f"segments/{segment.id}"
    return response


async def validate_segment(call: Call[m.SegmentNameBody]) -> Response:
    call.store.validate_segment_name(call.body.name)
    return Response(status_code=204)


async def get_segment(call: Call[None]) -> Response:
    return json_response(call.store.get_segment(call.value("id", int)))


async def update_segment(call: Call[m.UpsertSegment]) -> Response:
    require_root(call.store, call.who, CHANGERS, "update segments")
    call.store.update_segment(call.value("id", int), call.body, call.who)
    return Response(status_code=204)


async def delete_segment(call: Call[None]) -> Response:
    """204; a segment in use: 409 `ConflictError` naming its strategies, or, playing a
    release, the 409 with no body Unleash answers."""
    require_root(call.store, call.who, CHANGERS, "delete segments")
    try:
        call.store.delete_segment(call.value("id", int), call.who)
    except Refusal as refusal:
        if refusal.status == 409 and call.played is not None:
            return Response(status_code=409)
        raise
    return Response(status_code=204)


async def segment_strategies(call: Call[None]) -> Response:
    return json_response(call.store.segment_strategies(call.value("id", int)))


async def strategy_segments(call: Call[None]) -> Response:
    return json_response(call.store.strategy_segments(call.path("strategyId")))


async def set_strategy_segments(call: Call[m.UpdateFeatureStrategySegments]) -> Response:
    require_root(call.store, call.who, CHANGERS, "change a strategy's segments")
    answer = call.store.set_strategy_segments(call.body, call.who)
    response = json_response(answer, 201)
    response.headers["location"] = f"strategies/{answer.strategyId}"
    return response


SEGMENTS, SEGMENT = "/api/admin/segments", "/api/admin/segments/{id}"

AREA = Area(
    "segments",
    (
        Endpoint("GET", SEGMENTS, list_segments, ok(m.Segments)),
        Endpoint(
            "POST",
            SEGMENTS,
            create_segment,
            ok(m.Segment, 400, 409, 415, status=201),
            body=m.UpsertSegment,
        ),
        Endpoint(
            "POST",
            SEGMENTS + "/validate",
            validate_segment,
            no_body(204, "The name is free", 400, 409, 415),
            body=m.SegmentNameBody,
        ),
        Endpoint("GET", SEGMENTS + "/strategies/{strategyId}", strategy_segments, ok(m.Segments)),
        Endpoint(
            "POST",
            SEGMENTS + "/strategies",
            set_strategy_segments,
            ok(m.FeatureStrategySegments, 400, 415, status=201),
            body=m.UpdateFeatureStrategySegments,
        ),
        Endpoint("GET", SEGMENT, get_segment, ok(m.Segment, 400, 404), params=(PATH_ID,)),
        Endpoint(
            "PUT",
            SEGMENT,
            update_segment,
            no_body(204, "Updated", 400, 404, 409, 415),
            body=m.UpsertSegment,
            params=(PATH_ID,),
        ),
        Endpoint(
            "DELETE",
            SEGMENT,
            delete_segment,
            no_body(204, "Deleted", 400, 404, 409),
            params=(PATH_ID,),
        ),
        Endpoint(
            "GET",
            SEGMENT + "/strategies",
            segment_strategies,
            ok(m.SegmentStrategies, 400, 404),
            params=(PATH_ID,),
        ),
    ),
)
