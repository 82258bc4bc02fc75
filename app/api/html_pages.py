"""Scraping HTML error pages: the one readable line of a body that is not an Unleash error body
(Express's error page, a proxy's 502 page, a text answer). Standard library and httpx only."""

from __future__ import annotations

from html.parser import HTMLParser

import httpx

#: longest piece of a non-JSON error body quoted in an error message
QUOTE_LIMIT = 200


def looks_like_html(response: httpx.Response, content: bytes | None = None) -> bool:
    """`content`: the body (or its start), when it was read apart from `response`."""
    if "html" in response.headers.get("content-type", ""):
        return True
    body = response.content if content is None else content
    return body.lstrip()[:1] == b"<"


class TextOf(HTMLParser):
    """The visible text of an HTML page, and its title."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title = ""
        self.parts: list[str] = []
        self._skip = 0
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style", "head"):
            self._skip += 1
        if tag == "title":
            self._in_title = True
        if tag in ("br", "p", "div", "pre", "h1", "h2", "li", "tr"):
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "head") and self._skip:
            self._skip -= 1
        if tag == "title":
            self._in_title = False

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif not self._skip:
            self.parts.append(data)


def readable_text(response: httpx.Response) -> str:
    """One readable line from a body that is not an Unleash error body ("" for none)."""
    text = response.text
    if not text.strip():
        return ""
    if looks_like_html(response):
        parser = TextOf()
        try:
            parser.feed(text)
            parser.close()
        except Exception:  # a broken page must not hide the status
            return ""
        lines = [" ".join(line.split()) for line in "".join(parser.parts).splitlines()]
        lines = [line for line in lines if line]
        text = lines[0] if lines else " ".join(parser.title.split())
    else:
        lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
        text = lines[0] if lines else ""
    return text if len(text) <= QUOTE_LIMIT else text[: QUOTE_LIMIT - 1] + "…"
