"""`HistoryModel`: the journal of the current connection (`app.actions.journal`) as a table: every
change flagdesk made there, from any window or command, newest first, with its outcome; and the
changes in doubt, each checked against the server on request (`app.actions.check`). Its rows
read as `flagdesk journal list` prints them (`app.actions.journal_text`).

It reads the journal when the connection changes, when any window says it changed something
(`Session.data_changed`: the journal has a new entry; the metrics window says
`Resource.METRICS` when an upload ends), and on `refresh()` (F5). The file is read on a worker
thread. QtCore only.

The selected entry shows what the server's event log recorded of it (`app.actions.recorded`:
the events its request made, or that there are none), read a moment after the selection
settles and kept per entry for the connection; "Open in the event log" shows them there
(`record_filters`). The check of the changes in doubt asks the event log too: an event of the
change settles an entry whose state flagdesk cannot read back.

The History is a page of the main window below the Overview (Ctrl+H), not a tool of the
registry: it reads the local journal, and the server only for the check and the record. The
sidebar counts the changes in doubt ("History (1 in doubt)") from the moment the window is bound,
so the start after a crash offers the check at once.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal

from app.actions.check import can_check, settle
from app.actions.journal import (
    JOURNAL_NAME,
    Actor,
    Entry,
    Journal,
    State,
    journal_folder,
    read_journal,
)
from app.actions.journal_text import action_title, by_text, items_text, outcome_text, time_text
from app.actions.recorded import Recorded, checked, recorded, settles
from app.actions.runner import Plan, journal_of
from app.actions.undo import CannotUndo, plan_undo, why_not
from app.api.errors import ClientError
from app.api.events import EventFilter
from app.changes import Changes, Resource
from app.registry import UPLOAD_METRICS
from app.text import count_text, plural
from app.viewmodels.session import Session
from app.viewmodels.table import Column, TableModel
from app.viewmodels.tools import SessionViewModel


def when(entry: Entry) -> datetime:
    return entry.time


HISTORY_COLUMNS: list[Column[Entry]] = [
    Column("When", when),
    Column("Change", action_title),
    Column("Items", items_text, tooltip=lambda e: ", ".join(str(i) for i in e.ids) or None),
    Column("Outcome", outcome_text),
    Column("By", by_text),
    Column("Server", lambda e: e.server),
    Column("Details", lambda e: e.message or None, tooltip=lambda e: e.message or None),
]
#: the column sorted by default (newest first), and the one that takes the room left
WHEN_COLUMN, DETAILS_COLUMN = 0, 6


#: how long a selection stays before its record is read
RECORD_DELAY_MS = 300


def history_count_text(shown: int, total: int) -> str:
    return count_text(shown, total, "change")


class HistoryModel(SessionViewModel):
    #: the entries were read again
    entries_changed = Signal()
    #: a check of the entries in doubt ended (its summary is `checked`)
    check_finished = Signal()
    #: the undo of the selected entry is planned: confirm it, then `undo(plan)`
    undo_planned = Signal(object)
    #: what Undo can do changed (`undo_reason`, `undo_outcome`, `undo_error`)
    undo_changed = Signal()
    #: what the server recorded of the selected entry changed (`record_text`, `record_filters`)
    record_changed = Signal()

    # every change a window makes is journaled first: any of them may add an entry
    shows = frozenset(Resource)

    def __init__(self, session: Session, parent: QObject | None = None) -> None:
        super().__init__(session, parent)
        self.table: TableModel[Entry] = TableModel(HISTORY_COLUMNS, self)
        self.entries: list[Entry] = []
        #: what the last check of the entries in doubt found ("" before any)
        self.checked = ""
        self._reading: asyncio.Task[None] | None = None
        #: the entry selected (what Undo… undoes)
        self.selected: Entry | None = None
        #: how the last undo went: what it did, or why it was not done ("" before any)
        self.undo_outcome = ""
        self.undo_error = ""
        self._undoing: asyncio.Task[None] | None = None
        self._planned_for: Entry | None = None
        #: what the server recorded of the selected entry ("" with none selected), and the event
        #: log's filter that shows it (None: nothing to show)
        self.record_text = ""
        self.record_filters: EventFilter | None = None
        #: the records read on this connection, by entry id
        self._records: dict[str, Recorded] = {}
        self._recording: asyncio.Task[None] | None = None
        #: the record is read once the selection has stayed this long (arrowing through the
        #: table reads nothing)
        self._record_timer = QTimer(self)
        self._record_timer.setSingleShot(True)
        self._record_timer.setInterval(RECORD_DELAY_MS)
        self._record_timer.timeout.connect(self._look_up_record)

    # ------------------------------------------------------------------ reading

    @property
    def journal_folder(self) -> Path:
        """The folder of the current connection's journal and snapshots."""
        return journal_folder(self.session.name)

    def folder_to_open(self) -> Path:
        """`journal_folder`, made if no change has been journaled yet (to show it anyway)."""
        folder = self.journal_folder
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    @property
    def in_doubt(self) -> list[Entry]:
        return [e for e in self.entries if e.in_doubt]

    @property
    def checkable(self) -> list[Entry]:
        """The entries in doubt the check can settle: by the state the server holds, or by its
        event log (an action whose events flagdesk knows)."""
        return [e for e in self.entries if can_check(e) or (e.in_doubt and settles(e))]

    def doubt_text(self) -> str:
        """What the entries in doubt are, and which flagdesk cannot check ("" with none)."""
        doubt = self.in_doubt
        if not doubt:
            return ""
        text = (
            f"{plural(len(doubt), 'change')} in doubt: the request went out and no answer "
            "said what came of it."
        )
        uploads = sum(1 for e in doubt if e.action == UPLOAD_METRICS.key)
        others = len(doubt) - len(self.checkable) - uploads
        if others > 0:
            text += f" {others} cannot be checked by flagdesk."
        if uploads:
            text += (
                f" {plural(uploads, 'upload')} of metrics: resume "
                f"{'it' if uploads == 1 else 'them'} on the Metrics page, which checks the "
                "server's totals."
            )
        return text

    def refresh(self) -> None:
        if self.closed:
            return
        if self._reading is not None and not self._reading.done():
            return
        self._reading = self.run(self._read(), busy=False)

    async def _read(self) -> None:
        entries = await asyncio.to_thread(read_journal, self.journal_folder / JOURNAL_NAME)
        self.entries = entries
        self.table.set_rows(entries)
        self.entries_changed.emit()

    def on_connection_changed(self) -> None:
        self.checked = ""
        self.selected = None
        self._records.clear()
        self._show_record()
        self.undo_outcome = self.undo_error = ""
        self.undo_changed.emit()
        self.entries = []
        self.table.clear()
        self.entries_changed.emit()
        self.refresh()

    def on_changes(self, changes: Changes) -> None:
        self.refresh()

    def summary(self) -> str:
        """'12 changes on Local sandbox, 1 in doubt' (or that there are none yet)."""
        if not self.entries:
            return f"No changes made through flagdesk on {self.session.name} yet."
        doubt = len(self.in_doubt)
        extra = f", {doubt} in doubt" if doubt else ""
        return f"{plural(len(self.entries), 'change')} on {self.session.name}{extra}"

    # ------------------------------------------------------------------ undo

    def select(self, entry: Entry | None) -> None:
        """The entry selected in the table (what Undo… undoes, whose record is shown)."""
        self.selected = entry
        self.undo_changed.emit()
        self._show_record()

    # ------------------------------------------------------------------ the server's record

    def _show_record(self) -> None:
        """Show the selected entry's record: known, or read once the selection stays."""
        entry = self.selected
        self._record_timer.stop()
        if self._recording is not None and not self._recording.done():
            self._recording.cancel()
        known = self._records.get(entry.id) if entry is not None else None
        if entry is None:
            self._set_record("", None)
        elif known is not None:
            self._set_record(known.text, known.filters if known.events else None)
        elif not self.session.ready:
            self._set_record("Connect to the server to see what it recorded of this change.", None)
        else:
            self._set_record("Reading what the server recorded of this change…", None)
            self._record_timer.start()

    def _set_record(self, text: str, filters: EventFilter | None) -> None:
        self.record_text, self.record_filters = text, filters
        if not self.closed:
            self.record_changed.emit()

    def _look_up_record(self) -> None:
        entry = self.selected
        if entry is None or self.closed:
            return
        self._recording = self.run(self._record(entry), busy=False)

    async def _record(self, entry: Entry) -> None:
        client = await self.session.client()
        try:
            record = await recorded(client, entry)
        except ClientError as exc:
            if self.selected is entry:
                self._set_record(f"The server's event log could not be read: {exc}", None)
            return
        self._records[entry.id] = record
        if self.selected is entry:
            self._set_record(record.text, record.filters if record.events else None)

    @property
    def undoing(self) -> bool:
        return self._undoing is not None and not self._undoing.done()

    @property
    def undo_reason(self) -> str:
        """Why Undo… cannot be used now, and what would help ("" when it can)."""
        entry = self.selected
        if entry is None:
            return "Select a change to undo."
        if not self.session.ready:
            return self.session.message or "Not connected."
        if self.undoing:
            return "Wait for the undo under way."
        why = why_not(entry)
        return f"This change cannot be undone: {why}." if why else ""

    def plan_undo(self) -> asyncio.Task[None] | None:
        """Plan the undo of the selected entry (reading what the server holds now):
        `undo_planned` gives the plan to confirm, or `undo_error` says why there is none."""
        entry = self.selected
        if entry is None or self.undo_reason:
            return None
        self.undo_outcome = self.undo_error = ""
        self._undoing = self.run(self._plan_undo(entry), busy=False)
        self.undo_changed.emit()
        return self._undoing

    async def _plan_undo(self, entry: Entry) -> None:
        try:
            client = await self.session.client()
            caps = await client.capabilities()
            journal = journal_of(self.session.name, caps)
            plan = await plan_undo(client, journal, entry)
        except (ClientError, CannotUndo) as exc:
            self.undo_error = str(exc)
            self.report_error(self.undo_error)
        else:
            self._planned_for = entry
            self.undo_planned.emit(plan)
        finally:
            self._undoing = None
            if not self.closed:
                self.undo_changed.emit()

    def undo(self, plan: Plan) -> asyncio.Task[None] | None:
        """Carry out a confirmed undo through the runner (journaled like any change)."""
        if self.undoing or self.closed:
            return None
        self._undoing = self.run(self._undo(plan), busy=False)
        self.undo_changed.emit()
        return self._undoing

    async def _undo(self, plan: Plan) -> None:
        try:
            done = await self.run_plan(plan, after_sent=self.refresh)
        except ClientError as exc:
            self.undo_error = f"Not undone: {exc}"
            self.report_error(self.undo_error)
        else:
            undone = self._planned_for
            what = f"“{action_title(undone)}” of {time_text(undone)}" if undone else "the change"
            self.undo_outcome = f"Undone: {what}. The undo is journaled as entry {done.entry}."
        finally:
            self._undoing = None
            if not self.closed:
                self.undo_changed.emit()

    # ------------------------------------------------------------------ checking

    def check_in_doubt(self) -> asyncio.Task[None] | None:
        """Ask the server what became of each entry in doubt that can be checked, and record
        each answer in the journal. Nothing is sent again."""
        if not self.checkable or self.busy:
            return None
        return self.run(self._check(list(self.checkable)))

    async def _check(self, entries: list[Entry]) -> None:
        client = await self.session.client()
        caps = self.session.capabilities
        server = caps.base_url if caps is not None else ""
        journal = Journal(Actor(self.session.name, server), self.journal_folder)
        settled = 0
        failures: list[str] = []
        for entry in entries:
            try:
                verdict, record = await checked(client, entry)
            except ClientError as exc:
                failures.append(str(exc))
                continue
            if record is not None:
                self._records[entry.id] = record
            if verdict.state is not State.IN_DOUBT:
                await settle(journal, entry, verdict)
                settled += 1
        left = len(entries) - settled
        parts = [f"Checked {plural(len(entries), 'change')} in doubt: {settled} settled"]
        if left:
            parts.append(f"{left} still in doubt")
        if failures:
            parts.append(f"the server could not be read ({failures[0]})")
        self.checked = "; ".join(parts) + "."
        await self._read()
        self.check_finished.emit()
