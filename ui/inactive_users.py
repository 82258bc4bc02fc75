"""`InactiveUsersView`: users with no login in 180 days, in a `DataTable` (sort, filter as you
type, Ctrl+C copies the selected rows, Export CSV…), most days inactive first. Double-click or
Enter on a row opens that user in the user editor. Delete… (or the Delete key) deletes the
selected users after `DeleteConfirmation` says exactly what will happen; what it did is said
beside the button, above the list (so it stays in sight when the list is emptied), on this
connection only. Everything comes from `InactiveUsersModel`: this window shows and forwards."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.text import plural
from app.viewmodels.inactive_users import (
    DAYS_COLUMN,
    EMAIL_COLUMN,
    DeletePlan,
    InactiveRow,
    InactiveUsersModel,
    inactive_count_text,
)
from app.viewmodels.tools import LoadPhase
from ui.confirmation import ConfirmationFlow, TypedConfirmation, show_outcome
from ui.palette import quiet
from ui.states import StatePanel
from ui.table import DataTable
from ui.tool_content import ToolContent
from ui.users import show_refreshing


class DeleteConfirmation(TypedConfirmation):
    """Asks before inactive users are deleted, naming exactly what will change
    (`DeletePlan.lines()`); for more than one user the number of users is typed first
    (`TypedConfirmation`). "Delete N users" is reached with Tab or Alt+D."""

    def __init__(self, plan: DeletePlan, parent: QWidget | None = None) -> None:
        super().__init__("inactiveUsersDelete", "Delete inactive users", plan,
                         f"&Delete {plural(plan.count, 'user')}", parent)  # fmt: skip
        self.delete_button = self.action_button
        self.delete_button.setObjectName("inactiveUsersConfirmDeleteButton")


class InactiveUsersView(ToolContent):
    model: InactiveUsersModel
    states: StatePanel

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
            stretch_column=EMAIL_COLUMN,
        )
        if not self.table.restored:
            self.table.sort_by(DAYS_COLUMN, Qt.SortOrder.DescendingOrder)
        layout.addWidget(self.table, 1)
        # above the list's states: what a deletion did stays in sight when it empties the list
        actions = QHBoxLayout()
        self.delete_button = QPushButton("Delete…")
        self.delete_button.setObjectName("inactiveUsersDeleteButton")
        self.delete_button.setAccessibleName("Delete the selected users")
        actions.addWidget(self.delete_button)
        self.outcome_label = QLabel()
        self.outcome_label.setObjectName("inactiveUsersOutcome")
        self.outcome_label.setAccessibleName("What the last deletion did")
        self.outcome_label.setWordWrap(True)
        self.outcome_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        actions.addWidget(self.outcome_label, 1)
        self.confirmations = ConfirmationFlow(
            self, lambda plan: DeleteConfirmation(plan, self), self.model.delete
        )
        self.hint = QLabel(
            "Double-click a user, or press Enter, to open them in the user editor. Select users "
            "and press Delete to delete them. Days inactive count from the last login, or from "
            "the account's creation for users who never logged in after it."
        )
        self.hint.setObjectName("inactiveUsersHint")
        self.hint.setWordWrap(True)
        quiet(self.hint)  # a remark, in the palette's quieter text colour
        layout.addWidget(self.hint)

        self.states = StatePanel("inactiveUsers", body)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(6)
        outer.addLayout(actions)
        outer.addWidget(self.states, 1)

        self.table.delete_with(self.delete_button)  # the Delete key

        self.table.row_activated.connect(self.on_table_row_activated)
        self.table.view.selectionModel().selectionChanged.connect(self.on_table_selection_changed)
        self.model.table.modelReset.connect(self.on_table_selection_changed)
        self.delete_button.clicked.connect(self.on_delete_button_clicked)
        self.model.status_changed.connect(self.on_model_status_changed)
        self.model.delete_changed.connect(self.on_model_delete_changed)
        self.model.outcome_changed.connect(self.on_model_outcome_changed)
        self.on_model_delete_changed()
        self.start_model()

    # ------------------------------------------------------------------ slots

    def on_model_phase_changed(self) -> None:
        if self.show_phase() is LoadPhase.READY:
            show_refreshing(self.table, self.model.busy)

    def on_model_status_changed(self, text: str) -> None:
        if text and self.states.state == StatePanel.LOADING:
            self.states.show_loading(text)
        elif text and self.model.deleting:
            self.outcome_label.setText(text)

    def on_table_selection_changed(self, *_: object) -> None:
        self.model.select(self.table.selected_items())

    def on_model_delete_changed(self) -> None:
        reason = self.model.delete_reason
        self.delete_button.setEnabled(not reason)
        self.delete_button.setToolTip(reason or "Delete the selected users (Delete)")

    def on_delete_button_clicked(self) -> None:
        self.confirmations.ask(self.model.plan_delete())

    @property
    def confirmation(self) -> DeleteConfirmation | None:
        """The confirmation open now, if any."""
        box = self.confirmations.box
        return box if isinstance(box, DeleteConfirmation) else None

    def on_model_outcome_changed(self) -> None:
        show_outcome(self.outcome_label, self.model.outcome, self.model.outcome_error)

    def on_table_row_activated(self, row: object) -> None:
        if isinstance(row, InactiveRow):
            self.open_requested.emit("users", row.id)
