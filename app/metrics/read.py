"""Reading metrics from files and the clipboard: format detection, validation, warnings and the
preview's sums, item by item.

Why it reads the way it does:

- The GUI runs `load()` on a worker thread, and its event loop must never wait long for the GIL,
  so no single C call may take long: files are read 1 MiB at a time, and items are validated
  500 at a time (under a millisecond a call). NDJSON lines are validated as one JSON array per
  slice; the items of JSON documents (bulk payloads, arrays) are found by the `},{` between
  them and validated the same way, or, where that does not hold (an invalid item, a string
  holding `},{`), cut one by one by the standard library's scanner (`raw_decode`). A document
  is never parsed whole.
- Items are validated against the wire models' fields and constraints (`app.api.models`
  `BulkMetric`, `BulkApplication`) but into plain dicts, not models: pydantic builds those about
  three times faster, and nothing keeps a model per item. Each valid item is serialised once,
  into the compact bytes it will be sent as (see `split`).
- Plain metric items (the wire fields and nothing else, no null) are read by msgspec into
  `Metric` structs and encoded by it (`fast_metrics`): a slice of NDJSON lines 5 to 6 times
  faster than pydantic, which reads every slice msgspec refuses, so problems and their messages
  stay pydantic's, and the items and bytes are the same either way (`test_fast_read.py`).
- A string holding a lone surrogate (`"\\ud800"`: JSON writes it, Unicode has no such text,
  and no UTF-8 body can carry it) leaves its item out with an error naming the field: pydantic
  and msgspec refuse such an item as malformed, the standard library's scanner (documents, SDK
  payloads) reads it, and then only serialising it fails.
- A broken JSON document is one error for its file, and nothing of that file is loaded:
  uploading the part before the error, then the repaired file, would count that part twice. A
  broken NDJSON line is one error; the other lines load.
- Warnings of one kind beyond the first `LISTED` of a file are counted, not listed one by one:
  a file of a million timestamps in seconds gives a hundred warnings and a summary.
- An item nested deeper than `MAX_DEPTH` arrays and objects is left out with one error, in
  every format: that is where pydantic's JSON parser (NDJSON lines, runs of items) stops, and
  the same rule is applied where the standard library's scanner reads. An item so deep that
  the scanner itself gives up (about 1,000 levels) breaks its document like a syntax error.
"""

from __future__ import annotations

import codecs
import io
import json
import re
import threading
import time
from array import array
from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from itertools import accumulate, islice
from operator import itemgetter
from pathlib import Path
from typing import Annotated, Any, BinaryIO, cast

import msgspec
import pydantic_core
from msgspec import UNSET, UnsetType
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError
from pydantic_core import ErrorDetails

from app.api.jsonsplit import item_cuts
from app.api.models import BulkApplicationItem, BulkMetricItem, TimeValue, time_value
from app.api.wire import MAX_METRIC_COUNT, MAX_TIME_MS, json_path
from app.metrics.batch import HOUR_MS, Batch, Cancelled, Format, InputProblem, Source, window_text
from app.metrics.split import SDK_TOGGLES, Segment, item_path

#: bytes read at a time
CHUNK = 1 << 20
#: bytes looked at to tell NDJSON from a JSON document
HEAD = 64 << 10
#: items validated in one call (under a millisecond: the GIL is held throughout, and a GUI
#: thread beside it waits that long for each call it makes into Python)
SLICE = 500
#: an item of a JSON document longer than this is taken as a syntax error (a string or object
#: never closed), not as a reason to read on
MAX_ITEM = 16 << 20
#: warnings of one kind listed one by one per file; the rest are counted in a summary
LISTED = 100
#: a broken document's text is copied into the invalid-items file up to this size
RAW_DOCUMENT = 1 << 20
#: levels of an item: the item is level 1, a value inside an array or object one level below
#: it. pydantic-core's JSON parser refuses deeper ones (tests/metrics/test_read.py checks this
#: is still its limit)
MAX_DEPTH = 201
TOO_DEEP = f"nested too deeply (more than {MAX_DEPTH:,} levels)"
#: 2000-01-01T00:00:00Z in milliseconds
Y2000_MS = 946_684_800_000
Y2000_S = Y2000_MS // 1000

Where = Callable[[int], tuple[int | None, int | None]]


# --------------------------------------------------------------------------- validation


_LIST: Any = list
METRIC: TypeAdapter[dict[str, Any]] = TypeAdapter(BulkMetricItem)
METRICS: TypeAdapter[list[dict[str, Any]]] = TypeAdapter(_LIST[BulkMetricItem])
APPLICATION: TypeAdapter[dict[str, Any]] = TypeAdapter(BulkApplicationItem)
APPLICATIONS: TypeAdapter[list[dict[str, Any]]] = TypeAdapter(_LIST[BulkApplicationItem])
_APPLICATION_JSON = APPLICATION.serializer.to_json


_Count = Annotated[int, msgspec.Meta(ge=0, le=MAX_METRIC_COUNT)]
_Millis = Annotated[int, msgspec.Meta(ge=-MAX_TIME_MS, le=MAX_TIME_MS)]


