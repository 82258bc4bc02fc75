"""`LinkField`: a link to hand to someone (a new user's invite link), shown whole at any width:
a caption, the link wrapped wherever it must (a URL has no spaces to wrap at: in a label it ran
past the form's edge and was cut off), selectable with the mouse and the keyboard, as tall as its
lines, and a Copy button that puts it on the clipboard."""

from __future__ import annotations

import math

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QGuiApplication, QResizeEvent, QTextOption
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)


class WrappedText(QTextEdit):
    """Read-only plain text wrapped anywhere, as tall as its lines (never a scroll bar)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setAcceptRichText(False)
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.setLineWrapMode(QTextEdit.LineWrapMode.WidgetWidth)
        self.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setTabChangesFocus(True)
        self.document().documentLayout().documentSizeChanged.connect(self._fit)

    def _fit(self, *_: object) -> None:
        height = math.ceil(self.document().size().height()) + 2 * self.frameWidth()
        if height != self.height():
            self.setFixedHeight(height)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit()

    def sizeHint(self) -> QSize:
        # as wide as the layout gives it: the text wraps to that
        return QSize(self.fontMetrics().averageCharWidth() * 20, self.height())

    def minimumSizeHint(self) -> QSize:
        return QSize(self.fontMetrics().averageCharWidth() * 8, self.height())


class LinkField(QWidget):
    """A caption, the link (`text()`) shown whole, and Copy. `stem` names its parts
    (`<stem>Caption`, `<stem>`, `<stem>CopyButton`); `what` says what the link is ("invite
    link")."""

    def __init__(self, stem: str, what: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(f"{stem}Field")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        self.caption = QLabel()
        self.caption.setObjectName(f"{stem}Caption")
        self.caption.setWordWrap(True)
        layout.addWidget(self.caption)
        row = QHBoxLayout()
        row.setSpacing(6)
        self.view = WrappedText()
        self.view.setObjectName(stem)
        self.view.setAccessibleName(what[:1].upper() + what[1:])
        self.view.setFrameShape(QFrame.Shape.StyledPanel)
        row.addWidget(self.view, 1)
        self.copy_button = QPushButton("Cop&y")
        self.copy_button.setObjectName(f"{stem}CopyButton")
        self.copy_button.setToolTip(f"Copy the {what} to the clipboard")
        self.copy_button.setAccessibleName(f"Copy the {what}")
        self.copy_button.clicked.connect(self.copy)
        row.addWidget(self.copy_button, 0, Qt.AlignmentFlag.AlignTop)
        layout.addLayout(row)
        self.caption.setBuddy(self.view)

    def text(self) -> str:
        return self.view.toPlainText()

    def show_link(self, link: str, caption: str) -> None:
        """Show `link` under `caption`; hidden when there is no link."""
        if self.view.toPlainText() != link:
            self.view.setPlainText(link)
        self.caption.setText(caption)
        self.setVisible(bool(link))

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.text())
