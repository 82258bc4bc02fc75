"""`flagdesk archive list|revive|delete` against sandboxes over HTTP, as a subprocess (and in
process where a terminal is pretended): the list as text, JSON and CSV; --dry-run prints the
exact requests and changes nothing; without a terminal and without --yes nothing changes; the
terminal's questions (y to revive, the project's id typed to delete); --yes revives and deletes
with a snapshot and a journal entry, read back from the server; names that are not archived
flags of the project are refused; the exit statuses."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app import cli
from app.actions.archived_features import SNAPSHOT_FIELDS
from app.actions.journal import JOURNAL_NAME, State, journal_folder, read_journal
from sandbox.process import SandboxProcess
from tests.app.test_cli_users import Terminal, as_json, run_flagdesk
from tests.faults import closed_port
from tests.ui.test_archive_actions import archived, live


def flagdesk(
    sb: SandboxProcess | str, *args: str, data: Path, token: str | None = None
) -> subprocess.CompletedProcess[str]:
    """`flagdesk archive ARGS --url <sandbox>` with stdin not a terminal."""
    return run_flagdesk(("archive",), sb, args, data, token)


def test_the_list_as_text_json_and_csv(demo_sandbox: SandboxProcess, tmp_path: Path) -> None:
    names = archived(demo_sandbox, "web-shop")
    text = flagdesk(demo_sandbox, "list", "web-shop", data=tmp_path)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0].split() == ["NAME", "TYPE", "ARCHIVED", "STALE", "LAST", "SEEN"]
    assert {line.split()[0] for line in lines[1:-1]} == names
    assert lines[-1] == (f"{len(names)} archived flags in project web-shop on "
                         f"{demo_sandbox.url}")  # fmt: skip

    out = as_json(flagdesk(demo_sandbox, "list", "web-shop", "--json", data=tmp_path))
    assert (out["command"], out["project"], out["count"], out["exit_status"]) == (
        "list", "web-shop", len(names), 0)  # fmt: skip
    assert {f["name"] for f in out["features"]} == names
    assert list(out["features"][0]) == list(SNAPSHOT_FIELDS)

    path = tmp_path / "archived.csv"
    written = flagdesk(demo_sandbox, "list", "web-shop", "--csv", str(path), data=tmp_path)
    assert written.stdout.startswith(f"Wrote {len(names)} archived flags to {path}")
    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert rows[0] == list(SNAPSHOT_FIELDS) and {r[0] for r in rows[1:]} == names
    assert all(r[3] == "web-shop" for r in rows[1:])
    assert json.loads(rows[1][9])[0]["name"] == "development"
    assert not (tmp_path / "journal").exists()  # reading journals nothing


def test_dry_run_prints_the_exact_requests_and_changes_nothing(
    demo_sandbox: SandboxProcess, tmp_path: Path
) -> None:
    first, second = sorted(archived(demo_sandbox, "web-shop"))[:2]
    many = flagdesk(demo_sandbox, "revive", "web-shop", first, second, "--dry-run", data=tmp_path)
    assert many.returncode == 0, many.stderr
    assert many.stdout == (
        "POST /api/admin/projects/web-shop/revive\nContent-Type: application/json\n\n"
        f'{{"features":["{first}","{second}"]}}\n'
    )
    assert many.stderr == f"Dry run: nothing was sent to {demo_sandbox.url} (2 flags).\n"
    one = flagdesk(demo_sandbox, "delete", "web-shop", first, "--dry-run", data=tmp_path)
    assert one.stdout == f"DELETE /api/admin/archive/{first}\n"
    out = as_json(flagdesk(demo_sandbox, "delete", "web-shop", "--all", "--dry-run", "--json",
                           data=tmp_path))  # fmt: skip
    assert out["dry_run"] is True and out["exit_status"] == 0
    assert out["requests"] == [{"method": "POST", "path": "/api/admin/projects/web-shop/delete",
                                "body": {"features": out["names"]}}]  # fmt: skip
    assert set(out["names"]) == archived(demo_sandbox, "web-shop") and first in out["names"]
    assert not (tmp_path / "journal").exists()


def test_without_a_terminal_and_without_yes_nothing_changes(
    demo_sandbox: SandboxProcess, tmp_path: Path
) -> None:
    before = archived(demo_sandbox, "web-shop")
    for verb, past in (("revive", "revived"), ("delete", "deleted")):
        result = flagdesk(demo_sandbox, verb, "web-shop", "--all", data=tmp_path)
        assert (result.returncode, result.stdout) == (2, "")
        assert f"no terminal to confirm on: nothing was {past}. Add --yes" in result.stderr
    assert archived(demo_sandbox, "web-shop") == before
    assert not (tmp_path / "journal").exists()


def test_yes_revives_and_deletes_with_a_snapshot_and_a_journal_entry(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    first, second, *rest = sorted(archived(sandbox, "web-shop"))
    out = as_json(flagdesk(sandbox, "revive", "web-shop", first, second, "--yes", "--json",
                           data=tmp_path))  # fmt: skip
    assert (out["exit_status"], out["count"], out["names"], out["statuses"]) == (
        0, 2, [first, second], [200])  # fmt: skip
    assert archived(sandbox, "web-shop") == set(rest)
    assert {first, second} <= live(sandbox, "web-shop")
    snapshot = json.loads(Path(out["snapshot"]).read_text(encoding="utf-8"))
    assert [f["name"] for f in snapshot["features"]] == [first, second]
    folder = journal_folder(sandbox.url, tmp_path)
    assert Path(out["journal"]) == folder / JOURNAL_NAME

    text = flagdesk(sandbox, "delete", "web-shop", "--all", "--yes", data=tmp_path)
    assert text.returncode == 0, text.stderr
    assert text.stdout.startswith(f"{len(rest)} flags of project web-shop deleted for good on "
                                  f"{sandbox.url}. Snapshot: ")  # fmt: skip
    assert archived(sandbox, "web-shop") == set()
    assert not set(rest) & live(sandbox, "web-shop")
    again = flagdesk(sandbox, "delete", "web-shop", "--all", "--yes", data=tmp_path)
    assert again.returncode == 0 and "nothing to delete" in again.stdout
    entries = read_journal(folder / JOURNAL_NAME)
    assert [(x.action, sorted(x.ids), x.state, x.status) for x in entries] == [
        ("archived_features.revive_bulk", [first, second], State.DONE, 200),
        ("archived_features.delete_bulk", rest, State.DONE, 200),  # in the server's order
    ]
    assert (entries[0].server, entries[0].connection, entries[0].token) == (
        sandbox.url, sandbox.url, "admin")  # fmt: skip


def test_names_that_are_not_archived_flags_are_refused_before_anything_is_sent(
    demo_sandbox: SandboxProcess, tmp_path: Path
) -> None:
    flag = sorted(archived(demo_sandbox, "web-shop"))[0]
    alive = sorted(live(demo_sandbox, "web-shop"))[0]
    other = sorted(archived(demo_sandbox, "payments"))[0]
    result = flagdesk(demo_sandbox, "delete", "web-shop", flag, alive, other, "no-such", "--yes",
                      data=tmp_path)  # fmt: skip
    assert result.returncode == 2
    assert (f"not archived flags of project web-shop on {demo_sandbox.url}: {alive}, {other}, "
            "no-such. Nothing was deleted") in result.stderr  # fmt: skip
    assert flag in archived(demo_sandbox, "web-shop")
    assert not (tmp_path / "journal").exists()


def test_a_project_the_server_does_not_have_is_named_and_refused(
    demo_sandbox: SandboxProcess, tmp_path: Path
) -> None:
    """`nope` is no project of the server: the list and the actions say so by name, exit 2,
    and nothing is sent or journaled (before, the list printed "0 archived flags in project
    nope" and exited 0, and `revive --all` said there was nothing to revive)."""
    projects = "default, mobile-app, payments, web-shop"
    flag = sorted(archived(demo_sandbox, "web-shop"))[0]
    for args, nothing in (
        (("list", "nope"), ""),
        (("list", "nope", "--csv", str(tmp_path / "nope.csv")), ""),
        (("revive", "nope", "--all", "--yes"), " Nothing was revived."),
        (("revive", "nope", "--all", "--dry-run"), " Nothing was revived."),
        (("delete", "nope", flag, "--yes"), " Nothing was deleted."),
    ):
        result = flagdesk(demo_sandbox, *args, data=tmp_path)
        assert (result.returncode, result.stdout) == (2, ""), (args, result.stdout)
        assert result.stderr == (
            f"flagdesk archive {args[0]}: no project “nope” on {demo_sandbox.url} (its "
            f"projects: {projects}).{nothing}\n"
        ), args
    out = as_json(flagdesk(demo_sandbox, "list", "nope", "--json", data=tmp_path))
    assert out["exit_status"] == 2 and "no project “nope”" in out["error"]
    assert "features" not in out and "count" not in out
    near = flagdesk(demo_sandbox, "list", "Web-Shop", data=tmp_path)  # ids are exact
    assert near.returncode == 2 and "no project “Web-Shop”" in near.stderr
    assert f"projects: {projects}). Did you mean “web-shop”?\n" in near.stderr
    assert flag in archived(demo_sandbox, "web-shop")
    assert not (tmp_path / "nope.csv").exists() and not (tmp_path / "journal").exists()


def test_an_unknown_project_is_refused_where_the_archive_is_searched(tmp_path: Path) -> None:
    """As Unleash 8.2 (the archive through the search API, which finds nothing for a project
    it does not have rather than refusing it): the same refusal."""
    with SandboxProcess(tmp_path / "as-8.2.sqlite3", "--demo", "--as-version", "8.2") as sb:
        listed = flagdesk(sb, "list", "nope", data=tmp_path)
        assert (listed.returncode, listed.stdout) == (2, "")
        assert f"no project “nope” on {sb.url}" in listed.stderr
        revived = flagdesk(sb, "revive", "nope", "--all", "--yes", data=tmp_path)
        assert revived.returncode == 2 and "Nothing was revived." in revived.stderr
        assert flagdesk(sb, "list", "web-shop", data=tmp_path).returncode == 0
    assert not (tmp_path / "journal").exists()


def test_usage_and_connection_failures_have_their_exit_statuses(
    demo_sandbox: SandboxProcess, tmp_path: Path, personal_token: Any
) -> None:
    flag = sorted(archived(demo_sandbox, "web-shop"))[0]
    for args, words in (
        (("revive", "web-shop"), "NAME [NAME ...] or --all"),
        (("delete", "web-shop", flag, "--all"), "either the flags' names or --all"),
    ):
        result = flagdesk(demo_sandbox, *args, data=tmp_path)
        assert (result.returncode, result.stdout) == (2, ""), args
        assert words in result.stderr, result.stderr
    down = flagdesk(f"http://127.0.0.1:{closed_port()}", "revive", "web-shop", "--all", "--yes",
                    data=tmp_path)  # fmt: skip
    assert down.returncode == 3 and "Cannot reach" in down.stderr
    viewer = personal_token(demo_sandbox, "uma.iyer")  # an active Viewer
    refused = flagdesk(demo_sandbox, "revive", "web-shop", flag, "--yes", "--json",
                       data=tmp_path, token=viewer)  # fmt: skip
    assert refused.returncode == 4 and as_json(refused)["http_status"] == 403
    assert "Admin or Editor root role" in as_json(refused)["error"]
    assert flag in archived(demo_sandbox, "web-shop")


def test_on_a_terminal_it_asks_y_to_revive_and_the_project_id_to_delete(
    sandbox: SandboxProcess,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("FLAGDESK_TOKEN", sandbox.admin_token)
    monkeypatch.setenv("FLAGDESK_DATA_DIR", str(tmp_path))
    first, second, *_ = sorted(archived(sandbox, "default"))
    url = ["--url", sandbox.url]

    monkeypatch.setattr(sys, "stdin", Terminal("n\n"))
    assert cli.main(["archive", "revive", "default", first, *url]) == 1
    said = capsys.readouterr().err
    assert f"1 flag of project “default” will be revived on {sandbox.url}" in said
    assert "Revive 1 flag? [y/N] " in said and "not confirmed: nothing was revived" in said
    assert first in archived(sandbox, "default")

    # the wrong id typed: nothing deleted; the right one: deleted for good
    monkeypatch.setattr(sys, "stdin", Terminal("yes\n"))
    assert cli.main(["archive", "delete", "default", first, second, *url]) == 1
    said = capsys.readouterr().err
    assert "this cannot be undone" in said
    assert "Delete 2 flags for good? Type default to confirm: " in said
    assert {first, second} <= archived(sandbox, "default")
    monkeypatch.setattr(sys, "stdin", Terminal("default\n"))
    assert cli.main(["archive", "delete", "default", first, second, *url]) == 0
    assert not {first, second} & archived(sandbox, "default")
    entries = read_journal(journal_folder(sandbox.url, tmp_path) / JOURNAL_NAME)
    assert [(x.action, x.ids) for x in entries] == [
        ("archived_features.delete_bulk", [first, second])]  # fmt: skip


def test_a_snapshot_that_cannot_be_written_sends_nothing(
    demo_sandbox: SandboxProcess, tmp_path: Path
) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")  # the data folder cannot be made under it
    before = archived(demo_sandbox, "web-shop")
    result = flagdesk(demo_sandbox, "revive", "web-shop", "--all", "--yes", data=blocked)
    assert result.returncode == 2, result.stderr
    assert "Could not write the snapshot" in result.stderr
    assert "Nothing was revived." in result.stderr
    assert archived(demo_sandbox, "web-shop") == before
