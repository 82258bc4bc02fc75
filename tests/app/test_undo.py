"""`app.actions.undo` against a sandbox over HTTP: each change with an undo (a group edited and
deleted, a user edited, a context field edited and deleted, flags revived) is made through the
runner, then undone from its journal entry alone (and its snapshot), which puts the server back;
the entries without an undo say why, and so do an entry in doubt and an undo itself."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest

from app.actions import archived_features, context_fields, groups, users
from app.actions.inactive_users import plan_deletion
from app.actions.journal import Actor, Journal, State
from app.actions.runner import carry_out
from app.actions.undo import CannotUndo, find_entry, plan_undo, why_not
from app.api.client import AdminClient
from app.api.models import (
    CreateContextField,
    CreateGroup,
    CreateGroupMember,
    UpdateContextField,
    UpdateUser,
    UserRef,
)
from sandbox.process import SandboxProcess


def test_every_undoable_change_is_undone_from_its_entry(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    journal = Journal(Actor("test", sandbox.url, "admin"), tmp_path)

    async def undo_last(c: AdminClient) -> str:
        entry = journal.entries()[-1]
        plan = await plan_undo(c, journal, find_entry(journal.entries(), entry.id[:6]))
        await carry_out(c, plan)
        return entry.id

    async def job() -> dict[str, object]:
        seen: dict[str, object] = {}
        async with AdminClient(sandbox.url, sandbox.admin_token) as c:
            # a group edited, then deleted
            members = [CreateGroupMember(user=UserRef(id=i)) for i in (2, 3)]
            made = await c.create_group(CreateGroup(name="Undo me", users=members))
            before = await c.get_group(made.id)
            renamed = CreateGroup(name="Renamed", users=members[:1])
            await carry_out(c, groups.plan_edit(before, renamed, journal))
            await undo_last(c)
            back = await c.get_group(made.id)
            seen["group"] = (back.name, sorted(m.user.id for m in back.users))
            await carry_out(c, groups.plan_delete(back, journal))
            await undo_last(c)
            names = [g.name for g in (await c.list_groups()).groups]
            seen["recreated"] = names.count("Undo me")
            # a user edited
            listed = await c.list_users()
            roles = {r.id: r.name for r in listed.rootRoles}
            user = next(u for u in listed.users if u.id == 5)
            plan = users.plan_edit(user, UpdateUser(name="Someone Else"), roles, journal, 2)
            await carry_out(c, plan)
            await undo_last(c)
            seen["user"] = ((await c.get_user(5)).name, user.name)
            # a context field edited, then deleted
            draft = CreateContextField(name="undoField", description="first")
            await carry_out(c, context_fields.plan_create(draft, journal))
            field = await c.get_context_field("undoField")
            after = UpdateContextField(description="second", sortOrder=0)
            await carry_out(c, context_fields.plan_edit(field, after, journal))
            await undo_last(c)
            seen["field"] = (await c.get_context_field("undoField")).description
            now = await c.get_context_field("undoField")
            await carry_out(c, context_fields.plan_delete(now, [], journal))
            await undo_last(c)
            seen["field again"] = (await c.get_context_field("undoField")).description
            # flags revived
            archived = (await c.archived_features("web-shop")).features[:2]
            await carry_out(c, archived_features.plan_revive(archived, "web-shop", journal))
            await undo_last(c)
            still = {f.name for f in (await c.archived_features("web-shop")).features}
            seen["flags"] = {f.name for f in archived} <= still
        return seen

    seen = asyncio.run(job())
    assert seen["group"] == ("Undo me", [2, 3])
    assert seen["recreated"] == 1
    name, was = seen["user"]  # type: ignore[misc]
    assert name == was != "Someone Else"
    assert seen["field"] == "first" and seen["field again"] == "first"
    assert seen["flags"] is True
    entries = journal.entries()
    assert len(entries) == 13 and all(e.state is State.DONE for e in entries)
    undos = [e for e in entries if e.before.get("undo") or e.before.get("undoes")]
    assert len(undos) == 5  # the archive again is the revive's undo; the rest say so
    assert all("itself an undo" in why_not(e) for e in undos)


def test_what_has_no_undo_says_why(sandbox: SandboxProcess, tmp_path: Path) -> None:
    journal = Journal(Actor("test", sandbox.url, "admin"), tmp_path)

    async def job() -> list[str]:
        async with AdminClient(sandbox.url, sandbox.admin_token) as c:
            inactive = (await c.inactive_users()).inactiveUsers[:1]
            await carry_out(c, plan_deletion(inactive, journal))
            (deleted,) = journal.entries()
            said = []
            with pytest.raises(CannotUndo) as caught:
                await plan_undo(c, journal, deleted)
            said.append(str(caught.value))
            in_doubt = replace(deleted, action="groups.edit", state=State.IN_DOUBT)
            said.append(why_not(in_doubt))
            with pytest.raises(CannotUndo) as caught:
                find_entry(journal.entries(), "nope")
            said.append(str(caught.value))
            return said

    deleted, in_doubt, unknown = asyncio.run(job())
    assert "cannot be undone: a deleted user cannot be brought back" in deleted
    assert "in doubt: check it against the server first" in in_doubt
    assert "no entry 'nope'" in unknown
