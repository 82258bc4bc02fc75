"""What the windows that change a server share around their confirmations: `ConfirmationBox`,
the question asked before a change, naming exactly what will change; `TypedConfirmation`, the
same question for a destructive bulk action, which asks for a text typed before its button
works (the archive's delete-for-good, the inactive users' deletion); `PlanConfirmation`, the
question over a plan of many lines (a promote's) in a text that scrolls; `ConfirmationFlow`
opens one confirmation at a time, window-modal (no nested event loop), and hands a confirmed
plan on; `show_outcome` puts how an action went in the window's outcome line (a line outside
the window's `StatePanel`, so an emptied list does not hide it); `ask_to_discard` asks before
unsaved changes are lost."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QAccessible, QAccessibleAnnouncementEvent, QFont, QKeyEvent, QShowEvent
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ui.palette import error_color


class Confirmation(Protocol):
    """A dialog (a `QMessageBox` or a `QDialog`) asking about `plan`."""

    plan: Any

    @property
    def confirmed(self) -> bool: ...


class ConfirmationBox(QMessageBox):
    """A `Confirmation` as a message box: `question` over a plan's `lines()`, the action's
    `button` (a warning when `destructive`) and Cancel, the default (Enter or Escape cancel);
    the action's button is reached with Tab or its mnemonic. With `enter_confirms` (a change
    that is not destructive and was asked for with Enter: a user's Save) the action's button is
    the default instead, so Enter then Enter goes ahead; Escape still cancels. Window-modal:
    open it with a `ConfirmationFlow`. Subclasses set `plan`."""

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
        enter_confirms: bool = False,
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
        self.setDefaultButton(self.action_button if enter_confirms else self.cancel_button)
        self.setEscapeButton(self.cancel_button)
        self.setWindowModality(Qt.WindowModality.WindowModal)

    @property
    def confirmed(self) -> bool:
        return self.clickedButton() is self.action_button


def ask_to_discard(
    parent: QWidget, question: str, lost: Sequence[str], button: str
) -> ConfirmationBox:
    """The question before unsaved changes are lost (quitting, closing a window): `question`
    over what would be lost, `button` (destructive) and Cancel, the default (Enter or Escape
    keep the changes). Window-modal and opened (no nested event loop): the caller connects
    `finished` and reads `confirmed`."""
    box = ConfirmationBox("unsavedChangesConfirmation", "Unsaved changes", question,
                          [*lost, "Cancel to go back to them."], button, parent)  # fmt: skip
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.open()
    return box


class CloseGuard:
    """A window's one question before closing loses unsaved changes (`ask_to_discard`): asked
    once at a time, and not again once Discard was chosen or the closing was forced
    (`close_without_asking`). Discard closes `window`; Cancel calls `back`, if given."""

    def __init__(self, window: QWidget, question: str, button: str) -> None:
        self.window, self.question, self.button = window, question, button
        self._leaving = False
        self._box: ConfirmationBox | None = None

    def stays(self, lost: Sequence[str], back: Callable[[], object] | None = None) -> bool:
        """Whether the window stays open for now: the question is asked about `lost` (or is
        open already); False with nothing lost, or once leaving."""
        if self._leaving:
            return False
        if self._box is not None:
            return True
        if not lost:
            return False
        box = ask_to_discard(self.window, self.question, lost, self.button)
        box.finished.connect(lambda _result: self._answered(box.confirmed, back))
        self._box = box
        return True

    def close_without_asking(self) -> None:
        self._leaving = True
        self.window.close()

    def _answered(self, discard: bool, back: Callable[[], object] | None) -> None:
        self._box = None
        if discard:
            self.close_without_asking()
        elif back is not None:
            back()


class _Asking(QDialog):
    """A window-modal confirmation named `<stem>Confirmation`, its `question` in bold (plain
    text) at the top of its `column`."""

    def __init__(self, stem: str, title: str, question: str, parent: QWidget | None) -> None:
        super().__init__(parent)
        self.setObjectName(f"{stem}Confirmation")
        self.setWindowTitle(title)
        self.setWindowModality(Qt.WindowModality.WindowModal)
        self.column = QVBoxLayout(self)
        self.question = QLabel(question)
        self.question.setObjectName(f"{stem}ConfirmationQuestion")
        self.question.setTextFormat(Qt.TextFormat.PlainText)
        bold = QFont(self.question.font())
        bold.setBold(True)
        self.question.setFont(bold)
        self.column.addWidget(self.question)


def _action_and_cancel(
    dialog: QDialog, layout: QVBoxLayout, stem: str, button: str
) -> tuple[QPushButton, QPushButton]:
    """The action's `button` and Cancel, the default, at the foot of `dialog`'s `layout`:
    accepting and rejecting it."""
    buttons = QDialogButtonBox()
    action = buttons.addButton(button, QDialogButtonBox.ButtonRole.AcceptRole)
    action.setObjectName(f"{stem}ConfirmButton")
    cancel = buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
    cancel.setObjectName(f"{stem}CancelButton")
    action.setAutoDefault(False)
    cancel.setDefault(True)
    layout.addWidget(buttons)
    buttons.accepted.connect(dialog.accept)
    buttons.rejected.connect(dialog.reject)
    return action, cancel


class TypedPlan(Protocol):
    """A plan whose confirmation may ask for a text typed: `confirm_text` (None: no typing)
    and `confirmed_by(typed)`; `question` and `lines()` as every plan has them."""

    @property
    def question(self) -> str: ...

    @property
    def confirm_text(self) -> str | None: ...

    def lines(self) -> list[str]: ...

    def confirmed_by(self, typed: str) -> bool: ...


class TypedConfirmation(_Asking):
    """A `Confirmation` for a destructive bulk action: `plan.question` in bold over
    `plan.lines()` (the last of which says what to type), a line edit for `plan.confirm_text`
    and the action's `button` and Cancel. Until the text typed matches, the action's button is
    disabled. The line edit has the focus first, and Enter there confirms once the text typed
    matches; otherwise the dialog stays open and a line under the field (`hint`, in the error
    colour, announced to screen readers) says exactly what to type. Escape cancels. Elsewhere
    Cancel is the default button; the action's button is reached with Tab or its mnemonic.
    With no text to type (`confirm_text` None) the line edit is hidden and Cancel has the
    focus (Enter or Escape cancel). Object names start with `stem`: `<stem>Confirmation`,
    `...Question`, `...Details`, `...Typed`, `...Hint`, `<stem>ConfirmButton`,
    `<stem>CancelButton`. Window-modal: open it with a `ConfirmationFlow`."""

    def __init__(
        self,
        stem: str,
        title: str,
        plan: TypedPlan,
        button: str,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(stem, title, plan.question, parent)
        self.plan: Any = plan
        layout = self.column
        self.details = QLabel("\n\n".join(plan.lines()))
        self.details.setObjectName(f"{stem}ConfirmationDetails")
        self.details.setWordWrap(True)
        self.details.setTextFormat(Qt.TextFormat.PlainText)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.details)
        self.typed = QLineEdit()
        self.typed.setObjectName(f"{stem}ConfirmationTyped")
        self.typed.setAccessibleName("Type this to confirm")
        self.typed.setPlaceholderText(plan.confirm_text or "")
        self.typed.setVisible(plan.confirm_text is not None)
        self.typed.installEventFilter(self)  # Enter: see `eventFilter`
        layout.addWidget(self.typed)
        to_type = plan.confirm_text
        self.hint = QLabel()
        if to_type is not None:
            self.hint.setText(f"Type “{to_type}” to confirm, or press Escape to cancel.")
        self.hint.setObjectName(f"{stem}ConfirmationHint")
        self.hint.setAccessibleName("What to type to confirm")
        self.hint.setWordWrap(True)
        self.hint.setTextFormat(Qt.TextFormat.PlainText)
        self.hint.setStyleSheet(f"color: {error_color(self)};")
        if to_type is not None:
            # its room kept while hidden: shown, it squeezed the details' last line out of the
            # dialog (a window does not grow for a word-wrapped label)
            policy = self.hint.sizePolicy()
            policy.setRetainSizeWhenHidden(True)
            self.hint.setSizePolicy(policy)
        self.hint.hide()
        layout.addWidget(self.hint)
        self.action_button, self.cancel_button = _action_and_cancel(self, layout, stem, button)
        self.typed.textChanged.connect(self.on_typed_changed)
        self.on_typed_changed(self.typed.text())

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        # the text to type has the focus first; else Cancel
        (self.typed if self.plan.confirm_text is not None else self.cancel_button).setFocus()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Enter in the line edit is the typed text's, not Cancel's (the default button)."""
        if (
            watched is self.typed
            and event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
            and event.modifiers()
            in (Qt.KeyboardModifier.NoModifier, Qt.KeyboardModifier.KeypadModifier)
        ):
            self.on_typed_entered()
            return True
        return super().eventFilter(watched, event)

    def on_typed_entered(self) -> None:
        """Enter in the line edit: confirm when the text typed matches, else say what to type."""
        if self.plan.confirmed_by(self.typed.text()):
            self.action_button.click()
            return
        text = self.hint.text()
        self.hint.show()
        self.typed.setAccessibleDescription(text)  # read out with the field, which keeps focus
        self.typed.selectAll()  # what is typed next replaces the wrong text
        QAccessible.updateAccessibility(QAccessibleAnnouncementEvent(self.hint, text))

    def on_typed_changed(self, text: str) -> None:
        matches = self.plan.confirmed_by(text)
        self.action_button.setEnabled(matches)
        if matches and not self.hint.isHidden():  # what it said is done
            self.hint.hide()
            self.typed.setAccessibleDescription("")

    @property
    def confirmed(self) -> bool:
        return self.result() == QDialog.DialogCode.Accepted and self.plan.confirmed_by(
            self.typed.text()
        )


