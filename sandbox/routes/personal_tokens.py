"""Personal access tokens of the caller, `/api/admin/user/tokens`: listed, created (the secret
in the answer only) and deleted, as Unleash 8.2 answers (see `sandbox.store.personal_tokens`);
the admin API token is refused (403: no user behind it)."""

from __future__ import annotations

from starlette.responses import Response

from app.api import models as m
from sandbox.responses import json_response
from sandbox.routes.answers import no_body, ok
from sandbox.routes.endpoint import PATH_ID, Area, Call, Endpoint


async def list_pats(call: Call[None]) -> Response:
    return json_response(call.store.personal_tokens(call.who))


async def create_pat(call: Call[m.CreatePersonalAccessToken]) -> Response:
    """201 with the token and its secret, no `Location` (as Unleash 8.2 answers)."""
    secure = call.played is None or call.played.since(8, 0)  # how its event logs it
    made = call.store.create_personal_access_token(call.body, call.who, secure=secure)
    return json_response(made, 201)


async def delete_pat(call: Call[None]) -> Response:
    """200 with no body; an id not the caller's: 200 on 8.x, 404 before."""
    unknown_is_404 = call.played is not None and call.played.unknown_pat_delete_is_404
    secure = call.played is None or call.played.since(8, 0)  # how its event logs it
    call.store.delete_personal_access_token(call.value("id", int), call.who,
                                            unknown_is_404=unknown_is_404,
                                            secure=secure)  # fmt: skip
    return Response(status_code=200)


PATS, PAT = "/api/admin/user/tokens", "/api/admin/user/tokens/{id}"

AREA = Area(
    "Personal access tokens",
    (
        Endpoint("GET", PATS, list_pats, ok(m.PersonalAccessTokens)),
        Endpoint("POST", PATS, create_pat,
                 ok(m.CreatedPersonalAccessToken, 400, 409, 415, status=201),
                 body=m.CreatePersonalAccessToken),
        Endpoint("DELETE", PAT, delete_pat, no_body(200, "Deleted", 400, 404),
                 params=(PATH_ID,)),
    ),
)  # fmt: skip
