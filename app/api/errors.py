"""What `AdminClient` raises: one hierarchy, every message fit to show a person, none holds a token.

    ClientError                      anything that went wrong talking to a server
    ├── ServerUnreachable            no HTTP answer at all
    │   ├── ConnectionRefused        nothing listens at that address
    │   ├── HostNotFound             the name does not resolve (DNS)
    │   ├── TlsError                 the TLS handshake or certificate check failed
    │   ├── TimedOut                 no connection or no answer in time
    │   └── ConnectionLost           the connection broke before the answer was complete
    ├── ApiError                     the server answered with a non-2xx status
    │   ├── BadRequest (400) ─ PayloadTooLarge (413), UnsupportedMediaType (415)
    │   ├── Unauthorized (401)       no token or an unknown one
    │   ├── Forbidden (403) ─ WrongTokenType   a valid token of the wrong kind
    │   ├── NotFound (404)
    │   ├── Conflict (409)
    │   ├── RateLimited (429)        with `retry_after` in seconds when the server said
    │   └── ServerError (5xx)
    ├── BadResponse                  a 2xx answer unlike what the API promises (names the field)
    └── Unsupported                  this server or token cannot do it; no request was sent

`ApiError` carries what the server said in any of the three error-body shapes Unleash uses
(`{id, name, message, details}`, the same without `id`, and `{message}`), or what could be read
from an HTML, plain-text or empty body.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Problem:
    """One detail of an error: what is wrong and where (a JSON path such as `users[0].user.id`,
    or "" when the server did not say)."""

    message: str
    path: str = ""

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class ClientError(Exception):
    """Something went wrong talking to a server. `str(error)` is the text to show a person.

    Whether the request may have reached the server is said once, here, for every reader (the
    client's retries of a write, the journal's "failed" or "in doubt", the metrics ledger):
    `never_sent` when it certainly did not (no connection was made, or the request was refused
    before it left); otherwise `in_doubt` tells whether any answer says what came of it."""

    #: the request certainly never reached the server
    never_sent: bool = False

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    @property
    def in_doubt(self) -> bool:
        """The request may have reached the server, and no answer says what came of it (the
        connection lost, no answer in time, an answer that cannot be read)."""
        return not self.never_sent

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r})"


# ---------------------------------------------------------------------------- no answer


class ServerUnreachable(ClientError):
    """No HTTP answer. `url` is the server's base URL, `reason` a short phrase; `never_sent`
    as `app.api.failures.classify` finds it (no connection was made: connect failures, a
    connect timeout, no connection free in the pool), else the request may have arrived."""

    def __init__(self, url: str, reason: str, *, never_sent: bool | None = None) -> None:
        self.url = url
        self.reason = reason
        if never_sent is not None:
            self.never_sent = never_sent
        super().__init__(f"Cannot reach {url}: {reason}")


class ConnectionRefused(ServerUnreachable):
    """Nothing listens at that address and port (is the server running?)."""

    never_sent = True


class HostNotFound(ServerUnreachable):
    """The host name does not resolve."""

    never_sent = True


class TlsError(ServerUnreachable):
    """The TLS handshake failed or the certificate was not trusted (before any request)."""

    never_sent = True


class TimedOut(ServerUnreachable):
    """No connection, or no complete answer, within the configured time."""


class ConnectionLost(ServerUnreachable):
    """The connection closed or broke before the answer was complete."""


# ---------------------------------------------------------------------------- an error status


#: a gateway's answers that leave open whether the server behind it got the request
GATEWAY_STATUSES = frozenset({502, 504})


class ApiError(ClientError):
    """A non-2xx answer.

    - `status`: the HTTP status; `name`: the error body's `name` (such as `NotFoundError`), or the
      HTTP reason phrase when the body has none;
    - `message`: the server's own sentence ("" when it gave none); `details`: its `Problem`s;
    - `error_id`: the `id` Unleash puts on some error bodies, to find the request in its log;
    - `method`, `path`: the request; `hint`: what the person can do about it, when we know.

    `str(error)` puts these together in one line.
    """

    def __init__(
        self,
        status: int,
        name: str,
        message: str,
        *,
        details: tuple[Problem, ...] = (),
        error_id: str | None = None,
        method: str = "",
        path: str = "",
        hint: str = "",
    ) -> None:
        self.status = status
        self.name = name
        self.details = details
        self.error_id = error_id
        self.method = method
        self.path = path
        self.hint = hint
        #: where a 3xx answer points (its Location header, made absolute); "" otherwise
        self.location = ""
        where = f" ({method} {path})" if method and path else ""
        text = f"{status} {name}{where}"
        said = message
        extra = [str(d) for d in details if d.message and d.message != message]
        if extra:
            said = f"{said} ({'; '.join(extra)})" if said else "; ".join(extra)
        if said:
            text = f"{text}: {said}"
        if hint:
            text = f"{text}{'' if text.endswith(('.', '!', '?')) else '.'} {hint}"
        super().__init__(text)
        self.message = message

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""

    @property
    def in_doubt(self) -> bool:
        """The server answered, and said what came of it; except a gateway's 502 or 504, whose
        server behind it may have made the change."""
        return self.status in GATEWAY_STATUSES

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(status={self.status!r}, name={self.name!r}, "
            f"message={self.message!r}, error_id={self.error_id!r})"
        )


class BadRequest(ApiError):
    """400: the request did not fit what the server expects; `details` say where."""


class PayloadTooLarge(BadRequest):
    """413: the body is larger than the server accepts."""


class UnsupportedMediaType(BadRequest):
    """415: the body was not sent as `application/json`."""


class Unauthorized(ApiError):
    """401: no token, or one the server does not know."""


class Forbidden(ApiError):
    """403: the token is valid but may not do this."""


class WrongTokenType(Forbidden):
    """403 because the token is of the wrong kind: an admin API token or a personal access token
    on the client API, or a client token on the admin API."""


class NotFound(ApiError):
    """404: no such resource, or (on some servers) no such endpoint."""


class Conflict(ApiError):
    """409: it conflicts with what exists, such as a group name already taken."""


class RateLimited(ApiError):
    """429: too many requests. `retry_after` is the wait the server asked for, in seconds."""

    retry_after: float | None = None


class ServerError(ApiError):
    """5xx: the server failed."""


class InMaintenance(ServerError):
    """503 with Unleash's "Unleash is currently in maintenance mode.": the server refuses every
    admin write until maintenance mode is switched off (`flagdesk maintenance off`); nothing
    was changed (issue 38)."""

    @property
    def in_doubt(self) -> bool:
        return False


#: what Unleash 5 to 8 answer an admin write while in maintenance (503, `{message}` alone)
MAINTENANCE_MESSAGE = "Unleash is currently in maintenance mode."


_BY_STATUS: dict[int, type[ApiError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    413: PayloadTooLarge,
    415: UnsupportedMediaType,
    429: RateLimited,
}


def error_class(status: int) -> type[ApiError]:
    """The `ApiError` subclass for a status."""
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    if status >= 500:
        return ServerError
    if status == 422:
        return BadRequest
    return ApiError


# ---------------------------------------------------------------------------- other


class BadResponse(ClientError):
    """A 2xx answer whose body is not JSON or does not match the API's schema. `field` is the JSON
    path of the first problem ("" when the body is not JSON at all)."""

    def __init__(self, message: str, *, field: str = "") -> None:
        super().__init__(message)
        self.field = field


class Unsupported(ClientError):
    """The server or the token cannot do this, as the connection's capabilities say; nothing was
    sent. `reason` says why and what would make it work."""

    never_sent = True

    def __init__(self, operation: str, reason: str) -> None:
        self.operation = operation
        self.reason = reason
        super().__init__(f"{operation}: {reason}")
