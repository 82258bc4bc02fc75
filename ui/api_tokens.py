"""`ApiTokensView`: the server's API tokens in a `DataTable` (sort, filter as you type, Ctrl+C,
Export CSV…), secrets masked (their last four characters). Create token… opens
`CreateTokenDialog` (name, type, projects, environment, expiry), then the confirmation, then
the secret once (`ui.token_secret.SecretDialog`: masked, Show, Copy, "Use for this connection's
metrics uploads"). Delete… (or the Delete key) deletes the selected tokens after
`DeleteTokensConfirmation` names each and where it was last seen; while several are deleted the
line beside the buttons counts them and Stop ends the deletion before its next request. What an
action did stays in that line, on this connection only. Everything comes from `ApiTokensModel`:
this window shows and forwards."""

from __future__ import annotations

from datetime import date
from typing import Any

from PySide6.QtCore import QDate, Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDateEdit,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.text import plural
from app.viewmodels.api_tokens import (
    DEFAULT_ENVIRONMENT,
    NAME_COLUMN,
    ApiTokenCreation,
    ApiTokensModel,
    StoppableDeletion,
    tokens_count_text,
)
from app.viewmodels.token_secrets import NewSecret
from app.viewmodels.tools import LoadPhase
from ui.confirmation import ConfirmationBox, ConfirmationFlow, TypedConfirmation, show_outcome
from ui.palette import error_color, quiet, show_unticked_boxes
from ui.states import StatePanel
from ui.table import DataTable
from ui.token_secret import SecretDialog, SecretShown
from ui.tool_content import ToolContent
from ui.users import show_refreshing

#: the expiry a new token's form offers first, in days from today (off until ticked)
DEFAULT_DAYS = 90


class CreateTokenDialog(QDialog):
    """The form of a new API token. Create… asks the view-model for the plan: a form it refuses
    stays open with the reason under it; a plan closes it (accepted) and is `plan`."""

    def __init__(self, model: ApiTokensModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.plan: ApiTokenCreation | None = None
        self.setObjectName("apiTokensCreateDialog")
        self.setWindowTitle("Create API token")
        self.setWindowModality(Qt.WindowModality.WindowModal)
        form = QFormLayout()
        self.name_edit = QLineEdit()
        self.name_edit.setObjectName("apiTokensNameEdit")
        self.name_edit.setPlaceholderText("what uses it, e.g. checkout-service")
        form.addRow("&Name:", self.name_edit)
        self.type_combo = QComboBox()
        self.type_combo.setObjectName("apiTokensTypeCombo")
        self.type_combo.addItems(model.type_choices)
        form.addRow("&Type:", self.type_combo)
        self.projects_list = QListWidget()
        self.projects_list.setObjectName("apiTokensProjectsList")
        self.projects_list.setAccessibleName("Projects (none ticked: all projects)")
        for project in model.projects:
            item = QListWidgetItem(project)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Unchecked)
            self.projects_list.addItem(item)
        self.projects_list.setMaximumHeight(120)
        show_unticked_boxes(self.projects_list)
        self.projects_edit = QLineEdit()
        self.projects_edit.setObjectName("apiTokensProjectsEdit")
        self.projects_edit.setPlaceholderText("project ids, separated by commas (none: all)")
        projects = QVBoxLayout()
        projects.addWidget(self.projects_list if model.projects else self.projects_edit)
        note = QLabel("None ticked: every project, those made later too."
                      if model.projects else "The server did not list its projects.")  # fmt: skip
        quiet(note)
        projects.addWidget(note)
        projects_label = QLabel("&Projects:")
        projects_label.setBuddy(self.projects_list if model.projects else self.projects_edit)
        form.addRow(projects_label, projects)
        self.environment_combo = QComboBox()
        self.environment_combo.setObjectName("apiTokensEnvironmentCombo")
        self.environment_combo.setEditable(True)
        self.environment_combo.addItems([DEFAULT_ENVIRONMENT, "production"])
        form.addRow("&Environment:", self.environment_combo)
        expiry = QHBoxLayout()
        self.expires_check = QCheckBox("E&xpires on")
        self.expires_check.setObjectName("apiTokensExpiresCheck")
        self.expires_edit = QDateEdit(QDate.currentDate().addDays(DEFAULT_DAYS))
        self.expires_edit.setObjectName("apiTokensExpiresEdit")
        self.expires_edit.setCalendarPopup(True)
        self.expires_edit.setDisplayFormat("yyyy-MM-dd")
        self.expires_edit.setEnabled(False)
        self.expires_check.toggled.connect(self.expires_edit.setEnabled)
        expiry.addWidget(self.expires_check)
        expiry.addWidget(self.expires_edit)
        expiry.addStretch(1)
        form.addRow("Expiry:", expiry)
        self.error_label = QLabel()
        self.error_label.setObjectName("apiTokensCreateError")
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet(f"color: {error_color(self.error_label)};")
        buttons = QDialogButtonBox()
        self.create_button = buttons.addButton("&Create…", QDialogButtonBox.ButtonRole.AcceptRole)
        self.create_button.setObjectName("apiTokensCreateConfirmButton")
        self.create_button.setDefault(True)
        buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.on_create_button_clicked)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error_label)
        layout.addWidget(buttons)
        self.resize(460, self.sizeHint().height())

    def projects(self) -> list[str]:
        if self.model.projects:
            items = (self.projects_list.item(i) for i in range(self.projects_list.count()))
            return [i.text() for i in items if i.checkState() == Qt.CheckState.Checked]
        return [p for p in self.projects_edit.text().split(",") if p.strip()]

    def expires(self) -> date | None:
        if not self.expires_check.isChecked():
            return None
        d = self.expires_edit.date()
        return date(d.year(), d.month(), d.day())

    def on_create_button_clicked(self) -> None:
        try:
            self.plan = self.model.plan_create(
                self.name_edit.text(), self.type_combo.currentText(), self.projects(),
                self.environment_combo.currentText(), self.expires(),
            )  # fmt: skip
        except ValueError as exc:
            self.error_label.setText(str(exc))
            return
        self.accept()


