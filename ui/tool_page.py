"""`ToolPage`: the frame of one tool: its title and purpose, and, when the connection cannot
serve it, why and what would make it work. The tool's own window, a `ToolContent`, goes in
`content`; it is built the first time the page is shown (so start-up imports none of them).

`WINDOWS` maps each tool of the registry (`app.registry.TOOL`) to a loader that imports its
`ToolContent` class when it is first needed. A content widget gets the session and makes its own
view-model (a `ToolViewModel`). The page gives every tool the same
keys: F5 refreshes, Ctrl+F goes to the filter of the table that has focus (or the first one).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QKeySequence, QShortcut, QShowEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.registry import TOOL, TOOLS_BY_KEY, Tool, camel
from app.viewmodels.tools import ToolModel
from ui.icons import icon
from ui.palette import quiet
from ui.tool_content import ToolContent

__all__ = ["WINDOWS", "ToolContent", "ToolPage", "content_class"]


# Each tool's window, imported the first time its page is shown (start-up imports none of them).


def _groups() -> type[ToolContent]:
    from ui.groups import GroupEditor

    return GroupEditor


def _users() -> type[ToolContent]:
    from ui.users import UserEditor

    return UserEditor


def _inactive_users() -> type[ToolContent]:
    from ui.inactive_users import InactiveUsersView

    return InactiveUsersView


def _project_dashboard() -> type[ToolContent]:
    from ui.dashboard import ProjectDashboard

    return ProjectDashboard


def _archived_features() -> type[ToolContent]:
    from ui.archive import ArchiveBrowser

    return ArchiveBrowser


def _context_usage() -> type[ToolContent]:
    from ui.context_usage import ContextUsageViewer

    return ContextUsageViewer


def _metrics_upload() -> type[ToolContent]:
    from ui.metrics_tool import MetricsTool

    return MetricsTool


# issue 36: the API tokens' and the personal access tokens' windows


def _api_tokens() -> type[ToolContent]:
    from ui.api_tokens import ApiTokensView

    return ApiTokensView


def _personal_tokens() -> type[ToolContent]:
    from ui.personal_tokens import PersonalTokensView

    return PersonalTokensView


# issue 36: the service accounts' window


def _service_accounts() -> type[ToolContent]:
    from ui.service_accounts import ServiceAccountsView

    return ServiceAccountsView


# issue 36: the roles' window


def _roles() -> type[ToolContent]:
    from ui.roles import RolesView

    return RolesView


# issue 36: the clean-up report's window


def _cleanup() -> type[ToolContent]:
    from ui.cleanup import CleanupView

    return CleanupView


# issue 36: the windows of project access and of who can do what where


def _project_access() -> type[ToolContent]:
    from ui.project_access import ProjectAccessView

    return ProjectAccessView


def _access_overview() -> type[ToolContent]:
    from ui.access_overview import AccessOverviewView

    return AccessOverviewView


# issue 37, slice 5: the Compare window


def _compare() -> type[ToolContent]:
    from ui.compare import CompareView

    return CompareView


# issue 38: login history


def _logins() -> type[ToolContent]:
    from ui.logins import LoginHistoryView

    return LoginHistoryView


# issue 38: the event log's window


def _events() -> type[ToolContent]:
    from ui.events import EventLogView

    return EventLogView


# issue 38: the banners' window


def _banners() -> type[ToolContent]:
    from ui.banners import BannersView

    return BannersView


#: each tool's window class, by the registry's `Tool`
WINDOWS: dict[Tool, Callable[[], type[ToolContent]]] = {
    TOOL.groups: _groups,
    TOOL.users: _users,
    TOOL.inactive_users: _inactive_users,
    TOOL.project_dashboard: _project_dashboard,
    TOOL.archived_features: _archived_features,
    TOOL.context_usage: _context_usage,
    TOOL.metrics_upload: _metrics_upload,
    # issue 36
    TOOL.api_tokens: _api_tokens,
    TOOL.personal_tokens: _personal_tokens,
    # issue 36: the service accounts' window
    TOOL.service_accounts: _service_accounts,
    # issue 36: the roles' window
    TOOL.roles: _roles,
    # issue 36: the clean-up report
    TOOL.cleanup: _cleanup,
    # issue 36: project access, who can do what where
    TOOL.project_access: _project_access,
    TOOL.access_overview: _access_overview,
    # issue 37, slice 5: the Compare window
    TOOL.compare: _compare,
    # issue 38: login history
    TOOL.logins: _logins,
    # issue 38: the event log's window
    TOOL.events: _events,
    # issue 38: the banners' window
    TOOL.banners: _banners,
}


def content_class(tool: Tool | str) -> type[ToolContent] | None:
    """The tool's `ToolContent` class (by its `Tool` or key), or None while it has no window."""
    loader = WINDOWS.get(TOOLS_BY_KEY[tool] if isinstance(tool, str) else tool)
    return loader() if loader is not None else None


