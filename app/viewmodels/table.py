"""`TableModel`: a read-only QAbstractTableModel over a list of Python objects, one row each,
with the columns described by `Column`s. Every table in flagdesk uses it.

Sorting and filtering happen here, in Python, followed by one model reset (on 100,000 rows a
QSortFilterProxyModel took 7.4 s to sort and 2 s to filter; see notes/qt-stack.md):

- `prepare_rows()` builds, for every row, the lower-cased text the filter searches. It is plain
  Python with no Qt, so a view-model runs it on a worker thread (`asyncio.to_thread`) and hands
  the result to `set_prepared()` on the GUI thread, which only swaps lists. For an answer that
  arrives a piece at a time, `RowPipeline` builds the rows and sort keys piece by piece during
  the download, and leaves the filter texts to the table: it makes them a slice at a time in
  turns of the event loop once the rows are on screen (`FilterTexts`). A filter typed before
  the last slice waits for them, no row shown meanwhile (`filter_pending`), while the slices
  come a turn's worth at a time; with a few slices left, it makes them at once.
- Sorting computes one key per row for the sorted column the first time, keeps it, and sorts a
  list of row numbers by it; the order is kept too, per column and direction, until the rows
  change (the other direction is made from it: `opposite_order`). A reload of a sorted table
  gets its order sorted on `RowPipeline`'s worker thread. The filter keeps the row numbers
  whose text holds every word typed.
- Cell texts are made when the view asks for them, i.e. only for the rows on screen.
- Rows it no longer shows (replaced by `set_prepared`) are let go of a slice at a time in
  turns of the event loop too (`LetGo`): freeing 100,000 rows at once held the GUI thread
  40-80 ms after every reload (`bench/actions.py`). The tables of a closed window hand theirs
  to the process's own (`TableModel.release`), and the collection that frees the window waits
  for the last slice (`collect_when_released`).

QtCore only: no QtWidgets below `app/`.
"""

from __future__ import annotations

import asyncio
import csv
import time
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from itertools import chain, compress, islice, repeat
from operator import and_, contains, ne
from pathlib import Path
from typing import Any, Generic, TextIO, TypeVar, cast

from PySide6.QtCore import (
    QAbstractTableModel,
    QCoreApplication,
    QModelIndex,
    QModelRoleData,
    QModelRoleDataSpan,
    QObject,
    QPersistentModelIndex,
    Qt,
    QTimer,
    Signal,
)

from app.startup import collect_frozen, paused_gc

T = TypeVar("T")
S = TypeVar("S")

#: `data(index, ROW_ROLE)` gives the row's object itself
ROW_ROLE = Qt.ItemDataRole.UserRole
#: in front of the first cell of a row `TableModel.mark` marks (a user's unsaved changes)
MARK = "•"
#: shown for a missing value
MISSING = "—"
#: between the cells of a row in the filter's text, so one word never spans two cells
_CELL_SEPARATOR = "\x1f"

_Index = QModelIndex | QPersistentModelIndex

#: the roles `TableModel` answers, as the numbers Qt passes (comparing them with Qt's enums
#: costs an attribute lookup each; a repaint asks about 1,500 times)
_DISPLAY = Qt.ItemDataRole.DisplayRole.value
_ALIGNMENT = Qt.ItemDataRole.TextAlignmentRole.value
_TOOLTIP = Qt.ItemDataRole.ToolTipRole.value
_ROLES = frozenset({_DISPLAY, _ALIGNMENT, _TOOLTIP, ROW_ROLE.value})
_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter


@dataclass(frozen=True)
class Column(Generic[T]):
    title: str
    #: the cell's value; None shows as "—", datetimes in local time to the minute
    value: Callable[[T], object]
    #: right-aligned, as numbers are
    numeric: bool = False
    tooltip: Callable[[T], str | None] | None = None
    #: sort key when the value does not sort right (default: the value, strings case-folded)
    sort_key: Callable[[T], Any] | None = None
    #: the column's width in characters when nothing is remembered (None: fit the title)
    width: int | None = None
    #: shown when nothing is remembered (the table header's menu shows or hides any column)
    shown: bool = True


def cell_text(value: object) -> str:
    """A value as a cell shows it."""
    if type(value) is str:  # the most common by far: one check (a table has 100,000s of cells)
        return value
    if value is None:
        return MISSING
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, datetime):
        # not strftime(): it imports `time` on every call, and under PySide6's import hook that
        # made it the slowest part of preparing 100,000 rows; fromtimestamp + isoformat (both
        # C) take half the time of astimezone() and an f-string
        if value.tzinfo is not None:
            try:
                value = datetime.fromtimestamp(value.timestamp())
            except (OverflowError, OSError, ValueError):  # outside what the C library handles
                value = value.astimezone().replace(tzinfo=None)
        return value.isoformat(" ", "minutes")
    return str(value)


def _default_key(value: object) -> tuple[bool, Any]:
    if isinstance(value, str):
        return (False, value.casefold())
    return (value is None, value if value is not None else 0)


@dataclass(frozen=True)
class PreparedRows(Generic[T]):
    """Rows with what the filter needs, built off the GUI thread by `prepare_rows`."""

    rows: list[T]
    #: per row, its cells' texts case-folded and joined; None: the table makes them itself,
    #: once the rows are on screen
    haystacks: list[str] | None
    #: sort keys made beforehand, by column number (see `prepare_rows`' `sort_columns`)
    keys: dict[int, list[Any]] = field(default_factory=dict)
    #: the rows' order sorted beforehand (`RowPipeline`'s `sort`): ((column, descending),
    #: row numbers); `set_prepared` then only takes it up
    order: tuple[tuple[int, bool], array[int]] | None = None


