"""`ProjectDashboard`: one project's personal dashboard (bound to `ProjectDashboardModel`): a
project picker, the onboarding status as a badge, the owners with their pictures (groups and the
system owner shown for what they are), the roles of the token's user as badges with their type,
and the latest events with time, author and a summary rendered safely from markdown.

Each window has its own model: open the tool in a new window (Ctrl+Shift+N) to see two projects
side by side. `title_changed` names the project shown, for a window title.
"""

from __future__ import annotations

from typing import Any, TypeVar

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QPalette, QResizeEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from app.viewmodels.dashboard import (
    EventItem,
    OwnerItem,
    ProjectDashboardModel,
    RoleItem,
)
from app.viewmodels.session import Session
from app.viewmodels.tools import LoadPhase
from ui.avatar import Avatar
from ui.icons import icon
from ui.markdown import MarkdownView
from ui.palette import quiet
from ui.picker import Picker
from ui.states import StatePanel
from ui.tool_content import ToolContent

STEM = "projectDashboard"

#: badge colours by tone: mid tones, drawn as a tinted fill and a border so the text (in the
#: palette's own text colour) reads on light and dark palettes alike
TONES = {
    "neutral": "#718096",
    "progress": "#d69e2e",
    "done": "#38a169",
    "role": "#5b6abf",
}

AVATAR_SIZE = 28
#: the owners link here: the project's access (issue 36)
ACCESS_TOOL = "project_access"
ACCESS_LINK_TEXT = "Manage access…"

L = TypeVar("L", bound=QLabel)


class Badge(QLabel):
    """A short text in a rounded, tinted box: a status or a role."""

    def __init__(
        self, text: str = "", tone: str = "neutral", parent: QWidget | None = None
    ) -> None:
        super().__init__(text, parent)
        self.tone = ""
        self.set_tone(tone)
        self.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

    def set_tone(self, tone: str) -> None:
        if tone == self.tone:
            return
        self.tone = tone
        colour = QColor(TONES.get(tone, TONES["neutral"]))
        r, g, b = colour.red(), colour.green(), colour.blue()
        self.setStyleSheet(
            f"QLabel {{ border: 1px solid {colour.name()}; border-radius: 9px; "
            f"padding: 1px 8px; background-color: rgba({r}, {g}, {b}, 46); }}"
        )


