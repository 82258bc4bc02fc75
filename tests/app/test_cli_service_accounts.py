"""`flagdesk service-accounts list|create|edit|delete` and `flagdesk service-accounts tokens
list|create|delete` against sandboxes over HTTP, as a subprocess (and in process where a
terminal is pretended): the lists as text and JSON; a created token's secret alone on standard
output (and in --json), once, and it works as the account; --dry-run prints the exact request
and sends nothing; without a terminal and without --yes nothing changes; the terminal's
question; names that fit nothing refused before anything is sent; the journal's entries and
their undo; a token's creation killed in flight (in doubt, then checked); and a played
open-source release refused with exit status 4 ("needs Unleash Enterprise"), nothing sent to
the service account endpoints."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from app import cli
from app.actions.journal import journal_folder, read_journal
from sandbox.process import SandboxProcess
from tests.app.test_cli_users import Terminal, as_json, run_flagdesk
from tests.faults import Decide, FaultServer, Hang, Reply, Seen

ACCOUNTS = "/api/admin/service-account"


def flagdesk(sb: SandboxProcess | str, *args: str, data: Path,
             token: str | None = None) -> subprocess.CompletedProcess[str]:  # fmt: skip
    """`flagdesk service-accounts ARGS --url <sandbox>` with stdin not a terminal."""
    return run_flagdesk(("service-accounts",), sb, args, data, token)


def usernames(sb: SandboxProcess) -> list[str]:
    with sb.admin() as http:
        return [a["username"] for a in http.get(ACCOUNTS).json()["serviceAccounts"]]


def test_accounts_list_create_edit_delete(sandbox: SandboxProcess, tmp_path: Path) -> None:
    listed = flagdesk(sandbox, "list", data=tmp_path)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0].split() == ["ID", "USERNAME", "NAME", "ROOT", "ROLE", "TOKENS", "CREATED"]
    assert "ci-deploy-bot" in lines[1] and "Viewer" in lines[1]
    assert lines[-1] == f"1 service account on {sandbox.url}"

    create = ("create", "--username", "deployer", "--name", "Deployer", "--root-role", "editor")
    dry = flagdesk(sandbox, *create, "--dry-run", data=tmp_path)
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.splitlines()[0] == f"POST {ACCOUNTS}"
    assert '{"name":"Deployer","username":"deployer","rootRole":2}' in dry.stdout
    refused = flagdesk(sandbox, *create, data=tmp_path)
    assert refused.returncode == 2 and "no terminal to confirm" in refused.stderr
    bad_role = flagdesk(sandbox, *create[:-1], "Owner", "--yes", data=tmp_path)
    assert bad_role.returncode == 2 and "“Owner” is not a root role" in bad_role.stderr
    assert "Editor (2)" in bad_role.stderr
    assert usernames(sandbox) == ["ci-deploy-bot"]

    made = as_json(flagdesk(sandbox, *create, "--yes", "--json", data=tmp_path))
    assert made["serviceAccount"]["username"] == "deployer"
    assert made["serviceAccount"]["rootRole"] == 2
    account_id = made["id"]
    taken = flagdesk(sandbox, *create, "--yes", data=tmp_path)
    assert taken.returncode == 1 and "already exists" in taken.stderr

    edit_dry = flagdesk(sandbox, "edit", "deployer", "--root-role", "Admin", "--dry-run",
                        data=tmp_path)  # fmt: skip
    assert edit_dry.returncode == 0, edit_dry.stderr
    assert f"PUT {ACCOUNTS}/{account_id}" in edit_dry.stdout and '{"rootRole":1}' in edit_dry.stdout
    nothing = flagdesk(sandbox, "edit", "deployer", "--yes", data=tmp_path)
    assert nothing.returncode == 2 and "give --name, --root-role" in nothing.stderr
    edited = flagdesk(sandbox, "edit", str(account_id), "--name", "Deploy bot", "--root-role",
                      "1", "--yes", data=tmp_path)  # fmt: skip
    assert edited.returncode == 0, edited.stderr
    assert "name “Deployer” → “Deploy bot”" in edited.stdout
    assert "root role Editor (role 2) → Admin (role 1)" in edited.stdout

    unknown = flagdesk(sandbox, "delete", "nobody", "--yes", data=tmp_path)
    assert unknown.returncode == 2 and "“nobody”" in unknown.stderr
    assert "Nothing was deleted" in unknown.stderr
    gone = as_json(flagdesk(sandbox, "delete", "deployer", "--yes", "--json", data=tmp_path))
    assert gone["deleted"] == account_id and Path(gone["snapshot"]).is_file()
    assert json.loads(Path(gone["snapshot"]).read_text())["name"] == "Deploy bot"
    assert usernames(sandbox) == ["ci-deploy-bot"]

    entries = read_journal(journal_folder(sandbox.url, tmp_path) / "journal.jsonl")
    assert [(e.action, e.ids, e.status) for e in entries] == [
        ("service_accounts.create", ["deployer"], 201),
        ("service_accounts.create", ["deployer"], 409),
        ("service_accounts.edit", [account_id], 200),
        ("service_accounts.delete", [account_id], 200),
    ]
    assert entries[0].after == {"id": account_id}
    assert entries[2].before["account"] == {"name": "Deployer", "rootRole": 2}

    # undo the deletion: created again, a new id, and the command says its tokens are lost
    undo = run_flagdesk(("journal", "undo", entries[3].id), sandbox, ("--yes",), tmp_path, None)
    assert undo.returncode == 0, undo.stderr + undo.stdout
    assert usernames(sandbox) == ["ci-deploy-bot", "deployer"]


def test_tokens_list_create_and_delete(sandbox: SandboxProcess, tmp_path: Path) -> None:
    empty = flagdesk(sandbox, "tokens", "list", "ci-deploy-bot", data=tmp_path)
    assert empty.returncode == 0, empty.stderr
    assert empty.stdout.splitlines()[-1].startswith("0 tokens of the service account")

    create = ("tokens", "create", "ci-deploy-bot", "--description", "deploy", "--expires",
              "2031-01-31")  # fmt: skip
    dry = flagdesk(sandbox, *create, "--dry-run", data=tmp_path)
    assert dry.returncode == 0, dry.stderr
    (bot,) = json.loads(flagdesk(sandbox, "list", "--json", data=tmp_path).stdout)[
        "serviceAccounts"]  # fmt: skip
    assert dry.stdout.splitlines()[0] == f"POST {ACCOUNTS}/{bot['id']}/token"
    assert '{"description":"deploy","expiresAt":"2031-01-31T00:00:00.000Z"}' in dry.stdout
    refused = flagdesk(sandbox, *create, data=tmp_path)
    assert refused.returncode == 2 and "no terminal to confirm" in refused.stderr

    made = flagdesk(sandbox, *create, "--yes", data=tmp_path)
    assert made.returncode == 0, made.stderr
    secret = made.stdout.strip()
    assert made.stdout == secret + "\n" and secret.startswith("user:")  # the secret alone
    assert f"secret ending …{secret[-4:]}" in made.stderr and secret not in made.stderr
    with httpx.Client(base_url=sandbox.url, headers={"Authorization": secret}) as http:
        assert http.get("/api/admin/user").json()["user"]["username"] == "ci-deploy-bot"

    as_object = as_json(flagdesk(sandbox, "tokens", "create", str(bot["id"]), "--description",
                                 "second", "--expires", "2031-02-01", "--yes", "--json",
                                 data=tmp_path))  # fmt: skip
    assert as_object["secret"].startswith("user:") and as_object["token"]["description"] == "second"
    again = flagdesk(sandbox, *create, "--yes", data=tmp_path)
    assert again.returncode == 2 and "has a token described “deploy” already" in again.stderr

    listed = as_json(flagdesk(sandbox, "tokens", "list", "ci-deploy-bot", "--json",
                              data=tmp_path))  # fmt: skip
    assert [t["description"] for t in listed["tokens"]] == ["deploy", "second"]
    assert "secret" not in json.dumps(listed)
    ids = {t["description"]: t["id"] for t in listed["tokens"]}

    unknown = flagdesk(sandbox, "tokens", "delete", "ci-deploy-bot", "deploy", "nope", "--yes",
                       data=tmp_path)  # fmt: skip
    assert unknown.returncode == 2 and "“nope”" in unknown.stderr
    gone = as_json(flagdesk(sandbox, "tokens", "delete", "ci-deploy-bot", "deploy",
                            str(ids["second"]), "--yes", "--json", data=tmp_path))  # fmt: skip
    assert gone["deleted"] == [ids["deploy"], ids["second"]]
    with httpx.Client(base_url=sandbox.url, headers={"Authorization": secret}) as http:
        assert http.get("/api/admin/user").status_code == 401

    entries = read_journal(journal_folder(sandbox.url, tmp_path) / "journal.jsonl")
    assert [(e.action, e.ids, e.status) for e in entries] == [
        ("service_accounts.create_token", ["deploy"], 201),
        ("service_accounts.create_token", ["second"], 201),
        ("service_accounts.delete_token", [ids["deploy"]], 200),
        ("service_accounts.delete_token", [ids["second"]], 200),
    ]
    assert entries[0].after == {"id": ids["deploy"], "secretEnd": secret[-4:]}
    journal_text = (journal_folder(sandbox.url, tmp_path) / "journal.jsonl").read_text()
    assert secret not in journal_text and as_object["secret"] not in journal_text
    never = run_flagdesk(("journal", "undo", entries[2].id), sandbox, ("--yes",), tmp_path, None)
    assert never.returncode != 0 and "cannot be brought back" in never.stderr


def test_on_a_terminal_it_asks(
    sandbox: SandboxProcess,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("FLAGDESK_TOKEN", sandbox.admin_token)
    monkeypatch.setenv("FLAGDESK_DATA_DIR", str(tmp_path))
    argv = ["service-accounts", "delete", "ci-deploy-bot", "--url", sandbox.url]
    monkeypatch.setattr(sys, "stdin", Terminal("n\n"))
    assert cli.main(argv) == 1
    said = capsys.readouterr().err
    assert "The service account “ci-deploy-bot”" in said and "will be deleted" in said
    assert "Delete the service account “ci-deploy-bot”" in said and "[y/N]" in said
    assert usernames(sandbox) == ["ci-deploy-bot"]
    monkeypatch.setattr(sys, "stdin", Terminal("y\n"))
    assert cli.main(argv) == 0
    assert usernames(sandbox) == []


def test_open_source_is_refused_and_nothing_is_sent(tmp_path: Path) -> None:
    """On a played open-source release the probe's 404 says "needs Unleash Enterprise": every
    sub-command exits 4 and none reaches a service account route but the probe's list."""
    with SandboxProcess(tmp_path / "oss.sqlite3", "--demo", "--as-version", "8.2") as sb:

        async def scenario() -> tuple[list[subprocess.CompletedProcess[str]], list[Seen]]:
            async with httpx.AsyncClient(base_url=sb.url) as upstream:

                async def forward(seen: Seen) -> Reply:
                    headers = {k: v for k, v in seen.headers.items()
                               if k in ("authorization", "content-type")}  # fmt: skip
                    answer = await upstream.request(seen.method, seen.target, headers=headers,
                                                    content=seen.body)  # fmt: skip
                    kind = answer.headers.get("content-type", "application/json")
                    return Reply(answer.status_code, answer.content, {"Content-Type": kind})

                async with FaultServer(Decide(forward)) as proxy:
                    runs = []
                    for args in (("list",), ("create", "--username", "u", "--name", "n",
                                             "--root-role", "Viewer", "--yes"),
                                 ("delete", "1", "--yes"), ("tokens", "list", "1"),
                                 ("tokens", "create", "1", "--description", "d", "--expires",
                                  "2031-01-31", "--yes")):  # fmt: skip
                        env = {**os.environ, "FLAGDESK_TOKEN": sb.admin_token,
                               "FLAGDESK_DATA_DIR": str(tmp_path)}  # fmt: skip
                        runs.append(await asyncio.to_thread(
                            subprocess.run, [sys.executable, "-m", "app", "service-accounts",
                                             *args, "--url", proxy.url], capture_output=True,
                            text=True, env=env, stdin=subprocess.DEVNULL, timeout=60))  # fmt: skip
                    return runs, list(proxy.requests)

        runs, seen = asyncio.run(scenario())
    for run in runs:
        assert run.returncode == 4, run.stderr
        assert "Service accounts need Unleash Enterprise" in run.stderr
    touched = [(s.method, s.target) for s in seen if s.target.startswith(ACCOUNTS)]
    assert touched and set(touched) == {("GET", ACCOUNTS)}  # the probe's alone
    assert not (tmp_path / "journal").exists()


