"""What routes depend on: the store, and who the request is made as.

Dependencies are `async def` on purpose: FastAPI runs plain `def` ones on a worker thread, and
every Store call must stay on the event-loop thread (one SQLite connection, no interleaving).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, HTTPException, Path, Request

from sandbox.store import ADMIN_ROLE, EDITOR_ROLE, Principal, Refusal, Store
from sandbox.versions import Played


async def the_store(request: Request) -> Store:
    """The store the app serves (`create_app` puts it in `app.state`)."""
    store: Store = request.app.state.store
    return store


StoreDep = Annotated[Store, Depends(the_store)]


async def the_played(request: Request) -> Played | None:
    """The Unleash release the sandbox plays (`flagdesk serve --as-version`), or None."""
    played: Played | None = request.app.state.played
    return played


PlayedDep = Annotated[Played | None, Depends(the_played)]


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


async def admin_side(request: Request, store: StoreDep) -> Principal:
    secret = _token(request)
    if secret is None:
        raise Refusal(
            401,
            "AuthenticationRequired",
            "You must log in or send an API token in the Authorization header.",
        )
    principal = store.authenticate(secret)
    if principal is None:
        raise Refusal(401, "AuthenticationRequired", "The token is not valid.")
    if principal.kind == "client":
        raise Refusal(
            403,
            "NoAccessError",
            "Expected a different token type for this endpoint: a client token cannot use "
            "the admin API; use an admin API token or a personal access token.",
        )
    return principal


async def client_side(request: Request, store: StoreDep) -> Principal:
    secret = _token(request)
    if secret is None:
        raise Refusal(401, "AuthenticationRequired", "The client API needs a client token.")
    principal = store.authenticate(secret)
    if principal is None:
        raise Refusal(401, "AuthenticationRequired", "The token is not valid.")
    played: Played | None = request.app.state.played
    if principal.kind == "admin" and played is not None and played.admin_token_sends_metrics:
        return principal  # before 8.0 an admin API token may send metrics as well
    if principal.kind != "client":
        raise Refusal(
            403,
            "NoAccessError",
            "Expected a different token type for this endpoint: "
            f"{'an admin API' if principal.kind == 'admin' else 'a personal access'} token "
            "cannot send metrics; use a client (backend) token.",
        )
    return principal


#: a user's or group's id in a path: one the database can hold, else 400 (Unleash 8.2 answers
#: 500 past 2^31 - 1; the sandbox, 404 for any it has not)
PathId = Annotated[int, Path(ge=-(2**63), le=2**63 - 1)]

Admin = Annotated[Principal, Depends(admin_side)]
Client = Annotated[Principal, Depends(client_side)]


#: the root roles that may change flags and context fields (Unleash 8.2: Admin and Editor)
CHANGERS = (ADMIN_ROLE, EDITOR_ROLE)


def require_root(store: Store, who: Principal, allowed: tuple[int, ...], doing: str) -> None:
    """403 unless `who` holds one of the `allowed` root roles. Called in the route, after the
    body is validated (a bad body is a 400 whoever sends it)."""
    if store.root_role_of(who.user_id) not in allowed:
        names = " or ".join({ADMIN_ROLE: "Admin", EDITOR_ROLE: "Editor"}[r] for r in allowed)
        raise Refusal(403, "NoAccessError", f"You need the {names} root role to {doing}.")
