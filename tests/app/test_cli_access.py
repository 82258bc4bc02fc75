"""`flagdesk access show|grant|set|revoke` against sandboxes over HTTP, as a subprocess (and in
process where a terminal is pretended): `show --user` (every project with the roles and why:
root role, directly, through a group, a group's root role) and `show --project` (everyone who
can change it, service accounts included, and the groups), as text and JSON; on a played
open-source release the answer from root roles alone, saying so; grant, set and revoke with
--dry-run (the exact requests, nothing sent), --json, without a terminal and without --yes
(nothing changed), and on a terminal (asked); unknown projects, users, groups and roles refused
before anything is sent; the journal's entries and undo through `flagdesk journal undo`."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from app import cli
from app.actions.journal import journal_folder, read_journal
from app.api.models import ProjectAccess
from sandbox.process import SandboxProcess
from tests.app.test_cli_users import Terminal, as_json, run_flagdesk

ACCESS = "/api/admin/projects/{}/access"
#: the demo's people: 2-4 Admins, 5-21 Editors, then Viewers; 46 the service account
ADMIN_MARIA = 2


def flagdesk(sb: SandboxProcess | str, *args: str, data: Path, token: str | None = None):  # type: ignore[no-untyped-def]
    return run_flagdesk(("access",), sb, args, data, token)


def held(sb: SandboxProcess, project: str) -> tuple[dict[int, list[int]], dict[int, list[int]]]:
    with sb.admin() as http:
        got = ProjectAccess.model_validate(http.get(ACCESS.format(project)).json())
    return ({u.id: sorted(u.roles) for u in got.users},
            {g.id: sorted(g.roles) for g in got.groups})  # fmt: skip


def email_of(sb: SandboxProcess, user_id: int) -> str:
    with sb.admin() as http:
        users = http.get("/api/admin/user-admin").json()["users"]
    return str(next(u["email"] for u in users if u["id"] == user_id))


def test_show_a_user_every_project_and_why(demo_sandbox: SandboxProcess, tmp_path: Path) -> None:
    sb = demo_sandbox
    # user 6: an Editor, web-shop's Owner directly and through Checkout squad, a Member of
    # web-shop through Platform team, payments' Member through Checkout squad; Platform
    # team's root role is Editor
    email = email_of(sb, 6)
    shown = as_json(flagdesk(sb, "show", "--user", email.upper(), "--json", data=tmp_path))
    assert shown["user"]["id"] == 6 and shown["user"]["rootRole"] == "Editor"
    assert shown["projectAccess"] is True and shown["note"] is None
    projects = {p["project"]: p for p in shown["projects"]}
    assert set(projects) == {"default", "web-shop", "payments"}
    assert projects["default"]["why"] == [
        {"role": "Editor", "through": "root role"},
        {"role": "Editor", "through": "group root role", "group": "Platform team"},
    ]
    assert projects["web-shop"]["roles"] == ["Owner", "Member"]
    assert projects["web-shop"]["why"] == [
        {"role": "Owner", "through": "directly"},
        {"role": "Owner", "through": "group", "group": "Checkout squad"},
        {"role": "Member", "through": "group", "group": "Platform team"},
    ]
    assert projects["payments"]["why"] == [
        {"role": "Member", "through": "group", "group": "Checkout squad"}
    ]

    text = flagdesk(sb, "show", "--user", email, data=tmp_path)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0].split() == ["PROJECT", "ROLES", "WHY"]
    assert any(
        line.startswith("web-shop")
        and "Owner directly" in line
        and "Member through group “Platform team”" in line
        for line in lines
    )
    with sb.admin() as http:
        every = {p["id"] for p in http.get("/api/admin/projects").json()["projects"]}
    assert lines[-1].endswith(
        f"(User, root role Editor) holds roles in 3 projects of {len(every)} on {sb.url}"
    )

    admin = as_json(flagdesk(sb, "show", "--user", email_of(sb, ADMIN_MARIA), "--json",
                             data=tmp_path))  # fmt: skip
    assert {p["project"] for p in admin["projects"]} == every
    assert all({"role": "Admin", "through": "root role"} in p["why"] for p in admin["projects"])

    nobody = flagdesk(sb, "show", "--user", "nobody@example.com", data=tmp_path)
    assert nobody.returncode == 2 and "“nobody@example.com”" in nobody.stderr


def test_show_a_project_everyone_who_can_change_it(
    demo_sandbox: SandboxProcess, tmp_path: Path
) -> None:
    sb = demo_sandbox
    shown = as_json(flagdesk(sb, "show", "--project", "payments", "--json", data=tmp_path))
    people = {p["id"]: p for p in shown["people"]}
    assert {1, 2, 3, 4} <= set(people)  # the Admins (1: the sandbox's admin)
    assert people[2]["why"] == [{"role": "Admin", "through": "root role"}]
    assert people[12]["why"] == [{"role": "Owner", "through": "directly"},
                                 {"role": "Member", "through": "group",
                                  "group": "Checkout squad"}]  # fmt: skip
    assert people[13]["why"] == [{"role": "Member", "through": "group",
                                  "group": "Checkout squad"}]  # fmt: skip
    assert 20 not in people  # an Editor: the default project only
    assert shown["groups"] == [{"name": "Checkout squad", "roles": ["Member"], "members": 8}]
    default = as_json(flagdesk(sb, "show", "--project", "default", "--json", data=tmp_path))
    editors = [p for p in default["people"] if p["rootRole"] == "Editor"]
    assert len(editors) == 17
    text = flagdesk(sb, "show", "--project", "payments", data=tmp_path)
    assert text.returncode == 0, text.stderr
    assert text.stdout.splitlines()[0].split() == ["WHO", "ACCOUNT", "ROLES", "WHY"]
    assert "Group “Checkout squad” holds Member (8 members)" in text.stdout
    assert text.stdout.splitlines()[-1] == (
        f"{len(shown['people'])} users can change project “payments” on {sb.url}"
    )
    missing = flagdesk(sb, "show", "--project", "nope", data=tmp_path)
    assert missing.returncode == 2 and "no project “nope”" in missing.stderr


def test_a_service_account_holding_a_role_is_among_them(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    with sandbox.admin() as http:
        assert (
            http.post(
                ACCESS.format("mobile-app"), json={"roles": [5], "users": [46], "groups": []}
            ).status_code
            == 200
        )
    shown = as_json(flagdesk(sandbox, "show", "--project", "mobile-app", "--json",
                             data=tmp_path))  # fmt: skip
    robot = next(p for p in shown["people"] if p["id"] == 46)
    assert robot["accountType"] == "Service Account" and robot["roles"] == ["Member"]
    mine = as_json(flagdesk(sandbox, "show", "--user", "ci-deploy-bot", "--json",
                            data=tmp_path))  # fmt: skip
    assert [p["project"] for p in mine["projects"]] == ["mobile-app"]


def test_on_open_source_it_answers_from_root_roles(tmp_path: Path) -> None:
    with SandboxProcess(tmp_path / "oss.sqlite3", "--demo", "--as-version", "8.2") as sb:
        shown = as_json(flagdesk(sb, "show", "--user", email_of(sb, 6), "--json",
                                 data=tmp_path))  # fmt: skip
        assert shown["projectAccess"] is False and "root roles only" in shown["note"]
        assert shown["projects"] == [
            {
                "project": "default",
                "roles": ["Editor"],
                "why": [{"role": "Editor", "through": "root role"}],
            }
        ]
        text = flagdesk(sb, "show", "--user", email_of(sb, 6), data=tmp_path)
        assert "derived from root roles only" in text.stdout
        grant = flagdesk(sb, "grant", "--project", "default", "--role", "Member", "--user",
                         email_of(sb, 30), "--yes", data=tmp_path)  # fmt: skip
        assert grant.returncode == 4, grant.stderr
        assert "Project access needs Unleash Pro or Enterprise" in grant.stderr


def test_grant_set_revoke_dry_run_json_and_undo(sandbox: SandboxProcess, tmp_path: Path) -> None:
    viewer = email_of(sandbox, 30)
    before = held(sandbox, "payments")
    dry = flagdesk(sandbox, "grant", "--project", "payments", "--role", "member", "--role",
                   "Owner", "--user", viewer, "--group", "Support", "--dry-run",
                   data=tmp_path)  # fmt: skip
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.splitlines()[0] == "POST /api/admin/projects/payments/access"
    assert '{"roles":[5,4],"groups":[3],"users":[30]}' in dry.stdout
    assert "Dry run: nothing was sent" in dry.stderr
    refused = flagdesk(sandbox, "grant", "--project", "payments", "--role", "Member", "--user",
                       viewer, data=tmp_path)  # fmt: skip
    assert refused.returncode == 2 and "no terminal to confirm" in refused.stderr
    assert held(sandbox, "payments") == before

    for bad, said in (
        (("--role", "Boss", "--user", viewer), "no project role is named “Boss”"),
        (("--role", "Member", "--user", "who@x"), "“who@x”"),
        (("--role", "Member", "--group", "Nope"), "no group is named"),
        (
            (
                "--role",
                "Member",
            ),
            "name at least one --user or --group",
        ),
    ):
        wrong = flagdesk(sandbox, "grant", "--project", "payments", *bad, "--yes", data=tmp_path)
        assert wrong.returncode == 2 and said in wrong.stderr, wrong.stderr
    unknown = flagdesk(sandbox, "grant", "--project", "nope", "--role", "Member", "--user",
                       viewer, "--yes", data=tmp_path)  # fmt: skip
    assert unknown.returncode == 2 and "no project “nope”" in unknown.stderr

    granted = as_json(flagdesk(sandbox, "grant", "--project", "payments", "--role", "Member",
                               "--user", viewer, "--group", "Support", "--yes", "--json",
                               data=tmp_path))  # fmt: skip
    assert granted["changes"] == [
        {"kind": "user", "id": 30, "label": viewer, "before": [], "after": ["Member"]},
        {"kind": "group", "id": 3, "label": "Support", "before": [], "after": ["Member"]},
    ]
    users, groups = held(sandbox, "payments")
    assert users[30] == [5] and groups[3] == [5]
    again = flagdesk(sandbox, "grant", "--project", "payments", "--role", "Member", "--user",
                     viewer, "--yes", data=tmp_path)  # fmt: skip
    assert again.returncode == 2 and "nothing to grant" in again.stderr

    changed = flagdesk(sandbox, "set", "--project", "payments", "--role", "Owner", "--role",
                       "Member", "--user", viewer, "--yes", data=tmp_path)  # fmt: skip
    assert changed.returncode == 0, changed.stderr
    assert f"user “{viewer}” (id 30) in “payments”: Member → Owner, Member" in changed.stdout
    dry = flagdesk(sandbox, "revoke", "--project", "payments", "--user", viewer, "--role",
                   "Owner", "--dry-run", data=tmp_path)  # fmt: skip
    assert dry.stdout.splitlines()[0] == "PUT /api/admin/projects/payments/users/30/roles"
    assert '{"roles":[5]}' in dry.stdout
    revoked = as_json(flagdesk(sandbox, "revoke", "--project", "payments", "--group", "Support",
                               "--yes", "--json", data=tmp_path))  # fmt: skip
    assert revoked["statuses"] == [200]
    assert 3 not in held(sandbox, "payments")[1]
    idle = flagdesk(sandbox, "revoke", "--project", "payments", "--group", "Support", "--yes",
                    data=tmp_path)  # fmt: skip
    assert idle.returncode == 2 and "does not hold any role" in idle.stderr

    entries = read_journal(journal_folder(sandbox.url, tmp_path) / "journal.jsonl")
    assert [(e.action, e.ids, e.status) for e in entries] == [
        ("project_access.grant", ["payments", "user:30", "group:3"], 200),
        ("project_access.set_roles", ["payments", "user:30"], 200),
        ("project_access.revoke", ["payments", "group:3"], 200),
    ]
    assert entries[0].before["subjects"][0]["added"] == [5]
    assert (journal_folder(sandbox.url, tmp_path) / entries[0].before["snapshot"]).is_file()

    undo = run_flagdesk(("journal", "undo"), sandbox, (entries[2].id, "--yes"), tmp_path, None)
    assert undo.returncode == 0, undo.stderr
    assert held(sandbox, "payments")[1][3] == [5]  # the revoked group's role granted again
    undo = run_flagdesk(("journal", "undo"), sandbox, (entries[1].id, "--yes"), tmp_path, None)
    assert undo.returncode == 0, undo.stderr
    assert held(sandbox, "payments")[0][30] == [5]  # the previous roles back
    undo = run_flagdesk(("journal", "undo"), sandbox, (entries[0].id, "--yes"), tmp_path, None)
    assert undo.returncode == 0, undo.stderr
    users, groups = held(sandbox, "payments")
    assert 30 not in users and 3 not in groups and (users, groups) == before


def test_on_a_terminal_it_asks(
    sandbox: SandboxProcess,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("FLAGDESK_TOKEN", sandbox.admin_token)
    monkeypatch.setenv("FLAGDESK_DATA_DIR", str(tmp_path))
    argv = ["access", "revoke", "--project", "web-shop", "--group", "Checkout squad", "--url",
            sandbox.url]  # fmt: skip
    monkeypatch.setattr(sys, "stdin", Terminal("n\n"))
    assert cli.main(argv) == 1
    said = capsys.readouterr().err
    assert f"In project “web-shop” on {sandbox.url}" in said
    assert "group “Checkout squad” (id 2): Owner → none" in said
    assert "Revoke every role of group “Checkout squad” (id 2) in project “web-shop”? [y/N]" in said
    assert 2 in held(sandbox, "web-shop")[1]
    monkeypatch.setattr(sys, "stdin", Terminal("y\n"))
    assert cli.main(argv) == 0
    assert 2 not in held(sandbox, "web-shop")[1]


def test_an_owner_may_grant_a_member_may_not(sandbox: SandboxProcess, tmp_path: Path) -> None:
    from tests.conftest import personal_token_of

    with sandbox.admin() as http:
        names = {u["id"]: u["username"] for u in http.get("/api/admin/user-admin").json()["users"]}
    owner = personal_token_of(sandbox, names[12])  # payments' Owner, an Editor
    made = flagdesk(sandbox, "grant", "--project", "payments", "--role", "Member", "--user",
                    "31", "--yes", data=tmp_path, token=owner)  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert held(sandbox, "payments")[0][31] == [5]
    member = personal_token_of(sandbox, names[31])
    refused = flagdesk(sandbox, "grant", "--project", "payments", "--role", "Owner", "--user",
                       "31", "--yes", data=tmp_path, token=member)  # fmt: skip
    assert refused.returncode == 4  # a 403, as every command says one
    assert "User tried to grant role they did not have access to" in refused.stderr
