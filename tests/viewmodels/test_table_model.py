"""`TableModel` without a view: cells, tooltips, rows, sorting and filtering in Python, and
rows prepared in pieces (`RowPipeline`)."""

from __future__ import annotations

import asyncio
import gc
import weakref
from array import array
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from PySide6.QtCore import Qt

import app.viewmodels.table
from app.startup import paused_gc
from app.viewmodels.table import (
    MISSING,
    MISSING_FOLDED,
    ROW_ROLE,
    Column,
    FilterTexts,
    PreparedRows,
    RowPipeline,
    TableModel,
    cell_text,
    collect_when_released,
    column_sort_keys,
    merged_runs,
    narrows,
    opposite_order,
    prepare_rows,
    releasing,
    row_haystacks,
)


@dataclass
class Row:
    name: str
    count: int | None
    on: bool = False


def test_table_model_shows_and_sorts_in_python(qtbot: Any) -> None:
    model: TableModel[Row] = TableModel(
        [
            Column("Name", lambda r: r.name, tooltip=lambda r: f"about {r.name}"),
            Column("Count", lambda r: r.count, numeric=True),
            Column("On", lambda r: r.on),
        ]
    )
    model.set_rows([Row("beta", 2), Row("Alpha", None, True), Row("gamma", 10)])
    assert (model.rowCount(), model.columnCount()) == (3, 3)
    index = model.index(1, 1)
    assert index.data() == MISSING
    assert model.index(1, 2).data() == "yes" and model.index(0, 2).data() == "no"
    assert index.data(Qt.ItemDataRole.TextAlignmentRole) & Qt.AlignmentFlag.AlignRight
    assert model.index(0, 0).data(Qt.ItemDataRole.ToolTipRole) == "about beta"
    assert model.index(2, 0).data(ROW_ROLE) == Row("gamma", 10)
    assert model.headerData(1, Qt.Orientation.Horizontal) == "Count"

    with qtbot.waitSignals([model.modelAboutToBeReset, model.modelReset]):
        model.sort(0)
    assert [r.name for r in model.rows] == ["Alpha", "beta", "gamma"]  # case-folded
    model.sort(1, Qt.SortOrder.DescendingOrder)
    assert [r.count for r in model.rows] == [None, 10, 2]  # missing values sort past the rest
    model.set_rows([Row("x", 1), Row("y", 5)])  # new rows keep the chosen order
    assert [r.count for r in model.rows] == [5, 1]


@dataclass
class Person:
    name: str
    email: str | None
    logins: int
    seen: datetime | None = None


COLUMNS = [
    Column[Person]("Name", lambda p: p.name),
    Column[Person]("Email", lambda p: p.email),
    Column[Person]("Logins", lambda p: p.logins, numeric=True),
    Column[Person]("Seen", lambda p: p.seen),
]

PEOPLE = [
    Person("Åsa Berg", "asa@example.com", 3, datetime(2026, 1, 2, 3, 4, tzinfo=UTC)),
    Person("bob stone", None, 12),
    Person("Carla Díaz", "carla@example.org", 7, datetime(2025, 5, 6, tzinfo=UTC)),
    Person("Dan Stone", "dan@example.com", 0),
]


def names(model: TableModel[Person]) -> list[str]:
    return [p.name for p in model.rows]


def test_filter_matches_every_word_in_any_cell_and_any_case(qtbot: Any) -> None:
    model: TableModel[Person] = TableModel(COLUMNS)
    counts: list[tuple[int, int]] = []
    model.counts_changed.connect(lambda shown, total: counts.append((shown, total)))
    model.set_rows(PEOPLE)
    assert counts[-1] == (4, 4)
    model.set_filter("STONE")
    assert names(model) == ["bob stone", "Dan Stone"]
    assert counts[-1] == (2, 4)
    model.set_filter("stone example.com")  # both words, in different cells
    assert names(model) == ["Dan Stone"]
    model.set_filter("example.org")
    assert names(model) == ["Carla Díaz"]
    model.set_filter("nobody")
    assert model.rowCount() == 0 and counts[-1] == (0, 4)
    model.set_filter("  ")
    assert model.rowCount() == 4


def test_sort_keeps_the_filter_and_missing_values_sort_last(qtbot: Any) -> None:
    model: TableModel[Person] = TableModel(COLUMNS)
    model.set_rows(PEOPLE)
    model.sort(2, Qt.SortOrder.DescendingOrder)
    assert names(model) == ["bob stone", "Carla Díaz", "Åsa Berg", "Dan Stone"]
    model.set_filter("stone")
    assert names(model) == ["bob stone", "Dan Stone"]
    model.sort(0)  # case-insensitive
    assert names(model) == ["bob stone", "Dan Stone"]
    model.set_filter("")
    model.sort(3)
    assert [p.seen is None for p in model.rows] == [False, False, True, True]
    # new rows keep the sort and the filter
    model.set_filter("stone")
    model.sort(0, Qt.SortOrder.DescendingOrder)
    model.set_rows([*PEOPLE, Person("Ann Stone", None, 1)])
    assert names(model) == ["Dan Stone", "bob stone", "Ann Stone"]


