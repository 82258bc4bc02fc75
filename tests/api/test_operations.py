"""Every AdminClient operation against a real sandbox over HTTP."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from datetime import UTC, datetime
from typing import Any, TypeVar

import httpx
import pytest

from app import __version__
from app.api import errors as e
from app.api.client import AdminClient, delete_inactive_users_request
from app.api.models import (
    ROLE_TYPES,
    BulkApplication,
    BulkMetric,
    BulkMetrics,
    Constraint,
    CreateFeature,
    CreateFeatureStrategy,
    CreateGroup,
    CreateGroupMember,
    CreateUser,
    UpdateUser,
    UserOwner,
    UserRef,
)
from sandbox.process import SandboxProcess
from tests.conftest import known_flags

T = TypeVar("T")
PersonalToken = Callable[[SandboxProcess, str], str]


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def with_client(
    sb: SandboxProcess,
    job: Callable[[AdminClient], Awaitable[T]],
    token: str | None = None,
    client_token: str | None = None,
) -> T:
    async def go() -> T:
        async with AdminClient(
            sb.url, token or sb.admin_token, client_token=client_token
        ) as client:
            return await job(client)

    return run(go())


# ---------------------------------------------------------------------------- reads


def test_server_reads(demo_sandbox: SandboxProcess) -> None:
    async def job(c: AdminClient) -> tuple[Any, ...]:
        return await asyncio.gather(c.health(), c.ui_config(), c.current_user())

    health, ui, me = with_client(demo_sandbox, job)
    assert health.health == "GOOD"
    assert ui.name == "flagdesk sandbox" and ui.version == __version__
    assert me.user["type"] == "admin"
    assert [p.permission for p in me.permissions] == ["ADMIN"]
    assert demo_sandbox.admin_token not in repr(me)


def test_users_with_their_root_roles(demo_sandbox: SandboxProcess) -> None:
    users = with_client(demo_sandbox, lambda c: c.list_users())
    roles = {r.id: r.name for r in users.rootRoles}
    assert {"Admin", "Editor", "Viewer"} <= set(roles.values())
    by_name = {u.username: u for u in users.users}
    assert roles[by_name["amara.okafor"].rootRole] == "Admin"  # type: ignore[index]
    assert roles[by_name["jonas.muller"].rootRole] == "Editor"  # type: ignore[index]
    assert by_name["sofia.mendes"].scimId
    one = with_client(demo_sandbox, lambda c: c.get_user(by_name["amara.okafor"].id))
    assert one.email == by_name["amara.okafor"].email


def test_projects_groups_and_context_fields(demo_sandbox: SandboxProcess) -> None:
    async def job(c: AdminClient) -> tuple[Any, ...]:
        return await asyncio.gather(c.list_projects(), c.list_groups(), c.list_context_fields())

    projects, groups, fields = with_client(demo_sandbox, job)
    assert sorted(p.id for p in projects.projects) == ["default", "mobile-app", "payments",
                                                       "web-shop"]  # fmt: skip
    assert {"Platform team", "Checkout squad", "Support"} <= {g.name for g in groups.groups}
    region = next(f for f in fields if f.name == "region")
    assert len(region.legalValues) == 4


def test_inactive_users(demo_sandbox: SandboxProcess) -> None:
    inactive = with_client(demo_sandbox, lambda c: c.inactive_users())
    ids = [u.id for u in inactive.inactiveUsers]
    assert len(ids) == 12 and len(set(ids)) == 12
    names = {u.username for u in inactive.inactiveUsers}
    assert "ravi.kumar" not in names  # his personal access token keeps him active
    now = datetime.now(UTC)
    assert all(u.seenAt is None or (now - u.seenAt).days >= 180 for u in inactive.inactiveUsers)


def test_delete_inactive_users(sandbox: SandboxProcess) -> None:
    async def job(c: AdminClient) -> tuple[int, set[int], set[int]]:
        before = {u.id for u in (await c.inactive_users()).inactiveUsers}
        status = await c.delete_inactive_users([39, 43])
        after = {u.id for u in (await c.inactive_users()).inactiveUsers}
        return status, before, after

    status, before, after = with_client(sandbox, job)
    assert status == 200 and {39, 43} <= before and after == before - {39, 43}


def test_delete_inactive_users_errors(
    sandbox: SandboxProcess, personal_token: PersonalToken
) -> None:
    async def unknown(c: AdminClient) -> e.ClientError:
        with pytest.raises(e.NotFound) as caught:
            await c.delete_inactive_users([99999])
        return caught.value

    error = with_client(sandbox, unknown)
    assert str(error) == (
        "404 NotFoundError (POST /api/admin/user-admin/inactive/delete): "
        "No user found with id 99999"
    )

    async def editor(c: AdminClient) -> e.ClientError:
        with pytest.raises(e.Unsupported) as caught:
            await c.delete_inactive_users([39])
        return caught.value

    refused = with_client(sandbox, editor, token=personal_token(sandbox, "greta.schmidt"))
    assert str(refused).startswith("Delete inactive users: ")
    assert "Admin root role" in str(refused)
    assert 39 in {u.id for u in with_client(sandbox, lambda c: c.inactive_users()).inactiveUsers}


def test_delete_inactive_users_request_is_the_bytes_sent() -> None:
    request = delete_inactive_users_request([39, 43])
    assert (request.method, request.path, request.body) == (
        "POST", "/api/admin/user-admin/inactive/delete", b'{"ids":[39,43]}')  # fmt: skip
    assert request.describe() == {"method": "POST", "path": request.path}
    for bad in ([-1], ["leon"], [1.5]):
        with pytest.raises(ValueError, match="user ids are whole numbers from 0"):
            delete_inactive_users_request(bad)  # type: ignore[list-item]


def test_archived_features_from_the_spec_endpoint(demo_sandbox: SandboxProcess) -> None:
    async def job(c: AdminClient) -> tuple[Any, ...]:
        caps = await c.capabilities()
        projects = await c.list_projects()
        archives = await asyncio.gather(*(c.archived_features(p.id) for p in projects.projects))
        return caps, archives

    caps, archives = with_client(demo_sandbox, job)
    assert caps.archive_endpoint is True
    features = [f for archive in archives for f in archive.features]
    assert len(features) == 15
    assert all(f.archivedAt is not None and f.project for f in features)
    for archive in archives:
        stamps = [f.archivedAt for f in archive.features]
        assert stamps == sorted(stamps, reverse=True)  # type: ignore[type-var]


def test_personal_dashboard(demo_sandbox: SandboxProcess, personal_token: PersonalToken) -> None:
    token = personal_token(demo_sandbox, "farid.haddad")
    dashboard = with_client(demo_sandbox, lambda c: c.personal_dashboard("web-shop"), token)
    assert dashboard.onboardingStatus.status == "onboarded"
    assert any(isinstance(o, UserOwner) and "Farid" in o.name for o in dashboard.owners)
    assert dashboard.latestEvents and all(ev.createdBy for ev in dashboard.latestEvents)
    assert {r.type for r in dashboard.roles} <= set(ROLE_TYPES)
    payments = with_client(demo_sandbox, lambda c: c.personal_dashboard("payments"), token)
    assert payments.onboardingStatus.status == "first-flag-created"
    owners = with_client(demo_sandbox, lambda c: c.personal_dashboard("mobile-app"), token)
    assert [o.ownerType for o in owners.owners] == ["system"]
    with pytest.raises(e.NotFound):
        with_client(demo_sandbox, lambda c: c.personal_dashboard("no-such-project"), token)


def test_context_strategies(demo_sandbox: SandboxProcess) -> None:
    async def job(c: AdminClient) -> tuple[Any, ...]:
        return await asyncio.gather(
            c.context_strategies("region"),
            c.context_strategies("tenantId"),
            c.context_strategies("no such field at all"),
        )

    region, tenant, unknown = with_client(demo_sandbox, job)
    assert region.strategies and all(s.featureName and s.projectId for s in region.strategies)
    assert tenant.strategies == [] and unknown.strategies == []


# ---------------------------------------------------------------------------- writes


def test_create_group_then_conflict_and_bad_member(sandbox: SandboxProcess) -> None:
    async def job(c: AdminClient) -> tuple[Any, ...]:
        users = await c.list_users()
        member = users.users[0]
        created = await c.create_group(
            CreateGroup(
                name="Release managers",
                description="Ship it\non time",
                mappingsSSO=["okta-release"],
                users=[CreateGroupMember(user=UserRef(id=member.id))],
            )
        )
        outcomes = []
        for group in (
            CreateGroup(name="Release managers"),
            CreateGroup(name="Ghosts", users=[CreateGroupMember(user=UserRef(id=99999))]),
        ):
            try:
                await c.create_group(group)
            except e.ClientError as error:
                outcomes.append(error)
        return member, created, outcomes

    member, created, (conflict, bad) = with_client(sandbox, job)
    assert created.id and created.name == "Release managers"
    assert created.mappingsSSO == ["okta-release"]
    assert [m.user.id for m in created.users] == [member.id]
    assert created.users[0].joinedAt is not None
    assert isinstance(conflict, e.Conflict) and conflict.status == 409
    assert conflict.name == "NameExistsError" and "Release managers" in conflict.message
    assert isinstance(bad, e.BadRequest) and bad.status == 400
    assert bad.details and bad.details[0].path == "users[0].user.id"


def test_update_user_sends_only_what_changed(sandbox: SandboxProcess) -> None:
    async def job(c: AdminClient) -> tuple[Any, ...]:
        users = await c.list_users()
        roles = {r.name: r.id for r in users.rootRoles}
        target = next(u for u in users.users if u.username == "jonas.muller")
        renamed = await c.update_user(target.id, UpdateUser(name="Jonas M."))
        promoted = await c.update_user(target.id, UpdateUser(rootRole="Admin"))
        by_id = await c.update_user(target.id, UpdateUser(rootRole=roles["Viewer"]))
        again = await c.get_user(target.id)
        errors = []
        for user_id, changes in (
            (99999, UpdateUser(name="nobody")),
            (target.id, UpdateUser.model_construct(email="not-an-email")),
        ):
            try:
                await c.update_user(user_id, changes)
            except e.ClientError as error:
                errors.append(error)
        return target, roles, renamed, promoted, by_id, again, errors

    target, roles, renamed, promoted, by_id, again, (missing, invalid) = with_client(sandbox, job)
    assert renamed.name == "Jonas M." and renamed.email == target.email
    assert renamed.rootRole == roles["Editor"]  # untouched: not sent
    assert promoted.rootRole in (roles["Admin"], "Admin")
    assert by_id.rootRole == roles["Viewer"] and again.rootRole == roles["Viewer"]
    assert again.name == "Jonas M."
    assert isinstance(missing, e.NotFound) and missing.status == 404
    assert isinstance(invalid, e.BadRequest)
    assert any(d.path == "email" for d in invalid.details), invalid.details


def test_create_user(sandbox: SandboxProcess) -> None:
    created = with_client(
        sandbox,
        lambda c: c.create_user(CreateUser(email="new.person@example.com", name="New Person")),
    )
    assert created.id and created.email == "new.person@example.com"


def test_features_archive_and_strategies(sandbox: SandboxProcess) -> None:
    async def job(c: AdminClient) -> tuple[Any, ...]:
        feature = await c.create_feature(
            "default", CreateFeature(name="checkout.one-click", type="experiment")
        )
        strategy = await c.add_strategy(
            "default",
            feature.name,
            "production",
            CreateFeatureStrategy(
                constraints=[Constraint(contextName="tenantId", operator="IN", values=["acme"])],
                parameters={"rollout": "50", "stickiness": "default", "groupId": feature.name},
            ),
        )
        usage = await c.context_strategies("tenantId")
        await c.archive_feature("default", feature.name)
        archive = await c.archived_features("default")
        return feature, strategy, usage, archive

    feature, strategy, usage, archive = with_client(sandbox, job)
    assert feature.name == "checkout.one-click" and feature.type == "experiment"
    assert strategy.id and strategy.constraints[0]["contextName"] == "tenantId"
    assert [(s.featureName, s.environment) for s in usage.strategies] == [
        ("checkout.one-click", "production")
    ]
    assert archive.features[0].name == "checkout.one-click"


def test_feature_names_are_the_flags_not_archived_of_every_project(
    sandbox: SandboxProcess,
) -> None:
    async def job(c: AdminClient) -> tuple[set[str], set[str], set[str]]:
        before = await c.feature_names()
        await c.create_feature("default", CreateFeature(name="names.kept"))
        await c.create_feature("default", CreateFeature(name="names.archived"))
        await c.archive_feature("default", "names.archived")
        projects = {p.id for p in (await c.list_projects()).projects}
        listed = {f.name for p in sorted(projects) for f in (await c.project_features(p)).features}
        return before, await c.feature_names(), listed

    before, after, listed = with_client(sandbox, job)
    assert after == before | {"names.kept"}  # the archived flag is not a name it knows
    assert after == listed
    assert len(before) > 5  # the demo's flags, in more than one project


def test_bulk_metrics_with_the_client_token(sandbox: SandboxProcess) -> None:
    hour = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    batch = BulkMetrics(
        applications=[
            BulkApplication(
                appName="checkout-web",
                environment="development",
                instanceId="i-1",
                started=hour,
                interval=15,
            )
        ],
        metrics=[
            BulkMetric(
                featureName="checkout.express-pay",
                appName="checkout-web",
                environment="development",
                timestamp=hour,
                yes=7,
                no=3,
                variants={"blue": 2},
            )
        ],
    )

    async def job(c: AdminClient) -> Any:
        await c.send_bulk_metrics(batch)
        return await c.feature_usage("checkout.express-pay"), await c.feature_metrics_raw(
            "checkout.express-pay", 2
        )

    known_flags(sandbox, ["checkout.express-pay"])  # the sandbox drops metrics of unknown flags
    usage, raw = with_client(sandbox, job, client_token=sandbox.client_token)
    window = next(w for w in usage.lastHourUsage if w.appName == "checkout-web")
    assert (window.yes, window.no, window.variants) == (7, 3, {"blue": 2})
    assert any(w.appName == "checkout-web" and w.yes == 7 for w in raw.data)


def test_bulk_metrics_refuse_the_admin_token(sandbox: SandboxProcess) -> None:
    with pytest.raises(e.WrongTokenType) as info:
        with_client(sandbox, lambda c: c.send_bulk_metrics(b'{"applications":[],"metrics":[]}'))
    assert info.value.status == 403
    assert "client token" in str(info.value)


def test_a_wrong_token_is_unauthorized_without_the_token(demo_sandbox: SandboxProcess) -> None:
    token = "*:*.0123456789abcdef-not-the-token"
    with pytest.raises(e.Unauthorized) as info:
        with_client(demo_sandbox, lambda c: c.list_projects(), token)
    assert info.value.status == 401 and info.value.name == "AuthenticationRequired"
    assert info.value.error_id
    assert token not in str(info.value) and token not in repr(info.value)


# ---------------------------------------------------------------------------- capabilities


def test_capabilities_of_the_admin_token(demo_sandbox: SandboxProcess) -> None:
    caps = with_client(demo_sandbox, lambda c: c.capabilities(), None, demo_sandbox.client_token)
    assert (caps.server_kind, caps.server_version) == ("sandbox", __version__)
    assert caps.server_label == f"flagdesk sandbox {__version__}"
    assert (caps.token_kind, caps.is_admin, caps.archive_endpoint) == ("admin", True, True)
    # everything but the connected user's own tokens: an admin API token has no user
    pats = caps.operations.pop("personal_tokens")
    assert not pats.available and "personal access token" in pats.reason, pats
    assert all(a.available for a in caps.operations.values()), caps.operations


def test_capabilities_without_a_client_token(demo_sandbox: SandboxProcess) -> None:
    caps = with_client(demo_sandbox, lambda c: c.capabilities())
    upload = caps.operation("metrics_upload")
    assert not upload.available and "client" in upload.reason


def test_capabilities_of_a_personal_token_without_admin_role(
    demo_sandbox: SandboxProcess, personal_token: PersonalToken
) -> None:
    token = personal_token(demo_sandbox, "jonas.muller")  # an Editor
    caps = with_client(demo_sandbox, lambda c: c.capabilities(), token)
    assert caps.token_kind == "personal" and caps.user_name and "Jonas" in caps.user_name
    assert caps.is_admin is False
    for key in ("users", "inactive_users"):
        assert not caps.operation(key).available
        assert "Admin root role" in caps.operation(key).reason
    assert caps.operation("project_dashboard").available
    assert caps.operation("context_usage").available


def test_capabilities_of_a_client_token(demo_sandbox: SandboxProcess) -> None:
    caps = with_client(demo_sandbox, lambda c: c.capabilities(), demo_sandbox.client_token)
    assert caps.token_kind == "client"
    assert caps.operation("metrics_upload").available
    others = [a for k, a in caps.operations.items() if k != "metrics_upload"]
    assert others and all(not a.available and "client token" in a.reason for a in others)


def test_the_probe_sends_its_reads_at_once(demo_sandbox: SandboxProcess) -> None:
    """The probe's first read (ui-config) goes out with the others, not before them: one round
    trip on the way to the window's first data, not two."""
    peak = []

    async def probe(client: AdminClient) -> None:
        client.on_activity = peak.append
        await client.capabilities(refresh=True)

    with_client(demo_sandbox, probe, None, demo_sandbox.client_token)
    # ui-config, the current user, groups, the archive, the dashboard, the empty metrics batch,
    # the roles, the service accounts and project access (issue 36), the banners (issue 38)
    assert max(peak) == 10, peak


