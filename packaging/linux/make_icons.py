"""Draw the launcher's icons from the application icon, app/resources/icons/flagdesk.svg: PNGs
in the sizes desktops ask for (16 to 256 pixels) and the SVG itself, under
packaging/linux/icons/hicolor/ as the XDG icon theme lays them out. Run it after changing the
application icon (`tests/packaging/test_linux_entry.py` fails until the files match it):

    QT_QPA_PLATFORM=offscreen .venv/bin/python packaging/linux/make_icons.py
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

from app import resources

APP_ID = resources.APP_ID
SIZES = (16, 24, 32, 48, 64, 128, 256)
HERE = Path(__file__).resolve().parent
HICOLOR = HERE / "icons" / "hicolor"
SOURCE = resources.icons() / "flagdesk.svg"


def render(size: int) -> QImage:
    """The application icon drawn at `size` x `size` pixels (ARGB, antialiased)."""
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    QSvgRenderer(str(SOURCE)).render(painter, QRectF(0, 0, size, size))
    painter.end()
    return image


def png_path(size: int) -> Path:
    return HICOLOR / f"{size}x{size}" / "apps" / f"{APP_ID}.png"


def svg_path() -> Path:
    return HICOLOR / "scalable" / "apps" / f"{APP_ID}.svg"


def main() -> int:
    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    for size in SIZES:
        png_path(size).parent.mkdir(parents=True, exist_ok=True)
        if not render(size).save(str(png_path(size)), "PNG"):
            raise OSError(f"could not write {png_path(size)}")
    svg_path().parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(SOURCE, svg_path())
    del app
    return 0


if __name__ == "__main__":
    sys.exit(main())
