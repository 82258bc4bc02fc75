"""How the sandbox answers: JSON bodies of the wire models, the spec's error body for a
`Refusal` (validation errors with JSON paths in the one notation of `app.api.wire`), the 415
guard, the body limit, and the two answers of up to 100,000 items streamed from a thread."""

from __future__ import annotations

import asyncio
import json
import re
import threading
import uuid
from collections.abc import AsyncIterator, Callable, Generator, Iterator, Sequence
from typing import Any

import msgspec
from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from app.api import models as m
from app.api.wire import json_path
from sandbox.store import Refusal, Store
from sandbox.versions import Played

#: chunks of a streamed answer read ahead of the client (each a few hundred kB)
STREAM_AHEAD = 4


def json_response(body: BaseModel | list[Any], status: int = 200) -> Response:
    if isinstance(body, list):
        content = b"[" + b",".join(item.model_dump_json(exclude_unset=True).encode()
                                   for item in body) + b"]"  # fmt: skip
    else:
        content = body.model_dump_json(exclude_unset=True).encode()
    return Response(content, status_code=status, media_type="application/json")


def data_response(body: Any, status: int = 200) -> Response:
    """An answer built as plain data (dicts, lists, text, numbers: a batch export, the API
    tokens), written by msgspec: a project's export of 500 flags (0.45 MB) in 1 ms, the standard
    library's encoder 4.5."""
    return Response(msgspec.json.encode(body), status_code=status, media_type="application/json")


def error_response(error: Refusal, played: Played | None = None) -> Response:
    """The spec's error body for `error`; playing an Unleash release, that release's
    (`played_error_body`)."""
    if played is not None:
        content = json.dumps(played_error_body(error, played)).encode()
        return Response(content, status_code=error.status, media_type="application/json")
    body = m.ErrorBody(id=str(uuid.uuid4()), name=error.name, message=error.message)
    if error.details is not None:
        body.details = [m.ErrorDetail(**d) for d in error.details]
    return json_response(body, error.status)


#: the spec's error names that the Unleash releases call otherwise (all four alike)
UNLEASH_NAMES = {
    "ValidationError": "BadDataError",
    "ContentTypeerror": "ContentTypeError",
    "NoAccessError": "PermissionError",
}


def played_error_body(error: Refusal, played: Played) -> dict[str, Any]:
    """The error body as the release `played` shapes it (measured on 5.12.8, 6.10.1, 7.6.5 and
    8.2.0, tests/compat/test_error_bodies.py): `{message}` alone for a `bare` refusal; else
    `{id, name, message, details}`, with the `id` left out from 7.0 for what a route's handler
    raises, every detail's message repeated as its `description` on 5.x, and the refusal's
    `extra` fields after."""
    if error.by == "bare":
        return {"message": error.message}
    body: dict[str, Any] = {}
    if error.by == "checks" or played.handler_errors_have_ids:
        body["id"] = str(uuid.uuid4())
    body["name"] = UNLEASH_NAMES.get(error.name, error.name)
    body["message"] = error.message
    details = [dict(d) for d in error.details or [{"message": error.message}]]
    if played.details_repeat_as_description:
        for detail in details:
            detail["description"] = detail.get("message", "")
    body["details"] = details
    return body | error.extra


def error_path(loc: Sequence[int | str]) -> str:
    """pydantic's error location as the path an error detail names: a body location as a JSON
    path (`("body", "users", 0, "user", "id")` -> `$.users[0].user.id`), a path, query or
    header parameter named as such (`path parameter id`)."""
    if loc and loc[0] in ("path", "query", "header"):
        return f"{loc[0]} parameter {'.'.join(str(x) for x in loc[1:])}"
    return json_path(loc[1:] if loc and loc[0] == "body" else loc, root="$")


def validation_error(errors: Sequence[Any], what: str = "request") -> Refusal:
    details = []
    for err in errors:
        path = error_path(err.get("loc", ()))
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
    malformed = any(err.get("type") == "json_invalid" for err in errors)
    return Refusal(400, "ValidationError", summary, details, by="bare" if malformed else "checks")


#: the routes Unleash 8.2 declares with `acceptAnyContentType` (a revive is a POST with no body;
#: so are deprecating and reactivating a strategy definition, which 8.2 takes with no content
#: type, measured), turning a flag on or off in an environment (issue 37), and switching a
#: banner on or off (issue 38: Enterprise's, a POST with no body)
ANY_CONTENT_TYPE = re.compile(
    r"^/api/admin/(archive/revive/[^/]+|projects/[^/]+/(revive|delete)"
    r"|strategies/[^/]+/(deprecate|reactivate)|banners/[^/]+/(on|off)"
    r"|projects/[^/]+/features/[^/]+/environments/[^/]+/(on|off))$"
)


class JsonContentTypeGuard:
    """415 `ContentTypeerror` for a body-carrying request whose content type is not JSON.

    Pure ASGI and first in line, so it answers before routing reads or parses the body.
    """

    def __init__(self, app: ASGIApp, played: Played | None = None) -> None:
        self.app = app
        self.played = played

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] == "http"
            and scope["method"] in ("POST", "PUT", "PATCH")
            and not ANY_CONTENT_TYPE.match(scope["path"])
        ):
            content_type = ""
            for key, value in scope["headers"]:
                if key == b"content-type":
                    content_type = value.decode("latin-1")
                    break
            media = content_type.split(";", 1)[0].strip().lower()
            if media != "application/json" and not media.endswith("+json"):
                shown = media or "no content type"
                refusal = Refusal(
                    415,
                    "ContentTypeerror",
                    f"We do not accept {shown}, we accept [application/json]",
                    by="checks",
                )
                response = error_response(refusal, self.played)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def too_large(limit: int) -> Refusal:
    return Refusal(
        413,
        "ContentTooLarge",
        f"The request body is larger than the limit of {limit:,} bytes.",
        by="bare",
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
    """A JSON answer streamed from a `ChunkPump`, which is stopped however the response ends:
    complete, failed, or cut off by a client that went away.

    The client going away is watched as Starlette's `StreamingResponse` watches it (the body is
    sent while `http.disconnect` is awaited; the first to end stops the other), with asyncio's
    own tasks rather than Starlette's anyio task group: the group imports anyio's asyncio
    backend the first time, 25-40 ms of CPU in the middle of the first streamed answer. That
    answer is among a connection's first requests (the capability probe reads the archive), so
    the GUI's first data waited for the import (`bench/gui_startup.py`); nothing else the
    sandbox serves needs anyio's backend."""

    def __init__(self, pump: ChunkPump, first: bytes) -> None:
        super().__init__(pump.chunks(first), media_type="application/json")
        self.pump = pump

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        sending = asyncio.ensure_future(self.stream_response(send))
        gone = asyncio.ensure_future(self.listen_for_disconnect(receive))
        try:
            await asyncio.wait((sending, gone), return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (sending, gone):
                task.cancel()
            # both ended before the pump is stopped (its chunks are no longer awaited)
            await asyncio.gather(sending, gone, return_exceptions=True)
            self.pump.stop()
        if not sending.cancelled():
            sending.result()  # what failed while sending (a failed read: the answer is cut)


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
