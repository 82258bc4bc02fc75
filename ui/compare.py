"""`CompareView`: the Compare window (issue 37, slice 5), bound to `CompareModel`.

At the top the two sides, each this connection, a saved connection or a snapshot file
(Open…), with its environment once read ("All environments"), a swap button and Compare; then
the filters (kinds, project, tag, name): changing one compares what was read again, with no
request. While both sides are read, a line says which side reads which list, with Stop. Then
the kinds not compared (a side could not read them), and the differences as a tree: kind →
object → difference (where, change, the target's value, the source's), counted in the first
column; "only in source" and "only in target" are said in words and coloured (readable in
both palettes). The selected difference in full below the tree, target and source side by
side. Copy puts the selected differences (or all) on the clipboard as text lines; Export…
writes JSON or Markdown.

Promote… (Promote selected… when rows are selected) plans the promote of what is shown to this
connection, the target read again first, and shows every request in order before anything is
sent (`PlanConfirmation`, Cancel the default); confirmed, it goes through the runner with its
progress in the progress line and Stop (after the request under way), and both sides are
compared again. Undo promote… plans the last promote's undo the same way. What either did, or
why not, stays in the outcome line on its own connection. This window shows and forwards."""

from __future__ import annotations

from typing import Any, Literal

from PySide6.QtCore import QItemSelection, QModelIndex, QPersistentModelIndex, Qt, QTimer
from PySide6.QtGui import (
    QAction,
    QColor,
    QFont,
    QGuiApplication,
    QKeySequence,
    QPalette,
    QShortcut,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSplitter,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from app.snapshot.compare import KINDS, Change
from app.viewmodels.compare import (
    CHANGE_ROLE,
    LEVEL_ROLE,
    SIDES,
    CompareModel,
    Filters,
    Side,
    Which,
)
from app.viewmodels.tools import LoadPhase
from ui.confirmation import ConfirmationFlow, PlanConfirmation, show_outcome
from ui.palette import is_dark, quiet, readable
from ui.states import StatePanel
from ui.table import ask_export_path, export_folder
from ui.tool_content import ToolContent

STEM = "compare"
SIDE_ROLE = Qt.ItemDataRole.UserRole
#: the side picker's last entry: open a snapshot file
OPEN_FILE = "open"
SNAPSHOT_FILTER = "Snapshots (*.json);;All files (*)"

#: the colours of what one side only has, on light and on dark windows (made readable on the
#: tree's backgrounds); always with the change said in words beside them
ONLY_COLOURS = {
    (Change.ONLY_IN_SOURCE, False): "#1b7a2e",
    (Change.ONLY_IN_SOURCE, True): "#7ed98f",
    (Change.ONLY_IN_TARGET, False): "#b3261e",
    (Change.ONLY_IN_TARGET, True): "#ff9a8f",
}


class ChangeDelegate(QStyledItemDelegate):
    """Colours a row that only one side has (the change is said in its own column too)."""

    def initStyleOption(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        super().initStyleOption(option, index)
        if index.data(LEVEL_ROLE) == "kind":
            font = QFont(option.font)
            font.setBold(True)
            option.font = font
        change = index.data(CHANGE_ROLE)
        if change not in (Change.ONLY_IN_SOURCE, Change.ONLY_IN_TARGET):
            return
        palette = option.palette
        dark = is_dark(palette)
        grounds = [palette.color(QPalette.ColorRole.Base),
                   palette.color(QPalette.ColorRole.AlternateBase)]  # fmt: skip
        colour = readable(QColor(ONLY_COLOURS[change, dark]), grounds)
        palette.setColor(QPalette.ColorRole.Text, colour)
        option.palette = palette


class CompareView(ToolContent):
    model: CompareModel
    states: StatePanel
    #: two snapshot files compare with no server: the page says why this connection cannot
    #: be a side, and leaves the window enabled
    usable_when_unavailable = True

    def __init__(self, session: Any, parent: QWidget | None = None) -> None:
        super().__init__(session, parent)
        self.setObjectName(f"{STEM}View")
        self.model = CompareModel(session, self)
        self._filling = False

        # ---- the sides
        sides = QGridLayout()
        sides.setColumnStretch(1, 1)
        self.side_combos: dict[Which, QComboBox] = {}
        self.env_combos: dict[Which, QComboBox] = {}
        for row, which in enumerate(SIDES):
            label = QLabel(f"&{which.capitalize()}:")
            sides.addWidget(label, row, 0)
            combo = QComboBox()
            combo.setObjectName(f"{STEM}{which.capitalize()}Side")
            combo.setAccessibleName(f"The {which}")
            combo.setMinimumContentsLength(24)
            combo.setSizeAdjustPolicy(
                QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
            )
            label.setBuddy(combo)
            sides.addWidget(combo, row, 1)
            env = QComboBox()
            env.setObjectName(f"{STEM}{which.capitalize()}Environment")
            env.setAccessibleName(f"The {which}'s environment")
            env.setMinimumContentsLength(18)
            env.setToolTip("Compare one environment of this side (filled once it is read)")
            sides.addWidget(env, row, 2)
            self.side_combos[which] = combo
            self.env_combos[which] = env
            combo.activated.connect(lambda index, w=which: self.on_side_activated(w, index))
            env.activated.connect(lambda _index, w=which: self.on_environment_activated(w))
        self.swap_button = QPushButton("⇅ S&wap")
        self.swap_button.setObjectName(f"{STEM}SwapButton")
        self.swap_button.setToolTip("The source becomes the target, and the other way round")
        sides.addWidget(self.swap_button, 0, 3, 2, 1)
        self.compare_button = QPushButton("&Compare")
        self.compare_button.setObjectName(f"{STEM}CompareButton")
        self.compare_button.setDefault(True)
        self.compare_button.setToolTip("Read both sides now and compare them (F5)")
        sides.addWidget(self.compare_button, 0, 4, 2, 1)
        self.promote_button = QPushButton("&Promote…")
        self.promote_button.setObjectName(f"{STEM}PromoteButton")
        sides.addWidget(self.promote_button, 0, 5)
        self.undo_button = QPushButton("&Undo promote…")
        self.undo_button.setObjectName(f"{STEM}UndoButton")
        sides.addWidget(self.undo_button, 1, 5)

        # ---- the filters, Copy and Export
        filters = QHBoxLayout()
        self.kinds_button = QPushButton()
        self.kinds_button.setObjectName(f"{STEM}KindsButton")
        self.kinds_button.setAccessibleName("The kinds compared")
        self.kinds_menu = QMenu(self.kinds_button)
        self.kind_actions: dict[str, QAction] = {}
        for kind in KINDS:
            action = self.kinds_menu.addAction(kind.title)
            action.setCheckable(True)
            action.setChecked(True)
            action.setData(kind.key)
            action.toggled.connect(self.on_filters_changed)
            self.kind_actions[kind.key] = action
        self.kinds_button.setMenu(self.kinds_menu)
        filters.addWidget(self.kinds_button)
        self.project_combo = QComboBox()
        self.project_combo.setObjectName(f"{STEM}Project")
        self.project_combo.setAccessibleName("Only this project's")
        self.project_combo.setMinimumContentsLength(14)
        filters.addWidget(self.project_combo)
        self.tag_combo = QComboBox()
        self.tag_combo.setObjectName(f"{STEM}Tag")
        self.tag_combo.setAccessibleName("Only the flags with this tag")
        self.tag_combo.setMinimumContentsLength(14)
        filters.addWidget(self.tag_combo)
        self.name_edit = QLineEdit()
        self.name_edit.setObjectName(f"{STEM}Name")
        self.name_edit.setPlaceholderText("Names matching (checkout-*, web-shop/*)")
        self.name_edit.setAccessibleName("Only the names matching this pattern")
        self.name_edit.setClearButtonEnabled(True)
        filters.addWidget(self.name_edit, 1)
        self.copy_button = QPushButton("C&opy")
        self.copy_button.setObjectName(f"{STEM}CopyButton")
        self.copy_button.setToolTip("Copy the selected differences as text (all when none is)")
        filters.addWidget(self.copy_button)
        self.export_button = QPushButton("&Export…")
        self.export_button.setObjectName(f"{STEM}ExportButton")
        self.export_button.setToolTip("Write the comparison shown as JSON or Markdown")
        filters.addWidget(self.export_button)
        self.name_timer = QTimer(self)
        self.name_timer.setSingleShot(True)
        self.name_timer.setInterval(250)

        # ---- the progress
        self.progress_row = QWidget()
        self.progress_row.setObjectName(f"{STEM}Progress")
        progress = QHBoxLayout(self.progress_row)
        progress.setContentsMargins(0, 0, 0, 0)
        self.progress_label = QLabel()
        self.progress_label.setObjectName(f"{STEM}ProgressLabel")
        # wrapped: a long progress line (every list read so far, both sides) widened the window
        self.progress_label.setWordWrap(True)
        progress.addWidget(self.progress_label, 1)
        self.progress_bar = QProgressBar()
        self.progress_bar.setObjectName(f"{STEM}ProgressBar")
        self.progress_bar.setRange(0, 0)
        self.progress_bar.setTextVisible(False)
        self.progress_bar.setMaximumWidth(160)
        progress.addWidget(self.progress_bar)
        self.stop_button = QPushButton("S&top")
        self.stop_button.setObjectName(f"{STEM}StopButton")
        self.stop_button.setToolTip("Stop reading: nothing is compared")
        progress.addWidget(self.stop_button)
        self.progress_row.hide()

        # ---- what was compared
        self.summary_label = QLabel()
        self.summary_label.setObjectName(f"{STEM}Summary")
        self.summary_label.setWordWrap(True)
        self.summary_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.not_compared_label = QLabel()
        self.not_compared_label.setObjectName(f"{STEM}NotCompared")
        self.not_compared_label.setWordWrap(True)
        self.not_compared_label.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
        )
        quiet(self.not_compared_label)
        self.outcome_label = QLabel()
        self.outcome_label.setObjectName(f"{STEM}Outcome")
        self.outcome_label.setAccessibleName("What the last promote did")
        self.outcome_label.setWordWrap(True)
        self.outcome_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.outcome_label.hide()

        # ---- the tree and the details
        self.tree = QTreeView()
        self.tree.setObjectName(f"{STEM}Tree")
        self.tree.setAccessibleName("The differences")
        self.tree.setModel(self.model.tree)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.tree.setItemDelegate(ChangeDelegate(self.tree))
        self.tree.expanded.connect(self._span_headings)
        header = self.tree.header()
        header.setStretchLastSection(True)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        header.resizeSection(0, 380)
        header.resizeSection(1, 150)
        header.resizeSection(2, 200)
        details = QWidget()
        details.setObjectName(f"{STEM}Details")
        details_layout = QVBoxLayout(details)
        details_layout.setContentsMargins(0, 0, 0, 0)
        self.details_heading = QLabel("Select a difference to see both values in full.")
        self.details_heading.setObjectName(f"{STEM}DetailsHeading")
        self.details_heading.setWordWrap(True)
        self.details_heading.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        details_layout.addWidget(self.details_heading)
        values = QHBoxLayout()
        self.value_edits: dict[Which, QPlainTextEdit] = {}
        for which in ("target", "source"):
            column = QVBoxLayout()
            title = QLabel(f"The {which}'s value")
            quiet(title)
            column.addWidget(title)
            edit = QPlainTextEdit()
            edit.setObjectName(f"{STEM}{which.capitalize()}Value")
            edit.setReadOnly(True)
            edit.setAccessibleName(f"The {which}'s value in full")
            edit.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
            column.addWidget(edit)
            values.addLayout(column)
            self.value_edits[which] = edit
        details_layout.addLayout(values)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.setObjectName(f"{STEM}Splitter")
        self.splitter.addWidget(self.tree)
        self.splitter.addWidget(details)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 1)

        self.states = StatePanel(STEM, self.splitter)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(6)
        outer.addLayout(sides)
        outer.addLayout(filters)
        outer.addWidget(self.progress_row)
        outer.addWidget(self.summary_label)
        outer.addWidget(self.not_compared_label)
        outer.addWidget(self.outcome_label)
        outer.addWidget(self.states, 1)

        self.swap_button.clicked.connect(self.model.swap)
        self.compare_button.clicked.connect(self.model.load)
        self.stop_button.clicked.connect(self.model.cancel)
        self.copy_button.clicked.connect(self.on_copy_button_clicked)
        self.export_button.clicked.connect(self.on_export_button_clicked)
        self.project_combo.activated.connect(self.on_filters_changed)
        self.tag_combo.activated.connect(self.on_filters_changed)
        self.name_edit.textChanged.connect(self.name_timer.start)
        self.name_edit.returnPressed.connect(self.on_filters_changed)
        self.name_timer.timeout.connect(self.on_filters_changed)
        copy = QShortcut(QKeySequence(QKeySequence.StandardKey.Copy), self.tree)
        copy.setContext(Qt.ShortcutContext.WidgetShortcut)
        copy.activated.connect(self.on_copy_button_clicked)
        selection = self.tree.selectionModel()
        selection.currentChanged.connect(self.on_tree_current_changed)
        selection.selectionChanged.connect(self.on_tree_selection_changed)
        m = self.model
        m.choices_changed.connect(self.on_model_choices_changed)
        m.result_changed.connect(self.on_model_result_changed)
        m.busy_changed.connect(self.on_model_busy_changed)
        m.progress.connect(self.on_model_progress)
        m.exported.connect(self.on_model_exported)
        self.promotes = ConfirmationFlow(self, self._promote_confirmation, self.model.promote)
        self.undos = ConfirmationFlow(self, self._undo_confirmation, self.model.undo)
        self.promote_button.clicked.connect(self.on_promote_button_clicked)
        self.undo_button.clicked.connect(self.model.plan_undo)
        m.promote_planned.connect(self.promotes.ask)
        m.undo_planned.connect(self.undos.ask)
        m.outcome_changed.connect(self.on_model_outcome_changed)
        m.actions_changed.connect(self.on_model_actions_changed)
        m.action_progress_changed.connect(self.on_model_busy_changed)
        self.start_model()
        self.on_model_choices_changed()
        self.on_model_result_changed()
        self.on_model_outcome_changed()

    # ------------------------------------------------------------------ the pickers

    def _fill_sides(self) -> None:
        choices = self.model.side_choices()
        for which, combo in self.side_combos.items():
            combo.blockSignals(True)
            combo.clear()
            chosen = self.model.sides[which]
            if chosen is None:
                combo.addItem("Choose…", None)
            for side, label in choices:
                combo.addItem(label, side)
                if side.kind == "connection" and self.model.connection_reason:
                    combo.setItemData(combo.count() - 1, self.model.connection_reason,
                                      Qt.ItemDataRole.ToolTipRole)  # fmt: skip
                if side.kind == "file":
                    combo.setItemData(combo.count() - 1, side.name, Qt.ItemDataRole.ToolTipRole)
            combo.addItem("Open a snapshot file…", OPEN_FILE)
            found = next((i for i in range(combo.count()) if combo.itemData(i) == chosen), 0)
            combo.setCurrentIndex(found)
            combo.blockSignals(False)

    def _fill_environments(self) -> None:
        for which, combo in self.env_combos.items():
            combo.blockSignals(True)
            combo.clear()
            combo.addItem("All environments", "")
            for name in self.model.environment_choices(which):
                combo.addItem(name, name)
            index = combo.findData(self.model.environments[which])
            combo.setCurrentIndex(max(index, 0))
            combo.setEnabled(combo.count() > 1)
            combo.blockSignals(False)

    def _fill_filters(self) -> None:
        for combo, everything, choices in (
            (self.project_combo, "All projects", self.model.project_choices()),
            (self.tag_combo, "All tags", self.model.tag_choices()),
        ):
            current = combo.currentData() or ""
            combo.blockSignals(True)
            combo.clear()
            combo.addItem(everything, "")
            for value in choices:
                combo.addItem(value, value)
            combo.setCurrentIndex(max(combo.findData(current), 0))
            combo.blockSignals(False)
        chosen = [k for k, a in self.kind_actions.items() if a.isChecked()]
        self.kinds_button.setText(
            "All kinds" if len(chosen) == len(KINDS) else f"{len(chosen)} of {len(KINDS)} kinds"
        )

    def pick_side(self, which: Which, side: Side) -> None:
        """Choose `side` for `which` (what picking it in its list does)."""
        self.model.set_side(which, side)

    def open_file(self, which: Which, path: str) -> None:
        """A snapshot file for `which` (what Open a snapshot file… does once chosen)."""
        self.model.open_file(which, path)

    def set_filters(self, filters: Filters) -> None:
        """Show and apply `filters` (what the filter widgets do)."""
        self._filling = True
        for key, action in self.kind_actions.items():
            action.setChecked(filters.kinds is None or key in filters.kinds)
        self._filling = False
        self.project_combo.setCurrentIndex(max(self.project_combo.findData(filters.project), 0))
        self.tag_combo.setCurrentIndex(max(self.tag_combo.findData(filters.tag), 0))
        self.name_edit.blockSignals(True)
        self.name_edit.setText(filters.name)
        self.name_edit.blockSignals(False)
        self.on_filters_changed()

    def current_filters(self) -> Filters:
        chosen = frozenset(k for k, a in self.kind_actions.items() if a.isChecked())
        return Filters(
            kinds=None if len(chosen) == len(KINDS) else chosen,
            project=str(self.project_combo.currentData() or ""),
            tag=str(self.tag_combo.currentData() or ""),
            name=self.name_edit.text().strip(),
        )

    def focus_filter(self) -> bool:
        """Ctrl+F: the names filter."""
        self.name_edit.setFocus()
        self.name_edit.selectAll()
        return True

    # ------------------------------------------------------------------ slots

    def on_side_activated(self, which: Which, index: int) -> None:
        data = self.side_combos[which].itemData(index)
        if data == OPEN_FILE:
            path, _ = QFileDialog.getOpenFileName(
                self, f"Open a snapshot file as the {which}", str(export_folder()),
                SNAPSHOT_FILTER,
            )  # fmt: skip
            if path:
                self.open_file(which, path)
            else:
                self._fill_sides()  # back to what was chosen
        elif isinstance(data, Side):
            self.pick_side(which, data)

    def on_environment_activated(self, which: Which) -> None:
        self.model.set_environment(which, str(self.env_combos[which].currentData() or ""))

    def on_filters_changed(self, *_: object) -> None:
        if self._filling:
            return
        self.name_timer.stop()
        self.model.set_filters(self.current_filters())
        self._fill_filters()

    def on_copy_button_clicked(self) -> None:
        indexes = [i for i in self.tree.selectionModel().selectedRows(0)]
        text = self.model.copy_text(indexes)
        if text:
            QGuiApplication.clipboard().setText(text)

    def on_export_button_clicked(self) -> None:
        c = self.model.comparison
        if c is None:
            return
        path = ask_export_path(self, "Export the comparison", "flagdesk-comparison.md",
                               "Markdown (*.md);;JSON (*.json)")  # fmt: skip
        if path:
            self.export(path)

    def export(self, path: str) -> None:
        """Write the comparison to `path`: JSON for a `.json` file, else Markdown."""
        kind: Literal["json", "markdown"] = "json" if path.lower().endswith(".json") else (
            "markdown")  # fmt: skip
        self.model.export(path, kind)

    def on_model_exported(self, text: str) -> None:
        window = self.window()
        status = getattr(window, "statusBar", None)
        if callable(status):
            status().showMessage(text, 10_000)
        self.summary_label.setToolTip(text)

    def on_tree_current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        details = self.model.details(current.siblingAtColumn(0))
        if details is None:
            self.details_heading.setText("Select a difference to see both values in full.")
            for edit in self.value_edits.values():
                edit.clear()
            return
        self.details_heading.setText(details.heading)
        self.value_edits["target"].setPlainText(details.target)
        self.value_edits["source"].setPlainText(details.source)

    def on_tree_selection_changed(self, *_: QItemSelection) -> None:
        count = self._selected_count()
        self.copy_button.setText("C&opy selected" if count else "C&opy")
        self.on_model_actions_changed()

    def on_model_choices_changed(self) -> None:
        self._fill_sides()
        self._fill_environments()
        self._fill_filters()
        both = all(self.model.sides[w] is not None for w in SIDES)
        self.compare_button.setEnabled(both)

    def on_model_progress(self, _which: str, _text: str) -> None:
        self.progress_label.setText(self.model.loading_text)

    def on_model_busy_changed(self, _busy: bool = False) -> None:
        m = self.model
        reading, acting = m.reading, bool(m.action_progress)
        self.progress_row.setVisible(reading or acting)
        self.progress_label.setText(m.loading_text if reading else m.action_progress)
        done, total = m.action_steps if acting and not reading else (0, 0)
        self.progress_bar.setRange(0, total)
        self.progress_bar.setValue(done)
        self.stop_button.setToolTip(
            "Stop reading: nothing is compared" if reading or not acting
            else "Stop after the request under way: what went through is journaled"
        )  # fmt: skip
        self.on_model_actions_changed()

    def on_model_actions_changed(self) -> None:
        m = self.model
        why, selected = m.promote_reason, self._selected_count()
        what = "the selected objects' differences" if selected else "every difference shown"
        self.promote_button.setEnabled(not why)
        self.promote_button.setToolTip(
            why
            or f"Plan the promote of {what} to this connection: the requests are shown "
            "before anything is sent"
        )
        self.promote_button.setText("&Promote selected…" if selected else "&Promote…")
        why_not = m.undo_reason
        self.undo_button.setEnabled(not why_not)
        self.undo_button.setToolTip(why_not or "Put back what the last promote changed, "
                                    "from the snapshot it took first")  # fmt: skip

    def _selected_count(self) -> int:
        return len(self.tree.selectionModel().selectedRows(0))

    def _promote_confirmation(self, proposal: Any) -> PlanConfirmation:
        return PlanConfirmation(f"{STEM}Promote", "Promote", proposal, "&Promote", self)

    def _undo_confirmation(self, plan: Any) -> PlanConfirmation:
        return PlanConfirmation(f"{STEM}Undo", "Undo the promote", plan, "&Undo promote", self)

    def on_promote_button_clicked(self) -> None:
        self.model.plan_promote(self.tree.selectionModel().selectedRows(0))

    def on_model_outcome_changed(self) -> None:
        m = self.model
        show_outcome(self.outcome_label, m.outcome, m.outcome_error)
        self.outcome_label.setVisible(bool(m.outcome or m.outcome_error))
        self.on_model_actions_changed()

    def confirmation(self) -> PlanConfirmation | None:
        """The promote's or undo's confirmation open, if any."""
        for flow in (self.promotes, self.undos):
            if isinstance(flow.box, PlanConfirmation):
                return flow.box
        return None

    def on_model_result_changed(self) -> None:
        m = self.model
        self.summary_label.setText(m.summary)
        self.summary_label.setVisible(bool(m.summary))
        self.not_compared_label.setText(m.not_compared_text)
        self.not_compared_label.setVisible(bool(m.not_compared_text))
        has = m.comparison is not None and not m.comparison.same
        self.copy_button.setEnabled(m.comparison is not None)
        self.export_button.setEnabled(m.comparison is not None)
        self._fill_filters()
        self._span_headings(QModelIndex())
        if has and m.comparison is not None:
            kinds = [m.tree.index(row, 0) for row in range(m.tree.rowCount())]
            if len(m.comparison.differences) <= 300:
                self.tree.expandAll()
                for kind in kinds:
                    self._span_headings(kind)
            else:
                # the kinds alone, one at a time (each spans its objects' lines as it opens):
                # expandToDepth(0) asked the model for every index, 35 ms of 2,000 objects
                for kind in kinds:
                    self.tree.expand(kind)
        self.on_tree_current_changed(QModelIndex(), QModelIndex())
        self.on_tree_selection_changed()

    def _span_headings(self, parent: QModelIndex) -> None:
        """A kind's and an object's line across the columns (its counts are long): the kinds'
        lines (`parent` the root), or the objects' of the kind `parent` as it opens (spanning
        the lines of 2,000 objects at once held the window 15 ms). An object's own lines, its
        fields, are not spanned."""
        if parent.isValid() and parent.parent().isValid():
            return
        for row in range(self.model.tree.rowCount(parent)):
            self.tree.setFirstColumnSpanned(row, parent, True)

    def on_model_phase_changed(self) -> None:
        self.on_model_busy_changed()
        if self.model.closed:
            return
        self.show_phase()

    def show_phase(self) -> LoadPhase:
        phase = super().show_phase()
        self.progress_label.setText(self.model.loading_text if self.model.reading else "")
        return phase