def column_sort_keys(column: Column[T], rows: Sequence[T]) -> list[Any]:
    """The sort key of every row for `column`. No Qt: safe on a worker thread.

    A column of text alone (no None) gets the case-folded texts themselves as keys: the same
    order as `_default_key`'s `(False, text)`, but `sorted` compares plain strings in C, where
    it compared pairs of objects: 0.05-0.1 s instead of 0.17-0.26 s for 100,000 names or
    emails.

    Where every text is its own case-folded form (flag names, emails, a flag's type: lower case
    by custom), the texts themselves are the keys, rather than 100,000 copies of them (6 MB for
    100,000 flag names); and a column of few distinct texts (a type) folds each of them once,
    so its keys are those few objects too."""
    if column.sort_key is not None:
        return [column.sort_key(row) for row in rows]
    values: list[Any] = list(map(column.value, rows))
    # the kinds of values in one C loop: a generator testing each value took a quarter of the
    # keys' time (10-35 ms of a first sort of 100,000 names)
    kinds = set(map(type, values))
    if kinds == {str}:
        if all(map(str.__eq__, map(str.casefold, values), values)):  # each folded, let go
            return values
        distinct = set(values)
        if len(distinct) <= len(values) // 2:
            folded = {v: v.casefold() for v in distinct}
            return list(map(folded.__getitem__, values))
        return list(map(str.casefold, values))
    if kinds and (kinds <= {int, float} or kinds == {bool} or kinds == {datetime}):
        # nothing missing: the values sort as `_default_key`'s (False, value) do, with no
        # Python call and no pair each (6 MB for 100,000 users' days inactive)
        return values
    return [_default_key(v) for v in values]


def prepare_rows(
    columns: Sequence[Column[T]],
    rows: Iterable[T],
    sort_columns: Iterable[int] = (),
    *,
    filter_texts: bool = True,
) -> PreparedRows[T]:
    """Build the filter text of every row (unless not `filter_texts`: the table then makes
    them once the rows are shown), and the sort keys of `sort_columns` (the column the table is
    sorted by: then `set_prepared` sorts without a call per row on the GUI thread). No Qt: safe
    on a worker thread."""
    rows = list(rows)
    keys = {c: column_sort_keys(columns[c], rows) for c in sort_columns}
    return PreparedRows(rows, row_haystacks(columns, rows) if filter_texts else None, keys)


_NONE = type(None)
#: a missing value's cell in a filter text, for MISSING. "—" is not Latin-1: one in a text has
#: CPython store all of it at two bytes a character, and most rows have a missing value (11 MB
#: more for 100,000 archived flags). "µ" is Latin-1 and case folding never gives it (it folds
#: to Greek mu), so no word typed holds it: the filter looks for it when MISSING is typed
MISSING_FOLDED = "\xb5"
_BOOL_TEXTS = {True: "yes", False: "no", None: MISSING_FOLDED}


def column_texts(values: list[Any], times: dict[datetime, str]) -> list[str]:
    """The filter texts of one column's cells: their texts as `cell_text` makes them,
    case-folded, with MISSING_FOLDED for a missing value; without a Python call per cell for
    the kinds of columns tables have: text, numbers, yes/no, times, each with missing values. A
    time's text is made once per distinct time and kept in `times` (formatting one, to local
    time then ISO, costs 2 us). Numbers, yes/no and times have no letters to fold."""
    kinds = set(map(type, values))
    if kinds <= {str}:
        return list(map(str.casefold, values))
    if kinds <= {str, _NONE}:
        return [MISSING_FOLDED if v is None else v.casefold() for v in values]
    if kinds <= {int, _NONE}:
        return [MISSING_FOLDED if v is None else str(v) for v in values]
    if kinds <= {bool, _NONE}:
        return list(map(_BOOL_TEXTS.__getitem__, values))
    if kinds <= {datetime, _NONE}:
        for value in set(values).difference(times):
            if value is not None:
                times[value] = cell_text(value)
        return list(map(times.get, values, repeat(MISSING_FOLDED)))  # None's
    return [MISSING_FOLDED if v is None else cell_text(v).casefold() for v in values]


def row_haystacks(
    columns: Sequence[Column[T]], rows: Sequence[T], times: dict[datetime, str] | None = None
) -> list[str]:
    """The text the filter searches in each row: its cells' texts, case-folded and joined by
    a separator no word typed holds, a missing value's as MISSING_FOLDED (`filter_holds`).
    No Qt: safe on a worker thread.

    Built a column at a time (`column_texts`: the loops run in C, or in one comprehension),
    then joined with one C call over the rows. Row by row, with a call per cell, 100,000
    archived flags took 0.39 s. `times` carries the texts of times from one call to the next:
    an answer's pieces share most of their times (when the rows were made, say)."""
    if not columns:
        return [""] * len(rows)
    if times is None:
        times = {}
    cells = [column_texts(list(map(column.value, rows)), times) for column in columns]
    return list(map(_CELL_SEPARATOR.join, zip(*cells, strict=True)))


#: items `RowPipeline` hands to its worker thread at once. An answer's piece is about 350
#: archived flags: one hand-over each was 290 trips between the threads and the event loop for
#: 100,000 flags (a future, a wake-up, a callback and a Qt timer each), on the GUI thread
_BATCH = 2000


#: rows of each run `merged_runs` merges in one call: 4,000 rows, 1-2 ms of text keys
_MERGED_AT_ONCE = 2000


def merged_runs(
    first: list[int],
    second: list[int],
    key: Callable[[int], Any],
    *,
    reverse: bool = False,
    at_once: int = _MERGED_AT_ONCE,
) -> list[int]:
    """Two runs of row numbers, each sorted by `key` (stable, `reverse` or not; `first`'s rows
    before `second`'s in the rows' own order), merged as sorting them together does: rows of
    equal keys in the order they had, those of `first` first. No Qt: safe on a worker thread.

    A piece of each run at a time: one `sorted()` of two pieces one after the other merges
    them in one pass (and keeps equal keys in that order either way round: it is stable with
    `reverse`). Of what it gives, all up to the last row of the piece whose last key comes
    first is final: nothing after either piece comes before that key, and rows of `second`
    with a key equal to the last of `first`'s piece wait, as rows of `first` after the piece
    may have it too. Why pieces: one `sorted()` of two runs of 50,000 texts held the
    interpreter 35 ms, and the GUI thread waited for it to paint."""
    merged: list[int] = []
    i = j = 0
    while i < len(first) and j < len(second):
        head, tail = first[i : i + at_once], second[j : j + at_once]
        both = sorted(head + tail, key=key, reverse=reverse)
        last_head, last_tail = key(head[-1]), key(tail[-1])
        if last_tail > last_head if reverse else last_tail < last_head:
            end = both.index(tail[-1]) + 1  # the tail, and the head's rows up to its last key
            i, j = i + end - len(tail), j + len(tail)
        else:
            end = both.index(head[-1]) + 1  # the head, and the tail's rows before its last key
            i, j = i + len(head), j + end - len(head)
        merged.extend(both[:end])
    merged.extend(first[i:])
    merged.extend(second[j:])
    return merged


