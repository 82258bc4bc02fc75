"""`ContextUsageViewer`: which strategies use a context field (bound to `ContextUsageModel`). A
context-field picker; the strategies in a tree, project > feature > "environment · strategy",
with counts on the group rows; a filter; Ctrl+C copies the selected strategies and Export CSV
writes one line per strategy. New field…, Edit… and Delete… change fields: `FieldDialog` is the
form (it stays open with what was typed when Save is refused), `FieldConfirmation` says exactly
what will change before anything is sent, and Undo, right after an edit or a deletion, puts the
field back. Shows and forwards; never fetches."""

from __future__ import annotations

import asyncio
from typing import Any

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from app.api.models import ContextFieldStrategy
from app.registry import CREATE_CONTEXT_FIELD, DELETE_CONTEXT_FIELD, EDIT_CONTEXT_FIELD
from app.viewmodels.context_usage import (
    ContextUsageModel,
    FieldForm,
    FieldPlan,
    leaf_text,
    tsv,
)
from app.viewmodels.session import Session
from app.viewmodels.tools import LoadPhase
from ui.confirmation import ConfirmationBox, ConfirmationFlow, show_outcome
from ui.palette import quiet
from ui.picker import Picker
from ui.states import StatePanel
from ui.table import ask_export_path, filter_edit
from ui.tool_content import ToolContent

STEM = "contextUsage"
#: a leaf's strategy (group rows hold None)
STRATEGY_ROLE = Qt.ItemDataRole.UserRole + 1
COLUMN_TITLES = ("Project, feature, environment · strategy", "Strategies")


def _item(text: str, *, tooltip: str = "") -> QStandardItem:
    item = QStandardItem(text)
    item.setEditable(False)
    if tooltip:
        item.setToolTip(tooltip)
    return item


def _count_item(count: int) -> QStandardItem:
    item = _item(f"{count:,}")
    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    return item


