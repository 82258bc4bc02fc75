"""The context-field actions of issue 15 on a real Unleash (each of `VERSIONS`), read back from
it: create, edit and delete through the path the window and `flagdesk context` take
(`app.actions.context_fields`: snapshot, journal, request), undo of an edit and of a deletion,
and what Unleash answers that the sandbox copies (tests/sandbox/test_context_fields.py): 409 for
a name taken, and from 7.0 for a field in use (before, the server deletes it: flagdesk refuses
first on every version), PUT replacing the whole field, 404 for an unknown field, the legal-value
routes."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from app.actions.check import check_entry
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
from app.api.models import Constraint, CreateContextField, CreateFeatureStrategy, LegalValueBody
from tests.compat.conftest import per_version
from tests.compat.test_operations import admin, new_feature

if TYPE_CHECKING:
    from tests.compat.conftest import Cleanup, Peer


async def change(client: AdminClient, plan: FieldPlan) -> FieldChanged:
    """A context field's plan carried out by the runner, as the window and the command do."""
    return FieldChanged.of(await carry_out(client, plan))


@pytest.fixture
def field_name(peer: Peer, unique: Callable[[str], str]) -> Iterator[str]:
    """A context field name of this test's own, deleted afterwards if it is still there."""
    name = unique("field").replace("-", "")
    yield name
    with peer.raw() as http:
        http.delete(f"/api/admin/context/{name}")


def test_create_edit_delete_and_undo_through_the_actions(
    peer: Peer, field_name: str, tmp_path: Path
) -> None:
    async def job() -> Journal:
        async with admin(peer) as client:
            caps = await client.capabilities()
            journal = Journal(Actor("compat", caps.base_url, caps.token_kind), tmp_path)
            draft = CreateContextField(name=field_name, description="Plan", stickiness=True,
                                       legalValues=[LegalValueBody(value="gold")])  # fmt: skip
            assert (await change(client, plan_create(draft, journal))).status == 201
            before = await client.get_context_field(field_name)
            values = [LegalValueBody(value="gold", description="Top"), LegalValueBody(value="x")]
            after = body_of(before).model_copy(update={"legalValues": values})
            edit = plan_edit(before, after, journal)
            edited = await change(client, edit)
            read = await client.get_context_field(field_name)
            pairs = [(v.value, v.description) for v in read.legalValues]
            assert pairs == [("gold", "Top"), ("x", None)]
            assert read.stickiness is True and read.description == "Plan"
            assert edit.snapshot is not None
            undo = plan_undo(edited, await read_snapshot(edit.snapshot), read, journal)
            await change(client, undo)
            back = await client.get_context_field(field_name)
            assert [(v.value, v.description) for v in back.legalValues] == [("gold", None)]

            usage = (await client.context_strategies(field_name)).strategies
            deletion = plan_delete(back, usage, journal)
            deleted = await change(client, deletion)
            with pytest.raises(e.NotFound):
                await client.get_context_field(field_name)
            assert deletion.snapshot is not None
            recreate = plan_undo(deleted, await read_snapshot(deletion.snapshot), None, journal)
            assert (await change(client, recreate)).status == 201
            again = await client.get_context_field(field_name)
            assert (again.description, again.stickiness) == ("Plan", True)
            assert [v.value for v in again.legalValues] == ["gold"]
            return journal

    journal = asyncio.run(job())
    assert [(x.action, x.state) for x in journal.entries()] == [
        ("context_fields.create", State.DONE), ("context_fields.edit", State.DONE),
        ("context_fields.edit", State.DONE), ("context_fields.delete", State.DONE),
        ("context_fields.create", State.DONE)]  # fmt: skip


def test_a_field_edit_in_doubt_is_checked_against_unleash(
    peer: Peer, field_name: str, tmp_path: Path
) -> None:
    """An edit's entry holds the body sent and the field before it: read back from Unleash
    8.2, the field as edited is done, as before (undone) is not applied, and changed otherwise
    stays in doubt."""

    async def job() -> list[State]:
        async with admin(peer) as client:
            caps = await client.capabilities()
            journal = Journal(Actor("compat", caps.base_url, caps.token_kind), tmp_path)
            # a sort order of 5: the PUT of Unleash 6.10 and later sets it to 0 whatever is
            # sent (5.12 keeps it), so the check does not count it (else the edit that took
            # would look changed by someone else)
            draft = CreateContextField(name=field_name, description="Plan", sortOrder=5,
                                       legalValues=[LegalValueBody(value="gold")])  # fmt: skip
            await change(client, plan_create(draft, journal))
            before = await client.get_context_field(field_name)
            assert before.sortOrder == 5
            after = body_of(before).model_copy(update={"description": "Plan B"})
            edited = await change(client, plan_edit(before, after, journal))
            entry = journal.entries()[-1]
            sort_order = per_version(peer, {"5.12": 5, "6.10 7.6 8.2": 0})
            assert (await client.get_context_field(field_name)).sortOrder == sort_order
            states = [(await check_entry(client, entry)).state]
            assert edited.plan.snapshot is not None
            read = await client.get_context_field(field_name)
            undo = plan_undo(edited, await read_snapshot(edited.plan.snapshot), read, journal)
            await change(client, undo)
            states.append((await check_entry(client, entry)).state)
            changed = body_of(before).model_copy(update={"description": "someone else"})
            await client.update_context_field(field_name, changed)
            states.append((await check_entry(client, entry)).state)
            return states

    assert asyncio.run(job()) == [State.DONE, State.FAILED, State.IN_DOUBT]


