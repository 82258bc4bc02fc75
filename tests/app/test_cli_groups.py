"""`flagdesk groups list|show|delete` against sandboxes over HTTP, as a subprocess (and in process
where a terminal is pretended): the list and one group as text and JSON; --dry-run prints the
exact request and changes nothing; without a terminal and without --yes nothing changes; the
terminal's question; --yes deletes with a JSON snapshot and a journal entry, read back from the
server; an unknown id, a Viewer's token, a server without groups and an unreachable one have
their exit statuses."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from app import cli
from app.actions.groups import read_snapshot
from app.actions.journal import JOURNAL_NAME, State, journal_folder, read_journal
from app.api.models import GroupList
from sandbox.process import SandboxProcess
from tests.app.test_cli_users import Terminal, as_json, run_flagdesk
from tests.faults import closed_port
from tests.sandbox.test_inactive_delete import sql

PLATFORM = 1  # "Platform team" in the demo: 6 members, root role Editor


def flagdesk(
    sb: SandboxProcess | str, *args: str, data: Path, token: str | None = None
) -> subprocess.CompletedProcess[str]:
    """`flagdesk groups ARGS --url <sandbox>` with stdin not a terminal."""
    return run_flagdesk(("groups",), sb, args, data, token)


def group_names(sb: SandboxProcess) -> set[str]:
    with sb.admin() as http:
        return {
            g.name for g in GroupList.model_validate(http.get("/api/admin/groups").json()).groups
        }


def test_list_and_show_as_text_and_json(demo_sandbox: SandboxProcess, tmp_path: Path) -> None:
    text = flagdesk(demo_sandbox, "list", data=tmp_path)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0].split() == ["ID", "NAME", "MEMBERS", "ROOT", "ROLE", "SSO", "MAPPINGS"]
    platform = next(line for line in lines if line.startswith(f"{PLATFORM} "))
    assert "Platform team" in platform and "okta-platform, platform-oncall" in platform
    assert lines[-1].endswith(f"groups on {demo_sandbox.url}")
    listed = as_json(flagdesk(demo_sandbox, "list", "--json", data=tmp_path))
    assert {"Platform team", "Checkout squad", "Support"} <= {g["name"] for g in listed["groups"]}
    assert listed["count"] == len(listed["groups"])

    shown = flagdesk(demo_sandbox, "show", str(PLATFORM), data=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "Group:        Platform team (id 1, 6 members)" in shown.stdout
    assert "Root role:    Editor" in shown.stdout
    assert len([line for line in shown.stdout.splitlines() if "@example.com" in line]) == 6
    one = as_json(flagdesk(demo_sandbox, "show", str(PLATFORM), "--json", data=tmp_path))
    assert one["group"]["name"] == "Platform team" and len(one["group"]["users"]) == 6

    missing = flagdesk(demo_sandbox, "show", "987654", "--json", data=tmp_path)
    assert missing.returncode == 1
    assert as_json(missing)["http_status"] == 404
    assert "Could not find group with id 987654" in missing.stderr


def root_role_cells(listing: str) -> dict[str, str]:
    """The ROOT ROLE column of `groups list`'s table, by group name."""
    header, *rows = listing.splitlines()[:-1]
    name, role, sso = (header.index(t) for t in ("NAME", "ROOT ROLE", "SSO MAPPINGS"))
    return {row[name : row.index("  ", name)]: row[role:sso].strip() for row in rows}