class ElidedLabel(QLabel):
    """One line that ends in "…" when it does not fit; the whole text is then its tooltip."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._full = ""
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setMinimumWidth(40)
        self.set_full_text(text)

    @property
    def full_text(self) -> str:
        return self._full

    def set_full_text(self, text: str) -> None:
        self._full = text
        self.setAccessibleName(text)
        self._elide()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._elide()

    def sizeHint(self) -> Any:
        hint = super().sizeHint()
        hint.setWidth(self.fontMetrics().horizontalAdvance(self._full) + 2)
        return hint

    def _elide(self) -> None:
        width = max(0, self.width())
        shown = self.fontMetrics().elidedText(self._full, Qt.TextElideMode.ElideRight, width)
        if shown != self.text():
            self.setText(shown)
        self.setToolTip(self._full if shown != self._full else "")


def _bold(widget: QWidget, scale: float = 1.0) -> QFont:
    font = QFont(widget.font())
    font.setBold(True)
    if scale != 1.0:
        font.setPointSizeF(font.pointSizeF() * scale)
    return font


def _heading(name: str, text: str) -> QLabel:
    label = QLabel(text)
    label.setObjectName(name)
    label.setFont(_bold(label))
    return label


def _quiet(label: L) -> L:
    """A secondary text (`ui.palette.quiet`: the palette's placeholder colour, which flagdesk's
    palette keeps readable)."""
    quiet(label)
    return label


def _faint(line: QFrame) -> QFrame:
    """A separator line in a faint shade of the text colour (fine on light and dark)."""
    palette = line.palette()
    colour = QColor(palette.color(QPalette.ColorRole.WindowText))
    colour.setAlpha(50)
    palette.setColor(QPalette.ColorRole.WindowText, colour)
    line.setPalette(palette)
    return line


class OwnerRow(QWidget):
    """A user with their picture, a group with the group icon, or the system owner."""

    def __init__(self, owner: OwnerItem, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.owner = owner
        self.setObjectName(f"{STEM}Owner")
        kind = {"user": "User", "group": "Group", "system": "No owner"}[owner.kind]
        self.setAccessibleName(f"{kind}: {owner.name}")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 2, 0, 2)
        layout.setSpacing(8)
        self.picture: QLabel
        if owner.kind == "user":
            avatar = Avatar(session.avatars, AVATAR_SIZE)
            avatar.set_person(owner.name, owner.image_url)
            self.picture = avatar
        else:
            self.picture = QLabel()
            self.picture.setFixedSize(AVATAR_SIZE, AVATAR_SIZE)
            self.picture.setAlignment(Qt.AlignmentFlag.AlignCenter)
            self.picture.setPixmap(
                icon("groups" if owner.kind == "group" else "info").pixmap(20, 20)
            )
            self.picture.setToolTip(kind)
        self.picture.setObjectName(f"{STEM}OwnerPicture")
        layout.addWidget(self.picture, 0, Qt.AlignmentFlag.AlignTop)
        text = QVBoxLayout()
        text.setSpacing(0)
        self.name_label = ElidedLabel(owner.name)
        self.name_label.setObjectName(f"{STEM}OwnerName")
        text.addWidget(self.name_label)
        self.detail_label = _quiet(ElidedLabel(owner.detail))
        self.detail_label.setObjectName(f"{STEM}OwnerDetail")
        self.detail_label.setVisible(bool(owner.detail))
        text.addWidget(self.detail_label)
        layout.addLayout(text, 1)


class EventCard(QFrame):
    """One event: the author's picture, name and the time, and the summary."""

    def __init__(
        self, event: EventItem, session: Session, base_url: str, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.item = event
        self.setObjectName(f"{STEM}Event")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 8, 0, 8)
        layout.setSpacing(10)
        self.avatar = Avatar(session.avatars, AVATAR_SIZE)
        self.avatar.setObjectName(f"{STEM}EventAvatar")
        self.avatar.set_person(event.author, event.image_url)
        layout.addWidget(self.avatar, 0, Qt.AlignmentFlag.AlignTop)
        column = QVBoxLayout()
        column.setSpacing(2)
        header = QHBoxLayout()
        header.setSpacing(8)
        self.author_label = ElidedLabel(event.author)
        self.author_label.setObjectName(f"{STEM}EventAuthor")
        self.author_label.setFont(_bold(self.author_label))
        header.addWidget(self.author_label, 1)
        self.time_label = _quiet(QLabel(event.local_time or "time not given"))
        self.time_label.setObjectName(f"{STEM}EventTime")
        relative = event.relative_time()
        self.time_label.setToolTip(relative or "The server did not say when this happened")
        header.addWidget(self.time_label, 0, Qt.AlignmentFlag.AlignRight)
        column.addLayout(header)
        self.summary = MarkdownView(base_url)
        self.summary.setObjectName(f"{STEM}EventSummary")
        self.summary.setAccessibleName(f"Event by {event.author}")
        self.summary.set_markdown(event.summary or "*(no summary)*")
        column.addWidget(self.summary)
        layout.addLayout(column, 1)
        when = f", {event.local_time} ({relative})" if event.local_time else ""
        self.setAccessibleName(f"Event by {event.author}{when}")


