"""`ArchiveBrowserModel`: the archived feature browser's view-model. It lists a project's
archived flags (`AdminClient.archived_features`, which reads the spec's endpoint or, on servers
without it, the search API) in a `TableModel`, and holds the flag selected for the detail pane.

The rows are the wire's `ArchivedFeature`s. A project can hold 100,000 of them: the sorted
column's keys, and their order, are made on a worker thread a piece at a time while the answer
downloads (`RowPipeline`); the GUI thread only swaps lists.

The spec marks a flag's `lastSeenAt` and `environments` as deprecated; they are still the only
place the server says where and when a flag was last seen, so they are shown.

Reviving and deleting for good (`app.actions.archived_features`): the window hands over the
selected rows (`select_rows`); `reason(REVIVE)`, `reason(DELETE)` and `undo_reason` say why an
action cannot be used now ("" when it can: the registry's action for one flag or for many must
be available here); `plan(verb)` fixes what a confirmation shows; `carry_out(plan)`, once
confirmed, does it (snapshot, journal, one request per batch), then says how it went in
`outcome` or `outcome_error` (shown on this connection only, `ActionViewModel`), tells the
other windows (`Changes` of the archived flags and of the flags) and loads the list again. After
a revive, `plan_undo()` archives the same flags again (`undoable` holds them until another
action or a new connection replaces them). The actions use the revive/delete endpoints, so they
work where the list comes through the search API.
QtCore only.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime
from operator import attrgetter
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal

from app.actions.archived_features import (
    ARCHIVE,
    DELETE,
    REVIVE,
    action_for,
    journal_of,
    plan_archive,
    plan_delete,
    plan_revive,
)

# ArchivePlan is re-exported: the window shows a plan, and reaches the actions only through here
from app.actions.archived_features import ArchivePlan as ArchivePlan
from app.api.errors import ClientError
from app.api.models import ArchivedFeature, ArchivedFeatureEnvironment
from app.changes import Resource
from app.startup import paused_gc
from app.text import plural
from app.viewmodels.choices import ChoicesModel, project_choices, revalidated
from app.viewmodels.session import Session
from app.viewmodels.table import Column, RowPipeline, TableModel, cell_text
from app.viewmodels.tools import ActionViewModel

__all__ = ["ARCHIVE", "DELETE", "REVIVE", "ArchiveBrowserModel", "ArchivePlan"]

#: the window's states
IDLE, LOADING, ERROR, EMPTY, CONTENT = "idle", "loading", "error", "empty", "content"


# ---------------------------------------------------------------------------- a flag's fields


def environments(feature: ArchivedFeature) -> list[ArchivedFeatureEnvironment]:
    """The flag's environments as the server sent them (none when it sent none)."""
    return feature.environments or []


def _latest_environment(
    feature: ArchivedFeature,
) -> ArchivedFeatureEnvironment | None:
    latest: ArchivedFeatureEnvironment | None = None
    for env in environments(feature):
        seen = env.lastSeenAt
        if seen is not None and (latest is None or seen > (latest.lastSeenAt or seen)):
            latest = env
    return latest


def last_seen(feature: ArchivedFeature) -> datetime | None:
    """The flag's own `lastSeenAt`, or when the server sent none, the latest of its
    environments'."""
    own = feature.lastSeenAt
    if own is not None:
        return own
    latest = _latest_environment(feature)
    return latest.lastSeenAt if latest is not None else None


def last_seen_source(feature: ArchivedFeature) -> str:
    """Where the "Last seen" time comes from, for its tooltip."""
    own = feature.lastSeenAt
    latest = _latest_environment(feature)
    if latest is not None and (own is None or own == latest.lastSeenAt):
        why = "" if own is not None else "; the server gives no time for the flag itself"
        return f"Last seen in {latest.name}: the latest of its environments' times{why}"
    if own is not None:
        return "Last seen: the time the server gives for the flag as a whole"
    if environments(feature):
        return "Never seen in any of its environments"
    return "Never seen (the server gives no time for the flag or its environments)"


def _time_key(get: Callable[[ArchivedFeature], datetime | None]) -> Callable[[Any], float]:
    """Sort by the time; a missing time sorts as the oldest."""

    def key(feature: ArchivedFeature) -> float:
        value = get(feature)
        return value.timestamp() if value is not None else float("-inf")

    return key


