"""The clean-up report (`app.api.cleanup.cleanup_report`) against sandboxes over HTTP: on what
`flagdesk serve --scale` makes it finds exactly the planted cases (`sandbox.demo`'s counts, and
the demo's inactive users), `days` moves the "not seen" set as planted, a personal access token
of admin's adds admin's planted tokens where an admin API token says the part is unavailable,
an open-source release played without groups, service accounts or custom roles says each is
unavailable, service accounts and custom roles say why each was found, a token without the
Admin root role gets `Unsupported`, a reader added to `READERS` reports its kind, and the
connection's own token is never a finding."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from app.api import cleanup
from app.api import errors as e
from app.api.capabilities import (
    NEEDS_ENTERPRISE,
    NEEDS_ENTERPRISE_ROLES,
    NEEDS_ENTERPRISE_SERVICE_ACCOUNTS,
    NEEDS_USER_TOKEN,
)
from app.api.cleanup import READERS, Kind, Reader, Report, cleanup_report, finding
from app.api.client import AdminClient
from app.api.models import ApiToken, ApiTokenList
from sandbox import demo
from sandbox.process import SandboxProcess
from tests.conftest import personal_token_of

#: the demo data's inactive users (`sandbox.demo._people`), beside the planted 100
DEMO_INACTIVE = 12


@pytest.fixture(scope="module")
def scaled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxProcess]:
    """What `flagdesk serve --scale` makes of a new database: the demo and the access set."""
    with SandboxProcess(tmp_path_factory.mktemp("cleanup") / "s.sqlite3", "--scale") as sb:
        yield sb


def report(sb: SandboxProcess, token: str | None = None, **options: object) -> Report:
    async def job() -> Report:
        async with AdminClient(sb.url, token or sb.admin_token) as client:
            return await cleanup_report(client, **options)  # type: ignore[arg-type]

    return asyncio.run(job())


def test_it_finds_exactly_the_planted_cases(scaled: SandboxProcess) -> None:
    found = report(scaled)
    assert found.counts() == {
        "api_token_expired": demo.TOKENS_EXPIRED,
        # and the client token `flagdesk serve` keeps, which no client used yet
        "api_token_never_seen": demo.TOKENS_NEVER_SEEN + 1,
        "api_token_not_seen": demo.TOKENS_NOT_SEEN,
        "group_empty": demo.EMPTY_GROUPS,
        "user_inactive": demo.INACTIVE_PLANTED_USERS + DEMO_INACTIVE,
        # the planted 4 with no token, 1 whose tokens were never used, 3 last used 45 to 180
        # days ago, and the demo's `ci-deploy-bot` (no token)
        "service_account_unused": demo.service_accounts_unused_for(30),
        "role_unused": demo.CUSTOM_ROLES_UNUSED,
    }
    assert demo.service_accounts_unused_for(30) == 9 and demo.CUSTOM_ROLES_UNUSED == 4
    assert found.days == 30 and len(found.findings) == 3_146
    (pats,) = found.unavailable
    assert (pats.what, pats.reason) == ("your personal access tokens", NEEDS_USER_TOKEN)
    assert pats.kinds == ("pat_expired", "pat_never_used", "pat_not_used")
    never = found.of_kind("api_token_never_seen")
    assert [f.name for f in never if not f.name.startswith("scale-token-")] == ["client"]
    # each kind's action, and what names a token: the last four characters, never more
    actions = {f.kind: (f.action, f.tool) for f in found.findings}
    assert actions == {
        "api_token_expired": ("api_tokens.delete", "api_tokens"),
        "api_token_never_seen": ("api_tokens.delete", "api_tokens"),
        "api_token_not_seen": ("api_tokens.delete", "api_tokens"),
        "group_empty": ("groups.delete", "groups"),
        "user_inactive": ("inactive_users.delete", "inactive_users"),
        "service_account_unused": ("service_accounts.delete", "service_accounts"),
        "role_unused": ("roles.delete", "roles"),
    }
    tokens = [f for f in found.findings if f.tool == "api_tokens"]
    assert all(len(f.id) == 5 and f.id.startswith("…") for f in tokens)
    assert all(isinstance(f.subject, ApiToken) and f.subject.secret for f in tokens)
    assert all("secret" not in f.to_json() for f in tokens)
    expired = found.of_kind("api_token_expired")[0]
    assert expired.why.startswith("expired 20") and expired.since is not None
    stale = found.of_kind("api_token_not_seen")[0]
    assert "days ago (20" in stale.why and stale.why.startswith("last seen ")
    groups = found.of_kind("group_empty")
    assert {g.name for g in groups} == {f"Scale group {g:03d}" for g in range(10, 201, 10)}
    assert all(g.why.startswith("no members, created ") for g in groups)


def test_service_accounts_and_custom_roles_say_why(scaled: SandboxProcess) -> None:
    found = report(scaled)
    accounts = {f.detail: f.why for f in found.of_kind("service_account_unused")}
    assert set(accounts) == {"ci-deploy-bot", *(f"scale-sa-{n:02d}" for n in range(5, 13))}
    assert accounts["ci-deploy-bot"].startswith("no tokens, created 20")
    assert accounts["scale-sa-05"].startswith("the newest of its 2 tokens last used 45 days ago")
    assert accounts["scale-sa-07"].startswith("the newest of its 2 tokens last used 180 days")
    assert accounts["scale-sa-08"] == "none of its 2 tokens was ever used"
    assert all(accounts[f"scale-sa-{n:02d}"].startswith("no tokens") for n in range(9, 13))
    roles = {f.name: (f.detail, f.why) for f in found.of_kind("role_unused")}
    assert set(roles) == {"Scale root role 3", "Scale root role 4", "Scale project role 3",
                          "Scale project role 4"}  # fmt: skip
    assert roles["Scale root role 3"][0].startswith("custom root role")
    assert roles["Scale root role 3"][1] == (
        "no user, service account or group has it as root role"
    )
    assert roles["Scale project role 4"] == (
        "custom project role: Planted by --scale: held nowhere",
        "held in no project",
    )
    # the ids are those their commands and plans take
    assert all(f.id.isdigit() for f in found.findings if f.tool in ("service_accounts", "roles"))


def test_days_moves_the_not_seen_set_as_planted(scaled: SandboxProcess) -> None:
    for days in (0, 7, 60, 1_000):
        counts = report(scaled, days=days).counts()
        assert counts["api_token_not_seen"] == demo.tokens_not_seen_for(days), days
        # the others do not depend on it
        assert counts["api_token_expired"] == 1_000 and counts["api_token_never_seen"] == 1_001
        assert counts["user_inactive"] == 112 and counts["group_empty"] == 20
        # the service accounts' newest use moves with it too; the roles do not
        assert counts["service_account_unused"] == demo.service_accounts_unused_for(days), days
        assert counts["role_unused"] == 4
    assert demo.tokens_not_seen_for(7) == 6_334 and demo.tokens_not_seen_for(0) == 8_000
    assert [demo.service_accounts_unused_for(d) for d in (0, 7, 60, 1_000)] == [13, 11, 8, 6]
    with pytest.raises(ValueError, match="days: -1 is not 0 or more"):
        report(scaled, days=-1)


def test_a_personal_access_token_reads_its_users_tokens(scaled: SandboxProcess) -> None:
    found = report(scaled, personal_token_of(scaled, "admin"))
    assert found.unavailable == []
    counts = found.counts()
    assert (counts["pat_expired"], counts["pat_never_used"], counts["pat_not_used"]) == (
        demo.ADMIN_PATS_EXPIRED, demo.ADMIN_PATS_NEVER_USED, demo.ADMIN_PATS_NOT_USED,
    )  # fmt: skip
    # the other users' planted tokens are theirs: nobody else sees them
    assert all(f.name.startswith("scale-pat-admin-") for f in found.findings
               if f.tool == "personal_tokens")  # fmt: skip
    assert all(f.action == "personal_tokens.delete" for f in found.of_kind("pat_expired"))
    (not_used,) = found.of_kind("pat_not_used")
    assert not_used.why.startswith("last used 45 days ago")
    # the API tokens read the same with either token
    assert counts["api_token_expired"] == 1_000 and counts["api_token_not_seen"] == 1_000


def test_an_open_source_release_has_no_groups(tmp_path: Path) -> None:
    """Nor service accounts, nor custom roles: one line each, as the capability report says."""
    with SandboxProcess(tmp_path / "oss.sqlite3", "--as-version", "8.2") as sb:
        found = report(sb)
    assert [(u.what, u.reason) for u in found.unavailable] == [
        ("your personal access tokens", NEEDS_USER_TOKEN),
        ("groups", NEEDS_ENTERPRISE),
        ("service accounts", NEEDS_ENTERPRISE_SERVICE_ACCOUNTS),
        ("custom roles", NEEDS_ENTERPRISE_ROLES),
    ]
    assert "group_empty" not in found.counts()
    assert "service_account_unused" not in found.counts()
    assert "role_unused" not in found.counts()
    assert found.counts()["user_inactive"] == DEMO_INACTIVE


def test_a_token_without_the_admin_role_reads_nothing(scaled: SandboxProcess) -> None:
    viewer = personal_token_of(scaled, "zoltan.horvath")  # a Viewer of the demo
    with pytest.raises(e.Unsupported, match="Admin root role"):
        report(scaled, viewer)


def test_a_reader_added_reports_its_kind(
    scaled: SandboxProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The extension point for service accounts and custom roles: a `Kind` in `KINDS` and a
    `Reader` in `READERS`; with no action, its findings say to open the tool."""
    kind = Kind("custom_role_unused", "Custom roles nobody holds", None, "users")
    monkeypatch.setattr(cleanup, "KINDS", (*cleanup.KINDS, kind))
    monkeypatch.setattr(cleanup, "KINDS_BY_KEY", {**cleanup.KINDS_BY_KEY, kind.key: kind})

    async def read(ctx: cleanup.Context) -> list[cleanup.Finding]:
        assert ctx.days == 30 and ctx.caps.is_admin
        return [finding("custom_role_unused", "7", "Auditor", "custom root role", "held by nobody")]

    extra = Reader("custom roles", (kind.key,), "users", read)
    found = report(scaled, readers=[*READERS, extra])
    assert found.counts()["custom_role_unused"] == 1
    (role,) = found.of_kind("custom_role_unused")
    assert role.to_json() == {"kind": "custom_role_unused", "id": "7", "name": "Auditor",
                              "detail": "custom root role", "why": "held by nobody",
                              "since": None, "action": None, "tool": "users"}  # fmt: skip
    with pytest.raises(KeyError, match="not a kind of finding"):
        finding("no_such_kind", "1", "x", "", "")
    # a reader whose source this token cannot use: one line, nothing read
    unread = Reader("only with a PAT", (kind.key,), "personal_tokens", read)
    found = report(scaled, readers=[unread])
    assert [u.what for u in found.unavailable] == ["only with a PAT"] and found.findings == []

    # a read the server refuses although the capabilities allowed it: one line too
    async def refused(ctx: cleanup.Context) -> list[cleanup.Finding]:
        await ctx.client.get("/api/admin/no-such-list", ApiTokenList)
        return []

    found = report(scaled, readers=[Reader("custom roles", (kind.key,), "users", refused)])
    (line,) = found.unavailable
    assert line.reason.startswith("the server refused to list them: ") and "404" in line.reason


def test_the_connections_own_token_is_never_a_finding() -> None:
    async def job() -> None:
        token = "*:*.0123456789abcdef0123456789abcdef"
        async with AdminClient("http://127.0.0.1:9", token) as client:
            assert client.is_own_token(token)
            assert client.is_own_token("*:*.…89abcdef")  # the sandbox's handle of it
            assert not client.is_own_token("*:*.…89abcdee")
            assert not client.is_own_token("default:*.…89abcdef")
            assert not client.is_own_token("")

    asyncio.run(job())


def test_the_json_shape_is_stable(scaled: SandboxProcess) -> None:
    now = datetime(2026, 12, 1, tzinfo=UTC)
    found = report(scaled, now=now, days=30).to_json()
    assert list(found) == ["server", "days", "asOf", "counts", "total", "unavailable",
                           "findings"]  # fmt: skip
    assert found["asOf"] == "2026-12-01T00:00:00.000Z" and found["server"] == scaled.url
    assert found["total"] == len(found["findings"]) == sum(found["counts"].values())
    assert {tuple(f) for f in found["findings"]} == {
        ("kind", "id", "name", "detail", "why", "since", "action", "tool")
    }
