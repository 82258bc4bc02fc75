"""Every text reads: WCAG 2 contrast (4.5:1 for text, level AA) of the application palette's text
roles against their backgrounds, in the light palette and in dark ones as flagdesk sets them up
(`ui.palette.use_readable_palette`, which `ui.main_window.run` and the screenshots call), and of
every label of every window against what it is drawn on, on a sandbox.

The contrast is computed here from WCAG's definition, not with `ui.palette`'s own functions."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QLabel, QWidget

from app.viewmodels.session import Session
from sandbox.process import SandboxProcess
from ui.main_window import MainWindow
from ui.palette import dark_desktop_palette, use_readable_palette

R = QPalette.ColorRole
G = QPalette.ColorGroup
#: each text role and the backgrounds it is drawn on
PAIRS = {
    R.Text: (R.Base, R.AlternateBase),
    R.WindowText: (R.Window,),
    R.ButtonText: (R.Button,),
    R.PlaceholderText: (R.Base, R.AlternateBase, R.Window),
    R.Link: (R.Base, R.AlternateBase, R.Window),
    R.LinkVisited: (R.Base, R.AlternateBase, R.Window),
    R.ToolTipText: (R.ToolTipBase,),
    R.HighlightedText: (R.Highlight,),
}


def luminance(c: QColor) -> float:
    def channel(v: float) -> float:
        return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(x) for x in (c.redF(), c.greenF(), c.blueF()))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def over(fg: QColor, bg: QColor) -> QColor:
    """`fg` as it shows on the opaque `bg`."""
    a = fg.alphaF()
    pairs = ((fg.redF(), bg.redF()), (fg.greenF(), bg.greenF()), (fg.blueF(), bg.blueF()))
    return QColor.fromRgbF(*(a * f + (1 - a) * b for f, b in pairs))


def contrast(fg: QColor, bg: QColor) -> float:
    hi, lo = sorted((luminance(over(fg, bg)), luminance(bg)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def too_faint(palette: QPalette) -> list[str]:
    out = []
    for group in (G.Active, G.Inactive):
        for text, backgrounds in PAIRS.items():
            for background in backgrounds:
                fg, bg = palette.color(group, text), palette.color(group, background)
                ratio = contrast(fg, bg)
                if ratio < 4.5:
                    out.append(f"{group.name} {text.name} {fg.name()} on {background.name} "
                               f"{bg.name()}: {ratio:.2f}")  # fmt: skip
    return out


def dark_with_qt_links() -> QPalette:
    """A dark desktop that names no link colours: Qt's dark blue and magenta (1.6:1 and 4.4:1
    on its window)."""
    return QPalette(QColor("#3c3f41"), QColor("#2b2d30"))


DESKTOPS: dict[str, Callable[[], QPalette | None]] = {
    "light": lambda: None,  # the desktop's own: Fusion's, offscreen
    "dark": dark_desktop_palette,
    "dark, Qt's links": dark_with_qt_links,
}


@pytest.fixture
def desktop_palette(qapp: QApplication) -> Iterator[Callable[[str], QPalette]]:
    """`desktop_palette(name)`: the application palette as flagdesk sets it up on that
    desktop; back to Qt's own after the test."""

    def use(name: str) -> QPalette:
        use_readable_palette(qapp, DESKTOPS[name]())
        return qapp.palette()

    yield use
    qapp.setPalette(QPalette())


@pytest.mark.parametrize("name", list(DESKTOPS))
def test_every_text_role_reads_on_its_backgrounds(
    desktop_palette: Callable[[str], QPalette], name: str
) -> None:
    palette = desktop_palette(name)
    assert too_faint(palette) == []


def test_only_the_colours_that_fall_short_change(
    desktop_palette: Callable[[str], QPalette],
) -> None:
    desktop = dark_desktop_palette()
    palette = desktop_palette("dark")
    for role in (R.Window, R.Base, R.Text, R.WindowText, R.Link, R.Highlight):
        assert palette.color(role) == desktop.color(role), role.name
    # a visited link stays magenta and a placeholder grey, lightened just enough
    visited, placeholder = palette.color(R.LinkVisited), palette.color(R.PlaceholderText)
    assert visited.hue() == QColor("#ff00ff").hue() and visited.lightness() > 127
    assert placeholder.saturation() == 0
    assert 4.5 <= contrast(placeholder, palette.color(R.Window)) < 5.0
    # Qt's dark blue on a dark desktop becomes a light blue
    links = desktop_palette("dark, Qt's links").color(R.Link)
    assert links.hue() == QColor("#0000ff").hue() and links.lightness() > 150


