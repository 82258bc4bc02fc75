"""The instance's statistics (and their CSV), maintenance mode, the CORS origins and banners as
the sandbox serves them (issue 38; measured on the real releases: tests/compat/test_instance.py):
the statistics computed from the data on each request with each played release's fields,
maintenance refusing every admin write with 503 but its own switch while reads and the client
API are served, the origins checked as Unleash checks them and read back through `ui-config`,
banners (Enterprise) created, replaced, switched and deleted, 404 on a played release, and the
`setting-*`/`banner-*` events with `preData` and `data`."""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from app.api.models import Banner, Banners, InstanceStatistics
from app.api.wire import valid_origin
from sandbox import db
from sandbox.process import SandboxProcess
from sandbox.versions import PLAYABLE, STATISTICS_FIELDS, Played

STATS = "/api/admin/instance-admin/statistics"
PersonalToken = Callable[[SandboxProcess, str], str]


def _json(text: str | None) -> object:
    return None if text is None else json.loads(text)


def events(sb: SandboxProcess, *kinds: str) -> list[tuple[object, ...]]:
    conn = db.connect(sb.db)
    try:
        marks = ",".join("?" * len(kinds))
        return [
            (r[0], _json(r[1]), _json(r[2]))
            for r in conn.execute(
                "SELECT e.type, p.pre_data, p.data FROM events e LEFT JOIN event_data p"
                f" ON p.event_id = e.id WHERE e.type IN ({marks}) ORDER BY e.id",
                kinds,
            )
        ]
    finally:
        conn.close()


def test_the_statistics_count_the_data_as_it_is_now(sandbox: SandboxProcess) -> None:
    with sandbox.admin() as http:
        first = http.get(STATS)
        assert first.status_code == 200, first.text
        body = first.json()
        assert list(body) == list(STATISTICS_FIELDS)  # unplayed: every field, 8.2's order
        stats = InstanceStatistics.model_validate(body)
        projects = [p["id"] for p in http.get("/api/admin/projects").json()["projects"]]
        flags = sum(len(http.get(f"/api/admin/projects/{p}/features").json()["features"])
                    for p in projects)  # fmt: skip
        assert stats.featureToggles == flags and stats.projects == len(projects)
        users = http.get("/api/admin/user-admin").json()["users"]
        assert stats.users == len(users)
        ui = http.get("/api/admin/ui-config").json()
        assert stats.instanceId == ui["versionInfo"]["instanceId"]
        expected_sum = hashlib.sha256(
            f"{stats.instanceId}{stats.users}{stats.featureToggles}{stats.projects}"
            f"{stats.roles}{stats.groups}{stats.environments}{stats.segments}".encode()
        ).hexdigest()
        assert stats.sum == expected_sum
        assert [a.range for a in stats.clientApps or []] == ["7d", "30d", "allTime"]
        assert stats.edgeInstanceUsage is not None and len(stats.edgeInstanceUsage) == 12

        made = http.post("/api/admin/projects/default/features", json={"name": "counted-now"})
        assert made.status_code == 201, made.text
        again = InstanceStatistics.model_validate(http.get(STATS).json())
        assert again.featureToggles == (stats.featureToggles or 0) + 1  # at once
        assert again.sum != stats.sum and again.timestamp != stats.timestamp


def test_the_statistics_csv_is_one_header_row_and_one_row(sandbox: SandboxProcess) -> None:
    with sandbox.admin() as http:
        answer = http.get(STATS + "/csv")
        assert answer.status_code == 200
        assert answer.headers["content-type"] == "text/csv; charset=utf-8"
        instance = http.get("/api/admin/ui-config").json()["versionInfo"]["instanceId"]
        disposition = answer.headers["content-disposition"]
        assert disposition.startswith(f'attachment; filename="unleash-{instance}-')
        assert disposition.endswith('.csv"')
        assert not answer.text.endswith("\n")
        header, row = list(csv.reader(io.StringIO(answer.text)))
        assert header == list(STATISTICS_FIELDS)
        values = dict(zip(header, row, strict=True))
        assert values["instanceId"] == instance
        assert json.loads(values["activeUsers"]).keys() == {"last7", "last30", "last60", "last90"}
        assert values["passwordAuthEnabled"] == "true" and values["SAMLenabled"] == "false"
        assert answer.text.split("\n")[1].count('""last7""') == 1  # quotes doubled, as json2csv


@pytest.mark.parametrize("line", list(PLAYABLE))
def test_each_release_sends_its_statistics_and_has_no_banners(tmp_path: Path, line: str) -> None:
    played = Played.of(line)
    with SandboxProcess(tmp_path / "s.sqlite3", "--demo", "--as-version", line) as sb, \
            sb.admin() as http:  # fmt: skip
        body = http.get(STATS).json()
        assert list(body) == list(played.statistics_fields)
        assert body["versionOSS"] == played.release and body["versionEnterprise"] == ""
        if line == "5.12":
            assert body["apiTokens"] == {} and "licensedUsers" not in body
        else:
            assert body["apiTokens"] and "licensedUsers" in body
        assert ("readOnlyUsers" in body) == (line in ("7.6", "8.2"))
        header = http.get(STATS + "/csv").text.split("\n")[0]
        assert header == ",".join(f'"{f}"' for f in played.statistics_fields)
        # banners are Enterprise's: not on an open-source release
        for method, path in (("GET", "/api/admin/banners"), ("POST", "/api/admin/banners"),
                             ("DELETE", "/api/admin/banners/1")):  # fmt: skip
            answer = http.request(method, path, json={"message": "x"})
            assert answer.status_code == 404, (method, path, answer.text)
            assert "path you were looking for" in answer.json()["message"]


