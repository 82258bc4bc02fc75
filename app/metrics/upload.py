"""Uploading a batch's bodies to `POST /api/client/metrics/bulk`, concurrently, losing nothing.

    upload = await Upload.start(client, batch.bodies(), sources=...)   # writes the ledger
    report = await upload.run(progress=callback)                       # sends; Report at the end
    upload.cancel()                                                    # from anywhere on the loop
    upload = await Upload.resume(client, ledger_path)                  # after a crash or Cancel

No Qt here: the command line runs it with `asyncio.run`, the GUI on the qasync loop, the same
way. Each body goes through the ledger (`app.metrics.ledger`) before and after its request, so
the ledger always tells which bodies the server has.

What each outcome does ("pending again": the attempt certainly was not counted, `mark_retry`;
"in doubt": the server may have counted it, `mark_lost`):

- 2xx: accepted.
- 400, 413, 415, 422 and the other 4xx not named below; 500: rejected, not retried, reported
  per body with the server's message.
- 429: pending again; every worker pauses for `Retry-After` (a backoff when absent). A wait
  over `RetryPolicy.max_retry_after` stops the upload.
- 408, 503; connection refused, host not found, no connection in time (connect timeout, or no
  free connection in the pool): pending again after a backoff with jitter (`RetryPolicy`).
- 502, 504 (a gateway answered: the server behind it may have stored the body); connection
  lost, no answer in time: in doubt, and not sent again in this run (the worker goes on with
  the next body after a backoff); `app.metrics.reconcile` later decides from the server's
  totals whether the server holds it.
- `attempts` failures in a row of one body (of the two kinds above) stop the upload
  (unreachable).
- 3xx: the upload stops, naming the `Location` the server points to (the client follows no
  redirect: a redirected POST may be replayed or turned into a GET); use that URL.
- 401, 403: the upload stops: the token is unknown, or of the wrong kind (admin and personal
  tokens are refused on this endpoint by real servers).
- 404, 405, 501 and the other 5xx, a TLS failure: the upload stops; this server cannot take
  metrics here.

"Stops" means no new request is started, the requests in flight get their answers, and every
body not accepted or rejected stays in the ledger for `resume`. `cancel()` stops the same way;
cancelling the task running `run()` stops at once: the requests in flight are recorded in doubt
(no answer will come), which is also consistent.

A request starts only once its body's `sent` line is on disk (`Ledger.mark_sent` returns a
`Durable` the worker awaits; the journal thread's group commit makes that one fsync per batch of
workers): a process killed at any moment leaves every body the server may have counted `sent`
in the ledger, so Resume reports it in doubt rather than silently sending it again.

Why the uploader retries rather than the client: a retry is a new attempt in the ledger
(`sent` again), and a connection lost after the request was written must be recorded as
"maybe counted" before the body is sent again. `AdminClient.send_bulk_metrics(retry=False)`
makes exactly one attempt.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.api import errors as e
from app.api.client import AdminClient, RetryPolicy
from app.metrics.ledger import BodyLike, Counts, Entry, Ledger, LedgerError, Note, State
from app.text import plural

log = logging.getLogger("flagdesk.metrics")

DEFAULT_CONCURRENCY = 4
#: an upload tries a little harder than a read: a failed upload is work for a person
UPLOAD_RETRY = RetryPolicy(attempts=6, base_delay=0.5, max_delay=8.0, max_retry_after=90.0)
#: 429s a body may get in a row before the upload gives up (each waited out)
MAX_RATE_LIMITED = 50

#: retried; the server certainly did not count the body
RETRY_STATUSES = frozenset({408, 429, 503})
#: retried, but recorded in doubt: a gateway answered, and the server behind it may have
#: stored the body before the gateway gave up on it
GATEWAY_STATUSES = frozenset({502, 504})
STOP_STATUSES = frozenset({401, 403, 404, 405})

#: why an upload stopped before every body had an outcome
CANCELLED = "cancelled"
UNREACHABLE = "unreachable"
UNAUTHORISED = "unauthorised"
REFUSED = "refused"
LEDGER = "ledger"

WRONG_TOKEN = (
    "Metrics are sent with a client token: admin API tokens and personal access tokens are "
    "refused on this endpoint by real servers."
)


@dataclass(frozen=True, slots=True)
class Progress:
    """Where an upload stands. One request per body (retries are not counted here); totals
    are over the whole ledger, so a resumed upload starts where the last run ended."""

    requests_done: int
    requests_total: int
    metrics_done: int
    metrics_total: int
    bytes_done: int
    bytes_total: int
    accepted: int
    rejected: int
    #: attempts repeated so far in this run (after a 429, 5xx or a connection failure)
    retries: int

    @property
    def fraction(self) -> float:
        return self.requests_done / self.requests_total if self.requests_total else 1.0


@dataclass(frozen=True, slots=True)
class Rejection:
    """A body the server refused, and why."""

    body: int
    status: int
    message: str
    metrics: int
    details: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "body": self.body,
            "status": self.status,
            "message": self.message,
            "metrics": self.metrics,
            "details": list(self.details),
        }


@dataclass(frozen=True, slots=True)
class Report:
    """The end of a run, over the whole ledger (earlier runs included)."""

    ledger: Path
    server: str
    accepted: Counts
    rejected: Counts
    pending: Counts
    #: bodies in doubt now: a request got no answer (the connection was lost, no answer in
    #: time, a 502 or 504 from a gateway, the process stopped while it was in flight), the
    #: server may have counted them, and no check has told yet: they are not sent again
    #: without the person's say (see `app.metrics.reconcile`)
    in_doubt: int
    rejections: tuple[Rejection, ...]
    #: the metric items of the rejected bodies, with the server's messages (None: none)
    rejected_file: Path | None
    #: "" when every body got its outcome; else CANCELLED, UNREACHABLE, UNAUTHORISED, REFUSED
    #: or LEDGER
    stopped: str
    #: what stopped it, to show a person ("" when nothing did)
    error: str
    #: HTTP requests made in this run, retries included
    requests: int
    retries: int
    elapsed: float
    #: bodies in doubt that a check of the server's totals found counted (not sent again)
    found: int = 0
    #: bodies in doubt that a check found missing: sent again (or pending, to send)
    missing: int = 0
    #: of those, the ones sent again and answered
    missing_sent: int = 0
    #: bodies in doubt sent again because the person said so: the server may count them twice
    resent_in_doubt: int = 0
    #: accepted bodies that a check found counted twice (an attempt before the 202 was counted)
    counted_twice: int = 0
    #: why the bodies still in doubt could not be decided ("" when none, or not checked)
    doubt_reason: str = ""

    @property
    def complete(self) -> bool:
        """Every body has an outcome (accepted or rejected)."""
        return self.pending.bodies == 0

    @property
    def total(self) -> Counts:
        return self.accepted + self.rejected + self.pending

    @property
    def in_doubt_text(self) -> str:
        """What is known of the bodies in doubt and what was done with them, as sentences
        that say what happened ("" when there were none)."""
        return " ".join(doubt_sentences(self))

    def to_json(self) -> dict[str, Any]:
        return {
            "ledger": str(self.ledger),
            "server": self.server,
            "complete": self.complete,
            "accepted": self.accepted.to_json(),
            "rejected": self.rejected.to_json(),
            "pending": self.pending.to_json(),
            "in_doubt": self.in_doubt,
            "in_doubt_found": self.found,
            "in_doubt_missing": self.missing,
            "in_doubt_missing_sent": self.missing_sent,
            "resent_in_doubt": self.resent_in_doubt,
            "counted_twice": self.counted_twice,
            "doubt_reason": self.doubt_reason or None,
            "rejections": [r.to_json() for r in self.rejections],
            "rejected_file": str(self.rejected_file) if self.rejected_file else None,
            "stopped": self.stopped or None,
            "error": self.error or None,
            "requests": self.requests,
            "retries": self.retries,
            "elapsed_s": round(self.elapsed, 3),
        }


#: how the command line says "send them anyway"; the window names its button instead
RESEND_HINT = "--resend-in-doubt"


def doubt_sentences(report: Report, resend: str = RESEND_HINT) -> list[str]:
    """The report's sentences about bodies in doubt, each saying what happened, no more.
    `resend`: how the person asks for bodies in doubt to be sent anyway."""
    said: list[str] = []
    if report.found:
        said.append(
            f"{plural(report.found, 'body', 'bodies')} in doubt (no answer to a request) "
            f"{_were(report.found)} found counted in the server's totals: not sent again."
        )
    if report.missing:
        sent = report.missing_sent
        text = (
            f"{plural(report.missing, 'body', 'bodies')} in doubt {_were(report.missing)} "
            "missing from the server's totals"
        )
        if sent == report.missing:
            text += ": sent again, counted once."
        elif sent:
            text += f": {sent:,} sent again, the others are pending."
        else:
            text += ": pending, to be sent again."
        said.append(text)
    if report.resent_in_doubt:
        n = report.resent_in_doubt
        them = "it" if n == 1 else "them"
        said.append(
            f"{plural(n, 'body', 'bodies')} in doubt {_were(n)} sent again as asked "
            f"({resend}) without proof the server lacked {them}: the server may have "
            f"counted {them} twice."
        )
    if report.counted_twice:
        said.append(
            f"The server's totals show {plural(report.counted_twice, 'body', 'bodies')} "
            "counted twice (an attempt before the one answered was counted too)."
        )
    if report.in_doubt:
        one = report.in_doubt == 1
        text = (
            f"{plural(report.in_doubt, 'body', 'bodies')} got no answer to a request and "
            f"{'is' if one else 'are'} left in doubt, not sent again: the server may have "
            f"counted {'it' if one else 'them'}"
        )
        text += f" ({report.doubt_reason})." if report.doubt_reason else "."
        text += (
            f" Resume checks the server's totals again; {resend} sends "
            f"{'it' if one else 'them'} anyway (the server may then count "
            f"{'it' if one else 'them'} twice)."
        )
        said.append(text)
    return said


def _were(n: int) -> str:
    return "was" if n == 1 else "were"


class _Stop(Exception):
    """Raised inside a worker to stop the upload."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


