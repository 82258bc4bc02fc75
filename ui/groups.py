"""The group editor (bound to `GroupEditorModel`): the server's groups on the left, a form for a
new group on the right (name checked as typed, description, SSO group mappings, root role,
members found by name, username or email), and after a 201 the group the server returned with
"Create another". A listed group opens into the same form (double-click, Enter or Open), with its
members, to be saved or deleted after a `Confirmation` that names what changes; right after, Undo
offers the inverse. Shows and forwards; never fetches."""

from __future__ import annotations

import itertools

from PySide6.QtCore import QByteArray, QEvent, QSize, Qt, QTimer
from PySide6.QtGui import QAction, QKeyEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from app.api.models import Group, User
from app.text import counted, plural
from app.viewmodels.avatars import AvatarCache
from app.viewmodels.groups import (
    MAPPINGS,
    MEMBERS,
    ROOT_ROLE,
    GroupEditorModel,
    GroupPlan,
    user_detail,
    user_label,
)
from app.viewmodels.session import Session
from ui.avatar import avatar_pixmap
from ui.confirmation import ConfirmationBox, ConfirmationFlow
from ui.palette import error_color, quiet
from ui.settings import window_settings
from ui.states import StatePanel
from ui.table import DataTable
from ui.tool_content import ToolContent

#: item data: the user's id, and the picture's URL
USER_ID_ROLE = Qt.ItemDataRole.UserRole
IMAGE_URL_ROLE = Qt.ItemDataRole.UserRole + 1
AVATAR_SIZE = 28
SPLITTER_KEY = "groups/splitter"
#: the form's widest when the groups list is hidden; Qt's "no limit"
FORM_ALONE_WIDTH, WIDGET_SIZE_MAX = 720, 16_777_215
#: error texts: a red that reads on a light and on a dark window colour


def _label(name: str, text: str = "", *, wrap: bool = True) -> QLabel:
    label = QLabel(text)
    label.setObjectName(name)
    label.setWordWrap(wrap)
    return label


def _quiet(name: str) -> QLabel:
    """A greyed remark (as the tool page's note)."""
    label = _label(name)
    quiet(label)
    label.hide()
    return label


def _show(label: QLabel, text: str) -> None:
    label.setText(text)
    label.setVisible(bool(text))


def _bold(label: QLabel) -> QLabel:
    font = label.font()
    font.setBold(True)
    label.setFont(font)
    return label


def _list(name: str, accessible: str) -> QListWidget:
    view = QListWidget()
    view.setObjectName(name)
    view.setAccessibleName(accessible)
    view.setAlternatingRowColors(True)
    view.setUniformItemSizes(True)
    view.setWordWrap(False)
    view.setTextElideMode(Qt.TextElideMode.ElideRight)
    return view


def _visible_rows(view: QListWidget, rows: float) -> None:
    """Make `view` as tall as `rows` rows of `AVATAR_SIZE`-high items, or of text."""
    line = max(view.fontMetrics().height() * 2 + 6, AVATAR_SIZE + 6)
    view.setFixedHeight(round(line * rows) + 2 * view.frameWidth())


class PersonList(QListWidget):
    """People with their picture, name and email; Enter activates, Delete says `delete`."""

    def __init__(self, name: str, accessible: str, avatars: AvatarCache) -> None:
        super().__init__()
        self.setObjectName(name)
        self.setAccessibleName(accessible)
        self.avatars = avatars
        self.setAlternatingRowColors(True)
        self.setUniformItemSizes(True)
        self.setWordWrap(False)
        self.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.setIconSize(QSize(AVATAR_SIZE, AVATAR_SIZE))
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)  # elided
        avatars.loaded.connect(self.on_avatars_loaded)

    def set_people(self, people: list[tuple[User, str]]) -> None:
        """Show `people` as (user, second line); keeps the current row's place (none when there
        was none: nobody is chosen for the person)."""
        row = self.currentRow()
        self.clear()
        for user, second in people:
            label = user_label(user)
            item = QListWidgetItem(f"{label}\n{second}" if second else label)
            item.setData(USER_ID_ROLE, user.id)
            item.setData(IMAGE_URL_ROLE, user.imageUrl or "")
            item.setToolTip(
                "\n".join(x for x in (user.name, user.username, user.email) if x) or label
            )
            item.setIcon(avatar_pixmap(label, self.avatars.image(user.imageUrl), AVATAR_SIZE))
            self.addItem(item)
        if self.count() and row >= 0:
            self.setCurrentRow(min(row, self.count() - 1))

    def user_id(self, item: QListWidgetItem | None) -> int | None:
        if item is None:
            return None
        value = item.data(USER_ID_ROLE)
        return int(value) if value is not None else None

    def current_user_id(self) -> int | None:
        return self.user_id(self.currentItem())

    def on_avatars_loaded(self, url: str) -> None:
        for row in range(self.count()):
            item = self.item(row)
            mine = str(item.data(IMAGE_URL_ROLE) or "")
            if mine and url.endswith(mine.split("://")[-1]):
                label = item.text().split("\n", 1)[0]
                item.setIcon(avatar_pixmap(label, self.avatars.image(mine), AVATAR_SIZE))


