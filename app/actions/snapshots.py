"""Writing what an action keeps of what it changes (its snapshot): a file written whole or not
at all, private (the journal's modes), and times in the wire's notation. Standard library and
`app.actions.journal` only; called on a worker thread."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from app.actions.journal import FILE_MODE, private_fd, private_folder

__all__ = ["wire_time", "write_whole"]


def wire_time(value: datetime | None) -> str:
    """A time in the wire's notation ("2025-01-02T03:04:05.006Z"); "" for none."""
    if value is None:
        return ""
    text = value.astimezone(UTC).isoformat(timespec="milliseconds")
    return text.replace("+00:00", "Z")


def write_whole(path: Path, fill: Callable[[TextIO], int], *, private: bool = True) -> int:
    """Write `path` whole or not at all: `fill` writes the text (returning how many items it
    wrote) into a file beside it, which is fsync'ed, then renamed into place. Returns what
    `fill` returned.

    Every snapshot is written through here, and is `private` (names, emails): the file 0600 and
    its folder 0700 whatever the umask, as the journal's own (`journal.private_folder`). A file
    the person asked for where they chose (`--csv FILE`) is written with `private=False`: the
    file is 0600 all the same (the same names and emails), but its folder is the person's: it
    is neither made nor changed, and one that does not exist is a `FileNotFoundError` whose
    `strerror` says so ("the folder /x does not exist"), nothing written."""
    part = path.with_name(path.name + ".part")
    if private:
        private_folder(path.parent)
    elif not path.parent.is_dir():
        raise FileNotFoundError(errno.ENOENT, f"the folder {path.parent} does not exist", str(path))
    fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    try:
        private_fd(fd)  # the umask's bits, or a .part an interrupted write left
    except OSError:
        os.close(fd)
        raise
    stream = open(fd, "w", newline="", encoding="utf-8")  # noqa: SIM115 (closed below)
    with stream as f:
        count = fill(f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(part, path)
    return count