def test_cell_texts(qtbot: Any) -> None:
    model: TableModel[Person] = TableModel(COLUMNS)
    model.set_rows(PEOPLE[:2])
    assert model.text(1, 1) == MISSING
    assert cell_text(True) == "yes" and cell_text(None) == MISSING
    seen = PEOPLE[0].seen
    assert seen is not None
    assert model.text(0, 3) == seen.astimezone().strftime("%Y-%m-%d %H:%M")
    assert model.data(model.index(0, 2), Qt.ItemDataRole.TextAlignmentRole) is not None
    prepared = prepare_rows(COLUMNS, PEOPLE)
    assert "asa@example.com" in prepared.haystacks[0] and "åsa" in prepared.haystacks[0]


def test_filter_texts_are_the_cells_texts_case_folded() -> None:
    """Each row's filter text is exactly what its cells show, joined by a separator that no
    word spans and case-folded; whatever mix of values a column holds (texts, None, yes/no,
    numbers, times, the same time twice)."""
    when = datetime(2026, 3, 4, 5, 6, tzinfo=UTC)
    elsewhere = when.astimezone(timezone(timedelta(hours=-7)))  # the same instant
    naive = datetime(2026, 3, 4, 5, 6)
    rows = [Row("Straße", 3, True), Row("ÅSA", None), Row("x", 0)]
    columns: list[Column[Row]] = [
        Column("Name", lambda r: r.name),
        Column("Count", lambda r: r.count),
        Column("On", lambda r: r.on),
        Column("Mixed", lambda r: when if r.count is None else r.name),
        Column("When", lambda r: when),
        Column("Maybe a name", lambda r: r.name if r.count else None),
        Column("Maybe a number", lambda r: r.count),
        Column("Maybe a time", lambda r: {None: None, 0: naive}.get(r.count, elsewhere)),
    ]
    times: dict[datetime, str] = {}
    haystacks = row_haystacks(columns, rows, times)
    assert prepare_rows(columns, rows).haystacks == haystacks
    for row, haystack in zip(rows, haystacks, strict=True):
        values = [c.value(row) for c in columns]
        assert haystack.split("\x1f") == [
            MISSING_FOLDED if value is None else cell_text(value).casefold() for value in values
        ]
    assert set(times) == {when, naive}  # made once each, kept for the next piece
    assert haystacks[0].startswith("strasse\x1f3\x1fyes")
    assert prepare_rows([], rows).haystacks == ["", "", ""]


def test_a_row_pipeline_prepares_pieces_in_order(qtbot: Any, qloop: Any, arun: Any) -> None:
    """Pieces handed in as they arrive come out as one `PreparedRows`, in arrival order, with
    the filter texts and the sort keys asked for, as `prepare_rows` makes them in one go."""
    names: list[str] = [p.name for p in PEOPLE]

    async def pieces() -> PreparedRows[Person]:
        pipeline: RowPipeline[str, Person] = RowPipeline(
            COLUMNS,
            lambda items: [next(p for p in PEOPLE if p.name == n) for n in items],
            (2, Qt.SortOrder.AscendingOrder),
        )
        for start in range(0, len(names), 3):
            pipeline.add(names[start : start + 3])
            await asyncio.sleep(0)
        assert pipeline.count == len(PEOPLE)
        return await pipeline.result()

    joined = arun(pieces())
    whole = prepare_rows(COLUMNS, PEOPLE, [2])
    assert joined.rows == whole.rows
    assert joined.haystacks is None  # the table makes them once the rows are shown
    assert joined.keys == whole.keys
    assert joined.order is not None and joined.order[0] == (2, False)
    assert list(joined.order[1]) == sorted(range(len(PEOPLE)), key=whole.keys[2].__getitem__)

    async def abandoned() -> None:
        pipeline: RowPipeline[Person, Person] = RowPipeline(COLUMNS, list)
        pipeline.add(PEOPLE)
        pipeline.close()  # a cancelled load: nothing more is prepared
        with pytest.raises(RuntimeError):
            pipeline.add(PEOPLE)

    arun(abandoned())


