"""The view-model base, the overview model and the generic table model, without a window; and
the app's excepthook dialog."""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMessageBox

from app.api.client import AdminClient
from app.api.errors import ApiError
from app.viewmodels.base import ViewModel
from app.viewmodels.overview import OverviewModel
from app.viewmodels.table import MISSING, ROW_ROLE, Column, TableModel
from ui import excepthook


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
    qtbot.waitUntil(task.done)
    assert task.cancelled() and not model.tasks
    coro = asyncio.sleep(0)
    with pytest.raises(RuntimeError):
        model.run(coro)


def test_a_second_load_while_loading_joins_the_first(qtbot: Any, qloop: Any) -> None:
    gate = asyncio.Event()

    async def connect() -> AdminClient:
        await gate.wait()
        raise ApiError(503, "Unavailable", "not yet")

    model = OverviewModel(connect, source="x")
    first = model.load()
    assert model.load() is first and model.busy and model.status == "Connecting…"
    gate.set()
    qtbot.waitUntil(first.done)
    assert model.error.startswith("503 Unavailable")
    assert model.load() is not first
    model.close()


def test_users_forbidden_still_shows_the_rest(qtbot: Any, qloop: Any) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/api/admin/user-admin":
            return httpx.Response(403, json={"name": "NoAccessError", "message": "Admins only."})
        if request.url.path == "/api/admin/ui-config":
            return httpx.Response(200, json={"name": "Unleash", "version": "7.1.0"})
        return httpx.Response(200, json={"projects": [{"id": "p", "name": "P", "extra": 1}]})

    client = AdminClient("http://server.test", "t", transport=httpx.MockTransport(handler))

    async def connect() -> AdminClient:
        return client

    model = OverviewModel(connect, source="Server")
    with qtbot.waitSignal(model.loaded):
        model.load()
    assert (model.server_name, model.server_version, model.url) == (
        "Unleash",
        "7.1.0",
        "http://server.test",
    )
    assert model.user_count is None
    assert model.users_note == "not available (Admins only.)"
    assert model.projects.rowCount() == 1
    assert model.projects.text(0, 2) == MISSING  # no featureCount sent
    task = qloop.create_task(client.aclose())
    qtbot.waitUntil(task.done)


@dataclass
class Row:
    name: str
    count: int | None
    on: bool = False


def test_table_model_shows_and_sorts_in_python(qtbot: Any) -> None:
    model: TableModel[Row] = TableModel(
        [
            Column("Name", lambda r: r.name, tooltip=lambda r: f"about {r.name}"),
            Column("Count", lambda r: r.count, numeric=True),
            Column("On", lambda r: r.on),
        ]
    )
    model.set_rows([Row("beta", 2), Row("Alpha", None, True), Row("gamma", 10)])
    assert (model.rowCount(), model.columnCount()) == (3, 3)
    index = model.index(1, 1)
    assert index.data() == MISSING
    assert model.index(1, 2).data() == "yes" and model.index(0, 2).data() == "no"
    assert index.data(Qt.ItemDataRole.TextAlignmentRole) & Qt.AlignmentFlag.AlignRight
    assert model.index(0, 0).data(Qt.ItemDataRole.ToolTipRole) == "about beta"
    assert model.index(2, 0).data(ROW_ROLE) == Row("gamma", 10)
    assert model.headerData(1, Qt.Orientation.Horizontal) == "Count"

    with qtbot.waitSignals([model.modelAboutToBeReset, model.modelReset]):
        model.sort(0)
    assert [r.name for r in model.rows] == ["Alpha", "beta", "gamma"]  # case-folded
    model.sort(1, Qt.SortOrder.DescendingOrder)
    assert [r.count for r in model.rows] == [None, 10, 2]  # missing values sort past the rest
    model.set_rows([Row("x", 1), Row("y", 5)])  # new rows keep the chosen order
    assert [r.count for r in model.rows] == [5, 1]


def test_the_excepthook_shows_a_dialog(qtbot: Any, capsys: pytest.CaptureFixture[str]) -> None:
    try:
        raise KeyError("lost")
    except KeyError:
        exc_type, exc, tb = sys.exc_info()
    assert exc_type is not None and exc is not None
    excepthook.show_unexpected_error(exc_type, exc, tb)
    boxes = [
        w
        for w in QApplication.topLevelWidgets()
        if isinstance(w, QMessageBox) and w.objectName() == "unexpectedErrorBox"
    ]
    assert len(boxes) == 1
    box = boxes[0]
    assert box.isVisible()
    assert box.informativeText() == "KeyError: 'lost'"
    assert "Traceback" in box.detailedText()
    assert "KeyError: 'lost'" in capsys.readouterr().err  # still printed as before
    box.close()
    qtbot.waitUntil(lambda: not excepthook._boxes)


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
