"""One upload path for `flagdesk metrics upload` and the metrics window: `BatchUpload`.

Both call it; each renders its steps through `UploadHooks` (the terminal prints and draws a
bar, the window stores the figures and emits signals) and cancels it with `cancel()` (Ctrl+C,
or the Cancel button and a new connection). No Qt here.

    upload = BatchUpload(spec, hooks=hooks, concurrency=4)
    outcome = await upload.send(batches, max_body=BULK_METRICS_BODY_LIMIT)   # or .resume(folder)
    checks = await dry_run_checks(batches, spec)                               # --dry-run

The steps of `send`, and what each case does (one behaviour for both, the safe one):

1. **The client** is made from the connection (its URL and TLS settings, with the client
   token). An unreadable CA bundle: nothing is sent, no ledger is made (`NOT_STARTED`).
2. **Sent already?** The batch's key (`identity.batch_key`: its metric items, whatever the
   bodies and their order) and the server's identity (`identity.read_server_identity`: its
   instance id, read with the connection's admin token, else its normalised address) are
   looked for in the ledgers of the earlier uploads (under `uploads_dir()`, and the parent of a
   folder chosen; a ledger made before keys were kept gets its key from its bodies, once:
   `identity.ledger_key`). Unless `again` is given, nothing is split, written or sent when:
   - **unfinished already**: an upload of the same batch (or read from the same files) to the
     same server still has bodies without an outcome and has sent something the server may
     have counted (a body accepted or in doubt): sending the batch anew would count what that
     upload sent twice. The outcome names that upload (`UNFINISHED`): the command line says
     its `--resume` command, the window offers to resume it.
   - **sent already**: an upload of the same batch to the same server had bodies accepted: the
     server has counted them, and would count them twice. The outcome names the earlier
     uploads, when and where (`ALREADY_SENT`); the command line then wants `--again`, the
     window a confirmation.
   `--dry-run` finds the same (`look_for_earlier`), and says it the same way.
3. **The ledger**: the batches are split into bodies and written with the ledger in a new upload
   folder (`Upload.start`, on a worker thread), its header keeping the batch's key and the
   server's identity. Cancelled meanwhile: what was written is removed and nothing is sent
   (`CANCELLED_EARLY`). It cannot be written: nothing is sent (`NOT_STARTED`).
4. **Checks** (the same as `--dry-run` prints, `dry_run_checks`): the problems of reading and
   of the split (items too large for any body), and the server checks: metrics for another
   environment than the client token's, and for feature names the server has no flag of (read
   with the connection's admin token; when they cannot be read, `features_error` says why and
   the names are not checked). Given to `UploadHooks.checked` before anything is sent.
5. **Invalid items** (and items too large for any body) are saved to `INVALID_NAME` in the
   upload's folder. If that fails, nothing is sent (a person would not know which items were
   left out): the ledger is kept, closed, and Resume sends the valid items anyway
   (`INVALID_NOT_SAVED`). (The window used to upload anyway.)
5b. **The baseline** (`app.metrics.reconcile.read_baseline`): the server's totals for the
   keys the batch touches, read with the connection's admin token and written to the upload's
   folder before the first request, so that bodies in doubt can later be checked. Without an
   admin token (or when the read fails) the upload goes on, and a body in doubt stays in doubt.
6. **Cancelled before the first request** (Cancel during steps 3 to 5): nothing is sent; the
   ledger is kept for Resume (`CANCELLED_EARLY`, `folder` set).
7. **Sending** (`Upload.run`): the `Report` over the whole ledger. `cancel()` stops gracefully
   (the requests in flight get their answers); cancelling the task stops at once (they are
   counted in doubt): `report` is then set (stopped, `CANCELLED`) before `CancelledError` is
   raised again.
8. **Bodies in doubt** (a request got no answer) are not sent again blindly: once the run has
   sent everything else, `app.metrics.reconcile.reconcile` checks them against the server's
   totals (after waiting for the server to store what it received): the ones it holds are
   accepted, the ones it lacks are sent again (another run), and the ones it cannot decide stay
   in doubt, with why, unless `resend_in_doubt` (`--resend-in-doubt`, or the window's
   confirmation naming the risk) sends them anyway.

`resume` opens the ledger of an unfinished upload (no split, no check, no "sent already"),
checks its bodies in doubt first (step 8), sends exactly the bodies of that upload that are
pending and goes on at step 7; the invalid items it left out are read from the ledger's note.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import shutil
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from app.api.client import RetryPolicy
from app.api.errors import ClientError
from app.api.wire import BULK_METRICS_BODY_LIMIT, accepted_environment
from app.metrics.batch import Batch, Cancelled, InputProblem, token_environment
from app.metrics.identity import (
    BatchKey,
    ServerIdentity,
    batch_key,
    ledger_key,
    read_server_identity,
    same_address,
)
from app.metrics.journaling import UploadEntry, UploadJournal, complete_soon
from app.metrics.ledger import INVALID_NAME, Ledger, LedgerError, State, ledgers_in, uploads_dir
from app.metrics.reconcile import (
    LACKS,
    NoBaseline,
    Reconciliation,
    read_baseline,
    reconcile,
    settle_seconds,
)
from app.metrics.split import Body
from app.metrics.upload import CANCELLED, DEFAULT_CONCURRENCY, Progress, Report, Upload
from app.text import plural

if TYPE_CHECKING:
    from app.api.client import AdminClient
    from app.connection import ConnectionSpec
    from app.metrics.batch import Row

#: the smallest body limit offered: a body must hold an application and a metric
MIN_MAX_BODY = 1_024
#: the most requests at a time offered
MAX_CONCURRENCY = 64

#: why `send` or `resume` sent nothing (`Outcome.failure`); "" when it ran
NOT_STARTED = "not started"
CANCELLED_EARLY = "cancelled before sending"
INVALID_NOT_SAVED = "invalid items not saved"
ALREADY_SENT = "sent already"
UNFINISHED = "unfinished already"
#: checks of the bodies in doubt in one send or resume (each may find bodies to send again)
MAX_CHECKS = 3


@dataclass(frozen=True, slots=True)
class EarlierUpload:
    """An earlier upload of this batch to the same server (`app.metrics.identity`)."""

    folder: Path
    #: the server's URL as that upload was given it
    server: str
    created: datetime | None
    #: bodies of that upload the server accepted, and their metrics
    bodies: int
    metrics: int
    #: bodies it holds without an outcome (pending or in doubt), of all its bodies
    unfinished: int = 0
    total: int = 0
    #: how its server was found to be this one when its URL is spelt otherwise ("the same
    #: server as http://127.0.0.1:4242, by its address http://loopback:4242"); "" when alike
    matched_by: str = ""

    @property
    def when(self) -> str:
        """When it was made, in local time ("2026-11-24 23:10"), or "at an unknown time"."""
        if self.created is None:
            return "at an unknown time"
        return self.created.astimezone().strftime("%Y-%m-%d %H:%M")

    @property
    def text(self) -> str:
        """ "on 2026-11-24 23:10 (ledger in /data/uploads/20261124-231012-ab12cd)"."""
        return f"on {self.when} (ledger in {self.folder})"


def already_sent_text(earlier: Sequence[EarlierUpload], total_metrics: int) -> str:
    """What to tell a person before a batch goes to a server a second time: when, to which
    server and where its ledger is (the newest upload that had it accepted)."""
    first = earlier[0]
    if first.metrics >= total_metrics:
        what = "This batch was"
    else:
        what = f"{first.metrics:,} of this batch's {plural(total_metrics, 'metric')} were"
    same = f" ({first.matched_by})" if first.matched_by else ""
    more = ""
    if len(earlier) > 1:
        more = f" (and in {plural(len(earlier) - 1, 'more upload')})"
    return (
        f"{what} uploaded to {first.server}{same} and accepted already, {first.text}{more}. "
        "Sending it again makes the server count those metrics twice."
    )


@dataclass
class Checks:
    """What is wrong with a batch, and what the server checks looked at."""

    #: reading's and the split's problems, then the server checks', in that order
    problems: list[InputProblem]
    #: items left out: invalid, or too large for any body
    invalid: int
    #: the client token's environment (None: not checked; "*": every one)
    environment: str | None
    #: the server's flag names (None: not checked)
    known_features: set[str] | None
    #: why the feature names were not checked ("" when they were, or when no server was asked)
    features_error: str = ""

    @property
    def errors(self) -> int:
        return sum(1 for p in self.problems if p.severity == "error")

    @property
    def warnings(self) -> int:
        return len(self.problems) - self.errors


def server_checks(
    batches: Sequence[Batch], client_token: str | None, known_features: set[str] | None
) -> list[InputProblem]:
    """The checks of what Unleash accepts with 202 and then drops, for this token and server:
    metrics for another environment than the token's, and for names the server has no flag of."""
    environment = token_environment(client_token) if client_token else None
    return [
        p
        for batch in batches
        for p in batch.check(token_environment=environment, known_features=known_features)
    ]


