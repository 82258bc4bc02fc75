"""`EventLogModel`: the server's event log (issue 38), newest first, read page by page as the
window scrolls (`AdminClient.events`, `app.api.events`), with the server's filters
(`EventFilter`: type, who, project, flag, environment, time) and a quick filter over what is
loaded (`TableModel`'s, a keystroke at a time); "Load all" reads the rest with its progress and
Stop; Export writes what both filters show as CSV or JSON (`app.api.events.write_file`, the
command's rows, on a worker thread, mode 0600).

Paging: `table` is an `EventTable`, which tells the view it can fetch more while the server has
more and no quick filter is typed (`canFetchMore`): the view asks when it is scrolled to its end
(or not filled), and `fetch_more()` reads the next page, whose events `TableModel.extend` adds
(a page of 1,000: its filter texts, a few ms; the rows shown before stay, with the selection).
The client decodes a page with msgspec on the event loop (2 ms a page) and asks for the next one
before handing this one over; the view-model reads one page ahead (so the end is known before it
is scrolled to), makes the repeated texts of each page one object (`ValueSharer`,
`share_values`), and Load all hands the table what it read every `_HELD_FOR` seconds (one layout
and paint for a few pages), the collector paused meanwhile (`paused_gc`). Figures:
`bench/events.py`, docs/performance.md.

An event opened (`open_event`) is shown as the change it made: `EventChange`, its `preData` and
`data` compared field by field by the comparison's own `field_differences`
(`app.snapshot.compare`), as a `ChangeTable`, and the flag, project and user it names.

QtCore only: no QtWidgets below `app/`."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from operator import attrgetter, methodcaller
from pathlib import Path
from typing import Any, Literal

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)

from app.api.events import EventFilter, masked, wire_time, write_file
from app.api.models import Event
from app.api.streaming import ValueSharer
from app.snapshot.compare import Change, Difference, field_differences, short
from app.startup import paused_gc
from app.text import count_text, plural
from app.viewmodels.compare import CHANGE_ROLE, pretty
from app.viewmodels.session import Session
from app.viewmodels.table import Column, TableModel
from app.viewmodels.tools import ToolViewModel

#: what a summary's Markdown marks (bold, italics, code) and links (`[text](url)`: the text)
#: are shown as
_MARKS = re.compile(r"\*\*|__|`")
_ITALICS = re.compile(r"(?<![\w*])\*(\w[^*]*?)\*(?![\w*])")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")


def plain_summary(event: Event) -> str | None:
    """The event's summary as plain text (Unleash writes it in Markdown: `**admin** created
    ...`)."""
    text = event.summary
    if not text:
        return None
    if "[" in text:
        text = _LINK.sub(_first_group, text)
    if "*" in text or "_" in text or "`" in text:
        text = _MARKS.sub("", text)
        if "*" in text:
            text = _ITALICS.sub(_first_group, text)
    return text


#: a match's first group (a function: a template such as r"\1" is parsed by `re` on every call,
#: through an import under PySide6's import hook: 30 us a summary)
_first_group = methodcaller("group", 1)


def type_label(event: Event) -> str:
    """The type as the server labels it (6.0 on: "Flag created"), else the type itself."""
    return event.label or event.type


def who(event: Event) -> str | None:
    return event.createdBy


def _who_tooltip(event: Event) -> str | None:
    if event.createdByUserId is None:
        return None
    return f"{event.createdBy or 'Someone'} (user id {event.createdByUserId})"


#: the list's columns: the type's key and the event's id are hidden (the header's menu shows
#: them) but searched by the quick filter too
EVENT_COLUMNS: list[Column[Event]] = [
    Column("Time", attrgetter("createdAt"), tooltip=lambda e: wire_time(e.createdAt)),
    Column("Type", type_label, tooltip=attrgetter("type"), width=26),
    Column("Who", who, tooltip=_who_tooltip, width=13),
    Column("Project", attrgetter("project"), width=11),
    Column("Flag", attrgetter("featureName"), width=17),
    Column("Environment", attrgetter("environment"), width=14),
    Column("Summary", plain_summary, tooltip=plain_summary),
    Column("Event type", attrgetter("type"), shown=False, width=24),
    Column("Id", attrgetter("id"), numeric=True, shown=False, width=8),
]  # fmt: skip
TIME_COLUMN, SUMMARY_COLUMN = 0, 6
#: the page asked for (None: the read's largest, 1,000 on the search); tests ask for less
PAGE_SIZE: int | None = None
#: how long Load all holds the pages read before it hands them to the table (seconds)
_HELD_FOR = 0.25


