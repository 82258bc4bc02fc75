"""The sandbox's bounds on client metrics are Unleash 8.2's (measured on the peer; see
tests/compat/test_metrics_bounds.py), and nothing it stores can make a read fail.

Unleash 8.2 answers 400 to a count (yes, no, a variant's) above 2^53 - 1 and to a time in
milliseconds further than 8.64e15 from 1970, on both metrics endpoints. It answers 202 and then
stores nothing of a metric for another environment than the client token's, with yes and no both
0, with an application name over 255 characters, or whose sums pass its columns (yes/no BIGINT,
a variant's count INTEGER); the sandbox drops the same, and the hours no date-time can show.
"""

from __future__ import annotations

from datetime import UTC, datetime

import httpx

from app.api.models import ArchivedFeatures, FeatureMetricsRaw, FeatureUsage
from app.api.wire import MAX_METRIC_COUNT, MAX_TIME_MS
from sandbox import db
from sandbox.process import SandboxProcess
from sandbox.store.metrics import MAX_STORED_COUNT, MAX_STORED_VARIANT
from tests.sandbox.conftest import assert_error

HOUR = 3_600_000
NOW = int(datetime.now(UTC).timestamp() * 1000)


def metric(feature: str, **fields: object) -> dict[str, object]:
    item: dict[str, object] = {
        "featureName": feature,
        "appName": "bounds",
        "environment": "development",  # the client token's
        "timestamp": NOW,
        "yes": 1,
        "no": 0,
    }
    item.update(fields)
    return item


def post(http: httpx.Client, *metrics: dict[str, object]) -> httpx.Response:
    return http.post("/api/client/metrics/bulk", json={"applications": [], "metrics": metrics})


def create_flag(sb: SandboxProcess, name: str) -> None:
    with sb.admin() as http:
        r = http.post("/api/admin/projects/default/features", json={"name": name})
        assert r.status_code == 201, r.text


def read_everything(sb: SandboxProcess, feature: str) -> list[tuple[int, int, dict[str, int]]]:
    """Every admin route that shows `feature`'s metrics answers 200 with a body of its model
    (usage, raw over its 48 hours, the project's onboarding, and once archived its last seen);
    returns the raw windows' (yes, no, variants)."""
    with sb.admin() as http:
        r = http.get(f"/api/admin/client-metrics/features/{feature}")
        assert r.status_code == 200, r.text
        usage = FeatureUsage.model_validate(r.json())
        r = http.get(f"/api/admin/client-metrics/features/{feature}/raw",
                     params={"hoursBack": 48})  # fmt: skip
        assert r.status_code == 200, r.text
        raw = FeatureMetricsRaw.model_validate(r.json())
        r = http.get("/api/admin/personal-dashboard/default")
        assert r.status_code == 200, r.text
        assert http.delete(f"/api/admin/projects/default/features/{feature}").status_code == 202
        r = http.get("/api/admin/archive/features/default")
        assert r.status_code == 200, r.text
        ArchivedFeatures.model_validate(r.json())
        assert http.post(f"/api/admin/archive/revive/{feature}").status_code == 200
    assert {(w.yes, w.no) for w in usage.lastHourUsage} <= {(w.yes, w.no) for w in raw.data}
    return [(w.yes, w.no, w.variants) for w in raw.data]


def test_counts_above_2_53_are_refused_as_unleash_does(sandbox):
    create_flag(sandbox, "big")
    top = MAX_METRIC_COUNT
    with sandbox.client() as http:
        assert post(http, metric("big", yes=top, no=top)).status_code == 202
        # 202, and not stored: a variant's count past 2^31 - 1 (Unleash's column) is lost
        assert post(http, metric("big", variants={"v": top})).status_code == 202
        for field in ("yes", "no"):
            for value in (top + 1, 2**62, 2**63, 2**64, -1):
                body = assert_error(post(http, metric("big", **{field: value})), 400,
                                    "ValidationError")  # fmt: skip
                assert f"$.metrics[0].{field}" in body["message"], body
        body = assert_error(post(http, metric("big", variants={"v": top + 1})), 400,
                            "ValidationError")  # fmt: skip
        assert "$.metrics[0].variants.v" in body["message"], body
        assert_error(post(http, metric("big", yes=1.5)), 400, "ValidationError")
    assert read_everything(sandbox, "big") == [(top, top, {})]


def test_times_beyond_what_javascript_dates_hold_are_refused(sandbox):
    create_flag(sandbox, "when")
    with sandbox.client() as http:
        last = int(datetime(9999, 12, 31, 23, 59, tzinfo=UTC).timestamp() * 1000)
        first = int(datetime(1, 1, 1, tzinfo=UTC).timestamp() * 1000)
        for ms in (MAX_TIME_MS, -MAX_TIME_MS, NOW, last, first, first - 1):
            assert post(http, metric("when", timestamp=ms)).status_code == 202
        for ms in (MAX_TIME_MS + 1, -MAX_TIME_MS - 1, 2**63):
            body = assert_error(post(http, metric("when", timestamp=ms)), 400, "ValidationError")
            assert "$.metrics[0].timestamp" in body["message"], body
        assert_error(post(http, metric("when", timestamp="not a time")), 400, "ValidationError")
    windows = read_everything(sandbox, "when")
    # the raw read shows this hour (its 24 hours end with the current one)
    assert windows == [(1, 0, {})]
    # years 275760, -271821 and 0 are answered 202 and not stored: no date-time can show them;
    # year 1 and the last hour of year 9999 are
    conn = db.connect(sandbox.db)
    try:
        query = "SELECT window_start FROM client_metrics WHERE feature = 'when' ORDER BY 1"
        stored = [r[0] for r in conn.execute(query)]
    finally:
        conn.close()
    assert stored == [first, NOW - NOW % HOUR, last - last % HOUR]


def test_sums_never_pass_what_a_read_can_show(sandbox):
    """Sums past 2^63 - 1 (yes, no) or 2^31 - 1 (a variant) are not stored, so a read never
    fails: each body that would pass them is answered 202 and dropped, as Unleash's flush
    drops it."""
    create_flag(sandbox, "sum")
    top = MAX_METRIC_COUNT
    body = [metric("sum", yes=top, no=top)] * 600
    with sandbox.client() as http:
        for _ in range(3):  # 600 * (2^53 - 1) fits in 63 bits; 1,200 of them do not
            assert post(http, *body).status_code == 202
        assert (
            post(http, metric("sum", yes=1, variants={"v": MAX_STORED_VARIANT})).status_code == 202
        )
        assert post(http, metric("sum", yes=1, variants={"v": 1})).status_code == 202
        assert post(http, metric("sum", yes=1, variants={"w": 7})).status_code == 202
    [(yes, no, variants)] = read_everything(sandbox, "sum")
    assert (yes, no) == (600 * top + 2, 600 * top) and yes <= MAX_STORED_COUNT
    assert variants == {"v": MAX_STORED_VARIANT, "w": 7}


def test_what_unleash_drops_is_not_stored(sandbox):
    create_flag(sandbox, "dropped")
    with sandbox.client() as http:
        r = post(
            http,
            metric("dropped", environment="production"),  # not the token's (development)
            metric("dropped", environment="default"),
            metric("dropped", yes=0, no=0, variants={"a": 3}),  # yes and no both 0
            metric("dropped", appName="a" * 256),  # longer than Unleash's app_name column
            metric("dropped", appName="a" * 255, yes=2, no=3),  # kept
        )
        assert r.status_code == 202 and r.content == b""
    assert read_everything(sandbox, "dropped") == [(2, 3, {})]
