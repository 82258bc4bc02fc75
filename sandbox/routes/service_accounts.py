"""Service accounts and their tokens, `/api/admin/service-account` (Unleash Enterprise; left out
of the app when it plays an open-source release, which answers 404 as for any unknown path).
Every route needs the Admin root role, reads included (Unleash's page and actions need ADMIN).
What each does: `sandbox.store.service_accounts`."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field
from starlette.responses import Response

from app.api import models as m
from sandbox.responses import json_response
from sandbox.routes.answers import no_body, ok
from sandbox.routes.deps import require_root
from sandbox.routes.endpoint import PATH_ID, Area, Call, Endpoint, Param
from sandbox.store import ADMIN_ROLE

TOKEN_ID = Param("tokenId", "path", Annotated[int, Field(ge=-(2**63), le=2**63 - 1)])


async def list_accounts(call: Call[None]) -> Response:
    require_root(call.store, call.who, (ADMIN_ROLE,), "read service accounts")
    return json_response(call.store.service_accounts())


async def create_account(call: Call[m.CreateServiceAccount]) -> Response:
    """201 with the account and `location: service-account/<id>`."""
    require_root(call.store, call.who, (ADMIN_ROLE,), "create service accounts")
    made = call.store.create_service_account(call.body, call.who)
    response = json_response(made, 201)
    response.headers["location"] = f"service-account/{made.id}"
    return response


async def update_account(call: Call[m.UpdateServiceAccount]) -> Response:
    require_root(call.store, call.who, (ADMIN_ROLE,), "update service accounts")
    return json_response(
        call.store.update_service_account(call.value("id", int), call.body, call.who)
    )


async def delete_account(call: Call[None]) -> Response:
    """200 with no body; 404 for an id that is no service account's."""
    require_root(call.store, call.who, (ADMIN_ROLE,), "delete service accounts")
    call.store.delete_service_account(call.value("id", int), call.who)
    return Response(status_code=200)


async def list_tokens(call: Call[None]) -> Response:
    require_root(call.store, call.who, (ADMIN_ROLE,), "read service account tokens")
    return json_response(call.store.service_account_tokens(call.value("id", int)))


async def create_token(call: Call[m.CreatePersonalAccessToken]) -> Response:
    """201 with the token and its secret (the only time it is shown) and a `location`."""
    require_root(call.store, call.who, (ADMIN_ROLE,), "create service account tokens")
    account = call.value("id", int)
    made = call.store.create_service_account_token(account, call.body, call.who)
    response = json_response(made, 201)
    response.headers["location"] = f"service-account/{account}/token/{made.id}"
    return response


async def delete_token(call: Call[None]) -> Response:
    """200 with no body; 404 for a token that is not the account's."""
    require_root(call.store, call.who, (ADMIN_ROLE,), "delete service account tokens")
    call.store.delete_service_account_token(call.value("id", int), call.value("tokenId", int),
                                            call.who)  # fmt: skip
    return Response(status_code=200)


ACCOUNTS = "/api/admin/service-account"
ACCOUNT = "/api/admin/service-account/{id}"
TOKENS = "/api/admin/service-account/{id}/token"
TOKEN = "/api/admin/service-account/{id}/token/{tokenId}"

AREA = Area(
    "Service accounts",
    (
        Endpoint("GET", ACCOUNTS, list_accounts, ok(m.ServiceAccounts)),
        Endpoint("POST", ACCOUNTS, create_account,
                 ok(m.ServiceAccount, 400, 409, 415, status=201), body=m.CreateServiceAccount),
        Endpoint("PUT", ACCOUNT, update_account, ok(m.ServiceAccount, 400, 404, 415),
                 body=m.UpdateServiceAccount, params=(PATH_ID,)),
        Endpoint("DELETE", ACCOUNT, delete_account, no_body(200, "Deleted", 400, 404),
                 params=(PATH_ID,)),
        Endpoint("GET", TOKENS, list_tokens, ok(m.PersonalAccessTokens, 400, 404),
                 params=(PATH_ID,)),
        Endpoint("POST", TOKENS, create_token,
                 ok(m.CreatedPersonalAccessToken, 400, 404, 409, 415, status=201),
                 body=m.CreatePersonalAccessToken, params=(PATH_ID,)),
        Endpoint("DELETE", TOKEN, delete_token, no_body(200, "Deleted", 400, 404),
                 params=(PATH_ID, TOKEN_ID)),
    ),
)  # fmt: skip
