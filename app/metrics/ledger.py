"""The ledger of one upload: which body of a batch reached the server, kept on disk so that a
restart resumes where the last run stopped. No Qt here.

An upload lives in a folder of its own (`<data dir>/uploads/<time>-<id>/`, or one given):

    bodies.bin     the exact bytes of every body, one after the other (a newline between two)
    ledger.jsonl   the journal: a header line, then one line per state change of a body
    invalid.ndjson the items left out as invalid (written by the caller, named in the header)
    rejected.json  the metric items of the bodies the server rejected, with its message

A body goes `pending -> sent -> accepted | rejected`. `sent` means the request may have been
written and no answer has come back; an answer that certainly was not counted (429, 503) or a
connection that was never made puts it back to `pending`. The `sent` line is on disk (fsynced)
before the request starts: `mark_sent` returns a `Durable` the uploader awaits, so a process
killed at any moment leaves every request that may have reached the server recorded. Resume
sends exactly the bodies that are neither accepted nor rejected; a body left `sent` (the process
died, or the connection broke, while its request was in flight; or a gateway answered 502 or
504) is *in doubt*: the server may have counted it, so sending it again may count it twice.
The ledger says how many bodies were in doubt, so a report never hides that.

**Why an append-only journal rather than SQLite.** Every state change is one short line
appended to one file; a crash can only tear the last line, which is ignored (and cut off before
the next append), so there is no recovery logic and no second file to keep consistent. The
lines are written and fsync'ed on a thread of the ledger's own, coalescing the changes that
arrive together into one fsync (group commit): the event loop (the GUI's, under qasync) never
blocks on the disk (a worker awaits its `sent` line's `Durable`, the loop goes on), and four
concurrent requests cost one fsync, not four. SQLite in WAL mode
would give the same safety with a schema, a connection that must stay on one thread and a
commit per change on the caller's thread. The journal also reads with `cat` when a person asks
what happened to an upload.

**Why the bodies are copied.** Resume must send exactly the bytes the first run split, even
when the input files have changed or gone; the copy is written and fsync'ed before the first
request, and each body's SHA-256 is checked before it is sent again.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import secrets
import threading
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol

from app.metrics.batch import Cancelled
from app.paths import data_dir

try:  # POSIX: one process at a time may write a ledger
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

LEDGER_NAME = "ledger.jsonl"
BODIES_NAME = "bodies.bin"
REJECTED_NAME = "rejected.json"
#: the items an upload left out as invalid (or too large for any body), one JSON object a line
INVALID_NAME = "invalid.ndjson"
FORMAT = "flagdesk-metrics-ledger"
VERSION = 1


class BodyLike(Protocol):
    """What the ledger needs of a body (`app.metrics.Body` fits)."""

    @property
    def index(self) -> int: ...
    @property
    def data(self) -> bytes: ...
    @property
    def metrics(self) -> int: ...
    @property
    def applications(self) -> int: ...


#: anything JSON kept in the header; a callable is called once the bodies are written (the split
#: knows only then what it left out)
Note = Mapping[str, Any] | Callable[[], Mapping[str, Any]]


class State(StrEnum):
    PENDING = "pending"
    SENT = "sent"
    ACCEPTED = "accepted"
    REJECTED = "rejected"


FINAL = frozenset({State.ACCEPTED, State.REJECTED})


class LedgerError(Exception):
    """The ledger cannot be created, read or written; `str()` names the file and the problem."""


class LedgerBusy(LedgerError):
    """Another process is uploading from this ledger right now."""


class Durable:
    """A journal line on its way to disk, done once it is written and fsynced (or the journal
    failed: then `error` says why). `await durable` from an event loop (the loop is never
    blocked; the journal thread wakes it with `call_soon_threadsafe`), `wait()` from a thread.
    """

    __slots__ = ("_callbacks", "_event", "_lock", "error")

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], None]] = []
        self.error: LedgerError | None = None

    def done(self) -> bool:
        return self._event.is_set()

    def wait(self, timeout: float | None = None) -> None:
        """Block until the line is on disk; raises `LedgerError` if it could not be written."""
        self._event.wait(timeout)
        if self.error is not None:
            raise self.error

    def add_done_callback(self, callback: Callable[[], None]) -> None:
        """Call `callback()` once done: on the journal thread, or at once if done already."""
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(callback)
                return
        callback()

    def _complete(self, error: LedgerError | None) -> None:
        with self._lock:
            self.error = error
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def __await__(self) -> Generator[Any, None, None]:
        return self._landed().__await__()

    async def _landed(self) -> None:
        if not self._event.is_set():
            loop = asyncio.get_running_loop()
            future: asyncio.Future[None] = loop.create_future()

            def wake() -> None:
                with contextlib.suppress(RuntimeError):  # the loop was closed meanwhile
                    loop.call_soon_threadsafe(_resolve, future)

            self.add_done_callback(wake)
            await future
        if self.error is not None:
            raise self.error


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


@dataclass(slots=True)
class Entry:
    """One body of the batch and what became of it."""

    index: int
    offset: int
    size: int
    metrics: int
    applications: int
    sha256: str
    state: State = State.PENDING
    #: the server's status and message for a rejected body
    status: int | None = None
    message: str = ""
    details: list[str] = field(default_factory=list)
    #: requests made for this body, over every run
    attempts: int = 0
    #: attempts that ended without an answer after the request may have reached the server
    unanswered: int = 0
    #: why the last attempt did not succeed (for the report), "" when none failed
    last_error: str = ""
    #: a request was written and its outcome is not known yet
    in_flight: bool = False
    #: attempts that got no answer and that no check has settled since: the server may have
    #: counted the body this many times more than the ledger says (see `app.metrics.reconcile`)
    doubt: int = 0
    #: sent again while in doubt because the person said so (`--resend-in-doubt`)
    resent_in_doubt: bool = False
    #: what the last check of the server's totals decided ("" when none was made)
    checked: str = ""

    @property
    def final(self) -> bool:
        return self.state in FINAL

    @property
    def in_doubt(self) -> bool:
        """The server may have counted this body (once more than the ledger says)."""
        return self.doubt > 0


@dataclass(frozen=True, slots=True)
class Counts:
    """How many bodies, and the metrics in them."""

    bodies: int = 0
    metrics: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(self.bodies + other.bodies, self.metrics + other.metrics)

    def to_json(self) -> dict[str, int]:
        return {"bodies": self.bodies, "metrics": self.metrics}


def uploads_dir() -> Path:
    """Where each upload gets its folder by default."""
    return data_dir() / "uploads"


def ledgers_in(parent: Path | None = None) -> Iterator[Ledger]:
    """The ledgers of the upload folders in `parent` (default `uploads_dir()`), newest first
    (the folders' names start with the time), opened read-only; folders without a readable
    ledger are passed over. Blocking: run it on a worker thread from a loop."""
    parent = parent or uploads_dir()
    try:
        children = sorted((p for p in parent.iterdir() if p.is_dir()), reverse=True)
    except OSError:
        return
    for child in children:
        try:
            yield Ledger.open(child, write=False)
        except LedgerError:
            continue


def new_upload_folder(parent: Path | None = None) -> Path:
    """A fresh folder named by the time (sortable) and a random suffix (unique)."""
    parent = parent or uploads_dir()
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    return parent / f"{stamp}-{secrets.token_hex(3)}"


class Ledger:
    """The journal and the copy of the bodies of one upload.

    Make one with `Ledger.create(bodies, ...)` (blocking: it writes and fsyncs the copy, so call
    it on a worker thread from an event loop) or open an existing one with `Ledger.open(path)`.
    The `mark_*` methods change a body's state in memory at once and queue the journal line;
    `mark_sent` returns the `Durable` of its line, to await before the request starts; `sync()`
    waits until everything queued is on disk. Close it with `close()`.
    """

    def __init__(self, folder: Path, header: dict[str, Any], entries: list[Entry]) -> None:
        self.folder = folder
        self.path = folder / LEDGER_NAME
        self.bodies_path = folder / str(header.get("bodies_file", BODIES_NAME))
        self.header = header
        self.entries = entries
        self._by_index = {entry.index: entry for entry in entries}
        self._journal: _Journal | None = None
        self._bodies_fd: int | None = None

    # ------------------------------------------------------------------ making and opening

    @classmethod
    def create(
        cls,
        bodies: Iterable[BodyLike],
        *,
        folder: Path | None = None,
        server: str = "",
        max_body: int | None = None,
        sources: Iterable[Mapping[str, Any]] = (),
        note: Note | None = None,
        cancel: threading.Event | None = None,
        batch: Mapping[str, Any] | None = None,
        server_id: Mapping[str, Any] | None = None,
    ) -> Ledger:
        """Write the copy of `bodies` and a new journal into `folder` (made if needed, and it
        must hold no ledger yet; default: a new folder under `uploads_dir()`), fsync both, and
        return the ledger open for writing. `bodies` may be an iterator (`Batch.iter_bodies()`):
        each body is written as it comes, so the batch's bodies are never all in memory.

        `server` (the base URL, never a token), `max_body`, `sources` (what the batch was read
        from) and `note` (anything JSON, such as where the invalid items went; or a callable
        returning it, called after the bodies) are kept in the header for the report of a
        later resume; `batch` (the batch's key) and `server_id` (the server's identity, its
        instance id when known), for later uploads to tell that they send this batch to this
        server again (`app.metrics.identity`).

        `cancel` is checked before each body and after the last: once set, `Cancelled` is
        raised and what was written so far is removed (no ledger is left: nothing of it was
        sent). Once the journal's header is in place the ledger is complete, and kept."""
        folder = Path(folder) if folder is not None else new_upload_folder()
        made = not folder.exists()
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise LedgerError(f"Cannot make the upload folder {folder}: {exc.strerror}") from None
        if (folder / LEDGER_NAME).exists():
            raise LedgerError(f"{folder} already holds a ledger; resume it or choose another.")
        seen: set[int] = set()
        table: list[list[Any]] = []
        bodies_path = folder / BODIES_NAME
        try:
            with open(bodies_path, "wb") as out:
                offset = 0
                for body in bodies:
                    if cancel is not None and cancel.is_set():
                        raise Cancelled("the upload was cancelled while its bodies were written")
                    if body.index in seen:
                        raise LedgerError(f"two bodies have the index {body.index}")
                    seen.add(body.index)
                    data = body.data
                    out.write(data)
                    out.write(b"\n")  # readable with `head`; not part of the body
                    table.append([body.index, offset, len(data), body.metrics,
                                  body.applications, hashlib.sha256(data).hexdigest()])  # fmt: skip
                    offset += len(data) + 1
                if cancel is not None and cancel.is_set():  # the split's last step was long
                    raise Cancelled("the upload was cancelled while its bodies were written")
                out.flush()
                os.fsync(out.fileno())
            header: dict[str, Any] = {
                "format": FORMAT,
                "version": VERSION,
                "created": datetime.now(UTC).isoformat(timespec="seconds"),
                "server": server,
                "max_body": max_body,
                "sources": [dict(s) for s in sources],
                "note": dict((note() if callable(note) else note) or {}),
                "batch": dict(batch) if batch is not None else None,
                "server_id": dict(server_id) if server_id is not None else None,
                "bodies_file": BODIES_NAME,
                "bodies": table,
            }
            tmp = folder / (LEDGER_NAME + ".tmp")
            with open(tmp, "wb") as out:
                out.write(_line(header))
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, folder / LEDGER_NAME)
            _fsync_dir(folder)
        except OSError as exc:
            raise LedgerError(
                f"Cannot write the upload's ledger in {folder}: {exc.strerror or exc}"
            ) from None
        except Cancelled:
            _remove_partial(folder, made)
            raise
        ledger = cls(folder, header, [_entry(row) for row in table])
        ledger._open_for_writing(len(_line(header)))
        return ledger

    @classmethod
    def open(cls, path: Path, *, write: bool = True) -> Ledger:
        """Read the ledger at `path` (its folder or its `ledger.jsonl`) and, with `write`,
        lock it (`LedgerBusy` if another process holds it) and open it for appending, cutting
        off a torn last line first."""
        path = Path(path)
        journal = path / LEDGER_NAME if path.is_dir() else path
        try:
            raw = journal.read_bytes()
        except FileNotFoundError:
            raise LedgerError(f"{journal}: no such ledger") from None
        except OSError as exc:
            raise LedgerError(f"Cannot read {journal}: {exc.strerror}") from None
        header, entries, good = _replay(journal, raw)
        ledger = cls(journal.parent, header, entries)
        if not ledger.bodies_path.is_file():
            raise LedgerError(f"{ledger.bodies_path}: the copy of the bodies is missing")
        if write:
            ledger._open_for_writing(good)
        return ledger

    def _open_for_writing(self, good_size: int) -> None:
        fd = os.open(self.path, os.O_RDWR)
        try:
            if fcntl is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    raise LedgerBusy(
                        f"{self.path} is in use: another flagdesk is uploading from it"
                    ) from None
            if os.fstat(fd).st_size != good_size:  # a torn last line: cut it off
                os.ftruncate(fd, good_size)
                os.fsync(fd)
            os.lseek(fd, 0, os.SEEK_END)
        except BaseException:
            os.close(fd)
            raise
        self._journal = _Journal(fd, self.path)

    # ------------------------------------------------------------------ reading

    @property
    def server(self) -> str:
        return str(self.header.get("server") or "")

    @property
    def created(self) -> datetime | None:
        """When the upload was made (None if the header does not say)."""
        try:
            created = datetime.fromisoformat(str(self.header.get("created")))
        except (TypeError, ValueError):
            return None
        return created if created.tzinfo is not None else created.replace(tzinfo=UTC)

    @property
    def max_body(self) -> int | None:
        value = self.header.get("max_body")
        return int(value) if isinstance(value, int) else None

    @property
    def sources(self) -> list[dict[str, Any]]:
        return list(self.header.get("sources") or [])

    @property
    def note(self) -> dict[str, Any]:
        return dict(self.header.get("note") or {})

    def entry(self, index: int) -> Entry:
        return self._by_index[index]

    def settle(self) -> None:
        """Count every request still in flight as unanswered (in doubt): called when a run
        starts, since a run that was cancelled never learnt their outcome."""
        _settle(self.entries)

    def unfinished(self) -> list[Entry]:
        """The bodies without an outcome: neither accepted nor rejected, in order."""
        return [entry for entry in self.entries if not entry.final]

    def sendable(self) -> list[Entry]:
        """The bodies to send: pending, in order. A body in doubt (`sent`, no answer) is not
        one of them until a check found the server lacks it, or the person chose to send it
        again (`mark_resend`)."""
        return [entry for entry in self.entries if entry.state is State.PENDING]

    def in_doubt(self) -> list[Entry]:
        """The bodies in doubt now: sent, no answer, not settled by a check."""
        return [e for e in self.entries if e.state is State.SENT and e.doubt > 0]

    def counts(self, state: State) -> Counts:
        chosen = [e for e in self.entries if e.state is state]
        return Counts(len(chosen), sum(e.metrics for e in chosen))

    @property
    def total(self) -> Counts:
        return Counts(len(self.entries), sum(e.metrics for e in self.entries))

    def body(self, index: int) -> bytes:
        """The exact bytes of body `index`, read from the copy and checked against the
        SHA-256 recorded when it was made."""
        entry = self._by_index[index]
        if self._bodies_fd is None:
            try:
                self._bodies_fd = os.open(self.bodies_path, os.O_RDONLY)
            except OSError as exc:
                raise LedgerError(f"Cannot read {self.bodies_path}: {exc.strerror}") from None
        data = os.pread(self._bodies_fd, entry.size, entry.offset)
        if len(data) != entry.size or hashlib.sha256(data).hexdigest() != entry.sha256:
            raise LedgerError(
                f"{self.bodies_path}: body {index} is damaged (its bytes differ from the ones "
                "recorded); it cannot be sent again"
            )
        return data

    # ------------------------------------------------------------------ writing

    def mark_sent(self, index: int) -> Durable:
        """The request for body `index` is about to be written. Start it only once the returned
        `Durable` is done: then a process killed during the request leaves the body `sent` (in
        doubt) on disk, never `pending` while the server may have counted it."""
        entry = self._by_index[index]
        entry.state = State.SENT
        entry.attempts += 1
        entry.in_flight = True
        durable = Durable()
        self._append({"i": index, "e": "sent"}, durable)
        return durable

    def mark_retry(self, index: int, why: str) -> None:
        """The attempt certainly did not count: the server answered 429 or 503 (or another
        status meaning it did not process the body), or the request never left (no
        connection was made, or it was not started). The body is pending again."""
        entry = self._by_index[index]
        entry.state = State.PENDING
        entry.last_error = why
        entry.in_flight = False
        self._append({"i": index, "e": "retry", "why": why})

    def mark_lost(self, index: int, why: str) -> None:
        """The attempt ended without an answer after the request may have reached the server
        (connection lost, no answer in time, a gateway's 502 or 504): the body stays `sent`,
        and is in doubt."""
        entry = self._by_index[index]
        entry.state = State.SENT
        entry.unanswered += 1
        entry.doubt += 1
        entry.last_error = why
        entry.in_flight = False
        self._append({"i": index, "e": "lost", "why": why})

    def mark_checked(self, index: int, outcome: str) -> None:
        """A check of the server's totals decided this body in doubt (`app.metrics.reconcile`:
        "has": counted, now accepted; "lacks": not counted, pending again; "once"/"twice": an
        accepted body's earlier attempts were not / were counted too). "undecided" changes
        nothing but is kept for the report."""
        entry = self._by_index[index]
        _check(entry, outcome)
        self._append({"i": index, "e": "checked", "outcome": outcome})

    def mark_resend(self, index: int) -> None:
        """The person chose to send this body in doubt again without proof that the server
        lacks it (`--resend-in-doubt`): pending, and it stays in doubt (it may count twice)."""
        entry = self._by_index[index]
        entry.state = State.PENDING
        entry.resent_in_doubt = True
        self._append({"i": index, "e": "resend"})

    def mark_accepted(self, index: int) -> None:
        entry = self._by_index[index]
        entry.state = State.ACCEPTED
        entry.in_flight = False
        self._append({"i": index, "e": "accepted"})

    def mark_rejected(
        self, index: int, status: int, message: str, details: Sequence[str] = ()
    ) -> None:
        entry = self._by_index[index]
        entry.state = State.REJECTED
        entry.status = status
        entry.message = message
        entry.details = list(details)
        entry.in_flight = False
        record: dict[str, Any] = {"i": index, "e": "rejected", "status": status, "msg": message}
        if details:
            record["details"] = list(details)
        self._append(record)

    def _append(self, record: dict[str, Any], durable: Durable | None = None) -> None:
        if self._journal is None:
            raise LedgerError(f"{self.path} was opened read-only")
        record["t"] = round(time.time(), 3)
        self._journal.append(_line(record), durable)

    @property
    def failure(self) -> LedgerError | None:
        """Set when the journal could not be written (a full disk): stop uploading."""
        return self._journal.failure if self._journal is not None else None

    def sync(self, timeout: float | None = None) -> None:
        """Block until every state change so far is on disk (raises `LedgerError` if the
        journal could not be written)."""
        if self._journal is not None:
            self._journal.sync(timeout)

    def close(self) -> None:
        """Write what is queued, release the lock and close the files."""
        if self._journal is not None:
            journal, self._journal = self._journal, None
            journal.close()
        if self._bodies_fd is not None:
            os.close(self._bodies_fd)
            self._bodies_fd = None

    def release_bodies(self) -> None:
        """Close the copy of the bodies that `body()` opened (it opens it again when needed):
        after reading the bodies of a ledger opened only to be read, which nobody closes."""
        if self._bodies_fd is not None:
            os.close(self._bodies_fd)
            self._bodies_fd = None

    def discard(self) -> None:
        """Close the ledger and remove it, its copy of the bodies and its folder (when that is
        then empty): for an upload nothing of which was sent. Blocking."""
        self.close()
        for path in (self.path, self.bodies_path):
            with contextlib.suppress(OSError):
                path.unlink()
        with contextlib.suppress(OSError):
            self.folder.rmdir()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def write_rejected(self, path: Path | None = None) -> Path | None:
        """Save the metric items of every rejected body, each with the server's status and
        message, as one JSON document (default `rejected.json` in the folder). None, and no
        file, when nothing was rejected."""
        rejected = [e for e in self.entries if e.state is State.REJECTED]
        if not rejected:
            return None
        path = path or self.folder / REJECTED_NAME
        items = []
        for entry in rejected:
            try:
                content = json.loads(self.body(entry.index))
            except (LedgerError, ValueError):
                content = {}
            items.append(
                {
                    "body": entry.index,
                    "status": entry.status,
                    "message": entry.message,
                    "details": entry.details,
                    "applications": content.get("applications", []),
                    "metrics": content.get("metrics", []),
                }
            )
        document = {
            "rejected_bodies": len(rejected),
            "rejected_metrics": sum(e.metrics for e in rejected),
            "server": self.server,
            "rejected": items,
        }
        tmp = path.with_name(path.name + ".tmp")
        try:
            tmp.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", "utf-8")
            os.replace(tmp, path)
        except OSError as exc:
            raise LedgerError(f"Cannot write {path}: {exc.strerror}") from None
        return path


