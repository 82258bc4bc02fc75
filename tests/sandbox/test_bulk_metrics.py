"""Endpoint 7, POST /api/client/metrics/bulk: 202, 400, 413, 415 (and 401/403 for tokens)."""

from __future__ import annotations

import json
import threading
from collections import Counter
from datetime import UTC, datetime

import httpx

from app.api.models import FeatureMetricsRaw, FeatureUsage
from app.api.wire import BULK_METRICS_BODY_LIMIT, json_path
from sandbox import db
from sandbox.process import SandboxProcess
from tests.conftest import known_flags
from tests.sandbox.conftest import assert_error

HOUR = 3_600_000
_NOW = int(datetime.now(UTC).timestamp() * 1000)
#: an hour window three hours ago: it and the next are within the raw read's 48 hours
BASE = _NOW - _NOW % HOUR - 3 * HOUR


def padded(size: int) -> bytes:
    """A valid bulk body of exactly `size` bytes (JSON allows trailing whitespace)."""
    body = b'{"applications":[],"metrics":[]}'
    return body + b" " * (size - len(body))


def post(http: httpx.Client, body: bytes | dict) -> httpx.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return http.post(
        "/api/client/metrics/bulk", content=content, headers={"content-type": "application/json"}
    )


def raw_windows(sb: SandboxProcess, feature: str) -> list:
    with sb.admin() as http:
        r = http.get(f"/api/admin/client-metrics/features/{feature}/raw", params={"hoursBack": 48})
    return FeatureMetricsRaw.model_validate(r.json()).data


def test_limit_is_exactly_102400_bytes(demo_sandbox):
    assert BULK_METRICS_BODY_LIMIT == 102_400  # the spec's limit, and Unleash's
    with demo_sandbox.client() as http:
        ok = post(http, padded(BULK_METRICS_BODY_LIMIT))
        assert ok.status_code == 202, ok.text
        assert ok.content == b""
        assert_error(post(http, padded(BULK_METRICS_BODY_LIMIT + 1)), 413, "ContentTooLarge")


def test_limit_holds_for_a_streamed_body_without_length(demo_sandbox):
    def chunks(total):
        body = padded(total)
        for i in range(0, len(body), 8192):
            yield body[i : i + 8192]

    with demo_sandbox.client() as http:
        r = http.post(
            "/api/client/metrics/bulk",
            content=chunks(BULK_METRICS_BODY_LIMIT + 1),
            headers={"content-type": "application/json"},
        )
        assert "content-length" not in r.request.headers
        assert_error(r, 413, "ContentTooLarge")
        r = http.post(
            "/api/client/metrics/bulk",
            content=chunks(BULK_METRICS_BODY_LIMIT),
            headers={"content-type": "application/json"},
        )
        assert r.status_code == 202


def test_content_type_must_be_json(demo_sandbox):
    with demo_sandbox.client() as http:
        for ctype in ("text/plain", "application/x-www-form-urlencoded"):
            r = http.post(
                "/api/client/metrics/bulk",
                content=b'{"applications":[],"metrics":[]}',
                headers={"content-type": ctype},
            )
            body = assert_error(r, 415, "ContentTypeerror")
            assert ctype in body["message"]
        r = http.post(
            "/api/client/metrics/bulk",
            content=b'{"applications":[],"metrics":[]}',
            headers={"content-type": "application/json; charset=utf-8"},
        )
        assert r.status_code == 202


def test_invalid_payload_names_the_bad_items(demo_sandbox):
    good = {"featureName": "f", "appName": "a", "environment": "development", "yes": 1}
    body = {
        "applications": [{"appName": "a", "environment": "development"}],
        "metrics": [
            good,
            {**good, "yes": -1},
            {**good, "featureName": None},
            good,
            {**good, "timestamp": "yesterday"},
        ],
    }
    with demo_sandbox.client() as http:
        err = assert_error(post(http, body), 400, "ValidationError")
        paths = {d["path"] for d in err["details"]}
        assert paths == {
            "$.applications[0].instanceId",
            "$.metrics[1].yes",
            "$.metrics[2].featureName",
            "$.metrics[4].timestamp",
        }
        assert_error(post(http, {}), 400, "ValidationError")
        assert_error(post(http, b"[1, 2"), 400, "ValidationError")
        assert post(http, {"applications": [], "metrics": []}).status_code == 202


