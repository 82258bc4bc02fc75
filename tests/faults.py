"""Small HTTP servers on 127.0.0.1 that misbehave on purpose, for the client's error tests (and,
with `Decide`, a proxy in front of a real sandbox that holds one chosen request).

A `FaultServer` runs on the test's own event loop (start it inside the coroutine the test passes
to `asyncio.run`) and answers each request with the next `Action` of its script; when the script
runs out it repeats the last one. It records every request it read completely in `requests` and
counts accepted connections in `connections`.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

CERTS = Path(__file__).parent / "api" / "certs"
#: the throwaway CA that signed `server.pem` (for `localhost` and `127.0.0.1`)
CA_BUNDLE = str(CERTS / "ca.pem")

_REASONS = {
    200: "OK",
    202: "Accepted",
    400: "Bad Request",
    404: "Not Found",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


def closed_port() -> int:
    """A port on 127.0.0.1 where nothing listens (it was free a moment ago)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def server_tls() -> ssl.SSLContext:
    """A server-side TLS context with the test certificate."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(CERTS / "server.pem", CERTS / "server.key")
    return context


@dataclass(frozen=True)
class Seen:
    """A request as the server read it."""

    method: str
    target: str
    headers: dict[str, str]
    body: bytes


@dataclass(frozen=True)
class Reply:
    """Answer with this status, body and headers (a `Content-Length` is added)."""

    status: int = 200
    body: bytes = b"{}"
    headers: Mapping[str, str] = field(default_factory=lambda: {"Content-Type": "application/json"})


@dataclass(frozen=True)
class Cut:
    """Announce `body` whole (its Content-Length), send its first `after` bytes, then close:
    a connection lost in the middle of an answer."""

    body: bytes
    after: int
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=lambda: {"Content-Type": "application/json"})


@dataclass(frozen=True)
class Drop:
    """Read the request, then close the connection without a word."""


@dataclass(frozen=True)
class Hang:
    """Read the request and never answer (until the server stops)."""


@dataclass(frozen=True)
class Decide:
    """Choose the answer from the request: `choose(seen)` returns the action to take (forward
    it elsewhere and `Reply` with the answer, or `Hang` on the one request a test holds)."""

    choose: Callable[[Seen], Awaitable[Reply | Cut | Drop | Hang]]


Action = Reply | Cut | Drop | Hang | Decide


class FaultServer:
    """`async with FaultServer(Reply(503), Reply(200, b"...")) as server: ... server.url`."""

    def __init__(self, *script: Action, tls: ssl.SSLContext | None = None, port: int = 0) -> None:
        self.script: list[Action] = list(script) or [Reply()]
        self.tls = tls
        self.port = port
        self.requests: list[Seen] = []
        self.connections = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self._stopping = asyncio.Event()

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    async def start(self) -> FaultServer:
        self._server = await asyncio.start_server(
            self._connection, "127.0.0.1", self.port, ssl=self.tls
        )
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        """Stop listening, close every connection and let the handlers finish."""
        self._stopping.set()
        if self._server is not None:
            self._server.close()
        for writer in list(self._writers):
            writer.close()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=2)
        if self._server is not None:
            await self._server.wait_closed()

    async def __aenter__(self) -> FaultServer:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    def _next_action(self) -> Action:
        index = min(len(self.requests) - 1, len(self.script) - 1)
        return self.script[index]

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        self._writers.add(writer)
        self.connections += 1
        try:
            while await self._one_request(reader, writer):
                pass
        except (ConnectionError, ssl.SSLError, asyncio.IncompleteReadError):
            pass
        finally:
            self._writers.discard(writer)
            if task is not None:
                self._tasks.discard(task)
            writer.close()

    async def _one_request(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Serve one request; False when the connection is done."""
        first = await reader.read(1)
        if not first:
            return False
        if not first.isalpha():
            # not HTTP at all (such as a TLS handshake): answer as a plain HTTP server does
            writer.write(b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n")
            await writer.drain()
            return False
        head = first + await reader.readuntil(b"\r\n\r\n")
        request_line, *header_lines = head.decode("latin-1").split("\r\n")
        method, target, _ = request_line.split(" ", 2)
        headers = {}
        for line in header_lines:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        seen = Seen(method, target, headers, body)
        self.requests.append(seen)
        action = self._next_action()
        if isinstance(action, Decide):
            action = await action.choose(seen)
        if isinstance(action, Drop):
            return False
        if isinstance(action, Hang):
            await self._stopping.wait()
            return False
        reason = _REASONS.get(action.status, "Whatever")
        lines = [f"HTTP/1.1 {action.status} {reason}", f"Content-Length: {len(action.body)}"]
        lines += [f"{name}: {value}" for name, value in action.headers.items()]
        sent = action.body[: action.after] if isinstance(action, Cut) else action.body
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + sent)
        await writer.drain()
        return not isinstance(action, Cut)
