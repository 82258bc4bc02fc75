"""`AdminClient`: the admin API of one server over one `httpx.AsyncClient`.

One instance per connection, shared by every view-model and command; close it with
`await client.aclose()` (or use it as an async context manager). Every method returns a wire
model from `app.api.models` or raises a `ClientError` (see `app.api.errors`). No Qt here.

- Reads are retried on connection failures and 502/503/504 with bounded exponential backoff and
  jitter; a 429 waits for `Retry-After`. A write is retried only when the server certainly did
  not process it: the connection was never made, or it answered 429.
- What the server and the token can do is probed once (`capabilities()`); operations the probe
  found impossible raise `Unsupported` without sending anything, so a window that retries does not
  hammer a server that has no such endpoint.
- The token travels only in the `Authorization` header. It is kept out of `repr()`, logs and
  every error text, even when a server echoes it back.
"""

from __future__ import annotations

import asyncio
import dataclasses
import email.utils
import json
import logging
import math
import random
import re
import socket
import ssl
import time
import typing
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from html.parser import HTMLParser
from types import TracebackType
from typing import Any, TypeVar
from urllib.parse import quote, urlsplit

import certifi
import httpx
from pydantic import BaseModel, TypeAdapter, ValidationError

from app import __version__, logs
from app.api import errors as e
from app.api.capabilities import Capabilities, probe
from app.api.models import (
    ArchivedFeature,
    ArchivedFeatureEnvironment,
    ArchivedFeatures,
    BulkMetrics,
    ContextField,
    ContextFieldStrategies,
    CreateFeature,
    CreateFeatureStrategy,
    CreateGroup,
    CreateUser,
    CurrentUser,
    ErrorBody,
    Feature,
    FeatureList,
    FeatureMetricsRaw,
    FeatureStrategy,
    FeatureUsage,
    Group,
    GroupList,
    Health,
    InactiveUser,
    InactiveUsers,
    PersonalDashboardProjectDetails,
    ProjectList,
    SearchFeature,
    SearchFeatures,
    UiConfig,
    UpdateUser,
    User,
    UserList,
)
from app.api.streaming import (
    PIECE_BYTES,
    BadJson,
    ItemsInvalid,
    ListStream,
    NotStreamable,
    paused_gc,
)

USER_AGENT = f"flagdesk/{__version__}"
CONNECT_TIMEOUT = 5.0
READ_TIMEOUT = 30.0
#: bodies larger than this are decoded on a worker thread and validated a slice at a time
THREAD_PARSE_BYTES = 256 * 1024
#: items of a large list validated between two turns of the event loop (about 2 ms)
PARSE_SLICE = 1000
#: page size for the archive fallback (the search API is limited to about 15 requests a minute)
SEARCH_PAGE = 500
#: longest piece of a non-JSON error body quoted in an error message
_QUOTE_LIMIT = 200
_RETRY_STATUSES = frozenset({502, 503, 504})

