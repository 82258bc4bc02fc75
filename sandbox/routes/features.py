"""Flags of a project: the list, creating one, archiving one, adding a strategy."""

from __future__ import annotations

from starlette.responses import Response

from app.api import models as m
from sandbox.responses import json_response
from sandbox.routes.answers import no_body, ok
from sandbox.routes.deps import require_root
from sandbox.routes.endpoint import Area, Call, Endpoint
from sandbox.store import ADMIN_ROLE, EDITOR_ROLE


async def project_features(call: Call[None]) -> Response:
    return json_response(call.store.project_features(call.path("project")))


async def create_feature(call: Call[m.CreateFeature]) -> Response:
    store, who = call.store, call.who
    require_root(store, who, (ADMIN_ROLE, EDITOR_ROLE), "create flags")
    return json_response(store.create_feature(call.path("project"), call.body, who), 201)


async def archive_feature(call: Call[None]) -> Response:
    store, who = call.store, call.who
    require_root(store, who, (ADMIN_ROLE, EDITOR_ROLE), "archive flags")
    store.archive_feature(call.path("project"), call.path("name"), who)
    return Response(status_code=202)


async def add_strategy(call: Call[m.CreateFeatureStrategy]) -> Response:
    store, who = call.store, call.who
    require_root(store, who, (ADMIN_ROLE, EDITOR_ROLE), "change strategies")
    project, feature, environment = (call.path(n) for n in ("project", "feature", "environment"))
    return json_response(store.add_strategy(project, feature, environment, call.body, who))


FEATURES = "/api/admin/projects/{project}/features"

AREA = Area(
    "features",
    (
        Endpoint("GET", FEATURES, project_features, ok(m.FeatureList, 404)),
        Endpoint("POST", FEATURES, create_feature, ok(m.Feature, 400, 404, 409, 415, status=201),
                 body=m.CreateFeature),
        Endpoint("DELETE", FEATURES + "/{name}", archive_feature,
                 no_body(202, "Archived", 404)),
        Endpoint("POST", FEATURES + "/{feature}/environments/{environment}/strategies",
                 add_strategy, ok(m.FeatureStrategy, 400, 404, 415),
                 body=m.CreateFeatureStrategy),
    ),
)  # fmt: skip
