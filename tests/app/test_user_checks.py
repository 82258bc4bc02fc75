"""Users changes left in doubt, checked against a sandbox over HTTP (`app.actions.check`): a
deletion whose user is gone is done and one whose user is still there failed; a creation whose
user is there is done and one whose user is not failed; an edit whose entry holds the body sent
is done when the user is as the body leaves them, failed (not applied) when as before, and stays
in doubt when changed by someone else since; an edit journaled without its body cannot be
checked; the verdicts are appended to the journal."""

from __future__ import annotations

import asyncio
from pathlib import Path

from app.actions.check import Verdict, can_check, check_entry, settle
from app.actions.journal import Actor, Journal, State
from app.actions.users import plan_edit
from app.api.client import AdminClient
from app.api.models import UpdateUser
from app.registry import CREATE_USER, DELETE_USER, EDIT_USER
from sandbox.process import SandboxProcess


def test_users_changes_in_doubt_are_checked(sandbox: SandboxProcess, tmp_path: Path) -> None:
    async def scenario() -> list[tuple[State, str]]:
        journal = Journal(Actor("test", sandbox.url, "admin"), tmp_path)
        # as a process killed between the `sent` line and the answer leaves them
        await journal.begin(DELETE_USER.key, [5])
        await journal.begin(DELETE_USER.key, [6])
        await journal.begin(CREATE_USER.key, ["amara.okafor@example.com"])
        await journal.begin(CREATE_USER.key, ["nobody@example.com"])
        await journal.begin(EDIT_USER.key, [7], before={"user": {"name": "x"}})
        async with AdminClient(sandbox.url, sandbox.admin_token) as client:
            assert await client.delete_user(5) == 200  # the first deletion did happen
            verdicts = []
            assert [can_check(e) for e in journal.entries()] == [True] * 4 + [False]
            for entry in journal.entries():
                verdict = await check_entry(client, entry)
                await settle(journal, entry, verdict)
                verdicts.append((verdict.state, verdict.message))
        # settled entries are no longer in doubt; the edit still is, and cannot be checked
        assert [can_check(e) for e in journal.entries()] == [False] * 5
        return verdicts

    verdicts = asyncio.run(scenario())
    assert [state for state, _ in verdicts] == [
        State.DONE, State.FAILED, State.DONE, State.FAILED, State.IN_DOUBT]  # fmt: skip
    assert "does not hold the body this edit sent" in verdicts[4][1]
    entries = Journal(Actor("test", sandbox.url, "admin"), tmp_path).entries()
    assert [e.state for e in entries] == [
        State.DONE, State.FAILED, State.DONE, State.FAILED, State.IN_DOUBT]  # fmt: skip


def test_user_edits_in_doubt_are_checked_by_the_body_sent(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    """Three edits in doubt, journaled as `edit_user` journals them (the plan's body and
    previous values): one the server took, one it never got, one someone changed after."""

    async def scenario() -> list[Verdict]:
        journal = Journal(Actor("test", sandbox.url, "admin"), tmp_path)
        async with AdminClient(sandbox.url, sandbox.admin_token) as client:
            roles = {r.id: r.name for r in (await client.list_users()).rootRoles}
            plans = []
            for user_id, name in ((7, "Took It"), (8, "Never Got It"), (9, "Sent Name")):
                user = await client.get_user(user_id)
                plan = plan_edit(user, UpdateUser(name=name, rootRole=3), roles, journal)
                before = plan.previous.model_dump(mode="json", exclude_unset=True)
                await journal.begin(EDIT_USER.key, [user_id], before={"user": before},
                                    request=plan.request.describe_with_body())  # fmt: skip
                plans.append(plan)
            assert all(can_check(e) for e in journal.entries())
            await client.update_user(7, plans[0].changes)  # the first did happen
            await client.update_user(9, UpdateUser(name="Someone Else"))  # changed since
            verdicts = []
            for entry in journal.entries():
                verdict = await check_entry(client, entry)
                await settle(journal, entry, verdict)
                verdicts.append(verdict)
        return verdicts

    done, failed, doubt = asyncio.run(scenario())
    assert (done.state, done.message) == (State.DONE, "user 7 is as the change left it")
    assert (failed.state, failed.message) == (
        State.FAILED, "not applied: user 8 is as it was before the change")  # fmt: skip
    assert doubt.state is State.IN_DOUBT and "changed by someone else" in doubt.message
    entries = Journal(Actor("test", sandbox.url, "admin"), tmp_path).entries()
    assert [e.state for e in entries] == [State.DONE, State.FAILED, State.IN_DOUBT]
    assert entries[1].message.endswith("not applied: user 8 is as it was before the change")
