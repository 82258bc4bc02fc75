"""Loading metrics: formats, every kind of bad input with its file, line, column and path,
warnings, the preview's sums, invalid items, progress and cancel; items nested too deeply are
left out alike in every format, and never escape as RecursionError."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from app import resources
from app.api.models import BulkApplication, BulkMetric
from app.metrics import (
    ApplicationItem,
    Batch,
    Cancelled,
    InputProblem,
    load,
    load_text,
    sourcefile,
    token_environment,
)
from app.metrics.items import APPLICATION, METRIC
from app.metrics.jsontext import MAX_DEPTH
from app.metrics.read import HEAD
from app.metrics.sourcefile import CHUNK, LISTED

HOUR = 3_600_000
#: 2026-11-20T10:00:00Z
BASE = int(datetime(2026, 11, 20, 10, tzinfo=UTC).timestamp() * 1000)


def metric(
    feature: str = "cart-v2", app: str = "web", env: str = "development", **more: Any
) -> dict[str, Any]:
    item: dict[str, Any] = {"featureName": feature, "appName": app, "environment": env}
    item.update({"timestamp": BASE, "yes": 3, "no": 1})
    item.update(more)
    return item


def line(item: Any) -> str:
    return json.dumps(item)


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(text, str):
        path.write_text(text, encoding="utf-8")
    else:
        path.write_bytes(text)
    return path


def only(batch: Batch, severity: str = "error") -> InputProblem:
    found = [p for p in batch.problems if p.severity == severity]
    assert len(found) == 1, batch.problems
    return found[0]


# --------------------------------------------------------------------------- formats


def test_ndjson_is_one_metric_a_line(tmp_path: Path) -> None:
    text = "\n".join(line(metric(f"f{i}", yes=i + 1)) for i in range(3)) + "\n\n"
    batch = load([write(tmp_path, "m.ndjson", text)])
    assert [(s.format, s.metrics, s.applications) for s in batch.sources] == [("ndjson", 3, 0)]
    assert batch.problems == []
    assert batch.metric_count == 3 and batch.invalid_count == 0
    assert batch.totals().total.yes == 1 + 2 + 3


def test_a_json_array_of_metric_items(tmp_path: Path) -> None:
    for text in (
        json.dumps([metric(), metric("b")]),
        json.dumps([metric(), metric("b")], indent=4),
    ):
        batch = load([write(tmp_path, "a.json", text)])
        assert [(s.format, s.metrics) for s in batch.sources] == [("array", 2)]
        assert batch.problems == []


def test_a_bulk_payload_compact_or_pretty(tmp_path: Path) -> None:
    app = {"appName": "web", "environment": "development", "instanceId": "i", "interval": 15}
    app["started"] = BASE
    body = {"applications": [app], "metrics": [metric(), metric("b")]}
    for text in (
        json.dumps(body),
        json.dumps(body, indent=2),
        json.dumps(dict(reversed(body.items()))),
    ):
        batch = load([write(tmp_path, "b.json", text)])
        assert [(s.format, s.metrics, s.applications) for s in batch.sources] == [("bulk", 2, 1)]
        assert batch.problems == []
        assert batch.application_count == 1


def sdk_payload(**more: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "appName": "shop",
        "instanceId": "shop-1",
        "environment": "production",
        "sdkVersion": "unleash-client-go:4.1.0",
        "bucket": {
            "start": "2026-11-20T10:00:00.000Z",
            "stop": "2026-11-20T11:00:00.000Z",
            "toggles": {
                "cart-v2": {"yes": 5, "no": 2, "variants": {"a": 4, "b": 1}},
                "odd name.x": {"yes": 1, "no": 0},
            },
        },
    }
    payload.update(more)
    return payload


def test_an_sdk_payload_becomes_bulk_items(tmp_path: Path) -> None:
    batch = load([write(tmp_path, "sdk.json", json.dumps(sdk_payload(), indent=2))])
    assert [(s.format, s.metrics, s.applications) for s in batch.sources] == [("sdk", 2, 1)]
    assert batch.problems == []
    (body,) = batch.bodies()
    sent = json.loads(body.data)
    assert sent["applications"] == [
        {
            "appName": "shop",
            "environment": "production",
            "instanceId": "shop-1",
            "interval": 3600,  # stop - start, in seconds
            "started": "2026-11-20T10:00:00Z",
            "strategies": [],  # Unleash 5.12 answers 400 to an application without the list
            "sdkVersion": "unleash-client-go:4.1.0",
        }
    ]
    by_feature = {m["featureName"]: m for m in sent["metrics"]}
    assert by_feature["cart-v2"] == {
        "featureName": "cart-v2",
        "appName": "shop",
        "environment": "production",
        "timestamp": "2026-11-20T10:00:00Z",
        "yes": 5,
        "no": 2,
        "variants": {"a": 4, "b": 1},
    }
    assert by_feature["odd name.x"]["yes"] == 1
    assert batch.totals().rows[0].window == BASE


def test_an_sdk_payload_without_environment_or_instance(tmp_path: Path) -> None:
    payload = sdk_payload()
    del payload["environment"], payload["instanceId"]
    batch = load([write(tmp_path, "sdk.json", json.dumps(payload))])
    assert batch.errors == []
    messages = [(p.path, p.message) for p in batch.warnings]
    assert ("environment", "the payload names no environment: its metrics and application are "
            "sent for environment 'default'") in messages  # fmt: skip
    assert any(path == "instanceId" and "'shop'" in m for path, m in messages)
    sent = json.loads(batch.bodies()[0].data)
    assert {m["environment"] for m in sent["metrics"]} == {"default"}
    assert sent["applications"][0]["environment"] == "default"
    assert sent["applications"][0]["instanceId"] == "shop"


def test_an_sdk_payload_with_bad_toggles(tmp_path: Path) -> None:
    payload = sdk_payload()
    payload["bucket"]["toggles"]["neg"] = {"yes": -1, "no": 1}
    payload["bucket"]["toggles"]["flat"] = 7
    batch = load([write(tmp_path, "sdk.json", json.dumps(payload))])
    assert [(p.path, p.message) for p in batch.errors] == [
        ("bucket.toggles.neg.yes", "yes must be 0 or more, not -1"),
        (
            "bucket.toggles.flat",
            "a toggle must be an object with yes, no and variants, not a number",
        ),
    ]
    assert batch.metric_count == 2 and batch.invalid_count == 2


def test_an_sdk_payload_without_bucket(tmp_path: Path) -> None:
    batch = load([write(tmp_path, "sdk.json", json.dumps({"appName": "shop", "instanceId": "x"}))])
    problem = only(batch)
    assert problem.path == "bucket"
    assert problem.message.startswith("bucket is missing: an SDK payload needs appName and bucket")
    assert batch.metric_count == 0 and batch.invalid_count == 1


def test_clipboard_text() -> None:
    batch = load_text(line(metric()) + "\n" + '{"featureName": 1}\n')
    assert [(s.file, s.format, s.metrics) for s in batch.sources] == [("<clipboard>", "ndjson", 1)]
    assert str(batch.errors[0]).startswith("<clipboard>:2: [1].featureName: featureName must be")
    assert load_text(json.dumps([metric()]), "pasted").sources[0].format == "array"


def test_several_files_make_one_batch(tmp_path: Path) -> None:
    a = write(tmp_path, "a.ndjson", line(metric(yes=1)) + "\n")
    b = write(tmp_path, "b.json", json.dumps([metric(yes=2), metric("other", yes=4)]))
    batch = load([a, str(b)])
    assert [(s.file, s.format, s.metrics) for s in batch.sources] == [
        (str(a), "ndjson", 1),
        (str(b), "array", 2),
    ]
    assert batch.metric_count == 3
    assert batch.totals().features["cart-v2"].yes == 3


def test_a_bom_is_skipped(tmp_path: Path) -> None:
    for name, text in (("m.ndjson", line(metric())), ("a.json", json.dumps([metric()]))):
        batch = load([write(tmp_path, name, b"\xef\xbb\xbf" + text.encode())])
        assert batch.problems == [] and batch.metric_count == 1


def test_ndjson_with_a_first_line_longer_than_the_head(tmp_path: Path) -> None:
    """Too long to tell from the head: read as a document first, then as NDJSON."""
    big = metric(variants={f"v{i:05}": 1 for i in range(HEAD // 10)})
    text = line(big) + "\n" + line(metric("b")) + "\n"
    batch = load([write(tmp_path, "m.ndjson", text)])
    assert [(s.format, s.metrics) for s in batch.sources] == [("ndjson", 2)]
    assert batch.problems == []


def test_ndjson_whose_first_line_is_broken(tmp_path: Path) -> None:
    text = '{"featureName": "a",\n' + "\n".join(line(metric(f"f{i}")) for i in range(3)) + "\n"
    batch = load([write(tmp_path, "m.ndjson", text)])
    assert batch.sources[0].format == "ndjson"
    assert only(batch).line == 1
    assert batch.metric_count == 3


# --------------------------------------------------------------------------- bad NDJSON lines


BAD_LINES: list[tuple[str, int | None, str, str]] = [
    # (line text, column, path, message)
    ('{"featureName": "a", "appName": "w" "environment": "d"}', 37, "[1]",
     "JSON syntax error: expected a comma or a closing bracket"),
    ('{"featureName": "a", "appName": "w", "environment": "d", "yes": NaN}', None, "[1].yes",
     "yes must be a whole number, not NaN"),
    ('{"featureName": "a", "appName": "w", "environment": "d"} x', 58, "[1]",
     "unexpected text after the item (NDJSON has one item a line)"),
    ('{"featureName": "a", "appName": "w", "environment": "d", "yes": 1', 66, "[1]",
     "JSON syntax error: expected a comma or a closing bracket"),
    ('{"featureName": "a\\x", "appName": "w", "environment": "d"}', 19, "[1]",
     "JSON syntax error: an invalid escape in a string"),
    ('{"appName": "w", "environment": "d"}', None, "[1].featureName",
     "featureName is missing: a metric item needs featureName, appName and environment"),
    ('{"featureName": 5, "appName": "w", "environment": "d"}', None, "[1].featureName",
     "featureName must be a string, not 5"),
    ('{"featureName": "a", "appName": "w", "environment": "d", "yes": "3"}', None, "[1].yes",
     'yes must be a whole number, not "3"'),
    ('{"featureName": "a", "appName": "w", "environment": "d", "no": 1.5}', None, "[1].no",
     "no must be a whole number, not 1.5"),
    ('{"featureName": "a", "appName": "w", "environment": "d", "no": true}', None, "[1].no",
     "no must be a whole number, not true"),
    ('{"featureName": "a", "appName": "w", "environment": "d", "yes": -2}', None, "[1].yes",
     "yes must be 0 or more, not -2"),
    ('{"featureName": "a", "appName": "w", "environment": "d", "variants": {"x": -1}}', None,
     "[1].variants.x", "the count of variant 'x' must be 0 or more, not -1"),
    ('{"featureName": "a", "appName": "w", "environment": "d", "variants": [1]}', None,
     "[1].variants", "variants must be an object, not an array"),
    ('{"featureName": "a", "appName": "w", "environment": "d", "timestamp": "soon"}', None,
     "[1].timestamp", "'soon' is not a time: give an RFC 3339 date-time string or an integer "
     "(milliseconds since the epoch)"),
    ('{"featureName": "a", "appName": "w", "environment": "d", "timestamp": 1.5}', None,
     "[1].timestamp", "1.5 is not a time: give an RFC 3339 date-time string or an integer "
     "(milliseconds since the epoch)"),
    ("[1, 2]", None, "[1]", "a metric item must be a JSON object, not an array"),
    ('"cart-v2"', None, "[1]", "a metric item must be a JSON object, not a string"),
]  # fmt: skip


@pytest.mark.parametrize(("bad", "column", "path", "message"), BAD_LINES)
def test_each_bad_ndjson_line(
    tmp_path: Path, bad: str, column: int | None, path: str, message: str
) -> None:
    """The broken line is line 2 and item [1]; the lines around it still load, alone in a chunk
    and among a chunk of good lines (the one-call path and the line-by-line path)."""
    for before in (1, 3000):
        good = [line(metric(f"f{i}")) for i in range(before)]
        text = "\n".join([good[0], bad, *good[1:], line(metric("last"))]) + "\n"
        batch = load([write(tmp_path, "bad.ndjson", text)])
        problem = only(batch)
        assert (problem.file, problem.line, problem.column, problem.path, problem.message) == (
            str(tmp_path / "bad.ndjson"),
            2,
            column,
            path,
            message,
        )
        assert batch.metric_count == before + 1
        assert batch.invalid_count == 1
        assert batch.sources[0].invalid == 1


def test_not_utf8_in_an_ndjson_line(tmp_path: Path) -> None:
    text = line(metric()).encode() + b"\n" + b'{"featureName": "caf\xe9", "appName": "w"}\n'
    batch = load([write(tmp_path, "m.ndjson", text)])
    problem = only(batch)
    assert (problem.line, problem.column, problem.message) == (2, 21, "the line is not UTF-8 text")


def test_not_utf8_in_a_document(tmp_path: Path) -> None:
    good = line(metric()).encode()
    for before in (1, 30_000):  # in the first chunk, and further on
        text = b"[" + b",\n".join([good] * before) + b',\n{"featureName": "caf\xe9"}]'
        batch = load([write(tmp_path, "m.json", text)])
        problem = only(batch)
        assert (problem.line, problem.column) == (before + 1, 21)
        assert problem.message == (
            "the file is not UTF-8 text (byte 0xe9); nothing of this file is loaded"
        )


def test_a_line_with_two_items(tmp_path: Path) -> None:
    """Joined into one array, such a line would pass as two items: it must not."""
    text = "\n".join([line(metric()), line(metric()) + ", " + line(metric("b")), line(metric())])
    for extra in ("", "\n" + line({"featureName": 1})):
        batch = load([write(tmp_path, "m.ndjson", text + extra)])
        errors = [p for p in batch.errors if p.line == 2]
        assert [(p.line, p.path) for p in errors] == [(2, "[1]")], batch.problems
        assert batch.metric_count == 2


def test_line_numbers_across_chunks(tmp_path: Path) -> None:
    """Lines of a file several chunks long keep their numbers; blank lines count."""
    lines = [line(metric(f"f{i % 50}", yes=i % 7 + 1)) for i in range(30_000)]
    lines[9_000] = '{"featureName": "x", "appName": "w", "environment": "d", "yes": -1}'
    lines[15_000] = '{"featureName": "x", "appName": "w",'
    lines[20_000] = ""
    lines[29_999] = '{"featureName": "x"}'
    path = write(tmp_path, "big.ndjson", "\n".join(lines))
    assert path.stat().st_size > 3 * CHUNK
    batch = load([path])
    assert [(p.line, p.path) for p in batch.problems] == [
        (9_001, "[9000].yes"),
        (15_001, "[15000]"),
        (30_000, "[29998].appName"),
        (30_000, "[29998].environment"),
    ]
    assert batch.metric_count == 30_000 - 4
    assert batch.invalid_count == 3


# --------------------------------------------------------------------------- bad documents


def test_a_broken_document_is_one_error_and_nothing_loads(tmp_path: Path) -> None:
    items = ",\n".join(line(metric(f"f{i}")) for i in range(5))
    text = '{\n"applications": [],\n"metrics": [\n' + items.replace('"f3", ', '"f3" ') + "\n]}\n"
    path = write(tmp_path, "broken.json", text)
    batch = load([path])
    problem = only(batch)
    assert (problem.line, problem.column, problem.path) == (7, 22, None)
    assert problem.message == (
        "JSON syntax error: expected a comma or a closing bracket; nothing of this file is loaded"
    )
    assert batch.metric_count == 0
    assert batch.invalid_count == 1
    assert [(s.format, s.metrics, s.invalid) for s in batch.sources] == [("bulk", 0, 1)]
    assert batch.bodies() == []
    assert batch.totals().rows == []


@pytest.mark.parametrize(
    ("text", "line", "column", "message"),
    [
        ('[{"featureName": "a"},\n', 2, 1,
         "JSON syntax error: the file ends before the JSON document does (the list is not closed)"),
        ('{"metrics": [{"featureName": "a", "appName": "w", "environment": "d"}]', 1, 71,
         "JSON syntax error: the file ends before the JSON document does "
         "(expected a comma or '}' after a property)"),
        ('[{"featureName": "a"}, ]', 1, 24,
         "JSON syntax error: a comma before ']' (a trailing comma is not JSON)"),
        ('[{"featureName": "a"} {"featureName": "b"}]', 1, 23,
         "JSON syntax error: expected a comma or ']' after an item"),
        ('[{"featureName": "a"}]\n[]', 2, 1,
         "JSON syntax error: unexpected text after the JSON document"),
        ('{"metrics": [], "applications": [], "x": nan}', 1, 42,
         "JSON syntax error: expected a JSON value"),
        ('{"metrics": [{"featureName": "a\n"}]}', 1, 32, "JSON syntax error: a control character "
         "(a line break, say) inside a string"),
        ("{\n  \"name\": \"x\"\n}", 1, 1, "this JSON object is neither a bulk payload "
         "(applications, metrics) nor an SDK payload (appName, bucket); NDJSON has one metric "
         "item a line"),
        ("hello world", 1, 1, "JSON syntax error: expected a JSON document (a bulk payload, an "
         "array of metric items or an SDK payload) or one metric item a line (NDJSON)"),
    ],
)  # fmt: skip
def test_broken_documents(tmp_path: Path, text: str, line: int, column: int, message: str) -> None:
    batch = load([write(tmp_path, "d.json", text)])
    problem = only(batch)
    assert (problem.line, problem.column, problem.message) == (
        line,
        column,
        message + "; nothing of this file is loaded",
    )
    assert batch.metric_count == 0


def test_schema_errors_in_a_bulk_payload_name_line_column_and_path(tmp_path: Path) -> None:
    text = (
        "{\n"
        '  "applications": [\n'
        '    {"appName": "w", "environment": "d"}\n'
        "  ],\n"
        '  "metrics": [\n'
        f"    {line(metric())},\n"
        f"    {line(metric(yes='many'))}\n"
        "  ]\n"
        "}\n"
    )
    batch = load([write(tmp_path, "b.json", text)])
    assert [(p.severity, p.line, p.column, p.path, p.message) for p in batch.problems] == [
        ("error", 3, 5, "applications[0].instanceId",
         "instanceId is missing: an application item needs appName, environment and instanceId"),
        ("error", 7, 5, "metrics[1].yes", 'yes must be a whole number, not "many"'),
    ]  # fmt: skip
    assert batch.metric_count == 1 and batch.invalid_count == 2
    assert str(batch.problems[1]) == f"{tmp_path / 'b.json'}:7:5: metrics[1].yes: " + (
        'yes must be a whole number, not "many"'
    )


def test_bulk_lists_of_the_wrong_type_and_extra_keys(tmp_path: Path) -> None:
    text = '{"applications": {}, "metrics": [' + line(metric()) + '],\n "seenTokens": []}'
    batch = load([write(tmp_path, "b.json", text)])
    assert [(p.severity, p.line, p.path, p.message) for p in batch.problems] == [
        ("error", 1, "applications",
         "applications must be an array, not an object; it is left out"),
        ("warning", 2, "seenTokens",
         "seenTokens is not sent: flagdesk sends the applications and metrics of a bulk payload"),
    ]  # fmt: skip
    assert batch.metric_count == 1


def test_a_large_document_across_chunks(tmp_path: Path) -> None:
    """Items found in runs (by the `},{` between them) and one by one give the same items, with
    the right lines: a `},{` inside a string, an invalid item and an item cut by a chunk."""
    items = [metric(f"f{i % 40}", yes=i % 5 + 1) for i in range(25_000)]
    items[100]["featureName"] = 'a"},{"b'  # a boundary look-alike inside a string
    items[12_000]["no"] = -1
    items[24_000]["appName"] = None
    text = '{"applications": [], "metrics": [\n' + ",\n".join(map(line, items)) + "\n]}"
    path = write(tmp_path, "big.json", text)
    assert path.stat().st_size > 2 * CHUNK
    batch = load([path])
    assert [(p.line, p.column, p.path) for p in batch.problems] == [
        (12_002, 1, "metrics[12000].no"),
        (24_002, 1, "metrics[24000].appName"),
    ]
    assert batch.metric_count == 25_000 - 2
    assert batch.totals().features['a"},{"b'].metrics == 1
    assert sum(b.metrics for b in batch.bodies()) == 25_000 - 2


def test_a_document_of_objects_and_other_values(tmp_path: Path) -> None:
    """No `},{` between the items: every item is read one by one, each wrong one reported."""
    items: list[Any] = []
    for i in range(10_000):
        items += [metric(f"f{i % 9}"), i]
    path = write(tmp_path, "mixed.json", json.dumps(items, indent=1))
    assert path.stat().st_size > CHUNK
    batch = load([path])
    assert batch.metric_count == 10_000 and batch.invalid_count == 10_000
    assert {p.message for p in batch.errors} == {
        "a metric item must be a JSON object, not a number"
    }
    assert [p.path for p in batch.errors[:2]] == ["[1]", "[3]"]


def test_a_missing_file_and_an_empty_one(tmp_path: Path) -> None:
    empty = write(tmp_path, "empty.json", "")
    blank = write(tmp_path, "blank.json", "\n \n")
    good = write(tmp_path, "good.ndjson", line(metric()))
    batch = load([tmp_path / "nope.json", empty, blank, tmp_path, good])
    assert [(p.file, p.message) for p in batch.problems] == [
        (str(tmp_path / "nope.json"), "the file cannot be read: No such file or directory"),
        (str(empty), "the file is empty"),
        (str(blank), "the file holds only white space"),
        (str(tmp_path), "the file cannot be read: Is a directory"),
    ]
    assert [s.file for s in batch.sources] == [str(good)]
    assert batch.metric_count == 1


# --------------------------------------------------------------------------- warnings


def test_warnings_for_what_unleash_drops(tmp_path: Path) -> None:
    now = int(datetime.now(UTC).timestamp() * 1000)
    items = [
        metric(yes=0, no=0),
        metric(timestamp=1_795_165_200),  # seconds
        metric(timestamp=1_795_165_200_000_000),  # microseconds
        metric(timestamp=1_000),
        metric(timestamp="1999-12-31T23:59:59Z"),
        metric(timestamp=now + 2 * HOUR),
        metric(timestamp=now + HOUR // 2),  # within the hour ahead: fine
        metric(timestamp="2026-11-20T10:30:00+01:00"),
    ]
    batch = load([write(tmp_path, "w.ndjson", "\n".join(map(line, items)))])
    ahead = datetime.fromtimestamp((now + 2 * HOUR) // 1000, UTC).isoformat()
    assert batch.errors == []
    assert [(p.line, p.path, p.message) for p in batch.warnings] == [
        (1, "[0]", "yes and no are both 0: Unleash answers 202 and drops this metric"),
        (2, "[1].timestamp", "timestamp 1795165200 looks like seconds; milliseconds were meant? "
         "As milliseconds it is 1970-01-21T18:39:25Z, as seconds 2026-11-20T09:00:00Z"),
        (3, "[2].timestamp", "timestamp 1795165200000000 looks like microseconds; milliseconds "
         "were meant? As microseconds it is 2026-11-20T09:00:00Z"),
        (4, "[3].timestamp", "timestamp 1970-01-01T00:00:01Z is before 2000"),
        (5, "[4].timestamp", "timestamp 1999-12-31T23:59:59Z is before 2000"),
        (6, "[5].timestamp", f"timestamp {ahead.replace('+00:00', 'Z')} is in the future (more "
         "than an hour ahead)"),
    ]  # fmt: skip
    assert batch.metric_count == len(items)  # warnings leave nothing out


def test_warnings_of_one_kind_are_listed_up_to_a_limit(tmp_path: Path) -> None:
    items = [metric(yes=0, no=0)] * (LISTED + 50)
    batch = load([write(tmp_path, "z.ndjson", "\n".join(map(line, items)))])
    assert len(batch.warnings) == LISTED + 1
    assert batch.warnings[-1].message == (
        f"50 more metrics with yes and no both 0 (only the first {LISTED} are listed)"
    )


def test_applications_without_started_or_interval_are_left_out(tmp_path: Path) -> None:
    """Unleash 8.2 answers 400 to a body holding one, after counting the body's metrics: the
    item is left out (an error, saved with the invalid items), the metrics are sent. A
    frontend SDK's item (sdkType "frontend" with an sdkVersion) needs neither."""
    apps = [
        {"appName": "a", "environment": "d", "instanceId": "1"},
        {"appName": "b", "environment": "d", "instanceId": "1", "interval": 10},
        {"appName": "c", "environment": "d", "instanceId": "1", "interval": 10, "started": BASE},
        {"appName": "f", "environment": "d", "instanceId": "1", "sdkType": "frontend",
         "sdkVersion": "unleash-client-js:3.6.0"},
    ]  # fmt: skip
    body = {"applications": apps, "metrics": [metric()]}
    batch = load([write(tmp_path, "b.json", json.dumps(body))])
    assert [(p.path, p.message) for p in batch.errors] == [
        ("applications[0].started", "application 'a' has no started and no interval: Unleash "
         "8.2 answers 400 to a body holding it (and still counts the body's metrics); the item "
         "is left out, its metrics are sent; give both started and interval to send it"),
        ("applications[1].started", "application 'b' has no started: Unleash 8.2 answers 400 "
         "to a body holding it (and still counts the body's metrics); the item is left out, "
         "its metrics are sent; give both started and interval to send it"),
    ]  # fmt: skip
    assert (batch.application_count, batch.invalid_count, batch.metric_count) == (2, 2, 1)
    sent = [json.loads(b.data) for b in batch.bodies()]
    assert [a["appName"] for b in sent for a in b["applications"]] == ["c", "f"]
    assert sent[0]["applications"][1]["sdkType"] == "frontend"


