"""What one source (a file, or the clipboard's text) adds to a batch (`File`), and the bytes read
across all of them (`Progress`: progress and cancel).

Why it reads the way it does:

- A source's valid items, sums, warnings and invalid items are kept in its `File`, and merged
  into the batch by `File.finish()` once the source is read. A broken JSON document is one
  error for its file (`Broken`, `File.broken()`), and nothing of that file is loaded:
  uploading the part before the error, then the repaired file, would count that part twice.
- Warnings of one kind beyond the first `LISTED` of a file are counted, not listed one by one:
  a file of a million timestamps in seconds gives a hundred warnings and a summary.
- `File.accept_metrics` is the hot loop of loading: one pass over the items, a preview's sums
  gathered as they go, their bytes kept grouped by application for `split`.
"""

from __future__ import annotations

import json
import threading
from array import array
from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from itertools import accumulate, islice
from operator import itemgetter, mul
from typing import Any, BinaryIO
from zlib import crc32

import pydantic_core
from msgspec import UNSET
from pydantic_core import ErrorDetails

from app.api.models import time_value
from app.api.wire import json_path
from app.metrics.batch import HOUR_MS, Batch, Cancelled, Format, InputProblem, Source, window_text
from app.metrics.items import (
    APPLICATION_JSON,
    Metric,
    describe,
    escape_surrogates,
    surrogate_problems,
)
from app.metrics.split import Segment, item_path

#: bytes read at a time
CHUNK = 1 << 20
#: warnings of one kind listed one by one per file; the rest are counted in a summary
LISTED = 100
#: 2000-01-01T00:00:00Z in milliseconds
Y2000_MS = 946_684_800_000
Y2000_S = Y2000_MS // 1000

Where = Callable[[int], tuple[int | None, int | None]]


class Broken(Exception):
    """A JSON document that cannot be read on: one error for its file."""

    def __init__(self, line: int | None, column: int | None, message: str) -> None:
        super().__init__(message)
        self.line, self.column, self.message = line, column, message


