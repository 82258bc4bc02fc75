"""`flagdesk pats list|create|delete` against sandboxes over HTTP, as a subprocess (and in
process where a terminal is pretended): the list as text and JSON; `create` prints the secret
alone on standard output (and in --json), once, and it works; --dry-run prints the exact
request and sends nothing; without a terminal and without --yes nothing changes; the terminal's
question; `delete` by description and by id, words naming no token refused before anything is
sent; the journal's entries; and an admin API token refused with exit status 4, nothing sent to
the personal access token endpoints (a recording proxy in front of the sandbox)."""

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
from app.api.models import PersonalAccessTokens
from sandbox.process import SandboxProcess
from tests.app.test_cli_users import Terminal, as_json, run_flagdesk
from tests.conftest import personal_token_of
from tests.faults import Decide, FaultServer, Hang, Reply, Seen

PATS = "/api/admin/user/tokens"


def flagdesk(
    sb: SandboxProcess | str, *args: str, data: Path, token: str
) -> subprocess.CompletedProcess[str]:
    """`flagdesk pats ARGS --url <sandbox>` with stdin not a terminal."""
    return run_flagdesk(("pats",), sb, args, data, token)


def descriptions(sb: SandboxProcess, token: str) -> list[str]:
    with httpx.Client(base_url=sb.url, headers={"Authorization": token}) as http:
        return [t.description for t in PersonalAccessTokens.model_validate(
            http.get(PATS).json()).pats]  # fmt: skip


def test_list_create_and_delete(sandbox: SandboxProcess, tmp_path: Path) -> None:
    token = personal_token_of(sandbox, "admin")
    (own,) = descriptions(sandbox, token)

    listed = flagdesk(sandbox, "list", data=tmp_path, token=token)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0].split() == ["ID", "DESCRIPTION", "EXPIRES", "CREATED", "LAST", "USED"]
    assert own in lines[1] and "2099-01-01 00:00 UTC" in lines[1]
    assert lines[-1] == f"1 personal access token of Admin on {sandbox.url}"

    dry = flagdesk(sandbox, "create", "--description", "ci", "--expires", "2031-01-31",
                   "--dry-run", data=tmp_path, token=token)  # fmt: skip
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.splitlines()[0] == f"POST {PATS}"
    assert '{"description":"ci","expiresAt":"2031-01-31T00:00:00.000Z"}' in dry.stdout
    assert "Dry run: nothing was sent" in dry.stderr
    refused = flagdesk(sandbox, "create", "--description", "ci", "--expires", "2031-01-31",
                       data=tmp_path, token=token)  # fmt: skip
    assert refused.returncode == 2 and "no terminal to confirm" in refused.stderr
    assert descriptions(sandbox, token) == [own]

    made = flagdesk(sandbox, "create", "--description", "ci", "--expires", "2031-01-31",
                    "--yes", data=tmp_path, token=token)  # fmt: skip
    assert made.returncode == 0, made.stderr
    secret = made.stdout.strip()
    assert made.stdout == secret + "\n" and secret.startswith("user:")  # the secret alone
    assert "Created the personal access token “ci”" in made.stderr
    assert f"secret ending …{secret[-4:]}" in made.stderr and secret not in made.stderr
    with httpx.Client(base_url=sandbox.url, headers={"Authorization": secret}) as http:
        assert http.get(PATS).status_code == 200

    as_object = as_json(flagdesk(sandbox, "create", "--description", "cd", "--expires",
                                 "2031-01-31T12:00:00+01:00", "--yes", "--json",
                                 data=tmp_path, token=token))  # fmt: skip
    assert as_object["secret"].startswith("user:")
    assert as_object["token"]["description"] == "cd"
    assert as_object["token"]["expiresAt"] == "2031-01-31T11:00:00.000Z"
    taken = flagdesk(sandbox, "create", "--description", "cd", "--expires", "2031-01-31",
                     "--yes", data=tmp_path, token=token)  # fmt: skip
    assert taken.returncode == 1 and "PAT description already exists." in taken.stderr
    past = flagdesk(sandbox, "create", "--description", "old", "--expires", "2001-01-01",
                    "--yes", data=tmp_path, token=token)  # fmt: skip
    assert past.returncode == 2 and "is not in the future" in past.stderr
    bad = flagdesk(sandbox, "create", "--description", "x", "--expires", "soon", "--yes",
                   data=tmp_path, token=token)  # fmt: skip
    assert bad.returncode == 2 and "'soon' is not a date" in bad.stderr

    listed_json = as_json(flagdesk(sandbox, "list", "--json", data=tmp_path, token=token))
    by_name = {t["description"]: t for t in listed_json["pats"]}
    assert set(by_name) == {own, "ci", "cd"} and listed_json["count"] == 3
    assert "secret" not in json.dumps(listed_json)

    unknown = flagdesk(sandbox, "delete", "ci", "nope", "--yes", data=tmp_path, token=token)
    assert unknown.returncode == 2 and "“nope”" in unknown.stderr
    dry = flagdesk(sandbox, "delete", "ci", "--dry-run", data=tmp_path, token=token)
    assert dry.returncode == 0 and f"DELETE {PATS}/{by_name['ci']['id']}" in dry.stdout
    assert set(descriptions(sandbox, token)) == {own, "ci", "cd"}
    gone = as_json(flagdesk(sandbox, "delete", "ci", str(by_name["cd"]["id"]), "--yes",
                            "--json", data=tmp_path, token=token))  # fmt: skip
    assert gone["deleted"] == [by_name["ci"]["id"], by_name["cd"]["id"]]
    assert descriptions(sandbox, token) == [own]
    with httpx.Client(base_url=sandbox.url, headers={"Authorization": secret}) as http:
        assert http.get(PATS).status_code == 401

    entries = read_journal(journal_folder(sandbox.url, tmp_path) / "journal.jsonl")
    assert [(e.action, e.ids, e.status) for e in entries] == [
        ("personal_tokens.create", ["ci"], 201),
        ("personal_tokens.create", ["cd"], 201),
        ("personal_tokens.create", ["cd"], 409),
        ("personal_tokens.delete", [by_name["ci"]["id"]], 200),
        ("personal_tokens.delete", [by_name["cd"]["id"]], 200),
    ]
    assert entries[0].after == {"id": by_name["ci"]["id"], "secretEnd": secret[-4:]}
    assert entries[0].token == "personal" and entries[0].user == "Admin"


