"""Metrics of a flag the server does not know, on the real Unleash and on the sandbox playing
its version (`target`): from 7 answered 202, not stored, and not counted once the flag is
created; 5.12 and 6.10 store them (their `registerBulkMetrics` does not sift; measured).

Unleash 8.2's `ClientMetricsServiceV2.registerBulkMetrics` sifts every batch through
`filterExistingToggleNames` (the names of every flag, archived ones too, cached for 10 s): the
metrics of other names go to the "unknown flags" report and are never stored, both from
`/api/client/metrics/bulk` and from an SDK's own `/api/client/metrics`. Measured on the 8.2 peer:
the raw read of such a flag is empty before and after the flag is created; what is posted once
the server knows the flag is counted, once.

Whether Unleash has stored what it accepted shows only after its next flush (every few seconds),
and nothing shows for what it dropped: each body naming the unknown flag names a known one too,
and the known one's counts showing up means the flush that would have stored the other's ran.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.compat.conftest import Cleanup, Peer, per_version
from tests.compat.test_metrics_bounds import item, make_flag, peer_counts, post_bulk
from tests.metrics.test_cli_metrics import flagdesk, sdk_payload

APP = "flagdesk-compat-unknown"


def test_metrics_of_an_unknown_flag_are_dropped_and_not_counted_once_it_is_created(
    target: Peer, unique: Callable[[str], str], cleanup: Cleanup, tmp_path: Path
) -> None:
    client = target.require_client_token()
    known, unknown = unique("known"), unique("unknown")
    make_flag(target, cleanup, known)
    # an SDK's payload (uploaded by flagdesk as a bulk body), then a bulk body naming both
    path = tmp_path / "sdk.json"
    path.write_text(json.dumps(sdk_payload(unknown, 248, 252)))
    sdk = flagdesk("upload", path, "--url", target.url, "--json",
                   env={"FLAGDESK_CLIENT_TOKEN": client}, data=tmp_path)  # fmt: skip
    assert sdk.returncode == 0, (sdk.stdout, sdk.stderr)
    assert json.loads(sdk.stdout)["accepted"]["metrics"] == 1  # 202: the server said yes
    body = [item(unknown, appName=APP, yes=5, no=2), item(known, appName=APP, yes=1, no=1)]
    assert post_bulk(target.url, client, body) == 202
    flushed = {f"{APP}/development": (1, 1)}
    assert peer_counts(target, known, lambda got: got == flushed) == flushed
    kept = {f"{APP}/development": (5, 2), "sdk-app/development": (248, 252)}
    before = per_version(target, {"5.12 6.10": kept, "7.6 8.2": {}})
    assert peer_counts(target, unknown, lambda got: True) == before  # one read, once flushed
    # created now: what came before it stays uncounted; what comes after is counted once
    make_flag(target, cleanup, unknown)
    assert post_bulk(target.url, client, [item(unknown, appName=APP, yes=3, no=4)]) == 202
    after = {**before, f"{APP}/development": (3 + 5 * bool(before), 4 + 2 * bool(before))}
    assert peer_counts(target, unknown, lambda got: got == after) == after
    with target.raw() as http:
        usage = http.get(f"/api/admin/client-metrics/features/{unknown}").json()
    assert ("sdk-app" in usage["seenApplications"]) == bool(before)
