"""`DataTable` (filter box, count, Ctrl+C, CSV export, remembered columns and sort order) over
a `TableModel` (whose own tests are in tests/viewmodels/test_table_model.py)."""

from __future__ import annotations

import csv
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QEvent, QModelIndex, QModelRoleData, Qt
from PySide6.QtGui import QAction, QGuiApplication, QHelpEvent
from PySide6.QtWidgets import (
    QApplication,
    QMenu,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolTip,
)

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
    # the count says so from the task's done callback, a turn of the loop after the task ends
    qtbot.waitUntil(lambda: "2 exported" in table.count_label.text())


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


def shown_table(qtbot: Any, stem: str, columns: list[Any], **options: Any) -> DataTable:
    """A `DataTable` over `columns`, shown, with `PEOPLE` in it."""
    model: TableModel[Person] = TableModel(columns)
    table = DataTable(stem, model, **options)
    qtbot.addWidget(table)
    table.show()
    model.set_rows(PEOPLE)
    return table


def hidden(table: DataTable) -> list[bool]:
    """Which columns the table hides, in the model's order."""
    header = table.view.horizontalHeader()
    return [header.isSectionHidden(c) for c in range(header.count())]


def checks(menu: QMenu) -> list[QAction]:
    """A column menu's checks, in its order."""
    return [a for a in menu.actions() if a.isCheckable()]


def test_the_header_menu_shows_and_hides_columns_remembered_and_reset(qtbot: Any) -> None:
    columns = [*COLUMNS[:3], replace(COLUMNS[3], shown=False)]
    table = shown_table(qtbot, "columns", columns)
    header = table.view.horizontalHeader()
    assert hidden(table) == [False, False, False, True]

    actions = checks(table.column_menu())
    assert [(a.text(), a.isChecked()) for a in actions] == [
        ("Name", True), ("Email", True), ("Logins", True), ("Seen", False)]  # fmt: skip
    actions[3].setChecked(True)  # "Seen" shown, at the width of its texts
    assert not header.isSectionHidden(3)
    seen_width = header.fontMetrics().horizontalAdvance("2026-01-02 03:04")
    assert header.sectionSize(3) > seen_width
    actions[1].setChecked(False)  # "Email" hidden
    assert header.isSectionHidden(1)
    header.moveSection(header.visualIndex(2), 0)  # "Logins" first
    table.save_layout()
    table.close()

    second = shown_table(qtbot, "columns", columns)
    header = second.view.horizontalHeader()
    assert hidden(second) == [False, True, False, False]
    menu = second.column_menu()
    assert [a.text() for a in checks(menu)] == ["Logins", "Name", "Email", "Seen"]  # as shown

    # one column is always left: its check cannot be taken off
    for column in (0, 3):
        second.show_column(column, False)
    checked = [a for a in second.column_menu().actions() if a.isChecked()]
    assert [(a.text(), a.isEnabled()) for a in checked] == [("Logins", False)]
    second.show_column(2, False)
    assert not header.isSectionHidden(2)

    # the same in the table's own menu (the Menu key), filled as it opens
    assert [a.text() for a in second.view.actions()][-1] == "Columns"
    submenu = second.columns_action.menu()
    assert isinstance(submenu, QMenu)
    submenu.aboutToShow.emit()
    assert [(a.text(), a.isChecked()) for a in checks(submenu)] == [
        ("Logins", True), ("Name", False), ("Email", False), ("Seen", False)]  # fmt: skip
    checks(submenu)[1].setChecked(True)
    assert not header.isSectionHidden(0)
    second.show_column(0, False)
    submenu.aboutToShow.emit()  # opened again: refilled, not added to
    assert [a.text() for a in checks(submenu)] == ["Logins", "Name", "Email", "Seen"]

    reset = next(a for a in menu.actions() if a.text() == "Reset columns")
    reset.trigger()
    assert [header.logicalIndex(v) for v in range(4)] == [0, 1, 2, 3]
    assert hidden(second) == [False, False, False, True]
    second.save_layout()
    third = DataTable("columns", TableModel(columns))
    qtbot.addWidget(third)
    assert hidden(third) == [False, False, False, True]


# a tooltip is raised above the window; the offscreen platform has no stacking to say so to
@pytest.mark.qt_log_ignore("^This plugin does not support raise\\(\\)$")
def test_a_cell_too_narrow_for_its_text_shows_it_whole_in_a_tooltip(qtbot: Any) -> None:
    table = shown_table(qtbot, "narrow", COLUMNS, stretch_column=None)
    model = table.model
    view = table.view
    view.setColumnWidth(0, 400)
    view.setColumnWidth(1, 40)  # "asa@example.com" does not fit
    qtbot.waitUntil(lambda: view.viewport().isVisible())

    def tooltip_over(row: int, column: int) -> str:
        QToolTip.hideText()
        qtbot.waitUntil(lambda: not QToolTip.isVisible())
        center = view.visualRect(model.index(row, column)).center()
        event = QHelpEvent(QEvent.Type.ToolTip, center, view.viewport().mapToGlobal(center))
        QApplication.sendEvent(view.viewport(), event)
        return QToolTip.text() if QToolTip.isVisible() else ""

    asa = model.row_of(lambda p: p.name == "Åsa Berg")
    assert tooltip_over(asa, 1) == "asa@example.com"
    assert tooltip_over(asa, 0) == ""  # "Åsa Berg" fits its column


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
