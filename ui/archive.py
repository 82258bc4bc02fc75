"""`ArchiveBrowser`: the archived feature browser (bound to `ArchiveBrowserModel`). A project
picker; the project's archived flags in a table (filter, count, Ctrl+C, CSV export); and beside
it the selected flag's fields and environments. Revive… and Delete for good… (or the Delete key
in the table) act on the selected rows (one or many) after `ArchiveConfirmation` says exactly
what will happen (deleting for good asks to type the project's id, or the flag's name for one
flag); Undo, right after a revive, archives those flags again. The buttons and what the last
action did are in a row above the list (so it stays in sight when the list is emptied), its
outcome shown on its own connection only. Shows and forwards; never fetches.

Where the server has no archive endpoint the flags come through the search API: the tool's page
already says so in its quiet note, so this window does not repeat it (only its loading text
mentions the search API, which can take a while on a large project)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.api.models import ArchivedFeature
from app.text import counted, plural
from app.viewmodels.archive import (
    ARCHIVED_COLUMN,
    DEFAULT_ORDER,
    DELETE,
    DETAILS,
    REVIVE,
    ArchiveBrowserModel,
    ArchivePlan,
)
from app.viewmodels.session import Session
from ui.confirmation import ConfirmationFlow, TypedConfirmation, show_outcome
from ui.palette import quiet
from ui.picker import Picker
from ui.states import StatePanel
from ui.table import DataTable
from ui.tool_content import ToolContent

STEM = "archivedFeatures"
NO_SELECTION = "Select a flag to see its environments"


def _value_label(name: str) -> QLabel:
    label = QLabel()
    label.setObjectName(name)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    label.setTextFormat(Qt.TextFormat.PlainText)
    return label


class ArchiveDetail(QStackedWidget):
    """The selected flag: its fields and its environments; a hint when nothing is selected."""

    def __init__(self, model: ArchiveBrowserModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.setObjectName(f"{STEM}Detail")

        self.empty_label = QLabel(NO_SELECTION)
        self.empty_label.setObjectName(f"{STEM}DetailEmpty")
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_label.setWordWrap(True)
        quiet(self.empty_label)  # a hint, in the palette's quieter text colour
        self.addWidget(self.empty_label)

        page = QWidget()
        page.setObjectName(f"{STEM}DetailPage")
        layout = QVBoxLayout(page)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.setSpacing(6)
        self.name_label = _value_label(f"{STEM}DetailName")
        self.name_label.setAccessibleName("Flag")
        bold = QFont(self.name_label.font())
        bold.setBold(True)
        self.name_label.setFont(bold)
        layout.addWidget(self.name_label)

        row = QHBoxLayout()
        row.setSpacing(16)
        form = QFormLayout()
        form.setContentsMargins(0, 0, 0, 0)
        form.setHorizontalSpacing(12)
        form.setVerticalSpacing(2)
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.DontWrapRows)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.values: dict[str, QLabel] = {}
        for title, _get in DETAILS:
            key = "".join(part.title() for part in title.split())
            value = _value_label(f"{STEM}Detail{key}")
            value.setAccessibleName(title)
            caption = QLabel(f"{title}:")
            caption.setObjectName(f"{STEM}Detail{key}Caption")
            caption.setBuddy(value)
            form.addRow(caption, value)
            self.values[title] = value
        row.addLayout(form, 1)

        environments = QVBoxLayout()
        environments.setSpacing(2)
        self.environments_caption = QLabel("Environments:")
        self.environments_caption.setObjectName(f"{STEM}EnvironmentsCaption")
        environments.addWidget(self.environments_caption)
        self.environments_view = QTableView()
        self.environments_view.setObjectName(f"{STEM}Environments")
        self.environments_view.setAccessibleName("Environments of the selected flag")
        self.environments_view.setModel(model.environments)
        self.environments_view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.environments_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.environments_view.setAlternatingRowColors(True)
        self.environments_view.setWordWrap(False)
        self.environments_view.setTabKeyNavigation(False)
        rows = self.environments_view.verticalHeader()
        rows.hide()
        rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        rows.setDefaultSectionSize(self.environments_view.fontMetrics().height() + 10)
        header = self.environments_view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.environments_caption.setBuddy(self.environments_view)
        environments.addWidget(self.environments_view, 1)
        self.no_environments = QLabel("The server lists no environments for this flag.")
        self.no_environments.setObjectName(f"{STEM}NoEnvironments")
        self.no_environments.setWordWrap(True)
        quiet(self.no_environments)
        environments.addWidget(self.no_environments)
        environments.addStretch(0)
        row.addLayout(environments, 1)
        layout.addLayout(row, 1)

        self.detail_page = page
        self.addWidget(page)

        model.selected_changed.connect(self.on_model_selected_changed)
        self.on_model_selected_changed(model.selected)

    def on_model_selected_changed(self, feature: ArchivedFeature | None) -> None:
        if feature is None:
            self.setCurrentWidget(self.empty_label)
            return
        self.name_label.setText(feature.name)
        for title, get in DETAILS:
            self.values[title].setText(get(feature))
        has_environments = self.model.environments.total_count > 0
        self.environments_view.setVisible(has_environments)
        self.no_environments.setVisible(not has_environments)
        self.setCurrentWidget(self.detail_page)


class ArchiveConfirmation(TypedConfirmation):
    """Asks before flags are revived, deleted for good or archived again, naming exactly what
    will change (`ArchivePlan.lines()`). Deleting for good asks the person to type
    `plan.confirm_text` first (the shared `TypedConfirmation`)."""

    def __init__(self, plan: ArchivePlan, parent: QWidget | None = None) -> None:
        flags = plural(plan.count, "flag")
        title = {REVIVE: f"&Revive {flags}", DELETE: f"&Delete {flags} for good"}.get(
            plan.verb, f"&Archive {flags} again"
        )
        super().__init__(STEM, plan.question, plan, title, parent)


class ArchiveBrowser(ToolContent):
    """A project's archived flags, and the selected one's environments."""

    model: ArchiveBrowserModel
    states: StatePanel

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(session, parent)
        self.setObjectName(f"{STEM}Browser")
        self.model = ArchiveBrowserModel(session, self)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(8)

        self.picker = Picker(
            STEM,
            self.model.projects,
            caption="Project:",
            button_text="Show",
            placeholder="Pick or type a project id",
        )
        self.picker.button.setToolTip("List the archived flags of this project (Enter)")
        self.picker.chosen.connect(self.on_picker_chosen)
        layout.addWidget(self.picker)
        self.notice = QLabel()
        self.notice.setObjectName(f"{STEM}Notice")
        self.notice.setWordWrap(True)
        self.notice.hide()
        layout.addWidget(self.notice)
        # the actions and their outcome above the list's states: what an action did stays in
        # sight when it empties the list
        actions = QHBoxLayout()
        layout.addLayout(actions)

        self.table = DataTable(
            STEM,
            self.model.table,
            noun="archived flags",
            count_text=counted("archived flag"),
            stretch_column=2,  # the description
        )
        if not self.table.restored:
            self.table.sort_by(ARCHIVED_COLUMN, DEFAULT_ORDER)
        self.table.current_changed.connect(self.on_table_current_changed)
        self.model.table.modelReset.connect(self.on_table_model_reset)
        self.model.selected_changed.connect(self.on_model_selected_changed)
        self.detail = ArchiveDetail(self.model)

        listing = QWidget()
        listing.setObjectName(f"{STEM}Listing")
        listing_layout = QVBoxLayout(listing)
        listing_layout.setContentsMargins(0, 0, 0, 0)
        listing_layout.setSpacing(6)
        listing_layout.addWidget(self.table, 1)
        self.revive_button = QPushButton("Revive…")
        self.revive_button.setObjectName(f"{STEM}ReviveButton")
        self.revive_button.setAccessibleName("Revive the selected flags")
        self.delete_button = QPushButton("Delete for good…")
        self.delete_button.setObjectName(f"{STEM}DeleteButton")
        self.delete_button.setAccessibleName("Delete the selected flags for good")
        self.undo_button = QPushButton("Undo")
        self.undo_button.setObjectName(f"{STEM}UndoButton")
        self.undo_button.setAccessibleName("Undo the revive: archive those flags again")
        for button in (self.revive_button, self.delete_button, self.undo_button):
            actions.addWidget(button)
        self.outcome_label = QLabel()
        self.outcome_label.setObjectName(f"{STEM}Outcome")
        self.outcome_label.setAccessibleName("What the last action did")
        self.outcome_label.setWordWrap(True)
        self.outcome_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        actions.addWidget(self.outcome_label, 1)
        self.confirmations = ConfirmationFlow(
            self, lambda plan: ArchiveConfirmation(plan, self), self.model.carry_out
        )

        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.setObjectName(f"{STEM}Splitter")
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(listing)
        self.splitter.addWidget(self.detail)
        self.splitter.setStretchFactor(0, 2)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([340, 220])

        self.states = StatePanel(STEM, self.splitter)
        layout.addWidget(self.states, 1)

        self.table.view.selectionModel().selectionChanged.connect(self.on_table_selection_changed)
        self.model.table.modelReset.connect(self.on_table_selection_changed)
        self.revive_button.clicked.connect(self.on_revive_button_clicked)
        self.delete_button.clicked.connect(self.on_delete_button_clicked)
        self.table.delete_with(self.delete_button)  # the Delete key
        self.undo_button.clicked.connect(self.on_undo_button_clicked)
        self.model.actions_changed.connect(self.on_model_actions_changed)
        self.model.outcome_changed.connect(self.on_model_outcome_changed)
        self.model.status_changed.connect(self.on_model_status_changed)
        self.model.changed.connect(self.on_model_changed)
        self.model.project_changed.connect(self.picker.set_value)
        self.start_model()
        self.on_model_actions_changed()

    # ------------------------------------------------------------------ ToolContent

    def open_item(self, item: Any) -> None:
        project = str(item)
        self.picker.set_value(project)
        self.model.show_project(project)

    # ------------------------------------------------------------------ slots

    def on_picker_chosen(self, project: str) -> None:
        self.model.show_project(project)

    def on_table_current_changed(self, feature: ArchivedFeature | None) -> None:
        if feature is not None:
            self.model.select(feature)

    def on_table_model_reset(self) -> None:
        """After a sort or a filter, the flag in the detail pane stays the current row (when the
        filter lets it through)."""
        self._show_selected_in_table()

    def on_model_selected_changed(self, _feature: ArchivedFeature | None) -> None:
        self._show_selected_in_table()  # after F5, the same flag is selected again

    def _show_selected_in_table(self) -> None:
        selected = self.model.selected
        view = self.table.view
        current = view.currentIndex()
        if selected is None or (
            current.isValid() and self.model.table.row_at(current.row()) is selected
        ):
            return
        row = self.model.table.row_of(lambda f: f is selected)
        if row < 0:
            return
        index = self.model.table.index(row, 0)
        flags = (
            QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows
        )
        view.selectionModel().setCurrentIndex(index, flags)
        view.scrollTo(index)

    def on_model_phase_changed(self) -> None:
        self.on_model_changed()

    def on_model_changed(self) -> None:
        m = self.model
        self.notice.setText(m.notice)
        self.notice.setVisible(bool(m.notice))
        self.show_phase()

    # ------------------------------------------------------------------ revive, delete, undo

    def on_table_selection_changed(self, *_: object) -> None:
        self.model.select_rows(self.table.selected_items())

    def on_model_actions_changed(self) -> None:
        m = self.model
        for button, reason, tip in (
            (self.revive_button, m.reason(REVIVE), "Revive the selected flags"),
            (self.delete_button, m.reason(DELETE), "Delete the selected flags for good (Delete)"),
            (self.undo_button, m.undo_reason, "Archive the flags just revived again"),
        ):
            button.setEnabled(not reason)
            button.setToolTip(reason or tip)
        self.undo_button.setVisible(m.undoable is not None)

    def on_revive_button_clicked(self) -> None:
        self._confirm(self.model.plan(REVIVE))

    def on_delete_button_clicked(self) -> None:
        self._confirm(self.model.plan(DELETE))

    def on_undo_button_clicked(self) -> None:
        self._confirm(self.model.plan_undo())

    def _confirm(self, plan: ArchivePlan | None) -> None:
        self.confirmations.ask(plan)

    @property
    def confirmation(self) -> ArchiveConfirmation | None:
        """The confirmation open now, if any."""
        box = self.confirmations.box
        return box if isinstance(box, ArchiveConfirmation) else None

    def on_model_status_changed(self, text: str) -> None:
        if text and self.model.acting:
            self.outcome_label.setText(text)

    def on_model_outcome_changed(self) -> None:
        show_outcome(self.outcome_label, self.model.outcome, self.model.outcome_error)
