"""`app.actions.project_access` against a sandbox over HTTP, through the runner: a grant (one
request for every user and group; the entry records per user and group the roles before, after
and added), a change of roles and a revocation (one request each), each with its snapshot of the
project's access written first; the checks of entries in doubt (done, failed, changed since);
undo from the entry and the server now (a grant: exactly what it added goes, a role held before
stays; a change: the previous roles back; a revocation: the previous roles granted again),
journaled as undos that cannot be undone themselves; the plans' refusals (nothing to grant,
nothing to revoke, unknown names); and a played open-source release refused by the capability
check before anything is planned."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path

import pytest

from app.actions.check import check_entry
from app.actions.journal import Actor, Journal, State
from app.actions.project_access import (
    AccessPlan,
    NotFound,
    Subject,
    find_groups,
    find_roles,
    find_users,
    plan_grant,
    plan_revoke,
    plan_set,
)
from app.actions.runner import carry_out, require
from app.actions.undo import plan_undo, why_not
from app.api import errors as e
from app.api.client import AdminClient
from app.registry import GRANT_PROJECT_ACCESS, REVOKE_PROJECT_ACCESS, SET_PROJECT_ROLES
from sandbox.process import SandboxProcess

OWNER, MEMBER = 4, 5


def journal_for(sb: SandboxProcess, folder: Path) -> Journal:
    return Journal(Actor("test", sb.url, "admin", None), folder)


async def roles_now(
    c: AdminClient, project: str
) -> tuple[dict[int, list[int]], dict[int, list[int]]]:
    got = await c.project_access(project)
    return ({u.id: sorted(u.roles) for u in got.users},
            {g.id: sorted(g.roles) for g in got.groups})  # fmt: skip


def test_grant_check_and_undo_takes_away_only_what_was_added(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    journal = journal_for(sandbox, tmp_path)

    async def job() -> None:
        async with AdminClient(sandbox.url, sandbox.admin_token) as c:
            access = await c.project_access("web-shop")
            users = (await c.list_users()).users
            groups = (await c.list_groups()).groups
            eve = find_users(["6"], users, access)  # holds Owner already
            zed = find_users([str(next(u.email for u in users if u.id == 30))], users, access)
            support = find_groups(["support"], groups)
            roles = [r.id for r in find_roles(["owner", "Member"], access.roles)]
            plan = plan_grant("web-shop", access, eve + zed + support, roles, journal)
            assert plan.action is GRANT_PROJECT_ACCESS
            assert plan.question == ("Grant Owner, Member in project “web-shop” to 3 users and "
                                     "groups?")  # fmt: skip
            assert plan.lines()[1] == f"user “{eve[0].label}” (id 6): Owner → Owner, Member"
            assert json.loads(plan.requests[0].body) == {"roles": [4, 5], "groups": [3],
                                                         "users": [6, 30]}  # fmt: skip
            done = await carry_out(c, plan)
            assert done.statuses == (200,)
            users_now, groups_now = await roles_now(c, "web-shop")
            assert users_now[6] == [4, 5] and users_now[30] == [4, 5] and groups_now[3] == [4, 5]

            (entry,) = journal.entries()
            assert entry.action == GRANT_PROJECT_ACCESS.key and entry.state is State.DONE
            assert entry.ids == ["web-shop", "user:6", "user:30", "group:3"]
            assert entry.before["subjects"][0] == {
                "kind": "user", "id": 6, "label": eve[0].label, "roles": [4], "to": [4, 5],
                "added": [5]}  # fmt: skip
            snapshot = journal.folder / entry.before["snapshot"]
            held_before = json.loads(snapshot.read_text())
            assert {u["id"] for u in held_before["users"]} == {1, 6, 7, 10}

            in_doubt = replace(entry, state=State.IN_DOUBT)
            assert (await check_entry(c, in_doubt)).state is State.DONE
            assert why_not(entry) == ""
            undo = await plan_undo(c, journal, entry)
            assert isinstance(undo, AccessPlan)
            assert undo.action is SET_PROJECT_ROLES and undo.undoes == entry.id
            assert undo.question.startswith("Undo the change of project access in “web-shop”")
            await carry_out(c, undo)
            users_now, groups_now = await roles_now(c, "web-shop")
            assert users_now[6] == [4] and 30 not in users_now and 3 not in groups_now
            assert (await check_entry(c, in_doubt)).state is State.FAILED
            undone = journal.entries()[-1]
            assert undone.before["undoes"] == entry.id
            assert "itself an undo" in why_not(undone)

    asyncio.run(job())


def test_set_revoke_their_checks_and_undo(sandbox: SandboxProcess, tmp_path: Path) -> None:
    journal = journal_for(sandbox, tmp_path)

    async def job() -> None:
        async with AdminClient(sandbox.url, sandbox.admin_token) as c:
            access = await c.project_access("web-shop")
            squad = Subject("group", 2, "Checkout squad")
            platform = Subject("group", 1, "Platform team")
            change = plan_set("web-shop", access, [(squad, [MEMBER])], journal)
            assert change.action is SET_PROJECT_ROLES
            assert change.requests[0].describe() == {
                "method": "PUT",
                "path": "/api/admin/projects/web-shop/groups/2/roles",
            }
            await carry_out(c, change)
            revoke = plan_revoke("web-shop", await c.project_access("web-shop"),
                                 [platform, Subject("user", 10, "u10")], journal)  # fmt: skip
            assert revoke.action is REVOKE_PROJECT_ACCESS and len(revoke.steps()) == 2
            done = await carry_out(c, revoke)
            assert done.statuses == (200, 200)
            users_now, groups_now = await roles_now(c, "web-shop")
            assert groups_now == {2: [MEMBER]} and 10 not in users_now

            set_entry, revoke_platform, revoke_user = journal.entries()
            assert (set_entry.request or {})["body"] == {"roles": [MEMBER]}
            for entry in (set_entry, revoke_platform, revoke_user):
                verdict = await check_entry(c, replace(entry, state=State.IN_DOUBT))
                assert verdict.state is State.DONE, verdict.message

            # undo the revocation: the previous roles granted again
            undo = await plan_undo(c, journal, revoke_platform)
            assert isinstance(undo, AccessPlan)
            assert undo.action is GRANT_PROJECT_ACCESS
            assert json.loads(undo.requests[0].body) == {"roles": [MEMBER], "groups": [1],
                                                         "users": []}  # fmt: skip
            await carry_out(c, undo)
            # undo the change: the previous roles back
            await carry_out(c, await plan_undo(c, journal, set_entry))
            users_now, groups_now = await roles_now(c, "web-shop")
            assert groups_now == {1: [MEMBER], 2: [OWNER]}
            # the change's check now: neither as it left them (Member) nor... as before: failed
            verdict = await check_entry(c, replace(set_entry, state=State.IN_DOUBT))
            assert verdict.state is State.FAILED
            # someone else changed it since: in doubt
            await c.set_project_roles("web-shop", "group", 2, [OWNER, MEMBER])
            verdict = await check_entry(c, replace(set_entry, state=State.IN_DOUBT))
            assert verdict.state is State.IN_DOUBT and "changed since" in verdict.message

    asyncio.run(job())


def test_the_plans_refusals(sandbox: SandboxProcess, tmp_path: Path) -> None:
    journal = journal_for(sandbox, tmp_path)

    async def job() -> None:
        async with AdminClient(sandbox.url, sandbox.admin_token) as c:
            access = await c.project_access("web-shop")
            owner = Subject("user", 6, "u6")
            with pytest.raises(ValueError, match="nothing to grant"):
                plan_grant("web-shop", access, [owner], [OWNER], journal)
            with pytest.raises(ValueError, match="no role to grant"):
                plan_grant("web-shop", access, [owner], [], journal)
            with pytest.raises(ValueError, match="nothing to change"):
                plan_set("web-shop", access, [(owner, [OWNER])], journal)
            with pytest.raises(ValueError, match=r"user “u30” \(id 30\) does not hold any role"):
                plan_revoke("web-shop", access, [Subject("user", 30, "u30")], journal)
            with pytest.raises(ValueError, match="does not hold that role"):
                plan_revoke("web-shop", access, [owner], journal, role=MEMBER)
            only_owner = plan_revoke("web-shop", access, [owner], journal, role=OWNER)
            assert only_owner.action is SET_PROJECT_ROLES  # a PUT of the others: none
            assert only_owner.requests[0].body == b'{"roles":[]}'
            with pytest.raises(NotFound, match=r"“Boss”.*Owner, Member"):
                find_roles(["Boss"], access.roles)
            with pytest.raises(NotFound, match="“who@x”"):
                find_users(["who@x"], (await c.list_users()).users, access)
            assert find_users(["999"], [], access, any_id=True)[0].id == 999
            with pytest.raises(NotFound, match="“Nope”"):
                find_groups(["Nope"], (await c.list_groups()).groups)
            assert journal.entries() == []

    asyncio.run(job())


def test_a_refused_grant_is_journaled_as_failed(sandbox: SandboxProcess, tmp_path: Path) -> None:
    from tests.conftest import personal_token_of

    with sandbox.admin() as http:
        names = {u["id"]: u["username"] for u in http.get("/api/admin/user-admin").json()["users"]}
    token = personal_token_of(sandbox, names[5])  # an Editor, no role in web-shop
    journal = Journal(Actor("test", sandbox.url, "personal", names[5]), tmp_path)

    async def job() -> None:
        async with AdminClient(sandbox.url, token) as c:
            access = await c.project_access("web-shop")
            plan = plan_grant("web-shop", access, [Subject("user", 30, "u30")], [MEMBER], journal)
            with pytest.raises(e.Forbidden, match="User tried to grant role"):
                await carry_out(c, plan)
        (entry,) = journal.entries()
        assert entry.state is State.FAILED and entry.status == 403

    asyncio.run(job())


def test_open_source_is_refused_before_planning(tmp_path: Path) -> None:
    with SandboxProcess(tmp_path / "oss.sqlite3", "--demo", "--as-version", "6.10") as sb:

        async def job() -> None:
            async with AdminClient(sb.url, sb.admin_token) as c:
                caps = await c.capabilities()
                for action in (GRANT_PROJECT_ACCESS, SET_PROJECT_ROLES, REVOKE_PROJECT_ACCESS):
                    with pytest.raises(e.Unsupported, match="Pro or Enterprise"):
                        require(caps, action)

        asyncio.run(job())
