"""`MarkdownView`: markdown from a server (an event's summary), shown with Qt's own markdown
support but safely:

- nothing is ever fetched: images become links with their alt text (opened in the browser only
  if clicked), raw HTML is shown as text, and `loadResource` answers nothing for any URL;
- links are not followed inside the widget: a click (or Enter on a link reached with Tab) opens
  the link in the browser with `QDesktopServices.openUrl`, and only for http, https and mailto;
  links relative to the server (Unleash writes `/projects/p/features/f`) are taken relative to it.

The view is as tall as its text (no scroll bar of its own), for lists of summaries.
"""

from __future__ import annotations

import math
from typing import Any

from PySide6.QtCore import QEvent, QSize, Qt, QUrl, Signal
from PySide6.QtGui import (
    QDesktopServices,
    QPalette,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
    QTextOption,
    QWheelEvent,
)
from PySide6.QtWidgets import QFrame, QSizePolicy, QTextBrowser, QWidget

#: the only kinds of link ever opened
SAFE_SCHEMES = ("http", "https", "mailto")

#: md4c's MD_FLAG_UNDERLINE, part of Qt's GitHub dialect: it turns `_text_` into underlined text
#: (which reads as a link) where GitHub and CommonMark make it emphasis
_UNDERLINE = 0x4000
#: GitHub's dialect with `_text_` as emphasis, and raw HTML shown as text rather than interpreted
MARKDOWN = QTextDocument.MarkdownFeature(
    (QTextDocument.MarkdownFeature.MarkdownDialectGitHub.value & ~_UNDERLINE)
    | QTextDocument.MarkdownFeature.MarkdownNoHTML.value
)


def link_target(href: str, base_url: str = "") -> QUrl | None:
    """Where a link goes, or None when it must not be opened (a scheme other than http, https
    and mailto, or a relative link with no server to take it relative to)."""
    url = QUrl(href.strip())
    if not url.isValid() or not href.strip():
        return None
    if url.isRelative():
        if not base_url:
            return None
        url = QUrl(base_url.rstrip("/") + "/").resolved(url)
    if url.scheme().lower() not in SAFE_SCHEMES:
        return None
    if url.scheme().lower() != "mailto" and not url.host():
        return None
    return url


class SafeDocument(QTextDocument):
    """A text document that never loads a resource (an image, a style sheet) from anywhere."""

    def loadResource(self, type: int, name: QUrl | str) -> Any:
        return None


def markdown_document(text: str, link_colour: Any = None, parent: Any = None) -> SafeDocument:
    """`text` as a document with no image left in it: each image becomes a link to where it
    is, with its alt text ("image" when it has none)."""
    doc = SafeDocument(parent)
    doc.setDocumentMargin(0)
    doc.setMarkdown(text, MARKDOWN)
    images: list[tuple[int, int, str, str]] = []
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            fmt = fragment.charFormat()
            if fmt.isImageFormat():
                image = fmt.toImageFormat()
                alt = image.property(QTextFormat.Property.ImageAltText)
                images.append(
                    (fragment.position(), fragment.length(), image.name(), str(alt or "image"))
                )
            elif fmt.isAnchor():
                # links look like links in any palette, and not by colour alone
                fmt.setFontUnderline(True)
                if link_colour is not None:
                    fmt.setForeground(link_colour)
                cursor = QTextCursor(doc)
                cursor.setPosition(fragment.position())
                cursor.setPosition(
                    fragment.position() + fragment.length(), QTextCursor.MoveMode.KeepAnchor
                )
                cursor.setCharFormat(fmt)
            it += 1
        block = block.next()
    for position, length, name, alt in reversed(images):
        cursor = QTextCursor(doc)
        cursor.setPosition(position)
        cursor.setPosition(position + length, QTextCursor.MoveMode.KeepAnchor)
        link = QTextCharFormat()
        link.setAnchor(True)
        link.setAnchorHref(name)
        link.setFontUnderline(True)
        link.setToolTip(f"Image at {name} (not loaded)")
        if link_colour is not None:
            link.setForeground(link_colour)
        cursor.insertText(alt, link)
    # no space above the first paragraph or below the last one
    first, last = doc.firstBlock(), doc.lastBlock()
    for block, top in ((first, True), (last, False)):
        block_format = block.blockFormat()
        if top:
            block_format.setTopMargin(0)
        else:
            block_format.setBottomMargin(0)
        QTextCursor(block).setBlockFormat(block_format)
    return doc


