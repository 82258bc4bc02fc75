"""The instance's statistics, maintenance mode, CORS origins and banners (issue 38) on a real
Unleash (each of `VERSIONS`) and, where the test takes `target`, on the sandbox playing it:
each release's statistics fields in its order (and its CSV's header), a new context field
counted at once; maintenance switched on through flagdesk, every admin write then refused with
503 `{message}` alone while the reads, the statistics and the client API are served, then off
again (always, in a `finally`); the CORS origins set by the release's own route through
flagdesk, read back from `ui-config`, a bad origin, a string and `{}` refused as measured, and
the list put back; banners not there on open source (404, and the probe says Enterprise); on
the real server, the `setting-*` events with `preData` and `data` each change logs.

Maintenance mode and the CORS origins are the whole server's: run this only against a peer of
your own (`.ci/run` runs each release's suite alone against its own peer)."""

from __future__ import annotations

import asyncio
import csv
import io
import time
from typing import TYPE_CHECKING

import httpx
import pytest

from app.api import errors as e
from app.api.capabilities import NEEDS_ENTERPRISE_BANNERS
from app.api.client import AdminClient
from app.api.models import CreateBanner, CreateContextField, InstanceStatistics
from app.registry import CREATE_BANNER
from tests.compat.conftest import per_version

if TYPE_CHECKING:
    from collections.abc import Callable

    from tests.compat.conftest import Peer

STATS = "/api/admin/instance-admin/statistics"
MAINTENANCE = "/api/admin/maintenance"
#: the fields of 8.2 (and 7.6) in their order, measured
FIELDS_8 = [
    "timestamp", "instanceId", "versionOSS", "versionEnterprise", "users", "serviceAccounts",
    "apiTokens", "activeUsers", "licensedUsers", "featureToggles", "archivedFeatureToggles",
    "projects", "contextFields", "roles", "customRootRoles", "customRootRolesInUse", "groups",
    "environments", "segments", "strategies", "SAMLenabled", "OIDCenabled",
    "passwordAuthEnabled", "SCIMenabled", "clientApps", "featureExports", "featureImports",
    "productionChanges", "previousDayMetricsBucketsCount", "maxEnvironmentStrategies",
    "maxConstraintValues", "maxConstraints", "releaseTemplates", "releasePlans",
    "edgeInstanceUsage", "readOnlyUsers", "sum",
]  # fmt: skip
NOT_ON_6 = {"edgeInstanceUsage", "readOnlyUsers", "releasePlans", "releaseTemplates"}
NOT_ON_5 = NOT_ON_6 | {"SCIMenabled", "licensedUsers", "maxConstraintValues", "maxConstraints",
                      "maxEnvironmentStrategies", "passwordAuthEnabled"}  # fmt: skip


def writable_again(http: httpx.Client) -> None:
    """Wait (up to 70 s) until the server takes writes again after maintenance was switched off.
    Unleash memoizes the switch for a minute (`MaintenanceService.resolveMaintenance`,
    memoizee `maxAge` 1 min) and clears it *before* the new setting is written: a check racing
    the switch (its scheduler's, a `ui-config` read) caches "on" again, and every write is
    refused for up to a minute after the switch said off (seen on 8.2.0 in this suite). A
    validation is a POST that changes nothing, refused while in maintenance."""
    deadline = time.monotonic() + 70
    while time.monotonic() < deadline:
        answer = http.post("/api/admin/context/validate", json={"name": "flagdeskProbe"})
        if answer.status_code != 503:
            return
        time.sleep(1)
    raise AssertionError("the server still refuses writes 70 s after maintenance was switched off")


def refusing_writes(http: httpx.Client) -> None:
    """Wait (up to 70 s) until the server refuses writes after maintenance was switched on: the
    same memo the other way (`writable_again`): a check racing the switch caches "off", and
    writes are taken for up to a minute after the switch said on (seen on 5.12.8 in this suite,
    its three older releases' suites side by side). The probe is a batch import's validation
    of no data: a POST that changes nothing, 400 when writes are taken (the sandbox has no
    context validation to ask)."""
    deadline = time.monotonic() + 70
    while time.monotonic() < deadline:
        answer = http.post("/api/admin/features-batch/validate", json={})
        if answer.status_code == 503:
            return
        time.sleep(1)
    raise AssertionError("the server still takes writes 70 s after maintenance was switched on")


