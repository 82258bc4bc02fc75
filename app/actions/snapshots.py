"""Writing what an action keeps of what it changes (its snapshot): a file written whole or not
at all, and times in the wire's notation. Standard library only; called on a worker thread."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

__all__ = ["wire_time", "write_whole"]


def wire_time(value: datetime | None) -> str:
    """A time in the wire's notation ("2025-01-02T03:04:05.006Z"); "" for none."""
    if value is None:
        return ""
    text = value.astimezone(UTC).isoformat(timespec="milliseconds")
    return text.replace("+00:00", "Z")


def write_whole(path: Path, fill: Callable[[TextIO], int]) -> int:
    """Write `path` whole or not at all: `fill` writes the text (returning how many items it
    wrote) into a file beside it, which is fsync'ed, then renamed into place. Returns what
    `fill` returned."""
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(path.name + ".part")
    with part.open("w", newline="", encoding="utf-8") as f:
        count = fill(f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(part, path)
    return count
