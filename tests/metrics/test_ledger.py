"""The ledger on disk: the copy of the bodies, the journal's replay, a torn last line, a damaged
copy, the lock, what a killed process leaves behind, the rejected items' file, a `sent` line
durable only once fsynced (and a full disk failing every line waiting), and a cancelled
creation leaving nothing."""

from __future__ import annotations

import asyncio
import errno
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import app.metrics.ledger as ledger_module
from app.metrics import Cancelled
from app.metrics.ledger import (
    BODIES_NAME,
    LEDGER_NAME,
    Counts,
    Ledger,
    LedgerBusy,
    LedgerError,
    State,
    uploads_dir,
)

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True, slots=True)
class FakeBody:
    index: int
    data: bytes
    metrics: int
    applications: int


def bodies(n: int = 5) -> list[FakeBody]:
    out = []
    for i in range(n):
        metrics = [{"featureName": f"f{i}", "appName": "a", "environment": "development",
                    "yes": i + 1, "no": 1}] * (i + 1)  # fmt: skip
        data = json.dumps({"applications": [], "metrics": metrics}).encode()
        out.append(FakeBody(i, data, i + 1, 0))
    return out


def test_create_keeps_the_exact_bytes_and_opens_again(tmp_path: Path) -> None:
    made = bodies()
    with Ledger.create(made, folder=tmp_path / "up", server="http://x:1", max_body=1000,
                       sources=[{"file": "a.json"}], note={"invalid": 2}) as ledger:  # fmt: skip
        assert [ledger.body(b.index) for b in made] == [b.data for b in made]
        assert ledger.total == Counts(5, 15)
        assert ledger.counts(State.PENDING) == Counts(5, 15)
    again = Ledger.open(tmp_path / "up", write=False)
    assert again.server == "http://x:1" and again.max_body == 1000
    assert again.sources == [{"file": "a.json"}] and again.note == {"invalid": 2}
    assert [again.body(b.index) for b in made] == [b.data for b in made]
    assert [e.state for e in again.entries] == [State.PENDING] * 5
    # the copy is the bodies one after the other, a newline after each
    assert (tmp_path / "up" / BODIES_NAME).read_bytes() == b"".join(b.data + b"\n" for b in made)


def test_states_replay_from_the_journal(tmp_path: Path) -> None:
    with Ledger.create(bodies(), folder=tmp_path) as ledger:
        ledger.mark_sent(0)
        ledger.mark_accepted(0)
        ledger.mark_sent(1)
        ledger.mark_rejected(1, 400, "bad yes", ["metrics[0].yes: must be >= 0"])
        ledger.mark_sent(2)
        ledger.mark_retry(2, "503 Service Unavailable")
        ledger.mark_sent(3)
        ledger.mark_lost(3, "connection lost")
        ledger.mark_sent(3)
        ledger.mark_accepted(3)
        ledger.mark_sent(4)  # in flight when the process "ended"
        ledger.sync()
    opened = Ledger.open(tmp_path, write=False)
    states = [(e.state, e.attempts, e.unanswered) for e in opened.entries]
    assert states == [
        (State.ACCEPTED, 1, 0),
        (State.REJECTED, 1, 0),
        (State.PENDING, 1, 0),
        (State.ACCEPTED, 2, 1),  # accepted, but the first attempt may have counted too
        (State.SENT, 1, 1),  # no answer ever came: in doubt
    ]
    rejected = opened.entry(1)
    assert (rejected.status, rejected.message, rejected.details) == (
        400,
        "bad yes",
        ["metrics[0].yes: must be >= 0"],
    )
    assert [e.index for e in opened.unfinished()] == [2, 4]
    assert [e.index for e in opened.entries if e.in_doubt] == [3, 4]


def test_a_torn_last_line_is_ignored_and_cut_off(tmp_path: Path) -> None:
    with Ledger.create(bodies(), folder=tmp_path) as ledger:
        ledger.mark_sent(0)
        ledger.mark_accepted(0)
    journal = tmp_path / LEDGER_NAME
    good = journal.read_bytes()
    with open(journal, "ab") as f:
        f.write(b'{"i":1,"e":"acc')  # the process died in the middle of this write
    opened = Ledger.open(tmp_path)
    assert opened.entry(0).state is State.ACCEPTED
    assert opened.entry(1).state is State.PENDING
    assert journal.read_bytes() == good  # cut off before anything is appended
    opened.mark_sent(1)
    opened.mark_accepted(1)
    opened.close()
    assert Ledger.open(tmp_path, write=False).entry(1).state is State.ACCEPTED


