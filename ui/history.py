"""The History page (bound to `HistoryModel`): every change flagdesk made on the current
connection, newest first, in a `DataTable` (filter as you type, Ctrl+C, Export CSV…); the
changes in doubt are counted above it, with a button that checks them against the server; Undo…
takes back the selected change (confirmed first, like any change, and journaled); a button
opens the journal's folder (the journal file and the snapshots the entries name). Below the
table, what the server's event log recorded of the selected change, and a button that shows
those events in the Event log (`open_requested`). Shows and forwards; never reads the journal
itself."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QFont, QKeySequence, QShortcut
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from app.viewmodels.history import DETAILS_COLUMN, WHEN_COLUMN, HistoryModel, history_count_text
from ui.confirmation import ConfirmationBox, ConfirmationFlow, show_outcome
from ui.table import DataTable


class UndoConfirmation(ConfirmationBox):
    """Asks before an undo: the plan's question over its lines, Cancel the default."""

    def __init__(self, plan: Any, parent: QWidget | None = None) -> None:
        super().__init__("historyUndoConfirmation", "Undo a change", plan.question, plan.lines(),
                         "&Undo", parent)  # fmt: skip
        self.plan = plan


class HistoryPage(QWidget):
    #: show another tool with an item: the Event log with the selected change's events
    open_requested = Signal(str, object)

    def __init__(self, model: HistoryModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.setObjectName("historyPage")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 14, 16, 16)
        layout.setSpacing(8)

        title = QLabel("History")
        title.setObjectName("historyTitle")
        font = QFont(title.font())
        font.setPointSizeF(font.pointSizeF() * 1.35)
        font.setBold(True)
        title.setFont(font)
        layout.addWidget(title)
        self.summary_label = QLabel()
        self.summary_label.setObjectName("historySummary")
        self.summary_label.setWordWrap(True)
        self.summary_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.summary_label)

        bar = QHBoxLayout()
        self.doubt_label = QLabel()
        self.doubt_label.setObjectName("historyInDoubt")
        self.doubt_label.setWordWrap(True)
        bar.addWidget(self.doubt_label, 1)
        self.check_button = QPushButton("&Check changes in doubt")
        self.check_button.setObjectName("historyCheckButton")
        self.check_button.setToolTip(
            "Ask the server what became of each change whose answer never came "
            "(nothing is sent again)"
        )
        self.check_button.clicked.connect(self.on_check_button_clicked)
        bar.addWidget(self.check_button)
        self.undo_button = QPushButton("&Undo…")
        self.undo_button.setObjectName("historyUndoButton")
        self.undo_button.clicked.connect(self.on_undo_button_clicked)
        bar.addWidget(self.undo_button)
        self.folder_button = QPushButton("Open the journal &folder")
        self.folder_button.setObjectName("historyFolderButton")
        self.folder_button.setToolTip("The journal file and the snapshots its changes name")
        self.folder_button.clicked.connect(self.on_folder_button_clicked)
        bar.addWidget(self.folder_button)
        layout.addLayout(bar)
        self.outcome_label = QLabel()
        self.outcome_label.setObjectName("historyUndoOutcome")
        self.outcome_label.setWordWrap(True)
        self.outcome_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.outcome_label.hide()
        layout.addWidget(self.outcome_label)
        self.confirmations = ConfirmationFlow(
            self, lambda plan: UndoConfirmation(plan, self), self.model.undo
        )

        self.table = DataTable(
            "history",
            model.table,
            noun="changes",
            count_text=history_count_text,
            stretch_column=DETAILS_COLUMN,
        )
        if not self.table.restored:
            self.table.sort_by(WHEN_COLUMN, Qt.SortOrder.DescendingOrder)  # newest first
        layout.addWidget(self.table, 1)

        record = QHBoxLayout()
        self.record_label = QLabel()
        self.record_label.setObjectName("historyRecord")
        self.record_label.setWordWrap(True)
        self.record_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        record.addWidget(self.record_label, 1)
        self.record_button = QPushButton("Open in the &event log")
        self.record_button.setObjectName("historyRecordButton")
        self.record_button.setToolTip("Show the events the server recorded of this change")
        self.record_button.clicked.connect(self.on_record_button_clicked)
        record.addWidget(self.record_button)
        layout.addLayout(record)

        refresh = QShortcut(QKeySequence(QKeySequence.StandardKey.Refresh), self)
        refresh.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        refresh.activated.connect(self.refresh)

        model.entries_changed.connect(self.on_model_changed)
        model.busy_changed.connect(self.on_model_changed)
        model.check_finished.connect(self.on_model_changed)
        model.undo_changed.connect(self.on_model_undo_changed)
        model.undo_planned.connect(self.confirmations.ask)
        model.record_changed.connect(self.on_model_record_changed)
        self.table.view.selectionModel().selectionChanged.connect(self.on_table_selection_changed)
        model.table.modelReset.connect(self.on_table_selection_changed)
        self.on_model_changed()
        self.on_model_undo_changed()
        self.on_model_record_changed()

    def refresh(self) -> None:
        self.model.refresh()

    def focus_filter(self) -> None:
        self.table.filter_edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.table.filter_edit.selectAll()

    def on_model_changed(self, *_: object) -> None:
        self.summary_label.setText(self.model.summary())
        doubt = self.model.in_doubt
        checkable = self.model.checkable
        if self.model.busy:
            self.doubt_label.setText("Checking the changes in doubt against the server…")
        elif doubt:
            self.doubt_label.setText(self.model.doubt_text())
        else:
            self.doubt_label.setText(self.model.checked)
        self.doubt_label.setVisible(bool(self.doubt_label.text()))
        self.check_button.setVisible(bool(doubt))
        self.check_button.setEnabled(bool(checkable) and not self.model.busy)

    def on_table_selection_changed(self, *_: object) -> None:
        chosen = self.table.selected_items()
        self.model.select(chosen[0] if len(chosen) == 1 else None)

    def on_model_undo_changed(self) -> None:
        reason = self.model.undo_reason
        self.undo_button.setEnabled(not reason)
        self.undo_button.setToolTip(reason or "Take back the selected change (asks first)")
        show_outcome(self.outcome_label, self.model.undo_outcome, self.model.undo_error)
        self.outcome_label.setVisible(bool(self.outcome_label.text()))

    def on_model_record_changed(self) -> None:
        self.record_label.setText(self.model.record_text)
        self.record_label.setVisible(bool(self.model.record_text))
        self.record_button.setVisible(self.model.record_filters is not None)

    def on_record_button_clicked(self) -> None:
        if self.model.record_filters is not None:
            self.open_requested.emit("events", self.model.record_filters)

    def on_undo_button_clicked(self) -> None:
        self.model.plan_undo()

    def on_check_button_clicked(self) -> None:
        self.model.check_in_doubt()

    def on_folder_button_clicked(self) -> None:
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.model.folder_to_open())))