def background_of(widget: QWidget | None) -> QColor:
    """The colour `widget` is drawn on: its background role's, a translucent one blended over
    what is behind it."""
    if widget is None:
        return QColor("#ffffff")
    colour = widget.palette().color(G.Active, widget.backgroundRole())
    if colour.alpha() == 255:
        return colour
    return over(colour, background_of(widget.parentWidget()))


@pytest.mark.parametrize("name", ["light", "dark"])
def test_every_label_of_every_window_reads(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess,
    desktop_palette: Callable[[str], QPalette], name: str,
) -> None:  # fmt: skip
    """Each page on the sandbox, loaded (a project shown, a user open): every label shown is
    enabled (a disabled one is greyed for a control that cannot be used, 1.6:1 on Fusion's
    light window: a remark is `ui.palette.quiet` instead) and reaches 4.5:1 on its background."""
    desktop_palette(name)
    session = connect(sandbox)
    window = MainWindow(session)
    qtbot.addWidget(window)
    window.resize(1100, 700)
    window.show()
    problems: list[str] = []
    checked = 0
    try:
        for key in ["overview", *window.tool_pages]:
            window.show_page(key)
            content = window.tool_pages[key].ensure_content() if key != "overview" else None
            if key in ("project_dashboard", "archived_features"):
                content.open_item("web-shop")  # type: ignore[union-attr]
            elif key == "users":
                content.open_item(39)  # type: ignore[union-attr]
            model = getattr(content, "model", None)
            qtbot.wait(200)
            qtbot.waitUntil(lambda m=model: m is None or not m.busy, timeout=20_000)
            qtbot.wait(200)
            for label in window.findChildren(QLabel):
                if not label.isVisibleTo(window) or not label.text().strip():
                    continue
                checked += 1
                said = f"{key}: {label.objectName()} {label.text()[:30]!r}"
                if label.testAttribute(Qt.WidgetAttribute.WA_ForceDisabled):
                    problems.append(f"{said} is disabled to look quiet")
                    continue
                fg = label.palette().color(G.Active, label.foregroundRole())
                bg = background_of(label)
                if contrast(fg, bg) < 4.5:
                    problems.append(f"{said}: {fg.name()} on {bg.name()}, "
                                    f"{contrast(fg, bg):.2f}")  # fmt: skip
    finally:
        window.close()
    assert checked > 60, checked
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("name", list(DESKTOPS))
def test_an_unticked_box_in_a_list_shows(
    desktop_palette: Callable[[str], QPalette], name: str, qtbot: Any
) -> None:
    """An unticked check box of a list (the token form's projects, the grant dialog, the
    permission picker) is drawn apart from the list: on a dark palette Fusion drew its frame in
    the list's own colour, and it vanished (`ui.palette.show_unticked_boxes`)."""
    from PySide6.QtWidgets import QListWidget, QListWidgetItem

    from ui.palette import show_unticked_boxes

    desktop_palette(name)
    view = QListWidget()
    qtbot.addWidget(view)
    item = QListWidgetItem("web-shop")
    item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
    item.setCheckState(Qt.CheckState.Unchecked)
    view.addItem(item)
    show_unticked_boxes(view)
    view.resize(200, 60)
    view.show()
    qtbot.waitExposed(view)
    image = view.viewport().grab().toImage()
    base = view.palette().color(QPalette.ColorRole.Base)
    box = view.visualItemRect(item)
    # the indicator sits at the start of the row, before the text
    frame = max(
        contrast(image.pixelColor(x, y), base)
        for x in range(box.left(), box.left() + 22)
        for y in range(box.top(), box.bottom())
    )
    assert frame >= 1.5, f"the unticked box's frame is {frame:.2f}:1 on the list"
