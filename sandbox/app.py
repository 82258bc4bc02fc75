"""The sandbox's HTTP face: Starlette over `Store`, with Unleash's paths and error bodies.

The routes live in `sandbox.routes`, one module per area, each endpoint declared once
(`sandbox.routes.endpoint`): its Starlette route and its part of the OpenAPI document served at
`/docs/openapi.json` (`sandbox.openapi`) are both made from that declaration, and its body is
validated with the pydantic models of `app.api.models`, so the sandbox cannot drift from the wire
contract. This module puts the areas together with the error handlers and the document, and
`wrap` puts the content-type guard in front. Not FastAPI: its import and its reading of every
route's signature were about 40% of the boot the GUI waits for (docs/performance.md, "The
sandbox's boot"). What FastAPI gave is kept without it: validation is pydantic's with the same
models (`app.api.models`), and the document is still made from the declarations. The groups
area is served only when groups are (`create_app(groups=...)`, and never for a played release);
the roles area (custom roles, the permission catalogue), the service accounts area, the
banners area and the login history (Enterprise's too) never for a played release.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import Receive, Scope, Send

from app import __version__
from sandbox.responses import JsonContentTypeGuard, error_response, validation_error
from sandbox.routes import (
    api_tokens,
    archive,
    context,
    features,
    metrics,
    personal_tokens,
    projects,
    search,
    server_info,
    users,
)
from sandbox.routes import banners as banners_area
from sandbox.routes import batch_import as batch_import_area
from sandbox.routes import custom_strategies as custom_strategies_area
from sandbox.routes import dependencies as dependencies_area
from sandbox.routes import event_search_body as event_search_body_area
from sandbox.routes import events as events_area
from sandbox.routes import export as export_area
from sandbox.routes import flag_config as flag_config_area
from sandbox.routes import groups as groups_area
from sandbox.routes import instance as instance_area
from sandbox.routes import logins as logins_area
from sandbox.routes import project_access as project_access_area
from sandbox.routes import roles as roles_area
from sandbox.routes import segments as segments_area
from sandbox.routes import service_accounts as service_accounts_area
from sandbox.routes import tags as tags_area
from sandbox.routes.endpoint import Area, RequestInvalid
from sandbox.routes.server_info import SERVER_NAME
from sandbox.routes.users import WindowLimit
from sandbox.store import Refusal, Store
from sandbox.versions import Played


async def _refusal(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, Refusal)
    return error_response(exc, request.app.state.played)


async def _invalid(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestInvalid)
    refusal = validation_error(exc.errors)
    played: Played | None = request.app.state.played
    if played is not None and refusal.by == "checks" and _checked_by_handler(request, exc.errors):
        refusal.by = "handler"  # and as a handler's: no path in the details
        refusal.details = [{"message": d["message"]} for d in refusal.details or []]
    return error_response(refusal, played)


def _checked_by_handler(request: Request, errors: Sequence[Any]) -> bool:
    """Whether Unleash checks what is wrong in the route's handler rather than against the
    request's schema (which decides the error body's shape, `sandbox.responses`): a context
    field's name (its joi schema: "must be URL friendly")."""
    return request.url.path == "/api/admin/context" and all(
        tuple(err.get("loc", ())) == ("body", "name") for err in errors
    )


async def _http(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StarletteHTTPException)
    played = request.app.state.played
    # a path served with other methods: Unleash knows no such route (measured on 8.2: `POST
    # /api/admin/events/:name`, `DELETE /api/admin/event-creators` answer 404), so a played
    # release answers its 404; unplayed, the sandbox says 405
    if exc.status_code == 404 or (exc.status_code == 405 and played is not None):
        err = Refusal(
            404,
            "NotFoundError",
            f"The path you were looking for ({request.url.path}) is not available.",
        )
    elif exc.status_code == 405:
        err = Refusal(
            405,
            "MethodNotAllowed",
            f"{request.method} is not allowed on {request.url.path}",
        )
    else:
        err = Refusal(exc.status_code, "HttpError", str(exc.detail))
    err.by = "checks"
    return error_response(err, request.app.state.played)


DESCRIPTION = "The flagdesk sandbox: the admin and client-metrics API on SQLite."
OPENAPI_PATH = "/docs/openapi.json"


def create_app(
    store: Store,
    *,
    groups: bool = True,
    create_user_limit: tuple[int, float] = (20, 60.0),
    played: Played | None = None,
) -> Starlette:
    """The sandbox's ASGI app. `groups=False` leaves out the groups endpoints, as open-source
    Unleash does (404), so a client's handling of that can be tried without Unleash.
    `create_user_limit`: how many users `POST /api/admin/user-admin` creates in how many
    seconds before it answers 429 (Unleash: 20 a minute; 0 users: no limit). `played`: the
    open-source Unleash release it plays (`sandbox.versions`; no groups then)."""
    areas = [server_info, users, *([groups_area] if groups and played is None else []),
             projects, features, context, metrics, archive, search,
             api_tokens, personal_tokens]  # fmt: skip
    # roles (issue 36): Enterprise's, so not on a played open-source release (404 there)
    areas += [roles_area] if played is None else []
    # service accounts (Unleash Enterprise): none on a played open-source release (404)
    if played is None:
        areas.append(service_accounts_area)
    # project access (Pro and Enterprise): served with the groups, never for a played release
    if groups and played is None:
        areas.append(project_access_area)
    # flag extras (issue 37, slice 2): open source in 8.2, so served when playing a release too
    areas += [segments_area, tags_area, dependencies_area, custom_strategies_area]
    # flag configuration (issue 37 slice 1): open source, served as every release has it
    areas.append(flag_config_area)
    areas.append(export_area)  # the batch export (issue 37): open source since 4.22
    areas.append(batch_import_area)  # the batch validate and import: open source since 4.22
    # instance settings (issue 38): statistics, maintenance, CORS (open source); banners
    # (Enterprise's: 404 on a played open-source release)
    areas += [instance_area, *([banners_area] if played is None else [])]
    # login history (issue 38): Enterprise's, so not on a played open-source release (404)
    areas += [logins_area] if played is None else []
    areas.append(events_area)  # the event log (issue 38): open source, every release
    if played is not None and not played.since(7, 0):  # its search by body: 5.x and 6.x alone
        areas.append(event_search_body_area)
    served = [area.AREA for area in areas]
    routes: list[BaseRoute] = [e.route() for area in served for e in area.endpoints]
    routes.append(Route(OPENAPI_PATH, _openapi, methods=["GET"]))
    app = Starlette(
        routes=routes,
        exception_handlers={
            Refusal: _refusal,
            RequestInvalid: _invalid,
            StarletteHTTPException: _http,
        },
    )
    app.state.store = store
    app.state.played = played
    app.state.create_user_limit = WindowLimit(*create_user_limit)
    app.state.areas = served
    app.state.openapi = None
    return app


def openapi(app: Starlette) -> dict[str, Any]:
    """The app's OpenAPI document, made the first time it is asked for (`sandbox.openapi`)."""
    if app.state.openapi is None:
        from sandbox.openapi import document  # only for this: not on the way to the first data

        areas: list[Area] = app.state.areas
        app.state.openapi = document(
            areas, title=SERVER_NAME, version=__version__, description=DESCRIPTION
        )
    schema: dict[str, Any] = app.state.openapi
    return schema


async def _openapi(request: Request) -> Response:
    return JSONResponse(openapi(request.app))


def wrap(app: Starlette) -> Callable[[Scope, Receive, Send], Awaitable[None]]:
    """The ASGI callable to serve: the app behind the content-type guard."""
    return JsonContentTypeGuard(app, app.state.played)
