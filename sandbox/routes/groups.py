"""Groups (left out of the app when it serves none, as open-source Unleash: 404)."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.responses import Response

from app.api import models as m
from sandbox.responses import json_response
from sandbox.routes.deps import Admin, StoreDep, require_root
from sandbox.store import ADMIN_ROLE

router = APIRouter(tags=["groups"])


@router.get("/api/admin/groups")
async def list_groups(_: Admin, store: StoreDep) -> Response:
    return json_response(store.list_groups())


@router.post("/api/admin/groups", status_code=201)
async def create_group(body: m.CreateGroup, who: Admin, store: StoreDep) -> Response:
    require_root(store, who, (ADMIN_ROLE,), "create groups")
    return json_response(store.create_group(body, who), 201)
