"""The client's login history (issue 38; Unleash Enterprise 4.22+) against sandboxes over HTTP:
the events newest first and their CSV, the capability (there on the sandbox, Enterprise's; "needs
Unleash Enterprise" on a played open-source release, where the
client refuses before sending),
and an Editor's token told it may not."""

from __future__ import annotations

import asyncio
import csv
import io
from collections.abc import Callable
from pathlib import Path

import pytest

from app.api import errors as e
from app.api.capabilities import NEEDS_ENTERPRISE_LOGINS, capabilities_of
from app.api.client import AdminClient
from app.api.models import Banners
from app.registry import LOGINS
from sandbox.process import SandboxProcess
from tests.api.test_capabilities import PERSONAL_EDITOR, not_found, outcomes, unleash


def test_the_history_and_its_csv(demo_sandbox: SandboxProcess) -> None:
    async def job() -> None:
        async with AdminClient(demo_sandbox.url, demo_sandbox.admin_token) as c:
            caps = await c.capabilities()
            assert caps.operation(LOGINS).available
            events = (await c.login_history()).events
            text = (await c.login_history_csv()).decode()
        assert events and [ev.id for ev in events] == sorted((ev.id for ev in events),
                                                             reverse=True)  # fmt: skip
        assert any(not ev.successful and ev.failure_reason for ev in events)
        rows = list(csv.DictReader(io.StringIO(text)))
        assert [int(r["id"]) for r in rows] == [ev.id for ev in events]

    asyncio.run(job())


def test_open_source_has_none(tmp_path: Path) -> None:
    with SandboxProcess(tmp_path / "s.sqlite3", "--demo", "--as-version", "8.2") as sb:

        async def job() -> None:
            async with AdminClient(sb.url, sb.admin_token) as c:
                availability = (await c.capabilities()).operation(LOGINS)
                assert not availability.available
                assert availability.reason == NEEDS_ENTERPRISE_LOGINS
                with pytest.raises(e.Unsupported, match="needs Unleash Enterprise"):
                    await c.login_history()
                with pytest.raises(e.Unsupported, match="needs Unleash Enterprise"):
                    await c.login_history_csv()

        asyncio.run(job())


def test_an_editor_may_not(
    sandbox: SandboxProcess, personal_token: Callable[[SandboxProcess, str], str]
) -> None:
    async def job() -> None:
        async with AdminClient(sandbox.url, personal_token(sandbox, "dmitri.volkov")) as c:
            availability = (await c.capabilities()).operation(LOGINS)
            assert not availability.available and "Admin" in availability.reason
            with pytest.raises(e.Unsupported):
                await c.login_history()

    asyncio.run(job())


def test_the_capability_comes_from_the_edition_and_the_banners() -> None:
    """No request of its own: the banners' list (Enterprise's) or an Enterprise `ui-config`
    says it is there; the banners' 404 on an open-source server says it is not; a banners'
    read that failed otherwise says it could not be checked; an Editor needs the Admin role."""

    def logins(**changes: object) -> tuple[bool, str]:
        availability = capabilities_of(outcomes(**changes)).operation(LOGINS)
        return availability.available, availability.reason

    assert logins(banners=not_found()) == (False, NEEDS_ENTERPRISE_LOGINS)
    assert logins(banners=Banners())[0]
    # an Enterprise release before banners (4.22 to 5.6) is told by its ui-config
    assert logins(ui=unleash("5.6.0", enterprise="5.6.0"), banners=not_found())[0]
    broken = logins(banners=e.ServerError(500, "InternalError", "boom"))
    assert not broken[0] and broken[1].startswith("Could not be checked")
    assert logins(banners=None) == (False, "Could not be checked: not probed")
    editor = logins(banners=Banners(), user=PERSONAL_EDITOR, token_prefix="user")
    assert not editor[0] and "Admin" in editor[1]