#: plain fields are read with `attrgetter` (a C call: 100,000 rows are read a column at a time).
#: The creation date and impression data start hidden (the selected flag's details below the
#: table show them), so the rest fit the default window; the header's menu shows them.
COLUMNS: list[Column[ArchivedFeature]] = [
    Column("Name", attrgetter("name")),
    Column("Type", attrgetter("type")),
    Column("Description", lambda f: f.description or None, tooltip=lambda f: f.description),
    Column("Created", attrgetter("createdAt"), sort_key=_time_key(attrgetter("createdAt")),
           shown=False),
    Column("Archived", attrgetter("archivedAt"), sort_key=_time_key(attrgetter("archivedAt"))),
    Column("Stale", attrgetter("stale")),
    Column("Impression data", attrgetter("impressionData"), shown=False),
    Column("Last seen", last_seen, tooltip=last_seen_source, sort_key=_time_key(last_seen)),
]  # fmt: skip
#: the default order: archived newest first
ARCHIVED_COLUMN = 4
DEFAULT_ORDER = Qt.SortOrder.DescendingOrder

ENVIRONMENT_COLUMNS: list[Column[ArchivedFeatureEnvironment]] = [
    Column("Environment", lambda e: e.name),
    Column("Enabled", lambda e: e.enabled),
    Column("Last seen", lambda e: e.lastSeenAt),
]

#: the detail pane's fields besides the environments: (label, text of the selected flag)
DETAILS: list[tuple[str, Callable[[ArchivedFeature], str]]] = [
    ("Project", lambda f: f.project),
    ("Type", lambda f: cell_text(f.type)),
    ("Description", lambda f: f.description or "No description"),
    ("Created", lambda f: cell_text(f.createdAt)),
    ("Archived", lambda f: cell_text(f.archivedAt)),
    ("Stale", lambda f: cell_text(f.stale)),
    ("Impression data", lambda f: cell_text(f.impressionData)),
    ("Last seen", lambda f: cell_text(last_seen(f))),
]


# ---------------------------------------------------------------------------- the model