def test_what_unleash_answers(
    peer: Peer, field_name: str, unique: Callable[[str], str], cleanup: Cleanup, tmp_path: Path
) -> None:
    with peer.raw() as http:
        created = http.post("/api/admin/context", json={"name": field_name, "description": "d",
                            "stickiness": True, "sortOrder": 4})  # fmt: skip
        assert created.status_code == 201, created.text
        assert created.headers["location"].endswith(f"context/{field_name}")
        taken = http.post("/api/admin/context", json={"name": field_name})
        assert taken.status_code == 409 and taken.json()["name"] == "NameExistsError"
        assert http.post("/api/admin/context", json={"name": "has space"}).status_code == 400
        # PUT replaces the field: what it leaves out is emptied, but for the description (kept)
        put = http.put(f"/api/admin/context/{field_name}", json={"legalValues": [{"value": "a"}]})
        assert put.status_code == 200, put.text
        read = http.get(f"/api/admin/context/{field_name}").json()
        assert read.get("description") == "d" and read["stickiness"] is False
        # 5.12 keeps the sort order (a PUT never changes it), later versions set it to 0
        # whatever is sent (test_versions.py asks the sandbox playing each the same)
        assert read.get("sortOrder") == per_version(peer, {"5.12": 4, "6.10 7.6 8.2": 0})
        assert [v["value"] for v in read["legalValues"]] == ["a"]
        # the legal-value routes: not on 5.12 (404; flagdesk does not use them, PUT does it all)
        legal = f"/api/admin/context/{field_name}/legal-values"
        status = per_version(peer, {"5.12": 404, "6.10 7.6 8.2": 200})
        assert http.post(legal, json={"value": "b", "description": "B"}).status_code == status
        assert http.delete(f"{legal}/a").status_code == status
        values = http.get(f"/api/admin/context/{field_name}").json()["legalValues"]
        assert values == per_version(
            peer, {"5.12": [{"value": "a"}], "6.10 7.6 8.2": [{"value": "b", "description": "B"}]}
        )
        unknown = f"/api/admin/context/{field_name}-none"
        assert http.delete(unknown).status_code == 404
        assert http.put(unknown, json={}).status_code == 404

    live, archived = unique("ctxuse"), unique("ctxarchived")
    legal = per_version(peer, {"5.12": "a", "6.10 7.6 8.2": "b"})  # the field's legal value
    refuses_in_use = per_version(peer, {"5.12 6.10": False, "7.6 8.2": True})

    async def use() -> None:
        async with admin(peer) as client:
            for feature in (live, archived):
                await new_feature(client, cleanup, feature)
                await client.add_strategy("default", feature, "development", CreateFeatureStrategy(
                    name="flexibleRollout",
                    constraints=[Constraint(contextName=field_name, operator="IN", values=[legal])],
                    parameters={"rollout": "100", "stickiness": "default", "groupId": feature},
                ))  # fmt: skip
            await client.archive_feature("default", archived)
            field = await client.get_context_field(field_name)
            usage = (await client.context_strategies(field_name)).strategies
            # from 7.0 the usage leaves archived flags out
            assert sorted(str(s.featureName) for s in usage) == per_version(peer, {
                "5.12 6.10": sorted([live, archived]), "7.6 8.2": [live]})  # fmt: skip
            journal = Journal(Actor("compat", client.base_url, "admin"), tmp_path)
            with pytest.raises(FieldInUse):  # flagdesk refuses on every version
                plan_delete(field, usage, journal)
            if refuses_in_use:
                with pytest.raises(e.Conflict):  # had it been sent: 409
                    await client.delete_context_field(field_name)
            else:  # had it been sent: the field in use is gone
                assert await client.delete_context_field(field_name) == 200

    asyncio.run(use())
    with peer.raw() as http:
        field_status = http.get(f"/api/admin/context/{field_name}").status_code
        assert field_status == (200 if refuses_in_use else 404)
        # once the flag is archived its strategies no longer count (as the usage list)
        assert http.delete(f"/api/admin/projects/default/features/{live}").status_code == 202
        assert http.delete(f"/api/admin/context/{field_name}").status_code == (
            200 if refuses_in_use else 404
        )
