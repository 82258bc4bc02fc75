"""Personal access tokens (`/api/admin/user/tokens`) on a real Unleash (each of `VERSIONS`) and
on the sandbox playing it (`target`): what flagdesk relies on and the sandbox copies
(../shared/reference/unleash-admin-console-behaviour.md section 2): the caller's own tokens
listed without secrets; a creation's 201 with the secret (`user:` and 56 hex digits), no
`Location`, usable at once; a description taken (409), an expiry in the past or not a date-time
(400); a deletion's empty 200, after which the token is refused (401); an unknown id (404
before 8.0, 200 on 8.x); an admin API token refused (403 ForbiddenError "PATs require an
authenticated user.", with the error's `id` before 7.0). Then the actions of
`app.actions.personal_tokens` through the runner on the real server: created, listed, undone
from the journal, several deleted, the journal holding no secret; and an admin API token
refused by the capabilities before anything is sent. Every token made here is deleted after."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

from app.actions.journal import Actor, Journal
from app.actions.personal_tokens import Created, find_tokens, plan_create, plan_delete
from app.actions.runner import carry_out, require
from app.actions.undo import plan_undo
from app.api import errors as e
from app.api.client import AdminClient
from app.api.models import CreatedPersonalAccessToken, PersonalAccessTokens
from app.registry import CREATE_PAT, DELETE_PAT
from tests.compat.conftest import per_version

if TYPE_CHECKING:
    from tests.compat.conftest import Peer

PATS = "/api/admin/user/tokens"
FUTURE = "2031-01-31T00:00:00.000Z"


@pytest.fixture
def made(target: Peer) -> Iterator[list[int]]:
    """The ids of the tokens a test makes with the target's personal access token, deleted
    after (the target's own token is never one of them)."""
    ids: list[int] = []
    yield ids
    with httpx.Client(base_url=target.url, headers={"Authorization": target.require_pat()}) as h:
        for pat_id in ids:
            h.delete(f"{PATS}/{pat_id}")


def _mine(target: Peer) -> httpx.Client:
    return httpx.Client(base_url=target.url, timeout=30,
                         headers={"Authorization": target.require_pat()})  # fmt: skip


def test_the_http_contract(target: Peer, made: list[int], unique: Callable[[str], str]) -> None:
    name = unique("pat")
    with _mine(target) as http:
        listed = http.get(PATS)
        assert listed.status_code == 200 and "secret" not in listed.text
        before = {t.id for t in PersonalAccessTokens.model_validate(listed.json()).pats}

        answer = http.post(PATS, json={"description": name, "expiresAt": FUTURE})
        assert answer.status_code == 201, answer.text
        assert "location" not in answer.headers
        token = CreatedPersonalAccessToken.model_validate(answer.json())
        made.append(token.id)
        assert token.secret.startswith("user:") and len(token.secret) == 5 + 56
        assert token.seenAt is None and token.description == name and token.id not in before
        after = PersonalAccessTokens.model_validate(http.get(PATS).json()).pats
        assert {t.id for t in after} == before | {token.id}
        with httpx.Client(base_url=target.url, headers={"Authorization": token.secret}) as new:
            assert new.get(PATS).status_code == 200

        taken = http.post(PATS, json={"description": name, "expiresAt": FUTURE})
        assert (taken.status_code, taken.json()["name"]) == (409, "NameExistsError")
        assert taken.json()["message"] == "PAT description already exists."
        past = http.post(PATS, json={"description": name + "-old",
                                     "expiresAt": "2020-01-01T00:00:00.000Z"})  # fmt: skip
        assert past.status_code == 400
        assert past.json()["message"].endswith("The expiry date should be in future.")
        for when in ("notadate", "2030-01-01"):
            bad = http.post(PATS, json={"description": name + "-bad", "expiresAt": when})
            assert bad.status_code == 400 and "expiresAt" in bad.text

        gone = http.delete(f"{PATS}/{token.id}")
        assert (gone.status_code, gone.content) == (200, b"")
        with httpx.Client(base_url=target.url, headers={"Authorization": token.secret}) as new:
            assert new.get(PATS).status_code == 401
        unknown = http.delete(f"{PATS}/987654")
        assert unknown.status_code == per_version(target, {"5.12 6.10 7.6": 404, "8.2": 200})

    with target.raw() as http:  # the admin API token: no user behind it
        for answer in (http.get(PATS), http.post(PATS, json={"description": name,
                                                             "expiresAt": FUTURE})):  # fmt: skip
            body = answer.json()
            assert (answer.status_code, body["name"]) == (403, "ForbiddenError"), body
            assert body["message"] == "PATs require an authenticated user."
            assert ("id" in body) == per_version(target, {"5.12 6.10": True, "7.6 8.2": False})


def test_the_actions_through_the_runner(
    peer: Peer, unique: Callable[[str], str], tmp_path: Path
) -> None:
    journal = Journal(Actor("compat", peer.url, "personal", "admin"), tmp_path)
    names = [unique("pat") for _ in range(3)]
    expires = datetime(2031, 1, 31, tzinfo=UTC)

    async def job() -> list[str]:
        made: list[str] = []
        async with AdminClient(peer.url, peer.require_pat()) as c:
            try:
                for name in names:
                    plan = plan_create(name, expires, journal)
                    created = await Created.of(c, await carry_out(c, plan))
                    made.append(created.token.secret)
                pats = (await c.personal_tokens()).pats
                assert set(names) <= {t.description for t in pats}
                # the first creation undone from its journal entry: the token deleted
                first = next(e for e in journal.entries() if e.ids == [names[0]])
                await carry_out(c, await plan_undo(c, journal, first))
                # the other two at once, one by description, one by id
                pats = (await c.personal_tokens()).pats
                second = next(t for t in pats if t.description == names[2])
                both = find_tokens([names[1], str(second.id)], pats, peer.url)
                assert (await carry_out(c, plan_delete(both, journal))).statuses == (200, 200)
                left = {t.description for t in (await c.personal_tokens()).pats}
                assert not set(names) & left
            finally:
                for t in (await c.personal_tokens()).pats:
                    if t.description in names:
                        await c.delete_personal_token(t.id)
        return made

    secrets = asyncio.run(job())
    text = journal.path.read_text(encoding="utf-8")
    assert len(secrets) == 3 and not [s for s in secrets if s in text or s[5:] in text]
    assert all(s[-4:] in text for s in secrets)


def test_an_admin_api_token_is_refused_before_anything_is_sent(peer: Peer) -> None:
    async def job() -> None:
        async with AdminClient(peer.url, peer.admin_token) as c:
            caps = await c.capabilities()
            assert caps.token_kind == "admin"
            for action in (CREATE_PAT, DELETE_PAT):
                with pytest.raises(e.Unsupported, match="needs a personal access token"):
                    require(caps, action)
            with pytest.raises(e.Unsupported):
                await c.personal_tokens()

    asyncio.run(job())
