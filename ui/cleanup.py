"""`CleanupView`: the clean-up report's window (issue 36). On the left the kinds of finding the
report looked for here, each with its count, and under them one line for each part this server
or token cannot give (and why); on the right the chosen kind's findings in a `DataTable` (name,
id, detail, why, since: sort, filter as you type, Ctrl+C, Export CSV…). "Not seen or not used
for N days or more" is a setting above them: changing it reads the report again.

Each line acts: Revoke… or Delete… (or the Delete key) removes the selected findings of the
kind shown through the action of the tool they come from, after `CleanupConfirmation` names
them and why each was found (their number typed first, for several); while it runs the line
beside the buttons counts the requests and Stop ends it before the next one. Open shows the
selected finding's tool (`open_requested`). What an action did stays in that line, on this
connection only. Everything comes from `CleanupModel`: this window shows and forwards."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.registry import ACTIONS_BY_KEY, OPERATIONS
from app.viewmodels.cleanup import (
    MAX_DAYS,
    WHY_COLUMN,
    CleanupModel,
    CleanupPlan,
    findings_count_text,
)
from app.viewmodels.tools import LoadPhase
from ui.confirmation import ConfirmationFlow, TypedConfirmation, show_outcome
from ui.palette import quiet
from ui.states import StatePanel
from ui.table import DataTable
from ui.tool_content import ToolContent
from ui.users import show_refreshing

#: the role of a kind's key in its list item
KEY_ROLE = Qt.ItemDataRole.UserRole


class CleanupConfirmation(TypedConfirmation):
    """Names the findings acted on and why each was found (the tool's own plan's words for
    one plan); for several, their number is typed first."""

    def __init__(self, plan: CleanupPlan, parent: QWidget | None = None) -> None:
        count = len(plan.findings)
        button = f"&{plan.verb} {count:,} {plan.noun}" if count > 1 else f"&{plan.verb}"
        super().__init__("cleanup", f"{plan.verb} {plan.noun}", plan, button, parent)


class CleanupView(ToolContent):
    model: CleanupModel
    states: StatePanel

    def __init__(self, session: Any, parent: QWidget | None = None) -> None:
        super().__init__(session, parent)
        self.setObjectName("cleanupView")
        self.model = CleanupModel(session, self)

        # the actions and the days, outside the states: an emptied report keeps its outcome
        actions = QHBoxLayout()
        self.act_button = QPushButton("Delete…")
        self.act_button.setObjectName("cleanupActButton")
        self.act_button.setAccessibleName("Delete or revoke the selected findings")
        actions.addWidget(self.act_button)
        self.open_button = QPushButton("&Open")
        self.open_button.setObjectName("cleanupOpenButton")
        self.open_button.setAccessibleName("Open the selected finding in its tool")
        actions.addWidget(self.open_button)
        self.stop_button = QPushButton("S&top")
        self.stop_button.setObjectName("cleanupStopButton")
        self.stop_button.setToolTip("Stop before the next request")
        self.stop_button.hide()
        actions.addWidget(self.stop_button)
        self.outcome_label = QLabel()
        self.outcome_label.setObjectName("cleanupOutcome")
        self.outcome_label.setAccessibleName("What the last change did")
        self.outcome_label.setWordWrap(True)
        self.outcome_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        actions.addWidget(self.outcome_label, 1)
        days_label = QLabel("Not seen or used for")
        actions.addWidget(days_label)
        self.days_spin = QSpinBox()
        self.days_spin.setObjectName("cleanupDaysSpin")
        self.days_spin.setRange(0, MAX_DAYS)
        self.days_spin.setValue(self.model.days)
        self.days_spin.setSuffix(" days")
        self.days_spin.setAccessibleName("Not seen or not used for this many days or more")
        self.days_spin.setToolTip(
            "Tokens and service accounts not seen or not used for this many days or more "
            "(press Enter to read the report again)"
        )
        self.days_spin.setKeyboardTracking(False)  # one read when typing ends, not per digit
        line = self.days_spin.lineEdit()
        line.setObjectName("cleanupDaysEdit")
        line.setAccessibleName(self.days_spin.accessibleName())
        days_label.setBuddy(self.days_spin)
        actions.addWidget(self.days_spin)
        actions.addWidget(QLabel("or more"))

        # the report: its kinds on the left, the chosen kind's findings on the right
        body = QWidget()
        body.setObjectName("cleanupBody")
        splitter = QSplitter(Qt.Orientation.Horizontal, body)
        splitter.setObjectName("cleanupSplitter")
        splitter.setChildrenCollapsible(False)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.setSpacing(6)
        self.kinds_list = QTreeWidget()
        self.kinds_list.setObjectName("cleanupKinds")
        self.kinds_list.setAccessibleName("Kinds of finding, with how many were found")
        self.kinds_list.setColumnCount(2)
        self.kinds_list.setHeaderHidden(True)
        self.kinds_list.setRootIsDecorated(False)
        self.kinds_list.setUniformRowHeights(True)
        self.kinds_list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # a long title is elided; its count, in a column of its own, stays in sight
        heading = self.kinds_list.header()
        heading.setStretchLastSection(False)
        heading.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        heading.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        left_layout.addWidget(self.kinds_list, 1)
        self.unavailable_label = QLabel()
        self.unavailable_label.setObjectName("cleanupUnavailable")
        self.unavailable_label.setAccessibleName("What this server or token cannot report")
        self.unavailable_label.setWordWrap(True)
        self.unavailable_label.setTextFormat(Qt.TextFormat.PlainText)
        self.unavailable_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        quiet(self.unavailable_label)
        left_layout.addWidget(self.unavailable_label)
        splitter.addWidget(left)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.setSpacing(6)
        self.kind_label = QLabel()
        self.kind_label.setObjectName("cleanupKindTitle")
        self.kind_label.setWordWrap(True)
        right_layout.addWidget(self.kind_label)
        self.table = DataTable(
            "cleanup", self.model.table, noun="findings",
            count_text=findings_count_text, stretch_column=WHY_COLUMN,
        )  # fmt: skip
        right_layout.addWidget(self.table, 1)
        splitter.addWidget(right)
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([340, 760])  # the kinds' titles whole at the default size
        body_layout = QVBoxLayout(body)
        body_layout.setContentsMargins(0, 0, 0, 0)
        body_layout.addWidget(splitter)

        self.actions_flow = ConfirmationFlow(
            self, lambda plan: CleanupConfirmation(plan, self), self.model.act
        )
        self.states = StatePanel("cleanup", body)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(6)
        outer.addLayout(actions)
        outer.addWidget(self.states, 1)

        self.table.delete_with(self.act_button)
        self.table.view.selectionModel().selectionChanged.connect(self.on_table_selection_changed)
        self.table.row_activated.connect(self.on_table_row_activated)
        self.model.table.modelReset.connect(self.on_table_selection_changed)
        self.kinds_list.currentItemChanged.connect(self.on_kinds_list_current_item_changed)
        self.days_spin.valueChanged.connect(self.on_days_spin_value_changed)
        self.act_button.clicked.connect(self.on_act_button_clicked)
        self.open_button.clicked.connect(self.model.open_selected)
        self.stop_button.clicked.connect(self.model.cancel_act)
        self.model.open_requested.connect(self.open_requested)
        self.model.plan_ready.connect(self.actions_flow.ask)
        self.model.report_loaded.connect(self.on_model_report_loaded)
        self.model.status_changed.connect(self.on_model_status_changed)
        self.model.actions_changed.connect(self.on_model_actions_changed)
        self.model.outcome_changed.connect(self.on_model_outcome_changed)
        self.on_model_report_loaded()
        self.on_model_actions_changed()
        self.start_model()

    # ------------------------------------------------------------------ slots

    def on_model_phase_changed(self) -> None:
        if self.show_phase() is LoadPhase.READY:
            show_refreshing(self.table, self.model.busy)

    def on_model_report_loaded(self) -> None:
        """The kinds with their counts, the chosen one current; the parts not available."""
        self.kinds_list.blockSignals(True)
        self.kinds_list.clear()
        none = self.kinds_list.palette().color(QPalette.ColorRole.PlaceholderText)
        for row in self.model.kinds:
            item = QTreeWidgetItem([row.kind.title, f"{row.count:,}"])
            item.setData(0, KEY_ROLE, row.key)
            item.setTextAlignment(1, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            item.setToolTip(0, row.text)
            if not row.count:
                for column in (0, 1):
                    item.setForeground(column, none)  # nothing found: there, but quiet
            self.kinds_list.addTopLevelItem(item)
            if row.key == self.model.kind:
                self.kinds_list.setCurrentItem(item)
        self.kinds_list.blockSignals(False)
        lines = [f"{u.what[:1].upper()}{u.what[1:]}: not available here. {u.reason}"
                 for u in self.model.unavailable]  # fmt: skip
        self.unavailable_label.setText("\n\n".join(lines))
        self.unavailable_label.setVisible(bool(lines))
        self.on_model_actions_changed()

    def on_kinds_list_current_item_changed(self, item: QTreeWidgetItem | None, *_: object) -> None:
        if item is not None:
            self.model.choose_kind(str(item.data(0, KEY_ROLE)))

    def on_days_spin_value_changed(self, days: int) -> None:
        self.model.set_days(days)

    def on_model_status_changed(self, text: str) -> None:
        if text and self.states.state == StatePanel.LOADING:
            self.states.show_loading(text)
        elif text and self.model.acting:
            self.outcome_label.setStyleSheet("")
            self.outcome_label.setText(text)

    def on_table_selection_changed(self, *_: object) -> None:
        self.model.select(self.table.selected_items())

    def on_table_row_activated(self, _row: object) -> None:
        """Enter or a double click on a finding: Open, where it can."""
        if not self.model.open_reason:
            self.model.open_selected()

    def on_model_actions_changed(self) -> None:
        kind = self.model.current_kind
        self.act_button.setText(self.model.act_title)
        reason = self.model.act_reason
        self.act_button.setEnabled(not reason)
        self.act_button.setToolTip(reason or f"{self.model.act_title[:-1]} the selected "
                                   "findings through their tool's action (Delete)")  # fmt: skip
        reason = self.model.open_reason
        self.open_button.setEnabled(not reason)
        tool = OPERATIONS.get(kind.tool, kind.tool) if kind is not None else "its tool"
        self.open_button.setToolTip(reason or f"Open the selected finding in {tool} (Enter)")
        self.stop_button.setVisible(self.model.acting and self.model.act_in_progress)
        if kind is not None:
            found = ACTIONS_BY_KEY.get(kind.action or "")
            how = found.title if found is not None else f"Open in {tool}"
            self.kind_label.setText(f"{kind.title} · {how}")
        else:
            self.kind_label.setText("")
        self.days_spin.setEnabled(not self.model.acting)

    def on_act_button_clicked(self) -> None:
        self.model.plan_act()

    @property
    def confirmation(self) -> QDialog | None:
        """The confirmation open now, if any."""
        return self.actions_flow.box

    def on_model_outcome_changed(self) -> None:
        show_outcome(self.outcome_label, self.model.outcome, self.model.outcome_error)

    def open_item(self, item: Any) -> None:
        """Show the findings of the kind `item` names (a key of `app.api.cleanup.KINDS`)."""
        if isinstance(item, str):
            self.model.choose_kind(item)
            for i in range(self.kinds_list.topLevelItemCount()):
                found = self.kinds_list.topLevelItem(i)
                if found is not None and found.data(0, KEY_ROLE) == item:
                    self.kinds_list.setCurrentItem(found)