class ProjectDashboard(ToolContent):
    model: ProjectDashboardModel
    states: StatePanel

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(session, parent)
        self.setObjectName(f"{STEM}View")
        self.model = ProjectDashboardModel(session, self)
        self._shown: object = None  # the details the content was built from
        self._shown_project = ""
        self._title = ""

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(8)
        self.picker = Picker(
            STEM,
            self.model.choices,
            caption="Project:",
            button_text="Show",
            placeholder="Pick a project, or type its id",
        )
        self.picker.button.setToolTip("Show this project's dashboard (Enter)")
        layout.addWidget(self.picker)
        self.notice = QLabel()
        self.notice.setObjectName(f"{STEM}Notice")
        self.notice.setWordWrap(True)
        self.notice.hide()
        layout.addWidget(self.notice)

        # ---- the dashboard itself, in a scroll area
        self.scroll_area = QScrollArea()
        self.scroll_area.setObjectName(f"{STEM}Scroll")
        self.scroll_area.setWidgetResizable(True)
        self.scroll_area.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        body = QWidget()
        body.setObjectName(f"{STEM}Body")
        self.scroll_area.setWidget(body)
        column = QVBoxLayout(body)
        column.setContentsMargins(0, 4, 8, 4)
        column.setSpacing(10)

        header = QHBoxLayout()
        header.setSpacing(12)
        self.project_title = ElidedLabel()
        self.project_title.setObjectName(f"{STEM}ProjectTitle")
        self.project_title.setFont(_bold(self.project_title, 1.2))
        header.addWidget(self.project_title, 1)
        self.onboarding_caption = _quiet(QLabel("Onboarding:"))
        self.onboarding_caption.setObjectName(f"{STEM}OnboardingCaption")
        header.addWidget(self.onboarding_caption)
        self.onboarding_badge = Badge("")
        self.onboarding_badge.setObjectName(f"{STEM}Onboarding")
        header.addWidget(self.onboarding_badge)
        column.addLayout(header)
        self.project_description = _quiet(QLabel())
        self.project_description.setObjectName(f"{STEM}ProjectDescription")
        self.project_description.setWordWrap(True)
        column.addWidget(self.project_description)

        people = QHBoxLayout()
        people.setSpacing(24)
        owners_column = QVBoxLayout()
        owners_column.setSpacing(2)
        self.owners_heading = _heading(f"{STEM}OwnersHeading", "Owners")
        owners_header = QHBoxLayout()
        owners_header.setSpacing(12)
        owners_header.addWidget(self.owners_heading)
        # issue 36: the owners link to the project access window for this project
        self.access_link = QLabel(f'<a href="access">{ACCESS_LINK_TEXT}</a>')
        self.access_link.setObjectName(f"{STEM}AccessLink")
        self.access_link.setTextFormat(Qt.TextFormat.RichText)
        flags = Qt.TextInteractionFlag
        self.access_link.setTextInteractionFlags(
            flags.LinksAccessibleByMouse | flags.LinksAccessibleByKeyboard
        )
        self.access_link.setAccessibleName("Open this project's access: who holds which role")
        self.access_link.setToolTip("Who holds which role in this project: grant, change, revoke")
        self.access_link.linkActivated.connect(self.on_access_link_activated)
        owners_header.addWidget(self.access_link)
        owners_header.addStretch(1)
        owners_column.addLayout(owners_header)
        self.owners_box = QWidget()
        self.owners_box.setObjectName(f"{STEM}Owners")
        self.owners_layout = QVBoxLayout(self.owners_box)
        self.owners_layout.setContentsMargins(0, 0, 0, 0)
        self.owners_layout.setSpacing(0)
        owners_column.addWidget(self.owners_box)
        owners_column.addStretch(1)
        people.addLayout(owners_column, 3)
        roles_column = QVBoxLayout()
        roles_column.setSpacing(4)
        self.roles_heading = _heading(f"{STEM}RolesHeading", "Your roles")
        roles_column.addWidget(self.roles_heading)
        self.roles_box = QWidget()
        self.roles_box.setObjectName(f"{STEM}Roles")
        self.roles_layout = QVBoxLayout(self.roles_box)
        self.roles_layout.setContentsMargins(0, 0, 0, 0)
        self.roles_layout.setSpacing(4)
        roles_column.addWidget(self.roles_box)
        self.no_roles_label = _quiet(QLabel())
        self.no_roles_label.setObjectName(f"{STEM}NoRoles")
        self.no_roles_label.setWordWrap(True)
        roles_column.addWidget(self.no_roles_label)
        roles_column.addStretch(1)
        people.addLayout(roles_column, 2)
        column.addLayout(people)

        column.addSpacing(6)
        self.events_heading = _heading(f"{STEM}EventsHeading", "Latest events")
        column.addWidget(self.events_heading)
        self.events_box = QWidget()
        self.events_box.setObjectName(f"{STEM}Events")
        self.events_layout = QVBoxLayout(self.events_box)
        self.events_layout.setContentsMargins(0, 0, 0, 0)
        self.events_layout.setSpacing(0)
        column.addWidget(self.events_box)
        self.no_events = QWidget()
        self.no_events.setObjectName(f"{STEM}EventsEmpty")
        no_events = QHBoxLayout(self.no_events)
        no_events.setContentsMargins(0, 8, 0, 8)
        no_events.setSpacing(10)
        no_events_icon = QLabel()
        no_events_icon.setPixmap(icon("info").pixmap(20, 20))
        no_events.addWidget(no_events_icon, 0, Qt.AlignmentFlag.AlignTop)
        no_events_text = QVBoxLayout()
        no_events_text.setSpacing(2)
        self.no_events_label = QLabel()
        self.no_events_label.setObjectName(f"{STEM}EventsEmptyLabel")
        self.no_events_label.setFont(_bold(self.no_events_label))
        self.no_events_label.setWordWrap(True)
        no_events_text.addWidget(self.no_events_label)
        self.no_events_detail = _quiet(QLabel())
        self.no_events_detail.setObjectName(f"{STEM}EventsEmptyDetail")
        self.no_events_detail.setWordWrap(True)
        no_events_text.addWidget(self.no_events_detail)
        no_events.addLayout(no_events_text, 1)
        column.addWidget(self.no_events)
        column.addStretch(1)

        self.states = StatePanel(STEM, self.scroll_area)
        layout.addWidget(self.states, 1)

        self.setTabOrder(self.picker.combo, self.picker.button)
        self.setTabOrder(self.picker.button, self.states.retry_button)

        self.picker.chosen.connect(self.on_picker_chosen)
        m = self.model
        m.changed.connect(self.on_model_changed)
        m.status_changed.connect(self.on_model_changed)
        m.project_changed.connect(self.on_model_project_changed)
        self.start_model()

    # ------------------------------------------------------------------ ToolContent

    def open_item(self, item: Any) -> None:
        project = str(item).strip()
        if project:
            self.picker.set_value(project)
            self.model.show_project(project)

    @property
    def title(self) -> str:
        """The project shown ("" when none is)."""
        return self._title

    # ------------------------------------------------------------------ slots

    def on_picker_chosen(self, project: str) -> None:
        self.model.show_project(project)

    def on_access_link_activated(self, _link: str = "") -> None:
        """The owners' link: the project access window, on the project shown."""
        if self.model.loaded_project:
            self.open_requested.emit(ACCESS_TOOL, self.model.loaded_project)

    def on_model_project_changed(self, project: str) -> None:
        if self.picker.value != project:
            self.picker.set_value(project)

    def on_model_phase_changed(self) -> None:
        self.on_model_changed()

    def on_model_changed(self, *_: object) -> None:
        m = self.model
        if m.closed:
            return
        self._set_title(m.project_label)
        self.notice.setText(m.notice)
        self.notice.setVisible(bool(m.notice))
        if m.phase is LoadPhase.READY:
            self._fill()
        self.show_phase()

    # ------------------------------------------------------------------ building

    def _set_title(self, title: str) -> None:
        if title != self._title:
            self._title = title
            self.title_changed.emit(title)

    def _fill(self) -> None:
        m = self.model
        self.project_title.set_full_text(m.project_label)
        self.project_description.setText(m.project_detail)
        self.project_description.setVisible(bool(m.project_detail))
        self.access_link.setVisible(m.access_available)
        self.roles_heading.setText(m.roles_heading)
        self.no_roles_label.setText(m.no_roles_text)
        self.no_events_label.setText(m.no_events_text)
        self.no_events_detail.setText(m.no_events_detail)
        if self._shown is m.details:
            return
        self._shown = m.details
        onboarding = m.onboarding
        if onboarding is not None:
            badge = self.onboarding_badge
            badge.setText(onboarding.text)
            badge.set_tone(onboarding.tone)
            badge.setToolTip(onboarding.detail)
            badge.setAccessibleName(f"Onboarding: {onboarding.text}")
            badge.setAccessibleDescription(onboarding.detail)

        _clear(self.owners_layout)
        for owner in m.owners:
            self.owners_layout.addWidget(OwnerRow(owner, self.session))
        self.owners_heading.setText(f"Owners ({len(m.owners)})" if m.owners else "Owners")

        _clear(self.roles_layout)
        for role in m.roles:
            self.roles_layout.addWidget(_role_badge(role), 0, Qt.AlignmentFlag.AlignLeft)
        self.no_roles_label.setVisible(not m.roles)

        _clear(self.events_layout)
        base_url = self.session.url
        for number, event in enumerate(m.events):
            if number:
                line = QFrame()
                line.setObjectName(f"{STEM}EventSeparator")
                line.setFrameShape(QFrame.Shape.HLine)
                line.setFrameShadow(QFrame.Shadow.Plain)
                _faint(line)
                self.events_layout.addWidget(line)
            self.events_layout.addWidget(EventCard(event, self.session, base_url))
        count = len(m.events)
        self.events_heading.setText(f"Latest events ({count})" if count else "Latest events")
        self.no_events.setVisible(not m.events)
        self.events_box.setVisible(bool(m.events))
        if m.loaded_project != self._shown_project:
            self._shown_project = m.loaded_project
            self.scroll_area.verticalScrollBar().setValue(0)  # a new project starts at the top

    # ------------------------------------------------------------------ for tests and tools

    def owner_rows(self) -> list[OwnerRow]:
        return _widgets(self.owners_layout, OwnerRow)

    def role_badges(self) -> list[Badge]:
        return _widgets(self.roles_layout, Badge)

    def event_cards(self) -> list[EventCard]:
        return _widgets(self.events_layout, EventCard)


def _role_badge(role: RoleItem) -> Badge:
    badge = Badge(role.text, "role")
    badge.setObjectName(f"{STEM}Role")
    badge.setToolTip(f"{role.name}: {role.meaning}")
    badge.setAccessibleName(f"Role {role.name}, {role.meaning}")
    return badge


def _clear(layout: QVBoxLayout) -> None:
    while layout.count():
        item = layout.takeAt(0)
        widget = item.widget() if item is not None else None
        if widget is not None:
            widget.hide()
            widget.deleteLater()


def _widgets(layout: QVBoxLayout, cls: type[Any]) -> list[Any]:
    out = []
    for index in range(layout.count()):
        item = layout.itemAt(index)
        widget = item.widget() if item is not None else None
        if isinstance(widget, cls):
            out.append(widget)
    return out
