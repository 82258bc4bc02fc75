"""Context fields: the list, one field, the strategies that use one (endpoint 5), and
creating, replacing and deleting fields and their legal values, as Unleash 8.2 answers (Admin
or Editor root role: Unleash gives the Editor role the context-field permissions)."""

from __future__ import annotations

from starlette.responses import Response

from app.api import models as m
from sandbox.responses import json_response
from sandbox.routes.answers import no_body, ok
from sandbox.routes.deps import CHANGERS, absent_path, require_root
from sandbox.routes.endpoint import Area, Call, Endpoint


async def list_context_fields(call: Call[None]) -> Response:
    return json_response(call.store.list_context_fields())


async def create_context_field(call: Call[m.CreateContextField]) -> Response:
    require_root(call.store, call.who, CHANGERS, "create context fields")
    played = call.played
    unsorted = played.new_field_sort_order if played is not None else 0
    field = call.store.create_context_field(call.body, call.who, unsorted=unsorted)
    response = json_response(field, 201)
    response.headers["location"] = f"context/{field.name}"
    return response


async def get_context_field(call: Call[None]) -> Response:
    return json_response(call.store.get_context_field(call.path("contextField")))


async def update_context_field(call: Call[m.UpdateContextField]) -> Response:
    """200 with no body, as Unleash 8.2 answers; the sort order is not the body's to set."""
    require_root(call.store, call.who, CHANGERS, "update context fields")
    keep = call.played is not None and call.played.put_keeps_sort_order
    call.store.update_context_field(call.path("contextField"), call.body, call.who,
                                    keep_sort_order=keep)  # fmt: skip
    return Response(status_code=200)


async def delete_context_field(call: Call[None]) -> Response:
    require_root(call.store, call.who, CHANGERS, "delete context fields")
    in_use = call.played is None or call.played.refuses_deleting_fields_in_use
    call.store.delete_context_field(call.path("contextField"), call.who, in_use=in_use)
    return Response(status_code=200)


async def put_legal_value(call: Call[m.LegalValueBody]) -> Response:
    if call.played is not None and not call.played.legal_value_routes:
        raise absent_path()
    require_root(call.store, call.who, CHANGERS, "update context fields")
    call.store.put_legal_value(call.path("contextField"), call.body, call.who)
    return Response(status_code=200)


async def delete_legal_value(call: Call[None]) -> Response:
    if call.played is not None and not call.played.legal_value_routes:
        raise absent_path()
    require_root(call.store, call.who, CHANGERS, "update context fields")
    call.store.delete_legal_value(call.path("contextField"), call.path("legalValue"), call.who)
    return Response(status_code=200)


async def context_strategies(call: Call[None]) -> Response:
    archived = call.played is not None and not call.played.usage_leaves_archived_out
    return json_response(call.store.context_strategies(call.path("contextField"),
                                                       archived=archived))  # fmt: skip


FIELDS, FIELD = "/api/admin/context", "/api/admin/context/{contextField}"

AREA = Area(
    "context",
    (
        Endpoint("GET", FIELDS, list_context_fields, ok(list[m.ContextField])),
        Endpoint("POST", FIELDS, create_context_field,
                 ok(m.ContextField, 400, 409, 415, status=201), body=m.CreateContextField),
        Endpoint("GET", FIELD, get_context_field, ok(m.ContextField, 404)),
        Endpoint("PUT", FIELD, update_context_field, no_body(200, "Updated", 400, 404, 415),
                 body=m.UpdateContextField),
        Endpoint("DELETE", FIELD, delete_context_field, no_body(200, "Deleted", 400, 404)),
        Endpoint("POST", FIELD + "/legal-values", put_legal_value,
                 no_body(200, "Added or updated", 400, 404, 415), body=m.LegalValueBody),
        Endpoint("DELETE", FIELD + "/legal-values/{legalValue}", delete_legal_value,
                 no_body(200, "Deleted", 404)),
        Endpoint("GET", FIELD + "/strategies", context_strategies,
                 ok(m.ContextFieldStrategies, 404)),
    ),
)  # fmt: skip
