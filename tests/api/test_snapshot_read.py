"""`app.snapshot.read.read_snapshot` against sandboxes over HTTP: the demo's people and access
named by their natural keys (users by email, a group's members by email, a project's access by
role name, a custom role's permissions), its API tokens' metadata and no secret anywhere, its
context fields, segments, tag types and custom strategy definitions (not the built-in ones);
on a played open-source release the lists it has not are `unread` with why, and comparing it
with the demo leaves them out instead of calling each one "only in source"."""

from __future__ import annotations

import asyncio
from pathlib import Path

from app.api.client import AdminClient
from app.snapshot.compare import compare
from app.snapshot.files import dump
from app.snapshot.model import Snapshot, secrets_in
from app.snapshot.read import public_url, read_snapshot
from sandbox.process import SandboxProcess


def read(sb: SandboxProcess) -> Snapshot:
    async def go() -> Snapshot:
        async with AdminClient(sb.url, sb.admin_token) as client:
            return await read_snapshot(client)

    return asyncio.run(go())


def test_the_demo_by_natural_keys(demo_sandbox: SandboxProcess) -> None:
    with demo_sandbox.admin() as http:
        users = http.get("/api/admin/user-admin").json()["users"]
        groups = http.get("/api/admin/groups").json()["groups"]
        access = http.get("/api/admin/projects/web-shop/access").json()
    found = read(demo_sandbox)
    assert found.unread == {}
    assert found.server.kind == "sandbox" and found.server.url == demo_sandbox.url.rstrip("/")
    assert {u.email for u in found.users} == {u["email"] or u["username"] for u in users}
    six = next(u for u in users if u["id"] == 6)
    assert next(u for u in found.users if u.email == six["email"]).rootRole == "Editor"
    squad = next(g for g in found.groups if g.name == "Checkout squad")
    members = next(g for g in groups if g["name"] == "Checkout squad")["users"]
    assert squad.users == sorted(m["user"]["email"] or m["user"]["username"] for m in members)
    owners = next(a for a in found.projectAccess if a.project == "web-shop" and a.role == "Owner")
    assert "Checkout squad" in owners.groups and six["email"] in owners.users
    assert len([u for u in access["users"] if 4 in u["roles"]]) == len(owners.users)
    assert {"Admin", "Editor", "Viewer", "Owner", "Member"} <= {r.name for r in found.roles}
    assert all(not r.permissions for r in found.roles)  # built-in: theirs are not read
    assert found.apiTokens and not secrets_in(dump(found))
    assert {"Beta testers", "EU customers"} <= {g.name for g in found.segments}
    assert {"simple", "team"} <= {t.name for t in found.tagTypes}
    assert [d.name for d in found.strategies] == ["byTenant"]  # the built-in ones left out
    assert any(f.legalValues for f in found.contextFields)
    assert {p.id for p in found.projects} >= {"default", "web-shop", "payments"}


def test_a_custom_roles_permissions_by_name_and_environment(sandbox: SandboxProcess) -> None:
    with sandbox.admin() as http:
        made = http.post("/api/admin/roles", json={
            "name": "Deployer", "description": "Ships flags",
            "permissions": [{"name": "CREATE_FEATURE"},
                            {"name": "UPDATE_FEATURE_ENVIRONMENT", "environment": "production"}],
        })  # fmt: skip
        assert made.status_code == 200, made.text
    role = next(r for r in read(sandbox).roles if r.name == "Deployer")
    assert (role.type, role.description) == ("custom", "Ships flags")
    assert [str(p) for p in role.permissions] == [
        "CREATE_FEATURE", "UPDATE_FEATURE_ENVIRONMENT@production"]  # fmt: skip


