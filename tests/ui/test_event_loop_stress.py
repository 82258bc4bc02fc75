"""The PySide6/Python pair in use survives 10,000 event-loop turns and 2,000 HTTP requests under
qasync: in this process (pytest-qt) and in a child process, where a fatal error such as
"Fatal Python error: none_dealloc" (PySide6 6.12.0 on CPython 3.11) becomes a failed test with
the child's output instead of the end of the test run."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import PySide6
import pytest
import shiboken6
from PySide6.QtCore import qVersion

from sandbox.process import SandboxProcess
from tests.ui.loop_stress import REQUESTS, TOKEN_ENV, TURNS, Ticker, hammer, spin

ROOT = Path(__file__).resolve().parents[2]

#: (PySide6 version, Python below this version) pairs known to crash
KNOWN_BAD = [("6.12.0", (3, 12))]


def known_bad() -> bool:
    return any(PySide6.__version__ == bad and sys.version_info < below for bad, below in KNOWN_BAD)


#: the in-process tests would kill the whole test run on a known-bad pair: the version test and
#: the child-process test report it instead
in_process = pytest.mark.skipif(known_bad(), reason="known-bad PySide6/Python pair")


def test_qt_binding_is_not_a_known_bad_pair(record_property: Callable[[str, object], None]) -> None:
    pyside, python = PySide6.__version__, platform.python_version()
    record_property("pyside6", pyside)
    record_property("qt", qVersion())
    record_property("python", python)
    print(f"PySide6 {pyside} (Qt {qVersion()}, shiboken6 {shiboken6.__version__}) on "
          f"{platform.python_implementation()} {python}")  # fmt: skip
    for bad, below in KNOWN_BAD:
        assert not (pyside == bad and sys.version_info < below), (
            f"PySide6 {pyside} on Python {python} dies with 'Fatal Python error: none_dealloc' "
            "after a few thousand Qt calls: use PySide6-Essentials 6.11.3 or Python 3.12+"
        )
    assert shiboken6.__version__ == pyside, "shiboken6 and PySide6 must be the same release"


@pytest.mark.slow
def test_turns_and_requests_in_a_child_process(demo_sandbox: SandboxProcess) -> None:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONFAULTHANDLER="1")
    env[TOKEN_ENV] = demo_sandbox.admin_token
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "tests.ui.loop_stress", demo_sandbox.url],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    except subprocess.TimeoutExpired as exc:
        out, err = (
            x.decode(errors="replace") if isinstance(x, bytes) else x or ""
            for x in (exc.stdout, exc.stderr)
        )
        pytest.fail(f"the stress child did not finish in 120 s:\n{out}\n{err}")
    output = f"exit status {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
    assert "Fatal Python error" not in proc.stderr, output
    assert proc.returncode == 0, output
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    print(json.dumps(result))
    assert (TURNS, REQUESTS) == (10_000, 2_000)
    assert result["turns"] == TURNS, output
    assert result["signals"] == TURNS, output
    assert result["statuses"] == {"200": REQUESTS}, output
    assert result["qt_warnings"] == [], output
    assert (result["pyside6"], result["python"]) == (PySide6.__version__, platform.python_version())


@pytest.mark.slow
@in_process
def test_event_loop_turns_in_process(qtbot: Any, qloop: Any, arun: Callable[..., Any]) -> None:
    received = 0

    def on_ticked(_: int) -> None:
        nonlocal received
        received += 1

    ticker = Ticker()
    ticker.ticked.connect(on_ticked)
    turns = arun(spin(TURNS, ticker), timeout=60_000)
    assert turns == TURNS == 10_000
    assert received == TURNS


@pytest.mark.slow
@in_process
def test_http_requests_in_process(
    qtbot: Any, qloop: Any, arun: Callable[..., Any], demo_sandbox: SandboxProcess
) -> None:
    statuses = arun(hammer(demo_sandbox.url, demo_sandbox.admin_token), timeout=60_000)
    assert REQUESTS == 2_000
    assert dict(statuses) == {200: REQUESTS}
