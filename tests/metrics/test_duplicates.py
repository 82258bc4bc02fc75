"""The duplicate guard (issue 35, item 1) against a real sandbox over HTTP.

The guard matched the exact body bytes for the exact URL text: the same batch split otherwise
(`--max-body`), or sent to `localhost` rather than `127.0.0.1`, was sent again and counted
twice. A batch is its metric items (a multiset: whatever the bodies, the files, their format and
order, and however each item's JSON is spaced or its keys ordered), a server its instance id,
else its normalised address. Here every way to split, spell
and order the batch the sandbox accepted is refused `ALREADY_SENT` by `BatchUpload.send` (the
path of the command line and the window) before anything is written or sent, and the same
batch with one item changed, added or left out is not (`look_for_earlier`, the dry run's view of
the same step; one of them is sent, and counted). A ledger written before keys were kept is
found too, its key computed once from its bodies.
"""

from __future__ import annotations

import copy
import json
import os
import random
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.api.wire import BULK_METRICS_BODY_LIMIT
from app.connection import ConnectionSpec
from app.metrics import load
from app.metrics.batch_upload import ALREADY_SENT, BatchUpload, look_for_earlier
from app.metrics.identity import (
    KEY_FILE,
    ServerIdentity,
    batch_key,
    normalise_address,
    read_server_identity,
)
from app.metrics.ledger import LEDGER_NAME, Ledger
from sandbox.process import SandboxProcess
from tests.conftest import known_flags
from tests.metrics.test_upload import run, stored_rows

HOUR = 3_600_000
#: the module's sandbox is shared by every example, on purpose
FIXTURE = HealthCheck.function_scoped_fixture
START = (int(time.time() * 1000) // HOUR - 3) * HOUR
FEATURES = [f"dup-{i}" for i in range(6)]


def items() -> list[dict[str, Any]]:
    """30 metric items over 6 flags, 2 applications and 3 hours; the first is there twice
    (a batch is a multiset: two equal items count twice)."""
    out = []
    for i in range(29):
        item: dict[str, Any] = {
            "featureName": FEATURES[i % 6],
            "appName": f"dup-app-{i % 2}",
            "environment": "development",
            "timestamp": START + (i % 3) * HOUR + 1000 * i,
            "yes": 3 + i,
            "no": i % 4,
        }
        if i % 5 == 0:
            item["variants"] = {"red": i, "blue": 1}
        out.append(item)
    return [copy.deepcopy(out[0]), *out]


def write(
    folder: Path, batch: list[dict[str, Any]], fmt: str, files: int, respell: bool = False
) -> list[Path]:
    """`batch` in `files` files of format `fmt` (ndjson, bulk or array); `respell`: each
    item's keys in the reverse order, spaced out."""
    folder.mkdir(parents=True, exist_ok=True)
    if respell:
        batch = [dict(reversed(item.items())) for item in batch]
    paths = []
    for k in range(files):
        part = batch[k::files]
        path = folder / f"part-{k}.{fmt}"
        if fmt == "ndjson":
            sep = (" , ", " : ") if respell else None
            path.write_text("".join(json.dumps(i, separators=sep) + "\n" for i in part))
        elif fmt == "bulk":
            path.write_text(json.dumps({"applications": [], "metrics": part}, indent=1))
        else:
            path.write_text(json.dumps(part))
        paths.append(path)
    return paths


@dataclass
class Accepted:
    sandbox: SandboxProcess
    data: Path
    folder: Path
    stored: dict[Any, tuple[int, int, int]]

    def spec(self, url: str, admin: bool = True) -> ConnectionSpec:
        return ConnectionSpec(url, self.sandbox.admin_token if admin else "",
                              client_token=self.sandbox.client_token)  # fmt: skip

    def spellings(self) -> list[str]:
        port = self.sandbox.url.rsplit(":", 1)[1]
        return [self.sandbox.url, f"http://localhost:{port}", f"HTTP://LocalHost:{port}/",
                f"http://127.0.0.1:{port}//"]  # fmt: skip

    def counts(self) -> dict[Any, tuple[int, int, int]]:
        async def read() -> dict[Any, tuple[int, int, int]]:
            async with self.spec(self.sandbox.url).client() as client:
                return await stored_rows(client, set(FEATURES))

        return run(read())


@pytest.fixture(scope="module")
def accepted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Accepted]:
    """The batch of `items()`, uploaded once in bodies of 2,048 bytes and accepted."""
    data = tmp_path_factory.mktemp("dup-data")
    before = os.environ.get("FLAGDESK_DATA_DIR")
    os.environ["FLAGDESK_DATA_DIR"] = str(data)
    try:
        with SandboxProcess(tmp_path_factory.mktemp("dup") / "db.sqlite3", "--empty") as sb:
            known_flags(sb, FEATURES)
            paths = write(tmp_path_factory.mktemp("dup-files"), items(), "ndjson", 1)
            spec = ConnectionSpec(sb.url, sb.admin_token, client_token=sb.client_token)
            outcome = run(BatchUpload(spec).send([load(paths)], max_body=2048))
            assert outcome.failure == "" and outcome.report is not None, outcome.message
            assert outcome.report.complete and outcome.report.accepted.bodies > 1
            assert outcome.folder is not None
            done = Accepted(sb, data, outcome.folder, {})
            done.stored = done.counts()
            yield done
    finally:
        if before is None:
            os.environ.pop("FLAGDESK_DATA_DIR", None)
        else:
            os.environ["FLAGDESK_DATA_DIR"] = before


