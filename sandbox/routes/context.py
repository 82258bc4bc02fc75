"""Context fields: the list, one field, the strategies that use one (endpoint 5), and
creating, replacing and deleting fields and their legal values, as Unleash 8.2 answers (Admin
or Editor root role: Unleash gives the Editor role the context-field permissions)."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.responses import Response

from app.api import models as m
from sandbox.responses import json_response
from sandbox.routes.answers import TOKEN_ERRORS, errors, no_body, ok
from sandbox.routes.deps import CHANGERS, Admin, PlayedDep, StoreDep, absent_path, require_root

router = APIRouter(tags=["context"], responses=errors(*TOKEN_ERRORS))


@router.get("/api/admin/context", responses=ok(list[m.ContextField]))
async def list_context_fields(_: Admin, store: StoreDep) -> Response:
    return json_response(store.list_context_fields())


@router.post(
    "/api/admin/context", status_code=201, responses=ok(m.ContextField, 400, 409, 415, status=201)
)
async def create_context_field(body: m.CreateContextField, who: Admin, store: StoreDep) -> Response:
    require_root(store, who, CHANGERS, "create context fields")
    field = store.create_context_field(body, who)
    response = json_response(field, 201)
    response.headers["location"] = f"context/{field.name}"
    return response


@router.get("/api/admin/context/{contextField}", responses=ok(m.ContextField, 404))
async def get_context_field(contextField: str, _: Admin, store: StoreDep) -> Response:
    return json_response(store.get_context_field(contextField))


@router.put(
    "/api/admin/context/{contextField}",
    response_class=Response,
    responses=no_body(200, "Updated", 400, 404, 415),
)
async def update_context_field(
    contextField: str, body: m.UpdateContextField, who: Admin, store: StoreDep, played: PlayedDep
) -> Response:
    """200 with no body, as Unleash 8.2 answers; the sort order is not the body's to set."""
    require_root(store, who, CHANGERS, "update context fields")
    keep = played is not None and played.put_keeps_sort_order
    store.update_context_field(contextField, body, who, keep_sort_order=keep)
    return Response(status_code=200)


@router.delete(
    "/api/admin/context/{contextField}",
    response_class=Response,
    responses=no_body(200, "Deleted", 400, 404),
)
async def delete_context_field(
    contextField: str, who: Admin, store: StoreDep, played: PlayedDep
) -> Response:
    require_root(store, who, CHANGERS, "delete context fields")
    in_use = played is None or played.refuses_deleting_fields_in_use
    store.delete_context_field(contextField, who, in_use=in_use)
    return Response(status_code=200)


@router.post(
    "/api/admin/context/{contextField}/legal-values",
    response_class=Response,
    responses=no_body(200, "Added or updated", 400, 404, 415),
)
async def put_legal_value(
    contextField: str, body: m.LegalValueBody, who: Admin, store: StoreDep, played: PlayedDep
) -> Response:
    if played is not None and not played.legal_value_routes:
        raise absent_path()
    require_root(store, who, CHANGERS, "update context fields")
    store.put_legal_value(contextField, body, who)
    return Response(status_code=200)


@router.delete(
    "/api/admin/context/{contextField}/legal-values/{legalValue}",
    response_class=Response,
    responses=no_body(200, "Deleted", 404),
)
async def delete_legal_value(
    contextField: str, legalValue: str, who: Admin, store: StoreDep, played: PlayedDep
) -> Response:
    if played is not None and not played.legal_value_routes:
        raise absent_path()
    require_root(store, who, CHANGERS, "update context fields")
    store.delete_legal_value(contextField, legalValue, who)
    return Response(status_code=200)


@router.get(
    "/api/admin/context/{contextField}/strategies", responses=ok(m.ContextFieldStrategies, 404)
)
async def context_strategies(
    contextField: str, _: Admin, store: StoreDep, played: PlayedDep
) -> Response:
    archived = played is not None and not played.usage_leaves_archived_out
    return json_response(store.context_strategies(contextField, archived=archived))
