"""A flag's configuration per environment (issue 37, slice 1), with Unleash 8.2's paths: the
environments and a project's, a flag's whole configuration and its metadata, on and off per
environment, strategies (the list, one, its update, patch, deletion and their order) and the
flag's variants per environment. Reading takes any admin token; a change needs the Admin or
Editor root role, as the flags' other changes here (`sandbox.routes.features`; the POST of a
strategy is served there). All of it is open source: served when the sandbox plays a release
too."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from app.api import models as m
from sandbox.responses import json_response
from sandbox.routes.answers import no_body, ok
from sandbox.routes.deps import require_root
from sandbox.routes.endpoint import Area, Call, Endpoint
from sandbox.store import ADMIN_ROLE, EDITOR_ROLE, Refusal

WRITERS = (ADMIN_ROLE, EDITOR_ROLE)


def _where(call: Call[Any]) -> tuple[str, str, str]:
    return call.path("project"), call.path("feature"), call.path("environment")


async def environments(call: Call[None]) -> Response:
    return json_response(call.store.environments())


async def environment(call: Call[None]) -> Response:
    return json_response(call.store.environment(call.path("name")))


async def project_environments(call: Call[None]) -> Response:
    return json_response(call.store.project_environments(call.path("projectId")))


async def add_project_environment(call: Call[m.ProjectEnvironment]) -> Response:
    require_root(call.store, call.who, WRITERS, "change a project's environments")
    call.store.add_project_environment(call.path("project"), call.body.environment, call.who)
    return Response(status_code=200)


async def remove_project_environment(call: Call[None]) -> Response:
    require_root(call.store, call.who, WRITERS, "change a project's environments")
    project, environment = call.path("project"), call.path("environment")
    call.store.remove_project_environment(project, environment, call.who)
    return Response(status_code=200)


async def feature(call: Call[None]) -> Response:
    with_variants = call.request.query_params.get("variantEnvironments") == "true"
    project, name = call.path("project"), call.path("name")
    return json_response(
        call.store.feature_configuration(project, name, with_variants=with_variants)
    )


async def update_feature(call: Call[m.UpdateFeature]) -> Response:
    require_root(call.store, call.who, WRITERS, "change flags")
    project, name = call.path("project"), call.path("name")
    return json_response(call.store.update_feature(project, name, call.body, call.who))


async def patch_feature(call: Call[m.Patches]) -> Response:
    require_root(call.store, call.who, WRITERS, "change flags")
    project, name = call.path("project"), call.path("name")
    return json_response(call.store.patch_feature(project, name, call.body.root, call.who))


async def stale_features(call: Call[m.BatchStale]) -> Response:
    require_root(call.store, call.who, WRITERS, "change flags")
    body = call.body
    call.store.stale_features(call.path("project"), body.features, body.stale, call.who)
    return Response(status_code=202)


async def feature_environment(call: Call[None]) -> Response:
    return json_response(call.store.feature_environment(*_where(call)))


async def turn_on(call: Call[None]) -> Response:
    require_root(call.store, call.who, WRITERS, "turn flags on and off")
    call.store.set_enabled(*_where(call), True, call.who)
    return Response(status_code=200)


async def turn_off(call: Call[None]) -> Response:
    require_root(call.store, call.who, WRITERS, "turn flags on and off")
    call.store.set_enabled(*_where(call), False, call.who)
    return Response(status_code=200)


async def strategies(call: Call[None]) -> Response:
    return json_response(call.store.feature_strategies(*_where(call)))


def _belonging(call: Call[Any]) -> str:
    """The strategy's id, 403 when it is another flag's or project's (Unleash answers that 403
    with no body; the sandbox says why)."""
    project, feature_name, _ = _where(call)
    strategy_id = call.path("strategyId")
    if not call.store.strategy_belongs(project, feature_name, strategy_id):
        raise Refusal(403, "NoAccessError", f"The strategy {strategy_id} is not one of flag "
                      f"{feature_name} in project {project}")  # fmt: skip
    return strategy_id


async def strategy(call: Call[None]) -> Response:
    strategy_id = _belonging(call)
    return json_response(call.store.feature_strategy(*_where(call), strategy_id))


async def update_strategy(call: Call[m.UpdateFeatureStrategy]) -> Response:
    require_root(call.store, call.who, WRITERS, "change strategies")
    strategy_id = call.path("strategyId")
    return json_response(
        call.store.update_strategy(*_where(call), strategy_id, call.body, call.who)
    )


async def patch_strategy(call: Call[m.Patches]) -> Response:
    require_root(call.store, call.who, WRITERS, "change strategies")
    strategy_id = _belonging(call)
    return json_response(
        call.store.patch_strategy(*_where(call), strategy_id, call.body.root, call.who)
    )


async def delete_strategy(call: Call[None]) -> Response:
    require_root(call.store, call.who, WRITERS, "change strategies")
    call.store.delete_strategy(*_where(call), call.path("strategyId"), call.who)
    return Response(status_code=200)


async def set_strategy_order(call: Call[m.StrategySortOrders]) -> Response:
    require_root(call.store, call.who, WRITERS, "change strategies")
    call.store.set_strategy_order(*_where(call), call.body.root, call.who)
    return Response(status_code=200)


async def variants(call: Call[None]) -> Response:
    return json_response(call.store.feature_variants(*_where(call)))


def _legacy_only(call: Call[Any]) -> bool:
    """Whether variants per environment are refused to a flag with none (`sandbox.versions`)."""
    return call.played is None or call.played.refuses_new_environment_variants


async def put_variants(call: Call[m.VariantsBody]) -> Response:
    require_root(call.store, call.who, WRITERS, "change variants")
    return json_response(call.store.put_variants(
        *_where(call), call.body.root, call.who, legacy_only=_legacy_only(call)))  # fmt: skip


async def patch_variants(call: Call[m.Patches]) -> Response:
    require_root(call.store, call.who, WRITERS, "change variants")
    return json_response(call.store.patch_variants(
        *_where(call), call.body.root, call.who, legacy_only=_legacy_only(call)))  # fmt: skip


ENVIRONMENTS = "/api/admin/environments"
PROJECT = "/api/admin/projects/{project}"
FLAG = PROJECT + "/features/{name}"
FLAG_ENV = PROJECT + "/features/{feature}/environments/{environment}"
STRATEGIES = FLAG_ENV + "/strategies"
STRATEGY = STRATEGIES + "/{strategyId}"

AREA = Area(
    "flag configuration",
    (
        Endpoint("GET", ENVIRONMENTS, environments, ok(m.Environments)),
        Endpoint("GET", ENVIRONMENTS + "/{name}", environment, ok(m.Environment, 404)),
        Endpoint("GET", ENVIRONMENTS + "/project/{projectId}", project_environments,
                 ok(m.EnvironmentsProject)),
        Endpoint("POST", PROJECT + "/environments", add_project_environment,
                 no_body(200, "Added", 400, 404, 409, 415), body=m.ProjectEnvironment),
        Endpoint("DELETE", PROJECT + "/environments/{environment}", remove_project_environment,
                 no_body(200, "Removed")),
        Endpoint("GET", FLAG, feature, ok(m.Feature, 404)),
        Endpoint("PUT", FLAG, update_feature, ok(m.Feature, 400, 404, 415),
                 body=m.UpdateFeature),
        Endpoint("PATCH", FLAG, patch_feature, ok(m.Feature, 400, 404, 415), body=m.Patches),
        Endpoint("POST", PROJECT + "/stale", stale_features, no_body(202, "Accepted", 400, 415),
                 body=m.BatchStale),
        Endpoint("GET", FLAG_ENV, feature_environment, ok(m.FeatureEnvironment, 404)),
        Endpoint("POST", FLAG_ENV + "/on", turn_on, no_body(200, "Turned on", 400, 404)),
        Endpoint("POST", FLAG_ENV + "/off", turn_off, no_body(200, "Turned off", 400, 404)),
        Endpoint("GET", STRATEGIES, strategies, ok(list[m.FeatureStrategy], 404)),
        Endpoint("POST", STRATEGIES + "/set-sort-order", set_strategy_order,
                 no_body(200, "Reordered", 400, 404, 415), body=m.StrategySortOrders),
        Endpoint("GET", STRATEGY, strategy, ok(m.FeatureStrategy, 404)),
        Endpoint("PUT", STRATEGY, update_strategy, ok(m.FeatureStrategy, 400, 404, 415),
                 body=m.UpdateFeatureStrategy),
        Endpoint("PATCH", STRATEGY, patch_strategy, ok(m.FeatureStrategy, 400, 404, 415),
                 body=m.Patches),
        Endpoint("DELETE", STRATEGY, delete_strategy, no_body(200, "Deleted", 404)),
        Endpoint("GET", FLAG_ENV + "/variants", variants, ok(m.FeatureVariants, 404)),
        Endpoint("PUT", FLAG_ENV + "/variants", put_variants,
                 ok(m.FeatureVariants, 400, 404, 415), body=m.VariantsBody),
        Endpoint("PATCH", FLAG_ENV + "/variants", patch_variants,
                 ok(m.FeatureVariants, 400, 404, 415), body=m.Patches),
    ),
)  # fmt: skip
