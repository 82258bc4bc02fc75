"""SVG icons tinted with the palette's text colour, sharp at any device pixel ratio."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QGuiApplication, QIcon, QPainter, QPalette, QPixmap
from PySide6.QtSvg import QSvgRenderer

ICONS = Path(__file__).resolve().parent.parent / "resources" / "icons"
SIZES = (16, 20, 24, 32, 48)


def icon_path(name: str) -> Path:
    return ICONS / f"{name}.svg"


def icon(name: str, color: QColor | None = None) -> QIcon:
    """The icon `name` (a file stem in resources/icons), drawn in `color` (default: the
    application palette's window text, so it reads on light and dark palettes alike)."""
    if color is None:
        color = QGuiApplication.palette().color(QPalette.ColorRole.WindowText)
    return _icon(name, color.name(QColor.NameFormat.HexArgb))


@cache
def _icon(name: str, color: str) -> QIcon:
    renderer = QSvgRenderer(str(icon_path(name)))
    result = QIcon()
    app = QGuiApplication.instance()
    ratio = app.devicePixelRatio() if isinstance(app, QGuiApplication) else 1.0
    for size in SIZES:
        pixmap = QPixmap(round(size * ratio), round(size * ratio))
        pixmap.fill(Qt.GlobalColor.transparent)
        painter = QPainter(pixmap)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter, QRectF(0, 0, pixmap.width(), pixmap.height()))
        painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_SourceIn)
        painter.fillRect(pixmap.rect(), QColor(color))
        painter.end()
        pixmap.setDevicePixelRatio(ratio)
        result.addPixmap(pixmap)
    return result