# ---------------------------------------------------------------------------- the journal


class _Journal:
    """Appends lines to the journal and fsyncs them on a thread of its own (group commit)."""

    def __init__(self, fd: int, path: Path) -> None:
        self._fd = fd
        self._path = path
        self._cond = threading.Condition()
        self._queue: list[bytes] = []
        #: the `Durable`s of the lines in `_queue`, done after the fsync that holds them
        self._waiting: list[Durable] = []
        self._queued = 0  # lines handed over so far
        self._durable = 0  # lines written and fsync'ed so far
        self._closing = False
        self.failure: LedgerError | None = None
        self._thread = threading.Thread(target=self._run, name="ledger-journal", daemon=True)
        self._thread.start()

    def append(self, line: bytes, durable: Durable | None = None) -> None:
        with self._cond:
            if self.failure is not None:
                raise self.failure
            if self._closing:
                raise LedgerError(f"{self._path} is closed")
            self._queue.append(line)
            if durable is not None:
                self._waiting.append(durable)
            self._queued += 1
            self._cond.notify_all()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._closing:
                    self._cond.wait()
                if not self._queue:
                    return
                lines, self._queue = self._queue, []
                waiting, self._waiting = self._waiting, []
                upto = self._queued
            try:
                _write_all(self._fd, b"".join(lines))
                os.fsync(self._fd)
            except OSError as exc:
                with self._cond:
                    self.failure = LedgerError(
                        f"Cannot write the ledger {self._path}: {exc.strerror or exc}"
                    )
                    waiting += self._waiting  # queued meanwhile: never written either
                    self._waiting = []
                    self._cond.notify_all()
                for durable in waiting:
                    durable._complete(self.failure)
                return
            with self._cond:
                self._durable = upto
                self._cond.notify_all()
            for durable in waiting:
                durable._complete(None)

    def sync(self, timeout: float | None = None) -> None:
        with self._cond:
            target = self._queued
            self._cond.wait_for(
                lambda: self._durable >= target or self.failure is not None, timeout
            )
            if self.failure is not None:
                raise self.failure

    def close(self) -> None:
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        self._thread.join()
        with contextlib.suppress(OSError):
            os.close(self._fd)  # also releases the lock


