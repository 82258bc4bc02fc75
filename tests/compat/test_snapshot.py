"""Snapshots of a real Unleash (and the sandbox playing its release): a flag made here with a
strategy (constraint, variants), on in development, tagged, read into a snapshot through the
batch export and again flag by flag, the two the same for every flag of the server; the lists
open source has not (groups, project access) named in `unread`, not read as empty; the environments
and each project's; and `flagdesk snapshot` then `flagdesk diff` of the server against its own
file: the same (exit 0)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import httpx

from app.api.client import AdminClient
from app.snapshot.compare import compare
from app.snapshot.model import Snapshot
from app.snapshot.read import read_snapshot
from tests.compat.conftest import Cleanup, Peer

FEATURES = "/api/admin/projects/default/features"


def made_flag(target: Peer, name: str) -> None:
    with httpx.Client(base_url=target.url, headers={"Authorization": target.admin_token},
                      timeout=30) as http:  # fmt: skip
        assert http.post(FEATURES, json={"name": name}).status_code == 201
        strategy = http.post(f"{FEATURES}/{name}/environments/development/strategies", json={
            "name": "flexibleRollout", "title": "Half",
            "parameters": {"rollout": "50", "stickiness": "default", "groupId": name},
            "constraints": [{"contextName": "userId", "operator": "IN", "values": ["7", "8"]}],
            "variants": [{"name": "blue", "weight": 1000, "weightType": "variable",
                          "stickiness": "default"}],
        })  # fmt: skip
        assert strategy.status_code == 200, strategy.text
        on = http.post(f"{FEATURES}/{name}/environments/development/on")
        assert on.status_code == 200, on.text
        tag = http.post(f"/api/admin/features/{name}/tags",
                        json={"type": "simple", "value": "compat"})  # fmt: skip
        assert tag.status_code == 201, tag.text


def snapshots(target: Peer) -> tuple[Snapshot, Snapshot]:
    async def both() -> tuple[Snapshot, Snapshot]:
        async with AdminClient(target.url, target.admin_token) as client:
            return await read_snapshot(client), await read_snapshot(client, batch=False)

    return asyncio.run(both())


def test_the_export_and_each_flags_answer_agree(
    target: Peer, unique: Callable[[str], str], cleanup: Cleanup
) -> None:
    name = unique("snapshot")
    made_flag(target, name)
    if target is cleanup.peer:
        cleanup.features.append(name)
    batched, one_by_one = snapshots(target)
    flag = next(f for f in batched.flags if f.name == name)
    development = next(e for e in flag.environments if e.name == "development")
    assert development.enabled
    (strategy,) = development.strategies
    assert (strategy.name, strategy.title, strategy.parameters["rollout"]) == (
        "flexibleRollout", "Half", "50")  # fmt: skip
    assert [c.values for c in strategy.constraints] == [["7", "8"]]
    assert [v.name for v in strategy.variants] == ["blue"]
    assert [str(t) for t in flag.tags] == ["simple:compat"]
    found = compare(batched, one_by_one, kinds=["flags"])
    assert found.same, found.text_lines()[:20]
    assert set(batched.unread) == {"groups", "projectAccess"}
    assert {"development", "production"} <= {e.name for e in batched.environments}
    default = next(p for p in batched.projects if p.id == "default")
    assert "development" in default.environments


def test_snapshot_then_diff_against_the_server(target: Peer, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "FLAGDESK_TOKEN"}
    env.update(FLAGDESK_TOKEN=target.admin_token, FLAGDESK_CONFIG_DIR=str(tmp_path / "config"),
               FLAGDESK_DATA_DIR=str(tmp_path / "data"))  # fmt: skip
    file = tmp_path / "snap.json"
    taken = subprocess.run(
        [sys.executable, "-m", "app", "snapshot", "--url", target.url, "-o", str(file)],
        capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=120,
    )  # fmt: skip
    assert taken.returncode == 0, taken.stderr
    assert "groups not read: " in taken.stdout
    again = tmp_path / "again.json"
    subprocess.run(
        [sys.executable, "-m", "app", "snapshot", "--url", target.url, "-o", str(again)],
        capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=120,
        check=True,
    )  # fmt: skip
    same = subprocess.run(
        [sys.executable, "-m", "app", "diff", str(file), str(again), "--kinds",
         "flags,segments,context-fields,tag-types,strategies,environments,projects"],
        capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=120,
    )  # fmt: skip
    assert same.returncode == 0, same.stdout + same.stderr