log = logging.getLogger("flagdesk.api")
M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How hard to try. `attempts` counts the first try; the n-th retry waits a random time
    between half and all of `base_delay * 2**(n-1)`, capped at `max_delay` ("equal jitter").
    A 429 waits what `Retry-After` says when that is at most `max_retry_after`, else the error is
    raised at once."""

    attempts: int = 4
    base_delay: float = 0.5
    max_delay: float = 8.0
    max_retry_after: float = 90.0

    def backoff(self, retry: int, rng: random.Random) -> float:
        ceiling = min(self.max_delay, self.base_delay * 2 ** (retry - 1))
        return rng.uniform(ceiling / 2, ceiling)


def normalise_base_url(url: str) -> str:
    """`url` without trailing slashes, checked to be an http(s) URL with a host.

    Raises `ValueError` with a sentence that says what is wrong."""
    url = url.strip()
    if not url:
        raise ValueError("The server URL is empty.")
    if "://" not in url:
        raise ValueError(f"{url!r} has no scheme: write http://{url} or https://{url}.")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise ValueError(f"{url!r}: the scheme must be http or https, not {parts.scheme!r}.")
    if not parts.hostname:
        raise ValueError(f"{url!r} has no host name.")
    if parts.query or parts.fragment:
        raise ValueError(f"{url!r}: a server URL has no ?query or #fragment.")
    try:
        parts.port  # noqa: B018  (raises on a bad port)
    except ValueError:
        raise ValueError(f"{url!r}: the port is not a number from 1 to 65535.") from None
    return url.rstrip("/")


class AdminClient:
    """The admin API (and the bulk-metrics endpoint) of one server.

    `token` is the admin-side token: an admin API token or a personal access token.
    `client_token`, when given, is used for `/api/client/*` (bulk metrics), which real servers
    refuse to admin and personal tokens.
    """

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        client_token: str | None = None,
        verify_tls: bool = True,
        ca_bundle: str | None = None,
        connect_timeout: float = CONNECT_TIMEOUT,
        read_timeout: float = READ_TIMEOUT,
        retry: RetryPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        base_url = normalise_base_url(base_url)
        self.verify_tls = verify_tls
        self.ca_bundle = ca_bundle
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.retry = retry or RetryPolicy()
        self._token = token
        self._client_token = client_token
        self._scrubber = _Scrubber([t for t in (token, client_token) if t])
        # the log handler hides these wherever they turn up (httpcore logs headers, say)
        self._secrets = [t for t in (token, client_token) if t]
        for secret in self._secrets:
            logs.register_secret(secret)
        self._sleep = sleep
        self._rng = random.Random()
        self._capabilities: Capabilities | None = None
        self._probe_lock = asyncio.Lock()
        #: requests in flight, for an activity indicator
        self.in_flight = 0
        #: called with `in_flight` whenever it changes (the GUI's activity indicator)
        self.on_activity: Callable[[int], None] | None = None
        if not verify_tls:
            log.warning("TLS certificate verification is OFF for %s", base_url)
        self._http = httpx.AsyncClient(
            base_url=base_url,
            headers={
                "Authorization": token,
                "User-Agent": USER_AGENT,
                "Accept": "application/json",
            },
            timeout=httpx.Timeout(read_timeout, connect=connect_timeout),
            verify=_tls_context(verify_tls, ca_bundle),
            transport=transport,
            follow_redirects=False,
        )

    @property
    def base_url(self) -> str:
        """The server's base URL, without a trailing slash."""
        return str(self._http.base_url).rstrip("/")

    @property
    def has_client_token(self) -> bool:
        return bool(self._client_token)

    @property
    def closed(self) -> bool:
        return self._http.is_closed

    def __repr__(self) -> str:
        return f"AdminClient(base_url={self.base_url!r})"

    async def aclose(self) -> None:
        if not self._http.is_closed:
            for secret in self._secrets:
                logs.forget_secret(secret)
        await self._http.aclose()

    async def __aenter__(self) -> AdminClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # ------------------------------------------------------------------ capabilities

    async def capabilities(self, *, refresh: bool = False) -> Capabilities:
        """What this server and token can do; probed on first use (a handful of small requests,
        sent concurrently) and remembered for the life of the client."""
        async with self._probe_lock:
            if self._capabilities is None or refresh:
                self._capabilities = await probe(self)
            return self._capabilities

    @property
    def known_capabilities(self) -> Capabilities | None:
        """The capabilities if they were probed already, without probing."""
        return self._capabilities

    async def _require(self, operation: str) -> Capabilities:
        caps = await self.capabilities()
        availability = caps.operation(operation)
        if not availability.available:
            raise e.Unsupported(availability.title, availability.reason)
        return caps

    # ------------------------------------------------------------------ server

    async def health(self) -> Health:
        """`GET /health` (no token needed, but sending it does no harm)."""
        return await self._get("/health", Health)

    async def ui_config(self) -> UiConfig:
        """`GET /api/admin/ui-config`: server name and version."""
        return await self._get("/api/admin/ui-config", UiConfig)

    async def current_user(self) -> CurrentUser:
        """`GET /api/admin/user`: who the token acts as, and its permissions."""
        return await self._get("/api/admin/user", CurrentUser)

    # ------------------------------------------------------------------ users

    async def list_users(self) -> UserList:
        """`GET /api/admin/user-admin`: users and root roles (needs the Admin root role)."""
        return await self._get("/api/admin/user-admin", UserList)

    async def get_user(self, user_id: int) -> User:
        return await self._get(f"/api/admin/user-admin/{int(user_id)}", User)

    async def create_user(self, user: CreateUser) -> User:
        """`POST /api/admin/user-admin` (a supporting route)."""
        return await self._write("POST", "/api/admin/user-admin", user, User)

    async def update_user(self, user_id: int, changes: UpdateUser) -> User:
        """Operation 2, `PUT /api/admin/user-admin/:id`: sends only the fields set on `changes`."""
        return await self._write(
            "PUT", f"/api/admin/user-admin/{int(user_id)}", changes, User, only_set=True
        )

    async def inactive_users(
        self, *, on_items: Callable[[list[InactiveUser]], None] | None = None
    ) -> InactiveUsers:
        """Operation 6, `GET /api/admin/user-admin/inactive`: users with no login in 180 days,
        one entry per user (Unleash 8.2 can list a user once per old personal access token).

        With `on_items`, the users are handed to it a piece at a time as they arrive (a window
        builds its rows meanwhile) and the result's list stays empty."""
        seen: set[int] = set()
        dropped = 0

        def unique(users: list[InactiveUser]) -> list[InactiveUser]:
            nonlocal dropped
            kept = []
            for user in users:
                if user.id not in seen:
                    seen.add(user.id)
                    kept.append(user)
            dropped += len(users) - len(kept)
            return kept

        def take(users: list[InactiveUser]) -> None:
            if on_items is not None:
                on_items(unique(users))

        result = await self._get_streamed(
            "/api/admin/user-admin/inactive",
            InactiveUsers,
            "inactiveUsers",
            on_items=take if on_items is not None else None,
        )
        if on_items is None:
            result.inactiveUsers = unique(result.inactiveUsers)
        if dropped:
            log.debug("inactive users: dropped %d duplicates", dropped)
        return result

    # ------------------------------------------------------------------ groups

    async def list_groups(self) -> GroupList:
        """`GET /api/admin/groups` (Unleash Enterprise and the sandbox)."""
        await self._require("groups")
        return await self._get("/api/admin/groups", GroupList)

    async def create_group(self, group: CreateGroup) -> Group:
        """Operation 1, `POST /api/admin/groups`."""
        await self._require("groups")
        return await self._write("POST", "/api/admin/groups", group, Group)

    # ------------------------------------------------------------------ projects and features

    async def list_projects(self) -> ProjectList:
        """`GET /api/admin/projects`."""
        return await self._get("/api/admin/projects", ProjectList)

    async def project_features(self, project: str) -> FeatureList:
        """`GET /api/admin/projects/:projectId/features`: the project's flags, not archived."""
        return await self._get(f"/api/admin/projects/{_segment(project)}/features", FeatureList)

    async def feature_names(self) -> set[str]:
        """The name of every flag on the server that is not archived, project by project (four
        projects at a time): what the metrics tool checks a batch's feature names against, as
        Unleash stores no metrics for a name it does not know."""
        projects = (await self.list_projects()).projects
        gate = asyncio.Semaphore(4)

        async def names(project: str) -> list[str]:
            async with gate:
                return [f.name for f in (await self.project_features(project)).features]

        found = await asyncio.gather(*(names(p.id) for p in projects))
        return {name for group in found for name in group}

    async def personal_dashboard(self, project: str) -> PersonalDashboardProjectDetails:
        """Operation 4, `GET /api/admin/personal-dashboard/:projectId`. Unleash answers an admin
        API token with a 500 (no user behind it): that is `Unsupported` here, with the remedy."""
        await self._require("project_dashboard")
        return await self._get(
            f"/api/admin/personal-dashboard/{_segment(project)}", PersonalDashboardProjectDetails
        )

    async def archived_features(
        self, project: str, *, on_items: Callable[[list[ArchivedFeature]], None] | None = None
    ) -> ArchivedFeatures:
        """Operation 3: a project's archived features in the spec's shape, from every server.

        Where `GET /api/admin/archive/features/:projectId` exists it is used; where it does not
        (removed in Unleash 7.0) the search API is read page by page until `total`, and the
        items are mapped onto the spec's fields. With `on_items`, the flags are handed to it a
        piece at a time as they arrive and the result's list stays empty."""
        caps = await self.capabilities()
        if caps.archive_endpoint:
            return await self._get_streamed(
                f"/api/admin/archive/features/{_segment(project)}",
                ArchivedFeatures,
                "features",
                on_items=on_items,
            )
        await self._require("archived_features")
        result = await self._archived_by_search(project)
        if on_items is not None:
            on_items(result.features)  # sorted only once all pages are in: one piece
            result.features = []
        return result

    async def _archived_by_search(self, project: str) -> ArchivedFeatures:
        features: list[ArchivedFeature] = []
        offset = 0
        while True:
            page = await self._get(
                "/api/admin/search/features",
                SearchFeatures,
                params={
                    "project": f"IS:{project}",
                    "archived": "IS:true",
                    "offset": str(offset),
                    "limit": str(SEARCH_PAGE),
                    "sortBy": "createdAt",
                    "sortOrder": "asc",
                },
            )
            features.extend(_archived_from_search(item) for item in page.features)
            offset += len(page.features)
            if not page.features:
                break
            if page.total is not None and offset >= page.total:
                break
            if page.total is None and len(page.features) < SEARCH_PAGE:
                break  # no total given: a short page is the last one
        # newest archived first, as the spec's endpoint lists them
        features.sort(key=lambda f: f.archivedAt.timestamp() if f.archivedAt else 0, reverse=True)
        return ArchivedFeatures(version=1, features=features)

    async def create_feature(self, project: str, feature: CreateFeature) -> Feature:
        """`POST /api/admin/projects/:p/features` (a supporting route)."""
        return await self._write(
            "POST", f"/api/admin/projects/{_segment(project)}/features", feature, Feature
        )

    async def archive_feature(self, project: str, name: str) -> None:
        """`DELETE /api/admin/projects/:p/features/:name`: archives the feature."""
        await self._send(
            "DELETE",
            f"/api/admin/projects/{_segment(project)}/features/{_segment(name)}",
            idempotent=True,
        )

    async def add_strategy(
        self, project: str, feature: str, environment: str, strategy: CreateFeatureStrategy
    ) -> FeatureStrategy:
        """`POST .../features/:f/environments/:env/strategies` (a supporting route)."""
        path = (
            f"/api/admin/projects/{_segment(project)}/features/{_segment(feature)}"
            f"/environments/{_segment(environment)}/strategies"
        )
        return await self._write("POST", path, strategy, FeatureStrategy)

    # ------------------------------------------------------------------ context

    async def list_context_fields(self) -> list[ContextField]:
        """`GET /api/admin/context`."""
        response = await self._send("GET", "/api/admin/context", idempotent=True)
        return await self._parse_list(response, ContextField, "GET /api/admin/context")

    async def context_strategies(self, field: str) -> ContextFieldStrategies:
        """Operation 5, `GET /api/admin/context/:contextField/strategies` (an unknown field gives
        an empty list)."""
        return await self._get(
            f"/api/admin/context/{_segment(field)}/strategies", ContextFieldStrategies
        )

    # ------------------------------------------------------------------ metrics

    async def send_bulk_metrics(self, batch: BulkMetrics | bytes, *, retry: bool = True) -> None:
        """Operation 7, `POST /api/client/metrics/bulk` with the client token (or, without one,
        the admin-side token, which real servers refuse: `WrongTokenType` says so). `bytes` are
        sent as they are, so a caller can measure exactly what goes on the wire.

        `retry=False` makes exactly one attempt and raises whatever happened: the metrics
        uploader (`app.metrics.upload`) retries on its own, because it records each attempt in
        its ledger before it tries again."""
        body = batch if isinstance(batch, bytes) else bulk_metrics_bytes(batch)
        await self._send(
            "POST",
            "/api/client/metrics/bulk",
            content=body,
            headers={"Content-Type": "application/json"},
            token=self._client_token,
            idempotent=False,
            attempts=None if retry else 1,
        )

    async def feature_usage(self, feature: str) -> FeatureUsage:
        """`GET /api/admin/client-metrics/features/:name`: the last hour's stored counts."""
        return await self._get(
            f"/api/admin/client-metrics/features/{_segment(feature)}", FeatureUsage
        )

    async def feature_metrics_raw(self, feature: str, hours_back: int = 1) -> FeatureMetricsRaw:
        """`GET /api/admin/client-metrics/features/:name/raw?hoursBack=N`."""
        return await self._get(
            f"/api/admin/client-metrics/features/{_segment(feature)}/raw",
            FeatureMetricsRaw,
            params={"hoursBack": str(int(hours_back))},
        )

    # ------------------------------------------------------------------ plumbing

    async def _get(
        self, path: str, model: type[M], *, params: Mapping[str, str] | None = None
    ) -> M:
        response = await self._send("GET", path, params=params, idempotent=True)
        return await self._parse(response, model, f"GET {path}")

    async def _get_streamed(
        self,
        path: str,
        model: type[M],
        field: str,
        *,
        on_items: Callable[[list[Any]], None] | None = None,
    ) -> M:
        """`_get` for an answer whose list `field` can hold 100,000 items: the items are
        validated piece by piece as the bytes arrive (see `app.api.streaming`), so the work
        overlaps the download, the event loop keeps turning, and the body is never held whole.
        An answer of another shape is read whole and parsed as `_get` would. With `on_items`
        each piece goes to it as soon as it is validated, and the result's list stays empty.

        A connection lost in the middle of the answer is retried like any failed read, as long
        as no item has gone to `on_items` yet (they cannot be taken back); after that it is
        raised, and the caller starts over."""
        attempt = 0
        while True:
            attempt += 1
            try:
                return await self._stream_once(path, model, field, on_items)
            except _LostMidAnswer as lost:
                if lost.handed or attempt >= self.retry.attempts:
                    raise lost.error from None
                delay = self.retry.backoff(attempt, self._rng)
                log.info("GET %s: %s while reading the answer; retry %d in %.2f s",
                         path, lost.error.reason, attempt, delay)  # fmt: skip
                await self._sleep(delay)

    async def _stream_once(
        self,
        path: str,
        model: type[M],
        field: str,
        on_items: Callable[[list[Any]], None] | None,
    ) -> M:
        request = f"GET {path}"
        (item_type,) = typing.get_args(model.model_fields[field].annotation)
        stream: ListStream[Any] = ListStream(field, item_type)
        items: list[Any] = []
        handed = False

        def take(piece: list[Any]) -> None:
            nonlocal handed
            if on_items is None:
                items.extend(piece)
            elif piece:
                handed = True
                on_items(piece)

        head: list[bytes] = []  # the bytes before the first item, in case it is read whole
        first = b""  # the answer's first bytes, to say what it is when it is not JSON
        whole = False
        response = await self._send("GET", path, idempotent=True, stream=True)
        self._count(+1)  # a request in flight until its answer is read, as for the others
        try:
            with paused_gc():
                async for chunk in response.aiter_bytes():
                    if len(first) < 1024:
                        first += chunk[: 1024 - len(first)]
                    if whole or not stream.started:
                        head.append(chunk)
                    if whole:
                        continue
                    try:
                        for start in range(0, len(chunk), PIECE_BYTES):
                            if start:  # a large chunk: let the loop turn between pieces
                                await asyncio.sleep(0)
                            take(stream.feed(chunk[start : start + PIECE_BYTES]))
                    except NotStreamable:
                        whole = True
                    if stream.started:
                        head.clear()
                if whole or not stream.started:
                    return self._hand_over(
                        await self._parse(response, model, request, b"".join(head)),
                        field,
                        on_items,
                    )
                take(stream.finish())
        except httpx.TransportError as exc:
            raise _LostMidAnswer(self._unreachable(exc), handed) from None
        except ItemsInvalid as exc:
            raise self._bad_response(
                exc.error, response, model.__name__, request, prefix=(exc.field, exc.first)
            ) from None
        except BadJson:
            raise self._not_json(response, request, first) from None
        except NotStreamable:
            return self._hand_over(
                await self._parse(response, model, request, b"".join(head)), field, on_items
            )
        finally:
            self._count(-1)
            await response.aclose()
        try:
            envelope = model.model_validate({**stream.envelope, field: []})
        except ValidationError as exc:
            raise self._bad_response(exc, response, model.__name__, request) from None
        setattr(envelope, field, items)
        return envelope

    @staticmethod
    def _hand_over(result: M, field: str, on_items: Callable[[list[Any]], None] | None) -> M:
        """An answer read whole: its list goes to `on_items` as one piece, if there is one."""
        if on_items is not None:
            on_items(getattr(result, field))
            setattr(result, field, [])
        return result

    async def _write(
        self, method: str, path: str, body: BaseModel, model: type[M], *, only_set: bool = False
    ) -> M:
        """Send `body` as JSON: every field but the `None`s, or with `only_set` just the fields
        the caller set (a partial update)."""
        dump = (
            body.model_dump_json(exclude_unset=True)
            if only_set
            else body.model_dump_json(exclude_none=True)
        )
        content = dump.encode()
        response = await self._send(
            method,
            path,
            content=content,
            headers={"Content-Type": "application/json"},
            idempotent=False,
        )
        return await self._parse(response, model, f"{method} {path}")

    async def _parse(
        self, response: httpx.Response, model: type[M], request: str, content: bytes | None = None
    ) -> M:
        """The answer as `model`; `content` when the body was read apart from `response`."""
        if content is None:
            content = response.content
        try:
            if len(content) > THREAD_PARSE_BYTES:
                return await self._parse_large(content, model)
            return model.model_validate_json(content)
        except ValidationError as exc:
            raise self._bad_response(
                exc, response, model.__name__, request, content=content
            ) from None
        except _SliceInvalid as exc:
            raise self._bad_response(
                exc.error, response, model.__name__, request, prefix=exc.prefix
            ) from None

    async def _parse_large(self, content: bytes, model: type[M]) -> M:
        """A large body (100,000 inactive users are 20 MB) without freezing the window: pydantic
        holds the GIL for a whole `model_validate_json`, which stalled the GUI thread for half a
        second. So the JSON is decoded on a worker thread (one short hold), and the body's
        largest list is validated PARSE_SLICE items at a time, letting the event loop turn in
        between. Errors keep their full JSON path."""
        try:
            data = await asyncio.to_thread(json.loads, content)
        except ValueError:
            return model.model_validate_json(content)  # raises the usual "invalid JSON" error
        name, item_type = _largest_list(model, data)
        if name is None or item_type is None:
            return model.model_validate(data)
        items: list[Any] = data[name]
        data[name] = []
        envelope = model.model_validate(data)
        adapter: TypeAdapter[list[Any]] = TypeAdapter(list[item_type])  # type: ignore[valid-type]
        validated: list[Any] = []
        for start in range(0, len(items), PARSE_SLICE):
            end = start + PARSE_SLICE
            try:
                validated.extend(adapter.validate_python(items[start:end]))
            except ValidationError as exc:
                raise _SliceInvalid(exc, (name, start)) from None
            items[start:end] = [None] * len(items[start:end])  # the decoded dicts go as we go
            await asyncio.sleep(0)
        setattr(envelope, name, validated)
        return envelope

    async def _parse_list(self, response: httpx.Response, model: type[M], request: str) -> list[M]:
        adapter: TypeAdapter[list[M]] = TypeAdapter(list[model])  # type: ignore[valid-type]
        try:
            result = adapter.validate_json(response.content)
        except ValidationError as exc:
            raise self._bad_response(exc, response, f"list of {model.__name__}", request) from None
        return result

    def _bad_response(
        self,
        exc: ValidationError,
        response: httpx.Response,
        what: str,
        request: str,
        *,
        prefix: tuple[str, int] | None = None,
        content: bytes | None = None,
    ) -> e.BadResponse:
        """`content`: the body, when it was read apart from `response` (a streamed answer)."""
        first = exc.errors()[0]
        if first["type"] in ("json_invalid", "json_type"):
            return self._not_json(response, request, content)
        loc = tuple(first["loc"])
        if prefix is not None and loc and isinstance(loc[0], int):  # a slice's item: its place
            loc = (prefix[0], prefix[1] + loc[0], *loc[1:])
        field = json_path(loc)
        more = exc.error_count() - 1
        also = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
        return e.BadResponse(
            self._scrub(
                f"{request}: the server's answer does not match the API ({what}): "
                f"{field or 'the body'}: {first['msg']}{also}"
            ),
            field=self._scrub(field),
        )

    def _not_json(
        self, response: httpx.Response, request: str, content: bytes | None = None
    ) -> e.BadResponse:
        kind = response.headers.get("content-type", "").split(";")[0].strip() or "no type"
        looks = "an HTML page" if _looks_like_html(response, content) else f"not JSON ({kind})"
        return e.BadResponse(
            self._scrub(
                f"{request}: the server answered {response.status_code} with {looks}, "
                "where the API sends JSON. Is the server URL right (it should be the "
                "Unleash base URL, not a page of its web interface or a proxy)?"
            )
        )

    async def _send(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        content: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        token: str | None = None,
        idempotent: bool,
        attempts: int | None = None,
        stream: bool = False,
    ) -> httpx.Response:
        """Send with retries; a failure status raises its `ApiError`. `attempts` overrides the
        policy's number of tries (1: no retry at all). With `stream` a successful response comes
        back with its body unread: the caller reads it and closes it."""
        request_headers = dict(headers or {})
        if token:
            request_headers["Authorization"] = token
        policy = self.retry
        if attempts is not None:
            policy = dataclasses.replace(policy, attempts=attempts)
        attempt = 0
        while True:
            attempt += 1
            started = time.perf_counter()
            self._count(+1)
            try:
                request = self._http.build_request(
                    method, path, params=params, content=content, headers=request_headers
                )
                response = await self._http.send(request, stream=stream)
                if stream and not response.is_success:
                    try:
                        await response.aread()  # the error body, for its message
                    finally:
                        await response.aclose()
            except httpx.TransportError as exc:
                error = self._unreachable(exc)
                if attempt < policy.attempts and _may_retry(exc, idempotent):
                    delay = policy.backoff(attempt, self._rng)
                    log.info("%s %s: %s; retry %d in %.2f s", method, path, error.reason,
                             attempt, delay)  # fmt: skip
                    await self._sleep(delay)
                    continue
                log.info("%s %s: %s", method, path, error.reason)
                raise error from None
            finally:
                self._count(-1)
            status = response.status_code
            log.debug("%s %s -> %d in %.0f ms", method, path, status,
                      (time.perf_counter() - started) * 1000)  # fmt: skip
            if response.is_success:
                return response
            if attempt < policy.attempts:
                wait = self._retry_delay(response, attempt, idempotent)
                if wait is not None:
                    log.info("%s %s: %d; retry %d in %.2f s", method, path, status, attempt, wait)
                    await self._sleep(wait)
                    continue
            raise self._api_error(method, path, response)

    def _count(self, change: int) -> None:
        self.in_flight += change
        if self.on_activity is not None:
            self.on_activity(self.in_flight)

    def _retry_delay(
        self, response: httpx.Response, attempt: int, idempotent: bool
    ) -> float | None:
        """How long to wait before trying again, or None not to."""
        status = response.status_code
        if status == 429:
            wait = retry_after_seconds(response.headers.get("retry-after"))
            if wait is None:
                return self.retry.backoff(attempt, self._rng)
            return wait if wait <= self.retry.max_retry_after else None
        if status in _RETRY_STATUSES and idempotent:
            return self.retry.backoff(attempt, self._rng)
        return None

    def _unreachable(self, exc: httpx.TransportError) -> e.ServerUnreachable:
        kind, reason = _classify(exc, self)
        return kind(self.base_url, self._scrub(reason))

    def _api_error(self, method: str, path: str, response: httpx.Response) -> e.ApiError:
        status = response.status_code
        name = response.reason_phrase or "HTTP error"
        message = ""
        error_id: str | None = None
        details: tuple[e.Problem, ...] = ()
        body: ErrorBody | None = None
        if _looks_like_json(response):
            try:
                body = ErrorBody.model_validate_json(response.content)
            except ValidationError:
                body = None
        if body is not None and not (body.message or body.name or body.details):
            body = None  # JSON, but not an error body (a proxy's {"error": ...}): quote it
        if body is not None:
            name = body.name or name
            error_id = self._scrub(body.id) if body.id else None
            message = body.message
            details = tuple(
                e.Problem(self._scrub(d.message), self._scrub(_normalise_path(d.path or "")))
                for d in body.details or ()
                if d.message
            )
        else:
            message = _readable_text(response)
        cls = e.error_class(status)
        if status == 403 and "token type" in message.lower():
            cls = e.WrongTokenType
        hint = _hint(cls, status, path, message, response)
        error = cls(
            status,
            self._scrub(name),
            self._scrub(message),
            details=details,
            error_id=error_id,
            method=method,
            path=path,
            hint=hint,
        )
        if isinstance(error, e.RateLimited):
            error.retry_after = retry_after_seconds(response.headers.get("retry-after"))
        if 300 <= status < 400 and response.headers.get("location"):
            error.location = self._scrub(str(response.url.join(response.headers["location"])))
        return error

    def _scrub(self, text: str) -> str:
        return self._scrubber(text)


