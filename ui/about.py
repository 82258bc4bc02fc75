"""Help > About: flagdesk's version, the server it talks to, the main libraries and licences."""

from __future__ import annotations

import html
import platform
from importlib import metadata

from PySide6.QtCore import Qt, qVersion
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QVBoxLayout, QWidget

from app import __version__
from app.viewmodels.session import Session

#: (distribution, licence) of what flagdesk is built on
LIBRARIES: tuple[tuple[str, str], ...] = (
    ("PySide6-Essentials", "LGPL-3.0"),
    ("qasync", "BSD-2-Clause"),
    ("httpx", "BSD-3-Clause"),
    ("pydantic", "MIT"),
    ("starlette", "BSD-3-Clause"),
    ("uvicorn", "BSD-3-Clause"),
    ("keyring", "MIT"),
    ("platformdirs", "MIT"),
)


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


class AboutDialog(QDialog):
    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("aboutDialog")
        self.setWindowTitle("About flagdesk")
        layout = QVBoxLayout(self)
        caps = session.capabilities
        server = (
            f"{caps.server_label} at {caps.base_url}, {caps.token_label}"
            if caps is not None
            else "not connected"
        )
        rows = "".join(
            f"<tr><td>{name}</td><td>{_version(name)}</td><td>{licence}</td></tr>"
            for name, licence in LIBRARIES
        )
        text = QLabel(
            f"<h3>flagdesk {__version__}</h3>"
            "<p>Administer Unleash-compatible feature-flag servers.</p>"
            f"<p><b>Connection:</b> {html.escape(session.name)}<br>"
            f"<b>Server:</b> {html.escape(server)}</p>"
            f"<p>Python {platform.python_version()}, Qt {qVersion()}</p>"
            "<table cellspacing='6'><tr><th align='left'>Library</th><th align='left'>Version"
            f"</th><th align='left'>Licence</th></tr>{rows}</table>"
        )
        text.setObjectName("aboutText")
        text.setTextFormat(Qt.TextFormat.RichText)
        text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(text)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.setObjectName("aboutButtons")
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
