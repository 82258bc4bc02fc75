"""The Overview's instance panel (bound to `InstanceModel`, issue 38): the server's statistics,
their CSV export, maintenance mode with its switch, asked first in a confirmation that says
what it stops, and the frontend API's CORS origins, edited one a line and confirmed. Shows and
forwards; never fetches."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFileDialog,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.viewmodels.instance import InstanceModel
from ui.confirmation import ConfirmationBox, ConfirmationFlow, show_outcome

STEM = "instance"
#: statistics a row of the grid holds
PER_ROW = 2


class MaintenanceConfirmation(ConfirmationBox):
    """Asks before maintenance mode is switched, saying what it stops (the plan's `lines()`)."""

    def __init__(self, plan: Any, parent: QWidget | None = None) -> None:
        verb = "Switch &on" if plan.enabled else "Switch &off"
        super().__init__(f"{STEM}MaintenanceConfirmation", "Maintenance mode", plan.question,
                         plan.lines(), verb, parent, destructive=plan.enabled)  # fmt: skip
        self.plan = plan
        self.confirm_button = self.action_button
        self.confirm_button.setObjectName(f"{STEM}MaintenanceConfirmButton")


class CorsConfirmation(ConfirmationBox):
    """Asks before the CORS origins are set, naming the list before and after."""

    def __init__(self, plan: Any, parent: QWidget | None = None) -> None:
        super().__init__(f"{STEM}CorsConfirmation", "CORS origins", plan.question, plan.lines(),
                         "&Set", parent, destructive=not plan.origins)  # fmt: skip
        self.plan = plan
        self.confirm_button = self.action_button
        self.confirm_button.setObjectName(f"{STEM}CorsConfirmButton")


def confirmation_of(plan: Any, parent: QWidget) -> ConfirmationBox:
    """The question a plan of this panel asks (the CORS origins' plans hold `origins`)."""
    if hasattr(plan, "origins"):
        return CorsConfirmation(plan, parent)
    return MaintenanceConfirmation(plan, parent)


class InstancePanel(QGroupBox):
    """Statistics in a grid, Export as CSV…, the maintenance line and its switch."""

    def __init__(self, model: InstanceModel, parent: QWidget | None = None) -> None:
        super().__init__("Instance", parent)
        self.model = model
        self.setObjectName(f"{STEM}Panel")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 8)
        layout.setSpacing(6)

        maintenance_row = QHBoxLayout()
        self.maintenance_label = QLabel()
        self.maintenance_label.setObjectName(f"{STEM}MaintenanceLabel")
        self.maintenance_label.setWordWrap(True)
        maintenance_row.addWidget(self.maintenance_label, 1)
        self.switch_button = QPushButton()
        self.switch_button.setObjectName(f"{STEM}SwitchButton")
        self.switch_button.clicked.connect(self.on_switch_clicked)
        maintenance_row.addWidget(self.switch_button)
        layout.addLayout(maintenance_row)

        cors_row = QHBoxLayout()
        self.cors_label = QLabel()
        self.cors_label.setObjectName(f"{STEM}CorsLabel")
        self.cors_label.setAccessibleName("CORS origins")
        self.cors_label.setWordWrap(True)
        self.cors_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        cors_row.addWidget(self.cors_label, 1)
        self.cors_button = QPushButton("Edit CORS origins…")
        self.cors_button.setObjectName(f"{STEM}CorsButton")
        self.cors_button.clicked.connect(self.on_cors_clicked)
        cors_row.addWidget(self.cors_button)
        layout.addLayout(cors_row)

        self.grid = QGridLayout()
        self.grid.setObjectName(f"{STEM}StatisticsGrid")
        self.grid.setHorizontalSpacing(12)
        self.grid.setVerticalSpacing(2)
        layout.addLayout(self.grid)
        self.note_label = QLabel()
        self.note_label.setObjectName(f"{STEM}StatisticsNote")
        self.note_label.setWordWrap(True)
        layout.addWidget(self.note_label)

        export_row = QHBoxLayout()
        self.outcome_label = QLabel()
        self.outcome_label.setObjectName(f"{STEM}Outcome")
        self.outcome_label.setAccessibleName("What the last change did")
        self.outcome_label.setWordWrap(True)
        self.outcome_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        export_row.addWidget(self.outcome_label, 1)
        self.export_button = QPushButton("Export statistics as CSV…")
        self.export_button.setObjectName(f"{STEM}ExportButton")
        self.export_button.clicked.connect(self.on_export_clicked)
        export_row.addWidget(self.export_button)
        layout.addLayout(export_row)

        self.confirmations = ConfirmationFlow(
            self, lambda plan: confirmation_of(plan, self), self.model.switch
        )
        model.changed.connect(self.on_model_changed)
        model.finished.connect(self.on_model_changed)
        self.on_model_changed()

    def on_switch_clicked(self) -> None:
        self.confirmations.ask(self.model.plan_switch())

    def on_cors_clicked(self) -> None:
        current = "\n".join(self.model.origins or [])
        text, ok = QInputDialog.getMultiLineText(
            self, "CORS origins", "The origins the frontend API answers, one a line (* for any; "
            "none: no browser):", current)  # fmt: skip
        if ok:
            self.set_origins(text)

    def set_origins(self, text: str) -> None:
        """Plan the origins `text` lists (what the dialog gave) and ask; a list the server
        would refuse is said in the outcome line, nothing sent."""
        try:
            plan = self.model.plan_cors(text)
        except ValueError as exc:
            show_outcome(self.outcome_label, "", str(exc))
            return
        self.confirmations.ask(plan)

    def on_export_clicked(self) -> None:
        stats = self.model.statistics
        name = f"unleash-{stats.instanceId if stats else 'statistics'}.csv"
        chosen, _ = QFileDialog.getSaveFileName(self, "Export statistics", name,
                                                "CSV files (*.csv)")  # fmt: skip
        if chosen:
            self.export_to(Path(chosen))

    def export_to(self, path: Path) -> None:
        """Export to `path` (what the file dialog chose)."""
        self.model.export_csv(path)
        self.on_model_changed()

    def on_model_changed(self) -> None:
        m = self.model
        on = m.maintenance
        if on is None:
            self.maintenance_label.setText("Maintenance mode: —")
        elif on:
            self.maintenance_label.setText(
                "<b>Maintenance mode is on</b>: the server refuses every change until it is "
                "switched off."
            )
        else:
            self.maintenance_label.setText("Maintenance mode is off.")
        self.switch_button.setText("Switch off…" if on else "Switch on…")
        reason = m.switch_reason
        self.switch_button.setEnabled(not reason)
        self.switch_button.setToolTip(reason or ("Let the server take changes again" if on else
                                                 "Stop every change on the server"))  # fmt: skip
        origins = m.origins
        self.cors_label.setText("CORS origins: " + ("—" if origins is None else
                                                    ", ".join(origins) or "none"))  # fmt: skip
        self.cors_button.setEnabled(not m.cors_reason)
        self.cors_button.setToolTip(m.cors_reason or "Set the origins the frontend API answers")
        self._fill_grid(m.rows)
        self.note_label.setText(f"Statistics {m.statistics_note}" if m.statistics_note else "")
        self.note_label.setVisible(bool(m.statistics_note))
        self.export_button.setEnabled(m.statistics is not None and not m.acting)
        show_outcome(self.outcome_label, m.outcome, m.outcome_error)

    def _fill_grid(self, rows: list[tuple[str, str]]) -> None:
        while self.grid.count():
            item = self.grid.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        for i, (caption, text) in enumerate(rows):
            row, column = divmod(i, PER_ROW)
            name = QLabel(f"{caption}:")
            value = QLabel(text)
            value.setObjectName(f"{STEM}Statistic")
            value.setAccessibleName(caption)
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            self.grid.addWidget(name, row, column * 2)
            self.grid.addWidget(value, row, column * 2 + 1)
        self.grid.setColumnStretch(1, 1)
        self.grid.setColumnStretch(3, 1)