class MarkdownView(QTextBrowser):
    """Read-only markdown, as tall as its text. `set_markdown(text)`; `base_url` is what
    relative links are relative to (the server)."""

    #: a link was opened in the browser (after a click or Enter)
    link_opened = Signal(QUrl)
    #: a link was clicked that is not opened (javascript:, file:, ...)
    link_refused = Signal(str)

    def __init__(self, base_url: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.base_url = base_url
        self._markdown = ""
        self._doc: SafeDocument | None = None
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.viewport().setAutoFillBackground(False)
        self.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self.anchorClicked.connect(self.on_anchor_clicked)
        self.highlighted.connect(self.on_highlighted)

    # ------------------------------------------------------------------ content

    @property
    def markdown(self) -> str:
        return self._markdown

    def set_markdown(self, text: str) -> None:
        self._markdown = text
        self._render()

    def _render(self) -> None:
        old = self._doc
        doc = markdown_document(self._markdown, self.palette().color(QPalette.ColorRole.Link),
                                self)  # fmt: skip
        doc.setDefaultFont(self.font())
        self.setDocument(doc)
        option = QTextOption(doc.defaultTextOption())
        option.setWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        doc.setDefaultTextOption(option)
        self._doc = doc
        if old is not None:
            old.deleteLater()  # ours: Qt deletes only the document it made itself
        doc.documentLayout().documentSizeChanged.connect(self._fit)
        # links are reached with Tab only when there are some
        has_links = any(True for _ in self.links())
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus if has_links else Qt.FocusPolicy.ClickFocus)
        self._fit()

    def links(self) -> list[tuple[int, int, str]]:
        """(position, length, href) of every link, in order."""
        out: list[tuple[int, int, str]] = []
        block = self.document().begin()
        while block.isValid():
            it = block.begin()
            while not it.atEnd():
                fragment = it.fragment()
                fmt = fragment.charFormat()
                if fmt.isAnchor() and fmt.anchorHref():
                    out.append((fragment.position(), fragment.length(), fmt.anchorHref()))
                it += 1
            block = block.next()
        return out

    def loadResource(self, type: int, name: QUrl | str) -> Any:
        """Never fetch anything (images are gone already; this is the second lock)."""
        return None

    # ------------------------------------------------------------------ size

    def _fit(self, *_: object) -> None:
        doc = self.document()
        width = self.viewport().width()
        if width > 0:
            doc.setTextWidth(width)
        height = math.ceil(doc.size().height()) + 2 * self.frameWidth()
        if height != self.height():
            self.setFixedHeight(max(height, self.fontMetrics().height()))

    def sizeHint(self) -> QSize:
        return QSize(super().sizeHint().width(), self.height())

    def minimumSizeHint(self) -> QSize:
        return QSize(80, self.fontMetrics().height())

    def resizeEvent(self, event: Any) -> None:
        super().resizeEvent(event)
        self._fit()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.FontChange):
            self._render()  # link colours and font follow the palette

    def wheelEvent(self, event: QWheelEvent) -> None:
        event.ignore()  # nothing to scroll here: the list around it scrolls

    # ------------------------------------------------------------------ links

    def on_anchor_clicked(self, url: QUrl) -> None:
        href = url.toString()
        target = link_target(href, self.base_url)
        if target is None:
            self.link_refused.emit(href)
            return
        QDesktopServices.openUrl(target)
        self.link_opened.emit(target)

    def on_highlighted(self, url: QUrl) -> None:
        if url.isEmpty():
            self.setToolTip("")
            return
        target = link_target(url.toString(), self.base_url)
        if target is None:
            self.setToolTip(f"{url.toString()} (not opened: only web and mail links are)")
        else:
            self.setToolTip(f"Open {target.toString()} in the browser")
