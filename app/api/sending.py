"""Sending with retries: `Sender`, the `httpx.AsyncClient` of one connection and the one place a
request goes out (`send`), the base of `AdminClient`.

- Reads are retried on connection failures and 502/503/504 with bounded exponential backoff and
  jitter (`RetryPolicy`); a 429 waits for `Retry-After`. A write is retried only when the server
  certainly did not process it: the connection was never made, or it answered 429.
- A failure status raises its `ApiError`, a transport failure its `ServerUnreachable` (both made
  by `app.api.failures`).
- The token travels only in the `Authorization` header, and is registered with the log's
  redaction for the life of the sender. A token that cannot be a header value (a line break of
  a wrapped paste, a control character, a character outside ASCII) is refused before any
  request (`check_token`, which every place a token comes in calls with its own name for that
  place), in words that name the kind of character and never the token.
- One connection pool a connection (keep-alive; 5 s to connect, 30 s to answer); TLS verified
  against certifi plus an optional CA bundle, or, when the person turns it off, not at all with
  a warning in the log; `User-Agent: flagdesk/<version>`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import random
import ssl
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

import certifi
import httpx

from app import __version__, logs
from app.api import errors as e
from app.api.failures import Scrubber, api_error, classify, retry_after_seconds

USER_AGENT = f"flagdesk/{__version__}"
CONNECT_TIMEOUT = 5.0
READ_TIMEOUT = 30.0
#: idle connections kept open for the next requests (httpx keeps 20). Each request walks every
#: connection of the pool, asking each idle one whether the server has closed it (a poll of its
#: socket): the capability probe's burst left nine open, and a read four at a time (the
#: snapshot's `Gate`, most of the program's gates) then cost 0.98 ms of client CPU a request
#: where it costs 0.82 with four kept. A burst wider than this opens more, closed as they idle.
KEPT_CONNECTIONS = 4
_RETRY_STATUSES = frozenset({502, 503, 504})

log = logging.getLogger("flagdesk.api")


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


class UnusableToken(ValueError):
    """A token that cannot be sent in an HTTP header. The message names where it came from and
    the kind of character that is wrong, never the token."""


def token_problem(token: str) -> str | None:
    """What keeps `token` out of an `Authorization` header, in words that name the kind of
    character and its place ("a line break at position 14"), never the token; None when it can
    go. A header value is printable ASCII (httpx encodes it as ASCII, h11 refuses control
    characters and white space at either end)."""
    for place, char in enumerate(token, 1):
        code = ord(char)
        if char in "\r\n":
            kind = "a line break"
        elif code < 0x20 or 0x7F <= code < 0xA0:
            kind = "a control character"
        elif code > 0x7E:
            kind = "a character outside ASCII"
        else:
            continue
        return f"{kind} at position {place}"
    if token != token.strip(" "):
        return "a space at its start or end"
    return None


def check_token(token: str | None, where: str) -> None:
    """Refuse `token` (from `where`: "the environment variable FLAGDESK_TOKEN", "the token
    typed") when it cannot be a header value: `UnusableToken`, saying what is in it and where
    it came from. An empty or absent token passes (whether one is needed is the caller's
    question)."""
    problem = token_problem(token) if token else None
    if problem is None:
        return
    hint = " (was it wrapped when it was copied?)" if problem.startswith("a line break") else ""
    raise UnusableToken(
        f"{where} holds {problem}{hint}: a token is one line of ASCII letters, digits and "
        "punctuation, so it cannot be sent."
    )


def tls_context(verify_tls: bool, ca_bundle: str | None, base_url: str) -> ssl.SSLContext | bool:
    """What the client checks certificates against: certifi's roots plus `ca_bundle`.

    A plain-HTTP base URL (the embedded sandbox, a server on loopback) never uses TLS: the
    client only asks its base URL and follows no redirect. Loading certifi's roots for it cost
    20-35 ms of the GUI thread on the way to the first data; such a client gets no context,
    which changes nothing it does. A CA bundle given is loaded all the same, so that one that
    cannot be read is refused whatever the URL."""
    if not verify_tls or (base_url.startswith("http:") and not ca_bundle):
        return False
    context = ssl.create_default_context(cafile=certifi.where())
    if ca_bundle:
        try:
            context.load_verify_locations(cafile=ca_bundle)
        except (OSError, ssl.SSLError) as exc:
            raise ValueError(f"The CA bundle {ca_bundle} cannot be read: {exc}") from None
    return context


def may_retry(error: e.ServerUnreachable, idempotent: bool) -> bool:
    """Reads retry on any transport failure; writes only when nothing reached the server."""
    if isinstance(error, e.TlsError):
        return False  # a certificate does not fix itself
    return error.never_sent or idempotent


class Sender:
    """One server's HTTP connection pool, its tokens, and `send` with retries.

    `token` is the admin-side token: an admin API token or a personal access token.
    `client_token`, when given, is what `send(..., token=...)` callers use for `/api/client/*`.
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
        check_token(token, "The token")
        check_token(client_token, "The client token")
        self._token = token
        self._client_token = client_token
        self._scrubber = Scrubber([t for t in (token, client_token) if t])
        # the log handler hides these wherever they turn up (httpcore logs headers, say)
        self._secrets = [t for t in (token, client_token) if t]
        for secret in self._secrets:
            logs.register_secret(secret)
        self._sleep = sleep
        self._rng = random.Random()
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
            verify=tls_context(verify_tls, ca_bundle, base_url),
            transport=transport,
            follow_redirects=False,
            limits=httpx.Limits(max_keepalive_connections=KEPT_CONNECTIONS),
        )

    @property
    def base_url(self) -> str:
        """The server's base URL, without a trailing slash."""
        return str(self._http.base_url).rstrip("/")

    @property
    def has_client_token(self) -> bool:
        return bool(self._client_token)

    @property
    def token_prefix(self) -> str:
        """The part of the admin-side token before the first `:` (`user` for a personal access
        token, `*` or a project for an admin API token); "" for a token of another shape. Not a
        secret: the part after the `:` is."""
        return self._token.split(":", 1)[0] if ":" in self._token else ""

    # ---- the clean-up report (issue 36): a token list's entry that is this connection's own
    def is_own_token(self, listed: str) -> bool:
        """Whether `listed`, an API token's `secret` as a list gives it, is this connection's
        token: the whole secret (real Unleash lists them in clear) or the sandbox's masked
        handle of it (`<head>.…<last 8>`). The token itself is never returned."""
        token = self._token
        if listed == token:
            return True
        head, dot, _ = token.rpartition(".")
        return bool(dot) and len(token) > 8 and listed == f"{head}.…{token[-8:]}"

    @property
    def closed(self) -> bool:
        return self._http.is_closed

    async def aclose(self) -> None:
        if not self._http.is_closed:
            for secret in self._secrets:
                logs.forget_secret(secret)
        await self._http.aclose()

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
        read_timeout: float | None = None,
        shown_path: str = "",
        path_secret: str = "",
    ) -> httpx.Response:
        """Send with retries; a failure status raises its `ApiError`. `attempts` overrides the
        policy's number of tries (1: no retry at all). With `stream` a successful response comes
        back with its body unread: the caller reads it and closes it. `read_timeout` overrides
        how long the answer may take (a write the server takes long over). `shown_path` is what
        the log and the error say in place of a `path` that holds a secret (an API token's),
        `path_secret`, which is scrubbed from the error's texts too (a server may echo the
        path)."""
        shown = shown_path or path
        scrub = self._scrub if not path_secret else _also(self._scrub, Scrubber([path_secret]))
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
                timeout = (
                    httpx.Timeout(read_timeout, connect=self.connect_timeout)
                    if read_timeout is not None
                    else httpx.USE_CLIENT_DEFAULT
                )
                request = self._http.build_request(
                    method, path, params=params, content=content, headers=request_headers,
                    timeout=timeout,
                )  # fmt: skip
                response = await self._http.send(request, stream=stream)
                if stream and not response.is_success:
                    try:
                        await response.aread()  # the error body, for its message
                    finally:
                        await response.aclose()
            except httpx.TransportError as exc:
                error = self._unreachable(exc, read_timeout)
                if attempt < policy.attempts and may_retry(error, idempotent):
                    delay = policy.backoff(attempt, self._rng)
                    log.info("%s %s: %s; retry %d in %.2f s", method, shown, error.reason,
                             attempt, delay)  # fmt: skip
                    await self._sleep(delay)
                    continue
                log.info("%s %s: %s", method, shown, error.reason)
                raise error from None
            finally:
                self._count(-1)
            status = response.status_code
            log.debug("%s %s -> %d in %.0f ms", method, shown, status,
                      (time.perf_counter() - started) * 1000)  # fmt: skip
            if response.is_success:
                return response
            if attempt < policy.attempts:
                wait = self._retry_delay(response, attempt, idempotent)
                if wait is not None:
                    log.info("%s %s: %d; retry %d in %.2f s", method, shown, status, attempt, wait)
                    await self._sleep(wait)
                    continue
            raise api_error(method, shown, response, scrub)

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

    def _unreachable(
        self, exc: httpx.TransportError, read_timeout: float | None = None
    ) -> e.ServerUnreachable:
        return classify(exc, self.base_url, self.connect_timeout,
                        read_timeout or self.read_timeout, self._scrub)  # fmt: skip

    def _scrub(self, text: str) -> str:
        return self._scrubber(text)


def _also(first: Callable[[str], str], then: Callable[[str], str]) -> Callable[[str], str]:
    """A scrub that applies `first`, then `then`."""
    return lambda text: then(first(text))
