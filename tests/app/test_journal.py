"""The journal (`app.actions.journal`): an entry is on disk as `sent` before `begin` returns, is
completed as done, failed or in doubt, an entry never completed reads as in doubt (also after a
real kill of the process that wrote it), torn lines are skipped, and each connection has a
folder of its own."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from app.actions.journal import (
    JOURNAL_NAME,
    Actor,
    Journal,
    State,
    connection_key,
    journal_folder,
    read_journal,
)

ACTOR = Actor("Local sandbox", "http://127.0.0.1:4242", token="admin", user=None)


def lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def test_sent_is_on_disk_before_begin_returns_then_completed(tmp_path: Path) -> None:
    journal = Journal(ACTOR, tmp_path / "j")

    async def scenario() -> None:
        pending = await journal.begin(
            "inactive_users.delete",
            [39, 43],
            before={"snapshot": "s.csv", "count": 2},
            request={"method": "POST", "path": "/api/admin/user-admin/inactive/delete"},
        )
        # the request would go out now: the journal already says so
        (sent,) = lines(journal.path)
        assert sent["state"] == "sent" and sent["entry"] == pending.entry
        assert sent["ids"] == [39, 43] and sent["action"] == "inactive_users.delete"
        assert (sent["server"], sent["connection"], sent["token"], sent["user"]) == (
            "http://127.0.0.1:4242", "Local sandbox", "admin", None)  # fmt: skip
        assert sent["before"] == {"snapshot": "s.csv", "count": 2}
        (entry,) = journal.entries()
        assert entry.state is State.IN_DOUBT and entry.in_doubt and entry.finished is None
        await pending.done(200)

    asyncio.run(scenario())
    (entry,) = journal.entries()
    assert (entry.state, entry.status, entry.message) == (State.DONE, 200, "")
    assert entry.ids == [39, 43] and entry.request is not None
    assert entry.finished is not None and entry.finished >= entry.time
    assert len(lines(journal.path)) == 2
    assert oct(journal.path.stat().st_mode & 0o777) == "0o600"  # names and emails inside


def test_failed_and_in_doubt_keep_the_status_and_the_message(tmp_path: Path) -> None:
    journal = Journal(ACTOR, tmp_path)

    async def scenario() -> None:
        first = await journal.begin("inactive_users.delete", [1])
        second = await journal.begin("inactive_users.delete", [2])
        await journal.begin("groups.delete", [7])  # never completed
        await second.in_doubt(None, "Cannot reach http://x: connection lost")
        await first.failed(403, "403 NoAccessError: You need the Admin root role")

    asyncio.run(scenario())
    first, second, third = journal.entries()  # in the order they were sent
    assert (first.ids, first.state, first.status) == ([1], State.FAILED, 403)
    assert first.message.startswith("403 NoAccessError")
    assert (second.state, second.status, second.message) == (
        State.IN_DOUBT, None, "Cannot reach http://x: connection lost")  # fmt: skip
    assert second.finished is not None  # recorded in doubt, not merely never completed
    assert (third.action, third.state, third.finished) == ("groups.delete", State.IN_DOUBT, None)


def test_a_torn_last_line_is_skipped_and_the_next_entry_stays_whole(tmp_path: Path) -> None:
    journal = Journal(ACTOR, tmp_path)
    asyncio.run(journal.begin("inactive_users.delete", [1]))
    with journal.path.open("ab") as f:
        f.write(b'{"entry":"abc","state":"se')  # a crash in the middle of a write
    asyncio.run(journal.begin("inactive_users.delete", [2]))
    assert [e.ids for e in journal.entries()] == [[1], [2]]
    assert journal.path.read_bytes().count(b"\n") == 3  # the torn line ends with ours


def test_a_missing_journal_is_empty(tmp_path: Path) -> None:
    assert read_journal(tmp_path / "nothing" / JOURNAL_NAME) == []


def test_each_connection_has_a_folder_of_its_own(tmp_path: Path) -> None:
    assert journal_folder("Local sandbox", tmp_path) == journal_folder("Local sandbox", tmp_path)
    assert journal_folder("prod", tmp_path) != journal_folder("Prod", tmp_path)
    assert connection_key("Local sandbox").startswith("local-sandbox-")
    assert connection_key("https://unleash.example.com/").startswith("https-unleash-example-com-")
    assert "/" not in connection_key("a/b/../c") and connection_key("").startswith("connection-")
    journal = Journal(ACTOR)  # the data folder of the run (FLAGDESK_DATA_DIR in tests)
    assert journal.folder == Path(os.environ["FLAGDESK_DATA_DIR"]) / "journal" / connection_key(
        "Local sandbox"
    )
    first = journal.new_file("inactive_users.delete", ".csv")
    assert first.parent == journal.folder and first.suffix == ".csv"
    assert "-inactive_users.delete-" in first.name
    assert first != journal.new_file("inactive_users.delete", ".csv")


CHILD = """
import asyncio, sys, time
from pathlib import Path
from app.actions.journal import Actor, Journal

async def main():
    journal = Journal(Actor("c", "http://server"), Path(sys.argv[1]))
    await journal.begin("inactive_users.delete", [5, 6])
    print("sent", flush=True)
    await asyncio.sleep(60)  # the request is in flight: the process dies here

asyncio.run(main())
"""


def test_a_process_killed_between_sent_and_the_answer_leaves_the_entry_in_doubt(
    tmp_path: Path,
) -> None:
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path)], stdout=subprocess.PIPE,
                             text=True)  # fmt: skip
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "sent"
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(10)
    assert child.returncode == -signal.SIGKILL
    (entry,) = read_journal(tmp_path / JOURNAL_NAME)
    assert (entry.ids, entry.state, entry.finished) == ([5, 6], State.IN_DOUBT, None)
    # the next process appends after it, and still reads it in doubt
    asyncio.run(Journal(Actor("c", "http://server"), tmp_path).begin("groups.delete", [1]))
    assert [e.state for e in read_journal(tmp_path / JOURNAL_NAME)] == [State.IN_DOUBT] * 2
