"""`flagdesk logins` (issue 38; Unleash Enterprise's login history) against sandboxes over
HTTP, as subprocesses: the events newest first as a table, as JSON and as CSV, filtered by user
and to the failed logins; a file that cannot be written (exit 2, nothing written); an Editor's
token refused (exit 4); on a played open-source release, login history said to be Unleash
Enterprise's, plainly, with exit status 4 and no traceback; an unreachable server (exit 3)."""

from __future__ import annotations

import csv
import io
import subprocess
from collections.abc import Callable
from pathlib import Path

from sandbox.process import SandboxProcess
from tests.app.test_cli_users import as_json, run_flagdesk


def logins(sb: SandboxProcess | str, *args: str, data: Path,
           token: str | None = None) -> subprocess.CompletedProcess[str]:  # fmt: skip
    return run_flagdesk(("logins",), sb, args, data, token)


def server_events(sb: SandboxProcess) -> list[dict[str, object]]:
    with sb.admin() as http:
        events: list[dict[str, object]] = http.get("/api/admin/logins").json()["events"]
    return events


def test_the_history_as_text_json_and_csv(demo_sandbox: SandboxProcess, tmp_path: Path) -> None:
    events = server_events(demo_sandbox)
    text = logins(demo_sandbox, data=tmp_path)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0].split() == ["TIME", "USER", "OUTCOME", "ADDRESS", "AUTH", "REASON"]
    assert lines[-1] == f"{len(events)} login events on {demo_sandbox.url}"
    assert len(lines) == 1 + len(events) + 1
    assert lines[1].startswith(str(events[0]["created_at"])[:10])  # newest first

    shown = as_json(logins(demo_sandbox, "--json", data=tmp_path))
    assert shown["count"] == shown["total"] == len(events)
    assert [e["id"] for e in shown["events"]] == [e["id"] for e in events]
    first, sent = dict(shown["events"][0]), dict(events[0])
    # as the server sent it, its time in milliseconds (as Unleash writes times)
    assert first.pop("created_at") == str(sent.pop("created_at")).replace("000Z", "Z")
    assert first == sent

    failed = as_json(logins(demo_sandbox, "--failed", "--json", data=tmp_path))
    assert failed["count"] == len([e for e in events if not e["successful"]]) > 0
    assert all(not e["successful"] and e["failure_reason"] for e in failed["events"])
    assert failed["filters"] == {"user": None, "failed": True}

    guessed = logins(demo_sandbox, "--user", "ROOT", "--failed", data=tmp_path)
    assert guessed.returncode == 0, guessed.stderr
    rows = guessed.stdout.splitlines()[1:-1]
    assert rows and all(" root " in f" {r} " and "192.0.2.66" in r for r in rows)
    assert guessed.stdout.splitlines()[-1].startswith(f"{len(rows)} failed login")
    assert "of users matching 'ROOT'" in guessed.stdout

    target = tmp_path / "logins.csv"
    written = logins(demo_sandbox, "--failed", "--csv", str(target), data=tmp_path)
    assert written.returncode == 0, written.stderr
    assert f"to {target}" in written.stdout
    assert target.stat().st_mode & 0o777 == 0o600
    read = list(csv.DictReader(io.StringIO(target.read_text())))
    assert [int(r["id"]) for r in read] == [e["id"] for e in failed["events"]]
    assert list(read[0]) == ["id", "username", "auth_type", "created_at", "successful", "ip",
                             "failure_reason", "type"]  # fmt: skip
    assert {r["successful"] for r in read} == {"false"}

    nowhere = logins(demo_sandbox, "--csv", str(tmp_path / "no" / "x.csv"), data=tmp_path)
    assert nowhere.returncode == 2 and "does not exist" in nowhere.stderr


def test_an_editor_is_refused(
    sandbox: SandboxProcess, personal_token: Callable[[SandboxProcess, str], str], tmp_path: Path
) -> None:
    refused = logins(sandbox, data=tmp_path, token=personal_token(sandbox, "dmitri.volkov"))
    assert refused.returncode == 4, refused.stderr
    assert "Admin" in refused.stderr and "Traceback" not in refused.stderr


def test_open_source_has_no_login_history(tmp_path: Path) -> None:
    with SandboxProcess(tmp_path / "s.sqlite3", "--as-version", "8.2") as sb:
        said = logins(sb, data=tmp_path)
        shown = as_json(logins(sb, "--json", data=tmp_path))
    assert said.returncode == 4 and said.stdout == ""
    assert "Login history needs Unleash Enterprise" in said.stderr
    assert "open-source" in said.stderr and "Traceback" not in said.stderr
    assert shown["exit_status"] == 4 and "needs Unleash Enterprise" in shown["error"]


def test_an_unreachable_server(tmp_path: Path) -> None:
    gone = logins("http://127.0.0.1:9", data=tmp_path)
    assert gone.returncode == 3 and "Traceback" not in gone.stderr
