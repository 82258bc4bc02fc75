"""A route of the sandbox, declared once: what serves it (a Starlette route) and what the OpenAPI
document says of it (`sandbox.openapi`) are both made from one `Endpoint`, so they cannot drift.

An endpoint names its method and path, its handler, who may call it (`side`), the pydantic model
of its body, its typed path and query parameters (`Param`) and its answers
(`sandbox.routes.answers`). Serving it does, in FastAPI's order, what FastAPI did for these routes
(fastapi/routing.py `get_request_handler`, fastapi/dependencies/utils.py `solve_dependencies`),
with the same errors, so that `sandbox.app` answers them as before, but for one thing: the
caller is authenticated first, then the body is read, up to `BODY_LIMIT` (413 past it), and
decoded (FastAPI read and decoded a whole body of any size before the token was looked at:
57.7 MB with no token took the sandbox to 1.5 GB and stalled it for seconds; a malformed body
without a token is a 401 now, not a 400), then the path and query parameters and the body are
validated together, in
python mode as FastAPI does (`from_attributes` included: the error types depend on it), each
error located under "path", "query" or "body"; any error raises `RequestInvalid` with them all.
While maintenance mode is on, an admin write is refused with 503 once its caller is known
(`refused_in_maintenance`). Then the handler runs, on the event-loop thread: every Store call
must stay there (one SQLite connection, no interleaving), which is why nothing here runs on a
worker thread.

The answers are the same as FastAPI's were: 2,608 requests, malformed ones included, were
replayed alike against the FastAPI version in the three modes (plain, and as 8.2 and 5.12). An
int id beyond 64 bits is a 400, and validation errors are 400 as on Unleash, never 422. mypy
checks that a handler takes the body its endpoint declares (`Call[m.CreateFeature]`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Annotated, Any, Generic, Literal, TypeVar, cast

from pydantic import BaseModel, Field, TypeAdapter, ValidationError
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from sandbox.responses import read_limited
from sandbox.routes.answers import Answer
from sandbox.routes.deps import admin_side, client_side
from sandbox.store import Principal, Refusal, Store
from sandbox.store.instance import MAINTENANCE_MESSAGE
from sandbox.versions import Played

#: who may call an endpoint: an admin-API token (or a personal one), a client token, anyone
Side = Literal["admin", "client", "open"]

B = TypeVar("B", bound=BaseModel | None)
T = TypeVar("T")


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


#: the default of a parameter that must be given
REQUIRED: Any = _Required()


class RequestInvalid(Exception):
    """The request's parameters or body are invalid: `errors` as pydantic (and FastAPI's
    `RequestValidationError.errors()`) list them, each located under "path", "query" or "body";
    `sandbox.app` answers 400."""

    def __init__(self, errors: Sequence[Mapping[str, Any]]) -> None:
        super().__init__(errors)
        self.errors = list(errors)


@dataclass(frozen=True)
class Param:
    """A path or query parameter validated by pydantic as `type`, with `default` when a query
    leaves it out. A path parameter not declared is a string, taken as it is."""

    name: str
    where: Literal["path", "query"]
    type: Any
    default: Any = REQUIRED
    description: str | None = None

    @cached_property
    def adapter(self) -> TypeAdapter[Any]:
        """Built on the first request that needs it, not as the routes are declared (the
        GUI waits for the sandbox's boot)."""
        return TypeAdapter(self.type)

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


class Call(Generic[B]):
    """What a handler is given: the request, the store, the release played, the caller, the
    validated body (None without one) and the validated parameters."""

    __slots__ = ("_values", "_who", "body", "played", "request", "store")

    def __init__(
        self,
        request: Request,
        store: Store,
        played: Played | None,
        who: Principal | None,
        body: B,
        values: dict[str, Any],
    ) -> None:
        self.request = request
        self.store = store
        self.played = played
        self._who = who
        self.body = body
        self._values = values

    @property
    def who(self) -> Principal:
        """The caller (an endpoint open to anyone has none)."""
        if self._who is None:
            raise RuntimeError("an open endpoint has no caller")
        return self._who

    def path(self, name: str) -> str:
        """A path parameter as it is in the path."""
        return str(self.request.path_params[name])

    def value(self, name: str, kind: type[T]) -> T:
        """A declared parameter (`Param`), as validated."""
        value = self._values[name]
        if not isinstance(value, kind):
            raise TypeError(f"parameter {name} is {type(value).__name__}, not {kind.__name__}")
        return value


Handler = Callable[[Call[B]], Awaitable[Response]]


@dataclass(frozen=True)
class Endpoint(Generic[B]):
    """One route: `handler` answers `method` on `path` for callers of `side`, given the `body`
    validated as that model (when there is one) and the `params`. `answers` says what it answers
    (the token errors of its side are added); `reads_body`: the model a handler that reads the
    body itself documents (the bulk metrics: streamed, refused past the limit); `tag`: the
    document's tag, when not its area's."""

    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE"]
    path: str
    handler: Handler[B]
    answers: Mapping[int, Answer]
    side: Side = "admin"
    body: type[B] | None = None
    params: tuple[Param, ...] = ()
    reads_body: type[BaseModel] | None = None
    tag: str | None = None
    deprecated: bool = False

    def route(self) -> Route:
        """The Starlette route that serves this endpoint."""
        route = Route(self.path, _serving(self), methods=[self.method], name=self.handler.__name__)
        # as FastAPI's routes: the one method declared (Starlette adds HEAD to a GET)
        route.methods = {self.method}
        return route

    @property
    def path_names(self) -> list[str]:
        return re.findall(r"{(\w+)}", self.path)


@dataclass(frozen=True)
class Area:
    """The endpoints of one area of the API, and the tag the OpenAPI document gives them."""

    tag: str | None
    endpoints: tuple[Endpoint[Any], ...]


#: the largest body an endpoint reads (but the bulk metrics route, which keeps Unleash's 100 KB),
#: refused with 413 past it (`read_limited`: from the declared length, or as it streams in),
#: and only ever read from a caller with a valid token. Generous for real use, ten times
#: Unleash's own limit (express's 100 KB): the largest bodies flagdesk sends are a batch of
#: 10,000 user ids (70 KB) or of 1,000 flag names (50 KB); a group of 30,000 members or a
#: context field with 10,000 described legal values fits. Small enough for the worst body
#: within it: `{"ids":[{},{},...]}`, 350,000 bad items, costs 0.3 GB and 1 s to refuse (at
#: 4 MB it was 1.3 GB and 4.6 s; pydantic holds every item's error before ERRORS_SHOWN keeps
#: the first).
BODY_LIMIT = 1024 * 1024

#: a body was not sent (an empty one included)
_ABSENT: Any = object()


def _is_json(content_type: str) -> bool:
    """Whether FastAPI decodes a body of `content_type` as JSON (it reads the type as
    `email.message.Message` does: the part before ";", lowercased, text/plain unless it is
    one type and subtype): application/json or application/*+json."""
    media = content_type.partition(";")[0].strip().lower()
    if media.count("/") != 1:
        return False
    main, _, sub = media.partition("/")
    return main == "application" and (sub == "json" or sub.endswith("+json"))


async def _received(request: Request) -> Any:
    """The body as FastAPI hands it to validation: decoded when its content type is JSON, the
    bytes otherwise (a model refuses them), absent when empty. 413 past BODY_LIMIT, before it
    is read whole."""
    body = await read_limited(request, BODY_LIMIT)
    try:
        if not body:
            return _ABSENT
        content_type = request.headers.get("content-type")
        if content_type and _is_json(content_type):
            return json.loads(body)
        return body
    except json.JSONDecodeError as exc:
        error = {"type": "json_invalid", "loc": ("body", exc.pos), "msg": "JSON decode error",
                 "input": {}, "ctx": {"error": exc.msg}}  # fmt: skip
        raise RequestInvalid([error]) from None
    except Exception as exc:  # not UTF-8 or the like, as FastAPI answers it
        raise HTTPException(400, "There was an error parsing the body") from exc


#: the errors of one parameter or body answered at most: a body of a million bad items within
#: BODY_LIMIT (`{"ids":[{},{},...]}`) made an answer of 30 MB, 0.6 GB and 4 s to build
ERRORS_SHOWN = 100


def _located(exc: ValidationError, prefix: tuple[str, ...]) -> list[dict[str, Any]]:
    shown = exc.errors(include_url=False)[:ERRORS_SHOWN]
    return [{**err, "loc": prefix + tuple(err["loc"])} for err in shown]


def _missing(loc: tuple[str, ...]) -> dict[str, Any]:
    return {"type": "missing", "loc": loc, "msg": "Field required", "input": None}


def _serving(endpoint: Endpoint[Any]) -> Callable[[Request], Awaitable[Response]]:
    side, handler, body_model = endpoint.side, endpoint.handler, endpoint.body
    guarded = refused_in_maintenance(endpoint)
    # path parameters are validated before query parameters (their errors come first)
    params = sorted(endpoint.params, key=lambda p: p.where != "path")

    async def serve(request: Request) -> Response:
        state = request.app.state
        store: Store = state.store
        played: Played | None = state.played
        who: Principal | None = None
        # the caller first: a body is read (and decoded) only for a caller with a valid token
        if side == "admin":
            who = admin_side(request, store, played)
        elif side == "client":
            who = client_side(request, store, played)
        if guarded and store.in_maintenance():
            raise Refusal(503, "ServiceUnavailable", MAINTENANCE_MESSAGE, by="bare")
        received = await _received(request) if body_model is not None else _ABSENT
        errors: list[dict[str, Any]] = []
        values: dict[str, Any] = {}
        for param in params:
            given = (request.path_params if param.where == "path" else request.query_params).get(
                param.name
            )
            if given is None:
                if param.required:
                    errors.append(_missing((param.where, param.name)))
                else:
                    values[param.name] = param.default
                continue
            try:
                values[param.name] = param.adapter.validate_python(given, from_attributes=True)
            except ValidationError as exc:
                errors += _located(exc, (param.where, param.name))
        body = None
        if body_model is not None:
            if received is _ABSENT:
                errors.append(_missing(("body",)))
            else:
                try:
                    body = cast(type[BaseModel], body_model).model_validate(
                        received, from_attributes=True
                    )
                except ValidationError as exc:
                    errors += _located(exc, ("body",))
        if errors:
            raise RequestInvalid(errors)
        return await handler(Call(request, store, played, who, body, values))

    return serve


def refused_in_maintenance(endpoint: Endpoint[Any]) -> bool:
    """Whether maintenance mode refuses `endpoint` (503 `{message}` alone, after the caller's
    token is checked and before its body is read): as Unleash's maintenance middleware, every
    POST, PUT and DELETE under `/api/admin` whose path does not hold `/maintenance` (PATCH and
    the client API are let through; `sandbox.store.instance`)."""
    return (
        endpoint.method in ("POST", "PUT", "DELETE")
        and endpoint.path.startswith("/api/admin/")
        and "/maintenance" not in endpoint.path
    )


#: a user's or group's id in a path: one the database can hold, else 400 (Unleash 8.2 answers
#: 500 past 2^31 - 1; the sandbox, 404 for any it has not)
PATH_ID = Param("id", "path", Annotated[int, Field(ge=-(2**63), le=2**63 - 1)])