class Metric(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A valid metric item as `accept_metrics` keeps it. Read straight from JSON by `fast_metrics`,
    or made from the plain dict pydantic validated (`Metric(**item)`: a field left out is UNSET,
    as it is left out of that dict; `timestamp` may then also be a datetime or None).

    As a decoding type it takes only what `METRIC` takes alike, and strictly less (anything else
    fails the decode, and pydantic reads the items): no unknown key (so no value nests deeper
    than a count), no null, no bool or float as a count; a time string is checked by
    `time_value` itself, the validator `METRIC` calls. gc=False: nothing in it refers back."""

    featureName: str
    appName: str
    environment: str
    timestamp: _Millis | str | UnsetType = UNSET
    yes: _Count | UnsetType = UNSET
    no: _Count | UnsetType = UNSET
    variants: dict[str, _Count] | UnsetType = UNSET


_FAST: msgspec.json.Decoder[list[Metric]] = msgspec.json.Decoder(list[Metric], strict=True)
_FAST_JSON = msgspec.json.Encoder().encode
#: time strings -> as pydantic serialises the time they are (None: not a time)
_TIMES: dict[str, str | None] = {}


def _time_text(text: str) -> str | None:
    """A time string as the bytes pydantic sends for it (`to_json` of the datetime
    `time_value` reads from it), None when it is not a time."""
    found = _TIMES.get(text, _TIMES)
    if found is _TIMES:
        try:
            found = str(json.loads(pydantic_core.to_json(time_value(text))))
        except ValueError:
            found = None
        if len(_TIMES) > 10_000:
            _TIMES.clear()
        _TIMES[text] = found
    return cast(str | None, found)


def fast_metrics(doc: bytes | str, n: int) -> tuple[list[Metric], list[bytes]] | None:
    """The `n` metric items of the JSON array `doc`, and the bytes each is sent as, both exactly
    as `METRICS` and `pydantic_core.to_json(item, exclude_none=True)` give them; None unless
    every item is valid and plain (`Metric`) and there are `n`: then pydantic reads `doc`, and
    names each problem. msgspec reads a slice of NDJSON lines 5 to 6 times faster."""
    try:
        items = _FAST.decode(doc)
    except (msgspec.DecodeError, ValueError):  # ValueError: bytes that are not UTF-8
        return None
    if len(items) != n:
        return None
    for item in items:
        stamp = item.timestamp
        if stamp.__class__ is str:
            text = _time_text(cast(str, stamp))
            if text is None:
                return None
            item.timestamp = text
    return items, list(map(_FAST_JSON, items))


class SdkBucket(BaseModel):
    model_config = ConfigDict(extra="ignore")
    start: TimeValue
    stop: TimeValue
    toggles: dict[str, Any]


class SdkPayload(BaseModel):
    """An SDK's client-metrics payload (Unleash's clientMetricsSchema), as far as flagdesk
    converts it to bulk items."""

    model_config = ConfigDict(extra="ignore")
    appName: Annotated[str, Field(min_length=1)]
    instanceId: str | None = None
    environment: str | None = None
    sdkVersion: str | None = None
    bucket: SdkBucket


_REQUIRED = {
    "metric": "featureName, appName and environment",
    "application": "appName, environment and instanceId",
    "sdk": "appName and bucket (with start, stop and toggles)",
}
_WHAT = {"metric": "a metric item", "application": "an application item", "sdk": "an SDK payload"}


def _show(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except ValueError:
        text = repr(value)
    text = _escape_surrogates(text)
    return text if len(text) <= 40 else text[:37] + "..."


#: a UTF-16 surrogate code point: in a str read from JSON, one without its pair (a `"\ud800"`
#: escape, which JSON allows and Unicode text does not)
_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape_surrogates(text: str) -> str:
    """`text` with each lone surrogate written as its JSON escape (`\\ud800`): printable, and
    writable as UTF-8."""
    return _SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


def _surrogate_problems(item: dict[str, Any]) -> list[tuple[str, str]]:
    """(field, message) for each field of a validated item holding a string or a name with a
    lone surrogate. The standard library's scanner reads `"\\ud800"` into such a str, where
    pydantic's and msgspec's parsers refuse the item as malformed JSON: it is not Unicode text,
    and no UTF-8 body can carry it."""
    out = []
    for field, value in item.items():
        found = _SURROGATE.search(json.dumps(value, ensure_ascii=False, default=str))
        if found is not None:
            out.append(
                (
                    field,
                    f"{field} holds a lone surrogate ({_escape_surrogates(found.group())}): "
                    "JSON can write one, but it is not Unicode text and cannot be sent",
                )
            )
    return out


def _json_kind(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return "a number"


def describe(error: ErrorDetails, kind: str) -> str:
    """pydantic's error as a sentence naming the field and what it must be."""
    loc = error["loc"]
    value = error.get("input")
    kind_ = error["type"]
    names = [p for p in loc if isinstance(p, str)]
    if len(names) >= 2 and names[-2] == "variants":
        name = f"the count of variant {names[-1]!r}"
    elif names:
        name = names[-1]
    else:
        name = "the value"
    if kind_ == "missing":
        if len(names) == 1:
            return f"{name} is missing: {_WHAT[kind]} needs {_REQUIRED[kind]}"
        return f"{name} is missing"
    if kind_ in ("dict_type", "model_type", "typed_dict_type", "model_attributes_type"):
        if not names:
            return f"{_WHAT[kind]} must be a JSON object, not {_json_kind(value)}"
        return f"{name} must be an object, not {_json_kind(value)}"
    if kind_ == "string_type":
        return f"{name} must be a string, not {_show(value)}"
    if kind_ in ("int_type", "int_parsing", "int_from_float"):
        return f"{name} must be a whole number, not {_show(value)}"
    if kind_ in ("float_type", "float_parsing"):
        return f"{name} must be a number, not {_show(value)}"
    if kind_ == "finite_number":
        return f"{name} must be a finite number, not {_show(value)}"
    if kind_ == "greater_than_equal":
        return f"{name} must be 0 or more, not {_show(value)}"
    if kind_ == "list_type":
        return f"{name} must be an array, not {_json_kind(value)}"
    if kind_ == "string_too_short":
        return f"{name} must not be empty"
    message = str(error["msg"]).removeprefix("Value error, ")
    return message if kind_ == "value_error" else f"{name}: {message}"