class EventTable(TableModel[Event]):
    """The events loaded: a `TableModel` that lets its view ask for the next page when it is
    scrolled to its end (`canFetchMore`, `fetchMore`: `more_wanted`)."""

    #: the view reached the end of the rows loaded, and the server has more
    more_wanted = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(EVENT_COLUMNS, parent)
        # an event's summary is a few regular expressions: 250 rows' texts a turn, 2-5 ms
        self.texts_at_once = 250
        #: whether the view may ask for more now (set by the view-model)
        self.can_fetch: Callable[[], bool] = lambda: False

    def canFetchMore(self, parent: QModelIndex | QPersistentModelIndex) -> bool:
        return not parent.isValid() and not self.filter_text.strip() and self.can_fetch()

    def fetchMore(self, parent: QModelIndex | QPersistentModelIndex) -> None:
        if self.canFetchMore(parent):
            self.more_wanted.emit()


# ------------------------------------------------------------------ an event as its change

#: how each change is said of an event (the comparison's words are of a source and a target)
CHANGE_WORDS = {
    Change.ONLY_IN_SOURCE: "added",
    Change.ONLY_IN_TARGET: "removed",
    Change.CHANGED: "changed",
    Change.ORDER: "order changed",
}
CHANGE_COLUMNS = ("Field", "Change", "Before (preData)", "After (data)")


@dataclass(frozen=True)
class Link:
    """Something an event names: `what` ("flag", "project", "user"), its name, and where the
    app can show it (a tool's key and the item it opens; "" where it has nowhere), `go` the
    button's word: a flag has no window of its own, and shows its events here."""

    what: str
    name: str
    tool: str = ""
    item: object = None
    go: str = "Open"


@dataclass(frozen=True)
class EventChange:
    """An event as the change it made: its heading, its `preData` and `data` (secrets masked),
    their differences field by field, and what it names."""

    event: Event
    heading: str
    before: Any
    after: Any
    differences: tuple[Difference, ...]
    links: tuple[Link, ...]

    @property
    def said(self) -> str:
        """What the comparison found, in a line."""
        if self.before is None and self.after is None:
            return "The server recorded no data with this event."
        if not self.differences:
            return "Its preData and data are the same."
        if self.before is None:
            return f"Made: {plural(len(self.differences), 'field')} (no preData: nothing before)."
        if self.after is None:
            return "Removed: no data after (its preData is what was)."
        return f"{plural(len(self.differences), 'field')} changed."


def event_change(event: Event) -> EventChange:
    """`event`'s `preData` and `data` compared as the comparison compares an object's fields
    (`field_differences`): a field added, removed, or changed (an object's parameters one by
    one); a side that is no object compared whole."""
    before, after = masked(event.preData), masked(event.data)
    differences = field_differences(before, after, object=event.featureName or "")
    at = wire_time(event.createdAt)
    by = f" by {event.createdBy}" if event.createdBy else ""
    label = type_label(event)
    what = label if label == event.type else f"{label} ({event.type})"
    heading = f"{what} · {at}{by} · event {event.id}"
    links: list[Link] = []
    if event.featureName:
        links.append(Link("flag", event.featureName, "events",
                          EventFilter(flags=(event.featureName,)), "Its events"))  # fmt: skip
    if event.project:
        links.append(Link("project", event.project, "project_dashboard", event.project))
    if event.createdBy or event.createdByUserId is not None:
        user_id = event.createdByUserId
        name = event.createdBy or f"user {user_id}"
        if user_id is not None and user_id > 0:
            links.append(Link("user", name, "users", user_id))
        else:
            links.append(Link("user", name))
    if event.environment:
        links.append(Link("environment", event.environment))
    return EventChange(event, heading, before, after, tuple(differences), tuple(links))


def field_name(difference: Difference) -> str:
    return difference.where or "(the whole value)"