class MappingsEditor(QWidget):
    """The SSO group mappings: a list (F2 or double-click edits, Delete removes) and a line to
    add one. Blanks and duplicates are refused with a message."""

    def __init__(self, model: GroupEditorModel) -> None:
        super().__init__()
        self.model = model
        self.setObjectName("groupsMappings")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)

        row = QHBoxLayout()
        self.list = _list("groupsMappingsList", "SSO group mappings")
        self.list.setEditTriggers(
            QAbstractItemView.EditTrigger.DoubleClicked
            | QAbstractItemView.EditTrigger.EditKeyPressed
        )
        _visible_rows(self.list, 1.6)
        self.list.itemChanged.connect(self.on_list_item_changed)
        self.list.currentRowChanged.connect(self.on_list_current_row_changed)
        remove = QAction("Remove", self.list)
        remove.setShortcut(QKeySequence(QKeySequence.StandardKey.Delete))
        remove.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        remove.triggered.connect(self.on_remove_button_clicked)
        self.list.addAction(remove)
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        row.addWidget(self.list, 1)
        buttons = QVBoxLayout()
        buttons.setSpacing(4)
        self.edit_button = QPushButton("Edit")
        self.edit_button.setObjectName("groupsMappingEditButton")
        self.edit_button.setAccessibleName("Edit the selected SSO group mapping")
        self.edit_button.setToolTip("Edit the selected mapping (F2)")
        self.edit_button.clicked.connect(self.on_edit_button_clicked)
        buttons.addWidget(self.edit_button)
        self.remove_button = QPushButton("Remove")
        self.remove_button.setObjectName("groupsMappingRemoveButton")
        self.remove_button.setAccessibleName("Remove the selected SSO group mapping")
        self.remove_button.setToolTip("Remove the selected mapping (Delete)")
        self.remove_button.clicked.connect(self.on_remove_button_clicked)
        buttons.addWidget(self.remove_button)
        buttons.addStretch(1)
        row.addLayout(buttons)
        layout.addLayout(row)

        add_row = QHBoxLayout()
        self.edit = QLineEdit()
        self.edit.setObjectName("groupsMappingEdit")
        self.edit.setAccessibleName("New SSO group mapping")
        self.edit.setPlaceholderText("Name of a group in your identity provider")
        self.edit.setClearButtonEnabled(True)
        self.edit.returnPressed.connect(self.on_add_button_clicked)
        self.edit.textChanged.connect(self.on_edit_text_changed)
        self.edit.installEventFilter(self)
        add_row.addWidget(self.edit, 1)
        self.add_button = QPushButton("Add")
        self.add_button.setObjectName("groupsMappingAddButton")
        self.add_button.setAccessibleName("Add the SSO group mapping")
        self.add_button.setToolTip("Add the mapping (Enter)")
        self.add_button.clicked.connect(self.on_add_button_clicked)
        add_row.addWidget(self.add_button)
        layout.addLayout(add_row)
        self.error = _label("groupsMappingsError")
        self.error.hide()
        layout.addWidget(self.error)
        self.sync()

    def sync(self) -> None:
        """Show the model's mappings (keeping the current row)."""
        mappings = self.model.mappings
        shown = [self.list.item(i).text() for i in range(self.list.count())]
        if shown != mappings:
            row = self.list.currentRow()
            self.list.blockSignals(True)
            self.list.clear()
            for text in mappings:
                item = QListWidgetItem(text)
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
                self.list.addItem(item)
            if mappings:
                self.list.setCurrentRow(min(max(row, 0), len(mappings) - 1))
            self.list.blockSignals(False)
        has = self.list.currentRow() >= 0
        self.edit_button.setEnabled(has)
        self.remove_button.setEnabled(has)
        if self.model.field_errors.get(MAPPINGS):
            _show(self.error, self.model.field_errors[MAPPINGS])

    def say(self, problem: str) -> None:
        _show(self.error, problem)

    def eventFilter(self, watched: object, event: QEvent) -> bool:
        # Escape in the new mapping's line clears it
        if (
            watched is self.edit
            and event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and event.key() == Qt.Key.Key_Escape
            and self.edit.text()
        ):
            self.edit.clear()
            return True
        return super().eventFilter(watched, event)  # type: ignore[arg-type]

    def on_add_button_clicked(self) -> None:
        problem = self.model.add_mapping(self.edit.text())
        self.say(problem)
        if not problem:
            self.edit.clear()
            self.list.setCurrentRow(self.list.count() - 1)

    def on_edit_text_changed(self, _text: str) -> None:
        if self.error.isVisible() and not self.model.field_errors.get(MAPPINGS):
            self.say("")

    def on_edit_button_clicked(self) -> None:
        item = self.list.currentItem()
        if item is not None:
            self.list.setFocus(Qt.FocusReason.OtherFocusReason)
            self.list.editItem(item)

    def on_remove_button_clicked(self) -> None:
        row = self.list.currentRow()
        if row >= 0:
            self.say("")
            self.model.remove_mapping(row)

    def on_list_item_changed(self, item: QListWidgetItem) -> None:
        row = self.list.row(item)
        problem = self.model.edit_mapping(row, item.text())
        self.say(problem)
        if problem or item.text() != self.model.mappings[row]:
            self.list.blockSignals(True)
            item.setText(self.model.mappings[row])  # refused (or trimmed): as it was
            self.list.blockSignals(False)

    def on_list_current_row_changed(self, row: int) -> None:
        self.edit_button.setEnabled(row >= 0)
        self.remove_button.setEnabled(row >= 0)