_JSON_MESSAGES = {
    "Expecting value": "expected a JSON value",
    "Expecting ',' delimiter": "expected a comma or a closing bracket",
    "Expecting property name enclosed in double quotes": (
        "expected a property name in double quotes"
    ),
    "Expecting ':' delimiter": "expected ':' after a property name",
    "Unterminated string starting at": "a string is not closed",
    "Invalid control character at": "a control character (a line break, say) inside a string",
    "Invalid \\escape": "an invalid escape in a string",
    "Invalid \\uXXXX escape": "an invalid \\u escape in a string",
    "Extra data": "unexpected text after the JSON value",
}
_AT = re.compile(r" at line (\d+) column (\d+)$")


def _syntax(message: str) -> str:
    return "JSON syntax error: " + _JSON_MESSAGES.get(message, message[:1].lower() + message[1:])


#: NaN and Infinity are read as numbers (as pydantic's parser does) and then refused by the
#: item's validation, the same way in every format
_DECODER = json.JSONDecoder()
_WS = re.compile(r"[ \t\n\r]*")
#: between two objects of an array: a candidate item boundary (see `_Items._run`)


#: what `_nesting` looks at: brackets and the quotes that start strings
_NESTING = re.compile(r'[\[\]{}"]')
#: the rest of a string after its opening quote
_STRING_REST = re.compile(r'(?:[^"\\]|\\.)*"', re.DOTALL)


def _nesting(text: str, pos: int) -> tuple[int, int]:
    """Scan the array or object starting at `text[pos]` without recursion: where it ends (just
    after its closing bracket; -1 when the text ends first) and where its nesting first goes
    beyond `MAX_DEPTH` (the position of the bracket opening the array or object whose contents
    are too deep; -1 when none is). An array or object at level n holding anything puts that
    one level below, as pydantic-core counts."""
    depth = 0
    deep = -1
    at = pos
    while True:
        found = _NESTING.search(text, at)
        if found is None:
            return -1, deep
        char = found.group()
        at = found.end()
        if char == '"':
            rest = _STRING_REST.match(text, at)
            if rest is None:
                return -1, deep
            at = rest.end()
        elif char in "[{":
            depth += 1
            if depth >= MAX_DEPTH and deep < 0:
                inside = _WS.match(text, at)
                empty = inside is not None and text[inside.end() : inside.end() + 1] in ("]", "}")
                if depth + (0 if empty else 1) > MAX_DEPTH:
                    deep = found.start()
        else:
            depth -= 1
            if depth <= 0:
                return at, deep


def _may_be_deep(text: str | bytes, start: int, end: int) -> bool:
    """Cheaply: whether `text[start:end]` holds enough brackets to be nested too deeply."""
    if end - start < MAX_DEPTH:
        return False
    if isinstance(text, bytes):
        return text.count(b"[", start, end) + text.count(b"{", start, end) >= MAX_DEPTH
    return text.count("[", start, end) + text.count("{", start, end) >= MAX_DEPTH


