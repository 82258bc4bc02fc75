"""The connection dialog refuses a token that cannot be an HTTP header value (a wrapped paste, a
character outside ASCII) with the command line's check and words (`check_token`): it names the
field and the kind of character, never the token, and saves nothing; "Test connection" sends
nothing with it either."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from app.profiles import Profile, ProfileStore
from app.viewmodels.connections import ProfileForm
from app.viewmodels.session import FAILED, Session
from ui.connection_dialog import ConnectionDialog

SECRET = "0123456789abcdef0123456789"


@pytest.fixture
def dialog(
    qtbot: Any, qloop: Any, tmp_path: Path, arun: Callable[..., Any], memory_keyring: Any
) -> Iterator[tuple[ConnectionDialog, Session]]:
    session = Session(ProfileStore(tmp_path / "config"))
    dialog = ConnectionDialog(session)
    qtbot.addWidget(dialog)
    dialog.show()
    yield dialog, session
    arun(session.aclose())


@pytest.mark.parametrize(
    ("token", "client_token", "said"),
    [
        (f"*:*.{SECRET[:9]}é{SECRET[9:]}", "", "The token holds a character outside ASCII"),
        ("*:*.fine-token", f"default:development.{SECRET}\x07", "The client token holds a control"),
    ],
)
def test_a_token_that_cannot_be_a_header_is_refused_by_name_and_kind(
    dialog: tuple[ConnectionDialog, Session], token: str, client_token: str, said: str
) -> None:
    window, session = dialog
    window.add_button.click()
    window.name_edit.setText("Typed")
    window.url_edit.setText("http://127.0.0.1:1")
    window.token_edit.setText(token)
    window.client_token_edit.setText(client_token)
    assert window.save() is None
    shown = window.problems.text()
    assert said in shown, shown
    assert SECRET[:9] not in shown and SECRET[9:] not in shown
    assert session.store.profiles() == []

    form = ProfileForm(name="Typed", url="http://127.0.0.1:1", token=token,
                       client_token=client_token)  # fmt: skip
    with pytest.raises(ValueError, match=said) as refused:
        window.model.spec_of_form(form)
    assert SECRET[9:] not in str(refused.value)


def test_a_stored_token_that_cannot_be_a_header_fails_the_connection_by_name(
    qtbot: Any, qloop: Any, tmp_path: Path, arun: Callable[..., Any]
) -> None:
    """A profile whose stored token an older flagdesk (or a hand edit) left wrapped: opening it
    fails with the profile's name and the kind of character; it stayed "connecting" for good
    (the ValueError of the client was nobody's)."""
    store = ProfileStore(tmp_path / "config")
    store.save(Profile(name="wrapped", url="http://127.0.0.1:1", token_store="file"),
               token="*:*.placeholder")  # fmt: skip
    tokens = json.loads(store.tokens_file.read_text())
    tokens["wrapped/admin"] = f"*:*.{SECRET[:9]}\n{SECRET[9:]}"
    store.tokens_file.write_text(json.dumps(tokens))
    session = Session(store, health_interval=0)
    try:
        session.open_profile("wrapped")
        qtbot.waitUntil(lambda: session.state == FAILED, timeout=10_000)
        assert "profile 'wrapped'" in session.message and "a line break" in session.message
        assert SECRET[9:] not in session.message
    finally:
        arun(session.aclose())