class ArchiveBrowserModel(ActionViewModel):
    """A project's archived flags. `show_project(id)` loads them; `state` says what the window
    shows (idle, loading, error, empty, content) and `changed` says when it may have changed."""

    changed = Signal()
    #: the flag for the detail pane changed (None: nothing selected)
    selected_changed = Signal(object)
    #: whether Revive…, Delete for good… and Undo can be used changed
    actions_changed = Signal()
    #: an action ended: `outcome` or `outcome_error` says how
    action_finished = Signal()
    #: the project asked for changed (not by the picker: a new connection replaced it)
    project_changed = Signal(str)

    shows = frozenset({Resource.ARCHIVED_FEATURES})

    def __init__(self, session: Session, parent: QObject | None = None) -> None:
        super().__init__("archived_features", session, parent)
        #: the server's projects, for the picker
        self.projects: ChoicesModel = project_choices(session, self)
        self.table: TableModel[ArchivedFeature] = TableModel(COLUMNS, self)
        #: the selected flag's environments
        self.environments: TableModel[ArchivedFeatureEnvironment] = TableModel(
            ENVIRONMENT_COLUMNS, self
        )
        #: the project asked for (typed or picked); "" until one is
        self.project = ""
        #: the project whose flags `table` holds (None: nothing loaded)
        self.loaded_project: str | None = None
        #: the last load read the search API (the server has no archive endpoint)
        self.through_search = False
        #: what was done on a new connection with the project chosen on the previous one
        #: ("" when it is shown as asked)
        self.notice = ""
        self.selected: ArchivedFeature | None = None
        self._task: asyncio.Task[None] | None = None
        #: the check of a project chosen on the previous connection (see `_revalidate`)
        self._checking: asyncio.Task[None] | None = None
        #: the rows selected in the table (what Revive… and Delete for good… act on)
        self.selected_rows: list[ArchivedFeature] = []
        self._action_task: asyncio.Task[None] | None = None
        #: the last revive's plan, while Undo can archive its flags again
        self.undoable: ArchivePlan | None = None
        session.state_changed.connect(self.actions_changed)
        self.busy_changed.connect(self._emit_changed)
        self.error_changed.connect(self._emit_changed)
        self.projects.changed.connect(self._emit_changed)
        self.projects.busy_changed.connect(self._emit_changed)

    def _emit_changed(self, *_: object) -> None:
        if not self.closed:
            self.changed.emit()
            self.actions_changed.emit()  # they need the project's flags listed

    # ------------------------------------------------------------------ state

    @property
    def state(self) -> str:
        """What the list part shows once the connection serves the tool (the shared `phase`
        says what comes first: waiting for the connection, or why it cannot be used)."""
        if not self.project:
            return IDLE
        if self.busy:
            return LOADING
        if self.error:
            return ERROR
        if self.loaded_project != self.project:
            return IDLE  # nothing loaded yet, or not for this one
        return CONTENT if self.table.total_count else EMPTY

    def is_loaded(self) -> bool:
        return self.state != LOADING

    def is_empty(self) -> bool:
        """Nothing asked for yet (`IDLE`: "Choose a project"), or no flag archived in it."""
        return self.state in (IDLE, EMPTY)

    def project_label(self, project: str) -> str:
        """The project as the picker names it ("Web shop (web-shop)"), else its id."""
        for choice in self.projects.choices:
            if choice.value == project:
                return choice.label
        return project

    @property
    def project_known(self) -> bool | None:
        """Whether the server lists the project asked for (None: its projects are not known)."""
        if self.projects.busy or self.projects.error or not self.session.ready:
            return None
        return any(choice.value == self.project for choice in self.projects.choices)

    @property
    def loading_text(self) -> str:
        how = " through the search API" if self.through_search else ""
        return f"Loading the archived flags of project {self.project_label(self.project)}{how}…"

    @property
    def empty_title(self) -> str:
        """The empty state's title: no project asked for yet, or none of its flags archived."""
        if self.state == IDLE:
            return "Choose a project"
        return f"No archived flags in project {self.project_label(self.project)}"

    @property
    def empty_text(self) -> str:
        if self.state == IDLE:
            return "Pick a project above, or type its id, to list the flags archived in it."
        if self.project_known is False:
            return (
                f"The server lists no project with the id “{self.project}”: check the "
                "spelling, or pick a project from the list."
            )
        return (
            "No flag of this project is in the archive: none was archived, or the archived "
            "ones were revived or deleted for good."
        )

    @property
    def failed_title(self) -> str:
        return f"Could not load the archived flags of project {self.project_label(self.project)}"

    # ------------------------------------------------------------------ actions

    def start(self) -> None:
        if self.available:
            self.projects.load()
        super().start()

    def refresh(self) -> None:
        """F5, Retry: the projects and the archived flags again."""
        if self.available and not self.closed:
            self.projects.load()
        super().refresh()

    def show_project(self, project: str) -> None:
        """List the archived flags of `project` (a project id)."""
        project = project.strip()
        if not project or self.closed:
            return
        if project == self.project and self.state in (LOADING, CONTENT, EMPTY):
            return  # shown already (F5 loads again); an editable combo box also says
            # "activated" when it loses the focus with the text of an item in it
        if self._checking is not None:  # chosen now: what the check would pick does not matter
            self._checking.cancel()
            self._checking = None
        self.project = project
        self.notice = ""
        if self.available:
            self.load()
        else:
            self._emit_changed()

    def load(self) -> None:
        if not self.project:
            self._emit_changed()
            return
        if self._checking is not None and not self._checking.done():
            return  # F5 while the project is checked on a new server: the check loads it
        if self._task is not None and not self._task.done():
            self._task.cancel()  # a project asked for before this one
        caps = self.session.capabilities
        self.through_search = caps is not None and not caps.archive_endpoint
        self._task = self.run(self._load(self.project))
        self.set_status(self.loading_text)
        self._emit_changed()

    async def _load(self, project: str) -> None:
        client = await self.session.client()
        # the sorted column's keys, and the order, are made on a worker thread while the
        # answer downloads: the GUI thread then only swaps lists and takes the order up
        rows: RowPipeline[ArchivedFeature, ArchivedFeature] = RowPipeline(
            COLUMNS, list, self.table.sort_state
        )
        try:
            with paused_gc():
                await client.archived_features(project, on_items=rows.add)
                prepared = await rows.result()
        finally:
            rows.close()
        keep = self.selected.name if self.selected is not None else None
        self.table.set_prepared(prepared)
        self.loaded_project = project
        # the same flag stays selected after F5; a flag of another project does not. Looked
        # for among every row: with a filter typed, the rows shown may be none yet (the filter
        # waits for the rows' filter texts: `TableModel.filter_pending`)
        flags = self.table.all_rows if keep is not None else []
        self.select(next((f for f in flags if f.name == keep), None))

    def select(self, feature: ArchivedFeature | None) -> None:
        """Show `feature` in the detail pane (None: nothing selected)."""
        if feature is self.selected:
            return
        self.selected = feature
        self.environments.set_rows(environments(feature) if feature is not None else [])
        if not self.closed:
            self.selected_changed.emit(feature)

    # ------------------------------------------------------------------ revive, delete, undo

    def select_rows(self, rows: list[ArchivedFeature]) -> None:
        """The rows selected in the window (what Revive… and Delete for good… act on)."""
        self.selected_rows = rows
        self.actions_changed.emit()

    @property
    def acting(self) -> bool:
        return self._action_task is not None and not self._action_task.done()

    def _blocked(self, verb: str, count: int) -> str:
        blocked = self.action_reason(action_for(verb, max(count, 1)))
        if blocked:
            return blocked
        if self.acting:
            return "An action is under way."
        return ""

    def reason(self, verb: str) -> str:
        """Why `verb` (REVIVE or DELETE) cannot be used on the selected rows now, and what
        would make it work ("" when it can)."""
        blocked = self._blocked(verb, len(self.selected_rows))
        if blocked:
            return blocked
        if self.loaded_project is None or self.loaded_project != self.project:
            return "Show a project's archived flags first."
        if not self.selected_rows:
            return "Select the flags first (Ctrl+A selects all those shown)."
        return ""

    @property
    def undo_reason(self) -> str:
        """Why Undo cannot be used now ("" when it can)."""
        if self.undoable is None:
            return "Nothing to undo: Undo follows a revive."
        return self._blocked(ARCHIVE, self.undoable.count)

    def plan(self, verb: str) -> ArchivePlan | None:
        """What reviving (REVIVE) or deleting for good (DELETE) the selected flags will do, for
        the confirmation; None when it cannot be done now."""
        caps = self.session.capabilities
        if self.reason(verb) or caps is None or self.loaded_project is None:
            return None
        make = plan_revive if verb == REVIVE else plan_delete
        journal = journal_of(self.session.name, caps)
        return make(self.selected_rows, self.loaded_project, journal)

    def plan_undo(self) -> ArchivePlan | None:
        """Archiving the last revive's flags again; None when Undo cannot be used now."""
        caps = self.session.capabilities
        last = self.undoable
        if self.undo_reason or caps is None or last is None:
            return None
        journal = journal_of(self.session.name, caps)
        return plan_archive(last.features, last.project, journal)

    def carry_out(self, plan: ArchivePlan) -> asyncio.Task[None] | None:
        """Carry out a confirmed `plan`; None when an action is under way, or when the
        connection changed since the plan was made (`outcome_error` says so)."""
        caps = self.session.capabilities
        if self.acting or self.closed:
            return None
        if caps is None or plan.server != caps.base_url or plan.connection != self.session.name:
            self._set_outcome_error(
                f"Nothing was {plan.past}: the connection changed after the confirmation (it "
                f"named {plan.server}). Select the flags again."
            )
            self.action_finished.emit()
            return None
        self.clear_outcome()
        self.set_status(plan.progress)
        self._action_task = self.run(self._carry_out(plan), busy=False)
        self.actions_changed.emit()
        return self._action_task

    async def _carry_out(self, plan: ArchivePlan) -> None:
        def read_again() -> None:
            # the server may have changed some even when it answered with an error
            self.undoable = None  # what the server holds now is not known
            if self.loaded_project == plan.project:
                self.load()

        try:
            await self.run_plan(plan, after_sent=read_again)
        except ClientError as exc:
            self._set_outcome_error(str(exc))
            self.report_error(self.outcome_error)
        else:
            flags = plural(plan.count, "flag")
            self._set_outcome(
                f"{flags[0].upper()}{flags[1:]} of project {plan.project} {plan.past}. "
                f"Snapshot: {plan.snapshot}"
            )
            self.undoable = plan if plan.verb == REVIVE else None
            self.selected_rows = []
        finally:
            self._action_task = None
            self.set_status("")
            if not self.closed:
                self.action_finished.emit()
                self.actions_changed.emit()

    def close(self) -> None:
        if not self.closed:
            self.projects.close()
            self.session.state_changed.disconnect(self.actions_changed)
        super().close()

    def on_connection_changed(self) -> None:
        """A project id belongs to the server it was chosen on: on the new one it is checked
        against the server's projects before its flags are asked for (see `revalidated`)."""
        asked = self.project
        self.reset()
        if not (self._started and self.available):
            return
        if asked:
            self._task = self._checking = self.run(self._revalidate(asked))
            self.set_status(f"Checking project {asked} on this server…")
            self._emit_changed()

    async def _revalidate(self, asked: str) -> None:
        listed = await self.projects.listed()
        project, self.notice = revalidated(asked, listed, self.session.name)
        if project != self.project:
            self.project = project
            self.project_changed.emit(project)
        caps = self.session.capabilities
        self.through_search = caps is not None and not caps.archive_endpoint
        self.set_status(self.loading_text)
        self._emit_changed()
        await self._load(project)

    def reset(self) -> None:
        """A new connection: forget the rows of the old one (the project asked for stays until
        the new server's projects say whether it has it; the last action's outcome stays with
        its own connection)."""
        self._task = None
        self.notice = ""
        self.loaded_project = None
        self.selected_rows = []
        self.undoable = None
        self.table.clear()
        self.select(None)
        self._emit_changed()
        self.actions_changed.emit()
