"""`ToolPage`: the frame of one tool: its title and purpose, and, when the connection cannot
serve it, why and what would make it work. The tool's own content goes in `content`."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.viewmodels.tools import ToolModel
from ui.icons import icon


def camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part.title() for part in rest)


class ToolPage(QWidget):
    #: the person wants to change the connection (from the "unavailable" banner)
    connections_requested = Signal()

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
        self.note.setEnabled(False)  # a quiet, greyed remark
        layout.addWidget(self.note)

        #: the tool's own widgets live here, enabled only when the tool can be used
        self.content = QWidget()
        self.content.setObjectName(f"{stem}Content")
        self.content_layout = QVBoxLayout(self.content)
        self.content_layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.content, 1)

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
        self.content.setEnabled(m.available)

    def close_page(self) -> None:
        self.model.close()
