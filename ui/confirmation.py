"""`Confirmation`: the question asked before a change, naming exactly what will change (a plan's
`lines()`). Cancel is the default button (Enter or Escape cancel); the action's button is reached
with Tab or its mnemonic. Opened window-modal, not run in a nested event loop: connect `finished`
and read `confirmed`."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWidget


class Confirmation(QMessageBox):
    def __init__(
        self,
        name: str,
        title: str,
        question: str,
        lines: Sequence[str],
        button: str,
        parent: QWidget | None = None,
        *,
        destructive: bool = True,
    ) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.setIcon(QMessageBox.Icon.Warning if destructive else QMessageBox.Icon.Question)
        self.setWindowTitle(title)
        self.setText(question)
        self.setInformativeText("\n\n".join(lines))
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        role = (
            QMessageBox.ButtonRole.DestructiveRole
            if destructive
            else QMessageBox.ButtonRole.AcceptRole
        )
        self.action_button = self.addButton(button, role)
        self.cancel_button = self.addButton(QMessageBox.StandardButton.Cancel)
        self.setDefaultButton(self.cancel_button)
        self.setEscapeButton(self.cancel_button)
        self.setWindowModality(Qt.WindowModality.WindowModal)

    @property
    def confirmed(self) -> bool:
        return self.clickedButton() is self.action_button
