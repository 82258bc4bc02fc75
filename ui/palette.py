"""What every window asks of the palette: is it dark, and which red reads well on it."""

from __future__ import annotations

from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QWidget

#: an error's text colour on a light and on a dark window
ERROR_ON_LIGHT, ERROR_ON_DARK = "#b3261e", "#ff8a80"


def is_dark(palette: QPalette | QWidget) -> bool:
    """Whether the window colour of `palette` (or a widget's palette) is dark."""
    if isinstance(palette, QWidget):
        palette = palette.palette()
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


def error_color(widget: QWidget) -> str:
    """A red that reads well on the widget's background, light or dark."""
    return ERROR_ON_DARK if is_dark(widget) else ERROR_ON_LIGHT
