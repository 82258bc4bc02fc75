"""What the windows that change a server share around their confirmations: `ConfirmationBox`,
the question asked before a change, naming exactly what will change; `ConfirmationFlow` opens
one confirmation at a time, window-modal (no nested event loop), and hands a confirmed plan on;
`show_outcome` puts how an action went in the window's outcome line."""

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


class ConfirmationBox(QMessageBox):
    """A `Confirmation` as a message box: `question` over a plan's `lines()`, the action's
    `button` (a warning when `destructive`) and Cancel, the default (Enter or Escape cancel);
    the action's button is reached with Tab or its mnemonic. Window-modal: open it with a
    `ConfirmationFlow`. Subclasses set `plan`."""

    plan: Any

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
