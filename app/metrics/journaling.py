"""An upload's entry in its connection's journal: each upload of metrics, and each resume of one,
is one entry (`metrics.upload`), so the History and `flagdesk journal list` show uploads with
the changes made on that server. `BatchUpload` (the one upload path of the window and the
command) writes it; no Qt here.

    entry = await UploadEntry.begin(journal, ledger, resume=False)   # before the first body
    await entry.complete(report)                                     # when the run ends

The `sent` line is on disk before the first body goes. Its `before` names the upload's ledger
folder (where its bodies, ledger, invalid and rejected items are: the entry's "snapshot"), how
many bodies and metrics the ledger holds, how many were still to send, and whether it was a
resume. The entry completes once the run ends, cancelled or not:

- `done`: every body of the ledger accepted;
- `in doubt`: some bodies' fate is unknown (no answer to a request, and no check of the
  server's totals could decide);
- `failed`: anything else: nothing reached the server in this run (refused connections, a
  token refused), or only part of the upload is done (some bodies rejected, or left for
  resume by a cancel or a stop): "partly", as a change checked in part is (`app.actions.check`).

Its message gives the counts (accepted, rejected, in doubt, left for resume: over the whole
ledger, so a resume's entry tells where the upload stands) and the ledger's folder. A body's own
fate is the ledger's business, not the journal's: a process killed mid-run leaves the entry
`sent` (read as in doubt), and resuming the upload settles its bodies (a new entry).

`app.metrics` does not import `app.actions` (the layers are independent): the journal is given
by the caller as `UploadJournal`, which `app.actions.journal.Journal` is. A journal that cannot
be written sends nothing (`NOT_STARTED`), as an action's `NotStarted`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from app.metrics.ledger import Ledger, State
from app.metrics.upload import CANCELLED, UNREACHABLE
from app.registry import UPLOAD_METRICS
from app.text import plural

if TYPE_CHECKING:
    from app.metrics.upload import Report

log = logging.getLogger("flagdesk.metrics")

#: the journal's action key of an upload
ACTION = UPLOAD_METRICS.key
#: the request of every body, as the journal records a request
REQUEST = {"method": "POST", "path": "/api/client/metrics/bulk"}


class PendingEntry(Protocol):
    """An entry begun and not completed (`app.actions.journal.Pending`)."""

    async def done(self, status: int | None, message: str = "") -> None: ...
    async def failed(self, status: int | None, message: str) -> None: ...
    async def in_doubt(self, status: int | None, message: str) -> None: ...


class UploadJournal(Protocol):
    """A connection's journal (`app.actions.journal.Journal`)."""

    @property
    def path(self) -> Path: ...

    async def begin(
        self,
        action: str,
        ids: Iterable[Any],
        *,
        before: Any = None,
        request: dict[str, Any] | None = None,
    ) -> PendingEntry: ...


def before_of(ledger: Ledger, *, resume: bool) -> dict[str, Any]:
    """What the `sent` line says of the upload: its ledger's folder, its bodies and metrics,
    the bodies still to send (all of them, but on a resume), and whether it is a resume."""
    return {
        "ledger": str(ledger.folder),
        "bodies": len(ledger.entries),
        "metrics": ledger.total.metrics,
        "pending": len(ledger.unfinished()),
        "resume": resume,
    }


def counts_text(report: Report) -> str:
    """'10 accepted, 1 rejected, 1 in doubt, 0 left for resume, of 12 bodies (5,000 metrics).
    Ledger: <folder>', over the whole ledger."""
    total = report.total
    left = report.pending.bodies - report.in_doubt
    return (
        f"{report.accepted.bodies:,} accepted, {report.rejected.bodies:,} rejected, "
        f"{report.in_doubt:,} in doubt, {left:,} left for resume, of "
        f"{plural(total.bodies, 'body', 'bodies')} ({plural(total.metrics, 'metric')}). "
        f"Ledger: {report.ledger.parent}"
    )


def _sentence(text: str) -> str:
    return text.strip().rstrip(".")


class UploadEntry:
    """One upload's (or resume's) journal entry, begun: `complete` it with the run's report."""

    def __init__(self, pending: PendingEntry, ledger: Ledger) -> None:
        self.pending = pending
        #: the bodies with an outcome when the run began (a resume's earlier runs)
        self._answered = ledger.counts(State.ACCEPTED).bodies + ledger.counts(State.REJECTED).bodies
        self._completed = False

    @classmethod
    async def begin(cls, journal: UploadJournal, ledger: Ledger, *, resume: bool) -> UploadEntry:
        """The `sent` line, on disk when this returns. Raises `OSError` when the journal
        cannot be written (the caller then sends nothing)."""
        pending = await journal.begin(
            ACTION, [], before=before_of(ledger, resume=resume), request=dict(REQUEST)
        )
        return cls(pending, ledger)

    def outcome(self, report: Report) -> tuple[str, str]:
        """("done" | "failed" | "in doubt", the message) for the run that ended with
        `report`."""
        counts = counts_text(report)
        answered = report.accepted.bodies + report.rejected.bodies
        if report.in_doubt:
            return "in doubt", counts
        if report.complete and not report.rejected.bodies:
            return "done", counts
        if report.complete:  # every body answered, some refused
            return "failed", f"{'Partly' if report.accepted.bodies else 'Refused'}: {counts}"
        if report.stopped == CANCELLED:
            return "failed", f"Cancelled: {counts}"
        why = f": {_sentence(report.error)}" if report.error else ""
        if report.stopped == UNREACHABLE and answered == self._answered:
            return "failed", f"Nothing reached the server{why}. {counts}"
        return "failed", f"Stopped{why}. {counts}"

    async def complete(self, report: Report) -> None:
        """Append the run's outcome (once; later calls do nothing). A journal that cannot take
        it leaves the entry `sent`, read as in doubt: logged, never in place of the upload's
        own outcome."""
        if self._completed:
            return
        self._completed = True
        state, message = self.outcome(report)
        try:
            if state == "done":
                await self.pending.done(None, message)
            elif state == "failed":
                await self.pending.failed(None, message)
            else:
                await self.pending.in_doubt(None, message)
        except OSError as exc:
            log.warning("could not complete the upload's journal entry: %s", exc)


async def complete_soon(entry: UploadEntry | None, report: Report | None) -> None:
    """`entry.complete(report)` from a task that is being cancelled: the line is written even
    if the task is cancelled again meanwhile (the write runs on a thread of its own)."""
    if entry is None or report is None:
        return
    writing = asyncio.ensure_future(entry.complete(report))
    with contextlib.suppress(asyncio.CancelledError):
        await asyncio.shield(writing)
