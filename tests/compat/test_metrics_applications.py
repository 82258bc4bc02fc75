"""Bulk application items without `started` or `interval`, on the real Unleash and on the
sandbox playing its version (`target`).

Unleash registers each application item of a bulk body (`clientRegisterSchema`: `started` and
`interval` required; on 5.12 `strategies` too) and the body's metrics side by side, waits for
all of them, and answers 400 if a registration failed: so the metrics of a body answered 400
for an application item ARE counted (measured on the 8.2 peer). Unleash's 400 has an empty
body; the sandbox's has its error body, naming each missing field. A frontend SDK's item
(`sdkType` "frontend" with an `sdkVersion`) is registered without them from 6.10 (5.12: 400).
`started` given as null is refused by the request schema before anything is stored.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx

from tests.compat.conftest import Cleanup, Peer, per_version
from tests.compat.test_metrics_bounds import item, make_flag, peer_counts

APP = "flagdesk-compat-apps"


def post(target: Peer, applications: list[dict[str, Any]], metrics: list[Any]) -> httpx.Response:
    with httpx.Client(base_url=target.url, headers={"Authorization": target.client_token},
                      timeout=30) as http:  # fmt: skip
        return http.post(
            "/api/client/metrics/bulk", json={"applications": applications, "metrics": metrics}
        )


def test_an_application_without_started_or_interval_is_refused_and_its_metrics_counted(
    target: Peer, peer: Peer, unique: Callable[[str], str], cleanup: Cleanup
) -> None:
    target.require_client_token()
    flag = unique("apps")
    make_flag(target, cleanup, flag)
    now = int(time.time() * 1000)
    app = {"appName": APP, "environment": "development", "instanceId": "i"}
    both = {"interval": 10_000, "started": now}
    full = {**app, **both, "strategies": ["default"]}
    refused = [app, {**app, "started": now}, {**app, "interval": 10_000}]
    refused += per_version(target, {"5.12": [{**app, **both}], "6.10 7.6 8.2": []})
    for application in refused:
        assert post(target, [application], []).status_code == 400, application
    assert post(target, [full], []).status_code == 202
    assert post(target, [{**full, "started": None}], [item(flag, appName=APP)]).status_code == 400
    frontend = {**app, "sdkType": "frontend", "sdkVersion": "unleash-client-js:3.6.0"}
    assert post(target, [frontend], []).status_code == per_version(
        target, {"5.12": 400, "6.10 7.6 8.2": 202}
    )
    # refused for the application item, yet the body's metrics are counted (once)
    answer = post(target, [{**app, "interval": 10_000}], [item(flag, appName=APP, yes=7, no=2)])
    assert answer.status_code == 400
    # Unleash's 400 has an empty body, and so has the sandbox's when it plays a release (its
    # own error body, naming the field, is tests/sandbox/test_bulk_metrics.py's)
    assert answer.content == b""
    expected = {f"{APP}/development": (7, 2)}
    assert peer_counts(target, flag, lambda got: got == expected) == expected
