"""`StatePanel`: the four states every tool window has: loading, empty (saying what empty means),
error (with Retry) and the content itself."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from ui.icons import icon


def _centred_label(name: str, text: str = "") -> QLabel:
    label = QLabel(text)
    label.setObjectName(name)
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


class StatePanel(QStackedWidget):
    """Shows `content`, or instead a loading, empty or error page. Object names start with
    `stem`: `<stem>Loading`, `<stem>Empty`, `<stem>Error`, `<stem>RetryButton`...

    The focus is kept across the switches: when the page holding it is hidden, it goes to
    Retry on an error page, and back to where it was in the content once that shows again."""

    retry_requested = Signal()

    LOADING, EMPTY, ERROR, CONTENT = "loading", "empty", "error", "content"

    def __init__(self, stem: str, content: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(f"{stem}States")
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

        # ---- loading
        self.loading_page = QWidget()
        self.loading_page.setObjectName(f"{stem}Loading")
        loading = QVBoxLayout(self.loading_page)
        loading.addStretch(1)
        self.loading_label = _centred_label(f"{stem}LoadingLabel", "Loading…")
        loading.addWidget(self.loading_label)
        self.loading_bar = QProgressBar()
        self.loading_bar.setObjectName(f"{stem}LoadingBar")
        self.loading_bar.setRange(0, 0)
        self.loading_bar.setTextVisible(False)
        self.loading_bar.setMaximumWidth(260)
        loading.addWidget(self.loading_bar, 0, Qt.AlignmentFlag.AlignHCenter)
        loading.addStretch(2)
        self.addWidget(self.loading_page)

        # ---- empty and error share a look: an icon, a bold title, a text
        self.empty_page, self.empty_title, self.empty_label = self._message_page(
            f"{stem}Empty", "info"
        )
        self.addWidget(self.empty_page)
        self.error_page, self.error_title, self.error_label = self._message_page(
            f"{stem}Error", "warning"
        )
        row = QHBoxLayout()
        row.addStretch(1)
        self.retry_button = QPushButton("Retry")
        self.retry_button.setObjectName(f"{stem}RetryButton")
        self.retry_button.setToolTip("Try again (F5)")
        self.retry_button.clicked.connect(self.retry_requested)
        row.addWidget(self.retry_button)
        row.addStretch(1)
        layout = self.error_page.layout()
        assert isinstance(layout, QVBoxLayout)
        layout.insertLayout(layout.count() - 1, row)
        self.addWidget(self.error_page)

        self.content = content
        self.addWidget(content)
        self.setCurrentWidget(content)
        #: where the focus was in the content, to put it back when the content shows again
        self._return_focus: QWidget | None = None

    def _message_page(self, name: str, icon_name: str) -> tuple[QWidget, QLabel, QLabel]:
        page = QWidget()
        page.setObjectName(name)
        layout = QVBoxLayout(page)
        layout.addStretch(1)
        picture = QLabel()
        picture.setObjectName(f"{name}Icon")
        picture.setPixmap(icon(icon_name).pixmap(32, 32))
        picture.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout.addWidget(picture)
        title = _centred_label(f"{name}Title")
        bold = QFont(title.font())
        bold.setBold(True)
        title.setFont(bold)
        layout.addWidget(title)
        text = _centred_label(f"{name}Label")
        text.setMaximumWidth(560)
        # centred by stretches, not by an alignment flag: a word-wrapped label placed with an
        # alignment gets its one-line size hint and its other lines are cut off
        centred = QHBoxLayout()
        centred.addStretch(1)
        centred.addWidget(text, 100)
        centred.addStretch(1)
        layout.addLayout(centred)
        layout.addStretch(2)
        return page, title, text

    @property
    def state(self) -> str:
        current = self.currentWidget()
        if current is self.loading_page:
            return self.LOADING
        if current is self.empty_page:
            return self.EMPTY
        if current is self.error_page:
            return self.ERROR
        return self.CONTENT

    def _switch(self, page: QWidget) -> None:
        focus = QApplication.focusWidget()
        if focus is not None and not self.isAncestorOf(focus):
            focus = None  # elsewhere: none of this panel's business
        if focus is not None and self.content.isAncestorOf(focus):
            self._return_focus = focus
        self.setCurrentWidget(page)
        if focus is None or page.isAncestorOf(focus):
            return
        if page is self.error_page and not self.retry_button.isHidden():
            self.retry_button.setFocus()
        elif page is self.content and self._return_focus is not None:
            self._return_focus.setFocus()

    def show_loading(self, text: str = "") -> None:
        self.loading_label.setText(text or "Loading…")
        self._switch(self.loading_page)

    def show_empty(self, title: str, text: str = "") -> None:
        self.empty_title.setText(title)
        self.empty_label.setText(text)
        self.empty_label.setVisible(bool(text))
        self._switch(self.empty_page)

    def show_error(self, title: str, text: str, *, can_retry: bool = True) -> None:
        self.error_title.setText(title)
        self.error_label.setText(text)
        self.retry_button.setVisible(can_retry)
        self._switch(self.error_page)

    def show_content(self) -> None:
        self._switch(self.content)