SAMPLES = resources.samples()


def test_the_application_items_of_the_samples() -> None:
    """Each distinct application item with its fields as sent, `started` in milliseconds
    whether it was a date-time string or an integer, and where it came from."""
    bulk = SAMPLES / "bulk.json"
    items = load([bulk]).application_items()
    assert items == [
        ApplicationItem(
            app="web-frontend",
            environment="development",
            instance_id="web-frontend-7f9c",
            sdk_version="unleash-client-node:6.1.0",
            started=int(datetime(2026, 11, 20, 8, 12, tzinfo=UTC).timestamp() * 1000),
            interval=15,
            strategies=("default", "flexibleRollout"),
            connect_via=(),
            file=str(bulk),
            line=3,
            path="applications[0]",
        ),
        ApplicationItem(
            app="checkout-service",
            environment="development",
            instance_id="checkout-service-2b41",
            sdk_version="unleash-client-java:9.2.0",
            started=1795162320000,  # given as an integer
            interval=15,
            strategies=(),
            connect_via=(("unleash-edge", "edge-pod-bghzv5"),),
            file=str(bulk),
            line=12,
            path="applications[1]",
        ),
    ]
    assert [i.started_text for i in items] == ["2026-11-20T08:12:00Z"] * 2
    sdk = SAMPLES / "sdk.json"
    (item,) = load([sdk]).application_items()
    assert item == ApplicationItem(
        app="checkout-service",
        environment="development",
        instance_id="checkout-service-2b41",
        sdk_version="unleash-client-java:9.2.0",
        started=int(datetime(2026, 11, 20, 11, tzinfo=UTC).timestamp() * 1000),
        interval=3600,  # bucket.stop - bucket.start
        strategies=(),
        connect_via=(),
        file=str(sdk),
        line=None,
        path="",
    )
    assert item.started_text == "2026-11-20T11:00:00Z"
    # metric items only: no application item
    assert load([SAMPLES / "metrics.ndjson"]).application_items() == []
    # an item found again in a second file is one item, of the first file
    assert load([bulk, sdk, bulk]).application_items() == [*items, item]


