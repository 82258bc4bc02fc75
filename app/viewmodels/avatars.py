"""`AvatarCache`: people's pictures (the `imageUrl` of users, owners and event authors), fetched
in the background, at most a few at a time, and kept for the session.

Pictures come from wherever the server points (gravatar.com on Unleash), never with the
connection's token: this cache has an `httpx.AsyncClient` of its own with no credentials. A
picture that fails to load (no network, 404, not an image, too big) is remembered as missing, so
the window keeps its placeholder with initials and nothing is asked again.

The cache holds bytes; `ui/avatar.py` turns them into pixmaps. QtCore only.
"""

from __future__ import annotations

import asyncio
import logging
from urllib.parse import urljoin

import httpx
from PySide6.QtCore import QObject, Signal

from app import __version__

log = logging.getLogger(__name__)

#: a picture bigger than this is not a thumbnail: refused
MAX_BYTES = 512 * 1024
CONCURRENCY = 4
TIMEOUT = httpx.Timeout(5.0, read=10.0)


class AvatarCache(QObject):
    #: the picture of this URL arrived (or is known to be missing)
    loaded = Signal(str)

    def __init__(
        self,
        base_url: str = "",
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        #: relative picture URLs are taken relative to the server
        self.base_url = base_url
        self._transport = transport
        self._client: httpx.AsyncClient | None = None
        self._images: dict[str, bytes | None] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._semaphore = asyncio.Semaphore(CONCURRENCY)
        self._closed = False

    def image(self, url: str | None) -> bytes | None:
        """The picture's bytes when they are here; else None, and fetching starts."""
        if not url:
            return None
        url = self._absolute(url)
        if url in self._images:
            return self._images[url]
        self.request(url)
        return None

    def known(self, url: str | None) -> bool:
        """Whether the picture has been fetched, or is known to be missing."""
        return bool(url) and self._absolute(url or "") in self._images

    def request(self, url: str) -> None:
        url = self._absolute(url)
        if self._closed or url in self._images or url in self._tasks:
            return
        if not url.startswith(("http://", "https://")):
            self._images[url] = None
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no event loop (a test without one): placeholders only
        task = loop.create_task(self._fetch(url))
        self._tasks[url] = task
        task.add_done_callback(lambda _t: self._tasks.pop(url, None))

    def _absolute(self, url: str) -> str:
        return urljoin(self.base_url + "/", url) if self.base_url else url

    async def _fetch(self, url: str) -> None:
        data: bytes | None = None
        try:
            async with self._semaphore:
                data = await self._download(url)
        except asyncio.CancelledError:
            raise
        except (httpx.HTTPError, ValueError) as exc:
            log.debug("no picture from %s: %s", url, exc)
        self._images[url] = data
        if not self._closed:
            self.loaded.emit(url)

    async def _download(self, url: str) -> bytes | None:
        if self._client is None:
            self._client = httpx.AsyncClient(
                timeout=TIMEOUT,
                follow_redirects=True,
                transport=self._transport,
                headers={"User-Agent": f"flagdesk/{__version__}", "Accept": "image/*"},
            )
        async with self._client.stream("GET", url) as response:
            if response.status_code != 200:
                return None
            kind = response.headers.get("content-type", "")
            if not kind.startswith("image/"):
                return None
            chunks: list[bytes] = []
            size = 0
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > MAX_BYTES:
                    return None
                chunks.append(chunk)
            return b"".join(chunks)

    async def aclose(self) -> None:
        self._closed = True
        for task in list(self._tasks.values()):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks.values(), return_exceptions=True)
        if self._client is not None:
            await self._client.aclose()
            self._client = None