def test_the_sandbox_says_its_instance_id_and_the_ledger_keeps_it(accepted: Accepted) -> None:
    async def read() -> ServerIdentity:
        spec = accepted.spec(accepted.spellings()[1])
        async with spec.client() as client:
            return await read_server_identity(client, spec.token)

    server = run(read())
    assert server.instance_id and len(server.instance_id) == 36  # a UUID, as Unleash's
    header = Ledger.open(accepted.folder, write=False).header
    assert header["server_id"]["instance_id"] == server.instance_id
    assert header["batch"]["metrics"] == 30


FORMATS = ("ndjson", "bulk", "array")
SPLITS = (1024, 1500, 2048, 4096, 60_000, BULK_METRICS_BODY_LIMIT)


@settings(max_examples=30, deadline=None, suppress_health_check=[FIXTURE])
@given(
    order=st.permutations(range(30)),
    fmt=st.sampled_from(FORMATS),
    files=st.integers(1, 3),
    max_body=st.sampled_from(SPLITS),
    spelling=st.integers(0, 3),
    admin=st.booleans(),
    respell=st.booleans(),
)
def test_the_same_batch_however_split_spelt_or_ordered_is_accepted_before(
    accepted: Accepted,
    order: list[int],
    fmt: str,
    files: int,
    max_body: int,
    spelling: int,
    admin: bool,
    respell: bool,
) -> None:
    base = items()
    with tempfile.TemporaryDirectory() as tmp:
        batch = load(write(Path(tmp), [base[i] for i in order], fmt, files, respell))
        assert batch.metric_count == 30 and not batch.errors
        url = accepted.spellings()[spelling]
        # without an admin token the server is known by its address alone
        outcome = run(BatchUpload(accepted.spec(url, admin)).send([batch], max_body=max_body))
    assert outcome.failure == ALREADY_SENT, outcome
    assert [e.folder for e in outcome.earlier] == [accepted.folder]
    assert str(accepted.folder) in outcome.message and "accepted already" in outcome.message
    assert outcome.earlier[0].metrics == 30 and outcome.message.startswith("This batch was")
    assert outcome.folder is None  # nothing written
    assert [p.name for p in (accepted.data / "uploads").iterdir()] == [accepted.folder.name]


def _add(field: str, n: int) -> Callable[[dict[str, Any]], None]:
    def change(item: dict[str, Any]) -> None:
        item[field] = item.get(field, 0) + n

    return change


def _set(field: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(item: dict[str, Any]) -> None:
        item[field] = value

    return change


#: one change to one item; the ones the server would count alike (another millisecond of the
#: same hour, a variant renamed) included
CHANGES: dict[str, Callable[[dict[str, Any]], None]] = {
    "yes + 1": _add("yes", 1),
    "no + 1": _add("no", 1),
    "a millisecond later": _add("timestamp", 1),
    "an hour later": _add("timestamp", HOUR),
    "another flag": _set("featureName", "dup-other"),
    "another application": _set("appName", "dup-app-other"),
    "a variant more": lambda item: item.setdefault("variants", {}).update({"green": 1}),
    "a variant renamed": lambda item: item.update(
        variants={("x" + k): v for k, v in item.get("variants", {"a": 1}).items()}
    ),
    "the time as a string": lambda item: item.update(
        timestamp=time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(item["timestamp"] / 1000))
    ),
}


@settings(max_examples=30, deadline=None, suppress_health_check=[FIXTURE])
@given(
    change=st.sampled_from([*CHANGES, "a copy more", "one left out"]),
    index=st.integers(0, 29),
    seed=st.integers(0, 2**32),
    fmt=st.sampled_from(FORMATS),
    spelling=st.integers(0, 3),
)
def test_the_same_batch_with_one_item_changed_goes(
    accepted: Accepted, change: str, index: int, seed: int, fmt: str, spelling: int
) -> None:
    changed = items()
    if change == "a copy more":
        changed.append(copy.deepcopy(changed[index]))
    elif change == "one left out":
        del changed[index]
    else:
        CHANGES[change](changed[index])
    random.Random(seed).shuffle(changed)
    with tempfile.TemporaryDirectory() as tmp:
        batch = load(write(Path(tmp), changed, fmt, 1 + seed % 2))
        assert not batch.errors
        found = run(look_for_earlier([batch], accepted.spec(accepted.spellings()[spelling])))
    assert found is None, (change, found)


