"""`app.actions.service_accounts` against a sandbox over HTTP: each plan through the runner
(journal, snapshot, capability check), the journal's entries (a token's: its description and
the secret's last four characters, never the secret), each undo from its entry alone (a
creation deleted, an edit put back, a deletion recreated with a new id and the confirmation
saying its tokens cannot come back, a token's creation deleted), why a token's deletion has no
undo, the checks of entries in doubt, the plans' refusals, and a played open-source release
refused by the capability check before anything is planned."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from app.actions.check import can_check, check_entry
from app.actions.journal import Actor, Journal, State
from app.actions.runner import carry_out, require
from app.actions.service_accounts import (
    CreatedToken,
    NotFound,
    find_account,
    find_tokens,
    plan_create,
    plan_create_token,
    plan_delete,
    plan_delete_tokens,
    plan_edit,
)
from app.actions.undo import CannotUndo, plan_undo, why_not
from app.api import errors as e
from app.api.client import AdminClient
from app.api.models import PersonalAccessToken, ServiceAccount
from app.registry import (
    CREATE_SERVICE_ACCOUNT,
    CREATE_SERVICE_ACCOUNT_TOKEN,
    DELETE_SERVICE_ACCOUNT,
    DELETE_SERVICE_ACCOUNT_TOKEN,
    EDIT_SERVICE_ACCOUNT,
    SERVICE_ACCOUNTS,
)
from sandbox.process import SandboxProcess

LATER = datetime(2031, 1, 31, tzinfo=UTC)
ROLES = {1: "Admin", 2: "Editor", 3: "Viewer"}


def journal_for(sb: SandboxProcess, folder: Path) -> Journal:
    return Journal(Actor("test", sb.url, "admin", None), folder)


async def _account(c: AdminClient, username: str) -> ServiceAccount | None:
    listed = (await c.service_accounts()).serviceAccounts
    return next((a for a in listed if a.username == username), None)


def test_accounts_through_the_runner_and_their_undo(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    journal = journal_for(sandbox, tmp_path)

    async def job() -> None:
        async with AdminClient(sandbox.url, sandbox.admin_token) as c:
            plan = plan_create("Deployer", "deployer", 2, journal, ROLES)
            assert plan.question == "Create the service account “deployer”?"
            assert "root role Editor (role 2)" in plan.lines()[0]
            done = await carry_out(c, plan)
            made = await _account(c, "deployer")
            assert made is not None and made.rootRole == 2
            (entry,) = journal.entries()
            assert (entry.action, entry.ids, entry.state) == (
                CREATE_SERVICE_ACCOUNT.key, ["deployer"], State.DONE)  # fmt: skip
            assert entry.after == {"id": made.id} and done.status == 201

            edit = plan_edit(made, "Deploy bot", 1, journal, ROLES)
            assert edit.changes() == ["name “Deployer” → “Deploy bot”",
                                      "root role Editor (role 2) → Admin (role 1)"]  # fmt: skip
            await carry_out(c, edit)
            edited = journal.entries()[-1]
            assert edited.request == {"method": "PUT",
                                      "path": f"/api/admin/service-account/{made.id}",
                                      "body": {"name": "Deploy bot", "rootRole": 1}}  # fmt: skip
            # the edit undone: the name and role before
            undo = await plan_undo(c, journal, edited)
            assert undo.action is EDIT_SERVICE_ACCOUNT
            await carry_out(c, undo)
            back = await _account(c, "deployer")
            assert back is not None and (back.name, back.rootRole) == ("Deployer", 2)

            # a token, then the account deleted (its snapshot first), then recreated by undo
            await carry_out(c, plan_create_token(back, "deploy", LATER, journal))
            back = await _account(c, "deployer")
            assert back is not None and len(back.tokens) == 1
            deletion = plan_delete(back, journal, ROLES)
            token_id = back.tokens[0].id
            assert (
                f"Its token “deploy” (id {token_id}) goes with it. Whatever uses it is refused"
            ) in " ".join(deletion.lines())  # named, one token's grammar
            await carry_out(c, deletion)
            assert await _account(c, "deployer") is None
            held = json.loads(deletion.snapshot.read_text())
            assert held["username"] == "deployer" and held["tokens"][0]["description"] == "deploy"
            assert "secret" not in deletion.snapshot.read_text()
            deleted = journal.entries()[-1]
            assert deleted.before["snapshot"] == deletion.snapshot.name
            recreate = await plan_undo(c, journal, deleted)
            assert recreate.action is CREATE_SERVICE_ACCOUNT
            said = " ".join(recreate.lines())
            assert "new id" in said and "Its 1 token cannot come back" in said
            assert recreate.question == "Undo the deletion of the service account “deployer”?"
            await carry_out(c, recreate)
            again = await _account(c, "deployer")
            assert again is not None and again.id != back.id and again.tokens == []
            assert journal.entries()[-1].before["undoes"] == deleted.id
            with pytest.raises(CannotUndo, match="exists again"):
                await plan_undo(c, journal, deleted)

            # the first creation undone: by its id, which is gone now
            with pytest.raises(CannotUndo, match="is gone from the server"):
                await plan_undo(c, journal, entry)
            recreated = journal.entries()[-1]
            assert why_not(recreated) == "it is itself an undo: make the change again instead"

    asyncio.run(job())


def test_tokens_through_the_runner_and_their_undo(sandbox: SandboxProcess, tmp_path: Path) -> None:
    journal = journal_for(sandbox, tmp_path)

    async def job() -> str:
        async with AdminClient(sandbox.url, sandbox.admin_token) as c:
            bot = await _account(c, "ci-deploy-bot")
            assert bot is not None
            plan = plan_create_token(bot, "deploy", LATER, journal)
            assert plan.request.path == f"/api/admin/service-account/{bot.id}/token"
            created = await CreatedToken.of(c, await carry_out(c, plan))
            secret = created.token.secret
            (entry,) = journal.entries()
            assert (entry.action, entry.ids) == (CREATE_SERVICE_ACCOUNT_TOKEN.key, ["deploy"])
            assert entry.before == {"account": bot.id, "username": "ci-deploy-bot",
                                    "description": "deploy",
                                    "expiresAt": "2031-01-31T00:00:00.000Z"}  # fmt: skip
            assert entry.after == {"id": created.token.id, "secretEnd": secret[-4:]}
            assert secret not in journal.path.read_text()

            undo = await plan_undo(c, journal, entry)
            assert undo.action is DELETE_SERVICE_ACCOUNT_TOKEN
            await carry_out(c, undo)
            assert (await c.service_account_tokens(bot.id)).pats == []
            with pytest.raises(CannotUndo, match="deleted already"):
                await plan_undo(c, journal, entry)

            for name in ("one", "two"):
                bot = await _account(c, "ci-deploy-bot")
                assert bot is not None
                await carry_out(c, plan_create_token(bot, name, LATER, journal))
            bot = await _account(c, "ci-deploy-bot")
            assert bot is not None
            both = find_tokens(["one", str(bot.tokens[1].id)], bot)
            deletion = plan_delete_tokens(bot, both, journal)
            assert deletion.question == "Delete 2 tokens of the service account “ci-deploy-bot” " \
                f"(id {bot.id})?"  # fmt: skip
            assert (await carry_out(c, deletion)).statuses == (200, 200)
            assert (await c.service_account_tokens(bot.id)).pats == []
            return secret

    secret = asyncio.run(job())
    last = journal.entries()[-1]
    assert last.action == DELETE_SERVICE_ACCOUNT_TOKEN.key
    assert why_not(last).startswith("a deleted service account token cannot be brought back")
    assert secret not in journal.path.read_text()


def test_checks_of_entries_in_doubt(sandbox: SandboxProcess, tmp_path: Path) -> None:
    journal = journal_for(sandbox, tmp_path)

    async def job() -> tuple[list[State], list[tuple[State, str]]]:
        async with AdminClient(sandbox.url, sandbox.admin_token) as c:

            async def verdicts() -> list[tuple[State, str]]:
                entries = [replace(x, state=State.IN_DOUBT) for x in journal.entries()]
                assert all(can_check(x) for x in entries)
                return [((v := await check_entry(c, x)).state, v.message) for x in entries]

            await carry_out(c, plan_create("Checked", "checked", 3, journal))
            made = await _account(c, "checked")
            assert made is not None
            await carry_out(c, plan_edit(made, "Renamed", None, journal))
            await carry_out(c, plan_create_token(made, "tok", LATER, journal))
            there = [state for state, _ in await verdicts()]
            made = await _account(c, "checked")
            assert made is not None
            await carry_out(c, plan_delete_tokens(made, made.tokens, journal))
            await carry_out(c, plan_delete(made, journal))
            after = await verdicts()
            never = await check_entry(c, replace(journal.entries()[0], state=State.IN_DOUBT,
                                                 ids=["never-made"]))  # fmt: skip
            return there, [*after, (never.state, never.message)]

    there, (created, edited, token, token_gone, gone, never) = asyncio.run(job())
    assert there == [State.DONE, State.DONE, State.DONE]
    # the account is gone now: its creation failed (as far as the server shows), the edit
    # cannot be told, the token is not there
    assert created[0] is State.FAILED
    assert edited[0] is State.IN_DOUBT and "no longer on the server" in edited[1]
    assert token[0] is State.FAILED and "the account is gone" in token[1]
    assert token_gone[0] is State.DONE and gone[0] is State.DONE
    assert never[0] is State.FAILED


def test_an_edit_in_doubt_is_checked(sandbox: SandboxProcess, tmp_path: Path) -> None:
    journal = journal_for(sandbox, tmp_path)

    async def job() -> list[State]:
        async with AdminClient(sandbox.url, sandbox.admin_token) as c:
            bot = await _account(c, "ci-deploy-bot")
            assert bot is not None
            await carry_out(c, plan_edit(bot, None, 2, journal))
            (entry,) = journal.entries()
            doubt = replace(entry, state=State.IN_DOUBT)
            states = [(await check_entry(c, doubt)).state]
            was = await _account(c, "ci-deploy-bot")
            assert was is not None
            await carry_out(c, plan_edit(was, None, 3, journal))  # as before the change
            states.append((await check_entry(c, doubt)).state)
            return states

    assert asyncio.run(job()) == [State.DONE, State.FAILED]


def test_the_plans_refuse_before_anything_is_sent(tmp_path: Path) -> None:
    journal = Journal(Actor("test", "http://x", "admin", None), tmp_path)
    with pytest.raises(ValueError, match="needs a username"):
        plan_create("Name", " ", 3, journal)
    with pytest.raises(ValueError, match="needs a name"):
        plan_create("", "u", 3, journal)
    with pytest.raises(ValueError, match="control"):
        plan_create("Bad\x1b[2J", "u", 3, journal)
    account = ServiceAccount(id=12, username="bot", name="Bot", rootRole=3,
                             tokens=[PersonalAccessToken(id=7, description="12"),
                                     PersonalAccessToken(id=12, description="b")])  # fmt: skip
    with pytest.raises(ValueError, match="new name or a new root role"):
        plan_edit(account, None, None, journal)
    with pytest.raises(ValueError, match="described “b” already"):
        plan_create_token(account, "b", LATER, journal)
    with pytest.raises(ValueError, match="is not in the future"):
        plan_create_token(account, "old", datetime.now(UTC) - timedelta(days=1), journal)
    with pytest.raises(NotFound, match="“12” is the description of token 7 and the id of"):
        find_tokens(["12"], account)
    with pytest.raises(NotFound, match="“nope”"):
        find_tokens(["b", "nope"], account)
    other = ServiceAccount(id=13, username="12")
    with pytest.raises(NotFound, match=r"username of “12” \(id 13\) and the id of"):
        find_account("12", [account, other], "http://x")
    with pytest.raises(NotFound, match="no service account on http://x"):
        find_account("nobody", [account], "http://x")
    assert find_account("bot", [account, other], "http://x").id == 12
    assert not journal.path.exists()


def test_open_source_is_refused_before_anything_is_planned(tmp_path: Path) -> None:
    with SandboxProcess(tmp_path / "oss.sqlite3", "--demo", "--as-version", "7.6") as sb:

        async def job() -> list[str]:
            async with AdminClient(sb.url, sb.admin_token) as c:
                caps = await c.capabilities()
                assert not caps.operation(SERVICE_ACCOUNTS).available
                reasons = []
                for action in SERVICE_ACCOUNTS.actions:
                    with pytest.raises(e.Unsupported) as refused:
                        require(caps, action)
                    reasons.append(str(refused.value))
                with pytest.raises(e.Unsupported):
                    await c.service_accounts()
                return reasons

        reasons = asyncio.run(job())
    assert len(reasons) == 5
    for reason in reasons:
        assert "Service accounts need Unleash Enterprise" in reason
    assert DELETE_SERVICE_ACCOUNT in SERVICE_ACCOUNTS.actions
