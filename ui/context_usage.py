"""`ContextUsageViewer`: which strategies use a context field (bound to `ContextUsageModel`). A
context-field picker; the strategies in a tree, project > feature > "environment · strategy",
with counts on the group rows; a filter; Ctrl+C copies the selected strategies and Export CSV
writes one line per strategy. Shows and forwards; never fetches."""

from __future__ import annotations

import asyncio
from typing import Any

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QPushButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from app.api.models import ContextFieldStrategy
from app.viewmodels.context_usage import (
    CONTENT,
    ERROR,
    LOADING,
    ContextUsageModel,
    leaf_text,
    tsv,
)
from app.viewmodels.session import Session
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


class ContextUsageViewer(ToolContent):
    """The strategies that use a context field, grouped by project and feature."""

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
        self.no_match.setEnabled(False)
        self.no_match.hide()
        results.addWidget(self.no_match)

        self.states = StatePanel(STEM, content)
        self.states.retry_requested.connect(self.on_states_retry_requested)
        layout.addWidget(self.states, 1)

        self._shown_groups: object = None  # the groups the tree was last built from
        self.model.changed.connect(self.on_model_changed)
        self.model.start()
        self.on_model_changed()

    # ------------------------------------------------------------------ ToolContent

    def refresh(self) -> None:
        self.model.refresh()

    def open_item(self, item: Any) -> None:
        field = str(item)
        self.picker.set_value(field)
        self.model.show_field(field)

    def close_content(self) -> None:
        self.model.close()

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

    # ------------------------------------------------------------------ slots

    def on_picker_chosen(self, field: str) -> None:
        self.model.show_field(field)

    def on_states_retry_requested(self) -> None:
        self.model.refresh()

    def on_filter_edit_text_changed(self, text: str) -> None:
        self.model.set_filter(text)

    def on_model_changed(self) -> None:
        m = self.model
        state = m.state
        if state == LOADING:
            self.states.show_loading(m.loading_text)
        elif state == ERROR:
            self.states.show_error(m.error_title, m.error)
        elif state == CONTENT:
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
            self.states.show_content()
        else:  # empty, or nothing asked for yet
            self.states.show_empty(m.empty_title, m.empty_text)

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
