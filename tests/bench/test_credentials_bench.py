"""`bench/credentials.py` kept working (no time is asserted: the figures are the benchmark's, on a
machine of their own): its small run (`--tokens 200`) opens the API tokens window, types in its
filter, reads who can do what where, revokes a tenth of the tokens through the window and stops
a second deletion, and prints one JSON object saying so. And the benchmarks that drive the
windows import (`bench/ui_tables.py` and `bench/actions.py` imported a function renamed away,
and failed before anything ran)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"


def bench_env(tmp_path: Path) -> dict[str, str]:
    """This checkout first on the path, offscreen, the benchmark's folders the test's own."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return {**os.environ, "PYTHONPATH": path, "QT_QPA_PLATFORM": "offscreen",
            "FLAGDESK_CONFIG_DIR": str(tmp_path / "config"), "TMPDIR": str(tmp_path)}  # fmt: skip


def test_the_small_run_prints_its_figures(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH / "credentials.py"), "--tokens", "200", "--runs", "1"],
        capture_output=True, text=True, timeout=240, cwd=tmp_path, env=bench_env(tmp_path),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    (line,) = done.stdout.splitlines()  # one JSON object, alone on stdout
    out = json.loads(line)
    assert out["benchmark"] == "credentials"
    for figure in ("tokens_shown_s", "keystroke_ms", "access_s", "revoke_longest_stall_ms"):
        assert isinstance(out[figure], (int, float)), figure
    assert out["tokens"] == 202  # the 200 planted, and the run's admin and client tokens
    assert out["keystrokes"] == 22
    assert out["access_user_projects"] > 0 and out["access_projects"] == 20 + 4
    # the revoke: the 20 never-seen tokens, each reported before its request, gone after
    revoke = out["revoke"]
    assert (revoke["selected"], out["revoke_progress"], out["revoke_verified"]) == (20, 20, True)
    assert revoke["progress_shown"][0] == "Deleting API token 1 of 20…"
    assert revoke["outcome"].startswith("Deleted 20 API tokens: “bench-token-00000” (never seen)")
    # the second one stopped after 10 reported: 10 deleted, the other 10 still on the server
    cancel = out["cancel"]
    assert (cancel["deleted"], cancel["not_sent"], cancel["verified"]) == (10, 10, True)
    assert cancel["outcome"] == "Stopped: 10 of 20 API tokens deleted, the other 10 not sent."
    assert set(out["goal"]) == set(out["margin_goal"]) and isinstance(out["met"], bool)


@pytest.mark.parametrize("name", ["ui_tables", "actions", "credentials"])
def test_the_window_benchmarks_import(name: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", f"import {name}"], capture_output=True, text=True, timeout=120,
        cwd=BENCH, env=bench_env(tmp_path),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
