"""Dependencies between flags, as Unleash 8.2 answers (Admin or Editor root role for changes),
and the flags a flag could depend on."""

from __future__ import annotations

from starlette.responses import Response

from app.api import models as m
from sandbox.responses import json_response
from sandbox.routes.answers import no_body, ok
from sandbox.routes.deps import CHANGERS, require_root
from sandbox.routes.endpoint import Area, Call, Endpoint


async def add_dependency(call: Call[m.CreateDependentFeature]) -> Response:
    require_root(call.store, call.who, CHANGERS, "change dependencies")
    call.store.add_dependency(call.path("projectId"), call.path("child"), call.body, call.who)
    return Response(status_code=200)


async def delete_dependencies(call: Call[None]) -> Response:
    require_root(call.store, call.who, CHANGERS, "change dependencies")
    call.store.delete_dependencies(call.path("projectId"), call.path("child"), call.who)
    return Response(status_code=200)


async def delete_dependency(call: Call[None]) -> Response:
    require_root(call.store, call.who, CHANGERS, "change dependencies")
    call.store.delete_dependency(
        call.path("projectId"), call.path("child"), call.path("parent"), call.who
    )
    return Response(status_code=200)


async def dependencies_exist(call: Call[None]) -> Response:
    return json_response(m.DependenciesExist(call.store.dependencies_exist()))


async def parent_options(call: Call[None]) -> Response:
    return json_response(m.ParentFeatureOptions(call.store.parent_options(call.path("child"))))


CHILD = "/api/admin/projects/{projectId}/features/{child}"

AREA = Area(
    "dependencies",
    (
        Endpoint(
            "POST",
            CHILD + "/dependencies",
            add_dependency,
            no_body(200, "Added", 400, 403, 404, 415),
            body=m.CreateDependentFeature,
        ),
        Endpoint(
            "DELETE", CHILD + "/dependencies", delete_dependencies, no_body(200, "Removed", 404)
        ),
        Endpoint(
            "DELETE",
            CHILD + "/dependencies/{parent}",
            delete_dependency,
            no_body(200, "Removed", 404),
        ),
        Endpoint("GET", CHILD + "/parents", parent_options, ok(m.ParentFeatureOptions)),
        Endpoint(
            "GET",
            "/api/admin/projects/{projectId}/dependencies",
            dependencies_exist,
            ok(m.DependenciesExist),
        ),
    ),
)