def make_checks(
    batches: Sequence[Batch],
    client_token: str | None,
    known_features: set[str] | None,
    features_error: str = "",
) -> Checks:
    """Every problem of `batches` (after their split) and the server checks."""
    problems = [p for batch in batches for p in batch.problems]
    problems += server_checks(batches, client_token, known_features)
    return Checks(
        problems=problems,
        invalid=sum(batch.left_out for batch in batches),
        environment=token_environment(client_token) if client_token else None,
        known_features=known_features,
        features_error=features_error,
    )


def sdk_environment(client_token: str | None) -> str:
    """The environment SDK payloads that name none are read for: where Unleash counts the SDK's
    own posts with this client token (`accepted_environment`)."""
    return accepted_environment(token_environment(client_token) if client_token else None)


def payload_environment(chosen: str | None, client_token: str | None) -> str:
    """The environment SDK payloads that name none are read for: the one chosen (`flagdesk
    metrics upload --environment NAME`, the window's environment field), else where Unleash
    counts the SDK's own posts with this client token (`sdk_environment`)."""
    return (chosen or "").strip() or sdk_environment(client_token)


#: what sending a batch the server drops does (`dropped_text`): said before it is sent anyway
DROPPED_RISK = (
    "Sent anyway, these metrics are answered 202 and reported accepted, but the server does "
    "not count them: they are lost, and the report will not show it."
)


