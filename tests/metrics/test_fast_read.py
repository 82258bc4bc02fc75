"""The fast path of reading metric items (msgspec, `items.fast_metrics`) takes only what pydantic
(`items.METRICS`, the authority) takes, reads it into the same item and the same bytes, and
leaves everything else to pydantic: a file loads into the same batch (sums, problems with their
lines, columns and paths, invalid items, bodies) with the fast path and without it."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
import pydantic_core
import pytest
from pydantic import ValidationError

from app.api.models import BulkMetric
from app.metrics import Batch, load
from app.metrics import documents as document_reader
from app.metrics import ndjson as ndjson_reader
from app.metrics.items import METRICS, Metric, fast_metrics
from app.metrics.sourcefile import CHUNK

#: 2026-11-20T10:00:00Z
BASE = int(datetime(2026, 11, 20, 10, tzinfo=UTC).timestamp() * 1000)
MAX_TIME_MS = 8_640_000_000_000_000
MAX_COUNT = 2**53 - 1


def metric(**more: Any) -> dict[str, Any]:
    item: dict[str, Any] = {"featureName": "cart-v2", "appName": "web", "environment": "dev"}
    item.update(timestamp=BASE, yes=3, no=1)
    item.update(more)
    return {k: v for k, v in item.items() if v is not ...}


#: items as JSON text: valid, invalid, and valid ones the fast path leaves to pydantic
ITEMS = [
    json.dumps(metric()),
    json.dumps(metric(), indent=1).replace("\n", " "),
    json.dumps(metric(timestamp=..., yes=..., no=...)),
    json.dumps(metric(yes=0, no=0)),
    json.dumps(metric(variants={"blue": 2, "green": 0})),
    json.dumps(metric(variants={})),
    json.dumps(metric(featureName="é ü 日本 \u2028 \x7f", appName='a\\b"c/d\te\u0001')),
    json.dumps(metric(featureName="\U0001f600"), ensure_ascii=False),
    json.dumps(metric(featureName="")),
    json.dumps(metric(timestamp=0)),
    json.dumps(metric(timestamp=-BASE)),
    json.dumps(metric(timestamp=MAX_TIME_MS)),
    json.dumps(metric(timestamp=MAX_TIME_MS + 1)),
    json.dumps(metric(timestamp=-MAX_TIME_MS - 1)),
    json.dumps(metric(timestamp=BASE // 1000)),
    json.dumps(metric(timestamp="2026-11-20T10:00:00Z")),
    json.dumps(metric(timestamp="2026-11-20T10:00:00.000Z")),
    json.dumps(metric(timestamp="2026-11-20T10:00:00.5+00:00")),
    json.dumps(metric(timestamp="2026-11-20T12:00:00+02:00")),
    json.dumps(metric(timestamp="2026-11-20T10:00:00")),
    json.dumps(metric(timestamp="2026-11-20")),
    json.dumps(metric(timestamp="1700000000")),
    json.dumps(metric(timestamp="2026-13-01T00:00:00Z")),
    json.dumps(metric(timestamp="yesterday")),
    json.dumps(metric(timestamp=None)),
    json.dumps(metric(timestamp=1.5)),
    json.dumps(metric(timestamp=True)),
    json.dumps(metric(yes=MAX_COUNT)),
    json.dumps(metric(yes=MAX_COUNT + 1)),
    json.dumps(metric(yes=-1)),
    json.dumps(metric(yes=1.0)),
    json.dumps(metric(yes=True)),
    json.dumps(metric(yes="1")),
    json.dumps(metric(yes=None)),
    json.dumps(metric(variants=None)),
    json.dumps(metric(variants={"a": -1})),
    json.dumps(metric(variants={"a": 1.0})),
    json.dumps(metric(variants=[1])),
    json.dumps(metric(featureName=None)),
    json.dumps(metric(featureName=1)),
    json.dumps(metric(appName=...)),
    json.dumps(metric(extra=[[1]])),
    json.dumps(metric(extra=None)),
    json.dumps(metric(extra=[[[[]]], {"more": 1}])),
    json.dumps(metric()).replace("}", ', "deep": ' + "[" * 300 + "]" * 300 + "}"),
    '{"featureName":"a","featureName":"b","appName":"c","environment":"d","yes":1,"yes":2}',
    '{"featureName":"a","appName":"c","environment":"d","variants":{"x":1,"x":2}}',
    '{"appName":"c","yes":1,"environment":"d","featureName":"a"}',
    '{"featureName":"a","appName":"c","environment":"d","yes":1e2}',
    '{"featureName":"a","appName":"c","environment":"d","yes":-0}',
    '{"featureName":"a","appName":"c","environment":"d","yes":NaN}',
    '{"featureName":"\\ud800","appName":"c","environment":"d"}',
    '{"featureName":"\\ud83d\\ude00\\u00e9\\/","appName":"c","environment":"d"}',
    "[1]",
    "null",
    '"text"',
]


def _pydantic(doc: str | bytes, n: int) -> tuple[list[Any], list[bytes]] | None:
    try:
        items = METRICS.validate_json(doc)
    except ValidationError:
        return None
    if len(items) != n:
        return None
    datas = [pydantic_core.to_json(item, exclude_none=True) for item in items]
    return [Metric(**item) for item in items], datas


def _fields(item: Metric) -> dict[str, Any]:
    """An item's fields, with a time as the text it is sent as."""
    fields = msgspec.structs.asdict(item)
    stamp = fields["timestamp"]
    if isinstance(stamp, datetime):
        fields["timestamp"] = json.loads(pydantic_core.to_json(stamp))
    return {k: v for k, v in fields.items() if v is not None and v is not msgspec.UNSET}


