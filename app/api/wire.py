"""Small facts and notations of the wire contract that every layer shares: the client, the
sandbox, the metrics tool and the GUI. No imports beyond the standard library."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from urllib.parse import urlsplit

#: The largest body `POST /api/client/metrics/bulk` accepts, in bytes (the spec's limit, and
#: Unleash's: its body parser refuses more with 413).
BULK_METRICS_BODY_LIMIT = 102_400

#: The largest body `POST /api/admin/features-batch/export`, `/validate` and `/import` accept,
#: in bytes: Unleash mounts its JSON parser there with `limit: '500kB'` (express: 500 * 1024;
#: 5.12.8 to 8.2, read in its app.ts) and refuses more with 413. A promote packs its imports
#: within it.
BATCH_BODY_LIMIT = 500 * 1024

#: The largest count (`yes`, `no`, a variant's) a metric item may carry: Unleash 8.2 answers 400
#: above 2^53 - 1 (JavaScript's largest safe integer) on both metrics endpoints.
MAX_METRIC_COUNT = 2**53 - 1

#: How far from the epoch a time given in milliseconds may be, either way: JavaScript's `Date`
#: range, beyond which Unleash 8.2 answers 400 (8,640,000,000,000,000 ms, about 273,790 years).
MAX_TIME_MS = 8_640_000_000_000_000

#: a UTF-16 surrogate code point: in a str read from JSON, a lone one (`"\\ud800"`)
_SURROGATE = re.compile("[\ud800-\udfff]")


def accepted_environment(token_environment: str | None) -> str:
    """The one environment whose metrics a client token's bulk batches are kept for, and the
    one an SDK payload without an `environment` is counted in (Unleash 8.2's
    `resolveUserEnvironment`): the token's (`project:environment.secret`), or `default` for a
    token of every environment (`*`) or of none. Unleash answers 202 to metrics for any other
    environment, and drops them."""
    if token_environment is None or token_environment == "*":
        return "default"
    return token_environment


def key_path(name: str) -> str:
    """A property name as a JSON path step: `.name`, or `["odd name"]` when it needs quoting."""
    if name and all(c.isalnum() or c in "_-" for c in name):
        return "." + name
    # a lone surrogate (read from JSON's "\ud800") as its escape: a path is printed and saved
    quoted = _SURROGATE.sub(
        lambda found: f"\\u{ord(found.group()):04x}", json.dumps(name, ensure_ascii=False)
    )
    return "[" + quoted + "]"


def json_path(loc: Sequence[int | str], *, root: str = "") -> str:
    """A location (pydantic's `loc`, or any sequence of keys and indexes) as a JSON path in the
    one notation flagdesk shows everywhere: `("users", 0, "user", "id")` -> `users[0].user.id`;
    with `root="$"`, `$.users[0].user.id` (the JSONPath form Unleash's error details use).
    Keys that need quoting are written `["odd name"]`."""
    out = root
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            step = key_path(str(part))
            out += step[1:] if (step.startswith(".") and not out) else step
    return out


# ---------------------------------------------------------------- CORS origins (issue 38)

#: the schemes whose URLs have an origin (the WHATWG URL standard's "special" schemes but file)
_ORIGIN_SCHEMES = {"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21}


def valid_origin(origin: str) -> bool:
    """Unleash's `validateOrigin`: "*", or a URL whose origin is the text itself (no path, no
    trailing slash, no user, a lower-case scheme and host, no default port), no other "*"."""
    if origin == "*":
        return True
    if "*" in origin or origin != origin.strip():
        return False
    try:
        parts = urlsplit(origin)
        port = parts.port
    except ValueError:
        return False
    host = parts.hostname
    if parts.scheme not in _ORIGIN_SCHEMES or not host or not host.isascii():
        return False
    if parts.username is not None or parts.password is not None:
        return False
    if port == _ORIGIN_SCHEMES[parts.scheme]:
        return False  # the URL's origin leaves a default port out
    shown_host = f"[{host}]" if ":" in host else host
    rebuilt = f"{parts.scheme}://{shown_host}" + ("" if port is None else f":{port}")
    return rebuilt == origin


def invalid_origins(origins: list[str]) -> str | None:
    """Unleash's `validateOrigins`: the first origin that is not one, as its message."""
    for origin in origins:
        if not valid_origin(origin):
            return f"Invalid origin: {origin}"
    return None