class ChangeTable(QAbstractTableModel):
    """An event's differences, a row each: the field, the change in words, the value before
    and after (short; in full in the tooltip). `CHANGE_ROLE` gives the comparison's `Change`,
    which the Compare window's delegate colours."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: tuple[Difference, ...] = ()

    def set_differences(self, differences: tuple[Difference, ...]) -> None:
        self.beginResetModel()
        self._rows = differences
        self.endResetModel()

    def difference(self, row: int) -> Difference | None:
        return self._rows[row] if 0 <= row < len(self._rows) else None

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(CHANGE_COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if (orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole
                and 0 <= section < len(CHANGE_COLUMNS)):  # fmt: skip
            return CHANGE_COLUMNS[section]
        return None

    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        d = self.difference(index.row()) if index.isValid() else None
        if d is None:
            return None
        column = index.column()
        added, removed = d.change is Change.ONLY_IN_SOURCE, d.change is Change.ONLY_IN_TARGET
        if role == Qt.ItemDataRole.DisplayRole:
            return (field_name(d), CHANGE_WORDS[d.change], short(d.old, added),
                    short(d.new, removed))[column]  # fmt: skip
        if role == Qt.ItemDataRole.ToolTipRole:
            if column == 2:
                return pretty(d.old, added)[:1500]
            if column == 3:
                return pretty(d.new, removed)[:1500]
            return field_name(d)
        if role == CHANGE_ROLE:
            return str(d.change)
        return None


def value_text(value: Any, *, absent: bool) -> str:
    """A value in full as the details show it: indented JSON, or what says there is none."""
    if absent:
        return "(nothing: the field is not there)"
    return pretty(value, False)


# ------------------------------------------------------------------ the view-model

#: the texts `share_values` makes one object of: names, parameters, a strategy's name (longer
#: ones are descriptions, rarely repeated)
_SHARED_LENGTH = 40
#: an event's tags when it has none: one list for all (not changed: a tag list is replaced)
_NO_TAGS: list[Any] = []


def _shared_json(value: Any, table: dict[str, str]) -> Any:
    if isinstance(value, str):
        return table.setdefault(value, value) if len(value) <= _SHARED_LENGTH else value
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, str | dict | list):
                value[key] = _shared_json(item, table)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, str | dict | list):
                value[i] = _shared_json(item, table)
    return value


def share_values(events: list[Event], table: dict[str, str]) -> None:
    """The equal short texts of `events` one object each, kept in `table` across pages: the
    flag's name, and the names and parameters in `data` and `preData` (a strategy's name, a
    rollout, a project), which the client decodes a copy each of (about 30 MB of 100,000
    events held by the window); the empty tag lists one list. A few ms a page of 1,000."""
    for event in events:
        name = event.featureName
        if name is not None:
            event.featureName = table.setdefault(name, name)
        if event.tags is not None and not event.tags:
            event.tags = _NO_TAGS
        if event.data is not None:
            event.data = _shared_json(event.data, table)
        if event.preData is not None:
            event.preData = _shared_json(event.preData, table)


def _quietly(task: asyncio.Future[Any]) -> None:
    """A closing's outcome taken (nothing to say of it)."""
    if not task.cancelled():
        task.exception()


ExportFormat = Literal["csv", "json"]


