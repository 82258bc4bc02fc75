"""`flagdesk users create|delete|reset-password` against sandboxes over HTTP, as a subprocess
(and in process where a terminal is pretended): --dry-run prints the exact request(s) and changes
nothing; without a terminal and without --yes nothing changes (exit 2, naming --yes); --yes
creates and deletes, read back from the server, with journal entries and a snapshot; a 429 is
waited out; the last Admin is refused before anything is sent; the server's refusals and the
exit statuses; the reset link is printed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app import cli
from app.actions.journal import JOURNAL_NAME, State, journal_folder, read_journal
from app.api.models import UserList
from sandbox.process import SandboxProcess
from tests.app.test_cli_users import Terminal
from tests.sandbox.test_inactive_delete import sql

PATH = "/api/admin/user-admin"
VIEWER = 3  # the demo's Viewer role id


def flagdesk(sb: SandboxProcess, *args: str, data: Path) -> subprocess.CompletedProcess[str]:
    """`flagdesk users ARGS --url <sandbox>` with stdin not a terminal."""
    env = {k: v for k, v in os.environ.items() if k != "FLAGDESK_TOKEN"}
    env["FLAGDESK_TOKEN"] = sb.admin_token
    env["FLAGDESK_DATA_DIR"] = str(data)
    return subprocess.run(
        [sys.executable, "-m", "app", "users", *args, "--url", sb.url],
        capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=60,
    )  # fmt: skip


def as_json(result: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(result.stdout)
    return out


def users(sb: SandboxProcess) -> dict[int, dict[str, Any]]:
    with sb.admin() as http:
        listed = UserList.model_validate(http.get(PATH).json())
    return {u.id: u.model_dump() for u in listed.users}


def by_email(sb: SandboxProcess, email: str) -> dict[str, Any] | None:
    return next((u for u in users(sb).values() if u["email"] == email), None)


NEW = ["create", "--email", "new.person@example.com", "--name", "New Person", "--root-role",
       "Editor"]  # fmt: skip


def test_create_dry_run_and_refusal_without_a_terminal_change_nothing(
    demo_sandbox: SandboxProcess, tmp_path: Path
) -> None:
    result = flagdesk(demo_sandbox, *NEW, "--dry-run", data=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        f"POST {PATH}\nContent-Type: application/json\n\n"
        '{"email":"new.person@example.com","name":"New Person","rootRole":"Editor",'
        '"sendEmail":false}\n'
    )
    assert "nothing was sent" in result.stderr
    refused = flagdesk(demo_sandbox, *NEW, "--json", data=tmp_path)
    out = as_json(refused)
    assert refused.returncode == 2 and "--yes" in out["error"]
    assert "nothing was created" in refused.stderr
    assert by_email(demo_sandbox, "new.person@example.com") is None
    assert not (tmp_path / "journal").exists()


def test_create_with_yes_reads_back_and_is_journaled(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    out = as_json(flagdesk(sandbox, *NEW, "--yes", "--json", data=tmp_path))
    assert out["exit_status"] == 0 and out["status"] == 201
    made = by_email(sandbox, "new.person@example.com")
    assert made is not None and made["id"] == out["id"] and made["name"] == "New Person"
    assert made["emailSent"] is False
    assert out["user"]["inviteLink"].startswith(sandbox.url + "/new-user?token=")
    (entry,) = read_journal(journal_folder(sandbox.url, tmp_path) / JOURNAL_NAME)
    assert (entry.action, entry.state, entry.status, entry.request) == (
        "users.create", State.DONE, 201, {"method": "POST", "path": PATH})  # fmt: skip
    # the same email again: the server's refusal, exit 1, nothing more created
    again = flagdesk(sandbox, *NEW, "--yes", "--json", data=tmp_path)
    body = as_json(again)
    assert (again.returncode, body["http_status"]) == (1, 400)
    assert "User already exists" in body["error"]
    assert len([u for u in users(sandbox).values()
                if u["email"] == "new.person@example.com"]) == 1  # fmt: skip
    assert [e.state for e in read_journal(Path(out["journal"]))] == [State.DONE, State.FAILED]
    bad = flagdesk(sandbox, "create", "--email", "nope", "--root-role", "Viewer", "--yes",
                   data=tmp_path)  # fmt: skip
    assert bad.returncode == 2 and "not an email address" in bad.stderr
    # a name with control characters is refused by the option that gave it, nothing sent
    bad = flagdesk(sandbox, "create", "--email", "ok@example.com", "--name", "Bell\x07",
                   "--root-role", "Viewer", "--yes", data=tmp_path)  # fmt: skip
    assert bad.returncode == 2, bad.stderr
    assert "--name: control characters are not allowed: U+0007 at character 5" in bad.stderr
    assert by_email(sandbox, "ok@example.com") is None


def test_root_role_takes_only_the_servers_root_roles(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    """--root-role offered Owner and Member, project roles the server refuses as a root role
    (400, journaled as failed). It takes the server's root roles, a custom one included (sent
    by id: the request's schema names only the predefined ones), and refuses anything else
    before anything is sent, naming the root roles it takes."""
    helped = subprocess.run([sys.executable, "-m", "app", "users", "create", "--help"],
                            capture_output=True, text=True, timeout=60)  # fmt: skip
    said = " ".join(helped.stdout.split())
    assert "the root role: Admin, Editor, Viewer, or a custom root role" in said
    assert "Viewer, Owner" not in said and "(Owner and Member are project roles)" in said

    sql(sandbox, "INSERT INTO roles(id, name, type, description) VALUES(90, 'Auditor',"
                 " 'root-custom', 'Reads everything')")  # fmt: skip
    accepted = "Admin, Editor, Viewer, Auditor"
    for role, why in (
        ("Owner", f"“Owner” is a project role, not a root role; the root roles on {sandbox.url}"),
        ("Member", f"“Member” is a project role, not a root role; the root roles on {sandbox.url}"),
        ("Auditors", f"“Auditors” is not a root role on {sandbox.url}; its root roles"),
        ("4", f"“4” is not a root role on {sandbox.url}; its root roles"),
    ):
        email = f"{role.casefold()}@example.com"
        result = flagdesk(sandbox, "create", "--email", email, "--root-role", role, "--yes",
                          data=tmp_path)  # fmt: skip
        assert (result.returncode, result.stdout) == (2, ""), (role, result.stdout)
        assert result.stderr == (
            f"flagdesk users create: --root-role: {why}: {accepted}. Nothing was created\n"
        ), role
        assert by_email(sandbox, email) is None
    assert not (tmp_path / "journal").exists()

    # the server's spelling and a custom root role (by name or id) are taken
    dry = flagdesk(sandbox, "create", "--email", "e@example.com", "--root-role", "editor",
                   "--dry-run", data=tmp_path)  # fmt: skip
    assert dry.returncode == 0 and '"rootRole":"Editor"' in dry.stdout
    for role in ("Auditor", "90"):
        dry = flagdesk(sandbox, "create", "--email", "a@example.com", "--root-role", role,
                       "--dry-run", data=tmp_path)  # fmt: skip
        assert dry.returncode == 0 and '"rootRole":90' in dry.stdout, dry.stderr
    out = as_json(flagdesk(sandbox, "create", "--email", "auditor@example.com", "--root-role",
                           "Auditor", "--yes", "--json", data=tmp_path))  # fmt: skip
    assert out["exit_status"] == 0, out
    made = by_email(sandbox, "auditor@example.com")
    assert made is not None and made["rootRole"] == 90


def test_the_creation_limit_is_waited_out(tmp_path: Path) -> None:
    # one user per 8 s (the shared fixture's 2 s window can pass while a second `flagdesk`
    # process starts on a busy machine, and then nothing is waited out)
    with SandboxProcess(tmp_path / "limited.sqlite3", "--demo", "--create-user-limit", "1",
                        "--create-user-window", "8") as limited_sandbox:  # fmt: skip

        def create(email: str) -> subprocess.CompletedProcess[str]:
            return flagdesk(limited_sandbox, "create", "--email", email, "--root-role", "Viewer",
                            "--yes", data=tmp_path)  # fmt: skip

        first = create("a1@example.com")
        assert first.returncode == 0, first.stderr
        second = create("a2@example.com")
        assert second.returncode == 0, second.stderr
        assert "The server limits new users: waiting" in second.stdout
        assert by_email(limited_sandbox, "a2@example.com") is not None
    entries = read_journal(journal_folder(limited_sandbox.url, tmp_path) / JOURNAL_NAME)
    assert [(e.state, e.status) for e in entries] == [(State.DONE, 201)] * 2


def test_delete_dry_run_refusals_and_yes(sandbox: SandboxProcess, tmp_path: Path) -> None:
    dry = flagdesk(sandbox, "delete", "5", "6", "--dry-run", data=tmp_path)
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout == f"DELETE {PATH}/5\n\nDELETE {PATH}/6\n"
    for ids in (["5"], ["5", "6"]):  # one or many: no terminal to type on, nothing deleted
        no_terminal = flagdesk(sandbox, "delete", *ids, data=tmp_path)
        assert no_terminal.returncode == 2 and "--yes" in no_terminal.stderr
    stranger = flagdesk(sandbox, "delete", "5", "9999", "--yes", data=tmp_path)
    assert stranger.returncode == 2 and "not users" in stranger.stderr and "9999" in stranger.stderr
    assert {5, 6} <= set(users(sandbox))
    assert not (tmp_path / "journal").exists()

    out = as_json(flagdesk(sandbox, "delete", "5", "6", "--yes", "--json", data=tmp_path))
    assert (out["exit_status"], out["deleted"], out["failed"]) == (0, [5, 6], [])
    assert {5, 6}.isdisjoint(users(sandbox))
    entries = read_journal(Path(out["journal"]))
    assert [(e.action, e.ids, e.state, e.status) for e in entries] == [
        ("users.delete", [5], State.DONE, 200), ("users.delete", [6], State.DONE, 200)]  # fmt: skip
    snapshot = Path(out["journal"]).parent / entries[0].before["snapshot"]
    saved = json.loads(snapshot.read_text(encoding="utf-8"))
    assert (saved["id"], saved["name"], saved["rootRoleName"]) == (5, "Dmitri Volkov", "Editor")


def test_the_last_admin_is_not_deleted(sandbox: SandboxProcess, tmp_path: Path) -> None:
    sql(sandbox, "UPDATE users SET root_role = ? WHERE id IN (3, 4)", VIEWER)
    # two admins are left (1 and 2): the first may go, the last may not
    result = flagdesk(sandbox, "delete", "2", "1", "--yes", "--json", data=tmp_path)
    out = as_json(result)
    assert result.returncode == 1 and out["deleted"] == [2]
    assert out["failed"][0]["id"] == 1 and "only Admin" in out["failed"][0]["error"]
    assert 1 in users(sandbox) and 2 not in users(sandbox)
    (entry,) = read_journal(Path(out["journal"]))  # nothing journaled for the refused one
    assert entry.ids == [2]


def test_a_dry_run_says_the_last_admin_is_refused(sandbox: SandboxProcess, tmp_path: Path) -> None:
    """Said before anything is asked or sent, in --dry-run too (it used to come only once the
    deletion had been confirmed)."""
    sql(sandbox, "UPDATE users SET root_role = ? WHERE id IN (2, 3, 4)", VIEWER)
    result = flagdesk(sandbox, "delete", "1", "5", "--dry-run", "--json", data=tmp_path)
    out = as_json(result)
    assert result.returncode == 1
    assert out["failed"][0]["id"] == 1 and "only Admin" in out["failed"][0]["error"]
    assert [r["path"] for r in out["requests"]] == ["/api/admin/user-admin/5"]
    assert 1 in users(sandbox) and 5 in users(sandbox)


def test_on_a_terminal_delete_asks_and_no_changes_nothing(
    sandbox: SandboxProcess, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    for name, value in (("FLAGDESK_TOKEN", sandbox.admin_token),
                        ("FLAGDESK_DATA_DIR", str(tmp_path))):  # fmt: skip
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(sys, "stdin", Terminal("n\n"))
    assert cli.main(["users", "delete", "5", "--url", sandbox.url]) == 1
    asked = capsys.readouterr().err
    assert "Dmitri Volkov" in asked and "cannot be undone" in asked
    assert "Delete 1 user? [y/N]" in asked and "nothing was deleted" in asked
    assert 5 in users(sandbox)
    monkeypatch.setattr(sys, "stdin", Terminal("y\n"))
    assert cli.main(["users", "delete", "5", "--url", sandbox.url]) == 0
    assert 5 not in users(sandbox)

    # many ids: the number of users typed, not y
    many = ["users", "delete", "6", "7", "--url", sandbox.url]
    for wrong in ("y", "yes", "7"):
        monkeypatch.setattr(sys, "stdin", Terminal(f"{wrong}\n"))
        assert cli.main(many) == 1
        asked = capsys.readouterr().err
        assert "Delete 2 users? Type 2 to confirm:" in asked and "nothing was deleted" in asked
        assert {6, 7} <= set(users(sandbox))
    monkeypatch.setattr(sys, "stdin", Terminal("2\n"))
    assert cli.main(many) == 0
    assert not {6, 7} & set(users(sandbox))


def test_reset_password_prints_the_link(sandbox: SandboxProcess, tmp_path: Path) -> None:
    result = flagdesk(sandbox, "reset-password", "2", data=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(sandbox.url + "/reset-password?token=")
    again = as_json(flagdesk(sandbox, "reset-password", "2", "--json", data=tmp_path))
    assert (again["exit_status"], again["http_status"]) == (1, 429)
    other = as_json(flagdesk(sandbox, "reset-password", "3", "--json", data=tmp_path))
    assert other["resetPasswordUrl"].startswith(sandbox.url) and other["email"].startswith("bjorn")
    unknown = flagdesk(sandbox, "reset-password", "9999", data=tmp_path)
    assert unknown.returncode == 2 and "9999 is not a user" in unknown.stderr
    no_email = flagdesk(sandbox, "reset-password", "1", data=tmp_path)  # "admin" has none
    assert no_email.returncode == 1 and "no email address" in no_email.stderr
    entries = read_journal(journal_folder(sandbox.url, tmp_path) / JOURNAL_NAME)
    assert [(e.action, e.ids, e.state) for e in entries] == [
        ("users.reset_password", [2], State.DONE), ("users.reset_password", [2], State.FAILED),
        ("users.reset_password", [3], State.DONE)]  # fmt: skip
    assert "token=" not in (journal_folder(sandbox.url, tmp_path) / JOURNAL_NAME).read_text()
