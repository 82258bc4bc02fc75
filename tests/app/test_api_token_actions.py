"""`app.actions.api_tokens` against a sandbox over HTTP: a creation journaled with its name, type,
projects, environment and the secret's last four (noted on its `done` line), never the secret;
a deletion of several, one request each, with a snapshot of the tokens (no secrets) first, each
request shown and journaled as `…<last 4>`; a deletion by the whole secret (as on Unleash) with
logging at its most verbose leaves no secret in the log, and an error's text names no secret;
undo of a creation deletes what it made, a deletion has no undo (`why_not` says why); entries
in doubt are checked against the list; a `backend` token is refused first on Unleash before 7.0
(`type_refusal`)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

import pytest

from app import logs
from app.actions.api_tokens import (
    plan_create,
    plan_delete,
    plan_undo_create,
    type_refusal,
)
from app.actions.check import check_entry
from app.actions.journal import Actor, Journal, State
from app.actions.runner import carry_out
from app.actions.undo import CannotUndo, plan_undo, why_not
from app.api import errors as e
from app.api.capabilities import Capabilities
from app.api.client import AdminClient, delete_api_token_request
from app.api.models import ApiToken, CreateApiToken
from sandbox.process import SandboxProcess

T = TypeVar("T")


def run(sb: SandboxProcess, job: Callable[[AdminClient], Awaitable[T]]) -> T:
    async def go() -> T:
        async with AdminClient(sb.url, sb.admin_token) as client:
            return await job(client)

    return asyncio.run(go())


def journal_in(folder: Path, sb: SandboxProcess) -> Journal:
    return Journal(Actor("Test sandbox", sb.url, "admin"), folder)


async def create(client: AdminClient, journal: Journal, name: str, **fields: object) -> ApiToken:
    body = CreateApiToken.model_validate({"tokenName": name, "type": "client", **fields})
    done = await carry_out(client, plan_create(body, journal))
    return await client.read_answer(done.answer, ApiToken)


def every_byte(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in folder.rglob("*") if p.is_file())


def test_create_then_delete_journals_no_secret(sandbox: SandboxProcess, tmp_path: Path) -> None:
    journal = journal_in(tmp_path, sandbox)

    async def job(client: AdminClient) -> tuple[list[ApiToken], Path | None]:
        made = [await create(client, journal, name, projects=["default"]) for name in "ab"]
        listed = [t for t in (await client.api_tokens()).tokens if t.name in ("a", "b")]
        plan = plan_delete(listed, journal)
        assert plan.confirm_text == "2"
        assert [r.describe()["path"] for r in plan.requests] == [
            f"/api/admin/api-tokens/…{t.secret[-4:]}" for t in made if t.secret
        ]
        assert "never seen" in plan.lines()[0]
        done = await carry_out(client, plan)
        assert done.statuses == (200, 200)
        assert not {"a", "b"} & {t.name for t in (await client.api_tokens()).tokens}
        return made, plan.snapshot

    made, snapshot = run(sandbox, job)
    entries = journal.entries()
    assert [e.action for e in entries] == ["api_tokens.create"] * 2 + ["api_tokens.delete"] * 2
    first = entries[0]
    assert first.before == {"name": "a", "type": "client", "projects": ["default"],
                            "environment": None, "expiresAt": None}  # fmt: skip
    assert first.after == {"secret": f"…{made[0].secret[-4:] if made[0].secret else ''}"}
    assert entries[2].before["secret"] == "…" + (made[0].secret or "")[-4:]
    assert snapshot is not None
    held = json.loads(snapshot.read_text())["tokens"]
    assert [t["name"] for t in held] == ["a", "b"]
    assert {t["secret"] for t in held} == {"…" + (m.secret or "")[-4:] for m in made}
    written = every_byte(tmp_path)
    for token in made:
        assert token.secret and token.secret.encode() not in written
        assert token.secret[-8:].encode() not in written


def test_undo_deletes_what_a_creation_made_and_a_deletion_has_none(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    journal = journal_in(tmp_path, sandbox)

    async def job(client: AdminClient) -> None:
        await create(client, journal, "kept")
        made = await create(client, journal, "same", environment="production")
        await create(client, journal, "same")  # another of the same name: the tail tells
        creation = journal.entries()[1]
        assert why_not(creation) == ""
        undo = await plan_undo(client, journal, creation)
        await carry_out(client, undo)
        left = [t for t in (await client.api_tokens()).tokens if t.name == "same"]
        assert len(left) == 1 and left[0].environment == "development"
        assert made.secret and not any(t.secret and t.secret[-4:] == made.secret[-4:] for t in left)
        deletion = journal.entries()[-1]
        assert deletion.action == "api_tokens.delete"
        assert "itself an undo" in why_not(deletion)
        gone = await carry_out(client, plan_delete(left, journal))
        assert gone.status == 200
        reason = why_not(journal.entries()[-1])
        assert "cannot be brought back" in reason and "secret is gone" in reason
        with pytest.raises(CannotUndo):
            await plan_undo(client, journal, journal.entries()[-1])
        # undone twice: the token is gone
        with pytest.raises(ValueError, match="gone from the server"):
            plan_undo_create(creation, (await client.api_tokens()).tokens, journal)

    run(sandbox, job)


def test_a_whole_secret_in_the_path_stays_out_of_the_log_and_errors(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    """On Unleash the list names a token by its whole secret: DELETE's path holds it. With the
    log at its most verbose (httpx logs every URL), it is nowhere in the log."""
    log_file = logs.setup_logging(verbose=True, directory=tmp_path / "log")
    try:

        async def job(client: AdminClient) -> str:
            token = await create(client, journal_in(tmp_path / "j", sandbox), "whole")
            assert token.secret
            request = delete_api_token_request(token.secret)
            assert token.secret not in repr(request) and token.secret not in str(request.describe())
            await client.send_write(request)
            # an error naming the path names it masked
            bad = replace(request, path="/api/admin/no-such-route/" + request.path.split("/")[-1])
            with pytest.raises(e.ApiError) as caught:
                await client.send_write(bad)
            assert token.secret not in str(caught.value) and token.secret[-8:] not in str(
                caught.value
            )
            return token.secret

        secret = run(sandbox, job)
        logging.getLogger("flagdesk.test").info("done")
    finally:
        logs.reset_logging()
    text = log_file.read_text()
    assert "api-tokens" in text  # the requests were logged
    assert secret not in text and secret[-8:] not in text
    assert "whole" not in {t.name for t in run(sandbox, lambda c: _tokens(c))}


async def _tokens(client: AdminClient) -> list[ApiToken]:
    return (await client.api_tokens()).tokens


def test_entries_in_doubt_are_checked_against_the_list(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    journal = journal_in(tmp_path, sandbox)

    async def job(client: AdminClient) -> None:
        made = await create(client, journal, "doubt")
        listed = [t for t in (await client.api_tokens()).tokens if t.name == "doubt"]
        plan = plan_delete(listed, journal)
        creation = replace(journal.entries()[0], state=State.IN_DOUBT)
        assert (await check_entry(client, creation)).state is State.DONE
        step = plan.steps()[0]
        pending = await journal.begin("api_tokens.delete", step.ids, before=dict(step.before or {}))
        del pending  # the process "died" before the request: in doubt, the token still there
        entry = journal.entries()[-1]
        assert entry.in_doubt
        assert (await check_entry(client, entry)).state is State.FAILED
        await carry_out(client, plan)
        assert (await check_entry(client, entry)).state is State.DONE
        assert made.secret

    run(sandbox, job)


@pytest.mark.parametrize(
    ("kind", "server", "version", "refused"),
    [("backend", "unleash", "6.10.1", True), ("backend", "unleash", "7.6.5", False),
     ("BACKEND", "unleash", "5.12.8", True), ("client", "unleash", "5.12.8", False),
     ("backend", "sandbox", "0.1.0", False)],
)  # fmt: skip
def test_type_refusal(kind: str, server: str, version: str, refused: bool) -> None:
    caps = Capabilities(base_url="http://x", server_kind=server, server_version=version,  # type: ignore[arg-type]
                        edition="", token_kind="admin", user_name=None, is_admin=True,
                        archive_endpoint=True)  # fmt: skip
    assert bool(type_refusal(caps, kind)) is refused


def test_an_expiry_change_is_undone_and_checked(sandbox: SandboxProcess, tmp_path: Path) -> None:
    from datetime import UTC, datetime

    from app.actions.api_tokens import plan_expire

    journal = journal_in(tmp_path, sandbox)
    first, second = datetime(2031, 1, 2, tzinfo=UTC), datetime(2032, 3, 4, tzinfo=UTC)

    async def job(client: AdminClient) -> None:
        made = await create(client, journal, "ttl", expiresAt="2031-01-02T00:00:00Z")

        async def now() -> ApiToken:
            (token,) = [t for t in (await client.api_tokens()).tokens if t.name == "ttl"]
            return token

        plan = plan_expire(await now(), second, journal)
        assert plan.request.describe_with_body() == {
            "method": "PUT", "path": f"/api/admin/api-tokens/…{(made.secret or '')[-4:]}",
            "body": {"expiresAt": "2032-03-04T00:00:00Z"},
        }  # fmt: skip
        await carry_out(client, plan)
        assert (await now()).expiresAt == second
        entry = journal.entries()[-1]
        assert entry.before["expiresAt"] == "2031-01-02T00:00:00.000Z"
        assert (await check_entry(client, replace(entry, state=State.IN_DOUBT))).state is State.DONE
        await carry_out(client, await plan_undo(client, journal, entry))
        assert (await now()).expiresAt == first
        assert (await check_entry(client, replace(entry, state=State.IN_DOUBT))).state is (
            State.FAILED
        )
        # a token that had no expiry: the API cannot take one away again
        await create(client, journal, "forever")
        (forever,) = [t for t in (await client.api_tokens()).tokens if t.name == "forever"]
        await carry_out(client, plan_expire(forever, second, journal))
        with pytest.raises(CannotUndo, match="no expiry before"):
            await plan_undo(client, journal, journal.entries()[-1])

    run(sandbox, job)
    assert b"ttl" in every_byte(tmp_path)