def test_a_key_that_needs_quoting_is_named_in_the_one_json_path_notation(demo_sandbox):
    """A variant name with a space is a key a JSON path must quote: the sandbox names it as
    every layer does (`app.api.wire.json_path`), `variants["blue green"]`."""
    metric = {"featureName": "f", "appName": "a", "environment": "development",
              "timestamp": BASE, "yes": 1, "no": 0, "variants": {"blue green": "many"}}  # fmt: skip
    with demo_sandbox.client() as http:
        err = assert_error(post(http, {"applications": [], "metrics": [metric]}), 400,
                           "ValidationError")  # fmt: skip
    path = '$.metrics[0].variants["blue green"]'
    assert path == json_path(("metrics", 0, "variants", "blue green"), root="$")
    assert [d["path"] for d in err["details"]] == [path]
    assert err["details"][0]["message"].startswith(path + ": ")


def test_tokens(demo_sandbox):
    url = demo_sandbox.url + "/api/client/metrics/bulk"
    body = {"applications": [], "metrics": []}
    assert_error(httpx.post(url, json=body), 401, "AuthenticationRequired")
    with demo_sandbox.admin() as http:
        err = assert_error(post(http, body), 403, "NoAccessError")
    assert "client" in err["message"]


def test_sums_per_feature_app_environment_and_hour(sandbox):
    app = {
        "appName": "shop",
        "environment": "development",
        "instanceId": "i-1",
        "started": BASE,
        "strategies": ["default"],
        "sdkVersion": "node:6",
        "interval": 15,
    }

    def metric(ts, yes, no, env="development", app_name="shop", **variants):
        return {
            "featureName": "sum-check",
            "appName": app_name,
            "environment": env,
            "timestamp": ts,
            "yes": yes,
            "no": no,
            "variants": variants,
        }

    iso = datetime.fromtimestamp((BASE + 10 * 60_000) / 1000, UTC).isoformat()
    body = {
        "applications": [app],
        "metrics": [
            metric(BASE, 1, 2, blue=1),
            metric(BASE + 59 * 60_000, 10, 20, blue=4, green=6),  # same window
            metric(iso, 100, 200),  # RFC 3339 string, same window
            metric(BASE + HOUR, 5, 5),  # next window
            metric(BASE, 7, 0, env="production"),  # not the token's environment: dropped
            metric(BASE, 0, 3, app_name="admin-ui"),
        ],
    }
    known_flags(sandbox, ["sum-check"])
    with sandbox.client() as http:
        assert post(http, body).status_code == 202
        assert post(http, body).status_code == 202  # the same again: counts add up
    got = {
        (w.appName, w.environment, int(w.timestamp.timestamp() * 1000)): w
        for w in raw_windows(sandbox, "sum-check")
    }
    assert set(got) == {
        ("shop", "development", BASE),
        ("shop", "development", BASE + HOUR),
        ("admin-ui", "development", BASE),
    }
    w = got[("shop", "development", BASE)]
    assert (w.yes, w.no, w.variants) == (222, 444, {"blue": 10, "green": 12})
    assert (
        got[("shop", "development", BASE + HOUR)].yes,
        got[("shop", "development", BASE + HOUR)].no,
    ) == (10, 10)
    assert got[("admin-ui", "development", BASE)].no == 6


def test_fields_left_out_take_the_schemas_defaults(sandbox):
    """Optional fields a body leaves out (timestamp, yes, no, variants; an application's
    strategies, sdkVersion, connectVia) are read as their defaults: no timestamp is the current
    hour; and NaN, which JSON does not have, is refused."""
    body = {
        "applications": [{"appName": "bare", "environment": "development", "instanceId": "b-1",
                          "started": BASE, "interval": 15}],
        "metrics": [
            {"featureName": "defaults-check", "appName": "bare", "environment": "development"},
            {"featureName": "defaults-check", "appName": "bare", "environment": "development",
             "yes": 4},
            {"featureName": "defaults-check", "appName": "bare", "environment": "development",
             "no": 2, "variants": {"red": 2}},
        ],
    }  # fmt: skip
    before = int(datetime.now(UTC).timestamp() * 1000)
    known_flags(sandbox, ["defaults-check"])
    with sandbox.client() as http:
        assert post(http, body).status_code == 202
        nan = json.dumps(body).replace('"interval": 15', '"interval": NaN')
        assert_error(post(http, nan.encode()), 400, "ValidationError")
    (window,) = raw_windows(sandbox, "defaults-check")
    assert (window.appName, window.yes, window.no, window.variants) == ("bare", 4, 2, {"red": 2})
    stamp = int(window.timestamp.timestamp() * 1000)
    assert stamp == before - before % HOUR or stamp == before - before % HOUR + HOUR