class MembersEditor(QWidget):
    """Find users by name, username or email and add them (Enter, double-click, Add); the chosen
    members below with their picture, name and email (Delete or Remove takes one out)."""

    def __init__(self, model: GroupEditorModel, avatars: AvatarCache) -> None:
        super().__init__()
        self.model = model
        self.setObjectName("groupsMembers")
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(4)
        #: why users cannot be chosen (instead of the picker)
        self.note = _quiet("groupsUsersNote")
        outer.addWidget(self.note)
        self.picker = QWidget()
        self.picker.setObjectName("groupsMembersPicker")
        layout = QVBoxLayout(self.picker)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        outer.addWidget(self.picker)

        self.search = QLineEdit()
        self.search.setObjectName("groupsMemberSearch")
        self.search.setAccessibleName("Search users by name, username or email")
        self.search.setPlaceholderText("Search users by name, username or email")
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(self.on_search_text_changed)
        self.search.returnPressed.connect(self.on_add_button_clicked)
        self.search.installEventFilter(self)
        layout.addWidget(self.search)
        self.results = PersonList("groupsUsersList", "Users found", avatars)
        _visible_rows(self.results, 3.5)
        self.results.activated.connect(self.on_results_activated)
        self.results.currentRowChanged.connect(self.on_lists_current_row_changed)
        layout.addWidget(self.results)
        row = QHBoxLayout()
        self.found = _label("groupsUsersCount", wrap=False)
        quiet(self.found)
        row.addWidget(self.found, 1)
        self.add_button = QPushButton("Add member")
        self.add_button.setObjectName("groupsMemberAddButton")
        self.add_button.setToolTip("Add the selected user (Enter)")
        self.add_button.clicked.connect(self.on_add_button_clicked)
        row.addWidget(self.add_button)
        layout.addLayout(row)

        self.chosen_label = _bold(_label("groupsMembersCaption", "Chosen members", wrap=False))
        layout.addWidget(self.chosen_label)
        self.chosen = PersonList("groupsMembersList", "Chosen members", avatars)
        _visible_rows(self.chosen, 2.5)
        self.chosen.currentRowChanged.connect(self.on_lists_current_row_changed)
        remove = QAction("Remove member", self.chosen)
        remove.setShortcut(QKeySequence(QKeySequence.StandardKey.Delete))
        remove.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        remove.triggered.connect(self.on_remove_button_clicked)
        self.chosen.addAction(remove)
        self.chosen.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        layout.addWidget(self.chosen)
        row = QHBoxLayout()
        self.empty_label = _label("groupsMembersEmpty", "No members yet: a group may start empty.")
        quiet(self.empty_label)
        row.addWidget(self.empty_label, 1)
        self.remove_button = QPushButton("Remove member")
        self.remove_button.setObjectName("groupsMemberRemoveButton")
        self.remove_button.setToolTip("Remove the selected member (Delete)")
        self.remove_button.clicked.connect(self.on_remove_button_clicked)
        row.addWidget(self.remove_button)
        layout.addLayout(row)
        self.error = _label("groupsMembersError")
        self.error.hide()
        outer.addWidget(self.error)
        self.sync()

    def sync(self) -> None:
        m = self.model
        self.picker.setVisible(not m.users_note)
        self.show_results()
        members = [(u, user_detail(u)) for u in m.members]
        shown = [self.chosen.user_id(self.chosen.item(i)) for i in range(self.chosen.count())]
        if shown != [u.id for u, _ in members]:
            self.chosen.set_people(members)
        self.chosen_label.setText(
            f"Chosen members ({len(m.members)})" if m.members else "Chosen members"
        )
        self.empty_label.setVisible(not m.members)
        for row in range(self.chosen.count()):
            item = self.chosen.item(row)
            refused = m.member_errors.get(self.chosen.user_id(item) or -1)
            item.setToolTip(refused or item.toolTip())
        _show(self.error, m.field_errors.get(MEMBERS, ""))
        _show(self.note, m.users_note)
        self.on_lists_current_row_changed()

    def show_results(self) -> None:
        m = self.model
        matches, total = m.search_users(self.search.text())
        self.results.set_people([(u, user_detail(u)) for u in matches])
        if not m.users:
            self.found.setText("")
        elif not total:
            self.found.setText("No user matches." if self.search.text().strip() else
                               "Every user is a member.")  # fmt: skip
        elif total > len(matches):
            self.found.setText(f"{len(matches):,} of {total:,} shown: type more to narrow")
        elif self.search.text().strip():
            self.found.setText(f"{plural(total, 'user')} match")
        else:
            self.found.setText(plural(total, "user"))
        self.on_lists_current_row_changed()

    def eventFilter(self, watched: object, event: QEvent) -> bool:
        # Up and Down in the search box move through the users found
        if watched is self.search and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            step = {Qt.Key.Key_Down: 1, Qt.Key.Key_Up: -1}.get(Qt.Key(event.key()))
            if step is not None and self.results.count():
                row = self.results.currentRow() + step
                self.results.setCurrentRow(max(0, min(row, self.results.count() - 1)))
                return True
            if event.key() == Qt.Key.Key_Escape and self.search.text():
                self.search.clear()
                return True
        return super().eventFilter(watched, event)  # type: ignore[arg-type]

    def on_search_text_changed(self, text: str) -> None:
        self.show_results()
        # what was typed picks its first match (Enter adds it); an empty search picks nobody
        self.results.setCurrentRow(0 if text.strip() and self.results.count() else -1)

    def on_results_activated(self, _index: object) -> None:
        self.on_add_button_clicked()

    def on_add_button_clicked(self) -> None:
        user_id = self.results.current_user_id()
        if user_id is not None:
            self.model.add_member(user_id)

    def on_remove_button_clicked(self) -> None:
        user_id = self.chosen.current_user_id()
        if user_id is not None:
            self.model.remove_member(user_id)

    def on_lists_current_row_changed(self, *_: object) -> None:
        self.add_button.setEnabled(self.results.currentRow() >= 0)
        self.remove_button.setEnabled(self.chosen.currentRow() >= 0)


