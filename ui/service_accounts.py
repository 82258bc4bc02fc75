"""`ServiceAccountsView`: the server's service accounts (Unleash Enterprise) in a `DataTable`
(username, name, root role, created, how many tokens, their last use; filter as you type), and
under it the tokens of the account selected (description, created, expires, last seen).

Create account… and Edit… (or a double-click on an account) open `AccountDialog` (username,
name, a root role of the server's, custom root roles included), then the confirmation; Delete
account… asks first, naming the tokens that go with the account. Create token… opens
`CreateTokenDialog` (description, expiry), then the confirmation, then the secret once
(`ui.token_secret.SecretDialog`: masked, Show, Copy; no "Use for this connection": the token is
for the machine that acts as the account). Delete tokens… (or the Delete key in the tokens'
table) deletes the selected tokens after `DeleteTokensConfirmation` (several: their number
typed). On open-source Unleash the page says service accounts need Unleash Enterprise.
Everything comes from `ServiceAccountsModel`: this window shows and forwards."""

from __future__ import annotations

from datetime import date
from typing import Any

from PySide6.QtCore import QDate, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDateEdit,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from app.text import plural
from app.viewmodels.service_accounts import (
    DEFAULT_DAYS,
    DEFAULT_ROLE,
    DESCRIPTION_COLUMN,
    NAME_COLUMN,
    AccountRow,
    CreateAccountPlan,
    CreateTokenPlan,
    DeleteAccountPlan,
    EditAccountPlan,
    ServiceAccountsModel,
    TypedTokenDeletion,
    accounts_count_text,
    tokens_count_text,
)
from app.viewmodels.token_secrets import NewSecret
from app.viewmodels.tools import LoadPhase
from ui.confirmation import ConfirmationBox, ConfirmationFlow, TypedConfirmation, show_outcome
from ui.palette import error_color, quiet
from ui.states import StatePanel
from ui.table import DataTable
from ui.token_secret import SecretDialog, SecretShown
from ui.tool_content import ToolContent
from ui.users import show_refreshing


def _error_label(name: str) -> QLabel:
    label = QLabel()
    label.setObjectName(name)
    label.setWordWrap(True)
    label.setStyleSheet(f"color: {error_color(label)};")
    return label


class AccountDialog(QDialog):
    """The form of a new service account (`editing` False) or of the one selected: its
    username (fixed once made: Unleash does not change it), name and root role. A plan closes
    it (accepted, `plan`); a form the view-model refuses stays open with the reason under it."""

    def __init__(self, model: ServiceAccountsModel, *, editing: bool,
                 parent: QWidget | None = None) -> None:  # fmt: skip
        super().__init__(parent)
        self.model = model
        self.editing = editing
        self.plan: CreateAccountPlan | EditAccountPlan | None = None
        account = model.current if editing else None
        self.setObjectName("serviceAccountsAccountDialog")
        self.setWindowTitle("Edit service account" if editing else "Create service account")
        self.setWindowModality(Qt.WindowModality.WindowModal)
        form = QFormLayout()
        self.username_edit = QLineEdit(account.username or "" if account else "")
        self.username_edit.setObjectName("serviceAccountsUsernameEdit")
        self.username_edit.setPlaceholderText("unique among users, e.g. ci-deployer")
        self.username_edit.setReadOnly(editing)
        if editing:
            self.username_edit.setToolTip("A service account's username cannot be changed")
        form.addRow("&Username:", self.username_edit)
        self.name_edit = QLineEdit(account.name or "" if account else "")
        self.name_edit.setObjectName("serviceAccountsNameEdit")
        self.name_edit.setPlaceholderText("what it is, e.g. CI deployer")
        form.addRow("&Name:", self.name_edit)
        self.role_combo = QComboBox()
        self.role_combo.setObjectName("serviceAccountsRoleCombo")
        for role_id, name in model.role_choices:
            self.role_combo.addItem(name, role_id)
        wanted = account.rootRole if account is not None else None
        index = self.role_combo.findData(wanted) if wanted is not None else -1
        if index < 0:
            index = max(self.role_combo.findText(DEFAULT_ROLE), 0)
        self.role_combo.setCurrentIndex(index)
        form.addRow("&Root role:", self.role_combo)
        note = QLabel("Its tokens can do what this root role can, on every project.")
        note.setWordWrap(True)
        quiet(note)
        form.addRow("", note)
        self.error_label = _error_label("serviceAccountsAccountError")
        buttons = QDialogButtonBox()
        self.save_button = buttons.addButton("&Save…" if editing else "&Create…",
                                             QDialogButtonBox.ButtonRole.AcceptRole)  # fmt: skip
        self.save_button.setObjectName("serviceAccountsAccountSaveButton")
        self.save_button.setDefault(True)
        buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.on_save_button_clicked)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error_label)
        layout.addWidget(buttons)
        (self.name_edit if editing else self.username_edit).setFocus()
        self.resize(440, self.sizeHint().height())

    def on_save_button_clicked(self) -> None:
        role = self.role_combo.currentData()
        try:
            if self.editing:
                self.plan = self.model.plan_edit(self.name_edit.text(), int(role))
            else:
                self.plan = self.model.plan_create(self.username_edit.text(),
                                                   self.name_edit.text(), int(role))  # fmt: skip
        except ValueError as exc:
            self.error_label.setText(str(exc))
            return
        self.accept()


