"""`ProjectAccessView`: who holds which role in one project (bound to `ProjectAccessModel`): a
project picker like the dashboard's, a table of the users, service accounts and groups holding
roles there (a group's members in its tooltip, and counted), and the changes: Grant access…
(`GrantDialog`: users and groups, roles), Change roles… (`ChangeRolesDialog`, one holder),
Revoke… (the selected holders, Delete), each confirmed (`AccessConfirmation`) before the
view-model carries it out. On open source the page says project access needs Pro or
Enterprise (the registry's reason). This window shows and forwards."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from app.api.models import Role
from app.viewmodels.project_access import (
    DETAIL_COLUMN,
    AccessPlan,
    Candidate,
    ProjectAccessModel,
    holders_count_text,
)
from app.viewmodels.tools import LoadPhase
from ui.confirmation import ConfirmationBox, ConfirmationFlow, show_outcome
from ui.palette import error_color, quiet, show_unticked_boxes
from ui.picker import Picker
from ui.states import StatePanel
from ui.table import DataTable
from ui.tool_content import ToolContent
from ui.users import show_refreshing

STEM = "projectAccess"
DATA_ROLE = Qt.ItemDataRole.UserRole


def _role_list(name: str, roles: list[Role], checked: set[int]) -> QListWidget:
    """The project roles, each a check box with its description as a tooltip."""
    widget = QListWidget()
    widget.setObjectName(name)
    widget.setAccessibleName("Roles")
    show_unticked_boxes(widget)
    for role in roles:
        item = QListWidgetItem(role.name)
        item.setData(DATA_ROLE, role.id)
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
        item.setCheckState(Qt.CheckState.Checked if role.id in checked else Qt.CheckState.Unchecked)
        if role.description:
            item.setToolTip(role.description)
        widget.addItem(item)
    return widget


def checked_data(widget: QListWidget) -> list[Any]:
    """The data of the checked items of `widget`, in its order."""
    out = []
    for row in range(widget.count()):
        item = widget.item(row)
        if item is not None and item.checkState() == Qt.CheckState.Checked:
            out.append(item.data(DATA_ROLE))
    return out


def _error_label(name: str) -> QLabel:
    label = QLabel()
    label.setObjectName(name)
    label.setWordWrap(True)
    label.setStyleSheet(f"color: {error_color(label)};")
    return label


class GrantDialog(QDialog):
    """Whom to grant (users, service accounts, groups; a filter over them) and which roles: a
    plan closes it (`plan`); a choice the view-model refuses keeps it open with the reason."""

    def __init__(self, model: ProjectAccessModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.plan: AccessPlan | None = None
        self.setObjectName(f"{STEM}GrantDialog")
        self.setWindowTitle(f"Grant access to {model.project_label}")
        self.setWindowModality(Qt.WindowModality.WindowModal)
        layout = QVBoxLayout(self)

        splitter = QSplitter(Qt.Orientation.Horizontal)
        who = QWidget()
        who_layout = QVBoxLayout(who)
        who_layout.setContentsMargins(0, 0, 0, 0)
        who_label = QLabel("&Users and groups:")
        who_layout.addWidget(who_label)
        self.filter_edit = QLineEdit()
        self.filter_edit.setObjectName(f"{STEM}GrantFilter")
        self.filter_edit.setPlaceholderText("Filter by name or email")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.setAccessibleName("Filter the users and groups")
        who_layout.addWidget(self.filter_edit)
        self.who_list = QListWidget()
        self.who_list.setObjectName(f"{STEM}GrantWho")
        self.who_list.setAccessibleName("Users and groups")
        self.who_list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.who_list.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.who_list.setUniformItemSizes(True)
        who_label.setBuddy(self.filter_edit)
        for candidate in model.candidates:
            item = QListWidgetItem(candidate.label)
            item.setData(DATA_ROLE, candidate)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Unchecked)
            item.setToolTip(f"{candidate.kind} (id {candidate.subject.id})")
            self.who_list.addItem(item)
        show_unticked_boxes(self.who_list)
        who_layout.addWidget(self.who_list, 1)
        self.note_label = QLabel(model.candidates_note)
        self.note_label.setObjectName(f"{STEM}GrantNote")
        self.note_label.setWordWrap(True)
        self.note_label.setVisible(bool(model.candidates_note))
        quiet(self.note_label)
        who_layout.addWidget(self.note_label)
        splitter.addWidget(who)

        roles = QWidget()
        roles_layout = QVBoxLayout(roles)
        roles_layout.setContentsMargins(0, 0, 0, 0)
        roles_label = QLabel("&Roles:")
        roles_layout.addWidget(roles_label)
        self.roles_list = _role_list(f"{STEM}GrantRoles", model.roles, set())
        roles_label.setBuddy(self.roles_list)
        roles_layout.addWidget(self.roles_list, 1)
        splitter.addWidget(roles)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        layout.addWidget(splitter, 1)

        self.chosen_label = QLabel()
        self.chosen_label.setObjectName(f"{STEM}GrantChosen")
        quiet(self.chosen_label)
        layout.addWidget(self.chosen_label)
        self.error_label = _error_label(f"{STEM}GrantError")
        layout.addWidget(self.error_label)
        buttons = QDialogButtonBox()
        self.grant_button = buttons.addButton("&Grant…", QDialogButtonBox.ButtonRole.AcceptRole)
        self.grant_button.setObjectName(f"{STEM}GrantConfirmButton")
        self.grant_button.setDefault(True)
        buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.on_grant_button_clicked)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

        self.filter_edit.textChanged.connect(self.on_filter_edit_text_changed)
        self.who_list.itemChanged.connect(self.on_list_item_changed)
        self.roles_list.itemChanged.connect(self.on_list_item_changed)
        self.on_list_item_changed()
        self.resize(760, 480)

    def candidates(self) -> list[Candidate]:
        return checked_data(self.who_list)

    def check(self, label: str) -> None:
        """Check the user or group shown as `label` (tests, and a keyboard's Space)."""
        for row in range(self.who_list.count()):
            item = self.who_list.item(row)
            if item is not None and item.text() == label:
                item.setCheckState(Qt.CheckState.Checked)
                return
        raise KeyError(label)

    def check_role(self, name: str) -> None:
        for row in range(self.roles_list.count()):
            item = self.roles_list.item(row)
            if item is not None and item.text() == name:
                item.setCheckState(Qt.CheckState.Checked)
                return
        raise KeyError(name)

    def on_filter_edit_text_changed(self, text: str) -> None:
        folded = text.strip().casefold()
        for row in range(self.who_list.count()):
            item = self.who_list.item(row)
            if item is not None:
                item.setHidden(bool(folded) and folded not in item.text().casefold())

    def on_list_item_changed(self, *_: object) -> None:
        who, roles = len(self.candidates()), len(checked_data(self.roles_list))
        self.chosen_label.setText(f"Chosen: {who} user{'s' if who != 1 else ''} or group"
                                  f"{'s' if who != 1 else ''}, {roles} role"
                                  f"{'s' if roles != 1 else ''}")  # fmt: skip

    def on_grant_button_clicked(self) -> None:
        try:
            self.plan = self.model.plan_grant([c.subject for c in self.candidates()],
                                              checked_data(self.roles_list))  # fmt: skip
        except ValueError as exc:
            self.error_label.setText(str(exc))
            return
        self.accept()


class ChangeRolesDialog(QDialog):
    """The selected holder's roles, checked; what is checked when confirmed is what it holds."""

    def __init__(self, model: ProjectAccessModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.plan: AccessPlan | None = None
        (row,) = model.selected
        self.setObjectName(f"{STEM}ChangeDialog")
        self.setWindowTitle(f"Change roles in {model.project_label}")
        self.setWindowModality(Qt.WindowModality.WindowModal)
        layout = QVBoxLayout(self)
        heading = QLabel(f"The roles of {row.kind.lower()} “{row.name}” in "
                         f"{model.project_label}:")  # fmt: skip
        heading.setObjectName(f"{STEM}ChangeHeading")
        heading.setWordWrap(True)
        layout.addWidget(heading)
        self.roles_list = _role_list(f"{STEM}ChangeRoles", model.roles, set(row.roles))
        heading.setBuddy(self.roles_list)
        layout.addWidget(self.roles_list, 1)
        self.error_label = _error_label(f"{STEM}ChangeError")
        layout.addWidget(self.error_label)
        buttons = QDialogButtonBox()
        self.change_button = buttons.addButton("&Change…",
                                               QDialogButtonBox.ButtonRole.AcceptRole)  # fmt: skip
        self.change_button.setObjectName(f"{STEM}ChangeConfirmButton")
        self.change_button.setDefault(True)
        buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.on_change_button_clicked)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.resize(380, 340)

    def set_role(self, name: str, held: bool) -> None:
        for row in range(self.roles_list.count()):
            item = self.roles_list.item(row)
            if item is not None and item.text() == name:
                item.setCheckState(Qt.CheckState.Checked if held else Qt.CheckState.Unchecked)
                return
        raise KeyError(name)

    def on_change_button_clicked(self) -> None:
        try:
            self.plan = self.model.plan_change(checked_data(self.roles_list))
        except ValueError as exc:
            self.error_label.setText(str(exc))
            return
        self.accept()


class AccessConfirmation(ConfirmationBox):
    def __init__(self, plan: AccessPlan, parent: QWidget | None = None) -> None:
        verb = {"project_access.grant": "&Grant", "project_access.revoke": "&Revoke"}.get(
            plan.action.key, "&Change roles"
        )
        super().__init__(f"{STEM}Confirmation", plan.action.title, plan.question, plan.lines(),
                         verb, parent,
                         destructive=plan.action.key == "project_access.revoke")  # fmt: skip
        self.plan = plan


class ProjectAccessView(ToolContent):
    model: ProjectAccessModel
    states: StatePanel

    def __init__(self, session: Any, parent: QWidget | None = None) -> None:
        super().__init__(session, parent)
        self.setObjectName(f"{STEM}View")
        self.model = ProjectAccessModel(session, self)
        self.grant_dialog: GrantDialog | None = None
        self.change_dialog: ChangeRolesDialog | None = None
        self._title = ""

        self.picker = Picker(STEM, self.model.choices, caption="Project:", button_text="Show",
                             placeholder="Pick a project, or type its id")  # fmt: skip
        self.picker.button.setToolTip("Show who holds which role in this project (Enter)")
        self.notice = QLabel()
        self.notice.setObjectName(f"{STEM}Notice")
        self.notice.setWordWrap(True)
        self.notice.hide()

        body = QWidget()
        body.setObjectName(f"{STEM}Body")
        layout = QVBoxLayout(body)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        self.table = DataTable(STEM, self.model.table, noun="holders",
                               count_text=holders_count_text,
                               stretch_column=DETAIL_COLUMN)  # fmt: skip
        layout.addWidget(self.table, 1)
        hint = QLabel(
            "Roles held in this project, directly or through a group (a group's members: hover "
            "its name). Admins can change every project through their root role; who can, and "
            "why, for a whole server: Who can do what where."
        )
        hint.setObjectName(f"{STEM}Hint")
        hint.setWordWrap(True)
        quiet(hint)
        layout.addWidget(hint)

        actions = QHBoxLayout()
        self.grant_button = QPushButton("&Grant access…")
        self.grant_button.setObjectName(f"{STEM}GrantButton")
        actions.addWidget(self.grant_button)
        self.change_button = QPushButton("C&hange roles…")
        self.change_button.setObjectName(f"{STEM}ChangeButton")
        actions.addWidget(self.change_button)
        self.revoke_button = QPushButton("&Revoke…")
        self.revoke_button.setObjectName(f"{STEM}RevokeButton")
        self.revoke_button.setAccessibleName("Revoke the selected holders' roles")
        actions.addWidget(self.revoke_button)
        self.outcome_label = QLabel()
        self.outcome_label.setObjectName(f"{STEM}Outcome")
        self.outcome_label.setAccessibleName("What the last change did")
        self.outcome_label.setWordWrap(True)
        self.outcome_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        actions.addWidget(self.outcome_label, 1)

        self.changes = ConfirmationFlow(
            self, lambda plan: AccessConfirmation(plan, self), self.model.carry_out
        )
        self.states = StatePanel(STEM, body)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(6)
        outer.addWidget(self.picker)
        outer.addWidget(self.notice)
        outer.addLayout(actions)
        outer.addWidget(self.states, 1)

        self.table.delete_with(self.revoke_button)
        self.table.view.selectionModel().selectionChanged.connect(self.on_table_selection_changed)
        self.model.table.modelReset.connect(self.on_table_selection_changed)
        self.picker.chosen.connect(self.on_picker_chosen)
        self.grant_button.clicked.connect(self.on_grant_button_clicked)
        self.change_button.clicked.connect(self.on_change_button_clicked)
        self.revoke_button.clicked.connect(self.on_revoke_button_clicked)
        m = self.model
        m.changed.connect(self.on_model_changed)
        m.project_changed.connect(self.on_model_project_changed)
        m.status_changed.connect(self.on_model_status_changed)
        m.actions_changed.connect(self.on_model_actions_changed)
        m.outcome_changed.connect(self.on_model_outcome_changed)
        self.on_model_actions_changed()
        self.start_model()

    # ------------------------------------------------------------------ ToolContent

    def open_item(self, item: Any) -> None:
        project = str(item).strip()
        if project:
            self.picker.set_value(project)
            self.model.show_project(project)

    @property
    def title(self) -> str:
        return self._title

    # ------------------------------------------------------------------ slots

    def on_picker_chosen(self, project: str) -> None:
        self.model.show_project(project)

    def on_model_project_changed(self, project: str) -> None:
        if self.picker.value != project:
            self.picker.set_value(project)

    def on_model_changed(self) -> None:
        m = self.model
        if m.closed:
            return
        if m.project_label != self._title:
            self._title = m.project_label
            self.title_changed.emit(self._title)
        self.notice.setText(m.notice)
        self.notice.setVisible(bool(m.notice))
        self.on_model_actions_changed()

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
        m = self.model
        for button, reason, tip in (
            (self.grant_button, m.grant_reason, "Give roles in this project to users and groups"),
            (self.change_button, m.change_reason, "Change the selected holder's roles"),
            (self.revoke_button, m.revoke_reason,
             "Remove every role of the selected holders in this project (Delete)"),
        ):  # fmt: skip
            button.setEnabled(not reason)
            button.setToolTip(reason or tip)

    def on_grant_button_clicked(self) -> None:
        if self.grant_dialog is not None or self.model.grant_reason:
            return
        dialog = GrantDialog(self.model, self)
        self.grant_dialog = dialog
        dialog.finished.connect(self.on_grant_dialog_finished)
        dialog.open()

    def on_grant_dialog_finished(self, _result: int) -> None:
        dialog, self.grant_dialog = self.grant_dialog, None
        if dialog is not None:
            plan = dialog.plan
            dialog.deleteLater()
            self.changes.ask(plan)

    def on_change_button_clicked(self) -> None:
        if self.change_dialog is not None or self.model.change_reason:
            return
        dialog = ChangeRolesDialog(self.model, self)
        self.change_dialog = dialog
        dialog.finished.connect(self.on_change_dialog_finished)
        dialog.open()

    def on_change_dialog_finished(self, _result: int) -> None:
        dialog, self.change_dialog = self.change_dialog, None
        if dialog is not None:
            plan = dialog.plan
            dialog.deleteLater()
            self.changes.ask(plan)

    def on_revoke_button_clicked(self) -> None:
        self.changes.ask(self.model.plan_revoke())

    @property
    def confirmation(self) -> QDialog | None:
        return self.changes.box

    def on_model_outcome_changed(self) -> None:
        show_outcome(self.outcome_label, self.model.outcome, self.model.outcome_error)

    def close_content(self) -> None:
        for dialog in (self.grant_dialog, self.change_dialog):
            if dialog is not None:
                dialog.done(0)
        super().close_content()
