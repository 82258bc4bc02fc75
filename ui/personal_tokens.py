"""`PersonalTokensView`: the connected user's personal access tokens in a `DataTable`. Create
token… opens `CreatePatDialog` (description, expiry), then the confirmation, then the secret once
(`ui.token_secret.SecretDialog`: masked, Show, Copy, "Use for this connection", which puts it
into the connection's profile and reconnects with it). Delete… deletes the selected tokens after
`DeletePatsConfirmation`. With an admin API token the page says why it cannot (a personal
access token is needed: the registry's reason). Everything comes from `PersonalTokensModel`:
this window shows and forwards."""

from __future__ import annotations

from datetime import date
from typing import Any

from PySide6.QtCore import QDate, Qt
from PySide6.QtWidgets import (
    QDateEdit,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.viewmodels.personal_tokens import (
    DEFAULT_DAYS,
    DESCRIPTION_COLUMN,
    CreatePatPlan,
    DeletePatsPlan,
    PersonalTokensModel,
    pats_count_text,
)
from app.viewmodels.token_secrets import NewSecret
from app.viewmodels.tools import LoadPhase
from ui.confirmation import ConfirmationBox, ConfirmationFlow, show_outcome
from ui.palette import error_color, quiet
from ui.states import StatePanel
from ui.table import DataTable
from ui.token_secret import SecretDialog, SecretShown
from ui.tool_content import ToolContent
from ui.users import show_refreshing


class CreatePatDialog(QDialog):
    """The form of a new personal access token: a plan closes it (accepted, `plan`); a form the
    view-model refuses stays open with the reason under it."""

    def __init__(self, model: PersonalTokensModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.plan: CreatePatPlan | None = None
        self.setObjectName("personalTokensCreateDialog")
        self.setWindowTitle("Create personal access token")
        self.setWindowModality(Qt.WindowModality.WindowModal)
        form = QFormLayout()
        self.description_edit = QLineEdit()
        self.description_edit.setObjectName("personalTokensDescriptionEdit")
        self.description_edit.setPlaceholderText("what it is for, e.g. flagdesk on my laptop")
        form.addRow("&Description:", self.description_edit)
        self.expires_edit = QDateEdit(QDate.currentDate().addDays(DEFAULT_DAYS))
        self.expires_edit.setObjectName("personalTokensExpiresEdit")
        self.expires_edit.setCalendarPopup(True)
        self.expires_edit.setDisplayFormat("yyyy-MM-dd")
        form.addRow("&Expires on:", self.expires_edit)
        self.error_label = QLabel()
        self.error_label.setObjectName("personalTokensCreateError")
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet(f"color: {error_color(self.error_label)};")
        buttons = QDialogButtonBox()
        self.create_button = buttons.addButton("&Create…", QDialogButtonBox.ButtonRole.AcceptRole)
        self.create_button.setObjectName("personalTokensCreateConfirmButton")
        self.create_button.setDefault(True)
        buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.on_create_button_clicked)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error_label)
        layout.addWidget(buttons)
        self.resize(420, self.sizeHint().height())

    def on_create_button_clicked(self) -> None:
        d = self.expires_edit.date()
        try:
            self.plan = self.model.plan_create(self.description_edit.text(),
                                               date(d.year(), d.month(), d.day()))  # fmt: skip
        except ValueError as exc:
            self.error_label.setText(str(exc))
            return
        self.accept()


class CreatePatConfirmation(ConfirmationBox):
    def __init__(self, plan: CreatePatPlan, parent: QWidget | None = None) -> None:
        super().__init__("personalTokensCreateConfirmation", "Create personal access token",
                         plan.question, plan.lines(), "C&reate token", parent,
                         destructive=False)  # fmt: skip
        self.plan = plan


class DeletePatsConfirmation(ConfirmationBox):
    def __init__(self, plan: DeletePatsPlan, parent: QWidget | None = None) -> None:
        super().__init__("personalTokensDeleteConfirmation", "Delete personal access tokens",
                         plan.question, plan.lines(), "&Delete", parent)  # fmt: skip
        self.plan = plan


