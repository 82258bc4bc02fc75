"""The sandbox's client-metrics bounds and drops, held to a real Unleash 8.2 (issue 16).

Measured on the peer: a count (yes, no, a variant's) above 2^53 - 1 and a time further than
8.64e15 ms from 1970 are answered 400, on `/api/client/metrics/bulk` and on the SDK's
`/api/client/metrics`; metrics for another environment than the client token's, or with yes and
no both 0, are answered 202 and not stored; an SDK payload is counted in the token's environment
whatever it names. Unleash stores counts after a flush (every few seconds): reads poll.

Not posted here, because each makes the peer's next flush fail and so loses every metric
anyone posts in the same few seconds (the peer is shared): a variant count past 2^31 - 1, an
application name over 255 characters, a time before year 1, sums past 2^63 - 1. Each is
answered 202 and lost on 8.2 (measured once by hand); the sandbox drops the same, see
tests/sandbox/test_metric_bounds.py.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.api.wire import MAX_METRIC_COUNT, MAX_TIME_MS
from sandbox.process import SandboxProcess
from tests.compat.conftest import Cleanup, Peer
from tests.conftest import known_flags
from tests.metrics.test_cli_metrics import flagdesk, sdk_payload

#: how long the peer may take to store what it accepted (its flush runs every few seconds)
SETTLE = 30.0


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxProcess]:
    with SandboxProcess(tmp_path_factory.mktemp("bounds") / "db.sqlite3", "--empty") as sb:
        yield sb


def item(feature: str, **fields: Any) -> dict[str, Any]:
    base = {"featureName": feature, "appName": "flagdesk-compat-bounds",
            "environment": "development", "timestamp": int(time.time() * 1000), "yes": 1,
            "no": 0}  # fmt: skip
    base.update(fields)
    return base


#: (what, bulk metric fields): each refused with 400 by the peer, or taken with 202
BOUNDS: list[tuple[str, dict[str, Any]]] = [
    ("yes 2^53-1", {"yes": MAX_METRIC_COUNT}),
    ("yes 2^53", {"yes": MAX_METRIC_COUNT + 1}),
    ("yes 2^62", {"yes": 2**62}),
    ("yes 2^63", {"yes": 2**63}),
    ("no 2^53", {"no": MAX_METRIC_COUNT + 1}),
    ("yes -1", {"yes": -1}),
    ("yes 1.5", {"yes": 1.5}),
    ("variant 2^31-1", {"variants": {"v": 2**31 - 1}}),
    ("variant 2^53", {"variants": {"v": MAX_METRIC_COUNT + 1}}),
    ("time +8.64e15", {"timestamp": MAX_TIME_MS}),
    ("time +8.64e15+1", {"timestamp": MAX_TIME_MS + 1}),
    ("time -8.64e15-1", {"timestamp": -MAX_TIME_MS - 1}),
    ("time not a date", {"timestamp": "not a date"}),
]


def post_bulk(base: str, token: str, metrics: list[dict[str, Any]]) -> int:
    with httpx.Client(base_url=base, headers={"Authorization": token}, timeout=30) as http:
        return http.post(
            "/api/client/metrics/bulk", json={"applications": [], "metrics": metrics}
        ).status_code


def make_flag(peer: Peer, cleanup: Cleanup, name: str) -> None:
    """A new flag, once the peer counts metrics for it: Unleash keeps the flag names it knows
    in a cache, and drops (202) the metrics of a flag created since it was last filled (a few
    seconds): a marker metric (application "marker") is posted until it is stored."""
    with peer.raw() as http:
        r = http.post("/api/admin/projects/default/features", json={"name": name})
        assert r.status_code == 201, r.text
    cleanup.features.append(name)
    client = peer.require_client_token()
    deadline = time.monotonic() + 2 * SETTLE
    while time.monotonic() < deadline:
        assert post_bulk(peer.url, client, [item(name, appName="marker")]) == 202
        seen = peer_counts(peer, name, lambda got: "marker/development" in got, 2.0, strip=False)
        if seen:
            return
    raise AssertionError(f"the peer never counted metrics for the new flag {name}")


Counts = dict[str, tuple[int, int]]


def peer_counts(
    peer: Peer,
    feature: str,
    until: Callable[[Counts], bool],
    settle: float = SETTLE,
    strip: bool = True,
) -> Counts:
    """(yes, no) by application and environment ("app/env") of the peer's raw metrics (with
    `strip`, but `make_flag`'s marker), polled until `until` holds or `settle` seconds pass."""
    deadline = time.monotonic() + settle
    with peer.raw() as http:
        while True:
            r = http.get(f"/api/admin/client-metrics/features/{feature}/raw")
            assert r.status_code == 200, r.text
            got = {f"{w['appName']}/{w['environment']}": (w["yes"], w["no"])
                   for w in r.json()["data"] if w["yes"] or w["no"]}  # fmt: skip
            if strip:
                got.pop("marker/development", None)
            if until(got) or time.monotonic() > deadline:
                return got
            time.sleep(0.5)


