"""`UserEditor`: the user editor's window. The users on the left (a `DataTable`: search by name,
username or email), the selected user's form on the right, in a splitter whose state is
remembered. Everything it shows comes from `UserEditorModel`; this module only shows and forwards.

Keys: Enter in a field asks to save (when something changed and the form is valid), and Enter
again saves: the Save confirmation names each change and its Save is the default button;
Escape reverts, F5 reloads the list (from the page), Ctrl+F goes to the search box.

Right after a save, Undo puts the previous values back. New user… opens `CreateUserDialog`;
Delete… and Reset password… act on the selected user. Every change is confirmed first
(`ConfirmationBox`, Cancel the default but for Save) and goes through `app.actions.users`
(journaled). Each of
these buttons stays visible when it cannot be used, disabled, its tooltip saying why.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QEvent, QItemSelectionModel, Qt, QTimer, Signal
from PySide6.QtGui import QFont, QGuiApplication, QKeyEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QFrame,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from app.api.models import User
from app.registry import CREATE_USER, DELETE_USER, RESET_PASSWORD
from app.text import counted
from app.viewmodels.table import MARK, cell_text
from app.viewmodels.tools import LoadPhase
from app.viewmodels.users import (
    EMAIL,
    NAME,
    ROOT_ROLE,
    CreatePlan,
    DeleteUserPlan,
    UserEditorModel,
    user_label,
)
from ui.confirmation import ConfirmationBox
from ui.link_field import LinkField
from ui.palette import error_color, quiet
from ui.settings import window_settings
from ui.states import StatePanel
from ui.table import DataTable
from ui.tool_content import ToolContent

SPLITTER_KEY = "users/splitter"
#: the list's column that stretches (the email), and the form's width at first
EMAIL_COLUMN, FORM_WIDTH = 2, 280


def show_refreshing(table: DataTable, busy: bool) -> None:
    """While a loaded table loads again its count says so; afterwards the count comes back."""
    if busy:
        table.count_label.setText("Refreshing…")
    elif table.count_label.text() == "Refreshing…":
        table.on_model_counts_changed(table.model.shown_count, table.model.total_count)


def _wrapping_label(name: str, *, selectable: bool = True) -> QLabel:
    label = QLabel()
    label.setObjectName(name)
    label.setWordWrap(True)
    if selectable:
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


def _button(row: QHBoxLayout, text: str, name: str, clicked: Callable[[], None]) -> QPushButton:
    """A button added to `row`, named, calling `clicked`."""
    button = QPushButton(text)
    button.setObjectName(name)
    button.clicked.connect(clicked)
    row.addWidget(button)
    return button


class UserForm(QWidget):
    """The form's frame: Enter (from a field) asks to save, Escape to revert. A field that does
    not take Enter itself passes it here; the Save and Revert buttons take it themselves."""

    save_requested = Signal()
    revert_requested = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.save_requested.emit()
            event.accept()
            return
        if event.key() == Qt.Key.Key_Escape:
            self.revert_requested.emit()
            event.accept()
            return
        super().keyPressEvent(event)


class CreateUserDialog(QDialog):
    """The new user's form: email, name, username, root role, whether to send the welcome email.
    Create asks the window to confirm and create; the form stays as typed until the server has
    created the user (a refusal is shown under it), and shows the wait when the server limits
    how many users are created a minute."""

    create_requested = Signal()

    def __init__(self, roles: list[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("usersCreateDialog")
        self.setWindowTitle("New user")
        self.setWindowModality(Qt.WindowModality.WindowModal)
        form = QFormLayout(self)
        self.email_edit = QLineEdit()
        self.email_edit.setObjectName("usersCreateEmailEdit")
        self.email_edit.setAccessibleName("Email")
        self.email_edit.setPlaceholderText("name@example.com")
        self.name_edit = QLineEdit()
        self.name_edit.setObjectName("usersCreateNameEdit")
        self.name_edit.setAccessibleName("Name")
        self.username_edit = QLineEdit()
        self.username_edit.setObjectName("usersCreateUsernameEdit")
        self.username_edit.setAccessibleName("Username")
        self.role_combo = QComboBox()
        self.role_combo.setObjectName("usersCreateRoleCombo")
        self.role_combo.setAccessibleName("Root role")
        self.role_combo.addItems(roles)
        if "Viewer" in roles:
            self.role_combo.setCurrentText("Viewer")
        self.send_email = QCheckBox("Send a &welcome email")
        self.send_email.setObjectName("usersCreateSendEmail")
        self.send_email.setToolTip("Off: no email is sent; give the user the invite link.")
        for text, widget in (("&Email", self.email_edit), ("&Name", self.name_edit),
                             ("&Username", self.username_edit),
                             ("Root &role", self.role_combo)):  # fmt: skip
            label = QLabel(text)
            label.setBuddy(widget)
            form.addRow(label, widget)
        form.addRow("", self.send_email)
        self.error_label = _wrapping_label("usersCreateError")
        self.error_label.hide()
        form.addRow(self.error_label)
        self.progress_label = _wrapping_label("usersCreateProgress")
        self.progress_label.hide()
        form.addRow(self.progress_label)
        self.buttons = QDialogButtonBox()
        self.create_button = self.buttons.addButton(
            "&Create…", QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.create_button.setObjectName("usersCreateButton")
        self.cancel_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.cancel_button.setObjectName("usersCreateCancelButton")
        self.create_button.clicked.connect(self.on_create_button_clicked)
        self.cancel_button.clicked.connect(self.reject)
        form.addRow(self.buttons)

    def typed(self) -> tuple[str, str, str, str, bool]:
        """What the form holds: email, name, username, root role, whether to send an email."""
        return (self.email_edit.text(), self.name_edit.text(), self.username_edit.text(),
                self.role, self.send_email.isChecked())  # fmt: skip

    @property
    def role(self) -> str:
        return self.role_combo.currentText()

    def show_error(self, text: str) -> None:
        self.error_label.setText(text)
        self.error_label.setVisible(bool(text))

    def show_progress(self, text: str, busy: bool) -> None:
        self.progress_label.setText(text)
        self.progress_label.setVisible(bool(text))
        self.create_button.setEnabled(not busy)

    def on_create_button_clicked(self) -> None:
        self.create_requested.emit()


class UserEditor(ToolContent):
    model: UserEditorModel
    states: StatePanel

    def __init__(self, session: Any, parent: QWidget | None = None) -> None:
        super().__init__(session, parent)
        self.setObjectName("usersEditor")
        self.model = UserEditorModel(session, self)
        self._syncing = False  # set while the form is filled from the model
        self._reveal = False  # the next selection clears a filter that hides the user

        self.table = DataTable(
            "users",
            self.model.users,
            noun="users",
            count_text=counted("user"),
            # the email takes what is left (elided), so the last login is never scrolled away
            stretch_column=EMAIL_COLUMN,
        )
        self.table.filter_edit.setPlaceholderText("Search (Ctrl+F)")
        self.table.filter_edit.setToolTip("Search the users by name, username or email")
        if not self.table.restored:
            self.table.sort_by(0)

        self.form_area = QScrollArea()
        self.form_area.setObjectName("usersFormArea")
        self.form_area.setWidgetResizable(True)
        self.form_area.setFrameShape(QFrame.Shape.NoFrame)
        self.form = self._build_form()
        self.form_area.setWidget(self.form)

        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setObjectName("usersSplitter")
        self.splitter.setChildrenCollapsible(False)
        left = QWidget()
        left.setObjectName("usersListArea")
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.table, 1)
        list_buttons = QHBoxLayout()
        self.new_button = _button(list_buttons, "&New user…", "usersNewButton",
                                  self.on_new_button_clicked)  # fmt: skip
        list_buttons.addStretch(1)
        left_layout.addLayout(list_buttons)
        self.splitter.addWidget(left)
        self.splitter.addWidget(self.form_area)
        self.create_dialog: CreateUserDialog | None = None
        self.confirmation: ConfirmationBox | None = None
        # the form needs about 280 pixels; the list gets the rest, and all that is gained
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 0)
        self.splitter.setSizes([660, FORM_WIDTH])
        state = window_settings().value(SPLITTER_KEY)
        if state is not None:
            self.splitter.restoreState(state)
        self._splitter_timer = QTimer(self)
        self._splitter_timer.setSingleShot(True)
        self._splitter_timer.setInterval(400)
        self._splitter_timer.timeout.connect(self.save_splitter)
        self.splitter.splitterMoved.connect(lambda *_: self._splitter_timer.start())

        self.states = StatePanel("users", self.splitter)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.states)

        QWidget.setTabOrder(self.table.view, self.name_edit)
        QWidget.setTabOrder(self.name_edit, self.email_edit)
        QWidget.setTabOrder(self.email_edit, self.role_combo)
        QWidget.setTabOrder(self.role_combo, self.save_button)
        QWidget.setTabOrder(self.save_button, self.revert_button)

        self.table.current_changed.connect(self.on_table_current_changed)
        self.table.row_activated.connect(self.on_table_row_activated)
        self.model.users.modelReset.connect(self.on_users_model_reset)
        self.model.current_changed.connect(self.on_model_current_changed)
        self.model.form_changed.connect(self.on_model_form_changed)
        self.model.action_changed.connect(self.on_model_action_changed)
        self.on_model_current_changed()
        self.start_model()

    # ------------------------------------------------------------------ building

    def _build_form(self) -> UserForm:
        form = UserForm()
        form.setObjectName("usersForm")
        form.save_requested.connect(self.on_form_save_requested)
        form.revert_requested.connect(self.on_form_revert_requested)
        outer = QVBoxLayout(form)
        outer.setContentsMargins(12, 4, 8, 8)
        outer.setSpacing(8)

        self.placeholder = _wrapping_label("usersPlaceholder", selectable=False)
        self.placeholder.setText(
            "Select a user in the list to change their name, email or root role."
        )
        quiet(self.placeholder)  # a remark, in the palette's quieter text colour
        outer.addWidget(self.placeholder)
        self.notice_label = _wrapping_label("usersNotice")
        outer.addWidget(self.notice_label)

        self.editor = QWidget()
        self.editor.setObjectName("usersEditorBox")
        editor = QVBoxLayout(self.editor)
        editor.setContentsMargins(0, 0, 0, 0)
        editor.setSpacing(8)
        outer.addWidget(self.editor)
        outer.addStretch(1)

        head = QHBoxLayout()
        # wrapped: a long name (or a short one beside the SCIM badge) took the form wider than
        # the pane, which then scrolled sideways
        self.title = _wrapping_label("usersUserTitle")
        font = QFont(self.title.font())
        font.setPointSizeF(font.pointSizeF() * 1.2)
        font.setBold(True)
        self.title.setFont(font)
        head.addWidget(self.title, 1)
        self.scim_badge = QLabel("Managed by SCIM")
        self.scim_badge.setObjectName("usersScimBadge")
        self.scim_badge.setStyleSheet(
            "QLabel#usersScimBadge { background: palette(highlight);"
            " color: palette(highlighted-text); border-radius: 9px; padding: 2px 9px;"
            " font-weight: bold; }"
        )
        head.addWidget(self.scim_badge, 0, Qt.AlignmentFlag.AlignVCenter)
        editor.addLayout(head)
        self.reason_label = _wrapping_label("usersReadOnlyReason")
        editor.addWidget(self.reason_label)

        # a grid, not a QFormLayout: that one gives a wrapped error label too little height
        fields = QGridLayout()
        fields.setHorizontalSpacing(10)
        fields.setVerticalSpacing(2)
        fields.setColumnStretch(1, 1)
        self.name_edit = QLineEdit()
        self.name_edit.setObjectName("usersNameEdit")
        self.name_edit.setAccessibleName("Name")
        self.name_edit.setPlaceholderText("Display name")
        self.name_edit.textEdited.connect(self.on_name_edit_text_edited)
        self.name_error = self._error_label("usersNameError")
        self.email_edit = QLineEdit()
        self.email_edit.setObjectName("usersEmailEdit")
        self.email_edit.setAccessibleName("Email")
        self.email_edit.setPlaceholderText("name@example.com")
        self.email_edit.textEdited.connect(self.on_email_edit_text_edited)
        self.email_error = self._error_label("usersEmailError")
        self.role_combo = QComboBox()
        self.role_combo.setObjectName("usersRoleCombo")
        self.role_combo.setAccessibleName("Root role")
        self.role_combo.currentIndexChanged.connect(self.on_role_combo_current_index_changed)
        self.role_error = self._error_label("usersRoleError")
        for n, (text, widget, error) in enumerate(
            (
                ("&Name", self.name_edit, self.name_error),
                ("&Email", self.email_edit, self.email_error),
                ("Root &role", self.role_combo, self.role_error),
            )
        ):
            label = QLabel(text)
            label.setBuddy(widget)
            fields.addWidget(label, 2 * n, 0)
            fields.addWidget(widget, 2 * n, 1)
            fields.addWidget(error, 2 * n + 1, 1)
            fields.setRowMinimumHeight(2 * n + 1, 4)
        editor.addLayout(fields)

        buttons = QHBoxLayout()
        self.save_button = QPushButton("Save")
        self.save_button.setObjectName("usersSaveButton")
        self.save_button.setToolTip("Send the changed fields to the server (Enter)")
        self.save_button.setAutoDefault(True)
        self.save_button.clicked.connect(self.on_save_button_clicked)
        buttons.addWidget(self.save_button)
        self.revert_button = QPushButton("Revert")
        self.revert_button.setObjectName("usersRevertButton")
        self.revert_button.setToolTip("Back to the values on the server (Escape)")
        self.revert_button.setAutoDefault(True)
        self.revert_button.clicked.connect(self.on_revert_button_clicked)
        buttons.addWidget(self.revert_button)
        self.undo_button = _button(buttons, "&Undo", "usersUndoButton",
                                   self.on_undo_button_clicked)  # fmt: skip
        self.undo_button.setToolTip("Put back the values the last save changed")
        buttons.addStretch(1)
        editor.addLayout(buttons)
        actions = QHBoxLayout()
        self.reset_button = _button(actions, "Reset &password…", "usersResetPasswordButton",
                                    self.on_reset_button_clicked)  # fmt: skip
        self.delete_button = _button(actions, "&Delete…", "usersDeleteButton",
                                     self.on_delete_button_clicked)  # fmt: skip
        actions.addStretch(1)
        editor.addLayout(actions)
        link = QHBoxLayout()
        self.reset_link_edit = QLineEdit()
        self.reset_link_edit.setObjectName("usersResetLink")
        self.reset_link_edit.setAccessibleName("Password reset link")
        self.reset_link_edit.setReadOnly(True)
        link.addWidget(self.reset_link_edit, 1)
        self.copy_link_button = _button(link, "&Copy", "usersCopyResetLinkButton",
                                        self.on_copy_link_button_clicked)  # fmt: skip
        self.copy_link_button.setToolTip("Copy the reset link to the clipboard")
        self.reset_link_row = QWidget()
        self.reset_link_row.setLayout(link)
        self.reset_link_row.hide()
        editor.addWidget(self.reset_link_row)
        self.action_error_label = self._error_label("usersActionError")
        editor.addWidget(self.action_error_label)
        self.form_error_label = self._error_label("usersFormError")
        editor.addWidget(self.form_error_label)
        self.saved_label = _wrapping_label("usersSavedNotice")
        editor.addWidget(self.saved_label)
        # the user just created's invite link, whole (in the notice, it ran past the form)
        self.invite_link = LinkField("usersInviteLink", "invite link")
        self.invite_link.hide()
        editor.addWidget(self.invite_link)

        self.details = QGroupBox("Account (as the server has it)")
        self.details.setObjectName("usersDetails")
        details = QFormLayout(self.details)
        details.setVerticalSpacing(4)
        self.detail_values: dict[str, QLabel] = {}
        self._detail_rows: dict[str, tuple[QLabel, QLabel]] = {}
        for key, text in (
            ("id", "ID"),
            ("username", "Username"),
            ("seenAt", "Last login"),
            ("createdAt", "Created"),
            ("loginAttempts", "Failed logins"),
            ("accountType", "Account type"),
            ("scimId", "SCIM ID"),
        ):
            value = QLabel()
            value.setObjectName(f"usersDetail{key[:1].upper()}{key[1:]}")
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            value.setWordWrap(True)
            label = QLabel(text)
            details.addRow(label, value)
            self.detail_values[key] = value
            self._detail_rows[key] = (label, value)
        editor.addWidget(self.details)
        return form

    def _error_label(self, name: str) -> QLabel:
        label = _wrapping_label(name)
        label.setStyleSheet(f"color: {error_color(self)};")
        label.hide()
        return label

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            for label in (self.name_error, self.email_error, self.role_error,
                          self.form_error_label, self.action_error_label):  # fmt: skip
                label.setStyleSheet(f"color: {error_color(self)};")

    # ------------------------------------------------------------------ ToolContent

    def open_item(self, item: Any) -> None:
        """Select the user with this id (the inactive-users window sends it)."""
        self._reveal = True
        self.model.open_user(int(item))
        if self.model.loaded:
            self._sync_table_selection()

    def close_content(self) -> None:
        self.save_splitter()
        super().close_content()

    def unsaved_changes(self) -> str:
        drafts = self.model.drafts_text  # "2 users with unsaved changes"
        return f"{drafts[:1].upper()}{drafts[1:]}." if drafts else ""

    def save_splitter(self) -> None:
        settings = window_settings()
        settings.setValue(SPLITTER_KEY, self.splitter.saveState())
        settings.sync()

    # ------------------------------------------------------------------ the model's state

    def on_model_phase_changed(self) -> None:
        if self.show_phase() is LoadPhase.READY:
            show_refreshing(self.table, self.model.busy)

    def on_model_current_changed(self) -> None:
        user = self.model.current
        self._fill_roles(user)
        self._fill_details(user)
        self.on_model_form_changed()
        self._sync_table_selection()

    def on_model_form_changed(self) -> None:
        m = self.model
        user = m.current
        has_user = user is not None
        self.placeholder.setVisible(not has_user)
        self.editor.setVisible(has_user)
        notice = m.notice if not has_user else ""
        self.notice_label.setText(notice)
        self.notice_label.setVisible(bool(notice))
        self.on_model_action_changed()
        if user is None:
            return
        self._syncing = True
        try:
            draft = m.draft
            if self.name_edit.text() != draft.name:
                self.name_edit.setText(draft.name)
            if self.email_edit.text() != draft.email:
                self.email_edit.setText(draft.email)
            index = self.role_combo.findData(draft.rootRole)
            if index != self.role_combo.currentIndex():
                self.role_combo.setCurrentIndex(index)
        finally:
            self._syncing = False
        editable = m.editable
        for edit in (self.name_edit, self.email_edit):
            edit.setReadOnly(not editable)
        self.role_combo.setEnabled(editable)
        dirty = m.dirty
        self.title.setText(f"{user_label(user)} {MARK}" if dirty else user_label(user))
        self.title.setToolTip("Unsaved changes: Save (Enter) or Revert (Escape)" if dirty else "")
        self.title_changed.emit(m.drafts_text)
        self.scim_badge.setVisible(bool(user.scimId))
        self.scim_badge.setToolTip(f"SCIM ID: {user.scimId}" if user.scimId else "")
        reason = m.read_only_reason
        self.reason_label.setText(reason)
        self.reason_label.setVisible(bool(reason))
        errors = m.field_errors
        for field, label in (
            (NAME, self.name_error),
            (EMAIL, self.email_error),
            (ROOT_ROLE, self.role_error),
        ):
            label.setText(errors.get(field, ""))
            label.setVisible(field in errors)
        self.save_button.setEnabled(m.can_save)
        self.save_button.setText("Saving…" if m.saving else "Save")
        self.revert_button.setEnabled(editable and m.dirty and not m.saving)
        self.form_error_label.setText(m.form_error)
        self.form_error_label.setVisible(bool(m.form_error))
        self.saved_label.setText(m.notice)
        self.saved_label.setVisible(bool(m.notice))
        self.invite_link.show_link(
            m.invite_link,
            "Invite link (also emailed to them):"
            if m.invite_emailed
            else "Invite link (no email was sent: give it to them to set a password):",
        )
        self.undo_button.setVisible(m.can_undo)
        self._fill_details(user)

    def _fill_roles(self, user: User | None) -> None:
        self._syncing = True
        try:
            self.role_combo.clear()
            names = self.model.role_names
            current = self.model.role_name(user) if user is not None else None
            if current and current not in names:
                names.append(current)
            if user is not None and current is None:
                names.insert(0, "")  # the server gave no role: choosing none changes nothing
            for n, name in enumerate(names):
                self.role_combo.addItem(name or "(none)", name)
                description = self.model.role_description(name)
                if description:
                    self.role_combo.setItemData(n, description, Qt.ItemDataRole.ToolTipRole)
            self.role_combo.setCurrentIndex(names.index(current) if current in names else -1)
        finally:
            self._syncing = False

    def _fill_details(self, user: User | None) -> None:
        if user is None:
            return
        values = {
            "id": str(user.id),
            "username": cell_text(user.username),
            "seenAt": cell_text(user.seenAt) if user.seenAt is not None else "Never",
            "createdAt": cell_text(user.createdAt),
            "loginAttempts": cell_text(user.loginAttempts),
            "accountType": cell_text(user.accountType),
            "scimId": cell_text(user.scimId),
        }
        for key, text in values.items():
            self.detail_values[key].setText(text)
        for widget in self._detail_rows["scimId"]:
            widget.setVisible(bool(user.scimId))

    # ------------------------------------------------------------------ the table

    def _sync_table_selection(self) -> None:
        """The table's current row follows the model's selected user."""
        user_id = self.model.current_id
        if user_id is None:
            return
        users = self.model.users
        row = users.row_of(lambda u: u.id == user_id)
        if row < 0 and self._reveal and users.filter_text:
            self.table.filter_edit.clear()  # the filter hid the user asked for
            row = users.row_of(lambda u: u.id == user_id)
        self._reveal = False
        if row < 0:
            return
        view = self.table.view
        index = users.index(row, 0)
        if view.currentIndex().row() != row:
            view.selectionModel().setCurrentIndex(
                index,
                QItemSelectionModel.SelectionFlag.ClearAndSelect
                | QItemSelectionModel.SelectionFlag.Rows,
            )
        view.scrollTo(index)

    def on_users_model_reset(self) -> None:
        self._sync_table_selection()

    def on_table_current_changed(self, user: object) -> None:
        # a reset of the table (a reload, a filter) clears its current row: that is no choice
        if isinstance(user, User):
            self.model.select(user.id)

    def on_table_row_activated(self, user: object) -> None:
        """Enter (or a double-click) on a user: on to their form."""
        if isinstance(user, User):
            self.model.select(user.id)
            self.name_edit.setFocus(Qt.FocusReason.OtherFocusReason)
            self.name_edit.selectAll()

    # ------------------------------------------------------------------ the form

    def on_name_edit_text_edited(self, text: str) -> None:
        self.model.edit(NAME, text)

    def on_email_edit_text_edited(self, text: str) -> None:
        self.model.edit(EMAIL, text)

    def on_role_combo_current_index_changed(self, index: int) -> None:
        if self._syncing or index < 0:
            return
        self.model.edit(ROOT_ROLE, str(self.role_combo.itemData(index) or ""))

    def on_form_save_requested(self) -> None:
        self.ask_to_save()

    def on_form_revert_requested(self) -> None:
        self.model.revert()

    def on_save_button_clicked(self) -> None:
        self.ask_to_save()

    def ask_to_save(self) -> None:
        """The confirmation of a save, naming each field's old and new value; its Save is the
        default button, so Enter (which asked) then Enter saves. Cancel keeps the draft."""
        plan = self.model.plan_save()
        if plan is None or self.confirmation is not None:
            return
        self._confirm(
            ConfirmationBox("usersSaveConfirmation", "Save user", plan.question, plan.lines(),
                            "&Save", self, destructive=plan.demotes_admin(),
                            enter_confirms=True),
            lambda: self.model.save(plan),
        )  # fmt: skip

    def on_revert_button_clicked(self) -> None:
        self.model.revert()

    def on_undo_button_clicked(self) -> None:
        self.model.undo()

    # ------------------------------------------------------------------ create, delete, reset

    def on_model_action_changed(self, created: bool = False) -> None:
        m = self.model
        for button, action, tip in (
            (self.new_button, CREATE_USER, "Create a user"),
            (self.delete_button, DELETE_USER, "Delete this user (cannot be undone)"),
            (self.reset_button, RESET_PASSWORD, "Make a link for this user to set a password"),
        ):
            reason = m.action_reason(action)
            button.setEnabled(not reason)
            button.setToolTip(reason or tip)
        if self.reset_link_edit.text() != m.reset_link:
            self.reset_link_edit.setText(m.reset_link)
        self.reset_link_row.setVisible(bool(m.reset_link))
        self.action_error_label.setText(m.action_error)
        self.action_error_label.setVisible(bool(m.action_error))
        dialog = self.create_dialog
        if dialog is not None:
            if created:
                self.create_dialog = None
                dialog.accept()
                dialog.deleteLater()
            else:
                dialog.show_error(m.create_error)
                dialog.show_progress(m.create_progress, m.acting)

    def on_new_button_clicked(self) -> None:
        if self.create_dialog is None:
            self.create_dialog = CreateUserDialog(self.model.role_names, self)
            self.create_dialog.create_requested.connect(self.on_create_requested)
            self.create_dialog.rejected.connect(self.on_create_dialog_rejected)
        self.create_dialog.open()

    def on_create_dialog_rejected(self) -> None:
        dialog, self.create_dialog = self.create_dialog, None
        if dialog is not None:
            dialog.deleteLater()

    def on_create_requested(self) -> None:
        dialog = self.create_dialog
        if dialog is None or self.confirmation is not None:
            return
        plan = self.model.plan_create(*dialog.typed())
        if isinstance(plan, str):
            dialog.show_error(plan)
            return
        if plan is None:
            return
        self._confirm(
            ConfirmationBox("usersCreateConfirmation", "Create user", plan.question, plan.lines(),
                         "&Create user", dialog, destructive=False),
            lambda: self._create(plan),
        )  # fmt: skip

    def _create(self, plan: CreatePlan) -> None:
        self.model.create(plan)
        self.on_model_action_changed()

    def on_delete_button_clicked(self) -> None:
        plan = self.model.plan_delete()
        if plan is None or self.confirmation is not None:
            return
        self._confirm(
            ConfirmationBox("usersDeleteConfirmation", "Delete user", plan.question, plan.lines(),
                         "&Delete user", self),
            lambda: self._delete(plan),
        )  # fmt: skip

    def _delete(self, plan: DeleteUserPlan) -> None:
        self.model.delete(plan)

    def _confirm(self, box: ConfirmationBox, then: Any) -> None:
        self.confirmation = box

        def finished(_result: int) -> None:
            self.confirmation = None
            if box.confirmed:
                then()
            box.deleteLater()

        box.finished.connect(finished)
        box.open()

    def on_reset_button_clicked(self) -> None:
        plan = self.model.plan_reset()
        if plan is None or self.confirmation is not None:
            return
        self._confirm(
            ConfirmationBox("usersResetConfirmation", "Password reset link", plan.question,
                            plan.lines(), "&Make link", self, destructive=False),
            lambda: self.model.reset_password(plan),
        )  # fmt: skip

    def on_copy_link_button_clicked(self) -> None:
        QGuiApplication.clipboard().setText(self.reset_link_edit.text())
