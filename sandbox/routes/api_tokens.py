"""API tokens: the list, by name, creating one, changing its expiry, deleting it; and a project's
list, creation and deletion, as Unleash 8.2 answers (the Admin root role: the sandbox gives the
token permissions to no other role). The list's secrets are masked handles, which `PUT` and
`DELETE` take as well as the whole secret: see `sandbox.store.api_tokens`."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from app.api import models as m
from sandbox.responses import data_response, json_response
from sandbox.routes.answers import Answer, no_body, ok
from sandbox.routes.deps import require_root
from sandbox.routes.endpoint import Area, Call, Endpoint
from sandbox.store import ADMIN_ROLE


def _admin(call: Call[Any], doing: str) -> None:
    require_root(call.store, call.who, (ADMIN_ROLE,), doing)


def _created(token: m.ApiToken) -> Response:
    response = json_response(token, 201)
    response.headers["location"] = "api-tokens"  # a bare word, as every release sends
    return response


def _backend(call: Call[Any]) -> bool:
    return call.played is None or call.played.backend_tokens


async def list_api_tokens(call: Call[None]) -> Response:
    _admin(call, "read API tokens")
    return data_response(call.store.list_api_tokens())


async def api_tokens_by_name(call: Call[None]) -> Response:
    _admin(call, "read API tokens")
    return data_response(call.store.list_api_tokens(call.path("name")))


def _logged(call: Call[Any]) -> str:
    """What the release played logs of a token besides its listing (`sandbox.versions`)."""
    return call.played.token_event_field if call.played is not None else "secure"


async def create_api_token(call: Call[m.CreateApiToken]) -> Response:
    _admin(call, "create API tokens")
    return _created(call.store.create_api_token(call.body, call.who, backend=_backend(call),
                                                logged=_logged(call)))  # fmt: skip


async def update_api_token(call: Call[m.UpdateApiToken]) -> Response:
    """200 with no body, also for a token it does not know (as Unleash)."""
    _admin(call, "update API tokens")
    call.store.update_api_token(call.path("token"), call.body, call.who, logged=_logged(call))
    return Response(status_code=200)


async def delete_api_token(call: Call[None]) -> Response:
    """200 with no body, also for a token it does not know (as Unleash)."""
    _admin(call, "delete API tokens")
    call.store.delete_api_token(call.path("token"), call.who, logged=_logged(call))
    return Response(status_code=200)


async def project_api_tokens(call: Call[None]) -> Response:
    _admin(call, "read API tokens")
    return json_response(call.store.project_api_tokens(call.path("projectId")))


async def create_project_api_token(call: Call[m.CreateApiToken]) -> Response:
    _admin(call, "create API tokens")
    token = call.store.create_api_token(call.body, call.who, call.path("projectId"),
                                        backend=_backend(call), logged=_logged(call))  # fmt: skip
    return _created(token)


async def delete_project_api_token(call: Call[None]) -> Response:
    """200 with no body; 404 (no body) for a token it does not know, 400 (no body) for one
    that is not this project's alone, as every release answers."""
    _admin(call, "delete API tokens")
    status = call.store.delete_api_token(call.path("token"), call.who, call.path("projectId"),
                                         logged=_logged(call))  # fmt: skip
    return Response(status_code=status)


TOKENS = "/api/admin/api-tokens"
PROJECT_TOKENS = "/api/admin/projects/{projectId}/api-tokens"

AREA = Area(
    "api_tokens",
    (
        Endpoint("GET", TOKENS, list_api_tokens, ok(m.ApiTokenList)),
        Endpoint("POST", TOKENS, create_api_token, ok(m.ApiToken, 400, 415, status=201),
                 body=m.CreateApiToken),
        Endpoint("GET", TOKENS + "/{name}", api_tokens_by_name, ok(m.ApiTokenList)),
        Endpoint("PUT", TOKENS + "/{token}", update_api_token,
                 no_body(200, "Updated (also when no token has it)", 400, 415),
                 body=m.UpdateApiToken),
        Endpoint("DELETE", TOKENS + "/{token}", delete_api_token,
                 no_body(200, "Deleted (also when no token has it)")),
        Endpoint("GET", PROJECT_TOKENS, project_api_tokens, ok(m.ApiTokenList, 404)),
        Endpoint("POST", PROJECT_TOKENS, create_project_api_token,
                 ok(m.ApiToken, 400, 404, 415, status=201), body=m.CreateApiToken),
        Endpoint("DELETE", PROJECT_TOKENS + "/{token}", delete_project_api_token, {
            200: Answer("Deleted"),
            400: Answer("The token is not this project's alone (no body, as Unleash)"),
            404: Answer("No token has it (no body, as Unleash)"),
        }),
    ),
)  # fmt: skip