def test_maintenance_refuses_writes_and_serves_reads(sandbox: SandboxProcess) -> None:
    with sandbox.admin() as http, sandbox.client() as client:
        assert http.get("/api/admin/maintenance").json() == {"enabled": False}
        assert http.get("/api/admin/ui-config").json()["maintenanceMode"] is False
        on = http.post("/api/admin/maintenance", json={"enabled": True})
        assert on.status_code == 204 and on.content == b""
        assert http.get("/api/admin/maintenance").json() == {"enabled": True}
        assert http.get("/api/admin/ui-config").json()["maintenanceMode"] is True

        refused = [
            http.post("/api/admin/projects/default/features", json={"name": "not-now"}),
            http.post("/api/admin/context", json={"name": "notNow"}),
            http.put("/api/admin/context/environment", json={"name": "environment"}),
            http.delete("/api/admin/context/environment"),
            http.post("/api/admin/ui-config/cors", json={"frontendApiOrigins": ["*"]}),
            http.post("/api/admin/features-batch/export", json={"environment": "development"}),
        ]
        for answer in refused:
            assert answer.status_code == 503, answer.text
            body = answer.json()
            assert body["message"] == "Unleash is currently in maintenance mode."
        # no token: 401 first, as Unleash checks the caller before maintenance
        anonymous = httpx.post(sandbox.url + "/api/admin/context", json={"name": "x"})
        assert anonymous.status_code == 401
        # reads and the client API are served
        assert http.get("/api/admin/projects/default/features").status_code == 200
        assert http.get(STATS).status_code == 200
        bulk = {"applications": [], "metrics": []}
        assert client.post("/api/client/metrics/bulk", json=bulk).status_code == 202
        assert http.get("/api/admin/projects/default/features/not-now").status_code == 404

        off = http.post("/api/admin/maintenance", json={"enabled": False})
        assert off.status_code == 204
        made = http.post("/api/admin/projects/default/features", json={"name": "now-then"})
        assert made.status_code == 201, made.text
    # the first switch creates the setting, the second updates it (Unleash's setting service)
    assert events(sandbox, "setting-created", "setting-updated") == [
        ("setting-created", None, {"id": "maintenance.mode", "enabled": True}),
        ("setting-updated", {"enabled": True}, {"id": "maintenance.mode", "enabled": False}),
    ]


def test_maintenance_body_is_checked(sandbox: SandboxProcess) -> None:
    with sandbox.admin() as http:
        for body, where in (({}, "$.enabled"), ({"enabled": "yes"}, "$.enabled")):
            answer = http.post("/api/admin/maintenance", json=body)
            assert answer.status_code == 400, answer.text
            assert answer.json()["details"][0]["path"] == where
        assert http.get("/api/admin/maintenance").json() == {"enabled": False}


def test_a_viewer_cannot_switch_maintenance(sandbox: SandboxProcess,
                                            personal_token: PersonalToken) -> None:  # fmt: skip
    with sandbox.admin() as http:
        viewer = http.post("/api/admin/user-admin", json={"username": "watcher", "rootRole": 3})
        assert viewer.status_code == 201, viewer.text
    token = personal_token(sandbox, "watcher")
    with httpx.Client(base_url=sandbox.url, headers={"Authorization": token}) as as_viewer:
        assert as_viewer.post("/api/admin/maintenance", json={"enabled": True}).status_code == 403
        assert as_viewer.get("/api/admin/maintenance").json() == {"enabled": False}