class _Gate:
    """After a 429 every worker waits, not only the one that got it."""

    def __init__(self) -> None:
        self.until = 0.0

    def hold(self, seconds: float) -> None:
        self.until = max(self.until, time.monotonic() + seconds)

    def remaining(self) -> float:
        return max(0.0, self.until - time.monotonic())


class Upload:
    """One upload: a ledger, a client with a client token, and the workers that send.

    Make one with `start()` or `resume()`; `run()` may be called again after it stopped (it
    sends what is still unfinished). `close()` when done (releases the ledger's lock)."""

    def __init__(
        self,
        client: AdminClient,
        ledger: Ledger,
        *,
        concurrency: int = DEFAULT_CONCURRENCY,
        retry: RetryPolicy | None = None,
        rng: random.Random | None = None,
    ) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.client = client
        self.ledger = ledger
        self.concurrency = concurrency
        self.retry = retry or UPLOAD_RETRY
        self._rng = rng or random.Random()
        self._cancel = asyncio.Event()
        #: set by cancel() and when the upload must stop: wakes every waiting worker
        self._halt = asyncio.Event()
        self._gate = _Gate()
        self._done = _Done()
        self._stop: _Stop | None = None
        self._running = False
        self._requests = 0
        self._retries = 0
        #: answers lost in a row (any body): too many stop the upload
        self._lost = 0
        self._progress: Callable[[Progress], None] | None = None
        #: every wait the uploader chose (seconds): for tests and the log
        self.waits: list[float] = []

    # ------------------------------------------------------------------ making

    @classmethod
    async def start(
        cls,
        client: AdminClient,
        bodies: Iterable[BodyLike],
        *,
        folder: Path | None = None,
        max_body: int | None = None,
        sources: Iterable[Mapping[str, Any]] = (),
        note: Note | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
        retry: RetryPolicy | None = None,
        cancel: threading.Event | None = None,
        batch: Mapping[str, Any] | None = None,
        server_id: Mapping[str, Any] | None = None,
    ) -> Upload:
        """Write the ledger and the copy of `bodies` (on a worker thread: 100 MB take a
        fraction of a second, not to be spent on the GUI's loop) and return the upload, ready
        to `run()`. `bodies` may be an iterator such as `Batch.iter_bodies()`, consumed on that
        thread. `folder`: where (default: a new folder under the user data folder).

        `cancel`, once set, stops the writing between two bodies: `Cancelled` is raised and no
        ledger is left. Cancelling the task does the same and then waits for the thread, so
        that no ledger stays open (and locked) behind it; a ledger the thread completed
        meanwhile is closed, and can be resumed (nothing of it was sent). `batch` and
        `server_id` go into the ledger's header (`Ledger.create`)."""
        stop = cancel if cancel is not None else threading.Event()
        creation = asyncio.ensure_future(
            asyncio.to_thread(
                Ledger.create,
                bodies,
                folder=folder,
                server=client.base_url,
                max_body=max_body,
                sources=list(sources),
                note=note,
                cancel=stop,
                batch=batch,
                server_id=server_id,
            )
        )
        try:
            ledger = await asyncio.shield(creation)
        except asyncio.CancelledError:
            stop.set()
            await _outlive(creation)
            if not creation.cancelled() and creation.exception() is None:
                creation.result().close()
            raise
        return cls(client, ledger, concurrency=concurrency, retry=retry)

    @classmethod
    async def resume(
        cls,
        client: AdminClient,
        ledger: Path,
        *,
        concurrency: int = DEFAULT_CONCURRENCY,
        retry: RetryPolicy | None = None,
    ) -> Upload:
        """Open the ledger at `ledger` (its folder or file) for the bodies still unfinished.
        The caller chooses the server: normally `Ledger.open(...).server`, the one it was for.
        Cancelling the task closes the ledger the thread opened meanwhile (its lock too)."""
        opening = asyncio.ensure_future(asyncio.to_thread(Ledger.open, ledger))
        try:
            opened = await asyncio.shield(opening)
        except asyncio.CancelledError:
            await _outlive(opening)
            if not opening.cancelled() and opening.exception() is None:
                opening.result().close()
            raise
        return cls(client, opened, concurrency=concurrency, retry=retry)

    def close(self) -> None:
        self.ledger.close()

    # ------------------------------------------------------------------ running

    def cancel(self) -> None:
        """Stop: start no new request, let the ones in flight get their answer. `run()` then
        returns its Report (stopped = CANCELLED). Safe to call at any time, more than once."""
        self._cancel.set()
        self._halt.set()

    @property
    def running(self) -> bool:
        return self._running

    def progress(self) -> Progress:
        done = self._done
        return Progress(
            requests_done=done.accepted + done.rejected,
            requests_total=done.requests_total,
            metrics_done=done.metrics,
            metrics_total=done.metrics_total,
            bytes_done=done.bytes,
            bytes_total=done.bytes_total,
            accepted=done.accepted,
            rejected=done.rejected,
            retries=self._retries,
        )

    async def run(self, progress: Callable[[Progress], None] | None = None) -> Report:
        """Send every unfinished body, `concurrency` at a time, and report.

        `progress` is called on the loop after each body's outcome and each retry (keep it
        cheap; the GUI only stores the figures)."""
        if self._running:
            raise RuntimeError("this upload is already running")
        self._running = True
        self._cancel.clear()
        self._halt.clear()
        self._stop = None
        self._requests = self._retries = self._lost = 0
        self.ledger.settle()
        self._progress = progress
        started = time.perf_counter()
        self._done = _Done.of(self.ledger)
        try:
            self._emit()
            queue = iter(self.ledger.sendable())
            workers = [
                asyncio.create_task(self._worker(queue), name=f"metrics-upload-{n}")
                for n in range(min(self.concurrency, max(1, len(self.ledger.entries))))
            ]
            try:
                results = await asyncio.gather(*workers, return_exceptions=True)
            except asyncio.CancelledError:
                # stopped at once: each worker records its request in flight as in doubt
                # before this returns, so that `report()` counts it
                for worker in workers:
                    worker.cancel()
                await _outlive(asyncio.gather(*workers, return_exceptions=True))
                raise
            for result in results:
                if isinstance(result, BaseException) and not isinstance(result, _Stop):
                    raise result
            if self._stop is None and self._cancel.is_set() and self.ledger.sendable():
                self._stop = _Stop(CANCELLED, "The upload was cancelled.")
            try:
                await asyncio.to_thread(self.ledger.sync)
                rejected_file = await asyncio.to_thread(self.ledger.write_rejected)
            except LedgerError as exc:
                self._stop = self._stop or _Stop(LEDGER, str(exc))
                rejected_file = None
            return self._report(time.perf_counter() - started, rejected_file)
        finally:
            self._running = False
            self._progress = None

    def report(self) -> Report:
        """The ledger as it stands (no rejected file written)."""
        return self._report(0.0, None)

    def _report(self, elapsed: float, rejected_file: Path | None) -> Report:
        ledger = self.ledger
        rejections = tuple(
            Rejection(e.index, e.status or 0, e.message, e.metrics, tuple(e.details))
            for e in ledger.entries
            if e.state is State.REJECTED
        )
        pending = ledger.counts(State.PENDING) + ledger.counts(State.SENT)
        stop = self._stop
        entries = ledger.entries
        return Report(
            ledger=ledger.path,
            server=ledger.server or self.client.base_url,
            accepted=ledger.counts(State.ACCEPTED),
            rejected=ledger.counts(State.REJECTED),
            pending=pending,
            in_doubt=len(ledger.in_doubt()),
            found=sum(1 for e in entries if e.checked == "has"),
            missing=sum(1 for e in entries if e.checked == "lacks"),
            missing_sent=sum(1 for e in entries if e.checked == "lacks" and e.final),
            resent_in_doubt=sum(1 for e in entries if e.resent_in_doubt),
            counted_twice=sum(1 for e in entries if e.checked == "twice"),
            rejections=rejections,
            rejected_file=rejected_file,
            stopped=stop.reason if stop else "",
            error=stop.message if stop else "",
            requests=self._requests,
            retries=self._retries,
            elapsed=elapsed,
        )

    # ------------------------------------------------------------------ workers

    def _stopping(self) -> bool:
        return self._halt.is_set()

    def _halt_with(self, stop: _Stop) -> _Stop:
        if self._stop is None:
            self._stop = stop
            log.info("metrics upload stops: %s", stop.message)
        self._halt.set()
        return self._stop

    async def _worker(self, queue: Iterator[Entry]) -> None:
        try:
            for entry in queue:
                if self._stopping():
                    return
                await self._deliver(entry)
        except _Stop as stop:
            raise self._halt_with(stop) from None
        except LedgerError as exc:
            raise self._halt_with(_Stop(LEDGER, str(exc))) from None
        except BaseException:
            self._halt.set()  # a bug or a cancelled task: the others stop too
            raise

    async def _deliver(self, entry: Entry) -> None:
        """Send one body until it has an outcome, or the upload stops."""
        ledger = self.ledger
        index = entry.index
        data = b""  # read at the first attempt (a body is never empty: it has its envelope)
        failures = 0  # transient failures in a row
        limited = 0  # 429s in a row
        while True:
            if not await self._pause(self._gate.remaining()):
                return
            if ledger.failure is not None:
                raise ledger.failure
            written = ledger.mark_sent(index)
            try:
                if not data:  # read (and checked) while the journal's fsync runs
                    data = ledger.body(index)
                await written  # the `sent` line is on disk before the request starts
            except BaseException:  # cancelled, a damaged copy, or the journal failed: not sent
                with contextlib.suppress(LedgerError):
                    ledger.mark_retry(index, "not sent")
                raise
            if self._stopping():  # stopped while the line was written: do not start it
                ledger.mark_retry(index, "not sent: the upload stopped")
                return
            self._requests += 1
            try:
                await self.client.send_bulk_metrics(data, retry=False)
            except asyncio.CancelledError:
                with contextlib.suppress(LedgerError):
                    ledger.mark_lost(index, "stopped while the request was in flight")
                raise
            except e.RateLimited as exc:
                ledger.mark_retry(index, f"{exc.status} rate limited")
                limited += 1
                wait = exc.retry_after
                if wait is None:
                    wait = self.retry.backoff(min(limited, 8), self._rng)
                elif wait > self.retry.max_retry_after:
                    raise _Stop(
                        UNREACHABLE,
                        f"{self.client.base_url} asks to wait {wait:.0f} s before more metrics "
                        f"(rate limited); resume later.",
                    ) from None
                if limited > MAX_RATE_LIMITED:
                    raise _Stop(
                        UNREACHABLE,
                        f"{self.client.base_url} kept answering 429 (rate limited) "
                        f"{limited} times for body {index}; resume later.",
                    ) from None
                self._gate.hold(wait)
                self._retried(wait)
                continue
            except e.ApiError as exc:
                if exc.status in GATEWAY_STATUSES:
                    ledger.mark_lost(index, f"{exc.status} {exc.name}")
                    await self._answer_lost(str(exc))
                    return
                if exc.status in RETRY_STATUSES:
                    ledger.mark_retry(index, f"{exc.status} {exc.name}")
                    failures += 1
                    await self._backoff(failures, str(exc))
                    continue
                if 300 <= exc.status < 400:
                    ledger.mark_retry(index, f"{exc.status} {exc.name}")  # not processed
                    raise _Stop(REFUSED, _redirected(self.client.base_url, exc)) from None
                if exc.status in STOP_STATUSES or exc.status > 500:
                    ledger.mark_retry(index, f"{exc.status} {exc.name}")  # not processed
                    if exc.status in (401, 403):
                        said = str(exc)
                        if not isinstance(exc, e.WrongTokenType):
                            said = f"{said} {WRONG_TOKEN}"
                        raise _Stop(UNAUTHORISED, said) from None
                    raise _Stop(REFUSED, str(exc)) from None
                ledger.mark_rejected(
                    index, exc.status, exc.message or str(exc), [str(d) for d in exc.details]
                )
                self._done.add(entry)
                self._emit()
                return
            except e.TlsError as exc:
                ledger.mark_retry(index, exc.reason)
                raise _Stop(UNREACHABLE, str(exc)) from None
            except e.ServerUnreachable as exc:
                if not exc.never_sent:
                    ledger.mark_lost(index, exc.reason)
                    await self._answer_lost(str(exc))
                    return
                ledger.mark_retry(index, exc.reason)
                failures += 1
                await self._backoff(failures, str(exc))
                continue
            except e.ClientError as exc:  # nothing else is expected from a send
                ledger.mark_lost(index, str(exc))
                raise _Stop(UNREACHABLE, str(exc)) from None
            ledger.mark_accepted(index)
            self._lost = 0
            self._done.add(entry)
            self._emit()
            return

    async def _answer_lost(self, error: str) -> None:
        """A request got no answer after it may have reached the server: the body stays in
        doubt (not sent again in this run: see `app.metrics.reconcile`); the worker goes on
        with the next body after a backoff, and too many in a row stop the upload."""
        self._lost += 1
        await self._backoff(self._lost, error)

    async def _backoff(self, failures: int, error: str) -> None:
        if failures >= self.retry.attempts:
            raise _Stop(
                UNREACHABLE,
                f"{error} (gave up after {failures} attempts; the bodies not sent stay in the "
                "ledger for resume)",
            )
        wait = self.retry.backoff(failures, self._rng)
        log.info("metrics upload: %s; retry in %.2f s", error, wait)
        self._retried(wait)
        await self._pause(wait)

    def _retried(self, wait: float) -> None:
        self._retries += 1
        self.waits.append(wait)
        self._emit()

    async def _pause(self, seconds: float) -> bool:
        """Wait `seconds` unless the upload stops first; False when it stopped."""
        if self._stopping():
            return False
        if seconds > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._halt.wait(), seconds)
        return not self._stopping()

    def _emit(self) -> None:
        if self._progress is not None:
            self._progress(self.progress())


