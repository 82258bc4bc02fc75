"""`RolesView`: the server's roles in a `DataTable` (name, type, built in or not, how many
permissions, description; filter as you type, sort, Ctrl+C, Export CSV…) beside the selected
role's permissions, grouped root / project / per environment (display names, the permission's
name as tooltip). Create role… and Edit… open `RoleDialog`: name, description, type and the
permission picker (`PermissionPicker`: the catalogue grouped as the type takes it, checkboxes,
a search box, a group's box ticking every permission of it shown); Save… asks the confirmation
over the form, which stays open until the server took it, and shows what the server refused
under the field it is about. Delete… reads who holds the role first: a confirmation when no one
does, else a refusal naming them (users, groups, service accounts, projects), and nothing is
sent. On a server without custom roles (open-source Unleash) the list has the built-in root
roles and the buttons say why they cannot be used. Everything comes from `RolesModel`: this
window shows and forwards."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.api.models import RoleWithPermissions
from app.viewmodels.roles import (
    DESCRIPTION_COLUMN,
    KINDS,
    PermissionGroup,
    RolePlan,
    RolesModel,
    form_kind,
    held_keys,
    roles_count_text,
)
from app.viewmodels.tools import LoadPhase
from ui.confirmation import ConfirmationBox, ConfirmationFlow, show_outcome
from ui.form_dialog import FormDialog, FormFlow, error_label
from ui.palette import quiet, show_unticked_boxes
from ui.states import StatePanel
from ui.table import DataTable
from ui.tool_content import ToolContent
from ui.users import show_refreshing

#: the item data role holding a permission's (name, environment)
KEY_ROLE = Qt.ItemDataRole.UserRole


def _children(top: QTreeWidgetItem) -> list[QTreeWidgetItem]:
    return [c for c in (top.child(i) for i in range(top.childCount())) if c is not None]


def _buddy(text: str, field: QWidget) -> QLabel:
    """A form's label whose mnemonic goes to `field` (a row of a layout gets none by itself)."""
    label = QLabel(text)
    label.setBuddy(field)
    return label