def test_a_client_token_probe_leaves_no_read_running(demo_sandbox: SandboxProcess) -> None:
    """With a client token the first answer ends the probe; the reads sent with it are stopped
    (and waited for) before the probe returns."""
    in_flight = []

    async def probe(client: AdminClient) -> int:
        client.on_activity = in_flight.append
        caps = await client.capabilities(refresh=True)
        assert caps.token_kind == "client"
        return len(asyncio.all_tasks()) - 1  # this one

    assert with_client(demo_sandbox, probe, demo_sandbox.client_token) == 0
    assert in_flight[-1] == 0, in_flight


def test_deleting_inactive_users_waits_longer_for_its_answer(sandbox: SandboxProcess) -> None:
    """Unleash deletes the users one by one before it answers (8.2: 40 s for 1,000, past the
    usual 30 s): the deletion's answer may take `DELETE_S_PER_USER` longer a user. A proxy to
    the sandbox holds each write's answer 1 s; with a 0.5 s answer time, deleting 12 users
    (0.5 + 1.2 s allowed) is answered, while an edit's answer times out at 0.5 s."""
    from app.api.client import DELETE_S_PER_USER
    from app.api.models import UpdateUser
    from tests.faults import Decide, FaultServer, Reply, Seen

    assert DELETE_S_PER_USER == 0.1

    async def scenario() -> tuple[int, e.ClientError, set[int]]:
        async with httpx.AsyncClient(base_url=sandbox.url) as upstream:

            async def slow(seen: Seen) -> Reply:
                headers = {k: v for k, v in seen.headers.items()
                           if k in ("authorization", "content-type")}  # fmt: skip
                answer = await upstream.request(seen.method, seen.target, headers=headers,
                                                content=seen.body)  # fmt: skip
                if seen.method != "GET":
                    await asyncio.sleep(1.0)
                kind = answer.headers.get("content-type", "application/json")
                return Reply(answer.status_code, answer.content, {"Content-Type": kind})

            async with (
                FaultServer(Decide(slow)) as proxy,
                AdminClient(proxy.url, sandbox.admin_token, read_timeout=0.5) as c,
            ):
                ids = [u.id for u in (await c.inactive_users()).inactiveUsers]
                assert len(ids) == 12
                status = await c.delete_inactive_users(ids)
                with pytest.raises(e.TimedOut) as timed_out:
                    await c.update_user(2, UpdateUser(name="Slow"))
                left = {u.id for u in (await c.inactive_users()).inactiveUsers}
        return status, timed_out.value, left

    status, error, left = run(scenario())
    assert status == 200 and left == set()
    assert isinstance(error, e.TimedOut) and error.reason == "no answer within 0.5 s"
