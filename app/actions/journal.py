"""The journal: every change flagdesk makes on a server (from the window or the command line),
appended to one file per connection, so that a person can always tell what was changed, when, by
whom, and what was there before. Standard library only (and `app.paths`).

    <data>/journal/<connection>/journal.jsonl   the entries, one JSON object a line
    <data>/journal/<connection>/*.csv, *.json   the snapshots the entries name ("before")

They hold names and emails: every file is written with mode 0600 and every folder 0700,
whatever the umask (`private_folder`, `private_fd`; `app.actions.snapshots.write_whole` writes
the snapshots so), and a journal an older flagdesk left readable is made private at its next
write.

`<connection>` is the connection's name made safe for a file name (a profile's name, "Local
sandbox", or the URL the command line was given), so the window and `flagdesk --profile NAME`
write to the same journal. An entry takes two lines with the same `entry` id:

    {"entry": "…", "state": "sent", "time": "…", "connection": "…", "server": "https://…",
     "token": "admin", "user": null, "action": "inactive_users.delete", "ids": [39, 43],
     "before": {"snapshot": "….csv", "count": 2}, "request": {"method": "POST", "path": "…"}}
    {"entry": "…", "state": "done", "time": "…", "status": 200, "message": ""}

A creation's `done` line may add `after`, what the answer made that an undo needs (a personal
access token's id, and its secret's last four characters: never the secret).

The `sent` line is on disk (written and fsync'ed) before the request goes out; the second line
(`done`, `failed` or `in doubt`, with the answer's status and message) is appended once the
answer is known. A process that dies in between leaves the `sent` line alone, and the reader
reports that entry **in doubt**: the server may or may not have made the change; nothing is
ever silently missing. `action` is a key of `app.registry` (`inactive_users.delete`, later the
revive, delete, group, user and context-field actions), so one journal serves them all.

Each line is one `write` on a file opened for appending, under an exclusive `flock`, so two
flagdesks (the window and a command) can write the same journal. A torn last line (a crash in
the middle of a write) is skipped by the reader, and the next line starts on a line of its own.
The writes are short but touch the disk: the coroutine API runs them on a worker thread, so the
GUI's event loop never waits on an fsync.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import secrets
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

from app.paths import data_dir

try:  # POSIX: one writer at a time
    import fcntl
except ImportError:  # pragma: no cover - Windows: appends of one write each do not interleave
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "FILE_MODE",
    "FOLDER_MODE",
    "JOURNAL_FOLDER",
    "JOURNAL_NAME",
    "Actor",
    "Entry",
    "Journal",
    "Pending",
    "State",
    "journal_folder",
    "private_fd",
    "private_folder",
    "read_journal",
]

#: the journals' folder in the data folder, and the file in each connection's folder
JOURNAL_FOLDER = "journal"
JOURNAL_NAME = "journal.jsonl"


class State(StrEnum):
    """Where an entry is. `SENT` is only ever a first line; an entry whose last line is `SENT`
    is read as `IN_DOUBT`."""

    SENT = "sent"
    DONE = "done"
    FAILED = "failed"
    #: no answer that says whether the server made the change (the connection was lost, no
    #: answer in time, or the process died between the request and the answer)
    IN_DOUBT = "in doubt"


def connection_key(name: str) -> str:
    """A connection's name as a folder name: readable, and distinct for distinct names
    ("Local sandbox" -> "local-sandbox-<8 hex digits>")."""
    readable = re.sub(r"[^a-z0-9]+", "-", name.casefold()).strip("-")[:48] or "connection"
    return f"{readable}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"


def journal_folder(connection: str, data: Path | None = None) -> Path:
    """The folder of a connection's journal and snapshots."""
    return (data or data_dir()) / JOURNAL_FOLDER / connection_key(connection)


@dataclass(frozen=True)
class Actor:
    """Who makes the changes, as each entry records it: the connection's name, the server's
    URL, the kind of token (`admin`, `personal`) and the user it acts as, when known."""

    connection: str
    server: str
    token: str | None = None
    user: str | None = None


@dataclass(frozen=True)
class Entry:
    """One change as the journal tells it, with its final state."""

    id: str
    time: datetime
    action: str
    connection: str
    server: str
    token: str | None
    user: str | None
    ids: list[Any]
    before: Any
    request: dict[str, Any] | None
    state: State
    #: the answer's HTTP status; None without an answer
    status: int | None = None
    message: str = ""
    #: when the answer (or its absence) was recorded; None while in doubt
    finished: datetime | None = None
    #: what the answer made, as the entry kept it (a creation's id), or None
    after: Any = None

    @property
    def in_doubt(self) -> bool:
        return self.state is State.IN_DOUBT


class Journal:
    """The journal of one connection; `actor` is written into every entry."""

    def __init__(self, actor: Actor, folder: Path | None = None) -> None:
        self.actor = actor
        self.folder = folder if folder is not None else journal_folder(actor.connection)

    def __repr__(self) -> str:
        return f"Journal({self.path!s})"

    @property
    def path(self) -> Path:
        return self.folder / JOURNAL_NAME

    def new_file(self, action: str, suffix: str) -> Path:
        """A new file's path in the journal's folder for what an action keeps (a snapshot):
        named by the time and the action, never one that exists."""
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H-%M-%S")
        return self.folder / f"{stamp}-{action}-{secrets.token_hex(3)}{suffix}"

    async def begin(
        self,
        action: str,
        ids: Iterable[Any],
        *,
        before: Any = None,
        request: dict[str, Any] | None = None,
    ) -> Pending:
        """Record that `action` is about to be sent for `ids`; returns once the line is on
        disk. Complete it with the returned `Pending`."""
        pending = Pending(self, secrets.token_hex(8))
        record = {
            "entry": pending.entry,
            "state": State.SENT.value,
            "time": _now(),
            "connection": self.actor.connection,
            "server": self.actor.server,
            "token": self.actor.token,
            "user": self.actor.user,
            "action": action,
            "ids": list(ids),
            "before": before,
            "request": request,
        }
        await asyncio.to_thread(append_record, self.path, record)
        return pending

    def entries(self) -> list[Entry]:
        return read_journal(self.path)