def _line_syntax(line: bytes) -> tuple[int | None, str]:
    """Column and message of the syntax error in an NDJSON line pydantic found not JSON."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        column = len(line[: exc.start].decode("utf-8", "replace")) + 1
        return column, "the line is not UTF-8 text"
    if _may_be_deep(line, 0, len(line)):
        _, deep = _nesting(text, 0)
        if deep >= 0:
            return deep + 1, "the item is " + TOO_DEEP
    try:
        _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":
            return exc.colno, "unexpected text after the item (NDJSON has one item a line)"
        return exc.colno, _syntax(exc.msg)
    except RecursionError:
        return None, "the item is " + TOO_DEEP
    value = json.loads(text)
    if isinstance(value, dict):
        for _, message in _surrogate_problems(value)[:1]:
            return None, message
    return None, "JSON syntax error"


class _Broken(Exception):
    """A JSON document that cannot be read on: one error for its file."""

    def __init__(self, line: int | None, column: int | None, message: str) -> None:
        super().__init__(message)
        self.line, self.column, self.message = line, column, message


class _TooDeep(_Broken):
    """A value read whole, nested deeper than `MAX_DEPTH`: `buf[start:end]`. A list of items
    leaves that item out; anywhere else it breaks the document."""

    def __init__(self, line: int, column: int, start: int, end: int) -> None:
        super().__init__(line, column, "JSON value " + TOO_DEEP)
        self.start, self.end = start, end


class _Restart(Exception):
    """The document turned out to be NDJSON (its first line was longer than HEAD)."""


# --------------------------------------------------------------------------- progress


class _Progress:
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


# --------------------------------------------------------------------------- one file


_PLUS_1 = (1).__add__


def _one(k: int) -> Callable[[Sequence[Any]], tuple[Any, ...]]:
    """`itemgetter(k)`, but giving a tuple of one, as `itemgetter(k, j)` gives one of two."""
    return lambda values: (values[k],)


#: distinct unrounded times kept in `_File.windows`: a file of them does not grow it without end
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


class _File:
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
        """`item` (at `root`) left out for its lone surrogates (`_surrogate_problems`): an
        error per field; saved as `raw`, or else as itself with the surrogates escaped."""
        if raw is None:
            raw = _escape_surrogates(json.dumps(item, ensure_ascii=False, default=str))
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
            problems = _surrogate_problems(item)
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
            unsendable = _surrogate_problems(item)
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
                saved = _APPLICATION_JSON(item, exclude_none=True).decode("utf-8")
                self.invalid.append({"file": self.name, "line": line, "column": column,
                                     "problems": [{"path": where_path, "message": message}],
                                     "raw": saved})  # fmt: skip
                continue
            self.applications.append(
                (item["appName"], _APPLICATION_JSON(item, exclude_none=True), line, path)
            )

    # ---------------------------------------------------------------- the end

    def broken(self, error: _Broken, raw: str | None) -> None:
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
        batch._problems.extend(self.problems)
        batch._invalid.extend(self.invalid)
        for app, group in self.groups.items():
            batch._groups.setdefault(app, []).append(group.segment(self.name))
        seen = {data for items in batch._applications.values() for data, *_ in items}
        for app, data, line, path in self.applications:
            if data not in seen:
                seen.add(data)
                batch._applications.setdefault(app, []).append((data, self.name, line, path))
        environments: dict[str, int] = {}
        features: dict[str, int] = {}
        for key, slot in self.sums.items():
            total = batch._sums.get(key)
            if total is None:
                batch._sums[key] = list(slot)
            else:
                for i in range(4):
                    total[i] += slot[i]
            environments[key[2]] = environments.get(key[2], 0) + slot[0]
            features[key[0]] = features.get(key[0], 0) + slot[0]
        for variant, n in self.variants.items():
            batch._variants[variant] = batch._variants.get(variant, 0) + n
        batch._environments.append(environments)
        batch._features.append(features)
        batch.metric_count += self.metrics
        batch.invalid_count += len(self.invalid)
        batch.sources.append(
            Source(
                self.name,
                self.format,
                self.metrics,
                len(self.applications),
                len(self.invalid),
                self.size,
                zero=self.zero,
            )
        )
        batch._totals = None


# --------------------------------------------------------------------------- NDJSON


#: white space but the line break (bytes.strip's)
_SPACES = (b" ", b"\t", b"\r", b"\x0b", b"\x0c")


def _tidy(data: bytes, lines: list[bytes]) -> bool:
    """Whether no line of `data` (cut into `lines`) is blank or has white space around it, so
    that they need no `strip()`: a few scans at memchr speed, instead of a Python loop over
    every line (a file with spaces between tokens takes the loop)."""
    return not any(space in data for space in _SPACES) and b"" not in lines


def _read_ndjson(stream: BinaryIO, file: _File, progress: _Progress) -> None:
    """One metric item a line; blank lines are skipped. Each SLICE of lines is validated in one
    call; a slice with a broken line is validated line by line."""
    line_no = 0
    index = 0
    parts: list[bytes] = []
    first = True
    while True:
        chunk = progress.read(stream)
        file.size += len(chunk)
        if first:
            chunk = chunk.removeprefix(codecs.BOM_UTF8)
            first = False
        if chunk:
            cut = chunk.rfind(b"\n")
            if cut < 0:
                parts.append(chunk)
                continue
            parts.append(chunk[:cut])
            data = b"".join(parts)
            parts = [chunk[cut + 1 :]]
        else:
            data = b"".join(parts)
            parts = []
        lines = data.split(b"\n")
        numbers: Sequence[int]
        if _tidy(data, lines):
            numbers = range(line_no + 1, line_no + 1 + len(lines))
            line_no += len(lines)
        else:
            kept: list[bytes] = []
            numbers = []
            for line in lines:
                line_no += 1
                line = line.strip()
                if line:
                    kept.append(line)
                    numbers.append(line_no)
            lines = kept
        for at in range(0, len(lines), SLICE):
            _ndjson_lines(file, lines[at : at + SLICE], numbers[at : at + SLICE], index + at)
        index += len(lines)
        if not chunk:
            return


def _ndjson_lines(file: _File, lines: Sequence[bytes], numbers: Sequence[int], first: int) -> None:
    n = len(lines)
    indexes = range(first, first + n)
    # "\n," rather than ",": a line that leaves a string open cannot swallow the next one
    doc = b"[" + b"\n,".join(lines) + b"]"
    fast = fast_metrics(doc, n)
    if fast is not None:
        file.accept_metrics(*fast, indexes, lambda k: (numbers[k], None), numbers, "")
        return
    try:
        items = METRICS.validate_json(doc)
    except ValidationError as exc:
        errors = exc.errors()
        if all(err["type"] != "json_invalid" and err["loc"] for err in errors):
            bad: dict[int, list[ErrorDetails]] = {}
            for err in errors:
                bad.setdefault(int(err["loc"][0]), []).append(err)
            keep = [k for k in range(n) if k not in bad]
            try:
                good = METRICS.validate_json(b"[" + b"\n,".join(lines[k] for k in keep) + b"]")
            except ValidationError:
                good = []
            # the same count: the errors' indexes were lines (no line held two items)
            if max(bad) < n and len(good) == len(keep):
                for k in sorted(bad):
                    raw = lines[k].decode("utf-8", "replace")
                    file.reject("metric", item_path("", indexes[k]), numbers[k], None, bad[k], raw)
                kept_numbers = [numbers[k] for k in keep]
                file.accept_dicts(
                    good,
                    [indexes[k] for k in keep],
                    lambda k: (kept_numbers[k], None),
                    kept_numbers,
                    "",
                )
                return
    else:
        if len(items) == n:
            file.accept_dicts(items, indexes, lambda k: (numbers[k], None), numbers, "")
            return
    _ndjson_one_by_one(file, lines, numbers, indexes)


def _ndjson_one_by_one(
    file: _File, lines: Sequence[bytes], numbers: Sequence[int], indexes: Sequence[int]
) -> None:
    good: list[dict[str, Any]] = []
    good_indexes: list[int] = []
    good_numbers: list[int] = []
    for k, line in enumerate(lines):
        try:
            item = METRIC.validate_json(line)
        except ValidationError as exc:
            errors = exc.errors()
            raw = line.decode("utf-8", "replace")
            if errors[0]["type"] == "json_invalid":
                column, message = _line_syntax(line)
                if column is None:
                    found = _AT.search(str(errors[0].get("ctx", {}).get("error", "")))
                    column = int(found.group(2)) if found else None
                file.reject_syntax(numbers[k], column, item_path("", indexes[k]), message, raw)
            else:
                file.reject(
                    "metric", item_path("", indexes[k]), numbers[k], None, errors, raw, skip=0
                )
            continue
        good.append(item)
        good_indexes.append(indexes[k])
        good_numbers.append(numbers[k])
    file.accept_dicts(good, good_indexes, lambda k: (good_numbers[k], None), good_numbers, "")


# --------------------------------------------------------------------------- JSON documents


class _Text:
    """A JSON document read a chunk at a time: `buf` holds the text from the item being read on;
    `line0` and `col0` are where `buf[0]` is in the file."""

    def __init__(self, stream: BinaryIO, file: _File, progress: _Progress) -> None:
        self.stream, self.file, self.progress = stream, file, progress
        self.decoder = codecs.getincrementaldecoder("utf-8")("strict")
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.line0 = 1
        self.col0 = 1
        self._cursor = (0, 1, 1)  # a position in buf and its line and column
        self.on_refill: Callable[[], None] = lambda: None
        self.first = True
        #: `fill()` calls so far: `buf` is a new text after each
        self.fills = 0

    def fill(self) -> bool:
        """Read on, dropping what is before `pos`; False at the end of the file."""
        if self.eof:
            return False
        self.on_refill()
        data = self.progress.read(self.stream)
        self.file.size += len(data)
        if self.first:
            data = data.removeprefix(codecs.BOM_UTF8)
            self.first = False
        try:
            text = self.decoder.decode(data, final=not data)
        except UnicodeDecodeError as exc:
            self.buf += data[: exc.start].decode("utf-8", "replace")
            line, column = self.where(len(self.buf))
            byte = data[exc.start : exc.start + 1].hex()
            raise _Broken(line, column, f"the file is not UTF-8 text (byte 0x{byte})") from exc
        if not data:
            self.eof = True
        line, column = self.where(self.pos)
        self.buf = self.buf[self.pos :] + text
        self.pos = 0
        self.fills += 1
        self.line0, self.col0 = line, column
        self._cursor = (0, line, column)
        return True

    def where(self, pos: int) -> tuple[int, int]:
        """Line and column (1-based) of `buf[pos]`; cheap for positions in increasing order."""
        at, line, column = self._cursor
        if pos < at:
            at, line, column = 0, self.line0, self.col0
        newlines = self.buf.count("\n", at, pos)
        if newlines:
            line += newlines
            column = pos - self.buf.rfind("\n", at, pos)
        else:
            column += pos - at
        self._cursor = (pos, line, column)
        return line, column

    def peek(self) -> str:
        """The next character that is not white space ("" at the end), with `pos` on it."""
        while True:
            found = _WS.match(self.buf, self.pos)
            assert found is not None
            self.pos = found.end()
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self.fill():
                return ""

    def expect(self, char: str, message: str) -> None:
        if self.peek() != char:
            raise self.broken(message)
        self.pos += 1

    def broken(self, message: str, pos: int | None = None) -> _Broken:
        at = self.pos if pos is None else pos
        if at >= len(self.buf) and self.eof:
            message = "the file ends before the JSON document does (" + message + ")"
        line, column = self.where(at)
        return _Broken(line, column, "JSON syntax error: " + message)

    def value(self) -> tuple[Any, int, int]:
        """The next JSON value, and where it starts and ends in `buf` (valid until the next
        `fill()`)."""
        self.peek()
        while True:
            start = self.pos
            try:
                value, end = _DECODER.raw_decode(self.buf, start)
            except json.JSONDecodeError as exc:
                if self.eof or len(self.buf) - start > MAX_ITEM:
                    message = _syntax(exc.msg).removeprefix("JSON syntax error: ")
                    raise self.broken(message, exc.pos) from None
                self.fill()
                continue
            except RecursionError:  # the scanner's own limit (about 1,000 levels)
                line, column = self.where(start)
                raise _Broken(line, column, "JSON value " + TOO_DEEP) from None
            if end >= len(self.buf) and not self.eof:  # a number may go on in the next chunk
                self.fill()
                continue
            if _may_be_deep(self.buf, start, end):
                _, deep = _nesting(self.buf, start)
                if deep >= 0:
                    line, column = self.where(deep)
                    raise _TooDeep(line, column, start, end)
            self.pos = end
            return value, start, end


_ITEM_TOO_DEEP = "the item is " + TOO_DEEP


class _Items:
    """The items of one array of a document, validated a slice at a time."""

    def __init__(self, text: _Text, file: _File, kind: str, prefix: str) -> None:
        self.text, self.file, self.kind, self.prefix = text, file, kind, prefix
        self.values: list[Any] = []
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.indexes: list[int] = []
        #: no fast run before this index (a run failed, so its items are read one by one)
        self.slow_until = 0
        #: no fast run while the buffer is this one: its rest holds no item boundary
        self.barren = -1

    def read(self) -> None:
        text = self.text
        text.pos += 1  # the "["
        text.on_refill = self.flush
        index = 0
        try:
            while True:
                char = text.peek()
                if char == "]":
                    text.pos += 1
                    break
                if index:
                    if char != ",":
                        raise text.broken("expected a comma or ']' after an item")
                    text.pos += 1
                    char = text.peek()
                    if char == "]":
                        raise text.broken("a comma before ']' (a trailing comma is not JSON)")
                if not char:
                    raise text.broken("the list is not closed")
                if (
                    self.kind == "metric"
                    and index >= self.slow_until
                    and self.barren != text.fills
                    and text.peek() == "{"
                ):
                    taken = self._run(index)
                    if taken:
                        index += taken
                        continue
                try:
                    value, start, end = text.value()
                except _TooDeep as deep:
                    path = item_path(self.prefix, index)
                    raw = text.buf[deep.start : deep.end]
                    self.file.reject_syntax(deep.line, deep.column, path, _ITEM_TOO_DEEP, raw)
                    text.pos = deep.end
                    index += 1
                    continue
                self.values.append(value)
                self.starts.append(start)
                self.ends.append(end)
                self.indexes.append(index)
                index += 1
                if len(self.values) >= SLICE:
                    self.flush()
                    self.text.progress.check()
            self.flush()
        finally:
            text.on_refill = lambda: None

    def _run(self, index: int) -> int:
        """Validate the metric items from `text.pos` to the last item boundary in the buffer
        in one call, as if they were NDJSON lines; returns how many were taken (0: read them
        one by one). Twice as fast as the scanner: items are found by the `},{` between them,
        and a `},{` inside a string shows as a count that does not match, or as items that are
        not valid, so a run is only taken when its items are exactly the document's."""
        text = self.text
        buf = text.buf
        starts = [text.pos]
        ends: list[int] = []
        for end, start in item_cuts(buf, text.pos):
            ends.append(end)
            starts.append(start)
            if len(ends) >= SLICE:
                break
        starts.pop()
        if not ends:  # the last item of the buffer: read it (and read on) one by one
            self.barren = text.fills
            return 0
        doc = "[" + ",".join([buf[s:e] for s, e in zip(starts, ends, strict=True)]) + "]"
        indexes = range(index, index + len(ends))

        def where(k: int) -> tuple[int | None, int | None]:
            return text.where(starts[k])

        fast = fast_metrics(doc, len(ends))
        if fast is not None:
            self.file.accept_metrics(*fast, indexes, where, None, self.prefix)
            text.pos = ends[-1]
            return len(ends)
        try:
            items = METRICS.validate_json(doc)
        except ValidationError:
            items = []
        if len(items) != len(ends):
            self.slow_until = index + len(ends)
            return 0
        self.file.accept_dicts(items, indexes, where, None, self.prefix)
        text.pos = ends[-1]
        return len(ends)

    def flush(self) -> None:
        if not self.values:
            return
        values, starts, ends, indexes = self.values, self.starts, self.ends, self.indexes
        self.values, self.starts, self.ends, self.indexes = [], [], [], []
        adapter = METRICS if self.kind == "metric" else APPLICATIONS
        text, file = self.text, self.file
        try:
            items = adapter.validate_python(values)
        except ValidationError as exc:
            bad: dict[int, list[ErrorDetails]] = {}
            for err in exc.errors():
                bad.setdefault(int(err["loc"][0]), []).append(err)
            for k in sorted(bad):
                line, column = text.where(starts[k])
                file.reject(
                    self.kind,
                    item_path(self.prefix, indexes[k]),
                    line,
                    column,
                    bad[k],
                    text.buf[starts[k] : ends[k]],
                )
            keep = [k for k in range(len(values)) if k not in bad]
            items = adapter.validate_python([values[k] for k in keep])
            starts = [starts[k] for k in keep]
            ends = [ends[k] for k in keep]
            indexes = [indexes[k] for k in keep]

        def where(k: int) -> tuple[int | None, int | None]:
            return text.where(starts[k])

        def raw(k: int) -> str:
            return text.buf[starts[k] : ends[k]]

        if self.kind == "metric":
            file.accept_dicts(items, indexes, where, None, self.prefix, raw)
        else:
            paths = [item_path(self.prefix, i) for i in indexes]
            file.accept_applications(items, paths, where, raw)