def _remove_partial(folder: Path, made: bool) -> None:
    """Remove what a cancelled `Ledger.create` wrote (and the folder, if it made it)."""
    for name in (BODIES_NAME, LEDGER_NAME + ".tmp"):
        with contextlib.suppress(OSError):
            (folder / name).unlink()
    if made:
        with contextlib.suppress(OSError):
            folder.rmdir()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _line(record: Mapping[str, Any]) -> bytes:
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def _fsync_dir(folder: Path) -> None:
    """Make a rename in `folder` durable (POSIX; a no-op where directories cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _entry(row: Sequence[Any]) -> Entry:
    index, offset, size, metrics, applications, digest = row
    return Entry(int(index), int(offset), int(size), int(metrics), int(applications), str(digest))


def _replay(journal: Path, raw: bytes) -> tuple[dict[str, Any], list[Entry], int]:
    """The header, the entries with their states, and the size of the journal's good part
    (everything up to the last complete line)."""
    end = raw.rfind(b"\n") + 1  # a last line without its newline is torn: ignored
    lines = raw[:end].split(b"\n")[:-1]
    if not lines:
        raise LedgerError(f"{journal}: empty or torn before its header was complete")
    try:
        header = json.loads(lines[0])
    except ValueError:
        raise LedgerError(f"{journal}:1: the header is not JSON") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise LedgerError(f"{journal}:1: not a flagdesk metrics ledger")
    if header.get("version") != VERSION:
        raise LedgerError(
            f"{journal}:1: ledger version {header.get('version')!r}; this flagdesk reads "
            f"version {VERSION}"
        )
    try:
        entries = [_entry(row) for row in header["bodies"]]
    except (KeyError, TypeError, ValueError):
        raise LedgerError(f"{journal}:1: the header's list of bodies is damaged") from None
    by_index = {entry.index: entry for entry in entries}
    for number, line in enumerate(lines[1:], start=2):
        try:
            record = json.loads(line)
            entry = by_index[record["i"]]
            event = record["e"]
        except (ValueError, KeyError, TypeError):
            if number == len(lines):  # a damaged last line is a torn one
                end -= len(line) + 1
                break
            raise LedgerError(f"{journal}:{number}: not a ledger record") from None
        if event == "checked":  # may settle an accepted body's doubt too
            _check(entry, str(record.get("outcome", "")))
            continue
        if entry.final:
            continue  # an outcome is final
        if event == "sent":
            entry.state = State.SENT
            entry.attempts += 1
            entry.in_flight = True
        elif event == "retry":
            entry.state = State.PENDING
            entry.last_error = str(record.get("why", ""))
            entry.in_flight = False
        elif event == "resend":
            entry.state = State.PENDING
            entry.resent_in_doubt = True
        elif event == "lost":
            entry.state = State.SENT
            entry.unanswered += 1
            entry.doubt += 1
            entry.last_error = str(record.get("why", ""))
            entry.in_flight = False
        elif event == "accepted":
            entry.state = State.ACCEPTED
            entry.in_flight = False
        elif event == "rejected":
            entry.state = State.REJECTED
            entry.status = int(record.get("status", 0))
            entry.message = str(record.get("msg", ""))
            entry.details = [str(d) for d in record.get("details", [])]
            entry.in_flight = False
    _settle(entries)
    return header, entries, end


def _settle(entries: Iterable[Entry]) -> None:
    for entry in entries:
        if entry.in_flight:  # the run ended while this request was in flight
            entry.unanswered += 1
            entry.doubt += 1
            entry.in_flight = False


def _check(entry: Entry, outcome: str) -> None:
    entry.checked = outcome
    if outcome == "has":
        entry.state = State.ACCEPTED
        entry.doubt = 0
    elif outcome == "lacks":
        entry.state = State.PENDING
        entry.doubt = 0
    elif outcome in ("once", "twice"):
        entry.doubt = 0
