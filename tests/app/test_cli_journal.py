"""`flagdesk journal list` as a subprocess (and in process through `app.cli.main`): after changes
made through the command line against a sandbox, the connection's journal newest first, in the
History's words, with each entry's id and the file it names (a snapshot, an upload's ledger);
--json with its stable keys and no token; --all across two connections (a profile's and a
URL's); an entry left `sent` reads "in doubt", with no server to reach; the usage errors (no
journal named, an unknown profile: exit 2); and no Qt imported."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app import cli
from app.actions.journal import JOURNAL_NAME, Actor, Journal, journal_folder, read_journal
from app.actions.journal_text import time_text
from sandbox.process import SandboxProcess
from tests.app.test_cli_users import run_flagdesk
from tests.faults import closed_port
from tests.metrics.test_cli_metrics import metric, write_ndjson

ROOT = Path(__file__).resolve().parents[2]
LEON_ID = 39  # inactive in the demo
KEYS = ["entry", "time", "connection", "server", "token", "user", "action", "title", "ids",
        "state", "status", "message", "before", "request", "finished", "after", "file"]  # fmt: skip


def journal(*args: str, data: Path, config: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`flagdesk journal ARGS` with no token in the environment: it needs none."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("FLAGDESK_TOKEN", "FLAGDESK_CLIENT_TOKEN")}  # fmt: skip
    env["FLAGDESK_DATA_DIR"] = str(data)
    if config is not None:
        env["FLAGDESK_CONFIG_DIR"] = str(config)
    return subprocess.run(
        [sys.executable, "-m", "app", "journal", *args],
        capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=60,
    )  # fmt: skip


def rows(result: subprocess.CompletedProcess[str]) -> list[list[str]]:
    """The table's lines (titles first) split on the two spaces between columns, and the
    summary line last."""
    assert result.returncode == 0, result.stderr
    return [[cell.strip() for cell in line.split("  ") if cell.strip()]
            for line in result.stdout.splitlines()]  # fmt: skip


def upload(sb: SandboxProcess, tmp_path: Path, data: Path) -> dict[str, Any]:
    path = write_ndjson(tmp_path / "m.ndjson", [metric("journal-list-a"), metric("journal-list-b")])
    env = {k: v for k, v in os.environ.items() if k != "FLAGDESK_TOKEN"}
    env.update(FLAGDESK_CLIENT_TOKEN=sb.client_token, FLAGDESK_DATA_DIR=str(data))
    done = subprocess.run(
        [sys.executable, "-m", "app", "metrics", "upload", str(path), "--url", sb.url, "--json"],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out: dict[str, Any] = json.loads(done.stdout)
    return out


def test_the_changes_made_through_the_cli_newest_first_as_text_and_json(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    for words, args in ((("context",), ("delete", "tenantId")),
                        (("users", "inactive"), ("delete", "--ids", str(LEON_ID)))):  # fmt: skip
        made = run_flagdesk(words, sandbox, (*args, "--yes"), data, None)
        assert made.returncode == 0, made.stderr
    uploaded = upload(sandbox, tmp_path, data)
    folder = journal_folder(sandbox.url, data)
    field, users, metrics = read_journal(folder / JOURNAL_NAME)

    listing = journal("list", "--url", sandbox.url + "/", data=data)
    text = rows(listing)
    assert text[0] == ["WHEN", "CHANGE", "ITEMS", "OUTCOME", "STATUS", "ENTRY", "FILE"]
    assert text[1] == [time_text(metrics), "Upload metrics", "1 body (2 metrics)", "done",
                       metrics.id, uploaded["folder"]]  # fmt: skip
    assert text[2] == [time_text(users), "Delete inactive users", f"1 item: {LEON_ID}", "done",
                       "200", users.id, str(folder / users.before["snapshot"])]  # fmt: skip
    assert text[3] == [time_text(field), "Delete context field", "1 item: tenantId", "done",
                       "200", field.id, str(folder / field.before["snapshot"])]  # fmt: skip
    assert text[4] == [f"3 changes on {sandbox.url}"]
    assert all(Path(line[-1]).exists() for line in text[1:4])

    result = journal("list", "--url", sandbox.url, "--json", data=data)
    assert result.returncode == 0, result.stderr
    listed = json.loads(result.stdout)  # one array, nothing else
    assert [list(e) for e in listed] == [KEYS] * 3
    assert [e["entry"] for e in listed] == [metrics.id, users.id, field.id]
    assert [e["action"] for e in listed] == ["metrics.upload", "inactive_users.delete",
                                             "context_fields.delete"]  # fmt: skip
    assert {(e["state"], e["connection"], e["server"]) for e in listed} == {
        ("done", sandbox.url, sandbox.url)
    }
    assert listed[1]["ids"] == [LEON_ID] and listed[1]["status"] == 200
    assert listed[1]["request"] == {"method": "POST",
                                    "path": "/api/admin/user-admin/inactive/delete"}  # fmt: skip
    assert listed[0]["before"]["ledger"] == listed[0]["file"] == uploaded["folder"]
    assert listed[0]["token"] == "client" and listed[1]["token"] == "admin"
    assert listed[2]["time"].endswith("Z") and listed[2]["finished"] >= listed[2]["time"]
    for secret in (sandbox.admin_token, sandbox.client_token):
        assert secret not in result.stdout + listing.stdout


def test_all_lists_every_connections_journal(sandbox: SandboxProcess, tmp_path: Path) -> None:
    data, config = tmp_path / "data", tmp_path / "config"
    added = subprocess.run(
        [sys.executable, "-m", "app", "profiles", "add", "prod", "--url", sandbox.url,
         "--token-store", "file"],
        capture_output=True, text=True, timeout=60,
        env={**os.environ, "FLAGDESK_CONFIG_DIR": str(config),
             "FLAGDESK_TOKEN": sandbox.admin_token},
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    env = {**os.environ, "FLAGDESK_CONFIG_DIR": str(config), "FLAGDESK_DATA_DIR": str(data)}
    by_profile = subprocess.run(
        [sys.executable, "-m", "app", "context", "delete", "tenantId", "--profile", "prod",
         "--yes"],
        capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=60,
    )  # fmt: skip
    assert by_profile.returncode == 0, by_profile.stderr
    by_url = run_flagdesk(("users", "inactive"), sandbox, ("delete", "--ids", str(LEON_ID),
                                                           "--yes"), data, None)  # fmt: skip
    assert by_url.returncode == 0, by_url.stderr

    every = rows(journal("list", "--all", data=data, config=config))
    assert every[0] == ["WHEN", "CONNECTION", "CHANGE", "ITEMS", "OUTCOME", "STATUS", "ENTRY",
                        "FILE"]  # fmt: skip
    assert [(r[1], r[2]) for r in every[1:3]] == [(sandbox.url, "Delete inactive users"),
                                                  ("prod", "Delete context field")]  # fmt: skip
    assert every[3] == ["2 changes on 2 connections"]
    listed = json.loads(journal("list", "--all", "--json", data=data, config=config).stdout)
    assert [e["connection"] for e in listed] == [sandbox.url, "prod"]

    prod = rows(journal("list", "--profile", "prod", data=data, config=config))
    assert [r[1] for r in prod[1:-1]] == ["Delete context field"]
    assert prod[-1] == ["1 change on prod"]
    unknown = journal("list", "--profile", "staging", "--json", data=data, config=config)
    assert unknown.returncode == 2
    assert "No profile named 'staging' (profiles: prod)" in unknown.stderr
    assert json.loads(unknown.stdout)["exit_status"] == 2


def test_an_entry_left_sent_reads_in_doubt_without_a_server(tmp_path: Path) -> None:
    """A process killed between the `sent` line and the answer; the server is gone too:
    listing reads the file only."""
    url = f"http://127.0.0.1:{closed_port()}"
    data = tmp_path / "data"
    folder = journal_folder(url, data)
    sent = asyncio.run(Journal(Actor(url, url, "admin"), folder).begin(
        "users.delete", [7], before={"snapshot": "user-7.json"},
        request={"method": "DELETE", "path": "/api/admin/user-admin/7"}))  # fmt: skip
    text = rows(journal("list", "--url", url, data=data))
    assert text[1][1:] == ["Delete user", "1 item: 7", "in doubt", sent.entry,
                           str(folder / "user-7.json")]  # fmt: skip
    assert text[2] == [f"1 change on {url}, 1 in doubt"]
    (entry,) = json.loads(journal("list", "--url", url, "--json", data=data).stdout)
    assert (entry["state"], entry["status"], entry["finished"]) == ("in doubt", None, None)


def test_usage_errors_and_an_empty_journal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FLAGDESK_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("FLAGDESK_CONFIG_DIR", str(tmp_path / "config"))
    assert cli.main(["journal", "list"]) == 2
    assert "say which journal: --profile NAME, --url URL, or --all" in capsys.readouterr().err
    assert cli.main(["journal", "list", "--url", "unleash.example.com"]) == 2
    assert "--url: 'unleash.example.com' has no scheme" in capsys.readouterr().err
    assert cli.main(["journal", "list", "--profile", "prod"]) == 2
    assert "No profile named 'prod'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as both:
        cli.main(["journal", "list", "--all", "--url", "https://unleash.example.com"])
    assert both.value.code == 2
    capsys.readouterr()
    assert cli.main(["journal", "list", "--url", "https://unleash.example.com"]) == 0
    said = capsys.readouterr()
    assert said.out == "No changes made through flagdesk on https://unleash.example.com yet.\n"
    assert cli.main(["journal", "list", "--all", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert not (tmp_path / "data").exists()  # listing writes nothing


def test_the_command_imports_no_qt(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "from app.cli import main\n"
        "code = main(['journal', 'list', '--all'])\n"
        "print(code, sorted(m for m in sys.modules if m.split('.')[0] in "
        "('PySide6', 'shiboken6', 'qasync', 'ui')))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            cwd=ROOT, timeout=60,
                            env={**os.environ, "FLAGDESK_DATA_DIR": str(tmp_path)})  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "0 []"
