"""`Picker`: choose a project or a context field from the server's list, or type one. Enter, a
choice from the list or the button says `chosen(value)`."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QCompleter,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.viewmodels.choices import ChoicesModel
from ui.palette import quiet

DETAIL_ROLE = Qt.ItemDataRole.ToolTipRole
VALUE_ROLE = Qt.ItemDataRole.UserRole


class Picker(QWidget):
    #: the value to show (a project id, a context field name)
    chosen = Signal(str)

    def __init__(
        self,
        stem: str,
        model: ChoicesModel,
        *,
        caption: str,
        button_text: str = "Show",
        placeholder: str = "",
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.model = model
        self.setObjectName(f"{stem}Picker")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        row = QHBoxLayout()
        self.caption = QLabel(caption)
        self.caption.setObjectName(f"{stem}PickerCaption")
        row.addWidget(self.caption)
        self.combo = QComboBox()
        self.combo.setObjectName(f"{stem}PickerCombo")
        self.combo.setEditable(True)
        self.combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.combo.setMinimumContentsLength(24)
        self.combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.caption.setBuddy(self.combo)
        self.combo.setAccessibleName(caption.rstrip(":"))
        line = self.combo.lineEdit()
        assert line is not None  # the combo box is editable
        line.setObjectName(f"{stem}PickerEdit")
        line.setAccessibleName(caption.rstrip(":"))
        line.setPlaceholderText(placeholder)
        line.returnPressed.connect(self.on_edit_return_pressed)
        completer = QCompleter(self.combo.model(), self.combo)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        completer.setFilterMode(Qt.MatchFlag.MatchContains)
        completer.setCompletionMode(QCompleter.CompletionMode.PopupCompletion)
        self.combo.setCompleter(completer)
        self.combo.activated.connect(self.on_combo_activated)
        row.addWidget(self.combo, 1)
        self.button = QPushButton(button_text)
        self.button.setObjectName(f"{stem}PickerButton")
        self.button.clicked.connect(self.on_button_clicked)
        row.addWidget(self.button)
        layout.addLayout(row)
        self.note = QLabel()
        self.note.setObjectName(f"{stem}PickerNote")
        self.note.setWordWrap(True)
        quiet(self.note)
        self.note.hide()
        layout.addWidget(self.note)

        self._last_chosen = ""
        model.changed.connect(self.on_model_changed)
        model.error_changed.connect(self.on_model_changed)
        # the note depends on `busy` too, and a load's last `changed` comes while still busy
        model.busy_changed.connect(self.on_model_changed)
        self.on_model_changed()

    @property
    def value(self) -> str:
        """The value typed or picked: the choice's value when the text names one."""
        text = self.combo.currentText().strip()
        index = self.combo.currentIndex()
        if index >= 0 and self.combo.itemText(index) == self.combo.currentText():
            return str(self.combo.itemData(index, VALUE_ROLE))
        choice = self.model.find(text)
        return choice.value if choice is not None else text

    def set_value(self, value: str) -> None:
        self._last_chosen = value
        index = self.combo.findData(value, VALUE_ROLE)
        if index >= 0:
            self.combo.setCurrentIndex(index)
        else:
            self.combo.setEditText(value)

    def on_model_changed(self, *_: object) -> None:
        typed = self.combo.currentText()
        self.combo.blockSignals(True)
        self.combo.clear()
        for choice in self.model.choices:
            self.combo.addItem(choice.label, choice.value)
            self.combo.setItemData(self.combo.count() - 1, choice.detail or None, DETAIL_ROLE)
        self.combo.setCurrentIndex(-1)
        self.combo.setEditText(typed)
        self.combo.blockSignals(False)
        noun = self.model.noun
        if self.model.error:
            self.note.setText(f"Could not list the {noun} ({self.model.error}); type one instead.")
        elif not self.model.busy and self.model.session.ready and not self.model.choices:
            self.note.setText(f"The server lists no {noun}; type one instead.")
        else:
            self.note.setText("")
        self.note.setVisible(bool(self.note.text()))

    def on_combo_activated(self, index: int) -> None:
        # Qt 6 also says `activated` when an editable combo loses focus while its text names an
        # item: only a pick of something else is a choice (Enter and the button always are)
        if index >= 0:
            value = str(self.combo.itemData(index, VALUE_ROLE))
            if value != self._last_chosen:
                self._emit(value)

    def on_edit_return_pressed(self) -> None:
        self._choose()

    def on_button_clicked(self) -> None:
        self._choose()

    def _choose(self) -> None:
        value = self.value
        if value:
            self._emit(value)

    def _emit(self, value: str) -> None:
        self._last_chosen = value
        self.chosen.emit(value)
