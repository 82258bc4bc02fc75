"""People's pictures: round, from the session's `AvatarCache`, with a placeholder of initials on a
colour picked from the name while the picture loads or when there is none.

- `avatar_pixmap(name, data, size)`: the round pixmap (for list items and delegates).
- `Avatar`: a small widget that shows a person and updates itself when the picture arrives.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QGuiApplication,
    QImage,
    QPainter,
    QPainterPath,
    QPixmap,
)
from PySide6.QtWidgets import QLabel, QWidget

from app.viewmodels.avatars import AvatarCache

#: placeholder colours: mid tones that carry white text on light and dark palettes alike
COLOURS = ("#5b6abf", "#2f855a", "#b7791f", "#c05621", "#9b2c2c", "#6b46c1", "#2c7a7b", "#4a5568")


def initials(name: str | None) -> str:
    """ "Ada Lovelace" -> "AL", "grace" -> "G", "ops@example.com" -> "O", None -> "?"."""
    words = [w for w in (name or "").replace("@", " ").replace(".", " ").split() if w[:1].isalnum()]
    if not words:
        return "?"
    if "@" in (name or ""):
        return words[0][0].upper()
    first, last = words[0], words[-1]
    return (first[0] + (last[0] if len(words) > 1 else "")).upper()


def colour_of(name: str | None) -> QColor:
    digest = hashlib.blake2s((name or "").encode(), digest_size=2).digest()
    return QColor(COLOURS[int.from_bytes(digest, "big") % len(COLOURS)])


def avatar_pixmap(name: str | None, data: bytes | None, size: int) -> QPixmap:
    """A round picture `size` logical pixels wide, sharp at the screen's pixel ratio."""
    app = QGuiApplication.instance()
    ratio = app.devicePixelRatio() if isinstance(app, QGuiApplication) else 1.0
    return _pixmap(name or "", data, size, ratio)


@lru_cache(maxsize=512)
def _pixmap(name: str, data: bytes | None, size: int, ratio: float) -> QPixmap:
    side = round(size * ratio)
    pixmap = QPixmap(side, side)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    circle = QPainterPath()
    circle.addEllipse(QRectF(0, 0, side, side))
    image = QImage.fromData(data) if data else QImage()
    if not image.isNull():
        painter.setClipPath(circle)
        scaled = image.scaled(
            side,
            side,
            Qt.AspectRatioMode.KeepAspectRatioByExpanding,
            Qt.TransformationMode.SmoothTransformation,
        )
        painter.drawImage((side - scaled.width()) // 2, (side - scaled.height()) // 2, scaled)
    else:
        painter.fillPath(circle, QBrush(colour_of(name)))
        font = QFont()
        font.setPixelSize(max(6, round(side * 0.4)))
        font.setBold(True)
        painter.setFont(font)
        painter.setPen(QColor("white"))
        painter.drawText(QRectF(0, 0, side, side), Qt.AlignmentFlag.AlignCenter, initials(name))
    painter.end()
    pixmap.setDevicePixelRatio(ratio)
    return pixmap


class Avatar(QLabel):
    """One person's picture. `set_person(name, url)`; it redraws when the picture arrives."""

    def __init__(self, cache: AvatarCache, size: int = 32, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.cache = cache
        self.side = size
        self.name: str | None = None
        self.url: str | None = None
        self.setFixedSize(QSize(size, size))
        cache.loaded.connect(self.on_cache_loaded)
        self._draw()

    def set_person(self, name: str | None, url: str | None) -> None:
        self.name, self.url = name, url
        self.setToolTip(name or "")
        self.setAccessibleName(f"Picture of {name}" if name else "Picture")
        self._draw()

    @property
    def has_picture(self) -> bool:
        return self.cache.image(self.url) is not None if self.url else False

    def on_cache_loaded(self, url: str) -> None:
        if self.url and self.cache.known(self.url) and url.endswith(self.url.split("://")[-1]):
            self._draw()

    def _draw(self) -> None:
        data = self.cache.image(self.url) if self.url else None
        self.setPixmap(avatar_pixmap(self.name, data, self.side))
