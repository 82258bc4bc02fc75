"""`app.actions.context_fields` against a sandbox over HTTP: create, edit and delete a field
with its snapshot and journal entry, the confirmation's words, a deletion refused from the
field's usage before anything is sent, a 409 that comes anyway, and undoing an edit and a
deletion (journaled like any change), state read back from the server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from app.actions.context_fields import (
    FieldChanged,
    FieldInUse,
    FieldPlan,
    body_of,
    plan_create,
    plan_delete,
    plan_edit,
    plan_undo,
    read_snapshot,
)
from app.actions.journal import Actor, Journal, State
from app.actions.runner import carry_out
from app.api import errors as e
from app.api.client import AdminClient
from app.api.models import CreateContextField, LegalValueBody
from sandbox.process import SandboxProcess


async def change(client: AdminClient, plan: FieldPlan) -> FieldChanged:
    """A context field's plan carried out by the runner, as the window and the command do."""
    return FieldChanged.of(await carry_out(client, plan))


def journal_for(sb: SandboxProcess, folder: Path) -> Journal:
    return Journal(Actor("test", sb.url, "admin"), folder)


def test_create_edit_delete_and_undo_with_snapshots_and_journal(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    journal = journal_for(sandbox, tmp_path)

    async def job() -> None:
        async with AdminClient(sandbox.url, sandbox.admin_token) as c:
            draft = CreateContextField(name="plan", description="Plan", stickiness=True,
                                       legalValues=[LegalValueBody(value="gold")])  # fmt: skip
            created = plan_create(draft, journal)
            assert created.snapshot is None and created.question == (
                "Create the context field “plan”?")  # fmt: skip
            assert created.lines()[0] == (
                f"The context field “plan” will be created on {sandbox.url} (connection "
                "“test”): description “Plan”, stickiness on, 1 legal value (gold).")  # fmt: skip
            done = await change(c, created)
            assert done.status == 201 and not done.undoable

            before = await c.get_context_field("plan")
            values = [LegalValueBody(value="gold", description="Top"), LegalValueBody(value="free")]
            after = body_of(before).model_copy(update={"legalValues": values})
            edit = plan_edit(before, after, journal)
            assert edit.lines()[0] == (
                f"The context field “plan” will be changed on {sandbox.url} (connection “test”): "
                "legal values added: free; descriptions changed: gold.")  # fmt: skip
            assert edit.snapshot is not None and not edit.snapshot.exists()
            edited = await change(c, edit)
            assert edited.status == 200 and edited.undoable
            read = await c.get_context_field("plan")
            pairs = [(v.value, v.description) for v in read.legalValues]
            assert pairs == [("gold", "Top"), ("free", None)]
            assert (await read_snapshot(edit.snapshot)).legalValues == before.legalValues

            undo = plan_undo(edited, await read_snapshot(edit.snapshot), read, journal)
            assert undo.question == "Undo the last change to the context field “plan”?"
            assert undo.lines()[0].startswith("The context field “plan” will be put back as it "
                                              "was on ")  # fmt: skip
            undone = await change(c, undo)
            assert undone.status == 200 and not undone.undoable
            back = await c.get_context_field("plan")
            assert [(v.value, v.description) for v in back.legalValues] == [("gold", None)]

            usage = (await c.context_strategies("plan")).strategies
            deletion = plan_delete(back, usage, journal)
            assert deletion.lines()[0] == (f"The context field “plan” will be deleted on "
                                           f"{sandbox.url} (connection “test”). No strategy "
                                           "uses it.")  # fmt: skip
            deleted = await change(c, deletion)
            assert deleted.status == 200 and deleted.undoable
            with pytest.raises(e.NotFound):
                await c.get_context_field("plan")
            assert deletion.snapshot is not None
            saved = json.loads(deletion.snapshot.read_text())
            assert saved["name"] == "plan" and saved["stickiness"] is True

            recreate = plan_undo(deleted, await read_snapshot(deletion.snapshot), None, journal)
            assert recreate.request.method == "POST" and recreate.snapshot is None
            assert (await change(c, recreate)).status == 201
            again = await c.get_context_field("plan")
            assert (again.description, again.stickiness) == ("Plan", True)
            assert [v.value for v in again.legalValues] == ["gold"]

    asyncio.run(job())
    entries = journal.entries()
    assert [(x.action, x.ids, x.state, x.status) for x in entries] == [
        ("context_fields.create", ["plan"], State.DONE, 201),
        ("context_fields.edit", ["plan"], State.DONE, 200),
        ("context_fields.edit", ["plan"], State.DONE, 200),
        ("context_fields.delete", ["plan"], State.DONE, 200),
        ("context_fields.create", ["plan"], State.DONE, 201),
    ]
    assert entries[2].before["undoes"] == entries[1].id
    assert entries[4].before == {"field": "plan", "undoes": entries[3].id}
    assert entries[3].request == {"method": "DELETE", "path": "/api/admin/context/plan"}


def test_a_field_in_use_is_refused_before_anything_is_sent(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    journal = journal_for(sandbox, tmp_path / "journal")

    async def job() -> tuple[FieldInUse, e.Conflict]:
        async with AdminClient(sandbox.url, sandbox.admin_token) as c:
            region = await c.get_context_field("region")
            usage = (await c.context_strategies("region")).strategies
            with pytest.raises(FieldInUse) as refused:
                plan_delete(region, usage, journal)
            # had it been sent anyway (a strategy added between the check and the request),
            # the server's 409 is the client's Conflict, journaled as failed
            unsafe = plan_delete(region, [], journal)
            with pytest.raises(e.Conflict) as conflict:
                await change(c, unsafe)
            assert (await c.get_context_field("region")).name == "region"
            return refused.value, conflict.value

    refused, conflict = asyncio.run(job())
    assert str(refused).startswith("The context field “region” cannot be deleted: ")
    assert "strategies in" in str(refused) and str(refused).endswith("Nothing was sent.")
    assert len(refused.usage) > 0
    (entry,) = journal.entries()
    assert (entry.state, entry.status) == (State.FAILED, 409)
    assert conflict.status == 409


def test_an_edit_that_changes_nothing_is_no_plan(sandbox: SandboxProcess, tmp_path: Path) -> None:
    async def job() -> None:
        async with AdminClient(sandbox.url, sandbox.admin_token) as c:
            region = await c.get_context_field("region")
            with pytest.raises(ValueError, match="nothing to save"):
                plan_edit(region, body_of(region), journal_for(sandbox, tmp_path))

    asyncio.run(job())


def test_changes_in_doubt_are_checked_against_the_server(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    """Entries left `sent` (the process died before the answer): the History's check reads the
    field and says what became of each, sending nothing again."""
    from app.actions.check import can_check, check_entry

    journal = journal_for(sandbox, tmp_path)

    async def job() -> list[tuple[State, str]]:
        async with AdminClient(sandbox.url, sandbox.admin_token) as c:
            region = await c.get_context_field("region")
            body = body_of(region).model_dump(mode="json", exclude_none=True)
            changed = {**body, "description": "never saved"}
            for action, name, request in (
                ("context_fields.create", "region", None),  # it exists: done
                ("context_fields.create", "ghost", None),  # it does not: failed
                ("context_fields.delete", "tenantId", None),  # still there: failed
                ("context_fields.delete", "ghost", None),  # gone: done
                ("context_fields.edit", "region", body),  # as the body: done
                ("context_fields.edit", "region", changed),  # otherwise: still in doubt
            ):
                sent = {"method": "X", "path": "/", "body": request}
                await journal.begin(action, [name], before={"field": name}, request=sent)
            # the field as it was before the edit: the server still holding it is "not applied"
            await journal.begin("context_fields.edit", ["region"],
                                before={"field": "region", "body": body},
                                request={"method": "X", "path": "/", "body": changed})  # fmt: skip
            entries = journal.entries()
            assert all(x.in_doubt and can_check(x) for x in entries)
            return [(v.state, v.message) for v in [await check_entry(c, x) for x in entries]]

    verdicts = asyncio.run(job())
    states = [state for state, _ in verdicts]
    assert states == [
        State.DONE,
        State.FAILED,
        State.FAILED,
        State.DONE,
        State.DONE,
        State.IN_DOUBT,
        State.FAILED,
    ]
    assert verdicts[2][1] == "the context field “tenantId” is still there"
    assert verdicts[5][1].startswith("the context field “region” is neither as the change")
    assert "changed by someone else" in verdicts[5][1]
    assert verdicts[6][1] == (
        "not applied: the context field “region” is as it was before the change")  # fmt: skip
