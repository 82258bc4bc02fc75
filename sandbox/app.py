"""The sandbox's HTTP face: FastAPI over `Store`, with Unleash's paths and error bodies.

FastAPI (rather than bare Starlette) because the request models already exist as pydantic
models in `app.api.models`: FastAPI validates with them and writes the OpenAPI document served at
`/docs/openapi.json` from the same classes, so the sandbox cannot drift from the wire contract.
The routes live in `sandbox.routes`, one router per area; this module puts them together with
the error handlers and the OpenAPI document, and `wrap` puts the content-type guard in front.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from app import __version__
from app.api import models as m
from sandbox.responses import JsonContentTypeGuard, error_response, validation_error
from sandbox.routes import (
    answers,
    archive,
    context,
    features,
    metrics,
    projects,
    search,
    server_info,
    users,
)
from sandbox.routes import groups as groups_area
from sandbox.routes.server_info import SERVER_NAME
from sandbox.routes.users import WindowLimit
from sandbox.store import Refusal, Store
from sandbox.versions import Played


async def _refusal(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, Refusal)
    return error_response(exc, request.app.state.played)


async def _invalid(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    refusal = validation_error(exc.errors())
    played: Played | None = request.app.state.played
    if played is not None and refusal.by == "checks" and _checked_by_handler(request, exc.errors()):
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
    if exc.status_code == 404:
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


def create_app(
    store: Store,
    *,
    groups: bool = True,
    create_user_limit: tuple[int, float] = (20, 60.0),
    played: Played | None = None,
) -> FastAPI:
    """The sandbox's ASGI app. `groups=False` leaves out the groups endpoints, as open-source
    Unleash does (404), so a client's handling of that can be tried without Unleash.
    `create_user_limit`: how many users `POST /api/admin/user-admin` creates in how many
    seconds before it answers 429 (Unleash: 20 a minute; 0 users: no limit). `played`: the
    open-source Unleash release it plays (`sandbox.versions`; no groups then)."""
    areas = [server_info, users, *([groups_area] if groups and played is None else []),
             projects, features, context, metrics, archive, search]  # fmt: skip
    app = FastAPI(
        # the areas' routes themselves, as their routers built them (their tags and error
        # answers included; the app adds no prefix, dependency or override to them). Not
        # `include_router`: FastAPI builds every included route a second time, for the app, on
        # the first request that reaches its router, and the GUI's capability probe reaches
        # them all: 0.1-0.15 s of its wait for the first data (`bench/sandbox_boot.py`)
        routes=[route for area in areas for route in area.router.routes],
        title=SERVER_NAME,
        version=__version__,
        description="The flagdesk sandbox: the admin and client-metrics API on SQLite.",
        openapi_url="/docs/openapi.json",
        docs_url=None,  # Swagger UI pulls its assets from a CDN; the sandbox works offline
        redoc_url=None,
    )
    app.state.store = store
    app.state.played = played
    app.state.create_user_limit = WindowLimit(*create_user_limit)
    app.add_exception_handler(Refusal, _refusal)
    app.add_exception_handler(RequestValidationError, _invalid)
    app.add_exception_handler(StarletteHTTPException, _http)

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(
                title=app.title,
                version=app.version,
                description=app.description,
                routes=[answers.documented(route) for route in app.routes],
            )
            # FastAPI lists a 422 for every route with parameters; this app's handler of
            # validation errors (`_invalid`) answers 400, as Unleash does, and never 422: the
            # routes declare their 400 (`sandbox.routes.answers`)
            for operations in schema.get("paths", {}).values():
                for operation in operations.values():
                    operation.get("responses", {}).pop("422", None)
            for unused in ("HTTPValidationError", "ValidationError"):
                schema.get("components", {}).get("schemas", {}).pop(unused, None)
            extra = m.BulkMetrics.model_json_schema(ref_template="#/components/schemas/{model}")
            components = schema.setdefault("components", {}).setdefault("schemas", {})
            components.update(extra.pop("$defs", {}))
            components["BulkMetrics"] = extra
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    return app


def wrap(app: FastAPI) -> Callable[[Scope, Receive, Send], Awaitable[None]]:
    """The ASGI callable to serve: the app behind the content-type guard."""
    return JsonContentTypeGuard(app, app.state.played)
