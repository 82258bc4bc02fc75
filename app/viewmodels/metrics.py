"""`MetricsToolModel`: the metrics tool's window state: the files and pastes of a batch, their
problems, the preview (totals, rows, the chart's bars), and the upload with its ledger.

The parts with names of their own are modules beside this one: plain data and the tables'
columns, which the model's state is made of. None of them imports this module; of each other,
only the preview imports the inputs' `short_name`:

- `metrics_inputs`: the inputs (`Input`: one file or one paste, a batch of its own), the sources
  table and the problems table.
- `metrics_preview`: the preview of the inputs together (`Preview`, made by `make_preview` on a
  worker thread): the totals, the rows, the application items, the chart's bars.
- `metrics_uploads`: the unfinished uploads (`Unfinished`, `find_unfinished`), the progress line
  and the rejections table.

Here: the model's state and the signals the window binds to, and what changes them: loading,
the server checks, the client token, uploading and resuming, each upload's journal entry. The
window's hooks into an upload (`_WindowHooks`) stay with the model: they set its state.

Uploads go through the same `app.metrics.batch_upload.BatchUpload` as `flagdesk metrics upload`
(`app/commands/metrics.py`), with the window's hooks (`_WindowHooks`):

- Each input (one file, or one paste) is read into a `Batch` of its own by `app.metrics.load`
  on a worker thread, with a byte progress and a cancel event (why one per input:
  `metrics_inputs`). The preview adds the inputs' sums together (`merge_totals`); the upload
  chains their bodies into one ledger (`batch_upload.chain_bodies`).
- Loading is offline work: it goes on when the connection changes. An upload runs with a client
  of its own (the connection's URL and TLS settings, with the client token), so a connection
  switch stops it gracefully (`Upload.cancel`: the requests in flight get their answers) rather
  than killing requests whose answers the ledger then never learns. What came from a
  connection (the last report, an upload's progress, the "uploaded already" question) goes
  when the connection changes (`on_connection_changed`); an upload that ends after the change
  is only mentioned in a notice.
- A batch this server accepted in an earlier upload is not sent again without the person's
  confirmation: `again_question` names the earlier upload, `upload_again()` sends it. A batch
  whose earlier upload to this server stopped unfinished is not sent anew either:
  `resume_offer` is that upload, `resume_offered()` resumes it (`upload_again()` starts anew).
- Bodies in doubt (no answer) are checked against the server's totals before anything is sent
  again (`app.metrics.reconcile`); those no check could decide stay in doubt, and are sent only
  once the person confirms the risk (`resend_question`, then `resend_in_doubt()`).
- Started after a crash, the window lists the unfinished uploads (`unfinished`) at once;
  Resume sends one.
- Each upload or resume that sends is one entry in the connection's journal
  (`app.metrics.journaling`, given `_upload_journal()`), as `flagdesk metrics upload` writes
  it; once it ends the session is told (`Resource.METRICS`), so the History reads it again.
- The client token: the connection's when the capabilities say it works on the metrics endpoint;
  otherwise the person types one, kept in memory per server URL for this run, unless they save
  it into the connection's profile.

QtCore only: no QtWidgets below `app/`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import threading
from collections.abc import Callable, Coroutine, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

from app.actions.journal import Actor, Journal
from app.api.errors import ClientError
from app.api.wire import BULK_METRICS_BODY_LIMIT as BULK_METRICS_BODY_LIMIT
from app.changes import Changes, Resource
from app.metrics import (
    ApplicationItem,
    Batch,
    Cancelled,
    Row,
    load,
    load_text,
    token_environment,
)
from app.metrics import InputProblem as InputProblem
from app.metrics.batch_upload import (
    ALREADY_SENT,
    CANCELLED_EARLY,
    DROPPED_RISK,
    UNFINISHED,
    BatchUpload,
    Checks,
    EarlierUpload,
    Outcome,
    UploadHooks,
    dropped_text,
    payload_environment,
    same_server,
    sdk_environment,
    server_checks,
    write_invalid,
)
from app.metrics.batch_upload import MAX_CONCURRENCY as MAX_CONCURRENCY
from app.metrics.batch_upload import MIN_MAX_BODY as MIN_MAX_BODY
from app.metrics.ledger import INVALID_NAME as INVALID_NAME
from app.metrics.ledger import Counts
from app.metrics.upload import (
    CANCELLED,
    WRONG_TOKEN,
    Rejection,
    Report,
    Upload,
    doubt_sentences,
)
from app.metrics.upload import DEFAULT_CONCURRENCY as DEFAULT_CONCURRENCY
from app.metrics.upload import Progress as Progress
from app.text import plural
from app.viewmodels.metrics_inputs import (
    PROBLEM_COLUMNS,
    SOURCE_COLUMNS,
    Input,
    SourceRow,
    source_rows,
)
from app.viewmodels.metrics_preview import APPLICATION_COLUMNS, ROW_COLUMNS, Preview, make_preview
from app.viewmodels.metrics_uploads import REJECTION_COLUMNS, Unfinished, find_unfinished
from app.viewmodels.session import Session
from app.viewmodels.table import TableModel
from app.viewmodels.tools import LoadPhase, ToolViewModel

if TYPE_CHECKING:
    from app.connection import ConnectionSpec

#: the question asked before a batch with metrics the server would drop is sent
DROPPED = "would be dropped"
#: what each question Upload again answers is about (`MetricsToolModel.again_heading`)
AGAIN_HEADINGS = {
    DROPPED: "Nothing was sent: the server would drop some of these metrics.",
    UNFINISHED: "Nothing was sent: an upload of this batch is unfinished.",
    ALREADY_SENT: "Nothing was sent: this batch was uploaded before.",
}

#: why the window asks for a client token (the reason is the same on every server)
WHY_CLIENT_TOKEN = (
    "Metrics are sent with a client (backend) token: admin API tokens and personal access "
    "tokens are refused on this endpoint by real servers."
)
#: why feature names are checked (Unleash's behaviour with names it does not know)
FEATURES_WHY = "Unleash answers 202 to metrics of flags it does not know, and stores nothing."

#: the window's way of asking to send the bodies in doubt anyway (the command line's is an option)
RESEND_BUTTON = "Send in doubt anyway…"

#: what the files part of the window shows (the shared `LoadPhase`s it can be)
EMPTY, LOADING, FAILED, CONTENT = (
    LoadPhase.EMPTY,
    LoadPhase.LOADING,
    LoadPhase.FAILED,
    LoadPhase.READY,
)


# ---------------------------------------------------------------------------- uploads


class _WindowHooks(UploadHooks):
    """What the window shows of a `BatchUpload`: the model stores the figures and signals."""

    def __init__(self, model: MetricsToolModel) -> None:
        self.model = model

    def status(self, text: str) -> None:
        if self.model._same_connection:
            self.model.set_status(text)

    def checked(self, checks: Checks) -> None:
        if self.model._same_connection:
            self.model.invalid_left_out = checks.invalid

    def started(self, upload: Upload) -> None:
        model = self.model
        if model._same_connection and not model.closed:
            model.progress = upload.progress()
            model.upload_state_changed.emit()

    def progress(self, progress: Progress) -> None:
        self.model._on_upload_progress(progress)


# ---------------------------------------------------------------------------- the model


class MetricsToolModel(ToolViewModel):
    """The metrics tool: inputs, problems, preview and uploads (see the module)."""

    #: the list of inputs changed (the sources table is already updated)
    inputs_changed = Signal()
    #: (bytes read, bytes in all) while loading
    load_progress = Signal(int, int)
    #: the preview was made again (`preview`)
    preview_changed = Signal()
    #: the problems were gathered again (the problems table is already updated)
    problems_changed = Signal()
    #: what the upload part can do changed: `upload_reason`, `needs_token`, `uploading`...
    upload_state_changed = Signal()
    #: a `Progress` of the running upload
    upload_progress = Signal(object)
    #: `report` changed (a new one, or None)
    report_changed = Signal()
    #: `unfinished` was read again
    unfinished_changed = Signal()
    #: a remark on the last thing done ("Reading was cancelled…"), "" to clear it
    notice_changed = Signal(str)

    def __init__(self, session: Session, parent: QObject | None = None) -> None:
        super().__init__("metrics_upload", session, parent)
        self.sources: TableModel[SourceRow] = TableModel(SOURCE_COLUMNS, self)
        self.problems: TableModel[InputProblem] = TableModel(PROBLEM_COLUMNS, self)
        self.rows: TableModel[Row] = TableModel(ROW_COLUMNS, self)
        #: the preview's application items, of every input
        self.applications: TableModel[ApplicationItem] = TableModel(APPLICATION_COLUMNS, self)
        self.rejections: TableModel[Rejection] = TableModel(REJECTION_COLUMNS, self)
        self._inputs: list[Input] = []
        self._pastes = 0
        self.preview: Preview | None = None
        #: server checks' problems, separate so a new token or connection redoes only them
        self._checks: list[InputProblem] = []
        #: the server's flag names (None: not known, see `features_note`), and for which
        #: connection (its `Capabilities`) they were read
        self.known_features: set[str] | None = None
        self._known_for: object = None
        self._known_task: asyncio.Task[None] | None = None
        self._known_error = ""
        # loading
        self._load_task: asyncio.Task[None] | None = None
        #: set when a load or an upload starts, cleared in the task's last step (so a window
        #: never sees the task done while the model still says it runs)
        self._loading = False
        self._uploading = False
        self._cancel_load: threading.Event | None = None
        self.load_error = ""
        self.loaded_bytes = (0, 0)
        self._generation = 0
        # uploading
        self._typed_tokens: dict[str, str] = {}
        self._profile_cache: tuple[object, str | None] = (object(), None)
        self._upload_task: asyncio.Task[None] | None = None
        #: the upload (or resume) running: Cancel and a new connection cancel it
        self._batch_upload: BatchUpload | None = None
        #: counts the connection changes, so what an upload made on an earlier connection is
        #: never shown as this one's
        self._connection_generation = 0
        self._upload_connection = 0
        #: the last upload found this server had accepted the batch before: the question to
        #: ask (naming when and where), and the uploads it found; `upload_again` confirms
        self.again_question = ""
        #: what `again_question` is about, said before it (`again_heading`)
        self._again_about = ""
        #: the environment chosen for SDK payloads that name none ("": the client token's,
        #: see `payload_environment`), as `flagdesk metrics upload --environment NAME`
        self.environment_override = ""
        self.earlier: list[EarlierUpload] = []
        self._again: Callable[[], asyncio.Task[None] | None] | None = None
        #: the unfinished upload of the same batch that the last Upload found instead of
        #: sending (None: none); `resume_offered()` resumes it
        self._offer_folder: Path | None = None
        #: why the last upload or resume could not start ("" when it did): shown with Retry
        self.upload_error = ""
        self._retry: Callable[[], object] | None = None
        self.progress: Progress | None = None
        self.report: Report | None = None
        #: where the last upload put its invalid items (None: there were none)
        self.invalid_file: Path | None = None
        self.invalid_left_out = 0
        self.unfinished: list[Unfinished] = []
        self.token_message = ""
        self.notice = ""
        session.state_changed.connect(self._on_session_state_changed)

    # ------------------------------------------------------------------ ToolViewModel

    def start(self) -> None:
        """The window is built: offline work needs no connection, so nothing waits for one."""
        self._started = True
        self.refresh_unfinished()
        self._recheck()

    def load(self) -> None:
        self._recheck()

    def reset(self) -> None:
        self._recheck()

    def refresh(self) -> None:
        """F5: read every file again (they may have changed), the server's flag names (flags
        are made and archived meanwhile: the names read as the connection opened warned about
        a flag made since) and the unfinished uploads. The names known so far stay in use until
        the new ones come."""
        # the checks made once the files are read ask for them again (with no file, the next
        # file read does)
        self._forget_feature_names()
        self.reload()
        self.refresh_unfinished()

    def cancel_tasks(self) -> None:
        """A new connection (or the end): loading goes on (it needs no server); an upload
        stops gracefully, its requests in flight getting their answers. Once closed, everything
        is cancelled at once."""
        if self.closed:
            if self._cancel_load is not None:
                self._cancel_load.set()
            self.cancel_upload()
            super().cancel_tasks()
            return
        self.cancel_upload()
        self._forget_feature_names()

    def _forget_feature_names(self) -> None:
        """Stop reading the previous connection's flag names (its client is being closed)."""
        if self._known_task is not None:
            self._known_task.cancel()
            self._known_task = None

    def on_connection_changed(self) -> None:
        """What came from the previous connection goes: the last upload's report, its
        rejections and progress, why an upload could not start, the "uploaded already"
        question, the typed token's message. The inputs and their problems stay (reading is
        offline); the server checks are made again for the new connection (`reset`)."""
        self._connection_generation += 1
        self.report = None
        self.progress = None
        self.rejections.clear()
        self.upload_error = ""
        self._retry = None
        self.again_question = ""
        self.earlier = []
        self._again = None
        self._offer_folder = None
        self.invalid_file = None
        self.invalid_left_out = 0
        self.token_message = ""
        self._changed_report()
        super().on_connection_changed()

    def close(self) -> None:
        if not self.closed:
            self.session.state_changed.disconnect(self._on_session_state_changed)
        super().close()

    def _on_session_state_changed(self) -> None:
        if not self.closed:
            self._recheck()

    # ------------------------------------------------------------------ state

    def set_notice(self, text: str) -> None:
        """A remark that outlives the task that made it (a status is cleared when the model
        stops being busy)."""
        self.notice = text
        if not self.closed:
            self.notice_changed.emit(text)

    @property
    def inputs(self) -> list[Input]:
        return list(self._inputs)

    @property
    def batches(self) -> list[Batch]:
        return [i.batch for i in self._inputs]

    @property
    def loading(self) -> bool:
        return self._loading

    @property
    def uploading(self) -> bool:
        return self._uploading

    @property
    def phase(self) -> LoadPhase:
        """What the files part shows: EMPTY, LOADING, FAILED or CONTENT. Not the shared rule:
        files are read and checked with no connection (the window is `usable_when_unavailable`),
        so it never waits for one nor is unavailable, and what failed is reading (`load_error`),
        not the server checks that also set `error`."""
        if self.loading:
            return LOADING
        if self.load_error:
            return FAILED
        return CONTENT if self._inputs else EMPTY

    @property
    def metric_count(self) -> int:
        return sum(b.metric_count for b in self.batches)

    @property
    def invalid_count(self) -> int:
        return sum(b.invalid_count for b in self.batches)

    @property
    def all_problems(self) -> list[InputProblem]:
        """Loading's problems (and the last split's), then the server checks', errors first."""
        problems = [p for b in self.batches for p in b.problems] + self._checks
        return sorted(problems, key=lambda p: p.severity != "error")

    @property
    def error_count(self) -> int:
        return sum(1 for p in self.all_problems if p.severity == "error")

    @property
    def warning_count(self) -> int:
        return sum(1 for p in self.all_problems if p.severity != "error")

    def summary(self) -> str:
        """The toolbar's line: "2 files · 1,234 metrics · 3 invalid · 2 errors, 1 warning"."""
        if not self._inputs:
            return "No files yet"
        files = sum(1 for i in self._inputs if not i.pasted)
        pastes = len(self._inputs) - files
        parts = []
        if files:
            parts.append(plural(files, "file"))
        if pastes:
            parts.append(plural(pastes, "paste"))
        parts.append(plural(self.metric_count, "metric"))
        if self.invalid_count:
            parts.append(f"{self.invalid_count:,} invalid")
        errors, warnings = self.error_count, self.warning_count
        if errors or warnings:
            parts.append(f"{plural(errors, 'error')}, {plural(warnings, 'warning')}")
        return " · ".join(parts)

    # ------------------------------------------------------------------ inputs

    def add_files(self, paths: Iterable[str | Path]) -> asyncio.Task[None] | None:
        """Read `paths` (on a worker thread) and add them; files already listed are passed
        over. None when there is nothing new, or a load is running."""
        known = {i.path.resolve() for i in self._inputs if i.path is not None}
        new: list[Path] = []
        for p in paths:
            path = Path(p)
            if path.resolve() in known or path.resolve() in {n.resolve() for n in new}:
                continue
            new.append(path)
        if not new:
            self.set_notice("Those files are listed already.")
            return None
        return self._start_load([(str(p), p, None) for p in new])

    def add_text(self, text: str) -> asyncio.Task[None] | None:
        """Read a batch pasted from the clipboard."""
        if not text.strip():
            self.set_notice("The clipboard holds no text to read.")
            return None
        self._pastes += 1
        name = "<clipboard>" if self._pastes == 1 else f"<clipboard {self._pastes}>"
        return self._start_load([(name, None, text)])

    def reload(self) -> asyncio.Task[None] | None:
        """Read every input again, files from disk (F5, Retry)."""
        items = [(i.name, i.path, i.text) for i in self._inputs]
        if not items:
            self.load_error = ""
            self.phase_changed.emit()
            return None
        return self._start_load(items, replace=True)

    def remove(self, inputs: Iterable[Input]) -> None:
        gone = {id(i) for i in inputs}
        if not gone or self.loading:
            return
        self._inputs = [i for i in self._inputs if id(i) not in gone]
        self._changed()

    def clear(self) -> None:
        if self.loading:
            return
        self._inputs = []
        self.load_error = ""
        self._changed()

    def cancel_load(self) -> None:
        if self._cancel_load is not None:
            self._cancel_load.set()

    def _start_load(
        self, items: list[tuple[str, Path | None, str | None]], *, replace: bool = False
    ) -> asyncio.Task[None] | None:
        if self.loading:
            return None
        self.load_error = ""
        self.loaded_bytes = (0, 0)
        self._cancel_load = threading.Event()
        self.set_notice("")
        self._loading = True
        coro = self._load(items, self._cancel_load, replace)
        self._load_task = self.run(self._until_done(coro, "load"))
        self._load_task.add_done_callback(lambda _: self._ended("load"))
        self.phase_changed.emit()
        self.upload_state_changed.emit()
        return self._load_task

    async def _load(
        self,
        items: list[tuple[str, Path | None, str | None]],
        cancel: threading.Event,
        replace: bool,
    ) -> None:
        loop = asyncio.get_running_loop()
        sizes = []
        for _, path, text in items:
            if path is not None:
                try:
                    sizes.append(path.stat().st_size)
                except OSError:
                    sizes.append(0)
            else:
                sizes.append(len((text or "").encode("utf-8")))
        total = sum(sizes)
        # SDK payloads without an environment: the one chosen, else the client token's, where
        # Unleash counts them
        environment = self.payload_environment
        read: list[Input] = []
        offset = 0
        try:
            for (name, path, text), size in zip(items, sizes, strict=True):
                self.set_status(f"Reading {os.path.basename(name) or name}…")

                def progress(done: int, _total: int, base: int = offset) -> None:
                    with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                        loop.call_soon_threadsafe(self._on_load_progress, base + done, total)

                if path is not None:
                    batch = await asyncio.to_thread(
                        load, [path], progress=progress, cancel=cancel, environment=environment
                    )
                else:
                    batch = await asyncio.to_thread(load_text, text or "", name, environment)
                    self._on_load_progress(offset + size, total)
                read.append(Input(name, batch, path, text))
                offset += size
            self.set_status("Adding up the preview…")
            batches = [i.batch for i in read]
            if not replace:
                batches = [*self.batches, *batches]
            preview = await asyncio.to_thread(make_preview, batches, *self._preview_sort_columns())
        except Cancelled:
            self.set_notice("Reading was cancelled: nothing of it was added.")
            return
        except asyncio.CancelledError:
            cancel.set()  # the worker thread stops at its next chunk
            raise
        except (OSError, MemoryError) as exc:
            self.load_error = f"{type(exc).__name__}: {exc}"
            self.set_error(self.load_error)
            return
        self._inputs = read if replace else [*self._inputs, *read]
        self._show(preview)

    async def _until_done(self, coro: Coroutine[Any, Any, None], what: str) -> None:
        try:
            await coro
        finally:
            self._ended(what)

    def _ended(self, what: str) -> None:
        """A load or an upload ended (once, from the task's last step, or from its done
        callback when it was cancelled before it ran)."""
        if what == "load":
            if not self._loading:
                return
            self._loading = False
            self._cancel_load = None
        else:
            if not self._uploading:
                return
            self._uploading = False
            self._batch_upload = None
            # its journal entry (if it sent anything) is complete: the History reads it again
            self.notify(Changes(Resource.METRICS))
        if not self.closed:
            self.phase_changed.emit()
            self.upload_state_changed.emit()

    def _on_load_progress(self, done: int, total: int) -> None:
        self.loaded_bytes = (done, total)
        if not self.closed:
            self.load_progress.emit(done, total)

    def _preview_sort_columns(self) -> tuple[list[int], list[int]]:
        """The columns the rows and the applications tables are sorted by."""
        rows, apps = self.rows.sort_state, self.applications.sort_state
        return ([rows[0]] if rows else []), ([apps[0]] if apps else [])

    def _changed(self) -> None:
        """The inputs changed without reading anything: make the preview again."""
        self._generation += 1
        generation = self._generation
        batches = self.batches
        sort_columns = self._preview_sort_columns()
        # application items are parsed again (about 8 µs each): many go to a worker thread
        small = sum(b.application_count for b in batches) < 2_000
        if small and sum(b.metric_count for b in batches) < 50_000:
            self._show(make_preview(batches, *sort_columns))
            return

        async def later() -> None:
            preview = await asyncio.to_thread(make_preview, batches, *sort_columns)
            if generation == self._generation:
                self._show(preview)

        self.run(later())

    def _show(self, preview: Preview) -> None:
        self._generation += 1
        self.preview = preview
        self.sources.set_rows(source_rows(self._inputs))
        self.rows.set_prepared(preview.rows)
        self.applications.set_prepared(preview.applications)
        self._recheck()
        if not self.closed:
            self.inputs_changed.emit()
            self.preview_changed.emit()
            self.phase_changed.emit()

    # ------------------------------------------------------------------ problems

    def _recheck(self) -> None:
        """Gather the problems again, with the server checks for the token in use now. SDK
        payloads read for another environment than this token's are read again first."""
        token = self.upload_token
        environment = self.payload_environment
        if not self.loading and any(
            i.batch.sdk_environment != environment
            and any(s.format == "sdk" for s in i.batch.sources)
            for i in self._inputs
        ):
            self.reload()  # which checks again once read
            return
        connection = self.session.capabilities if self.session.ready else None
        if connection is not self._known_for:  # another server: its names are to be read
            self.known_features, self._known_for, self._known_error = None, connection, ""
            self._forget_feature_names()
        if connection is not None and self.batches and self._known_task is None:
            self._known_task = self.run(self._read_feature_names(connection), busy=False)
        known = self.known_features
        self._checks = server_checks(self.batches, token, known)
        self.problems.set_rows(self.all_problems)
        if not self.closed:
            self.problems_changed.emit()
            self.upload_state_changed.emit()

    async def _read_feature_names(self, connection: object) -> None:
        """The server's flag names (once per connection, and again on F5), then the checks
        again."""
        try:
            client = await self.session.client()
            names = await client.feature_names()
        except ClientError as exc:
            if connection is self._known_for:
                self._known_error = str(exc)
                self._recheck()
            return
        except RuntimeError:  # httpx: the session closed that connection's client meanwhile
            return
        if connection is self._known_for:
            self.known_features = names
            self._recheck()

    @property
    def checks_note(self) -> str:
        """What the server checks did and did not look at."""
        token = self.upload_token
        environment = token_environment(token) if token else None
        if environment in (None, "*"):
            env = "Environments are not checked: " + (
                "no client token yet." if not token else "the client token is for every one."
            )
        else:
            env = f"Metrics are checked against the client token's environment, {environment!r}."
        return f"{env} {self.features_note}"

    @property
    def features_note(self) -> str:
        """Whether feature names were checked against the server's flags, and why it matters."""
        if self.known_features is not None:
            count = len(self.known_features)
            return (
                f"Feature names are checked against the server's {count:,} "
                f"flag{'s' if count != 1 else ''} (archived ones left out): {FEATURES_WHY}"
            )
        if self._known_error:
            return f"Feature names are not checked: {self._known_error}. {FEATURES_WHY}"
        if self._known_for is not None:
            return "Feature names are being checked against the server's flags…"
        return (
            f"Feature names are checked against the server's flags once connected. {FEATURES_WHY}"
        )

    def save_invalid(self, path: str | Path) -> asyncio.Task[int | None]:
        """Write the invalid items (and any too large for a body) to `path`."""
        batches = self.batches

        async def save() -> int:
            try:
                count = await asyncio.to_thread(write_invalid, batches, Path(path))
            except OSError as exc:
                self.set_notice(f"Could not save the invalid items to {path}: {exc}")
                raise
            self.set_notice(f"{plural(count, 'invalid item')} saved to {path}.")
            return count

        return self.run(save(), busy=False)

    # ------------------------------------------------------------------ the client token

    def _connection_spec(self) -> ConnectionSpec | None:
        s = self.session
        return s.connection.spec if s.ready and s.connection is not None else None

    @property
    def connection_token(self) -> str | None:
        """The connection's client token when it works on the metrics endpoint."""
        spec = self._connection_spec()
        caps = self.session.capabilities
        if spec is None or caps is None or not caps.operation("metrics_upload").available:
            return None
        if spec.client_token:
            return spec.client_token
        return spec.token if caps.token_kind == "client" else None

    @property
    def needs_token(self) -> bool:
        """Connected, but the connection has no client token that works: one must be typed."""
        return self._connection_spec() is not None and self.connection_token is None

    @property
    def typed_token(self) -> str:
        return self._typed_tokens.get(self.session.url, "")

    def set_typed_token(self, token: str) -> None:
        """The client token typed for this server: kept in memory only, for this run."""
        token = token.strip()
        url = self.session.url
        if not url or self._typed_tokens.get(url, "") == token:
            return
        if token:
            self._typed_tokens[url] = token
        else:
            self._typed_tokens.pop(url, None)
        self.token_message = ""
        self._recheck()

    @property
    def payload_environment(self) -> str:
        """The environment SDK payloads that name none are read for (`payload_environment`)."""
        return payload_environment(self.environment_override, self.upload_token)

    def set_environment_override(self, name: str) -> None:
        """Read SDK payloads that name no environment for `name` ("" or blank: the client
        token's); those read already are read again."""
        name = name.strip()
        if name == self.environment_override:
            return
        self.environment_override = name
        self._recheck()
        if not self.closed:
            self.upload_state_changed.emit()

    @property
    def environment_choices(self) -> list[str]:
        """What the environment field offers: the client token's environment and those the
        batch names."""
        names = {self.payload_environment, sdk_environment(self.upload_token)}
        for batch in self.batches:
            names.update(batch.totals().environments)
        return sorted(names)

    @property
    def dropped_question(self) -> str:
        """What of the batch the server would answer 202 to and drop, with the risk of sending
        it anyway ("" when nothing would be dropped): asked before `upload(send_dropped=True)`,
        as `--send-dropped` is needed on the command line."""
        dropped = dropped_text(self.batches, self.upload_token)
        return f"{dropped} {DROPPED_RISK}" if dropped else ""

    @property
    def upload_token(self) -> str | None:
        """The client token an upload would use now."""
        return self.connection_token or (self.typed_token or None)

    @property
    def token_source(self) -> str:
        if self.connection_token:
            return "the connection's client token"
        if self.typed_token:
            return "the client token typed here (kept in memory for this run)"
        return ""

    @property
    def token_reason(self) -> str:
        """Why a token must be typed: the capability's reason and why only a client token."""
        spec = self._connection_spec()
        caps = self.session.capabilities
        if spec is None or not spec.client_token:
            head = "This connection has no client token."
        else:
            reason = caps.operation("metrics_upload").reason if caps is not None else ""
            head = (reason or "The connection's client token does not work here").rstrip(".")
            head += "."
        return f"{head} {WHY_CLIENT_TOKEN}"

    @property
    def profile_name(self) -> str | None:
        """The saved profile of the current connection, where a typed token can be kept."""
        s = self.session
        connection = s.connection
        if connection is None or s.is_sandbox:
            return None
        if self._profile_cache[0] is connection:
            return self._profile_cache[1]
        from app.profiles import ProfileError

        name: str | None = None
        try:
            profile = s.store.get(connection.name)
            if same_server(profile.url, connection.spec.url):
                name = profile.name
        except ProfileError:
            name = None
        self._profile_cache = (connection, name)
        return name

    def save_token_to_profile(self) -> asyncio.Task[None] | None:
        """Keep the typed token in the connection's profile (where its tokens are kept), then
        connect again so the capabilities see it."""
        name, token = self.profile_name, self.typed_token
        if name is None or not token or self.uploading:
            return None
        store = self.session.store

        def save() -> None:
            store.save(store.get(name), client_token=token, replace=name)

        async def save_and_reconnect() -> None:
            from app.profiles import ProfileError

            try:
                await asyncio.to_thread(save)
            except ProfileError as exc:
                self.token_message = f"The token was not saved: {exc}"
                self.upload_state_changed.emit()
                return
            self.token_message = f"Saved in the profile {name!r}."
            self.upload_state_changed.emit()
            self.session.retry()

        return self.run(save_and_reconnect(), busy=False)

    # ------------------------------------------------------------------ upload

    @property
    def upload_reason(self) -> str:
        """Why Upload cannot be pressed now ("" when it can)."""
        s = self.session
        if self.uploading:
            return "An upload is running."
        if self.loading:
            return "Wait until the files are read."
        if not self._inputs:
            return "Add files (or paste a batch) to upload."
        if self.metric_count == 0:
            return "Nothing to upload: no valid metric in the files."
        if not s.ready:
            why = f" ({s.message})" if s.message else ""
            return (
                f"Not connected{why}. Files can still be read and checked; uploading needs a "
                "connection (File > Connections)."
            )
        if self.upload_token is None:
            return "Type a client token above to upload."
        return self._unusable_token()

    def resume_reason(self, item: Unfinished | None) -> str:
        """Why this unfinished upload cannot be resumed now ("" when it can)."""
        if item is None:
            return "No unfinished upload."
        if self.uploading:
            return "An upload is running."
        if not self.session.ready:
            return f"Not connected: connect to {item.server} to resume it."
        if item.server and not same_server(item.server, self.session.url):
            return f"This upload went to {item.server}: connect to that server to resume it."
        if self.upload_token is None:
            return "Type a client token above to resume."
        return self._unusable_token()

    def _unusable_token(self) -> str:
        """Why the typed client token cannot be sent (a wrapped paste, a character outside
        ASCII), in the command line's words, never the token; "" when it can."""
        from app.api.sending import UnusableToken, check_token  # httpx: not before it is needed

        if self.connection_token or not self.typed_token:
            return ""
        try:
            check_token(self.typed_token, "The client token typed")
        except UnusableToken as exc:
            return str(exc)
        return ""

    def _upload_spec(self) -> ConnectionSpec:
        spec = self._connection_spec()
        token = self.upload_token
        if spec is None or token is None:
            raise ClientError(self.upload_reason or "Not connected.")
        return dataclasses.replace(spec, client_token=token)

    def _upload_journal(self) -> Journal:
        """The journal of the connection the upload goes through (as every window's changes,
        under the connection's name), where each upload or resume is one entry, made with the
        client token. Made when the upload starts: one that ends after a new connection is
        still recorded where it was made."""
        return Journal(Actor(self.session.name, self.session.url, "client"))

    def upload(
        self,
        max_body: int = BULK_METRICS_BODY_LIMIT,
        concurrency: int = DEFAULT_CONCURRENCY,
        *,
        again: bool = False,
        send_dropped: bool = False,
    ) -> asyncio.Task[None] | None:
        """Split the batch into bodies of at most `max_body` bytes and send them,
        `concurrency` at a time, through a new ledger (`BatchUpload.send`). A batch this server
        accepted in an earlier upload is not sent: `again_question` then names that upload, and
        `upload_again()` (the person's confirmation) sends it anyway. So is a batch with metrics
        the server would answer 202 to and drop (`dropped_text`): nothing is sent, and
        `again_question` says what would be dropped, and what sending it means, until
        `upload_again()` confirms."""
        if self.upload_reason:
            return None
        max_body = max(MIN_MAX_BODY, int(max_body))
        # the question names the risk, as the checkbox's confirmation does (`dropped_question`)
        dropped = "" if send_dropped else self.dropped_question
        if dropped:
            self._clear_result()
            self.again_question, self._again_about = dropped, DROPPED
            self._again = lambda: self.upload(max_body, concurrency, again=again, send_dropped=True)
            self._changed_report()
            return None
        job = BatchUpload(
            self._upload_spec(),
            hooks=_WindowHooks(self),
            concurrency=concurrency,
            journal=self._upload_journal(),
        )
        self._retry = lambda: self.upload(max_body, concurrency)
        self._again = lambda: self.upload(max_body, concurrency, again=True)
        return self._start_upload(self._send(job, self.batches, max_body, again), job)

    @property
    def again_heading(self) -> str:
        """What `again_question` is about, in a sentence said before it ("" with no question)."""
        if not self.again_question:
            return ""
        return AGAIN_HEADINGS.get(self._again_about, AGAIN_HEADINGS[ALREADY_SENT])

    def upload_again(self) -> asyncio.Task[None] | None:
        """The person confirmed: send the batch this server accepted before once more."""
        again = self._again
        if not self.again_question or again is None:
            return None
        return again()

    def resume(
        self,
        item: Unfinished,
        concurrency: int = DEFAULT_CONCURRENCY,
        *,
        resend_in_doubt: bool = False,
    ) -> asyncio.Task[None] | None:
        """Send the bodies of an unfinished upload that have no outcome yet, its bodies in
        doubt checked against the server's totals first; with `resend_in_doubt` (the person
        confirmed `resend_question`) the ones no check can decide are sent anyway."""
        if self.resume_reason(item):
            return None
        job = BatchUpload(
            self._upload_spec(),
            hooks=_WindowHooks(self),
            concurrency=concurrency,
            resend_in_doubt=resend_in_doubt,
            journal=self._upload_journal(),
        )
        self._retry = lambda: self.resume(item, concurrency)
        return self._start_upload(self._resume(job, item.folder), job)

    @property
    def resume_offer(self) -> Unfinished | None:
        """The unfinished upload of this batch that Upload found instead of sending it anew."""
        if self._offer_folder is None:
            return None
        return next((u for u in self.unfinished if u.folder == self._offer_folder), None)

    def resume_offered(self) -> asyncio.Task[None] | None:
        """Resume the unfinished upload `resume_offer` names."""
        item = self.resume_offer
        return self.resume(item) if item is not None else None

    @property
    def resend_question(self) -> str:
        """The risk of sending the last report's bodies in doubt anyway ("" when none are)."""
        r = self.report
        if r is None or not r.in_doubt or self.uploading:
            return ""
        one = r.in_doubt == 1
        them = "it" if one else "them"
        why = f" ({r.doubt_reason})" if r.doubt_reason else ""
        return (
            f"{plural(r.in_doubt, 'body', 'bodies')} got no answer to a request and "
            f"flagdesk cannot tell whether the server counted {them}{why}. Sending "
            f"{them} again may make the server count {them} twice, for good: counted metrics "
            "cannot be taken back."
        )

    def resend_in_doubt(self) -> asyncio.Task[None] | None:
        """The person confirmed `resend_question`: resume the last report's upload, sending
        its bodies in doubt anyway."""
        r = self.report
        if r is None or not self.resend_question:
            return None
        folder = r.ledger.parent
        item = next((u for u in self.unfinished if u.folder == folder), None)
        if item is None:
            item = Unfinished(folder, r.server, None, r.pending, r.total, r.in_doubt)
        return self.resume(item, resend_in_doubt=True)

    def retry_upload(self) -> None:
        """Retry after an upload that could not start (or stopped): the same action again."""
        if self._retry is not None:
            self._retry()

    def cancel_upload(self) -> None:
        """Stop: no new request; the ones in flight get their answers; the ledger keeps the
        rest for Resume. Before the first request (splitting, writing the ledger or the
        invalid items), nothing is sent: see `BatchUpload`."""
        if self._batch_upload is not None:
            self._batch_upload.cancel()

    @property
    def _job(self) -> Upload | None:
        """The upload sending now (None before its first request, and after)."""
        return self._batch_upload.job if self._batch_upload is not None else None

    def _clear_result(self) -> None:
        """Forget the last upload's outcome: its report, question, error and rejections."""
        self.upload_error = ""
        self.again_question = ""
        self.earlier = []
        self._offer_folder = None
        self.progress = None
        self.report = None
        self.invalid_file = None
        self.invalid_left_out = 0
        self.rejections.clear()

    def _start_upload(
        self, coro: Coroutine[Any, Any, None], job: BatchUpload
    ) -> asyncio.Task[None]:
        self._clear_result()
        self._batch_upload = job
        self._upload_connection = self._connection_generation
        self._uploading = True
        self._upload_task = self.run(self._until_done(coro, "upload"))
        self._upload_task.add_done_callback(lambda _: self._ended("upload"))
        self.report_changed.emit()
        self.upload_state_changed.emit()
        return self._upload_task

    @property
    def _same_connection(self) -> bool:
        """The running upload started on the current connection."""
        return self._upload_connection == self._connection_generation

    async def _send(
        self, job: BatchUpload, batches: list[Batch], max_body: int, again: bool
    ) -> None:
        try:
            outcome = await job.send(batches, max_body=max_body, again=again)
        except asyncio.CancelledError:
            if job.report is not None:
                self._set_report(job.report)
            raise
        self._recheck()  # the split's problems (items too large for any body)
        self._finish(outcome)

    async def _resume(self, job: BatchUpload, folder: Path) -> None:
        try:
            outcome = await job.resume(folder)
        except asyncio.CancelledError:
            if job.report is not None:
                self._set_report(job.report)
            raise
        self._finish(outcome)

    def _finish(self, outcome: Outcome) -> None:
        """Show how an upload (or resume) ended: on the connection it was made on; after a
        connection change only a notice says what became of it."""
        if outcome.failure == UNFINISHED:
            self.earlier = outcome.earlier
            if self._same_connection:
                self.again_question, self._again_about = outcome.message, UNFINISHED
                self._offer_folder = outcome.earlier[0].folder
            self._changed_report()
            self.refresh_unfinished()
            return
        if outcome.failure == ALREADY_SENT:
            self.earlier = outcome.earlier
            self.again_question = outcome.message if self._same_connection else ""
            self._again_about = ALREADY_SENT
            self._changed_report()
            return
        if outcome.failure == CANCELLED_EARLY:
            self.set_notice(outcome.message)
            self.refresh_unfinished()
            return
        if outcome.failure:  # NOT_STARTED, INVALID_NOT_SAVED
            if self._same_connection:
                self._upload_failed(outcome.message)
            else:
                self.set_notice(outcome.message)
            self.refresh_unfinished()
            return
        report = outcome.report
        assert report is not None
        if self._same_connection:
            self.invalid_left_out = outcome.invalid
            self.invalid_file = outcome.invalid_file
            self._set_report(report)
        else:
            self.set_notice(
                f"The upload to {report.server} ended after the connection changed: "
                f"{self._heading(report).rstrip('.').lower()}. Its ledger is in "
                f"{report.ledger.parent}."
            )
        self.refresh_unfinished()

    def _on_upload_progress(self, progress: Progress) -> None:
        if not self._same_connection:  # the previous connection's: not shown under this one
            return
        self.progress = progress
        if not self.closed:
            self.upload_progress.emit(progress)

    def _set_report(self, report: Report) -> None:
        self.report = report
        self.rejections.set_rows(report.rejections)
        if report.stopped and report.stopped != CANCELLED:
            self.set_error(report.error)
        self._changed_report()

    def _upload_failed(self, message: str) -> None:
        self.upload_error = message
        self.set_error(message)
        self._changed_report()

    def _changed_report(self) -> None:
        if not self.closed:
            self.report_changed.emit()
            self.upload_state_changed.emit()

    @staticmethod
    def _heading(r: Report) -> str:
        if not r.complete and r.in_doubt and not r.stopped:
            return "The upload finished, with bodies in doubt."
        if not r.complete:
            return "The upload stopped."
        if r.rejected.bodies:
            return "The upload finished: some bodies were rejected."
        return "The upload finished: every body was accepted."

    @property
    def report_heading(self) -> str:
        return self._heading(self.report) if self.report is not None else ""

    def report_lines(self) -> list[str]:
        """The end report as sentences, for the window and for tests."""
        r = self.report
        if r is None:
            return []

        def counts(c: Counts) -> str:
            return f"{plural(c.bodies, 'body', 'bodies')}, {plural(c.metrics, 'metric')}"

        lines = [
            f"Accepted: {counts(r.accepted)}.",
            f"Rejected: {counts(r.rejected)}."
            + (f" Their items are saved in {r.rejected_file}." if r.rejected_file else ""),
            f"Pending: {counts(r.pending)}.",
        ]
        if self.invalid_left_out:
            where = f", saved in {self.invalid_file}" if self.invalid_file else ""
            lines.append(f"Invalid items left out: {self.invalid_left_out:,}{where}.")
        lines += doubt_sentences(r, f"{RESEND_BUTTON.rstrip('…')}")
        if r.stopped:
            lines.append(r.error or "The upload stopped.")
            if r.stopped == "unauthorised" and WRONG_TOKEN not in r.error:
                lines.append(WRONG_TOKEN)
        if not r.complete:
            lines.append("Resume sends exactly the bodies still pending.")
        return lines

    @property
    def report_folder(self) -> Path | None:
        return self.report.ledger.parent if self.report is not None else None

    # ------------------------------------------------------------------ unfinished uploads

    def refresh_unfinished(self) -> asyncio.Task[None] | None:
        """Read the unfinished uploads again (on a worker thread)."""
        if self.closed:
            return None

        async def scan() -> None:
            found = await asyncio.to_thread(find_unfinished)
            if self._job is not None:  # the one running is not "unfinished"
                running = self._job.ledger.folder
                found = [u for u in found if u.folder != running]
            self.unfinished = found
            if not self.closed:
                self.unfinished_changed.emit()
                self.upload_state_changed.emit()

        return self.run(scan(), busy=False)
