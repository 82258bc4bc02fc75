"""`InactiveUsersView`: users with no login in 180 days, in a `DataTable` (sort, filter as you
type, Ctrl+C copies the selected rows, Export CSV…), most days inactive first. Double-click or
Enter on a row opens that user in the user editor. Everything comes from `InactiveUsersModel`."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from app.viewmodels.inactive_users import (
    DAYS_COLUMN,
    INACTIVE_DAYS,
    InactiveRow,
    InactiveUsersModel,
    inactive_count_text,
)
from app.viewmodels.users import LoadPhase, unavailable_reason
from ui.states import StatePanel
from ui.table import DataTable
from ui.tool_content import ToolContent
from ui.users import show_refreshing


class InactiveUsersView(ToolContent):
    def __init__(self, session: Any, parent: QWidget | None = None) -> None:
        super().__init__(session, parent)
        self.setObjectName("inactiveUsersView")
        self.model = InactiveUsersModel(session, self)

        body = QWidget()
        body.setObjectName("inactiveUsersBody")
        layout = QVBoxLayout(body)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        self.table = DataTable(
            "inactiveUsers",
            self.model.table,
            noun="inactive users",
            count_text=inactive_count_text,
            stretch_column=None,
        )
        if not self.table.restored:
            self.table.sort_by(DAYS_COLUMN, Qt.SortOrder.DescendingOrder)
        layout.addWidget(self.table, 1)
        self.hint = QLabel(
            "Double-click a user, or press Enter, to open them in the user editor. "
            "Days inactive count from the last login, or from the account's creation for "
            "users who never logged in after it."
        )
        self.hint.setObjectName("inactiveUsersHint")
        self.hint.setWordWrap(True)
        self.hint.setEnabled(False)  # a quiet, greyed remark
        layout.addWidget(self.hint)

        self.states = StatePanel("inactiveUsers", body)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.states)

        self.states.retry_requested.connect(self.on_states_retry_requested)
        self.table.row_activated.connect(self.on_table_row_activated)
        self.model.phase_changed.connect(self.on_model_phase_changed)
        self.model.status_changed.connect(self.on_model_status_changed)
        self.on_model_phase_changed()
        self.model.start()

    # ------------------------------------------------------------------ ToolContent

    def refresh(self) -> None:
        self.model.refresh()

    def close_content(self) -> None:
        self.model.close()

    # ------------------------------------------------------------------ slots

    def on_model_phase_changed(self) -> None:
        phase = self.model.phase
        if phase is LoadPhase.WAITING:
            self.states.show_loading("Waiting for the connection…")
        elif phase is LoadPhase.UNAVAILABLE:
            self.states.show_empty("Not available", unavailable_reason(self.model))
        elif phase is LoadPhase.LOADING:
            self.states.show_loading(self.model.status or "Loading inactive users…")
        elif phase is LoadPhase.FAILED:
            self.states.show_error("Could not load the inactive users", self.model.error)
        elif phase is LoadPhase.EMPTY:
            self.states.show_empty(
                "No inactive users",
                f"Every user has logged in within the last {INACTIVE_DAYS} days, or was "
                f"created less than {INACTIVE_DAYS} days ago. Service accounts are never "
                "listed.",
            )
        else:
            self.states.show_content()
            show_refreshing(self.table, self.model.busy)

    def on_model_status_changed(self, text: str) -> None:
        if text and self.states.state == StatePanel.LOADING:
            self.states.show_loading(text)

    def on_table_row_activated(self, row: object) -> None:
        if isinstance(row, InactiveRow):
            self.open_requested.emit("users", row.id)

    def on_states_retry_requested(self) -> None:
        self.model.refresh()