def test_filter_texts_left_to_the_table_are_made_after_the_rows_are_set(qtbot: Any) -> None:
    """Rows handed over without their filter texts (a large answer's): the table is filled at
    once, the texts are made after it in turns of the event loop, and a filter typed before
    they are ready makes what is left. The same rows are found either way, and a row replaced
    meanwhile is found by its new texts."""
    people = PEOPLE * 50
    whole: TableModel[Person] = TableModel(COLUMNS)
    whole.set_rows(people)
    whole.set_filter("stone")
    expected = whole.rows

    early: TableModel[Person] = TableModel(COLUMNS)  # a word typed before any was made
    early.set_prepared(PreparedRows(list(people), None))
    assert early.total_count == len(people)
    early.set_filter("stone")
    assert early.rows == expected

    later: TableModel[Person] = TableModel(COLUMNS)  # typed once the event loop made them all
    later.set_prepared(PreparedRows(list(people), None))
    pending = later._pending_texts
    assert pending is not None and not pending.done
    qtbot.waitUntil(lambda: later._pending_texts is None)  # made, kept, and let go
    assert pending.done and not later._slices_timer.isActive()
    later.set_filter("stone")
    assert later.rows == expected

    replaced: TableModel[Person] = TableModel(COLUMNS)
    replaced.set_prepared(PreparedRows(list(people), None))
    renamed = Person("Zed Stone", None, 1, None)
    assert replaced.replace_row(people[0], renamed)
    replaced.set_filter("zed")
    assert replaced.rows == [renamed]

    again: TableModel[Person] = TableModel(COLUMNS)  # new rows before the first texts came
    again.set_prepared(PreparedRows(list(people), None))
    again.set_prepared(PreparedRows(list(PEOPLE[:1]), None))
    qtbot.wait(50)
    again.set_filter("berg")
    assert again.rows == PEOPLE[:1]


def test_rows_replaced_are_let_go_of_in_turns_of_the_event_loop(qtbot: Any) -> None:
    """New rows are shown at once; the rows they replace (with their filter texts, sort keys
    and row numbers) are let go of a slice a turn of the event loop afterwards (freeing
    100,000 at once held the GUI thread 40-80 ms), never at once, and a list the caller still
    holds is left as it was."""
    count = 5 * 2000 + 1  # more than one slice of rows
    old = [Person(f"Old {i}", f"old{i}@example.com", i) for i in range(count)]
    alive = [weakref.ref(p) for p in old]
    model: TableModel[Person] = TableModel(COLUMNS)
    model.set_prepared(PreparedRows(old, None))
    model.sort(2)  # sort keys too
    model.set_filter("old")  # and every filter text (made for the filter, which waits)
    qtbot.waitUntil(lambda: not model.filter_pending)
    assert model.shown_count == count
    model.set_filter("")  # the texts stay made
    del old
    new = [Person("New", None, 1)]
    model.set_prepared(PreparedRows(list(new), None))
    assert model.rows == new and model.total_count == 1  # shown at once
    assert all(ref() is not None for ref in alive)  # none freed in the GUI's turn
    model._next_slice()  # one turn: one slice freed
    assert 0 < sum(ref() is None for ref in alive) < count
    qtbot.waitUntil(lambda: all(ref() is None for ref in alive))
    qtbot.waitUntil(lambda: not model._slices_timer.isActive())
    assert model.rows == new
    model.set_filter("new")
    assert model.rows == new

    kept = [Person(f"Kept {i}", None, i) for i in range(count)]
    handed = list(kept)
    model.set_prepared(PreparedRows(handed, None))
    model.set_prepared(PreparedRows(list(new), None))
    qtbot.waitUntil(lambda: not model._slices_timer.isActive())
    assert handed == kept  # let go of, not emptied


class Window:
    """Stands for a closed window: it holds its table in a reference cycle (only the collector
    frees it)."""

    def __init__(self, table: TableModel[Person]) -> None:
        self.table = table
        self.itself = self


def test_a_closed_tables_rows_are_let_go_of_before_the_collector_runs(qtbot: Any) -> None:
    """A closed view-model's table lets go of its rows a slice a turn of the event loop, after
    it is gone; the collection that frees the window's reference cycles waits for the last
    slice. Collecting with 100,000 rows still alive walked and freed them all in one step:
    closing such a window held the GUI thread 0.1-0.34 s (`bench/ui_tables.py`)."""
    count = 5 * 2000 + 1
    with paused_gc():  # as a large load: what it built is frozen when it ends
        rows = [Person(f"Row {i}", f"row{i}@example.com", i) for i in range(count)]
        alive = [weakref.ref(p) for p in rows]
        model: TableModel[Person] = TableModel(COLUMNS)
        model.set_prepared(PreparedRows(rows, None))
        model.sort(0)
        window = Window(model)
    freed = weakref.ref(window)
    del rows, window
    collections: list[int] = []  # rows still alive as each collection starts

    def count_alive(phase: str, info: dict[str, Any]) -> None:
        if phase == "start" and info["generation"] == 2:
            collections.append(sum(ref() is not None for ref in alive))

    # only the collection under test: none of the collector's own on the way
    was_enabled = gc.isenabled()
    gc.disable()
    gc.callbacks.append(count_alive)
    try:
        model.release()  # its view-model closed
        assert model.total_count == 0 and model.rowCount() == 0  # at once
        assert all(ref() is not None for ref in alive)  # none freed in this turn
        assert releasing()
        collect_when_released()  # the window deleted
        assert not collections
        del model
        qtbot.waitUntil(lambda: not releasing(), timeout=5_000)
        assert all(ref() is None for ref in alive)
        qtbot.waitUntil(lambda: freed() is None, timeout=5_000)  # the cycle, collected
        assert collections == [0]  # once, after the last row was let go of
    finally:
        gc.callbacks.remove(count_alive)
        if was_enabled:
            gc.enable()