class ToolPage(QWidget):
    #: the person wants to change the connection (from the "unavailable" banner)
    connections_requested = Signal()
    #: the content asks to show another tool with an item: (tool key, item)
    open_requested = Signal(str, object)

    def __init__(self, model: ToolModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        stem = camel(model.tool.key)
        self.setObjectName(f"{stem}Page")
        self.setAccessibleName(f"{model.tool.title} page")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 14, 16, 16)
        layout.setSpacing(8)

        self.title = QLabel(model.tool.title)
        self.title.setObjectName(f"{stem}Title")
        font = QFont(self.title.font())
        font.setPointSizeF(font.pointSizeF() * 1.35)
        font.setBold(True)
        self.title.setFont(font)
        layout.addWidget(self.title)
        self.description = QLabel(model.tool.description)
        self.description.setObjectName(f"{stem}Description")
        self.description.setWordWrap(True)
        layout.addWidget(self.description)

        self.banner = QFrame()
        self.banner.setObjectName(f"{stem}Unavailable")
        self.banner.setFrameShape(QFrame.Shape.StyledPanel)
        banner = QHBoxLayout(self.banner)
        banner.setContentsMargins(12, 10, 12, 10)
        self.banner_icon = QLabel()
        self.banner_icon.setPixmap(icon("warning").pixmap(24, 24))
        self.banner_icon.setAlignment(Qt.AlignmentFlag.AlignTop)
        banner.addWidget(self.banner_icon)
        self.reason = QLabel()
        self.reason.setObjectName(f"{stem}Reason")
        self.reason.setWordWrap(True)
        self.reason.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        banner.addWidget(self.reason, 1)
        self.connections_button = QPushButton("Connections…")
        self.connections_button.setObjectName(f"{stem}ConnectionsButton")
        self.connections_button.clicked.connect(self.connections_requested)
        banner.addWidget(self.connections_button, 0, Qt.AlignmentFlag.AlignTop)
        layout.addWidget(self.banner)

        self.note = QLabel()
        self.note.setObjectName(f"{stem}Note")
        self.note.setWordWrap(True)
        quiet(self.note)  # a remark, in the palette's quieter text colour
        layout.addWidget(self.note)

        #: the tool's own widgets live here, enabled only when the tool can be used
        self.content = QWidget()
        self.content.setObjectName(f"{stem}Content")
        self.content_layout = QVBoxLayout(self.content)
        self.content_layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.content, 1)
        #: the tool's window (None until the page is first shown)
        self.tool_content: ToolContent | None = None

        refresh = QShortcut(QKeySequence(QKeySequence.StandardKey.Refresh), self)
        refresh.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        refresh.activated.connect(self.refresh)
        find = QShortcut(QKeySequence(QKeySequence.StandardKey.Find), self)
        find.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        find.activated.connect(self.focus_filter)

        model.availability_changed.connect(self.on_model_availability_changed)
        self.on_model_availability_changed()

    def on_model_availability_changed(self) -> None:
        m = self.model
        reason = m.reason
        self.banner.setVisible(bool(reason))
        self.reason.setText(reason)
        self.connections_button.setVisible(m.session.ready or m.session.state == "failed")
        self.note.setVisible(bool(m.note) and not reason)
        self.note.setText(m.note[:1].upper() + m.note[1:] + "." if m.note else "")
        usable = self.tool_content is not None and self.tool_content.usable_when_unavailable
        self.content.setEnabled(m.available or usable)

    # ------------------------------------------------------------------ the content

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.ensure_content()

    def ensure_content(self) -> ToolContent | None:
        """Build the tool's window if it is not yet built."""
        if self.tool_content is None:
            cls = content_class(self.model.tool)
            if cls is None:
                return None
            self.tool_content = cls(self.model.session)
            self.tool_content.open_requested.connect(self.open_requested)
            self.content_layout.addWidget(self.tool_content)
            self.on_model_availability_changed()
        return self.tool_content

    def open_item(self, item: Any) -> None:
        """Show `item` in the tool (built now if need be)."""
        content = self.ensure_content()
        if content is not None:
            content.open_item(item)

    def refresh(self) -> None:
        content = self.tool_content
        if content is not None and (self.model.available or content.usable_when_unavailable):
            content.refresh()

    def focus_filter(self) -> None:
        from ui.table import DataTable  # not at start-up

        if self.tool_content is not None and self.tool_content.focus_filter():
            return
        tables = [t for t in self.content.findChildren(DataTable) if t.isVisible()]
        focus = self.focusWidget()
        for table in tables:
            if focus is not None and table.isAncestorOf(focus):
                table.focus_filter()
                return
        if tables:
            tables[0].focus_filter()

    def close_page(self) -> None:
        if self.tool_content is not None:
            self.tool_content.close_content()
        self.model.close()
