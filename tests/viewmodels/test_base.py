"""`ViewModel` (busy, error, tracked tasks) and `SessionViewModel`'s share of the status bar,
without a window."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from app.api.errors import ApiError
from app.viewmodels.base import ViewModel


def test_a_client_error_becomes_the_error_text(qtbot: Any, qloop: Any) -> None:
    model = ViewModel()

    async def fail() -> None:
        raise ApiError(403, "NoAccessError", "You need the Admin root role.")

    with qtbot.waitSignals([model.busy_changed, model.error_changed, model.busy_changed]):
        task = model.run(fail())
    assert task.done()
    assert model.error == "403 NoAccessError: You need the Admin root role."
    assert not model.busy and not model.tasks


def test_an_unexpected_error_reaches_the_excepthook(qtbot: Any, qloop: Any) -> None:
    model = ViewModel()

    async def bug() -> None:
        raise ValueError("a bug")

    with qtbot.captureExceptions() as exceptions:
        task = model.run(bug())
        qtbot.waitUntil(task.done)
    assert model.error == "Unexpected error: ValueError: a bug"
    assert [type(e[1]) for e in exceptions] == [ValueError]
    assert not model.busy


def test_tasks_are_kept_and_cancelled_on_close(qtbot: Any, qloop: Any) -> None:
    model = ViewModel()
    task = model.run(asyncio.sleep(60), busy=False)
    assert model.tasks == {task} and not model.busy
    model.close()
    # the model forgets the task in its done callback, a turn of the loop after the task ends
    qtbot.waitUntil(lambda: task.done() and not model.tasks)
    assert task.cancelled()
    coro = asyncio.sleep(0)
    with pytest.raises(RuntimeError):
        model.run(coro)


def test_a_task_cancelled_before_it_starts_ends_busy(qtbot: Any, qloop: Any) -> None:
    model = ViewModel()
    task = model.run(asyncio.sleep(60))
    assert model.busy
    with qtbot.waitSignal(model.busy_changed, check_params_cb=lambda busy: not busy):
        task.cancel()
    assert task.cancelled() and not model.busy and not model.tasks


def test_a_windows_error_leaves_the_status_bar_when_it_is_over(
    qtbot: Any, qloop: Any, tmp_path: Any
) -> None:
    """The status bar's last error is withdrawn when the window that reported it clears it or
    closes, but not when another error has taken its place."""
    from app.profiles import ProfileStore
    from app.viewmodels.session import Session
    from app.viewmodels.tools import SessionViewModel

    session = Session(ProfileStore(tmp_path), health_interval=0)
    archive, users = SessionViewModel(session), SessionViewModel(session)
    archive.set_error("No project nope on this server")
    assert session.last_error == "No project nope on this server"
    archive.set_error("")  # loaded fine after all
    assert session.last_error == ""

    archive.set_error("No project nope on this server")
    users.set_error("403 NoAccessError")
    archive.set_error("")  # not the error shown any more: it stays
    assert session.last_error == "403 NoAccessError"
    users.close()  # its window closed: its error goes with it
    assert session.last_error == ""
