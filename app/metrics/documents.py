"""JSON documents: a bulk payload (its applications and metrics streamed list by list), an array
of metric items, or an SDK's client-metrics payload (read whole, made into bulk items).

Why it reads the way it does: a document is never parsed whole. It is read a chunk at a time
(`_Text`); the items of its arrays are found by the `},{` between them
(`app.api.jsonsplit.item_cuts`) and validated a `SLICE` at a time, as NDJSON lines are, or,
where that does not hold (an invalid item, a string holding `},{`), cut one by one by the
standard library's scanner (`raw_decode`). A broken document is one error for its file, and
nothing of that file is loaded (`Broken`, see `sourcefile`).
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated, Any, BinaryIO

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import ErrorDetails

from app.api.jsonsplit import item_cuts
from app.api.models import TimeValue
from app.api.wire import json_path
from app.metrics.items import (
    APPLICATION,
    APPLICATIONS,
    METRICS,
    SLICE,
    describe,
    fast_metrics,
    json_kind,
)
from app.metrics.jsontext import DECODER, TOO_DEEP, WS, may_be_deep, nesting, syntax
from app.metrics.sourcefile import Broken, File, Progress, Where
from app.metrics.split import SDK_TOGGLES, item_path

#: an item of a JSON document longer than this is taken as a syntax error (a string or object
#: never closed), not as a reason to read on
MAX_ITEM = 16 << 20


class _TooDeep(Broken):
    """A value read whole, nested deeper than `MAX_DEPTH`: `buf[start:end]`. A list of items
    leaves that item out; anywhere else it breaks the document."""

    def __init__(self, line: int, column: int, start: int, end: int) -> None:
        super().__init__(line, column, "JSON value " + TOO_DEEP)
        self.start, self.end = start, end


class Restart(Exception):
    """The document turned out to be NDJSON (its first line was longer than `read.HEAD`)."""


class _Text:
    """A JSON document read a chunk at a time: `buf` holds the text from the item being read on;
    `line0` and `col0` are where `buf[0]` is in the file."""

    def __init__(self, stream: BinaryIO, file: File, progress: Progress) -> None:
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
            raise Broken(line, column, f"the file is not UTF-8 text (byte 0x{byte})") from exc
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
            found = WS.match(self.buf, self.pos)
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

    def broken(self, message: str, pos: int | None = None) -> Broken:
        at = self.pos if pos is None else pos
        if at >= len(self.buf) and self.eof:
            message = "the file ends before the JSON document does (" + message + ")"
        line, column = self.where(at)
        return Broken(line, column, "JSON syntax error: " + message)

    def value(self) -> tuple[Any, int, int]:
        """The next JSON value, and where it starts and ends in `buf` (valid until the next
        `fill()`)."""
        self.peek()
        while True:
            start = self.pos
            try:
                value, end = DECODER.raw_decode(self.buf, start)
            except json.JSONDecodeError as exc:
                if self.eof or len(self.buf) - start > MAX_ITEM:
                    message = syntax(exc.msg).removeprefix("JSON syntax error: ")
                    raise self.broken(message, exc.pos) from None
                self.fill()
                continue
            except RecursionError:  # the scanner's own limit (about 1,000 levels)
                line, column = self.where(start)
                raise Broken(line, column, "JSON value " + TOO_DEEP) from None
            if end >= len(self.buf) and not self.eof:  # a number may go on in the next chunk
                self.fill()
                continue
            if may_be_deep(self.buf, start, end):
                _, deep = nesting(self.buf, start)
                if deep >= 0:
                    line, column = self.where(deep)
                    raise _TooDeep(line, column, start, end)
            self.pos = end
            return value, start, end


_ITEM_TOO_DEEP = "the item is " + TOO_DEEP


class _Items:
    """The items of one array of a document, validated a slice at a time."""

    def __init__(self, text: _Text, file: File, kind: str, prefix: str) -> None:
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


def read_document(stream: BinaryIO, file: File, progress: Progress) -> None:
    text = _Text(stream, file, progress)
    char = text.peek()
    if char == "[":
        file.format = "array"
        _Items(text, file, "metric", "").read()
    elif char == "{":
        file.format = "bulk"
        _read_object(text, file)
    elif not char:
        raise Broken(None, None, "the file holds only white space")
    else:
        raise text.broken(
            "expected a JSON document (a bulk payload, an array of metric items or an SDK "
            "payload) or one metric item a line (NDJSON)"
        )
    if text.peek():
        raise text.broken("unexpected text after the JSON document")


def _read_object(text: _Text, file: File) -> None:
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
                    f"{key} must be an array, not {json_kind(other[key])}; it is left out",
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
        raise Restart
    else:
        raise Broken(
            start_line,
            1,
            "this JSON object is neither a bulk payload (applications, metrics) nor an SDK "
            "payload (appName, bucket); NDJSON has one metric item a line",
        )


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


def _read_sdk(file: File, payload: dict[str, Any]) -> None:
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
                    + json_kind(sdk.bucket.toggles[names[k]]),
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
