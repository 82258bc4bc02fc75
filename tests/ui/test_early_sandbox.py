"""`flagdesk` (`app.cli.run_gui`) launches the embedded sandbox as soon as the window's frame is
shown when the last run used the sandbox (guessed from profiles.json alone); the session takes that
very process, or, when it opens a saved server instead, the process is stopped."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.paths import sandbox_was_last
from app.profiles import Profile, ProfileStore
from app.viewmodels.session import CONNECTING, READY, Session
from sandbox.process import EarlySandbox, SandboxProcess, embedded_sandbox


def test_the_guess_reads_the_last_connection(tmp_path: Path) -> None:
    config = tmp_path / "config"
    assert sandbox_was_last(config)  # a first start: the sandbox opens
    store = ProfileStore(config)
    store.set_last(None)
    assert sandbox_was_last(config)
    store.save(Profile(name="Prod", url="https://unleash.example.com"), token=None)
    store.set_last("Prod")
    assert not sandbox_was_last(config)
    assert EarlySandbox.if_likely(config) is None  # nothing launched for a server
    (config / "profiles.json").write_text("{damaged", encoding="utf-8")
    assert sandbox_was_last(config)  # the store cannot read it either: the sandbox opens


@pytest.fixture
def early_session(
    qloop: Any, tmp_path: Path, arun: Any
) -> Iterator[tuple[EarlySandbox, Session, SandboxProcess]]:
    """A sandbox launched early (as `flagdesk` launches it), and a session that has taken it
    (`prelaunch`) but not opened it yet; closed and stopped afterwards."""
    config = tmp_path / "config"
    early = EarlySandbox.if_likely(config)
    assert early is not None
    early.launch()
    session = Session(ProfileStore(config), sandbox_factory=early, health_interval=0)
    try:
        session.prelaunch()
        sandbox = session._sandbox
        assert isinstance(sandbox, SandboxProcess)
        yield early, session, sandbox
    finally:
        arun(session.aclose())
        session.stop_sandbox()


def test_the_session_takes_the_early_sandbox(
    qtbot: Any, early_session: tuple[EarlySandbox, Session, SandboxProcess]
) -> None:
    early, session, sandbox = early_session
    assert sandbox.launched and early.taken
    pid = sandbox.pid
    early.release()  # taken: nothing to stop
    session.open_last()
    qtbot.waitUntil(lambda: session.state == READY, timeout=30_000)
    assert session._sandbox is sandbox and sandbox.pid == pid and sandbox.running
    # a later sandbox (after a failure, say) is a new process
    later = early()
    assert isinstance(later, SandboxProcess) and later is not sandbox and not later.launched


def test_an_early_sandbox_the_session_does_not_take_is_stopped(tmp_path: Path) -> None:
    config = tmp_path / "config"
    store = ProfileStore(config)
    store.save(Profile(name="Saved", url="https://unleash.example.com"), token=None)
    store.set_last("Saved")
    launched = embedded_sandbox()
    launched.launch()  # as if the guess had been wrong
    early = EarlySandbox(launched)
    session = Session(store, sandbox_factory=early, health_interval=0)
    session.prelaunch()
    assert session._sandbox is None and not early.taken
    early.release()
    assert early.taken
    deadline = time.monotonic() + 30
    while launched.launched and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not launched.launched


def test_flagdesk_launches_the_sandbox_once_the_frame_is_shown(tmp_path: Path) -> None:
    """`flagdesk` launches the sandbox as soon as the window's frame is on screen, before the
    session and the pages are imported: its boot is most of the wait for the first data, and
    the imports after the frame are time it boots in; before the frame, the two shared a core
    whenever the machine had less than two free, and the frame waited."""
    script = """
import sys
from PySide6.QtWidgets import QApplication
import ui.main_window as main_window
from sandbox.process import EarlySandbox
seen = []
def launch(early):
    frames = [w for w in QApplication.topLevelWidgets() if isinstance(w, main_window.MainWindow)]
    seen.append(([w.isVisible() for w in frames], "app.viewmodels.session" in sys.modules))
    raise SystemExit(0)  # the rest of the start is not what is tested
EarlySandbox.launch = launch
from app import cli
try:
    cli.main([])
except SystemExit:
    pass