def test_application_items_started_in_utc(tmp_path: Path) -> None:
    """An offset is taken into account, a time without one is UTC, and an item without
    started (which a server refuses) is left out."""
    apps = [
        {"appName": "a", "environment": "d", "instanceId": "1", "interval": 10.5,
         "started": "2026-11-20T12:00:00+02:00"},
        {"appName": "b", "environment": "d", "instanceId": "1", "interval": 10,
         "started": "2026-11-20T10:00:00"},
        {"appName": "c", "environment": "d", "instanceId": "1"},
    ]  # fmt: skip
    path = write(tmp_path, "b.json", json.dumps({"applications": apps, "metrics": []}))
    items = load([path]).application_items()
    assert [(i.app, i.started, i.started_text, i.interval) for i in items] == [
        ("a", BASE, "2026-11-20T10:00:00Z", 10.5),
        ("b", BASE, "2026-11-20T10:00:00Z", 10),
    ]
    assert [i.path for i in items] == ["applications[0]", "applications[1]"]


def test_check_against_the_token_and_the_server(tmp_path: Path) -> None:
    items = [metric(env="development"), metric(env="production"), metric("ghost", env="production")]
    path = write(tmp_path, "c.ndjson", "\n".join(map(line, items)))
    batch = load([path])
    assert batch.check(token_environment=None, known_features=None) == []
    assert batch.check(token_environment="*", known_features={"cart-v2", "ghost"}) == []
    found = batch.check(token_environment="development", known_features={"cart-v2"})
    assert [(p.severity, p.file, p.message) for p in found] == [
        ("warning", str(path), "2 metrics for environment 'production', but the client token is "
         "for 'development': Unleash answers 202 and drops them"),
        ("warning", str(path), "feature 'ghost' (1 metric) is not known to the server: Unleash "
         "answers 202 and does not store its counts"),
    ]  # fmt: skip