def test_cors_origins_are_checked_set_and_read_back(sandbox: SandboxProcess) -> None:
    cors = "/api/admin/ui-config/cors"
    with sandbox.admin() as http:
        assert http.get("/api/admin/ui-config").json()["frontendApiOrigins"] == ["*"]
        for bad in (
            "not a url",
            "https://acp.example.com/",
            "https://*.example.com",
            "HTTPS://acp.example.com",
            "https://acp.example.com:443",
        ):
            answer = http.post(cors, json={"frontendApiOrigins": ["https://ok.example", bad]})
            assert answer.status_code == 400, bad
            assert answer.json()["message"].endswith(f"invalid data: Invalid origin: {bad}")
            assert answer.json()["details"] == [{"message": f"Invalid origin: {bad}"}]
        assert http.post(cors, json={"frontendApiOrigins": "https://a.example"}).status_code == 400
        empty = http.post(cors, json={})
        assert empty.status_code == 404
        assert empty.json()["message"] == "The requested resource could not be found"
        assert http.get("/api/admin/ui-config/cors").status_code in (404, 405)
        origins = ["https://acp.example.com", "http://localhost:3000"]
        assert http.post(cors, json={"frontendApiOrigins": origins}).status_code == 204
        assert http.get("/api/admin/ui-config").json()["frontendApiOrigins"] == origins
        assert http.post(cors, json={"frontendApiOrigins": []}).status_code == 204
        assert http.get("/api/admin/ui-config").json()["frontendApiOrigins"] == []
        # unplayed, the sandbox is 8.2: 5.x's route is not there
        old_way = {"frontendSettings": {"frontendApiOrigins": ["*"]}}
        assert http.post("/api/admin/ui-config", json=old_way).status_code == 404
    assert events(sandbox, "setting-created", "setting-updated") == [
        ("setting-created", None, {"id": "unleash.frontend", "frontendApiOrigins": origins}),
        ("setting-updated", {"frontendApiOrigins": origins},
         {"id": "unleash.frontend", "frontendApiOrigins": []}),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("line", "new_way", "old_way"), [("5.12", 404, 204), ("6.10", 204, 204), ("7.6", 204, 404)]
)
def test_each_release_sets_the_origins_its_way(tmp_path: Path, line: str, new_way: int,
                                               old_way: int) -> None:  # fmt: skip
    with SandboxProcess(tmp_path / "s.sqlite3", "--as-version", line) as sb, sb.admin() as http:
        answer = http.post("/api/admin/ui-config/cors",
                           json={"frontendApiOrigins": ["https://new.example"]})  # fmt: skip
        assert answer.status_code == new_way, answer.text
        answer = http.post("/api/admin/ui-config",
                           json={"frontendSettings": {"frontendApiOrigins": ["https://old.example"]}})  # fmt: skip  # noqa: E501
        assert answer.status_code == old_way, answer.text
        expected = ["https://old.example"] if old_way == 204 else ["https://new.example"]
        assert http.get("/api/admin/ui-config").json()["frontendApiOrigins"] == expected


def test_the_origin_rule_is_unleash_s() -> None:
    for good in ("*", "https://a.example", "http://localhost:3000", "http://127.0.0.1:8080",
                 "https://[::1]:8443"):  # fmt: skip
        assert valid_origin(good), good
    for bad in ("", " https://a.example", "https://a.example/", "https://a.example/path",
                "https://user@a.example", "https://a.example?q", "https://A.example",
                "http://a.example:80", "mailto:x@y", "https://a.example:99999", "**",
                "https://bücher.example"):  # fmt: skip
        assert not valid_origin(bad), bad


def test_banners_are_created_replaced_switched_and_deleted(sandbox: SandboxProcess) -> None:
    with sandbox.admin() as http:
        assert Banners.model_validate(http.get("/api/admin/banners").json()).banners == []
        first = {"message": "Upgrade on **Friday**", "variant": "warning"}
        made = http.post("/api/admin/banners", json=first)
        assert made.status_code == 201, made.text
        banner = Banner.model_validate(made.json())
        assert made.headers["location"] == f"banners/{banner.id}"
        assert (banner.enabled, banner.variant, banner.sticky) == (True, "warning", False)
        assert banner.createdAt is not None

        replaced = http.put(f"/api/admin/banners/{banner.id}",
                            json={"message": "Upgrade on Monday", "sticky": True})  # fmt: skip
        assert replaced.status_code == 200, replaced.text
        after = Banner.model_validate(replaced.json())
        assert (after.message, after.variant, after.sticky) == ("Upgrade on Monday", "info", True)
        off = http.post(f"/api/admin/banners/{banner.id}/off")
        assert off.status_code == 200 and off.json()["enabled"] is False
        on = http.post(f"/api/admin/banners/{banner.id}/on")
        assert on.json()["enabled"] is True
        listed = Banners.model_validate(http.get("/api/admin/banners").json()).banners
        assert [b.id for b in listed] == [banner.id]

        assert http.post("/api/admin/banners", json={"message": ""}).status_code == 400
        assert http.post("/api/admin/banners", json={"variant": "info"}).status_code == 400
        gone = http.delete(f"/api/admin/banners/{banner.id}")
        assert gone.status_code == 200 and gone.content == b""
        for answer in (http.delete(f"/api/admin/banners/{banner.id}"),
                       http.put(f"/api/admin/banners/{banner.id}", json={"message": "x"}),
                       http.post(f"/api/admin/banners/{banner.id}/on")):  # fmt: skip
            assert answer.status_code == 404, answer.text
        again = Banner.model_validate(http.post("/api/admin/banners", json={"message": "n"}).json())
        assert again.id != banner.id  # an id is never given again
    logged = events(sandbox, "banner-created", "banner-updated", "banner-deleted")
    assert [(kind, pre is not None, data is not None) for kind, pre, data in logged] == [
        ("banner-created", False, True), ("banner-updated", True, True),
        ("banner-updated", True, True), ("banner-updated", True, True),
        ("banner-deleted", True, False), ("banner-created", False, True),
    ]  # fmt: skip
    assert logged[1][1]["message"] == "Upgrade on **Friday**"  # type: ignore[index]
    assert logged[1][2]["message"] == "Upgrade on Monday"  # type: ignore[index]
