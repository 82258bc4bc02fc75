"""The locked dependencies (issue 34): uv.lock agrees with pyproject.toml, and the environment the
tests run in holds exactly the lock's versions, so a fresh clone that passes today passes next
month. packaging/bootstrap.sh installs uv (packaging/uv.txt) into .uv and the lock into .venv."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
UV = ROOT / ".uv" / "bin" / "uv"


def uv(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    if not UV.exists():
        pytest.fail(f"no {UV}: packaging/bootstrap.sh installs it (make test)")
    env = {**os.environ, "UV_PROJECT_ENVIRONMENT": str(Path(sys.prefix)), "NO_COLOR": "1"}
    return subprocess.run(
        [str(UV), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False
    )


def test_the_lock_agrees_with_pyproject() -> None:
    done = uv("lock", "--check")
    assert done.returncode == 0, (
        "uv.lock and pyproject.toml disagree (a dependency added to one and not the other): "
        f"`make lock` makes the lock anew\n{done.stderr}"
    )


def test_a_dependency_added_to_pyproject_alone_is_caught(tmp_path: Path) -> None:
    """The check above can fail: the same check on a copy whose pyproject.toml names one more
    dependency than the lock."""
    (tmp_path / "app").mkdir()
    for name in ("pyproject.toml", "uv.lock", "README.md", "app/__init__.py"):
        shutil.copy(ROOT / name, tmp_path / name)
    pyproject = tmp_path / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    assert '"platformdirs>=4",' in text
    pyproject.write_text(text.replace('"platformdirs>=4",', '"platformdirs>=4", "six",'), "utf-8")
    done = uv("lock", "--check", cwd=tmp_path)
    assert done.returncode != 0
    assert "needs to be updated" in done.stderr


def test_the_test_environment_is_exactly_the_lock() -> None:
    """Every package the lock names for the run and test sets is installed at its locked version
    (what `make test` runs with); nothing is missing and nothing differs."""
    done = uv("sync", "--locked", "--extra", "test", "--inexact", "--dry-run", "--offline")
    assert done.returncode == 0, done.stderr
    assert "Would make no changes" in done.stderr, done.stderr
