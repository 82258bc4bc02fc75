"""Server-supplied text cannot drive the terminal: every command's plain output (tables, lines,
the terminal's question, error messages quoting the server) shows control characters as `\\x1b`
escapes, while `--json` stays JSON. A group named `\\x1b]0;PWNED\\x07\\x1b[2J` retitled the
terminal and cleared it on `flagdesk groups list`.

The sandbox refuses such names through its API, so they are written straight into its SQLite
database; an error message from a server is served by a fault server (`tests/faults.py`)."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from app import cli
from sandbox.process import SandboxProcess
from tests.app.test_cli_users import Terminal, run_flagdesk
from tests.faults import FaultServer, Reply
from tests.sandbox.test_inactive_delete import sql

HOSTILE = "\x1b]0;PWNED\x07\x1b[2J\x9b31m\r\nFAKE"
SHOWN = "\\x1b]0;PWNED\\x07\\x1b[2J\\x9b31m\\r\\nFAKE"
#: a control character other than the line breaks between lines (C0, DEL, C1)
RAW = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")
GROUP, LEON, USER = 1, 39, 5  # a group, an inactive user, a user who is not an Admin


def hostile_sandbox(sb: SandboxProcess) -> None:
    sql(sb, "UPDATE groups_ SET name = ?, description = ?, mappings_sso = ? WHERE id = ?",
        f"Platform{HOSTILE}", HOSTILE, json.dumps([HOSTILE]), GROUP)  # fmt: skip
    for user in (LEON, USER):
        sql(sb, "UPDATE users SET name = ?, email = ? WHERE id = ?",
            f"User{HOSTILE}", f"user{user}{HOSTILE}@example.com", user)  # fmt: skip
    sql(sb, "INSERT INTO features(name, project, type, description, created_at, archived_at) "
        "VALUES(?, 'default', ?, ?, 0, 1000)",
        f"flag{HOSTILE}", f"release{HOSTILE}", HOSTILE)  # fmt: skip
    sql(sb, "UPDATE context_fields SET description = ? WHERE name = 'region'", HOSTILE)
    sql(sb, "UPDATE strategies SET name = ?, title = ? WHERE id IN "
        "(SELECT strategy_id FROM strategy_context_fields WHERE context_name = 'region')",
        f"flexibleRollout{HOSTILE}", HOSTILE)  # fmt: skip
    sql(sb, "UPDATE tokens SET name = ? WHERE kind = 'client' AND served = 1", f"svc{HOSTILE}")
    sql(sb, "INSERT INTO events(type, project, feature, environment, created_by,"
        " created_by_user_id, created_at, summary) VALUES(?, 'default', ?, ?, ?, 5, 1000, ?)",
        f"feature-created{HOSTILE}", f"flag{HOSTILE}", f"development{HOSTILE}",
        f"User{HOSTILE}", HOSTILE)  # fmt: skip


def assert_visible(result: subprocess.CompletedProcess[str], *, shown: bool = True) -> None:
    said = result.stdout + result.stderr
    assert not RAW.search(said), said
    assert "\nFAKE" not in said, said
    if shown:
        assert SHOWN in said, said


def test_every_listing_and_change_shows_control_characters_escaped(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    hostile_sandbox(sandbox)
    for words, args, names in (
        (("groups",), ("list",), True),
        (("groups",), ("show", str(GROUP)), True),
        (("users", "inactive"), (), True),
        (("archive",), ("list", "default"), True),
        (("context",), ("list",), True),
        (("context",), ("usage", "region"), True),
        (("cleanup",), ("report",), True),  # the clean-up report (issue 36): names and emails
        (("groups",), ("delete", str(GROUP), "--yes"), True),
        (("users", "inactive"), ("delete", "--ids", str(LEON), "--yes"), False),
        (("users",), ("delete", str(USER), "--yes"), True),
        (("users",), ("reset-password", str(USER + 1)), False),
        (("tokens",), ("list",), True),
        (("tokens",), ("delete", sandbox.client_token[-8:], "--yes"), True),
        (("journal",), ("list",), False),  # ids only: but no control character either
        (("events",), (), True),  # the event log (issue 38): its type, who, flag, environment
    ):
        result = run_flagdesk(words, sandbox, args, tmp_path, None)
        assert result.returncode == 0, (words, args, result.stderr)
        assert_visible(result, shown=names)
    as_json = run_flagdesk(("archive",), sandbox, ("list", "default", "--json"), tmp_path, None)
    names = [f["name"] for f in json.loads(as_json.stdout)["features"]]
    assert f"flag{HOSTILE}" in names  # --json is JSON: the text itself, escaped as JSON escapes
    assert not RAW.search(as_json.stdout)  # C1 too, which JSON would leave as it is
    assert "\\u009b31m" in as_json.stdout


def test_the_terminal_question_shows_them_escaped(
    sandbox: SandboxProcess,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    hostile_sandbox(sandbox)
    monkeypatch.setenv("FLAGDESK_TOKEN", sandbox.admin_token)
    monkeypatch.setenv("FLAGDESK_DATA_DIR", str(tmp_path))
    monkeypatch.setattr(sys, "stdin", Terminal("n\n"))
    assert cli.main(["groups", "delete", str(GROUP), "--url", sandbox.url]) == 1
    said = capsys.readouterr()
    assert not RAW.search(said.out + said.err), said
    assert SHOWN in said.err


@pytest.fixture
def hostile_server() -> Iterator[str]:
    """A server whose every answer is a 400 whose message is hostile, on a thread of its own."""
    body = json.dumps({"name": "BadDataError", "message": f"bad{HOSTILE}"}).encode()
    loop = asyncio.new_event_loop()
    server = FaultServer(Reply(400, body))
    ready = threading.Event()

    def serve() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(server.start())
        ready.set()
        loop.run_forever()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    ready.wait(10)
    yield server.url
    asyncio.run_coroutine_threadsafe(server.stop(), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)


def test_an_error_message_quoting_the_server_shows_them_escaped(
    hostile_server: str, tmp_path: Path
) -> None:
    for words, args in ((("groups",), ("list",)), (("context",), ("list",)), (("check",), ())):
        result = run_flagdesk(words, hostile_server, args, tmp_path, "*:*.whatever-token")
        assert result.returncode != 0
        assert_visible(result)
    # a metrics upload: the server's answer to the feature check and to the body, in its report
    item = {"featureName": "f", "appName": "a", "environment": "development",
            "timestamp": 1_700_000_000_000, "yes": 1, "no": 2}  # fmt: skip
    batch = tmp_path / "batch.ndjson"
    batch.write_text(json.dumps(item) + "\n")
    client_token = "default:development.0123456789abcdef0123"
    upload = run_flagdesk(("metrics", "upload"), hostile_server, (str(batch),), tmp_path,
                          client_token)  # fmt: skip
    assert upload.returncode == 1, upload.stderr
    assert_visible(upload)
    assert f"body 0: 400: bad{SHOWN}" in upload.stdout
