"""API tokens on a real Unleash (each of `VERSIONS`) and on its twin, the sandbox playing it
(`target`): listing, creating through the runner (`app.actions.api_tokens`), which types each
release takes, deleting by what the list names a token with, undoing a creation, a project's
list, and the journal holding no secret.

The one difference on purpose (`sandbox.store.api_tokens`): **real Unleash lists every secret in
clear, the twin a masked handle** (`<project>:<env>.…<last 8>`), which its PUT and DELETE take
in place of the secret. flagdesk names a token in DELETE by whatever `secret` the list holds, so
the same plans run on both, as these tests show. Every token a test makes has a name of its own
(`unique`) and is deleted afterwards (`made`)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

import pytest

from app.actions.api_tokens import plan_create, plan_delete, type_refusal
from app.actions.journal import Actor, Journal
from app.actions.runner import carry_out
from app.actions.undo import plan_undo
from app.api import errors as e
from app.api.client import AdminClient
from app.api.models import ApiToken, ApiTokenList, CreateApiToken
from tests.compat.conftest import per_version

if TYPE_CHECKING:
    from tests.compat.conftest import Peer

TOKENS = "/api/admin/api-tokens"


def is_real(target: Peer, peer: Peer) -> bool:
    return target.url == peer.url


@pytest.fixture
def made(
    peer: Peer, request: pytest.FixtureRequest, unique: Callable[[str], str]
) -> Iterator[Callable[[Peer], str]]:
    """`made(target)`: a token name of this test's own; every token of such a name is deleted
    from that server when the test ends (by the `secret` its list holds)."""
    names: list[tuple[Peer, str]] = []

    def make(target: Peer) -> str:
        name = unique("token")
        names.append((target, name))
        return name

    yield make
    for target, name in names:
        with target.raw() as http:
            for token in ApiTokenList.model_validate(http.get(f"{TOKENS}/{name}").json()).tokens:
                http.delete(f"{TOKENS}/{quote(token.secret or '', safe='')}")


def journal_in(tmp_path: Path, target: Peer) -> Journal:
    return Journal(Actor("compat", target.url.rstrip("/"), "admin"), tmp_path)


def test_the_list_names_every_token_in_clear_on_unleash_masked_on_the_twin(
    target: Peer, peer: Peer
) -> None:
    async def job() -> list[ApiToken]:
        async with AdminClient(target.url, target.admin_token) as client:
            return (await client.api_tokens()).tokens

    tokens = asyncio.run(job())
    secrets = [t.secret or "" for t in tokens]
    admin_tail = target.admin_token[-8:]
    if is_real(target, peer):
        assert target.admin_token in secrets  # in clear, the admin token included (all)
    else:
        assert f"*:*.…{admin_tail}" in secrets  # the twin's handle
        assert target.admin_token not in secrets
        assert all(re.fullmatch(r"[^.]+:[^.]+\.…\S{8,9}", s) for s in secrets), secrets
    admins = [t for t in tokens if t.secret in (target.admin_token, f"*:*.…{admin_tail}")]
    assert len(admins) == 1 and admins[0].type == "admin"
    # every release names a token `tokenName`; 5.x and 6.x also `username`
    assert all(t.tokenName for t in tokens)


def test_a_personal_access_token_of_an_admin_lists_them(target: Peer) -> None:
    """Measured on 8.2 (`unleash-admin-console-behaviour.md` §1); the Admin root role holds
    every permission on the others, so the same is expected there."""
    with target.raw() as http:
        http.headers["Authorization"] = target.require_pat()
        answer = http.get(TOKENS)
    expected = per_version(target, {"5.12 6.10 7.6 8.2": 200})
    assert answer.status_code == expected, answer.text


@pytest.mark.parametrize("kind", ["client", "frontend", "backend"])
def test_which_types_each_release_creates(
    target: Peer, made: Callable[[Peer], str], kind: str, tmp_path: Path
) -> None:
    name = made(target)
    takes = kind != "backend" or per_version(target, {"5.12 6.10": False, "7.6 8.2": True})

    async def job() -> ApiToken | e.ApiError:
        async with AdminClient(target.url, target.admin_token) as client:
            caps = await client.capabilities()
            if caps.server_kind == "unleash":  # flagdesk says it first, before sending
                assert bool(type_refusal(caps, kind)) is not takes
            body = CreateApiToken(tokenName=name, type=kind, environment="development")
            try:
                done = await carry_out(client, plan_create(body, journal_in(tmp_path, target)))
            except e.ApiError as exc:
                return exc
            return await client.read_answer(done.answer, ApiToken)

    made_or_error = asyncio.run(job())
    if not takes:
        assert isinstance(made_or_error, e.ApiError) and made_or_error.status == 400
        assert "type" in str(made_or_error)
        return
    assert isinstance(made_or_error, ApiToken), made_or_error
    token = made_or_error
    assert token.type == kind and token.name == name
    assert token.projects == ["*"] and token.environment == "development"
    assert token.secret and re.fullmatch(r"\*:development\.[0-9a-f]{56}", token.secret)


def test_delete_by_the_listed_secret_and_undo_a_creation(
    target: Peer, made: Callable[[Peer], str], tmp_path: Path
) -> None:
    first, second = made(target), made(target)

    async def job() -> tuple[set[str], list[str]]:
        async with AdminClient(target.url, target.admin_token) as client:
            journal = journal_in(tmp_path, target)
            secrets = []
            for name in (first, second):
                body = CreateApiToken(tokenName=name, type="client", projects=["default"],
                                      environment="development")  # fmt: skip
                done = await carry_out(client, plan_create(body, journal))
                secrets.append((await client.read_answer(done.answer, ApiToken)).secret or "")
            listed = [t for t in (await client.api_tokens()).tokens if t.name == first]
            await carry_out(client, plan_delete(listed, journal))
            creation = next(e for e in journal.entries() if e.ids == [second])
            await carry_out(client, await plan_undo(client, journal, creation))
            names = {t.name for t in (await client.api_tokens()).tokens}
            return names, secrets

    names, secrets = asyncio.run(job())
    assert first not in names and second not in names
    written = "".join(p.read_text() for p in tmp_path.rglob("*") if p.is_file())
    for secret in secrets:
        assert secret[-4:] in written  # the last four, noted
        assert secret not in written and secret[-8:] not in written


def test_an_unknown_token_is_deleted_with_200_by_every_release(target: Peer) -> None:
    with target.raw() as http:
        answer = http.delete(f"{TOKENS}/{quote('default:development.nope', safe='')}")
        assert answer.status_code == 200 and answer.content == b""
        answer = http.get(f"{TOKENS}/no-such-token-name")
        assert answer.status_code == 200 and answer.json() == {"tokens": []}


def test_a_projects_list(target: Peer, made: Callable[[Peer], str], tmp_path: Path) -> None:
    name = made(target)

    async def job() -> list[ApiToken]:
        async with AdminClient(target.url, target.admin_token) as client:
            body = CreateApiToken(tokenName=name, type="client", environment="development")
            await carry_out(client, plan_create(body, journal_in(tmp_path, target), "default"))
            return (await client.api_tokens("default")).tokens

    tokens = asyncio.run(job())
    mine = [t for t in tokens if t.name == name]
    assert len(mine) == 1 and mine[0].projects == ["default"]
    # the tokens for every project too, the admin token included: on every release (measured
    # on 5.12 and 6.10 as on 7.6 and 8.2)
    assert any("*" in t.projects for t in tokens)
    with target.raw() as http:
        assert http.get("/api/admin/projects/no-such-project/api-tokens").status_code == 404


def test_an_expiry_changed_by_the_listed_secret_and_undone(
    target: Peer, made: Callable[[Peer], str], tmp_path: Path
) -> None:
    """`PUT /api/admin/api-tokens/:secret {expiresAt}` answers 200 on every release; the list
    then says the new expiry, and the undo puts the previous one back."""
    from datetime import UTC, datetime

    from app.actions.api_tokens import plan_expire

    name = made(target)
    later = datetime(2040, 6, 7, 8, 9, 10, tzinfo=UTC)

    async def job() -> tuple[datetime | None, datetime | None]:
        async with AdminClient(target.url, target.admin_token) as client:
            journal = journal_in(tmp_path, target)
            body = CreateApiToken(tokenName=name, type="client", environment="development",
                                  expiresAt=datetime(2039, 1, 1, tzinfo=UTC))  # fmt: skip
            await carry_out(client, plan_create(body, journal))
            (token,) = (await client.api_tokens_named(name)).tokens
            done = await carry_out(client, plan_expire(token, later, journal))
            assert done.status == 200
            (changed,) = (await client.api_tokens_named(name)).tokens
            await carry_out(client, await plan_undo(client, journal, journal.entries()[-1]))
            (back,) = (await client.api_tokens_named(name)).tokens
            return changed.expiresAt, back.expiresAt

    changed, back = asyncio.run(job())
    assert changed == later
    assert back == datetime(2039, 1, 1, tzinfo=UTC)
