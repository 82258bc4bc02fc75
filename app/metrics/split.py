"""Splitting a batch into request bodies that each stay within the server's body limit.

Every item is serialised once, when it is loaded, into the compact bytes it will be sent as; a
`Segment` keeps those bytes back to back (each followed by a comma) with the offset where each
item ends. Packing a body is then a binary search over the offsets and one slice per run of
items: no item is serialised again, and no body is serialised twice to measure it.

Metrics are packed application by application (in the order the applications first appear),
so a body usually carries the application items of one or two applications only.
"""

from __future__ import annotations

import json
from array import array
from bisect import bisect_right
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from app.api.wire import json_path

PREFIX = b'{"applications":['
MIDDLE = b'],"metrics":['
SUFFIX = b"]}"
#: bytes of a body with no item at all: `{"applications":[],"metrics":[]}`
ENVELOPE = len(PREFIX) + len(MIDDLE) + len(SUFFIX)
#: the application items of one appName are attached to each body using them only while they
#: take at most this share of the limit; larger sets are sent once, in bodies of their own
ATTACH_SHARE = 2


@dataclass(frozen=True, slots=True)
class Body:
    """One request body: the exact bytes to POST, valid on its own."""

    #: 0-based position in the split
    index: int
    #: compact JSON of bulkMetricsSchema: {"applications":[...],"metrics":[...]}
    data: bytes
    metrics: int
    applications: int


#: the list of an SDK payload, whose items are named by their feature rather than an index
SDK_TOGGLES = "bucket.toggles"


def item_path(prefix: str, index: int, feature: str = "") -> str:
    """The JSON path of item `index` of the list at `prefix` in its file: `metrics[3]`, `[3]`
    (a top-level array, or NDJSON), or in an SDK payload the toggle named `feature`
    (`bucket.toggles.cart-v2`, `bucket.toggles["odd name"]`)."""
    if prefix == SDK_TOGGLES:
        return json_path((feature,), root=prefix)
    return json_path((index,), root=prefix)


@dataclass(slots=True)
class Segment:
    """The valid metric items of one application read from one file, as the bytes they are sent
    as. Item i is `blob[ends[i - 1] : ends[i] - 1]` (`ends[-1]` taken as 0); the byte after it is
    a comma. `lines[i]` is its line in the file (0 when not known), `indexes[i]` its index."""

    file: str
    #: JSON path of the list the items were in: "metrics", "" (a top-level array or NDJSON) or
    #: "bucket.toggles" (an SDK payload, where an item is named by its feature)
    prefix: str
    blob: bytes = b""
    ends: array[int] = field(default_factory=lambda: array("Q"))
    lines: array[int] = field(default_factory=lambda: array("I"))
    indexes: array[int] = field(default_factory=lambda: array("I"))

    def item(self, i: int) -> bytes:
        start = self.ends[i - 1] if i else 0
        return bytes(self.blob[start : self.ends[i] - 1])

    def path(self, i: int) -> str:
        """The item's JSON path within its file."""
        if self.prefix == SDK_TOGGLES:
            return item_path(self.prefix, i, str(json.loads(self.item(i)).get("featureName", "")))
        return item_path(self.prefix, self.indexes[i])


@dataclass(frozen=True, slots=True)
class Unsendable:
    """An item that does not fit in a body of the limit even on its own."""

    kind: str  # "metric" or "application"
    file: str
    line: int | None
    path: str | None
    data: bytes
    #: bytes of the smallest body that could carry it
    needed: int


class _Open:
    """The body being filled."""

    __slots__ = ("app_bytes", "apps", "metric_bytes", "metrics", "n_apps", "n_metrics", "names")

    def __init__(self) -> None:
        self.apps: list[bytes] = []
        self.metrics: list[bytes | memoryview] = []
        self.names: set[str] = set()
        self.app_bytes = 0  # bytes of the joined application items, commas included
        self.metric_bytes = 0
        self.n_apps = 0
        self.n_metrics = 0

    @property
    def size(self) -> int:
        return ENVELOPE + self.app_bytes + self.metric_bytes

    def app_cost(self, data: bytes) -> int:
        return len(data) + (1 if self.app_bytes else 0)

    def metric_cost(self, n: int) -> int:
        return n + (1 if self.metric_bytes else 0)

    def add_apps(self, data: bytes, count: int) -> None:
        self.app_bytes += self.app_cost(data)
        self.apps.append(data)
        self.n_apps += count

    def add_metrics(self, data: bytes | memoryview, count: int) -> None:
        self.metric_bytes += self.metric_cost(len(data))
        self.metrics.append(data)
        self.n_metrics += count

    @property
    def empty(self) -> bool:
        return not self.n_apps and not self.n_metrics

    def body(self, index: int) -> Body:
        data = b"".join((PREFIX, b",".join(self.apps), MIDDLE, b",".join(self.metrics), SUFFIX))
        assert len(data) == self.size, (len(data), self.size)
        return Body(index, data, self.n_metrics, self.n_apps)


