"""Users: the current user, the list, one user, creating (limited to so many a minute, as
Unleash limits it), updating and deleting, the admin count, password reset links, inactive users
and deleting them."""

from __future__ import annotations

import math
import secrets
import time

from pydantic import BaseModel, ConfigDict, field_validator
from starlette.responses import Response

from app.api import models as m
from sandbox.responses import json_response, streamed_json
from sandbox.routes.answers import Answer, no_body, ok
from sandbox.routes.deps import require_root
from sandbox.routes.endpoint import PATH_ID, Area, Call, Endpoint
from sandbox.store import ADMIN_ROLE, Refusal, Store


async def current_user(call: Call[None]) -> Response:
    return json_response(call.store.current_user(call.who))


async def list_users(call: Call[None]) -> Response:
    require_root(call.store, call.who, (ADMIN_ROLE,), "list users")
    return json_response(call.store.list_users())


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

    username: m.OneLine | None = None
    email: m.OneLine | None = None
    name: m.OneLine | None = None
    password: str | None = None
    rootRole: m.Int64 | m.RootRoleName
    sendEmail: bool | None = None

    @field_validator("rootRole", mode="before")
    @classmethod
    def _within_int64(cls, value: object) -> object:
        """An integer past `m.INT64` as one error of the field, not one per member of the
        union (the union still bounds it, and the document says so)."""
        if isinstance(value, int) and not isinstance(value, bool):
            problem = m.int64_problem(value)
            if problem:
                raise ValueError(problem)
        return value


async def create_user(call: Call[NewUser]) -> Response:
    """201 with the user, its `inviteLink` and `emailSent`, and `Location: <id>`, as Unleash
    8.2; 429 past the creation limit (`WindowLimit`). The invite link is made up: the sandbox
    has no page to set a password on."""
    store, who, body, request = call.store, call.who, call.body, call.request
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


async def admin_count(call: Call[None]) -> Response:
    require_root(call.store, call.who, (ADMIN_ROLE,), "count the admins")
    return json_response(call.store.admin_count())


async def reset_password(call: Call[m.ResetPasswordRequest]) -> Response:
    """200 `{resetPasswordUrl}` for the user with that email; 404 "No user found" for none;
    429 for a second link to one user within a minute, as Unleash 8.2 (and 6.10, 7.6); 500
    instead as 5.12, whose limiter fails on it."""
    store, who, played = call.store, call.who, call.played
    require_root(store, who, (ADMIN_ROLE,), "reset passwords")
    base = str(call.request.base_url).rstrip("/")
    try:
        link = store.reset_password_url(call.body.id, base, who)
    except Refusal as refused:
        if refused.status == 429 and played is not None and played.reset_link_limit_fails:
            message = "Cannot read properties of undefined (reading 'toString')"
            raise Refusal(500, "UnknownError", message) from None
        raise
    return json_response(m.ResetPasswordLink(resetPasswordUrl=link))


async def inactive_users(call: Call[None]) -> Response:
    require_root(call.store, call.who, (ADMIN_ROLE,), "list inactive users")
    return await streamed_json(call.store, Store.inactive_users)


async def delete_inactive_users(call: Call[m.Ids]) -> Response:
    """200 with no body, as Unleash 8.2 answers; see `Store.delete_inactive_users`."""
    require_root(call.store, call.who, (ADMIN_ROLE,), "delete inactive users")
    call.store.delete_inactive_users(call.body.ids, call.who)
    return Response(status_code=200)


async def get_user(call: Call[None]) -> Response:
    require_root(call.store, call.who, (ADMIN_ROLE,), "read users")
    return json_response(call.store.get_user(call.value("id", int)))


async def delete_user(call: Call[None]) -> Response:
    """200 with no body, as Unleash 8.2; 404 for an unknown id."""
    require_root(call.store, call.who, (ADMIN_ROLE,), "delete users")
    call.store.delete_user(call.value("id", int), call.who)
    return Response(status_code=200)


async def update_user(call: Call[m.UpdateUser]) -> Response:
    require_root(call.store, call.who, (ADMIN_ROLE,), "update users")
    return json_response(call.store.update_user(call.value("id", int), call.body, call.who))


USERS, USER = "/api/admin/user-admin", "/api/admin/user-admin/{id}"
#: as Unleash answers past the creation limit
TOO_MANY_USERS = Answer(
    "Too many users created in the window (as Unleash: an HTML text); Retry-After says when to "
    "retry",
    media_type="text/html",
    schema={"type": "string"},
)

AREA = Area(
    "users",
    (
        Endpoint("GET", "/api/admin/user", current_user, ok(m.CurrentUser)),
        Endpoint("GET", USERS, list_users, ok(m.UserList)),
        Endpoint("POST", USERS, create_user,
                 {**ok(m.User, 400, 409, 415, status=201), 429: TOO_MANY_USERS}, body=NewUser),
        Endpoint("GET", USERS + "/admin-count", admin_count, ok(m.AdminCount)),
        Endpoint("POST", USERS + "/reset-password", reset_password,
                 ok(m.ResetPasswordLink, 400, 404, 415, 429), body=m.ResetPasswordRequest),
        # endpoint 6 comes before /user-admin/{id} so that "inactive" is not taken for an id
        Endpoint("GET", USERS + "/inactive", inactive_users, ok(m.InactiveUsers)),
        Endpoint("POST", USERS + "/inactive/delete", delete_inactive_users,
                 no_body(200, "Deleted", 400, 404, 415), body=m.Ids),
        Endpoint("GET", USER, get_user, ok(m.User, 400, 404), params=(PATH_ID,)),
        Endpoint("DELETE", USER, delete_user, no_body(200, "Deleted", 400, 404),
                 params=(PATH_ID,)),
        Endpoint("PUT", USER, update_user, ok(m.User, 400, 404, 409, 415), body=m.UpdateUser,
                 params=(PATH_ID,)),
    ),
)  # fmt: skip
