"""`LoginHistoryModel`: login history (issue 38; Unleash Enterprise 4.22+ and the sandbox,
`GET /api/admin/logins`), as a table sorted, filtered, copied and exported by `TableModel`.

The server keeps 14 days and neither filters nor pages: everything is read at once (a few
thousand events on a busy server) and filtered here. The table's filter box finds a user or an
address (any column's text); "Failed only" (`set_failed_only`) keeps the failed logins
(`app.api.logins.failed`), which the table then filters as typed. The table sorts newest first
by default. Export CSV… (the table's: the columns shown) and Export JSON… (`export_json`: each
event as the server sent it) write what the filter shows.

On open-source Unleash the tool is unavailable, and the page says why (the registry's
capability: "Login history needs Unleash Enterprise ..."). QtCore only.
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass
from datetime import datetime
from operator import attrgetter
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from app.api.logins import KEPT_DAYS, failed, login_json, outcome
from app.api.models import LoginEvent
from app.text import count_text
from app.viewmodels.session import Session
from app.viewmodels.table import Column, TableModel
from app.viewmodels.tools import ToolViewModel


@dataclass(slots=True)
class LoginRow:
    """One login event as the table shows it."""

    event: LoginEvent
    #: the local time to the second (logins a few seconds apart matter here)
    when: str
    outcome: str

    @property
    def failed(self) -> bool:
        return failed(self.event)


def login_row(event: LoginEvent) -> LoginRow:
    when = event.created_at
    shown = (
        "" if when is None else datetime.fromtimestamp(when.timestamp()).isoformat(" ", "seconds")
    )
    return LoginRow(event, shown, outcome(event))


def _time_key(row: LoginRow) -> float:
    return row.event.created_at.timestamp() if row.event.created_at is not None else 0.0


LOGIN_COLUMNS: list[Column[LoginRow]] = [
    Column("Time", attrgetter("when"), sort_key=_time_key),
    Column("User", lambda r: r.event.username),
    Column("Outcome", attrgetter("outcome")),
    Column("Address", lambda r: r.event.ip),
    Column("Sign-in", lambda r: r.event.auth_type,
           tooltip=lambda r: "How the user signed in (the server's auth_type)"),
    Column("Why it failed", lambda r: r.event.failure_reason,
           tooltip=lambda r: r.event.failure_reason),
    Column("Id", lambda r: r.event.id, numeric=True, shown=False),
]  # fmt: skip
#: the column sorted by default (newest first)
TIME_COLUMN = 0
#: the column that takes the width left
REASON_COLUMN = 5


def logins_count_text(shown: int, total: int) -> str:
    """'84 login events', or '12 of 84 login events' when the filter hides some."""
    return count_text(shown, total, "login event")


class LoginHistoryModel(ToolViewModel):
    #: the rows were loaded (or emptied), or "Failed only" changed them
    rows_loaded = Signal()

    def __init__(self, session: Session, parent: QObject | None = None) -> None:
        super().__init__("logins", session, parent)
        self.table: TableModel[LoginRow] = TableModel(LOGIN_COLUMNS, self)
        #: every event read, as rows (the table shows them, or the failed ones)
        self.rows: list[LoginRow] = []
        self.failed_only = False
        self._load_task: asyncio.Task[None] | None = None

    def is_empty(self) -> bool:
        return not self.rows

    @property
    def empty_title(self) -> str:
        return f"No logins in the last {KEPT_DAYS} days"

    @property
    def empty_text(self) -> str:
        return (
            f"The server keeps {KEPT_DAYS} days of logins and logouts; nobody has logged in or "
            "out in that time, nor tried to."
        )

    def count_text(self, shown: int, total: int) -> str:
        """The table's count: '52 login events', '3 of 52 …' when the filter hides some; with
        "Failed only", '12 of 18 failed logins (52 login events in all)'."""
        if not self.failed_only:
            return logins_count_text(shown, total)
        return (
            f"{count_text(shown, total, 'failed login')} ({len(self.rows):,} login events in all)"
        )

    @property
    def failed_count(self) -> int:
        return sum(1 for row in self.rows if row.failed)

    def load(self) -> None:
        if self._load_task is not None and not self._load_task.done():
            return
        self.set_status("Loading login history…")
        self._load_task = self.run(self._load())

    async def _load(self) -> None:
        client = await self.session.client()
        events = (await client.login_history()).events
        self.rows = [login_row(ev) for ev in events]
        self._show()
        self.loaded = True
        self.set_status("")
        self.phase_changed.emit()

    def set_failed_only(self, on: bool) -> None:
        """Show only the failed logins (or every event again)."""
        if on == self.failed_only:
            return
        self.failed_only = on
        self._show()

    def _show(self) -> None:
        self.table.set_rows([r for r in self.rows if r.failed] if self.failed_only else self.rows)
        self.rows_loaded.emit()

    async def export_json(self, path: str | Path) -> int:
        """Write the events shown (the filter's, in the table's order) to `path` as JSON: a
        list of the events as the server sent them; the number written."""
        events = [login_json(row.event) for row in self.table.rows]

        def write() -> None:
            # names and addresses: the person's alone (0600), as `flagdesk logins --csv` writes
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with open(fd, "w", encoding="utf-8") as f:
                json.dump(events, f, indent=2, ensure_ascii=False)
                f.write("\n")

        await asyncio.to_thread(write)
        return len(events)

    def reset(self) -> None:
        self._load_task = None
        self.loaded = False
        self.rows = []
        self.table.clear()
        self.rows_loaded.emit()
