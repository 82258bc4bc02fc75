"""The archive: a project's archived flags (endpoint 3, deprecated in the spec), streamed; and
what Unleash 8.2 does with them: revive or delete one by name, or a project's many in one
request (`batchFeaturesSchema`), and archive many again (what undoes a revive). Each needs the
Admin or Editor root role here (on Unleash: UPDATE_FEATURE to revive, DELETE_FEATURE to delete
and archive), and answers with no body: 200, or 202 for archiving."""

from __future__ import annotations

from starlette.responses import Response

from app.api import models as m
from sandbox.responses import streamed_json
from sandbox.routes.answers import no_body, ok
from sandbox.routes.deps import CHANGERS, absent_path, require_root
from sandbox.routes.endpoint import Area, Call, Endpoint
from sandbox.store import Refusal


async def archived_features(call: Call[None]) -> Response:
    if call.played is not None and not call.played.archive_endpoint:
        raise absent_path()  # removed in 7.0
    project = call.path("projectId")
    return await streamed_json(call.store, lambda reading: reading.archived_features(project))


async def revive_feature(call: Call[None]) -> Response:
    require_root(call.store, call.who, CHANGERS, "revive flags")
    call.store.revive_feature(call.path("featureName"), call.who)
    return Response(status_code=200)


async def delete_feature(call: Call[None]) -> Response:
    store, played, name = call.store, call.played, call.path("featureName")
    require_root(store, call.who, CHANGERS, "delete flags")
    if played and played.unknown_archive_delete_is_404 and not store.has_feature(name):
        raise Refusal(404, "NotFoundError", f"No feature {played.flag_word} found")
    store.delete_feature(name, call.who)
    return Response(status_code=200)


async def revive_features(call: Call[m.BatchFeatures]) -> Response:
    require_root(call.store, call.who, CHANGERS, "revive flags")
    known = call.played is None or call.played.revive_checks_the_project
    call.store.revive_features(call.path("projectId"), call.body.features, call.who,
                               check_project=known)  # fmt: skip
    return Response(status_code=200)


async def delete_features(call: Call[m.BatchFeatures]) -> Response:
    require_root(call.store, call.who, CHANGERS, "delete flags")
    call.store.delete_features(call.path("projectId"), call.body.features, call.who)
    return Response(status_code=200)


async def archive_features(call: Call[m.BatchFeatures]) -> Response:
    require_root(call.store, call.who, CHANGERS, "archive flags")
    call.store.archive_features(call.path("projectId"), call.body.features, call.who)
    return Response(status_code=202)


PROJECT = "/api/admin/projects/{projectId}"

AREA = Area(
    "archive",
    (
        Endpoint("GET", "/api/admin/archive/features/{projectId}", archived_features,
                 ok(m.ArchivedFeatures), deprecated=True),
        Endpoint("POST", "/api/admin/archive/revive/{featureName}", revive_feature,
                 no_body(200, "Revived", 400, 404, 415)),
        Endpoint("DELETE", "/api/admin/archive/{featureName}", delete_feature,
                 no_body(200, "Deleted", 400, 404)),
        Endpoint("POST", PROJECT + "/revive", revive_features,
                 no_body(200, "Revived", 400, 404, 415), body=m.BatchFeatures),
        Endpoint("POST", PROJECT + "/delete", delete_features,
                 no_body(200, "Deleted", 400, 404, 415), body=m.BatchFeatures),
        Endpoint("POST", PROJECT + "/archive", archive_features,
                 no_body(202, "Archived", 400, 404, 415), body=m.BatchFeatures),
    ),
)  # fmt: skip
