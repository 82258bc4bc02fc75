"""Issue 36's secrets test: every token action, run through the command with the log at its most
verbose (`flagdesk --verbose`), leaves no secret it made in the log folder, the journal or the
data folder (nor the configuration folder, nor the sandbox's database): the secret goes to
standard output alone.

Each kind of token action is a `Scenario`: it runs its commands (through `Run`, which points
FLAGDESK_LOG_DIR, FLAGDESK_DATA_DIR and FLAGDESK_CONFIG_DIR at the test's own folders) and
returns the secrets it made, read from the commands' standard output. The personal access
tokens' scenario is here; another kind of token (API tokens, service accounts' tokens) adds
its scenario to `SCENARIOS`, and the same test holds it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from sandbox.process import SandboxProcess
from tests.conftest import personal_token_of


@dataclass(frozen=True)
class Run:
    """`flagdesk --verbose WORDS... --url <sandbox>` with the test's folders and `token`."""

    sandbox: SandboxProcess
    folders: dict[str, Path]

    def __call__(self, token: str, *words: str) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("FLAGDESK_")}
        env.update({f"FLAGDESK_{k.upper()}_DIR": str(v) for k, v in self.folders.items()})
        env["FLAGDESK_TOKEN"] = token
        done = subprocess.run(
            [sys.executable, "-m", "app", "--verbose", *words, "--url", self.sandbox.url],
            capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, (words, done.stderr)
        return done


@dataclass(frozen=True)
class Scenario:
    """One kind of token action: `act(run, sandbox)` carries out its creations (and whatever
    follows them: listing, deleting, undoing) through the command, and returns the secrets it
    made."""

    name: str
    act: Callable[[Run, SandboxProcess], list[str]]


def _personal_access_tokens(run: Run, sb: SandboxProcess) -> list[str]:
    import json

    from app.actions.journal import journal_folder, read_journal

    mine = personal_token_of(sb, "admin")
    made = [run(mine, "pats", "create", "--description", "text", "--expires", "2031-01-31",
                "--yes").stdout.strip()]  # fmt: skip
    answer = run(mine, "pats", "create", "--description", "json", "--expires", "2031-01-31",
                 "--yes", "--json")  # fmt: skip
    made.append(json.loads(answer.stdout)["secret"])
    run(made[0], "pats", "list")  # the new token used (and logged) as the connection's
    run(mine, "pats", "list", "--json")
    run(mine, "pats", "delete", "text", "--yes")
    journal = read_journal(journal_folder(sb.url, run.folders["data"]) / "journal.jsonl")
    created = next(e for e in journal if e.ids == ["json"])
    run(mine, "journal", "undo", created.id, "--yes")
    return made


#: every kind of token action, each made and undone through the commands
SCENARIOS = [Scenario("personal access tokens", _personal_access_tokens)]


# ---------------------------------------------------------------------------- service accounts


def _service_account_tokens(run: Run, sb: SandboxProcess) -> list[str]:
    """An Admin service account's tokens made as text and as JSON, one used as the connection's
    token (its requests logged), listed, deleted, one creation undone, then the account deleted
    and its deletion undone (created again, without its tokens)."""
    import json

    from app.actions.journal import journal_folder, read_journal

    admin = sb.admin_token
    words = ("service-accounts", "tokens", "create", "robot")
    run(admin, "service-accounts", "create", "--username", "robot", "--name", "Robot",
        "--root-role", "Admin", "--yes")  # fmt: skip
    made = [run(admin, *words, "--description", "text", "--expires", "2031-01-31",
                "--yes").stdout.strip()]  # fmt: skip
    answer = run(admin, *words, "--description", "json", "--expires", "2031-01-31", "--yes",
                 "--json")  # fmt: skip
    made.append(json.loads(answer.stdout)["secret"])
    run(made[0], "service-accounts", "list")  # the new token used (and logged) as the connection's
    run(made[1], "service-accounts", "tokens", "list", "robot", "--json")
    run(admin, "service-accounts", "tokens", "delete", "robot", "text", "--yes")
    journal = read_journal(journal_folder(sb.url, run.folders["data"]) / "journal.jsonl")
    created = next(e for e in journal if e.ids == ["json"])
    run(admin, "journal", "undo", created.id, "--yes")
    run(admin, "service-accounts", "delete", "robot", "--yes")
    journal = read_journal(journal_folder(sb.url, run.folders["data"]) / "journal.jsonl")
    run(admin, "journal", "undo", journal[-1].id, "--yes")
    return made


SCENARIOS.append(Scenario("service account tokens", _service_account_tokens))


def _forms(secret: str) -> list[str]:
    """A secret and the parts of it that are as good: after its `prefix:` or `prefix.`."""
    forms = [secret]
    for mark in (":", "."):
        tail = secret.rpartition(mark)[2]
        if mark in secret and len(tail) >= 16:
            forms.append(tail)
    return forms


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_no_secret_reaches_the_log_the_journal_or_the_data_folder(
    scenario: Scenario, sandbox: SandboxProcess, tmp_path: Path
) -> None:
    folders = {name: tmp_path / name for name in ("log", "data", "config")}
    secrets = scenario.act(Run(sandbox, folders), sandbox)
    assert secrets and all(len(s) >= 20 for s in secrets)
    log = (folders["log"] / "flagdesk.log").read_text(encoding="utf-8")
    assert " DEBUG " in log  # as verbose as it gets: each request is there
    journal = list((folders["data"] / "journal").rglob("journal.jsonl"))
    assert journal and all(s[-4:] in journal[0].read_text() for s in secrets)  # the last four
    files = [p for folder in folders.values() for p in folder.rglob("*") if p.is_file()]
    files += [p for p in Path(sandbox.db).parent.iterdir() if p.is_file()]
    found = [(str(path), form[:8]) for path in files for secret in secrets
             for form in _forms(secret) if form.encode() in path.read_bytes()]  # fmt: skip
    assert not found, f"secrets found in {found}"