class EventLogModel(ToolViewModel):
    """The event log: `filters` (the server's search), the pages read into `table`, the event
    opened (`opened`, its `changes`), Load all and Export."""

    #: (events loaded, the server's count or -1) after every page
    progress_changed = Signal(int, int)
    #: whether more can be read, or a read of all is under way, changed
    paging_changed = Signal()
    #: the event opened changed (None: none is)
    opened_changed = Signal()
    #: an export ended: its text (what was written, or why not), and whether it failed
    exported = Signal(str, bool)

    def __init__(self, session: Session, parent: QObject | None = None) -> None:
        super().__init__("events", session, parent)
        self.table = EventTable(self)
        self.table.can_fetch = self.can_fetch_more
        self.table.more_wanted.connect(self.fetch_more)
        self.changes = ChangeTable(self)
        self.filters = EventFilter()
        #: the server's count of what the filters asked for (None: not said, or not read yet)
        self.server_total: int | None = None
        self.opened: EventChange | None = None
        self._pages: AsyncIterator[list[Event]] | None = None
        #: makes the equal values of the events' `shared` fields one object (`@row`)
        self._sharer: ValueSharer | None = None
        #: the short texts of the events' flags and data, one object each (`share_values`)
        self._values: dict[str, str] = {}
        #: the next page, read ahead (None as its result: there is none)
        self._ahead: asyncio.Future[list[Event] | None] | None = None
        self._more = False
        self._page_task: asyncio.Task[Any] | None = None
        self._all_task: asyncio.Task[Any] | None = None
        self._stop_wanted = False
        #: the last read of all was stopped (what was loaded stays)
        self.stopped = False
        self._export_task: asyncio.Task[Any] | None = None

    # ------------------------------------------------------------------ the states' texts

    def is_empty(self) -> bool:
        return self.table.total_count == 0 and not self._more

    @property
    def empty_title(self) -> str:
        if self.stopped:
            return "Reading stopped"
        return "No events" if self.filters.empty else "No events match these filters"

    @property
    def empty_text(self) -> str:
        if self.stopped:
            return "Stopped before the first page came: F5 or Apply filters reads it again."
        if not self.filters.empty:
            return "Change or clear the filters above to see more of the server's events."
        return "The server has recorded no change yet: every change made on it shows here."

    @property
    def loading_text(self) -> str:
        return self.status or "Loading the newest events…"

    # ------------------------------------------------------------------ reading

    @property
    def more(self) -> bool:
        """The server has events not read yet."""
        return self._more

    @property
    def fetching(self) -> bool:
        return self._page_task is not None and not self._page_task.done()

    @property
    def reading_ahead(self) -> bool:
        """The next page is being read (before it is asked for)."""
        return self._ahead is not None and not self._ahead.done()

    @property
    def loading_all(self) -> bool:
        return self._all_task is not None and not self._all_task.done()

    def can_fetch_more(self) -> bool:
        return self._more and not self.fetching and not self.loading_all and not self.closed

    def set_filters(self, filters: EventFilter) -> None:
        """Read the events `filters` takes, from the newest (nothing when they are the ones
        shown and read already)."""
        if filters == self.filters and (self.loaded or self.busy):
            return
        self.filters = filters
        if self.available and not self.closed:
            self.load()

    def load(self) -> None:
        """Read from the newest again: the first page."""
        self._drop_pages()
        self.loaded = False
        self.stopped = False
        self.server_total = None
        self.table.clear()
        self.set_status("Loading the newest events…")
        self._page_task = self.run(self._first_page())
        self.phase_changed.emit()
        self.paging_changed.emit()

    def _drop_pages(self) -> None:
        """Forget the pages being read: the page read ahead, under way, is cancelled (which
        ends the read: `AdminClient.events` closes its pages with it), a read between pages is
        closed."""
        for task in (self._page_task, self._all_task):
            if task is not None and not task.done():
                task.cancel()
        pages, self._pages = self._pages, None
        ahead, self._ahead = self._ahead, None
        self._page_task = self._all_task = None
        self._more = False
        if ahead is not None and not ahead.done():
            ahead.cancel()
            return
        close = getattr(pages, "aclose", None)
        if close is not None:
            closing = asyncio.ensure_future(close())
            closing.add_done_callback(_quietly)

    def _total(self, total: int | None) -> None:
        self.server_total = total

    async def _first_page(self) -> None:
        client = await self.session.client()
        pages = client.events(self.filters, size=PAGE_SIZE, on_total=self._total).__aiter__()
        self._pages = pages
        self._sharer = ValueSharer.of(Event)
        self._values = {}
        self._more = True
        self._read_ahead(pages)
        with paused_gc():
            # an empty page (none of its events passed flagdesk's own filtering) asks for the
            # next
            while await self._next_page() == 0 and self._more:
                pass
        self.loaded = True
        self.phase_changed.emit()

    def _read_ahead(self, pages: AsyncIterator[list[Event]]) -> None:
        """Start reading the next page, so that the end is known as soon as there is none (the
        client has the one after on the wire meanwhile)."""

        async def pull() -> list[Event] | None:
            try:
                return await pages.__anext__()
            except StopAsyncIteration:
                if pages is self._pages and not self.closed:
                    self._at_end()
                return None

        ahead = asyncio.ensure_future(pull())
        self._ahead = ahead
        ahead.add_done_callback(_quietly)  # a failure is raised where the page is awaited

    def _at_end(self) -> None:
        """The server has no event more for these filters."""
        if self._more:
            self._more = False
            self.phase_changed.emit()
            self.paging_changed.emit()
            self.table.counts_changed.emit(self.table.shown_count, self.table.total_count)

    async def _next_page(self, held: list[Event] | None = None) -> int:
        """The page read ahead into the table, and the next one read ahead; how many events it
        added (0 at the end). With `held`, the page is added to it rather than to the table
        (Load all hands the table a few pages at a time: `_held_for`)."""
        pages, ahead = self._pages, self._ahead
        if pages is None or ahead is None:
            return 0
        try:
            page = await asyncio.shield(ahead)
        except BaseException:
            if pages is self._pages:
                self._more = False
            raise
        if pages is not self._pages:  # a new read began meanwhile
            return 0
        if page is None:
            self._more = False
            page = []
        else:
            self._read_ahead(pages)
            if self._sharer is not None:  # a type, a project, who: one string each, not 100,000
                self._sharer.share(page)
            share_values(page, self._values)
        if held is not None:
            held.extend(page)
            return len(page)
        self.table.extend(page)
        if not self._more:
            self.phase_changed.emit()  # nothing more: empty, or not
        self.progress_changed.emit(self.table.total_count, self.total_or_unknown())
        self.paging_changed.emit()
        return len(page)

    def _hand_over(self, held: list[Event]) -> None:
        """The pages Load all held, into the table at once: the view lays out and paints once
        for them (a page at a time, its whole viewport was painted again for every 1,000
        events added below it)."""
        if held:
            self.table.extend(held)
        if not self._more:
            self.phase_changed.emit()
        self.set_status(self.progress_text)
        self.progress_changed.emit(self.table.total_count, self.total_or_unknown())
        self.paging_changed.emit()

    def total_or_unknown(self) -> int:
        return -1 if self.server_total is None else self.server_total

    def fetch_more(self) -> None:
        """The next page (the view was scrolled to its end)."""
        if self.can_fetch_more():
            self._page_task = self.run(self._more_pages(), busy=False)
            self.paging_changed.emit()

    async def _more_pages(self) -> None:
        with paused_gc():  # no collection walking the events read (`paused_gc`)
            # an empty page (none of its events passed flagdesk's own filtering) asks for the
            # next
            while await self._next_page() == 0 and self._more:
                pass

    def load_all(self) -> asyncio.Task[Any] | None:
        """Read every event left, a page at a time, the progress in `progress_changed`;
        `stop()` ends it after the page under way (what was read stays)."""
        if not self._more or self.loading_all or self.closed:
            return None
        self._stop_wanted = False
        self.stopped = False
        self._all_task = self.run(self._load_all(), busy=False)
        self.paging_changed.emit()
        return self._all_task

    async def _load_all(self) -> None:
        try:
            if self._page_task is not None and not self._page_task.done():
                await asyncio.shield(self._page_task)
            with paused_gc():  # 100,000 events made: no full collection walking each page
                held: list[Event] = []
                shown = time.monotonic()
                while self._more and not self._stop_wanted:
                    await self._next_page(held)
                    if time.monotonic() - shown >= _HELD_FOR or not self._more:
                        self._hand_over(held)
                        held = []
                        shown = time.monotonic()
                self._hand_over(held)
            self.stopped = self._stop_wanted and self._more
        finally:
            self._all_task = None
            self.set_status("")
            if not self.closed:
                self.paging_changed.emit()

    def stop(self) -> None:
        """Stop reading all: at the end of the page under way (the first page's read is
        cancelled: nothing was shown yet)."""
        if self.loading_all:
            self._stop_wanted = True
        elif not self.loaded and self._page_task is not None and not self._page_task.done():
            self._drop_pages()
            self.stopped = True
            self.loaded = True
            self.phase_changed.emit()
            self.paging_changed.emit()

    @property
    def progress_text(self) -> str:
        """ "12,000 of 100,000 events read", or "12,000 events read" when the server gave no
        count."""
        loaded = self.table.total_count
        if self.server_total is not None and self.server_total >= loaded:
            return f"{loaded:,} of {plural(self.server_total, 'event')} read"
        return f"{plural(loaded, 'event')} read"

    def count_text(self, shown: int, total: int) -> str:
        """The list's count: what the quick filter shows of what is loaded, and whether the
        server has more."""
        text = count_text(shown, total, "event")
        if self._more:
            if self.server_total is not None and self.server_total > total:
                return f"{text} loaded of {self.server_total:,}; scroll for more"
            return f"{text} loaded; scroll for more"
        return text

    # ------------------------------------------------------------------ an event opened

    def open_event(self, event: Event | None) -> None:
        """Show `event` as the change it made (None: none)."""
        self.opened = None if event is None else event_change(event)
        self.changes.set_differences(() if self.opened is None else self.opened.differences)
        self.opened_changed.emit()

    def details(self, row: int) -> tuple[str, str, str]:
        """What the details show for the change table's `row` (-1: the whole event): a
        heading, the value before and after in full."""
        opened = self.opened
        if opened is None:
            return ("", "", "")
        d = self.changes.difference(row)
        if d is None:
            return (
                "The whole event: preData on the left, data on the right.",
                "(none)" if opened.before is None else pretty(opened.before, False),
                "(none)" if opened.after is None else pretty(opened.after, False),
            )
        return (
            f"{field_name(d)}: {CHANGE_WORDS[d.change]}",
            value_text(d.old, absent=d.change is Change.ONLY_IN_SOURCE),
            value_text(d.new, absent=d.change is Change.ONLY_IN_TARGET),
        )

    # ------------------------------------------------------------------ export

    @property
    def exporting(self) -> bool:
        return self._export_task is not None and not self._export_task.done()

    def export(self, path: Path, fmt: ExportFormat) -> asyncio.Task[Any] | None:
        """Write what the filters show to `path` (CSV or JSON, 0600): every event the server's
        filters take (the rest read first, with the progress and Stop of Load all), then
        narrowed by the quick filter. `exported` says how it went."""
        if self.exporting or self.closed:
            return None
        self._export_task = self.run(self._export(path, fmt), busy=False)
        return self._export_task

    async def _export(self, path: Path, fmt: ExportFormat) -> None:
        try:
            if self._more:
                task = self.load_all() or self._all_task
                if task is not None:
                    await task
                if self._more:  # stopped: nothing written
                    self.exported.emit("Not exported: reading the events was stopped.", True)
                    return
            events = self.table.rows
            about = {"server": self.session.url, "filters": self.filters.to_json(),
                     "quickFilter": self.table.filter_text.strip() or None,
                     "exportedAt": wire_time(datetime.now().astimezone())}  # fmt: skip
            try:
                count = await asyncio.to_thread(write_file, path, events, fmt, about)
            except OSError as exc:
                self.exported.emit(f"Could not write {path}: {exc.strerror or exc}", True)
                return
            self.exported.emit(f"Exported {plural(count, 'event')} to {path}.", False)
        finally:
            self._export_task = None

    # ------------------------------------------------------------------ the connection

    def close(self) -> None:
        """The window is going: the page read ahead is cancelled too (it is not one of the
        tasks `run` keeps), so the read ends and nothing holds this view-model."""
        if not self.closed:
            self._drop_pages()
        super().close()

    def reset(self) -> None:
        self._drop_pages()
        self.loaded = False
        self.server_total = None
        self.stopped = False
        self.table.clear()
        self.open_event(None)
        self.paging_changed.emit()


