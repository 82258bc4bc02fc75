"""The sandbox child's life: it ends with the process that started it (a crash included), stops
cleanly when asked, serves its database beside another sandbox (each with tokens of its own),
and keeps its output."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from sandbox import db
from sandbox.process import SandboxProcess

ROOT = Path(__file__).resolve().parents[2]

# starts a sandbox, says where it is, then dies as in a crash: no cleanup of any kind runs
CRASHING_PARENT = """
import os, signal, sys
from pathlib import Path
from sandbox import db
from sandbox.process import SandboxProcess

sb = SandboxProcess(Path(sys.argv[1]), "--empty").start()
print(sb.url, sb.pid, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def alive(pid: int) -> bool:
    """Whether `pid` still runs (a zombie waiting for its new parent to reap it does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # the pid was reused by someone else's process
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True  # no /proc here: os.kill said it exists
    return state not in ("Z", "X")


def accepts(url: str) -> bool:
    parts = urlsplit(url)
    assert parts.hostname is not None and parts.port is not None
    try:
        with socket.create_connection((parts.hostname, parts.port), timeout=1):
            return True
    except OSError:
        return False


def wait_for(condition: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def test_the_sandbox_ends_when_its_parent_is_killed(tmp_path: Path) -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", CRASHING_PARENT, str(tmp_path / "orphan.sqlite3")],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out, err = parent.communicate(timeout=60)
    assert parent.returncode == -signal.SIGKILL, err
    url, pid_text = out.split()
    pid = int(pid_text)
    try:
        assert wait_for(lambda: not alive(pid)), "the sandbox outlived its parent"
        assert not accepts(url)
    finally:
        if alive(pid):  # ours, started through the parent: leave nothing running
            os.kill(pid, signal.SIGKILL)


def test_stop_ends_the_child_quickly_and_cleanly(tmp_path: Path) -> None:
    sb = SandboxProcess(tmp_path / "s.sqlite3", "--empty").start()
    assert sb.exit_with_parent and sb.proc is not None and sb.proc.stdin is not None
    with sb.admin() as http:  # a kept-alive connection does not hold the shutdown up
        assert http.get("/api/admin/projects").status_code == 200
        sb.stop()
    assert sb.proc.returncode == 0, sb.output
    assert sb.stopped_by == "stdin"  # no signal was needed
    assert not accepts(sb.url)
    sb.stop()  # again: nothing left to do


def test_stop_without_exit_with_parent_still_works(tmp_path: Path) -> None:
    sb = SandboxProcess(tmp_path / "t.sqlite3", "--empty", exit_with_parent=False).start()
    assert sb.proc is not None and sb.proc.stdin is None
    sb.stop()
    assert sb.proc.returncode is not None and not alive(sb.pid)


def test_two_sandboxes_on_one_database_each_keep_their_tokens(tmp_path: Path) -> None:
    """Two windows on one database: each sandbox serves tokens of its own run, so the second
    start leaves the first one's valid (tests/sandbox/test_stored_secrets.py: never stored)."""
    path = tmp_path / "shared.sqlite3"
    with SandboxProcess(path, session_tokens=True) as first:
        assert first.admin_token.startswith("*:*.")
        with first.admin() as http:
            assert http.get("/api/admin/projects").status_code == 200
        with SandboxProcess(path, session_tokens=True) as second:
            assert second.url != first.url
            assert second.admin_token != first.admin_token
            # both answer, at the same time
            statuses: list[int] = []

            def get(sb: SandboxProcess) -> None:
                with sb.admin() as http:
                    statuses.extend(http.get("/api/admin/projects").status_code for _ in range(5))

            threads = [threading.Thread(target=get, args=(sb,)) for sb in (first, second)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            assert statuses == [200] * 10
        # and after the second one has stopped
        with first.admin() as http:
            assert http.get("/api/admin/projects").status_code == 200


def test_session_tokens_on_a_new_database_started_twice_at_once(tmp_path: Path) -> None:
    path = tmp_path / "new.sqlite3"
    sandboxes = [SandboxProcess(path, session_tokens=True) for _ in range(2)]
    errors: list[Exception] = []

    def start(sb: SandboxProcess) -> None:
        try:
            sb.start()
        except Exception as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=start, args=(sb,)) for sb in sandboxes]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        for sb in sandboxes:
            with sb.admin() as http:
                projects = http.get("/api/admin/projects").json()["projects"]
                # the demo data was loaded once
                assert len(projects) == 4
    finally:
        for sb in sandboxes:
            sb.stop()


def test_session_tokens_are_known_before_the_launch_and_read_from_nowhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On the way to the window's first data: nothing is read from the database for the
    tokens (it keeps their hashes alone), before the child answers or after."""
    path = tmp_path / "held.sqlite3"
    sb = SandboxProcess(path, session_tokens=True)
    tokens = (sb.admin_token, sb.client_token)

    def no_reading(*args: object, **kwargs: object) -> None:
        raise AssertionError("the parent opened the database")

    monkeypatch.setattr(db, "connect", no_reading)
    with sb:
        assert (sb.admin_token, sb.client_token) == tokens
        with sb.admin() as http:
            assert http.get("/api/admin/projects").status_code == 200


def test_session_tokens_with_a_token_given_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        SandboxProcess(tmp_path / "x.sqlite3", session_tokens=True, admin_token="*:*.x")


def test_output_keeps_the_startup_lines(tmp_path: Path) -> None:
    with SandboxProcess(tmp_path / "o.sqlite3", "--empty") as sb:
        lines = sb.output
        assert any(line.startswith("created sandbox database ") for line in lines), lines
        assert any(f"listening on {sb.url}" in line for line in lines), lines
    assert sb.output == lines  # nothing more printed on a clean stop


def test_a_failed_start_reports_the_output(tmp_path: Path) -> None:
    (tmp_path / "not-a-database").write_text("x" * 4096)
    sb = SandboxProcess(tmp_path / "not-a-database")
    with pytest.raises(RuntimeError, match="exited early") as info:
        sb.start()
    sb.stop()
    assert "flagdesk serve:" in str(info.value)
