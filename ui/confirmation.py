"""`Confirmation`: the question asked before a change is sent, naming exactly what will change
(the plan's lines). Cancel is the default button (Enter or Escape cancel); the confirming button
is reached with Tab or its mnemonic. Opened window-modal with `open()`, never in a nested event
loop: `ask()` opens it and says when it is answered (`confirmed` says how)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

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
    ) -> None:
        """`name`: the object name (the confirming button's is `<name>Button`); `button`: its
        text, with its mnemonic ("&Delete 2 users")."""
        super().__init__(parent)
        self.setObjectName(name)
        self.setIcon(QMessageBox.Icon.Warning)
        self.setWindowTitle(title)
        self.setText(question)
        self.setInformativeText("\n\n".join(lines))
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.confirm_button = self.addButton(button, QMessageBox.ButtonRole.DestructiveRole)
        self.confirm_button.setObjectName(f"{name}Button")
        self.cancel_button = self.addButton(QMessageBox.StandardButton.Cancel)
        self.setDefaultButton(self.cancel_button)
        self.setEscapeButton(self.cancel_button)
        self.setWindowModality(Qt.WindowModality.WindowModal)

    def ask(self, then: Callable[[], object], closed: Callable[[], object]) -> None:
        """Open; once answered, call `closed()`, then `then()` if it was confirmed; the box
        then goes."""

        def finished(_result: int) -> None:
            closed()
            if self.confirmed:
                then()
            self.deleteLater()

        self.finished.connect(finished)
        self.open()

    @property
    def confirmed(self) -> bool:
        return self.clickedButton() is self.confirm_button
