"""pytest-qt with qasync, shared by tests/ui and tests/viewmodels (their conftests import these
fixtures): the recipe of notes/qt-stack.md, which passed 20 repeated runs.

Plain, synchronous tests; `qloop` installs a qasync loop marked as running, and qtbot's waits turn
Qt's event loop, which runs the asyncio work too. Never `await` inside a test and never
`loop.stop()` (that calls QApplication.exit(), after which every later wait returns at once).
"""

from __future__ import annotations

import asyncio
import gc
import os
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before any QApplication exists

import pytest
import qasync
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QApplication

from app.connection import ConnectionSpec
from app.profiles import ProfileStore
from app.viewmodels.session import FAILED, READY, Session
from sandbox.process import SandboxProcess

T = TypeVar("T")

# Closed loops are kept alive until the run ends and then freed here, on the GUI thread: a loop
# collected on another thread gives "QObject::~QObject: Timers cannot be stopped from another
# thread" and a segfault later.
_CLOSED_LOOPS: list[qasync.QEventLoop] = []


@pytest.fixture(scope="session", autouse=True)
def _free_closed_loops_on_gui_thread(qapp: QApplication) -> Iterator[None]:
    yield
    _CLOSED_LOOPS.clear()
    gc.collect()


@pytest.fixture(scope="session", autouse=True)
def _fonts_exist(qapp: QApplication) -> None:
    """With no fonts Qt draws boxes and says nothing: fail loudly instead."""
    families = QFontDatabase.families()
    assert families, (
        "Qt finds no font family: install fontconfig and a font (Debian: libfontconfig1 "
        "fonts-dejavu-core), or every window renders as boxes"
    )


@pytest.fixture
def qloop(qapp: QApplication) -> Iterator[qasync.QEventLoop]:
    loop = qasync.QEventLoop(qapp, already_running=True)
    asyncio.set_event_loop(loop)
    yield loop
    pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for t in pending:
        t.cancel()
    for _ in range(200):
        if all(t.done() for t in pending):
            break
        qapp.processEvents()
    qapp.aboutToQuit.disconnect(loop._after_run_forever)
    loop._QEventLoop__is_running = False  # NOT loop.stop(): it would call QApplication.exit()
    asyncio._set_running_loop(None)
    loop.close()
    asyncio.set_event_loop(None)
    _CLOSED_LOOPS.append(loop)


@pytest.fixture
def arun(qtbot: Any, qloop: qasync.QEventLoop) -> Callable[..., Any]:
    """`arun(coro)`: run a coroutine on the qasync loop while qtbot turns Qt's event loop, and
    return its result (or raise its exception)."""

    def run(coro: Coroutine[Any, Any, T], timeout: int = 10_000) -> T:
        task = qloop.create_task(coro)
        qtbot.waitUntil(task.done, timeout=timeout)
        result: T = task.result()
        return result

    return run


@pytest.fixture
def connect(
    qtbot: Any, qloop: qasync.QEventLoop, arun: Callable[..., Any], tmp_path: Path
) -> Iterator[Callable[..., Session]]:
    """`connect(sandbox, token=None)`: a `Session` connected (READY) to a running sandbox with
    its admin token, or `token` (a personal access token, say), named `label`. Closed after the
    test."""
    sessions: list[Session] = []

    def make(
        sb: SandboxProcess,
        token: str | None = None,
        *,
        client_token: str | None = None,
        label: str = "test sandbox",
    ) -> Session:
        session = Session(ProfileStore(tmp_path / f"config{len(sessions)}"))
        sessions.append(session)
        session.open_spec(
            ConnectionSpec(
                url=sb.url,
                token=token or sb.admin_token,
                client_token=client_token or sb.client_token,
                label=label,
            )
        )
        qtbot.waitUntil(lambda: session.state in (READY, FAILED), timeout=30_000)
        assert session.state == READY, session.message
        return session

    yield make
    for session in sessions:
        arun(session.aclose())


def select_where(view: Any, keep: Callable[[Any], bool]) -> None:
    """Select, in the table view `view` (over a `TableModel`), exactly the rows whose items
    `keep` is true for, as a person's clicks would (the selection model says so)."""
    table, selection = view.model(), view.selectionModel()
    flags = selection.SelectionFlag.Select | selection.SelectionFlag.Rows
    selection.clearSelection()
    for row, item in enumerate(table.rows):
        if keep(item):
            selection.select(table.index(row, 0), flags)
