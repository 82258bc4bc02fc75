"""JSON text as the standard library's scanner reads it: its syntax errors as sentences, and how
deeply an item nests. Standard library only.

Why it reads the way it does: an item nested deeper than `MAX_DEPTH` arrays and objects is left
out with one error, in every format: that is where pydantic's JSON parser (NDJSON lines, runs of
items) stops, and the same rule is applied where the standard library's scanner reads
(`nesting`). An item so deep that the scanner itself gives up (about 1,000 levels) breaks its
document like a syntax error.
"""

from __future__ import annotations

import json
import re

#: levels of an item: the item is level 1, a value inside an array or object one level below
#: it. pydantic-core's JSON parser refuses deeper ones (tests/metrics/test_read.py checks this
#: is still its limit)
MAX_DEPTH = 201
TOO_DEEP = f"nested too deeply (more than {MAX_DEPTH:,} levels)"


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


def syntax(message: str) -> str:
    return "JSON syntax error: " + _JSON_MESSAGES.get(message, message[:1].lower() + message[1:])


#: NaN and Infinity are read as numbers (as pydantic's parser does) and then refused by the
#: item's validation, the same way in every format
DECODER = json.JSONDecoder()
WS = re.compile(r"[ \t\n\r]*")


#: what `nesting` looks at: brackets and the quotes that start strings
_NESTING = re.compile(r'[\[\]{}"]')
#: the rest of a string after its opening quote
_STRING_REST = re.compile(r'(?:[^"\\]|\\.)*"', re.DOTALL)


def nesting(text: str, pos: int) -> tuple[int, int]:
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
                inside = WS.match(text, at)
                empty = inside is not None and text[inside.end() : inside.end() + 1] in ("]", "}")
                if depth + (0 if empty else 1) > MAX_DEPTH:
                    deep = found.start()
        else:
            depth -= 1
            if depth <= 0:
                return at, deep


def may_be_deep(text: str | bytes, start: int, end: int) -> bool:
    """Cheaply: whether `text[start:end]` holds enough brackets to be nested too deeply."""
    if end - start < MAX_DEPTH:
        return False
    if isinstance(text, bytes):
        return text.count(b"[", start, end) + text.count(b"{", start, end) >= MAX_DEPTH
    return text.count("[", start, end) + text.count("{", start, end) >= MAX_DEPTH
