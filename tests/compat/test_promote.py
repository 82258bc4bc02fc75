"""`flagdesk promote` from a sandbox to a real Unleash (and to the sandbox playing its release): a
flag whose strategy needs a segment and a context field the target lacks is promoted with them
(stage 1 makes them, stage 2 the flag, its strategy naming the new segment's id, its tag, on in
development); `flagdesk diff` of the selection then finds nothing; `flagdesk journal undo` puts
the target back as a snapshot taken before says it was. With the admin API token the flag goes
request by request (Unleash refuses its imports), with a personal access token in an import
(`POST /api/admin/features-batch/import`): the same outcome both ways. The same between two
real Unleash of one release side by side (`second`), both ways: the first to the second with an
admin API token, the second to the first with a personal access token. Everything is read back
from the servers."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from sandbox.process import SandboxProcess
from tests.app.test_cli_promote import Cli
from tests.compat.conftest import Cleanup, Peer

FEATURES = "/api/admin/projects/default/features"


def _ok(done: Any, status: int = 0) -> str:
    assert done.returncode == status, done.stdout + done.stderr
    return str(done.stdout)


def _made(answer: httpx.Response) -> dict[str, Any]:
    assert answer.status_code in (200, 201), answer.text
    return answer.json() if answer.content else {}


def _plant(http: httpx.Client, flag: str, segment: str, field: str) -> None:
    """On the source: a context field with legal values, a segment on it, and a flag in
    development whose strategy has a constraint on the field and uses the segment, on, tagged."""
    _made(http.post("/api/admin/context", json={
        "name": field, "description": "Where the customer is",
        "legalValues": [{"value": "eu"}, {"value": "us"}]}))  # fmt: skip
    made = _made(http.post("/api/admin/segments", json={
        "name": segment, "constraints": [
            {"contextName": field, "operator": "IN", "values": ["eu"]}]}))  # fmt: skip
    _made(http.post(FEATURES, json={"name": flag, "description": "promoted"}))
    _made(http.post(f"{FEATURES}/{flag}/environments/development/strategies", json={
        "name": "flexibleRollout", "title": "EU half",
        "parameters": {"rollout": "50", "stickiness": "default", "groupId": flag},
        "constraints": [{"contextName": field, "operator": "IN", "values": ["us"]}],
        "segments": [made["id"]]}))  # fmt: skip
    _made(http.post(f"{FEATURES}/{flag}/environments/development/on"))
    _made(http.post(f"/api/admin/features/{flag}/tags",
                    json={"type": "simple", "value": "compat"}))  # fmt: skip


def _selection(flag: str, segment: str, field: str) -> tuple[str, ...]:
    """The three objects in development alone (the default project may have more
    environments)."""
    return ("--kinds", "flags,segments,context-fields", "--map-env", "development=development",
            "--name", flag, "--name", segment, "--name", field)  # fmt: skip


def _promote_then_undo(cli: Cli, target: Peer, flag: str, segment: str, field: str,
                       tmp_path: Path, *, batched: bool) -> None:  # fmt: skip
    """Promote the three from the profile "source" to "target" (in an import when `batched`:
    the target profile's token is a user's, else request by request), read the result back,
    then undo it and hold the target equal to its snapshot from before."""
    selection = _selection(flag, segment, field)
    before = cli.snapshot("target", tmp_path / "before.json")
    assert cli("diff", "source", "target", *selection).returncode == 1  # they differ

    plan = _ok(cli("promote", "source", "target", *selection, "--dry-run"))
    assert f"POST /api/admin/context  context field “{field}”" in plan
    assert f"POST /api/admin/segments  segment “{segment}”" in plan
    imported = "POST /api/admin/features-batch/import  import into “default”, development"
    assert (imported in plan) is batched, plan
    assert ("How: the flags go request by request" in plan) is not batched, plan
    result = json.loads(_ok(cli("promote", "source", "target", *selection, "--yes",
                                "--json")))  # fmt: skip
    assert result["promoted"] is True and result["entries"]
    # read back: the flag's strategy uses the segment made on the target, by its new id
    with httpx.Client(base_url=target.url, headers={"Authorization": target.admin_token},
                      timeout=30) as http:  # fmt: skip
        segments = http.get("/api/admin/segments").json()["segments"]
        there = next(g for g in segments if g["name"] == segment)
        strategies = http.get(f"{FEATURES}/{flag}/environments/development/strategies")
        assert strategies.status_code == 200, strategies.text
        assert [s["segments"] for s in strategies.json()] == [[there["id"]]]
        fields = {f["name"] for f in http.get("/api/admin/context").json()}
        assert field in fields
    _ok(cli("diff", "source", "target", *selection))
    again = _ok(cli("promote", "source", "target", *selection, "--yes"))
    assert "Nothing to promote" in again

    _ok(cli("journal", "undo", result["entries"][-1], "--profile", "target", "--yes"))
    _ok(cli("diff", before, "target", *selection))


@pytest.mark.parametrize("token", ["admin", "personal"])
def test_a_flag_with_the_segment_and_context_field_it_needs_promoted_then_undone(
    target: Peer, unique: Callable[[str], str], cleanup: Cleanup, tmp_path: Path, token: str
) -> None:
    flag, segment, field = unique("promoted"), unique("segment"), unique("region")
    with SandboxProcess(tmp_path / "source.sqlite3", "--empty") as source:
        with source.admin() as http:
            _plant(http, flag, segment, field)
        cli = Cli(tmp_path)
        cli.profile("source", source)
        secret = target.admin_token if token == "admin" else target.require_pat()
        added = cli("profiles", "add", "target", "--url", target.url, "--token-store", "file",
                    token=secret)  # fmt: skip
        assert added.returncode == 0, added.stderr
        if target is cleanup.peer:
            cleanup.features.append(flag)
        _promote_then_undo(cli, target, flag, segment, field, tmp_path,
                           batched=token == "personal")  # fmt: skip


def _remove(peer: Peer, flag: str, segment: str, field: str) -> None:
    """What a test made on a real server, gone again as far as it goes: the flag archived (see
    `Peer.remove_flags`), then the segment and the context field deleted (already gone after an
    undo: 404, as is a segment a server keeps for an archived flag's strategy: 409)."""
    with peer.raw() as http:
        peer.remove_flags(http, [flag])
        for segment_item in http.get("/api/admin/segments").json()["segments"]:
            if segment_item["name"] == segment:
                http.delete(f"/api/admin/segments/{segment_item['id']}")
        http.delete(f"/api/admin/context/{field}")


@pytest.mark.parametrize("way", ["first to second, admin token", "second to first, PAT"])
def test_promoted_between_two_real_servers_both_ways_then_undone(
    peer: Peer, second: Peer, way: str, unique: Callable[[str], str], tmp_path: Path
) -> None:
    source, target = (peer, second) if way.startswith("first") else (second, peer)
    batched = way.endswith("PAT")
    token = target.require_pat() if batched else target.admin_token
    flag, segment, field = unique("promoted"), unique("segment"), unique("region")
    try:
        with source.raw() as http:
            _plant(http, flag, segment, field)
        cli = Cli(tmp_path)
        for name, server, its_token in (("source", source, source.admin_token),
                                        ("target", target, token)):  # fmt: skip
            added = cli("profiles", "add", name, "--url", server.url, "--token-store", "file",
                        token=its_token)  # fmt: skip
            assert added.returncode == 0, added.stderr
        _promote_then_undo(cli, target, flag, segment, field, tmp_path, batched=batched)
    finally:
        _remove(source, flag, segment, field)
        _remove(target, flag, segment, field)