def test_each_release_s_statistics(target: Peer, unique: Callable[[str], str]) -> None:
    fields = per_version(target, {
        "5.12": [f for f in FIELDS_8 if f not in NOT_ON_5],
        "6.10": [f for f in FIELDS_8 if f not in NOT_ON_6],
        "7.6 8.2": FIELDS_8,
    })  # fmt: skip
    with target.raw() as http:
        body = http.get(STATS).json()
        assert list(body) == fields
        stats = InstanceStatistics.model_validate(body)
        assert stats.versionOSS == target.version and stats.versionEnterprise == ""
        assert stats.instanceId == http.get("/api/admin/ui-config").json()["versionInfo"][
            "instanceId"]  # fmt: skip
        assert len(stats.sum or "") == 64 and stats.projects and stats.environments
        # 5.12 answers no token counts, whatever tokens there are (measured: always {})
        assert bool(stats.apiTokens) == per_version(target, {"5.12": False, "6.10 7.6 8.2": True})
        assert [a.range for a in stats.clientApps or []] == ["7d", "30d", "allTime"]
        csv_answer = http.get(STATS + "/csv")
        assert csv_answer.status_code == 200
        assert csv_answer.headers["content-type"] == "text/csv; charset=utf-8"
        assert csv_answer.headers["content-disposition"].startswith(
            f'attachment; filename="unleash-{stats.instanceId}-')  # fmt: skip
        header, row = list(csv.reader(io.StringIO(csv_answer.text)))
        assert header == fields and len(row) == len(fields)
        name = unique("stat").replace("-", "")[:60]
        made = http.post("/api/admin/context", json={"name": name})
        assert made.status_code == 201, made.text
        try:
            again = InstanceStatistics.model_validate(http.get(STATS).json())
            assert again.contextFields == (stats.contextFields or 0) + 1  # counted at once
        finally:
            http.delete(f"/api/admin/context/{name}")


def test_maintenance_refuses_writes_until_switched_off(
    target: Peer, unique: Callable[[str], str]
) -> None:
    async def job() -> None:
        async with AdminClient(target.url, target.admin_token) as c:
            assert (await c.maintenance()).enabled is False
            assert await c.set_maintenance(True) == 204
            try:
                with target.raw() as http:
                    refusing_writes(http)
                assert (await c.maintenance()).enabled is True
                assert (await c.ui_config()).maintenanceMode is True
                with pytest.raises(e.InMaintenance) as refused:
                    await c.create_context_field(CreateContextField(name=unique("m")[:60]))
                assert refused.value.status == 503 and not refused.value.in_doubt
                with pytest.raises(e.InMaintenance):
                    await c.set_cors_origins(["*"])
                assert (await c.statistics()).featureToggles is not None
                assert (await c.list_projects()).projects
            finally:
                assert await c.set_maintenance(False) == 204
            assert (await c.maintenance()).enabled is False
        with target.raw() as http:
            writable_again(http)

    with target.raw() as http:
        assert http.post(MAINTENANCE, json={"enabled": True}).status_code == 204
        try:
            refusing_writes(http)
            for method, path, body in (
                ("POST", "/api/admin/projects/default/features", {"name": unique("m")}),
                ("POST", "/api/admin/context", {"name": unique("m")[:60]}),
                ("PUT", "/api/admin/context/environment", {"name": "environment"}),
                ("DELETE", "/api/admin/context/environment", None),
                ("POST", "/api/admin/features-batch/export", {"environment": "development"}),
            ):
                answer = http.request(method, path, json=body)
                assert answer.status_code == 503, (method, path, answer.text)
                assert answer.json() == {"message": "Unleash is currently in maintenance mode."}
            assert http.get("/api/admin/projects/default/features").status_code == 200
            assert http.get("/api/admin/context").status_code == 200
            sdk_token = {"Authorization": target.require_client_token()}
            with httpx.Client(base_url=target.url, timeout=30, headers=sdk_token) as sdk:
                # the client API goes on: metrics are taken (an empty batch stores nothing)
                empty = {"applications": [], "metrics": []}
                assert sdk.post("/api/client/metrics/bulk", json=empty).status_code == 202
        finally:
            assert http.post(MAINTENANCE, json={"enabled": False}).status_code == 204
            writable_again(http)
        for body in ({}, {"enabled": "yes"}):
            answer = http.post(MAINTENANCE, json=body)
            assert answer.status_code == 400, answer.text
            # Unleash: "enabled" (5.12), "/body/enabled" (6.10 on); the sandbox: "$.enabled"
            assert answer.json()["details"][0]["path"].endswith("enabled")
    asyncio.run(job())


