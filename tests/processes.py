"""The processes a test started, read from /proc (Linux): what a window or a bundle left behind."""

from __future__ import annotations

from pathlib import Path


def children_of(pid: int) -> list[int]:
    """The pids whose parent is `pid`."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found
