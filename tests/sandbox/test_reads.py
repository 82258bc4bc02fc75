"""Endpoints 3 to 6: archived features, dashboard, context-field strategies, inactive users."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
import pytest

from app.api.models import (
    ArchivedFeatures,
    ContextFieldStrategies,
    GroupOwner,
    InactiveUsers,
    OnboardingStatusFirstFlag,
    OnboardingStatusPlain,
    PersonalDashboardProjectDetails,
    SystemOwner,
    UserList,
    UserOwner,
)
from tests.sandbox.conftest import assert_error

ADMIN_READS = [
    "/api/admin/archive/features/web-shop",
    "/api/admin/personal-dashboard/web-shop",
    "/api/admin/context/region/strategies",
    "/api/admin/user-admin/inactive",
]


@pytest.mark.parametrize("path", ADMIN_READS)
def test_reads_need_an_admin_side_token(demo_sandbox, path):
    assert_error(httpx.get(demo_sandbox.url + path), 401, "AuthenticationRequired")
    assert_error(
        httpx.get(demo_sandbox.url + path, headers={"Authorization": "x"}),
        401,
        "AuthenticationRequired",
    )
    with demo_sandbox.client() as http:
        assert_error(http.get(path), 403, "NoAccessError")


# ------------------------------------------------------------------ 3: archived features


def test_archived_features_envelope_and_fields(demo_sandbox):
    with demo_sandbox.admin() as http:
        r = http.get("/api/admin/archive/features/web-shop")
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    archive = ArchivedFeatures.model_validate(r.json())
    assert archive.version == 1
    assert len(archive.features) >= 5
    now = datetime.now(UTC)
    for f in archive.features:
        assert f.project == "web-shop"
        assert f.archivedAt is not None and f.createdAt is not None
        assert f.archivedAt >= f.createdAt
        raw = next(x for x in r.json()["features"] if x["name"] == f.name)
        assert {e["name"] for e in raw["environments"]} == {"development", "production"}
        age = now - f.createdAt
        expected = {"release": 40, "experiment": 40, "operational": 7}.get(f.type or "")
        assert f.stale == (expected is not None and age > timedelta(days=expected)), f
        seen = [e["lastSeenAt"] for e in raw["environments"] if e["lastSeenAt"]]
        assert (raw["lastSeenAt"] is None) == (not seen)
    assert any(x["lastSeenAt"] for x in r.json()["features"]), "demo has sightings"
    total = sum(
        len(
            ArchivedFeatures.model_validate(
                http_get(demo_sandbox, f"/api/admin/archive/features/{p}")
            ).features
        )
        for p in ("default", "web-shop", "payments", "mobile-app")
    )
    assert total == 15


def http_get(sb, path):
    with sb.admin() as http:
        return http.get(path).json()


def test_archive_of_unknown_project_is_empty(demo_sandbox):
    assert http_get(demo_sandbox, "/api/admin/archive/features/no-such-project") == {
        "version": 1,
        "features": [],
    }


def test_archiving_shows_up_with_last_seen_from_metrics(sandbox):
    with sandbox.admin() as admin, sandbox.client() as client:
        r = admin.post(
            "/api/admin/projects/mobile-app/features",
            json={"name": "push-v2", "type": "kill-switch"},
        )
        assert r.status_code == 201, r.text
        metric = {
            "featureName": "push-v2",
            "appName": "ios",
            "environment": "production",
            "yes": 3,
            "no": 1,
        }
        assert (
            client.post(
                "/api/client/metrics/bulk", json={"applications": [], "metrics": [metric]}
            ).status_code
            == 202
        )
        assert admin.delete("/api/admin/projects/mobile-app/features/push-v2").status_code == 202
        raw = admin.get("/api/admin/archive/features/mobile-app").json()
    [f] = ArchivedFeatures.model_validate(raw).features
    assert f.name == "push-v2" and f.stale is False  # kill switches never go stale
    envs = {e["name"]: e for e in raw["features"][0]["environments"]}
    assert envs["production"]["lastSeenAt"] is not None
    assert envs["development"]["lastSeenAt"] is None
    assert raw["features"][0]["lastSeenAt"] == envs["production"]["lastSeenAt"]


# ------------------------------------------------------------------ 4: dashboard


def test_dashboard_of_an_onboarded_project(demo_sandbox):
    with demo_sandbox.admin() as http:
        r = http.get("/api/admin/personal-dashboard/web-shop")
    assert r.status_code == 200
    d = PersonalDashboardProjectDetails.model_validate(r.json())
    assert isinstance(d.onboardingStatus, OnboardingStatusPlain)
    assert d.onboardingStatus.status == "onboarded"
    assert len(d.latestEvents) == 10
    ids = [e.id for e in d.latestEvents]
    assert ids == sorted(ids, reverse=True)
    assert all(e.summary and "**" in e.summary for e in d.latestEvents)
    users = [o for o in d.owners if isinstance(o, UserOwner)]
    groups = [o for o in d.owners if isinstance(o, GroupOwner)]
    assert len(users) == 2 and all(u.email for u in users)
    assert [g.name for g in groups] == ["Checkout squad"]
    # the admin token acts as the admin user: a Member of web-shop, and root Admin
    assert {(x.name, x.type) for x in d.roles} == {("Member", "project"), ("Admin", "root")}


def test_dashboard_onboarding_started_has_the_system_owner(demo_sandbox):
    d = PersonalDashboardProjectDetails.model_validate(
        http_get(demo_sandbox, "/api/admin/personal-dashboard/mobile-app")
    )
    assert d.onboardingStatus.status == "onboarding-started"
    assert len(d.owners) == 1 and isinstance(d.owners[0], SystemOwner)
    assert d.latestEvents == []


def test_dashboard_first_flag_created(demo_sandbox):
    d = PersonalDashboardProjectDetails.model_validate(
        http_get(demo_sandbox, "/api/admin/personal-dashboard/payments")
    )
    assert isinstance(d.onboardingStatus, OnboardingStatusFirstFlag)
    assert d.onboardingStatus.feature


def test_dashboard_of_unknown_project_is_404(demo_sandbox):
    with demo_sandbox.admin() as http:
        assert_error(http.get("/api/admin/personal-dashboard/nope"), 404, "NotFoundError")


def test_dashboard_roles_follow_the_token(sandbox, personal_token):
    token = personal_token(sandbox, "farid.haddad")  # owner of web-shop, in two groups
    r = httpx.get(
        sandbox.url + "/api/admin/personal-dashboard/web-shop", headers={"Authorization": token}
    )
    roles = {(x["name"], x["type"]) for x in r.json()["roles"]}
    assert ("Owner", "project") in roles and ("Member", "project") in roles


# ------------------------------------------------------------------ 5: context strategies


def test_context_strategies(demo_sandbox):
    found = {}
    for field in ("userId", "appName", "region"):
        s = ContextFieldStrategies.model_validate(
            http_get(demo_sandbox, f"/api/admin/context/{field}/strategies")
        )
        assert s.strategies, field
        for item in s.strategies:
            assert item.id and item.featureName and item.projectId and item.environment
            assert item.strategyName == "flexibleRollout"
        found[field] = s
    assert len({s.projectId for s in found["region"].strategies}) >= 2


def test_context_strategies_unknown_or_unused_field_is_empty(demo_sandbox):
    for field in ("no-such-field", "tenantId"):
        assert http_get(demo_sandbox, f"/api/admin/context/{field}/strategies") == {
            "strategies": []
        }


def test_a_new_constrained_strategy_is_listed(sandbox):
    with sandbox.admin() as http:
        http.post("/api/admin/projects/default/features", json={"name": "geo-banner"})
        r = http.post(
            "/api/admin/projects/default/features/geo-banner/environments/production/strategies",
            json={
                "name": "default",
                "constraints": [{"contextName": "tenantId", "operator": "IN", "values": ["acme"]}],
            },
        )
        assert r.status_code == 200, r.text
        s = http.get("/api/admin/context/tenantId/strategies").json()["strategies"]
    assert s == [
        {
            "id": r.json()["id"],
            "featureName": "geo-banner",
            "projectId": "default",
            "environment": "production",
            "strategyName": "default",
        }
    ]


# ------------------------------------------------------------------ 6: inactive users


def test_inactive_users_of_the_demo(demo_sandbox):
    r = http_get(demo_sandbox, "/api/admin/user-admin/inactive")
    inactive = InactiveUsers.model_validate(r)
    assert inactive.version == 1
    assert len(inactive.inactiveUsers) == 12
    assert len({u.id for u in inactive.inactiveUsers}) == 12
    cutoff = datetime.now(UTC) - timedelta(days=180)
    never = [u for u in inactive.inactiveUsers if u.seenAt is None]
    assert len(never) == 4 and all(u.createdAt < cutoff for u in never)
    assert all(u.seenAt < cutoff for u in inactive.inactiveUsers if u.seenAt)
    names = {u.username for u in inactive.inactiveUsers}
    assert "ci-deploy-bot" not in names  # service accounts are excluded
    # kept active by a personal access token used 3 days ago, despite a login 420 days ago
    users = UserList.model_validate(http_get(demo_sandbox, "/api/admin/user-admin")).users
    pat_user = next(u for u in users if u.username == "ravi.kumar")
    assert pat_user.seenAt < cutoff and "ravi.kumar" not in names


def test_inactive_days_threshold(tmp_path):
    from sandbox.process import SandboxProcess

    with SandboxProcess(tmp_path / "x.sqlite3", "--inactive-days", "30") as sb:
        inactive = InactiveUsers.model_validate(http_get(sb, "/api/admin/user-admin/inactive"))
    assert len(inactive.inactiveUsers) > 12


def test_using_a_personal_token_makes_a_user_active(sandbox, personal_token):
    def names():
        inactive = http_get(sandbox, "/api/admin/user-admin/inactive")["inactiveUsers"]
        return {u["username"] for u in inactive}

    assert "leon.weber" in names()
    token = personal_token(sandbox, "leon.weber")
    httpx.get(sandbox.url + "/api/admin/projects", headers={"Authorization": token})
    assert "leon.weber" not in names()