def test_open_source_says_what_it_has_not(demo_sandbox: SandboxProcess, tmp_path: Path) -> None:
    with SandboxProcess(tmp_path / "oss.sqlite3", "--demo", "--as-version", "8.2") as oss:
        played = read(oss)
    assert set(played.unread) == {"groups", "projectAccess"}
    assert "Enterprise" in played.unread["groups"]
    assert played.groups == [] and played.projectAccess == []
    # open source lists no roles: the built-in root roles the users' list names
    assert {(r.name, r.type) for r in played.roles} == {
        ("Admin", "root"), ("Editor", "root"), ("Viewer", "root")}  # fmt: skip
    found = compare(read(demo_sandbox), played, kinds=["groups", "project-access", "users"])
    assert found.kinds == ("users",)
    assert [k for k, _ in found.not_compared] == ["groups", "project-access"]


def test_the_address_keeps_no_secret() -> None:
    assert public_url("https://me:pw@unleash.example.com:4242/base/?token=x#y") == (
        "https://unleash.example.com:4242/base"
    )


def test_the_demos_flags_and_how_its_environments_differ(demo_sandbox: SandboxProcess) -> None:
    found = read(demo_sandbox)
    assert [e.name for e in found.environments] == ["development", "staging", "production"]
    shop = next(p for p in found.projects if p.id == "web-shop")
    assert shop.environments == ["development", "staging", "production"]
    with demo_sandbox.admin() as http:
        listed = [
            http.get(f"/api/admin/projects/{p}/features").json()["features"]
            for p in ("default", "web-shop", "payments", "mobile-app")
        ]
    live = {f["name"] for features in listed for f in features}
    assert {f.name for f in found.flags} == live
    strategies = [x for f in found.flags for e in f.environments for x in e.strategies]
    assert any("Beta testers" in x.segments for x in strategies)  # by name, not id
    assert not any(name.startswith("#") for x in strategies for name in x.segments)
    assert any(f.dependencies for f in found.flags) and any(f.tags for f in found.flags)
    assert any(e.variants for f in found.flags for e in f.environments)
    # production against staging, as an administrator would ask it
    differs = compare(found, found, kinds=["flags"], map_env={"production": "staging"})
    rollouts = [d for d in differences_of(differs) if d.endswith("parameters.rollout: 100 → 25")]
    assert rollouts, differences_of(differs)[:20]


def differences_of(found: object) -> list[str]:
    from app.snapshot.compare import Comparison, short

    assert isinstance(found, Comparison)
    return [f"{d.key}: {short(d.old)} → {short(d.new)}" for d in found.differences]


def test_some_kinds_read_only_what_they_need(demo_sandbox: SandboxProcess) -> None:
    """`kinds` (what `flagdesk diff --kinds` compares): the flags read alone are the flags of
    the whole read, nobody's project access, no project's environments and no API token is
    asked for (counted on the wire), and what was not asked for is said so in `unread`."""
    import httpx

    from app.snapshot.read import NOT_ASKED

    asked: list[str] = []

    class Counting(httpx.AsyncHTTPTransport):
        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            asked.append(request.url.path)
            return await super().handle_async_request(request)

    async def go(kinds: list[str] | None) -> Snapshot:
        async with AdminClient(demo_sandbox.url, demo_sandbox.admin_token,
                               transport=Counting()) as client:  # fmt: skip
            return await read_snapshot(client, kinds=kinds)

    def read_for() -> list[str]:  # (the capability probe's reads name a project of its own)
        return [p for p in asked if "flagdesk-capability-probe" not in p]

    def per_project(paths: list[str]) -> list[str]:
        return [p for p in paths if p.endswith("/access") or "api-tokens" in p
                or p.startswith("/api/admin/environments/project/")]  # fmt: skip

    whole = asyncio.run(go(None))
    assert whole.unread == {} and per_project(read_for())  # the whole read asks for them
    asked.clear()
    flags = asyncio.run(go(["flags"]))
    assert flags.flags == whole.flags and flags.segments == whole.segments
    assert flags.unread == {name: NOT_ASKED for name in (
        "apiTokens", "contextFields", "groups", "projectAccess", "projects", "roles",
        "strategies", "tagTypes")}  # fmt: skip
    assert not flags.projectAccess and not flags.apiTokens and not flags.groups
    assert not per_project(read_for()), asked
    assert compare(whole, flags, kinds=["flags"]).same
