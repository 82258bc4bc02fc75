"""`DataTable`: every table of flagdesk: a filter box, a count, a `QTableView` over a `TableModel`
(which sorts and filters in Python; the view only shows), Ctrl+C to copy the selected rows,
export to CSV, columns shown or hidden from the header's menu, and the columns' widths, order and
visibility and the sort order remembered per table in window.ini."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from PySide6.QtCore import (
    QEvent,
    QItemSelectionModel,
    QModelIndex,
    QPoint,
    QStandardPaths,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import (
    QAction,
    QGuiApplication,
    QHelpEvent,
    QKeyEvent,
    QKeySequence,
    QShortcut,
    QShowEvent,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QMessageBox,
    QPushButton,
    QStyle,
    QTableView,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from app.text import counted
from app.viewmodels.table import TableModel
from ui.settings import window_settings

#: added to a column's fitted width, so texts do not touch the next column
COLUMN_PADDING = 24
#: rows whose texts a column is fitted to
FIT_ROWS = 60


#: where the last export went (window.ini): the next one starts there
EXPORT_FOLDER_KEY = "export/folder"
CSV_FILTER = "CSV files (*.csv);;All files (*)"


def export_folder() -> Path:
    """Where an export's file dialog starts: the folder of the last export, else the user's
    documents folder, else the home folder (never the process's working directory)."""
    saved = window_settings().value(EXPORT_FOLDER_KEY)
    if isinstance(saved, str) and saved and Path(saved).is_dir():
        return Path(saved)
    documents = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation)
    if documents and Path(documents).is_dir():
        return Path(documents)
    return Path.home()


def ask_export_path(parent: QWidget, title: str, name: str, filters: str = CSV_FILTER) -> str:
    """Ask where to export (starting in `export_folder()` with the file `name`); the folder
    chosen is remembered for the next export. "" when the person cancelled."""
    path, _ = QFileDialog.getSaveFileName(parent, title, str(export_folder() / name), filters)
    if path:
        settings = window_settings()
        settings.setValue(EXPORT_FOLDER_KEY, str(Path(path).parent))
        settings.sync()
    return path


class FilterEdit(QLineEdit):
    """A list's filter box: Down goes to the list (`leads_to`), its first row current and
    selected when none is, as in a search field above results."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.leads_to: QAbstractItemView | None = None

    def keyPressEvent(self, event: QKeyEvent) -> None:
        view = self.leads_to
        plain = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        if (
            event.key() == Qt.Key.Key_Down
            and plain == Qt.KeyboardModifier.NoModifier
            and view is not None
            and view.isVisible()
        ):
            enter_list(view)
            event.accept()
            return
        super().keyPressEvent(event)


def enter_list(view: QAbstractItemView) -> None:
    """Give `view` the focus, its first row current and selected when no row is current (a
    current row nothing selects is selected)."""
    view.setFocus(Qt.FocusReason.TabFocusReason)
    model, selection = view.model(), view.selectionModel()
    if model is None or selection is None:
        return
    rows = QItemSelectionModel.SelectionFlag.Rows
    current = view.currentIndex()
    if current.isValid():
        if not selection.hasSelection():
            selection.select(current, QItemSelectionModel.SelectionFlag.Select | rows)
    elif model.rowCount() > 0:
        first = model.index(0, 0)
        selection.setCurrentIndex(first, QItemSelectionModel.SelectionFlag.ClearAndSelect | rows)
        view.scrollTo(first)


def filter_edit(stem: str, noun: str, leads_to: QAbstractItemView | None = None) -> FilterEdit:
    """The filter box every list has: `<stem>Filter`, Ctrl+F in its placeholder, Down to the
    list it filters (`leads_to`, or set later)."""
    edit = FilterEdit()
    edit.leads_to = leads_to
    edit.setObjectName(f"{stem}Filter")
    edit.setPlaceholderText("Filter (Ctrl+F)")
    edit.setAccessibleName(f"Filter the {noun}")
    edit.setClearButtonEnabled(True)
    edit.setMaximumWidth(340)
    return edit


def cell_margin(view: QAbstractItemView) -> int:
    """What the item delegate adds around a cell's text."""
    return 2 * (view.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin) + 1)