class PermissionPicker(QWidget):
    """The catalogue's permissions in groups with checkboxes, a search box over them, and a
    group's own box ticking (or clearing) every permission of it the search shows."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("rolesPermissionPicker")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        bar = QHBoxLayout()
        self.search_edit = QLineEdit()
        self.search_edit.setObjectName("rolesPermissionSearch")
        self.search_edit.setPlaceholderText("Search permissions")
        self.search_edit.setClearButtonEnabled(True)
        self.search_edit.setAccessibleName("Search the permissions")
        bar.addWidget(self.search_edit, 1)
        self.count_label = QLabel()
        self.count_label.setObjectName("rolesPermissionCount")
        bar.addWidget(self.count_label)
        layout.addLayout(bar)
        self.tree = QTreeWidget()
        self.tree.setObjectName("rolesPermissionTree")
        self.tree.setAccessibleName("Permissions")
        self.tree.setHeaderHidden(True)
        self.tree.setUniformRowHeights(True)
        show_unticked_boxes(self.tree)
        layout.addWidget(self.tree, 1)
        self._groups: list[QTreeWidgetItem] = []
        self._updating = False
        self.search_edit.textChanged.connect(self.on_search_edit_text_changed)
        self.tree.itemChanged.connect(self.on_tree_item_changed)

    def set_groups(
        self, groups: list[PermissionGroup], chosen: set[tuple[str, str | None]]
    ) -> None:
        """Show `groups`, those of `chosen` ticked."""
        self._updating = True
        self.tree.clear()
        self._groups = []
        for group in groups:
            top = QTreeWidgetItem([group.title])
            top.setData(0, KEY_ROLE, group.key)
            top.setFlags(top.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            top.setToolTip(0, f"Tick to choose every permission of {group.title.lower()} shown")
            font = top.font(0)
            font.setBold(True)
            top.setFont(0, font)
            for item in group.items:
                child = QTreeWidgetItem([item.display])
                child.setData(0, KEY_ROLE, item.key)
                child.setToolTip(0, item.name if item.environment is None
                                 else f"{item.name} in {item.environment}")  # fmt: skip
                child.setFlags(child.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                checked = item.key in chosen
                child.setCheckState(
                    0, Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked
                )
                top.addChild(child)
            self.tree.addTopLevelItem(top)
            self._groups.append(top)
            top.setExpanded(True)
        self._updating = False
        self._filter(self.search_edit.text())
        self._update_groups()

    def chosen(self) -> list[tuple[str, str | None]]:
        """The (name, environment) of each permission ticked, in the groups' order."""
        out = []
        for top in self._groups:
            for child in _children(top):
                if child.checkState(0) == Qt.CheckState.Checked:
                    out.append(child.data(0, KEY_ROLE))
        return out

    def group(self, key: str) -> QTreeWidgetItem | None:
        return next((t for t in self._groups if t.data(0, KEY_ROLE) == key), None)

    def on_search_edit_text_changed(self, text: str) -> None:
        self._filter(text)
        self._update_groups()

    def _filter(self, text: str) -> None:
        folded = text.strip().casefold()
        for top in self._groups:
            shown = 0
            for child in _children(top):
                name = str(child.toolTip(0))
                hit = not folded or folded in child.text(0).casefold() or folded in name.casefold()
                child.setHidden(not hit)
                shown += hit
            top.setHidden(shown == 0)

    def on_tree_item_changed(self, item: QTreeWidgetItem, _column: int) -> None:
        if self._updating:
            return
        self._updating = True
        try:
            if item.parent() is None:  # a group's box: every permission of it shown
                state = item.checkState(0)
                ticked = state != Qt.CheckState.Unchecked
                for child in _children(item):
                    if not child.isHidden():
                        child.setCheckState(
                            0, Qt.CheckState.Checked if ticked else Qt.CheckState.Unchecked
                        )
        finally:
            self._updating = False
        self._update_groups()

    def _update_groups(self) -> None:
        """Each group's box: ticked when every permission of it shown is, partly when some are;
        the count of those chosen."""
        self._updating = True
        total = 0
        for top in self._groups:
            children = _children(top)
            shown = [c for c in children if not c.isHidden()]
            ticked = sum(c.checkState(0) == Qt.CheckState.Checked for c in shown)
            total += sum(c.checkState(0) == Qt.CheckState.Checked for c in children)
            state = (Qt.CheckState.Unchecked if not ticked else Qt.CheckState.Checked
                     if ticked == len(shown) else Qt.CheckState.PartiallyChecked)  # fmt: skip
            top.setCheckState(0, state)
        self._updating = False
        self.count_label.setText(f"{total:,} chosen")