def test_token_environment() -> None:
    assert token_environment("default:development.abc") == "development"
    assert token_environment("*:production.abc") == "production"
    assert token_environment("[]:staging.abc") == "staging"
    assert token_environment("*:*.abc") == "*"
    assert token_environment("user:abcdef") is None
    assert token_environment("secret") is None


# --------------------------------------------------------------------------- totals


def test_totals_are_summed_per_feature_app_environment_and_window(tmp_path: Path) -> None:
    items = [
        metric("a", "web", timestamp=BASE + 5, yes=1, no=2, variants={"x": 1}),
        metric("a", "web", timestamp="2026-11-20T10:59:59.999Z", yes=10, no=20),
        metric("a", "web", timestamp=BASE + HOUR, yes=100, no=0),
        metric("a", "api", env="production", yes=4, no=4, variants={"x": 2, "y": 2}),
        metric("b", "web", yes=7, no=1),
        {"featureName": "b", "appName": "web", "environment": "development", "yes": 1},
    ]
    batch = load([write(tmp_path, "t.ndjson", "\n".join(map(line, items)))])
    totals = batch.totals()
    rows = [(r.feature, r.app, r.environment, r.window_text, r.metrics, r.yes, r.no, r.variants)
            for r in totals.rows]  # fmt: skip
    assert rows == [
        ("a", "api", "production", "2026-11-20T10:00:00Z", 1, 4, 4, 4),
        ("a", "web", "development", "2026-11-20T10:00:00Z", 2, 11, 22, 1),
        ("a", "web", "development", "2026-11-20T11:00:00Z", 1, 100, 0, 0),
        ("b", "web", "development", "2026-11-20T10:00:00Z", 1, 7, 1, 0),
        ("b", "web", "development", "", 1, 1, 0, 0),
    ]
    assert totals.total.metrics == 6 and totals.total.yes == 123 and totals.total.no == 27
    assert totals.features["a"].yes == 115 and totals.features["b"].metrics == 2
    assert totals.applications["api"].no == 4
    assert totals.environments["production"].metrics == 1
    assert list(totals.windows) == [BASE, BASE + HOUR, None]
    assert totals.windows[BASE].yes == 1 + 10 + 4 + 7
    assert totals.feature_windows[("a", BASE + HOUR)].yes == 100
    assert totals.variants == {"x": 3, "y": 2}
    assert batch.totals() is totals  # made once