def test_the_list_names_root_roles_and_its_json_keeps_their_ids(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    """The list printed root roles as ids ("2"); it names them, as `show` and the window do.
    Its JSON keeps `rootRole` (the id, the wire's field) and adds `rootRoleName`, as the
    users' snapshots do. A custom root role is named too."""
    sql(sandbox, "INSERT INTO roles(id, name, type, description) VALUES(90, 'Auditor',"
                 " 'root-custom', 'Reads everything')")  # fmt: skip
    sql(sandbox, "UPDATE groups_ SET root_role = 90 WHERE name = 'Checkout squad'")
    text = flagdesk(sandbox, "list", data=tmp_path)
    assert text.returncode == 0, text.stderr
    assert root_role_cells(text.stdout) == {
        "Platform team": "Editor", "Checkout squad": "Auditor", "Support": "Viewer"}  # fmt: skip
    listed = as_json(flagdesk(sandbox, "list", "--json", data=tmp_path))
    assert {g["name"]: (g["rootRole"], g["rootRoleName"]) for g in listed["groups"]} == {
        "Platform team": (2, "Editor"), "Checkout squad": (90, "Auditor"),
        "Support": (3, "Viewer")}  # fmt: skip
    one = as_json(flagdesk(sandbox, "show", str(PLATFORM), "--json", data=tmp_path))
    assert (one["group"]["rootRole"], one["group"]["rootRoleName"]) == (2, "Editor")
    sql(sandbox, "UPDATE groups_ SET root_role = NULL WHERE name = 'Support'")
    text = flagdesk(sandbox, "list", data=tmp_path)
    assert root_role_cells(text.stdout)["Support"] == ""
    listed = as_json(flagdesk(sandbox, "list", "--json", data=tmp_path))
    support = next(g for g in listed["groups"] if g["name"] == "Support")
    assert "rootRole" not in support and support["rootRoleName"] is None


def test_dry_run_prints_the_exact_request_and_changes_nothing(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    result = flagdesk(sandbox, "delete", str(PLATFORM), "--dry-run", data=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"DELETE /api/admin/groups/{PLATFORM}\n"
    assert f"nothing was sent to {sandbox.url}" in result.stderr
    dry = as_json(flagdesk(sandbox, "delete", str(PLATFORM), "--dry-run", "--json",
                           data=tmp_path))  # fmt: skip
    assert dry["requests"] == [{"method": "DELETE", "path": "/api/admin/groups/1", "body": None}]
    assert "Platform team" in group_names(sandbox)
    assert not (tmp_path / "journal").exists()


def test_without_a_terminal_and_without_yes_nothing_changes(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    result = flagdesk(sandbox, "delete", str(PLATFORM), data=tmp_path)
    assert result.returncode == 2
    assert "--yes" in result.stderr and "nothing was deleted" in result.stderr
    assert "Platform team" in group_names(sandbox)
    assert not (tmp_path / "journal").exists()


def test_yes_deletes_with_a_snapshot_and_a_journal_entry(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    out = as_json(flagdesk(sandbox, "delete", str(PLATFORM), "--yes", "--json", data=tmp_path))
    assert out["exit_status"] == 0 and out["status"] == 200 and out["name"] == "Platform team"
    assert "Platform team" not in group_names(sandbox)
    snapshot = read_snapshot(Path(out["snapshot"]))
    assert snapshot.name == "Platform team" and len(snapshot.users) == 6
    (entry,) = read_journal(journal_folder(sandbox.url, tmp_path) / JOURNAL_NAME)
    assert (entry.action, entry.ids, entry.state, entry.status) == (
        "groups.delete", [PLATFORM], State.DONE, 200)  # fmt: skip
    assert entry.request == {"method": "DELETE", "path": f"/api/admin/groups/{PLATFORM}"}
    assert Path(out["journal"]).name == JOURNAL_NAME


def test_on_a_terminal_it_asks_and_only_yes_deletes(
    sandbox: SandboxProcess,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("FLAGDESK_TOKEN", sandbox.admin_token)
    monkeypatch.setenv("FLAGDESK_DATA_DIR", str(tmp_path))
    argv = ["groups", "delete", str(PLATFORM), "--url", sandbox.url]
    monkeypatch.setattr(sys, "stdin", Terminal("n\n"))
    assert cli.main(argv) == 1
    asked = capsys.readouterr().err
    first = asked.splitlines()[0]
    assert first.startswith("Group “Platform team” (id 1, 6 members (")
    assert first.endswith(f"will be deleted on {sandbox.url} (connection “{sandbox.url}”).")
    assert re.search(r"snapshot of the group is written first to .*groups\.delete-.*\.json", asked)
    assert "Undo recreates it" in asked
    assert "Delete group “Platform team”? [y/N]" in asked and "nothing was deleted" in asked
    assert "Platform team" in group_names(sandbox)
    monkeypatch.setattr(sys, "stdin", Terminal("y\n"))
    assert cli.main(argv) == 0
    assert capsys.readouterr().out.startswith("Deleted group Platform team (id 1, 6 members)")
    assert "Platform team" not in group_names(sandbox)


def test_refusals_have_their_exit_statuses(
    sandbox: SandboxProcess, tmp_path: Path, personal_token: Any
) -> None:
    viewer = personal_token(sandbox, "sofia.mendes")
    refused = flagdesk(sandbox, "delete", str(PLATFORM), "--yes", data=tmp_path, token=viewer)
    assert refused.returncode == 4 and "Admin" in refused.stderr
    unknown = flagdesk(sandbox, "delete", "987654", "--yes", data=tmp_path)
    assert unknown.returncode == 1 and "987654" in unknown.stderr  # read first: 404
    assert "Platform team" in group_names(sandbox)
    with SandboxProcess(tmp_path / "oss.sqlite3", "--demo", "--without-groups") as oss:
        for args in (("list",), ("show", "1"), ("delete", "1", "--yes")):
            result = flagdesk(oss, *args, data=tmp_path)
            assert result.returncode == 4, (args, result.stderr)
            assert "Enterprise" in result.stderr
        r = httpx.get(oss.url + "/api/admin/groups", headers={"Authorization": oss.admin_token})
        assert r.status_code == 404
    down = flagdesk(f"http://127.0.0.1:{closed_port()}", "delete", "1", "--yes", "--json",
                    data=tmp_path)  # fmt: skip
    assert down.returncode == 3 and as_json(down)["exit_status"] == 3
    bad = flagdesk(sandbox, "show", "seven", data=tmp_path)
    assert bad.returncode == 2 and "'seven' is not a group id" in bad.stderr
    assert json.loads(flagdesk(sandbox, "list", "--json", data=tmp_path).stdout)["count"] == 3