def test_cors_origins_set_read_back_and_put_back(target: Peer) -> None:
    cors = "/api/admin/ui-config/cors"

    async def job() -> None:
        async with AdminClient(target.url, target.admin_token) as c:
            before = (await c.ui_config()).frontendApiOrigins
            assert before is not None
            wanted = ["https://acp.example.com", "http://localhost:3000"]
            try:
                assert await c.set_cors_origins(wanted) == 204
                assert (await c.ui_config()).frontendApiOrigins == wanted
                with pytest.raises(e.BadRequest) as refused:
                    await c.set_cors_origins(["https://acp.example.com/"])
                assert refused.value.message.endswith(
                    "invalid data: Invalid origin: https://acp.example.com/")  # fmt: skip
                assert await c.set_cors_origins([]) == 204
                assert (await c.ui_config()).frontendApiOrigins == []
            finally:
                assert await c.set_cors_origins(before) == 204
            assert (await c.ui_config()).frontendApiOrigins == before

    asyncio.run(job())
    with target.raw() as http:
        new_way, old_way = per_version(target, {"5.12": (404, 204), "6.10": (204, 204),
                                                "7.6 8.2": (204, 404)})  # fmt: skip
        origins = http.get("/api/admin/ui-config").json()["frontendApiOrigins"]
        assert http.post(cors, json={"frontendApiOrigins": origins}).status_code == new_way
        old = {"frontendSettings": {"frontendApiOrigins": origins}}
        assert http.post("/api/admin/ui-config", json=old).status_code == old_way
        if new_way == 204:
            empty = http.post(cors, json={})
            assert empty.status_code == 404
            assert empty.json()["message"] == "The requested resource could not be found"
            string = http.post(cors, json={"frontendApiOrigins": "https://a.example"})
            assert string.status_code == 400  # Unleash: "... must be array"
            assert string.json()["details"][0]["path"].endswith("frontendApiOrigins")
        assert http.get("/api/admin/ui-config").json()["frontendApiOrigins"] == origins


def test_open_source_has_no_banners(target: Peer) -> None:
    with target.raw() as http:
        for method, path in (
            ("GET", "/api/admin/banners"),
            ("POST", "/api/admin/banners"),
            ("PUT", "/api/admin/banners/1"),
            ("DELETE", "/api/admin/banners/1"),
        ):
            body = {"message": "x"} if method in ("POST", "PUT") else None
            answer = http.request(method, path, json=body)
            assert answer.status_code == 404, (method, path, answer.text)
            assert answer.json()["message"] == (
                f"The path you were looking for ({path}) is not available.")  # fmt: skip

    async def job() -> None:
        async with AdminClient(target.url, target.admin_token) as c:
            caps = await c.capabilities()
            assert caps.action(CREATE_BANNER).reason == NEEDS_ENTERPRISE_BANNERS
            with pytest.raises(e.Unsupported):
                await c.create_banner(CreateBanner(message="x"))

    asyncio.run(job())


def test_each_change_logs_a_setting_event(peer: Peer) -> None:
    """Maintenance switched and CORS origins set log `setting-created` the first time and
    `setting-updated` (with `preData`) after, `data` `{id, ...value}`, as the sandbox records
    them (tests/sandbox/test_instance.py)."""

    def settings_events(http: httpx.Client) -> list[dict[str, object]]:
        events = http.get("/api/admin/events").json()["events"]
        return [ev for ev in events if str(ev["type"]).startswith("setting-")]

    with peer.raw() as http:
        try:
            for on in (True, False):
                assert http.post(MAINTENANCE, json={"enabled": on}).status_code == 204
            newest = settings_events(http)[0]
            assert newest["type"] == "setting-updated"
            assert newest["data"] == {"id": "maintenance.mode", "enabled": False}
            assert newest["preData"] == {"enabled": True}
        finally:
            if http.get(MAINTENANCE).json()["enabled"]:
                http.post(MAINTENANCE, json={"enabled": False})
            writable_again(http)
        origins = http.get("/api/admin/ui-config").json()["frontendApiOrigins"]
        async_set = AdminClient(peer.url, peer.admin_token)

        async def put_back() -> None:
            async with async_set as c:
                await c.set_cors_origins(origins)

        asyncio.run(put_back())
        newest = settings_events(http)[0]
        assert newest["type"] in ("setting-created", "setting-updated")
        assert newest["data"] == {"id": "unleash.frontend", "frontendApiOrigins": origins}
        if newest["type"] == "setting-updated":
            assert isinstance(newest["preData"], dict) and "frontendApiOrigins" in newest["preData"]