# --------------------------------------------------------------------------- invalid items


def test_invalid_items_are_saved_and_can_be_read_back(tmp_path: Path) -> None:
    ndjson = write(
        tmp_path,
        "m.ndjson",
        "\n".join([line(metric()), '{"featureName": "a",', line(metric(yes=-1)), line(metric())]),
    )
    document = write(
        tmp_path,
        "b.json",
        '{"applications": [{"appName": 1}],\n"metrics": [\n  {"featureName": 2}\n]}',
    )
    broken = write(tmp_path, "x.json", "[" + line(metric()) + ",")
    batch = load([ndjson, document, broken])
    saved = tmp_path / "invalid.ndjson"
    assert batch.write_invalid(saved) == batch.invalid_count == 5
    records = [json.loads(text) for text in saved.read_text().splitlines()]
    assert [(r["file"], r["line"], [p["path"] for p in r["problems"]]) for r in records] == [
        (str(ndjson), 2, ["[1]"]),
        (str(ndjson), 3, ["[2].yes"]),
        (str(document), 1, ["applications[0].appName", "applications[0].environment",
                            "applications[0].instanceId"]),
        (str(document), 3, ["metrics[0].featureName", "metrics[0].appName",
                            "metrics[0].environment"]),
        (str(broken), 1, [None]),
    ]  # fmt: skip
    assert records[0]["raw"] == '{"featureName": "a",'
    assert json.loads(records[1]["raw"]) == metric(yes=-1)
    assert json.loads(records[2]["raw"]) == {"appName": 1}
    assert json.loads(records[3]["raw"]) == {"featureName": 2}
    assert records[4]["raw"] == "[" + line(metric()) + ","
    assert records[1]["problems"][0]["message"] == "yes must be 0 or more, not -1"
    # the raw items, fixed, load again
    fixed = [json.loads(r["raw"]) for r in records[1:2]]
    fixed[0]["yes"] = 1
    assert load_text("\n".join(map(line, fixed))).metric_count == 1


