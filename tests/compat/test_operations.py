"""The seven operations, and the error shapes, as flagdesk's `AdminClient` meets them on a real
Unleash, each of `VERSIONS` (see ../shared/reference/unleash-8.2-behaviour.md for what 8.2 does;
where the others answer otherwise, the test says so with `per_version`).

Each test runs its coroutine with plain `asyncio.run`, with clients made inside it (an httpx
client belongs to one event loop). Search-API calls are rate-limited on the server to about 15
a minute, so only `test_archived_features_come_through_the_search_api` makes one.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from app.api import errors as e
from app.api.capabilities import Availability
from app.api.client import AdminClient
from app.api.models import (
    BulkApplication,
    BulkMetric,
    BulkMetrics,
    Constraint,
    CreateFeature,
    CreateFeatureStrategy,
    CreateGroup,
    CreateUser,
    PersonalDashboardProjectDetails,
    UpdateUser,
)
from tests.compat.conftest import RELEASES, per_version

if TYPE_CHECKING:
    from tests.compat.conftest import Cleanup, Peer

GROUPS = "/api/admin/groups"
SEARCH = "/api/admin/search/features"
#: body-parser's limit, in bytes (the same on every one of `VERSIONS`)
BODY_LIMIT = 102_400
#: Unleash 8.2 checks metrics against a list of flag names it caches for 10 s: counts for a flag
#: created less than that ago can be dropped as "unknown flags" (metrics-service-v2.js)
FLAG_NAMES_CACHE_S = 10.0
EMPTY_BULK = b'{"applications":[],"metrics":[]}'


class CountingTransport(httpx.AsyncHTTPTransport):
    """The real transport, remembering `(method, path)` of every request that goes out."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[tuple[str, str]] = []
        self.params: list[tuple[str, dict[str, str]]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append((request.method, request.url.path))
        self.params.append((request.url.path, dict(request.url.params)))
        return await super().handle_async_request(request)

    def queries(self, path: str) -> list[dict[str, str]]:
        return [params for p, params in self.params if p == path]

    def to(self, path: str) -> list[tuple[str, str]]:
        return [r for r in self.requests if r[1] == path]


def admin(peer: Peer, **kwargs: Any) -> AdminClient:
    return AdminClient(peer.url, peer.admin_token, **kwargs)


async def new_user(client: AdminClient, cleanup: Cleanup, email: str, name: str) -> int:
    user = await client.create_user(CreateUser(email=email, name=name, rootRole="Viewer"))
    cleanup.users.append(user.id)
    return user.id


async def new_feature(client: AdminClient, cleanup: Cleanup, name: str) -> None:
    feature = await client.create_feature("default", CreateFeature(name=name))
    assert feature.name == name
    cleanup.features.append(name)


# ---------------------------------------------------------------------------- capabilities


def test_capabilities_of_the_admin_token(peer: Peer) -> None:
    async def body() -> None:
        async with admin(peer) as client:
            caps = await client.capabilities()
        assert caps.server_kind == "unleash"
        assert caps.server_version == RELEASES[peer.line]
        assert caps.edition == "Open Source"
        assert caps.token_kind == "admin"
        assert caps.is_admin is True
        assert caps.user_name is None
        assert caps.archive_endpoint is per_version(peer, {"5.12 6.10": True, "7.6 8.2": False})
        available = {key for key, op in caps.operations.items() if op.available}
        # and the API tokens (an Admin's); not the personal access tokens: no user behind it
        assert available == {
            "users",
            "inactive_users",
            "archived_features",
            "context_usage",
            "api_tokens",
            # issue 36: the built-in roles (listed through the users), the clean-up report, and who
            # can do what where (from the root roles alone on open source)
            "roles",
            "cleanup",
            "access_overview",
            # issue 37: comparing and promoting (flags and their configuration are open source's)
            "compare",
            # issue 38: the statistics, maintenance mode and CORS origins (open source's), and
            # the event log (every release)
            "instance",
            "events",
        }

    asyncio.run(body())


def test_capabilities_with_a_client_token_for_metrics(peer: Peer) -> None:
    client_token = peer.require_client_token()

    async def body() -> None:
        async with admin(peer, client_token=client_token) as client:
            caps = await client.capabilities()
        assert caps.operation("metrics_upload").available
        assert caps.token_kind == "admin"

    asyncio.run(body())


# ---------------------------------------------------------------------------- 1 groups


def test_groups_are_unsupported_without_a_request_storm(
    peer: Peer, unique: Callable[[str], str]
) -> None:
    transport = CountingTransport()

    async def body() -> None:
        async with admin(peer, transport=transport) as client:
            caps = await client.capabilities()
            groups = caps.operation("groups")
            assert not groups.available
            assert "Enterprise" in groups.reason
            sent_after_probe = len(transport.requests)
            for _ in range(10):
                with pytest.raises(e.Unsupported, match="Enterprise"):
                    await client.list_groups()
                with pytest.raises(e.Unsupported, match="Enterprise") as raised:
                    await client.create_group(CreateGroup(name=unique("group")))
                assert raised.value.operation == "Groups"
            after_probe = transport.requests[sent_after_probe:]
            assert after_probe == [], after_probe
        # the probe's one GET, and nothing after it
        assert transport.to(GROUPS) == [("GET", GROUPS)]

    asyncio.run(body())


# ---------------------------------------------------------------------------- 2 update user


def test_update_user_changes_only_what_is_given(
    peer: Peer, unique: Callable[[str], str], cleanup: Cleanup
) -> None:
    email = f"{unique('user')}@example.com"

    async def body() -> None:
        async with admin(peer) as client:
            roles = {role.name: role.id for role in (await client.list_users()).rootRoles}
            user_id = await new_user(client, cleanup, email, "Before")
            before = await client.get_user(user_id)
            assert before.rootRole == roles["Viewer"]

            updated = await client.update_user(user_id, UpdateUser(name="After"))
            assert updated.id == user_id
            assert updated.name == "After"
            assert updated.rootRole is None  # left out when none was sent (every version)
            after = await client.get_user(user_id)
            assert (after.name, after.email, after.rootRole) == ("After", email, roles["Viewer"])

            # by name: the answer echoes the name, a read gives the id
            echoed = await client.update_user(user_id, UpdateUser(rootRole="Editor"))
            assert echoed.rootRole == "Editor"
            after = await client.get_user(user_id)
            assert (after.name, after.email, after.rootRole) == ("After", email, roles["Editor"])

            # by id
            await client.update_user(user_id, UpdateUser(rootRole=roles["Viewer"]))
            after = await client.get_user(user_id)
            assert (after.name, after.email, after.rootRole) == ("After", email, roles["Viewer"])

            with pytest.raises(e.NotFound) as missing:
                await client.update_user(2_000_000_000, UpdateUser(name="Nobody"))
            assert missing.value.status == 404
            assert missing.value.message == "No user found"

            with pytest.raises(e.BadRequest) as bad_role:
                await client.update_user(user_id, UpdateUser(rootRole=9999))
            assert bad_role.value.status == 400
            assert "rootRole=9999" in str(bad_role.value)
            # and the failed update changed nothing
            after = await client.get_user(user_id)
            assert after.rootRole == roles["Viewer"]

    asyncio.run(body())


# ---------------------------------------------------------------------------- 3 archive


def test_archived_features_come_through_the_archive_endpoint_or_the_search_api(
    peer: Peer, unique: Callable[[str], str], cleanup: Cleanup
) -> None:
    """Before 7.0 the spec's archive endpoint; from 7.0 the search API, filtered by
    `archived=IS:true` (7.6) or `lifecycle=IS:archived` (8.0.1 and later)."""
    name = unique("archived")
    transport = CountingTransport()
    endpoint = per_version(peer, {"5.12 6.10": True, "7.6 8.2": False})

    async def body() -> None:
        async with admin(peer, transport=transport) as client:
            caps = await client.capabilities()
            assert caps.archive_endpoint is endpoint
            archived_op = caps.operation("archived_features")
            assert archived_op.available
            assert ("search" in archived_op.note) is not endpoint
            await new_feature(client, cleanup, name)
            before = datetime.now(UTC) - timedelta(minutes=1)
            await client.archive_feature("default", name)
            archived = await client.archived_features("default")
        found = [f for f in archived.features if f.name == name]
        assert len(found) == 1, [f.name for f in archived.features]
        feature = found[0]
        assert feature.project == "default"
        assert feature.type == "release"
        assert feature.archivedAt is not None
        assert before <= feature.archivedAt <= datetime.now(UTC) + timedelta(minutes=1)
        assert feature.createdAt is not None
        # one way or the other (a 429 retried may make the search two requests), never both
        assert bool(transport.to(SEARCH)) is not endpoint
        assert transport.to("/api/admin/archive/features/default") == (
            [("GET", "/api/admin/archive/features/default")] if endpoint else []
        )
        filters = {(k, v) for q in transport.queries(SEARCH) for k, v in q.items()
                   if k in ("archived", "lifecycle")}  # fmt: skip
        assert filters == per_version(peer, {
            "5.12 6.10": set(), "7.6": {("archived", "IS:true")},
            "8.2": {("lifecycle", "IS:archived")},
        })  # fmt: skip

    asyncio.run(body())


def test_feature_names_list_the_flags_of_every_project(
    peer: Peer, unique: Callable[[str], str], cleanup: Cleanup
) -> None:
    """What the metrics tool checks a batch's names against: `GET
    /api/admin/projects/:id/features` per project, archived flags left out."""
    kept, archived = unique("names-kept"), unique("names-archived")

    async def body() -> set[str]:
        async with admin(peer) as client:
            await new_feature(client, cleanup, kept)
            await new_feature(client, cleanup, archived)
            await client.archive_feature("default", archived)
            return await client.feature_names()

    names = asyncio.run(body())
    assert kept in names
    assert archived not in names


# ---------------------------------------------------------------------------- 4 dashboard


#: why an admin API token gets no dashboard: 5.12 has none at all, the others need a user
NO_DASHBOARD = "The personal dashboard needs Unleash 6.3 or later; this server is 5.12.8"


def test_dashboard_needs_a_personal_access_token(peer: Peer) -> None:
    transport = CountingTransport()
    dashboard = "/api/admin/personal-dashboard/default"
    why = per_version(peer, {"5.12": NO_DASHBOARD, "6.10 7.6 8.2": "personal access token"})

    async def body() -> None:
        async with admin(peer, transport=transport) as client:
            caps = await client.capabilities()
            assert not caps.operation("project_dashboard").available
            assert why in caps.operation("project_dashboard").reason
            with pytest.raises(e.Unsupported) as refused:
                await client.personal_dashboard("default")
            assert why in str(refused.value)
        assert transport.to(dashboard) == [("GET", dashboard)]  # the probe's, only

    asyncio.run(body())


def test_dashboard_with_a_personal_access_token(peer: Peer) -> None:
    pat = peer.require_pat()
    transport = CountingTransport()
    dashboard = "/api/admin/personal-dashboard/default"

    async def body() -> None:
        async with AdminClient(peer.url, pat, transport=transport) as client:
            caps = await client.capabilities()
            assert caps.token_kind == "personal"
            assert caps.user_name == "admin"
            assert caps.is_admin is True
            has_it = per_version(peer, {"5.12": False, "6.10 7.6 8.2": True})
            assert caps.operation("project_dashboard") == Availability(
                "project_dashboard", has_it, "" if has_it else NO_DASHBOARD
            )
            if not has_it:  # 5.12: no route (404), and nothing sent after the probe's request
                with pytest.raises(e.Unsupported, match=r"needs Unleash 6\.3"):
                    await client.personal_dashboard("default")
                assert transport.to(dashboard) == [("GET", dashboard)]
                return
            details = await client.personal_dashboard("default")
            assert isinstance(details, PersonalDashboardProjectDetails)
            assert details.onboardingStatus.status
            assert isinstance(details.owners, list) and details.owners
            assert all(event.id >= 1 for event in details.latestEvents)

            with pytest.raises(e.NotFound) as missing:
                await client.personal_dashboard(f"no-such-project-{time.time_ns()}")
            assert missing.value.status == 404
            assert "No project with id" in missing.value.message

    asyncio.run(body())


# ---------------------------------------------------------------------------- 5 context usage


def test_context_usage_lists_strategies(
    peer: Peer, unique: Callable[[str], str], cleanup: Cleanup
) -> None:
    name = unique("context")

    async def body() -> None:
        async with admin(peer) as client:
            await new_feature(client, cleanup, name)
            strategy = await client.add_strategy(
                "default",
                name,
                "development",
                CreateFeatureStrategy(
                    name="flexibleRollout",
                    constraints=[Constraint(contextName="userId", operator="IN", values=["42"])],
                    parameters={"rollout": "100", "stickiness": "default", "groupId": name},
                ),
            )
            usage = await client.context_strategies("userId")
            unknown = await client.context_strategies(f"no-such-field-{time.time_ns()}")
        ours = [s for s in usage.strategies if s.featureName == name]
        assert len(ours) == 1, usage.strategies
        assert ours[0].id == strategy.id
        assert ours[0].projectId == "default"
        assert ours[0].environment == "development"
        assert ours[0].strategyName == "flexibleRollout"
        assert unknown.strategies == []

    asyncio.run(body())


# ---------------------------------------------------------------------------- 6 inactive users


def test_inactive_users_listed_once(
    peer: Peer, unique: Callable[[str], str], cleanup: Cleanup
) -> None:
    async def body() -> tuple[int, int, int]:
        async with admin(peer) as client:
            old = await new_user(client, cleanup, f"{unique('old')}@example.com", "Old")
            twice = await new_user(client, cleanup, f"{unique('twice')}@example.com", "Twice")
            recent = await new_user(client, cleanup, f"{unique('recent')}@example.com", "Recent")
        return old, twice, recent

    old, twice, recent = asyncio.run(body())
    for user_id, days in ((old, 200), (twice, 200), (recent, 179)):
        peer.sql(
            f"UPDATE users SET seen_at = now() - interval '{days} days', "
            f"created_at = now() - interval '400 days' WHERE id = {user_id}"
        )
    # two old (and expired) personal access tokens make 8.2 list `twice` twice
    cleanup.sql.append(f"DELETE FROM personal_access_tokens WHERE user_id = {twice}")
    peer.sql(
        "INSERT INTO personal_access_tokens "
        "(secret, description, user_id, expires_at, seen_at, created_at) "
        f"SELECT 'flagdesk-compat-' || md5(random()::text), 'flagdesk compat', {twice}, "
        "now() - interval '1 day', now() - interval '300 days', now() - interval '300 days' "
        "FROM generate_series(1, 2)"
    )
    with peer.raw() as http:
        raw = http.get("/api/admin/user-admin/inactive").raise_for_status().json()
    raw_ids = [u["id"] for u in raw["inactiveUsers"]]
    assert raw_ids.count(twice) == 2, raw_ids  # the server's duplicate is really there

    async def read() -> list[int]:
        async with admin(peer) as client:
            result = await client.inactive_users()
        return [u.id for u in result.inactiveUsers]

    ids = asyncio.run(read())
    assert len(ids) == len(set(ids)), ids
    assert old in ids
    assert twice in ids
    assert recent not in ids


# ---------------------------------------------------------------------------- 7 bulk metrics


@dataclass(frozen=True)
class MetricFeatures:
    stored: str
    usage: str
    created: float

    async def settled(self) -> None:
        """Wait until the server's cache of flag names has surely seen the features."""
        await asyncio.sleep(max(0.0, self.created + FLAG_NAMES_CACHE_S + 1 - time.monotonic()))


@pytest.fixture(scope="module", autouse=True)
def metric_features(peer: Peer, unique: Callable[[str], str]) -> Iterator[MetricFeatures]:
    """The features the metrics tests count on, made when this module starts so that the flag-name
    cache has caught up by the time those tests run; removed for good at the end."""
    names = MetricFeatures(unique("metrics"), unique("usage"), time.monotonic())
    with peer.raw() as http:
        for name in (names.stored, names.usage):
            made = http.post("/api/admin/projects/default/features", json={"name": name})
            made.raise_for_status()
    yield names
    with peer.raw() as http:
        peer.remove_flags(http, [names.stored, names.usage])


def metrics_batch(feature: str, app: str, yes: int, no: int) -> BulkMetrics:
    now = datetime.now(UTC)
    return BulkMetrics(
        # Unleash answers an application without `started` or `interval` with an empty 400
        # (see test_bulk_metrics_application_needs_started_and_interval)
        applications=[
            BulkApplication(
                appName=app,
                environment="development",
                instanceId=f"{app}-1",
                interval=10_000,
                started=now,
            )
        ],
        metrics=[
            BulkMetric(
                featureName=feature,
                appName=app,
                environment="development",
                timestamp=now,
                yes=yes,
                no=no,
            )
        ],
    )


async def poll(read: Callable[[], Any], found: Callable[[Any], bool]) -> Any:
    """`await read()` every 0.5 s until `found(result)`, for at most 20 s; the last result."""
    deadline = time.monotonic() + 20
    while True:
        result = await read()
        if found(result) or time.monotonic() > deadline:
            return result
        await asyncio.sleep(0.5)


def test_bulk_metrics_are_stored(
    peer: Peer, unique: Callable[[str], str], metric_features: MetricFeatures
) -> None:
    """Sent with the client token, read back per application from the raw metrics."""
    client_token = peer.require_client_token()
    name = metric_features.stored
    app = unique("app")

    async def body() -> None:
        await metric_features.settled()
        async with admin(peer, client_token=client_token) as client:
            await client.send_bulk_metrics(metrics_batch(name, app, yes=7, no=3))
            raw = await poll(
                lambda: client.feature_metrics_raw(name),
                lambda raw: any(w.appName == app for w in raw.data),
            )
        ours = [w for w in raw.data if w.appName == app]
        assert ours, f"no counts for {app} after 20 s: {raw.data}"
        assert sum(w.yes for w in ours) == 7
        assert sum(w.no for w in ours) == 3
        assert {(w.featureName, w.environment) for w in ours} == {(name, "development")}

    asyncio.run(body())


def test_feature_usage_shows_the_last_hour(
    peer: Peer, unique: Callable[[str], str], metric_features: MetricFeatures
) -> None:
    """`lastHourUsage` is per environment (no app): the feature is this test's own, so its
    counts are ours; the app shows in `seenApplications`."""
    client_token = peer.require_client_token()
    name = metric_features.usage
    app = unique("app")

    async def body() -> None:
        await metric_features.settled()
        async with admin(peer, client_token=client_token) as client:
            await client.send_bulk_metrics(metrics_batch(name, app, yes=5, no=2))
            usage = await poll(
                lambda: client.feature_usage(name),
                lambda usage: bool(usage.lastHourUsage) and app in usage.seenApplications,
            )
        assert usage.featureName == name
        assert app in usage.seenApplications
        development = [w for w in usage.lastHourUsage if w.environment == "development"]
        assert sum(w.yes for w in development) == 5
        assert sum(w.no for w in development) == 2

    asyncio.run(body())


def test_bulk_metrics_without_a_client_token(peer: Peer) -> None:
    """Before 8.0 the client metrics endpoint takes an admin API token too (202); 8.2 refuses it
    with 403. flagdesk sends the client token on every version (`metrics_upload` needs one)."""
    takes_admin_tokens = per_version(peer, {"5.12 6.10 7.6": True, "8.2": False})

    async def body() -> None:
        async with admin(peer) as client:  # no client token: the admin token is sent
            if takes_admin_tokens:
                await client.send_bulk_metrics(EMPTY_BULK)  # accepted: a 202
                return
            with pytest.raises(e.WrongTokenType, match="client token") as raised:
                await client.send_bulk_metrics(EMPTY_BULK)
        assert raised.value.status == 403
        assert raised.value.error_id is None  # the bare {"message"} shape
        assert "expected a different token type" in raised.value.message

    asyncio.run(body())


def test_bulk_metrics_application_needs_started_and_interval(peer: Peer) -> None:
    """Not in Unleash's own OpenAPI (both are optional there): every version refuses an
    application without `started` or `interval` with a 400 and an EMPTY body (the log says
    why); 5.12 also one without `strategies`."""
    client_token = peer.require_client_token()
    now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    app = b'{"appName":"flagdesk-compat","environment":"development","instanceId":"i"'

    async def body() -> None:
        async with admin(peer, client_token=client_token) as client:
            both = b',"interval":10000,"started":"' + now.encode() + b'"'
            refused = [b"", b',"started":"' + now.encode() + b'"', b',"interval":10000']
            refused += per_version(peer, {"5.12": [both], "6.10 7.6 8.2": []})
            for fields in refused:
                batch = b'{"applications":[' + app + fields + b'}],"metrics":[]}'
                with pytest.raises(e.BadRequest) as raised:
                    await client.send_bulk_metrics(batch)
                assert raised.value.status == 400
                assert "`started` or `interval`" in str(raised.value)  # the hint explains it
            complete = both + b',"strategies":[]'
            await client.send_bulk_metrics(
                b'{"applications":[' + app + complete + b'}],"metrics":[]}'
            )

    asyncio.run(body())


# ---------------------------------------------------------------------------- error shapes


def test_unknown_token_is_unauthorized_with_an_error_id(peer: Peer) -> None:
    secret = f"flagdesk-compat-bogus-{time.time_ns()}"

    async def body() -> None:
        async with AdminClient(peer.url, f"*:*.{secret}") as client:
            with pytest.raises(e.Unauthorized) as raised:
                await client.list_users()
            with pytest.raises(e.Unauthorized):
                await client.capabilities()
        error = raised.value
        assert error.status == 401
        assert error.name == "UnauthorizedError"
        assert error.error_id  # shape 1: {id, name, message, details}
        assert error.message
        assert "token" in error.hint
        assert secret not in str(error) and secret not in repr(error)

    asyncio.run(body())


def test_client_token_on_the_admin_api_is_the_wrong_type(peer: Peer) -> None:
    client_token = peer.require_client_token()

    async def body() -> None:
        async with AdminClient(peer.url, client_token) as client:
            with pytest.raises(e.WrongTokenType) as raised:
                await client.list_users()
            caps = await client.capabilities()
        assert raised.value.status == 403
        assert raised.value.error_id is None  # shape 3: {message} only
        assert "admin API token or a personal access token" in str(raised.value)
        assert caps.token_kind == "client"
        assert [k for k, op in caps.operations.items() if op.available] == ["metrics_upload"]

    asyncio.run(body())


def test_handler_errors_have_an_id_before_7(peer: Peer) -> None:
    """5.x and 6.x give a handler's error an `id` (shape 1), 7.0 and later do not (shape 2:
    {name, message, details}); 5.12 repeats the message as each detail's `description`."""

    async def body() -> None:
        async with admin(peer) as client:
            with pytest.raises(e.NotFound) as raised:
                await client.get_user(2_000_000_000)
        error = raised.value
        assert (error.status, error.name, error.message) == (404, "NotFoundError", "No user found")
        assert (error.error_id is not None) is per_version(
            peer, {"5.12 6.10": True, "7.6 8.2": False}
        )

    asyncio.run(body())


def test_body_parser_and_validation_errors(peer: Peer) -> None:
    client_token = peer.require_client_token()
    padding = BODY_LIMIT - len(EMPTY_BULK)

    async def body() -> None:
        async with admin(peer, client_token=client_token) as client:
            await client.send_bulk_metrics(EMPTY_BULK + b" " * padding)  # exactly the limit
            with pytest.raises(e.PayloadTooLarge) as too_large:
                await client.send_bulk_metrics(EMPTY_BULK + b" " * (padding + 1))
            with pytest.raises(e.BadRequest) as malformed:
                await client.send_bulk_metrics(b'{"applications":')
            with pytest.raises(e.BadRequest) as invalid:
                await client.send_bulk_metrics(b"{}")
        assert too_large.value.status == 413
        assert too_large.value.message == "request entity too large"
        assert "larger than the server accepts" in str(too_large.value)
        assert malformed.value.status == 400 and malformed.value.message  # body-parser's {message}
        assert malformed.value.error_id is None
        assert invalid.value.status == 400 and invalid.value.error_id  # schema validation
        assert any("applications" in str(d) for d in invalid.value.details), invalid.value.details

    asyncio.run(body())