def _read_document(stream: BinaryIO, file: _File, progress: _Progress) -> None:
    text = _Text(stream, file, progress)
    char = text.peek()
    if char == "[":
        file.format = "array"
        _Items(text, file, "metric", "").read()
    elif char == "{":
        file.format = "bulk"
        _read_object(text, file)
    elif not char:
        raise _Broken(None, None, "the file holds only white space")
    else:
        raise text.broken(
            "expected a JSON document (a bulk payload, an array of metric items or an SDK "
            "payload) or one metric item a line (NDJSON)"
        )
    if text.peek():
        raise text.broken("unexpected text after the JSON document")


def _read_object(text: _Text, file: _File) -> None:
    """A bulk payload, streamed list by list, or an SDK payload, read whole."""
    start_line, _ = text.where(text.pos)
    text.pos += 1
    other: dict[str, Any] = {}
    lines: dict[str, int] = {}
    streamed: set[str] = set()
    first = True
    while True:
        char = text.peek()
        if char == "}":
            text.pos += 1
            break
        if not first:
            if char != ",":
                raise text.broken("expected a comma or '}' after a property")
            text.pos += 1
            char = text.peek()
        first = False
        if char != '"':
            raise text.broken("expected a property name in double quotes")
        line, _ = text.where(text.pos)
        key, _, _ = text.value()
        lines[key] = line
        text.expect(":", "expected ':' after a property name")
        if key in ("applications", "metrics") and text.peek() == "[":
            streamed.add(key)
            _Items(text, file, "metric" if key == "metrics" else "application", key).read()
        else:
            other[key], _, _ = text.value()
    end_line, _ = text.where(text.pos)
    if streamed or "applications" in other or "metrics" in other:
        for key in ("applications", "metrics"):
            if key not in other and key not in streamed:  # the spec requires both
                file.error(
                    start_line,
                    None,
                    json_path((key,)),
                    f"{key} is missing: a bulk payload needs both applications and metrics "
                    "(arrays; the spec requires both, an empty one is fine)",
                )
            elif key in other:
                file.error(
                    lines[key],
                    None,
                    key,
                    f"{key} must be an array, not {_json_kind(other[key])}; it is left out",
                )
        for key in other.keys() - {"applications", "metrics"}:
            file.warn(
                "ignored",
                lines[key],
                None,
                key,
                f"{key} is not sent: flagdesk sends the applications and metrics of a bulk payload",
            )
    elif "bucket" in other or ("appName" in other and "featureName" not in other):
        file.format = "sdk"
        _read_sdk(file, other)
    elif "featureName" in other and end_line == start_line:
        raise _Restart
    else:
        raise _Broken(
            start_line,
            1,
            "this JSON object is neither a bulk payload (applications, metrics) nor an SDK "
            "payload (appName, bucket); NDJSON has one metric item a line",
        )


