"""Project access on a real open-source Unleash (each of `VERSIONS`) and on the sandbox playing
it (`target`): the routes are not there (404, "The path you were looking for ... is not
available": the reference's section 7 measured the read; the writes are asked here too), the
probe says project access needs Unleash Pro or Enterprise, and `flagdesk access show --user`
and `--project` still answer, from the root roles alone, saying so."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import httpx

from app.api.capabilities import NEEDS_PRO
from app.api.client import AdminClient
from app.registry import PROJECT_ACCESS
from tests.compat.conftest import per_version

if TYPE_CHECKING:
    from tests.compat.conftest import Peer

ROUTES = (
    ("GET", "/api/admin/projects/default/access"),
    ("POST", "/api/admin/projects/default/access"),
    ("PUT", "/api/admin/projects/default/users/1/roles"),
    ("DELETE", "/api/admin/projects/default/users/1/roles"),
    ("PUT", "/api/admin/projects/default/groups/1/roles"),
    ("DELETE", "/api/admin/projects/default/groups/1/roles"),
    ("GET", "/api/admin/access/overview"),  # Enterprise's access overview
)


def test_the_routes_are_not_there(target: Peer) -> None:
    expected = per_version(target, {"5.12 6.10 7.6 8.2": 404})
    with httpx.Client(base_url=target.url, headers={"Authorization": target.admin_token},
                      timeout=30) as http:  # fmt: skip
        for method, path in ROUTES:
            body = {"roles": [5], "users": [], "groups": []} if method in ("POST", "PUT") else None
            answer = http.request(method, path, json=body)
            assert answer.status_code == expected, (method, path, answer.text)
            assert f"The path you were looking for ({path}) is not available." in answer.text

    async def probe() -> None:
        async with AdminClient(target.url, target.admin_token) as c:
            availability = (await c.capabilities()).operation(PROJECT_ACCESS)
            assert not availability.available and availability.reason == NEEDS_PRO

    asyncio.run(probe())


def _show(target: Peer, data: Path, *args: str) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k != "FLAGDESK_TOKEN"}
    env.update(FLAGDESK_TOKEN=target.admin_token, FLAGDESK_DATA_DIR=str(data))
    done = subprocess.run([sys.executable, "-m", "app", "access", "show", *args, "--json",
                           "--url", target.url], capture_output=True, text=True, env=env,
                          stdin=subprocess.DEVNULL, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    shown: dict[str, object] = json.loads(done.stdout)
    return shown


def test_access_show_answers_from_root_roles(target: Peer, tmp_path: Path) -> None:
    mine = _show(target, tmp_path, "--user", "admin")
    assert mine["projectAccess"] is False
    assert "derived from root roles only" in str(mine["note"])
    assert isinstance(mine["user"], dict) and mine["user"]["rootRole"] == "Admin"
    projects = mine["projects"]
    assert isinstance(projects, list)
    default = next(p for p in projects if p["project"] == "default")
    assert default["why"] == [{"role": "Admin", "through": "root role"}]

    people = _show(target, tmp_path, "--project", "default")
    assert people["projectAccess"] is False and people["groups"] == []
    listed = people["people"]
    assert isinstance(listed, list)
    assert any(p["username"] == "admin" and p["roles"] == ["Admin"] for p in listed)