class LongPlan(Protocol):
    """A plan with a question and many lines (`PlanConfirmation`)."""

    @property
    def question(self) -> str: ...

    def lines(self) -> list[str]: ...


class PlanConfirmation(_Asking):
    """A `Confirmation` for a plan too long for a message box (a promote of a thousand flags:
    one line a request): `plan.question` in bold over `plan.lines()` in a read-only text that
    scrolls (selectable and copyable, as a terminal shows the plan), the action's `button` and
    Cancel, the default: Enter or Escape cancel, the action's button is reached with Tab or
    its mnemonic. Object names: `<stem>Confirmation`, `...Question`, `...Plan`,
    `<stem>ConfirmButton`, `<stem>CancelButton`. Window-modal: open it with a
    `ConfirmationFlow`."""

    def __init__(
        self, stem: str, title: str, plan: LongPlan, button: str, parent: QWidget | None = None
    ) -> None:
        super().__init__(stem, title, plan.question, parent)
        self.plan: Any = plan
        layout = self.column
        self.question.setWordWrap(True)
        self.details = QPlainTextEdit()
        self.details.setObjectName(f"{stem}ConfirmationPlan")
        self.details.setAccessibleName("The plan: each request in order, and what is left out")
        self.details.setReadOnly(True)
        self.details.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.details.setPlainText("\n".join(plan.lines()))
        self.details.setMinimumSize(900, 360)
        layout.addWidget(self.details, 1)
        self.action_button, self.cancel_button = _action_and_cancel(self, layout, stem, button)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.cancel_button.setFocus()

    @property
    def confirmed(self) -> bool:
        return self.result() == QDialog.DialogCode.Accepted


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
    """How the last action went: the client's message when it failed (marked as an error, in
    the error colour of the window's palette)."""
    label.setText(error or outcome)
    label.setProperty("error", bool(error))
    label.setStyleSheet(f"color: {error_color(label)};" if error else "")