def test_an_application_without_started_or_interval_is_refused_after_the_rest_is_stored(
    sandbox,
):
    """As Unleash 8.2 (tests/compat/test_metrics_applications.py): 400, yet the body's metrics
    and its other application items are stored (Unleash registers each item and the metrics,
    then answers 400 when one registration failed); the sandbox's 400 has its error body
    (Unleash's is empty). A frontend SDK's item needs neither field; `started` or `interval`
    given as null is refused before anything is stored."""
    known_flags(sandbox, ["apps-check"])
    app = {"appName": "apps", "environment": "development", "instanceId": "i-1"}
    metric = {"featureName": "apps-check", "appName": "apps", "environment": "development",
              "timestamp": BASE, "yes": 2, "no": 1}  # fmt: skip
    complete = {**app, "instanceId": "i-ok", "started": BASE, "interval": 15}
    body = {"applications": [complete, {**app, "interval": 15}, {**app, "started": BASE}],
            "metrics": [metric]}  # fmt: skip
    frontend = {**app, "instanceId": "i-front", "sdkType": "frontend", "sdkVersion": "js:3"}
    with sandbox.client() as http:
        err = assert_error(post(http, body), 400, "ValidationError")
        assert [d["path"] for d in err["details"]] == [
            "$.applications[1].started",
            "$.applications[2].interval",
        ]
        nulls = {"applications": [{**complete, "started": None}], "metrics": [metric]}
        err = assert_error(post(http, nulls), 400, "ValidationError")
        assert [d["path"] for d in err["details"]] == ["$.applications[0].started"]
        assert post(http, {"applications": [frontend], "metrics": []}).status_code == 202
    [w] = raw_windows(sandbox, "apps-check")
    assert (w.yes, w.no) == (2, 1)  # the first body's, once; the null one's not at all
    conn = db.connect(sandbox.db)
    try:
        instances = {r[0] for r in conn.execute(
            "SELECT instance_id FROM client_instances WHERE app_name = 'apps'")}  # fmt: skip
    finally:
        conn.close()
    assert instances == {"i-ok", "i-front"}


def test_metrics_of_a_flag_the_server_does_not_know_are_dropped(sandbox):
    """As on Unleash 8.2 (tests/compat/test_metrics_unknown_flags.py): answered 202, not
    stored, and not counted once the flag is created either; an archived flag's are stored."""

    def body(feature: str, yes: int) -> dict:
        metric = {"featureName": feature, "appName": "a", "environment": "development",
                  "yes": yes, "no": 1}  # fmt: skip
        return {"applications": [], "metrics": [metric]}

    def usage(http: httpx.Client, feature: str) -> list[tuple[int, int]]:
        r = http.get(f"/api/admin/client-metrics/features/{feature}")
        return [(u.yes, u.no) for u in FeatureUsage.model_validate(r.json()).lastHourUsage]

    with sandbox.client() as http:
        assert post(http, body("never-created", 4)).status_code == 202
    with sandbox.admin() as http:
        assert usage(http, "never-created") == []
        assert raw_windows(sandbox, "never-created") == []
        made = http.post("/api/admin/projects/default/features", json={"name": "never-created"})
        assert made.status_code == 201, made.text
        assert usage(http, "never-created") == []
    with sandbox.client() as http:
        assert post(http, body("never-created", 6)).status_code == 202
    with sandbox.admin() as http:
        assert usage(http, "never-created") == [(6, 1)]
        assert http.delete("/api/admin/projects/default/features/never-created").status_code == 202
    with sandbox.client() as http:
        assert post(http, body("never-created", 2)).status_code == 202
    with sandbox.admin() as http:
        assert usage(http, "never-created") == [(8, 2)]