def test_a_changed_batch_is_sent_and_counted(accepted: Accepted, tmp_path: Path) -> None:
    """The one change a guard must never stop: it goes, and is counted; the first batch is
    then still refused."""
    changed = items()
    changed[7]["yes"] += 1
    outcome = run(BatchUpload(accepted.spec(accepted.spellings()[1]))
                  .send([load(write(tmp_path / "changed", changed, "bulk", 1))]))  # fmt: skip
    assert outcome.failure == "" and outcome.report is not None and outcome.report.complete
    after = accepted.counts()
    assert sum(v[0] for v in after.values()) == 2 * sum(v[0] for v in accepted.stored.values()) + 1
    again = run(BatchUpload(accepted.spec(accepted.sandbox.url))
                .send([load(write(tmp_path / "same", items(), "ndjson", 1))]))  # fmt: skip
    assert again.failure == ALREADY_SENT and [e.folder for e in again.earlier] == [accepted.folder]
    assert accepted.counts() == after
    # and that upload, in turn, is found for its own batch
    assert outcome.folder is not None
    mine = run(look_for_earlier([load(write(tmp_path / "mine", changed[::-1], "array", 2))],
                                accepted.spec(accepted.sandbox.url)))  # fmt: skip
    assert mine is not None and [e.folder for e in mine.earlier] == [outcome.folder]
    Ledger.open(outcome.folder, write=False)  # kept, readable
    (outcome.folder / LEDGER_NAME).rename(outcome.folder / "moved-away")  # out of later tests


def test_a_ledger_from_before_the_keys_is_found_by_its_bodies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ledger written before the header kept the batch's key and the server's id (users have
    them on disk): its server is its URL's address, its key is computed from its bodies once
    and kept beside it, and the batch split otherwise is found accepted before."""
    monkeypatch.setenv("FLAGDESK_DATA_DIR", str(tmp_path / "data"))
    features = [f"old-{i}" for i in range(5)]
    batch_items = [{"featureName": f, "appName": "old-app", "environment": "development",
                    "timestamp": START + 1000 * i, "yes": i + 1, "no": 2}
                   for i, f in enumerate(features * 8)]  # fmt: skip
    with SandboxProcess(tmp_path / "db.sqlite3", "--empty") as sb:
        known_flags(sb, features)
        spec = ConnectionSpec(sb.url, sb.admin_token, client_token=sb.client_token)
        paths = write(tmp_path / "files", batch_items, "ndjson", 1)
        first = run(BatchUpload(spec).send([load(paths)], max_body=1200))
        assert first.failure == "" and first.folder is not None
        journal = first.folder / LEDGER_NAME
        lines = journal.read_bytes().split(b"\n")
        header = json.loads(lines[0])
        key = header.pop("batch")
        del header["server_id"]  # as flagdesk wrote it before
        journal.write_bytes(b"\n".join([json.dumps(header).encode(), *lines[1:]]))
        port = sb.url.rsplit(":", 1)[1]
        other = ConnectionSpec(f"http://localhost:{port}/", "", client_token=sb.client_token)
        again = run(BatchUpload(other).send([load(paths[::-1])], max_body=9000))
        assert again.failure == ALREADY_SENT, again.message
        assert [e.folder for e in again.earlier] == [first.folder]
        kept = json.loads((first.folder / KEY_FILE).read_text())["batch"]
        assert kept == key == batch_key([load(paths)]).to_json()


@pytest.mark.parametrize(
    ("url", "address"),
    [
        ("http://127.0.0.1:4242", "http://loopback:4242"),
        ("HTTP://LocalHost:4242/", "http://loopback:4242"),
        ("http://[::1]:4242//", "http://loopback:4242"),
        ("http://[::ffff:127.0.0.1]:4242", "http://loopback:4242"),
        ("http://localhost.:4242/base/", "http://loopback:4242/base"),
        ("https://Unleash.Example.com/", "https://unleash.example.com:443"),
        ("https://unleash.example.com:443/api//x/", "https://unleash.example.com:443/api/x"),
        ("http://unleash.example.com", "http://unleash.example.com:80"),
        ("http://10.0.0.1:80", "http://10.0.0.1:80"),
        ("http://[2001:DB8::1]:4242", "http://[2001:db8::1]:4242"),
    ],
)
def test_an_address_is_one_spelling_of_its_server(url: str, address: str) -> None:
    assert normalise_address(url) == address


def test_instance_ids_decide_when_both_are_known() -> None:
    here = ServerIdentity("http://127.0.0.1:4242", "id-1")
    assert here.same(ServerIdentity("http://localhost:4242", None))  # the address decides
    assert here.same(ServerIdentity("https://flags.example.com", "id-1"))  # the id decides
    assert not here.same(ServerIdentity("http://127.0.0.1:4242", "id-2"))  # a new database
    assert not here.same(ServerIdentity("http://127.0.0.1:4243", None))
    assert not ServerIdentity("http://127.0.0.1:4242").same(
        ServerIdentity("https://127.0.0.1:4242")
    )
