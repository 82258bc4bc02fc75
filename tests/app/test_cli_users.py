"""`flagdesk users inactive [delete]` against sandboxes over HTTP, as a subprocess (and in process
where a terminal is pretended): the list as text, JSON and CSV; --dry-run prints the exact
request and changes nothing; without a terminal and without --yes nothing changes; the terminal's
question; --yes deletes with a snapshot and a journal entry, read back from the server; ids that
are not inactive are refused; the exit statuses; and a process killed between the journal's
`sent` line and the answer leaves that entry in doubt."""

from __future__ import annotations

import argparse
import asyncio
import csv
import io
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from app import cli
from app.actions.inactive_users import SNAPSHOT_COLUMNS
from app.actions.journal import JOURNAL_NAME, State, journal_folder, read_journal
from app.api.models import InactiveUsers
from app.commands.output import whole_number
from sandbox.process import SandboxProcess
from tests.faults import Decide, FaultServer, Hang, Reply, Seen, closed_port

LEON_ID, PRIYA_ID = 39, 43  # inactive in the demo
ACTIVE_ID = 2  # a demo user who logged in recently
PATH = "/api/admin/user-admin/inactive/delete"


def run_flagdesk(
    words: tuple[str, ...],
    sb: SandboxProcess | str,
    args: tuple[str, ...],
    data: Path,
    token: str | None,
) -> subprocess.CompletedProcess[str]:
    """`flagdesk WORDS ARGS --url <sandbox>` with stdin not a terminal, the token in
    FLAGDESK_TOKEN (the sandbox's admin token unless `token`), journaling into `data`."""
    url = sb if isinstance(sb, str) else sb.url
    env = {k: v for k, v in os.environ.items() if k != "FLAGDESK_TOKEN"}
    env["FLAGDESK_TOKEN"] = token or (sb.admin_token if isinstance(sb, SandboxProcess) else "x")
    env["FLAGDESK_DATA_DIR"] = str(data)
    return subprocess.run(
        [sys.executable, "-m", "app", *words, *args, "--url", url],
        capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=60,
    )  # fmt: skip


def flagdesk(
    sb: SandboxProcess | str, *args: str, data: Path, token: str | None = None
) -> subprocess.CompletedProcess[str]:
    """`flagdesk users inactive ARGS --url <sandbox>` with stdin not a terminal."""
    return run_flagdesk(("users", "inactive"), sb, args, data, token)


def inactive_ids(sb: SandboxProcess) -> set[int]:
    with sb.admin() as http:
        body = InactiveUsers.model_validate(http.get("/api/admin/user-admin/inactive").json())
    return {u.id for u in body.inactiveUsers}


def as_json(result: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(result.stdout)  # one object, nothing else
    assert out["exit_status"] == result.returncode, result.stderr
    return out


# ---------------------------------------------------------------------------- list


def test_the_list_as_text_json_and_csv(demo_sandbox: SandboxProcess, tmp_path: Path) -> None:
    text = flagdesk(demo_sandbox, data=tmp_path)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0].split() == ["ID", "NAME", "USERNAME", "EMAIL", "LAST", "LOGIN", "CREATED",
                                "TOKEN", "LAST", "USED"]  # fmt: skip
    assert len(lines) == 1 + 12 + 1
    assert lines[-1] == f"12 users with no login in 180 days on {demo_sandbox.url}"
    leon = next(line for line in lines if line.startswith(f"{LEON_ID} "))
    assert "Leon Weber" in leon and "leon.weber@example.com" in leon

    listed = as_json(flagdesk(demo_sandbox, "--json", data=tmp_path))
    assert listed["count"] == 12 and listed["server"] == demo_sandbox.url
    assert {u["id"] for u in listed["inactiveUsers"]} == inactive_ids(demo_sandbox)
    priya = next(u for u in listed["inactiveUsers"] if u["id"] == PRIYA_ID)
    assert priya["seenAt"] is None and priya["createdAt"].endswith("Z")
    assert list(priya) == list(SNAPSHOT_COLUMNS)

    path = tmp_path / "inactive.csv"
    written = flagdesk(demo_sandbox, "--csv", str(path), data=tmp_path)
    assert written.returncode == 0, written.stderr
    assert written.stdout.startswith(f"Wrote 12 inactive users to {path}\n")
    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 12 and list(rows[0]) == list(SNAPSHOT_COLUMNS)
    assert {int(r["id"]) for r in rows} == inactive_ids(demo_sandbox)
    assert not (tmp_path / "journal").exists()  # reading journals nothing


