"""The application's colours: the desktop's palette with every text made readable
(`use_readable_palette`), what every window asks of it (is it dark, which red reads well on it),
and quiet remarks (`quiet`).

Every text colour role reaches WCAG 2's 4.5:1 (`TEXT_CONTRAST`) against each background it is
drawn on (`TEXT_ON`), in the active and the inactive colour groups: a desktop's palette does not
always (Qt's own leaves visited links magenta, 2.7:1 on Fusion's light grey, and its links dark
blue on a dark theme that names no link colour, 1.6:1; Fusion's placeholder text is black at half
opacity, 4.0:1), so the colours that fall short are made lighter or darker, hue kept, just enough.
Disabled texts are left as the desktop greys them: a disabled control is meant to recede (WCAG
exempts it). A remark that should be read but not stand out is `quiet`, never disabled.
"""

from __future__ import annotations

import colorsys
import copy
from collections.abc import Iterable

from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QAbstractItemView, QLabel, QWidget

#: an error's text colour on a light and on a dark window
ERROR_ON_LIGHT, ERROR_ON_DARK = "#b3261e", "#ff8a80"

#: WCAG 2's least contrast for text (success criterion 1.4.3, level AA)
TEXT_CONTRAST = 4.5

_R = QPalette.ColorRole
#: each text colour role and the background roles it is drawn on
TEXT_ON: dict[QPalette.ColorRole, tuple[QPalette.ColorRole, ...]] = {
    _R.WindowText: (_R.Window,),
    _R.Text: (_R.Base, _R.AlternateBase),
    _R.ButtonText: (_R.Button,),
    # a line edit's placeholder (Base), and the quiet remarks of the windows (Window, Base)
    _R.PlaceholderText: (_R.Base, _R.AlternateBase, _R.Window),
    # links in labels (Window) and in text views and tables (Base)
    _R.Link: (_R.Base, _R.AlternateBase, _R.Window),
    _R.LinkVisited: (_R.Base, _R.AlternateBase, _R.Window),
    _R.ToolTipText: (_R.ToolTipBase,),
    _R.HighlightedText: (_R.Highlight,),
}
#: the colour groups a person reads (the disabled one is meant to recede)
READ_GROUPS = (QPalette.ColorGroup.Active, QPalette.ColorGroup.Inactive)


def is_dark(palette: QPalette | QWidget) -> bool:
    """Whether the window colour of `palette` (or a widget's palette) is dark."""
    if isinstance(palette, QWidget):
        palette = palette.palette()
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


def error_color(widget: QWidget) -> str:
    """A red that reads well on the widget's background, light or dark."""
    return ERROR_ON_DARK if is_dark(widget) else ERROR_ON_LIGHT


def quiet(label: QLabel) -> QLabel:
    """A remark to be read but not to stand out: drawn in the palette's placeholder colour,
    which `readable_palette` keeps at 4.5:1 on windows and lists, and which follows the palette
    when it changes. (A disabled label's grey was 1.6:1 on Fusion's light window.)"""
    label.setForegroundRole(QPalette.ColorRole.PlaceholderText)
    return label


# ---------------------------------------------------------------------- contrast


RGB = tuple[float, float, float]


def _rgb(color: QColor) -> RGB:
    return color.redF(), color.greenF(), color.blueF()


def _luminance(rgb: RGB) -> float:
    """WCAG 2's relative luminance of an opaque colour's red, green and blue (0 to 1)."""

    def linear(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = rgb
    return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b)


def _ratio(a: float, b: float) -> float:
    """WCAG 2's contrast ratio of two luminances, 1 to 21."""
    return (max(a, b) + 0.05) / (min(a, b) + 0.05)


def _blended(color: QColor, background: RGB) -> RGB:
    """`color` as it shows on the opaque `background` (its transparency blended in)."""
    a = color.alphaF()
    (r, g, b), (br, bg, bb) = _rgb(color), background
    return a * r + (1 - a) * br, a * g + (1 - a) * bg, a * b + (1 - a) * bb


def contrast(color: QColor, background: QColor) -> float:
    """WCAG 2's contrast ratio of `color` (blended) on the opaque `background`, 1 to 21."""
    ground = _rgb(background)
    return _ratio(_luminance(_blended(color, ground)), _luminance(ground))


