"""The clean-up report (`app.api.cleanup`, `flagdesk cleanup report`) on a real Unleash (each of
`VERSIONS`) and on its twin (`target`): an API token made through the API and never used is
found as never seen, one made with an expiry in the past as expired (every release takes a past
`expiresAt`: `unleash-admin-console-behaviour.md` §1), each with the delete action and named by
its secret's last four characters; the connection's own token is never a finding; with an
admin API token the personal access tokens are not available and, on open-source Unleash (and
the twin playing it), neither are groups, service accounts nor custom roles, each said in one
line; with the admin user's personal
access token, a personal access token made and never used is found as never used.

The peer is shared and keeps its state, so these tests look for their own tokens by name
(`unique`) among whatever else the server holds, and delete them afterwards."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING
from urllib.parse import quote

import pytest

from app.api.capabilities import (
    NEEDS_ENTERPRISE,
    NEEDS_ENTERPRISE_ROLES,
    NEEDS_ENTERPRISE_SERVICE_ACCOUNTS,
    NEEDS_USER_TOKEN,
)
from app.api.cleanup import Report, cleanup_report
from app.api.client import AdminClient
from app.api.models import ApiTokenList, PersonalAccessTokens
from tests.compat.conftest import per_version

if TYPE_CHECKING:
    from tests.compat.conftest import Peer

TOKENS = "/api/admin/api-tokens"
PATS = "/api/admin/user/tokens"


@pytest.fixture
def made(
    unique: Callable[[str], str],
) -> Iterator[Callable[[Peer], str]]:
    """`made(target)`: a token name of this test's own; every API token of such a name is
    deleted from that server when the test ends (by the `secret` its list holds)."""
    names: list[tuple[Peer, str]] = []

    def make(target: Peer) -> str:
        name = unique("cleanup")
        names.append((target, name))
        return name

    yield make
    for target, name in names:
        with target.raw() as http:
            for token in ApiTokenList.model_validate(http.get(f"{TOKENS}/{name}").json()).tokens:
                http.delete(f"{TOKENS}/{quote(token.secret or '', safe='')}")


def report_of(target: Peer, token: str) -> Report:
    async def job() -> Report:
        async with AdminClient(target.url, token) as client:
            return await cleanup_report(client)

    return asyncio.run(job())


def test_a_never_seen_and_an_expired_token_are_found(
    target: Peer, made: Callable[[Peer], str]
) -> None:
    never, expired = made(target), made(target)
    past = (datetime.now(UTC) - timedelta(days=2)).isoformat(timespec="milliseconds")
    with target.raw() as http:
        for name, extra in ((never, {}), (expired, {"expiresAt": past.replace("+00:00", "Z")})):
            answer = http.post(TOKENS, json={"tokenName": name, "type": "client",
                                             "environment": "development", **extra})  # fmt: skip
            assert answer.status_code == 201, answer.text
    with target.raw() as http:
        secrets = {t.name: t.secret or "" for t in ApiTokenList.model_validate(
            http.get(TOKENS).json()).tokens if t.name in (never, expired)}  # fmt: skip
    found = report_of(target, target.admin_token)
    mine = {f.name: f for f in found.findings if f.name in (never, expired)}
    assert mine[never].kind == "api_token_never_seen"
    assert mine[never].why.startswith("never seen, created 20")
    assert mine[expired].kind == "api_token_expired"
    assert mine[expired].why.startswith("expired 20")
    for name, finding in mine.items():
        assert finding.action == "api_tokens.delete"
        assert finding.id == "…" + secrets[name][-4:]
        assert secrets[name] not in str(finding.to_json())
    # the connection's own token is in use, never a finding (by its secret: the peer's client
    # token is named "admin" too, ends as it does, and is never seen on a new peer)
    assert not any(getattr(f.subject, "secret", None) == target.admin_token
                   for f in found.findings)  # fmt: skip
    # every release is open-source Unleash (no groups), and an admin API token has no user
    assert [(u.what, u.reason) for u in found.unavailable] == per_version(target, {
        "5.12 6.10 7.6 8.2": [("your personal access tokens", NEEDS_USER_TOKEN),
                              ("groups", NEEDS_ENTERPRISE),
                              ("service accounts", NEEDS_ENTERPRISE_SERVICE_ACCOUNTS),
                              ("custom roles", NEEDS_ENTERPRISE_ROLES)],
    })  # fmt: skip
    assert "user_inactive" in found.counts() and "api_token_expired" in found.counts()


def test_a_personal_access_token_finds_its_own_unused_token(
    target: Peer, unique: Callable[[str], str]
) -> None:
    pat = target.require_pat()
    description = unique("cleanup-pat")
    later = (datetime.now(UTC) + timedelta(days=30)).isoformat(timespec="milliseconds")
    headers = {"Authorization": pat}
    with target.raw() as http:
        answer = http.post(PATS, headers=headers,
                           json={"description": description,
                                 "expiresAt": later.replace("+00:00", "Z")})  # fmt: skip
        assert answer.status_code == 201, answer.text
        pat_id = answer.json()["id"]
    try:
        found = report_of(target, pat)
        (mine,) = [f for f in found.findings if f.name == description]
        assert (mine.kind, mine.id, mine.why) == ("pat_never_used", str(pat_id), "never used")
        assert mine.action == "personal_tokens.delete"
        assert [u.what for u in found.unavailable] == per_version(target, {
            "5.12 6.10 7.6 8.2": ["groups", "service accounts", "custom roles"],
        })  # fmt: skip
    finally:
        with target.raw() as http:
            http.delete(f"{PATS}/{pat_id}", headers=headers)
            left = PersonalAccessTokens.model_validate(http.get(PATS, headers=headers).json())
        assert description not in [p.description for p in left.pats]