class RowPipeline(Generic[S, T]):
    """`prepare_rows` for an answer that arrives a piece at a time: each piece's rows and sort
    keys are made on a worker thread while the next piece downloads, and `result()` joins them
    once the last is in. The filter texts are not: the table makes them after the rows are on
    screen (`FilterTexts`). With `sort` (the table's `sort_state`), the worker sorts the rows
    too: each batch on its own, then merged with those before (`_merge_runs`), so that the
    GUI thread only takes the order up.

    Why this way: on 100,000 rows the rows and their keys take a few tenths of a second. Done
    after the download they would add that to the wait; during the download the GUI thread
    has the answer's pieces to decode, and the thread takes turns with it. The filter texts
    (0.2-0.35 s more of the one interpreter both threads share) are needed by no one until a
    word is typed in the filter, so they no longer delay the rows (`bench/ui_tables.py`). The
    order: sorted on the GUI thread as the rows were set, 100,000 texts held it 50-170 ms after
    every reload of a window sorted by one; a worker's one `sorted()` of them all would hold the
    interpreter, which the GUI thread needs for every paint, as long. Merging sorted runs
    costs a few comparisons a row, and no single call is longer than the last merge."""

    def __init__(
        self,
        columns: Sequence[Column[T]],
        make_rows: Callable[[list[S]], list[T]],
        sort: tuple[int, Qt.SortOrder] | None = None,
    ) -> None:
        self._columns = list(columns)
        self._make_rows = make_rows
        self._sort_by = None if sort is None else (sort[0], sort[1] == Qt.SortOrder.DescendingOrder)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rows")
        self._parts: list[asyncio.Future[None]] = []
        #: items handed in and not yet handed to the worker thread
        self._waiting: list[S] = []
        self._closed = False
        #: items handed in so far
        self.count = 0
        # the worker thread's alone until `result()` has awaited it: every row prepared (joined
        # there: on the GUI thread, joining 100,000 rows touched each, 2-5 ms), the sorted
        # column's keys, and the sorted runs of row numbers not merged yet (None: keys that
        # cannot be compared with each other, left to the table)
        self._rows: list[T] = []
        self._keys: list[Any] = []
        self._runs: list[list[int]] | None = []

    def add(self, items: list[S]) -> None:
        """Queue a piece (call on the event loop's thread); pieces are prepared in order,
        `_BATCH` items or more at a time."""
        if self._closed:
            raise RuntimeError("the pipeline is closed")
        self.count += len(items)
        self._waiting.extend(items)
        if len(self._waiting) >= _BATCH:
            self._hand_over()

    def _hand_over(self) -> None:
        if self._waiting:
            items, self._waiting = self._waiting, []
            loop = asyncio.get_running_loop()
            self._parts.append(loop.run_in_executor(self._executor, self._prepare, items))

    def _prepare(self, items: list[S]) -> None:
        """On the worker thread: one batch's rows added to `_rows`, its keys to `_keys`, and
        its rows sorted as a run of their own."""
        sort_by = self._sort_by
        column = () if sort_by is None else (sort_by[0],)
        part = prepare_rows(self._columns, self._make_rows(items), column, filter_texts=False)
        self._rows.extend(part.rows)
        if sort_by is not None:
            keys = self._keys
            first = len(keys)
            keys.extend(part.keys[sort_by[0]])
            if self._runs is not None:
                try:
                    run = sorted(range(first, len(keys)), key=keys.__getitem__, reverse=sort_by[1])
                    self._runs.append(run)
                    self._merge_runs(last=False)
                except TypeError:  # mixed types: the table falls back to the shown texts
                    self._runs = None

    def _merge_runs(self, *, last: bool) -> None:
        """Merge the last two runs while the one before is no longer than the last (all of
        them when `last`): runs of 2,000, 4,000, 8,000 rows..., so a row is merged about
        log2(pieces) times (`merged_runs`: a few thousand rows a call)."""
        runs = self._runs
        assert runs is not None and self._sort_by is not None
        key, reverse = self._keys.__getitem__, self._sort_by[1]
        while len(runs) > 1 and (last or len(runs[-2]) <= len(runs[-1])):
            second = runs.pop()
            runs.append(merged_runs(runs.pop(), second, key, reverse=reverse))

    def _order(self) -> array[int] | None:
        """On the worker thread, once every batch is prepared: the rows' whole order."""
        if self._runs is None:
            return None
        try:
            self._merge_runs(last=True)
        except TypeError:
            return None
        runs, self._runs = self._runs, []
        # the runs' int objects go here, not with the pipeline once the table has made its own
        return array("i", runs[0] if runs else ())

    async def result(self) -> PreparedRows[T]:
        """Every piece's rows and keys, joined in the order the pieces came, and their order
        when sorted."""
        try:
            self._hand_over()
            for part in self._parts:
                await part
            sort_by = self._sort_by
            order = None
            if sort_by is not None:
                loop = asyncio.get_running_loop()
                numbers = await loop.run_in_executor(self._executor, self._order)
                order = None if numbers is None else (sort_by, numbers)
        finally:
            self.close()
        keys = {} if sort_by is None else {sort_by[0]: self._keys}
        return PreparedRows(self._rows, None, keys, order)

    def close(self) -> None:
        """Drop the pieces not prepared yet (the load was cancelled or failed)."""
        self._closed = True
        self._waiting = []
        self._executor.shutdown(wait=False, cancel_futures=True)


def write_csv(stream: TextIO, columns: Sequence[Column[T]], rows: Iterable[T]) -> int:
    """The column titles, then one line per row; missing values are written empty, not "—".
    Returns the number of rows written. No Qt: safe on a worker thread."""
    writer = csv.writer(stream)
    writer.writerow([c.title for c in columns])
    count = 0
    for row in rows:
        writer.writerow(["" if (v := c.value(row)) is None else cell_text(v) for c in columns])
        count += 1
    return count


