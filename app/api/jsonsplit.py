"""Where a JSON array of objects may be cut between two items: a `}` `,` `{` (blanks allowed
around the comma). The same sequence can sit inside a string or between two nested objects of
one item, so a cut found here is a candidate only: the caller accepts it once the pieces it
gives validate as JSON items (`app.api.streaming.ListStream` for the large answers,
`app.metrics.documents` for metrics files). One pattern for text and for bytes. Standard library
only."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import overload

_PATTERN = r"\}[ \t\r\n]*,[ \t\r\n]*\{"
#: a `},{` between two objects, in decoded text
BETWEEN_ITEMS_TEXT = re.compile(_PATTERN)
#: the same in raw bytes (a body as it arrives)
BETWEEN_ITEMS_BYTES = re.compile(_PATTERN.encode("ascii"))


@overload
def item_cuts(buf: str, start: int = 0) -> Iterator[tuple[int, int]]: ...
@overload
def item_cuts(buf: bytes, start: int = 0) -> Iterator[tuple[int, int]]: ...
def item_cuts(buf: str | bytes, start: int = 0) -> Iterator[tuple[int, int]]:
    """The candidate cuts in `buf` from `start` on, in order: (where an item ends, just after
    its `}`; where the next one starts, at its `{`)."""
    pattern = BETWEEN_ITEMS_TEXT if isinstance(buf, str) else BETWEEN_ITEMS_BYTES
    for found in pattern.finditer(buf, start):  # type: ignore[arg-type]
        yield found.start() + 1, found.end() - 1