def test_a_view_model_closed_releases_its_tables(qtbot: Any) -> None:
    from app.viewmodels.base import ViewModel

    owner = ViewModel()
    table: TableModel[Person] = TableModel(COLUMNS, owner)
    table.set_rows([Person("Ann", None, 1)])
    owner.close()
    assert table.total_count == 0


WORDS = ["stone", "berg", "díaz", "Åsa", "STRASSE", "straße", "ex", "e7", "ample"]


def crowd(count: int) -> list[Person]:
    """`count` people whose names and emails mix `WORDS`, some with no email."""
    return [
        Person(f"{WORDS[i % 9]} {WORDS[i * 7 % 9]} {i}",
               None if i % 5 == 0 else f"{WORDS[i * 4 % 9].lower()}{i}@example.com", i % 13)
        for i in range(count)
    ]  # fmt: skip


@pytest.fixture
def texts_left_when_made(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The rows whose filter texts were left to make each time `FilterTexts.get()` made what
    was left at once, on the GUI thread (all of 100,000 rows': a 0.4 s freeze)."""
    left: list[int] = []
    get = FilterTexts.get

    def counted(self: FilterTexts[Any]) -> list[str]:
        left.append(len(self._rows) - len(self._texts))  # rows left
        return get(self)

    monkeypatch.setattr(FilterTexts, "get", counted)
    return left


def test_a_filter_typed_before_the_texts_are_made_waits_for_them(
    qtbot: Any, texts_left_when_made: list[int]
) -> None:
    """A word typed right after a large answer's rows are shown, before the table has made
    their filter texts: the table makes no more of them at once than a few slices (all that
    were left, 0.4 s for 100,000 rows, froze the window), shows no row and says so
    (`filter_pending`) until the slices have made them, then the rows the word typed last
    finds, in the order sorted meanwhile. Clearing the filter shows every row at once."""
    people = crowd(30_000)
    whole: TableModel[Person] = TableModel(COLUMNS)  # the same rows, texts made beforehand
    whole.set_rows(people)
    whole.sort(0, Qt.SortOrder.DescendingOrder)
    whole.set_filter("stone e7")
    expected = whole.rows
    assert 0 < len(expected) < len(people)

    model: TableModel[Person] = TableModel(COLUMNS)
    counts: list[tuple[int, int]] = []
    model.counts_changed.connect(lambda shown, total: counts.append((shown, total)))
    model.set_prepared(PreparedRows(list(people), None))
    model.set_filter("stone")
    assert model.filter_pending
    assert (model.shown_count, model.rowCount()) == (0, 0)
    assert counts[-1] == (0, len(people))
    pending = model._pending_texts
    assert pending is not None and pending.left > len(people) // 2  # not made on the spot
    model.set_filter("stone e")  # typed on, quickly
    model.sort(0, Qt.SortOrder.DescendingOrder)  # a header clicked meanwhile
    assert model.sort_state == (0, Qt.SortOrder.DescendingOrder) and model.filter_pending
    model.set_filter("stone e7")
    assert model.filter_pending and model.shown_count == 0
    counts.clear()
    qtbot.waitUntil(lambda: not model.filter_pending, timeout=20_000)
    assert model.rows == expected  # the word typed last, sorted as clicked
    assert counts == [(len(expected), len(people))]  # applied once
    assert model._pending_texts is None  # made, and kept
    assert all(
        left <= app.viewmodels.table._TEXTS_MADE_FOR_A_FILTER for left in texts_left_when_made
    )

    model.set_filter("")  # the texts are made: at once either way
    assert not model.filter_pending and model.shown_count == len(people)

    cleared: TableModel[Person] = TableModel(COLUMNS)
    cleared.set_prepared(PreparedRows(list(people), None))
    cleared.set_filter("stone")
    assert cleared.filter_pending
    cleared.set_filter(" ")  # cleared before the texts are made: every row, at once
    assert not cleared.filter_pending and cleared.rows == people
    pending = cleared._pending_texts
    assert pending is not None and not pending.done  # still made at their own pace
    qtbot.waitUntil(lambda: cleared._pending_texts is None, timeout=20_000)
    assert cleared.rows == people
    assert all(
        left <= app.viewmodels.table._TEXTS_MADE_FOR_A_FILTER for left in texts_left_when_made
    )


def test_a_filter_waiting_for_texts_applies_to_rows_loaded_meanwhile(
    qtbot: Any, texts_left_when_made: list[int]
) -> None:
    """A reload while a filter waits for the texts (F5, a bulk action's reload): the filter
    waits for the new rows' texts instead, and finds among them; a filtered table reloaded
    waits the same way rather than make 100,000 texts at once. Emptied (a connection changed),
    the table waits for nothing, and nothing is applied afterwards."""
    old, new = crowd(20_000), crowd(25_000)[5_000:]
    whole: TableModel[Person] = TableModel(COLUMNS)
    whole.set_rows(new)
    whole.set_filter("berg 9")
    expected = whole.rows

    model: TableModel[Person] = TableModel(COLUMNS)
    model.set_prepared(PreparedRows(list(old), None))
    model.set_filter("berg 9")
    assert model.filter_pending
    model.set_prepared(PreparedRows(list(new), None))  # reloaded before the texts were made
    assert model.filter_pending and model.shown_count == 0 and model.total_count == len(new)
    qtbot.waitUntil(lambda: not model.filter_pending, timeout=20_000)
    assert model.rows == expected

    model.set_prepared(PreparedRows(list(new), None))  # a filtered table reloaded
    assert model.filter_pending and model.shown_count == 0
    qtbot.waitUntil(lambda: not model.filter_pending, timeout=20_000)
    assert model.rows == expected
    assert all(
        left <= app.viewmodels.table._TEXTS_MADE_FOR_A_FILTER for left in texts_left_when_made
    )

    model.set_prepared(PreparedRows(list(old), None))
    assert model.filter_pending
    counts: list[tuple[int, int]] = []
    model.counts_changed.connect(lambda shown, total: counts.append((shown, total)))
    model.clear()
    assert not model.filter_pending and counts == [(0, 0)]
    qtbot.waitUntil(lambda: not model._slices_timer.isActive(), timeout=20_000)
    assert counts == [(0, 0)] and model.rows == []


def test_a_row_replaced_while_the_texts_are_made_is_found_by_its_new_text(
    qtbot: Any, texts_left_when_made: list[int]
) -> None:
    """`replace_row` before the last slice: a text already made is made again, one not made
    yet is made from the new row; neither makes the texts left at once."""
    people = crowd(30_000)
    model: TableModel[Person] = TableModel(COLUMNS)
    model.set_prepared(PreparedRows(list(people), None))
    model._next_slice()  # a turn or two of the event loop: the first rows' texts made
    model._next_slice()
    pending = model._pending_texts
    assert pending is not None and 0 < len(people) - pending.left <= 10_000  # some made
    first, late = Person("Zed Early", None, 1), Person("Zed Late", None, 2)
    assert model.replace_row(people[0], first)
    assert model.replace_row(people[-1], late)
    assert texts_left_when_made == []
    model.set_filter("zed")
    qtbot.waitUntil(lambda: not model.filter_pending, timeout=20_000)
    assert model.rows == [first, late]
    model.set_filter(people[0].name)
    assert people[0] not in model.rows


def test_typing_on_narrows_to_the_rows_a_whole_filter_finds(qtbot: Any) -> None:
    """A word typed on, a word added, a word taken back, the filter cleared, new rows, a sort:
    each step shows exactly the rows a table given that text at once shows, in its order,
    whether the step tested the rows shown (typing on narrows them) or every row; narrowing
    reads only the texts of the rows shown."""
    people = crowd(400)
    model: TableModel[Person] = TableModel(COLUMNS)
    model.sort(2)
    model.set_rows(people)
    steps = ["s", "st", "sto", "stone", "stone ", "stone e", "stone ex", "stone exa", "stone",
             "ston", "", "e", "e7", "e7 strasse", "ß", "e7", "zzz", "zzzz", "", "1", "12",
             "123", "12 é", "—", "— 1"]  # fmt: skip
    for i, text in enumerate(steps):
        if i == 14:
            model.set_rows(people[:300])  # new rows: the next filter starts from them all
        if i == 19:
            model.sort(0, Qt.SortOrder.DescendingOrder)
        model.set_filter(text)
        whole: TableModel[Person] = TableModel(COLUMNS)
        whole.sort(*(model.sort_state or (0, Qt.SortOrder.AscendingOrder)))
        whole.set_rows(model.all_rows)
        whole.set_filter(text)
        assert model.rows == whole.rows, text
        words = text.casefold().split()
        shown = [  # what the person sees: every word in a cell's text as shown, any case
            p for p in whole.all_rows
            if all(w in "\x1f".join(cell_text(c.value(p)) for c in COLUMNS).casefold()
                   for w in words)
        ]  # fmt: skip
        assert sorted(names(model)) == sorted(p.name for p in shown), text

    read: list[int] = []

    class Texts(list[str]):
        def __getitem__(self, i: Any) -> Any:
            read.append(i)
            return super().__getitem__(i)

    model.set_filter("stone")
    model._haystacks = Texts(model._haystacks)
    shown = {model.all_rows.index(p) for p in model.rows}
    model.set_filter("stone 9")
    assert read and set(read) <= shown and 0 < len(model.rows) < len(shown)


def test_a_replaced_row_is_found_by_a_filter_typed_on_after_it(qtbot: Any) -> None:
    """A row replaced while a filter hides it, whose new texts hold the words typed next: it
    is shown (typing on must not narrow from the rows shown before it changed)."""
    people = crowd(400)
    model: TableModel[Person] = TableModel(COLUMNS)
    model.set_rows(people)
    model.set_filter("ston")
    hidden = next(p for p in people if p not in model.rows)
    zed = Person("Zed Stone", None, 1)
    assert model.replace_row(hidden, zed)
    model.set_filter("stone")
    assert zed in model.rows


def test_narrows() -> None:
    assert narrows([], ["a"]) and narrows(["e"], ["e7"]) and narrows(["e"], ["x", "me"])
    assert narrows(["ab", "c"], ["abc"]) and narrows(["e7"], ["e7"])
    assert not narrows(["e7"], ["e"]) and not narrows(["a", "b"], ["a"])


def test_text_sort_keys_share_the_texts_where_they_can(qtbot: Any) -> None:
    """A column whose texts are their own case-folded form has them as its keys; one of few
    distinct texts has one key object per text; either way the order is the case-folded one."""
    rows = [Row(("Beta", "alpha", "Gamma")[i % 3], i) for i in range(90)]
    rows += [Row(f"name {i}", i) for i in range(100)]  # many distinct, lower case
    few = column_sort_keys(Column[Row]("Name", lambda r: r.name), rows[:90])
    assert few == [r.name.casefold() for r in rows[:90]]
    assert len({id(k) for k in few}) == 3
    many = column_sort_keys(Column[Row]("Name", lambda r: r.name), rows[90:])
    assert all(k is r.name for k, r in zip(many, rows[90:], strict=True))
    mixed = column_sort_keys(Column[Row]("Name", lambda r: r.name), rows)
    assert mixed == [r.name.casefold() for r in rows]


def test_a_missing_value_is_found_by_its_dash_and_keeps_filter_texts_one_byte_a_letter(
    qtbot: Any,
) -> None:
    """A missing value shows as "—", and typing "—" finds it, and a "—" in a text; a word
    holding "—" with more finds only texts. "—" is not Latin-1: in the filter texts a missing
    value is a Latin-1 sign no word typed can hold, so that a row of plain letters with a
    missing value keeps its text at one byte a character (not two: 11 MB of 100,000 flags)."""
    people = [*PEOPLE, Person("Eve — Long", "eve@example.com", 1, None), Person("µ Mu", None, 2)]
    model: TableModel[Person] = TableModel(COLUMNS)
    model.set_rows(people)
    model.set_filter("—")
    assert names(model) == ["bob stone", "Dan Stone", "Eve — Long", "µ Mu"]
    model.set_filter("—l")
    assert names(model) == []
    model.set_filter("— long")
    assert names(model) == ["Eve — Long"]
    model.set_filter("µ")  # folds to Greek mu: the name, not a missing value
    assert names(model) == ["µ Mu"]
    model.set_filter("stone —")
    assert names(model) == ["bob stone", "Dan Stone"]
    texts = row_haystacks(COLUMNS, people)
    assert max(map(ord, texts[3])) < 256  # Dan Stone: no email, never seen
    assert MISSING not in texts[3]


def test_numbers_and_times_with_none_missing_are_their_own_sort_keys(qtbot: Any) -> None:
    """A column of numbers, of yes/no or of times with no value missing sorts on the values
    themselves, in the order the (missing?, value) pairs give; with a value missing, on the
    pairs, missing values last."""
    when = datetime(2026, 1, 2, tzinfo=UTC)
    columns = {
        "numbers": ([3, 1.5, 10, 0, -2], "values"),
        "yes/no": ([True, False, True], "values"),
        "times": ([when, when - timedelta(days=3), when + timedelta(hours=1)], "values"),
        "with one missing": ([3, None, 1], "pairs"),
    }
    for name, (values, kind) in columns.items():
        rows = [Row(str(i), None) for i in range(len(values))]
        column = Column[Row](name, lambda r, v=values: v[int(r.name)])
        keys = column_sort_keys(column, rows)
        pairs = [(v is None, v if v is not None else 0) for v in values]
        order = sorted(range(len(rows)), key=keys.__getitem__)
        assert order == sorted(range(len(rows)), key=pairs.__getitem__), name
        assert (keys == values) == (kind == "values"), name


def test_a_row_pipeline_sorts_the_rows_as_sorting_them_at_once_does(
    qtbot: Any, qloop: Any, arun: Any
) -> None:
    """With the table's sort, the worker thread sorts the rows too, in runs merged as batches
    come: the order is the one a stable sort of every row gives (rows of equal keys in their
    own order), either way round, over many batches of any size, and the table only takes it
    up: nothing is sorted on the GUI thread, and the rows shown are the ones sorting there
    gives."""
    people = [Person(f"p{i}", None, (i * 7919) % 23) for i in range(5 * 2000 + 777)]
    for order in (Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder):

        async def load(order: Qt.SortOrder = order) -> PreparedRows[Person]:
            pipeline: RowPipeline[Person, Person] = RowPipeline(COLUMNS, list, (2, order))
            for start in range(0, len(people), 1500):  # pieces cut across the batches
                pipeline.add(people[start : start + 1500])
                await asyncio.sleep(0)
            return await pipeline.result()

        prepared = arun(load())
        reverse = order == Qt.SortOrder.DescendingOrder
        expected = sorted(range(len(people)), key=lambda i: people[i].logins, reverse=reverse)
        assert prepared.order is not None and prepared.order[0] == (2, reverse)
        assert list(prepared.order[1]) == expected

        model: TableModel[Person] = TableModel(COLUMNS)
        model.sort(2, order)

        def no_sort(column: int, descending: bool) -> array[int]:
            raise AssertionError(f"sorted on the GUI thread by {column}, {descending}")

        model._sorted = no_sort  # type: ignore[method-assign]
        model.set_prepared(prepared)
        assert model.rows == [people[i] for i in expected]
        del model._sorted
        model.sort(2, Qt.SortOrder.AscendingOrder if reverse else Qt.SortOrder.DescendingOrder)
        flipped = sorted(range(len(people)), key=lambda i: people[i].logins, reverse=not reverse)
        assert model.rows == [people[i] for i in flipped]

    async def mixed() -> PreparedRows[Row]:  # keys that cannot be compared: left to the table
        pipeline: RowPipeline[Row, Row] = RowPipeline(
            [Column[Row]("Name", lambda r: r.name), Column[Row]("Count", lambda r: r.count,
                                                                sort_key=lambda r: r.count)],
            list,
            (1, Qt.SortOrder.AscendingOrder),
        )  # fmt: skip
        pipeline.add([Row("a", 2), Row("b", None), Row("c", 1)])
        return await pipeline.result()

    prepared_mixed = arun(mixed())
    assert prepared_mixed.order is None and [r.name for r in prepared_mixed.rows] == list("abc")


def test_the_other_way_round_is_the_order_turned_round_as_a_stable_sort_gives_it() -> None:
    """`opposite_order` gives exactly `sorted(..., reverse=...)`'s order: every key distinct,
    a few groups of equal keys (each keeps its rows' own order), pairs with a value missing,
    none at all; with groups nearly as many as rows (nothing gained), or keys that cannot be
    hashed, it still does, or says to sort anew (None)."""
    cases: dict[str, list[Any]] = {
        "distinct": [f"u{(i * 37) % 101:03d}" for i in range(101)],
        "few groups": [("b", "a", "c")[i % 3] for i in range(90)],
        "pairs": [(i % 4 == 0, i % 5) for i in range(800)],
        "one": ["x"],
        "none": [],
        "unhashable": [[i % 2] for i in range(64)],
    }
    for name, keys in cases.items():
        for reverse in (False, True):
            order = array("i", sorted(range(len(keys)), key=keys.__getitem__, reverse=reverse))
            flipped = opposite_order(order, keys)
            assert flipped is not None, name
            assert list(flipped) == sorted(range(len(keys)), key=keys.__getitem__,
                                           reverse=not reverse), name  # fmt: skip
    many = [i // 2 for i in range(64)]  # 32 groups of 2: more than a 16th of the rows
    assert opposite_order(array("i", range(64)), many) is None


def test_a_column_sorted_before_is_taken_up_again_until_the_rows_change(qtbot: Any) -> None:
    """Each (column, direction) is sorted once: sorted again, or the other way round, the
    table takes up what it made (the same rows a new table sorted that way shows); new rows or
    a replaced row make them again."""
    people = crowd(30_000)
    fresh: dict[tuple[int, bool], list[Person]] = {}
    for column in (0, 2):
        for order in (Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder):
            other: TableModel[Person] = TableModel(COLUMNS)
            other.set_rows(people)
            other.sort(column, order)
            fresh[(column, order == Qt.SortOrder.DescendingOrder)] = other.rows
    model: TableModel[Person] = TableModel(COLUMNS)
    model.set_rows(people)
    sorts: list[tuple[int, bool]] = []
    sorted_ = model._sorted

    def counted(column: int, descending: bool) -> array[int]:
        sorts.append((column, descending))
        return sorted_(column, descending)

    model._sorted = counted  # type: ignore[method-assign]
    for _ in range(2):
        for (column, descending), rows in fresh.items():
            order = Qt.SortOrder.DescendingOrder if descending else Qt.SortOrder.AscendingOrder
            model.sort(column, order)
            assert model.rows == rows
    assert sorts == list(fresh)  # once each
    model.set_filter("stone")
    model.sort(0)
    assert model.rows == [p for p in fresh[(0, False)] if "stone" in p.name.casefold()
                          or "stone" in (p.email or "")]  # fmt: skip
    zed = Person("Zed", None, 1)
    assert model.replace_row(people[0], zed)
    model.set_filter("")
    model.sort(0)
    assert sorts[-1] == (0, False)  # made again, with the row as it is now
    other = TableModel(COLUMNS)
    other.set_rows([zed, *people[1:]])
    other.sort(0)
    assert model.rows == other.rows


def test_a_word_every_row_or_no_row_holds_shows_them_all_or_none(qtbot: Any) -> None:
    """A filter every row passes shows every row in the order shown, one no row passes none;
    words typed on from either find what a whole filter finds."""
    people = [Person(f"Alma {i}", "alma@example.com", i % 5) for i in range(300)]
    model: TableModel[Person] = TableModel(COLUMNS)
    model.set_rows(people)
    model.sort(2, Qt.SortOrder.DescendingOrder)
    order = model.rows
    model.set_filter("alma")  # every row
    assert model.rows == order
    model.set_filter("alma 1")  # typed on: some
    assert model.rows == [p for p in order if "1" in p.name or p.logins == 1]
    model.set_filter("alma q")  # none
    assert model.rows == []
    model.set_filter("alma qu")  # typed on from none
    assert model.rows == []
    model.set_filter("")
    assert model.rows == order


def test_runs_merged_a_piece_at_a_time_are_what_one_sort_gives() -> None:
    """`merged_runs` gives the order one stable sort of both runs gives, either way round,
    whatever the pieces: many equal keys across the pieces' ends, one run much longer, one
    empty, every key equal."""
    cases = {
        "ties": [(i * 7919) % 13 for i in range(700)],
        "texts": [f"k{(i * 31) % 97}" for i in range(500)],
        "equal": [5] * 300,
    }
    for name, keys in cases.items():
        for split in (0, 1, len(keys) // 3, len(keys) // 2, len(keys) - 1):
            for reverse in (False, True):
                for at_once in (1, 7, 64, 10_000):
                    first = sorted(range(split), key=keys.__getitem__, reverse=reverse)
                    second = sorted(range(split, len(keys)), key=keys.__getitem__,
                                    reverse=reverse)  # fmt: skip
                    merged = merged_runs(first, second, keys.__getitem__, reverse=reverse,
                                         at_once=at_once)  # fmt: skip
                    expected = sorted(range(len(keys)), key=keys.__getitem__, reverse=reverse)
                    assert merged == expected, (name, split, reverse, at_once)


def test_rows_added_page_by_page_are_sorted_and_filtered_in(qtbot: Any) -> None:
    """`extend` (the event log's pages): rows that sort after those shown are inserted at the
    end (the view keeps its selection and scroll); rows that sort among them reset it; the
    filter and the counts take them in, also while the filter texts are still being made."""
    columns = [Column("Name", lambda r: r.name), Column("Count", lambda r: r.count)]
    model: TableModel[Row] = TableModel(columns)
    model.clear()
    model.sort(1, Qt.SortOrder.DescendingOrder)
    counts: list[tuple[int, int]] = []
    model.counts_changed.connect(lambda shown, total: counts.append((shown, total)))
    with qtbot.waitSignal(model.rowsInserted):
        model.extend([Row("a9", 9), Row("b8", 8)])
    with qtbot.waitSignal(model.rowsInserted):
        model.extend([Row("c7", 7), Row("a6", 6)])
    assert [r.name for r in model.rows] == ["a9", "b8", "c7", "a6"]
    with qtbot.waitSignal(model.modelReset):
        model.extend([Row("z10", 10)])  # sorts first
    assert [r.name for r in model.rows] == ["z10", "a9", "b8", "c7", "a6"]
    model.set_filter("a")
    assert [r.name for r in model.rows] == ["a9", "a6"]
    with qtbot.waitSignal(model.rowsInserted):
        model.extend([Row("x1", 1), Row("a0", 0)])
    assert [r.name for r in model.rows] == ["a9", "a6", "a0"]
    assert counts[-1] == (3, 7)
    model.extend([])
    assert counts[-1] == (3, 7)
    # rows handed over with their texts not made yet: a page's join them
    model.set_filter("")
    model.set_prepared(prepare_rows(columns, [Row(f"r{i}", i) for i in range(10)],
                                    filter_texts=False))  # fmt: skip
    model.extend([Row("last", -1)])
    model.set_filter("last")
    qtbot.waitUntil(lambda: not model.filter_pending)
    assert [r.name for r in model.rows] == ["last"]


def test_a_page_sorted_after_the_rows_is_put_after_them_without_sorting_anew(
    qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`extend` on a table sorted by a column whose keys are made: the new rows' keys alone
    are made, and when they sort after the others, they go after them with no sort of all (a
    page of older events of 100,000): the same order a sort of all gives."""
    columns = [Column("Name", lambda r: r.name), Column("Count", lambda r: r.count)]
    model: TableModel[Row] = TableModel(columns)
    model.sort(1, Qt.SortOrder.DescendingOrder)
    model.extend([Row(f"r{i}", i) for i in range(100, 50, -1)])
    made: list[int] = []
    real = app.viewmodels.table.column_sort_keys
    monkeypatch.setattr(app.viewmodels.table, "column_sort_keys",
                        lambda c, rows: made.append(len(rows)) or real(c, rows))  # fmt: skip
    with qtbot.waitSignal(model.rowsInserted):
        model.extend([Row("b", 50), Row("a", 50), Row("c", 10), Row("d", 20)])
    assert made == [4]
    expected = sorted(model.all_rows, key=lambda r: r.count or 0, reverse=True)
    assert [r.name for r in model.rows] == [r.name for r in expected]
    assert [r.name for r in model.rows][-4:] == ["b", "a", "d", "c"]
    model.extend([Row("none", None)])  # a key of another kind: sorted anew
    assert model.rows[0].name == "none"