class CreateTokenDialog(QDialog):
    """The form of a new token of the selected account: a description and the day it expires."""

    def __init__(self, model: ServiceAccountsModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.plan: CreateTokenPlan | None = None
        self.setObjectName("serviceAccountsTokenDialog")
        account = model.current
        whose = f"“{account.username}”" if account is not None else "the account"
        self.setWindowTitle(f"Create a token of {whose}")
        self.setWindowModality(Qt.WindowModality.WindowModal)
        form = QFormLayout()
        self.description_edit = QLineEdit()
        self.description_edit.setObjectName("serviceAccountsTokenDescriptionEdit")
        self.description_edit.setPlaceholderText("where it is used, e.g. GitHub Actions deploy")
        form.addRow("&Description:", self.description_edit)
        self.expires_edit = QDateEdit(QDate.currentDate().addDays(DEFAULT_DAYS))
        self.expires_edit.setObjectName("serviceAccountsTokenExpiresEdit")
        self.expires_edit.setCalendarPopup(True)
        self.expires_edit.setDisplayFormat("yyyy-MM-dd")
        form.addRow("&Expires on:", self.expires_edit)
        self.error_label = _error_label("serviceAccountsTokenError")
        buttons = QDialogButtonBox()
        self.create_button = buttons.addButton("&Create…", QDialogButtonBox.ButtonRole.AcceptRole)
        self.create_button.setObjectName("serviceAccountsTokenCreateButton")
        self.create_button.setDefault(True)
        buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.on_create_button_clicked)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error_label)
        layout.addWidget(buttons)
        self.resize(440, self.sizeHint().height())

    def on_create_button_clicked(self) -> None:
        d = self.expires_edit.date()
        expires = date(d.year(), d.month(), d.day())
        try:
            self.plan = self.model.plan_create_token(self.description_edit.text(), expires)
        except ValueError as exc:
            self.error_label.setText(str(exc))
            return
        self.accept()


class AccountConfirmation(ConfirmationBox):
    """The question before an account is created or changed."""

    def __init__(self, plan: CreateAccountPlan | EditAccountPlan,
                 parent: QWidget | None = None) -> None:  # fmt: skip
        creating = isinstance(plan, CreateAccountPlan)
        super().__init__("serviceAccountsAccountConfirmation",
                         "Create service account" if creating else "Edit service account",
                         plan.question, plan.lines(), "C&reate account" if creating else "&Save",
                         parent, destructive=False)  # fmt: skip
        self.plan = plan


class DeleteAccountConfirmation(ConfirmationBox):
    """Names the account, its root role and each token that goes with it."""

    def __init__(self, plan: DeleteAccountPlan, parent: QWidget | None = None) -> None:
        tokens = plural(len(plan.account.tokens), "token")
        button = f"&Delete account and {tokens}" if plan.account.tokens else "&Delete account"
        super().__init__("serviceAccountsDeleteConfirmation", "Delete service account",
                         plan.question, plan.lines(), button, parent)  # fmt: skip
        self.plan = plan


class CreateTokenConfirmation(ConfirmationBox):
    def __init__(self, plan: CreateTokenPlan, parent: QWidget | None = None) -> None:
        super().__init__("serviceAccountsTokenConfirmation", "Create service account token",
                         plan.question, plan.lines(), "C&reate token", parent,
                         destructive=False)  # fmt: skip
        self.plan = plan


class DeleteTokensConfirmation(TypedConfirmation):
    """Names each token; for several, their number is typed first."""

    def __init__(self, plan: TypedTokenDeletion, parent: QWidget | None = None) -> None:
        super().__init__("serviceAccountsTokensDelete", "Delete service account tokens", plan,
                         f"&Delete {plural(len(plan.tokens), 'token')}", parent)  # fmt: skip