def _redirected(server: str, exc: e.ApiError) -> str:
    """A 3xx: the client follows no redirect, so every body would fail the same way."""
    location = str(getattr(exc, "location", "") or "")
    if location:
        return (
            f"{server}: the server answered {exc.status} and points to {location}: use that "
            "URL. The bodies not sent stay pending in the ledger."
        )
    return (
        f"{server}: the server answered {exc.status} (a redirect to another URL): use the URL "
        "it points to. The bodies not sent stay pending in the ledger."
    )


async def _outlive(future: asyncio.Future[Any]) -> None:
    """Wait until `future` is done, even if the task waiting is cancelled meanwhile (the
    caller re-raises the cancellation it is handling)."""
    while not future.done():
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait({future})


class _Done:
    """Running totals for `Progress`, so a progress call costs nothing per body."""

    def __init__(self) -> None:
        self.requests_total = self.metrics_total = self.bytes_total = 0
        self.accepted = self.rejected = self.metrics = self.bytes = 0

    @classmethod
    def of(cls, ledger: Ledger) -> _Done:
        done = cls()
        for entry in ledger.entries:
            done.requests_total += 1
            done.metrics_total += entry.metrics
            done.bytes_total += entry.size
            if entry.final:
                done.add(entry)
        return done

    def add(self, entry: Entry) -> None:
        if entry.state is State.ACCEPTED:
            self.accepted += 1
        else:
            self.rejected += 1
        self.metrics += entry.metrics
        self.bytes += entry.size