def test_lone_surrogates_leave_their_items_out_and_the_rest_loads(tmp_path: Path) -> None:
    """JSON may write `"\\ud800"`, no Unicode text. Where the standard library's scanner reads
    the item (documents, SDK payloads) it was a PydanticSerializationError for the whole load;
    it is an error naming the field, for that item alone, in every place a name can be."""
    application = {"appName": "ok-app", "environment": "dev", "instanceId": "i", "started": BASE,
                   "interval": 10, "strategies": []}  # fmt: skip
    bulk = {
        "applications": [
            application,
            {k: v for k, v in application.items() if k != "started"},  # left out, saved
            {**application, "instanceId": "i-\ud800"},
        ],
        "metrics": [metric("ok"), metric(variants={"v-\udfff": 1}), metric(app="a-\ud800")],
    }
    sdk = sdk_payload()
    sdk["bucket"]["toggles"]["t-\ud800"] = {"yes": 1, "no": 0}
    sdk["bucket"]["toggles"]["bad-\ud800"] = {"yes": -1, "no": 0}
    paths = [
        write(tmp_path, "bulk.json", json.dumps(bulk, indent=1)),  # ASCII: the escapes
        write(tmp_path, "sdk.json", json.dumps(sdk)),
        write(tmp_path, "m.ndjson", line(metric("ok")) + "\n" + line(metric("f-\ud800"))),
    ]
    batch = load(paths)
    assert [(p.file, p.line, p.path, p.message.split(": ")[0]) for p in batch.errors] == [
        # the line where the item starts, as for its other problems
        (str(paths[0]), 11, "applications[1].started", "application 'ok-app' has no started"),
        (str(paths[0]), 18, "applications[2].instanceId",
         "instanceId holds a lone surrogate (\\ud800)"),
        (str(paths[0]), 36, "metrics[1].variants", "variants holds a lone surrogate (\\udfff)"),
        (str(paths[0]), 47, "metrics[2].appName", "appName holds a lone surrogate (\\ud800)"),
        (str(paths[1]), None, 'bucket.toggles["bad-\\ud800"].yes', "yes must be 0 or more, not -1"),
        (str(paths[1]), None, 'bucket.toggles["t-\\ud800"].featureName',
         "featureName holds a lone surrogate (\\ud800)"),
        (str(paths[2]), 2, "[1]", "featureName holds a lone surrogate (\\ud800)"),
    ]  # fmt: skip
    assert [(s.metrics, s.applications, s.invalid) for s in batch.sources] == [
        (1, 1, 4),
        (len(sdk_payload()["bucket"]["toggles"]), 1, 2),
        (1, 0, 1),
    ]
    for body in batch.bodies():
        json.loads(body.data.decode("utf-8"))  # UTF-8, JSON
    saved = tmp_path / "invalid.ndjson"
    assert batch.write_invalid(saved) == batch.invalid_count == 7
    records = [json.loads(text) for text in saved.read_text(encoding="utf-8").splitlines()]
    assert json.loads(records[1]["raw"]) == bulk["applications"][2]  # the item's own text
    assert json.loads(records[3]["raw"]) == bulk["metrics"][2]
    # the SDK's toggles, as JSON: the lone surrogate written as its escape
    assert json.loads(records[4]["raw"]) == {"bad-\ud800": {"yes": -1, "no": 0}}
    assert json.loads(records[5]["raw"])["featureName"] == "t-\ud800"


