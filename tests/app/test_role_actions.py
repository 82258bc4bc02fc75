"""`app.actions.roles` against sandboxes over HTTP: a custom role created, edited and deleted
through the runner (the journal's entries, the snapshots with the permissions, the new role's
id in the creation's `after`); each undone from its journal entry alone (a creation by deleting
the role, an edit by putting name, description, type and permissions back, a deletion by
creating the role again with the same permissions under a new id, which the confirmation
says); the checks of entries in doubt; the permissions parsed against the server's catalogue
with errors that name what is wrong; a role in use refused naming who holds it (users, groups,
projects), before planning and at the runner's last look; built-in roles refused; and on a
played open-source release the built-in root roles read and the actions refused before
anything is sent."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path

import pytest

from app.actions import roles
from app.actions.check import can_check, check_entry
from app.actions.journal import Actor, Journal, State
from app.actions.runner import Refused, carry_out, require
from app.actions.undo import CannotUndo, plan_undo, why_not
from app.api import errors as e
from app.api.client import AdminClient
from app.api.models import (
    AdminPermissions,
    CreateGroup,
    CreateRole,
    CreateUser,
    RolePermission,
    RoleWithPermissions,
)
from app.registry import CREATE_ROLE, DELETE_ROLE, EDIT_ROLE
from sandbox import db
from sandbox.process import SandboxProcess


def journal_for(sb: SandboxProcess, folder: Path) -> Journal:
    return Journal(Actor("test", sb.url, "admin", None), folder)


def names(role: object) -> set[str]:
    return {roles.permission_text(p.name, p.environment) for p in role.permissions}  # type: ignore[attr-defined]


def test_create_edit_delete_and_undo_each_through_the_runner(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    journal = journal_for(sandbox, tmp_path)

    async def job() -> None:
        async with AdminClient(sandbox.url, sandbox.admin_token) as c:
            catalogue = await c.permissions()
            given = roles.parse_permissions(
                ["CREATE_FEATURE", "update_feature_environment:development", "CREATE_FEATURE"],
                catalogue, "custom")  # fmt: skip
            assert [(p.name, p.environment) for p in given] == [
                ("CREATE_FEATURE", None),
                ("UPDATE_FEATURE_ENVIRONMENT", "development"),
            ]
            plan = roles.plan_create("Deployer", "project", "Ships", given, journal)
            assert plan.question == "Create the role “Deployer”?"
            assert plan.lines()[0] == (
                f"A custom project role “Deployer” will be created on {sandbox.url} (connection "
                "“test”), with 2 permissions (CREATE_FEATURE, "
                "UPDATE_FEATURE_ENVIRONMENT:development).")  # fmt: skip
            made = await roles.RoleChanged.of(c, await carry_out(c, plan))
            assert made.role is not None and made.role.type == "custom"
            role_id = made.role.id
            (created,) = journal.entries()
            assert (created.action, created.ids, created.state) == (
                CREATE_ROLE.key,
                ["Deployer"],
                State.DONE,
            )
            assert created.before == {"name": "Deployer", "type": "custom"}
            assert created.after == {"id": role_id}
            assert created.request is not None and created.request["body"]["permissions"]

            # an edit: the whole role sent, the snapshot first
            before = await c.get_role(role_id)
            after = CreateRole(
                name="Shipper",
                description="Ships flags",
                type="custom",
                permissions=[*given, RolePermission(name="DELETE_FEATURE")],
            )
            edit = roles.plan_edit(before, after, journal)
            assert "name “Deployer” → “Shipper”" in edit.lines()[0]
            assert "permissions added: DELETE_FEATURE" in edit.lines()[0]
            await carry_out(c, edit)
            edited = journal.entries()[-1]
            assert edited.ids == [role_id] and edited.before is not None
            snapshot = json.loads((journal.folder / edited.before["snapshot"]).read_text())
            assert snapshot["name"] == "Deployer" and len(snapshot["permissions"]) == 2
            assert names(await c.get_role(role_id)) == {
                "CREATE_FEATURE",
                "UPDATE_FEATURE_ENVIRONMENT:development",
                "DELETE_FEATURE",
            }

            # the edit undone: name, description and permissions back
            undo = await plan_undo(c, journal, edited)
            assert undo.action is EDIT_ROLE and "put back as it was" in undo.lines()[0]
            await carry_out(c, undo)
            back = await c.get_role(role_id)
            assert (back.name, back.description) == ("Deployer", "Ships")
            assert names(back) == {"CREATE_FEATURE", "UPDATE_FEATURE_ENVIRONMENT:development"}
            assert "itself an undo" in why_not(journal.entries()[-1])

            # a deletion, then undone: the same permissions under a new id
            delete = roles.plan_delete(back, await roles.read_holders(c, back), journal)
            assert delete.question == "Delete the role “Deployer”?"
            await carry_out(c, delete)
            deleted = journal.entries()[-1]
            assert (deleted.action, deleted.ids) == (DELETE_ROLE.key, [role_id])
            with pytest.raises(e.NotFound):
                await c.get_role(role_id)
            again = await plan_undo(c, journal, deleted)
            assert again.action is CREATE_ROLE
            assert f"under a new id (the server never gives the old one, {role_id}, again)" in \
                again.lines()[0]  # fmt: skip
            remade = await roles.RoleChanged.of(c, await carry_out(c, again))
            assert remade.role is not None and remade.role.id > role_id
            assert names(await c.get_role(remade.role.id)) == names(back)
            assert journal.entries()[-1].before["undoes"] == deleted.id

            # the creation undone: the role it made deleted
            with pytest.raises(CannotUndo, match="is gone from the server"):
                await plan_undo(c, journal, created)  # it was deleted above
            fresh = await roles.RoleChanged.of(c, await carry_out(c, roles.plan_create(
                "Temp", "root", "", [], journal)))  # fmt: skip
            assert fresh.role is not None and fresh.role.type == "root-custom"
            unmake = await plan_undo(c, journal, journal.entries()[-1])
            assert unmake.action is DELETE_ROLE
            await carry_out(c, unmake)
            assert "Temp" not in {r.name for r in (await c.roles()).roles}

    asyncio.run(job())


def test_checks_of_entries_in_doubt(sandbox: SandboxProcess, tmp_path: Path) -> None:
    journal = journal_for(sandbox, tmp_path)

    async def job() -> list[tuple[State, str]]:
        async with AdminClient(sandbox.url, sandbox.admin_token) as c:
            made = await roles.RoleChanged.of(c, await carry_out(c, roles.plan_create(
                "Doubt", "project", "", [], journal)))  # fmt: skip
            assert made.role is not None
            before = await c.get_role(made.role.id)
            await carry_out(
                c,
                roles.plan_edit(
                    before,
                    CreateRole(name="Doubt", description="changed", type="custom", permissions=[]),
                    journal,
                ),
            )
            created, edited = journal.entries()
            verdicts = []
            for entry in (created, replace(created, ids=["Never"], before={"name": "Never"}),
                          edited):  # fmt: skip
                doubt = replace(entry, state=State.IN_DOUBT)
                assert can_check(doubt)
                verdict = await check_entry(c, doubt)
                verdicts.append((verdict.state, verdict.message))
            # the edit not applied: the role as it was before
            await c.update_role(
                made.role.id,
                CreateRole(name="Doubt", description="", type="custom", permissions=[]),
            )
            verdict = await check_entry(c, replace(edited, state=State.IN_DOUBT))
            verdicts.append((verdict.state, verdict.message))
            await c.delete_role(made.role.id)
            await carry_out(c, roles.plan_delete(await _made(c, "Gone"), roles.Holders(),
                                                 journal))  # fmt: skip
            gone = journal.entries()[-1]
            verdict = await check_entry(c, replace(gone, state=State.IN_DOUBT))
            verdicts.append((verdict.state, verdict.message))
            return verdicts

    verdicts = asyncio.run(job())
    assert [v[0] for v in verdicts] == [State.DONE, State.FAILED, State.DONE, State.FAILED,
                                        State.DONE]  # fmt: skip
    assert "not applied" in verdicts[3][1] and "is gone" in verdicts[4][1]


async def _made(c: AdminClient, name: str) -> RoleWithPermissions:
    role = await c.create_role(CreateRole(name=name))
    return await c.get_role(role.id)


def _catalogue() -> AdminPermissions:
    return AdminPermissions.model_validate({"version": 1, "permissions": {
        "root": [{"id": 12, "name": "CREATE_PROJECT", "type": "root"}],
        "project": [{"id": 15, "name": "CREATE_FEATURE", "type": "project"}],
        "environments": [{"name": env, "permissions": [
            {"id": 28, "name": "UPDATE_FEATURE_ENVIRONMENT", "type": "environment",
             "environment": env}]} for env in ("development", "production")],
    }})  # fmt: skip


@pytest.mark.parametrize(("word", "kind", "said"), [
    ("CREAT_FEATURE", "custom", "has no permission CREAT_FEATURE; did you mean CREATE_FEATURE"),
    ("UPDATE_FEATURE_ENVIRONMENT", "custom",
     "give it as UPDATE_FEATURE_ENVIRONMENT:ENVIRONMENT (development, production)"),
    ("UPDATE_FEATURE_ENVIRONMENT:staging", "custom", "no environment “staging”"),
    ("CREATE_FEATURE:development", "custom", "has no environment: give it as CREATE_FEATURE"),
    ("UPDATE_FEATURE_ENVIRONMENT:development", "root-custom", "a root role cannot hold it"),
])  # fmt: skip
def test_permissions_are_checked_against_the_catalogue(word: str, kind: str, said: str) -> None:
    with pytest.raises(ValueError, match=f"--permission {word}") as refused:
        roles.parse_permissions([word], _catalogue(), kind)
    assert said in str(refused.value)
    # a project permission on a root role is taken, as Unleash takes it
    assert roles.parse_permissions(["CREATE_FEATURE"], _catalogue(), "root-custom")


def test_a_role_in_use_is_refused_naming_who_holds_it(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    journal = journal_for(sandbox, tmp_path)

    async def job() -> None:
        async with AdminClient(sandbox.url, sandbox.admin_token) as c:
            root = await c.create_role(CreateRole(name="Auditor", type="root-custom"))
            await c.create_user(CreateUser(email="a@example.com", name="Ann Audit",
                                           rootRole=root.id))  # fmt: skip
            await c.create_group(CreateGroup(name="Auditors", rootRole=root.id))
            full = await c.get_role(root.id)
            holders = await roles.read_holders(c, full)
            assert (holders.users, holders.groups) == (("Ann Audit",), ("Auditors",))
            with pytest.raises(roles.RoleInUse) as refused:
                roles.plan_delete(full, holders, journal)
            assert str(refused.value) == (
                f"The role “Auditor” (id {root.id}) cannot be deleted: it is held by 1 user (Ann "
                "Audit); 1 group (Auditors). Take it from them first (their root role). Nothing "
                "was sent.")  # fmt: skip

            project = await c.create_role(CreateRole(name="Deployer"))
            full = await c.get_role(project.id)
            plan = roles.plan_delete(full, await roles.read_holders(c, full), journal)
            # held between the plan and its carrying out: the runner's last look refuses
            _hold(sandbox, project.id)
            with pytest.raises(Refused, match=r"held by 1 project: web-shop \(1 user, 1 group\)"):
                await carry_out(c, plan)
            assert journal.entries() == []  # nothing sent
            assert "held by 1 project" in str(
                pytest.raises(roles.RoleInUse, roles.plan_delete, full,
                              await roles.read_holders(c, full), journal).value)  # fmt: skip

            # built-in roles are refused before any request
            for role_id in (1, 4):
                builtin = await c.get_role(role_id)
                with pytest.raises(ValueError, match="built-in roles cannot be deleted"):
                    roles.plan_delete(builtin, roles.Holders(), journal)
                with pytest.raises(ValueError, match="built-in roles cannot be changed"):
                    roles.plan_edit(builtin, CreateRole(name="X"), journal)

    asyncio.run(job())


def _hold(sb: SandboxProcess, role_id: int) -> None:
    conn = db.connect(sb.db)
    try:
        with conn:
            conn.execute("INSERT INTO project_roles(project, role_id, user_id, created_at)"
                         " VALUES('web-shop', ?, 1, 0)", (role_id,))  # fmt: skip
            conn.execute("INSERT INTO project_roles(project, role_id, group_id, created_at)"
                         " SELECT 'web-shop', ?, min(id), 0 FROM groups_", (role_id,))  # fmt: skip
    finally:
        conn.close()


def test_an_open_source_release_lists_its_root_roles_and_changes_none(tmp_path: Path) -> None:
    async def job() -> None:
        with SandboxProcess(tmp_path / "s.sqlite3", "--demo", "--as-version", "7.6") as sb:
            async with AdminClient(sb.url, sb.admin_token) as c:
                listing = await roles.read_roles(c)
                assert not listing.custom and "need Unleash Enterprise" in listing.note
                assert [(r.name, r.type) for r in listing.roles] == [
                    ("Admin", "root"), ("Editor", "root"), ("Viewer", "root")]  # fmt: skip
                caps = await c.capabilities()
                for action in (CREATE_ROLE, EDIT_ROLE, DELETE_ROLE):
                    with pytest.raises(e.Unsupported, match="Custom roles need Unleash"):
                        require(caps, action)

    asyncio.run(job())


def test_both_spellings_of_a_custom_root_role_are_read_as_one() -> None:
    """Unleash sends `root-custom`; the spec's dashboard enum says `custom-root` (what the
    sandbox stored before): flagdesk reads either as a custom root role."""
    from app.api.models import ROLE_TYPES, Role
    from app.viewmodels.dashboard import ROLE_TYPES as BADGES

    for kind in ("root-custom", "custom-root"):
        role = Role(id=9, name="Auditor", type=kind)
        assert kind in ROLE_TYPES and roles.kind_of(role) == "custom root role"
        assert roles.wire_type(kind) == "root-custom"
        assert BADGES[kind] == "a custom root role on the whole server"
    assert roles.role_state({"name": "A", "type": "custom-root", "permissions": [
        {"name": "READ_LOGS", "environment": "development"}]}) == roles.role_state(
        {"name": "A", "type": "root-custom", "permissions": [{"name": "READ_LOGS"}]})  # fmt: skip


# ---------------------------------------------------------------------------- issue 36: the window


def test_a_root_role_held_by_a_service_account_is_refused_naming_it(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    """The users' list leaves service accounts out: `read_holders` names them from the service
    accounts' list, so the plan refuses instead of the server (400 with counts only)."""
    from app.api.models import CreateServiceAccount

    journal = journal_for(sandbox, tmp_path)

    async def job() -> None:
        async with AdminClient(sandbox.url, sandbox.admin_token) as c:
            root = await c.create_role(CreateRole(name="Robots", type="root-custom"))
            await c.create_service_account(CreateServiceAccount(
                name="Deploy bot", username="deploy-bot", rootRole=root.id))  # fmt: skip
            full = await c.get_role(root.id)
            holders = await roles.read_holders(c, full)
            assert holders.service_accounts == ("Deploy bot",)
            assert (holders.users, holders.groups) == ((), ())
            with pytest.raises(roles.RoleInUse) as refused:
                roles.plan_delete(full, holders, journal)
            assert "held by 1 service account (Deploy bot)" in str(refused.value)
            assert journal.entries() == []

    asyncio.run(job())
