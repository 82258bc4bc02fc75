"""The embedded sandbox is given to the session by the GUI's entry point
(`ui.main_window.run`): a session made without one never starts a server, and says so."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.profiles import ProfileStore
from app.viewmodels.session import FAILED, Session
from sandbox.process import SandboxProcess, default_db_path, embedded_sandbox


def test_a_session_without_a_sandbox_launcher_starts_none(
    qtbot: Any, qloop: Any, tmp_path: Path, arun: Any
) -> None:
    session = Session(ProfileStore(tmp_path / "config"), health_interval=0)
    try:
        session.prelaunch()  # a first start (nothing saved): the sandbox would open, but none
        assert session._sandbox is None
        session.open_last()
        qtbot.waitUntil(lambda: session.state == FAILED, timeout=20_000)
        assert "no local sandbox" in session.message
        assert session._sandbox is None
    finally:
        arun(session.aclose())


def test_the_gui_s_embedded_sandbox() -> None:
    """What `ui.main_window.run` gives the session: the user's database, tokens of its run's
    own (any other flagdesk on it keeps its own), stopped with this process."""
    sandbox = embedded_sandbox()
    assert isinstance(sandbox, SandboxProcess) and not sandbox.launched
    assert sandbox.db == default_db_path()
    assert sandbox.session_tokens and sandbox.exit_with_parent
