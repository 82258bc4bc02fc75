"""SVG icons tinted with the palette's text colour, sharp at any device pixel ratio.

Each icon is drawn when Qt first asks for it at a given size (a `QIconEngine`), not for every
size up front: the main window's frame is shown before anything else is done, and drawing 50
pixmaps of which it uses 10 was a fifth of that time."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from PySide6.QtCore import QRect, QRectF, QSize
from PySide6.QtGui import (
    QColor,
    QGuiApplication,
    QIcon,
    QIconEngine,
    QPainter,
    QPalette,
    QPixmap,
)
from PySide6.QtSvg import QSvgRenderer

from app import resources

ICONS = resources.icons()


def icon_path(name: str) -> Path:
    return ICONS / f"{name}.svg"


def icon(name: str, color: QColor | None = None) -> QIcon:
    """The icon `name` (a file stem in app/resources/icons), drawn in `color` (default: the
    application palette's window text, so it reads on light and dark palettes alike)."""
    if color is None:
        color = QGuiApplication.palette().color(QPalette.ColorRole.WindowText)
    return _icon(name, color.name(QColor.NameFormat.HexArgb))


@cache
def _icon(name: str, color: str) -> QIcon:
    return QIcon(TintedSvgEngine(icon_path(name), color))


class TintedSvgEngine(QIconEngine):
    """Draws one SVG in one colour at whatever size is asked, and keeps each pixmap made."""

    def __init__(self, path: Path, color: str) -> None:
        super().__init__()
        self.path = path
        self.color = color
        self._renderer: QSvgRenderer | None = None
        self._pixmaps: dict[tuple[int, int, QIcon.Mode], QPixmap] = {}

    def _draw(self, side_w: int, side_h: int, mode: QIcon.Mode) -> QPixmap:
        key = (side_w, side_h, mode)
        cached = self._pixmaps.get(key)
        if cached is not None:
            return cached
        if self._renderer is None:
            self._renderer = QSvgRenderer(str(self.path))
        pixmap = QPixmap(max(side_w, 1), max(side_h, 1))
        pixmap.fill(QColor(0, 0, 0, 0))  # transparent (without naming `Qt`: see below)
        painter = QPainter(pixmap)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        self._renderer.render(painter, QRectF(0, 0, pixmap.width(), pixmap.height()))
        painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_SourceIn)
        color = QColor(self.color)
        if mode == QIcon.Mode.Disabled:
            color.setAlphaF(color.alphaF() * 0.4)
        # a pixmap of the colour drawn over it, not fillRect: that overload set names `Qt`
        # enums, which would create the whole namespace's while the frame is first painted
        tint = QPixmap(pixmap.size())
        tint.fill(color)
        painter.drawPixmap(0, 0, tint)
        painter.end()
        self._pixmaps[key] = pixmap
        return pixmap

    def pixmap(self, size: QSize, mode: QIcon.Mode, state: QIcon.State) -> QPixmap:
        return self.scaledPixmap(size, mode, state, 1.0)

    def scaledPixmap(
        self, size: QSize, mode: QIcon.Mode, state: QIcon.State, scale: float
    ) -> QPixmap:
        pixmap = QPixmap(
            self._draw(round(size.width() * scale), round(size.height() * scale), mode)
        )
        pixmap.setDevicePixelRatio(scale)
        return pixmap

    def paint(self, painter: QPainter, rect: QRect, mode: QIcon.Mode, state: QIcon.State) -> None:
        ratio = painter.device().devicePixelRatioF() if painter.device() is not None else 1.0
        painter.drawPixmap(rect, self.scaledPixmap(rect.size(), mode, state, ratio))

    def actualSize(self, size: QSize, mode: QIcon.Mode, state: QIcon.State) -> QSize:
        return size

    def clone(self) -> QIconEngine:
        return TintedSvgEngine(self.path, self.color)

    def key(self) -> str:
        return "flagdesk-tinted-svg"