# ---------------------------------------------------------------------------- helpers


class _LostMidAnswer(Exception):
    """The connection failed while a streamed answer was read; `handed`: items had already
    gone to the caller's `on_items`."""

    def __init__(self, error: e.ServerUnreachable, handed: bool) -> None:
        super().__init__(error.reason)
        self.error = error
        self.handed = handed


class _SliceInvalid(Exception):
    """A slice of a large list failed validation; `prefix` is (list field, first index)."""

    def __init__(self, error: ValidationError, prefix: tuple[str, int]) -> None:
        super().__init__(str(error))
        self.error = error
        self.prefix = prefix


def _largest_list(model: type[BaseModel], data: object) -> tuple[str | None, Any]:
    """The field of `model` holding the longest list in `data`, and its item type."""
    if not isinstance(data, dict):
        return None, None
    best: tuple[str | None, Any] = (None, None)
    longest = 0
    for name, info in model.model_fields.items():
        key = info.alias or name
        value = data.get(key)
        origin = typing.get_origin(info.annotation)
        if isinstance(value, list) and origin is list and len(value) > longest:
            (item_type,) = typing.get_args(info.annotation)
            best, longest = (key, item_type), len(value)
    return best


class _Scrubber:
    """Replaces each token with `***` wherever it stands as a whole word."""

    def __init__(self, tokens: list[str]) -> None:
        self._patterns = [
            re.compile(rf"(?<![\w:*-])(?<!\w\.){re.escape(t)}(?![\w:*-]|\.\w)") for t in tokens
        ]
        # the secret part of `project:env.secret` alone must not leak either
        self._patterns += [
            re.compile(re.escape(t.rsplit(".", 1)[1]))
            for t in tokens
            if "." in t and len(t.rsplit(".", 1)[1]) >= 8
        ]

    def __call__(self, text: str) -> str:
        for pattern in self._patterns:
            text = pattern.sub("***", text)
        return text


