"""The archive's actions as Unleash 8.2 answers them (its `ArchiveController` and
`ProjectArchiveController`): revive and delete one flag by name, revive, delete and archive a
project's many in one request; 200 (202 for archiving) with no body, 400 for a body unlike
`batchFeaturesSchema` and for a flag of another project, 401/403, 404 for an unknown flag (revive)
or project (bulk revive); what is left alone (unknown names, flags that are not archived); an
event per flag with its project; state read back over HTTP."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from app.api.models import ArchivedFeatures, FeatureList, PersonalDashboardProjectDetails
from sandbox.process import SandboxProcess
from tests.sandbox.conftest import assert_error
from tests.sandbox.test_inactive_delete import sql

PersonalToken = Callable[[SandboxProcess, str], str]


def archived(http: httpx.Client, project: str) -> list[str]:
    body = ArchivedFeatures.model_validate(
        http.get(f"/api/admin/archive/features/{project}").json()
    )
    return [f.name for f in body.features]


def live(http: httpx.Client, project: str) -> set[str]:
    body = FeatureList.model_validate(http.get(f"/api/admin/projects/{project}/features").json())
    return {f.name for f in body.features}


def events(sb: SandboxProcess, kind: str) -> list[tuple[object, ...]]:
    return sql(sb, "SELECT project, feature, summary FROM events WHERE type = ? ORDER BY id", kind)


def test_revive_one_turns_its_environments_off_and_records_an_event(
    sandbox: SandboxProcess,
) -> None:
    with sandbox.admin() as http:
        name = archived(http, "web-shop")[0]
        sql(sandbox, "UPDATE feature_environments SET enabled = 1 WHERE feature = ?", name)
        r = http.post(f"/api/admin/archive/revive/{name}")
        assert (r.status_code, r.content) == (200, b"")
        assert name not in archived(http, "web-shop") and name in live(http, "web-shop")
    assert sql(sandbox, "SELECT DISTINCT enabled FROM feature_environments WHERE feature = ?",
               name) == [(0,)]  # fmt: skip
    assert events(sandbox, "feature-revived") == [
        ("web-shop", name, f"**admin** revived feature flag `{name}` in project **web-shop**")
    ]
    # the project dashboard's latest events show it
    with sandbox.admin() as http:
        board = PersonalDashboardProjectDetails.model_validate(
            http.get("/api/admin/personal-dashboard/web-shop").json()
        )
    assert board.latestEvents[0].summary == events(sandbox, "feature-revived")[0][2]


def test_revive_one_unknown_is_404_and_a_live_one_is_revived_all_the_same(
    sandbox: SandboxProcess,
) -> None:
    with sandbox.admin() as http:
        error = assert_error(http.post("/api/admin/archive/revive/no-such-flag"), 404,
                             "NotFoundError")  # fmt: skip
        assert error["message"] == "No feature flag found"
        name = sorted(live(http, "payments"))[0]
        sql(sandbox, "UPDATE feature_environments SET enabled = 1 WHERE feature = ?", name)
        # Unleash 8.2 does not check that the flag is archived: it turns its environments off
        assert http.post(f"/api/admin/archive/revive/{name}").status_code == 200
        assert name in live(http, "payments")
    assert sql(sandbox, "SELECT DISTINCT enabled FROM feature_environments WHERE feature = ?",
               name) == [(0,)]  # fmt: skip


def test_delete_one_for_good_and_what_is_left_alone(sandbox: SandboxProcess) -> None:
    with sandbox.admin() as http:
        name = archived(http, "default")[0]
        r = http.delete(f"/api/admin/archive/{name}")
        assert (r.status_code, r.content) == (200, b"")
        assert name not in archived(http, "default") and name not in live(http, "default")
        # unknown, or not archived: 200 and nothing changes
        kept = sorted(live(http, "default"))[0]
        assert http.delete("/api/admin/archive/no-such-flag").status_code == 200
        assert http.delete(f"/api/admin/archive/{kept}").status_code == 200
        assert kept in live(http, "default")
    for table in ("features", "feature_environments", "strategies"):
        column = "name" if table == "features" else "feature"
        assert sql(sandbox, f"SELECT 1 FROM {table} WHERE {column} = ?", name) == []
    assert events(sandbox, "feature-deleted") == [
        ("default", name, f"**admin** deleted feature flag `{name}` in project **default**")
    ]


def test_bulk_revive_delete_and_archive_again(sandbox: SandboxProcess) -> None:
    with sandbox.admin() as http:
        first, second, *rest = archived(http, "web-shop")
        r = http.post("/api/admin/projects/web-shop/revive",
                      json={"features": [first, second, "no-such-flag"]})  # fmt: skip
        assert (r.status_code, r.content) == (200, b"")
        assert {first, second} <= live(http, "web-shop")
        assert archived(http, "web-shop") == rest
        # the inverse of a revive: archive them again, 202
        r = http.post("/api/admin/projects/web-shop/archive", json={"features": [first, second]})
        assert (r.status_code, r.content) == (202, b"")
        assert set(archived(http, "web-shop")) == {first, second, *rest}
        r = http.post("/api/admin/projects/web-shop/delete",
                      json={"features": [first, second, "no-such-flag"], "extra": 1})  # fmt: skip
        assert (r.status_code, r.content) == (200, b"")
        assert archived(http, "web-shop") == rest
        assert not {first, second} & live(http, "web-shop")
        # an empty list, and flags that are not archived: 200, nothing changes
        flag = sorted(live(http, "web-shop"))[0]
        for verb in ("revive", "delete"):
            assert http.post(f"/api/admin/projects/web-shop/{verb}",
                             json={"features": [flag]}).status_code == 200  # fmt: skip
            assert http.post(f"/api/admin/projects/web-shop/{verb}",
                             json={"features": []}).status_code == 200  # fmt: skip
        assert flag in live(http, "web-shop") and archived(http, "web-shop") == rest
    assert [e[:2] for e in events(sandbox, "feature-revived")] == [
        ("web-shop", first), ("web-shop", second)]  # fmt: skip
    assert [e[:2] for e in events(sandbox, "feature-deleted")] == [
        ("web-shop", first), ("web-shop", second)]  # fmt: skip
    archived_again = [e[:2] for e in events(sandbox, "feature-archived")][-2:]
    assert archived_again == [("web-shop", first), ("web-shop", second)]


def test_bulk_refusals_change_nothing(demo_sandbox: SandboxProcess) -> None:
    with demo_sandbox.admin() as http:
        web, pay = archived(http, "web-shop"), archived(http, "payments")
        for verb in ("revive", "delete", "archive"):
            path = f"/api/admin/projects/web-shop/{verb}"
            # a flag of another project: 403 (as 5.12, 6.10, 7.6 and 8.2 answer), Unleash's
            # message, nothing done
            error = assert_error(http.post(path, json={"features": [web[0], pay[0]]}), 403,
                                 "InvalidOperationError")  # fmt: skip
            assert error["message"] == (
                "The operation could not be completed. The features exist, but the provided "
                'project ids ("payments") does not match the project provided in request URL '
                '("web-shop").'
            )
            for body in ({}, {"features": "x"}, {"features": [1]}):
                assert_error(http.post(path, json=body), 400, "ValidationError")
        unknown = http.post("/api/admin/projects/no-such/revive", json={"features": [web[0]]})
        error = assert_error(unknown, 404, "NotFoundError")
        assert error["message"] == "Active project with id no-such does not exist"
        # an unknown project names no flag of its own: nothing to delete, 200 (as Unleash)
        assert http.post("/api/admin/projects/no-such/delete",
                         json={"features": ["no-such-flag"]}).status_code == 200  # fmt: skip
        assert archived(http, "web-shop") == web and archived(http, "payments") == pay


def test_who_may(demo_sandbox: SandboxProcess, personal_token: PersonalToken) -> None:
    with demo_sandbox.admin() as http:
        name = archived(http, "web-shop")[0]
    calls = [
        ("POST", f"/api/admin/archive/revive/{name}", None),
        ("DELETE", f"/api/admin/archive/{name}", None),
        ("POST", "/api/admin/projects/web-shop/revive", {"features": [name]}),
        ("POST", "/api/admin/projects/web-shop/delete", {"features": [name]}),
        ("POST", "/api/admin/projects/web-shop/archive", {"features": [name]}),
    ]
    viewer = personal_token(demo_sandbox, "uma.iyer")  # an active Viewer
    for method, path, body in calls:
        url = demo_sandbox.url + path
        assert_error(httpx.request(method, url, json=body), 401, "AuthenticationRequired")
        refused = httpx.request(method, url, json=body, headers={"Authorization": viewer})
        assert_error(refused, 403, "NoAccessError")
        with demo_sandbox.client() as client:
            assert_error(client.request(method, path, json=body), 403, "NoAccessError")
    with demo_sandbox.admin() as http:
        assert name in archived(http, "web-shop")