print(seen)
"""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "FLAGDESK_CONFIG_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                         timeout=60, check=True)  # fmt: skip
    # launched once, with the frame on screen and the session not imported yet
    assert out.stdout.splitlines()[-1] == "[([True], False)]", out


def test_an_early_sandbox_is_launched_once_and_not_after_the_session_took_it(
    tmp_path: Path,
) -> None:
    early = EarlySandbox.if_likely(tmp_path / "config")
    assert early is not None
    sandbox = early()  # taken before the frame was shown (a session opened at once)
    early.launch()
    assert not sandbox.launched  # the session launches what it took, when it decides to
    again = EarlySandbox.if_likely(tmp_path / "config")
    assert again is not None
    again.launch()
    launched = again._early
    assert launched is not None
    try:
        assert launched.launched
        pid = launched.pid
        again.launch()  # once: the same process
        assert launched.pid == pid
        assert again() is launched
    finally:
        launched.stop()


def test_the_start_runs_without_the_collector_then_freezes_what_it_made(tmp_path: Path) -> None:
    """The window's start (Qt, the pages, the client and its models, the first data) runs with
    the cyclic collector off; once every page is built what it made is frozen and the collector
    is on."""
    script = """
import gc, sys
from PySide6.QtCore import QTimer
import ui.main_window as main_window
seen = []
bind, build = main_window.MainWindow.bind, main_window.MainWindow.build_pages
def bind_then_look(window, session):
    seen.append(("binding", gc.isenabled()))
    bind(window, session)
    seen.append(("bound", gc.isenabled()))
def build_then_look(window):
    if window._history is not None:
        return build(window)
    seen.append(("first data", window.overview_model.has_data, gc.isenabled()))
    build(window)
    def look():  # the first turn of events after the pages were built
        seen.append(("built", gc.isenabled(), gc.get_freeze_count() > 10_000))
        window.close()
    QTimer.singleShot(0, look)
main_window.MainWindow.bind = bind_then_look
main_window.MainWindow.build_pages = build_then_look
from app import cli
assert cli.main([]) == 0
print(seen)
"""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "FLAGDESK_CONFIG_DIR": str(tmp_path),
           "XDG_DATA_HOME": str(tmp_path / "data")}  # fmt: skip
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                         timeout=60, check=True)  # fmt: skip
    assert out.stdout.split("\n")[-2] == str(
        [("binding", False), ("bound", False), ("first data", True, False), ("built", True, True)]
    ), out
    # the switch of app.startup: the same start with every measure off keeps the collector on
    # throughout and freezes nothing
    plain = {**env, "FLAGDESK_STARTUP_MEASURES": "off", "XDG_DATA_HOME": str(tmp_path / "plain")}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=plain, timeout=60, check=True)  # fmt: skip
    assert out.stdout.split("\n")[-2] == str(
        [("binding", True), ("bound", True), ("first data", True, True), ("built", True, False)]
    ), out


def test_an_early_sandbox_already_listening_is_waited_for(
    qtbot: Any, early_session: tuple[EarlySandbox, Session, SandboxProcess]
) -> None:
    """A sandbox launched early may have printed its address before the session opens it: the
    session still waits for it to answer and reads its tokens (it once connected with none, and
    the window stayed on a 401)."""
    _, session, sandbox = early_session
    qtbot.waitUntil(lambda: bool(sandbox.url), timeout=30_000)  # listening, not yet asked
    session.open_last()
    qtbot.waitUntil(lambda: session.state != CONNECTING, timeout=30_000)
    assert session.state == READY, session.message
    assert sandbox.running and sandbox.admin_token and sandbox.client_token


def test_the_first_requests_are_prepared_while_the_sandbox_boots(
    qtbot: Any,
    early_session: tuple[EarlySandbox, Session, SandboxProcess],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The GUI thread waits for the booting sandbox with nothing to do: the connection's first
    requests get ready meanwhile (`app.api.client.warm_up_steps`), one step a turn, and no
    step is left for after the sandbox answers."""
    from app.api import client

    _early, session, sandbox = early_session
    steps = client.warm_up_steps()
    seen: list[bool] = []

    def watched(step: Any) -> Any:
        def run() -> object:
            seen.append(sandbox.running)
            return step()

        return run

    monkeypatch.setattr(client, "warm_up_steps", lambda: tuple(watched(s) for s in steps))
    session.open_last()
    qtbot.waitUntil(lambda: session.state == READY, timeout=30_000)
    assert seen and not any(seen)  # every step ran, each before the sandbox was up
    assert len(seen) == len(steps)


def test_with_the_measures_off_nothing_is_prepared_while_the_sandbox_boots(
    qtbot: Any,
    early_session: tuple[EarlySandbox, Session, SandboxProcess],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`FLAGDESK_STARTUP_MEASURES=off` (app.startup): the session waits for the sandbox without
    readying anything, and still connects."""
    from app.api import client

    _early, session, _sandbox = early_session
    ran: list[object] = []
    monkeypatch.setattr(client, "warm_up_steps", lambda: (lambda: ran.append(1),))
    monkeypatch.setenv("FLAGDESK_STARTUP_MEASURES", "off")
    session.open_last()
    qtbot.waitUntil(lambda: session.state == READY, timeout=30_000)
    assert ran == []
