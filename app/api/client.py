"""`AdminClient`: the admin API of one server over one `httpx.AsyncClient`.

One instance per connection, shared by every view-model; close it with `await client.aclose()`
(or use it as an async context manager). Every method returns a wire model from
`app.api.models` or raises a `ClientError` (see `app.api.errors`). No Qt here.

The token travels only in the `Authorization` header: it is kept out of `repr()` and scrubbed
from every error text, even when a server echoes it back.
"""

from __future__ import annotations

import re
from types import TracebackType
from typing import TypeVar

import httpx
from pydantic import BaseModel, ValidationError

from app import __version__
from app.api.errors import ApiError, BadResponse, ServerUnreachable
from app.api.models import ErrorBody, Health, ProjectList, UiConfig, UserList

USER_AGENT = f"flagdesk/{__version__}"
CONNECT_TIMEOUT = 5.0
READ_TIMEOUT = 30.0
#: longest piece of a non-JSON error body quoted in an error message
_QUOTE_LIMIT = 200

M = TypeVar("M", bound=BaseModel)


class AdminClient:
    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        # the token as a whole word: a short token must not mangle the words that contain it
        self._token_pattern = (
            re.compile(rf"(?<![\w:*-])(?<!\w\.){re.escape(token)}(?![\w:*-]|\.\w)")
            if token
            else None
        )
        self._http = httpx.AsyncClient(
            base_url=base_url,
            headers={
                "Authorization": token,
                "User-Agent": USER_AGENT,
                "Accept": "application/json",
            },
            timeout=httpx.Timeout(READ_TIMEOUT, connect=CONNECT_TIMEOUT),
            transport=transport,
        )

    @property
    def base_url(self) -> str:
        """The server's base URL, without a trailing slash."""
        return str(self._http.base_url).rstrip("/")

    @property
    def closed(self) -> bool:
        return self._http.is_closed

    def __repr__(self) -> str:
        return f"AdminClient(base_url={self.base_url!r})"

    async def aclose(self) -> None:
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

    # ------------------------------------------------------------------ endpoints

    async def health(self) -> Health:
        """`GET /health` (no token needed, but sending it does no harm)."""
        return await self._get("/health", Health)

    async def ui_config(self) -> UiConfig:
        """`GET /api/admin/ui-config`: server name and version."""
        return await self._get("/api/admin/ui-config", UiConfig)

    async def list_projects(self) -> ProjectList:
        """`GET /api/admin/projects`."""
        return await self._get("/api/admin/projects", ProjectList)

    async def list_users(self) -> UserList:
        """`GET /api/admin/user-admin`: users and root roles (needs the Admin root role)."""
        return await self._get("/api/admin/user-admin", UserList)

    # ------------------------------------------------------------------ plumbing

    async def _get(self, path: str, model: type[M]) -> M:
        response = await self._send("GET", path)
        try:
            return model.model_validate_json(response.content)
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = ".".join(str(part) for part in first["loc"]) or "body"
            raise BadResponse(
                self._scrub(
                    f"GET {path}: the server's answer is not a valid {model.__name__} "
                    f"({exc.error_count()} problem(s); first at {loc}: {first['msg']})"
                )
            ) from None

    async def _send(self, method: str, path: str) -> httpx.Response:
        try:
            response = await self._http.request(method, path)
        except httpx.TransportError as exc:
            raise ServerUnreachable(self.base_url, self._scrub(_reason(exc))) from None
        if not response.is_success:
            raise self._api_error(method, path, response)
        return response

    def _api_error(self, method: str, path: str, response: httpx.Response) -> ApiError:
        status = response.status_code
        name = response.reason_phrase or "HTTP error"
        message = ""
        error_id: str | None = None
        try:
            body = ErrorBody.model_validate_json(response.content)
        except ValidationError:
            message = _quote(response.text)
        else:
            name = body.name or name
            error_id = body.id
            message = body.message
            if body.details:
                extra = "; ".join(d.message for d in body.details if d.message)
                message = f"{message} ({extra})" if message and extra else message or extra
        return ApiError(
            status,
            self._scrub(name),
            self._scrub(message),
            method=method,
            path=path,
            error_id=error_id,
        )

    def _scrub(self, text: str) -> str:
        return self._token_pattern.sub("***", text) if self._token_pattern else text


def _reason(exc: httpx.TransportError) -> str:
    if isinstance(exc, httpx.ConnectTimeout):
        return f"no connection within {CONNECT_TIMEOUT:g} s"
    if isinstance(exc, httpx.ReadTimeout):
        return f"no answer within {READ_TIMEOUT:g} s"
    if isinstance(exc, httpx.TimeoutException):
        return "the request timed out"
    cause: BaseException | None = exc
    for _ in range(10):  # the chain is short; the bound only guards against a cycle
        if cause is None:
            break
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused"
        cause = cause.__cause__ or cause.__context__
    text = str(exc).strip()
    return text or type(exc).__name__


def _quote(text: str) -> str:
    """A short, single-line piece of a non-JSON body; nothing for HTML pages."""
    text = text.strip()
    if not text or text.startswith("<"):
        return ""
    line = text.splitlines()[0]
    return line if len(line) <= _QUOTE_LIMIT else line[: _QUOTE_LIMIT - 1] + "…"
