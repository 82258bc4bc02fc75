"""`EventLogView`: the server's event log (issue 38), bound to `EventLogModel`.

At the top the server's filters (type, who, project, flag, environment: values separated by
commas; since and until as `flagdesk events` takes them), applied with Enter or Apply, Clear to
take every event; below them, while events are read, the progress with Stop. Then the events
in a `DataTable`, newest first, with its quick filter over what is loaded (each keystroke), the
count, and the next page read as the list is scrolled to its end; Load all reads the rest;
Export… writes what the filters show as CSV or JSON. Under the list the event chosen, as the
change it made: its heading, what it names (the project and user open in their windows; every
name copied with its button), its `preData` and `data` compared field by field (the Compare
window's colours, `ui.compare.ChangeDelegate`), and the field chosen (or the whole event) in
full, before and after side by side. This window shows and forwards."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.api.events import EventFilter
from app.api.models import Event
from app.viewmodels.events import (
    FILTER_FIELDS,
    SUMMARY_COLUMN,
    TIME_COLUMN,
    EventLogModel,
    ExportFormat,
    filters_from,
    texts_of,
)
from app.viewmodels.tools import LoadPhase
from ui.compare import ChangeDelegate
from ui.palette import error_color, quiet
from ui.states import StatePanel
from ui.table import DataTable, FilterEdit, ask_export_path
from ui.tool_content import ToolContent

STEM = "events"
EXPORT_FILTERS = "CSV files (*.csv);;JSON files (*.json)"
#: what each filter field takes, as its placeholder
PLACEHOLDERS = {
    "types": "feature-created, …",
    "users": "name, email or id",
    "projects": "project id",
    "flags": "flag name",
    "environments": "environment",
    "since": "2026-01-31, 7d, 12h",
    "until": "2026-01-31T14:00",
}


class EventTableView(DataTable):
    """The events' `DataTable`: its Export… writes the events (CSV or JSON, every field, what
    the filters show) through the view-model, not the table's cells."""

    def __init__(self, model: EventLogModel, parent: QWidget | None = None) -> None:
        self.log = model
        super().__init__(STEM, model.table, noun="events", count_text=model.count_text,
                         stretch_column=SUMMARY_COLUMN, parent=parent)  # fmt: skip
        self.export_button.setText("Export…")
        self.export_button.setAccessibleName("Export the events the filters show (CSV or JSON)")

    def on_export_button_clicked(self) -> None:
        path = ask_export_path(self, "Export events", "events.csv", EXPORT_FILTERS)
        if path:
            fmt: ExportFormat = "json" if path.lower().endswith(".json") else "csv"
            if self.log.export(Path(path), fmt) is not None:
                self.export_button.setEnabled(False)  # until it is written (`exported`)

    def on_model_counts_changed(self, shown: int, total: int) -> None:
        super().on_model_counts_changed(shown, total)
        self.export_button.setEnabled(total > 0 and not self.log.exporting)


