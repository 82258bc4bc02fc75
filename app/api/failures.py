"""Turning what went wrong into a `ClientError` (see `app.api.errors`): a transport failure into
`ServerUnreachable` and its kinds, a failure status and its body into an `ApiError` with a hint,
a 2xx body unlike the model into `BadResponse` naming the JSON path. Every text goes through a
`Scrubber`, so no token reaches a message, even when a server echoes it back."""

from __future__ import annotations

import email.utils
import math
import re
import socket
import ssl
import time
from collections.abc import Callable
from urllib.parse import urlsplit

import httpx
from pydantic import ValidationError

from app.api import errors as e
from app.api.models import ErrorBody
from app.api.wire import json_path

#: hides the connection's tokens in a text
Scrub = Callable[[str], str]


class Scrubber:
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


# ---------------------------------------------------------------------------- transport


def causes(exc: BaseException) -> list[BaseException]:
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


def tls_failure(exc: BaseException) -> ssl.SSLError | None:
    for cause in causes(exc):
        if isinstance(cause, ssl.SSLError):
            return cause
    return None


def classify(
    exc: httpx.TransportError,
    base_url: str,
    connect_timeout: float,
    read_timeout: float,
    scrub: Scrub = str,
) -> e.ServerUnreachable:
    """The `ServerUnreachable` a transport failure is: its kind, the reason in words (`scrub`
    takes secrets out of it), and whether the request certainly never reached the server (the
    one place that is decided: `ClientError.never_sent`)."""
    kind, reason = _kind_and_reason(exc, base_url, connect_timeout, read_timeout)
    return kind(base_url, scrub(reason), never_sent=never_sent(exc))


def never_sent(exc: httpx.TransportError) -> bool:
    """No byte of the request reached the server: no connection was made (refused, a name
    that does not resolve, a failed TLS handshake, none within the connect timeout) or none
    was free in the pool in time. Any other failure came after the request began to leave."""
    return isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout | httpx.PoolTimeout)


def _kind_and_reason(
    exc: httpx.TransportError, base_url: str, connect_timeout: float, read_timeout: float
) -> tuple[type[e.ServerUnreachable], str]:
    host = urlsplit(base_url).hostname or base_url
    if isinstance(exc, httpx.ConnectTimeout):
        return e.TimedOut, f"no connection within {connect_timeout:g} s"
    if isinstance(exc, httpx.ReadTimeout):
        return e.TimedOut, f"no answer within {read_timeout:g} s"
    if isinstance(exc, httpx.WriteTimeout):
        return e.TimedOut, f"sending the request took longer than {read_timeout:g} s"
    if isinstance(exc, httpx.PoolTimeout):
        return e.TimedOut, "too many requests waiting for a connection"
    tls = tls_failure(exc)
    if tls is not None:
        if isinstance(tls, ssl.SSLCertVerificationError):
            why = tls.verify_message or "the certificate is not trusted"
            return e.TlsError, (
                f"the server's TLS certificate was refused ({why}). If the server uses a "
                "private certificate authority, give its CA bundle in the connection settings"
            )
        reason = getattr(tls, "reason", None) or str(tls)
        return e.TlsError, f"the TLS handshake failed ({reason}); is it an https server?"
    for cause in causes(exc):
        if isinstance(cause, ConnectionRefusedError):
            return e.ConnectionRefused, "connection refused (is the server running, on that port?)"
        if isinstance(cause, socket.gaierror):
            return e.HostNotFound, f"the host name {host!r} does not resolve (DNS)"
    if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError | httpx.WriteError):
        text = str(exc).strip() or type(exc).__name__
        return e.ConnectionLost, f"the connection broke before the answer was complete ({text})"
    if isinstance(exc, httpx.ConnectError) and "Name or service not known" in str(exc):
        return e.HostNotFound, f"the host name {host!r} does not resolve (DNS)"
    text = str(exc).strip()
    return e.ServerUnreachable, text or type(exc).__name__


# ---------------------------------------------------------------------------- failure statuses


def looks_like_json(response: httpx.Response) -> bool:
    kind = response.headers.get("content-type", "")
    if "json" in kind:
        return True
    return response.content.lstrip()[:1] in (b"{", b"[")


def normalise_path(path: str) -> str:
    """An error detail's path in flagdesk's one notation (`app.api.wire.json_path`),
    `users[0].user.id`, whether the server wrote `$.users[0].user.id` (JSONPath) or
    `/users/0/user/id` (JSON Pointer)."""
    path = path.strip()
    if path.startswith("$"):
        return path[1:].lstrip(".")
    if path.startswith("/"):
        parts = [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]
        return json_path([int(p) if p.isdigit() else p for p in parts])
    return path