def write_csv_file(path: str | Path, columns: Sequence[Column[T]], rows: Iterable[T]) -> int:
    with open(path, "w", newline="", encoding="utf-8") as stream:
        return write_csv(stream, columns, rows)


def filter_terms(text: str) -> list[str]:
    return text.casefold().split()


def filter_holds(texts: Iterable[str], term: str) -> Iterator[bool]:
    """Whether each filter text (`row_haystacks`) holds `term` (case-folded) in a cell as
    shown. A missing value's cell shows MISSING alone, between separators no term holds: a term
    finds it only when it is MISSING itself, which then finds a MISSING in a cell's text too."""
    if term != MISSING:
        return map(contains, texts, repeat(term))
    return (MISSING_FOLDED in text or MISSING in text for text in texts)


def narrows(old: list[str], new: list[str]) -> bool:
    """Whether every row that holds each of the `new` terms holds each of the `old` ones: each
    old term is part of a new one (typed on, or kept, with more words added or not)."""
    return all(any(term in longer for longer in new) for term in old)


#: rows whose filter texts are made in one turn of the event loop: 2-4 ms. With 2,000, 100,000
#: archived flags took 6-10 ms a slice, and two slices can fall in one turn (Qt fires a zero
#: timer again in the same pass when other zero timers, asyncio's, were due with it)
_TEXTS_AT_ONCE = 1000
#: while a filter waits for the texts (`TableModel.filter_pending`), each firing of the slices'
#: timer makes slices for this long (seconds), not one: fewer trips through the event loop
#: before the filter applies. Not longer: the timer often fires twice in one pass (see above),
#: and with 15 ms the window went 40-45 ms without turning its loop (`bench/ui_tables.py`)
_TURN_WHILE_FILTER_WAITS = 0.008
#: rows whose texts a filter typed before the last slice makes at once, rather than wait for
#: them: a small table's, or the last slices of a large one (4-20 ms). Making every text left
#: at once held the GUI thread 0.4 s for 100,000 rows (`bench/ui_tables.py`, first keystroke)
_TEXTS_MADE_FOR_A_FILTER = 4000


class FilterTexts(Generic[T]):
    """The filter texts of a table's rows, made a slice at a time (`TableModel` makes one slice
    a turn of the event loop once its rows are on screen), or what is left at once (`get()`,
    when a word is typed before the last slice). No Qt."""

    def __init__(
        self, columns: Sequence[Column[T]], rows: list[T], made: list[str] | None = None
    ) -> None:
        self._columns = list(columns)
        self._rows = rows
        #: the texts made, in the rows' order (`made`: those of the first rows, made before)
        self._texts: list[str] = [] if made is None else made
        self._times: dict[datetime, str] = {}

    @property
    def done(self) -> bool:
        return len(self._texts) == len(self._rows)

    @property
    def left(self) -> int:
        """Rows whose texts are not made yet."""
        return len(self._rows) - len(self._texts)

    def row_replaced(self, index: int) -> None:
        """The row at `index` of the rows (the table's own list) was replaced: its text made
        again if it was made already (else its slice will make it)."""
        if index < len(self._texts):
            row = self._rows[index]
            self._texts[index] = row_haystacks(self._columns, [row], self._times)[0]

    def make_slice(self, count: int = _TEXTS_AT_ONCE) -> None:
        begin = len(self._texts)
        rows = self._rows[begin : begin + count]
        self._texts.extend(row_haystacks(self._columns, rows, self._times))

    def get(self) -> list[str]:
        """Every text, what is left made now, still a slice at a time: a slice's cells' texts
        are let go once its rows' texts are joined (in one go, 80,000 rows' cells were 20 MB
        alive at once, the peak of a 100,000-row window's memory). `TableModel` calls it with
        at most `_TEXTS_MADE_FOR_A_FILTER` rows left."""
        while not self.done:
            self.make_slice()
        return self._texts

    def held(self, *, texts: bool = True) -> list[list[Any]]:
        """What it holds besides the rows, for `LetGo` (freeing the texts of up to 300,000
        distinct times at once took 25-40 ms): the times' texts, and the texts made unless not
        `texts` (they are kept). Lists no one else holds."""
        return [list(self._times.values()), *([self._texts] if texts else [])]


#: rows a table lets go of in one turn of the event loop (a row of archived flags, with its
#: environments and times, is 10-20 objects: 2,000 are freed in 1-2 ms)
_ROWS_FREED_AT_ONCE = 2000
#: texts, sort keys or row numbers let go of in one turn (one object each, or a small tuple)
_ITEMS_FREED_AT_ONCE = 20_000


class LetGo:
    """Lists a table no longer holds (the rows it showed, their filter texts and sort keys),
    emptied a slice at a time (`drop_slice`), so that what only they kept alive is freed a few
    thousand objects a turn of the event loop: 100,000 inactive users freed at once held the GUI
    thread 40 ms, 100,000 archived flags 60-80 ms, after every reload. A list the table was
    handed is copied first, so whoever else still holds it finds it as it was (copying 100,000
    references takes about a millisecond); a list no longer than one slice is let go of at
    once. No Qt."""

    def __init__(self) -> None:
        self._lists: list[tuple[list[Any], int]] = []

    @property
    def done(self) -> bool:
        return not self._lists

    def add(
        self, items: list[Any], at_once: int = _ITEMS_FREED_AT_ONCE, *, copy: bool = True
    ) -> None:
        """Hold `items` until `drop_slice` has let go of them, `at_once` a slice: a copy of
        them, or the list itself when not `copy` (a list no one else holds)."""
        if len(items) > at_once:
            self._lists.append((list(items) if copy else items, at_once))

    def take(self, other: LetGo) -> None:
        """Hold what `other` still held (it holds nothing after)."""
        self._lists.extend(other._lists)
        other._lists.clear()

    def drop_slice(self) -> None:
        """Let go of one slice of the oldest list held (from its end: no items moved)."""
        if not self._lists:
            return
        items, at_once = self._lists[0]
        del items[-at_once:]
        if not items:
            del self._lists[0]


