"""What the artefact tests share (`make artefact-test`, after `make package` and `make bundle`):
the built files, a child's environment with nothing of the checkout in it, and a `flagdesk serve`
child whose URL is read from its output."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
DIST = ROOT / "dist"
sys.path.insert(0, str(ROOT / "bench"))  # xdisplay: the virtual display the benchmark uses too


def version() -> str:
    from app import __version__

    return __version__


def artefact(name: str) -> Path:
    path = DIST / name
    if not path.exists():
        pytest.fail(f"{path} is missing: run `make package` and `make bundle` first")
    return path


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a person's session on this machine, in HOME `home`: no variable of
    the checkout's (virtual environment, test folders, Qt platform) survives."""
    keep = ("PATH", "LANG", "LC_ALL", "TERM", "TZ")
    env = {k: v for k, v in os.environ.items() if k in keep or k.startswith("PIP_")}
    env["PATH"] = os.pathsep.join(
        p for p in env.get("PATH", "").split(os.pathsep) if not p.startswith(str(ROOT))
    )
    env["HOME"] = str(home)
    env.update(extra)
    return env


@contextmanager
def serving(command: Sequence[str], env: dict[str, str], cwd: Path) -> Iterator[str]:
    """Run `command` (a `flagdesk serve`), yield its URL once /health answers, stop it."""
    proc = subprocess.Popen([*command, "--port", "0", "--db", str(cwd / "serve.sqlite3")],
                            cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)  # fmt: skip
    try:
        url = ""
        assert proc.stdout is not None
        seen = []
        for line in proc.stdout:
            seen.append(line)
            if "listening on " in line:
                url = line.rsplit(" ", 1)[1].strip()
                break
        assert url, "".join(seen)
        assert httpx.get(f"{url}/health", timeout=10).json() == {"health": "GOOD"}
        yield url
    finally:
        proc.terminate()
        proc.wait(30)
