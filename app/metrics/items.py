"""Validating metric and application items: pydantic's adapters of the wire models, msgspec's
fast path for plain metric items, pydantic's errors as sentences, lone surrogates.

Why it reads the way it does:

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
  payloads) reads it, and then only serialising it fails (`surrogate_problems`).
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, cast

import msgspec
import pydantic_core
from msgspec import UNSET, UnsetType
from pydantic import TypeAdapter
from pydantic_core import ErrorDetails

from app.api.models import BulkApplicationItem, BulkMetricItem, time_value
from app.api.wire import MAX_METRIC_COUNT, MAX_TIME_MS

#: items validated in one call (under a millisecond: the GIL is held throughout, and a GUI
#: thread beside it waits that long for each call it makes into Python)
SLICE = 500

_LIST: Any = list
METRIC: TypeAdapter[dict[str, Any]] = TypeAdapter(BulkMetricItem)
METRICS: TypeAdapter[list[dict[str, Any]]] = TypeAdapter(_LIST[BulkMetricItem])
APPLICATION: TypeAdapter[dict[str, Any]] = TypeAdapter(BulkApplicationItem)
APPLICATIONS: TypeAdapter[list[dict[str, Any]]] = TypeAdapter(_LIST[BulkApplicationItem])
APPLICATION_JSON = APPLICATION.serializer.to_json


_Count = Annotated[int, msgspec.Meta(ge=0, le=MAX_METRIC_COUNT)]
_Millis = Annotated[int, msgspec.Meta(ge=-MAX_TIME_MS, le=MAX_TIME_MS)]


class Metric(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A valid metric item as `sourcefile.File.accept_metrics` keeps it. Read straight from JSON
    by `fast_metrics`, or made from the plain dict pydantic validated (`Metric(**item)`: a field
    left out is UNSET, as it is left out of that dict; `timestamp` may then also be a datetime or
    None).

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
    text = escape_surrogates(text)
    return text if len(text) <= 40 else text[:37] + "..."


#: a UTF-16 surrogate code point: in a str read from JSON, one without its pair (a `"\ud800"`
#: escape, which JSON allows and Unicode text does not)
_SURROGATE = re.compile("[\ud800-\udfff]")


def escape_surrogates(text: str) -> str:
    """`text` with each lone surrogate written as its JSON escape (`\\ud800`): printable, and
    writable as UTF-8."""
    return _SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


def surrogate_problems(item: dict[str, Any]) -> list[tuple[str, str]]:
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
                    f"{field} holds a lone surrogate ({escape_surrogates(found.group())}): "
                    "JSON can write one, but it is not Unicode text and cannot be sent",
                )
            )
    return out


def json_kind(value: Any) -> str:
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
            return f"{_WHAT[kind]} must be a JSON object, not {json_kind(value)}"
        return f"{name} must be an object, not {json_kind(value)}"
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
        return f"{name} must be an array, not {json_kind(value)}"
    if kind_ == "string_too_short":
        return f"{name} must not be empty"
    message = str(error["msg"]).removeprefix("Value error, ")
    return message if kind_ == "value_error" else f"{name}: {message}"
