"""What the windows that change a server share around their confirmations: `ConfirmationFlow`
opens one confirmation at a time, window-modal (no nested event loop), and hands a confirmed
plan on; `MessageConfirmation` is such a confirmation as a message box (the plan's lines, Cancel
the default); `show_outcome` puts how an action went in the window's outcome line."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QDialog, QLabel, QMessageBox, QWidget


class Confirmation(Protocol):
    """A dialog (a `QMessageBox` or a `QDialog`) asking about `plan`."""

    plan: Any

    @property
    def confirmed(self) -> bool: ...


class ConfirmationFlow(QObject):
    """`ask(plan)` opens `make(plan)` (nothing when `plan` is None or one is open already);
    once it closes confirmed, `carry_out(plan)` is called. `box` is the one open, if any."""

    def __init__(
        self,
        parent: QObject,
        make: Callable[[Any], QDialog],
        carry_out: Callable[[Any], object],
    ) -> None:
        super().__init__(parent)
        self._make = make
        self._carry_out = carry_out
        self.box: QDialog | None = None

    def ask(self, plan: Any) -> None:
        if plan is None or self.box is not None:
            return
        self.box = self._make(plan)
        self.box.finished.connect(self.on_box_finished)
        self.box.open()

    def on_box_finished(self, _result: int) -> None:
        box, self.box = self.box, None
        if box is None:
            return
        confirmation: Confirmation = box  # type: ignore[assignment]
        if confirmation.confirmed:
            self._carry_out(confirmation.plan)
        box.deleteLater()


def show_outcome(label: QLabel, outcome: str, error: str) -> None:
    """How the last action went: the client's message when it failed (marked as an error)."""
    label.setText(error or outcome)
    label.setProperty("error", bool(error))


class MessageConfirmation(QMessageBox):
    """A confirmation as a message box: `question`, then `lines` (what will change), a
    confirming button (`button`, with its mnemonic: "&Delete 2 users") reached with Tab, and
    Cancel the default (Enter or Escape cancel). Window-modal; `ConfirmationFlow` opens it."""

    def __init__(
        self,
        plan: Any,
        name: str,
        title: str,
        question: str,
        lines: Sequence[str],
        button: str,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.plan = plan
        self.setObjectName(name)
        self.setIcon(QMessageBox.Icon.Warning)
        self.setWindowTitle(title)
        self.setText(question)
        self.setInformativeText("\n\n".join(lines))
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.confirm_button = self.addButton(button, QMessageBox.ButtonRole.DestructiveRole)
        self.cancel_button = self.addButton(QMessageBox.StandardButton.Cancel)
        self.setDefaultButton(self.cancel_button)
        self.setEscapeButton(self.cancel_button)
        self.setWindowModality(Qt.WindowModality.WindowModal)

    @property
    def confirmed(self) -> bool:
        return self.clickedButton() is self.confirm_button
