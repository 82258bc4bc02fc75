"""Flags of a project: the list, creating one, archiving one, adding a strategy."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.responses import Response

from app.api import models as m
from sandbox.responses import json_response
from sandbox.routes.answers import TOKEN_ERRORS, errors, no_body, ok
from sandbox.routes.deps import Admin, StoreDep, require_root
from sandbox.store import ADMIN_ROLE, EDITOR_ROLE

router = APIRouter(tags=["features"], responses=errors(*TOKEN_ERRORS))


@router.get("/api/admin/projects/{project}/features", responses=ok(m.FeatureList, 404))
async def project_features(project: str, _: Admin, store: StoreDep) -> Response:
    return json_response(store.project_features(project))


@router.post(
    "/api/admin/projects/{project}/features",
    status_code=201,
    responses=ok(m.Feature, 400, 404, 409, 415, status=201),
)
async def create_feature(
    project: str, body: m.CreateFeature, who: Admin, store: StoreDep
) -> Response:
    require_root(store, who, (ADMIN_ROLE, EDITOR_ROLE), "create flags")
    return json_response(store.create_feature(project, body, who), 201)


@router.delete(
    "/api/admin/projects/{project}/features/{name}",
    status_code=202,
    response_class=Response,
    responses=no_body(202, "Archived", 404),
)
async def archive_feature(project: str, name: str, who: Admin, store: StoreDep) -> Response:
    require_root(store, who, (ADMIN_ROLE, EDITOR_ROLE), "archive flags")
    store.archive_feature(project, name, who)
    return Response(status_code=202)


@router.post(
    "/api/admin/projects/{project}/features/{feature}/environments/{environment}/strategies",
    responses=ok(m.FeatureStrategy, 400, 404, 415),
)
async def add_strategy(
    project: str,
    feature: str,
    environment: str,
    body: m.CreateFeatureStrategy,
    who: Admin,
    store: StoreDep,
) -> Response:
    require_root(store, who, (ADMIN_ROLE, EDITOR_ROLE), "change strategies")
    return json_response(store.add_strategy(project, feature, environment, body, who))