class Progress:
    """Bytes read across all sources; calls `progress` about every CHUNK and checks `cancel`."""

    def __init__(
        self,
        total: int,
        progress: Callable[[int, int], None] | None,
        cancel: threading.Event | None,
    ) -> None:
        self.total, self.progress, self.cancel = total, progress, cancel
        self.done = 0

    def check(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise Cancelled("loading was cancelled")

    def read(self, stream: BinaryIO, n: int = CHUNK) -> bytes:
        self.check()
        data = stream.read(n)
        self.done += len(data)
        if data and self.progress is not None:
            self.progress(self.done, max(self.total, self.done))
        return data

    def finish(self) -> None:
        if self.progress is not None:
            self.progress(self.done, max(self.total, self.done))


_PLUS_1 = (1).__add__


def _one(k: int) -> Callable[[Sequence[Any]], tuple[Any, ...]]:
    """`itemgetter(k)`, but giving a tuple of one, as `itemgetter(k, j)` gives one of two."""
    return lambda values: (values[k],)


#: distinct unrounded times kept in `File.windows`: a file of them does not grow it without end
WINDOWS_KEPT = 100_000


class _Group:
    """The valid metric items of one application read from one file so far: what its `Segment`
    will hold, kept as one joined piece per call of `accept_metrics` and put together once, by
    `segment()`. (A bytearray grown a slice at a time is copied again each time it outgrows its
    room: 7% of loading a million metrics.)"""

    __slots__ = ("ends", "indexes", "lines", "pieces", "prefix", "size")

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.pieces: list[bytes] = []
        #: bytes of the pieces, a comma after each
        self.size = 0
        self.ends: array[int] = array("Q")
        self.lines: array[int] = array("I")
        self.indexes: array[int] = array("I")

    def add(
        self, datas: Sequence[bytes], indexes: Sequence[int], lines: Sequence[int] | None
    ) -> None:
        ends = self.ends
        ends.extend(islice(accumulate(map(_PLUS_1, map(len, datas)), initial=self.size), 1, None))
        self.size = ends[-1]
        self.pieces.append(b",".join(datas))
        self.indexes.extend(indexes)
        if lines is None:
            self.lines.frombytes(bytes(self.lines.itemsize * len(datas)))
        else:
            self.lines.extend(lines)

    def segment(self, file: str) -> Segment:
        self.pieces.append(b"")  # the comma after the last item
        blob = b",".join(self.pieces)
        self.pieces = []
        return Segment(file, self.prefix, blob, self.ends, self.lines, self.indexes)


class File:
    """What one source adds to the batch; merged in by `finish()` once the source is read, so
    that a broken document can leave the batch untouched."""

    def __init__(self, batch: Batch, name: str, now_ms: int) -> None:
        self.batch, self.name, self.now_ms = batch, name, now_ms
        self.format: Format = "ndjson"
        self.size = 0
        self.groups: dict[str, _Group] = {}
        self.applications: list[tuple[str, bytes, int | None, str]] = []
        self.sums: dict[tuple[str, str, str, int | None], list[int]] = {}
        self.variants: dict[str, int] = {}
        self.problems: list[InputProblem] = []
        self.invalid: list[dict[str, Any]] = []
        self.metrics = 0
        #: the sums of the CRC-32 of the valid metric items' bytes and of its square (the
        #: batch's key, `app.metrics.identity`)
        self.crc_sum = 0
        self.crc_squares = 0
        #: metric items with yes and no both 0 (Unleash drops them)
        self.zero = 0
        self.listed: dict[str, int] = {}
        self.unlisted: dict[str, int] = {}
        # timestamp as given -> window start; and what is odd about it, for the odd ones only
        self.windows: dict[Any, int | None] = {None: None, UNSET: None}
        self.odd: dict[Any, str] = {}

    # ---------------------------------------------------------------- problems

    def error(self, line: int | None, column: int | None, path: str | None, message: str) -> None:
        self.problems.append(InputProblem("error", self.name, line, column, path, message))

    def warn(
        self, kind: str, line: int | None, column: int | None, path: str | None, message: str
    ) -> None:
        listed = self.listed.get(kind, 0)
        if listed < LISTED:
            self.listed[kind] = listed + 1
            self.problems.append(InputProblem("warning", self.name, line, column, path, message))
        else:
            self.unlisted[kind] = self.unlisted.get(kind, 0) + 1

    def reject(
        self,
        kind: str,
        base: str,
        line: int | None,
        column: int | None,
        errors: Sequence[ErrorDetails],
        raw: str | None,
        skip: int = 1,
    ) -> None:
        """An item left out: one error per problem, and the item kept for `write_invalid`.
        `base` is the item's path; the first `skip` parts of each error's location name the
        item in the list it was validated in."""
        listed = []
        for err in errors:
            path = json_path(err["loc"][skip:], root=base) or None
            message = describe(err, kind)
            self.error(line, column, path, message)
            listed.append({"path": path, "message": message})
        self.invalid.append(
            {"file": self.name, "line": line, "column": column, "problems": listed, "raw": raw}
        )

    def reject_syntax(
        self,
        line: int | None,
        column: int | None,
        path: str | None,
        message: str,
        raw: str | None,
    ) -> None:
        self.reject_problems(line, column, [(path, message)], raw)

    def reject_problems(
        self,
        line: int | None,
        column: int | None,
        problems: Sequence[tuple[str | None, str]],
        raw: str | None,
    ) -> None:
        """An item left out for the problems given as (path, message)."""
        for path, message in problems:
            self.error(line, column, path, message)
        self.invalid.append(
            {
                "file": self.name,
                "line": line,
                "column": column,
                "problems": [{"path": path, "message": message} for path, message in problems],
                "raw": raw,
            }
        )

    def reject_surrogates(
        self,
        where: tuple[int | None, int | None],
        root: str,
        problems: Sequence[tuple[str, str]],
        item: dict[str, Any],
        raw: str | None,
    ) -> None:
        """`item` (at `root`) left out for its lone surrogates (`surrogate_problems`): an
        error per field; saved as `raw`, or else as itself with the surrogates escaped."""
        if raw is None:
            raw = escape_surrogates(json.dumps(item, ensure_ascii=False, default=str))
        self.reject_problems(
            *where, [(json_path((field,), root=root), message) for field, message in problems], raw
        )

    # ---------------------------------------------------------------- valid items

    def accept_dicts(
        self,
        items: list[dict[str, Any]],
        indexes: Sequence[int],
        where: Where,
        lines: Sequence[int] | None,
        prefix: str,
        raw: Callable[[int], str] | None = None,
    ) -> None:
        """`accept_metrics` for the plain dicts pydantic validated. An item that cannot be
        serialised (a lone surrogate, read by the standard library's scanner) is left out with
        an error per field; `raw(k)` is item k's text for the invalid items."""
        to_json = pydantic_core.to_json  # the items hold only JSON types and datetimes
        try:
            datas = [to_json(item, exclude_none=True) for item in items]
        except pydantic_core.PydanticSerializationError:
            keep = self._reject_unsendable(items, indexes, where, prefix, raw)
            self.accept_dicts(
                [items[k] for k in keep],
                [indexes[k] for k in keep],
                lambda j: where(keep[j]),
                None if lines is None else [lines[k] for k in keep],
                prefix,
            )
            return
        metrics = [Metric(**item) for item in items]
        self.accept_metrics(metrics, datas, indexes, where, lines, prefix)

    def _reject_unsendable(
        self,
        items: list[dict[str, Any]],
        indexes: Sequence[int],
        where: Where,
        prefix: str,
        raw: Callable[[int], str] | None,
    ) -> list[int]:
        """Leave out the metric items holding a lone surrogate (an error per field); the
        positions of the others."""
        keep = []
        for k, item in enumerate(items):
            problems = surrogate_problems(item)
            if not problems:
                pydantic_core.to_json(item)  # nothing else may fail: if it does, say so
                keep.append(k)
                continue
            base = item_path(prefix, indexes[k], item.get("featureName", ""))
            self.reject_surrogates(
                where(k), base, problems, item, raw(k) if raw is not None else None
            )
        return keep

    def accept_metrics(
        self,
        items: Sequence[Metric],
        datas: Sequence[bytes],
        indexes: Sequence[int],
        where: Where,
        lines: Sequence[int] | None,
        prefix: str,
    ) -> None:
        """Keep valid metric items: their bytes (`datas`, grouped by application), their sums,
        and the warnings about them. The hot loop of loading: keep it lean (one pass, the
        attributes read in the loop, where the interpreter reads a struct's field cheapest)."""
        sums = self.sums
        get = sums.get
        windows = self.windows
        odd = self.odd
        variant_sums = self.variants
        by_app: defaultdict[str, list[int]] = defaultdict(list)
        flagged: list[tuple[int, str]] = []
        for k, item in enumerate(items):
            app = item.appName
            by_app[app].append(k)
            stamp = item.timestamp
            try:
                window = windows[stamp]
            except KeyError:
                window = self._add_window(stamp)
                windows, odd = self.windows, self.odd  # new ones when the cache started afresh
            yes = item.yes or 0  # UNSET: left out, 0
            no = item.no or 0
            key = (item.featureName, app, item.environment, window)
            slot = get(key)
            if slot is None:
                slot = sums[key] = [1, yes, no, 0]
            else:
                slot[0] += 1
                slot[1] += yes
                slot[2] += no
            variants = item.variants
            if variants:
                counts = 0
                for variant, n in variants.items():
                    counts += n
                    variant_sums[variant] = variant_sums.get(variant, 0) + n
                slot[3] += counts
            if not (yes or no):
                flagged.append((k, ""))
            if odd and stamp in odd:
                flagged.append((k, odd[stamp]))
        crcs = list(map(crc32, datas))
        self.crc_sum += sum(crcs)
        self.crc_squares += sum(map(mul, crcs, crcs))
        if len(by_app) == 1:
            for app in by_app:
                self._group(app, prefix).add(datas, indexes, lines)
        else:
            # picking out of a range computes each number with the generic arithmetic: out of
            # a list it is a read
            indexes = list(indexes) if isinstance(indexes, range) else indexes
            lines = list(lines) if isinstance(lines, range) else lines
            for app, ks in by_app.items():
                pick = itemgetter(*ks) if len(ks) > 1 else _one(ks[0])
                picked = None if lines is None else pick(lines)
                self._group(app, prefix).add(pick(datas), pick(indexes), picked)
        for k, why in flagged:
            path = item_path(prefix, indexes[k], items[k].featureName)
            if why:
                self._warn_item("time", where, k, path + ".timestamp", why)
            else:
                message = "yes and no are both 0: Unleash answers 202 and drops this metric"
                self._warn_item("zero", where, k, path, message)
                self.zero += 1
        self.metrics += len(items)

    def _group(self, app: str, prefix: str) -> _Group:
        group = self.groups.get(app)
        if group is None:
            group = self.groups[app] = _Group(prefix)
        return group

    def _warn_item(self, kind: str, where: Where, k: int, path: str, message: str) -> None:
        if self.listed.get(kind, 0) < LISTED:
            line, column = where(k)
            self.warn(kind, line, column, path, message)
        else:
            self.unlisted[kind] = self.unlisted.get(kind, 0) + 1

    def _add_window(self, stamp: Any) -> int | None:
        """Put a timestamp not yet seen in `windows` (and in `odd` when odd); its window."""
        if len(self.windows) >= WINDOWS_KEPT:  # distinct unrounded times
            self.windows = {None: None, UNSET: None}
            self.odd = {}
        window, odd = self._window(stamp)
        self.windows[stamp] = window
        if odd:
            self.odd[stamp] = odd
        return window

    def _window(self, stamp: Any) -> tuple[int | None, str]:
        """The hour window of a timestamp as given, and what is odd about it ("" if nothing)."""
        if isinstance(stamp, int):
            ms = stamp
        else:
            # a datetime, or a time string `fast_metrics` read (and checked)
            moment = stamp if isinstance(stamp, datetime) else time_value(stamp)
            assert isinstance(moment, datetime)
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=UTC)
            ms = int(moment.timestamp() * 1000)
        window = ms - ms % HOUR_MS
        odd = ""
        if ms < Y2000_MS:
            if isinstance(stamp, int) and Y2000_S <= stamp <= self.now_ms // 1000 + 3600:
                odd = (
                    f"timestamp {stamp} looks like seconds; milliseconds were meant? "
                    f"As milliseconds it is {window_text(ms)}, as seconds "
                    f"{window_text(stamp * 1000)}"
                )
            else:
                odd = f"timestamp {window_text(ms)} is before 2000"
        elif ms > self.now_ms + HOUR_MS:
            if isinstance(stamp, int) and Y2000_MS <= stamp // 1000 <= self.now_ms + HOUR_MS:
                odd = (
                    f"timestamp {stamp} looks like microseconds; milliseconds were meant? "
                    f"As microseconds it is {window_text(stamp // 1000)}"
                )
            else:
                odd = f"timestamp {window_text(ms)} is in the future (more than an hour ahead)"
        return window, odd

    def accept_applications(
        self,
        items: list[dict[str, Any]],
        paths: Sequence[str],
        where: Where,
        raw: Callable[[int], str] | None = None,
    ) -> None:
        """Keep each application item, but one lacking `started` or `interval` (a frontend
        SDK's, `sdkType` "frontend" with an `sdkVersion`, needs neither): Unleash 8.2 answers
        400 to a body holding such an item *after* storing the body's metrics, so sending it
        would count metrics the upload reports as refused. It is left out (an error, saved
        with the invalid items); the metrics are sent without it."""
        for k, item in enumerate(items):
            path = paths[k]
            line, column = where(k)
            unsendable = surrogate_problems(item)
            if unsendable:
                self.reject_surrogates(
                    (line, column), path, unsendable, item, raw(k) if raw is not None else None
                )
                continue
            frontend = item.get("sdkType") == "frontend" and item.get("sdkVersion") is not None
            missing = [f for f in ("started", "interval") if item.get(f) is None]
            if missing and not frontend:
                message = (
                    f"application {item['appName']!r} has no {' and no '.join(missing)}: "
                    "Unleash 8.2 answers 400 to a body holding it (and still counts the body's "
                    "metrics); the item is left out, its metrics are sent; give both started "
                    "and interval to send it"
                )
                where_path = f"{path}.{missing[0]}" if path else missing[0]
                self.error(line, column, where_path, message)
                saved = APPLICATION_JSON(item, exclude_none=True).decode("utf-8")
                self.invalid.append({"file": self.name, "line": line, "column": column,
                                     "problems": [{"path": where_path, "message": message}],
                                     "raw": saved})  # fmt: skip
                continue
            self.applications.append(
                (item["appName"], APPLICATION_JSON(item, exclude_none=True), line, path)
            )

    # ---------------------------------------------------------------- the end

    def broken(self, error: Broken, raw: str | None) -> None:
        """The document cannot be read: drop everything of this file but this one error."""
        self.groups.clear()
        self.applications.clear()
        self.sums.clear()
        self.variants.clear()
        self.problems.clear()
        self.invalid.clear()
        self.listed.clear()
        self.unlisted.clear()
        self.metrics = 0
        self.crc_sum = self.crc_squares = 0
        self.reject_syntax(
            error.line, error.column, None, error.message + "; nothing of this file is loaded", raw
        )

    def finish(self) -> None:
        batch = self.batch
        names = {
            "zero": "metrics with yes and no both 0",
            "time": "metrics with odd timestamps",
            "ignored": "keys not sent",
            "defaulted": "defaults taken",
        }
        for kind, n in self.unlisted.items():
            self.problems.append(
                InputProblem(
                    "warning",
                    self.name,
                    None,
                    None,
                    None,
                    f"{n:,} more {names.get(kind, kind)} (only the first {LISTED} are listed)",
                )
            )
        self.problems.sort(key=lambda p: (p.line is None, p.line or 0))
        batch.add_source(
            Source(
                self.name,
                self.format,
                self.metrics,
                len(self.applications),
                len(self.invalid),
                self.size,
                zero=self.zero,
            ),
            problems=self.problems,
            invalid=self.invalid,
            segments={app: group.segment(self.name) for app, group in self.groups.items()},
            applications=self.applications,
            sums=self.sums,
            variants=self.variants,
            crc=(self.crc_sum, self.crc_squares),
        )