def test_eight_concurrent_uploaders_sum_exactly(sandbox):
    features = [f"conc-{i}" for i in range(5)]
    known_flags(sandbox, features)
    expected: Counter = Counter()
    errors: list[str] = []

    def uploader(k: int) -> None:
        with sandbox.client() as http:
            for n in range(25):
                metrics = [
                    {
                        "featureName": f,
                        "appName": f"app-{k % 3}",
                        "environment": "development",
                        "timestamp": BASE + (n % 3) * HOUR,
                        "yes": k + n + 1,
                        "no": n,
                        "variants": {"v": 1},
                    }
                    for f in features
                ]
                r = post(http, {"applications": [], "metrics": metrics})
                if r.status_code != 202:
                    errors.append(r.text)

    for k in range(8):
        for n in range(25):
            for f in features:
                expected[(f, "yes")] += k + n + 1
                expected[(f, "no")] += n
                expected[(f, "v")] += 1
    threads = [threading.Thread(target=uploader, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for f in features:
        windows = raw_windows(sandbox, f)
        assert sum(w.yes for w in windows) == expected[(f, "yes")]
        assert sum(w.no for w in windows) == expected[(f, "no")]
        assert sum(w.variants.get("v", 0) for w in windows) == expected[(f, "v")]


def test_accepted_metrics_survive_a_kill_right_after_202(tmp_path):
    sb = SandboxProcess(tmp_path / "kill.sqlite3", "--empty").start()
    known_flags(sb, ["durable"])
    try:
        with sb.client() as http:
            for n in range(20):
                r = post(
                    http,
                    {
                        "applications": [],
                        "metrics": [
                            {
                                "featureName": "durable",
                                "appName": "a",
                                "environment": "development",
                                "timestamp": BASE,
                                "yes": 1,
                                "no": n,
                            }
                        ],
                    },
                )
                assert r.status_code == 202
    finally:
        sb.kill()  # SIGKILL: no shutdown, no checkpoint
    again = SandboxProcess(
        tmp_path / "kill.sqlite3", admin_token=sb.admin_token, client_token=sb.client_token
    ).start()
    try:
        [w] = raw_windows(again, "durable")
        assert (w.yes, w.no) == (20, sum(range(20)))
    finally:
        again.stop()


def test_writes_from_auth_and_uploads_never_collide(sandbox, personal_token):
    """A personal token's use is recorded in a write; with uploads running beside it, every
    request must still succeed (all store calls stay on the server's event-loop thread)."""
    token = personal_token(sandbox, "amara.okafor")
    known_flags(sandbox, ["race"])
    failures: list[str] = []

    def reader() -> None:
        with httpx.Client(base_url=sandbox.url, headers={"Authorization": token}) as http:
            for _ in range(150):
                r = http.get("/api/admin/projects")
                if r.status_code != 200:
                    failures.append(f"read {r.status_code}")

    def uploader() -> None:
        with sandbox.client() as http:
            for n in range(150):
                metric = {"featureName": "race", "appName": "a", "environment": "development",
                          "timestamp": BASE, "yes": 1, "no": n % 2}  # fmt: skip
                r = post(http, {"applications": [], "metrics": [metric]})
                if r.status_code != 202:
                    failures.append(f"upload {r.status_code}")

    threads = [threading.Thread(target=f) for f in (reader, reader, uploader, uploader)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    [w] = raw_windows(sandbox, "race")
    assert (w.yes, w.no) == (300, 150)


def test_a_56_mb_body_gets_413_with_an_error_body(demo_sandbox):
    """Far past the limit the 413 is still an answer with the spec's error body (not a reset
    connection while the client still sends): the body sent whole, and in chunks with no
    content-length (chunked transfer encoding)."""
    size = 56 * 1024 * 1024
    body = padded(size)

    def chunks():
        for i in range(0, size, 1 << 20):
            yield body[i : i + (1 << 20)]

    with demo_sandbox.client() as http:
        whole = http.post("/api/client/metrics/bulk", content=body,
                          headers={"content-type": "application/json"})  # fmt: skip
        assert whole.request.headers["content-length"] == str(size)
        assert_error(whole, 413, "ContentTooLarge")
        chunked = http.post("/api/client/metrics/bulk", content=chunks(),
                            headers={"content-type": "application/json"})  # fmt: skip
        assert "content-length" not in chunked.request.headers
        assert chunked.request.headers["transfer-encoding"] == "chunked"
        assert_error(chunked, 413, "ContentTooLarge")
        assert post(http, padded(100)).status_code == 202  # and the sandbox still answers