def test_on_a_terminal_it_asks(
    sandbox: SandboxProcess,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    token = personal_token_of(sandbox, "admin")
    monkeypatch.setenv("FLAGDESK_TOKEN", token)
    monkeypatch.setenv("FLAGDESK_DATA_DIR", str(tmp_path))
    argv = ["pats", "create", "--description", "asked", "--expires", "2031-01-31", "--url",
            sandbox.url]  # fmt: skip
    monkeypatch.setattr(sys, "stdin", Terminal("n\n"))
    assert cli.main(argv) == 1
    said = capsys.readouterr()
    assert "A personal access token “asked” of Admin will be created" in said.err
    assert "Create the personal access token “asked”? [y/N]" in said.err
    assert "asked" not in descriptions(sandbox, token)
    monkeypatch.setattr(sys, "stdin", Terminal("y\n"))
    assert cli.main(argv) == 0
    assert capsys.readouterr().out.startswith("user:")
    for name in ("two", "three"):
        monkeypatch.setattr(sys, "stdin", Terminal("y\n"))
        assert cli.main([*argv[:3], name, *argv[4:]]) == 0
    capsys.readouterr()
    # more than one to delete: their number typed
    delete = ["pats", "delete", "two", "three", "--url", sandbox.url]
    monkeypatch.setattr(sys, "stdin", Terminal("y\n"))
    assert cli.main(delete) == 1
    assert "Type 2 to confirm:" in capsys.readouterr().err
    monkeypatch.setattr(sys, "stdin", Terminal("2\n"))
    assert cli.main(delete) == 0
    assert not {"two", "three"} & set(descriptions(sandbox, token))


def test_an_admin_api_token_is_refused_and_nothing_is_sent_to_them(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    async def scenario() -> tuple[list[subprocess.CompletedProcess[str]], list[Seen]]:
        async with httpx.AsyncClient(base_url=sandbox.url) as upstream:

            async def forward(seen: Seen) -> Reply:
                headers = {k: v for k, v in seen.headers.items()
                           if k in ("authorization", "content-type")}  # fmt: skip
                answer = await upstream.request(seen.method, seen.target, headers=headers,
                                                content=seen.body)  # fmt: skip
                kind = answer.headers.get("content-type", "application/json")
                return Reply(answer.status_code, answer.content, {"Content-Type": kind})

            async with FaultServer(Decide(forward)) as proxy:
                runs = []
                create = ("create", "--description", "x", "--expires", "2031-01-31", "--yes")
                for args in (("list",), create, ("delete", "1", "--yes")):
                    env = {**os.environ, "FLAGDESK_TOKEN": sandbox.admin_token,
                           "FLAGDESK_DATA_DIR": str(tmp_path)}  # fmt: skip
                    runs.append(await asyncio.to_thread(
                        subprocess.run, [sys.executable, "-m", "app", "pats", *args, "--url",
                                         proxy.url], capture_output=True, text=True, env=env,
                        stdin=subprocess.DEVNULL, timeout=60))  # fmt: skip
                return runs, list(proxy.requests)

    runs, seen = asyncio.run(scenario())
    for run in runs:
        assert run.returncode == 4, run.stderr
        assert "needs a personal access token" in run.stderr
        assert "admin API token has no user" in run.stderr
    assert seen and not [s for s in seen if s.target.startswith(PATS)]
    assert not (tmp_path / "journal").exists()


def test_a_hostile_description_is_shown_escaped(sandbox: SandboxProcess, tmp_path: Path) -> None:
    """A description with control characters (written straight into the database: the API
    refuses them) is listed and named in a deletion as escapes, never obeyed by the terminal."""
    from tests.app.test_cli_control_chars import HOSTILE, assert_visible
    from tests.sandbox.test_inactive_delete import sql

    token = personal_token_of(sandbox, "admin")
    made = flagdesk(sandbox, "create", "--description", "plain", "--expires", "2031-01-31",
                    "--yes", data=tmp_path, token=token)  # fmt: skip
    assert made.returncode == 0, made.stderr
    sql(sandbox, "UPDATE personal_access_tokens SET description = ? WHERE description = 'plain'",
        f"pat{HOSTILE}")  # fmt: skip
    listed = flagdesk(sandbox, "list", data=tmp_path, token=token)
    assert listed.returncode == 0, listed.stderr
    assert_visible(listed)
    listed_json = flagdesk(sandbox, "list", "--json", data=tmp_path, token=token)
    assert f"pat{HOSTILE}" in {t["description"] for t in json.loads(listed_json.stdout)["pats"]}
    assert "\\u009b31m" in listed_json.stdout
    pat_id = next(t["id"] for t in json.loads(listed_json.stdout)["pats"]
                  if t["description"].startswith("pat"))  # fmt: skip
    gone = flagdesk(sandbox, "delete", str(pat_id), "--yes", data=tmp_path, token=token)
    assert gone.returncode == 0, gone.stderr
    assert_visible(gone)


def test_killed_while_creating_the_entry_is_in_doubt_and_checked(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    """A proxy passes every request to the sandbox but holds the creation; the command is
    killed (SIGKILL) once the proxy has it: the journal's entry stays `sent`, read as in doubt,
    naming the description and no secret; checked against the server, no such token was made
    (the held request never reached it)."""
    import signal

    from app.actions.check import check_entry
    from app.actions.journal import State
    from app.api.client import AdminClient

    token = personal_token_of(sandbox, "admin")

    async def scenario() -> tuple[int, list[Seen]]:
        async with httpx.AsyncClient(base_url=sandbox.url) as upstream:

            async def choose(seen: Seen) -> Reply | Hang:
                if seen.method == "POST" and seen.target == PATS:
                    return Hang()
                headers = {k: v for k, v in seen.headers.items()
                           if k in ("authorization", "content-type")}  # fmt: skip
                answer = await upstream.request(seen.method, seen.target, headers=headers,
                                                content=seen.body)  # fmt: skip
                kind = answer.headers.get("content-type", "application/json")
                return Reply(answer.status_code, answer.content, {"Content-Type": kind})

            async with FaultServer(Decide(choose)) as proxy:
                env = {**os.environ, "FLAGDESK_TOKEN": token, "FLAGDESK_DATA_DIR": str(tmp_path)}
                child = await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "app", "pats", "create", "--description", "held",
                    "--expires", "2031-01-31", "--yes", "--url", proxy.url, env=env,
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
    assert [s.target for s in seen if s.method == "POST"] == [PATS]
    (entry,) = read_journal(next((tmp_path / "journal").iterdir()) / "journal.jsonl")
    assert (entry.action, entry.ids, entry.state, entry.after) == (
        "personal_tokens.create", ["held"], State.IN_DOUBT, None)  # fmt: skip

    async def check() -> tuple[State, str]:
        async with AdminClient(sandbox.url, token) as c:
            verdict = await check_entry(c, entry)
        return verdict.state, verdict.message

    state, message = asyncio.run(check())
    assert state is State.FAILED and "no personal access token “held”" in message
    assert "held" not in descriptions(sandbox, token)