#: what the tables of closed windows held (`TableModel.release`), let go of by
#: `_release_slices` for at most this long (seconds) each time its zero timer fires
_TURN_RELEASING = 0.008
_released = LetGo()
_released_timer: QTimer | None = None
#: `collect_when_released` was called while `_released` still held something
_collect_wanted = False


def _release_slices() -> None:
    """A turn's worth of `_released` let go of; once none is left, the timer stops and the
    collection that waited for it runs."""
    global _collect_wanted
    until = time.perf_counter() + _TURN_RELEASING
    while not _released.done and time.perf_counter() < until:
        _released.drop_slice()
    if _released.done:
        if _released_timer is not None:
            _released_timer.stop()
        if _collect_wanted:
            _collect_wanted = False
            collect_frozen()


def _start_releasing() -> None:
    global _released_timer
    if _released.done:
        return
    if _released_timer is None:  # the application's: the tables it works for are gone
        _released_timer = QTimer(QCoreApplication.instance())
        _released_timer.setInterval(0)
        _released_timer.timeout.connect(_release_slices)
    _released_timer.start()


def releasing() -> bool:
    """Whether what closed tables held is still being let go of (`bench/ui_tables.py`)."""
    return not _released.done


def collect_when_released() -> None:
    """`collect_frozen` (a closed window's reference cycles freed) once what the closed tables
    held is let go of: in the next turn of the event loop when nothing is left to let go of.
    Collecting while their rows were alive walked every one of them, and freed them in the same
    step: closing a window of 100,000 archived flags held the GUI thread 0.24-0.34 s, of
    100,000 inactive users 0.09-0.15 s (`bench/ui_tables.py`, close_stall_ms); with the rows let
    go of first, the collection walks what the program holds anyway (about 70,000 objects,
    20-60 ms as the machine's speed goes)."""
    global _collect_wanted
    if _released.done:
        QTimer.singleShot(0, collect_frozen)
    else:
        _collect_wanted = True


#: `opposite_order` puts back at most a 16th as many groups of equal keys as there are rows,
#: one by one in Python; with more, sorting anew is as quick
_GROUPS_PUT_BACK = 16


def opposite_order(order: array[int], keys: Sequence[Any]) -> array[int] | None:
    """`order` (row numbers sorted by `keys`, one way round) sorted the other way round,
    exactly as `sorted(..., reverse=...)` sorts them: the groups of equal keys in reverse, the
    rows of each in the order they had (sorting is stable both ways). None when there are too
    many groups to put back one by one: sorting anew is as quick then.

    Why: a header clicked again sorted 100,000 texts anew, 50-60 ms, as long as the first
    time. With every key distinct (emails, usernames) it is the order reversed; with few
    distinct (names, days, types) the groups are few. No Qt."""
    count = len(order)
    flipped = array(order.typecode, order)
    flipped.reverse()
    try:
        distinct = len(set(keys)) == count  # in the rows' own order: their memory order
    except TypeError:  # keys that cannot be hashed (a column's own sort_key may make them)
        distinct = False
    if distinct:
        return flipped
    ordered = list(map(keys.__getitem__, order))
    starts = list(
        compress(range(count), chain((True,), map(ne, islice(ordered, 1, None), ordered)))
    )
    del ordered
    if len(starts) > count // _GROUPS_PUT_BACK:
        return None
    # the group at [start, end) of `order` is at [count - end, count - start) of `flipped`,
    # its rows reversed with it: put back in their order
    for start, end in zip(starts, [*starts[1:], count], strict=True):
        if end - start > 1:
            group = flipped[count - end : count - start]
            group.reverse()
            flipped[count - end : count - start] = group
    return flipped


