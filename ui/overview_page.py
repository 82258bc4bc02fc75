"""The overview page (bound to `OverviewModel`): the connection's server, version, number of
users and projects, with loading, error (Retry) and loaded states; under them the instance's
statistics and maintenance switch (`ui.instance_panel`, added by the main window). Shows; never
fetches."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QStackedWidget,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.viewmodels.overview import OverviewModel

#: pixels added to a column's content width
COLUMN_PADDING = 24


def _label(name: str, text: str = "") -> QLabel:
    label = QLabel(text)
    label.setObjectName(name)
    return label


class OverviewPage(QWidget):
    """The overview: who we talk to, the server's version, the number of users, the projects."""

    def __init__(self, model: OverviewModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.setObjectName("overviewPage")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 14, 16, 16)
        layout.setSpacing(10)

        # ---- who we talk to
        self.source_label = _label("sourceLabel")
        title_font = QFont(self.source_label.font())
        title_font.setPointSizeF(title_font.pointSizeF() * 1.35)
        title_font.setBold(True)
        self.source_label.setFont(title_font)
        layout.addWidget(self.source_label)
        self.hint_label = _label("sourceHint")
        self.hint_label.setWordWrap(True)
        self.hint_label.hide()
        layout.addWidget(self.hint_label)

        info = QWidget()
        info.setObjectName("serverInfo")
        form = QFormLayout(info)
        form.setContentsMargins(0, 0, 0, 0)
        form.setHorizontalSpacing(12)
        form.setVerticalSpacing(4)
        self.url_label = _label("urlValue")
        self.version_label = _label("versionValue")
        self.users_label = _label("usersValue")
        for value in (self.url_label, self.version_label, self.users_label):
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        form.addRow(_label("urlCaption", "Server:"), self.url_label)
        form.addRow(_label("versionCaption", "Version:"), self.version_label)
        form.addRow(_label("usersCaption", "Users:"), self.users_label)
        layout.addWidget(info)
        #: where the instance panel goes (`add_instance_panel`, issue 38)
        self._layout = layout

        # ---- loading / error / projects
        self.stack = QStackedWidget()
        self.stack.setObjectName("stateStack")
        self.stack.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        layout.addWidget(self.stack, 1)

        self.loading_page = QWidget()
        self.loading_page.setObjectName("loadingPage")
        loading = QVBoxLayout(self.loading_page)
        loading.addStretch(1)
        self.loading_label = _label("loadingLabel")
        self.loading_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        loading.addWidget(self.loading_label)
        self.loading_bar = QProgressBar()
        self.loading_bar.setObjectName("loadingBar")
        self.loading_bar.setRange(0, 0)  # busy indicator
        self.loading_bar.setTextVisible(False)
        self.loading_bar.setMaximumWidth(260)
        loading.addWidget(self.loading_bar, 0, Qt.AlignmentFlag.AlignHCenter)
        loading.addStretch(2)
        self.stack.addWidget(self.loading_page)

        self.error_page = QWidget()
        self.error_page.setObjectName("errorPage")
        error = QVBoxLayout(self.error_page)
        error.addStretch(1)
        self.error_title = _label("errorTitle", "Could not load the overview")
        bold = QFont(self.error_title.font())
        bold.setBold(True)
        self.error_title.setFont(bold)
        self.error_title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        error.addWidget(self.error_title)
        self.error_label = _label("errorLabel")
        self.error_label.setWordWrap(True)
        self.error_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.error_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        error.addWidget(self.error_label)
        retry_row = QHBoxLayout()
        retry_row.addStretch(1)
        self.retry_button = QPushButton("Retry")
        self.retry_button.setObjectName("retryButton")
        self.retry_button.clicked.connect(self.on_retry_clicked)
        retry_row.addWidget(self.retry_button)
        retry_row.addStretch(1)
        error.addLayout(retry_row)
        error.addStretch(2)
        self.stack.addWidget(self.error_page)

        self.projects_page = QWidget()
        self.projects_page.setObjectName("projectsPage")
        projects = QVBoxLayout(self.projects_page)
        projects.setContentsMargins(0, 0, 0, 0)
        self.projects_heading = _label("projectsHeading", "Projects")
        self.projects_heading.setFont(bold)
        projects.addWidget(self.projects_heading)
        self.projects_table = QTableView()
        self.projects_table.setObjectName("projectsTable")
        self.projects_table.setAccessibleName("Projects")
        self.projects_table.setModel(model.projects)
        self.projects_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.projects_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.projects_table.setAlternatingRowColors(True)
        rows = self.projects_table.verticalHeader()
        rows.hide()
        rows.setDefaultSectionSize(self.projects_table.fontMetrics().height() + 10)
        header = self.projects_table.horizontalHeader()
        header.setObjectName("projectsTableHeader")
        header.setStretchLastSection(False)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)  # the name takes the rest
        self.projects_table.setSortingEnabled(True)
        self.projects_table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        projects.addWidget(self.projects_table)
        self.stack.addWidget(self.projects_page)

        model.busy_changed.connect(self.on_model_changed)
        model.error_changed.connect(self.on_model_changed)
        model.status_changed.connect(self.on_model_changed)
        model.changed.connect(self.on_model_changed)
        model.loaded.connect(self.on_model_loaded)
        self.on_model_changed()

    # ------------------------------------------------------------------ slots

    def on_retry_clicked(self) -> None:
        self.model.retry()

    def on_model_loaded(self) -> None:
        # every column but the (stretching) name fits its content, plus some air
        table = self.projects_table
        for column in range(1, table.model().columnCount()):
            table.resizeColumnToContents(column)
            table.setColumnWidth(column, table.columnWidth(column) + COLUMN_PADDING)

    def on_model_changed(self, *_: object) -> None:
        m = self.model
        self.source_label.setText(m.source)
        self.url_label.setText(m.url or "—")
        self.version_label.setText(
            f"{m.server_name} {m.server_version}" if m.server_version else "—"
        )
        if m.user_count is not None:
            self.users_label.setText(f"{m.user_count:,}")
        else:
            self.users_label.setText(m.users_note or "—")
        count = m.projects.rowCount()
        self.projects_heading.setText(f"Projects ({count})" if m.has_data else "Projects")
        self.retry_button.setEnabled(not m.busy)
        if m.busy or not (m.error or m.has_data):
            self.loading_label.setText(m.status or "Loading…")
            self.stack.setCurrentWidget(self.loading_page)
        elif m.error:
            self.error_label.setText(m.error)
            self.stack.setCurrentWidget(self.error_page)
        else:
            self.stack.setCurrentWidget(self.projects_page)

    def add_instance_panel(self, panel: QWidget) -> None:
        """The instance's statistics and maintenance switch (`ui.instance_panel`, issue 38),
        under the server's name and version."""
        self._layout.insertWidget(self._layout.indexOf(self.stack), panel)

    def set_hint(self, text: str) -> None:
        """A line under the title (how to leave the sandbox for a real server)."""
        self.hint_label.setText(text)
        self.hint_label.setVisible(bool(text))

    def close_page(self) -> None:
        self.model.close()