def api_error(method: str, path: str, response: httpx.Response, scrub: Scrub) -> e.ApiError:
    """The `ApiError` a failure status stands for, read from any of the three Unleash error-body
    shapes, HTML, text or nothing."""
    status = response.status_code
    name = response.reason_phrase or "HTTP error"
    message = ""
    error_id: str | None = None
    details: tuple[e.Problem, ...] = ()
    body: ErrorBody | None = None
    if looks_like_json(response):
        try:
            body = ErrorBody.model_validate_json(response.content)
        except ValidationError:
            body = None
    if body is not None and not (body.message or body.name or body.details):
        body = None  # JSON, but not an error body (a proxy's {"error": ...}): quote it
    if body is not None:
        name = body.name or name
        error_id = scrub(body.id) if body.id else None
        message = body.message
        details = tuple(
            e.Problem(scrub(d.message), scrub(normalise_path(d.path or "")))
            for d in body.details or ()
            if d.message
        )
    else:
        # (only an error that is no Unleash error body reads HTML: html.parser and its
        # entities are not imported on the window's way to its first data)
        from app.api.html_pages import readable_text

        message = readable_text(response)
    cls = e.error_class(status)
    if status == 403 and "token type" in message.lower():
        cls = e.WrongTokenType
    if status == 503 and "maintenance mode" in message.lower():
        cls = e.InMaintenance
    error = cls(
        status,
        scrub(name),
        scrub(message),
        details=details,
        error_id=error_id,
        method=method,
        path=path,
        hint=hint(cls, status, path, message, response),
    )
    if isinstance(error, e.RateLimited):
        error.retry_after = retry_after_seconds(response.headers.get("retry-after"))
    if 300 <= status < 400 and response.headers.get("location"):
        error.location = scrub(str(response.url.join(response.headers["location"])))
    return error


def hint(
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
            "The server refused the batch without saying why; Unleash does that when an "
            "application lacks `started` or `interval` (5.12 also when it lacks `strategies`)"
        )
    if cls is e.InMaintenance:
        return (
            "Nothing was changed: the server takes no change until maintenance mode is "
            "switched off (flagdesk maintenance off)"
        )
    if status == 413:
        return "The request body is larger than the server accepts"
    if status == 415:
        return "The server expects application/json"
    if status == 429:
        wait = retry_after_seconds(response.headers.get("retry-after"))
        return f"Try again in {math.ceil(wait)} s" if wait is not None else "Try again later"
    if status == 500 and path.endswith("/reset-password") and "reading 'toString'" in message:
        return (
            "Unleash 5.12 fails like this on a second reset link for the same user within a "
            "minute (later versions answer 429): no link was made; try again in a minute"
        )
    if status >= 500 and not message:
        return "The server failed; its log may say why"
    return ""


# ---------------------------------------------------------------------------- 2xx, but wrong


def bad_response(
    exc: ValidationError,
    response: httpx.Response,
    what: str,
    request: str,
    scrub: Scrub,
    *,
    prefix: tuple[str, int] | None = None,
    content: bytes | None = None,
) -> e.BadResponse:
    """A 2xx body unlike the model `what`, naming the first problem's JSON path. `prefix`: (list
    field, first index) when `exc` is about a slice of a large list; `content`: the body, when
    it was read apart from `response` (a streamed answer)."""
    first = exc.errors()[0]
    if first["type"] in ("json_invalid", "json_type"):
        return not_json(response, request, scrub, content)
    loc = tuple(first["loc"])
    if prefix is not None and loc and isinstance(loc[0], int):  # a slice's item: its place
        loc = (prefix[0], prefix[1] + loc[0], *loc[1:])
    field = json_path(loc)
    more = exc.error_count() - 1
    also = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
    return e.BadResponse(
        scrub(
            f"{request}: the server's answer does not match the API ({what}): "
            f"{field or 'the body'}: {first['msg']}{also}"
        ),
        field=scrub(field),
    )


def not_json(
    response: httpx.Response, request: str, scrub: Scrub, content: bytes | None = None
) -> e.BadResponse:
    from app.api.html_pages import looks_like_html

    kind = response.headers.get("content-type", "").split(";")[0].strip() or "no type"
    looks = "an HTML page" if looks_like_html(response, content) else f"not JSON ({kind})"
    return e.BadResponse(
        scrub(
            f"{request}: the server answered {response.status_code} with {looks}, "
            "where the API sends JSON. Is the server URL right (it should be the "
            "Unleash base URL, not a page of its web interface or a proxy)?"
        )
    )
