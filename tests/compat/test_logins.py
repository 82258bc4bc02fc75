"""Login history (issue 38; Unleash Enterprise 4.22+) on real open-source Unleash 5.12.8, 6.10.1,
7.6.5 and 8.2.0 and their sandbox twins: `GET /api/admin/logins` (as JSON and as CSV) is the
404 of a path that is not there on every release; flagdesk says login history is Unleash
Enterprise's from the capabilities (the tool unavailable, the client refusing before it sends),
and `flagdesk logins` says so plainly with exit status 4, no traceback, nothing on stdout (with
--json one object saying it)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from app.api import errors as e
from app.api.capabilities import NEEDS_ENTERPRISE_LOGINS
from app.api.client import AdminClient
from app.registry import LOGINS

if TYPE_CHECKING:
    from tests.compat.conftest import Peer

REPO = Path(__file__).resolve().parents[2]
PATH = "/api/admin/logins"


def flagdesk_logins(peer: Peer, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLAGDESK_")}
    env["FLAGDESK_TOKEN"] = peer.admin_token
    return subprocess.run(
        [sys.executable, "-m", "app", "logins", "--url", peer.url, *extra],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip


def test_open_source_has_no_login_history(target: Peer) -> None:
    with target.raw() as http:
        for accept in ("application/json", "text/csv"):
            answer = http.get(PATH, headers={"Accept": accept})
            assert answer.status_code == 404, (accept, answer.text)
            assert answer.json()["message"] == (
                f"The path you were looking for ({PATH}) is not available.")  # fmt: skip

    async def job() -> None:
        async with AdminClient(target.url, target.admin_token) as c:
            availability = (await c.capabilities()).operation(LOGINS)
            assert not availability.available
            assert availability.reason == NEEDS_ENTERPRISE_LOGINS
            with pytest.raises(e.Unsupported, match="Login history needs Unleash Enterprise"):
                await c.login_history()
            with pytest.raises(e.Unsupported):
                await c.login_history_csv()

    asyncio.run(job())


def test_flagdesk_logins_says_it_is_enterprises(target: Peer, tmp_path: Path) -> None:
    said = flagdesk_logins(target)
    assert said.returncode == 4, said.stderr
    assert said.stdout == "" and "Traceback" not in said.stderr
    assert said.stderr.strip() == f"flagdesk logins: {NEEDS_ENTERPRISE_LOGINS}"
    shown = flagdesk_logins(target, "--json", "--failed")
    assert shown.returncode == 4
    body = json.loads(shown.stdout)
    assert body["exit_status"] == 4 and body["error"] == NEEDS_ENTERPRISE_LOGINS
    target_file = tmp_path / "logins.csv"
    written = flagdesk_logins(target, "--csv", str(target_file))
    assert written.returncode == 4 and not target_file.exists()
