"""Shared widgets: the picker (projects from the server, or typed), people's pictures."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt
from PySide6.QtGui import QColor, QImage

from app.viewmodels.avatars import AvatarCache
from app.viewmodels.choices import context_field_choices, project_choices
from app.viewmodels.session import Session
from sandbox.process import SandboxProcess
from ui.avatar import Avatar, initials
from ui.picker import Picker


def test_picker_lists_the_servers_projects_and_takes_a_typed_one(
    qtbot: Any, demo_sandbox: SandboxProcess, connect: Callable[..., Session]
) -> None:
    session = connect(demo_sandbox)
    model = project_choices(session)
    picker = Picker("test", model, caption="Project:")
    qtbot.addWidget(picker)
    model.load()
    qtbot.waitUntil(lambda: bool(model.choices) and not model.busy)
    assert picker.combo.count() == len(model.choices)
    assert model.find("default") is not None
    chosen: list[str] = []
    picker.chosen.connect(chosen.append)
    index = picker.combo.findData("default")
    picker.combo.setCurrentIndex(index)
    picker.combo.activated.emit(index)
    assert chosen[-1] == "default"
    picker.combo.setEditText("not-listed")
    qtbot.mouseClick(picker.button, Qt.MouseButton.LeftButton)
    assert chosen[-1] == "not-listed"
    assert picker.note.isHidden()

    fields = context_field_choices(session)
    fields.load()
    qtbot.waitUntil(lambda: bool(fields.choices) and not fields.busy)
    assert fields.find("userId") is not None


def png(colour: str) -> bytes:
    image = QImage(8, 8, QImage.Format.Format_ARGB32)
    image.fill(QColor(colour))
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    return bytes(data.data())


def test_avatars_load_in_the_background_without_credentials(
    qtbot: Any, arun: Callable[..., Any]
) -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.path == "/ada.png":
            return httpx.Response(200, content=png("red"), headers={"content-type": "image/png"})
        if request.url.path == "/page":
            return httpx.Response(200, text="<html>", headers={"content-type": "text/html"})
        return httpx.Response(404)

    cache = AvatarCache("https://server.example", transport=httpx.MockTransport(answer))
    ada = Avatar(cache, 32)
    grace = Avatar(cache, 32)
    page = Avatar(cache, 32)
    for widget in (ada, grace, page):
        qtbot.addWidget(widget)
    ada.set_person("Ada Lovelace", "https://pictures.example/ada.png")
    grace.set_person("Grace Hopper", "/missing.png")  # relative to the server
    page.set_person("Not An Image", "https://pictures.example/page")
    qtbot.waitUntil(lambda: len(seen) == 3 and not cache._tasks)
    assert ada.has_picture and not grace.has_picture and not page.has_picture
    assert {str(r.url) for r in seen} == {
        "https://pictures.example/ada.png",
        "https://server.example/missing.png",
        "https://pictures.example/page",
    }
    assert all("authorization" not in r.headers for r in seen)
    # asked once: a second widget on the same picture does not fetch again
    again = Avatar(cache, 24)
    qtbot.addWidget(again)
    again.set_person("Ada Lovelace", "https://pictures.example/ada.png")
    assert again.has_picture and len(seen) == 3
    arun(cache.aclose())


def test_initials() -> None:
    assert initials("Ada Lovelace") == "AL"
    assert initials("Ada King Lovelace") == "AL"
    assert initials("grace") == "G"
    assert initials("ops@example.com") == "O"
    assert initials(None) == "?"
    assert initials("  ") == "?"
