"""Flags made straight in a benchmark's sandbox database: the sandbox, as Unleash, stores no
metrics of a flag it does not know, and the benchmarks upload metrics of their own flags."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from sandbox import db


def known_flags(database: Path, names: Iterable[str], project: str = "default") -> None:
    """Flags named `names` in `project` of the sandbox serving `database` (one transaction;
    those it has already are left as they are)."""
    unique = list(dict.fromkeys(names))
    conn = db.connect(database)
    try:
        with conn:
            conn.executemany(
                "INSERT OR IGNORE INTO features(name, project, type, created_at)"
                " VALUES(?, ?, 'release', 0)",
                [(name, project) for name in unique],
            )
            conn.executemany(
                "INSERT OR IGNORE INTO feature_environments(feature, environment, enabled)"
                " SELECT ?, name, 0 FROM environments",
                [(name,) for name in unique],
            )
    finally:
        conn.close()
