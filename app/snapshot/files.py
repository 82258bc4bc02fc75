"""A snapshot's file: `load(path)` reads and checks one, `save(snapshot, path)` writes one.

Loading says what is wrong and where, as `SnapshotFileError`: the file, the JSON path
(`$.flags[3].environments[0].strategies[1].parameters`) and the problem ("not JSON: Expecting
',' delimiter (line 4, column 7)", "schemaVersion 2: this flagdesk reads schema version 1",
"field required", "looks like a token's secret"). Saving writes the whole file or nothing (a
`.part` file beside it, fsync'ed, renamed into place), private: 0600 whatever the umask, as the
journal's files are (`app.actions.journal`; this package sits below the actions, so it does the
same few steps itself rather than import theirs). Neither ever holds a secret: a document with
a text shaped like a token is refused both ways."""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from app.snapshot.model import SCHEMA_VERSIONS, Snapshot, repeated_key, secrets_in

__all__ = [
    "FILE_MODE", "SnapshotFileError", "default_name", "dump", "load", "parse", "save",
    "write_private",
]  # fmt: skip

#: a snapshot file's mode: it names people and their access
FILE_MODE = 0o600


class SnapshotFileError(Exception):
    """A snapshot file that cannot be read or written: which file, where in it, what."""

    def __init__(self, path: Path | str, where: str, problem: str) -> None:
        self.path = str(path)
        self.where = where
        self.problem = problem
        at = f" at {where}" if where else ""
        super().__init__(f"{self.path}{at}: {problem}")


def json_path(location: tuple[int | str, ...]) -> str:
    """A pydantic error's location as a JSON path: `$.flags[3].name`."""
    text = "$"
    for part in location:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


def parse(document: Any, path: Path | str = "<snapshot>") -> Snapshot:
    """A snapshot from a decoded JSON `document`, checked: its schema version first (one this
    flagdesk reads), then that it holds no secret, its shape, and that each thing is named once
    (`repeated_key`: the comparison matches by these names)."""
    if not isinstance(document, dict):
        raise SnapshotFileError(
            path, "$", f"a snapshot is a JSON object, not {type(document).__name__}"
        )
    readable = ", ".join(str(v) for v in SCHEMA_VERSIONS)
    if "schemaVersion" not in document:
        raise SnapshotFileError(path, "$.schemaVersion",
                                f"missing: is this a flagdesk snapshot? (this flagdesk reads "
                                f"schema version {readable})")  # fmt: skip
    version = document["schemaVersion"]
    if isinstance(version, bool) or version not in SCHEMA_VERSIONS:
        raise SnapshotFileError(path, "$.schemaVersion",
                                f"schema version {json.dumps(version)} is not one this flagdesk "
                                f"reads (it reads {readable})")  # fmt: skip
    found = secrets_in(document)
    if found:
        raise SnapshotFileError(path, found[0], "looks like a token's secret: a snapshot never "
                                "holds one")  # fmt: skip
    try:
        snapshot = Snapshot.model_validate(document)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        first = errors[0]
        more = f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""
        problem = first["msg"]
        if first["type"] == "extra_forbidden":
            problem = "unknown field"
        elif first["type"] == "missing":
            problem = "missing field"
        raise SnapshotFileError(path, json_path(first["loc"]), f"{problem}{more}") from None
    repeated = repeated_key(snapshot)
    if repeated:
        raise SnapshotFileError(path, *repeated)
    return snapshot


def load(path: Path | str) -> Snapshot:
    """Read the snapshot file at `path`; every failure a `SnapshotFileError`."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SnapshotFileError(path, "", "no such file") from None
    except UnicodeDecodeError as exc:
        raise SnapshotFileError(path, "", f"not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise SnapshotFileError(path, "", exc.strerror or str(exc)) from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SnapshotFileError(path, "", f"not JSON: {exc.msg} (line {exc.lineno}, column "
                                f"{exc.colno})") from None  # fmt: skip
    return parse(document, path)


def dump(snapshot: Snapshot) -> dict[str, Any]:
    """The snapshot as its JSON document (what `save` writes): every field, by its wire name,
    times in ISO 8601."""
    return snapshot.model_dump(mode="json")


def save(snapshot: Snapshot, path: Path | str) -> None:
    """Write `snapshot` to `path` whole or not at all, mode 0600. A document holding a text
    shaped like a token is refused (`SnapshotFileError`), nothing written."""
    target = Path(path)
    document = dump(snapshot)
    found = secrets_in(document)
    if found:
        raise SnapshotFileError(target, found[0], "looks like a token's secret: a snapshot never "
                                "holds one, nothing was written")  # fmt: skip
    write_private(target, json.dumps(document, indent=2, ensure_ascii=False) + "\n")


def write_private(path: Path, text: str) -> None:
    """Write `text` to `path` whole or not at all (a `.part` file beside it, fsync'ed, renamed
    into place), mode 0600 whatever the umask; a failure is a `SnapshotFileError`. What a
    comparison's Markdown is written with too: it names people."""
    data = text.encode("utf-8")
    part = path.with_name(path.name + ".part")
    try:
        fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
        try:
            os.fchmod(fd, FILE_MODE)  # the umask's bits, or a .part an interrupted write left
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(part, path)
    except OSError as exc:
        raise SnapshotFileError(path, "", exc.strerror or str(exc)) from None


# issue 37, slice 5: one default file name for `flagdesk snapshot` and File > Save snapshot…


def default_name(where: str, now: datetime) -> str:
    """`flagdesk-snapshot-<where>-<UTC time>.json`, `where` reduced to safe characters."""
    safe = re.sub(r"[^A-Za-z0-9._-]+|\.{2,}", "-", re.sub(r"^[a-z]+://", "", where))
    safe = re.sub(r"-{2,}", "-", safe).strip("-.")
    return f"flagdesk-snapshot-{safe or 'server'}-{now.astimezone(UTC):%Y%m%d-%H%M%S}.json"