class EventLogView(ToolContent):
    model: EventLogModel
    states: StatePanel

    def __init__(self, session: Any, parent: QWidget | None = None) -> None:
        super().__init__(session, parent)
        self.setObjectName("eventLogView")
        self.model = EventLogModel(session, self)
        m = self.model

        # ---- the server's filters
        filters = QGridLayout()
        filters.setHorizontalSpacing(8)
        filters.setVerticalSpacing(4)
        self.filter_edits: dict[str, FilterEdit] = {}
        fields = [*FILTER_FIELDS, ("since", "Since"), ("until", "Until")]
        for n, (name, label) in enumerate(fields):
            edit = FilterEdit()  # Down goes to the list, as from any filter box
            edit.setObjectName(f"{STEM}{name.capitalize()}Field")  # "…Filter": the list's box
            edit.setPlaceholderText(PLACEHOLDERS[name])
            edit.setAccessibleName(f"Only events of this {label.lower()}")
            edit.setClearButtonEnabled(True)
            edit.returnPressed.connect(self.apply_filters)
            title = QLabel(f"{label}:")
            title.setBuddy(edit)
            row, column = divmod(n, 4)
            filters.addWidget(title, row, column * 2)
            filters.addWidget(edit, row, column * 2 + 1)
            self.filter_edits[name] = edit
        self.apply_button = QPushButton("&Apply filters")
        self.apply_button.setObjectName(f"{STEM}ApplyButton")
        self.apply_button.setToolTip("Read the events these filters take (Enter in a field)")
        self.clear_button = QPushButton("C&lear")
        self.clear_button.setObjectName(f"{STEM}ClearButton")
        self.clear_button.setToolTip("Every event of the server")
        buttons = QHBoxLayout()
        buttons.addWidget(self.apply_button)
        buttons.addWidget(self.clear_button)
        filters.addLayout(buttons, 1, 7)
        for column in (1, 3, 5, 7):
            filters.setColumnStretch(column, 1)
        self.filter_error = QLabel()
        self.filter_error.setObjectName(f"{STEM}FilterError")
        self.filter_error.setWordWrap(True)
        self.filter_error.hide()

        # ---- reading: the progress, Stop, Load all
        self.progress_row = QWidget()
        progress = QHBoxLayout(self.progress_row)
        progress.setContentsMargins(0, 0, 0, 0)
        self.progress_label = QLabel()
        self.progress_label.setObjectName(f"{STEM}Progress")
        progress.addWidget(self.progress_label)
        self.progress_bar = QProgressBar()
        self.progress_bar.setObjectName(f"{STEM}ProgressBar")
        self.progress_bar.setTextVisible(False)
        self.progress_bar.setMaximumWidth(260)
        progress.addWidget(self.progress_bar)
        self.stop_button = QPushButton("&Stop")
        self.stop_button.setObjectName(f"{STEM}StopButton")
        self.stop_button.setToolTip("Stop reading: what was read stays")
        progress.addWidget(self.stop_button)
        progress.addStretch(1)
        self.progress_row.hide()

        # ---- the list
        body = QWidget()
        body.setObjectName(f"{STEM}Body")
        body_layout = QVBoxLayout(body)
        body_layout.setContentsMargins(0, 0, 0, 0)
        body_layout.setSpacing(6)
        self.table = EventTableView(m)
        for edit in self.filter_edits.values():
            edit.leads_to = self.table.view
        if not self.table.restored:
            self.table.sort_by(TIME_COLUMN, Qt.SortOrder.DescendingOrder)
        self.load_all_button = QPushButton("Load &all")
        self.load_all_button.setObjectName(f"{STEM}LoadAllButton")
        self.load_all_button.setToolTip("Read every event the filters take (for an export)")
        # beside the count and Export…, in the table's own bar
        self.table.bar.insertWidget(self.table.bar.count() - 1, self.load_all_button)

        # ---- the event opened
        details = QWidget()
        details.setObjectName(f"{STEM}Details")
        details_layout = QVBoxLayout(details)
        details_layout.setContentsMargins(0, 0, 0, 0)
        details_layout.setSpacing(4)
        self.heading = QLabel("Choose an event to see the change it made.")
        self.heading.setObjectName(f"{STEM}Heading")
        self.heading.setWordWrap(True)
        self.heading.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        font = self.heading.font()
        font.setBold(True)
        self.heading.setFont(font)
        details_layout.addWidget(self.heading)
        self.links_row = QWidget()
        self.links_row.setObjectName(f"{STEM}Links")
        self.links_layout = QHBoxLayout(self.links_row)
        self.links_layout.setContentsMargins(0, 0, 0, 0)
        self.links_layout.setSpacing(6)
        details_layout.addWidget(self.links_row)
        self.said_label = QLabel()
        self.said_label.setObjectName(f"{STEM}Said")
        quiet(self.said_label)
        details_layout.addWidget(self.said_label)
        self.changes_view = QTableView()
        self.changes_view.setObjectName(f"{STEM}Changes")
        self.changes_view.setAccessibleName("The event's fields before and after")
        self.changes_view.setModel(m.changes)
        self.changes_view.setItemDelegate(ChangeDelegate(self.changes_view))
        self.changes_view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.changes_view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.changes_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.changes_view.setAlternatingRowColors(True)
        self.changes_view.setWordWrap(False)
        self.changes_view.verticalHeader().hide()
        header = self.changes_view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        header.resizeSection(0, 170)
        header.resizeSection(1, 70)
        header.resizeSection(2, 120)
        values = QHBoxLayout()
        self.value_edits: dict[str, QPlainTextEdit] = {}
        self.value_titles: dict[str, QLabel] = {}
        for side, title_text in (("before", "Before (preData)"), ("after", "After (data)")):
            pane = QVBoxLayout()
            title = QLabel(title_text)
            quiet(title)
            pane.addWidget(title)
            text = QPlainTextEdit()
            text.setObjectName(f"{STEM}{side.capitalize()}Value")
            text.setReadOnly(True)
            text.setAccessibleName(f"{title_text} in full")
            text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
            pane.addWidget(text)
            values.addLayout(pane)
            self.value_edits[side] = text
            self.value_titles[side] = title
        self.value_heading = QLabel()
        self.value_heading.setObjectName(f"{STEM}ValueHeading")
        quiet(self.value_heading)
        self.change_split = change_split = QSplitter(Qt.Orientation.Horizontal)
        change_split.setObjectName(f"{STEM}ChangeSplitter")
        change_split.addWidget(self.changes_view)
        full = QWidget()
        full_layout = QVBoxLayout(full)
        full_layout.setContentsMargins(0, 0, 0, 0)
        full_layout.addWidget(self.value_heading)
        full_layout.addLayout(values, 1)
        change_split.addWidget(full)
        change_split.setStretchFactor(0, 3)
        change_split.setStretchFactor(1, 2)
        details_layout.addWidget(change_split, 1)

        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.setObjectName(f"{STEM}Splitter")
        self.splitter.addWidget(self.table)
        self.splitter.addWidget(details)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        body_layout.addWidget(self.splitter, 1)

        self.states = StatePanel(STEM, body)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(6)
        outer.addLayout(filters)
        outer.addWidget(self.filter_error)
        outer.addWidget(self.progress_row)
        outer.addWidget(self.states, 1)

        self.apply_button.clicked.connect(self.apply_filters)
        self.clear_button.clicked.connect(self.clear_filters)
        self.stop_button.clicked.connect(m.stop)
        self.load_all_button.clicked.connect(self.on_load_all_button_clicked)
        self.table.current_changed.connect(self.on_table_current_changed)
        self.table.row_activated.connect(self.on_table_current_changed)
        self.changes_view.selectionModel().currentRowChanged.connect(self.on_change_current)
        m.changes.modelReset.connect(self.on_change_current)
        m.opened_changed.connect(self.on_model_opened_changed)
        m.paging_changed.connect(self.on_model_paging_changed)
        m.progress_changed.connect(self.on_model_progress_changed)
        m.status_changed.connect(self.on_model_status_changed)
        m.exported.connect(self.on_model_exported)
        self.start_model()
        self.on_model_opened_changed()
        self.on_model_paging_changed()

    # ------------------------------------------------------------------ filters

    def filter_texts(self) -> dict[str, str]:
        return {name: edit.text() for name, edit in self.filter_edits.items()}

    def apply_filters(self) -> None:
        """Read the events the filter fields take (a wrong time said beside them)."""
        try:
            filters = filters_from(self.filter_texts())
        except ValueError as exc:
            self.filter_error.setText(str(exc))
            self.filter_error.setStyleSheet(f"color: {error_color(self)}")
            self.filter_error.show()
            return
        self.filter_error.hide()
        self.model.set_filters(filters)

    def clear_filters(self) -> None:
        for edit in self.filter_edits.values():
            edit.clear()
        self.apply_filters()

    def set_filter_texts(self, **texts: str) -> None:
        """Fill the filter fields (the others emptied) and apply them."""
        for name, edit in self.filter_edits.items():
            edit.setText(texts.get(name, ""))
        self.apply_filters()

    # ------------------------------------------------------------------ slots

    def on_model_phase_changed(self) -> None:
        self.show_phase()
        self.on_model_paging_changed()

    def show_phase(self) -> LoadPhase:
        phase = super().show_phase()
        usable = phase not in (LoadPhase.WAITING, LoadPhase.UNAVAILABLE)
        for edit in self.filter_edits.values():
            edit.setEnabled(usable)
        self.apply_button.setEnabled(usable)
        self.clear_button.setEnabled(usable)
        return phase

    def on_model_status_changed(self, text: str) -> None:
        if text and self.states.state == StatePanel.LOADING:
            self.states.show_loading(text)

    def on_model_paging_changed(self) -> None:
        m = self.model
        reading = m.loading_all or (m.busy and not m.loaded)
        self.progress_row.setVisible(reading)
        self.stop_button.setEnabled(reading)
        self.load_all_button.setEnabled(m.more and not m.loading_all)
        self.load_all_button.setToolTip(
            "Read every event the filters take (for an export)" if m.more
            else "Every event the filters take is read")  # fmt: skip
        self.on_model_progress_changed(m.table.total_count, m.total_or_unknown())
        self.table.on_model_counts_changed(m.table.shown_count, m.table.total_count)

    def on_model_progress_changed(self, loaded: int, total: int) -> None:
        m = self.model
        if not m.loaded:
            self.progress_label.setText(m.loading_text)
            self.progress_bar.setRange(0, 0)  # busy: no count yet
            return
        self.progress_label.setText(f"Reading the events… {m.progress_text}")
        if total > 0:
            self.progress_bar.setRange(0, total)
            self.progress_bar.setValue(min(loaded, total))
        else:
            self.progress_bar.setRange(0, 0)

    def on_load_all_button_clicked(self) -> None:
        self.model.load_all()

    def on_model_exported(self, text: str, failed: bool) -> None:
        """What the export did beside the count, or why not in a warning."""
        if failed:
            QMessageBox.warning(self, "Export failed", text)
        else:
            self.table.count_label.setText(text)
        self.table.export_button.setEnabled(self.model.table.total_count > 0)

    def on_table_current_changed(self, row: object) -> None:
        self.model.open_event(row if isinstance(row, Event) else None)

    def on_model_opened_changed(self) -> None:
        opened = self.model.opened
        while self.links_layout.count():
            item = self.links_layout.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        if opened is None:
            self.heading.setText("Choose an event to see the change it made.")
            self.said_label.clear()
            self.links_row.hide()
            self.change_split.hide()
            self.on_change_current()
            return
        self.heading.setText(opened.heading)
        self.said_label.setText(opened.said)
        for link in opened.links:
            label = QLabel(f"{link.what.capitalize()}: {link.name}")
            label.setObjectName(f"{STEM}Link{link.what.capitalize()}")
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            self.links_layout.addWidget(label)
            copy = QToolButton()
            copy.setText("Copy")
            copy.setObjectName(f"{STEM}Copy{link.what.capitalize()}")
            copy.setToolTip(f"Copy the {link.what}'s name")
            copy.setAccessibleName(f"Copy the {link.what}'s name")
            copy.clicked.connect(partial(QGuiApplication.clipboard().setText, link.name))
            self.links_layout.addWidget(copy)
            if link.tool:
                go = QToolButton()
                go.setText(link.go)
                go.setObjectName(f"{STEM}Open{link.what.capitalize()}")
                if link.tool == "events":
                    go.setToolTip(f"Show every event of the {link.what} here")
                    go.setAccessibleName(f"Show every event of the {link.what} {link.name}")
                else:
                    go.setToolTip(f"Open the {link.what} in its window")
                    go.setAccessibleName(f"Open the {link.what} {link.name}")
                go.clicked.connect(partial(self.open_requested.emit, link.tool, link.item))
                self.links_layout.addWidget(go)
            self.links_layout.addSpacing(12)
        self.links_layout.addStretch(1)
        self.links_row.setVisible(bool(opened.links))
        self.change_split.show()
        self.on_change_current()

    def on_change_current(self, current: QModelIndex | None = None, *_: object) -> None:
        row = current.row() if isinstance(current, QModelIndex) and current.isValid() else -1
        heading, before, after = self.model.details(row)
        self.value_heading.setText(heading)
        self.value_edits["before"].setPlainText(before)
        self.value_edits["after"].setPlainText(after)

    def open_item(self, item: Any) -> None:
        """Show the events an `EventFilter` takes (the History's "Open in the event log")."""
        if isinstance(item, EventFilter):
            self.set_filter_texts(**texts_of(item))

    def focus_filter(self) -> bool:
        return False  # the DataTable's quick filter (Ctrl+F)
