"""`InactiveUsersModel`: users with no login in 180 days (`GET /api/admin/user-admin/inactive`),
as a table sorted, filtered, copied and exported by `TableModel`.

The answer can hold 100,000 users: its rows are plain `InactiveRow`s, built with the sorted
column's keys, and sorted, on a worker thread a piece at a time while the answer downloads
(`RowPipeline`), so the GUI thread only swaps lists and takes the order up.

"Days inactive" counts from the latest of the last login (`seenAt`) and the account's creation
(`createdAt`), whichever is later; the cell's tooltip says which. The personal access token's last
use (`patSeenAt`) is shown but not counted, as the server's own list does not count it either
on Unleash (a user kept active only by a token is not listed at all on the sandbox).

Deleting (the action `inactive_users.delete`): the window hands over the selected rows
(`select`); `delete_reason` says why Delete… cannot be used now ("" when it can); `plan_delete()`
fixes what a confirmation shows (`app.actions.inactive_users.DeletePlan`: how many, the first
names, the server, the connection, where the snapshot goes); `delete(plan)`, once confirmed, does
it through the runner, `run_plan` (the snapshot written on a worker thread, the journal, the
request), then says how it went in `outcome` (or `outcome_error`, the client's message: shown on
this connection only, `ActionViewModel`), tells the other windows (`Changes` of the users) and
loads the list again.

QtCore only: no QtWidgets below `app/`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime
from operator import attrgetter

from PySide6.QtCore import QObject, Signal

# DeletePlan is re-exported: the window shows a plan, and reaches the actions only through here
from app.actions.inactive_users import DeletePlan as DeletePlan
from app.actions.inactive_users import journal_of, plan_deletion
from app.api.errors import ClientError
from app.api.models import InactiveUser
from app.changes import Changes, Resource
from app.registry import DELETE_INACTIVE_USERS
from app.startup import paused_gc
from app.text import count_text, plural
from app.viewmodels.session import Session
from app.viewmodels.table import Column, RowPipeline, TableModel, cell_text
from app.viewmodels.tools import ActionViewModel

#: the server's threshold (the spec's "Limits": 180 days without login)
INACTIVE_DAYS = 180

#: `basis` of a row: what its days inactive count from
LAST_LOGIN, CREATED = "last login", "created"


@dataclass(slots=True)  # not frozen: a frozen dataclass's __init__ is 2.5 times slower
class InactiveRow:
    """One inactive user as the table shows it; built off the GUI thread. Not changed once
    built."""

    id: int
    name: str | None
    username: str | None
    email: str | None
    seenAt: datetime | None
    createdAt: datetime | None
    patSeenAt: datetime | None
    #: whole days since `since`; None when the server gave neither time
    days_inactive: int | None
    #: the later of `seenAt` and `createdAt`
    since: datetime | None
    #: LAST_LOGIN or CREATED: which of the two `since` is
    basis: str

    @property
    def label(self) -> str:
        return self.name or self.username or self.email or f"User {self.id}"


def inactive_row(user: InactiveUser, now: datetime) -> InactiveRow:
    seen, created = user.seenAt, user.createdAt
    since: datetime | None = created
    basis = CREATED
    if seen is not None and (created is None or seen >= created):
        since, basis = seen, LAST_LOGIN
    days = None if since is None else max(0, (now - since).days)
    return InactiveRow(user.id, user.name, user.username, user.email, seen, created,
                       user.patSeenAt, days, since, basis)  # fmt: skip


def days_tooltip(row: InactiveRow) -> str:
    if row.since is None:
        return "The server gave neither a last login nor a creation time"
    when = cell_text(row.since)
    if row.basis == LAST_LOGIN:
        return f"Days since the last login ({when})"
    if row.seenAt is None:
        return f"Never logged in: days since the account was created ({when})"
    return f"Days since the account was created ({when}), which is after its last login"


#: plain fields are read with `attrgetter` (a C call: 100,000 rows are read a column at a time).
#: The username (mostly the email's first part, or none with single sign-on) and the creation
#: date (the days' tooltip gives it where the days count from it) start hidden, so the rest fit
#: the default window without scrolling sideways; the header's menu shows them.
INACTIVE_COLUMNS: list[Column[InactiveRow]] = [
    Column("Name", attrgetter("name")),
    Column("Username", attrgetter("username"), shown=False),
    Column("Email", attrgetter("email")),
    Column("Days inactive", attrgetter("days_inactive"), numeric=True, tooltip=days_tooltip),
    Column("Last login", attrgetter("seenAt"),
           tooltip=lambda r: None if r.seenAt is not None else "Never logged in"),
    Column("Created", attrgetter("createdAt"), shown=False),
    Column("Personal token last used", attrgetter("patSeenAt"),
           tooltip=lambda r: None if r.patSeenAt is not None else "No personal access token used"),
]  # fmt: skip
#: the column sorted by default (most days inactive first)
DAYS_COLUMN = 3
#: the column that takes the width left (elided when the window is narrow)
EMAIL_COLUMN = 2


#: the loading text counts the users arrived in steps of this many
PROGRESS_STEP = 10_000


def inactive_count_text(shown: int, total: int) -> str:
    """'37 users with no login in 180 days', or '3 of 37 …' when a filter hides some."""
    return f"{count_text(shown, total, 'user')} with no login in {INACTIVE_DAYS} days"


class InactiveUsersModel(ActionViewModel):
    #: the rows were loaded (or emptied)
    rows_loaded = Signal()
    #: whether Delete… can be used changed (the selection, a deletion running, the connection)
    delete_changed = Signal()
    #: a deletion ended: `outcome` or `outcome_error` says how
    deletion_finished = Signal()

    shows = frozenset({Resource.USERS})

    def __init__(self, session: Session, parent: QObject | None = None) -> None:
        super().__init__("inactive_users", session, parent)
        self.table: TableModel[InactiveRow] = TableModel(INACTIVE_COLUMNS, self)
        self._load_task: asyncio.Task[None] | None = None
        #: the rows selected in the window
        self.selected: list[InactiveRow] = []
        self._delete_task: asyncio.Task[None] | None = None
        session.state_changed.connect(self.delete_changed)

    def is_empty(self) -> bool:
        return self.table.total_count == 0

    @property
    def empty_text(self) -> str:
        return (
            f"Every user has logged in within the last {INACTIVE_DAYS} days, or was created "
            f"less than {INACTIVE_DAYS} days ago. Service accounts are never listed."
        )

    @property
    def busy_loading(self) -> bool:
        return self._load_task is not None and not self._load_task.done()

    def load(self) -> None:
        if self.busy_loading:
            return
        self.set_status("Loading inactive users…")
        self._load_task = self.run(self._load())

    async def _load(self) -> None:
        client = await self.session.client()
        now = datetime.now(UTC)
        rows: RowPipeline[InactiveUser, InactiveRow] = RowPipeline(
            INACTIVE_COLUMNS,
            lambda users: [inactive_row(u, now) for u in users],
            self.table.sort_state,
        )

        def arrived(users: list[InactiveUser]) -> None:
            rows.add(users)
            if rows.count // PROGRESS_STEP != (rows.count - len(users)) // PROGRESS_STEP:
                self.set_status(f"Loading inactive users… {rows.count:,} so far")

        try:
            with paused_gc():
                await client.inactive_users(on_items=arrived)
                prepared = await rows.result()
        finally:
            rows.close()
        self.table.set_prepared(prepared)
        self.loaded = True
        self.rows_loaded.emit()
        self.phase_changed.emit()

    # ------------------------------------------------------------------ deleting

    def select(self, rows: list[InactiveRow]) -> None:
        """The rows selected in the window (what Delete… deletes)."""
        self.selected = rows
        self.delete_changed.emit()

    @property
    def deleting(self) -> bool:
        return self._delete_task is not None and not self._delete_task.done()

    @property
    def delete_reason(self) -> str:
        """Why Delete… cannot be used now, and what would make it work ("" when it can)."""
        reason = self.action_reason(DELETE_INACTIVE_USERS)
        if reason:
            return reason
        if self.deleting:
            return "A deletion is under way."
        if not self.selected:
            return "Select the users to delete (Ctrl+A selects all those shown)."
        return ""

    @property
    def can_delete(self) -> bool:
        return not self.delete_reason

    def plan_delete(self) -> DeletePlan | None:
        """What deleting the selected users will do, for the confirmation; None when Delete…
        cannot be used now."""
        caps = self.session.capabilities
        if not self.can_delete or caps is None:
            return None
        return plan_deletion(self.selected, journal_of(self.session.name, caps))

    def delete(self, plan: DeletePlan) -> asyncio.Task[None] | None:
        """Carry out a confirmed `plan` (from `plan_delete`); None when a deletion is under way,
        or when the connection has changed since the plan was made (`outcome_error` says so)."""
        caps = self.session.capabilities
        if self.deleting or self.closed:
            return None
        if caps is None or plan.server != caps.base_url or plan.connection != self.session.name:
            self._set_outcome_error(
                f"Not deleted: the connection changed after the confirmation (it named "
                f"{plan.server}). Select the users again."
            )
            self.deletion_finished.emit()
            return None
        self.clear_outcome()
        self.set_status(f"Deleting {plural(plan.count, 'inactive user')}…")
        self._delete_task = self.run(self._delete(plan), busy=False)
        self.delete_changed.emit()
        return self._delete_task

    async def _delete(self, plan: DeletePlan) -> None:
        try:
            # the server may have deleted some even when it answered with an error: read again
            await self.run_plan(plan, after_sent=self.load)
        except ClientError as exc:
            self._set_outcome_error(str(exc))
            self.report_error(self.outcome_error)
        else:
            self._set_outcome(
                f"Deleted {plural(plan.count, 'inactive user')}. Snapshot: {plan.snapshot}"
            )
            self.selected = []
        finally:
            self._delete_task = None
            self.set_status("")
            if not self.closed:
                self.deletion_finished.emit()
                self.delete_changed.emit()

    def on_changes(self, changes: Changes) -> None:
        """Users changed elsewhere: load again when the list shows one of them (a list of
        100,000 is not read again for a user it does not hold)."""
        if changes.ids and self.loaded:
            ids = changes.ids
            if not any(row.id in ids for row in self.table.all_rows):
                return
        super().on_changes(changes)

    def reset(self) -> None:
        self._load_task = None
        self.loaded = False
        self.selected = []
        self.table.clear()
        self.rows_loaded.emit()

    def close(self) -> None:
        if not self.closed:
            self.session.state_changed.disconnect(self.delete_changed)
        super().close()