def bulk_metrics_bytes(batch: BulkMetrics) -> bytes:
    """The exact bytes `send_bulk_metrics` sends for a batch."""
    return batch.model_dump_json(exclude_none=True).encode()


def json_path(loc: tuple[int | str, ...] | list[int | str]) -> str:
    """A pydantic location as a JSON path: `("users", 0, "user", "id")` -> `users[0].user.id`."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _normalise_path(path: str) -> str:
    """An error detail's path in one notation, `users[0].user.id`, whether the server wrote
    `$.users[0].user.id` (JSONPath) or `/users/0/user/id` (JSON Pointer)."""
    path = path.strip()
    if path.startswith("$"):
        return path[1:].lstrip(".")
    if path.startswith("/"):
        out = ""
        for part in path[1:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            out += f"[{part}]" if part.isdigit() else (f".{part}" if out else part)
        return out
    return path


def retry_after_seconds(value: str | None) -> float | None:
    """`Retry-After` as seconds: delta-seconds or an HTTP date; None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    if math.isnan(seconds) or math.isinf(seconds):
        return None
    return max(0.0, seconds)


def _segment(value: str) -> str:
    """One path segment, percent-encoded (a project id or name may hold `/` or `?`)."""
    return quote(str(value), safe="")


def _tls_context(verify_tls: bool, ca_bundle: str | None) -> ssl.SSLContext | bool:
    if not verify_tls:
        return False
    context = ssl.create_default_context(cafile=certifi.where())
    if ca_bundle:
        try:
            context.load_verify_locations(cafile=ca_bundle)
        except (OSError, ssl.SSLError) as exc:
            raise ValueError(f"The CA bundle {ca_bundle} cannot be read: {exc}") from None
    return context


