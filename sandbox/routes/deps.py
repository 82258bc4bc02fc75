"""Who a request is made as (`admin_side`, `client_side`: an endpoint's side, checked before
its parameters and body), the root roles changes need, and the 404 of a route a release lacks.

Plain functions, called by the endpoint as it serves (`sandbox.routes.endpoint`) on the
event-loop thread: every Store call must stay there (one SQLite connection, no interleaving).
"""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.requests import Request

from sandbox.store import ADMIN_ROLE, EDITOR_ROLE, Principal, Refusal, Store
from sandbox.versions import Played


def absent_path() -> HTTPException:
    """What a route the played release does not have answers: the 404 of an unknown path."""
    return HTTPException(404)


def _token(request: Request) -> str | None:
    value = request.headers.get("authorization")
    if not value:
        return None
    value = value.strip()
    if value[:7].lower() == "bearer ":
        value = value[7:].strip()
    return value or None


#: what the Unleash releases answer (all four alike): no token on the admin API (with the
#: login's `path`, `type` and `defaultHidden`), an unknown token there, a token of the wrong
#: kind, and no or an unknown token on the client API
UNLEASH_NO_TOKEN = (
    "You must log in to use Unleash. Your request had no authorization header, so we could "
    "not authorize you. Try logging in at /auth/simple/login"
)
UNLEASH_LOGIN = {"path": "/auth/simple/login", "type": "password", "defaultHidden": False}
UNLEASH_UNKNOWN_TOKEN = "You must log in to use Unleash."
UNLEASH_WRONG_KIND = "invalid token: expected a different token type for this endpoint"
UNLEASH_CLIENT_API = (
    "This endpoint requires an API token. Please add an authorization header to your request "
    "with a valid token"
)


def admin_side(request: Request, store: Store, played: Played | None) -> Principal:
    """The caller of the admin API, or the 401/403 Unleash answers (the release's, playing one)."""
    secret = _token(request)
    if secret is None:
        if played is not None:
            raise Refusal(401, "AuthenticationRequired", UNLEASH_NO_TOKEN, by="checks",
                          extra=UNLEASH_LOGIN)  # fmt: skip
        raise Refusal(
            401,
            "AuthenticationRequired",
            "You must log in or send an API token in the Authorization header.",
        )
    principal = store.authenticate(secret)
    if principal is None:
        if played is not None:
            raise Refusal(401, "UnauthorizedError", UNLEASH_UNKNOWN_TOKEN, by="checks")
        raise Refusal(401, "AuthenticationRequired", "The token is not valid.")
    if principal.kind == "client":
        if played is not None:
            raise Refusal(403, "NoAccessError", UNLEASH_WRONG_KIND, by="bare")
        raise Refusal(
            403,
            "NoAccessError",
            "Expected a different token type for this endpoint: a client token cannot use "
            "the admin API; use an admin API token or a personal access token.",
        )
    return principal


def client_side(request: Request, store: Store, played: Played | None) -> Principal:
    """The caller of the client API (sending metrics), or the 401/403 Unleash answers."""
    secret = _token(request)
    principal = store.authenticate(secret) if secret is not None else None
    if principal is None and played is not None:
        raise Refusal(401, "AuthenticationRequired", UNLEASH_CLIENT_API, by="bare")
    if secret is None:
        raise Refusal(401, "AuthenticationRequired", "The client API needs a client token.")
    if principal is None:
        raise Refusal(401, "AuthenticationRequired", "The token is not valid.")
    if principal.kind == "admin" and played is not None and played.admin_token_sends_metrics:
        return principal  # before 8.0 an admin API token may send metrics as well
    if principal.kind != "client":
        if played is not None:
            raise Refusal(403, "NoAccessError", UNLEASH_WRONG_KIND, by="bare")
        raise Refusal(
            403,
            "NoAccessError",
            "Expected a different token type for this endpoint: "
            f"{'an admin API' if principal.kind == 'admin' else 'a personal access'} token "
            "cannot send metrics; use a client (backend) token.",
        )
    return principal


#: the root roles that may change flags and context fields (Unleash 8.2: Admin and Editor)
CHANGERS = (ADMIN_ROLE, EDITOR_ROLE)


#: the Unleash permission each change below the Admin role needs (named in its 403's
#: `permissions`, which the sandbox sends when it plays a release); the Admin role's: ADMIN
PERMISSIONS = {
    "create flags": "CREATE_FEATURE",
    "archive flags": "DELETE_FEATURE",
    "delete flags": "DELETE_FEATURE",
    "revive flags": "UPDATE_FEATURE",
    "change strategies": "CREATE_FEATURE_STRATEGY",
    "create context fields": "CREATE_CONTEXT_FIELD",
    "update context fields": "UPDATE_CONTEXT_FIELD",
    "delete context fields": "DELETE_CONTEXT_FIELD",
}


def require_root(store: Store, who: Principal, allowed: tuple[int, ...], doing: str) -> None:
    """403 unless `who` holds one of the `allowed` root roles. Called in the route, after the
    body is validated (a bad body is a 400 whoever sends it)."""
    if store.root_role_of_caller(who) not in allowed:
        names = " or ".join({ADMIN_ROLE: "Admin", EDITOR_ROLE: "Editor"}[r] for r in allowed)
        permission = PERMISSIONS.get(doing, "ADMIN") if EDITOR_ROLE in allowed else "ADMIN"
        raise Refusal(403, "NoAccessError", f"You need the {names} root role to {doing}.",
                      by="checks", extra={"permissions": [permission]})  # fmt: skip


# flag extras (issue 37, slice 2): the permissions its changes need below the Admin role
PERMISSIONS.update({
    "create segments": "CREATE_SEGMENT",
    "update segments": "UPDATE_SEGMENT",
    "delete segments": "DELETE_SEGMENT",
    "change a strategy's segments": "UPDATE_FEATURE_STRATEGY",
    "create tag types": "CREATE_TAG_TYPE",
    "update tag types": "UPDATE_TAG_TYPE",
    "delete tag types": "DELETE_TAG_TYPE",
    "create tags": "CREATE_TAG",
    "delete tags": "DELETE_TAG",
    "tag flags": "UPDATE_FEATURE",
    "change dependencies": "UPDATE_FEATURE_DEPENDENCY",
    "create strategies": "CREATE_STRATEGY",
    "update strategies": "UPDATE_STRATEGY",
    "delete strategies": "DELETE_STRATEGY",
})  # fmt: skip