class StrategyTree(QTreeView):
    """The grouped strategies. Ctrl+C copies the selected ones (those under a selected group
    too) as "project\\tfeature\\tenvironment\\tstrategy" lines."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(f"{STEM}Tree")
        self.setAccessibleName("Strategies that use the context field")
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setAlternatingRowColors(True)
        self.setUniformRowHeights(True)
        self.setAllColumnsShowFocus(True)
        self.setSortingEnabled(False)  # the model's order: alphabetical, then the server's

    def selected_strategies(self) -> list[ContextFieldStrategy]:
        """The strategies of the selected rows and under the selected groups, in tree order,
        each once."""
        selection = self.selectionModel()
        if selection is None:
            return []
        chosen = {index.siblingAtColumn(0) for index in selection.selectedIndexes()}
        out: list[ContextFieldStrategy] = []
        seen: set[int] = set()
        model = self.model()

        def walk(parent: QModelIndex, inside: bool) -> None:
            for row in range(model.rowCount(parent)):
                index = model.index(row, 0, parent)
                here = inside or index in chosen
                strategy = index.data(STRATEGY_ROLE)
                if strategy is not None:
                    if here and id(strategy) not in seen:
                        seen.add(id(strategy))
                        out.append(strategy)
                else:
                    walk(index, here)

        walk(QModelIndex(), False)
        return out


def _button(text: str, name: str, accessible: str) -> QPushButton:
    button = QPushButton(text)
    button.setObjectName(f"{STEM}{name}Button")
    button.setAccessibleName(accessible)
    return button


class FieldConfirmation(ConfirmationBox):
    """Asks before a context field is changed, naming exactly what will change
    (`FieldPlan.lines()`)."""

    def __init__(self, plan: FieldPlan, parent: QWidget | None = None) -> None:
        super().__init__(f"{STEM}Confirmation", "Context field", plan.question, plan.lines(),
                         f"&{plan.button}", parent, destructive=plan.verb == "delete")  # fmt: skip
        self.plan = plan
        self.confirm_button = self.action_button
        self.confirm_button.setObjectName(f"{STEM}ConfirmButton")


class FieldDialog(QDialog):
    """The create or edit form: name (fixed when editing), description, stickiness and the
    legal values with their descriptions. Save asks the viewer (`save_requested`); the dialog
    closes only once the change is made, so a refused Save leaves every typed character."""

    #: Save was pressed (Enter in a field, or the button): the viewer plans and confirms
    save_requested = Signal()

    def __init__(self, form: FieldForm, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(f"{STEM}FieldDialog")
        creating = form.creating
        self.setWindowTitle("New context field" if creating else f"Edit “{form.name}”")
        self.setWindowModality(Qt.WindowModality.WindowModal)
        layout = QVBoxLayout(self)
        fields = QFormLayout()
        self.name_edit = QLineEdit(form.name)
        self.name_edit.setObjectName(f"{STEM}NameEdit")
        self.name_edit.setReadOnly(not creating)
        self.name_edit.setPlaceholderText("subscriptionTier (letters, digits, - _ . ~)")
        fields.addRow("&Name:", self.name_edit)
        self.description_edit = QLineEdit(form.description)
        self.description_edit.setObjectName(f"{STEM}DescriptionEdit")
        fields.addRow("&Description:", self.description_edit)
        self.stickiness_box = QCheckBox("Can be used for custom &stickiness")
        self.stickiness_box.setObjectName(f"{STEM}StickinessBox")
        self.stickiness_box.setChecked(form.stickiness)
        fields.addRow("", self.stickiness_box)
        layout.addLayout(fields)
        # a label shows the "&" of its mnemonic unless it has a buddy to give focus to
        values_caption = QLabel("&Legal values (leave empty to allow any value):")
        values_caption.setObjectName(f"{STEM}LegalValuesCaption")
        layout.addWidget(values_caption)
        self.values = QTableWidget(0, 2)
        self.values.setObjectName(f"{STEM}LegalValues")
        self.values.setAccessibleName("Legal values and their descriptions")
        self.values.setHorizontalHeaderLabels(["Value", "Description"])
        self.values.horizontalHeader().setStretchLastSection(True)
        values_caption.setBuddy(self.values)  # Alt+L
        for value, description in form.legal_values:
            self.add_value(value, description)
        layout.addWidget(self.values, 1)
        row = QHBoxLayout()
        self.add_button = QPushButton("&Add value")
        self.add_button.setObjectName(f"{STEM}AddValueButton")
        self.add_button.clicked.connect(lambda: self.add_value("", "", edit=True))
        self.remove_button = QPushButton("&Remove value")
        self.remove_button.setObjectName(f"{STEM}RemoveValueButton")
        self.remove_button.clicked.connect(self.remove_value)
        row.addWidget(self.add_button)
        row.addWidget(self.remove_button)
        row.addStretch(1)
        layout.addLayout(row)
        self.error_label = QLabel()
        self.error_label.setObjectName(f"{STEM}FormError")
        self.error_label.setAccessibleName("Why the form was refused")
        self.error_label.setWordWrap(True)
        self.error_label.setProperty("error", True)
        self.error_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error_label.hide()
        layout.addWidget(self.error_label)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        self.save_button = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        self.save_button.setObjectName(f"{STEM}SaveButton")
        self.buttons.accepted.connect(self.save_requested)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.resize(520, 420)

    def add_value(self, value: str, description: str, *, edit: bool = False) -> None:
        row = self.values.rowCount()
        self.values.insertRow(row)
        first = QTableWidgetItem(value)
        self.values.setItem(row, 0, first)
        self.values.setItem(row, 1, QTableWidgetItem(description))
        if edit:
            self.values.setCurrentCell(row, 0)
            self.values.editItem(first)

    def remove_value(self) -> None:
        rows = sorted({i.row() for i in self.values.selectedIndexes()}, reverse=True)
        if not rows and self.values.currentRow() >= 0:
            rows = [self.values.currentRow()]
        for row in rows:
            self.values.removeRow(row)

    def draft(self) -> FieldForm:
        """What the form holds now."""

        def text(row: int, column: int) -> str:
            item = self.values.item(row, column)
            return item.text() if item is not None else ""

        values = [(text(r, 0), text(r, 1)) for r in range(self.values.rowCount())]
        return FieldForm(None, self.name_edit.text(), self.description_edit.text(),
                         self.stickiness_box.isChecked(), values)  # fmt: skip

    def show_error(self, text: str) -> None:
        self.error_label.setText(text)
        self.error_label.setVisible(bool(text))


class ContextUsageViewer(ToolContent):
    """The strategies that use a context field, grouped by project and feature."""

    model: ContextUsageModel
    states: StatePanel

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(session, parent)
        self.setObjectName(f"{STEM}Viewer")
        self.model = ContextUsageModel(session, self)
        self._export_task: asyncio.Task[int] | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(8)

        self.picker = Picker(
            STEM,
            self.model.fields,
            caption="Context field:",
            button_text="Show",
            placeholder="Pick or type a context field's name",
        )
        self.picker.button.setToolTip("List the strategies that use this context field (Enter)")
        self.picker.chosen.connect(self.on_picker_chosen)
        layout.addWidget(self.picker)

        # ---- changing fields
        changes = QHBoxLayout()
        self.new_button = _button("&New field…", "New", "Create a context field")
        self.edit_button = _button("&Edit…", "Edit", "Edit the context field")
        self.delete_button = _button("&Delete…", "Delete", "Delete the context field")
        self.undo_button = _button("&Undo", "Undo", "Undo the last change to a context field")
        self.undo_button.hide()
        self.outcome_label = QLabel()
        self.outcome_label.setObjectName(f"{STEM}Outcome")
        self.outcome_label.setAccessibleName("What the last change did")
        self.outcome_label.setWordWrap(True)
        self.outcome_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        for button in (self.new_button, self.edit_button, self.delete_button):
            changes.addWidget(button)
        changes.addWidget(self.outcome_label, 1)
        changes.addWidget(self.undo_button)
        layout.addLayout(changes)
        self.dialog: FieldDialog | None = None
        #: a confirmation opens over the form when it asks (Save), else over the window
        self.confirmations = ConfirmationFlow(
            self, lambda plan: FieldConfirmation(plan, self.dialog or self), self.model.carry_out
        )
        self.new_button.clicked.connect(self.on_new_button_clicked)
        self.edit_button.clicked.connect(self.on_edit_button_clicked)
        self.delete_button.clicked.connect(self.on_delete_button_clicked)
        self.undo_button.clicked.connect(self.on_undo_button_clicked)

        # ---- the content: a bar above the tree
        content = QWidget()
        content.setObjectName(f"{STEM}Results")
        results = QVBoxLayout(content)
        results.setContentsMargins(0, 0, 0, 0)
        results.setSpacing(6)
        bar = QHBoxLayout()
        self.filter_edit = filter_edit(STEM, "strategies")
        self.filter_edit.textChanged.connect(self.on_filter_edit_text_changed)
        bar.addWidget(self.filter_edit, 1)
        self.count_label = QLabel()
        self.count_label.setObjectName(f"{STEM}Count")
        self.count_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.count_label.setAccessibleName("How many strategies use the field")
        bar.addWidget(self.count_label, 2)
        self.copy_button = QPushButton("Copy")
        self.copy_button.setObjectName(f"{STEM}CopyButton")
        self.copy_button.setToolTip(
            "Copy the selected strategies, or all shown when none is selected (Ctrl+C)"
        )
        self.copy_button.setAccessibleName("Copy the strategies")
        self.copy_button.clicked.connect(self.on_copy_button_clicked)
        bar.addWidget(self.copy_button)
        self.export_button = QPushButton("Export CSV…")
        self.export_button.setObjectName(f"{STEM}ExportButton")
        self.export_button.setAccessibleName("Export the strategies shown to a CSV file")
        self.export_button.clicked.connect(self.on_export_button_clicked)
        bar.addWidget(self.export_button)
        results.addLayout(bar)

        self.items = QStandardItemModel(self)
        self.items.setHorizontalHeaderLabels(list(COLUMN_TITLES))
        self.tree = StrategyTree()
        self.tree.setModel(self.items)
        self.filter_edit.leads_to = self.tree  # Down in the filter box
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        self.copy_action = QAction("Copy", self.tree)
        self.copy_action.setObjectName(f"{STEM}CopyAction")
        self.copy_action.setShortcut(QKeySequence.StandardKey.Copy)
        self.copy_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.copy_action.triggered.connect(self.on_copy_action_triggered)
        self.copy_all_action = QAction("Copy all shown", self.tree)
        self.copy_all_action.setObjectName(f"{STEM}CopyAllAction")
        self.copy_all_action.triggered.connect(self.on_copy_all_action_triggered)
        self.export_action = QAction("Export CSV…", self.tree)
        self.export_action.setObjectName(f"{STEM}ExportAction")
        self.export_action.triggered.connect(self.on_export_button_clicked)
        for action in (self.copy_action, self.copy_all_action, self.export_action):
            self.tree.addAction(action)
        results.addWidget(self.tree, 1)
        self.no_match = QLabel()
        self.no_match.setObjectName(f"{STEM}NoMatch")
        self.no_match.setWordWrap(True)
        quiet(self.no_match)
        self.no_match.hide()
        results.addWidget(self.no_match)

        self.states = StatePanel(STEM, content)
        layout.addWidget(self.states, 1)

        self._shown_groups: object = None  # the groups the tree was last built from
        self.model.changed.connect(self.on_model_changed)
        self.model.actions_changed.connect(self.on_model_actions_changed)
        self.model.form_opened.connect(self.on_model_form_opened)
        self.model.form_changed.connect(self.on_model_form_changed)
        self.model.plan_ready.connect(self.on_model_plan_ready)
        self.model.change_finished.connect(self.on_model_change_finished)
        self.model.outcome_changed.connect(self.on_model_outcome_changed)
        self.model.status_changed.connect(self.on_model_status_changed)
        self.start_model()
        self.on_model_actions_changed()

    # ------------------------------------------------------------------ ToolContent

    def open_item(self, item: Any) -> None:
        field = str(item)
        self.picker.set_value(field)
        self.model.show_field(field)

    def focus_filter(self) -> bool:
        if not self.filter_edit.isVisible():
            return False
        self.filter_edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.filter_edit.selectAll()
        return True

    # ------------------------------------------------------------------ the tree

    def rebuild(self) -> None:
        """Fill the tree from the model's groups, every group expanded."""
        self.items.removeRows(0, self.items.rowCount())
        root = self.items.invisibleRootItem()
        for project in self.model.groups:
            project_item = _item(project.project, tooltip=f"Project {project.project}: "
                                 f"{project.summary}")  # fmt: skip
            for feature in project.features:
                feature_item = _item(feature.feature, tooltip=f"Feature {feature.feature}")
                for strategy in feature.strategies:
                    leaf = _item(leaf_text(strategy),
                                 tooltip=f"Strategy id: {strategy.id or 'none given'}")  # fmt: skip
                    leaf.setData(strategy, STRATEGY_ROLE)
                    feature_item.appendRow([leaf, _item("")])
                project_item.appendRow([feature_item, _count_item(len(feature.strategies))])
            count = _count_item(project.strategy_count)
            for item in (project_item, count):
                bold = item.font()
                bold.setBold(True)
                item.setFont(bold)
            root.appendRow([project_item, count])
        self.tree.expandAll()
        self._shown_groups = self.model.groups

    # ------------------------------------------------------------------ changing fields

    def on_model_actions_changed(self) -> None:
        for button, action, tip in (
            (self.new_button, CREATE_CONTEXT_FIELD, "Create a context field"),
            (self.edit_button, EDIT_CONTEXT_FIELD,
             "Edit the description, stickiness and legal values of the field shown"),
            (self.delete_button, DELETE_CONTEXT_FIELD,
             "Delete the field shown (only while no strategy uses it)"),
        ):  # fmt: skip
            reason = self.model.action_reason(action)
            button.setEnabled(not reason)
            button.setToolTip(reason or tip)
        done = self.model.last_change
        self.undo_button.setVisible(done is not None)
        self.undo_button.setEnabled(done is not None and not self.model.changing)
        if done is not None:
            self.undo_button.setToolTip(
                "Put the previous field back" if done.plan.verb == "change"
                else "Create the deleted field again from its snapshot"
            )  # fmt: skip

    def on_new_button_clicked(self) -> None:
        self.model.new_field()

    def on_edit_button_clicked(self) -> None:
        self.model.edit_field()

    def on_delete_button_clicked(self) -> None:
        self.model.delete_field()

    def on_undo_button_clicked(self) -> None:
        self.model.undo()

    def on_model_form_opened(self) -> None:
        form = self.model.form
        if form is None or self.dialog is not None:
            return
        self.dialog = FieldDialog(form, self)
        self.dialog.save_requested.connect(self.on_dialog_save)
        self.dialog.finished.connect(self.on_dialog_finished)
        self.dialog.open()

    def on_dialog_save(self) -> None:
        dialog = self.dialog
        if dialog is None or self.confirmation is not None:
            return
        plan = self.model.plan_form(dialog.draft())
        if plan is not None:
            dialog.show_error("")
            self.confirmations.ask(plan)

    def on_dialog_finished(self, result: int) -> None:
        dialog, self.dialog = self.dialog, None
        if dialog is None:
            return
        if result != QDialog.DialogCode.Accepted:
            self.model.close_form()
        dialog.deleteLater()

    def on_model_form_changed(self) -> None:
        form = self.model.form
        if self.dialog is None:
            return
        if form is None:
            self.dialog.accept()  # saved
        else:
            self.dialog.show_error(form.error)

    def on_model_plan_ready(self, plan: FieldPlan) -> None:
        self.confirmations.ask(plan)

    @property
    def confirmation(self) -> FieldConfirmation | None:
        """The confirmation open now, if any."""
        box = self.confirmations.box
        return box if isinstance(box, FieldConfirmation) else None

    def on_model_status_changed(self, text: str) -> None:
        if text and self.model.changing:
            self.outcome_label.setText(text)

    def on_model_outcome_changed(self) -> None:
        show_outcome(self.outcome_label, self.model.outcome, self.model.outcome_error)

    def on_model_change_finished(self) -> None:
        if self.model.field and self.picker.combo.currentText() != self.model.field:
            self.picker.set_value(self.model.field)

    # ------------------------------------------------------------------ slots

    def on_picker_chosen(self, field: str) -> None:
        self.model.show_field(field)

    def on_filter_edit_text_changed(self, text: str) -> None:
        self.model.set_filter(text)

    def on_model_phase_changed(self) -> None:
        self.on_model_changed()

    def on_model_changed(self) -> None:
        m = self.model
        if m.phase is LoadPhase.READY:
            if self._shown_groups is not m.groups:
                self.rebuild()
            self.count_label.setText(m.count_text)
            shown = bool(m.shown)
            self.copy_button.setEnabled(shown)
            self.export_button.setEnabled(shown)
            self.no_match.setText(
                "" if shown else f"No strategy matches “{m.filter_text.strip()}”."
            )
            self.no_match.setVisible(not shown)
        self.show_phase()

    def copy(self, strategies: list[ContextFieldStrategy]) -> int:
        if not strategies:
            return 0
        QGuiApplication.clipboard().setText(tsv(strategies))
        noun = "strategy" if len(strategies) == 1 else "strategies"
        self.count_label.setText(f"{self.model.count_text} · {len(strategies):,} {noun} copied")
        return len(strategies)

    def on_copy_action_triggered(self) -> None:
        self.copy(self.tree.selected_strategies())

    def on_copy_all_action_triggered(self) -> None:
        self.copy(list(self.model.shown))

    def on_copy_button_clicked(self) -> None:
        self.copy(self.tree.selected_strategies() or list(self.model.shown))

    def on_export_button_clicked(self) -> None:
        name = f"context-usage-{self.model.loaded_field or 'field'}.csv"
        path = ask_export_path(self, "Export the strategies", name)
        if path:
            self.export(path)

    def export(self, path: str) -> asyncio.Task[int]:
        """Write the strategies shown to `path` (on a worker thread); the count line says when
        it is done."""
        self.export_button.setEnabled(False)
        task = asyncio.ensure_future(self.model.export_csv(path))
        self._export_task = task
        task.add_done_callback(lambda t: self._on_exported(t, path))
        return task

    def _on_exported(self, task: asyncio.Task[int], path: str) -> None:
        self.export_button.setEnabled(bool(self.model.shown))
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            QMessageBox.warning(self, "Export failed", f"Could not write {path}:\n{exc}")
            return
        self.count_label.setText(f"{self.model.count_text} · {task.result():,} exported")