def test_killed_while_creating_a_token_the_entry_is_in_doubt_and_checked(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    """A proxy passes every request to the sandbox but holds the token's creation; the command
    is killed (SIGKILL) once the proxy has it: the journal's entry stays `sent`, read as in
    doubt, naming the description and no secret; checked against the server, no such token was
    made (the held request never reached it)."""
    import signal

    from app.actions.check import check_entry
    from app.actions.journal import State
    from app.api.client import AdminClient

    with sandbox.admin() as http:
        bot = http.get(ACCOUNTS).json()["serviceAccounts"][0]["id"]
    tokens = f"{ACCOUNTS}/{bot}/token"

    async def scenario() -> tuple[int, list[Seen]]:
        async with httpx.AsyncClient(base_url=sandbox.url) as upstream:

            async def choose(seen: Seen) -> Reply | Hang:
                if seen.method == "POST" and seen.target == tokens:
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
                    sys.executable, "-m", "app", "service-accounts", "tokens", "create",
                    "ci-deploy-bot", "--description", "held", "--expires", "2031-01-31",
                    "--yes", "--url", proxy.url, env=env, stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
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
    assert [s.target for s in seen if s.method == "POST"] == [tokens]
    (entry,) = read_journal(next((tmp_path / "journal").iterdir()) / "journal.jsonl")
    assert (entry.action, entry.ids, entry.state, entry.after) == (
        "service_accounts.create_token", ["held"], State.IN_DOUBT, None)  # fmt: skip

    async def check() -> tuple[State, str]:
        async with AdminClient(sandbox.url, sandbox.admin_token) as c:
            verdict = await check_entry(c, entry)
        return verdict.state, verdict.message

    state, message = asyncio.run(check())
    assert state is State.FAILED and "no token “held” of the service account" in message