def _read_sdk(file: _File, payload: dict[str, Any]) -> None:
    """An SDK's client-metrics payload: one metric item per toggle (timestamp: bucket.start),
    and one application item (started: bucket.start, interval: stop - start in seconds)."""
    raw = json.dumps(payload, ensure_ascii=False)
    try:
        sdk = SdkPayload.model_validate(payload)
    except ValidationError as exc:
        listed = []
        for err in exc.errors():
            path = json_path(err["loc"]) or None
            message = describe(err, "sdk")
            file.error(None, None, path, message)
            listed.append({"path": path, "message": message})
        file.invalid.append(
            {"file": file.name, "line": None, "column": None, "problems": listed, "raw": raw}
        )
        return
    none: Where = lambda k: (None, None)  # noqa: E731
    environment = sdk.environment
    if environment is None:
        # where Unleash counts the SDK's own post: the client token's environment
        environment = file.batch.sdk_environment
        file.warn(
            "defaulted",
            None,
            None,
            "environment",
            "the payload names no environment: its metrics and application are sent for "
            f"environment {environment!r}"
            + (" (the client token's)" if environment != "default" else ""),
        )
    instance = sdk.instanceId
    if instance is None:
        instance = sdk.appName
        file.warn(
            "defaulted",
            None,
            None,
            "instanceId",
            f"the payload names no instanceId: the application is sent as instance {instance!r}",
        )
    bucket = payload["bucket"]
    start_ms = _ms(sdk.bucket.start)
    seconds = (_ms(sdk.bucket.stop) - start_ms) / 1000
    if seconds <= 0:
        file.warn(
            "defaulted",
            None,
            None,
            "bucket.stop",
            "bucket.stop is not after bucket.start: the application is sent with interval 0",
        )
        seconds = 0
    application: dict[str, Any] = {
        "appName": sdk.appName,
        "instanceId": instance,
        "environment": environment,
        "started": bucket["start"],
        "interval": int(seconds) if seconds == int(seconds) else seconds,
        # the SDK registers its strategies elsewhere; Unleash 5.12 answers 400 to an
        # application item without the list (later versions default it)
        "strategies": [],
    }
    if sdk.sdkVersion is not None:
        application["sdkVersion"] = sdk.sdkVersion
    file.accept_applications([APPLICATION.validate_python(application)], [""], none)

    names = list(sdk.bucket.toggles)
    values: list[Any] = []
    for name in names:
        toggle = sdk.bucket.toggles[name]
        if isinstance(toggle, dict):
            item = {k: toggle[k] for k in ("yes", "no", "variants") if k in toggle}
            item.update(
                featureName=name,
                appName=sdk.appName,
                environment=environment,
                timestamp=bucket["start"],
            )
            values.append(item)
        else:
            values.append(toggle)
    bad: dict[int, list[ErrorDetails]] = {}
    try:
        items = METRICS.validate_python(values)
        keep = list(range(len(values)))
    except ValidationError as exc:
        for err in exc.errors():
            bad.setdefault(int(err["loc"][0]), []).append(err)
        for k in sorted(bad):
            path = item_path(SDK_TOGGLES, k, names[k])
            toggle_raw = json.dumps({names[k]: sdk.bucket.toggles[names[k]]}, ensure_ascii=False)
            if not isinstance(sdk.bucket.toggles[names[k]], dict):
                file.reject_syntax(
                    None,
                    None,
                    path,
                    "a toggle must be an object with yes, no and variants, not "
                    + _json_kind(sdk.bucket.toggles[names[k]]),
                    toggle_raw,
                )
            else:
                file.reject("metric", path, None, None, bad[k], toggle_raw)
        keep = [k for k in range(len(values)) if k not in bad]
        items = METRICS.validate_python([values[k] for k in keep])
    file.accept_dicts(items, keep, none, None, SDK_TOGGLES)


