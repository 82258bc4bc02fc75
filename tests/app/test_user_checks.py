"""Users changes left in doubt, checked against a sandbox over HTTP (`app.actions.check`): a
deletion whose user is gone is done and one whose user is still there failed; a creation whose
user is there is done and one whose user is not failed; an edit cannot be checked and stays in
doubt; the verdicts are appended to the journal."""

from __future__ import annotations

import asyncio
from pathlib import Path

from app.actions.check import can_check, check_entry, settle
from app.actions.journal import Actor, Journal, State
from app.api.client import AdminClient
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
    assert "cannot check 'Edit user'" in verdicts[4][1]
    entries = Journal(Actor("test", sandbox.url, "admin"), tmp_path).entries()
    assert [e.state for e in entries] == [
        State.DONE, State.FAILED, State.DONE, State.FAILED, State.IN_DOUBT]  # fmt: skip
