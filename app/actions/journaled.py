"""Sending one write with its journal entry: what each action of `app.actions` does before the
request (the action allowed here, the snapshot written, the `sent` line) and between the `sent`
line and the answer, so every action does them and records its answer the same way."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.actions.journal import Actor, Journal, Pending
from app.api import errors as e
from app.registry import Action

if TYPE_CHECKING:
    from app.api.capabilities import Capabilities
    from app.api.client import AdminClient

log = logging.getLogger("flagdesk.actions")


class NotStarted(e.ClientError):
    """The action stopped before its request: nothing was sent (the snapshot or the journal
    could not be written, say). `str()` says what and that nothing changed."""

    never_sent = True


def count_to_type(count: int) -> str | None:
    """What a person types to confirm deleting `count` users at once (the inactive users', or
    `flagdesk users delete` of many ids): their number when more than one; None (asked yes or
    no) for one."""
    return f"{count}" if count > 1 else None


def typed_confirms(expected: str | None, typed: str) -> bool:
    """Whether `typed` confirms where `expected` is asked to be typed (always, when nothing
    is: `expected` None). Spaces around it do not count."""
    return expected is None or typed.strip() == expected


def journal_of(connection: str, caps: Capabilities) -> Journal:
    """The journal of the connection named `connection`, its entries made as the token the
    capabilities describe (its kind, and the user a personal access token acts as)."""
    return Journal(Actor(connection, caps.base_url, caps.token_kind, caps.user_name))


async def require_action(client: AdminClient, action: Action) -> None:
    """`Unsupported`, saying why, when the capabilities rule `action` out (nothing sent)."""
    availability = (await client.capabilities()).action(action)
    if not availability.available:
        raise e.Unsupported(availability.title, availability.reason)


async def write_snapshot(path: Path, write: Callable[[], object], nothing: str) -> None:
    """Run `write` (which writes the snapshot at `path`) on a worker thread; `NotStarted`
    (saying `nothing`: "Nothing was deleted.") when it cannot be written."""
    try:
        await asyncio.to_thread(write)
    except OSError as exc:
        raise NotStarted(
            f"Could not write the snapshot {path}: {exc.strerror or exc}. {nothing}"
        ) from None


async def begin_entry(
    journal: Journal,
    action: str,
    ids: Iterable[Any],
    *,
    before: Any,
    request: dict[str, Any],
    nothing: str,
) -> Pending:
    """`journal.begin(...)`; `NotStarted` (saying `nothing`) when the journal cannot be
    written."""
    try:
        return await journal.begin(action, ids, before=before, request=request)
    except OSError as exc:
        raise NotStarted(
            f"Could not write the journal {journal.path}: {exc.strerror or exc}. {nothing}"
        ) from None


async def send_journaled(pending: Pending, send: Awaitable[int]) -> int:
    """Await `send` (the client's write, returning the answer's status) and complete `pending`
    with what came of it: `done` with the status; `failed` with the status and the client's
    message for an error answer or a request that never left; `in doubt` when the answer does
    not say whether the server made the change (`ClientError.in_doubt`: the connection lost,
    no answer in time, a gateway's 502 or 504). The client's error is raised again. A task
    cancelled while waiting leaves the entry as it is, `sent`: in doubt."""
    try:
        status = await send
    except e.ClientError as exc:
        answered = exc.status if isinstance(exc, e.ApiError) else None
        if exc.in_doubt:
            await _complete(pending.in_doubt(answered, str(exc)))
        else:
            await _complete(pending.failed(answered, str(exc)))
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
