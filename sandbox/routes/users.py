"""Users: the current user, the list, one user, creating (limited to so many a minute, as
Unleash limits it), updating and deleting, the admin count, password reset links, inactive users
and deleting them."""

from __future__ import annotations

import math
import secrets
import time

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict
from starlette.responses import Response

from app.api import models as m
from sandbox.responses import json_response, streamed_json
from sandbox.routes.answers import TOKEN_ERRORS, errors, no_body, ok
from sandbox.routes.deps import Admin, PathId, PlayedDep, StoreDep, require_root
from sandbox.store import ADMIN_ROLE, Refusal, Store

router = APIRouter(tags=["users"], responses=errors(*TOKEN_ERRORS))


@router.get("/api/admin/user", responses=ok(m.CurrentUser))
async def current_user(who: Admin, store: StoreDep) -> Response:
    return json_response(store.current_user(who))


@router.get("/api/admin/user-admin", responses=ok(m.UserList))
async def list_users(who: Admin, store: StoreDep) -> Response:
    require_root(store, who, (ADMIN_ROLE,), "list users")
    return json_response(store.list_users())


class WindowLimit:
    """What Unleash's `express-rate-limit` does for user creation: `limit` requests a window of
    `window` seconds (a window starts with its first request), then 429 with `Retry-After`
    until the window ends. One window for every caller: the sandbox serves one machine."""

    def __init__(self, limit: int, window: float) -> None:
        self.limit, self.window = limit, window
        self.started, self.count = 0.0, 0

    def take(self) -> Response | None:
        """Count a request; the 429 to answer when it is over the limit, else None."""
        if self.limit <= 0:
            return None
        now = time.monotonic()
        if now - self.started >= self.window:
            self.started, self.count = now, 0
        self.count += 1
        reset = max(1, math.ceil(self.started + self.window - now))
        if self.count <= self.limit:
            return None
        # as express-rate-limit answers, standard (draft-6) headers and all
        return Response(
            "Too many requests, please try again later.",
            status_code=429,
            media_type="text/html",
            headers={
                "Retry-After": str(reset),
                "RateLimit-Policy": f"{self.limit};w={math.ceil(self.window)}",
                "RateLimit-Limit": str(self.limit),
                "RateLimit-Remaining": "0",
                "RateLimit-Reset": str(reset),
            },
        )


class NewUser(BaseModel):
    """`createUserSchema` as Unleash checks it before the handler: `rootRole` required, no other
    property; the email's form and whether it is taken are the handler's (BadDataError)."""

    model_config = ConfigDict(extra="forbid")

    username: str | None = None
    email: str | None = None
    name: str | None = None
    password: str | None = None
    rootRole: int | m.RootRoleName
    sendEmail: bool | None = None


@router.post(
    "/api/admin/user-admin",
    status_code=201,
    responses={
        **ok(m.User, 400, 409, 415, status=201),
        429: {
            "description": "Too many users created in the window (as Unleash: an HTML text); "
            "Retry-After says when to retry",
            "content": {"text/html": {"schema": {"type": "string"}}},
        },
    },
)
async def create_user(body: NewUser, who: Admin, store: StoreDep, request: Request) -> Response:
    """201 with the user, its `inviteLink` and `emailSent`, and `Location: <id>`, as Unleash
    8.2; 429 past the creation limit (`WindowLimit`). The invite link is made up: the sandbox
    has no page to set a password on."""
    require_root(store, who, (ADMIN_ROLE,), "create users")
    limit: WindowLimit = request.app.state.create_user_limit
    limited = limit.take()
    if limited is not None:
        return limited
    user = store.create_user(
        m.CreateUser.model_construct(
            email=body.email, name=body.name, username=body.username, rootRole=body.rootRole,
            sendEmail=True if body.sendEmail is None else body.sendEmail,
        ),
        who,
    )  # fmt: skip
    # as Unleash: the link with which the new user sets a password (`/new-user?token=`)
    base = str(request.base_url).rstrip("/")
    invite = f"{base}/new-user?token={secrets.token_hex(16)}"
    response = json_response(user.model_copy(update={"inviteLink": invite}), 201)
    response.headers["location"] = str(user.id)
    return response


@router.get("/api/admin/user-admin/admin-count", responses=ok(m.AdminCount))
async def admin_count(who: Admin, store: StoreDep) -> Response:
    require_root(store, who, (ADMIN_ROLE,), "count the admins")
    return json_response(store.admin_count())


@router.post(
    "/api/admin/user-admin/reset-password", responses=ok(m.ResetPasswordLink, 400, 404, 415)
)
async def reset_password(
    body: m.ResetPasswordRequest, who: Admin, store: StoreDep, request: Request, played: PlayedDep
) -> Response:
    """200 `{resetPasswordUrl}` for the user with that email; 404 "No user found" for none;
    429 for a second link to one user within a minute, as Unleash 8.2 (and 6.10, 7.6); 500
    instead as 5.12, whose limiter fails on it."""
    require_root(store, who, (ADMIN_ROLE,), "reset passwords")
    base = str(request.base_url).rstrip("/")
    try:
        link = store.reset_password_url(body.id, base, who)
    except Refusal as refused:
        if refused.status == 429 and played is not None and played.reset_link_limit_fails:
            message = "Cannot read properties of undefined (reading 'toString')"
            raise Refusal(500, "UnknownError", message) from None
        raise
    return json_response(m.ResetPasswordLink(resetPasswordUrl=link))


# endpoint 6 is declared before /user-admin/{id} so that "inactive" is not taken for an id
@router.get("/api/admin/user-admin/inactive", responses=ok(m.InactiveUsers))
async def inactive_users(who: Admin, store: StoreDep) -> Response:
    require_root(store, who, (ADMIN_ROLE,), "list inactive users")
    return await streamed_json(store, Store.inactive_users)


@router.post(
    "/api/admin/user-admin/inactive/delete",
    response_class=Response,
    responses=no_body(200, "Deleted", 400, 404, 415),
)
async def delete_inactive_users(body: m.Ids, who: Admin, store: StoreDep) -> Response:
    """200 with no body, as Unleash 8.2 answers; see `Store.delete_inactive_users`."""
    require_root(store, who, (ADMIN_ROLE,), "delete inactive users")
    store.delete_inactive_users(body.ids, who)
    return Response(status_code=200)


@router.get("/api/admin/user-admin/{id}", responses=ok(m.User, 400, 404))
async def get_user(id: PathId, who: Admin, store: StoreDep) -> Response:
    require_root(store, who, (ADMIN_ROLE,), "read users")
    return json_response(store.get_user(id))


@router.delete(
    "/api/admin/user-admin/{id}",
    response_class=Response,
    responses=no_body(200, "Deleted", 400, 404),
)
async def delete_user(id: PathId, who: Admin, store: StoreDep) -> Response:
    """200 with no body, as Unleash 8.2; 404 for an unknown id."""
    require_root(store, who, (ADMIN_ROLE,), "delete users")
    store.delete_user(id, who)
    return Response(status_code=200)


@router.put("/api/admin/user-admin/{id}", responses=ok(m.User, 400, 404, 409, 415))
async def update_user(id: PathId, body: m.UpdateUser, who: Admin, store: StoreDep) -> Response:
    require_root(store, who, (ADMIN_ROLE,), "update users")
    return json_response(store.update_user(id, body, who))
