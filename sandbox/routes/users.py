"""Users: the current user, the list, one user, creating and updating, inactive users and
deleting them."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.responses import Response

from app.api import models as m
from sandbox.responses import json_response, streamed_json
from sandbox.routes.deps import Admin, StoreDep, require_root
from sandbox.store import ADMIN_ROLE, Store

router = APIRouter(tags=["users"])


@router.get("/api/admin/user")
async def current_user(who: Admin, store: StoreDep) -> Response:
    return json_response(store.current_user(who))


@router.get("/api/admin/user-admin")
async def list_users(who: Admin, store: StoreDep) -> Response:
    require_root(store, who, (ADMIN_ROLE,), "list users")
    return json_response(store.list_users())


@router.post("/api/admin/user-admin", status_code=201)
async def create_user(body: m.CreateUser, who: Admin, store: StoreDep) -> Response:
    require_root(store, who, (ADMIN_ROLE,), "create users")
    user = store.create_user(body, who)
    response = json_response(user, 201)
    response.headers["location"] = f"user-admin/{user.id}"
    return response


# endpoint 6 is declared before /user-admin/{id} so that "inactive" is not taken for an id
@router.get("/api/admin/user-admin/inactive")
async def inactive_users(who: Admin, store: StoreDep) -> Response:
    require_root(store, who, (ADMIN_ROLE,), "list inactive users")
    return await streamed_json(store, Store.inactive_users)


@router.post("/api/admin/user-admin/inactive/delete")
async def delete_inactive_users(body: m.Ids, who: Admin, store: StoreDep) -> Response:
    """200 with no body, as Unleash 8.2 answers; see `Store.delete_inactive_users`."""
    require_root(store, who, (ADMIN_ROLE,), "delete inactive users")
    store.delete_inactive_users(body.ids, who)
    return Response(status_code=200)


@router.get("/api/admin/user-admin/{id}")
async def get_user(id: int, who: Admin, store: StoreDep) -> Response:
    require_root(store, who, (ADMIN_ROLE,), "read users")
    return json_response(store.get_user(id))


@router.put("/api/admin/user-admin/{id}")
async def update_user(id: int, body: m.UpdateUser, who: Admin, store: StoreDep) -> Response:
    require_root(store, who, (ADMIN_ROLE,), "update users")
    return json_response(store.update_user(id, body, who))