def test_the_cache_of_timestamps_starts_afresh_and_still_warns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Distinct unrounded times are kept up to a bound, then the cache starts again: the odd ones
    after that are still warned about and counted."""
    monkeypatch.setattr(sourcefile, "WINDOWS_KEPT", 50)
    items = [metric(timestamp=BASE + k * 7) for k in range(400)]
    for k in range(0, 400, 3):
        items[k]["timestamp"] = BASE // 1000 + k  # seconds, not milliseconds
    batch = load([write(tmp_path, "t.ndjson", "\n".join(map(line, items)))])
    odd = [p for p in batch.warnings if p.path is not None and p.path.endswith(".timestamp")]
    assert len(odd) == LISTED
    assert batch.warnings[-1].message == (
        f"{134 - LISTED} more metrics with odd timestamps (only the first {LISTED} are listed)"
    )
    assert sum(row.metrics for row in batch.totals().rows) == 400


# --------------------------------------------------------------------------- progress, cancel


def test_progress_reaches_the_total(tmp_path: Path) -> None:
    a = write(tmp_path, "a.ndjson", "\n".join(line(metric()) for _ in range(20_000)))
    b = write(tmp_path, "b.json", json.dumps([metric()] * 20_000))
    calls: list[tuple[int, int]] = []
    load([a, b], progress=lambda done, total: calls.append((done, total)))
    total = a.stat().st_size + b.stat().st_size
    assert calls[-1] == (total, total)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)
    assert len(calls) >= total // CHUNK
    assert all(t == total for _, t in calls)


@pytest.mark.parametrize("name", ["m.ndjson", "m.json"])
def test_cancel(tmp_path: Path, name: str) -> None:
    items = [metric(f"f{i % 30}") for i in range(40_000)]
    text = "\n".join(map(line, items)) if name.endswith("ndjson") else json.dumps(items)
    path = write(tmp_path, name, text)
    assert path.stat().st_size > 3 * CHUNK
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(Cancelled):
        load([path], cancel=cancel)
    # cancelled while loading, as a GUI's Cancel button does
    cancel = threading.Event()
    calls: list[int] = []

    def progress(done: int, total: int) -> None:
        calls.append(done)
        cancel.set()

    with pytest.raises(Cancelled):
        load([path], progress=progress, cancel=cancel)
    assert len(calls) == 1
    assert load([path], cancel=threading.Event()).metric_count == 40_000


# --------------------------------------------------------------------------- the wire models


AGREEMENT = [
    metric(),
    metric(timestamp="2026-11-20T10:00:00"),
    metric(timestamp=None),
    metric(yes=True),
    metric(no="1"),
    metric(variants={"a": 1.0}),
    metric(variants={"a": -1}),
    {"featureName": "a", "appName": "b"},
    {"featureName": "a", "appName": "b", "environment": "c", "extra": [1]},
    metric(timestamp="2026-13-01T00:00:00Z"),
]


@pytest.mark.parametrize("item", AGREEMENT)
def test_items_are_validated_as_the_wire_model_validates_them(item: dict[str, Any]) -> None:
    """The reader's dict-based validation is made from `BulkMetric`: same verdicts, same
    locations, and the bytes sent are read back by the model as the same item."""
    text = json.dumps(item)
    try:
        expected = BulkMetric.model_validate_json(text)
    except ValidationError as exc:
        with pytest.raises(ValidationError) as raised:
            METRIC.validate_json(text)
        assert [e["loc"] for e in raised.value.errors()] == [e["loc"] for e in exc.errors()]
    else:
        import pydantic_core

        data = pydantic_core.to_json(METRIC.validate_json(text), exclude_none=True)
        assert BulkMetric.model_validate_json(data) == expected


def test_applications_are_validated_as_the_wire_model_validates_them() -> None:
    good = {"appName": "a", "environment": "d", "instanceId": "i", "interval": 1.5,
            "connectVia": [{"appName": "edge", "instanceId": "e"}], "started": BASE}  # fmt: skip
    assert BulkApplication.model_validate(APPLICATION.validate_python(good)) == (
        BulkApplication.model_validate(good)
    )
    bad = {**good, "connectVia": [{"appName": "edge"}], "strategies": "x"}
    with pytest.raises(ValidationError) as ours:
        APPLICATION.validate_python(bad)
    with pytest.raises(ValidationError) as theirs:
        BulkApplication.model_validate(bad)
    assert [e["loc"] for e in ours.value.errors()] == [e["loc"] for e in theirs.value.errors()]


def test_problem_as_text() -> None:
    assert str(InputProblem("error", "f.json", 3, 7, "metrics[2].yes", "bad")) == (
        "f.json:3:7: metrics[2].yes: bad"
    )
    assert str(InputProblem("error", "f.json", 3, None, None, "bad")) == "f.json:3: bad"
    assert (
        str(InputProblem("warning", "<clipboard>", None, 4, "[0]", "odd"))
        == "<clipboard>: [0]: odd"
    )


# --------------------------------------------------------------------------- deep nesting

GOOD = '{"featureName":"a","appName":"b","environment":"development","yes":1}'


def deep_item(levels: int, shape: str) -> str:
    """A valid metric item whose ignored key `x` takes it to `levels` levels (the item is level
    1, a value inside it level 2...), as arrays or objects, ending in a value or empty."""
    inner = levels - 1  # levels below the item
    if shape == "arrays":
        value = "[" * (inner - 1) + "1" + "]" * (inner - 1)
    elif shape == "empty arrays":
        value = "[" * inner + "]" * inner
    else:  # objects
        value = '{"k":' * (inner - 1) + '"v"' + "}" * (inner - 1)
    return GOOD[:-1] + ',"x":' + value + "}"


def as_format(fmt: str, items: list[str]) -> str:
    if fmt == "ndjson":
        return "\n".join(items) + "\n"
    if fmt == "array":
        return "[" + ",".join(items) + "]"
    return '{"applications":[],"metrics":[' + ",".join(items) + "]}"


@pytest.mark.parametrize("shape", ["arrays", "empty arrays", "objects"])
def test_max_depth_is_where_pydantic_stops(shape: str) -> None:
    """NDJSON lines are parsed by pydantic; JSON documents by the standard library's scanner,
    with MAX_DEPTH applied: the two agree only while MAX_DEPTH is pydantic's limit."""
    METRIC.validate_json(deep_item(MAX_DEPTH, shape))
    with pytest.raises(ValidationError, match="recursion limit"):
        METRIC.validate_json(deep_item(MAX_DEPTH + 1, shape))


