"""Context fields: the list, and the strategies that use one (endpoint 5)."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.responses import Response

from sandbox.responses import json_response
from sandbox.routes.deps import Admin, StoreDep

router = APIRouter(tags=["context"])


@router.get("/api/admin/context")
async def list_context_fields(_: Admin, store: StoreDep) -> Response:
    return json_response(store.list_context_fields())


@router.get("/api/admin/context/{contextField}/strategies")
async def context_strategies(contextField: str, _: Admin, store: StoreDep) -> Response:
    return json_response(store.context_strategies(contextField))
