"""Groups (left out of the app when it serves none, as open-source Unleash: 404). Reading one,
updating and deleting answer as Unleash Enterprise does: see `sandbox.store.groups`."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.responses import Response

from app.api import models as m
from sandbox.responses import json_response
from sandbox.routes.answers import TOKEN_ERRORS, errors, no_body, ok
from sandbox.routes.deps import Admin, PathId, StoreDep, require_root
from sandbox.store import ADMIN_ROLE

router = APIRouter(tags=["groups"], responses=errors(*TOKEN_ERRORS))


@router.get("/api/admin/groups", responses=ok(m.GroupList))
async def list_groups(_: Admin, store: StoreDep) -> Response:
    return json_response(store.list_groups())


@router.post("/api/admin/groups", status_code=201, responses=ok(m.Group, 400, 409, 415, status=201))
async def create_group(body: m.CreateGroup, who: Admin, store: StoreDep) -> Response:
    require_root(store, who, (ADMIN_ROLE,), "create groups")
    return json_response(store.create_group(body, who), 201)


@router.get("/api/admin/groups/{id}", responses=ok(m.Group, 400, 404))
async def get_group(id: PathId, _: Admin, store: StoreDep) -> Response:
    """Read as the list is: by any admin-API token (the Admin root role is for changes)."""
    return json_response(store.get_group(id))


@router.put("/api/admin/groups/{id}", responses=ok(m.Group, 400, 404, 409, 415))
async def update_group(id: PathId, body: m.CreateGroup, who: Admin, store: StoreDep) -> Response:
    require_root(store, who, (ADMIN_ROLE,), "update groups")
    return json_response(store.update_group(id, body, who))


@router.delete(
    "/api/admin/groups/{id}", response_class=Response, responses=no_body(200, "Deleted", 400)
)
async def delete_group(id: PathId, who: Admin, store: StoreDep) -> Response:
    """200 with no body, as Unleash Enterprise answers (also for an id it does not know)."""
    require_root(store, who, (ADMIN_ROLE,), "delete groups")
    store.delete_group(id, who)
    return Response(status_code=200)
