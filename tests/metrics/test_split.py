"""Splitting a batch into request bodies: each within the limit on its exact bytes, valid on its
own with the applications its metrics use; together exactly the valid metrics, once each; an
item too large for any body (metric or application) left out, counted and saved."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from app import resources
from app.api.models import BulkApplication, BulkMetric, BulkMetrics
from app.metrics import Batch, Body, load
from app.metrics.split import ENVELOPE
from sandbox import db
from sandbox.process import SandboxProcess
from tests.conftest import known_flags

HOUR = 3_600_000
BASE = int(datetime(2026, 11, 20, 10, tzinfo=UTC).timestamp() * 1000)
GENERATE = resources.samples() / "generate.py"


def metric(feature: str, app: str, **more: Any) -> dict[str, Any]:
    item: dict[str, Any] = {"featureName": feature, "appName": app, "environment": "development"}
    item.update({"timestamp": BASE, "yes": 3, "no": 1})
    item.update(more)
    return item


def application(app: str, instance: str = "1", **more: Any) -> dict[str, Any]:
    item: dict[str, Any] = {"appName": app, "environment": "development", "instanceId": instance}
    item.update({"interval": 15, "started": BASE - HOUR, "sdkVersion": "unleash-client-node:6.1"})
    item.update(more)
    return item


def key(item: BulkMetric) -> tuple[Any, ...]:
    stamp = item.timestamp
    if isinstance(stamp, datetime):
        stamp = int(stamp.timestamp() * 1000)
    variants = tuple(sorted(item.variants.items()))
    return (item.featureName, item.appName, item.environment, stamp, item.yes, item.no, variants)


def sent(bodies: list[Body], max_body: int) -> tuple[Counter[tuple[Any, ...]], list[BulkMetrics]]:
    """Every body checked on its own; the metrics of all of them."""
    assert [b.index for b in bodies] == list(range(len(bodies)))
    parsed = []
    metrics: Counter[tuple[Any, ...]] = Counter()
    for body in bodies:
        assert len(body.data) <= max_body
        compact = json.dumps(json.loads(body.data), separators=(",", ":"), ensure_ascii=False)
        assert body.data == compact.encode()
        batch = BulkMetrics.model_validate_json(body.data)
        assert body.metrics == len(batch.metrics) and body.applications == len(batch.applications)
        assert body.metrics or body.applications
        metrics.update(key(m) for m in batch.metrics)
        parsed.append(batch)
    return metrics, parsed


@pytest.fixture
def mixed(tmp_path: Path) -> tuple[list[Path], Counter[tuple[Any, ...]], list[dict[str, Any]]]:
    """Three files of every shape: the files, their valid metrics, their application items."""
    apps = [application("web"), application("web", "2"), application("api"), application("unused")]
    bulk_metrics = [metric(f"f{i % 7}", ["web", "api"][i % 2], yes=i) for i in range(1, 60)]
    bulk_metrics += [metric("x", "web", variants={"blue": 2, "green": 1})] * 3
    bulk = tmp_path / "bulk.json"
    bulk.write_text(json.dumps({"applications": apps, "metrics": bulk_metrics}, indent=1))
    lines = [metric(f"g{i % 5}", ["web", "mobile", "api"][i % 3], no=i) for i in range(80)]
    lines.insert(
        10, {"featureName": "bad", "appName": "web", "environment": "development", "yes": -1}
    )
    ndjson = tmp_path / "more.ndjson"
    ndjson.write_text("\n".join(map(json.dumps, lines)))
    sdk = tmp_path / "sdk.json"
    toggles = {f"t{i}": {"yes": i, "no": 1} for i in range(12)}
    sdk.write_text(json.dumps({
        "appName": "sdk-app", "instanceId": "s-1", "environment": "development",
        "bucket": {"start": BASE, "stop": BASE + HOUR, "toggles": toggles},
    }))  # fmt: skip
    expected: Counter[tuple[Any, ...]] = Counter()
    for item in bulk_metrics + lines[:10] + lines[11:]:
        expected[key(BulkMetric.model_validate(item))] += 1
    for name, toggle in toggles.items():
        item = metric(name, "sdk-app", yes=toggle["yes"], no=1)
        expected[key(BulkMetric.model_validate(item))] += 1
    sdk_app = application("sdk-app", "s-1", interval=3600, started=BASE)
    del sdk_app["sdkVersion"]
    return [bulk, ndjson, sdk], expected, [*apps, sdk_app]


@pytest.mark.parametrize("max_body", [ENVELOPE + 200, 600, 1_000, 4_096, 102_400])
def test_bodies_hold_every_valid_metric_once(
    mixed: tuple[list[Path], Counter[tuple[Any, ...]], list[dict[str, Any]]], max_body: int
) -> None:
    paths, expected, apps = mixed
    batch = load(paths)
    assert batch.metric_count == sum(expected.values())
    bodies = batch.bodies(max_body)
    metrics, parsed = sent(bodies, max_body)
    assert metrics == expected
    assert batch.unsendable == 0
    assert [p for p in batch.problems if "cannot be sent" in p.message] == []
    # every application item goes at least once; unused ones exactly once
    sent_apps = Counter(a.model_dump_json() for body in parsed for a in body.applications)
    for app in apps:
        dumped = BulkApplication.model_validate(app).model_dump_json()
        assert sent_apps[dumped] >= 1, app
    assert sent_apps[BulkApplication.model_validate(apps[3]).model_dump_json()] == 1
    if max_body >= 600:  # smaller: the applications of every appName go alone, first
        assert "unused" in {a.appName for a in parsed[0].applications}
    # a body with metrics of an application carries its application items (when they fit)
    if max_body >= 600:
        for body in parsed:
            names = {m.appName for m in body.metrics} - {"mobile"}  # "mobile" has none
            assert names <= {a.appName for a in body.applications}, body
            for name in names:
                instances = {a.instanceId for a in body.applications if a.appName == name}
                assert instances == {a["instanceId"] for a in apps if a["appName"] == name}


def test_bodies_are_filled(tmp_path: Path) -> None:
    """One application, no application items: every body but the last is as full as the next
    item allows."""
    items = [metric(f"feature-{i}", "web", yes=i) for i in range(1, 2_000)]
    path = tmp_path / "m.ndjson"
    path.write_text("\n".join(map(json.dumps, items)))
    batch = load([path])
    for max_body in (600, 10_000, 102_400):
        bodies = batch.bodies(max_body)
        metrics, _ = sent(bodies, max_body)
        assert sum(metrics.values()) == len(items)
        largest = max(len(json.dumps(i, separators=(",", ":"))) for i in items)
        assert all(len(b.data) > max_body - largest - 1 for b in bodies[:-1])
    assert len(batch.bodies()) == 3  # 1,999 items of about 120 bytes


def test_the_default_limit_is_unleash_s(tmp_path: Path) -> None:
    path = tmp_path / "m.ndjson"
    path.write_text("\n".join(json.dumps(metric(f"f{i}", "web")) for i in range(3_000)))
    bodies = load([path]).bodies()
    assert max(len(b.data) for b in bodies) <= 102_400
    assert max(len(b.data) for b in bodies) > 102_000


def test_an_item_too_large_for_any_body(tmp_path: Path) -> None:
    big = metric("huge", "web", variants={f"variant-{i}": i for i in range(100)})
    items = [metric("a", "web"), big, metric("b", "web")]
    path = tmp_path / "m.ndjson"
    path.write_text("\n".join(map(json.dumps, items)))
    batch = load([path])
    bodies = batch.bodies(1_000)
    metrics, _ = sent(bodies, 1_000)
    assert {k[0] for k in metrics} == {"a", "b"}
    assert batch.unsendable == 1
    (problem,) = batch.errors
    size = len(json.dumps(big, separators=(",", ":"))) + ENVELOPE
    assert (problem.file, problem.line, problem.path) == (str(path), 2, "[1]")
    assert problem.message == (
        f"this metric item cannot be sent: a body holding only this item takes {size:,} bytes, "
        "over the body limit of 1,000 bytes"
    )
    saved = tmp_path / "invalid.ndjson"
    assert batch.write_invalid(saved) == 1
    record = json.loads(saved.read_text())
    assert json.loads(record["raw"]) == big
    assert record["problems"][0]["message"] == problem.message
    # a larger limit: nothing left out, and the old problem is gone
    assert sum(b.metrics for b in batch.bodies(5_000)) == 3
    assert batch.unsendable == 0 and batch.errors == []


def test_an_application_item_too_large_for_any_body_is_left_out_and_counted(
    tmp_path: Path,
) -> None:
    """Every item not sent counts as left out, an application item as much as a metric."""
    big = application("web", sdkVersion="x" * 3_000)
    path = tmp_path / "b.json"
    path.write_text(json.dumps({"applications": [big], "metrics": [metric("a", "web")]}))
    batch = load([path])
    assert batch.left_out == 0
    metrics, parsed = sent(batch.bodies(2_048), 2_048)
    assert sum(metrics.values()) == 1 and all(not b.applications for b in parsed)
    assert (batch.unsendable, batch.unsendable_applications, batch.left_out) == (0, 1, 1)
    (problem,) = batch.errors
    assert problem.path == "applications[0]" and "application item cannot be sent" in (
        problem.message
    )
    saved = tmp_path / "invalid.ndjson"
    assert batch.write_invalid(saved) == batch.left_out == 1
    assert json.loads(json.loads(saved.read_text())["raw"]) == big
    batch.bodies()  # the default limit takes it: nothing left out any more
    assert batch.left_out == 0 and batch.errors == []


def test_an_item_that_fits_only_without_its_applications(tmp_path: Path) -> None:
    apps = [application("web", instance=f"instance-{i}") for i in range(2)]
    middle = metric("middle", "web", variants={f"v{i}": i for i in range(60)})
    items = [metric("a", "web"), middle, metric("b", "web")]
    path = tmp_path / "b.json"
    path.write_text(json.dumps({"applications": apps, "metrics": items}))
    batch = load([path])
    apps_bytes = sum(len(json.dumps(a, separators=(",", ":"))) + 1 for a in apps)
    middle_bytes = len(json.dumps(middle, separators=(",", ":")))
    max_body = ENVELOPE + middle_bytes + 50
    assert apps_bytes <= max_body // 2 and ENVELOPE + apps_bytes + middle_bytes > max_body
    bodies = batch.bodies(max_body)
    metrics, parsed = sent(bodies, max_body)
    assert sum(metrics.values()) == 3 and batch.unsendable == 0
    alone = [b for b in parsed if any(m.featureName == "middle" for m in b.metrics)]
    assert [len(b.applications) for b in alone] == [0]
    assert sum(len(b.applications) for b in parsed) >= 2


def test_applications_too_large_to_repeat_go_once(tmp_path: Path) -> None:
    apps = [application("web", instance=f"instance-{i:03}") for i in range(40)]
    items = [metric(f"f{i}", "web") for i in range(30)]
    path = tmp_path / "b.json"
    path.write_text(json.dumps({"applications": apps, "metrics": items}))
    batch = load([path])
    bodies = batch.bodies(4_000)
    metrics, parsed = sent(bodies, 4_000)
    assert sum(metrics.values()) == 30
    assert sum(len(b.applications) for b in parsed) == 40  # each once


def test_an_application_too_large_for_any_body(tmp_path: Path) -> None:
    apps = [application("web", strategies=[f"strategy-{i}" for i in range(100)])]
    path = tmp_path / "b.json"
    path.write_text(json.dumps({"applications": apps, "metrics": [metric("a", "web")]}))
    batch = load([path])
    bodies = batch.bodies(800)
    assert [(b.metrics, b.applications) for b in bodies] == [(1, 0)]
    (problem,) = batch.errors
    assert (problem.line, problem.path) == (1, "applications[0]")
    assert problem.message.startswith("this application item cannot be sent")


def test_an_empty_batch_and_a_limit_too_small(tmp_path: Path) -> None:
    assert Batch().bodies() == []
    path = tmp_path / "m.ndjson"
    path.write_text(json.dumps(metric("a", "web")))
    with pytest.raises(ValueError, match="leaves no room"):
        load([path]).bodies(ENVELOPE)


def test_bodies_one_at_a_time(tmp_path: Path) -> None:
    path = tmp_path / "m.ndjson"
    path.write_text("\n".join(json.dumps(metric(f"f{i}", f"app{i % 3}")) for i in range(500)))
    batch = load([path])
    assert list(batch.iter_bodies(2_000)) == batch.bodies(2_000)


def test_uploaded_bodies_add_up_to_the_file_in_the_sandbox(tmp_path: Path) -> None:
    """End to end: generated metrics and the samples, split small, posted to a sandbox; what
    it stores per feature, application, environment and window equals the preview's rows."""
    import subprocess
    import sys

    start = int(datetime.now(UTC).timestamp() * 1000) // HOUR * HOUR
    generated = tmp_path / "gen.json"
    subprocess.run(
        [sys.executable, str(GENERATE), "--metrics", "3000", "--format", "bulk",
         "--seed", "5", "--start", str(start), "--out", str(generated)],
        check=True,
    )  # fmt: skip
    samples = GENERATE.parent
    paths = [generated, *(samples / n for n in ("array.json", "metrics.ndjson", "sdk.json"))]
    batch = load(paths)
    assert batch.errors == []
    bodies = batch.bodies(3_000)
    assert len(bodies) > 100
    with SandboxProcess(tmp_path / "sandbox.sqlite3", "--empty") as sb, sb.client() as http:
        known_flags(sb, (r.feature for r in batch.totals().rows))
        for body in bodies:
            r = http.post(
                "/api/client/metrics/bulk",
                content=body.data,
                headers={"content-type": "application/json"},
            )
            assert r.status_code == 202, r.text
        conn = db.connect(sb.db)
        try:
            stored = stored_rows(conn)
            variants = dict(
                conn.execute(
                    "SELECT variant, sum(count) FROM client_metric_variants GROUP BY variant"
                ).fetchall()
            )
            instances = conn.execute("SELECT count(*) FROM client_instances").fetchone()[0]
        finally:
            conn.close()
    rows = batch.totals().rows
    timed = {(r.feature, r.app, r.environment, r.window, r.yes, r.no) for r in rows if r.window}
    assert timed <= stored
    # a metric without timestamp is counted in the window it arrived in
    untimed = {(r.feature, r.app, r.environment, r.yes, r.no) for r in rows if r.window is None}
    assert untimed == {(f, a, e, y, n) for f, a, e, _, y, n in stored - timed}
    assert len(untimed) == 1 and len(stored) == len(rows)
    assert variants == batch.totals().variants
    assert instances == batch.application_count


def stored_rows(conn: sqlite3.Connection) -> set[tuple[Any, ...]]:
    return {
        tuple(row)
        for row in conn.execute(
            "SELECT feature, app_name, environment, window_start, yes, no FROM client_metrics"
        )
    }