@pytest.mark.parametrize("text", ITEMS, ids=[text[:60] for text in ITEMS])
def test_the_fast_path_reads_an_item_as_pydantic_does_or_leaves_it(text: str) -> None:
    for doc in ("[" + text + "]", ("[" + text + "]").encode("utf-8", "surrogatepass")):
        fast = fast_metrics(doc, 1)
        slow = _pydantic(doc, 1)
        if fast is None:
            continue  # pydantic reads it, as before
        assert slow is not None, "the fast path took an item pydantic refuses"
        assert fast[1] == slow[1]  # the bytes sent
        assert [_fields(i) for i in fast[0]] == [_fields(i) for i in slow[0]]


def test_metric_has_the_wire_models_fields_in_its_order() -> None:
    """Pydantic's items become `Metric(**item)`, and msgspec encodes a struct's fields in their
    order, pydantic a dict's in the model's: a field added to `BulkMetric` must be added here."""
    assert Metric.__struct_fields__ == tuple(BulkMetric.model_fields)


def test_the_fast_path_takes_the_plain_items() -> None:
    """What it is there for: compact or not, times as numbers or strings."""
    plain = [ITEMS[0], ITEMS[1], ITEMS[2], ITEMS[4], ITEMS[6], ITEMS[15], ITEMS[17], ITEMS[21]]
    assert fast_metrics("[" + ",".join(plain) + "]", len(plain)) is not None
    assert fast_metrics("[" + ",".join(plain) + "]", len(plain) + 1) is None


def _varied(tmp_path: Path) -> list[Path]:
    """Files of every format with valid and invalid items mixed, across chunks and slices."""

    def plain(k: int) -> str:
        item = metric(featureName=f"f{k % 13}", appName=f"app{k % 5}", timestamp=BASE + k * 1000)
        if k % 3:
            item["timestamp"] = f"2026-11-20T{k % 24:02}:00:00+00:00"
        return json.dumps(item)

    lines = [plain(k) for k in range(700)]  # slices the fast path takes
    lines += [ITEMS[k % len(ITEMS)] if k % 7 else plain(k) for k in range(3_000)]
    lines += [plain(k) for k in range(700)]
    ndjson = "\n".join(lines)
    # a lone surrogate too: in a document the standard library's scanner reads it, and the
    # item is left out with an error, with or without the fast path
    objects = [line for line in lines if line.startswith("{")]
    array = "[" + ",\n".join(objects) + "]"
    bulk = '{"applications": [], "metrics": [' + ",".join(objects) + "]}"
    big = "\n".join(json.dumps(metric(appName=f"a{k % 3}", yes=k)) for k in range(CHUNK // 60))
    # many applications and environments in a slice, names beyond ASCII, the largest counts,
    # times with offsets and fractions, unrounded ones
    many_lines = [
        json.dumps(
            metric(
                featureName=["f", "é-ü", "日本", "\U0001f600", 'a"b'][k % 5],
                appName=f"app-{k % 61}",
                environment=f"env-{k % 7}",
                yes=[0, 1, MAX_COUNT][k % 3],
                no=[0, MAX_COUNT, 2][k % 4 % 3],
                timestamp=[BASE + k * 997, f"2026-11-20T{k % 24:02}:30:00.25-05:30", ...][k % 3],
                variants={"ü": MAX_COUNT, "b": k} if k % 4 == 0 else ...,
            ),
            ensure_ascii=k % 2 == 0,
        )
        for k in range(2_000)
    ]
    many_lines[1_000] = json.dumps(metric(yes=-1))  # and a slice pydantic reads
    many = "\n".join(many_lines)
    texts = {
        "varied.ndjson": ndjson,
        "crlf.ndjson": ndjson.replace("\n", "\r\n"),
        "blank.ndjson": ndjson.replace("\n", "\n\n  "),
        "array.json": array,
        "bulk.json": bulk,
        "big.ndjson": big + "\n\n" + ndjson,
        "many.ndjson": many,
        "many.json": "[" + many.replace("\n", ",") + "]",
    }
    paths = []
    for name, text in texts.items():
        path = tmp_path / name
        path.write_bytes(text.encode("utf-8", "surrogatepass"))
        paths.append(path)
    return paths


def _everything(batch: Batch) -> dict[str, Any]:
    return {
        "problems": batch.problems,
        "invalid": batch._invalid,
        "sums": batch._sums,
        "variants": batch._variants,
        "sources": batch.sources,
        "bodies": [(b.data, b.metrics) for b in batch.bodies(max_body=4096)],
        "totals": batch.totals().rows,
    }


def test_a_file_loads_alike_with_the_fast_path_and_without(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    taken: list[bool] = []

    def counted(doc: str | bytes, n: int) -> Any:
        found = fast_metrics(doc, n)
        taken.append(found is not None)
        return found

    for path in _varied(tmp_path):
        fast = load([path])
        taken.clear()
        with monkeypatch.context() as patch:
            for reader in (ndjson_reader, document_reader):  # the two that take the fast path
                patch.setattr(reader, "fast_metrics", counted)
            assert _everything(load([path])) == _everything(fast)
            for reader in (ndjson_reader, document_reader):
                patch.setattr(reader, "fast_metrics", lambda doc, n: None)
            slow = load([path])
        assert _everything(slow) == _everything(fast), path.name
        assert fast.metric_count > 100 and fast.problems
        assert any(taken) and not all(taken), path.name