def _may_retry(exc: httpx.TransportError, idempotent: bool) -> bool:
    """Reads retry on any transport failure; writes only when nothing reached the server."""
    if isinstance(exc, httpx.ConnectError) and _tls_failure(exc) is not None:
        return False  # a certificate does not fix itself
    if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout | httpx.PoolTimeout):
        return True
    return idempotent


def _causes(exc: BaseException) -> list[BaseException]:
    """`exc`, its causes and contexts, and the members of exception groups among them (a host
    name with several addresses fails with a group of one error per address)."""
    seen: list[BaseException] = []
    queue: list[BaseException] = [exc]
    while queue and len(seen) < 32:  # the bound guards against cycles
        cause = queue.pop(0)
        if any(cause is s for s in seen):
            continue
        seen.append(cause)
        if isinstance(cause, BaseExceptionGroup):
            queue.extend(cause.exceptions)
        for nxt in (cause.__cause__, cause.__context__):
            if nxt is not None:
                queue.append(nxt)
    return seen


def _tls_failure(exc: BaseException) -> ssl.SSLError | None:
    for cause in _causes(exc):
        if isinstance(cause, ssl.SSLError):
            return cause
    return None


def _classify(
    exc: httpx.TransportError, client: AdminClient
) -> tuple[type[e.ServerUnreachable], str]:
    host = urlsplit(client.base_url).hostname or client.base_url
    if isinstance(exc, httpx.ConnectTimeout):
        return e.TimedOut, f"no connection within {client.connect_timeout:g} s"
    if isinstance(exc, httpx.ReadTimeout):
        return e.TimedOut, f"no answer within {client.read_timeout:g} s"
    if isinstance(exc, httpx.WriteTimeout):
        return e.TimedOut, f"sending the request took longer than {client.read_timeout:g} s"
    if isinstance(exc, httpx.PoolTimeout):
        return e.TimedOut, "too many requests waiting for a connection"
    tls = _tls_failure(exc)
    if tls is not None:
        if isinstance(tls, ssl.SSLCertVerificationError):
            why = tls.verify_message or "the certificate is not trusted"
            return e.TlsError, (
                f"the server's TLS certificate was refused ({why}). If the server uses a "
                "private certificate authority, give its CA bundle in the connection settings"
            )
        reason = getattr(tls, "reason", None) or str(tls)
        return e.TlsError, f"the TLS handshake failed ({reason}); is it an https server?"
    for cause in _causes(exc):
        if isinstance(cause, ConnectionRefusedError):
            return e.ConnectionRefused, "connection refused (is the server running, on that port?)"
        if _is_dns_failure(cause):
            return e.HostNotFound, f"the host name {host!r} does not resolve (DNS)"
    if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError | httpx.WriteError):
        text = str(exc).strip() or type(exc).__name__
        return e.ConnectionLost, f"the connection broke before the answer was complete ({text})"
    if isinstance(exc, httpx.ConnectError) and "Name or service not known" in str(exc):
        return e.HostNotFound, f"the host name {host!r} does not resolve (DNS)"
    text = str(exc).strip()
    return e.ServerUnreachable, text or type(exc).__name__