def dropped_text(batches: Sequence[Batch], client_token: str | None) -> str:
    """What of `batches` the server will answer 202 to and then drop, as a sentence ("" when
    nothing): metrics for another environment than the one the client
    token's are kept for (checked when the token names one), and metrics with yes and no
    both 0.
    An upload refuses such a batch unless told to send it anyway."""
    parts = []
    named = token_environment(client_token) if client_token else None
    if named not in (None, "*"):  # a token of every environment may not be a client token
        keep = sdk_environment(client_token)
        other: dict[str, int] = {}
        for batch in batches:
            for env, count in batch.totals().environments.items():
                if env != keep:
                    other[env] = other.get(env, 0) + count.metrics
        if other:
            envs = ", ".join(
                f"{plural(n, 'metric')} for {env!r}" for env, n in sorted(other.items())
            )
            parts.append(f"{envs}, but this client token's metrics are kept only for {keep!r}")
    zero = sum(source.zero for batch in batches for source in batch.sources)
    if zero:
        parts.append(f"{plural(zero, 'metric')} with yes and no both 0")
    if not parts:
        return ""
    return (
        "The server would answer 202 to these metrics and then drop them: " + "; ".join(parts) + "."
    )


async def read_feature_names(client: AdminClient) -> tuple[set[str] | None, str]:
    """The server's flag names, or None and why they cannot be read (a client token cannot)."""
    try:
        return await client.feature_names(), ""
    except ClientError as exc:
        return None, str(exc)


@dataclass(frozen=True, slots=True)
class Split:
    """What a dry run's split gives."""

    bodies: int
    bytes: int
    largest: int


def dry_split(batches: Sequence[Batch], max_body: int) -> Split:
    """Split without writing anything: how many bodies, how many bytes."""
    count = size = largest = 0
    for body in chain_bodies(batches, max_body):
        count += 1
        size += len(body.data)
        largest = max(largest, len(body.data))
    return Split(count, size, largest)


