"""The raw metrics read's `hoursBack`, on the real Unleash and on the sandbox playing its version
(`target`).

Unleash 8.2 (`ClientMetricsController.parseHoursBackQueryParam`) takes one value that
JavaScript's `Number()` reads as 1 to 48 ("0x3" and "2e0" too) and reads 24 hours for anything
else (none, 0, 49, -1, "abc", "", the parameter twice), never an error; the hours read are the
last N, the current one included, and nothing of a later hour is shown. Measured on the 8.2
peer; the sandbox used to answer 400 outside 1 to 8,784 and to read every later hour.

Unleash also lists every hour read with zero counts where nothing is stored; the comparison
here is of the hours with counts.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

import httpx

from tests.compat.conftest import Cleanup, Peer
from tests.compat.test_metrics_bounds import item, make_flag, post_bulk

HOUR_MS = 3_600_000
APP = "flagdesk-compat-hours"
#: the hours (before the current one; negative: later) the test writes a metric into
HOURS_AGO = (0, 1, 2, 23, 24, 47, 48, -2)
#: hoursBack as sent -> the hours ago shown
EXPECTED: dict[Any, set[int]] = {
    "1": {0},
    "2": {0, 1},
    "3": {0, 1, 2},
    "48": {0, 1, 2, 23, 24, 47},
    "0x3": {0, 1, 2},
    "2e0": {0, 1},
    " 3 ": {0, 1, 2},
    None: {0, 1, 2, 23},
    "0": {0, 1, 2, 23},
    "49": {0, 1, 2, 23},
    "-1": {0, 1, 2, 23},
    "abc": {0, 1, 2, 23},
    "": {0, 1, 2, 23},
    ("2", "3"): {0, 1, 2, 23},
}


def shown(http: httpx.Client, flag: str, hours_back: Any, hour: int) -> set[int]:
    params: Any = {} if hours_back is None else {"hoursBack": hours_back}
    if isinstance(hours_back, tuple):
        params = [("hoursBack", v) for v in hours_back]
    r = http.get(f"/api/admin/client-metrics/features/{flag}/raw", params=params)
    assert r.status_code == 200, (hours_back, r.text)
    stamps = [w["timestamp"] for w in r.json()["data"] if w["appName"] == APP and w["yes"]]
    return {(hour - _ms(stamp)) // HOUR_MS for stamp in stamps}


def _ms(stamp: str) -> int:
    return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)


def test_hours_back_reads_1_to_48_hours_and_24_for_any_other_value(
    target: Peer, unique: Callable[[str], str], cleanup: Cleanup
) -> None:
    client = target.require_client_token()
    flag = unique("hours")
    make_flag(target, cleanup, flag)
    now = int(time.time() * 1000)
    if now % HOUR_MS > HOUR_MS - 60_000:  # the reads must end in the hour the metrics were put
        time.sleep((HOUR_MS - now % HOUR_MS) / 1000 + 1)
        now = int(time.time() * 1000)
    hour = now - now % HOUR_MS
    metrics = [item(flag, appName=APP, timestamp=hour - k * HOUR_MS + 60_000) for k in HOURS_AGO]
    assert post_bulk(target.url, client, metrics) == 202
    with target.raw() as http:
        deadline = time.monotonic() + 30  # Unleash stores them at its next flush
        while shown(http, flag, "48", hour) != EXPECTED["48"] and time.monotonic() < deadline:
            time.sleep(0.5)
        got = {str(v): shown(http, flag, v, hour) for v in EXPECTED}
    assert int(time.time() * 1000) // HOUR_MS == hour // HOUR_MS, "an hour began meanwhile"
    assert got == {str(v): ks for v, ks in EXPECTED.items()}
