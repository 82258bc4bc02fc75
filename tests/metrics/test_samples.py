"""The samples in app/resources/samples/ load as documented; the generator's batches load clean."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from app import resources
from app.metrics import load
from sandbox import db
from sandbox.demo import APPS
from sandbox.store import Store

SAMPLES = resources.samples()
GENERATE = SAMPLES / "generate.py"

VALID = [
    # (file, format, metrics, applications)
    ("bulk.json", "bulk", 5, 2),
    ("array.json", "array", 4, 0),
    ("metrics.ndjson", "ndjson", 5, 0),
    ("sdk.json", "sdk", 3, 1),
]


@pytest.fixture(scope="module")
def demo_features(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    """The flags of the sandbox's demo data that are not archived."""
    conn = db.connect(tmp_path_factory.mktemp("demo") / "demo.sqlite3")
    try:
        db.migrate(conn)
        store = Store(conn)
        store.initialise()
        from sandbox.demo import load_demo

        load_demo(store)
        rows = conn.execute("SELECT name FROM features WHERE archived_at IS NULL").fetchall()
    finally:
        conn.close()
    return {row[0] for row in rows}


@pytest.mark.parametrize(("name", "fmt", "metrics", "applications"), VALID)
def test_valid_samples(
    name: str, fmt: str, metrics: int, applications: int, demo_features: set[str]
) -> None:
    batch = load([SAMPLES / name])
    assert batch.problems == []
    assert [(s.format, s.metrics, s.applications) for s in batch.sources] == [
        (fmt, metrics, applications)
    ]
    totals = batch.totals()
    assert set(totals.features) <= demo_features  # an upload to the demo sandbox counts them
    assert set(totals.applications) <= set(APPS)
    assert set(totals.environments) == {"development"}  # the sandbox client token's
    assert sum(b.metrics for b in batch.bodies(600)) == metrics


def test_all_valid_samples_together() -> None:
    batch = load([SAMPLES / name for name, *_ in VALID])
    assert batch.problems == []
    assert batch.metric_count == sum(m for _, _, m, _ in VALID)


def problems(name: str) -> list[tuple[str, int | None, str | None, str]]:
    batch = load([SAMPLES / name])
    assert all(p.file == str(SAMPLES / name) for p in batch.problems)
    return [(p.severity, p.line, p.path, p.message) for p in batch.problems]


def test_invalid_ndjson_shows_each_kind_of_problem() -> None:
    assert problems("invalid.ndjson") == [
        ("error", 2, "[1]", "JSON syntax error: expected a comma or a closing bracket"),
        ("error", 3, "[2].featureName",
         "featureName is missing: a metric item needs featureName, appName and environment"),
        ("error", 4, "[3].yes", 'yes must be a whole number, not "12"'),
        ("error", 5, "[4].no", "no must be 0 or more, not -4"),
        ("warning", 6, "[5].timestamp", "timestamp 1795165200 looks like seconds; milliseconds "
         "were meant? As milliseconds it is 1970-01-21T18:39:25Z, as seconds 2026-11-20T09:00:00Z"),
        ("warning", 7, "[6]", "yes and no are both 0: Unleash answers 202 and drops this metric"),
        ("error", 8, "[7].timestamp", "'yesterday' is not a time: give an RFC 3339 date-time "
         "string or an integer (milliseconds since the epoch)"),
        ("error", 9, "[8].variants.blue",
         "the count of variant 'blue' must be a whole number, not 1.5"),
        ("error", 10, "[9]", "a metric item must be a JSON object, not an array"),
        ("warning", 11, "[10].timestamp",
         "timestamp 2031-01-01T00:00:00Z is in the future (more than an hour ahead)"),
        ("error", 12, "[11]", "unexpected text after the item (NDJSON has one item a line)"),
    ]  # fmt: skip
    batch = load([SAMPLES / "invalid.ndjson"])
    assert (batch.metric_count, batch.invalid_count) == (5, 8)


def test_invalid_bulk_payload() -> None:
    assert problems("invalid.json") == [
        ("error", 3, "applications[0].started", "application 'web-frontend' has no started and "
         "no interval: Unleash 8.2 answers 400 to a body holding it (and still counts the body's "
         "metrics); the item is left out, its metrics are sent; give both started and interval "
         "to send it"),
        ("error", 4, "applications[1].instanceId",
         "instanceId is missing: an application item needs appName, environment and instanceId"),
        ("error", 8, "metrics[1].featureName", "featureName must be a string, not 42"),
        ("error", 9, "metrics[2].environment",
         "environment is missing: a metric item needs featureName, appName and environment"),
        ("warning", 10, "metrics[3].timestamp", "timestamp 1999-12-31T23:00:00Z is before 2000"),
        ("warning", 12, "impactMetrics", "impactMetrics is not sent: flagdesk sends the "
         "applications and metrics of a bulk payload"),
    ]  # fmt: skip


def test_broken_document() -> None:
    assert problems("broken.json") == [
        ("error", 5, None, "JSON syntax error: expected a property name in double quotes; "
         "nothing of this file is loaded"),
    ]  # fmt: skip
    batch = load([SAMPLES / "broken.json"])
    assert batch.problems[0].column == 146
    assert batch.metric_count == 0 and batch.invalid_count == 1


def generate(tmp_path: Path, *args: str) -> Path:
    out = tmp_path / f"gen-{len(list(tmp_path.iterdir()))}"
    subprocess.run(
        [sys.executable, str(GENERATE), *args, "--out", str(out)], check=True, timeout=120
    )
    return out


@pytest.mark.parametrize(("fmt", "expected"), [("ndjson", "ndjson"), ("bulk", "bulk"),
                                               ("array", "array")])  # fmt: skip
def test_generated_batches_load_clean(tmp_path: Path, fmt: str, expected: str) -> None:
    path = generate(tmp_path, "--metrics", "5000", "--format", fmt, "--seed", "3")
    batch = load([path])
    assert batch.problems == []
    assert [(s.format, s.metrics) for s in batch.sources] == [(expected, 5000)]
    assert batch.sources[0].applications == (5 if fmt == "bulk" else 0)
    totals = batch.totals()
    assert totals.total.metrics == 5000
    assert len(totals.windows) == 24
    assert set(totals.environments) == {"development"}


def test_the_generator_is_deterministic(tmp_path: Path) -> None:
    fixed = ["--metrics", "300", "--start", "1795165200000"]
    a = generate(tmp_path, *fixed, "--seed", "9")
    b = generate(tmp_path, *fixed, "--seed", "9")
    c = generate(tmp_path, *fixed, "--seed", "10")
    assert a.read_bytes() == b.read_bytes() != c.read_bytes()
    windows = {json.loads(line)["timestamp"] for line in a.read_text().splitlines()}
    assert max(windows) == 1795165200000 - 3_600_000
    envs = generate(tmp_path, *fixed, "--environments", "development,production", "--hours", "2")
    assert load([envs]).totals().environments.keys() == {"development", "production"}