class RoleDialog(FormDialog):
    """A custom role's form: a new one (`role` None) or `role` changed. Save… asks the
    view-model for the plan (a form it refuses shows why under the field) and hands it to
    `ask`, the window's confirmation; the form stays open until the save ends: `saved()` closes
    it, `show_error(field, text)` puts the server's refusal under its field."""

    def __init__(
        self,
        model: RolesModel,
        role: RoleWithPermissions | None,
        ask: Callable[[RolePlan], object],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(ask, parent)
        self.model = model
        self.role = role
        self.setObjectName("rolesDialog")
        self.setWindowTitle("Create role" if role is None else f"Edit role “{role.name}”")
        form = QFormLayout()
        self.name_edit = QLineEdit(role.name if role is not None else "")
        self.name_edit.setObjectName("rolesNameEdit")
        self.name_edit.setPlaceholderText("what it is for, e.g. Release manager")
        self.name_error = error_label("rolesNameError")
        name = QVBoxLayout()
        name.setSpacing(2)
        name.addWidget(self.name_edit)
        name.addWidget(self.name_error)
        form.addRow(_buddy("&Name:", self.name_edit), name)
        self.description_edit = QLineEdit(role.description or "" if role is not None else "")
        self.description_edit.setObjectName("rolesDescriptionEdit")
        self.description_error = error_label("rolesDescriptionError")
        description = QVBoxLayout()
        description.setSpacing(2)
        description.addWidget(self.description_edit)
        description.addWidget(self.description_error)
        form.addRow(_buddy("&Description:", self.description_edit), description)
        self.type_combo = QComboBox()
        self.type_combo.setObjectName("rolesTypeCombo")
        self.type_combo.addItems(list(KINDS))
        self.type_combo.setCurrentText(form_kind(role))
        self.type_error = error_label("rolesTypeError")
        kind = QVBoxLayout()
        kind.setSpacing(2)
        kind.addWidget(self.type_combo)
        note = QLabel("A root role is held across the server (a user's, group's or service "
                      "account's); a project role in each project it is given in.")  # fmt: skip
        note.setWordWrap(True)
        quiet(note)
        kind.addWidget(note)
        kind.addWidget(self.type_error)
        form.addRow(_buddy("&Type:", self.type_combo), kind)
        self.picker = PermissionPicker()
        self.permissions_error = error_label("rolesPermissionsError")
        permissions_label = QLabel("&Permissions:")
        permissions_label.setBuddy(self.picker.search_edit)
        form.addRow(permissions_label, self.picker)
        self.form_error = error_label("rolesFormError")
        self.status_label.setObjectName("rolesDialogStatus")
        quiet(self.status_label)
        buttons = QDialogButtonBox()
        self.save_button = buttons.addButton("&Create…" if role is None else "&Save…",
                                             QDialogButtonBox.ButtonRole.AcceptRole)  # fmt: skip
        self.save_button.setObjectName("rolesSaveButton")
        self.save_button.setDefault(True)
        self.cancel_button = buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.on_save_button_clicked)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form, 1)
        layout.addWidget(self.permissions_error)
        layout.addWidget(self.form_error)
        layout.addWidget(self.status_label)
        layout.addWidget(buttons)
        self.errors = {"name": self.name_error, "description": self.description_error,
                       "type": self.type_error, "permissions": self.permissions_error}  # fmt: skip
        self.focus = {"name": self.name_edit, "description": self.description_edit,
                      "type": self.type_combo, "permissions": self.picker.search_edit}  # fmt: skip
        self._chosen = held_keys(role) if role is not None else set()
        self.on_type_combo_changed()
        self.type_combo.currentIndexChanged.connect(self.on_type_combo_changed)
        self.resize(560, 640)

    def on_type_combo_changed(self, *_: object) -> None:
        """The picker offers what the type takes, keeping what was ticked where it still is."""
        if self.picker.tree.topLevelItemCount():
            self._chosen = set(self.picker.chosen())
        kind = KINDS[self.type_combo.currentText()]
        chosen = self._chosen
        if kind == "root-custom":
            chosen = {(n, None) for n, _ in chosen}
        groups = self.model.picker_groups(kind, self.role)
        self.picker.set_groups(groups, chosen)

    def plan(self) -> RolePlan:
        return self.model.plan_save(
            self.role,
            self.name_edit.text(),
            self.description_edit.text(),
            self.type_combo.currentText(),
            self.picker.chosen(),
        )


class SaveRoleConfirmation(ConfirmationBox):
    def __init__(self, plan: RolePlan, parent: QWidget | None = None) -> None:
        button = "C&reate role" if plan.before is None else "&Save role"
        super().__init__("rolesSaveConfirmation", "Save role", plan.question, plan.lines(),
                         button, parent, destructive=False, enter_confirms=True)  # fmt: skip
        self.plan = plan


class DeleteRoleConfirmation(ConfirmationBox):
    def __init__(self, plan: RolePlan, parent: QWidget | None = None) -> None:
        super().__init__("rolesDeleteConfirmation", "Delete role", plan.question, plan.lines(),
                         "&Delete role", parent)  # fmt: skip
        self.plan = plan