class Pending:
    """An entry sent and not completed yet: call one of `done`, `failed`, `in_doubt` once."""

    def __init__(self, journal: Journal, entry: str) -> None:
        self.journal = journal
        self.entry = entry

    async def done(self, status: int | None, message: str = "", *, after: Any = None) -> None:
        """`after`: what the answer made, when the entry keeps it (a creation's id; never a
        secret), written as the line's `after`."""
        await self._finish(State.DONE, status, message, after)

    async def failed(self, status: int | None, message: str) -> None:
        await self._finish(State.FAILED, status, message)

    async def in_doubt(self, status: int | None, message: str) -> None:
        await self._finish(State.IN_DOUBT, status, message)

    async def _finish(
        self, state: State, status: int | None, message: str, after: Any = None
    ) -> None:
        record = {
            "entry": self.entry,
            "state": state.value,
            "time": _now(),
            "status": status,
            "message": message,
        }
        if after is not None:
            record["after"] = after
        await asyncio.to_thread(append_record, self.journal.path, record)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


#: the modes of what the journal writes: readable by its owner alone
FILE_MODE, FOLDER_MODE = 0o600, 0o700


def private_folder(folder: Path) -> None:
    """Make `folder` exist, private (0700 whatever the umask): each folder missing on the way
    is made so (the data folder too, when it is missing), and `folder` itself, and the
    journals' folder above it (`<data>/journal`), are made so when they exist with other
    modes (an older flagdesk's). Folders above them that exist are not the journal's: left
    alone."""
    missing: list[Path] = []
    above = folder
    while not above.is_dir() and above != above.parent:
        missing.append(above)
        above = above.parent
    for made in reversed(missing):
        try:
            made.mkdir(mode=FOLDER_MODE)
        except FileExistsError:  # made meanwhile (another flagdesk): made private below
            continue
        os.chmod(made, FOLDER_MODE)  # mkdir's mode is what the umask leaves of it
    for own in (folder, folder.parent) if folder.parent.name == JOURNAL_FOLDER else (folder,):
        if stat.S_IMODE(own.stat().st_mode) != FOLDER_MODE:
            os.chmod(own, FOLDER_MODE)


def private_fd(fd: int) -> None:
    """Make the open file `fd` private (0600), whatever the umask it was created under or the
    mode an older flagdesk left it with."""
    if hasattr(os, "fchmod") and stat.S_IMODE(os.fstat(fd).st_mode) != FILE_MODE:
        os.fchmod(fd, FILE_MODE)


def append_record(path: Path, record: dict[str, Any]) -> None:
    """Append `record` as one line and fsync it (and, for a new file, its folder). The file and
    its folder are private (`private_folder`, `private_fd`)."""
    data = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
    private_folder(path.parent)
    created = not path.exists()
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, FILE_MODE)
    try:
        private_fd(fd)
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data  # after a torn line: start a line of our own
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)  # releases the lock
    if created:
        _fsync_folder(path.parent)


def _fsync_folder(folder: Path) -> None:
    """So a new file's name survives a crash too (where folders can be opened: POSIX)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - Windows
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - file systems that refuse it
        pass
    finally:
        os.close(fd)


def _records(path: Path) -> Iterator[dict[str, Any]]:
    try:
        with path.open("rb") as f:
            for line in f:
                try:
                    record = json.loads(line)
                except ValueError:  # a torn line (a crash mid-write), or an empty one
                    continue
                if isinstance(record, dict) and isinstance(record.get("entry"), str):
                    yield record
    except FileNotFoundError:
        return


def _time(text: object) -> datetime:
    if isinstance(text, str):
        try:
            return datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            pass
    return datetime.fromtimestamp(0, UTC)


def read_journal(path: Path) -> list[Entry]:
    """The entries of the journal at `path`, oldest first, each with its final state: the
    state of its last line, and `IN_DOUBT` for an entry that was sent and never completed.
    A missing file is an empty journal; torn or foreign lines are skipped."""
    entries: dict[str, Entry] = {}
    for r in _records(path):
        key = r["entry"]
        if r.get("state") == State.SENT.value:
            if key in entries:
                continue
            ids = r.get("ids")
            request = r.get("request")
            entries[key] = Entry(
                id=key,
                time=_time(r.get("time")),
                action=str(r.get("action", "")),
                connection=str(r.get("connection", "")),
                server=str(r.get("server", "")),
                token=r.get("token"),
                user=r.get("user"),
                ids=ids if isinstance(ids, list) else [],
                before=r.get("before"),
                request=request if isinstance(request, dict) else None,
                state=State.IN_DOUBT,
            )
            continue
        sent = entries.get(key)
        try:
            state = State(str(r.get("state")))
        except ValueError:
            continue
        if sent is None or state is State.SENT:
            continue
        status = r.get("status")
        entries[key] = replace(
            sent,
            state=state,
            status=status if isinstance(status, int) else None,
            message=str(r.get("message") or ""),
            finished=_time(r.get("time")),
            after=r.get("after", sent.after),
        )
    return list(entries.values())