class TableModel(QAbstractTableModel, Generic[T]):
    #: (rows shown, rows in all) after every change of rows or filter
    counts_changed = Signal(int, int)

    def __init__(self, columns: Sequence[Column[T]], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._columns = list(columns)
        self._all: list[T] = []
        self._haystacks: list[str] = []
        #: the rows' filter texts while they are being made (then `_haystacks` holds them), a
        #: slice each time the zero timer fires: paints, scrolls and clicks come in between.
        #: Not on a worker thread: the interpreter is one, and while another thread ran Python
        #: every `data()` call of a paint (a thousand for a screenful) waited its turn for it,
        #: so the first paint came 0.4-0.65 s late (`bench/ui_tables.py`, longest stall)
        self._pending_texts: FilterTexts[T] | None = None
        #: the rows shown before the last `set_prepared` and what was made of them, let go of
        #: a slice each time the zero timer fires, before any filter texts are made
        self._let_go = LetGo()
        #: one timer for both: each firing does one slice, so the event loop turns after each
        #: (two zero timers fire one after the other in the same turn)
        self._slices_timer = QTimer(self)
        self._slices_timer.setInterval(0)
        self._slices_timer.timeout.connect(self._next_slice)
        #: row numbers into `_all` in the sorted order (a range until sorted), and the ones
        #: the filter lets through. The int objects of a sorted `_order` are made anew in its
        #: order (`_sort_order`): the ones made for the rows in their own order lay at random
        #: along it, and reaching each was a cache miss, a third of a filter keystroke on
        #: 100,000 rows
        self._order: Sequence[int] = range(0)
        self._shown: Sequence[int] = self._order
        #: the terms `_shown` was found for, out of `_order`; None once the rows it was found
        #: in changed (`replace_row`): a filter narrowing them cannot start from it then
        self._shown_terms: list[str] | None = []
        self._keys: dict[int, list[Any]] = {}
        #: the orders sorted since the rows or their keys last changed, by (column,
        #: descending), as 4-byte machine ints (400 kB for 100,000 rows, where a list with its
        #: int objects is 3.6 MB): a header clicked again, or a column sorted by before,
        #: takes one up, or turns it round (`opposite_order`), where sorting 100,000 texts
        #: anew took 50-60 ms
        self._orders: dict[tuple[int, bool], array[int]] = {}
        self._sort: tuple[int, Qt.SortOrder] | None = None
        #: the terms of the filter typed last; shown once the rows' filter texts are made
        self._terms: list[str] = []
        #: `_terms` wait for the filter texts (`filter_pending`)
        self._filter_waits = False
        self._filter_text = ""
        #: rows whose filter texts one turn of the event loop makes (a table of costlier rows
        #: makes fewer: the event log's summaries)
        self.texts_at_once = _TEXTS_AT_ONCE
        #: why a row is marked ("" when it is not): a marked row's first cell starts with MARK
        #: and says why in its tooltip (call `marks_changed()` when the answer may change)
        self.mark: Callable[[T], str] | None = None

    # ------------------------------------------------------------------ rows

    @property
    def columns(self) -> list[Column[T]]:
        return list(self._columns)

    @property
    def rows(self) -> list[T]:
        """The rows shown, in the order shown."""
        return [self._all[i] for i in self._shown]

    @property
    def all_rows(self) -> list[T]:
        """Every row, whatever the filter, in the order received."""
        return list(self._all)

    @property
    def total_count(self) -> int:
        return len(self._all)

    @property
    def shown_count(self) -> int:
        return len(self._shown)

    @property
    def sort_state(self) -> tuple[int, Qt.SortOrder] | None:
        return self._sort

    def row_at(self, row: int) -> T:
        return self._all[self._shown[row]]

    def row_of(self, predicate: Callable[[T], bool]) -> int:
        """The shown row number of the first row for which `predicate` holds, or -1."""
        for n, i in enumerate(self._shown):
            if predicate(self._all[i]):
                return n
        return -1

    def set_rows(self, rows: Iterable[T]) -> None:
        """Replace the rows, building the filter text here (fine for small tables; large ones
        call `prepare_rows` on a worker thread and `set_prepared`)."""
        self.set_prepared(prepare_rows(self._columns, rows))

    def set_prepared(self, prepared: PreparedRows[T]) -> None:
        """Show `prepared`'s rows in place of those shown; the old ones are let go of in the
        turns of the event loop that follow (`LetGo`)."""
        self.beginResetModel()
        self._let_go_of_rows()
        self._all = prepared.rows
        if prepared.haystacks is None:
            self._haystacks = []
            self._pending_texts = FilterTexts(self._columns, prepared.rows)
        else:
            self._haystacks = prepared.haystacks
            self._pending_texts = None
        if not (self._let_go.done and self._pending_texts is None):
            self._slices_timer.start()  # fires after what the reset posted: layout and paint
        self._keys = dict(prepared.keys)
        self._orders = dict([prepared.order]) if prepared.order is not None else {}
        self._order = range(len(self._all))  # until sorted: no 100,000 numbers to make
        if self._sort is not None:
            self._sort_order(*self._sort)
        self._apply_filter()
        self.endResetModel()
        self.counts_changed.emit(len(self._shown), len(self._all))

    def clear(self) -> None:
        self.set_prepared(PreparedRows([], []))

    def extend(self, rows: Iterable[T]) -> None:
        """Add `rows` after those held (a page of a list read page by page: the event log),
        sorted and filtered in with them. Their filter texts are made a slice a turn after, as
        a load's are (a filter typed meanwhile makes the few left at once); when they sort
        after the others, only their sort keys are made (`_sorted_after`), else the sorted
        column's keys are made again and sorted. When the rows shown before stay first, in
        their order (the new rows sort after them: older events, newest first), the view is
        told of rows inserted at the end, so its selection, current row and scroll stay; else
        of a reset."""
        added = list(rows)
        if not added:
            return
        before = self._shown
        count = len(before)
        self._all.extend(added)  # the pending filter texts' rows too: the same list
        if self._pending_texts is None:  # the new rows' texts made a slice a turn, as a load's
            self._pending_texts = FilterTexts(self._columns, self._all, self._haystacks)
            self._haystacks = []
        self._slices_timer.start()
        appended = self._sort is not None and self._sorted_after(len(self._all) - len(added))
        if not appended:
            self._keys = {}
            self._orders = {}
            if self._sort is not None:
                self._sort_order(*self._sort)
            else:
                self._order = range(len(self._all))
        self._apply_filter()
        after = self._shown
        # put after the others: the rows shown before (sorted and filtered alike) stay first
        kept = appended or (len(after) >= count and list(islice(after, count)) == list(before))
        self._shown = before  # what the view knows until told
        if kept and len(after) > count:
            self.beginInsertRows(QModelIndex(), count, len(after) - 1)
            self._shown = after
            self.endInsertRows()
        elif not kept:
            self.beginResetModel()
            self._shown = after
            self.endResetModel()
        else:
            self._shown = after
        self.counts_changed.emit(len(self._shown), len(self._all))

    def _sorted_after(self, first: int) -> bool:
        """`extend`'s quick way: the rows from `first` on (just added) sorted by the sorted
        column's keys, theirs alone made, and put after the others when every one of them
        sorts after the last (a page of older events, newest first): True. False (nothing
        changed) when the keys were not made yet, or the new rows sort among the others, or
        their keys cannot be compared with the others' (the caller sorts anew)."""
        assert self._sort is not None
        column, order = self._sort
        keys = self._keys.get(column)
        if keys is None or len(keys) != first or not isinstance(self._order, list):
            return False
        descending = order == Qt.SortOrder.DescendingOrder
        new_keys = column_sort_keys(self._columns[column], self._all[first:])
        try:
            run = sorted(range(len(new_keys)), key=new_keys.__getitem__, reverse=descending)
            if self._order:
                last, head = keys[self._order[-1]], new_keys[run[0]]
                # equal keys keep the rows' own order (a stable sort, either way round)
                if (head > last) if descending else (head < last):
                    return False
        except TypeError:
            return False
        keys.extend(new_keys)
        self._keys = {column: keys}
        self._orders = {}
        self._order = self._order + [first + i for i in run]
        return True

    def release(self) -> None:
        """Let go of every row: the view-model holding this table is closed, its window is
        going. The rows and everything made of them go to the process's own `LetGo`, emptied a
        slice at a time in the turns of the event loop that follow, after this table is gone
        (see `collect_when_released`); the table shows no row from now on."""
        self._slices_timer.stop()
        self.beginResetModel()
        self._let_go_of_rows(_released)
        _released.take(self._let_go)
        self._all = []
        self._haystacks = []
        self._pending_texts = None
        self._keys = {}
        self._orders = {}
        self._order = range(0)
        self._shown = self._order
        self._shown_terms = []
        self._terms = []
        self._filter_waits = False
        self.endResetModel()
        _start_releasing()

    def replace_row(self, old: T, new: T) -> bool:
        """Put `new` in the place of `old` (found by identity): its cells and filter text are
        updated at once; the row keeps its place until the next sort or filter. False when `old`
        is not one of the rows."""
        index = next((i for i, row in enumerate(self._all) if row is old), -1)
        if index < 0:
            return False
        self._all[index] = new
        if self._pending_texts is not None:  # the texts being made: no more made for this
            self._pending_texts.row_replaced(index)
        else:
            self._haystacks[index] = row_haystacks(self._columns, [new])[0]
        self._keys = {}  # sort keys and orders are made again on the next sort
        self._orders = {}
        self._shown_terms = None  # the row may hold what the filter asks now, or no longer
        try:
            shown = self._shown.index(index)
        except ValueError:
            return True
        self.dataChanged.emit(self.index(shown, 0), self.index(shown, len(self._columns) - 1))
        return True

    # ------------------------------------------------------------------ texts

    def text(self, row: int, column: int) -> str:
        """The cell's text as shown."""
        return cell_text(self._columns[column].value(self.row_at(row)))

    def row_texts(self, row: int) -> list[str]:
        return [self.text(row, c) for c in range(len(self._columns))]

    def to_tsv(self, rows: Iterable[int], *, header: bool = False) -> str:
        """Rows as tab-separated text (what Ctrl+C puts on the clipboard)."""
        lines = ["\t".join(c.title for c in self._columns)] if header else []
        for r in rows:
            lines.append("\t".join(t.replace("\t", " ").replace("\n", " ")
                                   for t in self.row_texts(r)))  # fmt: skip
        return "\n".join(lines) + ("\n" if lines else "")

    async def export_csv(self, path: str | Path) -> int:
        """Write the shown rows as CSV to `path` on a worker thread; return the rows written."""
        columns, rows = self.columns, self.rows  # a snapshot: the table may change meanwhile
        return await asyncio.to_thread(write_csv_file, path, columns, rows)

    # ------------------------------------------------------------------ filter

    @property
    def filter_text(self) -> str:
        return self._filter_text

    @property
    def filter_pending(self) -> bool:
        """A filter was typed before the rows' filter texts were all made (a large answer's,
        made a slice a turn once the rows are shown): no row is shown until they are, then the
        rows the filter finds, with `counts_changed` each time. Why not the rows shown before:
        Ctrl+A and Delete… in the window would act on rows the filter box does not let through.
        Why not make the texts at once: for 100,000 rows that held the GUI thread 0.4 s, the
        window frozen as a person started to type."""
        return self._filter_waits

    def set_filter(self, text: str) -> None:
        """Show the rows whose cells hold every word of `text` (any case); at once, or once
        the rows' filter texts are made (`filter_pending`). The text typed last is the one
        shown; clearing it shows every row at once."""
        terms = filter_terms(text)
        self._filter_text = text
        if terms == self._terms:
            return
        # a word typed on (e -> e7) or added only narrows what is shown: test those rows alone
        narrow = self._shown_terms is not None and narrows(self._shown_terms, terms)
        self.beginResetModel()
        self._terms = terms
        self._apply_filter(narrow=narrow)
        self.endResetModel()
        self.counts_changed.emit(len(self._shown), len(self._all))

    def _apply_filter(self, *, narrow: bool = False) -> None:
        """`_shown` from `_terms`: out of the rows shown now when `narrow` (the new terms narrow
        the ones they were found for: `narrows`), else out of every row, in `_order`. While
        the filter texts are more than a few slices from made, none (`filter_pending`): the
        slices that make them then apply the filter (`_next_slice`)."""
        terms = self._terms
        pending = self._pending_texts
        if terms and pending is not None and pending.left > _TEXTS_MADE_FOR_A_FILTER:
            self._shown = range(0)
            self._shown_terms = None  # nothing found yet that a word typed on could narrow
            self._filter_waits = True
            self._slices_timer.start()
            return
        self._filter_waits = False
        if not terms:
            self._shown = self._order
        else:
            self._shown = self._holding(terms, self._shown if narrow else self._order)
        self._shown_terms = terms

    def _holding(self, terms: list[str], candidates: Sequence[int]) -> Sequence[int]:
        """The `candidates` (row numbers, in the order shown) whose filter text holds every
        term, with no Python code run per row (the loops are `map` and `compress`, in C)."""
        hay = self._filter_texts()
        if len(candidates) * 4 < len(hay):  # few: test those alone
            shown = list(candidates)
            for term in terms:
                shown = list(compress(shown, filter_holds(map(hay.__getitem__, shown), term)))
            return shown
        # many: every row is tested in the rows' own order, which is the order their texts
        # lie in memory (in the sorted order, each text was a cache miss: 100,000 rows took
        # twice the time), then the candidates are picked out in theirs
        holds = bytes(filter_holds(hay, terms[0]))
        for term in terms[1:]:
            holds = bytes(map(and_, holds, filter_holds(hay, term)))
        # picking the candidates out is a third of a keystroke on 100,000 rows: not needed
        # when every row holds the terms (a first letter typed) or none does (a typo)
        found = holds.count(1)
        if found == len(holds):
            return candidates
        if found == 0:
            return []
        return list(compress(candidates, map(holds.__getitem__, candidates)))

    def _let_go_of_rows(self, let_go: LetGo | None = None) -> None:
        """Hand the rows shown until now, with their filter texts, sort keys and row numbers,
        to `LetGo` (the table's own, unless `let_go`; their lists are replaced next)."""
        let_go = self._let_go if let_go is None else let_go
        let_go.add(self._all, _ROWS_FREED_AT_ONCE)
        if self._pending_texts is not None:
            for held in self._pending_texts.held():
                let_go.add(held, copy=False)
        let_go.add(self._haystacks)
        for keys in self._keys.values():
            let_go.add(keys)
        # the row numbers: lists the table made (a range holds none)
        if isinstance(self._order, list):
            let_go.add(self._order, copy=False)
        if isinstance(self._shown, list) and self._shown is not self._order:
            let_go.add(self._shown, copy=False)

    def _next_slice(self) -> None:
        """One slice of the work after the rows are shown: letting go of the rows shown
        before, then making the filter texts; the timer stops when neither is left. While a
        filter waits for the texts, slices for `_TURN_WHILE_FILTER_WAITS`, and the filter is
        applied once they are made."""
        hurry = time.perf_counter() + _TURN_WHILE_FILTER_WAITS if self._filter_waits else 0.0
        while True:
            if not self._let_go.done:
                self._let_go.drop_slice()
            else:
                pending = self._pending_texts
                if pending is None:
                    self._slices_timer.stop()
                    return
                pending.make_slice(self.texts_at_once)
                if pending.done:
                    self._filter_texts()  # kept; the times' texts let go of
                    if self._filter_waits:
                        self._filter_made()
                    return
            if time.perf_counter() >= hurry:
                return

    def _filter_made(self) -> None:
        """The filter that waited for the texts, applied (`filter_pending`)."""
        self.beginResetModel()
        self._apply_filter()
        self.endResetModel()
        self.counts_changed.emit(len(self._shown), len(self._all))

    def _filter_texts(self) -> list[str]:
        pending = self._pending_texts
        if pending is not None:
            self._haystacks = pending.get()
            self._pending_texts = None
            for held in pending.held(texts=False):  # the texts are kept
                self._let_go.add(held, copy=False)
            if self._let_go.done:
                self._slices_timer.stop()
            else:
                self._slices_timer.start()
        return self._haystacks

    # ------------------------------------------------------------------ QAbstractTableModel

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._shown)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._columns)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        return self._data(index.row(), index.column(), role)

    def multiData(self, index: _Index, roleDataSpan: QModelRoleDataSpan | QModelRoleData) -> None:
        """Every role a cell is painted with, in one call. The view's item delegate asks for
        seven roles of each cell it paints (of which the table answers two); through `data()`
        that was seven calls from C++ into Python a cell, most of a repaint's cost on a
        screenful of rows (a filter keystroke repaints one)."""
        # a span has a length and items (PySide6's stubs do not say so)
        spans = (
            [roleDataSpan]
            if isinstance(roleDataSpan, QModelRoleData)
            else cast("Sequence[QModelRoleData]", roleDataSpan)
        )
        row, column = index.row(), index.column()
        valid = index.isValid() and 0 <= row < len(self._shown)
        for i in range(len(spans)):
            item = spans[i]
            role = item.role()
            value = self._data(row, column, role) if valid and role in _ROLES else None
            if value is None:
                item.clearData()
            else:
                item.setData(value)

    def _data(self, row: int, column: int, role: int) -> Any:
        if role not in _ROLES or not 0 <= row < len(self._shown):
            return None
        if role == _DISPLAY:
            text = cell_text(self._columns[column].value(self._all[self._shown[row]]))
            if column == 0 and self.mark is not None and self.mark(self.row_at(row)):
                return f"{MARK} {text}"
            return text
        if role == _ALIGNMENT:
            return _RIGHT if self._columns[column].numeric else None
        if role == _TOOLTIP:
            if column == 0 and self.mark is not None:
                note = self.mark(self.row_at(row))
                if note:
                    return note
            tooltip = self._columns[column].tooltip
            return tooltip(self.row_at(row)) if tooltip is not None else None
        return self.row_at(row)  # ROW_ROLE

    def marks_changed(self) -> None:
        """`mark` may say otherwise for some rows now: repaint their first column."""
        if self._shown:
            last = self.index(len(self._shown) - 1, 0)
            self.dataChanged.emit(self.index(0, 0), last)

    def headerData(
        self,
        section: int,
        orientation: Qt.Orientation,
        role: int = Qt.ItemDataRole.DisplayRole,
    ) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(self._columns):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self._columns[section].title
        if role == Qt.ItemDataRole.TextAlignmentRole:
            # always left: styles draw the sort arrow at the right end of the header, where a
            # right-aligned title (over a numeric column) would run into it
            return Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        return None

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        if not 0 <= column < len(self._columns):
            return
        self.beginResetModel()
        self._sort = (column, order)
        # the row numbers shown until now go first, so that the new ones take their memory:
        # made while the old were alive (or let go of a slice a turn), six sorts of 100,000
        # rows left the window 6-10 MB larger
        self._order = self._shown = range(0)
        self._sort_order(column, order)
        self._apply_filter()
        self.endResetModel()

    def _sort_keys(self, column: int) -> list[Any]:
        keys = self._keys.get(column)
        if keys is None:
            with paused_gc():  # 100,000 keys are kept: no collections walking them (or others)
                keys = column_sort_keys(self._columns[column], self._all)
            self._keys[column] = keys
        return keys

    def _sort_order(self, column: int, order: Qt.SortOrder) -> None:
        """`_order` sorted by `column`: an order sorted before (or its opposite) taken up
        again, else sorted now. Its int objects are made anew in its order (`tolist`)."""
        descending = order == Qt.SortOrder.DescendingOrder
        numbers = self._orders.get((column, descending))
        if numbers is None:
            numbers = self._sorted(column, descending)
            self._orders[(column, descending)] = numbers
        self._order = numbers.tolist()

    def _sorted(self, column: int, descending: bool) -> array[int]:
        keys = self._sort_keys(column)
        other = self._orders.get((column, not descending))
        if other is not None:  # the header clicked again: the other way round
            flipped = opposite_order(other, keys)
            if flipped is not None:
                return flipped
        try:
            rows = sorted(range(len(self._all)), key=keys.__getitem__, reverse=descending)
        except TypeError:  # mixed types in one column: fall back to the shown text
            value = self._columns[column].value
            texts = [cell_text(value(row)).casefold() for row in self._all]
            self._keys[column] = texts
            self._orders = {k: v for k, v in self._orders.items() if k[0] != column}
            rows = sorted(range(len(self._all)), key=texts.__getitem__, reverse=descending)
        return array("i", rows)  # its int objects go as it returns