class RolesView(ToolContent):
    model: RolesModel
    states: StatePanel

    def __init__(self, session: Any, parent: QWidget | None = None) -> None:
        super().__init__(session, parent)
        self.setObjectName("rolesView")
        self.model = RolesModel(session, self)
        #: the role's form, one at a time (`dialog`: the one open)
        self.forms: FormFlow[RoleDialog] = FormFlow(
            self, lambda role: RoleDialog(self.model, role, self.saves.ask, self)
        )
        self.refusal: QMessageBox | None = None

        body = QWidget()
        body.setObjectName("rolesBody")
        layout = QVBoxLayout(body)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setObjectName("rolesSplitter")
        self.table = DataTable("roles", self.model.table, noun="roles",
                               count_text=roles_count_text,
                               stretch_column=DESCRIPTION_COLUMN)  # fmt: skip
        self.splitter.addWidget(self.table)
        details = QWidget()
        details.setObjectName("rolesDetails")
        side = QVBoxLayout(details)
        side.setContentsMargins(0, 0, 0, 0)
        side.setSpacing(4)
        self.current_label = QLabel()
        self.current_label.setObjectName("rolesCurrent")
        self.current_label.setWordWrap(True)
        self.current_label.setTextFormat(Qt.TextFormat.PlainText)
        side.addWidget(self.current_label)
        self.permissions_tree = QTreeWidget()
        self.permissions_tree.setObjectName("rolesPermissions")
        self.permissions_tree.setAccessibleName("The selected role's permissions")
        self.permissions_tree.setHeaderHidden(True)
        self.permissions_tree.setUniformRowHeights(True)
        side.addWidget(self.permissions_tree, 1)
        side.addStretch(0)  # the line stays at the top while the list is hidden
        self.splitter.addWidget(details)
        self.splitter.setStretchFactor(0, 2)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([2000, 900])  # the table two thirds of the width
        layout.addWidget(self.splitter, 1)
        self.hint = QLabel()
        self.hint.setObjectName("rolesHint")
        self.hint.setWordWrap(True)
        quiet(self.hint)
        layout.addWidget(self.hint)

        actions = QHBoxLayout()
        self.create_button = QPushButton("&Create role…")
        self.create_button.setObjectName("rolesCreateButton")
        actions.addWidget(self.create_button)
        self.edit_button = QPushButton("&Edit…")
        self.edit_button.setObjectName("rolesEditButton")
        self.edit_button.setAccessibleName("Edit the selected role")
        actions.addWidget(self.edit_button)
        self.delete_button = QPushButton("Delete…")
        self.delete_button.setObjectName("rolesDeleteButton")
        self.delete_button.setAccessibleName("Delete the selected role")
        actions.addWidget(self.delete_button)
        self.outcome_label = QLabel()
        self.outcome_label.setObjectName("rolesOutcome")
        self.outcome_label.setAccessibleName("What the last change did")
        self.outcome_label.setWordWrap(True)
        self.outcome_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        actions.addWidget(self.outcome_label, 1)

        self.saves = ConfirmationFlow(
            self,
            lambda plan: SaveRoleConfirmation(plan, self.dialog or self),
            self.on_save_confirmed,
        )
        self.deletions = ConfirmationFlow(
            self, lambda plan: DeleteRoleConfirmation(plan, self), self.model.delete
        )
        self.states = StatePanel("roles", body)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(6)
        outer.addLayout(actions)
        outer.addWidget(self.states, 1)

        self.table.delete_with(self.delete_button)
        self.table.view.selectionModel().selectionChanged.connect(self.on_table_selection_changed)
        self.model.table.modelReset.connect(self.on_table_selection_changed)
        self.table.row_activated.connect(self.on_table_row_activated)
        self.create_button.clicked.connect(self.on_create_button_clicked)
        self.edit_button.clicked.connect(self.on_edit_button_clicked)
        self.delete_button.clicked.connect(self.on_delete_button_clicked)
        self.model.status_changed.connect(self.on_model_status_changed)
        self.model.actions_changed.connect(self.on_model_actions_changed)
        self.model.current_changed.connect(self.on_model_current_changed)
        self.model.outcome_changed.connect(self.on_model_outcome_changed)
        # the status line of an action ends with it (a refused deletion sets no outcome)
        self.model.action_finished.connect(self.on_model_outcome_changed)
        self.model.delete_planned.connect(self.deletions.ask)
        self.model.delete_refused.connect(self.on_model_delete_refused)
        self.model.save_finished.connect(self.forms.saved)
        self.model.save_failed.connect(self.forms.failed)
        self.on_model_actions_changed()
        self.on_model_current_changed()
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
            self.forms.busy(text)

    def on_table_selection_changed(self, *_: object) -> None:
        self.model.select(self.table.selected_items())

    def on_table_row_activated(self, _row: object) -> None:
        if not self.model.edit_reason:
            self.on_edit_button_clicked()

    def on_model_actions_changed(self) -> None:
        for button, reason, tip in (
            (self.create_button, self.model.create_reason, "Create a custom role"),
            (self.edit_button, self.model.edit_reason, "Change the selected custom role"),
            (self.delete_button, self.model.delete_reason,
             "Delete the selected custom role (Delete)"),
        ):  # fmt: skip
            button.setEnabled(not reason)
            button.setToolTip(reason or tip)
        self.hint.setText(
            self.model.note[:1].upper() + self.model.note[1:] + "." if self.model.note
            else "Built-in roles cannot be changed or deleted. Double-click a custom role to "
            "edit it."
        )  # fmt: skip

    def on_model_current_changed(self) -> None:
        self.current_label.setText(self.model.current_text)
        tree = self.permissions_tree
        tree.clear()
        groups = self.model.current_groups()
        tree.setVisible(bool(groups))  # nothing to list: the line above says why
        for group in groups:
            top = QTreeWidgetItem([f"{group.title} ({len(group.items):,})"])
            font = top.font(0)
            font.setBold(True)
            top.setFont(0, font)
            for item in group.items:
                child = QTreeWidgetItem([item.display])
                child.setToolTip(0, item.name)
                top.addChild(child)
            tree.addTopLevelItem(top)
            top.setExpanded(True)

    @property
    def dialog(self) -> RoleDialog | None:
        """The role's form open, if any."""
        return self.forms.dialog

    def on_create_button_clicked(self) -> None:
        if not self.model.create_reason:
            self.forms.open(None)

    def on_edit_button_clicked(self) -> None:
        role = self.model.form_role()
        if role is not None:
            self.forms.open(role)

    def on_save_confirmed(self, plan: RolePlan) -> None:
        self.forms.busy("Saving…")
        self.model.save(plan)

    def on_delete_button_clicked(self) -> None:
        self.model.prepare_delete()

    def on_model_delete_refused(self, text: str) -> None:
        if self.refusal is not None:
            self.refusal.done(0)
        box = QMessageBox(QMessageBox.Icon.Information, "The role is held", text,
                          QMessageBox.StandardButton.Ok, self)  # fmt: skip
        box.setObjectName("rolesDeleteRefusal")
        box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        box.setWindowModality(Qt.WindowModality.WindowModal)
        self.refusal = box
        box.finished.connect(self.on_refusal_finished)
        box.open()

    def on_refusal_finished(self, _result: int) -> None:
        box, self.refusal = self.refusal, None
        if box is not None:
            box.deleteLater()

    @property
    def confirmation(self) -> QDialog | None:
        """The confirmation open now, if any."""
        return self.saves.box or self.deletions.box

    def on_model_outcome_changed(self) -> None:
        show_outcome(self.outcome_label, self.model.outcome, self.model.outcome_error)

    def close_content(self) -> None:
        for dialog in (self.dialog, self.refusal):
            if dialog is not None:
                dialog.done(0)
        super().close_content()