def pack(
    groups: Mapping[str, Sequence[Segment]],
    applications: Mapping[str, Sequence[tuple[bytes, str, int | None, str]]],
    max_body: int,
    unsendable: list[Unsendable],
) -> Iterator[Body]:
    """The bodies for `groups` (metric segments per appName) and `applications` (per appName:
    distinct application items as (bytes, file, line, path)), each at most `max_body` bytes.

    Each body carries the application items of every appName its metrics use, when those
    items are small enough to repeat (see ATTACH_SHARE); the others, and those of
    applications no metric uses, go once into the first bodies. A metric that fits in a body
    only without its applications goes without them (they are sent in other bodies). Items too
    large for any body are appended to `unsendable` instead: never dropped silently, never
    retried forever.
    """
    if max_body <= ENVELOPE:
        raise ValueError(f"a body limit of {max_body} bytes leaves no room for any item")
    attach: dict[str, bytes] = {}
    alone: list[tuple[bytes, str, int | None, str]] = []
    for name, items in applications.items():
        joined = b",".join(item[0] for item in items)
        if name in groups and len(joined) <= max_body // ATTACH_SHARE:
            attach[name] = joined
        else:
            alone.extend(items)

    index = 0
    body = _Open()

    def add_alone(items: Sequence[tuple[bytes, str, int | None, str]]) -> Iterator[Body]:
        nonlocal body, index
        for data, file, line, path in items:
            if ENVELOPE + len(data) > max_body:
                needed = ENVELOPE + len(data)
                unsendable.append(Unsendable("application", file, line, path, data, needed))
                continue
            if body.size + body.app_cost(data) > max_body:
                yield body.body(index)
                index += 1
                body = _Open()
            body.add_apps(data, 1)

    yield from add_alone(alone)
    attached: set[str] = set()

    for name, segments in groups.items():
        apps = attach.get(name)
        n_apps = len(applications[name]) if apps is not None else 0
        for seg in segments:
            # a run of items is a view of the blob: the body's join is its one copy
            ends, blob = seg.ends, memoryview(seg.blob)
            n = len(ends)
            j = 0
            while j < n:
                start = ends[j - 1] if j else 0
                need = apps is not None and name not in body.names
                app_cost = body.app_cost(apps) if need and apps is not None else 0
                room = max_body - body.size - app_cost - (1 if body.metric_bytes else 0)
                # items j..k-1 fit when their bytes, without the last comma, fit in `room`
                k = bisect_right(ends, start + room + 1, j, n)
                if k == j:
                    if body.empty:
                        size = ends[j] - 1 - start
                        if ENVELOPE + size <= max_body:
                            # fits only without its applications: they go in other bodies
                            body.add_metrics(blob[start : ends[j] - 1], 1)
                        else:
                            line = seg.lines[j] or None
                            item = seg.item(j)
                            needed = ENVELOPE + size
                            unsendable.append(
                                Unsendable("metric", seg.file, line, seg.path(j), item, needed)
                            )
                        j += 1
                    else:
                        yield body.body(index)
                        index += 1
                        body = _Open()
                    continue
                if need and apps is not None:
                    body.add_apps(apps, n_apps)
                    body.names.add(name)
                    attached.add(name)
                body.add_metrics(blob[start : ends[k - 1] - 1], k - j)
                j = k
    # applications whose every metric had to go without them: sent once, like the unused ones
    yield from add_alone(
        [item for name in attach if name not in attached for item in applications[name]]
    )
    if not body.empty:
        yield body.body(index)
