"""The sandbox's HTTP face: FastAPI routes over `Store`, with Unleash's paths and error bodies.

FastAPI (rather than bare Starlette) because the request models already exist as pydantic
models in `app.api.models`: FastAPI validates with them and writes the OpenAPI document served at
`/docs/openapi.json` from the same classes, so the sandbox cannot drift from the wire contract.
The one hot path, bulk metrics, takes the raw request so it can enforce the body limit while
streaming and validate with pydantic's JSON parser in one pass.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Iterator, Sequence
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel, ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response, StreamingResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from app import __version__
from app.api import models as m
from sandbox.store import (
    ADMIN_ROLE,
    EDITOR_ROLE,
    Principal,
    Refusal,
    Store,
)

#: Unleash's default body limit for the client API: 100 kB, 102,400 bytes accepted.
BULK_BODY_LIMIT = 102_400
SERVER_NAME = "flagdesk sandbox"
#: chunks of a streamed answer read ahead of the client (each a few hundred kB)
STREAM_AHEAD = 4


def json_response(body: BaseModel | list[Any], status: int = 200) -> Response:
    if isinstance(body, list):
        content = b"[" + b",".join(item.model_dump_json(exclude_unset=True).encode()
                                   for item in body) + b"]"  # fmt: skip
    else:
        content = body.model_dump_json(exclude_unset=True).encode()
    return Response(content, status_code=status, media_type="application/json")


class ChunkPump:
    """The chunks of an answer, made on a thread of its own and handed to the event loop.

    Why a thread with a read-only connection of its own (rather than pages read on the loop
    thread, a short query each between awaits): the answer is read in one transaction, so it is
    one consistent snapshot even while other requests write (WAL lets a reader run beside the
    writer); the loop keeps serving other requests while 100,000 rows are read and encoded
    (SQLite lets go of the GIL while it steps); and no statement is ever left open on the
    loop's connection across an await, where another request's write transaction would
    interleave with it. The producer runs at most `ahead` chunks in front of the client, and
    stops (closing its generator, then calling `on_end`) as soon as `stop()` is called: when
    the response ends, complete or cut off by a client that went away.
    """

    def __init__(
        self,
        produce: Callable[[], Iterator[bytes]],
        *,
        ahead: int = STREAM_AHEAD,
        on_end: Callable[[], object] | None = None,
    ) -> None:
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[bytes | BaseException | None] = asyncio.Queue()
        self._room = threading.Semaphore(ahead)
        self._stopped = threading.Event()
        self._thread = threading.Thread(
            target=self._run, args=(produce, on_end), name="sandbox-answer", daemon=True
        )
        self._thread.start()

    def _run(
        self, produce: Callable[[], Iterator[bytes]], on_end: Callable[[], object] | None
    ) -> None:
        try:
            chunks = produce()
            try:
                for chunk in chunks:
                    self._room.acquire()
                    if self._stopped.is_set():
                        return
                    self._hand(chunk)
            finally:
                if isinstance(chunks, Generator):
                    chunks.close()  # ends its read transaction now, not when collected
            self._hand(None)
        except BaseException as exc:  # handed over: the response raises it on the loop
            self._hand(exc)
        finally:
            if on_end is not None:
                on_end()

    def _hand(self, item: bytes | BaseException | None) -> None:
        try:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, item)
        except RuntimeError:  # the loop is closed: nobody is left to read
            self._stopped.set()

    async def next(self) -> bytes | None:
        """The next chunk; None after the last; raises what the producer raised."""
        item = await self._queue.get()
        if isinstance(item, BaseException):
            raise item
        if item is not None:
            self._room.release()
        return item

    async def chunks(self, first: bytes) -> AsyncIterator[bytes]:
        yield first
        while (chunk := await self.next()) is not None:
            yield chunk

    def stop(self) -> None:
        """Make the producer stop at its next chunk (waking it if it waits for room)."""
        self._stopped.set()
        self._room.release()


class PumpedResponse(StreamingResponse):
    """A JSON answer streamed from a `ChunkPump`, which is stopped however the response ends."""

    def __init__(self, pump: ChunkPump, first: bytes) -> None:
        super().__init__(pump.chunks(first), media_type="application/json")
        self.pump = pump

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.pump.stop()


async def streamed_json(store: Store, answer: Callable[[Store], Iterator[bytes]]) -> Response:
    """An answer of up to 100,000 items, streamed as `answer` makes its chunks, so the client
    parses the first ones while the server reads the rest. `answer` runs on a `ChunkPump`
    thread over a read-only connection of its own (closed when it ends); the first chunk is
    awaited before the response starts, so a failure to read is still a plain 500. A database
    in memory cannot be opened twice: there `answer` runs on the loop thread, whole, at once."""
    reader = store.reader()
    if reader is None:
        return Response(b"".join(answer(store)), media_type="application/json")
    try:
        pump = ChunkPump(lambda: answer(reader), on_end=reader.conn.close)
    except BaseException:
        reader.conn.close()
        raise
    try:
        first = await pump.next()
    except BaseException:  # the producer failed, or this request was cancelled: let it go
        pump.stop()
        raise
    if first is None:  # nothing at all (an answer always has its envelope)
        return Response(b"", media_type="application/json")
    return PumpedResponse(pump, first)


def error_response(error: Refusal) -> Response:
    body = m.ErrorBody(id=str(uuid.uuid4()), name=error.name, message=error.message)
    if error.details is not None:
        body.details = [m.ErrorDetail(**d) for d in error.details]
    return json_response(body, error.status)


def json_path(loc: Sequence[int | str]) -> str:
    """pydantic's error location as a JSON path: ("body", "users", 0, "user", "id") becomes
    `$.users[0].user.id`; path and query parameters are named as such."""
    if loc and loc[0] in ("path", "query", "header"):
        return f"{loc[0]} parameter {'.'.join(str(x) for x in loc[1:])}"
    parts = list(loc[1:] if loc and loc[0] == "body" else loc)
    out = "$"
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def validation_error(errors: Sequence[Any], what: str = "request") -> Refusal:
    details = []
    for err in errors:
        path = json_path(err.get("loc", ()))
        if err.get("type") == "json_invalid":
            # the location of a JSON syntax error is a character offset, not a path
            where = err.get("loc", ())[-1:] or ("?",)
            path = "$"
            reason = err.get("ctx", {}).get("error", err.get("msg"))
            message = f"Malformed JSON at character {where[0]}: {reason}"
        elif err.get("type") == "missing":
            message = f"{path} is required"
        else:
            message = f"{path}: {str(err.get('msg', '')).removeprefix('Value error, ')}"
        details.append({"message": message, "path": path})
    count = len(details)
    first = details[0]["message"] if details else "invalid"
    summary = f"The {what} is invalid: {first}" + (
        f" (and {count - 1} more problem{'s' * (count > 2)})" if count > 1 else ""
    )
    return Refusal(400, "ValidationError", summary, details)


class JsonContentTypeGuard:
    """415 `ContentTypeerror` for a body-carrying request whose content type is not JSON.

    Pure ASGI and first in line, so it answers before routing reads or parses the body.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] in ("POST", "PUT", "PATCH"):
            content_type = ""
            for key, value in scope["headers"]:
                if key == b"content-type":
                    content_type = value.decode("latin-1")
                    break
            media = content_type.split(";", 1)[0].strip().lower()
            if media != "application/json" and not media.endswith("+json"):
                shown = media or "no content type"
                response = error_response(
                    Refusal(
                        415,
                        "ContentTypeerror",
                        f"We do not accept {shown}, we accept [application/json]",
                    )
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _token(request: Request) -> str | None:
    value = request.headers.get("authorization")
    if not value:
        return None
    value = value.strip()
    if value[:7].lower() == "bearer ":
        value = value[7:].strip()
    return value or None


# ---------------------------------------------------------------------- auth
# Dependencies are `async def` on purpose: FastAPI runs plain `def` ones on a worker thread, and
# every Store call must stay on the event-loop thread (one SQLite connection, no interleaving).


def _store(request: Request) -> Store:
    store: Store = request.app.state.store
    return store


async def admin_side(request: Request) -> Principal:
    secret = _token(request)
    if secret is None:
        raise Refusal(
            401,
            "AuthenticationRequired",
            "You must log in or send an API token in the Authorization header.",
        )
    principal = _store(request).authenticate(secret)
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


async def client_side(request: Request) -> Principal:
    secret = _token(request)
    if secret is None:
        raise Refusal(401, "AuthenticationRequired", "The client API needs a client token.")
    principal = _store(request).authenticate(secret)
    if principal is None:
        raise Refusal(401, "AuthenticationRequired", "The token is not valid.")
    if principal.kind != "client":
        raise Refusal(
            403,
            "NoAccessError",
            "Expected a different token type for this endpoint: "
            f"{'an admin API' if principal.kind == 'admin' else 'a personal access'} token "
            "cannot send metrics; use a client (backend) token.",
        )
    return principal


Admin = Annotated[Principal, Depends(admin_side)]
Client = Annotated[Principal, Depends(client_side)]


def create_app(store: Store, *, groups: bool = True) -> FastAPI:
    """The sandbox's ASGI app. `groups=False` leaves out the groups endpoints, as open-source
    Unleash does (404), so a client's handling of that can be tried without Unleash."""
    app = FastAPI(
        title=SERVER_NAME,
        version=__version__,
        description="The flagdesk sandbox: the admin and client-metrics API on SQLite.",
        openapi_url="/docs/openapi.json",
        docs_url=None,  # Swagger UI pulls its assets from a CDN; the sandbox works offline
        redoc_url=None,
    )
    app.state.store = store

    # ------------------------------------------------------------------ errors

    @app.exception_handler(Refusal)
    async def _api_error(_: Request, exc: Refusal) -> Response:
        return error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> Response:
        return error_response(validation_error(exc.errors()))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> Response:
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
        return error_response(err)

    def require_root(who: Principal, allowed: tuple[int, ...], doing: str) -> None:
        if store.root_role_of(who.user_id) not in allowed:
            names = " or ".join({ADMIN_ROLE: "Admin", EDITOR_ROLE: "Editor"}[r] for r in allowed)
            raise Refusal(403, "NoAccessError", f"You need the {names} root role to {doing}.")

    # ------------------------------------------------------------------ supporting routes

    @app.get("/health", tags=["server"])
    async def health() -> Response:
        return json_response(m.Health(health="GOOD"))

    @app.get("/api/admin/ui-config", tags=["server"])
    async def ui_config(_: Admin) -> Response:
        return json_response(
            m.UiConfig(
                name=SERVER_NAME,
                version=__version__,
                versionInfo=m.VersionInfo(current={"sandbox": __version__}),
                authenticationType="open-source",
            )
        )

    @app.get("/api/admin/user", tags=["users"])
    async def current_user(who: Admin) -> Response:
        return json_response(store.current_user(who))

    @app.get("/api/admin/user-admin", tags=["users"])
    async def list_users(who: Admin) -> Response:
        require_root(who, (ADMIN_ROLE,), "list users")
        return json_response(store.list_users())

    @app.post("/api/admin/user-admin", status_code=201, tags=["users"])
    async def create_user(body: m.CreateUser, who: Admin) -> Response:
        require_root(who, (ADMIN_ROLE,), "create users")
        user = store.create_user(body, who)
        response = json_response(user, 201)
        response.headers["location"] = f"user-admin/{user.id}"
        return response

    # endpoint 6 is declared before /user-admin/{id} so that "inactive" is not taken for an id
    @app.get("/api/admin/user-admin/inactive", tags=["users"])
    async def inactive_users(who: Admin) -> Response:
        require_root(who, (ADMIN_ROLE,), "list inactive users")
        return await streamed_json(store, Store.inactive_users)

    @app.get("/api/admin/user-admin/{id}", tags=["users"])
    async def get_user(id: int, who: Admin) -> Response:
        require_root(who, (ADMIN_ROLE,), "read users")
        return json_response(store.get_user(id))

    @app.put("/api/admin/user-admin/{id}", tags=["users"])
    async def update_user(id: int, body: m.UpdateUser, who: Admin) -> Response:
        require_root(who, (ADMIN_ROLE,), "update users")
        return json_response(store.update_user(id, body, who))

    if groups:

        @app.get("/api/admin/groups", tags=["groups"])
        async def list_groups(_: Admin) -> Response:
            return json_response(store.list_groups())

        @app.post("/api/admin/groups", status_code=201, tags=["groups"])
        async def create_group(body: m.CreateGroup, who: Admin) -> Response:
            require_root(who, (ADMIN_ROLE,), "create groups")
            return json_response(store.create_group(body, who), 201)

    @app.get("/api/admin/projects", tags=["projects"])
    async def list_projects(_: Admin) -> Response:
        return json_response(store.list_projects())

    @app.get("/api/admin/projects/{project}/features", tags=["features"])
    async def project_features(project: str, _: Admin) -> Response:
        return json_response(store.project_features(project))

    @app.post("/api/admin/projects/{project}/features", status_code=201, tags=["features"])
    async def create_feature(project: str, body: m.CreateFeature, who: Admin) -> Response:
        require_root(who, (ADMIN_ROLE, EDITOR_ROLE), "create flags")
        return json_response(store.create_feature(project, body, who), 201)

    @app.delete("/api/admin/projects/{project}/features/{name}", status_code=202, tags=["features"])
    async def archive_feature(project: str, name: str, who: Admin) -> Response:
        require_root(who, (ADMIN_ROLE, EDITOR_ROLE), "archive flags")
        store.archive_feature(project, name, who)
        return Response(status_code=202)

    @app.post(
        "/api/admin/projects/{project}/features/{feature}/environments/{environment}/strategies",
        tags=["features"],
    )
    async def add_strategy(
        project: str, feature: str, environment: str, body: m.CreateFeatureStrategy, who: Admin
    ) -> Response:
        require_root(who, (ADMIN_ROLE, EDITOR_ROLE), "change strategies")
        return json_response(store.add_strategy(project, feature, environment, body, who))

    @app.get("/api/admin/context", tags=["context"])
    async def list_context_fields(_: Admin) -> Response:
        return json_response(store.list_context_fields())

    @app.get("/api/admin/client-metrics/features/{name}", tags=["metrics"])
    async def feature_usage(name: str, _: Admin) -> Response:
        return json_response(store.feature_usage(name))

    @app.get("/api/admin/client-metrics/features/{name}/raw", tags=["metrics"])
    async def feature_metrics_raw(
        name: str, _: Admin, hoursBack: Annotated[int, Query(ge=1, le=24 * 366)] = 1
    ) -> Response:
        return json_response(store.feature_metrics_raw(name, hoursBack))

    # ------------------------------------------------------------------ the spec's operations

    @app.get("/api/admin/archive/features/{projectId}", tags=["archive"], deprecated=True)
    async def archived_features(projectId: str, _: Admin) -> Response:
        return await streamed_json(store, lambda reading: reading.archived_features(projectId))

    @app.get("/api/admin/personal-dashboard/{projectId}", tags=["dashboard"])
    async def personal_dashboard(projectId: str, who: Admin) -> Response:
        return json_response(store.dashboard(projectId, who))

    @app.get("/api/admin/context/{contextField}/strategies", tags=["context"])
    async def context_strategies(contextField: str, _: Admin) -> Response:
        return json_response(store.context_strategies(contextField))

    @app.post(
        "/api/client/metrics/bulk",
        status_code=202,
        tags=["metrics"],
        openapi_extra={
            "requestBody": {
                "required": True,
                "content": {
                    "application/json": {"schema": {"$ref": "#/components/schemas/BulkMetrics"}}
                },
            }
        },
        responses={202: {"description": "Accepted; no body"}},
    )
    async def bulk_metrics(request: Request, _: Client) -> Response:
        body = await read_limited(request, BULK_BODY_LIMIT)
        try:
            batch = m.BulkMetrics.model_validate_json(body)
        except ValidationError as exc:
            raise validation_error(exc.errors(), "metrics batch") from None
        store.ingest_bulk(batch)
        return Response(status_code=202)

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(
                title=app.title,
                version=app.version,
                description=app.description,
                routes=app.routes,
            )
            extra = m.BulkMetrics.model_json_schema(ref_template="#/components/schemas/{model}")
            components = schema.setdefault("components", {}).setdefault("schemas", {})
            components.update(extra.pop("$defs", {}))
            components["BulkMetrics"] = extra
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    return app


def too_large(limit: int) -> Refusal:
    return Refusal(
        413, "ContentTooLarge", f"The request body is larger than the limit of {limit:,} bytes."
    )


async def read_limited(request: Request, limit: int) -> bytes:
    """The body, refused with 413 as soon as it is known to exceed `limit` (from the declared
    length, or while streaming when there is none): never read whole before the check."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise too_large(limit)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise too_large(limit)
        chunks.append(chunk)
    return b"".join(chunks)


def wrap(app: FastAPI) -> Callable[[Scope, Receive, Send], Awaitable[None]]:
    """The ASGI callable to serve: the app behind the content-type guard."""
    return JsonContentTypeGuard(app)
