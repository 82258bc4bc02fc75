"""`AccessOverviewView`: who can do what where (bound to `AccessOverviewModel`). Who there is is
read when the window opens (F5 again); then "A user's projects" (search a user or service
account by name, email or username) lists every project in which they hold a role and why, and
"A project's people" everyone who can change the project picked and why, with the groups
holding roles there, each after reading the projects' access it needs, with a progress bar over
those projects and Stop. On open source a note says the answer comes from root roles alone.
This window shows and forwards."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QCompleter,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from app.viewmodels.access_overview import (
    WHY_COLUMN,
    AccessOverviewModel,
    where_count_text,
    who_count_text,
)
from app.viewmodels.tools import LoadPhase
from ui.palette import quiet
from ui.states import StatePanel
from ui.table import DataTable
from ui.tool_content import ToolContent
from ui.users import show_refreshing

STEM = "accessOverview"
VALUE_ROLE = Qt.ItemDataRole.UserRole
MODES = (("user", "A user's projects"), ("project", "A project's people"))


class AccessOverviewView(ToolContent):
    model: AccessOverviewModel
    states: StatePanel

    def __init__(self, session: Any, parent: QWidget | None = None) -> None:
        super().__init__(session, parent)
        self.setObjectName(f"{STEM}View")
        self.model = AccessOverviewModel(session, self)

        ask = QHBoxLayout()
        self.mode_combo = QComboBox()
        self.mode_combo.setObjectName(f"{STEM}Mode")
        self.mode_combo.setAccessibleName("What to answer")
        for key, text in MODES:
            self.mode_combo.addItem(text, key)
        ask.addWidget(self.mode_combo)
        self.search_combo = QComboBox()
        self.search_combo.setObjectName(f"{STEM}Search")
        self.search_combo.setEditable(True)
        self.search_combo.setAccessibleName("The user or project to answer for")
        self.search_combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.search_combo.setMinimumContentsLength(30)
        self.search_combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        completer = QCompleter(self.search_combo.model(), self.search_combo)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        completer.setFilterMode(Qt.MatchFlag.MatchContains)
        completer.setCompletionMode(QCompleter.CompletionMode.PopupCompletion)
        self.search_combo.setCompleter(completer)
        line = self.search_combo.lineEdit()
        assert line is not None
        line.setObjectName(f"{STEM}SearchEdit")
        line.returnPressed.connect(self.on_show_button_clicked)
        ask.addWidget(self.search_combo, 1)
        self.show_button = QPushButton("Show")
        self.show_button.setObjectName(f"{STEM}ShowButton")
        ask.addWidget(self.show_button)

        self.progress_row = QWidget()
        self.progress_row.setObjectName(f"{STEM}Progress")
        progress = QHBoxLayout(self.progress_row)
        progress.setContentsMargins(0, 0, 0, 0)
        self.progress_bar = QProgressBar()
        self.progress_bar.setObjectName(f"{STEM}ProgressBar")
        self.progress_bar.setAccessibleName("Projects read")
        self.progress_bar.setFormat("%v of %m projects")
        self.progress_bar.setRange(0, 0)
        progress.addWidget(self.progress_bar, 1)
        self.stop_button = QPushButton("S&top")
        self.stop_button.setObjectName(f"{STEM}StopButton")
        self.stop_button.setToolTip(
            "Stop reading the server (what was read is kept; nothing is "
            "shown until the answer is read)"
        )
        progress.addWidget(self.stop_button)
        self.progress_row.hide()

        body = QWidget()
        body.setObjectName(f"{STEM}Body")
        layout = QVBoxLayout(body)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        self.note_label = QLabel()
        self.note_label.setObjectName(f"{STEM}Note")
        self.note_label.setWordWrap(True)
        bold = self.note_label.font()
        bold.setBold(True)
        self.note_label.setFont(bold)
        self.note_label.hide()
        layout.addWidget(self.note_label)
        self.summary_label = QLabel()
        self.summary_label.setObjectName(f"{STEM}Summary")
        self.summary_label.setWordWrap(True)
        self.summary_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.summary_label)
        self.stack = QStackedWidget()
        self.where_table = DataTable(f"{STEM}Where", self.model.where_table, noun="projects",
                                     count_text=where_count_text,
                                     stretch_column=WHY_COLUMN)  # fmt: skip
        self.who_table = DataTable(f"{STEM}Who", self.model.who_table, noun="users",
                                   count_text=who_count_text, stretch_column=5)  # fmt: skip
        self.stack.addWidget(self.where_table)
        self.stack.addWidget(self.who_table)
        layout.addWidget(self.stack, 1)
        self.groups_label = QLabel()
        self.groups_label.setObjectName(f"{STEM}Groups")
        self.groups_label.setWordWrap(True)
        self.groups_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.groups_label)
        self.unread_label = QLabel()
        self.unread_label.setObjectName(f"{STEM}Unread")
        self.unread_label.setWordWrap(True)
        quiet(self.unread_label)
        layout.addWidget(self.unread_label)

        self.states = StatePanel(STEM, body)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(6)
        outer.addLayout(ask)
        outer.addWidget(self.progress_row)
        outer.addWidget(self.states, 1)

        self.mode_combo.currentIndexChanged.connect(self.on_mode_combo_changed)
        self.search_combo.activated.connect(self.on_search_combo_activated)
        self.show_button.clicked.connect(self.on_show_button_clicked)
        self.stop_button.clicked.connect(self.model.cancel)
        m = self.model
        m.progress.connect(self.on_model_progress)
        m.answer_changed.connect(self.on_model_answer_changed)
        m.busy_changed.connect(self.on_model_busy_changed)
        self.on_model_answer_changed()
        self.start_model()

    # ------------------------------------------------------------------ what is asked

    @property
    def mode(self) -> str:
        return str(self.mode_combo.currentData())

    def _fill_search(self) -> None:
        typed = self.search_combo.currentText()
        self.search_combo.blockSignals(True)
        self.search_combo.clear()
        if self.mode == "user":
            for person in self.model.people():
                self.search_combo.addItem(person.label, str(person.id))
            placeholder = "Search a user or service account by name, email or username"
        else:
            for project, label in self.model.projects():
                self.search_combo.addItem(label, project)
            placeholder = "Pick a project, or type its id"
        self.search_combo.setCurrentIndex(-1)
        self.search_combo.setEditText(typed)
        self.search_combo.blockSignals(False)
        line = self.search_combo.lineEdit()
        if line is not None:
            line.setPlaceholderText(placeholder)
            line.setAccessibleName(placeholder)

    def _value(self) -> str:
        text = self.search_combo.currentText().strip()
        index = self.search_combo.findText(text, Qt.MatchFlag.MatchFixedString)
        return str(self.search_combo.itemData(index, VALUE_ROLE)) if index >= 0 else text

    def ask(self, mode: str, value: str) -> None:
        """Answer for a user (`mode` "user": an id, email or username) or a project."""
        index = self.mode_combo.findData(mode)
        if index != self.mode_combo.currentIndex():
            self.mode_combo.setCurrentIndex(index)
        found = self.search_combo.findData(value, VALUE_ROLE)
        if found >= 0:
            self.search_combo.setCurrentIndex(found)
        else:
            self.search_combo.setEditText(value)
        self._ask(value)

    def _ask(self, value: str) -> None:
        if self.mode == "user":
            self.model.show_user(value)
        else:
            self.model.show_project(value)

    def open_item(self, item: Any) -> None:
        """("user", id or email) or ("project", id); a plain text is a project."""
        if isinstance(item, tuple) and len(item) == 2:
            self.ask(str(item[0]), str(item[1]))
        elif str(item).strip():
            self.ask("project", str(item).strip())

    # ------------------------------------------------------------------ slots

    def on_mode_combo_changed(self, _index: int) -> None:
        self.search_combo.setEditText("")
        self._fill_search()
        self.stack.setCurrentIndex(0 if self.mode == "user" else 1)

    def on_search_combo_activated(self, index: int) -> None:
        if index >= 0:
            self._ask(str(self.search_combo.itemData(index, VALUE_ROLE)))

    def on_show_button_clicked(self) -> None:
        self._ask(self._value())

    def on_model_progress(self, done: int, total: int) -> None:
        self.progress_bar.setRange(0, max(total, 1))
        self.progress_bar.setValue(done)

    def on_model_busy_changed(self, _busy: bool = False) -> None:
        reading = self.model.busy  # its busy tasks are the reads (answers are not busy)
        if reading != self.progress_row.isVisibleTo(self):
            self.progress_row.setVisible(reading)
            if reading:
                self.progress_bar.setRange(0, 0)  # the projects are not counted yet

    def on_model_answer_changed(self) -> None:
        m = self.model
        if self.search_combo.count() == 0 or not m.loaded:
            self._fill_search()
        self.stack.setCurrentIndex(0 if m.mode == "user" else 1)
        self.summary_label.setText(m.summary)
        self.note_label.setText(m.note)
        self.note_label.setVisible(bool(m.note))
        self.groups_label.setText(m.groups_text)
        self.groups_label.setVisible(bool(m.groups_text))
        self.unread_label.setText(m.unread_text)
        self.unread_label.setVisible(bool(m.unread_text))

    def on_model_phase_changed(self) -> None:
        self.on_model_busy_changed()
        if self.model.closed:
            return
        if self.model.loaded and self.search_combo.count() == 0:
            self._fill_search()
        if self.show_phase() is LoadPhase.READY:
            show_refreshing(self.where_table, self.model.busy)
            show_refreshing(self.who_table, self.model.busy)
