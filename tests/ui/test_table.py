"""`DataTable` (filter box, count, Ctrl+C, CSV export, remembered columns and sort order) over
a `TableModel` (whose own tests are in tests/viewmodels/test_table_model.py)."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QModelIndex, QModelRoleData, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QStyledItemDelegate, QStyleOptionViewItem

import ui.table
from app.viewmodels.table import (
    MARK,
    MISSING,
    PreparedRows,
    TableModel,
)
from tests.viewmodels.test_table_model import COLUMNS, PEOPLE, Person, crowd, names
from ui.settings import window_settings
from ui.table import EXPORT_FOLDER_KEY, DataTable


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


def test_cells_are_painted_with_what_data_answers_asked_in_one_call(qtbot: Any) -> None:
    """The view's item delegate asks for every role of a cell in one `multiData` call: it is
    painted with the text, alignment and mark `data()` gives, and the roles the table does not
    answer come back empty, even in a span that held something before."""
    model: TableModel[Person] = TableModel(COLUMNS)
    model.set_rows(PEOPLE)
    model.mark = lambda p: "unsaved" if p.name == "bob stone" else ""
    delegate = QStyledItemDelegate()
    for row in range(model.rowCount()):
        for column in range(model.columnCount()):
            index = model.index(row, column)
            option = QStyleOptionViewItem()
            delegate.initStyleOption(option, index)  # what painting the cell does
            assert option.text == index.data() == model.text(row, column) or (
                row == 1 and column == 0 and option.text == f"{MARK} bob stone"
            )
            numeric = COLUMNS[column].numeric
            assert bool(option.displayAlignment & Qt.AlignmentFlag.AlignRight) == numeric
    assert model.index(1, 0).data() == f"{MARK} bob stone"
    roles = [Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole,
             Qt.ItemDataRole.BackgroundRole, Qt.ItemDataRole.TextAlignmentRole]  # fmt: skip
    for row, column in ((1, 0), (0, 2), (3, 1)):
        index = model.index(row, column)
        span = [QModelRoleData(role) for role in roles]
        for data in span:
            data.setData("stale")
        for data in span:
            model.multiData(index, data)
            assert data.data() == index.data(data.role())
    model.multiData(QModelIndex(), span[0])
    assert span[0].data() is None


def test_a_filter_typed_before_the_filter_texts_are_made_says_it_is_filtering(
    qtbot: Any,
) -> None:
    """Typed before the table has made a large answer's filter texts, a word shows no row and
    "Filtering…" in the count (nothing to copy or export) until the texts are made, then the
    rows it finds; the window is not held while they are made (`TableModel.filter_pending`)."""
    people = crowd(30_000)
    model: TableModel[Person] = TableModel(COLUMNS)
    table = DataTable("people", model, noun="people")
    qtbot.addWidget(table)
    table.show()
    model.set_prepared(PreparedRows(list(people), None))
    assert table.count_label.text() == "30,000 rows"
    qtbot.keyClicks(table.filter_edit, "berg")
    assert model.filter_pending
    assert table.count_label.text() == "Filtering 30,000 people…"
    assert table.view.model().rowCount() == 0 and not table.export_button.isEnabled()
    qtbot.waitUntil(lambda: not model.filter_pending, timeout=20_000)
    found = sum("berg" in p.name.casefold() or "berg" in (p.email or "") for p in people)
    assert 0 < model.shown_count == found < len(people)
    assert table.count_label.text() == f"{found:,} of 30,000 rows"
    assert table.export_button.isEnabled()
    table.filter_edit.clear()
    assert table.count_label.text() == "30,000 rows"