class CreatedView(QWidget):
    """The group the server returned after a 201, and "Create another"."""

    def __init__(self, model: GroupEditorModel, avatars: AvatarCache) -> None:
        super().__init__()
        self.model = model
        self.setObjectName("groupsCreated")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 0, 4, 0)
        layout.setSpacing(8)
        self.title = _bold(_label("groupsCreatedTitle"))
        layout.addWidget(self.title)
        self.fields = QFormLayout()
        self.fields.setHorizontalSpacing(12)
        self.fields.setVerticalSpacing(4)
        self.fields.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.fields.setLabelAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        layout.addLayout(self.fields)
        self.values: dict[str, QLabel] = {}
        self.members_label = _bold(_label("groupsCreatedMembersCaption", "Members", wrap=False))
        layout.addWidget(self.members_label)
        self.members = PersonList("groupsCreatedMembers", "Members of the new group", avatars)
        self.members.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        _visible_rows(self.members, 3.5)
        layout.addWidget(self.members)
        row = QHBoxLayout()
        row.addStretch(1)
        self.another_button = QPushButton("Create another")
        self.another_button.setObjectName("groupsCreateAnotherButton")
        self.another_button.setToolTip("Clear the form for a new group")
        self.another_button.clicked.connect(self.on_another_button_clicked)
        row.addWidget(self.another_button)
        layout.addLayout(row)
        layout.addStretch(1)

    def sync(self) -> None:
        group = self.model.created
        if group is None:
            return
        self.title.setText(f"Group “{group.name}” created")
        while self.fields.rowCount():
            self.fields.removeRow(0)
        self.values = {}
        for caption, text in self.model.created_fields:
            stem = "".join(w.title() for w in caption.split())
            value = _label(f"groupsCreated{stem}Value", text)
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            self.values[caption] = value
            self.fields.addRow(_label(f"groupsCreated{stem}Caption", f"{caption}:", wrap=False),
                               value)  # fmt: skip
        members = self.model.created_members
        self.members_label.setText(f"Members ({len(members)})")
        self.members.set_people(
            [(m.user, " · ".join(x for x in (user_detail(m.user), m.joined) if x))
             for m in members]
        )  # fmt: skip
        for row, member in enumerate(members):
            item = self.members.item(row)
            item.setToolTip("\n".join(x for x in (item.toolTip(), member.joined,
                                                   member.added_by) if x))  # fmt: skip
        self.members.setVisible(bool(members))

    def on_another_button_clicked(self) -> None:
        self.model.create_another()


class GroupConfirmation(ConfirmationBox):
    """Asks before a group is saved, deleted, put back or recreated, naming exactly what
    changes (`GroupPlan.lines()`); Cancel is the default."""

    def __init__(
        self, plan: GroupPlan, people: dict[int, str], parent: QWidget | None = None
    ) -> None:
        super().__init__("groupsConfirmation", plan.title, plan.question,
                         plan.lines(people), plan.button, parent)  # fmt: skip
        self.plan: GroupPlan = plan
        self.confirm_button = self.action_button
        self.confirm_button.setObjectName("groupsConfirmButton")


