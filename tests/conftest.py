from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from sandbox.process import SandboxProcess


@pytest.fixture(scope="session")
def demo_sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxProcess]:
    """One sandbox with the demo data for the whole run: for tests that only read."""
    with SandboxProcess(tmp_path_factory.mktemp("demo") / "demo.sqlite3", "--demo") as sb:
        yield sb


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[SandboxProcess]:
    """A fresh demo sandbox of this test's own, free to change."""
    with SandboxProcess(tmp_path / "sandbox.sqlite3", "--demo") as sb:
        yield sb
