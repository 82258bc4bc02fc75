"""`flagdesk snapshot` against sandboxes over HTTP, as a subprocess: the file written (mode 0600,
a snapshot that loads, the counts said, no token in it anywhere), its default name, a played
open-source release's lists it has not named with why; and the files compared offline with
`flagdesk diff` (the same: exit 0; the demo against open source: what one side did not read is
left out and said)."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from pathlib import Path

from app.commands.snapshot import default_name
from app.snapshot.files import load
from sandbox.process import SandboxProcess
from tests.app.test_cli_users import as_json, run_flagdesk


def snapshot(sb: SandboxProcess, *args: str, data: Path) -> subprocess.CompletedProcess[str]:
    return run_flagdesk(("snapshot",), sb, args, data, None)


def diff(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "app", "diff", *args], capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=60)  # fmt: skip


def test_written_private_loadable_counted_and_secret_free(
    demo_sandbox: SandboxProcess, tmp_path: Path
) -> None:
    path = tmp_path / "demo.json"
    out = as_json(snapshot(demo_sandbox, "-o", str(path), "--json", data=tmp_path))
    assert out["exit_status"] == 0 and out["file"] == str(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    taken = load(path)
    assert out["counts"]["users"] == len(taken.users) > 10
    assert out["counts"]["groups"] == len(taken.groups) > 0 and out["unread"] == {}
    text = path.read_text()
    assert demo_sandbox.admin_token not in text
    assert demo_sandbox.admin_token.split(".")[-1] not in text

    said = snapshot(demo_sandbox, "-o", str(tmp_path / "again.json"), data=tmp_path)
    assert said.returncode == 0, said.stderr
    assert said.stdout.startswith(f"Snapshot of {demo_sandbox.url.rstrip('/')} (Unleash ")
    assert f"written to {tmp_path / 'again.json'}: " in said.stdout and " users, " in said.stdout

    same = diff(str(path), str(tmp_path / "again.json"))
    assert same.returncode == 0, same.stdout + same.stderr


def test_open_source_names_what_it_has_not_and_diff_leaves_it_out(
    demo_sandbox: SandboxProcess, tmp_path: Path
) -> None:
    demo = tmp_path / "demo.json"
    assert snapshot(demo_sandbox, "-o", str(demo), data=tmp_path).returncode == 0
    with SandboxProcess(tmp_path / "oss.sqlite3", "--demo", "--as-version", "8.2") as oss:
        played = snapshot(oss, "-o", str(tmp_path / "oss.json"), data=tmp_path)
    assert played.returncode == 0, played.stderr
    assert "groups not read: " in played.stdout and "Enterprise" in played.stdout
    compared = diff(str(demo), str(tmp_path / "oss.json"), "--kinds", "groups,users", "--json")
    out = json.loads(compared.stdout)
    assert out["kinds"] == ["users"] and list(out["notCompared"]) == ["groups"]


def test_the_default_name() -> None:
    from datetime import UTC, datetime

    when = datetime(2026, 12, 7, 6, 5, 4, tzinfo=UTC)
    assert default_name("http://127.0.0.1:4242/", when) == (
        "flagdesk-snapshot-127.0.0.1-4242-20261207-060504.json")  # fmt: skip
    assert default_name("prod eu/../x", when) == "flagdesk-snapshot-prod-eu-x-20261207-060504.json"
