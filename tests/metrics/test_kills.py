"""Every body counted exactly once, even when killed.

- `flagdesk metrics upload` is killed (SIGKILL) at 20 random points of an upload to the sandbox,
  each followed by `--resume`: the server's totals are exactly the files' every time. A body
  left in doubt by the kill is checked against the server's totals (the baseline recorded before
  the first request), never sent again blindly.
- The sandbox is killed (SIGKILL) while bodies are in flight and restarted on the same
  database: every body answered 202 is stored, and resume completes the totals exactly.
- Re-running the same files after a kill offers the unfinished upload's `--resume` command and
  sends nothing (exit 6) unless --again.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from app.api.client import AdminClient
from app.api.models import CreateFeature
from app.metrics.ledger import LEDGER_NAME, Ledger, State
from sandbox.process import SandboxProcess
from tests.metrics.test_cli_metrics import flagdesk, summary

HOUR_MS = 3_600_000
FEATURES = 4
APPS = 2


def write_batch(
    path: Path, tag: str, metrics: int, seed: int
) -> dict[tuple[str, str, int], list[int]]:
    """An NDJSON batch of `metrics` items over FEATURES flags and APPS applications of `tag` in
    the current and the previous hour; returns its sums by (flag, app, hour)."""
    rng = random.Random(seed)
    now = int(time.time() * 1000)
    hours = [now - now % HOUR_MS - HOUR_MS, now - now % HOUR_MS]
    sums: dict[tuple[str, str, int], list[int]] = {}
    with open(path, "w") as out:
        for _ in range(metrics):
            feature = f"{tag}-f{rng.randrange(FEATURES)}"
            app = f"{tag}-app-{rng.randrange(APPS)}"
            hour = rng.choice(hours)
            yes, no = rng.randrange(1, 50), rng.randrange(0, 50)
            item = {"featureName": feature, "appName": app, "environment": "development",
                    "timestamp": hour + rng.randrange(HOUR_MS), "yes": yes, "no": no}  # fmt: skip
            out.write(json.dumps(item) + "\n")
            slot = sums.setdefault((feature, app, hour), [0, 0])
            slot[0] += yes
            slot[1] += no
    return sums


async def _stored(sb: SandboxProcess, tag: str) -> dict[tuple[str, str, int], list[int]]:
    out: dict[tuple[str, str, int], list[int]] = {}
    async with AdminClient(sb.url, sb.admin_token) as client:
        for n in range(FEATURES):
            raw = await client.feature_metrics_raw(f"{tag}-f{n}", hours_back=3)
            for w in raw.data:
                if w.yes or w.no:
                    key = (f"{tag}-f{n}", w.appName or "", int(w.timestamp.timestamp() * 1000))
                    out[key] = [w.yes, w.no]
    return out


def stored(sb: SandboxProcess, tag: str) -> dict[tuple[str, str, int], list[int]]:
    return asyncio.run(_stored(sb, tag))


def create_flags(sb: SandboxProcess, *tags: str) -> None:
    async def create() -> None:
        async with AdminClient(sb.url, sb.admin_token) as client:
            for tag in tags:
                for n in range(FEATURES):
                    await client.create_feature("default", CreateFeature(name=f"{tag}-f{n}"))

    asyncio.run(create())


def env_of(sb: SandboxProcess, data: Path) -> dict[str, str]:
    return {**os.environ, "FLAGDESK_TOKEN": sb.admin_token,
            "FLAGDESK_CLIENT_TOKEN": sb.client_token, "FLAGDESK_DATA_DIR": str(data)}  # fmt: skip


def tokens_of(sb: SandboxProcess) -> dict[str, str]:
    return {"FLAGDESK_TOKEN": sb.admin_token, "FLAGDESK_CLIENT_TOKEN": sb.client_token}


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxProcess]:
    with SandboxProcess(tmp_path_factory.mktemp("kills") / "db.sqlite3", "--empty") as sb:
        yield sb


def killed_upload(
    sb: SandboxProcess, path: Path, folder: Path, data: Path, lines: int, *extra: str
) -> int:
    """Start `flagdesk metrics upload` and SIGKILL it once its ledger holds `lines` records
    after the header (or it ends first); the journal lines it had."""
    child = subprocess.Popen(
        [sys.executable, "-m", "app", "metrics", "upload", str(path), "--url", sb.url,
         "--folder", str(folder), "--json", *extra],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env_of(sb, data),
    )  # fmt: skip
    journal = folder / LEDGER_NAME
    deadline = time.monotonic() + 30
    seen = 0
    try:
        while child.poll() is None and time.monotonic() < deadline:
            if journal.exists():
                seen = journal.read_bytes().count(b"\n") - 1
                if seen >= lines:
                    break
            time.sleep(0.001)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    return seen


def resume_here(
    folder: Path,
    sb: SandboxProcess,
    data: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> tuple[int, dict[str, Any]]:
    """`flagdesk metrics upload --resume FOLDER --json` in this process (a process start is
    most of a resume's time on a busy machine): its exit status and summary."""
    from app.cli import main

    for name, value in tokens_of(sb).items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("FLAGDESK_DATA_DIR", str(data))
    capsys.readouterr()
    status = main(["metrics", "upload", "--resume", str(folder), "--json"])
    return status, json.loads(capsys.readouterr().out)


def test_the_cli_killed_at_20_random_points_then_resumed_counts_every_body_once(
    sandbox: SandboxProcess,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """20 uploads of 30 bodies (4 at a time), each killed with SIGKILL after a random number of
    journal records (0 to every one), then resumed: exact totals each time."""
    rng = random.Random(16)
    tags = [f"kill{n}" for n in range(20)]
    create_flags(sandbox, *tags)
    expected = {}
    for n, tag in enumerate(tags):
        expected[tag] = write_batch(tmp_path / f"{tag}.ndjson", tag, 900, seed=n)
    points = {tag: rng.randrange(0, 62) for tag in tags}

    def kill(tag: str) -> int:
        path, folder = tmp_path / f"{tag}.ndjson", tmp_path / "uploads" / tag
        options = ("--max-body", "4000", "--concurrency", "4")
        return killed_upload(sandbox, path, folder, tmp_path, points[tag], *options)

    # four uploads at a time, each killed at its own point: a process start is most of the
    # time of each on a busy machine
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(kill, tags))
    doubtful_seen = 0
    for tag in tags:
        folder = tmp_path / "uploads" / tag
        if not (folder / LEDGER_NAME).exists():  # killed before its ledger was whole
            assert stored(sandbox, tag) == {}
            continue
        doubtful_seen += len(Ledger.open(folder, write=False).in_doubt())
        status, out = resume_here(folder, sandbox, tmp_path, monkeypatch, capsys)
        assert status == 0, (tag, out)
        assert out["in_doubt"] == 0 and out["pending"]["bodies"] == 0, out
        assert stored(sandbox, tag) == expected[tag], tag
    assert doubtful_seen > 0  # some kills left bodies in doubt, and they were checked


def test_rerunning_the_files_after_a_kill_offers_the_resume_and_sends_nothing(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    """Finding 2 of issue 16: the same command again after a kill sent every body again."""
    tag = "rerun"
    create_flags(sandbox, tag)
    path = tmp_path / "rerun.ndjson"
    expected = write_batch(path, tag, 600, seed=99)
    folder = tmp_path / "uploads" / "first"
    killed_upload(sandbox, path, folder, tmp_path, 1, "--max-body", "4000", "--concurrency", "1")
    counted = stored(sandbox, tag)
    again = flagdesk("upload", path, "--url", sandbox.url, "--max-body", "4000",
                     env=tokens_of(sandbox), data=tmp_path)  # fmt: skip
    assert again.returncode == 6, again.stderr
    assert f"flagdesk metrics upload --resume {folder}" in again.stderr
    assert "Nothing was sent" in again.stderr
    assert stored(sandbox, tag) == counted  # nothing sent
    resumed = flagdesk("upload", "--resume", folder, "--json",
                       env=tokens_of(sandbox), data=tmp_path)  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    assert stored(sandbox, tag) == expected


def answer_lost_on_disk(folder: Path, index: int) -> None:
    """Leave the ledger as a kill leaves it after the server stored body `index` and before
    its `accepted` line reached the disk: that line is gone."""
    journal = folder / LEDGER_NAME
    lines = journal.read_bytes().splitlines(keepends=True)
    kept = [line for line in lines if b'"i":%d,"e":"accepted"' % index not in line]
    assert len(kept) == len(lines) - 1
    journal.write_bytes(b"".join(kept))


def uploaded_then_answer_lost(
    sb: SandboxProcess, tmp_path: Path, tag: str
) -> tuple[Path, dict[tuple[str, str, int], list[int]]]:
    create_flags(sb, tag)
    path = tmp_path / f"{tag}.ndjson"
    expected = write_batch(path, tag, 300, seed=len(tag))
    folder = tmp_path / "uploads" / tag
    done = flagdesk("upload", path, "--url", sb.url, "--folder", folder,
                    env=tokens_of(sb), data=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert stored(sb, tag) == expected
    answer_lost_on_disk(folder, 0)
    assert [e.state for e in Ledger.open(folder, write=False).entries] == [State.SENT]
    return folder, expected


def test_a_body_in_doubt_found_on_the_server_is_not_sent_again(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    """Finding 1 of issue 16: a body left `sent` by a kill after the server stored it was sent
    again on resume and counted twice, and the report said "resending it may count it twice"
    after resending it. Here the server has the body and the ledger says `sent`."""
    folder, expected = uploaded_then_answer_lost(sandbox, tmp_path, "found")
    resumed = flagdesk("upload", "--resume", folder, env=tokens_of(sandbox), data=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert stored(sandbox, "found") == expected  # counted once
    assert "may count it twice" not in resumed.stdout + resumed.stderr
    assert "1 body in doubt (no answer to a request) was found counted" in resumed.stdout
    assert Ledger.open(folder, write=False).entries[0].state is State.ACCEPTED


def test_a_body_in_doubt_without_an_admin_token_stays_pending_until_resend_in_doubt(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    """Without an admin token the totals cannot be read: the body stays in doubt, and is sent
    only with --resend-in-doubt, whose report says it may be counted twice (here it is)."""
    folder, expected = uploaded_then_answer_lost(sandbox, tmp_path, "noadmin")
    client_only = {"FLAGDESK_CLIENT_TOKEN": sandbox.client_token}
    left = flagdesk("upload", "--resume", folder, "--json", env=client_only, data=tmp_path)
    out = summary(left)
    assert left.returncode == 7 and out["in_doubt"] == 1 and out["requests"] == 0, out
    assert "cannot be read" in out["doubt_reason"]
    assert stored(sandbox, "noadmin") == expected
    forced = flagdesk("upload", "--resume", folder, "--resend-in-doubt",
                      env=client_only, data=tmp_path)  # fmt: skip
    assert forced.returncode == 0, forced.stderr
    assert "sent again as asked (--resend-in-doubt)" in forced.stdout
    assert "may have counted it twice" in forced.stdout
    assert stored(sandbox, "noadmin") == {k: [2 * v[0], 2 * v[1]] for k, v in expected.items()}


def test_the_sandbox_killed_with_bodies_in_flight_keeps_every_202(tmp_path: Path) -> None:
    """The sandbox is SIGKILLed while bodies are in flight and restarted on the same database:
    every body answered 202 is stored (it commits before it answers), and resume, checking the
    bodies in doubt against the totals, ends with every body counted once."""
    db = tmp_path / "db.sqlite3"
    first = SandboxProcess(db, "--empty").start()
    tag = "srvkill"
    create_flags(first, tag)
    path = tmp_path / "srv.ndjson"
    expected = write_batch(path, tag, 4_000, seed=5)
    folder = tmp_path / "uploads" / "srv"
    child = subprocess.Popen(
        [sys.executable, "-m", "app", "metrics", "upload", str(path), "--url", first.url,
         "--folder", str(folder), "--json", "--max-body", "4000", "--concurrency", "8",
         "--attempts", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env_of(first, tmp_path),
    )  # fmt: skip
    journal = folder / LEDGER_NAME
    deadline = time.monotonic() + 30
    while not journal.exists() or journal.read_bytes().count(b'"e":"accepted"') < 20:
        assert child.poll() is None and time.monotonic() < deadline
        time.sleep(0.001)
    first.kill()
    child.communicate(timeout=60)
    ledger = Ledger.open(folder, write=False)
    answered = [e.index for e in ledger.entries if e.state is State.ACCEPTED]
    assert 20 <= len(answered) < len(ledger.entries)
    port = first.url.rsplit(":", 1)[1]
    second = SandboxProcess(db, "--empty", "--port", port, admin_token=first.admin_token,
                            client_token=first.client_token).start()  # fmt: skip
    try:
        # every 202 is stored: each answered body's sums are in the totals
        got = stored(second, tag)
        partial: dict[Any, list[int]] = {}
        for entry in answered:
            for item in json.loads(ledger.body(entry))["metrics"]:
                hour = item["timestamp"] - item["timestamp"] % HOUR_MS
                slot = partial.setdefault((item["featureName"], item["appName"], hour), [0, 0])
                slot[0] += item["yes"]
                slot[1] += item["no"]
        assert all(got.get(k, [0, 0])[0] >= v[0] and got.get(k, [0, 0])[1] >= v[1]
                   for k, v in partial.items())  # fmt: skip
        resumed = flagdesk("upload", "--resume", folder, "--json",
                           env=tokens_of(second), data=tmp_path)  # fmt: skip
        assert resumed.returncode == 0, resumed.stderr
        assert stored(second, tag) == expected
    finally:
        second.stop()
        first.stop()
