"""The personal access tokens window (`PersonalTokensView` over `PersonalTokensModel`, issue 36)
against sandboxes of their own over HTTP, state read back from the server: the connected user's
tokens listed (no secret anywhere); one created through the form and its confirmation, its
secret shown once (masked, Show, Copy) and nowhere on disk; "Use for this connection" putting it
into the profile's keyring as the connection's token and reconnecting with it; deleting one
after the confirmation; the form's errors; and an admin API token's connection, where the page
says a personal access token is needed and nothing is sent."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from app.actions.journal import JOURNAL_NAME, State, journal_folder, read_journal
from app.api.models import PersonalAccessTokens
from app.profiles import Profile, ProfileStore
from app.viewmodels.session import FAILED, READY, Session
from app.viewmodels.tools import LoadPhase
from sandbox.process import SandboxProcess
from tests.conftest import MemoryKeyring, personal_token_of
from tests.qt_fixtures import select_where
from ui.personal_tokens import CreatePatDialog, PersonalTokensView
from ui.states import StatePanel
from ui.token_secret import SecretDialog

PATS = "/api/admin/user/tokens"


def descriptions(sb: SandboxProcess, token: str) -> set[str]:
    with httpx.Client(base_url=sb.url, headers={"Authorization": token}) as http:
        answer = http.get(PATS)
        answer.raise_for_status()
        return {t.description for t in PersonalAccessTokens.model_validate(answer.json()).pats}


def confirmation(view: Any) -> Any:
    """The confirmation the window has open (a message box or a typed confirmation)."""
    return view.confirmation


def open_view(qtbot: Any, session: Session) -> PersonalTokensView:
    view = PersonalTokensView(session)
    qtbot.addWidget(view)
    view.resize(1000, 560)
    view.show()
    qtbot.waitUntil(
        lambda: not view.model.busy and (view.model.loaded or bool(view.model.error)
                                         or view.model.phase is LoadPhase.UNAVAILABLE),
        timeout=20_000,
    )  # fmt: skip
    return view


def create(qtbot: Any, view: PersonalTokensView, description: str) -> SecretDialog:
    qtbot.mouseClick(view.create_button, Qt.MouseButton.LeftButton)
    form = view.create_dialog
    assert isinstance(form, CreatePatDialog) and form.isVisible()
    qtbot.keyClicks(form.description_edit, description)
    form.create_button.click()
    qtbot.waitUntil(lambda: view.confirmation is not None)
    box = confirmation(view)
    assert box is not None
    assert box.text() == f"Create the personal access token “{description}”?"
    box.action_button.click()
    qtbot.waitUntil(lambda: view.secret_dialog is not None, timeout=20_000)
    qtbot.waitUntil(lambda: not view.model.acting and not view.model.busy, timeout=20_000)
    assert view.secret_dialog is not None
    return view.secret_dialog


def test_list_create_copy_and_delete(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, data_folder: Path,
    tmp_path: Path,
) -> None:  # fmt: skip
    token = personal_token_of(sandbox, "admin")
    (own,) = descriptions(sandbox, token)
    view = open_view(qtbot, connect(sandbox, token))
    model = view.model.table
    assert view.states.state == StatePanel.CONTENT
    assert [r.description for r in model.all_rows] == [own]
    assert view.table.count_label.text() == "1 personal access token"

    dialog = create(qtbot, view, "laptop")
    secret = dialog.secret
    assert secret.startswith("user:")
    assert dialog.secret_field.text() == "••••••••" + secret[-4:]
    assert dialog.use_button.text() == "Use for this connection"
    QGuiApplication.clipboard().clear()
    dialog.copy_button.click()
    assert QGuiApplication.clipboard().text() == secret
    assert descriptions(sandbox, token) == {own, "laptop"}
    with httpx.Client(base_url=sandbox.url, headers={"Authorization": secret}) as http:
        assert http.get(PATS).status_code == 200  # the secret shown works
    assert view.model.outcome == (f"Created the personal access token “laptop” of Admin "
                                  f"(…{secret[-4:]}).")  # fmt: skip
    dialog.close_button.click()
    assert view.secret_dialog is None and dialog.secret_field.text() == ""
    qtbot.waitUntil(lambda: len(model.all_rows) == 2, timeout=20_000)
    texts = [model.text(r, c) for r in range(len(model.rows)) for c in range(5)]
    assert not any(secret in t for t in texts)

    select_where(view.table.view, lambda r: r.description == "laptop")
    assert view.delete_button.isEnabled()
    view.delete_button.click()
    box = confirmation(view)
    assert box is not None
    assert box.text().startswith("Delete the personal access token “laptop”")
    assert descriptions(sandbox, token) == {own, "laptop"}  # nothing sent while asking
    box.action_button.click()
    # the action's status shows while it is under way (it was said before the action was
    # stored, when the window shows no status)
    assert view.model.acting
    assert view.outcome_label.text() == "Deleting 1 personal access token…"
    qtbot.waitUntil(lambda: view.model.outcome.startswith("Deleted"), timeout=20_000)
    assert view.model.outcome == "Deleted 1 personal access token: “laptop”."
    assert descriptions(sandbox, token) == {own}
    entries = read_journal(journal_folder("test sandbox") / JOURNAL_NAME)
    assert [(e.action, e.state) for e in entries] == [
        ("personal_tokens.create", State.DONE), ("personal_tokens.delete", State.DONE)]  # fmt: skip
    assert [
        p
        for p in (data_folder, tmp_path / "config0")
        if any(secret in f.read_text(errors="replace") for f in p.rglob("*") if f.is_file())
    ] == []
    view.close_content()


def test_use_for_this_connection_keeps_it_as_the_profiles_token_and_reconnects(
    qtbot: Any, qloop: Any, sandbox: SandboxProcess, arun: Any, tmp_path: Path,
    data_folder: Path, memory_keyring: MemoryKeyring,
) -> None:  # fmt: skip
    token = personal_token_of(sandbox, "admin")
    store = ProfileStore(tmp_path / "config")
    store.save(Profile(name="Mine", url=sandbox.url), token=token)
    session = Session(store, health_interval=0)
    session.open_profile("Mine")
    qtbot.waitUntil(lambda: session.state in (READY, FAILED), timeout=30_000)
    assert session.state == READY, session.message
    try:
        view = open_view(qtbot, session)
        dialog = create(qtbot, view, "from flagdesk")
        secret = dialog.secret
        assert dialog.use_button.isEnabled()
        dialog.use_button.click()
        qtbot.waitUntil(lambda: dialog.status.text().startswith("Saved"), timeout=20_000)
        assert dialog.status.text() == (
            "Saved as the token of the profile “Mine”, in the OS keyring; reconnecting."
        )
        assert memory_keyring.passwords[("flagdesk", "Mine/admin")] == secret
        qtbot.waitUntil(lambda: session.state == READY and session.connection is not None
                        and session.connection.spec.token == secret, timeout=30_000)  # fmt: skip
        caps = session.capabilities
        assert caps is not None and caps.token_kind == "personal"
        # the window reloads for the connection as it is now
        qtbot.waitUntil(lambda: view.model.phase is LoadPhase.READY and not view.model.busy,
                        timeout=20_000)  # fmt: skip
        assert {r.description for r in view.model.table.all_rows} == descriptions(sandbox, secret)
        dialog.close_button.click()
        view.close_content()
    finally:
        arun(session.aclose())


def test_the_form_refuses_an_empty_description(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, data_folder: Path
) -> None:
    token = personal_token_of(sandbox, "admin")
    view = open_view(qtbot, connect(sandbox, token))
    qtbot.mouseClick(view.create_button, Qt.MouseButton.LeftButton)
    form = view.create_dialog
    assert form is not None
    form.create_button.click()
    assert form.isVisible()
    assert form.error_label.text() == "A personal access token needs a description."
    form.expires_edit.setDate(form.expires_edit.date().addDays(-400))
    qtbot.keyClicks(form.description_edit, "old")
    form.create_button.click()
    assert form.isVisible() and "is not in the future" in form.error_label.text()
    form.reject()
    assert view.confirmation is None and len(descriptions(sandbox, token)) == 1
    view.close_content()


def test_an_admin_api_token_needs_a_personal_access_token(
    qtbot: Any, connect: Callable[..., Session], demo_sandbox: SandboxProcess
) -> None:
    view = open_view(qtbot, connect(demo_sandbox))
    m = view.model
    assert m.phase is LoadPhase.UNAVAILABLE
    assert view.states.empty_label.text().startswith("This needs a personal access token")
    assert not view.create_button.isEnabled()
    assert view.create_button.toolTip().startswith("This needs a personal access token")
    assert not m.tasks
    view.close_content()