@pytest.mark.parametrize("fmt", ["ndjson", "array", "bulk"])
@pytest.mark.parametrize("shape", ["arrays", "empty arrays", "objects"])
def test_every_format_takes_and_leaves_out_the_same_depths(fmt: str, shape: str) -> None:
    deepest = load_text(as_format(fmt, [GOOD, deep_item(MAX_DEPTH, shape)]))
    assert (deepest.metric_count, deepest.invalid_count, deepest.errors) == (2, 0, [])
    too_deep = load_text(as_format(fmt, [GOOD, deep_item(MAX_DEPTH + 1, shape), GOOD]))
    assert (too_deep.metric_count, too_deep.invalid_count) == (2, 1)
    problem = only(too_deep)
    index = "[1]" if fmt != "bulk" else "metrics[1]"
    assert problem.path == index and problem.line is not None and problem.column is not None
    assert problem.message == f"the item is nested too deeply (more than {MAX_DEPTH} levels)"


def test_the_reviewers_300_levels_are_left_out_in_both_formats(tmp_path: Path) -> None:
    item = deep_item(300, "arrays")
    for name, text in (("d300.ndjson", item + "\n"), ("d300.json", f"[{item}]")):
        batch = load([write(tmp_path, name, text)])
        assert batch.metric_count == 0 and batch.invalid_count == 1
        assert "nested too deeply" in only(batch).message


@pytest.mark.parametrize("levels", [2_000, 100_000])
@pytest.mark.parametrize("fmt", ["ndjson", "array", "bulk"])
def test_an_item_too_deep_for_any_parser_is_a_problem_not_an_exception(
    tmp_path: Path, fmt: str, levels: int
) -> None:
    """Past about 1,000 levels the standard library's scanner raises RecursionError: an NDJSON
    line is left out, a JSON document cannot be read on (one error for its file)."""
    text = as_format(fmt, [GOOD, deep_item(levels, "arrays")])
    for batch in (load_text(text), load([write(tmp_path, f"deep.{fmt}", text)])):
        problem = only(batch)
        assert "nested too deeply" in problem.message and problem.line is not None
        if fmt == "ndjson":
            assert (batch.metric_count, batch.invalid_count, problem.line) == (1, 1, 2)
            # the bracket at level MAX_DEPTH, whose contents go one level too deep
            assert problem.column == len(GOOD[:-1] + ',"x":') + MAX_DEPTH - 1
        else:
            assert batch.metric_count == 0 and "nothing of this file is loaded" in problem.message


def test_a_deep_first_line_does_not_break_format_detection(tmp_path: Path) -> None:
    text = deep_item(5_000, "arrays") + "\n" + GOOD + "\n" + GOOD + "\n"
    batch = load([write(tmp_path, "first.ndjson", text)])
    assert batch.sources[0].format == "ndjson"
    assert (batch.metric_count, batch.invalid_count) == (2, 1)


@pytest.mark.parametrize("missing", ["metrics", "applications"])
def test_a_bulk_payload_without_a_required_list_is_an_error(tmp_path: Path, missing: str) -> None:
    """The spec requires both `applications` and `metrics` in a bulk payload: a file without
    one is an error naming the file and the missing field's JSON path, not "0 errors"."""
    present = "applications" if missing == "metrics" else "metrics"
    path = write(tmp_path, "b.json", json.dumps({present: []}, indent=1))
    batch = load([path])
    problem = only(batch)
    assert (problem.severity, problem.file, problem.line, problem.path) == (
        "error",
        str(path),
        1,
        missing,
    )
    assert problem.message.startswith(f"{missing} is missing: a bulk payload needs both")
    assert batch.errors == [problem]


def test_a_time_string_is_read_once_and_a_bad_one_every_time():
    """A bulk body's hundreds of items repeat a few timestamps: each string is read once and
    gives the same datetime thereafter (whose hash, which `Store.ingest_bulk` groups by, is then
    made once too); a string that is no time is refused each time it comes, never remembered."""
    from app.api import models as m

    items = [{"featureName": "f", "appName": "a", "environment": "development",
              "timestamp": "2026-11-26T10:15:00.000Z"} for _ in range(3)]  # fmt: skip
    read = [METRIC.validate_python(item)["timestamp"] for item in items]
    assert read[0] == datetime(2026, 11, 26, 10, 15, tzinfo=UTC)
    assert read[1] is read[0] and read[2] is read[0]
    for _ in range(2):
        with pytest.raises(ValidationError, match="is not a time"):
            METRIC.validate_python({**items[0], "timestamp": "2026-11-26 soon"})
    assert "2026-11-26 soon" not in m._TIMES
