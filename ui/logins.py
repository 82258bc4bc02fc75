"""`LoginHistoryView`: login history (Unleash Enterprise; the sandbox) in a `DataTable`, newest
first: the filter box finds a user or an address as you type, "Failed only" keeps the failed
logins, Export CSV… and Export JSON… write what is shown. On open-source Unleash the page says
login history is Enterprise's (the tool's capability), and nothing is read. Everything comes
from `LoginHistoryModel`: this window shows and forwards."""

from __future__ import annotations

import asyncio
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QLabel,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.viewmodels.logins import (
    REASON_COLUMN,
    TIME_COLUMN,
    LoginHistoryModel,
)
from app.viewmodels.tools import LoadPhase
from ui.palette import quiet
from ui.states import StatePanel
from ui.table import DataTable, ask_export_path
from ui.tool_content import ToolContent
from ui.users import show_refreshing

JSON_FILTER = "JSON files (*.json);;All files (*)"


class LoginHistoryView(ToolContent):
    model: LoginHistoryModel
    states: StatePanel

    def __init__(self, session: Any, parent: QWidget | None = None) -> None:
        super().__init__(session, parent)
        self.setObjectName("loginsView")
        self.model = LoginHistoryModel(session, self)

        body = QWidget()
        body.setObjectName("loginsBody")
        layout = QVBoxLayout(body)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        self.table = DataTable(
            "logins",
            self.model.table,
            noun="login events",
            count_text=self.model.count_text,
            stretch_column=REASON_COLUMN,
        )
        self.table.filter_edit.setPlaceholderText("Filter by user or address (Ctrl+F)")
        if not self.table.restored:
            self.table.sort_by(TIME_COLUMN, Qt.SortOrder.DescendingOrder)
        # beside the table's filter box and its Export CSV…: the toggle and the JSON export
        self.failed_check = QCheckBox("Failed &only")
        self.failed_check.setObjectName("loginsFailedOnly")
        self.failed_check.setToolTip("Show only the logins that failed")
        self.json_button = QPushButton("Export JSON…")
        self.json_button.setObjectName("loginsExportJsonButton")
        self.json_button.setAccessibleName("Export the login events shown to a JSON file")
        bar = self.table.bar
        bar.insertWidget(bar.indexOf(self.table.filter_edit) + 1, self.failed_check)
        bar.addWidget(self.json_button)
        layout.addWidget(self.table, 1)
        self.hint = QLabel(
            "The server keeps 14 days of logins and logouts. The filter finds a user or an "
            "address as you type; the exports write what is shown."
        )
        self.hint.setObjectName("loginsHint")
        self.hint.setWordWrap(True)
        quiet(self.hint)
        layout.addWidget(self.hint)

        self.states = StatePanel("logins", body)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.states, 1)

        self._json_task: asyncio.Task[int] | None = None
        self.failed_check.toggled.connect(self.on_failed_check_toggled)
        self.json_button.clicked.connect(self.on_json_button_clicked)
        self.model.table.counts_changed.connect(self.on_table_counts_changed)
        self.model.status_changed.connect(self.on_model_status_changed)
        self.on_table_counts_changed(self.model.table.shown_count, self.model.table.total_count)
        self.start_model()

    # ------------------------------------------------------------------ slots

    def on_model_phase_changed(self) -> None:
        if self.show_phase() is LoadPhase.READY:
            show_refreshing(self.table, self.model.busy)

    def on_model_status_changed(self, text: str) -> None:
        if text and self.states.state == StatePanel.LOADING:
            self.states.show_loading(text)

    def on_failed_check_toggled(self, on: bool) -> None:
        self.model.set_failed_only(on)

    def on_table_counts_changed(self, shown: int, _total: int) -> None:
        self.json_button.setEnabled(shown > 0 and self._json_task is None)

    def on_json_button_clicked(self) -> None:
        path = ask_export_path(self, "Export login events", "logins.json", JSON_FILTER)
        if path:
            self.export_json(path)

    def export_json(self, path: str) -> asyncio.Task[int]:
        """Write the events shown to `path` as JSON; the count says when it is done."""
        self.json_button.setEnabled(False)
        task = asyncio.ensure_future(self.model.export_json(path))
        self._json_task = task
        task.add_done_callback(lambda t: self._on_json_exported(t, path))
        return task

    def _on_json_exported(self, task: asyncio.Task[int], path: str) -> None:
        self._json_task = None
        self.json_button.setEnabled(self.model.table.shown_count > 0)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            QMessageBox.warning(self, "Export failed", f"Could not write {path}:\n{exc}")
            return
        table = self.model.table
        self.table.count_label.setText(
            f"{self.model.count_text(table.shown_count, table.total_count)}"
            f" · {task.result():,} exported"
        )
