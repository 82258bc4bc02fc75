"""The main window: a sidebar of tools grouped by task, their pages, the status bar; and `run()`,
the GUI's entry point.

`run()` shows the window at once; the session then opens the last connection, or on a first
start the embedded sandbox with demo data, behind it. The window shows what the session and the
view-models say; it never talks HTTP itself.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Sequence
from functools import cached_property, partial
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QObject, QPoint, Signal
from PySide6.QtGui import QAction, QFont, QIcon, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QApplication,
    QLabel,
    QMainWindow,
    QProgressBar,
    QSplitter,
    QStackedWidget,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
    QWidget,
)

from app import __version__, resources, startup
from app.registry import GROUPS, TOKEN_LABELS, TOOLS, TOOLS_BY_KEY, Tool, camel
from app.text import plural
from ui import excepthook
from ui.icons import icon, icon_path
from ui.palette import use_readable_palette
from ui.settings import window_settings

# What the frame does not need is imported once it is on screen (see `run`).
if TYPE_CHECKING:
    from PySide6.QtGui import QCloseEvent

    from app.viewmodels.compare import SnapshotSaver  # issue 37, slice 5
    from app.viewmodels.history import HistoryModel
    from app.viewmodels.session import SandboxFactory, Session
    from ui.confirmation import CloseGuard
    from ui.history import HistoryPage
    from ui.tool_content import ToolContent
    from ui.tool_page import ToolPage

#: `Qt.ItemDataRole.UserRole`, as the int the item API takes. The frame names nothing of the `Qt`
#: namespace: touching it makes PySide6 create its 93 Python enums at once, 20 to 25 ms (a third
#: of what the frame costs over a bare window, `bench/gui_startup.py`), which the pages pay
#: once the frame is on screen. Enum-typed properties are set by name (`setProperty`) instead.
PAGE_ROLE = 256
OVERVIEW = "overview"
HISTORY = "history"
#: how long the pages other than the overview wait for its first data before they are built
#: anyway (a connection still starting, or failing): the History entry's count needs its page
PAGES_AT_THE_LATEST_MS = 3000
#: how long after the overview's first data the other pages are built: a few frames, so that
#: the data is painted before the GUI thread is busy with them (a turn of the event loop is
#: not enough: the timer can come before the paint)
PAGES_AFTER_DATA_MS = 50


class MainWindow(QMainWindow):
    """Built in three steps so that it shows at once and its first data comes soon: the frame
    (sidebar, menus, status bar) needs only Qt; `bind(session)` then adds the overview, which
    loads the client and its models; once the overview shows its first data, `build_pages` adds
    the other pages. Given a session, the constructor does the first two."""

    #: the pages other than the overview are built (`build_pages`: the start is over)
    pages_built = Signal()

    def __init__(self, session: Session | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._session: Session | None = None
        #: the session's connection the overview last loaded from (compared, never used)
        self._overview_of: object | None = None
        self.setObjectName("mainWindow")
        self.setWindowTitle("flagdesk")
        self.resize(1000, 640)
        #: tools opened in windows of their own
        self.tool_windows: set[ToolWindow] = set()
        #: the pages other than the overview, built once the first data is shown
        #: (`build_pages`): `history`, `history_model` and `tool_pages` build them when asked
        self._tool_pages: dict[str, ToolPage] = {}
        self._history: HistoryPage | None = None
        self._history_model: HistoryModel | None = None
        self._closed = False
        #: quitting was asked for and confirmed (or the program is told to end), and the
        #: question asked before unsaved changes are lost, while it is open

        # ---- the pages: a placeholder until bind()
        self.pages = QStackedWidget()
        self.pages.setObjectName("pages")
        self.starting_page = QLabel("Starting…")
        self.starting_page.setObjectName("startingPage")
        self.starting_page.setProperty("alignment", "AlignCenter")
        self.pages.addWidget(self.starting_page)

        # ---- the sidebar
        self.sidebar = QTreeWidget()
        self.sidebar.setObjectName("sidebar")
        self.sidebar.setAccessibleName("Tools")
        self.sidebar.setHeaderHidden(True)
        self.sidebar.setRootIsDecorated(False)
        self.sidebar.setIndentation(12)
        self.sidebar.setMinimumWidth(170)
        self.sidebar.setProperty("contextMenuPolicy", "ActionsContextMenu")
        self.items: dict[str, QTreeWidgetItem] = {}
        overview_item = QTreeWidgetItem(["Overview"])
        overview_item.setData(0, PAGE_ROLE, OVERVIEW)
        overview_item.setIcon(0, icon("overview"))
        self.sidebar.addTopLevelItem(overview_item)
        self.items[OVERVIEW] = overview_item
        self.history_item = QTreeWidgetItem(["History"])
        self.history_item.setData(0, PAGE_ROLE, HISTORY)
        self.history_item.setIcon(0, icon("history"))
        self.history_item.setToolTip(0, "Every change flagdesk made on this connection (Ctrl+H)")
        self.sidebar.addTopLevelItem(self.history_item)
        self.items[HISTORY] = self.history_item
        heading_font = QFont(self.sidebar.font())
        heading_font.setBold(True)
        #: the groups' headings: made not selectable by bind(), the frame names no `Qt` flag
        self.headings: list[QTreeWidgetItem] = []
        for group in GROUPS:
            heading = QTreeWidgetItem([group])
            heading.setFont(0, heading_font)
            self.headings.append(heading)
            self.sidebar.addTopLevelItem(heading)
            for tool in (t for t in TOOLS if t.group == group):
                item = QTreeWidgetItem([tool.title])
                item.setData(0, PAGE_ROLE, tool.key)
                item.setIcon(0, icon(tool.icon))
                heading.addChild(item)
                self.items[tool.key] = item
            heading.setExpanded(True)
        self.sidebar.currentItemChanged.connect(self.on_sidebar_current_item_changed)

        self.splitter = QSplitter()
        self.splitter.setObjectName("mainSplitter")
        self.splitter.addWidget(self.sidebar)
        self.splitter.addWidget(self.pages)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([200, 800])
        self.setCentralWidget(self.splitter)

        self._build_menus()
        self._build_status_bar()
        self._build_outside_shortcuts()
        self.sidebar.setCurrentItem(overview_item)
        self.restore_layout()
        if session is not None:
            self.bind(session)

    def bind(self, session: Session) -> None:
        """Add the overview for `session` and follow it; the other pages come once the
        overview has shown its first data (`build_pages`), or as soon as one is asked for."""
        from PySide6.QtCore import Qt, QTimer

        from app.viewmodels.overview import OverviewModel
        from ui.overview_page import OverviewPage

        if self._session is not None:
            raise RuntimeError("a main window binds one session")
        self._session = session
        for heading in self.headings:
            heading.setFlags(Qt.ItemFlag.ItemIsEnabled)  # a heading, not a choice
        if self.sidebar.currentItem() in self.headings:  # picked while the pages were loading
            self.sidebar.setCurrentItem(self.items[OVERVIEW])
        self.overview_model = OverviewModel(
            session.opened_client, source=session.name, reconnect=self.on_reconnect_triggered
        )
        self.overview = OverviewPage(self.overview_model)
        # issue 38: the instance's statistics and maintenance switch, under the server's name
        from app.viewmodels.instance import InstanceModel
        from ui.instance_panel import InstancePanel

        self.instance_model = InstanceModel(session, self)
        self.instance_panel = InstancePanel(self.instance_model)
        self.overview.add_instance_panel(self.instance_panel)
        self.instance_model.load()  # now if the connection is ready, else once it is
        self.overview_model.loaded.connect(self.instance_model.load)  # and with the Overview
        self.pages.addWidget(self.overview)
        self.pages.removeWidget(self.starting_page)
        self.starting_page.deleteLater()

        session.state_changed.connect(self.on_session_state_changed)
        session.connection_changed.connect(self.on_session_connection_changed)
        session.connection_opened.connect(self.on_session_connection_opened)
        session.activity_changed.connect(self.on_session_activity_changed)
        session.error_reported.connect(self.on_session_error_reported)
        # the other pages (a tenth of a second of imports and widgets) wait until the first
        # data is on screen: built before it, they held the GUI thread while the connection's
        # first requests were ready to go (bench/gui_startup.py). A moment after it, so that the
        # data is painted first; or after a while with no data (a slow or failed connection)
        self.overview_model.loaded.connect(self._build_pages_soon)
        QTimer.singleShot(PAGES_AT_THE_LATEST_MS, self._build_pages_when_due)

        for action in self._session_actions:
            action.setEnabled(True)
        self.save_snapshot_action.setEnabled(True)  # issue 37, slice 5
        self.connection_button.setEnabled(True)
        self.on_sidebar_current_item_changed(self.sidebar.currentItem(), None)
        self.on_session_state_changed()
        self.on_session_error_reported(session.last_error)

    def _build_pages_soon(self) -> None:
        from PySide6.QtCore import QTimer

        QTimer.singleShot(PAGES_AFTER_DATA_MS, self._build_pages_when_due)

    def _build_pages_when_due(self) -> None:
        if not self._closed:  # a window closed meanwhile builds nothing more
            self.build_pages()

    def build_pages(self) -> None:
        """Build the pages other than the overview (once; `bind` schedules it)."""
        if self._history is not None or self._session is None:
            return
        from app.viewmodels.history import HistoryModel
        from app.viewmodels.tools import ToolModel
        from ui.history import HistoryPage
        from ui.tool_page import ToolPage

        session = self._session
        self.overview_model.loaded.disconnect(self._build_pages_soon)
        self._history_model = HistoryModel(session, self)
        self._history = HistoryPage(self._history_model)
        self._history.open_requested.connect(self.on_page_open_requested)
        self.pages.addWidget(self._history)
        self._history_model.entries_changed.connect(self.on_history_entries_changed)
        self._history_model.refresh()  # the changes in doubt are counted from the start
        for tool in TOOLS:
            page = ToolPage(ToolModel(tool, session))
            page.connections_requested.connect(self.on_connections_triggered)
            page.open_requested.connect(self.on_page_open_requested)
            page.model.availability_changed.connect(self.on_tool_availability_changed)
            self._tool_pages[tool.key] = page
            self.pages.addWidget(page)
        self.on_tool_availability_changed()
        self.pages_built.emit()

    @property
    def history(self) -> HistoryPage:
        """The History page (built now if it is not yet)."""
        self.build_pages()
        if self._history is None:
            raise RuntimeError("the main window has no session yet")
        return self._history

    @property
    def history_model(self) -> HistoryModel:
        self.build_pages()
        if self._history_model is None:
            raise RuntimeError("the main window has no session yet")
        return self._history_model

    @property
    def tool_pages(self) -> dict[str, ToolPage]:
        """The tools' pages by key (built now if they are not yet; none before `bind`)."""
        self.build_pages()
        return self._tool_pages

    @property
    def bound(self) -> bool:
        return self._session is not None

    @property
    def session(self) -> Session:
        if self._session is None:
            raise RuntimeError("the main window has no session yet")
        return self._session

    # ------------------------------------------------------------------ building

    def _action(self, name: str, text: str, shortcut: str | None = None) -> QAction:
        action = QAction(text, self)
        action.setObjectName(name)
        if shortcut:  # as a property: setShortcut's overloads name `Qt` (see PAGE_ROLE)
            action.setProperty("shortcut", QKeySequence.fromString(shortcut))
        return action

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        file_menu.setObjectName("fileMenu")
        self.connections_action = self._action("connectionsAction", "&Connections…", "Ctrl+K")
        self.connections_action.setIcon(icon("connection"))
        self.connections_action.triggered.connect(self.on_connections_triggered)
        self.sandbox_action = self._action("sandboxAction", "Use the local &sandbox")
        self.sandbox_action.triggered.connect(self.on_sandbox_triggered)
        self.reconnect_action = self._action("reconnectAction", "&Reconnect", "Ctrl+R")
        self.reconnect_action.triggered.connect(self.on_reconnect_triggered)
        quit_action = self._action("quitAction", "&Quit", "Ctrl+Q")
        quit_action.triggered.connect(self.close)
        for action in (self.connections_action, self.sandbox_action, self.reconnect_action):
            file_menu.addAction(action)
        # issue 37, slice 5: File > Save snapshot… (the connected server's, to a file)
        self.save_snapshot_action = self._action("saveSnapshotAction", "Save s&napshot…")
        self.save_snapshot_action.setToolTip(
            "Write the connected server's configuration to a snapshot file, to compare later"
        )
        self.save_snapshot_action.setEnabled(False)  # once a session is bound
        self.save_snapshot_action.triggered.connect(self.on_save_snapshot_triggered)
        file_menu.addAction(self.save_snapshot_action)
        file_menu.addSeparator()
        file_menu.addAction(quit_action)

        tools_menu = bar.addMenu("&Tools")
        tools_menu.setObjectName("toolsMenu")
        self.tool_actions: dict[str, QAction] = {}
        for number, tool in enumerate(TOOLS, start=1):
            # Ctrl+1 to Ctrl+9: the tenth tool on has none ("Ctrl+10" is no key)
            shortcut = f"Ctrl+{number}" if number <= 9 else None
            action = self._action(f"{camel(tool.key)}Action", tool.title, shortcut)
            action.setIcon(icon(tool.icon))
            action.triggered.connect(partial(self.show_page, tool.key))
            tools_menu.addAction(action)
            self.tool_actions[tool.key] = action
        tools_menu.addSeparator()
        self.history_action = self._action("historyAction", "&History", "Ctrl+H")
        self.history_action.setIcon(icon("history"))
        self.history_action.triggered.connect(partial(self.show_page, HISTORY))
        tools_menu.addAction(self.history_action)
        self.new_window_action = self._action(
            "newWindowAction", "Open in a &new window", "Ctrl+Shift+N"
        )
        self.new_window_action.triggered.connect(self.on_new_window_triggered)
        tools_menu.addAction(self.new_window_action)
        self.sidebar.addAction(self.new_window_action)

        help_menu = bar.addMenu("&Help")
        help_menu.setObjectName("helpMenu")
        logs_action = self._action("logFolderAction", "Open the &log folder")
        logs_action.triggered.connect(self.on_log_folder_triggered)
        about_action = self._action("aboutAction", "&About flagdesk")
        about_action.triggered.connect(self.on_about_triggered)
        help_menu.addAction(logs_action)
        help_menu.addAction(about_action)
        #: what needs the session: disabled until bind()
        self._session_actions = [
            self.connections_action,
            self.sandbox_action,
            self.reconnect_action,
            self.new_window_action,
            about_action,
        ]
        for action in self._session_actions:
            action.setEnabled(False)

    def _build_status_bar(self) -> None:
        status = self.statusBar()
        status.setObjectName("statusBar")
        self.connection_button = QToolButton()
        self.connection_button.setObjectName("connectionButton")
        self.connection_button.setAutoRaise(True)
        self.connection_button.setToolTip("Change the connection (Ctrl+K)")
        self.connection_button.setIcon(icon("connection"))
        self.connection_button.setProperty("toolButtonStyle", "ToolButtonTextBesideIcon")
        self.connection_button.clicked.connect(self.on_connections_triggered)
        self.server_label = QLabel()
        self.server_label.setObjectName("serverLabel")
        self.token_label = QLabel()
        self.token_label.setObjectName("tokenLabel")
        self.activity_bar = QProgressBar()
        self.activity_bar.setObjectName("activityBar")
        self.activity_bar.setRange(0, 0)
        self.activity_bar.setTextVisible(False)
        self.activity_bar.setFixedWidth(60)
        self.activity_bar.setAccessibleName("Requests in flight")
        self.activity_label = QLabel()
        self.activity_label.setObjectName("activityLabel")
        self.error_button = QToolButton()
        self.error_button.setObjectName("lastErrorButton")
        self.error_button.setAutoRaise(True)
        self.error_button.setIcon(icon("warning"))
        self.error_button.setProperty("toolButtonStyle", "ToolButtonTextBesideIcon")
        self.error_button.setToolTip("The last error: click for details")
        self.error_button.clicked.connect(self.on_last_error_clicked)
        status.addWidget(self.connection_button)
        status.addWidget(self.server_label)
        status.addWidget(self.token_label)
        # issue 38: while the server is in maintenance, the status bar says so
        self.maintenance_label = QLabel()
        self.maintenance_label.setObjectName("maintenanceLabel")
        self.maintenance_label.hide()
        status.addWidget(self.maintenance_label)
        status.addWidget(self.error_button, 1)
        status.addPermanentWidget(self.activity_label)
        status.addPermanentWidget(self.activity_bar)
        self.on_session_activity_changed(0)
        self.on_session_error_reported("")
        self.connection_button.setText("Starting…")
        self.connection_button.setEnabled(False)

    def _build_outside_shortcuts(self) -> None:
        """F5 and Ctrl+F wherever the focus is in the window: inside a page its own shortcuts
        answer; on the sidebar (a tool picked with the mouse) and the status bar these pass
        them to the page shown. Their contexts do not overlap, so no key is ambiguous."""
        keys = (
            (QKeySequence.StandardKey.Refresh, self.on_refresh_shortcut_activated),
            (QKeySequence.StandardKey.Find, self.on_find_shortcut_activated),
        )
        for owner in (self.sidebar, self.statusBar()):
            for key, slot in keys:
                shortcut = QShortcut(QKeySequence(key), owner)
                shortcut.setProperty("context", "WidgetWithChildrenShortcut")
                shortcut.activated.connect(slot)

    def on_refresh_shortcut_activated(self) -> None:
        if not self.bound:
            return
        key = self.current_key
        page = self.tool_pages.get(key)
        if page is not None:
            page.refresh()
        elif key == HISTORY:
            self.history.refresh()
        else:
            self.overview_model.retry()

    def on_find_shortcut_activated(self) -> None:
        key = self.current_key
        page = self.tool_pages.get(key)
        if page is not None:
            page.focus_filter()
        elif key == HISTORY:
            self.history.focus_filter()

    # ------------------------------------------------------------------ navigation

    def show_page(self, key: str) -> None:
        item = self.items[key]
        self.sidebar.setCurrentItem(item)

    @property
    def current_key(self) -> str:
        item = self.sidebar.currentItem()
        key = item.data(0, PAGE_ROLE) if item is not None else None
        return str(key) if key else OVERVIEW

    def on_sidebar_current_item_changed(
        self, current: QTreeWidgetItem | None, _previous: QTreeWidgetItem | None
    ) -> None:
        key = current.data(0, PAGE_ROLE) if current is not None else None
        if not key or not self.bound:
            return
        page: QWidget = (
            self.overview
            if key == OVERVIEW
            else self.history
            if key == HISTORY
            else self.tool_pages[str(key)]
        )
        left = self.pages.currentWidget()
        self.pages.setCurrentWidget(page)
        self.new_window_action.setEnabled(str(key) in TOOLS_BY_KEY)
        if left is not None and left is not page:
            # a window's error belongs to it: it leaves the status bar with the window
            owner = self.session.error_owner
            if isinstance(owner, QObject) and _inside(owner, left):
                self.session.withdraw_error(owner)

    def on_new_window_triggered(self) -> None:
        key = self.current_key
        if key in TOOLS_BY_KEY:
            self.open_tool_window(TOOLS_BY_KEY[key])

    def open_tool_window(self, tool: Tool) -> ToolWindow:
        window = ToolWindow(tool, self.session)
        # a second window of the same tool opens beside the first, not on top of it
        same = [w for w in self.tool_windows if w.tool == tool and w.isVisible()]
        if same:
            window.move(same[-1].pos() + QPoint(32, 32))
        window.page.connections_requested.connect(self.on_connections_triggered)
        window.page.open_requested.connect(self.on_page_open_requested)
        self.tool_windows.add(window)
        window.destroyed.connect(lambda *_: self.tool_windows.discard(window))
        window.show()
        return window

    def on_page_open_requested(self, key: str, item: object) -> None:
        """A tool asks to show another one with an item (an inactive user in the user editor)."""
        self.show_page(key)
        self.tool_pages[key].open_item(item)
        self.raise_()
        self.activateWindow()

    # ------------------------------------------------------------------ the session

    def on_session_state_changed(self) -> None:
        from app.viewmodels.session import CONNECTING, FAILED, READY, SANDBOX_HELP

        s = self.session
        caps = s.capabilities
        self.connection_button.setText(s.name)
        self.connection_button.setAccessibleName(f"Connection: {s.name}")
        if caps is not None:
            self.server_label.setText(caps.server_label)
            label = TOKEN_LABELS[caps.token_kind]
            self.token_label.setText(label[:1].upper() + label[1:])
            self.token_label.setToolTip(caps.token_label)
        else:
            self.server_label.setText("—" if s.state != CONNECTING else s.message)
            self.token_label.setText("")
        self.setWindowTitle(f"flagdesk — {s.name}")
        self.reconnect_action.setEnabled(s.state in (READY, FAILED))
        self.maintenance_label.setText("In maintenance: the server refuses every change"
                                       if s.maintenance else "")  # fmt: skip
        self.maintenance_label.setToolTip(
            "Maintenance mode is on: every change is refused until it is switched off (the "
            "Overview)" if s.maintenance else "")  # fmt: skip
        self.maintenance_label.setVisible(bool(s.maintenance))
        if s.state == CONNECTING:
            self.overview_model.reset(self._source(), s.message, s.url)
            self.overview.set_hint(SANDBOX_HELP if s.is_sandbox else "")

    def on_session_connection_opened(self) -> None:
        """The overview reads nothing the probe finds: it loads as the connection opens, its
        requests beside the probe's, and its first data comes a round trip sooner than once
        the probe has ended (`bench/gui_startup.py`)."""
        self._load_overview()

    def on_session_connection_changed(self) -> None:
        from app.viewmodels.session import CONNECTING, READY

        s = self.session
        if s.state == CONNECTING:
            return  # on_session_state_changed shows it
        model = self.overview_model
        if s.state == READY and self._overview_of is s.connection and not model.error:
            return  # loading, or loaded, since the connection opened
        self._load_overview()

    def _load_overview(self) -> None:
        from app.viewmodels.session import SANDBOX_HELP

        s = self.session
        self._overview_of = s.connection
        self.overview_model.reset(self._source(), url=s.url)
        self.overview.set_hint(SANDBOX_HELP if s.is_sandbox else "")
        self.overview_model.load()

    def _source(self) -> str:
        from app.viewmodels.session import SANDBOX_SOURCE

        # the embedded sandbox says it has demo data; any other connection ("Local sandbox 2")
        # is named
        return SANDBOX_SOURCE if self.session.sandbox_number == 1 else self.session.name

    def on_tool_availability_changed(self) -> None:
        for key, page in self._tool_pages.items():
            item = self.items[key]
            available = page.model.available
            font = item.font(0)
            font.setItalic(not available)
            item.setFont(0, font)
            item.setToolTip(0, page.model.reason or page.model.tool.description)

    def on_session_activity_changed(self, in_flight: int) -> None:
        self.activity_bar.setVisible(in_flight > 0)
        self.activity_label.setVisible(in_flight > 0)
        self.activity_label.setText(plural(in_flight, "request"))

    def on_history_entries_changed(self) -> None:
        """The sidebar's History entry counts the changes in doubt, and says what to do."""
        doubt = len(self.history_model.in_doubt)
        item = self.history_item
        item.setText(0, f"History ({doubt} in doubt)" if doubt else "History")
        item.setIcon(0, icon("warning" if doubt else "history"))
        item.setToolTip(
            0,
            f"{plural(doubt, 'change')} in doubt: open History to check "
            f"{'it' if doubt == 1 else 'them'} against the server (Ctrl+H)"
            if doubt
            else "Every change flagdesk made on this connection (Ctrl+H)",
        )

    def on_session_error_reported(self, text: str) -> None:
        owner = self.session.error_owner if self.bound else None
        if text and isinstance(owner, QObject) and self._on_a_hidden_page(owner):
            # a window not on screen loaded again (another window changed what it shows) and
            # failed: the error is its own, on its page when the person goes there; the status
            # bar says what the windows in view report
            self.session.withdraw_error(owner)
            return
        self.error_button.setVisible(bool(text))
        if not text:
            self.error_button.setText("")
            return
        from PySide6.QtCore import Qt

        metrics = self.error_button.fontMetrics()
        first = text.splitlines()[0]
        self.error_button.setText(metrics.elidedText(first, Qt.TextElideMode.ElideRight, 420))

    def _on_a_hidden_page(self, owner: QObject) -> bool:
        shown = self.pages.currentWidget()
        return any(_inside(owner, page) for page in self._tool_pages.values() if page is not shown)

    def on_last_error_clicked(self) -> None:
        from PySide6.QtCore import Qt
        from PySide6.QtWidgets import QMessageBox

        box = QMessageBox(self)
        box.setObjectName("lastErrorBox")
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle("flagdesk: the last error")
        box.setText(self.session.last_error)
        box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()

    # ------------------------------------------------------------------ actions

    def on_connections_triggered(self) -> None:
        from PySide6.QtCore import Qt

        from ui.connection_dialog import ConnectionDialog

        dialog = ConnectionDialog(self.session, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()

    def on_sandbox_triggered(self) -> None:
        self.session.open_sandbox()

    # issue 37, slice 5: File > Save snapshot…

    @cached_property
    def snapshot_saver(self) -> SnapshotSaver:
        """Reads the connected server and writes its snapshot (made when first used)."""
        from app.viewmodels.compare import SnapshotSaver

        saver = SnapshotSaver(self.session, self)
        saver.status_changed.connect(self.on_snapshot_saver_status_changed)
        saver.saved.connect(self.on_snapshot_saver_saved)
        # an error shown later takes the status bar's place: the message goes
        self.session.error_reported.connect(self.on_snapshot_saver_error_reported)
        return saver

    def on_save_snapshot_triggered(self) -> None:
        from ui.table import ask_export_path

        path = ask_export_path(self, "Save snapshot", self.snapshot_saver.default_name(),
                               "Snapshots (*.json);;All files (*)")  # fmt: skip
        if path:
            self.save_snapshot(path)

    def save_snapshot(self, path: str) -> None:
        """Read the connected server (off the GUI thread) and write its snapshot to `path`;
        where it went, or why not, in the status bar."""
        self.snapshot_saver.save(path)

    def on_snapshot_saver_status_changed(self, text: str) -> None:
        """The read's progress while it runs; gone with it (a saved file's message stays)."""
        if text:
            self.statusBar().showMessage(text)
        elif self.statusBar().currentMessage().startswith("Reading "):
            self.statusBar().clearMessage()

    def on_snapshot_saver_error_reported(self, text: str) -> None:
        if text:
            self.statusBar().clearMessage()

    def on_snapshot_saver_saved(self, text: str) -> None:
        self.statusBar().showMessage(text, 15_000)

    def on_reconnect_triggered(self) -> None:
        self.session.retry()

    def on_log_folder_triggered(self) -> None:
        from PySide6.QtCore import QUrl
        from PySide6.QtGui import QDesktopServices

        from app.logs import log_dir

        QDesktopServices.openUrl(QUrl.fromLocalFile(str(log_dir())))

    def on_about_triggered(self) -> None:
        from PySide6.QtCore import Qt

        from ui.about import AboutDialog

        dialog = AboutDialog(self.session, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()

    # ------------------------------------------------------------------ layout memory

    def restore_layout(self) -> None:
        settings = window_settings()
        geometry = settings.value("main/geometry")
        if isinstance(geometry, QByteArray):
            self.restoreGeometry(geometry)
        splitter = settings.value("main/splitter")
        if isinstance(splitter, QByteArray):
            self.splitter.restoreState(splitter)
        page = settings.value("main/page")
        if isinstance(page, str) and page in self.items:
            self.show_page(page)

    def save_layout(self) -> None:
        settings = window_settings()
        settings.setValue("main/geometry", self.saveGeometry())
        settings.setValue("main/splitter", self.splitter.saveState())
        settings.setValue("main/page", self.current_key)
        settings.sync()

    # ------------------------------------------------------------------ quitting

    def unsaved_changes(self) -> list[tuple[str, QWidget]]:
        """What quitting now would lose: each window's sentence, with the page or the tool's
        window of its own that holds it."""
        holders: list[tuple[ToolContent | None, QWidget]] = [
            (page.tool_content, page) for page in self._tool_pages.values()
        ]
        holders += [(window.page.tool_content, window) for window in self.tool_windows]
        said = ((content.unsaved_changes() if content is not None else "", holder)
                for content, holder in holders)  # fmt: skip
        return [(text, holder) for text, holder in said if text]

    @cached_property
    def _quit(self) -> CloseGuard:
        from ui.confirmation import CloseGuard  # not before the frame: it names Qt's enums

        return CloseGuard(self, "Quit flagdesk and lose the unsaved changes?", "&Discard and quit")

    def close_without_asking(self) -> None:
        """Close even with unsaved changes (the program is told to end: a signal)."""
        self._quit.close_without_asking()

    def _back_to(self, holder: QWidget) -> None:
        """Back to the unsaved changes: their page, or their window."""
        key = next((k for k, page in self._tool_pages.items() if page is holder), None)
        if key is not None:
            self.show_page(key)
        elif holder is not self:
            holder.raise_()
            holder.activateWindow()

    def closeEvent(self, event: QCloseEvent) -> None:
        lost = self.unsaved_changes()
        if self._quit.stays([text for text, _ in lost],
                            partial(self._back_to, lost[0][1]) if lost else None):  # fmt: skip
            event.ignore()
            return
        self._closed = True
        self.save_layout()
        for window in list(self.tool_windows):
            window.close_without_asking()  # what it held was asked about above
        if self.bound:
            self.overview.close_page()
        for page in self._tool_pages.values():
            page.close_page()
        super().closeEvent(event)


def _inside(obj: QObject | None, ancestor: QObject) -> bool:
    """Whether `obj` is `ancestor` or one of its descendants."""
    while obj is not None:
        if obj is ancestor:
            return True
        obj = obj.parent()
    return False


class ToolWindow(QMainWindow):
    """One tool in a window of its own (two projects' dashboards side by side, say). Its size
    and place are remembered per tool."""

    def __init__(self, tool: Tool, session: Session, parent: QWidget | None = None) -> None:
        from PySide6.QtCore import Qt

        from app.viewmodels.tools import ToolModel
        from ui.tool_page import ToolPage

        super().__init__(parent)
        self.tool = tool
        self.setObjectName(f"{camel(tool.key)}Window")
        self.setWindowTitle(f"{tool.title} — flagdesk")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.page = ToolPage(ToolModel(tool, session))
        self.setCentralWidget(self.page)
        content = self.page.ensure_content()
        if content is not None:
            content.title_changed.connect(self.on_content_title_changed)
        self.resize(820, 560)
        geometry = window_settings().value(self._settings_key)
        if isinstance(geometry, QByteArray):
            self.restoreGeometry(geometry)

    @property
    def _settings_key(self) -> str:
        return f"tools/{self.tool.key}/geometry"

    def on_content_title_changed(self, title: str) -> None:
        """Two dashboards side by side say which project each shows."""
        parts = [title, self.tool.title, "flagdesk"] if title else [self.tool.title, "flagdesk"]
        self.setWindowTitle(" — ".join(parts))

    @cached_property
    def _close(self) -> CloseGuard:
        from ui.confirmation import CloseGuard

        return CloseGuard(self, "Close the window and lose the unsaved changes?",
                          "&Discard and close")  # fmt: skip

    def close_without_asking(self) -> None:
        self._close.close_without_asking()

    def closeEvent(self, event: QCloseEvent) -> None:
        content = self.page.tool_content
        lost = content.unsaved_changes() if content is not None else ""
        if self._close.stays([lost] if lost else []):
            event.ignore()
            return
        settings = window_settings()
        settings.setValue(self._settings_key, self.saveGeometry())
        settings.sync()
        self.page.close_page()
        super().closeEvent(event)


# ---------------------------------------------------------------------- the application


async def _main(app: QApplication, window: MainWindow, session: Session) -> None:
    import asyncio
    import signal  # here, not before the frame: it creates three Python enums

    closed = asyncio.Event()
    app.lastWindowClosed.connect(closed.set)
    # Ctrl+C in the terminal and a plain `kill` end the program the same way as closing the
    # window, so the sandbox child is stopped rather than left running
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signum, closed.set)
    # connect first, so the sandbox (a process of its own) starts while the pages are built
    session.open_last()
    await asyncio.sleep(0)

    # the start (the collector off since `app.cli.run_gui`) ends once every page is built, after
    # the first data: what it made lives as long as the window
    window.pages_built.connect(startup.start_made)
    window.bind(session)
    try:
        await closed.wait()
    finally:
        startup.start_made()  # (closed before the pages were built)
        for signum in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.remove_signal_handler(signum)
        window.close_without_asking()  # closed already, or a signal ends the program
        await session.aclose()


def run(
    argv: Sequence[str] | None = None,
    *,
    verbose: bool = False,
    sandbox_factory: SandboxFactory | None = None,
) -> int:
    """Open the main window; return when it is closed. With the GUI's embedded sandbox, or what
    `sandbox_factory` makes: this is where the GUI is wired together (see "The composition root"
    in docs/ARCHITECTURE.md).

    The window's frame is shown before anything heavy is imported (the client, pydantic models,
    keyring, qasync): the pages are added once it is on screen (`bench/gui_startup.py` measures
    it)."""
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(list(argv or sys.argv))
    app.setApplicationName("flagdesk")
    app.setApplicationVersion(__version__)
    app.setDesktopFileName(resources.APP_ID)  # Wayland finds the launcher entry's icon by it
    app.setWindowIcon(QIcon(str(icon_path("flagdesk"))))
    app.setQuitOnLastWindowClosed(False)  # _main ends the loop once the window is closed
    use_readable_palette(app)  # the desktop's colours, every text at 4.5:1 or more
    startup.tune_interpreter()
    previous_hook = excepthook.install()
    window = MainWindow()
    window.show()
    app.processEvents()  # on screen now; the rest loads behind it
    from sandbox.process import EarlySandbox, embedded_sandbox, local_sandbox

    if isinstance(sandbox_factory, EarlySandbox):
        sandbox_factory.launch()  # it boots while the session and the pages are imported

    import asyncio

    from app.viewmodels.session import Session

    session = Session(sandbox_factory=sandbox_factory or embedded_sandbox,
                      more_sandboxes=local_sandbox)  # fmt: skip
    try:
        session.prelaunch()  # the embedded sandbox boots while the rest loads
        if isinstance(sandbox_factory, EarlySandbox):
            sandbox_factory.release()  # not taken: the last connection was a server
        from app.logs import setup_logging

        setup_logging(verbose)
        import qasync

        loop = qasync.QEventLoop(app)
        asyncio.set_event_loop(loop)
        with loop:
            loop.run_until_complete(_main(app, window, session))
        return 0
    finally:
        session.stop_sandbox()
        asyncio.set_event_loop(None)
        sys.excepthook = previous_hook
        from app.logs import reset_logging

        reset_logging()