async def dry_run_checks(batches: Sequence[Batch], spec: ConnectionSpec | None) -> Checks:
    """The checks a real upload with `spec` would make (after `dry_split`, which adds the items
    too large for any body): the token's environment, and the server's flag names when `spec`
    has an admin token that can read them. Nothing is sent. Without `spec`, only the problems
    of reading and splitting."""
    if spec is None:
        return make_checks(batches, None, None)
    known: set[str] | None = None
    error = ""
    if spec.token:
        try:
            client = spec.client()
        except (ValueError, OSError) as exc:  # an unreadable CA bundle
            error = str(exc)
        else:
            async with client:
                known, error = await read_feature_names(client)
    else:
        error = "no admin API token or personal access token to read them with"
    return make_checks(batches, spec.client_token, known, error)


def chain_bodies(batches: Sequence[Batch], max_body: int) -> Iterator[Body]:
    """The bodies of every batch, numbered on: one ledger for all the inputs. Each body holds
    the applications its own metrics need, so bodies of two batches never depend on each
    other."""
    index = 0
    for batch in batches:
        for body in batch.iter_bodies(max_body):
            yield dataclasses.replace(body, index=index)
            index += 1


def write_invalid(batches: Sequence[Batch], path: Path) -> int:
    """Every batch's invalid items (and items too large for any body) into one file, one JSON
    object a line (`Batch.write_invalid`'s format). Blocking: run it on a worker thread."""
    if len(batches) == 1:
        return batches[0].write_invalid(path)
    count = 0
    part = path.with_name(path.name + ".part")
    try:
        with open(path, "wb") as out:
            for batch in batches:
                count += batch.write_invalid(part)
                with open(part, "rb") as src:
                    shutil.copyfileobj(src, out)
    finally:
        with contextlib.suppress(OSError):
            part.unlink()
    return count


def unfinished_text(earlier: Sequence[EarlierUpload]) -> str:
    """What to tell a person who uploads a batch whose earlier upload stopped unfinished."""
    first = earlier[0]
    same = f" ({first.matched_by})" if first.matched_by else ""
    more = ""
    if len(earlier) > 1:
        more = f" (and {plural(len(earlier) - 1, 'more unfinished upload')})"
    return (
        f"An upload of this batch to {first.server}{same} stopped unfinished {first.text}{more}: "
        f"{first.unfinished:,} of its {plural(first.total, 'body', 'bodies')} have no outcome. "
        "Resume it: sending the batch anew would make the server count what it sent twice."
    )


def upload_parents(folder: Path | None) -> list[Path]:
    """Where earlier uploads are looked for: `uploads_dir()`, and the parent of a folder chosen."""
    parents = [uploads_dir()]
    if folder is not None and Path(folder).parent not in parents:
        parents.append(Path(folder).parent)
    return parents


def unfinished_uploads(
    key: BatchKey,
    server: ServerIdentity,
    parents: Iterable[Path],
    sources: Iterable[dict[str, Any]] = (),
) -> list[EarlierUpload]:
    """The unfinished uploads in the folders under `parents` to `server` of the same batch (the
    same `key`, or read from the same files: names and metric counts) that may have had
    something counted (a body accepted or in doubt). Newest first. Blocking: worker thread."""
    wanted = _source_keys(sources)
    found: list[EarlierUpload] = []
    for other, how in _same_server(server, parents):
        left = other.unfinished()
        if not left or not any(e.state is State.ACCEPTED or e.doubt for e in other.entries):
            continue  # finished, or nothing of it can have been counted: nothing to lose
        same = wanted and _source_keys(other.sources) == wanted
        if not same and ledger_key(other) != key:
            continue
        accepted = [e for e in other.entries if e.state is State.ACCEPTED]
        found.append(
            EarlierUpload(other.folder, other.server, other.created, len(accepted),
                          sum(e.metrics for e in accepted), len(left), len(other.entries), how)
        )  # fmt: skip
    return _newest_first(found)


def _source_keys(sources: Iterable[dict[str, Any]]) -> list[tuple[str, int]]:
    return sorted((str(s.get("file", "")), int(s.get("metrics") or 0)) for s in sources)


def _same_server(
    server: ServerIdentity | None, parents: Iterable[Path]
) -> Iterator[tuple[Ledger, str]]:
    """The ledgers under `parents` (each once) of uploads to `server` (None: to any), with how
    their server was found to be it ("" when its URL is spelt alike)."""
    seen: set[Path] = set()
    for parent in parents:
        for other in ledgers_in(parent):
            key = other.folder.resolve()
            if key in seen:
                continue
            seen.add(key)
            if server is None:
                yield other, ""
                continue
            theirs = ServerIdentity.of_header(other.header)
            if server.same(theirs):
                yield other, server.why_same(theirs)