# ---------------------------------------------------------------------------- delete


def test_dry_run_prints_the_exact_request_and_changes_nothing(
    demo_sandbox: SandboxProcess, tmp_path: Path
) -> None:
    result = flagdesk(demo_sandbox, "delete", "--ids", str(LEON_ID), str(PRIYA_ID), "--dry-run",
                      data=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout == (f'POST {PATH}\nContent-Type: application/json\n\n{{"ids":[39,43]}}\n')
    assert "nothing was sent" in result.stderr
    as_object = as_json(flagdesk(demo_sandbox, "delete", "--all", "--dry-run", "--json",
                                 data=tmp_path))  # fmt: skip
    assert as_object["request"]["method"] == "POST" and as_object["request"]["path"] == PATH
    assert sorted(as_object["request"]["body"]["ids"]) == sorted(inactive_ids(demo_sandbox))
    assert as_object["count"] == 12
    assert len(inactive_ids(demo_sandbox)) == 12
    assert not (tmp_path / "journal").exists()


def test_without_a_terminal_and_without_yes_nothing_changes(
    demo_sandbox: SandboxProcess, tmp_path: Path
) -> None:
    result = flagdesk(demo_sandbox, "delete", "--ids", str(LEON_ID), data=tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    assert "--yes" in result.stderr and "nothing was deleted" in result.stderr
    assert LEON_ID in inactive_ids(demo_sandbox)
    as_object = as_json(flagdesk(demo_sandbox, "delete", "--all", "--json", data=tmp_path))
    assert as_object["exit_status"] == 2 and "--yes" in as_object["error"]
    assert len(inactive_ids(demo_sandbox)) == 12


def test_yes_deletes_with_a_snapshot_and_a_journal_entry(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    result = flagdesk(sandbox, "delete", "--ids", str(LEON_ID), str(PRIYA_ID), str(LEON_ID),
                      "--yes", "--json", data=tmp_path)  # fmt: skip
    out = as_json(result)
    assert (out["exit_status"], out["deleted"], out["ids"], out["status"]) == (
        0, 2, [LEON_ID, PRIYA_ID], 200)  # fmt: skip
    assert inactive_ids(sandbox).isdisjoint({LEON_ID, PRIYA_ID})
    assert len(inactive_ids(sandbox)) == 10

    folder = journal_folder(sandbox.url, tmp_path)  # --url: the journal of that URL
    snapshot = Path(out["snapshot"])
    assert snapshot.parent == folder and snapshot.suffix == ".csv"
    with snapshot.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [(r["id"], r["name"], r["email"], r["username"]) for r in rows] == [
        ("39", "Leon Weber", "leon.weber@example.com", "leon.weber"),
        ("43", "Priya Nair", "priya.nair@example.com", "priya.nair"),
    ]
    assert rows[1]["seenAt"] == "" and rows[0]["seenAt"].endswith("Z")
    (entry,) = read_journal(Path(out["journal"]))
    assert Path(out["journal"]) == folder / JOURNAL_NAME and entry.id == out["entry"]
    assert (entry.action, entry.ids, entry.state, entry.status) == (
        "inactive_users.delete", [LEON_ID, PRIYA_ID], State.DONE, 200)  # fmt: skip
    assert (entry.server, entry.connection, entry.token, entry.user) == (
        sandbox.url, sandbox.url, "admin", None)  # fmt: skip
    assert entry.before == {"snapshot": snapshot.name, "count": 2}
    assert entry.request == {"method": "POST", "path": PATH}

    text = flagdesk(sandbox, "delete", "--all", "--yes", data=tmp_path)
    assert text.returncode == 0, text.stderr
    assert text.stdout.startswith(f"Deleted 10 inactive users on {sandbox.url}. Snapshot: ")
    assert inactive_ids(sandbox) == set()
    again = flagdesk(sandbox, "delete", "--all", "--yes", data=tmp_path)
    assert again.returncode == 0 and "nothing to delete" in again.stdout
    assert [e.state for e in read_journal(folder / JOURNAL_NAME)] == [State.DONE] * 2


def test_ids_that_are_not_inactive_users_are_refused_before_anything_is_sent(
    demo_sandbox: SandboxProcess, tmp_path: Path
) -> None:
    result = flagdesk(demo_sandbox, "delete", "--ids", str(LEON_ID), str(ACTIVE_ID), "99999",
                      "--yes", data=tmp_path)  # fmt: skip
    assert result.returncode == 2
    assert f"not inactive users on {demo_sandbox.url}: {ACTIVE_ID}, 99999." in result.stderr
    assert LEON_ID in inactive_ids(demo_sandbox)
    with demo_sandbox.admin() as http:
        assert http.get(f"/api/admin/user-admin/{ACTIVE_ID}").status_code == 200
    assert not (tmp_path / "journal").exists()


def test_usage_and_connection_failures_have_their_exit_statuses(
    demo_sandbox: SandboxProcess,
    tmp_path: Path,
    personal_token: Any,
) -> None:
    for args, words in (
        (("--ids", "39"), "--ids go with `delete`"),
        (("delete",), "--ids ID [ID ...] or --all"),
        (("delete", "--all", "--csv", "x.csv"), "--csv goes with the list"),
    ):
        result = flagdesk(demo_sandbox, *args, data=tmp_path)
        assert (result.returncode, result.stdout) == (2, ""), args
        assert words in result.stderr, result.stderr
    bad_id = flagdesk(demo_sandbox, "delete", "--ids", "leon", "--yes", data=tmp_path)
    assert bad_id.returncode == 2 and "'leon' is not a user id" in bad_id.stderr
    both = flagdesk(demo_sandbox, "delete", "--ids", "39", "--all", data=tmp_path)
    assert both.returncode == 2 and "not allowed with argument" in both.stderr

    down = flagdesk(f"http://127.0.0.1:{closed_port()}", "delete", "--all", "--yes",
                    data=tmp_path)  # fmt: skip
    assert down.returncode == 3 and "Cannot reach" in down.stderr

    editor = personal_token(demo_sandbox, "greta.schmidt")
    refused = flagdesk(demo_sandbox, "delete", "--all", "--yes", data=tmp_path, token=editor)
    assert refused.returncode == 4 and "Admin root role" in refused.stderr
    listing = flagdesk(demo_sandbox, "--json", data=tmp_path, token=editor)
    assert as_json(listing)["http_status"] == 403 and listing.returncode == 4
    assert len(inactive_ids(demo_sandbox)) == 12


def test_number_arguments_say_what_is_wrong() -> None:
    user_id, concurrency = whole_number(0, noun="user id"), whole_number(1, 64)
    assert user_id("39") == 39 and concurrency("64") == 64
    for parse, text, message in (
        (user_id, "leon", "'leon' is not a user id"),
        (user_id, "-1", "-1: a user id is 0 or more"),
        (concurrency, "65", "65: choose 1 to 64"),
        (concurrency, "1.5", "'1.5' is not a number"),
    ):
        with pytest.raises(argparse.ArgumentTypeError, match=re.escape(message)):
            parse(text)


class Terminal(io.StringIO):
    """Standard input that says it is a terminal, with the person's answer in it."""

    def isatty(self) -> bool:
        return True


def test_on_a_terminal_it_asks_for_the_number_typed_and_only_that_deletes(
    sandbox: SandboxProcess,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("FLAGDESK_TOKEN", sandbox.admin_token)
    monkeypatch.setenv("FLAGDESK_DATA_DIR", str(tmp_path))
    argv = ["users", "inactive", "delete", "--ids", str(LEON_ID), str(PRIYA_ID), "--url",
            sandbox.url]  # fmt: skip

    monkeypatch.setattr(sys, "stdin", Terminal("n\n"))
    assert cli.main(argv) == 1
    asked = capsys.readouterr()
    said = asked.err.splitlines()
    assert said[0] == (
        f"2 users will be deleted on {sandbox.url} (connection “{sandbox.url}”): Leon Weber, "
        "Priya Nair."
    )
    folder = journal_folder(sandbox.url, tmp_path)
    assert re.fullmatch(
        rf"A snapshot of them is written first to {re.escape(str(folder))}/"
        r"[0-9T-]+-inactive_users\.delete-[0-9a-f]{6}\.csv\.",
        said[1],
    ), said[1]
    assert said[2] == "A deleted user cannot be brought back: this cannot be undone."
    # more than one user: their number typed, not y/N
    assert "Delete 2 inactive users? Type 2 to confirm:" in asked.err
    assert "nothing was deleted" in asked.err
    assert {LEON_ID, PRIYA_ID} <= inactive_ids(sandbox)
    assert not (tmp_path / "journal").exists()

    for wrong in ("yes", "y", "3"):  # a wrong text changes nothing either
        monkeypatch.setattr(sys, "stdin", Terminal(f"{wrong}\n"))
        assert cli.main(argv) == 1
        assert "not confirmed: nothing was deleted" in capsys.readouterr().err
        assert {LEON_ID, PRIYA_ID} <= inactive_ids(sandbox)
    assert not (tmp_path / "journal").exists()

    monkeypatch.setattr(sys, "stdin", Terminal(" 2 \n"))
    assert cli.main(argv) == 0
    assert capsys.readouterr().out.startswith(f"Deleted 2 inactive users on {sandbox.url}.")
    assert inactive_ids(sandbox).isdisjoint({LEON_ID, PRIYA_ID})


# ---------------------------------------------------------------------------- crash


def test_killed_between_sent_and_the_answer_the_entry_is_in_doubt(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    """A proxy passes every request to the sandbox but holds the delete; the command is killed
    (SIGKILL) once the proxy has it: the journal says `sent`, read as in doubt, and names the
    snapshot, which holds the user; the server never got the request."""

    async def scenario() -> tuple[int, list[Seen]]:
        async with httpx.AsyncClient(base_url=sandbox.url) as upstream:

            async def choose(seen: Seen) -> Reply | Hang:
                if seen.method == "POST" and seen.target == PATH:
                    return Hang()
                headers = {k: v for k, v in seen.headers.items()
                           if k in ("authorization", "content-type")}  # fmt: skip
                answer = await upstream.request(seen.method, seen.target, headers=headers,
                                                content=seen.body)  # fmt: skip
                kind = answer.headers.get("content-type", "application/json")
                return Reply(answer.status_code, answer.content, {"Content-Type": kind})

            async with FaultServer(Decide(choose)) as proxy:
                env = {**os.environ, "FLAGDESK_TOKEN": sandbox.admin_token,
                       "FLAGDESK_DATA_DIR": str(tmp_path)}  # fmt: skip
                child = await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "app", "users", "inactive", "delete", "--ids",
                    str(LEON_ID), "--yes", "--url", proxy.url, env=env,
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )  # fmt: skip
                try:
                    for _ in range(600):
                        if any(s.method == "POST" for s in proxy.requests):
                            break
                        await asyncio.sleep(0.05)
                finally:
                    child.send_signal(signal.SIGKILL)
                    code = await child.wait()
                return code, list(proxy.requests)

    code, seen = asyncio.run(scenario())
    assert code == -signal.SIGKILL
    held = [s for s in seen if s.method == "POST"]
    assert [(s.target, s.body) for s in held] == [(PATH, b'{"ids":[39]}')]
    folder = next((tmp_path / "journal").iterdir())
    (entry,) = read_journal(folder / JOURNAL_NAME)
    assert (entry.action, entry.ids, entry.state, entry.finished) == (
        "inactive_users.delete", [LEON_ID], State.IN_DOUBT, None)  # fmt: skip
    with (folder / entry.before["snapshot"]).open(newline="", encoding="utf-8") as f:
        assert [r["username"] for r in csv.DictReader(f)] == ["leon.weber"]
    assert LEON_ID in inactive_ids(sandbox)  # the held request never reached the server