class PersonalTokensView(ToolContent):
    model: PersonalTokensModel
    states: StatePanel

    def __init__(self, session: Any, parent: QWidget | None = None) -> None:
        super().__init__(session, parent)
        self.setObjectName("personalTokensView")
        self.model = PersonalTokensModel(session, self)
        self.secrets = SecretShown("personalTokens", self.model.use_secret, self)
        self.create_dialog: CreatePatDialog | None = None

        body = QWidget()
        body.setObjectName("personalTokensBody")
        layout = QVBoxLayout(body)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        self.table = DataTable("personalTokens", self.model.table,
                               noun="personal access tokens", count_text=pats_count_text,
                               stretch_column=DESCRIPTION_COLUMN)  # fmt: skip
        layout.addWidget(self.table, 1)
        hint = QLabel(
            "Your own tokens: each acts as you, with your permissions. A secret is shown once, "
            "when its token is created; the list never holds one."
        )
        hint.setObjectName("personalTokensHint")
        hint.setWordWrap(True)
        quiet(hint)
        layout.addWidget(hint)

        actions = QHBoxLayout()
        self.create_button = QPushButton("&Create token…")
        self.create_button.setObjectName("personalTokensCreateButton")
        actions.addWidget(self.create_button)
        self.delete_button = QPushButton("Delete…")
        self.delete_button.setObjectName("personalTokensDeleteButton")
        self.delete_button.setAccessibleName("Delete the selected tokens")
        actions.addWidget(self.delete_button)
        self.outcome_label = QLabel()
        self.outcome_label.setObjectName("personalTokensOutcome")
        self.outcome_label.setAccessibleName("What the last change did")
        self.outcome_label.setWordWrap(True)
        self.outcome_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        actions.addWidget(self.outcome_label, 1)

        self.creations = ConfirmationFlow(
            self, lambda plan: CreatePatConfirmation(plan, self), self.model.create
        )
        self.deletions = ConfirmationFlow(
            self, lambda plan: DeletePatsConfirmation(plan, self), self.model.delete
        )
        self.states = StatePanel("personalTokens", body)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(6)
        outer.addLayout(actions)
        outer.addWidget(self.states, 1)

        self.table.delete_with(self.delete_button)
        self.table.view.selectionModel().selectionChanged.connect(self.on_table_selection_changed)
        self.model.table.modelReset.connect(self.on_table_selection_changed)
        self.create_button.clicked.connect(self.on_create_button_clicked)
        self.delete_button.clicked.connect(self.on_delete_button_clicked)
        self.model.status_changed.connect(self.on_model_status_changed)
        self.model.actions_changed.connect(self.on_model_actions_changed)
        self.model.outcome_changed.connect(self.on_model_outcome_changed)
        self.model.secret_created.connect(self.on_model_secret_created)
        self.model.use_finished.connect(self.on_model_use_finished)
        self.on_model_actions_changed()
        self.start_model()

    def on_model_phase_changed(self) -> None:
        if self.show_phase() is LoadPhase.READY:
            show_refreshing(self.table, self.model.busy)

    def on_model_status_changed(self, text: str) -> None:
        if text and self.states.state == StatePanel.LOADING:
            self.states.show_loading(text)
        elif text and self.model.acting:
            self.outcome_label.setStyleSheet("")
            self.outcome_label.setText(text)

    def on_table_selection_changed(self, *_: object) -> None:
        self.model.select(self.table.selected_items())

    def on_model_actions_changed(self) -> None:
        for button, reason, tip in (
            (self.create_button, self.model.create_reason, "Create a personal access token"),
            (self.delete_button, self.model.delete_reason, "Delete the selected tokens (Delete)"),
        ):
            button.setEnabled(not reason)
            button.setToolTip(reason or tip)

    def on_create_button_clicked(self) -> None:
        if self.create_dialog is not None:
            return
        dialog = CreatePatDialog(self.model, self)
        self.create_dialog = dialog
        dialog.finished.connect(self.on_create_dialog_finished)
        dialog.open()

    def on_create_dialog_finished(self, _result: int) -> None:
        dialog, self.create_dialog = self.create_dialog, None
        if dialog is None:
            return
        plan = dialog.plan
        dialog.deleteLater()
        self.creations.ask(plan)

    def on_delete_button_clicked(self) -> None:
        self.deletions.ask(self.model.plan_delete())

    @property
    def confirmation(self) -> QDialog | None:
        return self.creations.box or self.deletions.box

    def on_model_outcome_changed(self) -> None:
        show_outcome(self.outcome_label, self.model.outcome, self.model.outcome_error)

    def on_model_secret_created(self, new: NewSecret) -> None:
        self.secrets.show(new)

    @property
    def secret_dialog(self) -> SecretDialog | None:
        """The new secret's dialog open now, if any."""
        return self.secrets.dialog

    def on_model_use_finished(self, text: str) -> None:
        self.secrets.use_finished(text)

    def close_content(self) -> None:
        self.secrets.close()
        super().close_content()