def _ms(moment: datetime | int) -> int:
    if isinstance(moment, int):
        return moment
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


# --------------------------------------------------------------------------- detection


def _json_object(line: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _is_ndjson(head: bytes, complete: bool) -> bool:
    """Whether a file starting with `head` holds one metric item a line rather than one JSON
    document. `complete`: `head` is the whole file."""
    head = head.removeprefix(codecs.BOM_UTF8)
    start = head.lstrip()[:1]
    if start in (b"[", b""):
        return False
    lines = head.split(b"\n")
    if not complete:
        lines.pop()  # may be cut
    filled = [line.strip() for line in lines if line.strip()][:6]
    if not filled:
        return False
    first = _json_object(filled[0])
    if first is not None:
        if {"applications", "metrics", "bucket"} & first.keys():
            return False
        # one object on one line: an SDK payload without its bucket, or one metric item
        alone = complete and len(filled) == 1
        return not (alone and "appName" in first and "featureName" not in first)
    if filled[0] == b"{":
        return False  # a pretty-printed document
    # a broken first line: NDJSON when the next lines are metric items on their own
    others = [_json_object(line) for line in filled[1:]]
    return sum(o is not None for o in others) * 2 > len(others) > 0


# --------------------------------------------------------------------------- entry points


def _read_source(
    batch: Batch, stream: BinaryIO, name: str, progress: _Progress, now_ms: int
) -> None:
    head = stream.read(HEAD)
    complete = len(head) < HEAD
    stream.seek(0)
    if not head.strip():
        batch._problems.append(
            InputProblem(
                "error",
                name,
                None,
                None,
                None,
                "the file is empty" if not head else "the file holds only white space",
            )
        )
        progress.done += len(head)
        return
    start = progress.done
    file = _File(batch, name, now_ms)
    if not _is_ndjson(head, complete):
        try:
            _read_document(stream, file, progress)
        except _Broken as exc:
            raw = None
            stream.seek(0, io.SEEK_END)
            if stream.tell() <= RAW_DOCUMENT or name == "<clipboard>":
                stream.seek(0)
                raw = stream.read()
            file.broken(exc, raw.decode("utf-8", "replace") if raw is not None else None)
            file.finish()
            return
        except _Restart:
            stream.seek(0)
            progress.done = start
            file = _File(batch, name, now_ms)
        else:
            file.finish()
            return
    _read_ndjson(stream, file, progress)
    file.finish()


def load(
    paths: Sequence[Path | str],
    *,
    progress: Callable[[int, int], None] | None = None,
    cancel: threading.Event | None = None,
    environment: str = "default",
) -> Batch:
    """Read, detect, validate and sum the metrics of `paths` into one batch.

    `progress(bytes_done, bytes_total)` is called after each chunk read (about every MiB);
    `cancel` is checked as often, and when set `Cancelled` is raised. A file that cannot be
    read is an error problem, not an exception. Blocking: run it off the GUI thread.

    `environment`: the one SDK payloads that name none are sent for; give the client token's
    (`app.api.wire.accepted_environment`), where Unleash counts the SDK's own posts."""
    batch = Batch()
    batch.sdk_environment = environment
    sizes = []
    for path in paths:
        try:
            sizes.append(Path(path).stat().st_size)
        except OSError:
            sizes.append(0)
    counter = _Progress(sum(sizes), progress, cancel)
    now = int(time.time() * 1000)
    for path in paths:
        name = str(path)
        counter.check()
        try:
            stream = open(path, "rb")  # noqa: SIM115 (closed below)
        except OSError as exc:
            reason = exc.strerror or str(exc)
            batch._problems.append(
                InputProblem("error", name, None, None, None, f"the file cannot be read: {reason}")
            )
            continue
        with stream:
            try:
                _read_source(batch, stream, name, counter, now)
            except OSError as exc:
                reason = exc.strerror or str(exc)
                batch._problems.append(
                    InputProblem(
                        "error", name, None, None, None, f"the file cannot be read: {reason}"
                    )
                )
    counter.finish()
    return batch


def load_text(text: str, name: str = "<clipboard>", environment: str = "default") -> Batch:
    """`load()` for text pasted from the clipboard."""
    data = text.encode("utf-8")
    batch = Batch()
    batch.sdk_environment = environment
    counter = _Progress(len(data), None, None)
    _read_source(batch, io.BytesIO(data), name, counter, int(time.time() * 1000))
    return batch
