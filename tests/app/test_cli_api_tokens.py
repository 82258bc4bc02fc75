"""`flagdesk tokens list|create|delete` end to end against a sandbox, as a subprocess (and in
process where a terminal is pretended): the list with secrets masked (text and JSON, filtered);
create printing the secret once on standard output (and in --json), a release without `backend`
refused first; --dry-run sending nothing and masking the secret in the request; no terminal and
no --yes refused; delete by unique name and by the secret's last characters, saying where each
was last seen, read back from the server; an ambiguous name refused (exit 2) with the
candidates masked; an unknown one (exit 1); and, with logging at its most verbose, the created
secrets nowhere in the log folder, the journal or the data folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app import cli
from app.actions.journal import read_journal
from app.api.models import ApiToken, ApiTokenList
from sandbox.process import SandboxProcess
from tests.app.test_cli_users import Terminal


def run(
    sb: SandboxProcess, *args: str, home: Path, verbose: bool = True
) -> subprocess.CompletedProcess[str]:
    """`flagdesk [--verbose] tokens ARGS --url <sandbox>`, stdin not a terminal, its data, log
    and configuration folders under `home`."""
    env = {k: v for k, v in os.environ.items() if k != "FLAGDESK_TOKEN"}
    env.update(FLAGDESK_TOKEN=sb.admin_token, FLAGDESK_DATA_DIR=str(home / "data"),
               FLAGDESK_LOG_DIR=str(home / "log"),
               FLAGDESK_CONFIG_DIR=str(home / "config"))  # fmt: skip
    return subprocess.run(
        [sys.executable, "-m", "app", *(["--verbose"] if verbose else []), "tokens", *args,
         "--url", sb.url],
        capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=60,
    )  # fmt: skip


def as_json(result: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(result.stdout)
    assert out["exit_status"] == result.returncode, result.stderr
    return out


def tokens_of(sb: SandboxProcess) -> list[ApiToken]:
    with sb.admin() as http:
        return ApiTokenList.model_validate(http.get("/api/admin/api-tokens").json()).tokens


def files_holding(folder: Path, text: str) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file() and text.encode() in p.read_bytes()]


def test_list_create_delete_and_no_secret_written_anywhere(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    listed = run(sandbox, "list", home=tmp_path)
    assert listed.returncode == 0, listed.stderr
    header, *rows, last = listed.stdout.splitlines()
    assert header.split()[:3] == ["NAME", "TYPE", "PROJECTS"]
    assert any(r.startswith("admin ") and "…" + sandbox.admin_token[-4:] in r for r in rows)
    assert sandbox.admin_token[-8:] not in listed.stdout
    assert last.endswith("(secrets masked)")

    made = run(sandbox, "create", "--name", "checkout", "--type", "client", "--project",
               "default", "--yes", home=tmp_path)  # fmt: skip
    assert made.returncode == 0, made.stderr
    lines = made.stdout.splitlines()
    secret = lines[-1]
    assert (
        secret.startswith("default:development.")
        and len(secret) == len("default:development.") + 56
    )
    assert made.stdout.count(secret) == 1 and secret not in made.stderr
    as_made = as_json(run(sandbox, "create", "--name", "web", "--type", "frontend",
                          "--expires", "2031-05-01", "--yes", "--json", home=tmp_path))  # fmt: skip
    web = as_made["token"]["secret"]
    assert web.startswith("*:development.") and as_made["token"]["expiresAt"].startswith(
        "2031-05-01"
    )

    by_type = as_json(run(sandbox, "list", "--type", "frontend", "--json", home=tmp_path))
    assert [t["name"] for t in by_type["tokens"]] == ["web"]
    assert by_type["tokens"][0]["secret"] == "…" + web[-4:]
    by_project = as_json(run(sandbox, "list", "--project", "default", "--json", home=tmp_path))
    assert {"checkout", "web", "admin", "client"} <= {t["name"] for t in by_project["tokens"]}

    # delete by name, and by the secret's last characters: where each was last seen
    gone = run(sandbox, "delete", "checkout", web[-6:], "--yes", home=tmp_path)
    assert gone.returncode == 0, gone.stderr
    assert f"Deleted client token “checkout” (…{secret[-4:]}), never seen." in gone.stdout
    assert f"Deleted frontend token “web” (…{web[-4:]}), never seen." in gone.stdout
    assert {t.name for t in tokens_of(sandbox)} == {"admin", "client"}

    (journal,) = (tmp_path / "data").rglob("journal.jsonl")
    entries = read_journal(journal)
    assert [e.action for e in entries] == ["api_tokens.create"] * 2 + ["api_tokens.delete"] * 2
    assert entries[0].after == {"secret": f"…{secret[-4:]}"}
    assert entries[2].request == {"method": "DELETE",
                                  "path": f"/api/admin/api-tokens/…{secret[-4:]}"}  # fmt: skip
    assert (tmp_path / "log" / "flagdesk.log").stat().st_size > 0
    for made_secret in (secret, web):
        for folder in ("log", "data", "config"):
            assert files_holding(tmp_path / folder, made_secret) == []
            assert files_holding(tmp_path / folder, made_secret[-12:]) == []


def test_dry_run_masks_and_sends_nothing(sandbox: SandboxProcess, tmp_path: Path) -> None:
    before = tokens_of(sandbox)
    dry = run(sandbox, "create", "--name", "x", "--type", "backend", "--dry-run", home=tmp_path)
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.startswith("POST /api/admin/api-tokens\n")
    assert '"tokenName":"x","type":"backend","environment":"development"' in dry.stdout
    handle = next(t.secret for t in before if t.name == "client")
    assert handle
    dry = as_json(run(sandbox, "delete", "client", "--dry-run", "--json", home=tmp_path))
    assert dry["request"] == {"method": "DELETE", "body": None,
                              "path": "/api/admin/api-tokens/…" + handle[-4:]}  # fmt: skip
    assert [t.secret for t in tokens_of(sandbox)] == [t.secret for t in before]
    assert not (tmp_path / "data" / "journal").exists() or not list(
        (tmp_path / "data" / "journal").rglob("journal.jsonl")
    )


def test_refusals_ambiguous_unknown_no_terminal(sandbox: SandboxProcess, tmp_path: Path) -> None:
    for kind in ("client", "frontend"):
        assert run(sandbox, "create", "--name", "twin", "--type", kind, "--yes",
                   home=tmp_path).returncode == 0  # fmt: skip
    twins = [t for t in tokens_of(sandbox) if t.name == "twin"]
    ambiguous = run(sandbox, "delete", "twin", "--yes", home=tmp_path)
    assert ambiguous.returncode == 2
    assert "2 API tokens have the name 'twin'" in ambiguous.stderr
    for t in twins:
        assert t.secret and f"…{t.secret[-4:]}" in ambiguous.stderr
    unknown = run(sandbox, "delete", "nobody-has-this", "--yes", home=tmp_path)
    assert unknown.returncode == 1 and "no API token has the name" in unknown.stderr
    asked = run(sandbox, "delete", "admin", home=tmp_path)
    assert asked.returncode == 2 and "no terminal" in asked.stderr
    assert len([t for t in tokens_of(sandbox) if t.name == "twin"]) == 2
    # named by its ending, the ambiguity is gone
    assert twins[0].secret
    assert run(sandbox, "delete", twins[0].secret[-8:], "--yes", home=tmp_path).returncode == 0
    assert len([t for t in tokens_of(sandbox) if t.name == "twin"]) == 1


def test_a_release_without_backend_tokens_is_told_before_sending(tmp_path: Path) -> None:
    with SandboxProcess(tmp_path / "s.sqlite3", "--demo", "--as-version", "6.10") as sb:
        refused = run(sb, "create", "--name", "b", "--type", "backend", "--yes", home=tmp_path)
        assert refused.returncode == 2
        assert "no backend tokens" in refused.stderr and "--type client" in refused.stderr
        assert "b" not in {t.name for t in tokens_of(sb)}


def test_on_a_terminal_several_are_confirmed_by_their_number(
    sandbox: SandboxProcess,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("FLAGDESK_TOKEN", sandbox.admin_token)
    monkeypatch.setenv("FLAGDESK_DATA_DIR", str(tmp_path))
    with sandbox.admin() as http:
        for name in ("a", "b"):
            made = http.post("/api/admin/api-tokens", json={"tokenName": name, "type": "client"})
            assert made.status_code == 201
    argv = ["tokens", "delete", "a", "b", "--url", sandbox.url]
    monkeypatch.setattr(sys, "stdin", Terminal("y\n"))
    assert cli.main(argv) == 1
    said = capsys.readouterr().err
    assert "2 API tokens will be deleted" in said and "never seen" in said
    assert "Type 2 to confirm" in said
    assert {"a", "b"} <= {t.name for t in tokens_of(sandbox)}
    monkeypatch.setattr(sys, "stdin", Terminal("2\n"))
    assert cli.main(argv) == 0
    assert not {"a", "b"} & {t.name for t in tokens_of(sandbox)}


def test_expire_changes_the_expiry_and_journal_undo_puts_it_back(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    made = as_json(run(sandbox, "create", "--name", "ttl", "--type", "client", "--expires",
                       "2031-01-01", "--yes", "--json", home=tmp_path))  # fmt: skip
    secret = made["token"]["secret"]
    dry = as_json(run(sandbox, "expire", "ttl", "--at", "2032-02-02", "--dry-run", "--json",
                      home=tmp_path))  # fmt: skip
    assert dry["request"] == {"method": "PUT", "path": f"/api/admin/api-tokens/…{secret[-4:]}",
                              "body": {"expiresAt": "2032-02-02T00:00:00Z"}}  # fmt: skip
    changed = run(sandbox, "expire", "ttl", "--at", "2032-02-02T10:00:00Z", "--yes",
                  home=tmp_path)  # fmt: skip
    assert changed.returncode == 0, changed.stderr
    assert "expires at 2032-02-02T10:00:00.000Z (was: 2031-01-01T00:00:00.000Z)" in changed.stdout
    (token,) = [t for t in tokens_of(sandbox) if t.name == "ttl"]
    assert token.expiresAt is not None and token.expiresAt.year == 2032
    (journal,) = (tmp_path / "data").rglob("journal.jsonl")
    last = read_journal(journal)[-1]
    entry = {"id": last.id, "action": last.action}
    assert entry["action"] == "api_tokens.expire"
    env = {**os.environ, "FLAGDESK_TOKEN": sandbox.admin_token,
           "FLAGDESK_DATA_DIR": str(tmp_path / "data")}  # fmt: skip
    undone = subprocess.run(
        [sys.executable, "-m", "app", "journal", "undo", entry["id"], "--url", sandbox.url,
         "--yes"], capture_output=True, text=True, timeout=60, env=env,
    )  # fmt: skip
    assert undone.returncode == 0, undone.stderr
    (token,) = [t for t in tokens_of(sandbox) if t.name == "ttl"]
    assert token.expiresAt is not None and token.expiresAt.year == 2031
    assert files_holding(tmp_path / "data", secret) == []