def _newest_first(found: list[EarlierUpload]) -> list[EarlierUpload]:
    far_past = datetime.min.replace(tzinfo=UTC)
    return sorted(found, key=lambda e: (e.created or far_past, str(e.folder)), reverse=True)


def same_server(a: str, b: str) -> bool:
    """Whether two URLs name one server by their address (`identity.normalise_address`)."""
    return same_address(a, b)


def earlier_uploads(
    key: BatchKey, server: ServerIdentity | None, parents: Iterable[Path]
) -> list[EarlierUpload]:
    """The uploads in the folders under `parents` to `server` (None: to any server) of the
    batch of `key` that had something of it accepted, newest first: whatever bodies it was
    split into, in whatever order, and however the server's URL was spelt. Blocking: worker
    thread."""
    found: list[EarlierUpload] = []
    for other, how in _same_server(server, parents):
        accepted = [e for e in other.entries if e.state is State.ACCEPTED]
        if accepted and ledger_key(other) == key:
            found.append(
                EarlierUpload(other.folder, other.server, other.created, len(accepted),
                              sum(e.metrics for e in accepted), matched_by=how)
            )  # fmt: skip
    return _newest_first(found)


def earlier_outcome(
    key: BatchKey,
    server: ServerIdentity,
    parents: Iterable[Path],
    sources: Iterable[dict[str, Any]] = (),
    invalid: int = 0,
) -> Outcome | None:
    """Step 3: UNFINISHED or ALREADY_SENT, naming the earlier uploads, when this batch went to
    this server before; None when it did not. Blocking: worker thread."""
    parents = list(parents)
    unfinished = unfinished_uploads(key, server, parents, sources)
    if unfinished:
        return Outcome(UNFINISHED, unfinished_text(unfinished), invalid=invalid,
                       earlier=unfinished)  # fmt: skip
    earlier = earlier_uploads(key, server, parents)
    if earlier:
        return Outcome(ALREADY_SENT, already_sent_text(earlier, key.metrics), invalid=invalid,
                       earlier=earlier)  # fmt: skip
    return None


async def look_for_earlier(
    batches: Sequence[Batch], spec: ConnectionSpec, *, folder: Path | None = None
) -> Outcome | None:
    """What `BatchUpload.send` finds in step 3, without sending or writing anything (`--dry-run`):
    UNFINISHED or ALREADY_SENT when this batch went to `spec`'s server before, else None."""
    try:
        client = spec.client()
    except (ValueError, OSError):  # an unreadable CA bundle: the address alone
        server = ServerIdentity(spec.url)
    else:
        async with client:
            server = await read_server_identity(client, spec.token)
    key = await asyncio.to_thread(batch_key, batches)
    return await asyncio.to_thread(
        earlier_outcome, key, server, upload_parents(folder), batch_sources(batches),
        sum(batch.invalid_count for batch in batches),
    )  # fmt: skip


class UploadHooks(Protocol):
    """What a caller shows of an upload. Every method is called on the loop. A class may
    subclass this for its do-nothing defaults, or only have the four methods."""

    def status(self, text: str) -> None:
        """What is being done now ("Splitting the batch into bodies…")."""
        return None

    def checked(self, checks: Checks) -> None:
        """The problems and the server checks, before anything is sent."""
        return None

    def started(self, upload: Upload) -> None:
        """The ledger is ready and the first request is about to start."""
        return None

    def progress(self, progress: Progress) -> None:
        """After each body's outcome and each retry."""
        return None


class _Quiet(UploadHooks):
    """Shows nothing."""


