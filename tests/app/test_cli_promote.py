"""`flagdesk promote` run as a subprocess against real sandboxes: a demo sandbox promoted to an
empty one, and one demo sandbox's staging promoted to its production. `--dry-run` sends
nothing (the target read back the same); applied, `flagdesk diff` with the same selection then
finds nothing (exit 0), the segment and context field the flags need made first; a second
promote has nothing to do; `flagdesk journal undo` of any of its entries puts the target back
(a snapshot taken before compares the same as the server after, exit 0). A file is no
TARGET; without a terminal and without --yes nothing is sent. State is read back from the
servers, never assumed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox.process import SandboxProcess

ROOT = Path(__file__).resolve().parents[2]


class Cli:
    """`flagdesk` with its own config and data folders, and profiles of sandboxes."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path
        self.env = {**os.environ, "FLAGDESK_DATA_DIR": str(tmp_path / "data"),
                    "FLAGDESK_CONFIG_DIR": str(tmp_path / "config"),
                    "FLAGDESK_LOG_DIR": str(tmp_path / "logs"), "PYTHONPATH": str(ROOT)}  # fmt: skip
        self.env.pop("FLAGDESK_TOKEN", None)

    def __call__(self, *args: str | Path, token: str = "") -> subprocess.CompletedProcess[str]:
        env = dict(self.env)
        if token:
            env["FLAGDESK_TOKEN"] = token
        return subprocess.run(
            [sys.executable, "-m", "app", *map(str, args)],
            capture_output=True, text=True, env=env, cwd=self.tmp, stdin=subprocess.DEVNULL,
            timeout=120,
        )  # fmt: skip

    def profile(self, name: str, sandbox: SandboxProcess) -> None:
        added = self("profiles", "add", name, "--url", sandbox.url, "--token-store", "file",
                     token=sandbox.admin_token)  # fmt: skip
        assert added.returncode == 0, added.stderr

    def snapshot(self, profile: str, path: Path) -> Path:
        taken = self("snapshot", "--profile", profile, "-o", path)
        assert taken.returncode == 0, taken.stderr
        return path


@pytest.fixture
def two(tmp_path: Path) -> Iterator[tuple[Cli, SandboxProcess, SandboxProcess]]:
    with (
        SandboxProcess(tmp_path / "a.sqlite3", "--demo") as a,
        SandboxProcess(tmp_path / "b.sqlite3", "--empty") as b,
    ):
        cli = Cli(tmp_path)
        cli.profile("demo", a)
        cli.profile("empty", b)
        yield cli, a, b


def _ok(done: subprocess.CompletedProcess[str], status: int = 0) -> str:
    assert done.returncode == status, done.stdout + done.stderr
    return done.stdout


def test_a_demo_promoted_to_an_empty_server_then_undone(
    two: tuple[Cli, SandboxProcess, SandboxProcess], tmp_path: Path
) -> None:
    cli, _a, _b = two
    kinds = ("--kinds", "flags,segments,context-fields,tag-types,strategies,projects")
    before = cli.snapshot("empty", tmp_path / "before.json")
    planned = _ok(cli("promote", "demo", "empty", *kinds, "--dry-run"))
    assert "Stage 1" in planned and "Stage 2" in planned
    assert "POST /api/admin/segments" in planned
    assert "(created in stage 1)" in planned
    assert "POST /api/admin/context" in planned
    # the dry run sent nothing: the server is as it was
    _ok(cli("diff", before, "empty"))
    # without a terminal and without --yes, nothing either
    refused = cli("promote", "demo", "empty", *kinds)
    assert refused.returncode == 2 and "--yes" in refused.stderr
    _ok(cli("diff", before, "empty"))

    done = cli("promote", "demo", "empty", *kinds, "--yes", "--json")
    result = json.loads(_ok(done))
    assert result["promoted"] is True and result["entries"]
    stage_one = [r["path"] for r in result["plan"]["stages"][0]]
    first_segment = stage_one.index("/api/admin/segments")
    assert "/api/admin/context" in stage_one and first_segment >= 0
    # the same selection compares the same now
    _ok(cli("diff", "demo", "empty", *kinds))
    # and a second promote has nothing to do
    again = _ok(cli("promote", "demo", "empty", *kinds, "--yes"))
    assert "Nothing to promote" in again

    # one undo for the whole promote, from any of its entries
    undo = cli("journal", "undo", result["entries"][-1], "--profile", "empty", "--yes")
    _ok(undo)
    _ok(cli("diff", before, "empty", *kinds))


def test_two_environments_of_one_server(tmp_path: Path) -> None:
    with SandboxProcess(tmp_path / "a.sqlite3", "--demo") as a:
        cli = Cli(tmp_path)
        cli.profile("demo", a)
        before = cli.snapshot("demo", tmp_path / "before.json")
        differ = cli("diff", "demo:staging", "demo:production")
        assert differ.returncode == 1, differ.stdout + differ.stderr
        plan = _ok(cli("promote", "demo:staging", "demo:production", "--dry-run"))
        assert "/environments/production/" in plan
        assert "/environments/staging/" not in plan
        _ok(cli("diff", before, "demo"))
        done = json.loads(_ok(cli("promote", "demo:staging", "demo:production", "--yes",
                                  "--json")))  # fmt: skip
        _ok(cli("diff", "demo:staging", "demo:production"))
        # staging itself untouched
        _ok(cli("diff", f"{before}:staging", "demo:staging"))
        _ok(cli("journal", "undo", done["entries"][0], "--profile", "demo", "--yes"))
        _ok(cli("diff", before, "demo", "--kinds", "flags,segments,context-fields,projects"))


def test_a_file_is_no_target(tmp_path: Path) -> None:
    cli = Cli(tmp_path)
    (tmp_path / "x.json").write_text("{}")
    done = cli("promote", "x.json", "x.json", "--dry-run")
    assert done.returncode == 2
    assert "a file cannot be promoted to" in done.stderr
