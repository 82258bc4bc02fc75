"""NDJSON: one metric item a line; blank lines are skipped.

Why it reads the way it does:

- A `SLICE` of lines is validated as one JSON array, in one call (msgspec's `fast_metrics`,
  else pydantic); a slice with a broken line is validated line by line.
- A broken line is one error; the other lines load.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Sequence
from typing import Any, BinaryIO

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from app.metrics.items import METRIC, METRICS, SLICE, fast_metrics, surrogate_problems
from app.metrics.jsontext import DECODER, TOO_DEEP, may_be_deep, nesting, syntax
from app.metrics.sourcefile import File, Progress
from app.metrics.split import item_path

#: where pydantic's message of a JSON syntax error says it is
_AT = re.compile(r" at line (\d+) column (\d+)$")


#: white space but the line break (bytes.strip's)
_SPACES = (b" ", b"\t", b"\r", b"\x0b", b"\x0c")


def _tidy(data: bytes, lines: list[bytes]) -> bool:
    """Whether no line of `data` (cut into `lines`) is blank or has white space around it, so
    that they need no `strip()`: a few scans at memchr speed, instead of a Python loop over
    every line (a file with spaces between tokens takes the loop)."""
    return not any(space in data for space in _SPACES) and b"" not in lines


def read_ndjson(stream: BinaryIO, file: File, progress: Progress) -> None:
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


def _ndjson_lines(file: File, lines: Sequence[bytes], numbers: Sequence[int], first: int) -> None:
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
    file: File, lines: Sequence[bytes], numbers: Sequence[int], indexes: Sequence[int]
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


def _line_syntax(line: bytes) -> tuple[int | None, str]:
    """Column and message of the syntax error in an NDJSON line pydantic found not JSON."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        column = len(line[: exc.start].decode("utf-8", "replace")) + 1
        return column, "the line is not UTF-8 text"
    if may_be_deep(line, 0, len(line)):
        _, deep = nesting(text, 0)
        if deep >= 0:
            return deep + 1, "the item is " + TOO_DEEP
    try:
        DECODER.decode(text)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":
            return exc.colno, "unexpected text after the item (NDJSON has one item a line)"
        return exc.colno, syntax(exc.msg)
    except RecursionError:
        return None, "the item is " + TOO_DEEP
    value = json.loads(text)
    if isinstance(value, dict):
        for _, message in surrogate_problems(value)[:1]:
            return None, message
    return None, "JSON syntax error"