@dataclass
class Outcome:
    """How `send` or `resume` ended."""

    #: "" when the bodies were sent (see `report`); else why nothing was sent (NOT_STARTED,
    #: CANCELLED_EARLY, INVALID_NOT_SAVED, ALREADY_SENT)
    failure: str = ""
    #: what to tell a person when nothing was sent, as a sentence
    message: str = ""
    #: with INVALID_NOT_SAVED: what failed, as a clause ("cannot save the items left out to
    #: <path>: No space left on device")
    detail: str = ""
    report: Report | None = None
    #: the upload's folder (None when no ledger is left)
    folder: Path | None = None
    checks: Checks | None = None
    #: items left out, and the file they were saved to (None: none, or not saved)
    invalid: int = 0
    invalid_file: Path | None = None
    #: with ALREADY_SENT: the earlier uploads that had this batch accepted, newest first;
    #: with UNFINISHED: the unfinished uploads of this batch, newest first
    earlier: list[EarlierUpload] = field(default_factory=list)
    #: the last check of the bodies in doubt (None: none was made)
    reconciliation: Reconciliation | None = None
    #: why no baseline of the server's totals was recorded ("" when it was, or on resume)
    baseline_error: str = ""


class BatchUpload:
    """One upload (or resume) through a ledger, the same for the command line and the window.
    See the module for its steps."""

    def __init__(
        self,
        spec: ConnectionSpec,
        *,
        hooks: UploadHooks | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
        retry: RetryPolicy | None = None,
        resend_in_doubt: bool = False,
        settle: float | None = None,
        journal: UploadJournal | None = None,
    ) -> None:
        self.spec = spec
        #: the journal of the connection it uploads through: each send or resume that sends
        #: is one entry there (`app.metrics.journaling`); None journals nothing
        self.journal = journal
        #: send the bodies in doubt that a check cannot decide anyway (the person said so)
        self.resend_in_doubt = resend_in_doubt
        #: seconds to wait for the server to store what it received before a check (None:
        #: by the server's kind, `reconcile.settle_seconds`)
        self.settle = settle
        self.hooks: UploadHooks = hooks or _Quiet()
        self.concurrency = min(MAX_CONCURRENCY, max(1, int(concurrency)))
        self.retry = retry
        self.job: Upload | None = None
        #: set once sending stopped at once (the task was cancelled): the ledger as it stands
        self.report: Report | None = None
        self._cancel = threading.Event()

    def cancel(self) -> None:
        """Stop: during the split nothing is kept; before the first request the ledger is kept
        for Resume; while sending, no new request starts and the ones in flight get their
        answers. Safe from the loop at any time, more than once."""
        self._cancel.set()
        if self.job is not None:
            self.job.cancel()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    async def send(
        self,
        batches: Sequence[Batch],
        *,
        max_body: int = BULK_METRICS_BODY_LIMIT,
        folder: Path | None = None,
        sources: Sequence[dict[str, Any]] | None = None,
        again: bool = False,
    ) -> Outcome:
        """Split `batches`, check them, save their invalid items and send them (steps 1-7)."""
        max_body = max(MIN_MAX_BODY, int(max_body))
        if sources is None:
            sources = batch_sources(batches)
        try:
            client = self.spec.client()
        except (ValueError, OSError) as exc:  # an unreadable CA bundle
            return Outcome(NOT_STARTED, str(exc))
        async with client:
            self.hooks.status("Looking for earlier uploads of this batch…")
            key, server = await asyncio.gather(
                asyncio.to_thread(batch_key, batches),
                read_server_identity(client, self.spec.token),
            )
            if not again:
                found = await asyncio.to_thread(
                    earlier_outcome, key, server, upload_parents(folder), sources,
                    sum(batch.invalid_count for batch in batches),
                )  # fmt: skip
                if found is not None:
                    return found
            self.hooks.status("Splitting the batch into bodies…")
            invalid = [0]

            def note() -> dict[str, Any]:  # called once the split has said what it left out
                invalid[0] = sum(batch.left_out for batch in batches)
                return {"invalid": invalid[0], "invalid_file": INVALID_NAME if invalid[0] else None}

            try:
                job = await Upload.start(
                    client,
                    chain_bodies(batches, max_body),
                    folder=folder,
                    max_body=max_body,
                    sources=sources,
                    note=note,
                    concurrency=self.concurrency,
                    retry=self.retry,
                    cancel=self._cancel,
                    batch=key.to_json(),
                    server_id=server.to_json(),
                )
            except Cancelled:
                return Outcome(
                    CANCELLED_EARLY,
                    "The upload was cancelled while it was split: nothing was sent.",
                )
            except (LedgerError, OSError) as exc:
                return Outcome(NOT_STARTED, str(exc))
            ledger = job.ledger
            outcome = Outcome(folder=ledger.folder, invalid=invalid[0])
            try:
                self.hooks.status("Checking the batch against the server…")
                known, error = await read_feature_names(client)
                outcome.checks = make_checks(batches, self.spec.client_token, known, error)
                self.hooks.checked(outcome.checks)
                if outcome.invalid:  # even when cancelled: the ledger's note names the file
                    path = ledger.folder / INVALID_NAME
                    try:
                        await asyncio.to_thread(write_invalid, batches, path)
                    except OSError as exc:
                        outcome.failure = INVALID_NOT_SAVED
                        outcome.detail = (
                            f"cannot save the items left out to {path}: {exc.strerror or exc}"
                        )
                        outcome.message = (
                            f"The items left out could not be saved to {path} "
                            f"({exc.strerror or exc}): nothing was sent. The ledger is kept: "
                            "Resume sends the valid items anyway."
                        )
                        return outcome
                    outcome.invalid_file = path
                if not self.cancelled:
                    self.hooks.status("Reading the server's totals (to check bodies in doubt)…")
                    outcome.baseline_error = await record_baseline(
                        client,
                        ledger.folder,
                        (row for batch in batches for row in batch.totals().rows),
                        admin_token=self.spec.token,
                        client_token=self.spec.client_token,
                        known_features=known,
                    )
                return await self._run(job, outcome, resume=False)
            finally:
                job.close()

    async def resume(self, ledger: Path) -> Outcome:
        """Send the bodies of the upload at `ledger` (its folder or file) still without an
        outcome (step 7)."""
        try:
            client = self.spec.client()
        except (ValueError, OSError) as exc:  # an unreadable CA bundle
            return Outcome(NOT_STARTED, str(exc))
        async with client:
            self.hooks.status("Opening the ledger…")
            try:
                job = await Upload.resume(
                    client, ledger, concurrency=self.concurrency, retry=self.retry
                )
            except LedgerError as exc:
                return Outcome(NOT_STARTED, str(exc))
            try:
                note = job.ledger.note
                name = note.get("invalid_file")
                outcome = Outcome(
                    folder=job.ledger.folder,
                    invalid=int(note.get("invalid") or 0),
                    invalid_file=job.ledger.folder / str(name) if name else None,
                )
                return await self._run(job, outcome, resume=True)
            finally:
                job.close()

    async def _run(self, job: Upload, outcome: Outcome, *, resume: bool) -> Outcome:
        if self.cancelled:  # before the first request: the ledger stays for Resume
            outcome.failure = CANCELLED_EARLY
            outcome.message = (
                "The upload was cancelled before anything was sent; its ledger is kept in "
                f"{job.ledger.folder} for Resume."
            )
            return outcome
        entry: UploadEntry | None = None
        if self.journal is not None:  # its `sent` line, before the first body goes
            try:
                entry = await UploadEntry.begin(self.journal, job.ledger, resume=resume)
            except OSError as exc:
                outcome.failure = NOT_STARTED
                outcome.message = (
                    f"Could not write the journal {self.journal.path}: {exc.strerror or exc}. "
                    f"Nothing was sent; the ledger is kept in {job.ledger.folder} for Resume."
                )
                return outcome
        self.job = job
        self.hooks.started(job)
        self.hooks.status(f"Uploading to {job.client.base_url}…")
        try:
            outcome.report, outcome.reconciliation = await run_checked(
                job,
                settle=self.settle,
                status=self.hooks.status,
                progress=self.hooks.progress,
                resend_in_doubt=self.resend_in_doubt,
                cancelled=lambda: self.cancelled,
            )
        except asyncio.CancelledError:
            # stopped at once: run() recorded the requests in flight in doubt before it raised
            self.report = dataclasses.replace(
                job.report(), stopped=CANCELLED, error="The upload was stopped at once."
            )
            await complete_soon(entry, self.report)
            raise
        except Exception as exc:  # a bug: the ledger still says what each body became
            failed = dataclasses.replace(job.report(), stopped="error", error=f"{exc!r}")
            await complete_soon(entry, failed)
            raise
        if entry is not None and outcome.report is not None:
            await entry.complete(outcome.report)
        return outcome


