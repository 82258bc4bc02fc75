"""The client's project access against sandboxes over HTTP: the requests' exact bytes (what
`--dry-run` prints and the journal names), the read into `ProjectAccess` (service accounts among
the users, groups with their members), the writes and the server's refusals as the client's
errors; the probe's answer (`Probe.PROJECT_ACCESS`): there on the sandbox, "needs Unleash Pro or
Enterprise" on a played open-source release with nothing sent to the routes afterwards, and
read from the answers alone (a 404 naming the path is no route, a project-not-found 404 or a
403 is a route)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from app.api import errors as e
from app.api.capabilities import NEEDS_PRO, capabilities_of
from app.api.client import (
    AdminClient,
    add_project_access_request,
    remove_project_access_request,
    set_project_roles_request,
)
from app.api.models import AddProjectAccess, ProjectAccess, ProjectRoles
from app.registry import GRANT_PROJECT_ACCESS, PROJECT_ACCESS
from sandbox.process import SandboxProcess
from tests.api.test_capabilities import not_found, outcomes


def test_the_requests_are_exact() -> None:
    body = AddProjectAccess(roles=[5], groups=[], users=[6, 46])
    grant = add_project_access_request("web shop/x", body)
    assert (grant.method, grant.path) == ("POST", "/api/admin/projects/web%20shop%2Fx/access")
    assert grant.body == b'{"roles":[5],"groups":[],"users":[6,46]}'
    put = set_project_roles_request("p", "group", 3, [4, 5])
    assert put.describe() == {"method": "PUT", "path": "/api/admin/projects/p/groups/3/roles"}
    assert put.body == b'{"roles":[4,5]}'
    assert set_project_roles_request("p", "user", 6, []).body == b'{"roles":[]}'
    gone = remove_project_access_request("p", "user", 6)
    assert gone.describe() == {"method": "DELETE", "path": "/api/admin/projects/p/users/6/roles"}
    assert gone.body == b""
    with pytest.raises(ValueError, match="a user or a group"):
        remove_project_access_request("p", "team", 1)
    for refused in ({"roles": [5], "users": []}, {"roles": ["5"], "users": [], "groups": []},
                    {"roles": [2**63], "users": [], "groups": []}):  # fmt: skip
        with pytest.raises(ValueError):
            AddProjectAccess.model_validate(refused)
    with pytest.raises(ValueError):
        ProjectRoles.model_validate({"roles": [True]})


def test_read_grant_set_and_remove(sandbox: SandboxProcess) -> None:
    async def job() -> None:
        async with AdminClient(sandbox.url, sandbox.admin_token) as c:
            assert (await c.capabilities()).operation(PROJECT_ACCESS).available
            got = await c.project_access("web-shop")
            assert isinstance(got, ProjectAccess)
            assert {u.id: u.roles for u in got.users} == {1: [5], 6: [4], 7: [4], 10: [5]}
            assert {g.name: len(g.users) for g in got.groups} == {
                "Checkout squad": 8,
                "Platform team": 6,
            }
            assert [r.name for r in got.roles] == ["Owner", "Member"]
            body = AddProjectAccess(roles=[5], groups=[3], users=[46])
            assert await c.add_project_access("web-shop", body) == 200
            assert await c.set_project_roles("web-shop", "user", 6, [4, 5]) == 200
            assert await c.remove_project_access("web-shop", "group", 2) == 200
            got = await c.project_access("web-shop")
            users = {u.id: u for u in got.users}
            assert users[46].accountType == "Service Account" and users[46].roles == [5]
            assert sorted(users[6].roles) == [4, 5]
            assert {g.id: g.roles for g in got.groups} == {1: [5], 3: [5]}
            with pytest.raises(e.NotFound, match="nope"):
                await c.project_access("nope")
            with pytest.raises(e.BadRequest, match="These roles are not valid: 1"):
                await c.add_project_access(
                    "web-shop", AddProjectAccess(roles=[1], groups=[], users=[6])
                )
            with pytest.raises(e.NotFound):
                await c.set_project_roles("web-shop", "user", 9999, [5])

    asyncio.run(job())


def test_an_open_source_release_has_none(tmp_path: Path) -> None:
    with SandboxProcess(tmp_path / "oss.sqlite3", "--demo", "--as-version", "7.6") as sb:

        async def job() -> None:
            async with AdminClient(sb.url, sb.admin_token) as c:
                caps = await c.capabilities()
                availability = caps.operation(PROJECT_ACCESS)
                assert not availability.available and availability.reason == NEEDS_PRO
                assert caps.action(GRANT_PROJECT_ACCESS).reason == NEEDS_PRO
                with pytest.raises(e.Unsupported, match="Project access needs Unleash Pro"):
                    await c.project_access("default")
                with pytest.raises(e.Unsupported):
                    await c.add_project_access("default", AddProjectAccess(
                        roles=[5], groups=[], users=[6]))  # fmt: skip

        asyncio.run(job())


def test_the_probe_tells_a_missing_route_from_a_missing_project() -> None:
    def reading(answer: object) -> tuple[bool, str, str]:
        caps = capabilities_of(outcomes(project_access=answer))
        got = caps.operation(PROJECT_ACCESS)
        return got.available, got.reason, got.note

    assert reading(ProjectAccess()) == (True, "", "")
    assert reading(not_found()) == (False, NEEDS_PRO, "")
    assert reading(not_found("Could not find project with id flagdesk-capability-probe"))[0]
    allowed, _, note = reading(e.Forbidden(403, "NoAccessError", "no"))
    assert allowed and "where the token's user may manage access" in note
    broken = reading(e.ServerError(500, "InternalError", "boom"))
    assert not broken[0] and broken[1].startswith("Could not be checked")


def test_the_version_table_says_pro_or_enterprise() -> None:
    from app.registry import PROJECT_ACCESS as TOOL_ITSELF
    from app.registry import version_cell

    for release in ("5.12.8", "8.2.0"):
        assert version_cell((TOOL_ITSELF.needs,), release) == "Pro/Enterprise"
        assert version_cell((TOOL_ITSELF.needs, GRANT_PROJECT_ACCESS.needs), release) == (
            "Pro/Enterprise"
        )


# ---- issue 36, the windows: `read_access` reports its progress (the who-can window's bar)


def test_read_access_reports_each_project_read(
    demo_sandbox: SandboxProcess, tmp_path: Path
) -> None:
    """`on_progress(done, total)`: once with 0 before the first project's access, then once per
    project, up to all of them; on open source (no project access read) never."""
    from app.api.access import read_access

    async def job(url: str, token: str) -> list[tuple[int, int]]:
        seen: list[tuple[int, int]] = []
        async with AdminClient(url, token) as c:
            data = await read_access(c, concurrency=2,
                                     on_progress=lambda d, t: seen.append((d, t)))  # fmt: skip
        assert all(t == len(data.projects) for _, t in seen)
        return seen

    seen = asyncio.run(job(demo_sandbox.url, demo_sandbox.admin_token))
    assert seen == [(n, 4) for n in range(5)]
    with SandboxProcess(tmp_path / "oss.sqlite3", "--demo", "--as-version", "8.2") as sb:
        assert asyncio.run(job(sb.url, sb.admin_token)) == []
