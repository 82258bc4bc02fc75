"""`app.actions.groups` against a sandbox over HTTP: an edit and a deletion each write the group
as read (with its members) to a JSON snapshot, then the journal's `sent` line, then the request,
then the answer; undoing an edit puts the previous group back, undoing a deletion recreates the
group from its snapshot (new id, same members); a failed request is journaled as failed with the
form's data untouched on the server; a snapshot that cannot be written sends nothing."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from app.actions.check import check_entry
from app.actions.groups import (
    GroupChange,
    GroupPlan,
    Kind,
    group_change,
    plan_delete,
    plan_edit,
    plan_recreate,
    read_snapshot,
    request_of,
)
from app.actions.journal import Actor, Journal, State
from app.actions.runner import NotStarted, carry_out
from app.api import errors as e
from app.api.client import AdminClient, Answer, WriteRequest
from app.api.models import CreateGroup, CreateGroupMember, Group, UserRef
from sandbox.process import SandboxProcess

T = TypeVar("T")


async def change(client: AdminClient, plan: GroupPlan) -> GroupChange:
    """A group's plan carried out by the runner, the server's answer read, as the window does."""
    return await group_change(client, await carry_out(client, plan))


def run(sb: SandboxProcess, job: Callable[[AdminClient], Awaitable[T]]) -> T:
    async def go() -> T:
        async with AdminClient(sb.url, sb.admin_token) as client:
            return await job(client)

    return asyncio.run(go())


def journal_in(folder: Path, sb: SandboxProcess) -> Journal:
    return Journal(Actor("Test sandbox", sb.url, "admin"), folder)


def body(name: str, *ids: int, **fields: Any) -> CreateGroup:
    return CreateGroup(name=name, users=[CreateGroupMember(user=UserRef(id=i)) for i in ids],
                       **fields)  # fmt: skip


def held(group: Group) -> tuple[Any, ...]:
    """What a group holds, its members in any order."""
    return (group.name, group.description, group.mappingsSSO, group.rootRole,
            sorted(m.user.id for m in group.users))  # fmt: skip


async def three_users(c: AdminClient) -> list[int]:
    return [u.id for u in (await c.list_users()).users[1:4]]


def test_edit_then_undo_puts_the_previous_group_back(sandbox: SandboxProcess, tmp_path: Path):
    journal = journal_in(tmp_path, sandbox)

    async def job(c: AdminClient) -> tuple[Any, ...]:
        a, b, d = await three_users(c)
        made = await c.create_group(body("Ops", a, b, description="on call", rootRole=2))
        before = await c.get_group(made.id)
        plan = plan_edit(before, body("Ops team", b, d, mappingsSSO=["okta"]), journal,
                         {2: "Editor"})  # fmt: skip
        done = await change(c, plan)
        edited = await c.get_group(made.id)
        undo = plan_edit(edited, request_of(before), journal, undo=True)
        await change(c, undo)
        return plan, done, edited, await c.get_group(made.id), before

    plan, done, edited, restored, before = run(sandbox, job)
    assert done.status == 200 and done.answer is not None and done.answer.name == "Ops team"
    assert (edited.name, edited.rootRole, edited.mappingsSSO) == ("Ops team", None, ["okta"])
    assert held(restored) == held(before)
    text = " ".join(plan.lines())
    assert "name “Ops” → “Ops team”" in text and "root role Editor → none" in text
    assert "1 leaving" in text and "1 joining" in text and "can be undone" in text
    assert sandbox.url in text and "Test sandbox" in text
    first, second = journal.entries()
    assert (first.action, first.ids, first.state, first.status) == (
        "groups.edit", [before.id], State.DONE, 200)  # fmt: skip
    # the body sent and the group before as a body: how an edit in doubt is checked
    assert first.request == {"method": "PUT", "path": f"/api/admin/groups/{before.id}",
                             "body": json.loads(plan.request.body)}  # fmt: skip
    assert first.before["body"] == request_of(before).model_dump(mode="json")
    assert second.before["undo"] is True
    snapshot = read_snapshot(tmp_path / first.before["snapshot"])
    assert snapshot == before  # the group as read, members and all


def test_delete_then_undo_recreates_it_with_its_members(sandbox: SandboxProcess, tmp_path: Path):
    journal = journal_in(tmp_path, sandbox)

    async def job(c: AdminClient) -> tuple[Any, ...]:
        ids = await three_users(c)
        made = await c.create_group(body("Doomed", *ids, description="d", mappingsSSO=["m"],
                                         rootRole=3))  # fmt: skip
        before = await c.get_group(made.id)
        plan = plan_delete(before, journal)
        done = await change(c, plan)
        with pytest.raises(e.NotFound):
            await c.get_group(made.id)
        snapshot = read_snapshot(plan.snapshot)
        again = await change(c, plan_recreate(snapshot, journal))
        assert again.answer is not None
        return plan, done, before, await c.get_group(again.answer.id)

    plan, done, before, recreated = run(sandbox, job)
    assert (done.status, done.answer) == (200, None)
    assert recreated.id != before.id
    assert held(recreated) == held(before) and len(before.users) == 3
    assert "Undo recreates it" in " ".join(plan.lines())
    deleted, created = journal.entries()
    assert (deleted.action, deleted.state, deleted.status) == ("groups.delete", State.DONE, 200)
    assert (created.action, created.state, created.status) == ("groups.create", State.DONE, 201)
    assert json.loads((tmp_path / deleted.before["snapshot"]).read_text())["name"] == "Doomed"


def test_a_refused_edit_is_journaled_as_failed_and_changes_nothing(
    sandbox: SandboxProcess, tmp_path: Path
):
    journal = journal_in(tmp_path, sandbox)

    async def job(c: AdminClient) -> tuple[Group, Group, e.ClientError]:
        one = await c.get_group((await c.create_group(body("One"))).id)
        await c.create_group(body("Two"))
        with pytest.raises(e.Conflict) as caught:
            await change(c, plan_edit(one, body("Two"), journal))
        return one, await c.get_group(one.id), caught.value

    one, after, error = run(sandbox, job)
    assert after == one
    assert "already exists" in error.message
    (entry,) = journal.entries()
    assert (entry.state, entry.status) == (State.FAILED, 409)
    assert "Two" in entry.message


def test_no_snapshot_no_request(sandbox: SandboxProcess, tmp_path: Path):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    journal = journal_in(blocked, sandbox)  # the folder is a file: nothing can be written in it

    async def job(c: AdminClient) -> tuple[Group, Group]:
        group = await c.get_group((await c.create_group(body("Kept"))).id)
        with pytest.raises(NotStarted, match="Nothing was changed"):
            await change(c, plan_delete(group, journal))
        return group, await c.get_group(group.id)

    group, after = run(sandbox, job)
    assert after == group


def test_the_plans_say_what_cannot_come_back(tmp_path: Path):
    group = Group(id=7, name="G", projects=["default", "web"])
    journal = Journal(Actor("Conn", "http://server"), tmp_path)
    plan = plan_delete(group, journal)
    assert plan.kind is Kind.DELETE and plan.action.key == "groups.delete"
    assert "access to projects (default, web) is not restored" in " ".join(plan.lines())
    assert plan.snapshot.parent == tmp_path and plan.snapshot.suffix == ".json"
    recreate = plan_recreate(group, journal)
    assert recreate.undo and recreate.request.method == "POST"
    assert "new id" in " ".join(recreate.lines())


def test_a_deletion_or_recreation_in_doubt_is_checked_against_the_server(
    sandbox: SandboxProcess, tmp_path: Path
):
    journal = journal_in(tmp_path, sandbox)

    async def job(c: AdminClient) -> list[tuple[State, str]]:
        kept = await c.create_group(body("Kept"))
        gone = await c.create_group(body("Gone"))
        for group, action in ((kept, "groups.delete"), (gone, "groups.delete"),
                              (gone, "groups.create"), (kept, "groups.create")):  # fmt: skip
            await journal.begin(action, [group.id], before={"name": group.name})
        await c.delete_group(gone.id)  # the request went, its answer never came back
        return [((v := await check_entry(c, entry)).state, v.message)
                for entry in journal.entries()]  # fmt: skip

    verdicts = run(sandbox, job)
    assert [state for state, _ in verdicts] == [State.FAILED, State.DONE, State.FAILED, State.DONE]
    assert "still there" in verdicts[0][1] and "not there" in verdicts[2][1]


class AnswerLost(AdminClient):
    """A client whose group edits lose their answer: the PUT reaches the server (or, with
    `send` False, never leaves), then the connection breaks, as a process killed or a network
    cut leaves an edit: in doubt."""

    send = True

    async def send_write(self, request: WriteRequest, **kw: Any) -> Answer:
        if request.method != "PUT":
            return await super().send_write(request, **kw)
        if self.send:
            await super().send_write(request, **kw)
        raise e.ConnectionLost(self.base_url, "the connection closed before the answer")


def test_group_edits_in_doubt_are_checked_by_the_body_sent(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    """Three group edits whose answers were lost, journaled by `carry_out` itself: the one the
    server took is done, the one it never got failed (not applied), the one someone changed
    after stays in doubt and says so."""
    from app.actions.check import can_check, settle

    journal = journal_in(tmp_path, sandbox)

    async def job() -> list[tuple[State, str]]:
        async with AnswerLost(sandbox.url, sandbox.admin_token) as c:
            a, b, d = await three_users(c)
            groups = [await c.create_group(body(f"Doubt {i}", a, b)) for i in range(3)]
            for group, send in zip(groups, (True, False, True), strict=True):
                c.send = send
                read = await c.get_group(group.id)
                plan = plan_edit(read, body(f"{read.name} edited", b, d), journal, {})
                with pytest.raises(e.ConnectionLost):
                    await change(c, plan)
            c.send = True
            # someone else renames the third after the lost answer
            async with AdminClient(sandbox.url, sandbox.admin_token) as someone:
                await someone.update_group(groups[2].id, body("Renamed elsewhere", a))
            entries = journal.entries()
            assert all(x.in_doubt and can_check(x) for x in entries)
            verdicts = []
            for entry in entries:
                verdict = await check_entry(c, entry)
                await settle(journal, entry, verdict)
                verdicts.append((verdict.state, verdict.message))
            return verdicts

    verdicts = asyncio.run(job())
    assert verdicts[0] == (State.DONE, "the group “Doubt 0” is as the change left it")
    not_applied = "not applied: the group “Doubt 1” is as it was before the change"
    assert verdicts[1] == (State.FAILED, not_applied)
    assert verdicts[2][0] is State.IN_DOUBT and "changed by someone else" in verdicts[2][1]
    assert [x.state for x in journal.entries()] == [State.DONE, State.FAILED, State.IN_DOUBT]
