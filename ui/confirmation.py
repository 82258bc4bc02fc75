"""`Confirmation`: the question asked before a change is sent, naming exactly what will change
(a plan's `lines()`), and `OneConfirmation`, a window's one open question at a time. Cancel is the
default button (Enter or Escape cancel); the confirming button is reached with Tab or its
mnemonic. Opened window-modal, never in a nested event loop."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWidget


class Confirmation(QMessageBox):
    """Asks `question`, says `lines` (a paragraph each) and offers `button` (with its
    mnemonic, "&Delete 2 users") beside Cancel. `plan` is what a confirmation carries out."""

    def __init__(
        self,
        plan: Any,
        question: str,
        lines: Sequence[str],
        button: str,
        *,
        title: str,
        names: tuple[str, str],
        destructive: bool = True,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.plan = plan
        box_name, button_name = names
        self.setObjectName(box_name)
        self.setIcon(QMessageBox.Icon.Warning if destructive else QMessageBox.Icon.Question)
        self.setWindowTitle(title)
        self.setText(question)
        self.setInformativeText("\n\n".join(lines))
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        role = QMessageBox.ButtonRole.DestructiveRole if destructive else (
            QMessageBox.ButtonRole.AcceptRole)  # fmt: skip
        self.confirm_button = self.addButton(button, role)
        self.confirm_button.setObjectName(button_name)
        self.cancel_button = self.addButton(QMessageBox.StandardButton.Cancel)
        self.setDefaultButton(self.cancel_button)
        self.setEscapeButton(self.cancel_button)
        self.setWindowModality(Qt.WindowModality.WindowModal)

    @property
    def confirmed(self) -> bool:
        return self.clickedButton() is self.confirm_button


class OneConfirmation:
    """A window's open confirmation (`box`, None when none is open): `open(box)` shows it
    unless one is open already; once it is answered, `on_confirmed(box.plan)` is called if
    the person confirmed, and the box goes."""

    def __init__(self, on_confirmed: Callable[[Any], object]) -> None:
        self.box: Confirmation | None = None
        self._on_confirmed = on_confirmed

    def open(self, box: Confirmation) -> None:
        if self.box is not None:
            box.deleteLater()
            return
        self.box = box
        box.finished.connect(self._finished)
        box.open()

    def _finished(self, _result: int) -> None:
        box, self.box = self.box, None
        if box is None:
            return
        if box.confirmed:
            self._on_confirmed(box.plan)
        box.deleteLater()
