"""A second local sandbox in one step (issue 37): File > Connections' "Start another local
sandbox" starts one on a database of its own and connects to it; the first keeps running and is
a side the Compare window reads; a change made on the first shows as a difference, promoted in
the window it leaves none; the Connections list has both, Connect switches between them; a
session's end stops them all. Real sandboxes over HTTP."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import qasync

from app.profiles import ProfileStore
from app.viewmodels.avatars import AvatarCache
from app.viewmodels.compare import Side
from app.viewmodels.session import READY, Session
from sandbox.process import SandboxProcess
from tests.ui.test_compare import compared, open_view
from ui.connection_dialog import SANDBOX_ITEM, ConnectionDialog

FEATURES = "/api/admin/projects/default/features"


@pytest.fixture
def session(
    qtbot: Any, qloop: qasync.QEventLoop, arun: Callable[..., Any], tmp_path: Path
) -> Iterator[Session]:
    """A session whose local sandboxes live in tmp_path, connected to the first."""
    made: list[SandboxProcess] = []

    def sandbox(path: Path) -> SandboxProcess:
        made.append(SandboxProcess(path, session_tokens=True))
        return made[-1]

    opened = Session(
        ProfileStore(tmp_path / "config"),
        sandbox_factory=lambda: sandbox(tmp_path / "sandbox.sqlite3"),
        more_sandboxes=lambda n: sandbox(tmp_path / f"sandbox-{n}.sqlite3"),
        health_interval=0,
    )
    opened.avatars = AvatarCache(transport=httpx.MockTransport(lambda _: httpx.Response(404)))
    opened.open_sandbox()
    qtbot.waitUntil(lambda: opened.state == READY, timeout=30_000)
    yield opened
    arun(opened.aclose(), timeout=30_000)
    assert not any(box.running for box in made), "a local sandbox outlived its session"


def _dialog(qtbot: Any, session: Session) -> ConnectionDialog:
    dialog = ConnectionDialog(session)
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def _listed(dialog: ConnectionDialog) -> dict[str, str]:
    return {dialog.list.item(row).text(): dialog.list.item(row).data(256)
            for row in range(dialog.list.count())}  # fmt: skip


def test_a_second_local_sandbox_in_one_step_compared_and_promoted_to(
    qtbot: Any, session: Session, arun: Callable[..., Any], tmp_path: Path
) -> None:
    first = session.connection
    assert first is not None and session.name == "Local sandbox"
    dialog = _dialog(qtbot, session)
    assert dialog.another_sandbox_button.isVisible()
    dialog.another_sandbox_button.click()
    assert not dialog.isVisible()
    qtbot.waitUntil(lambda: session.state == READY and session.name == "Local sandbox 2",
                    timeout=30_000)  # fmt: skip
    assert session.is_sandbox and session.sandbox_number == 2
    assert (tmp_path / "sandbox-2.sqlite3").exists()
    assert session.running_sandboxes() == [(1, "Local sandbox"), (2, "Local sandbox 2")]
    second_url = session.url
    assert second_url != first.spec.url

    # the Compare window reads the first beside this connection: the same demo data
    view = open_view(qtbot, session)
    m = view.model
    choices = dict(m.side_choices())
    assert choices[Side("sandbox", "1")] == "Local sandbox"
    assert Side("sandbox", "2") not in choices  # that one is this connection
    compared(qtbot, view, Side("sandbox", "1"), Side("connection"))
    assert m.comparison is not None and m.comparison.same, m.error or m.comparison.differences[:3]

    # a flag made on the first: one difference; promoted in the window, none is left
    spec = arun(session.sandbox_spec(1), timeout=30_000)
    with httpx.Client(base_url=spec.url, headers={"Authorization": spec.token}) as http:
        made = http.post(FEATURES, json={"name": "from-the-first", "description": "new here"})
        assert made.status_code == 201, made.text
    compared(qtbot, view, Side("sandbox", "1"), Side("connection"))
    assert m.comparison is not None and not m.comparison.same, m.error
    assert {d.object for d in m.comparison.differences} == {"default/from-the-first"}
    assert "Local sandbox (source)" in m.summary
    view.promote_button.click()
    qtbot.waitUntil(lambda: view.confirmation() is not None, timeout=30_000)
    box = view.confirmation()
    assert box is not None
    assert "“Local sandbox 2”" in box.question.text(), box.question.text()
    box.action_button.click()
    qtbot.waitUntil(lambda: m.outcome.startswith("Promoted ") and not m.tasks and not m.reading,
                    timeout=60_000)  # fmt: skip
    assert m.comparison is not None and m.comparison.same, m.comparison.differences[:3]
    with httpx.Client(base_url=second_url, headers={"Authorization": session.connection.spec.token}
                      ) as http:  # fmt: skip
        assert http.get(f"{FEATURES}/from-the-first").json()["description"] == "new here"

    # Connections lists both; Connect goes back to the first, the second keeps running
    dialog = _dialog(qtbot, session)
    listed = _listed(dialog)
    assert listed["Local sandbox 2 (running)"] == f"{SANDBOX_ITEM}2"
    assert dialog.list.currentItem().text() == "Local sandbox 2 (running)"
    assert dialog.sandbox_note.isVisible() and not dialog.form_widget.isVisible()
    assert not dialog.remove_button.isEnabled() and not dialog.test_button.isEnabled()
    dialog.list.setCurrentRow(0)
    dialog.connect_button.click()
    qtbot.waitUntil(lambda: session.state == READY and session.name == "Local sandbox",
                    timeout=30_000)  # fmt: skip
    assert session.url == first.spec.url and session.sandbox_number == 1
    assert [n for n, _ in session.running_sandboxes()] == [1, 2]

    # another click: the third (the second runs already)
    session.start_another_sandbox()
    qtbot.waitUntil(lambda: session.state == READY and session.name == "Local sandbox 3",
                    timeout=30_000)  # fmt: skip
    assert [n for n, _ in session.running_sandboxes()] == [1, 2, 3]
