"""Which Python `packaging/bootstrap.sh` makes `.venv` with: the system's own when it is 3.11 or
newer (Debian builds it with profile-guided and link-time optimisation; on a pyenv-built Python
the window's first data came about 1.2x later), else python3 on PATH; `$PYTHON` chooses
another."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BOOTSTRAP = ROOT / "packaging" / "bootstrap.sh"
SYSTEM = Path("/usr/bin/python3")


def chosen(**env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != "PYTHON"}
    return subprocess.run(
        ["bash", str(BOOTSTRAP), "python"],
        env={**environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def system_python_usable() -> bool:
    if not os.access(SYSTEM, os.X_OK):
        return False
    check = "import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 11))"
    done = subprocess.run([str(SYSTEM), "-c", check], capture_output=True, timeout=60, check=False)
    return done.returncode == 0


@pytest.mark.skipif(not system_python_usable(), reason="no system Python 3.11+ with venv here")
def test_the_system_python_is_preferred() -> None:
    out = chosen()
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(SYSTEM)


def test_python_from_the_environment_wins() -> None:
    out = chosen(PYTHON=sys.executable)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == sys.executable


def test_a_python_that_is_not_there_is_named() -> None:
    out = chosen(PYTHON="no-such-python3")
    assert out.returncode == 1
    assert "no no-such-python3 on PATH" in out.stderr
