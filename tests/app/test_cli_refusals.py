"""The command line's smaller refusals and files, each through the `flagdesk` command in a
subprocess (issue 35, item 8):

- `--csv` exports (names, emails) are private like the journal and its snapshots (0600, whatever
  the umask); `--csv` into a folder that does not exist says so and makes none;
- `serve --db` into a folder that does not exist says so and makes none; `serve --host` with an
  address it cannot listen on is refused before the database is made and its tokens printed;
  `serve --scale -5` and `--inactive-days -1` are refused;
- `metrics validate` refuses what is not a regular file (a FIFO, `/dev/zero`: it hung), and
  reads valid metrics after 64 KiB of white space (it said "only white space");
- the headless commands write the window's log (`--verbose`: debug lines), with no token in it;
- no `.schemathesis/` crash cache is kept in the repository."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox.process import SandboxProcess

ROOT = Path(__file__).resolve().parents[2]


def flagdesk(
    *args: str | Path, env: dict[str, str] | None = None, umask: int = 0o22, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if k != "FLAGDESK_TOKEN"}
    full.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "app", *map(str, args)], capture_output=True, text=True,
        env=full, stdin=subprocess.DEVNULL, timeout=timeout, umask=umask,
    )  # fmt: skip


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# ---------------------------------------------------------------------------- --csv


@pytest.mark.parametrize(
    "words", [("users", "inactive", "--csv"), ("archive", "list", "web-shop", "--csv")]
)
def test_a_csv_export_is_private_and_a_missing_folder_is_named_not_made(
    demo_sandbox: SandboxProcess, tmp_path: Path, words: tuple[str, ...]
) -> None:
    env = {"FLAGDESK_TOKEN": demo_sandbox.admin_token}
    path = tmp_path / "export.csv"
    done = flagdesk(*words, path, "--url", demo_sandbox.url, env=env, umask=0)
    assert done.returncode == 0, done.stderr
    assert mode(path) == 0o600  # as the journal's snapshots of the same names and emails

    missing = tmp_path / "no" / "such" / "export.csv"
    refused = flagdesk(*words, missing, "--url", demo_sandbox.url, env=env)
    assert refused.returncode == 2, refused.stderr
    assert f"the folder {missing.parent} does not exist" in refused.stderr
    assert not (tmp_path / "no").exists()


# ---------------------------------------------------------------------------- serve


@pytest.mark.parametrize("entry", [("-m", "app", "serve"), ("-m", "sandbox")])
def test_serve_checks_the_folder_and_the_address_before_making_the_database(
    tmp_path: Path, entry: tuple[str, ...]
) -> None:
    def serve(*args: str | Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, *entry, "--port", "0", *map(str, args)],
                              capture_output=True, text=True, stdin=subprocess.DEVNULL,
                              timeout=60)  # fmt: skip

    missing = tmp_path / "no" / "such" / "s.sqlite3"
    no_folder = serve("--db", missing)
    assert no_folder.returncode == 2, no_folder.stderr
    assert f"the folder {missing.parent} does not exist" in no_folder.stderr
    assert not (tmp_path / "no").exists()

    db = tmp_path / "s.sqlite3"
    for host in ("999.1.1.1", "not a host"):
        bad = serve("--host", host, "--db", db)
        assert bad.returncode == 2, bad.stderr
        assert f"cannot listen on {host}" in bad.stderr
        assert "token" not in bad.stdout and "Traceback" not in bad.stderr
        assert list(tmp_path.iterdir()) == [], list(tmp_path.iterdir())

    for option, value in (("--scale", "-5"), ("--inactive-days", "-1"),
                          ("--create-user-limit", "-1"), ("--create-user-window", "0"),
                          ("--create-user-window", "nan")):  # fmt: skip
        negative = serve(option, value, "--db", db)
        assert negative.returncode == 2
        assert f"argument {option}: {value}:" in negative.stderr, negative.stderr
        assert not db.exists()


# ---------------------------------------------------------------------------- metrics validate


def test_metrics_validate_refuses_what_is_not_a_regular_file(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.ndjson"
    os.mkfifo(fifo)
    for path, kind in ((fifo, "a named pipe"), (Path("/dev/zero"), "a device")):
        result = flagdesk("metrics", "validate", path, timeout=30)  # it hung
        assert result.returncode == 2, result.stderr
        assert f"{path}: not a regular file ({kind})" in result.stderr


def test_metrics_validate_reads_metrics_after_much_white_space(tmp_path: Path) -> None:
    item = {"featureName": "f", "appName": "a", "environment": "development",
            "timestamp": 1_700_000_000_000, "yes": 1, "no": 2}  # fmt: skip
    for name, text in (("lines.ndjson", json.dumps(item) + "\n"),
                       ("array.json", json.dumps([item, item]))):  # fmt: skip
        path = tmp_path / name
        path.write_text(" \n\t" * 30_000 + text)  # 90,000 bytes of white space first
        result = flagdesk("metrics", "validate", path, "--json")
        assert result.returncode == 0, result.stdout + result.stderr
        assert json.loads(result.stdout)["metrics"] == text.count('"featureName"')
    blank = tmp_path / "blank.ndjson"
    blank.write_text(" \n" * 50_000)
    result = flagdesk("metrics", "validate", blank)
    assert result.returncode == 2 and "only white space" in result.stdout + result.stderr


# ---------------------------------------------------------------------------- the log


def test_a_headless_command_writes_the_log_and_verbose_adds_debug_lines(
    demo_sandbox: SandboxProcess, tmp_path: Path
) -> None:
    logs = tmp_path / "logs"
    env = {"FLAGDESK_LOG_DIR": str(logs)}
    plain = flagdesk("groups", "list", "--url", demo_sandbox.url,
                     env={**env, "FLAGDESK_TOKEN": demo_sandbox.admin_token})  # fmt: skip
    assert plain.returncode == 0, plain.stderr
    log = logs / "flagdesk.log"
    assert mode(log) == 0o600
    first = log.read_text()
    assert "flagdesk groups list (flagdesk" in first and "DEBUG" not in first
    assert "flagdesk groups list: exit status 0" in first

    verbose = flagdesk("--verbose", "groups", "list", "--url", demo_sandbox.url,
                       env={**env, "FLAGDESK_TOKEN": demo_sandbox.admin_token})  # fmt: skip
    assert verbose.returncode == 0, verbose.stderr
    text = log.read_text()
    assert "DEBUG" in text and "GET /api/admin/groups" in text
    assert f"debug log in {log}" in verbose.stderr
    secret = demo_sandbox.admin_token.rpartition(".")[2]
    assert secret not in text and secret not in verbose.stderr


# ---------------------------------------------------------------------------- the repository


@pytest.mark.skipif(not (ROOT / ".git").exists() or not shutil.which("git"),
                    reason="not a git checkout")  # fmt: skip
def test_no_schemathesis_crash_cache_is_committed() -> None:
    tracked = subprocess.run(["git", "-C", str(ROOT), "ls-files", ".schemathesis"],
                             capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert tracked == ""
    ignored = subprocess.run(["git", "-C", str(ROOT), "check-ignore", "-q",
                              ".schemathesis/examples/x"])  # fmt: skip
    assert ignored.returncode == 0