def sandbox_counts(sb: SandboxProcess, feature: str) -> dict[str, tuple[int, int]]:
    with sb.admin() as http:
        r = http.get(f"/api/admin/client-metrics/features/{feature}/raw")
    assert r.status_code == 200, r.text
    return {f"{w['appName']}/{w['environment']}": (w["yes"], w["no"])
            for w in r.json()["data"] if w["yes"] or w["no"]}  # fmt: skip


def test_the_sandbox_refuses_what_unleash_refuses(
    peer: Peer, sandbox: SandboxProcess, unique: Callable[[str], str], cleanup: Cleanup
) -> None:
    client = peer.require_client_token()
    flag = unique("bounds")
    make_flag(peer, cleanup, flag)
    answers = {
        what: (post_bulk(peer.url, client, [item(flag, **fields)]),
               post_bulk(sandbox.url, sandbox.client_token, [item(flag, **fields)]))
        for what, fields in BOUNDS
    }  # fmt: skip
    assert {what: a[1] for what, a in answers.items()} == {
        what: a[0] for what, a in answers.items()
    }
    assert answers["yes 2^53"][0] == 400 and answers["yes 2^53-1"][0] == 202
    # and the SDK's own endpoint draws the same lines (the sandbox has none)
    now = int(time.time() * 1000)
    with httpx.Client(base_url=peer.url, headers={"Authorization": client}, timeout=30) as http:

        def sdk(toggle: dict[str, Any], start: Any = now) -> int:
            bucket = {"start": start, "stop": start, "toggles": {flag: toggle}}
            body = {"appName": "flagdesk-compat-bounds", "instanceId": "i", "bucket": bucket}
            return http.post("/api/client/metrics", json=body).status_code

        assert sdk({"yes": MAX_METRIC_COUNT, "no": 0}) == 202
        assert sdk({"yes": MAX_METRIC_COUNT + 1, "no": 0}) == 400
        assert sdk({"yes": 1, "no": 0, "variants": {"v": MAX_METRIC_COUNT + 1}}) == 400
        assert sdk({"yes": 1, "no": 0}, start=MAX_TIME_MS + 1) == 400


def test_the_sandbox_drops_what_unleash_drops(
    peer: Peer, sandbox: SandboxProcess, unique: Callable[[str], str], cleanup: Cleanup
) -> None:
    client = peer.require_client_token()  # default:development...
    flag = unique("drops")
    make_flag(peer, cleanup, flag)
    known_flags(sandbox, [flag])  # the sandbox, as Unleash, drops the metrics of unknown flags
    metrics = [
        item(flag, appName="env-default", environment="default", yes=3, no=1),
        item(flag, appName="env-production", environment="production", yes=3, no=1),
        item(flag, appName="zero", yes=0, no=0, variants={"a": 3}),
        item(flag, appName="kept", yes=0, no=2, variants={"a": 2}),
        item(flag, appName="kept-too", yes=5, no=6),
    ]
    assert post_bulk(peer.url, client, metrics) == 202
    assert post_bulk(sandbox.url, sandbox.client_token, metrics) == 202
    expected = {"kept/development": (0, 2), "kept-too/development": (5, 6)}
    assert peer_counts(peer, flag, lambda got: got == expected) == expected
    assert sandbox_counts(sandbox, flag) == expected


def test_an_sdk_payload_uploaded_by_flagdesk_lands_where_the_sdks_own_post_does(
    peer: Peer, unique: Callable[[str], str], cleanup: Cleanup, tmp_path: Path
) -> None:
    """Finding 4: the Python SDK's payload (no environment) posted by the SDK itself is counted
    in the client token's environment; uploaded by flagdesk with that token, the same."""
    client = peer.require_client_token()
    flag = unique("sdk")
    make_flag(peer, cleanup, flag)
    path = tmp_path / "sdk.json"
    path.write_text(json.dumps(sdk_payload(flag, 248, 252)))
    result = flagdesk("upload", path, "--url", peer.url, "--json",
                      env={"FLAGDESK_CLIENT_TOKEN": client}, data=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.stderr
    expected = {"sdk-app/development": (248, 252)}
    assert peer_counts(peer, flag, lambda got: got == expected) == expected
