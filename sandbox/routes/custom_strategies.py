"""Strategy definitions: the built-in ones and custom ones, as Unleash 8.2 answers (Admin or
Editor root role for changes)."""

from __future__ import annotations

from starlette.responses import Response

from app.api import models as m
from sandbox.responses import json_response
from sandbox.routes.answers import no_body, ok
from sandbox.routes.deps import CHANGERS, require_root
from sandbox.routes.endpoint import Area, Call, Endpoint


async def list_strategies(call: Call[None]) -> Response:
    return json_response(call.store.list_strategy_definitions())


async def create_strategy(call: Call[m.CreateStrategy]) -> Response:
    require_root(call.store, call.who, CHANGERS, "create strategies")
    made = call.store.create_strategy_definition(call.body, call.who)
    response = json_response(made, 201)
    response.headers["location"] = f"strategies/{made.name}"
    return response


async def get_strategy(call: Call[None]) -> Response:
    return json_response(call.store.get_strategy_definition(call.path("name")))


async def update_strategy(call: Call[m.UpdateStrategy]) -> Response:
    require_root(call.store, call.who, CHANGERS, "update strategies")
    call.store.update_strategy_definition(call.path("name"), call.body, call.who)
    return Response(status_code=200)


async def delete_strategy(call: Call[None]) -> Response:
    require_root(call.store, call.who, CHANGERS, "delete strategies")
    call.store.delete_strategy_definition(call.path("name"), call.who)
    return Response(status_code=200)


async def deprecate_strategy(call: Call[None]) -> Response:
    require_root(call.store, call.who, CHANGERS, "update strategies")
    call.store.deprecate_strategy(call.path("strategyName"), call.who)
    return Response(status_code=200)


async def reactivate_strategy(call: Call[None]) -> Response:
    require_root(call.store, call.who, CHANGERS, "update strategies")
    call.store.deprecate_strategy(call.path("strategyName"), call.who, deprecated=False)
    return Response(status_code=200)


STRATEGIES, STRATEGY = "/api/admin/strategies", "/api/admin/strategies/{name}"

AREA = Area(
    "strategies",
    (
        Endpoint("GET", STRATEGIES, list_strategies, ok(m.StrategyDefinitions)),
        Endpoint(
            "POST",
            STRATEGIES,
            create_strategy,
            ok(m.StrategyDefinition, 400, 409, 415, status=201),
            body=m.CreateStrategy,
        ),
        Endpoint("GET", STRATEGY, get_strategy, ok(m.StrategyDefinition, 404)),
        Endpoint(
            "PUT",
            STRATEGY,
            update_strategy,
            no_body(200, "Updated", 400, 404, 415),
            body=m.UpdateStrategy,
        ),
        Endpoint("DELETE", STRATEGY, delete_strategy, no_body(200, "Deleted", 400, 404)),
        Endpoint(
            "POST",
            STRATEGIES + "/{strategyName}/deprecate",
            deprecate_strategy,
            no_body(200, "Deprecated", 404),
        ),
        Endpoint(
            "POST",
            STRATEGIES + "/{strategyName}/reactivate",
            reactivate_strategy,
            no_body(200, "Reactivated", 404),
        ),
    ),
)
