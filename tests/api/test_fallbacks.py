"""AdminClient against an emulated Unleash 8.2 (open source, admin API token): the capability
probe, `Unsupported` without a request, the archive read through the search API, and the
de-duplicated inactive users. Answers follow ../shared/reference/unleash-8.2-behaviour.md."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections import Counter
from collections.abc import Coroutine
from datetime import UTC, datetime
from typing import Any, TypeVar

import httpx
import pytest

import app.api.search as search_module
from app.api import errors as e
from app.api.capabilities import Capabilities
from app.api.client import AdminClient, RetryPolicy
from app.api.models import ArchivedFeatures, CreateGroup

T = TypeVar("T")
TOKEN = "*:*.0123456789abcdef-secret"
BASE = "http://unleash.test"
FAST = RetryPolicy(attempts=4, base_delay=0.001, max_delay=0.01)


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def env(name: str, enabled: bool, seen: str | None) -> dict[str, Any]:
    return {"name": name, "enabled": enabled, "type": "production", "lastSeenAt": seen}


#: archived features in the order the search API sorts them (createdAt ascending)
ARCHIVED: list[dict[str, Any]] = [
    {
        "name": "old-banner",
        "type": "release",
        "description": "The old banner",
        "project": "default",
        "stale": True,
        "impressionData": False,
        "createdAt": "2024-01-01T10:00:00.000Z",
        "archivedAt": "2024-02-01T10:00:00.000Z",
        "favorite": False,
        "segments": [],
        "environments": [
            env("development", True, "2024-01-20T08:00:00.000Z"),
            env("production", False, "2024-01-25T09:30:00.000Z"),
        ],
    },
    {
        "name": "kill-payments",
        "type": "kill-switch",
        "description": None,
        "project": "default",
        "stale": False,
        "impressionData": True,
        "createdAt": "2024-01-05T10:00:00.000Z",
        "archivedAt": "2024-06-01T12:00:00.000Z",
        "environments": [env("production", True, None)],
    },
    {
        "name": "exp-checkout",
        "type": "experiment",
        "description": "",
        "project": "default",
        "stale": False,
        "impressionData": False,
        "createdAt": "2024-02-10T10:00:00.000Z",
        "archivedAt": "2024-03-15T00:00:00.000Z",
        "environments": [
            env("development", False, "2024-03-01T00:00:00.000Z"),
            env("production", True, "2024-03-10T00:00:00.000Z"),
            env("staging", True, None),
        ],
    },
    {
        "name": "ops-cache",
        "type": "operational",
        "description": "cache toggle",
        "project": "default",
        "stale": False,
        "impressionData": False,
        "createdAt": "2024-03-01T10:00:00.000Z",
        "archivedAt": "2024-09-09T09:09:09.000Z",
        "environments": [],
    },
    {
        "name": "perm-admin",
        "type": "permission",
        "description": None,
        "project": "default",
        "stale": True,
        "impressionData": False,
        "createdAt": "2024-04-01T10:00:00.000Z",
        "archivedAt": "2024-04-02T10:00:00.000Z",
        "environments": [env("production", False, "2024-04-01T11:00:00.000Z")],
    },
]


def not_there(path: str) -> httpx.Response:
    message = f"The path you were looking for ({path}) is not available."
    body = {
        "id": "7d1c2a40-9f7e-4ab0-8a3c-2b5b0f1e9e21",
        "name": "NotFoundError",
        "message": message,
        "details": [{"message": message}],
    }
    return httpx.Response(404, json=body)


class Unleash82:
    """`httpx.MockTransport` handler answering as Unleash 8.2.0 open source does for an admin
    API token. `hits` counts requests per path."""

    def __init__(
        self,
        archived: list[dict[str, Any]] | None = None,
        *,
        throttle_offset: int | None = None,
        with_total: bool = True,
    ) -> None:
        self.archived = ARCHIVED if archived is None else archived
        self.throttle_offset = throttle_offset
        self.with_total = with_total
        self.hits: Counter[str] = Counter()
        self.searches: list[httpx.QueryParams] = []
        self.inactive: list[dict[str, Any]] = []

    @property
    def total_requests(self) -> int:
        return sum(self.hits.values())

    def __call__(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        self.hits[path] += 1
        assert request.headers["authorization"] == TOKEN
        if path == "/api/admin/ui-config":
            return httpx.Response(
                200,
                json={
                    "version": "8.2.0",
                    "environment": "Open Source",
                    "versionInfo": {
                        "current": {"oss": "8.2.0", "enterprise": ""},
                        "latest": {},
                        "isLatest": True,
                    },
                    "authenticationType": "open-source",
                    "flags": {},
                },
            )
        if path == "/api/admin/user":
            return httpx.Response(
                200,
                json={
                    "user": {
                        "username": "admin",
                        "type": "admin",
                        "secret": TOKEN,
                        "permissions": ["ADMIN"],
                    },
                    "permissions": [{"permission": "ADMIN"}],
                },
            )
        if path == "/api/admin/groups" or path.startswith("/api/admin/archive/features/"):
            return not_there(path)
        if path.startswith("/api/admin/personal-dashboard/"):
            return httpx.Response(
                500,
                json={
                    "name": "UnknownError",
                    "message": "Unexpected error: Cannot read properties of undefined "
                    "(reading 'id')",
                },
            )
        if path == "/api/admin/search/features":
            return self._search(request)
        if path == "/api/admin/user-admin/inactive":
            return httpx.Response(200, json={"version": 1, "inactiveUsers": self.inactive})
        parts = path.split("/")  # "", api, admin, projects, :p, revive|delete
        if request.method == "POST" and len(parts) == 6 and parts[3] == "projects":
            return self._bulk(parts[4], parts[5], json.loads(request.content)["features"])
        return not_there(path)

    def _bulk(self, project: str, verb: str, names: list[str]) -> httpx.Response:
        """`POST /api/admin/projects/:p/revive` and `/delete`: the named archived flags of
        `project` leave the archive (200, no body), as Unleash 8.2."""
        if verb not in ("revive", "delete"):
            return not_there(f"/api/admin/projects/{project}/{verb}")
        self.archived = [f for f in self.archived
                         if not (f["project"] == project and f["name"] in names)]  # fmt: skip
        return httpx.Response(200)

    def _search(self, request: httpx.Request) -> httpx.Response:
        params = request.url.params
        self.searches.append(params)
        offset, limit = int(params["offset"]), int(params["limit"])
        if offset == self.throttle_offset:
            self.throttle_offset = None  # only once
            return httpx.Response(
                429,
                text="Too many requests, please try again later.",
                headers={"content-type": "text/html; charset=utf-8", "retry-after": "1"},
            )
        project = params["project"].removeprefix("IS:")
        matching = [f for f in self.archived if f["project"] == project]
        body: dict[str, Any] = {"features": matching[offset : offset + limit]}
        if self.with_total:
            body["total"] = len(matching)
        return httpx.Response(200, json=body)


class Sleeps:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


def client_for(server: Unleash82, sleeps: Sleeps | None = None) -> AdminClient:
    return AdminClient(
        BASE,
        TOKEN,
        transport=httpx.MockTransport(server),
        retry=FAST,
        sleep=sleeps or Sleeps(),
    )


# ---------------------------------------------------------------------------- capabilities


def test_the_probe_reads_an_open_source_server_and_an_admin_token() -> None:
    server = Unleash82()

    async def go() -> Capabilities:
        async with client_for(server) as client:
            return await client.capabilities()

    caps = run(go())
    assert (caps.server_kind, caps.server_version, caps.edition) == (
        "unleash",
        "8.2.0",
        "Open Source",
    )
    assert caps.server_label == "Unleash 8.2.0 (Open Source)"
    assert (caps.token_kind, caps.user_name, caps.is_admin) == ("admin", None, True)
    assert caps.archive_endpoint is False

    groups = caps.operation("groups")
    assert not groups.available
    assert "Enterprise" in groups.reason
    dashboard = caps.operation("project_dashboard")
    assert not dashboard.available
    assert "personal access token" in dashboard.reason
    archive = caps.operation("archived_features")
    assert archive.available
    assert archive.note.startswith("through the feature search API")
    assert "7.0" in archive.note
    for key in ("users", "inactive_users", "context_usage"):
        assert caps.operation(key).available, key
    metrics = caps.operation("metrics_upload")
    assert not metrics.available
    assert "client (backend) token" in metrics.reason
    # roles (issue 36): listed everywhere, custom ones Enterprise's
    assert caps.operation("roles").available
    assert "Custom roles need Unleash Enterprise" in caps.action("roles.create").reason
    access = caps.operation("project_access")
    assert not access.available and "needs Unleash Pro or Enterprise" in access.reason

    assert server.hits == Counter(
        {
            "/api/admin/ui-config": 1,
            "/api/admin/user": 1,
            "/api/admin/groups": 1,
            "/api/admin/archive/features/flagdesk-capability-probe": 1,
            "/api/admin/personal-dashboard/default": 1,
            "/api/admin/roles": 1,  # roles (issue 36): Enterprise's, a 404 here
            "/api/admin/service-account": 1,
            "/api/admin/projects/flagdesk-capability-probe/access": 1,
            "/api/admin/banners": 1,  # banners (issue 38): Enterprise's, a 404 here
        }
    )
    # the secret Unleash echoes in /api/admin/user stays out of what the GUI shows
    assert TOKEN not in repr(caps)
    assert TOKEN not in json.dumps(caps.to_json())


def test_the_probe_runs_once_for_concurrent_callers() -> None:
    server = Unleash82()

    async def go() -> tuple[list[Capabilities], Capabilities]:
        async with client_for(server) as client:
            assert client.known_capabilities is None
            first = await asyncio.gather(
                client.capabilities(), client.capabilities(), client.capabilities()
            )
            assert client.known_capabilities is first[0]
            return list(first), await client.capabilities()

    together, later = run(go())
    assert together[0] is together[1] is together[2] is later
    assert server.hits["/api/admin/ui-config"] == 1
    assert server.hits["/api/admin/user"] == 1
    assert server.total_requests == 9  # with the banners (issue 38)


def test_refresh_probes_again() -> None:
    server = Unleash82()

    async def go() -> None:
        async with client_for(server) as client:
            first = await client.capabilities()
            second = await client.capabilities(refresh=True)
            assert second is not first
            assert second == first

    run(go())
    assert server.hits["/api/admin/ui-config"] == 2
    assert server.total_requests == 18


# ---------------------------------------------------------------------------- Unsupported


def test_unsupported_operations_send_nothing_however_often_they_are_tried() -> None:
    server = Unleash82()

    async def go() -> list[e.Unsupported]:
        errors: list[e.Unsupported] = []
        async with client_for(server) as client:
            await client.capabilities()
            probed = server.total_requests
            for _ in range(5):
                with pytest.raises(e.Unsupported) as groups:
                    await client.list_groups()
                with pytest.raises(e.Unsupported) as create:
                    await client.create_group(CreateGroup(name="testers"))
                with pytest.raises(e.Unsupported) as dashboard:
                    await client.personal_dashboard("x")
                errors += [groups.value, create.value, dashboard.value]
            assert server.total_requests == probed
        return errors

    errors = run(go())
    assert len(errors) == 15
    groups, create, dashboard = errors[:3]
    assert (groups.operation, create.operation, dashboard.operation) == (
        "Groups",
        "Groups",
        "Project dashboard",
    )
    assert "Enterprise" in groups.reason
    assert str(groups) == (
        "Groups: User groups need Unleash Enterprise: this server has no groups endpoint"
    )
    assert "personal access token" in dashboard.reason
    assert str(dashboard).startswith("Project dashboard: The dashboard needs a personal access")
    assert server.hits["/api/admin/groups"] == 1  # the probe's, and no other
    assert server.hits["/api/admin/personal-dashboard/default"] == 1
    assert server.hits["/api/admin/personal-dashboard/x"] == 0


def test_unsupported_is_raised_without_a_prior_probe_call() -> None:
    server = Unleash82()

    async def go() -> None:
        async with client_for(server) as client:
            with pytest.raises(e.Unsupported):
                await client.create_group(CreateGroup(name="testers"))

    run(go())
    assert server.hits["/api/admin/groups"] == 1  # GET by the probe; the POST never sent
    assert server.total_requests == 9


# ---------------------------------------------------------------------------- archive by search


def test_archived_features_through_the_search_api(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search_module, "SEARCH_PAGE", 2)
    server = Unleash82(throttle_offset=2)
    sleeps = Sleeps()

    async def go() -> ArchivedFeatures:
        async with client_for(server, sleeps) as client:
            return await client.archived_features("default")

    result = run(go())
    assert isinstance(result, ArchivedFeatures)
    assert result.version == 1
    # newest archived first
    assert [f.name for f in result.features] == [
        "ops-cache",
        "kill-payments",
        "perm-admin",
        "exp-checkout",
        "old-banner",
    ]
    dumped = {f.name: dataclasses.asdict(f) for f in result.features}
    assert dumped["old-banner"] == {
        "name": "old-banner",
        "type": "release",
        "description": "The old banner",
        "project": "default",
        "stale": True,
        "impressionData": False,
        "createdAt": at("2024-01-01T10:00:00Z"),
        "archivedAt": at("2024-02-01T10:00:00Z"),
        "lastSeenAt": at("2024-01-25T09:30:00Z"),  # the newest of the environments'
        "environments": [
            {"name": "development", "enabled": True, "lastSeenAt": at("2024-01-20T08:00:00Z")},
            {"name": "production", "enabled": False, "lastSeenAt": at("2024-01-25T09:30:00Z")},
        ],
    }
    assert dumped["exp-checkout"]["lastSeenAt"] == at("2024-03-10T00:00:00Z")
    assert dumped["exp-checkout"]["description"] == ""
    assert [env["name"] for env in dumped["exp-checkout"]["environments"]] == [
        "development",
        "production",
        "staging",
    ]
    assert dumped["kill-payments"]["lastSeenAt"] is None
    assert dumped["kill-payments"]["environments"] == [
        {"name": "production", "enabled": True, "lastSeenAt": None}
    ]
    assert (dumped["kill-payments"]["type"], dumped["kill-payments"]["impressionData"]) == (
        "kill-switch",
        True,
    )
    assert dumped["ops-cache"]["lastSeenAt"] is None
    assert dumped["ops-cache"]["environments"] == []
    assert dumped["ops-cache"]["archivedAt"] == datetime(2024, 9, 9, 9, 9, 9, tzinfo=UTC)
    # fields only the search API has are not carried over
    assert "favorite" not in dumped["old-banner"] and "segments" not in dumped["old-banner"]

    # pages of 2 until total, the throttled page waited out and asked again
    assert [(s["offset"], s["limit"]) for s in server.searches] == [
        ("0", "2"),
        ("2", "2"),
        ("2", "2"),
        ("4", "2"),
    ]
    for params in server.searches:
        assert params["project"] == "IS:default"
        assert params["lifecycle"] == "IS:archived"  # 8.0.1 and later
    assert sleeps.delays == [1.0]
    assert server.hits["/api/admin/archive/features/default"] == 0  # known missing: not asked


def test_an_empty_archive_is_one_search() -> None:
    server = Unleash82(archived=[])

    async def go() -> ArchivedFeatures:
        async with client_for(server) as client:
            return await client.archived_features("default")

    assert run(go()).features == []
    assert len(server.searches) == 1


def test_a_project_id_is_one_query_value() -> None:
    server = Unleash82()

    async def go() -> ArchivedFeatures:
        async with client_for(server) as client:
            return await client.archived_features("web shop&x=1")

    assert run(go()).features == []
    assert len(server.searches) == 1
    assert server.searches[0]["project"] == "IS:web shop&x=1"
    assert server.searches[0]["lifecycle"] == "IS:archived"


def test_pages_without_a_total_are_read_to_the_end(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search_module, "SEARCH_PAGE", 2)
    server = Unleash82(with_total=False)

    async def go() -> ArchivedFeatures:
        async with client_for(server) as client:
            return await client.archived_features("default")

    assert len(run(go()).features) == len(ARCHIVED)


def test_the_archive_endpoint_is_used_where_it_exists() -> None:
    archived = {
        "version": 1,
        "features": [{"name": "gone", "project": "default", "archivedAt": "2024-01-01T00:00:00Z"}],
    }

    class Unleash6(Unleash82):
        def __call__(self, request: httpx.Request) -> httpx.Response:
            if request.url.path.startswith("/api/admin/archive/features/"):
                self.hits[request.url.path] += 1
                return httpx.Response(200, json=archived)
            return super().__call__(request)

    server = Unleash6()

    async def go() -> tuple[ArchivedFeatures, Capabilities]:
        async with client_for(server) as client:
            return await client.archived_features("default"), await client.capabilities()

    result, caps = run(go())
    assert [f.name for f in result.features] == ["gone"]
    assert caps.archive_endpoint is True
    assert caps.operation("archived_features").note == ""
    assert server.hits["/api/admin/archive/features/default"] == 1
    assert server.searches == []


# ---------------------------------------------------------------------------- inactive users


def test_inactive_users_are_listed_once_each_in_order() -> None:
    server = Unleash82()

    def user(uid: int, pat_seen: str | None) -> dict[str, Any]:
        return {
            "id": uid,
            "name": f"User {uid}",
            "email": f"u{uid}@example.com",
            "username": None,
            "seenAt": "2023-01-01T00:00:00.000Z",
            "createdAt": "2022-01-01T00:00:00.000Z",
            "patSeenAt": pat_seen,
        }

    server.inactive = [
        user(5, "2023-02-01T00:00:00.000Z"),
        user(3, None),
        user(5, "2023-03-01T00:00:00.000Z"),  # the same user again, for another old token
        user(9, None),
        user(3, None),
    ]

    async def go() -> list[tuple[int, datetime | None]]:
        async with client_for(server) as client:
            result = await client.inactive_users()
            assert result.version == 1
            return [(u.id, u.patSeenAt) for u in result.inactiveUsers]

    assert run(go()) == [(5, at("2023-02-01T00:00:00Z")), (3, None), (9, None)]
    assert server.hits["/api/admin/user-admin/inactive"] == 1
    assert server.hits["/api/admin/ui-config"] == 0  # no probe needed


def test_inactive_users_without_duplicates_are_untouched() -> None:
    server = Unleash82()
    server.inactive = [{"id": 2, "name": "B"}, {"id": 1, "name": "A"}]

    async def go() -> list[int]:
        async with client_for(server) as client:
            return [u.id for u in (await client.inactive_users()).inactiveUsers]

    assert run(go()) == [2, 1]


def test_inactive_users_streamed_are_listed_once_across_pieces() -> None:
    """20,000 users handed over a piece at a time: a user listed again within a piece or in a
    later piece (another old token) is dropped, wherever the repeat falls."""
    server = Unleash82()
    users = [{"id": i, "name": f"User {i}"} for i in range(20_000)]
    server.inactive = [*users[:10_000], users[7], users[9_999], *users[10_000:], users[15_000]]
    server.inactive[5:5] = [users[3]]  # within the first piece

    async def go() -> list[int]:
        handed: list[int] = []
        async with client_for(server) as client:
            await client.inactive_users(on_items=lambda got: handed.extend(u.id for u in got))
        return handed

    assert run(go()) == list(range(20_000))


def test_the_archived_filter_the_server_has() -> None:
    """Measured: 6.10.1 and 7.6.5 filter with `archived=IS:true` and list nothing for
    `lifecycle=IS:archived`; 8.2.0 takes both, `archived` deprecated since 8.0.1."""
    assert search_module.archived_filter("6.10.1") == {"archived": "IS:true"}
    assert search_module.archived_filter("7.6.5") == {"archived": "IS:true"}
    assert search_module.archived_filter("8.0.0") == {"archived": "IS:true"}
    assert search_module.archived_filter("8.0.1") == {"lifecycle": "IS:archived"}
    assert search_module.archived_filter("8.2.0") == {"lifecycle": "IS:archived"}
    assert search_module.archived_filter("") == {"archived": "IS:true"}  # unknown: the older
