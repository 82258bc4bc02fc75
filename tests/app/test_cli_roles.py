"""`flagdesk roles list|show|permissions|create|edit|delete` against sandboxes over HTTP, as a
subprocess (and in process where a terminal is pretended): the list and one role as text and
JSON; the catalogue; `create` with permissions given as NAME and NAME:ENVIRONMENT, its exact
request with --dry-run (nothing sent), refused without a terminal and without --yes, a bad
permission refused naming it (exit 2, nothing sent); `edit` adding and taking permissions away;
`delete` of a role in use refused naming who holds it (exit 1), of a built-in role refused
(exit 2); the journal's entries and `flagdesk journal undo`; the terminal's question; and on a
played open-source release the built-in root roles listed, saying custom roles need Unleash
Enterprise, and every change refused with exit status 4 and nothing sent."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from app import cli
from app.actions.journal import journal_folder, read_journal
from app.api.models import RoleList, RoleWithPermissions
from sandbox.process import SandboxProcess
from tests.app.test_cli_users import Terminal, as_json, run_flagdesk

ROLES = "/api/admin/roles"


def flagdesk(sb: SandboxProcess | str, *args: str, data: Path) -> subprocess.CompletedProcess[str]:
    """`flagdesk roles ARGS --url <sandbox>` with stdin not a terminal, the admin token."""
    return run_flagdesk(("roles",), sb, args, data, None)


def role_named(sb: SandboxProcess, name: str) -> RoleWithPermissions | None:
    with sb.admin() as http:
        listed = RoleList.model_validate(http.get(ROLES).json()).roles
        found = [r for r in listed if r.name == name]
        if not found:
            return None
        return RoleWithPermissions.model_validate(http.get(f"{ROLES}/{found[0].id}").json())


def held(role: RoleWithPermissions | None) -> set[str]:
    assert role is not None
    return {f"{p.name}:{p.environment}" if p.environment else p.name for p in role.permissions}


def test_list_show_and_the_catalogue(demo_sandbox: SandboxProcess, tmp_path: Path) -> None:
    listed = flagdesk(demo_sandbox, "list", data=tmp_path)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0].split() == ["ID", "NAME", "TYPE", "DESCRIPTION"]
    assert lines[1].split()[:4] == ["1", "Admin", "built-in", "root"]
    assert any(line.split()[:4] == ["5", "Member", "built-in", "project"] for line in lines)
    as_object = as_json(flagdesk(demo_sandbox, "list", "--json", data=tmp_path))
    assert as_object["customRoles"] is True and "note" not in as_object
    assert {k: v for k, v in as_object["roles"][-1].items() if k != "description"} == {
        "id": 3,
        "name": "Viewer",
        "type": "root",
        "custom": False,
    }

    shown = flagdesk(demo_sandbox, "show", "Member", data=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[0] == "Member (id 5): built-in project role"
    assert ["UPDATE_FEATURE_ENVIRONMENT:production", "environment"] in [
        line.split() for line in shown.stdout.splitlines()
    ]
    by_id = as_json(flagdesk(demo_sandbox, "show", "1", "--json", data=tmp_path))
    assert by_id["role"]["permissions"] == ["ADMIN"]
    unknown = flagdesk(demo_sandbox, "show", "Membr", data=tmp_path)
    assert unknown.returncode == 2
    assert "no role on" in unknown.stderr and "did you mean “Member”" in unknown.stderr

    catalogue = as_json(flagdesk(demo_sandbox, "permissions", "--json", data=tmp_path))
    # the demo's three environments (flag configuration, issue 37 slice 1, added staging)
    assert catalogue["environments"] == ["development", "staging", "production"]
    listed_names = {p["name"] for p in catalogue["permissions"]}
    assert {"CREATE_PROJECT", "CREATE_FEATURE", "UPDATE_FEATURE_ENVIRONMENT:ENVIRONMENT"} <= \
        listed_names  # fmt: skip


def test_create_edit_delete_and_undo(sandbox: SandboxProcess, tmp_path: Path) -> None:
    create = ("create", "--name", "Deployer", "--type", "project", "--description", "Ships",
              "--permission", "CREATE_FEATURE",
              "--permission", "UPDATE_FEATURE_ENVIRONMENT:development")  # fmt: skip
    dry = flagdesk(sandbox, *create, "--dry-run", data=tmp_path)
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.splitlines()[0] == f"POST {ROLES}"
    assert ('{"name":"Deployer","description":"Ships","type":"custom","permissions":[{"name":'
            '"CREATE_FEATURE"},{"name":"UPDATE_FEATURE_ENVIRONMENT","environment":"development"}'
            ']}') in dry.stdout  # fmt: skip
    assert "Dry run: nothing was sent" in dry.stderr
    refused = flagdesk(sandbox, *create, data=tmp_path)
    assert refused.returncode == 2 and "no terminal to confirm the new role" in refused.stderr
    assert role_named(sandbox, "Deployer") is None

    bad = flagdesk(sandbox, "create", "--name", "X", "--type", "project", "--permission",
                   "UPDATE_FEATURE_ENVIRONMENT", "--yes", data=tmp_path)  # fmt: skip
    assert bad.returncode == 2
    assert ("give it as UPDATE_FEATURE_ENVIRONMENT:ENVIRONMENT (development, staging, "
            "production)") in bad.stderr  # fmt: skip
    assert role_named(sandbox, "X") is None

    made = as_json(flagdesk(sandbox, *create, "--yes", "--json", data=tmp_path))
    assert made["exit_status"] == 0 and made["role"]["type"] == "custom"
    role_id = made["role"]["id"]
    assert held(role_named(sandbox, "Deployer")) == {
        "CREATE_FEATURE", "UPDATE_FEATURE_ENVIRONMENT:development"}  # fmt: skip
    taken = flagdesk(sandbox, *create, "--yes", data=tmp_path)
    assert taken.returncode == 1
    assert "There already exists a role with the name Deployer" in taken.stderr

    edit = flagdesk(sandbox, "edit", "Deployer", "--add-permission", "DELETE_FEATURE",
                    "--remove-permission", "CREATE_FEATURE", "--name", "Shipper", "--yes",
                    data=tmp_path)  # fmt: skip
    assert edit.returncode == 0, edit.stderr
    assert f"Changed the role “Shipper” (id {role_id})" in edit.stdout
    assert held(role_named(sandbox, "Shipper")) == {
        "DELETE_FEATURE", "UPDATE_FEATURE_ENVIRONMENT:development"}  # fmt: skip
    same = flagdesk(sandbox, "edit", str(role_id), "--name", "Shipper", "--yes", data=tmp_path)
    assert same.returncode == 2 and "nothing to change" in same.stderr

    builtin = flagdesk(sandbox, "delete", "Owner", "--yes", data=tmp_path)
    assert builtin.returncode == 2 and "built-in roles cannot be deleted" in builtin.stderr
    gone = flagdesk(sandbox, "delete", "Shipper", "--yes", data=tmp_path)
    assert gone.returncode == 0, gone.stderr
    assert role_named(sandbox, "Shipper") is None

    entries = read_journal(journal_folder(sandbox.url, tmp_path) / "journal.jsonl")
    assert [(e.action, e.state.value) for e in entries] == [
        ("roles.create", "done"), ("roles.create", "failed"),  # the name taken: 409
        ("roles.edit", "done"), ("roles.delete", "done")]  # fmt: skip
    assert entries[0].after == {"id": role_id}
    undone = subprocess.run(
        [sys.executable, "-m", "app", "journal", "undo", entries[-1].id, "--yes", "--url",
         sandbox.url], capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60,
        env=_env(sandbox, tmp_path),
    )  # fmt: skip
    assert undone.returncode == 0, undone.stderr
    back = role_named(sandbox, "Shipper")
    assert back is not None and back.id > role_id
    assert held(back) == {"DELETE_FEATURE", "UPDATE_FEATURE_ENVIRONMENT:development"}


def _env(sb: SandboxProcess, data: Path) -> dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if k != "FLAGDESK_TOKEN"}
    env.update(FLAGDESK_TOKEN=sb.admin_token, FLAGDESK_DATA_DIR=str(data))
    return env


def test_a_role_in_use_is_not_deleted(sandbox: SandboxProcess, tmp_path: Path) -> None:
    made = as_json(flagdesk(sandbox, "create", "--name", "Auditor", "--type", "root", "--yes",
                            "--json", data=tmp_path))  # fmt: skip
    with sandbox.admin() as http:
        answer = http.post(
            "/api/admin/user-admin",
            json={"email": "ann@example.com", "name": "Ann Audit", "rootRole": made["role"]["id"]},
        )
        assert answer.status_code == 201, answer.text
    refused = flagdesk(sandbox, "delete", "Auditor", "--yes", data=tmp_path)
    assert refused.returncode == 1
    assert (f"The role “Auditor” (id {made['role']['id']}) cannot be deleted: it is held by 1 "
            "user (Ann Audit). Take it from them first (their root role). Nothing was sent.") in \
        refused.stderr  # fmt: skip
    as_object = as_json(flagdesk(sandbox, "delete", "Auditor", "--yes", "--json", data=tmp_path))
    assert as_object["heldBy"] == {"users": ["Ann Audit"], "groups": [], "serviceAccounts": [],
                                   "projects": []}  # fmt: skip
    assert role_named(sandbox, "Auditor") is not None
    dry = flagdesk(sandbox, "delete", "Auditor", "--dry-run", data=tmp_path)
    assert dry.returncode == 1  # in use: not even a dry run's request


def test_on_a_terminal_it_asks(
    sandbox: SandboxProcess,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("FLAGDESK_TOKEN", sandbox.admin_token)
    monkeypatch.setenv("FLAGDESK_DATA_DIR", str(tmp_path))
    argv = ["roles", "create", "--name", "Asked", "--type", "root", "--permission", "READ_LOGS",
            "--url", sandbox.url]  # fmt: skip
    monkeypatch.setattr(sys, "stdin", Terminal("n\n"))
    assert cli.main(argv) == 1
    said = capsys.readouterr().err.splitlines()
    assert said[0] == (f"A custom root role “Asked” will be created on {sandbox.url} (connection "
                       f"“{sandbox.url}”), with 1 permission (READ_LOGS).")  # fmt: skip
    assert said[-1].endswith("Create the role “Asked”? [y/N] flagdesk roles create: not "
                             "confirmed: nothing was sent")  # fmt: skip
    assert role_named(sandbox, "Asked") is None
    monkeypatch.setattr(sys, "stdin", Terminal("y\n"))
    assert cli.main(argv) == 0
    assert held(role_named(sandbox, "Asked")) == {"READ_LOGS"}


def test_an_open_source_release_lists_root_roles_and_changes_nothing(tmp_path: Path) -> None:
    with SandboxProcess(tmp_path / "s.sqlite3", "--demo", "--as-version", "6.10") as sb:
        listed = flagdesk(sb, "list", data=tmp_path)
        assert listed.returncode == 0, listed.stderr
        assert [line.split()[1] for line in listed.stdout.splitlines()[1:4]] == [
            "Admin", "Editor", "Viewer"]  # fmt: skip
        assert listed.stdout.splitlines()[-1].endswith(
            "(custom roles need Unleash Enterprise: this server has none, and lists its built-in "
            "root roles only)")  # fmt: skip
        as_object = as_json(flagdesk(sb, "list", "--json", data=tmp_path))
        assert as_object["customRoles"] is False and as_object["count"] == 3
        for args in (("create", "--name", "X", "--type", "root"), ("edit", "Editor", "--name",
                     "Y"), ("delete", "Viewer"), ("permissions",)):  # fmt: skip
            refused = flagdesk(sb, *args, "--yes", data=tmp_path) if args[0] != "permissions" \
                else flagdesk(sb, *args, data=tmp_path)  # fmt: skip
            assert refused.returncode == 4, (args, refused.stderr)
            assert "need Unleash Enterprise" in refused.stderr
        shown = flagdesk(sb, "show", "Editor", data=tmp_path)
        assert shown.returncode == 0 and "cannot be read here" in shown.stdout
    assert not (tmp_path / "journal").exists()  # nothing journaled: nothing sent