class CreateTokenConfirmation(ConfirmationBox):
    def __init__(self, plan: ApiTokenCreation, parent: QWidget | None = None) -> None:
        super().__init__("apiTokensCreateConfirmation", "Create API token", plan.question,
                         plan.lines(), "C&reate token", parent, destructive=False)  # fmt: skip
        self.plan = plan


class DeleteTokensConfirmation(TypedConfirmation):
    """Names each token and where it was last seen (`ApiTokenDeletion.lines()`); for several,
    their number is typed first."""

    def __init__(self, plan: StoppableDeletion, parent: QWidget | None = None) -> None:
        super().__init__("apiTokensDelete", "Delete API tokens", plan,
                         f"&Delete {plural(len(plan.tokens), 'token')}", parent)  # fmt: skip


class ApiTokensView(ToolContent):
    model: ApiTokensModel
    states: StatePanel

    def __init__(self, session: Any, parent: QWidget | None = None) -> None:
        super().__init__(session, parent)
        self.setObjectName("apiTokensView")
        self.model = ApiTokensModel(session, self)
        self.secrets = SecretShown("apiTokens", self.model.use_secret, self)
        self.create_dialog: CreateTokenDialog | None = None

        body = QWidget()
        body.setObjectName("apiTokensBody")
        layout = QVBoxLayout(body)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        self.table = DataTable(
            "apiTokens", self.model.table, noun="API tokens",
            count_text=tokens_count_text, stretch_column=NAME_COLUMN,
        )  # fmt: skip
        layout.addWidget(self.table, 1)
        hint = QLabel(
            "Secrets show their last four characters only: the whole secret is shown once, when "
            "the token is created. Select tokens and press Delete to revoke them."
        )
        hint.setObjectName("apiTokensHint")
        hint.setWordWrap(True)
        quiet(hint)
        layout.addWidget(hint)

        actions = QHBoxLayout()
        self.create_button = QPushButton("&Create token…")
        self.create_button.setObjectName("apiTokensCreateButton")
        actions.addWidget(self.create_button)
        self.delete_button = QPushButton("Delete…")
        self.delete_button.setObjectName("apiTokensDeleteButton")
        self.delete_button.setAccessibleName("Delete the selected tokens")
        actions.addWidget(self.delete_button)
        self.stop_button = QPushButton("S&top")
        self.stop_button.setObjectName("apiTokensStopButton")
        self.stop_button.setToolTip("Stop the deletion before its next token")
        self.stop_button.hide()
        actions.addWidget(self.stop_button)
        self.outcome_label = QLabel()
        self.outcome_label.setObjectName("apiTokensOutcome")
        self.outcome_label.setAccessibleName("What the last change did")
        self.outcome_label.setWordWrap(True)
        self.outcome_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        actions.addWidget(self.outcome_label, 1)

        self.creations = ConfirmationFlow(
            self, lambda plan: CreateTokenConfirmation(plan, self), self.model.create
        )
        self.deletions = ConfirmationFlow(
            self, lambda plan: DeleteTokensConfirmation(plan, self), self.model.delete
        )
        self.states = StatePanel("apiTokens", body)
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
        self.stop_button.clicked.connect(self.model.cancel_delete)
        self.model.status_changed.connect(self.on_model_status_changed)
        self.model.actions_changed.connect(self.on_model_actions_changed)
        self.model.outcome_changed.connect(self.on_model_outcome_changed)
        self.model.secret_created.connect(self.on_model_secret_created)
        self.model.use_finished.connect(self.on_model_use_finished)
        self.on_model_actions_changed()
        self.start_model()

    # ------------------------------------------------------------------ slots

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
            (self.create_button, self.model.create_reason, "Create an API token"),
            (self.delete_button, self.model.delete_reason,
             "Delete (revoke) the selected tokens (Delete)"),
        ):  # fmt: skip
            button.setEnabled(not reason)
            button.setToolTip(reason or tip)
        self.stop_button.setVisible(self.model.deleting)

    def on_create_button_clicked(self) -> None:
        if self.create_dialog is not None:
            return
        dialog = CreateTokenDialog(self.model, self)
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
        """The confirmation open now, if any."""
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