async def check_doubt(
    job: Upload,
    *,
    settle: float | None = None,
    status: Callable[[str], None] = lambda _: None,
    resend_in_doubt: bool = False,
    cancelled: Callable[[], bool] = lambda: False,
) -> Reconciliation | None:
    """Check the bodies in doubt of `job` against the server's totals (step 8), after waiting
    `settle` seconds (None: by the server's kind); with `resend_in_doubt`, the ones left
    undecided are made pending. None when no body is in doubt."""
    ledger = job.ledger
    if not ledger.in_doubt():
        return None
    if settle is None:
        kind = "unknown"
        with contextlib.suppress(ClientError):
            kind = (await job.client.capabilities()).server_kind
        settle = settle_seconds(kind)
    found = await reconcile(job.client, ledger, wait=settle, status=status, cancelled=cancelled)
    if resend_in_doubt and not cancelled():
        for entry in ledger.in_doubt():
            ledger.mark_resend(entry.index)
    return found


async def run_checked(
    job: Upload,
    *,
    settle: float | None = None,
    status: Callable[[str], None] = lambda _: None,
    progress: Callable[[Progress], None] | None = None,
    resend_in_doubt: bool = False,
    cancelled: Callable[[], bool] = lambda: False,
) -> tuple[Report, Reconciliation | None]:
    """Send `job`'s pending bodies with its bodies in doubt checked first and after each run
    (steps 7 and 8), until none is left in doubt that a check can decide: the report (its
    `requests` over every run, `doubt_reason` saying why bodies stay in doubt) and the last
    check (None: none was needed)."""
    checked = await check_doubt(
        job, settle=settle, status=status, resend_in_doubt=resend_in_doubt, cancelled=cancelled
    )
    last = checked
    if cancelled():  # during the check: nothing more is sent
        stopped = dataclasses.replace(
            job.report(), stopped=CANCELLED, error="The upload was cancelled."
        )
        return stopped, last
    report = await job.run(progress=progress)
    requests, retries = report.requests, report.retries
    for _ in range(MAX_CHECKS):
        if report.stopped or cancelled() or not job.ledger.in_doubt():
            break
        checked = await check_doubt(
            job, settle=settle, status=status, resend_in_doubt=resend_in_doubt, cancelled=cancelled
        )
        last = checked
        if cancelled():
            report = dataclasses.replace(
                report, stopped=CANCELLED, error="The upload was cancelled."
            )
            break
        if not job.ledger.sendable():
            break
        report = await job.run(progress=progress)
        requests += report.requests
        retries += report.retries
        if checked is not None and not checked.of(LACKS) and not resend_in_doubt:
            break
    reason = ""
    if last is not None and job.ledger.in_doubt():
        reason = last.undecided_text
    now = job.report()  # the ledger after the last check, which may have settled bodies
    report = dataclasses.replace(
        now,
        rejected_file=report.rejected_file,
        elapsed=report.elapsed,
        requests=requests,
        retries=retries,
        doubt_reason=reason,
    )
    return report, last


async def record_baseline(
    client: AdminClient,
    folder: Path,
    rows: Iterable[Row],
    *,
    admin_token: str,
    client_token: str | None,
    known_features: set[str] | None,
) -> str:
    """Read the server's totals for the keys of `rows` and write them in the upload's
    `folder` (step 5b): "" when done, else why not (the upload goes on without them)."""
    environment = token_environment(client_token or "")
    try:
        baseline = await read_baseline(
            client,
            rows,
            admin_token=admin_token,
            environment=None if environment == "*" else environment,
            known_features=known_features,
        )
        await asyncio.to_thread(baseline.write, folder)
    except NoBaseline as exc:
        return str(exc)
    except OSError as exc:
        return f"cannot write {folder}: {exc.strerror or exc}"
    return ""


def batch_sources(batches: Sequence[Batch]) -> list[dict[str, Any]]:
    """What the batches were read from, as the ledger's header keeps it."""
    return [
        {"file": s.file, "format": s.format, "metrics": s.metrics,
         "applications": s.applications}
        for batch in batches for s in batch.sources
    ]  # fmt: skip
