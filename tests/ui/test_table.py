"""`TableModel` (sorting and filtering in Python) and `DataTable` (filter box, count, Ctrl+C,
CSV export, remembered columns and sort order)."""

from __future__ import annotations

import asyncio
import csv
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication

import ui.table
from app.viewmodels.table import (
    MISSING,
    Column,
    PreparedRows,
    RowPipeline,
    TableModel,
    cell_text,
    prepare_rows,
)
from ui.settings import window_settings
from ui.table import EXPORT_FOLDER_KEY, DataTable


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


def test_a_row_pipeline_prepares_pieces_in_order(qtbot: Any, qloop: Any, arun: Any) -> None:
    """Pieces handed in as they arrive come out as one `PreparedRows`, in arrival order, with
    the filter texts and the sort keys asked for, as `prepare_rows` makes them in one go."""
    names: list[str] = [p.name for p in PEOPLE]

    async def pieces() -> PreparedRows[Person]:
        pipeline: RowPipeline[str, Person] = RowPipeline(
            COLUMNS, lambda items: [next(p for p in PEOPLE if p.name == n) for n in items], [2]
        )
        for start in range(0, len(names), 3):
            pipeline.add(names[start : start + 3])
            await asyncio.sleep(0)
        assert pipeline.count == len(PEOPLE)
        return await pipeline.result()

    joined = arun(pieces())
    whole = prepare_rows(COLUMNS, PEOPLE, [2])
    assert joined.rows == whole.rows
    assert joined.haystacks == whole.haystacks
    assert joined.keys == whole.keys

    async def abandoned() -> None:
        pipeline: RowPipeline[Person, Person] = RowPipeline(COLUMNS, list)
        pipeline.add(PEOPLE)
        pipeline.close()  # a cancelled load: nothing more is prepared
        with pytest.raises(RuntimeError):
            pipeline.add(PEOPLE)

    arun(abandoned())


def test_data_table_filters_counts_copies_and_exports(
    qtbot: Any, qloop: Any, tmp_path: Path
) -> None:
    model: TableModel[Person] = TableModel(COLUMNS)
    table = DataTable("people", model, noun="people")
    qtbot.addWidget(table)
    table.show()
    model.set_rows(PEOPLE)
    assert table.count_label.text() == "4 rows"
    table.filter_edit.setText("stone")
    assert model.shown_count == 2
    assert table.count_label.text() == "2 of 4 rows"

    table.view.selectAll()
    table.view.setFocus()
    QGuiApplication.clipboard().clear()
    qtbot.keyClick(table.view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    copied = QGuiApplication.clipboard().text().splitlines()
    assert copied[0].split("\t")[:3] == ["bob stone", MISSING, "12"]
    assert copied[1].startswith("Dan Stone\tdan@example.com\t0")

    activated: list[Person] = []
    table.row_activated.connect(activated.append)
    table.view.setCurrentIndex(model.index(1, 0))
    qtbot.keyClick(table.view, Qt.Key.Key_Return)
    assert [p.name for p in activated] == ["Dan Stone"]

    path = tmp_path / "people.csv"
    task = table.export(str(path))
    qtbot.waitUntil(task.done)
    assert task.result() == 2
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert rows == [["Name", "Email", "Logins", "Seen"], ["bob stone", "", "12", ""],
                    ["Dan Stone", "dan@example.com", "0", ""]]  # fmt: skip
    assert "2 exported" in table.count_label.text()


def test_data_table_remembers_sort_order_and_widths(qtbot: Any) -> None:
    model: TableModel[Person] = TableModel(COLUMNS)
    first = DataTable("remembered", model)
    qtbot.addWidget(first)
    first.show()
    model.set_rows(PEOPLE)
    first.sort_by(2, Qt.SortOrder.DescendingOrder)
    first.view.setColumnWidth(1, 321)
    first.save_layout()
    first.close()

    again: TableModel[Person] = TableModel(COLUMNS)
    second = DataTable("remembered", again)
    qtbot.addWidget(second)
    second.show()
    assert second.restored
    again.set_rows(PEOPLE)
    assert again.sort_state == (2, Qt.SortOrder.DescendingOrder)
    assert names(again)[0] == "bob stone"
    assert second.view.columnWidth(1) == 321
    QApplication.processEvents()


def test_csv_export_starts_in_the_documents_folder_and_remembers_the_last_one(
    qtbot: Any, qloop: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It used to open in the process's working directory."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    (tmp_path / "Documents").mkdir()
    monkeypatch.chdir(tmp_path)
    settings = window_settings()
    settings.remove(EXPORT_FOLDER_KEY)
    settings.sync()
    asked: list[str] = []
    chosen = tmp_path / "reports" / "mine.csv"
    chosen.parent.mkdir()

    def save_file_name(_parent: Any, _title: str, start: str, _filters: str) -> tuple[str, str]:
        asked.append(start)
        return str(chosen), "CSV files (*.csv)"

    monkeypatch.setattr(ui.table.QFileDialog, "getSaveFileName", save_file_name)
    model: TableModel[Person] = TableModel(COLUMNS)
    table = DataTable("people", model, noun="people")
    qtbot.addWidget(table)
    model.set_rows(PEOPLE)
    table.export_button.click()
    qtbot.waitUntil(lambda: chosen.exists() and table.export_button.isEnabled())
    table.export_button.click()
    qtbot.waitUntil(lambda: table.export_button.isEnabled())
    assert asked == [
        str(tmp_path / "Documents" / "people.csv"),
        str(tmp_path / "reports" / "people.csv"),
    ]
    settings.remove(EXPORT_FOLDER_KEY)
    settings.sync()
