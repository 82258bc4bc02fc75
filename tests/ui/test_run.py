"""`flagdesk` with no arguments, end to end in a child process: the window appears before the
embedded sandbox is up, then shows its demo data; closing the window (or Ctrl+C, or `kill`)
stops the sandbox."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.processes import children_of

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads child processes in /proc")
def test_run_starts_and_stops_the_embedded_sandbox(tmp_path: Path) -> None:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_DATA_HOME=str(tmp_path / "data"))
    env.pop("FLAGDESK_DATA_DIR", None)  # the default: the platform's user data folder
    png = tmp_path / "main_window.png"
    proc = subprocess.run(
        [sys.executable, "-X", "faulthandler", "-m", "tests.ui.run_driver", str(png)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )
    output = f"exit status {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
    assert proc.returncode == 0, output
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    # the frame was shown before anything named the `Qt` namespace, whose enums cost it 20-25 ms
    assert report["frame_named_qt"] is False, output
    # the window is up while the sandbox is still starting
    assert report["first_status"] == "Starting the local sandbox…", output
    assert report["first_page"] == "loadingPage", output
    # then it shows the demo data of a new database in the user data folder
    assert report["error"] == "", output
    assert report["page"] == "projectsPage", output
    assert report["source"] == "Local sandbox with demo data"
    assert report["url"].startswith("http://127.0.0.1:")
    assert report["version"].startswith("flagdesk sandbox ")
    assert int(report["users"].replace(",", "")) > 0
    assert report["projects"] == 4
    assert (tmp_path / "data" / "flagdesk" / "sandbox.sqlite3").exists()
    assert png.stat().st_size > 0
    # closing the window ends run() with 0 and stops the sandbox child
    assert report["exit_code"] == 0
    assert len(report["children"]) == 1, output
    assert report["children_alive_after_exit"] == [], output


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads child processes in /proc")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_closes_the_app_and_stops_the_sandbox(tmp_path: Path, signum: int) -> None:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_DATA_HOME=str(tmp_path / "data"))
    env.pop("FLAGDESK_DATA_DIR", None)  # the default: the platform's user data folder
    db = tmp_path / "data" / "flagdesk" / "sandbox.sqlite3"
    proc = subprocess.Popen(
        [sys.executable, "-m", "app"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        children: list[int] = []
        while time.monotonic() < deadline and not (children and db.exists()):
            time.sleep(0.05)
            children = children_of(proc.pid)
        assert children and db.exists(), "the sandbox child never started"
        time.sleep(0.5)
        proc.send_signal(signum)
        output, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, output
    for child in children:
        assert not Path(f"/proc/{child}").exists() or _zombie(child), output


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_a_data_folder_that_cannot_be_made_is_said_on_the_overview(tmp_path: Path) -> None:
    """The user data folder cannot be made (a file stands where a folder would): the window
    still opens, and its overview says that the local sandbox did not start and where, at once,
    instead of a traceback before any window."""
    (tmp_path / "file").write_text("")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen",
               FLAGDESK_DATA_DIR=str(tmp_path / "file" / "data"))  # fmt: skip
    proc = subprocess.run(
        [sys.executable, "-m", "tests.ui.run_driver", str(tmp_path / "w.png")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=90,
    )  # fmt: skip
    output = f"exit status {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
    assert proc.returncode == 0, output
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["page"] == "errorPage", output
    assert report["error"].startswith("The local sandbox did not start"), output
    assert str(tmp_path / "file" / "data") in report["error"], output