class GroupEditor(ToolContent):
    """The Groups tool's window: the existing groups beside the new group's form."""

    model: GroupEditorModel
    states: StatePanel

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(session, parent)
        self.setObjectName("groupsEditor")
        self.model = GroupEditorModel(session, self)
        avatars = session.avatars
        #: the name field was edited (an empty name is pointed out only then)
        self._name_touched = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)

        # ---- left: the groups the server has
        self.list_pane = QWidget()
        self.list_pane.setObjectName("groupsListPane")
        left = QVBoxLayout(self.list_pane)
        left.setContentsMargins(0, 0, 6, 0)
        left.setSpacing(6)
        left.addWidget(_bold(_label("groupsListHeading", "Existing groups", wrap=False)))
        self.table = DataTable(
            "groupsList",
            self.model.groups,
            noun="groups",
            count_text=counted("group"),
            stretch_column=3,  # the SSO mappings take what is left (elided, in a tooltip)
        )
        if not self.table.restored:
            self.table.sort_by(0)
        self.list_states = StatePanel("groupsList", self.table)
        left.addWidget(self.list_states, 1)
        open_row = QHBoxLayout()
        self.open_hint = _label(
            "groupsOpenHint", "Double-click a group, or press Enter, to open it."
        )
        quiet(self.open_hint)
        open_row.addWidget(self.open_hint, 1)
        self.open_button = QPushButton("Open")
        self.open_button.setObjectName("groupsOpenButton")
        self.open_button.setAccessibleName("Open the selected group")
        self.open_button.setToolTip("Open the selected group to see its members, edit or delete it")
        self.open_button.clicked.connect(self.on_open_button_clicked)
        open_row.addWidget(self.open_button)
        left.addLayout(open_row)
        self.table.row_activated.connect(self.on_table_row_activated)
        self.table.current_changed.connect(self.on_table_current_changed)

        # ---- right: the form, or the group just created
        self.form = QWidget()
        self.form.setObjectName("groupsForm")
        form = QVBoxLayout(self.form)
        form.setContentsMargins(6, 0, 6, 0)
        form.setSpacing(6)
        # never squeezed below what it needs by the scroll area (the lists have fixed heights)
        form.setSizeConstraint(QVBoxLayout.SizeConstraint.SetMinimumSize)
        heading = QHBoxLayout()
        self.form_heading = _bold(_label("groupsFormHeading", "New group"))
        heading.addWidget(self.form_heading, 1)
        self.new_button = QPushButton("New group")
        self.new_button.setObjectName("groupsNewButton")
        self.new_button.setAccessibleName("Fill in a new group instead")
        self.new_button.setToolTip("Leave this group as it is and fill in a new one")
        self.new_button.clicked.connect(self.on_new_button_clicked)
        heading.addWidget(self.new_button, 0, Qt.AlignmentFlag.AlignTop)
        form.addLayout(heading)
        self.groups_note = _quiet("groupsListNote")
        form.addWidget(self.groups_note)
        fields = QFormLayout()
        fields.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapAllRows)
        fields.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        fields.setVerticalSpacing(4)
        fields.setContentsMargins(0, 0, 0, 0)

        self.name_edit = QLineEdit()
        self.name_edit.setObjectName("groupsNameEdit")
        self.name_edit.setPlaceholderText("Required, unique on the server")
        self.name_edit.textEdited.connect(self.on_name_edit_text_edited)
        self.name_edit.returnPressed.connect(self.on_create_button_clicked)
        name_box = QWidget()
        name_layout = QVBoxLayout(name_box)
        name_layout.setContentsMargins(0, 0, 0, 0)
        name_layout.setSpacing(2)
        name_layout.addWidget(self.name_edit)
        self.name_error = _label("groupsNameError")
        self.name_error.hide()
        name_layout.addWidget(self.name_error)
        self.name_hint = _quiet("groupsNameHint")
        name_layout.addWidget(self.name_hint)
        self._add_row(fields, "groupsNameCaption", "&Name:", name_box, self.name_edit)

        self.description_edit = QPlainTextEdit()
        self.description_edit.setObjectName("groupsDescriptionEdit")
        self.description_edit.setTabChangesFocus(True)
        self.description_edit.setPlaceholderText("What the group is for (optional)")
        lines = self.description_edit.fontMetrics().lineSpacing()
        self.description_edit.setFixedHeight(lines * 3 + 14)
        self.description_edit.textChanged.connect(self.on_description_edit_text_changed)
        description_box = QWidget()
        description_layout = QVBoxLayout(description_box)
        description_layout.setContentsMargins(0, 0, 0, 0)
        description_layout.setSpacing(2)
        description_layout.addWidget(self.description_edit)
        self.description_error = _label("groupsDescriptionError")
        self.description_error.hide()
        description_layout.addWidget(self.description_error)
        self._add_row(fields, "groupsDescriptionCaption", "&Description:", description_box,
                      self.description_edit)  # fmt: skip

        self.mappings = MappingsEditor(self.model)
        self._add_row(fields, "groupsMappingsCaption", "&SSO group mappings:", self.mappings,
                      self.mappings.edit)  # fmt: skip

        self.root_role_combo = QComboBox()
        self.root_role_combo.setObjectName("groupsRootRoleCombo")
        self.root_role_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.root_role_combo.currentIndexChanged.connect(
            self.on_root_role_combo_current_index_changed
        )
        role_box = QWidget()
        role_layout = QVBoxLayout(role_box)
        role_layout.setContentsMargins(0, 0, 0, 0)
        role_layout.setSpacing(2)
        role_row = QHBoxLayout()
        role_row.addWidget(self.root_role_combo)
        role_row.addStretch(1)
        role_layout.addLayout(role_row)
        self.root_role_hint = _quiet("groupsRootRoleHint")
        role_layout.addWidget(self.root_role_hint)
        self.root_role_error = _label("groupsRootRoleError")
        self.root_role_error.hide()
        role_layout.addWidget(self.root_role_error)
        self._add_row(fields, "groupsRootRoleCaption", "&Root role:", role_box,
                      self.root_role_combo)  # fmt: skip

        self.members = MembersEditor(self.model, avatars)
        self._add_row(fields, "groupsMembersFieldCaption", "&Members:", self.members,
                      self.members.search)  # fmt: skip
        form.addLayout(fields)
        form.addStretch(1)

        # under the form, always in sight: what stopped the last Create, and the button
        self.form_page = QWidget()
        self.form_page.setObjectName("groupsFormPage")
        page = QVBoxLayout(self.form_page)
        page.setContentsMargins(0, 0, 0, 0)
        page.setSpacing(6)
        page.addWidget(_scrolled("groupsFormScroll", self.form), 1)
        self.submit_error = _label("groupsSubmitError")
        self.submit_error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.submit_error.setContentsMargins(6, 0, 6, 0)
        self.submit_error.hide()
        page.addWidget(self.submit_error)
        bottom = QHBoxLayout()
        bottom.setContentsMargins(6, 0, 6, 0)
        self.create_hint = _label("groupsCreateHint")
        quiet(self.create_hint)
        bottom.addWidget(self.create_hint, 1)
        self.create_button = QPushButton("Create group")
        self.create_button.setObjectName("groupsCreateButton")
        self.create_button.setToolTip("Create the group (Ctrl+Enter)")
        self.create_button.clicked.connect(self.on_create_button_clicked)
        bottom.addWidget(self.create_button, 0, Qt.AlignmentFlag.AlignTop)
        self.delete_button = QPushButton("Delete group…")
        self.delete_button.setObjectName("groupsDeleteButton")
        self.delete_button.setAccessibleName("Delete the open group")
        self.delete_button.clicked.connect(self.on_delete_button_clicked)
        bottom.addWidget(self.delete_button, 0, Qt.AlignmentFlag.AlignTop)
        page.addLayout(bottom)
        create = QShortcut(QKeySequence("Ctrl+Return"), self.form_page)
        create.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        create.activated.connect(self.on_create_button_clicked)

        self.created_view = CreatedView(self.model, avatars)
        self.form_stack = QStackedWidget()
        self.form_stack.setObjectName("groupsFormStack")
        self.form_stack.addWidget(self.form_page)
        self.form_stack.addWidget(_scrolled("groupsCreatedScroll", self.created_view))

        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setObjectName("groupsSplitter")
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(self.list_pane)
        self.splitter.addWidget(self.form_stack)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setSizes([540, 440])
        state = window_settings().value(SPLITTER_KEY)
        if isinstance(state, QByteArray):
            self.splitter.restoreState(state)
        self._save_timer = QTimer(self)
        self._save_timer.setSingleShot(True)
        self._save_timer.setInterval(400)
        self._save_timer.timeout.connect(self.save_layout)
        self.splitter.splitterMoved.connect(self.on_splitter_splitter_moved)

        # under both: what the last change did, and its Undo
        body = QWidget()
        body.setObjectName("groupsBody")
        body_layout = QVBoxLayout(body)
        body_layout.setContentsMargins(0, 0, 0, 0)
        body_layout.addWidget(self.splitter, 1)
        outcome_row = QHBoxLayout()
        outcome_row.setContentsMargins(6, 0, 6, 0)
        self.outcome_label = _label("groupsOutcome")
        self.outcome_label.setAccessibleName("What the last change did")
        self.outcome_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        outcome_row.addWidget(self.outcome_label, 1)
        self.undo_button = QPushButton("Undo")
        self.undo_button.setObjectName("groupsUndoButton")
        self.undo_button.setAccessibleName("Undo the last change")
        self.undo_button.clicked.connect(self.on_undo_button_clicked)
        outcome_row.addWidget(self.undo_button, 0, Qt.AlignmentFlag.AlignTop)
        body_layout.addLayout(outcome_row)
        self.confirmations = ConfirmationFlow(
            self, lambda plan: GroupConfirmation(plan, self.model.people, self), self.model.change
        )
        self.states = StatePanel("groups", body)
        layout.addWidget(self.states)

        # Tab goes through the list, then the form top to bottom, then Create
        chain: list[QWidget] = [
            self.table.filter_edit,
            self.table.view,
            self.table.export_button,
            self.open_button,
            self.new_button,
            self.name_edit,
            self.description_edit,
            self.mappings.list,
            self.mappings.edit_button,
            self.mappings.remove_button,
            self.mappings.edit,
            self.mappings.add_button,
            self.root_role_combo,
            self.members.search,
            self.members.results,
            self.members.add_button,
            self.members.chosen,
            self.members.remove_button,
            self.create_button,
            self.created_view.another_button,
            self.delete_button,
            self.undo_button,
        ]
        for first, second in itertools.pairwise(chain):
            QWidget.setTabOrder(first, second)

        m = self.model
        m.status_changed.connect(self.on_model_changed)
        m.changed.connect(self.on_model_changed)
        m.form_changed.connect(self.on_model_form_changed)
        m.creating_changed.connect(self.on_model_form_changed)
        m.created_changed.connect(self.on_model_created_changed)
        m.editing_changed.connect(self.on_model_editing_changed)
        m.change_changed.connect(self.on_model_change_changed)
        m.groups.counts_changed.connect(self.on_model_changed)
        self._paint_errors()
        self.on_model_change_changed()  # no Undo yet, nor an outcome (and the form's state)
        self.start_model()

    @staticmethod
    def _add_row(
        fields: QFormLayout, name: str, caption: str, field: QWidget, buddy: QWidget
    ) -> None:
        label = QLabel(caption)
        label.setObjectName(name)
        label.setBuddy(buddy)
        fields.addRow(label, field)
        if not buddy.accessibleName():
            buddy.setAccessibleName(caption.replace("&", "").rstrip(":"))

    # ------------------------------------------------------------------ ToolContent

    def close_content(self) -> None:
        self.save_layout()
        super().close_content()

    def unsaved_changes(self) -> str:
        return self.model.unsaved_changes

    def save_layout(self) -> None:
        settings = window_settings()
        settings.setValue(SPLITTER_KEY, self.splitter.saveState())
        settings.sync()

    # ------------------------------------------------------------------ the model's state

    def on_model_phase_changed(self) -> None:
        self.on_model_changed()  # the session's state decides what the form offers too

    def on_model_changed(self, *_: object) -> None:
        m = self.model
        self.show_phase()
        self.list_pane.setVisible(m.can_list_groups)
        # alone, the form keeps a width that reads well rather than spanning the window
        self.form_stack.setMaximumWidth(WIDGET_SIZE_MAX if m.can_list_groups else FORM_ALONE_WIDTH)
        _show(self.groups_note, m.groups_note)
        if m.groups.total_count == 0:
            self.list_states.show_empty(
                "No groups yet",
                "This server has no user groups. Fill in the form to create the first one.",
            )
        else:
            self.list_states.show_content()
        roles = ["", *m.root_role_names]
        shown = [self.root_role_combo.itemData(i) for i in range(self.root_role_combo.count())]
        if shown != roles:
            self.root_role_combo.blockSignals(True)
            self.root_role_combo.clear()
            self.root_role_combo.addItem("No root role", "")
            for role in m.root_roles:
                self.root_role_combo.addItem(role.name, role.name)
                self.root_role_combo.setItemData(
                    self.root_role_combo.count() - 1, role.description or None,
                    Qt.ItemDataRole.ToolTipRole,
                )  # fmt: skip
            self.root_role_combo.blockSignals(False)
        self.root_role_combo.setEnabled(bool(m.root_roles))
        self.on_model_form_changed()

    def on_model_form_changed(self, *_: object) -> None:
        m = self.model
        if self.name_edit.text() != m.name:
            self.name_edit.setText(m.name)
        if self.description_edit.toPlainText() != m.description:
            self.description_edit.blockSignals(True)
            self.description_edit.setPlainText(m.description)
            self.description_edit.blockSignals(False)
        problem = m.name_problem
        pristine = not self._name_touched and not m.name and "name" not in m.field_errors
        _show(self.name_error, "" if pristine else problem)
        _show(self.name_hint, m.name_hint)
        _show(self.description_error, m.field_errors.get("description", ""))
        self.mappings.sync()
        index = self.root_role_combo.findData(m.root_role)
        if index >= 0 and index != self.root_role_combo.currentIndex():
            self.root_role_combo.blockSignals(True)
            self.root_role_combo.setCurrentIndex(index)
            self.root_role_combo.blockSignals(False)
        role = m.role_by_name(m.root_role) if m.root_role else None
        if m.users_note:
            hint = "The server did not list its root roles to this token."
        elif role is not None:
            hint = role.description or ""
        else:
            hint = "Members get no root role from this group."
        _show(self.root_role_hint, hint)
        _show(self.root_role_error, m.field_errors.get(ROOT_ROLE, ""))
        self.members.sync()
        _show(self.submit_error, m.submit_error)
        editing = m.editing is not None
        self.new_button.setVisible(editing)
        self.delete_button.setVisible(editing)
        if editing:
            reason = m.save_reason
            self.create_button.setText("Save changes")
            self.create_button.setEnabled(not reason)
            self.create_button.setToolTip(reason or "Save the changes to the group (Ctrl+Enter)")
            reason = m.delete_reason
            self.delete_button.setEnabled(not reason)
            self.delete_button.setToolTip(reason or "Delete the group (asks first)")
        else:
            self.create_button.setText("Create group")
            self.create_button.setEnabled(m.can_create)
            self.create_button.setToolTip("Create the group (Ctrl+Enter)")
        self.open_button.setEnabled(
            m.available and not m.changing and self.table.view.currentIndex().isValid()
        )
        if m.creating:
            self.create_hint.setText("Creating the group…")
        elif editing:
            self.create_hint.setText(m.save_reason if m.save_reason != "Nothing has changed."
                                     else "")  # fmt: skip
        elif not m.available or not m.loaded:
            self.create_hint.setText("")
        elif pristine:
            self.create_hint.setText("Give the group a name to create it.")
        elif not m.valid:
            self.create_hint.setText("Fix what is marked to create the group.")
        else:
            self.create_hint.setText("")

    def on_model_created_changed(self) -> None:
        if self.model.created is not None:
            self.created_view.sync()
            self.form_stack.setCurrentIndex(1)
            self.created_view.another_button.setFocus(Qt.FocusReason.OtherFocusReason)
        else:
            self._name_touched = False
            self.members.search.clear()
            self.mappings.edit.clear()
            self.form_stack.setCurrentIndex(0)
            self.on_model_form_changed()
            self.name_edit.setFocus(Qt.FocusReason.OtherFocusReason)

    # ------------------------------------------------------------------ the person's input

    def on_name_edit_text_edited(self, text: str) -> None:
        self._name_touched = True
        self.model.set_name(text)

    def on_description_edit_text_changed(self) -> None:
        self.model.set_description(self.description_edit.toPlainText())

    def on_root_role_combo_current_index_changed(self, index: int) -> None:
        value = self.root_role_combo.itemData(index)
        self.model.set_root_role(str(value) if value else "")

    def on_create_button_clicked(self) -> None:
        self._name_touched = True
        if self.model.editing is not None:
            self.confirm(self.model.plan_save())
        elif self.model.create() is None:
            self.on_model_form_changed()  # say what stops it

    def on_delete_button_clicked(self) -> None:
        self.confirm(self.model.plan_delete())

    def on_undo_button_clicked(self) -> None:
        self.confirm(self.model.plan_undo())

    def on_new_button_clicked(self) -> None:
        self.model.new_group()

    def on_open_button_clicked(self) -> None:
        index = self.table.view.currentIndex()
        if index.isValid():
            self.on_table_row_activated(self.model.groups.row_at(index.row()))

    def on_table_row_activated(self, row: object) -> None:
        if isinstance(row, Group):
            self.model.open_group(row.id)

    def on_table_current_changed(self, _row: object) -> None:
        self.on_model_form_changed()

    def confirm(self, plan: GroupPlan | None) -> None:
        """Ask before `plan` is carried out (nothing when there is none, or a question is
        open already)."""
        self.confirmations.ask(plan)

    def on_model_editing_changed(self) -> None:
        group = self.model.editing
        if group is None:
            self.form_heading.setText("New group")
        else:
            self.form_heading.setText(f"Group “{group.name}” (id {group.id})")
            self.form_stack.setCurrentIndex(0)
            self.members.search.clear()
            self.mappings.edit.clear()
        self.on_model_change_changed()  # Undo may apply to this group, or not

    def on_model_change_changed(self) -> None:
        m = self.model
        error = m.outcome_error
        _show(self.outcome_label, m.status if m.changing else (error or m.outcome))
        self.outcome_label.setProperty("error", bool(error))
        self.outcome_label.setStyleSheet(f"color: {error_color(self)};" if error else "")
        reason = m.undo_reason
        self.undo_button.setVisible(m.undoable is not None)
        self.undo_button.setEnabled(not reason)
        self.undo_button.setToolTip(reason or "Undo the last change (asks first)")
        if m.undoable is not None:
            self.undo_button.setText(
                "Undo: recreate the group" if m.undoable.kind == "delete" else "Undo the edit"
            )
        self.on_model_form_changed()

    def on_splitter_splitter_moved(self, *_: object) -> None:
        self._save_timer.start()

    # ------------------------------------------------------------------ look

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._paint_errors()

    def _paint_errors(self) -> None:
        style = f"color: {error_color(self)};"
        for label in (
            self.name_error,
            self.description_error,
            self.mappings.error,
            self.root_role_error,
            self.members.error,
            self.submit_error,
        ):
            if label.styleSheet() != style:
                label.setStyleSheet(style)


def _scrolled(name: str, widget: QWidget) -> QScrollArea:
    area = QScrollArea()
    area.setObjectName(name)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    area.setWidget(widget)
    area.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # Tab goes to the fields, not the frame
    area.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
    return area
