"""What the windows whose changes are made in a form share (a custom role's, a banner's):
`FormDialog`, the form that asks its view-model for the plan on Save… (what the view-model
refuses, a `FormError`, said under its field, what was typed kept), hands the plan to the
window's confirmation, and stays open, busy, until the change ends: closed when it is saved,
the server's refusal under its field when it is not; and `FormFlow`, the window's side: one form
open at a time, window-modal, and the view-model's signals passed on to it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QDialog, QLabel, QPushButton, QWidget

from ui.palette import error_color


def error_label(name: str) -> QLabel:
    """A field's error line, hidden until there is one."""
    label = QLabel()
    label.setObjectName(name)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setStyleSheet(f"color: {error_color(label)};")
    label.hide()
    return label


class FormDialog(QDialog):
    """A form that plans a change. A subclass builds its fields, then sets `save_button` (its
    clicks and the default button's Enter go to `on_save_button_clicked`), `status_label`,
    `form_error` (the line for the form as a whole), `errors` (a field's name -> the line under
    it) and `focus` (a field's name -> the widget focused when its error shows), and makes the
    plan in `plan()`, raising the view-model's `FormError` for what it refuses."""

    def __init__(self, ask: Callable[[Any], object], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._ask = ask
        self.setWindowModality(Qt.WindowModality.WindowModal)
        self.save_button: QPushButton | None = None
        self.status_label = QLabel()
        self.form_error = QLabel()
        self.errors: dict[str, QLabel] = {}
        self.focus: dict[str, QWidget] = {}

    def plan(self) -> Any:
        """The plan the form makes; the view-model's `FormError` for what it refuses."""
        raise NotImplementedError

    def clear_errors(self) -> None:
        for label in (*self.errors.values(), self.form_error):
            label.clear()
            label.hide()

    def show_error(self, field: str, text: str) -> None:
        """`text` under `field` (the form's own line for "" or a field it does not have)."""
        self.set_busy(False)
        label = self.errors.get(field, self.form_error)
        label.setText(text)
        label.show()
        widget = self.focus.get(field)
        if widget is not None:
            widget.setFocus()

    def set_busy(self, busy: bool, text: str = "") -> None:
        if self.save_button is not None:
            self.save_button.setEnabled(not busy)
        self.status_label.setText(text if busy else "")

    def on_save_button_clicked(self) -> None:
        self.clear_errors()
        try:
            plan = self.plan()
        except ValueError as exc:  # the view-model's FormError
            self.show_error(str(getattr(exc, "field", "")), str(exc))
            return
        self._ask(plan)

    def saved(self) -> None:
        self.accept()


D = TypeVar("D", bound=FormDialog)


class FormFlow(QObject, Generic[D]):
    """`open(item)` opens `make(item)` (the form of a new thing for None), one at a time; a
    window passes its view-model's news on: `busy(text)` while the change is carried out,
    `saved()` once it is, `failed(field, text)` when the server refused it. `dialog` is the
    form open, if any; `close()` closes it (the window closing)."""

    def __init__(self, parent: QObject, make: Callable[[Any], D]) -> None:
        super().__init__(parent)
        self._make = make
        self.dialog: D | None = None

    def open(self, item: Any) -> None:
        if self.dialog is not None:
            return
        self.dialog = self._make(item)
        self.dialog.finished.connect(self.on_dialog_finished)
        self.dialog.open()

    def on_dialog_finished(self, _result: int) -> None:
        dialog, self.dialog = self.dialog, None
        if dialog is not None:
            dialog.deleteLater()

    def busy(self, text: str) -> None:
        if self.dialog is not None:
            self.dialog.set_busy(True, text)

    def saved(self) -> None:
        if self.dialog is not None:
            self.dialog.saved()

    def failed(self, field: str, text: str) -> None:
        if self.dialog is not None:
            self.dialog.show_error(field, text)

    def close(self) -> None:
        if self.dialog is not None:
            self.dialog.done(0)