class CopyTableView(QTableView):
    """A table view that copies whole selected rows as tab-separated text (its Ctrl+C action
    is set up by `DataTable`), treats Enter as activating the current row, and shows a cell's
    whole text in a tooltip where the column is too narrow for it (and the cell has no tooltip
    of its own)."""

    copied = Signal(int)

    def viewportEvent(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            index = self.indexAt(event.pos())
            if index.isValid() and not index.data(Qt.ItemDataRole.ToolTipRole):
                text = index.data(Qt.ItemDataRole.DisplayRole)
                rect = self.visualRect(index)
                needed = self.fontMetrics().horizontalAdvance(str(text)) + cell_margin(self)
                if text and needed > rect.width():
                    QToolTip.showText(event.globalPos(), str(text), self.viewport(), rect)
                    return True
                QToolTip.hideText()
        return super().viewportEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        # the "Copy rows" action's shortcut catches Ctrl+C first; a key event sent to the view
        # itself (accessibility tools, tests) lands here
        if event.matches(QKeySequence.StandardKey.Copy):
            self.copy_selection()
            event.accept()
            return
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and self.currentIndex().isValid():
            self.activated.emit(self.currentIndex())
            event.accept()
            return
        super().keyPressEvent(event)

    def selected_rows(self) -> list[int]:
        selection = self.selectionModel()
        if selection is None:
            return []
        return sorted({index.row() for index in selection.selectedIndexes()})

    def copy_selection(self, *, header: bool = False) -> int:
        model = self.model()
        rows = self.selected_rows()
        if not isinstance(model, TableModel) or not rows:
            return 0
        QGuiApplication.clipboard().setText(model.to_tsv(rows, header=header))
        self.copied.emit(len(rows))
        return len(rows)


class DataTable(QWidget):
    """A filter box and a count above a table. `stem` names every part (`<stem>Filter`,
    `<stem>Table`, `<stem>Count`, `<stem>ExportButton`) and the remembered layout."""

    #: a row was double-clicked or Enter was pressed on it; the row's object
    row_activated = Signal(object)
    #: the current row changed; the row's object, or None
    current_changed = Signal(object)

    def __init__(
        self,
        stem: str,
        model: TableModel[Any],
        *,
        noun: str = "rows",
        count_text: Callable[[int, int], str] | None = None,
        stretch_column: int | None = 0,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.stem = stem
        self.model = model
        self.noun = noun
        self._count_text = count_text or counted("row")
        self.setObjectName(f"{stem}DataTable")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)

        #: the row above the table (a window may add its own controls to it)
        self.bar = bar = QHBoxLayout()
        self.filter_edit = filter_edit(stem, noun)
        self.filter_edit.textChanged.connect(self.on_filter_edit_text_changed)
        bar.addWidget(self.filter_edit, 1)
        self.count_label = QLabel()
        self.count_label.setObjectName(f"{stem}Count")
        bar.addWidget(self.count_label, 1)
        bar.addStretch(0)
        self.export_button = QPushButton("Export CSV…")
        self.export_button.setObjectName(f"{stem}ExportButton")
        self.export_button.setAccessibleName(f"Export the {noun} shown to a CSV file")
        self.export_button.clicked.connect(self.on_export_button_clicked)
        bar.addWidget(self.export_button)
        layout.addLayout(bar)
        #: the filter box, count and Export's row (a window may add its own buttons to it)
        self.bar = bar

        self.view = CopyTableView()
        self.filter_edit.leads_to = self.view  # Down in the filter box
        self.view.setObjectName(f"{stem}Table")
        self.view.setAccessibleName(noun[:1].upper() + noun[1:])
        self.view.setModel(model)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.view.setAlternatingRowColors(True)
        self.view.setWordWrap(False)
        self.view.setTabKeyNavigation(False)  # Tab leaves the table, as in any form
        rows = self.view.verticalHeader()
        rows.hide()
        rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        rows.setDefaultSectionSize(self.view.fontMetrics().height() + 10)
        header = self.view.horizontalHeader()
        header.setObjectName(f"{stem}TableHeader")
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(False)
        header.setSortIndicatorShown(True)
        header.setSectionsMovable(True)
        header.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        header.customContextMenuRequested.connect(self.on_header_context_menu_requested)
        self._stretch_column = stretch_column
        # Qt's default indicator is the first column, descending: start ascending instead
        header.setSortIndicator(0, Qt.SortOrder.AscendingOrder)
        self.view.setSortingEnabled(True)
        # `activated` comes with a double-click (or a single click where the desktop says so)
        # and with Enter; `doubleClicked` as well would activate a double-clicked row twice
        self.view.activated.connect(self.on_view_activated)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        copy = QAction("Copy rows", self.view)
        copy.setShortcut(QKeySequence.StandardKey.Copy)
        copy.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        copy.triggered.connect(lambda: self.view.copy_selection())
        copy_titles = QAction("Copy rows with column titles", self.view)
        copy_titles.triggered.connect(lambda: self.view.copy_selection(header=True))
        export = QAction("Export CSV…", self.view)
        export.triggered.connect(self.on_export_button_clicked)
        # the header's menu in the table's own (reached with the Menu key too)
        self.columns_action = QAction("Columns", self.view)
        columns_menu = QMenu(self.view)
        columns_menu.aboutToShow.connect(partial(self._fill_column_menu, columns_menu))
        self.columns_action.setMenu(columns_menu)
        for action in (copy, copy_titles, export, self.columns_action):
            self.view.addAction(action)
        layout.addWidget(self.view, 1)

        selection = self.view.selectionModel()
        selection.currentRowChanged.connect(self.on_selection_current_row_changed)
        model.counts_changed.connect(self.on_model_counts_changed)
        model.modelReset.connect(self.on_model_reset)
        header.sortIndicatorChanged.connect(self._save_layout_soon)
        header.sectionResized.connect(self._save_layout_soon)
        header.sectionMoved.connect(self._save_layout_soon)
        self._save_timer = QTimer(self)
        self._save_timer.setSingleShot(True)
        self._save_timer.setInterval(400)
        self._save_timer.timeout.connect(self.save_layout)
        self._fitted = False
        self._export_task: asyncio.Task[int] | None = None
        #: what the Delete key presses (`delete_with`)
        self._delete_button: QPushButton | None = None
        self.restored = self.restore_layout()
        self.on_model_counts_changed(model.shown_count, model.total_count)

    # ------------------------------------------------------------------ layout memory

    @property
    def _settings_key(self) -> str:
        return f"tables/{self.stem}"

    def restore_layout(self) -> bool:
        """Column widths, order, visibility and the sort order as last left; True if there was
        any."""
        state = window_settings().value(self._settings_key)
        header = self.view.horizontalHeader()
        if state is None or not header.restoreState(state):
            self._default_columns()
            return False
        self._fitted = True
        column = header.sortIndicatorSection()
        if 0 <= column < self.model.columnCount():
            self.model.sort(column, header.sortIndicatorOrder())
        return True

    def _default_columns(self) -> None:
        """The columns as a new table has them: in the model's order, those the model marks
        `shown`, the stretching one taking the width left."""
        header = self.view.horizontalHeader()
        for column, spec in enumerate(self.model.columns):
            header.moveSection(header.visualIndex(column), column)
            header.setSectionHidden(column, not spec.shown)
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
        if self._stretch_column is not None:
            header.setSectionResizeMode(self._stretch_column, QHeaderView.ResizeMode.Stretch)

    # ------------------------------------------------------------------ the header's menu

    def column_menu(self) -> QMenu:
        """The header's menu: a check per column, in the order shown, that shows or hides it
        (the last column shown cannot be hidden), and "Reset columns"."""
        menu = QMenu(self)
        menu.setObjectName(f"{self.stem}ColumnMenu")
        self._fill_column_menu(menu)
        return menu

    def _fill_column_menu(self, menu: QMenu) -> None:
        menu.clear()
        header = self.view.horizontalHeader()
        shown = [c for c in range(header.count()) if not header.isSectionHidden(c)]
        for visual in range(header.count()):
            column = header.logicalIndex(visual)
            action = menu.addAction(self.model.columns[column].title)
            action.setCheckable(True)
            action.setChecked(column in shown)
            action.setEnabled(shown != [column])
            action.toggled.connect(partial(self.show_column, column))
        menu.addSeparator()
        reset = menu.addAction("Reset columns")
        reset.setToolTip("The columns' order, visibility and widths as in a new table")
        reset.triggered.connect(self.reset_columns)

    def on_header_context_menu_requested(self, pos: QPoint) -> None:
        menu = self.column_menu()
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        menu.popup(self.view.horizontalHeader().mapToGlobal(pos))

    def show_column(self, column: int, shown: bool) -> None:
        """Show or hide a column (remembered). One shown again has the width it had, or was
        fitted to while hidden (`fit_columns` fits hidden columns too)."""
        header = self.view.horizontalHeader()
        if not shown and header.count() - header.hiddenSectionCount() <= 1:
            return  # a table keeps one column
        header.setSectionHidden(column, not shown)
        self._save_layout_soon()

    def reset_columns(self) -> None:
        """The columns' order, visibility and widths as a new table has them (remembered)."""
        self._default_columns()
        self.fit_columns()
        self._save_layout_soon()

    def _save_layout_soon(self, *_: object) -> None:
        self._save_timer.start()

    def save_layout(self) -> None:
        settings = window_settings()
        settings.setValue(self._settings_key, self.view.horizontalHeader().saveState())
        settings.sync()

    def selected_items(self) -> list[Any]:
        """The selected rows' items, in the table's order: from the selection's row ranges
        (Ctrl+A on 100,000 rows is one range, where `selectedIndexes()` would make an index per
        cell)."""
        ranges = self.view.selectionModel().selection()
        spans = (ranges.at(i) for i in range(ranges.count()))
        rows = sorted({r for span in spans for r in range(span.top(), span.bottom() + 1)})
        return [self.model.row_at(r) for r in rows]

    def sort_by(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sort as a click on the column's header does (default order of a new table)."""
        self.view.sortByColumn(column, order)

    def fit_columns(self) -> None:
        """Every column but the stretching one fits its title and the first rows' texts (about
        a screenful), plus air. Measured here rather than with `resizeColumnToContents`, which
        measures every row while the view is hidden or not laid out yet (0.15 s for 100,000
        rows, as a loading page hands over to the table)."""
        header = self.view.horizontalHeader()
        metrics = self.view.fontMetrics()
        rows = range(min(self.model.rowCount(), FIT_ROWS))
        margin = cell_margin(self.view)
        for column in range(self.model.columnCount()):
            if column == self._stretch_column:
                continue
            width = self.model.columns[column].width
            if width is not None:
                self.view.setColumnWidth(column, metrics.averageCharWidth() * width)
                continue
            content = max((metrics.horizontalAdvance(self.model.text(r, column)) for r in rows),
                          default=0)  # fmt: skip
            title = header.sectionSizeFromContents(column).width()
            # a hidden column keeps the width for when it is shown
            self.view.setColumnWidth(column, max(content + margin, title) + COLUMN_PADDING)

    # ------------------------------------------------------------------ slots

    def on_filter_edit_text_changed(self, text: str) -> None:
        self.model.set_filter(text)

    def on_model_counts_changed(self, shown: int, total: int) -> None:
        if self.model.filter_pending:  # the rows are shown once the filter has found them
            self.count_label.setText(f"Filtering {total:,} {self.noun}…")
        else:
            self.count_label.setText(self._count_text(shown, total))
        self.export_button.setEnabled(shown > 0)

    def on_model_reset(self) -> None:
        self._fit_first_rows()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._fit_first_rows()

    def _fit_first_rows(self) -> None:
        """Fit the columns to the first rows loaded, once the table is on screen (its fonts
        are then the ones it shows)."""
        if not self._fitted and self.model.rowCount() > 0 and self.view.isVisible():
            self._fitted = True
            self.fit_columns()

    def on_view_activated(self, index: QModelIndex) -> None:
        if index.isValid():
            self.row_activated.emit(self.model.row_at(index.row()))

    def on_selection_current_row_changed(self, current: QModelIndex, _previous: object) -> None:
        self.current_changed.emit(self.model.row_at(current.row()) if current.isValid() else None)

    def on_export_button_clicked(self) -> None:
        path = ask_export_path(self, f"Export {self.noun}", f"{self.stem}.csv")
        if path:
            self.export(path)

    def export(self, path: str) -> asyncio.Task[int]:
        """Write the rows shown to `path` (on a worker thread); the count says when it is done."""
        self.export_button.setEnabled(False)
        task = asyncio.ensure_future(self.model.export_csv(path))
        self._export_task = task
        task.add_done_callback(lambda t: self._on_exported(t, path))
        return task

    def _on_exported(self, task: asyncio.Task[int], path: str) -> None:
        self.export_button.setEnabled(self.model.shown_count > 0)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            QMessageBox.warning(self, "Export failed", f"Could not write {path}:\n{exc}")
            return
        self.count_label.setText(
            f"{self._count_text(self.model.shown_count, self.model.total_count)}"
            f" · {task.result():,} exported"
        )

    def focus_filter(self) -> None:
        self.filter_edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.filter_edit.selectAll()

    def delete_with(self, button: QPushButton) -> None:
        """The Delete key in the table presses `button`, the window's Delete… of the selected
        rows, when it can be pressed (its confirmation follows, as after a click); disabled,
        it says why in its tooltip and the key does nothing. The filter box keeps its own
        Delete. Every window whose table deletes rows calls this: one mechanism for all."""
        self._delete_button = button
        shortcut = QShortcut(QKeySequence(QKeySequence.StandardKey.Delete), self.view)
        shortcut.setContext(Qt.ShortcutContext.WidgetShortcut)
        shortcut.activated.connect(self.on_delete_shortcut_activated)

    def on_delete_shortcut_activated(self) -> None:
        button = self._delete_button
        if button is not None and button.isEnabled():
            button.click()
