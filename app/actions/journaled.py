"""Sending one write with its journal entry: what each action of `app.actions` does between the
`sent` line and the answer, so every action records its answer the same way."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from app.actions.journal import Journal, Pending
from app.api import errors as e

log = logging.getLogger("flagdesk.actions")

#: the connection was never made (or the probe ruled the action out): the server got nothing
_NEVER_SENT = (e.ConnectionRefused, e.HostNotFound, e.TlsError, e.Unsupported)
#: a gateway's answer: the server behind it may have made the change
_GATEWAY = (502, 504)


class NotStarted(e.ClientError):
    """The action stopped before its request: nothing was sent (the snapshot or the journal
    could not be written, say). `str()` says what and that nothing changed."""


async def begin_journaled(
    journal: Journal,
    action: str,
    ids: Iterable[Any],
    *,
    before: Any,
    request: Mapping[str, object],
    nothing: str,
    snapshot: tuple[Path, Callable[[Path], object]] | None = None,
) -> Pending:
    """What comes before an action's request: its snapshot, `(path, write)`, written by
    `write(path)` on a worker thread (whole or not at all), then the journal's `sent` line.
    `NotStarted` when either cannot be written, saying so and `nothing` ("Nothing was
    deleted."): then nothing is sent."""
    if snapshot is not None:
        path, write = snapshot
        try:
            await asyncio.to_thread(write, path)
        except OSError as exc:
            raise NotStarted(
                f"Could not write the snapshot {path}: {exc.strerror or exc}. {nothing}"
            ) from None
    try:
        return await journal.begin(action, ids, before=before, request=dict(request))
    except OSError as exc:
        raise NotStarted(
            f"Could not write the journal {journal.path}: {exc.strerror or exc}. {nothing}"
        ) from None


def write_whole(path: Path, data: bytes) -> None:
    """Write `data` to `path` whole or not at all: beside it, fsync'ed, then renamed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(path.name + ".part")
    with part.open("wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(part, path)


async def send_journaled(pending: Pending, send: Awaitable[int]) -> int:
    """Await `send` (the client's write, returning the answer's status) and complete `pending`
    with what came of it: `done` with the status; `failed` with the status and the client's
    message for an error answer or a request that never left; `in doubt` when the answer does
    not say whether the server made the change (the connection lost, no answer in time, a
    gateway's 502 or 504). The client's error is raised again. A task cancelled while waiting
    leaves the entry as it is, `sent`: in doubt."""
    try:
        status = await send
    except e.ApiError as exc:
        if exc.status in _GATEWAY:
            await _complete(pending.in_doubt(exc.status, str(exc)))
        else:
            await _complete(pending.failed(exc.status, str(exc)))
        raise
    except _NEVER_SENT as exc:
        await _complete(pending.failed(None, str(exc)))
        raise
    except e.ClientError as exc:
        await _complete(pending.in_doubt(None, str(exc)))
        raise
    await _complete(pending.done(status))
    return status


async def _complete(record: Awaitable[None]) -> None:
    """The answer is known; a journal that cannot take it leaves the entry in doubt, which is
    what the reader then shows: logged, never in place of the answer."""
    try:
        await record
    except OSError as exc:
        log.warning("could not complete a journal entry: %s", exc)