def test_a_complete_but_garbled_last_line_counts_as_torn(tmp_path: Path) -> None:
    with Ledger.create(bodies(), folder=tmp_path) as ledger:
        ledger.mark_sent(0)
    with open(tmp_path / LEDGER_NAME, "ab") as f:
        f.write(b"\x00\x00\x00\n")  # a file system that extended the file but lost the data
    opened = Ledger.open(tmp_path, write=False)
    assert opened.entry(0).state is State.SENT


def test_a_damaged_line_in_the_middle_is_an_error_naming_it(tmp_path: Path) -> None:
    with Ledger.create(bodies(), folder=tmp_path) as ledger:
        ledger.mark_sent(0)
        ledger.mark_accepted(0)
    journal = tmp_path / LEDGER_NAME
    lines = journal.read_bytes().split(b"\n")
    lines[1] = b"garbage"
    journal.write_bytes(b"\n".join(lines))
    with pytest.raises(LedgerError, match=rf"{LEDGER_NAME}:2: not a ledger record"):
        Ledger.open(tmp_path)


def test_not_a_ledger(tmp_path: Path) -> None:
    (tmp_path / LEDGER_NAME).write_text('{"hello": 1}\n')
    with pytest.raises(LedgerError, match="not a flagdesk metrics ledger"):
        Ledger.open(tmp_path)
    with pytest.raises(LedgerError, match="no such ledger"):
        Ledger.open(tmp_path / "nowhere")


def test_a_damaged_copy_is_never_sent(tmp_path: Path) -> None:
    made = bodies()
    Ledger.create(made, folder=tmp_path).close()
    copy = tmp_path / BODIES_NAME
    data = bytearray(copy.read_bytes())
    data[len(made[0].data) + 5] ^= 0x20  # one bit of body 1
    copy.write_bytes(bytes(data))
    opened = Ledger.open(tmp_path, write=False)
    assert opened.body(0) == made[0].data
    with pytest.raises(LedgerError, match="body 1 is damaged"):
        opened.body(1)


def test_a_folder_with_a_ledger_is_not_reused(tmp_path: Path) -> None:
    Ledger.create(bodies(), folder=tmp_path).close()
    with pytest.raises(LedgerError, match="already holds a ledger"):
        Ledger.create(bodies(), folder=tmp_path)


def test_one_writer_at_a_time(tmp_path: Path) -> None:
    first = Ledger.create(bodies(), folder=tmp_path)
    with pytest.raises(LedgerBusy, match="another flagdesk is uploading"):
        Ledger.open(tmp_path)
    Ledger.open(tmp_path, write=False)  # reading is fine
    first.close()
    Ledger.open(tmp_path).close()  # released


def test_read_only_ledger_refuses_changes(tmp_path: Path) -> None:
    Ledger.create(bodies(), folder=tmp_path).close()
    with pytest.raises(LedgerError, match="read-only"):
        Ledger.open(tmp_path, write=False).mark_sent(0)


def test_rejected_items_are_saved_with_the_servers_message(tmp_path: Path) -> None:
    made = bodies()
    with Ledger.create(made, folder=tmp_path) as ledger:
        assert ledger.write_rejected() is None
        assert not (tmp_path / "rejected.json").exists()
        ledger.mark_sent(2)
        ledger.mark_rejected(2, 413, "too large")
        path = ledger.write_rejected()
    assert path == tmp_path / "rejected.json"
    saved = json.loads(path.read_text())
    assert saved["rejected_bodies"] == 1 and saved["rejected_metrics"] == 3
    (item,) = saved["rejected"]
    assert item["body"] == 2 and item["status"] == 413 and item["message"] == "too large"
    assert item["metrics"] == json.loads(made[2].data)["metrics"]