class ServiceAccountsView(ToolContent):
    model: ServiceAccountsModel
    states: StatePanel

    def __init__(self, session: Any, parent: QWidget | None = None) -> None:
        super().__init__(session, parent)
        self.setObjectName("serviceAccountsView")
        self.model = ServiceAccountsModel(session, self)
        self.account_dialog: AccountDialog | None = None
        self.token_dialog: CreateTokenDialog | None = None
        self.secrets = SecretShown("serviceAccounts", lambda _new: None, self)

        # ---- the accounts
        accounts_part = QWidget()
        accounts_layout = QVBoxLayout(accounts_part)
        accounts_layout.setContentsMargins(0, 0, 0, 0)
        accounts_layout.setSpacing(6)
        self.table = DataTable("serviceAccounts", self.model.accounts, noun="service accounts",
                               count_text=accounts_count_text,
                               stretch_column=NAME_COLUMN)  # fmt: skip
        self.table.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        accounts_layout.addWidget(self.table, 1)

        # ---- the tokens of the account selected
        tokens_part = QWidget()
        tokens_part.setObjectName("serviceAccountsTokensPart")
        tokens_layout = QVBoxLayout(tokens_part)
        tokens_layout.setContentsMargins(0, 6, 0, 0)
        tokens_layout.setSpacing(6)
        tokens_bar = QHBoxLayout()
        self.tokens_title = QLabel()
        self.tokens_title.setObjectName("serviceAccountsTokensTitle")
        self.tokens_title.setTextFormat(Qt.TextFormat.PlainText)
        font = self.tokens_title.font()
        font.setBold(True)
        self.tokens_title.setFont(font)
        tokens_bar.addWidget(self.tokens_title, 1)
        self.create_token_button = QPushButton("Create &token…")
        self.create_token_button.setObjectName("serviceAccountsCreateTokenButton")
        tokens_bar.addWidget(self.create_token_button)
        self.delete_tokens_button = QPushButton("Delete t&okens…")
        self.delete_tokens_button.setObjectName("serviceAccountsDeleteTokensButton")
        self.delete_tokens_button.setAccessibleName("Delete the selected tokens")
        tokens_bar.addWidget(self.delete_tokens_button)
        tokens_layout.addLayout(tokens_bar)
        self.tokens_table = DataTable("serviceAccountTokens", self.model.tokens, noun="tokens",
                                      count_text=tokens_count_text,
                                      stretch_column=DESCRIPTION_COLUMN)  # fmt: skip
        tokens_layout.addWidget(self.tokens_table, 1)
        hint = QLabel(
            "A token acts as its account, with the account's root role. Its secret is shown "
            "once, when it is created; the lists never hold one."
        )
        hint.setObjectName("serviceAccountsHint")
        hint.setWordWrap(True)
        quiet(hint)
        tokens_layout.addWidget(hint)

        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.setObjectName("serviceAccountsSplitter")
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(accounts_part)
        self.splitter.addWidget(tokens_part)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)

        # ---- the accounts' buttons and what the last change did
        actions = QHBoxLayout()
        self.create_button = QPushButton("&Create account…")
        self.create_button.setObjectName("serviceAccountsCreateButton")
        actions.addWidget(self.create_button)
        self.edit_button = QPushButton("&Edit…")
        self.edit_button.setObjectName("serviceAccountsEditButton")
        self.edit_button.setAccessibleName("Edit the selected service account")
        actions.addWidget(self.edit_button)
        self.delete_button = QPushButton("&Delete account…")
        self.delete_button.setObjectName("serviceAccountsDeleteButton")
        self.delete_button.setAccessibleName("Delete the selected service account")
        actions.addWidget(self.delete_button)
        self.outcome_label = QLabel()
        self.outcome_label.setObjectName("serviceAccountsOutcome")
        self.outcome_label.setAccessibleName("What the last change did")
        self.outcome_label.setWordWrap(True)
        self.outcome_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        actions.addWidget(self.outcome_label, 1)

        self.account_changes = ConfirmationFlow(
            self, lambda plan: AccountConfirmation(plan, self), self.on_account_confirmed
        )
        self.deletions = ConfirmationFlow(
            self, lambda plan: DeleteAccountConfirmation(plan, self), self.model.delete
        )
        self.token_creations = ConfirmationFlow(
            self, lambda plan: CreateTokenConfirmation(plan, self), self.model.create_token
        )
        self.token_deletions = ConfirmationFlow(
            self, lambda plan: DeleteTokensConfirmation(plan, self), self.model.delete_tokens
        )
        self.states = StatePanel("serviceAccounts", self.splitter)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(6)
        outer.addLayout(actions)
        outer.addWidget(self.states, 1)

        self.table.delete_with(self.delete_button)
        self.tokens_table.delete_with(self.delete_tokens_button)
        self.table.view.selectionModel().selectionChanged.connect(
            self.on_accounts_selection_changed
        )
        self.model.accounts.modelReset.connect(self.on_accounts_reset)
        self.table.row_activated.connect(self.on_account_activated)
        self.tokens_table.view.selectionModel().selectionChanged.connect(
            self.on_tokens_selection_changed
        )
        self.model.tokens.modelReset.connect(self.on_tokens_selection_changed)
        self.create_button.clicked.connect(self.on_create_button_clicked)
        self.edit_button.clicked.connect(self.on_edit_button_clicked)
        self.delete_button.clicked.connect(self.on_delete_button_clicked)
        self.create_token_button.clicked.connect(self.on_create_token_button_clicked)
        self.delete_tokens_button.clicked.connect(self.on_delete_tokens_button_clicked)
        self.model.status_changed.connect(self.on_model_status_changed)
        self.model.actions_changed.connect(self.on_model_actions_changed)
        self.model.current_changed.connect(self.on_model_current_changed)
        self.model.outcome_changed.connect(self.on_model_outcome_changed)
        self.model.secret_created.connect(self.on_model_secret_created)
        self.on_model_current_changed()
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

    def on_accounts_selection_changed(self, *_: object) -> None:
        rows: list[AccountRow] = self.table.selected_items()
        self.model.choose(rows[0].id if rows else None)

    def on_accounts_reset(self) -> None:
        """The list read again (or filtered): the account chosen selected again, if shown."""
        chosen = self.model.current_id
        if chosen is None:
            return
        row = self.model.accounts.row_of(lambda r: r.id == chosen)
        if row >= 0:
            self.table.view.selectRow(row)

    def on_account_activated(self, row: AccountRow) -> None:
        self.model.choose(row.id)
        if self.edit_button.isEnabled():
            self.edit_button.click()

    def on_tokens_selection_changed(self, *_: object) -> None:
        self.model.select_tokens(self.tokens_table.selected_items())

    def on_model_current_changed(self) -> None:
        account = self.model.current
        if account is None:
            self.tokens_title.setText("Tokens: select a service account above")
        else:
            self.tokens_title.setText(f"Tokens of “{account.username or account.name}”")
        self.tokens_table.setEnabled(account is not None)

    def on_model_actions_changed(self) -> None:
        m = self.model
        for button, reason, tip in (
            (self.create_button, m.create_reason, "Create a service account"),
            (self.edit_button, m.edit_reason, "Change the selected account's name or root role"),
            (self.delete_button, m.delete_reason,
             "Delete the selected account and its tokens (Delete)"),
            (self.create_token_button, m.create_token_reason,
             "Create a token of the selected account (its secret shown once)"),
            (self.delete_tokens_button, m.delete_tokens_reason,
             "Delete the selected tokens (Delete)"),
        ):  # fmt: skip
            button.setEnabled(not reason)
            button.setToolTip(reason or tip)

    def on_create_button_clicked(self) -> None:
        self._open_account_dialog(editing=False)

    def on_edit_button_clicked(self) -> None:
        self._open_account_dialog(editing=True)

    def _open_account_dialog(self, *, editing: bool) -> None:
        if self.account_dialog is not None:
            return
        dialog = AccountDialog(self.model, editing=editing, parent=self)
        self.account_dialog = dialog
        dialog.finished.connect(self.on_account_dialog_finished)
        dialog.open()

    def on_account_dialog_finished(self, _result: int) -> None:
        dialog, self.account_dialog = self.account_dialog, None
        if dialog is None:
            return
        plan = dialog.plan
        dialog.deleteLater()
        self.account_changes.ask(plan)

    def on_account_confirmed(self, plan: CreateAccountPlan | EditAccountPlan) -> None:
        if isinstance(plan, CreateAccountPlan):
            self.model.create(plan)
        else:
            self.model.edit(plan)

    def on_delete_button_clicked(self) -> None:
        self.deletions.ask(self.model.plan_delete())

    def on_create_token_button_clicked(self) -> None:
        if self.token_dialog is not None:
            return
        dialog = CreateTokenDialog(self.model, self)
        self.token_dialog = dialog
        dialog.finished.connect(self.on_token_dialog_finished)
        dialog.open()

    def on_token_dialog_finished(self, _result: int) -> None:
        dialog, self.token_dialog = self.token_dialog, None
        if dialog is None:
            return
        plan = dialog.plan
        dialog.deleteLater()
        self.token_creations.ask(plan)

    def on_delete_tokens_button_clicked(self) -> None:
        self.token_deletions.ask(self.model.plan_delete_tokens())

    @property
    def confirmation(self) -> QDialog | None:
        """The confirmation open now, if any."""
        flows = (self.account_changes, self.deletions, self.token_creations,
                 self.token_deletions)  # fmt: skip
        return next((f.box for f in flows if f.box is not None), None)

    def on_model_outcome_changed(self) -> None:
        show_outcome(self.outcome_label, self.model.outcome, self.model.outcome_error)

    def on_model_secret_created(self, new: NewSecret) -> None:
        self.secrets.show(new)

    @property
    def secret_dialog(self) -> SecretDialog | None:
        """The new secret's dialog open now, if any."""
        return self.secrets.dialog

    def close_content(self) -> None:
        self.secrets.close()
        super().close_content()