def readable(
    color: QColor, backgrounds: Iterable[QColor], minimum: float = TEXT_CONTRAST
) -> QColor:
    """`color` if it reaches `minimum` on every one of `backgrounds`; else the colour of the
    same hue and saturation, lighter or darker, nearest to it that does (opaque: a translucent
    colour starts from how it shows on the first background). When neither way gets there,
    the one that comes closest."""
    grounds = [_rgb(b) for b in backgrounds]
    lums = [_luminance(g) for g in grounds]
    if not grounds or all(
        _ratio(_luminance(_blended(color, g)), lum) >= minimum
        for g, lum in zip(grounds, lums, strict=True)
    ):
        return copy.copy(color)
    hue, lightness, saturation = colorsys.rgb_to_hls(*_blended(color, grounds[0]))

    def shade(level: float) -> RGB:
        """The colour at `level`, in the 8 bits a channel has (rounding can cost the ratio)."""
        r, g, b = colorsys.hls_to_rgb(hue, level, saturation)
        return round(r * 255) / 255, round(g * 255) / 255, round(b * 255) / 255

    def worst(level: float) -> float:
        own = _luminance(shade(level))
        return min(_ratio(own, lum) for lum in lums)

    steps = 64
    best_level, best = lightness, worst(lightness)
    for direction in (-1, 1):  # darker, then lighter: the nearest that reaches wins
        previous = lightness
        for step in range(1, steps + 1):
            level = min(1.0, max(0.0, lightness + direction * step / steps))
            reached = worst(level)
            if reached >= minimum:
                # between the last step short of it and this one: the level just reaching
                short, enough = previous, level
                for _ in range(12):
                    middle = (short + enough) / 2
                    if worst(middle) >= minimum:
                        enough = middle
                    else:
                        short = middle
                if best < minimum or abs(enough - lightness) < abs(best_level - lightness):
                    best_level, best = enough, worst(enough)
                break
            if best < minimum and reached > best:
                best_level, best = level, reached
            if level in (0.0, 1.0):
                break
            previous = level
    return QColor.fromRgbF(*shade(best_level))


def readable_palette(palette: QPalette) -> QPalette:
    """`palette` with every text role reaching `TEXT_CONTRAST` on its backgrounds (`TEXT_ON`),
    in the active and inactive groups. Only the colours that fall short change: a selection's
    colour is darkened (or lightened) for its text, which the person chose with the theme;
    any other text colour is made darker or lighter, never a background.

    (Copies are made with `copy.copy`: the copy constructors of `QPalette` and `QColor` make
    PySide6 build its `Qt` namespace, which `run()` keeps for after the frame is shown.)"""
    out = copy.copy(palette)
    for group in READ_GROUPS:
        # the selection first: its text's colour is the theme's, its background gives way
        selected = out.color(group, _R.HighlightedText)
        highlight = out.color(group, _R.Highlight)
        if contrast(selected, highlight) < TEXT_CONTRAST:
            out.setColor(group, _R.Highlight, readable(highlight, [selected]))
        for text, backgrounds in TEXT_ON.items():
            colour = out.color(group, text)
            grounds = [out.color(group, b) for b in backgrounds]
            fixed = readable(colour, grounds)
            if fixed != colour:
                out.setColor(group, text, fixed)
    return out


def dark_desktop_palette() -> QPalette:
    """A dark desktop's palette, as the screenshots (`ui.screenshots`) and tests stand in for
    one (offscreen, Qt has none): the colours of a common dark theme, its links' colours and
    visited links' left to Qt (magenta), its placeholder a mid grey."""
    p = QPalette()
    roles = {
        _R.Window: "#2b2d30",
        _R.WindowText: "#e6e6e6",
        _R.Base: "#1e1f22",
        _R.AlternateBase: "#26282b",
        _R.Text: "#e6e6e6",
        _R.Button: "#3c3f41",
        _R.ButtonText: "#e6e6e6",
        _R.Highlight: "#2f65ca",
        _R.HighlightedText: "#ffffff",
        _R.ToolTipBase: "#3c3f41",
        _R.ToolTipText: "#e6e6e6",
        _R.PlaceholderText: "#8c8c8c",
        _R.Link: "#589df6",
    }
    for role, color in roles.items():
        p.setColor(role, QColor(color))
    # greyed text for disabled controls, as a desktop's dark palette has it
    for role in (_R.WindowText, _R.Text, _R.ButtonText):
        p.setColor(QPalette.ColorGroup.Disabled, role, QColor("#6f7377"))
    return p


def show_unticked_boxes(view: QAbstractItemView) -> None:
    """Make an item view's unticked check boxes visible on a dark palette. Fusion draws a box's
    frame a shade darker than the window, which on a dark palette is the list's own colour: an
    unticked box vanished (the token form's projects, the grant dialog, the permission picker).
    Drawn here in the placeholder text's grey (readable on the list's colour: `readable_palette`)
    on the list's colour; ticked ones as ever."""
    if is_dark(view):
        frame = view.palette().color(QPalette.ColorRole.PlaceholderText).name()
        view.setStyleSheet(
            f"QAbstractItemView::indicator:unchecked {{ border: 1px solid {frame}; "
            "border-radius: 2px; background: palette(base); width: 11px; height: 11px; }"
        )


# ---------------------------------------------------------------------- the application's


class _Follower:
    """Applies the readable palette again when the desktop's colour scheme changes."""

    connected = False
    desktop: QPalette | None = None


def use_readable_palette(app: QGuiApplication, desktop: QPalette | None = None) -> None:
    """Make the application's palette `readable_palette` of the desktop's (or of `desktop`,
    as the screenshots give a dark one), and again whenever the desktop switches between
    light and dark."""
    _Follower.desktop = desktop
    _apply(app)
    if not _Follower.connected:
        _Follower.connected = True
        app.styleHints().colorSchemeChanged.connect(lambda *_: _apply(app))


def _apply(app: QGuiApplication) -> None:
    # the desktop's palette first (an application palette with nothing set resolves to the
    # theme's; a given one's roles left unset too), so the colours made readable are those
    # that show
    desktop = _Follower.desktop
    app.setPalette(QPalette() if desktop is None else desktop)
    app.setPalette(readable_palette(app.palette()))
