"""The archive: a project's archived flags (endpoint 3, deprecated in the spec), streamed; and
what Unleash 8.2 does with them: revive or delete one by name, or a project's many in one
request (`batchFeaturesSchema`), and archive many again (what undoes a revive). Each needs the
Admin or Editor root role here (on Unleash: UPDATE_FEATURE to revive, DELETE_FEATURE to delete
and archive), and answers with no body: 200, or 202 for archiving."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.responses import Response

from app.api import models as m
from sandbox.responses import streamed_json
from sandbox.routes.answers import TOKEN_ERRORS, errors, no_body, ok
from sandbox.routes.deps import CHANGERS, Admin, PlayedDep, StoreDep, absent_path, require_root
from sandbox.store import Refusal

router = APIRouter(tags=["archive"], responses=errors(*TOKEN_ERRORS))


@router.get(
    "/api/admin/archive/features/{projectId}", deprecated=True, responses=ok(m.ArchivedFeatures)
)
async def archived_features(
    projectId: str, _: Admin, store: StoreDep, played: PlayedDep
) -> Response:
    if played is not None and not played.archive_endpoint:
        raise absent_path()  # removed in 7.0
    return await streamed_json(store, lambda reading: reading.archived_features(projectId))


@router.post(
    "/api/admin/archive/revive/{featureName}",
    response_class=Response,
    responses=no_body(200, "Revived", 400, 404, 415),
)
async def revive_feature(featureName: str, who: Admin, store: StoreDep) -> Response:
    require_root(store, who, CHANGERS, "revive flags")
    store.revive_feature(featureName, who)
    return Response(status_code=200)


@router.delete(
    "/api/admin/archive/{featureName}",
    response_class=Response,
    responses=no_body(200, "Deleted", 400, 404),
)
async def delete_feature(
    featureName: str, who: Admin, store: StoreDep, played: PlayedDep
) -> Response:
    require_root(store, who, CHANGERS, "delete flags")
    if played and played.unknown_archive_delete_is_404 and not store.has_feature(featureName):
        raise Refusal(404, "NotFoundError", f"No feature {played.flag_word} found")
    store.delete_feature(featureName, who)
    return Response(status_code=200)


@router.post(
    "/api/admin/projects/{projectId}/revive",
    response_class=Response,
    responses=no_body(200, "Revived", 400, 404, 415),
)
async def revive_features(
    projectId: str, body: m.BatchFeatures, who: Admin, store: StoreDep, played: PlayedDep
) -> Response:
    require_root(store, who, CHANGERS, "revive flags")
    known = played is None or played.revive_checks_the_project
    store.revive_features(projectId, body.features, who, check_project=known)
    return Response(status_code=200)


@router.post(
    "/api/admin/projects/{projectId}/delete",
    response_class=Response,
    responses=no_body(200, "Deleted", 400, 404, 415),
)
async def delete_features(
    projectId: str, body: m.BatchFeatures, who: Admin, store: StoreDep
) -> Response:
    require_root(store, who, CHANGERS, "delete flags")
    store.delete_features(projectId, body.features, who)
    return Response(status_code=200)


@router.post(
    "/api/admin/projects/{projectId}/archive",
    status_code=202,
    response_class=Response,
    responses=no_body(202, "Archived", 400, 404, 415),
)
async def archive_features(
    projectId: str, body: m.BatchFeatures, who: Admin, store: StoreDep
) -> Response:
    require_root(store, who, CHANGERS, "archive flags")
    store.archive_features(projectId, body.features, who)
    return Response(status_code=202)
