"""`flagdesk journal undo ENTRY` as a subprocess against a sandbox: a group deleted by `flagdesk
groups delete` is recreated from its snapshot by the entry's first characters (after a dry run
that sends nothing), journaled as an undo; a change without an undo says why (exit 1); an
unknown entry is bad usage (exit 2); no terminal and no --yes changes nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from app.actions.journal import read_journal
from sandbox.process import SandboxProcess
from tests.app.test_cli_users import run_flagdesk


def flagdesk(sb: SandboxProcess, *words: str, data: Path) -> tuple[int, dict[str, Any]]:
    done = run_flagdesk(words, sb, ("--json",), data, None)
    return done.returncode, json.loads(done.stdout or "{}")


def group_names(sb: SandboxProcess) -> list[str]:
    headers = {"Authorization": sb.admin_token}
    listed = httpx.get(f"{sb.url}/api/admin/groups", headers=headers).json()["groups"]
    return [g["name"] for g in listed]


def test_a_deleted_group_is_recreated_by_its_entry(sandbox: SandboxProcess, tmp_path: Path) -> None:
    before = group_names(sandbox)
    status, deleted = flagdesk(sandbox, "groups", "delete", "1", "--yes", data=tmp_path)
    assert status == 0 and deleted["deleted"] is True
    name = deleted["name"]
    assert name not in group_names(sandbox)
    entry = deleted["entry"]

    status, dry = flagdesk(sandbox, "journal", "undo", entry[:6], "--dry-run", data=tmp_path)
    assert status == 0, dry
    assert [(r["method"], r["path"]) for r in dry["requests"]] == [("POST", "/api/admin/groups")]
    assert dry["requests"][0]["body"]["name"] == name
    assert name not in group_names(sandbox)  # nothing sent

    status, undone = flagdesk(sandbox, "journal", "undo", entry[:6], "--yes", data=tmp_path)
    assert status == 0, undone
    assert sorted(group_names(sandbox)) == sorted(before)
    first, second = read_journal(Path(undone["journal"]))
    assert (first.id, first.action) == (entry, "groups.delete")
    assert (second.action, second.before["undo"], second.before["name"]) == (
        "groups.create",
        True,
        name,
    )

    # an undo is not undone again
    status, again = flagdesk(sandbox, "journal", "undo", second.id, "--yes", data=tmp_path)
    assert status == 1 and "itself an undo" in again["error"]


def test_what_cannot_be_undone_says_why(sandbox: SandboxProcess, tmp_path: Path) -> None:
    status, deleted = flagdesk(sandbox, "users", "inactive", "delete", "--ids", "39", "--yes",
                               data=tmp_path)  # fmt: skip
    assert status == 0, deleted
    status, refused = flagdesk(sandbox, "journal", "undo", deleted["entry"], "--yes",
                               data=tmp_path)  # fmt: skip
    assert status == 1
    assert "a deleted user cannot be brought back" in refused["error"]
    status, unknown = flagdesk(sandbox, "journal", "undo", "feedbeef", "--yes", data=tmp_path)
    assert status == 2 and "no entry 'feedbeef'" in unknown["error"]
    no_terminal = run_flagdesk(("journal", "undo", deleted["entry"]), sandbox, (), tmp_path, None)
    assert no_terminal.returncode == 2 and "Add --yes" in no_terminal.stderr