#: the filter fields the window offers, in its order: (the `EventFilter` field, its label)
FILTER_FIELDS = (("types", "Type"), ("users", "Who"), ("projects", "Project"),
                 ("flags", "Flag"), ("environments", "Environment"))  # fmt: skip


def texts_of(filters: EventFilter) -> dict[str, str]:
    """The window's filter fields that give `filters` (`filters_from`'s inverse): the values
    joined by commas, the times as UTC date and time to the second."""
    texts = {name: ", ".join(getattr(filters, name)) for name, _ in FILTER_FIELDS}
    for name in ("since", "until"):
        at: datetime | None = getattr(filters, name)
        texts[name] = "" if at is None else at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return texts


def filters_from(texts: dict[str, str]) -> EventFilter:
    """The window's filter fields as an `EventFilter`: each of `FILTER_FIELDS` a list of values
    separated by commas (any of them), `since` and `until` a WHEN as `flagdesk events` takes it
    (`app.api.events.when`: 2026-01-31, 2026-01-31T14:00, 12h, 7d; an `until` date takes all of
    that day). ValueError saying which field is wrong and why."""
    from app.api.events import when

    values = {name: tuple(v.strip() for v in texts.get(name, "").split(",") if v.strip())
              for name, _ in FILTER_FIELDS}  # fmt: skip
    times: dict[str, datetime | None] = {}
    for name, label in (("since", "Since"), ("until", "Until")):
        text = texts.get(name, "").strip()
        try:
            times[name] = when(text, end_of_day=name == "until") if text else None
        except ValueError as exc:
            raise ValueError(f"{label}: {exc}") from None
    since, until = times["since"], times["until"]
    if since is not None and until is not None and since >= until:
        raise ValueError("Since must be before Until: no event can be both.")
    return EventFilter(**values, since=since, until=until)