def _is_dns_failure(exc: BaseException) -> bool:
    return isinstance(exc, socket.gaierror)


def _looks_like_json(response: httpx.Response) -> bool:
    kind = response.headers.get("content-type", "")
    if "json" in kind:
        return True
    return response.content.lstrip()[:1] in (b"{", b"[")


def _looks_like_html(response: httpx.Response, content: bytes | None = None) -> bool:
    """`content`: the body (or its start), when it was read apart from `response`."""
    if "html" in response.headers.get("content-type", ""):
        return True
    body = response.content if content is None else content
    return body.lstrip()[:1] == b"<"


class _TextOf(HTMLParser):
    """The visible text of an HTML page, and its title."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title = ""
        self.parts: list[str] = []
        self._skip = 0
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style", "head"):
            self._skip += 1
        if tag == "title":
            self._in_title = True
        if tag in ("br", "p", "div", "pre", "h1", "h2", "li", "tr"):
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "head") and self._skip:
            self._skip -= 1
        if tag == "title":
            self._in_title = False

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif not self._skip:
            self.parts.append(data)


def _readable_text(response: httpx.Response) -> str:
    """One readable line from a body that is not an Unleash error body ("" for none)."""
    text = response.text
    if not text.strip():
        return ""
    if _looks_like_html(response):
        parser = _TextOf()
        try:
            parser.feed(text)
            parser.close()
        except Exception:  # a broken page must not hide the status
            return ""
        lines = [" ".join(line.split()) for line in "".join(parser.parts).splitlines()]
        lines = [line for line in lines if line]
        text = lines[0] if lines else " ".join(parser.title.split())
    else:
        lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
        text = lines[0] if lines else ""
    return text if len(text) <= _QUOTE_LIMIT else text[: _QUOTE_LIMIT - 1] + "…"


def _hint(
    cls: type[e.ApiError], status: int, path: str, message: str, response: httpx.Response
) -> str:
    """What a person can do about an error, when we know."""
    if cls is e.WrongTokenType:
        if path.startswith("/api/client/"):
            return (
                "Use a client token: admin API tokens and personal access tokens are refused "
                "on the client API"
            )
        return "Use an admin API token or a personal access token: this is a client token"
    if status == 401:
        return "The token is missing, expired or unknown to this server"
    if status == 403:
        return "The token is valid but lacks the permission for this"
    if status == 404 and "path you were looking for" in message:
        return "This server does not have this endpoint"
    if status == 400 and path.endswith("/metrics/bulk") and not message:
        return (
            "The server refused the batch without saying why; Unleash 8.2 does that when an "
            "application lacks `started` or `interval`"
        )
    if status == 413:
        return "The request body is larger than the server accepts"
    if status == 415:
        return "The server expects application/json"
    if status == 429:
        wait = retry_after_seconds(response.headers.get("retry-after"))
        return f"Try again in {math.ceil(wait)} s" if wait is not None else "Try again later"
    if status >= 500 and not message:
        return "The server failed; its log may say why"
    return ""


def _archived_from_search(item: SearchFeature) -> ArchivedFeature:
    """A search-API item in the spec's archived-feature shape."""
    environments = [
        ArchivedFeatureEnvironment(name=env.name, lastSeenAt=env.lastSeenAt, enabled=env.enabled)
        for env in item.environments
    ]
    seen = [env.lastSeenAt for env in item.environments if env.lastSeenAt is not None]
    fields: dict[str, Any] = {
        "name": item.name,
        "type": item.type,
        "description": item.description,
        "project": item.project,
        "stale": item.stale,
        "impressionData": item.impressionData,
        "createdAt": item.createdAt,
        "archivedAt": item.archivedAt,
        "lastSeenAt": max(seen) if seen else None,
        "environments": environments,
    }
    return ArchivedFeature(**fields)
