"""`app.actions.personal_tokens` against a sandbox over HTTP: a token created through the runner
(its secret read once from the answer; the journal's entry holds the description and the
secret's last four characters, never the secret), listed, undone from its journal entry alone
(the token deleted, journaled as an undo), several deleted in one plan of one request each; a
deletion's entry says why it has no undo; the checks of entries in doubt; the plans' refusals
(an empty description, a past expiry, words naming no token or two); and an admin API token
refused by the capability check before anything is planned or sent."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from app.actions.check import check_entry
from app.actions.journal import Actor, Journal, State
from app.actions.personal_tokens import (
    Created,
    NotFound,
    find_tokens,
    plan_create,
    plan_delete,
    secret_end,
)
from app.actions.runner import carry_out, require
from app.actions.undo import plan_undo, why_not
from app.api import errors as e
from app.api.client import AdminClient
from app.api.models import PersonalAccessToken
from app.registry import CREATE_PAT, DELETE_PAT
from sandbox.process import SandboxProcess
from tests.conftest import personal_token_of

LATER = datetime(2031, 1, 31, tzinfo=UTC)


def journal_for(sb: SandboxProcess, folder: Path) -> Journal:
    return Journal(Actor("test", sb.url, "personal", "Admin"), folder)


def test_create_list_undo_and_delete_through_the_runner(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    journal = journal_for(sandbox, tmp_path)
    token = personal_token_of(sandbox, "admin")

    async def job() -> tuple[str, list[str]]:
        async with AdminClient(sandbox.url, token) as c:
            plan = plan_create("ci deploy", LATER, journal)
            assert plan.question == "Create the personal access token “ci deploy”?"
            assert plan.lines()[0] == (
                f"A personal access token “ci deploy” of Admin will be created on {sandbox.url} "
                "(connection “test”), expiring 2031-01-31T00:00:00.000Z.")  # fmt: skip
            assert json.loads(plan.request.body) == {
                "description": "ci deploy", "expiresAt": "2031-01-31T00:00:00.000Z"}  # fmt: skip
            created = await Created.of(c, await carry_out(c, plan))
            secret = created.token.secret
            assert created.status == 201 and secret.startswith("user:")
            listed = {t.description: t for t in (await c.personal_tokens()).pats}
            assert listed["ci deploy"].id == created.token.id

            (entry,) = journal.entries()
            assert (entry.action, entry.ids, entry.state) == (CREATE_PAT.key, ["ci deploy"],
                                                              State.DONE)  # fmt: skip
            assert entry.before == {"description": "ci deploy",
                                    "expiresAt": "2031-01-31T00:00:00.000Z"}  # fmt: skip
            assert entry.after == {"id": created.token.id, "secretEnd": secret_end(secret)}
            assert secret not in journal.path.read_text() and secret[5:] not in (
                journal.path.read_text())  # fmt: skip
            assert why_not(entry) == ""

            # undone from the entry alone: the token it made is deleted, journaled as an undo
            undo = await plan_undo(c, journal, entry)
            assert undo.action is DELETE_PAT
            assert undo.question == (f"Undo the creation of the personal access token "
                                     f"“ci deploy” (id {created.token.id})?")  # fmt: skip
            await carry_out(c, undo)
            assert "ci deploy" not in {t.description for t in (await c.personal_tokens()).pats}
            undone = journal.entries()[-1]
            assert undone.before["undoes"] == entry.id
            assert why_not(undone) == "it is itself an undo: make the change again instead"

            # several at once: one request each, one entry each
            made = []
            for name in ("one", "two"):
                made.append((await Created.of(c, await carry_out(
                    c, plan_create(name, LATER, journal)))).token)  # fmt: skip
            both = find_tokens(["one", str(made[1].id)], (await c.personal_tokens()).pats,
                               sandbox.url)  # fmt: skip
            deletion = plan_delete(both, journal)
            assert deletion.question == "Delete 2 personal access tokens?"
            assert [r.path for r in deletion.requests] == [
                f"/api/admin/user/tokens/{t.id}" for t in made]  # fmt: skip
            done = await carry_out(c, deletion)
            assert done.statuses == (200, 200)
            left = [t.description for t in (await c.personal_tokens()).pats]
            return secret, left

    secret, left = asyncio.run(job())
    assert not {"one", "two", "ci deploy"} & set(left)
    last = journal.entries()[-1]
    assert last.action == DELETE_PAT.key and why_not(last).startswith(
        "a deleted personal access token cannot be brought back")  # fmt: skip
    assert secret not in journal.path.read_text()


def test_checks_of_entries_in_doubt(sandbox: SandboxProcess, tmp_path: Path) -> None:
    journal = journal_for(sandbox, tmp_path)
    token = personal_token_of(sandbox, "admin")

    async def job() -> list[tuple[State, str]]:
        async with AdminClient(sandbox.url, token) as c:
            await carry_out(c, plan_create("checked", LATER, journal))
            (made,) = journal.entries()
            verdicts = [await check_entry(c, replace(made, state=State.IN_DOUBT))]
            missing = replace(made, state=State.IN_DOUBT, ids=["never made"])
            verdicts.append(await check_entry(c, missing))
            pat = next(t for t in (await c.personal_tokens()).pats if t.description == "checked")
            await carry_out(c, plan_delete([pat], journal))
            gone = journal.entries()[-1]
            verdicts.append(await check_entry(c, replace(gone, state=State.IN_DOUBT)))
            return [(v.state, v.message) for v in verdicts]

    (made, missing, gone) = asyncio.run(job())
    assert made[0] is State.DONE and "its secret was never shown" in made[1]
    assert missing[0] is State.FAILED
    assert gone[0] is State.DONE


def test_the_plans_refuse_before_anything_is_sent(tmp_path: Path) -> None:
    journal = Journal(Actor("test", "http://x", "personal", "Admin"), tmp_path)
    with pytest.raises(ValueError, match="needs a description"):
        plan_create("  ", LATER, journal)
    with pytest.raises(ValueError, match="is not in the future"):
        plan_create("old", datetime.now(UTC) - timedelta(days=1), journal)
    with pytest.raises(ValueError, match="time zone"):
        plan_create("naive", datetime(2031, 1, 1), journal)
    tokens = [PersonalAccessToken(id=7, description="12"),
              PersonalAccessToken(id=12, description="b")]  # fmt: skip
    with pytest.raises(NotFound, match="“12” is the description of token 7 and the id of"):
        find_tokens(["12"], tokens, "http://x")
    with pytest.raises(NotFound, match="“nope”, “99”"):
        find_tokens(["b", "nope", "99"], tokens, "http://x")
    assert [t.id for t in find_tokens(["b", "12 ", "b"], tokens[1:], "http://x")] == [12]
    assert not journal.path.exists()


def test_an_admin_api_token_is_refused_before_anything_is_planned(
    sandbox: SandboxProcess,
) -> None:
    async def job() -> list[str]:
        async with AdminClient(sandbox.url, sandbox.admin_token) as c:
            caps = await c.capabilities()
            reasons = []
            for action in (CREATE_PAT, DELETE_PAT):
                with pytest.raises(e.Unsupported) as refused:
                    require(caps, action)
                reasons.append(str(refused.value))
            with pytest.raises(e.Unsupported):
                await c.personal_tokens()
            return reasons

    for reason in asyncio.run(job()):
        assert "needs a personal access token" in reason and "admin API token has no user" in (
            reason)  # fmt: skip
