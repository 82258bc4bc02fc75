"""The client's instance methods (issue 38) against sandboxes over HTTP: the requests' exact
bytes (what `--dry-run` prints and the journal records; the CORS origins by 5.x's route on a
5.x server), the statistics and their CSV, maintenance mode switched (writes refused meanwhile
as `InMaintenance`), the origins set and read back, banners; the probe's `banners` answer
(available on the sandbox, "Banners need Unleash Enterprise" on a played open-source release,
where the banner actions send nothing)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from app.api import errors as e
from app.api.capabilities import NEEDS_ENTERPRISE_BANNERS
from app.api.client import (
    AdminClient,
    cors_request,
    create_banner_request,
    delete_banner_request,
    maintenance_request,
    update_banner_request,
)
from app.api.models import CreateBanner, CreateContextField
from app.registry import CREATE_BANNER, SET_CORS, SWITCH_MAINTENANCE
from sandbox.process import SandboxProcess


def test_the_requests_are_exact() -> None:
    on = maintenance_request(True)
    assert (on.method, on.path, on.body) == ("POST", "/api/admin/maintenance", b'{"enabled":true}')
    assert maintenance_request(False).body == b'{"enabled":false}'
    new = cors_request(["https://a.example", "*"], "6.10.1")
    assert (new.method, new.path) == ("POST", "/api/admin/ui-config/cors")
    assert new.body == b'{"frontendApiOrigins":["https://a.example","*"]}'
    assert cors_request([], "").body == b'{"frontendApiOrigins":[]}'  # the sandbox, or unknown
    old = cors_request(["https://a.example"], "5.12.8")
    assert (old.method, old.path) == ("POST", "/api/admin/ui-config")
    assert old.body == b'{"frontendSettings":{"frontendApiOrigins":["https://a.example"]}}'
    with pytest.raises(ValueError, match="CORS origins"):
        cors_request(["https://a.example\x1b[2J"])
    banner = CreateBanner(message="Upgrade **Friday**", variant="warning")
    made = create_banner_request(banner)
    assert (made.method, made.path) == ("POST", "/api/admin/banners")
    assert made.body == (
        b'{"message":"Upgrade **Friday**","enabled":true,"variant":"warning","sticky":false,'
        b'"icon":null,"link":null,"linkText":null,"dialogTitle":null,"dialog":null}'
    )
    assert update_banner_request(3, banner).path == "/api/admin/banners/3"
    assert delete_banner_request(3).describe() == {"method": "DELETE",
                                                   "path": "/api/admin/banners/3"}  # fmt: skip
    for refused in ({"message": ""}, {}, {"message": "x", "enabled": "yes"}):
        with pytest.raises(ValueError):
            CreateBanner.model_validate(refused)


def test_statistics_maintenance_cors_and_banners(sandbox: SandboxProcess) -> None:
    async def job() -> None:
        async with AdminClient(sandbox.url, sandbox.admin_token) as c:
            caps = await c.capabilities()
            assert all(caps.action(a).available for a in (SWITCH_MAINTENANCE, SET_CORS,
                                                          CREATE_BANNER))  # fmt: skip
            stats = await c.statistics()
            assert stats.featureToggles and stats.users and stats.sum
            csv = await c.statistics_csv()
            assert csv.startswith(b'"timestamp","instanceId",')

            assert (await c.maintenance()).enabled is False
            assert await c.set_maintenance(True) == 204
            assert (await c.ui_config()).maintenanceMode is True
            with pytest.raises(e.InMaintenance) as refused:
                await c.create_context_field(CreateContextField(name="notNow"))
            assert "maintenance mode" in str(refused.value)
            assert await c.set_maintenance(False) == 204
            assert (await c.maintenance()).enabled is False

            assert await c.set_cors_origins(["https://acp.example.com"]) == 204
            assert (await c.ui_config()).frontendApiOrigins == ["https://acp.example.com"]
            with pytest.raises(e.BadRequest, match=r"Invalid origin: https://x\.example/"):
                await c.set_cors_origins(["https://x.example/"])

            made = await c.create_banner(CreateBanner(message="Hello"))
            assert [b.id for b in (await c.banners()).banners] == [made.id]
            changed = await c.update_banner(made.id, CreateBanner(message="Bye", enabled=False))
            assert (changed.message, changed.enabled) == ("Bye", False)
            assert await c.delete_banner(made.id) == 200
            assert (await c.banners()).banners == []

    asyncio.run(job())


def test_open_source_has_no_banners(tmp_path: Path) -> None:
    with SandboxProcess(tmp_path / "s.sqlite3", "--as-version", "5.12") as sb:

        async def job() -> None:
            async with AdminClient(sb.url, sb.admin_token) as c:
                caps = await c.capabilities()
                assert caps.operation("banners").reason == NEEDS_ENTERPRISE_BANNERS
                assert caps.action(SET_CORS).available and caps.operation("instance").available
                with pytest.raises(e.Unsupported):
                    await c.create_banner(CreateBanner(message="x"))
                with pytest.raises(e.NotFound):
                    await c.banners()
                # 5.x takes the origins through ui-config: the client sends them there
                assert await c.set_cors_origins(["https://old.example"]) == 204
                assert (await c.ui_config()).frontendApiOrigins == ["https://old.example"]

        asyncio.run(job())
