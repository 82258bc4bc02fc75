"""`OverviewModel` without a window: one load at a time, and a server that refuses the users."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from app.api.client import AdminClient
from app.api.errors import ApiError
from app.viewmodels.overview import OverviewModel
from app.viewmodels.table import MISSING


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