def test_what_was_synced_survives_a_killed_process(tmp_path: Path) -> None:
    """A writer killed with SIGKILL right after `sync()`: every state change is there, and the
    request it had in flight comes back in doubt."""
    script = textwrap.dedent(
        f"""
        import json, sys, time
        sys.path.insert(0, {str(ROOT)!r})
        from tests.metrics.test_ledger import bodies
        from app.metrics.ledger import Ledger
        ledger = Ledger.create(bodies(), folder=__import__("pathlib").Path({str(tmp_path)!r}))
        for i in range(3):
            ledger.mark_sent(i)
            ledger.mark_accepted(i)
        ledger.mark_sent(3)
        ledger.sync()
        print("synced", flush=True)
        time.sleep(60)
        """
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "synced"
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    child.stdout.close()
    opened = Ledger.open(tmp_path)  # the lock died with the process
    assert [e.state for e in opened.entries] == [State.ACCEPTED] * 3 + [State.SENT, State.PENDING]
    assert opened.entry(3).in_doubt
    opened.close()


def test_uploads_go_under_the_data_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLAGDESK_DATA_DIR", str(tmp_path))
    assert uploads_dir() == tmp_path / "uploads"
    with Ledger.create(bodies(1)) as ledger:
        assert ledger.folder.parent == tmp_path / "uploads"
        assert ledger.path == ledger.folder / LEDGER_NAME


class HeldDisk:
    """The ledger module's `os` with a journal write or fsync that waits for `release` (and
    then, with `fail`, fails as a full disk does)."""

    def __init__(self, *, fail: bool = False) -> None:
        self.release = threading.Event()
        self.fail = fail

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    def write(self, fd: int, data: bytes) -> int:
        self.release.wait()
        if self.fail:
            raise OSError(errno.ENOSPC, "No space left on device")
        return os.write(fd, data)

    def fsync(self, fd: int) -> None:
        self.release.wait()
        os.fsync(fd)


def test_a_sent_line_is_durable_only_once_written_and_fsynced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`mark_sent` returns a `Durable` the uploader awaits before it starts the request."""
    with Ledger.create(bodies(), folder=tmp_path) as ledger:
        disk = HeldDisk()
        monkeypatch.setattr(ledger_module, "os", disk)
        first = ledger.mark_sent(0)
        assert not first.done()  # the disk has not finished
        disk.release.set()
        first.wait(30)
        assert first.done() and first.error is None
        assert b'{"i":0,"e":"sent"' in (tmp_path / LEDGER_NAME).read_bytes()

        async def awaited() -> bytes:
            await ledger.mark_sent(1)
            return (tmp_path / LEDGER_NAME).read_bytes()

        assert b'{"i":1,"e":"sent"' in asyncio.run(awaited())


def test_a_journal_that_cannot_be_written_fails_every_waiting_durable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No worker waits forever for a line a full disk will never take."""
    ledger = Ledger.create(bodies(), folder=tmp_path)
    disk = HeldDisk(fail=True)
    monkeypatch.setattr(ledger_module, "os", disk)
    first = ledger.mark_sent(0)
    second = ledger.mark_sent(1)
    disk.release.set()
    for durable in (first, second):
        with pytest.raises(LedgerError, match="No space left on device"):
            durable.wait(30)
    with pytest.raises(LedgerError, match="No space left on device"):
        ledger.mark_sent(2)
    assert isinstance(ledger.failure, LedgerError)
    ledger.close()


def test_create_stops_when_cancelled_and_leaves_nothing(tmp_path: Path) -> None:
    made = bodies()
    cancel = threading.Event()

    def cancelled_after_two() -> Iterator[FakeBody]:
        yield from made[:2]
        cancel.set()
        yield from made[2:]

    with pytest.raises(Cancelled):
        Ledger.create(cancelled_after_two(), folder=tmp_path / "up", cancel=cancel)
    assert not (tmp_path / "up").exists()
    existing = tmp_path / "given"
    existing.mkdir()
    with pytest.raises(Cancelled):
        Ledger.create(made, folder=existing, cancel=cancel)
    assert existing.is_dir() and list(existing.iterdir()) == []  # a folder given is kept
