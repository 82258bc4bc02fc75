"""The service accounts window (`ServiceAccountsView` over `ServiceAccountsModel`, issue 36)
against sandboxes of its own over HTTP, state read back from the server: the accounts listed
(username, name, root role, created, tokens, last token use) and filtered; an account created
with a custom root role of the server's, then edited to Admin, through the form and its
confirmation; a token of it created, its secret shown once (masked, Copy, no "Use for this
connection") and working as the account, nowhere on disk; several tokens deleted at once after
their number is typed; the account deleted after a confirmation naming the tokens that go with
it; the journal of each; the forms' errors; a new connection dropping the account chosen; where
the roles list is refused, the root roles the users' list names; and a played open-source
release, where the page says service accounts need Unleash Enterprise and nothing is read."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from app.actions.journal import JOURNAL_NAME, State, journal_folder, read_journal
from app.api.capabilities import NEEDS_ENTERPRISE_SERVICE_ACCOUNTS
from app.api.models import ServiceAccount, ServiceAccounts
from app.viewmodels.session import Session
from app.viewmodels.tools import LoadPhase
from sandbox.process import SandboxProcess
from tests.qt_fixtures import select_where
from ui.confirmation import TypedConfirmation
from ui.service_accounts import AccountDialog, CreateTokenDialog, ServiceAccountsView
from ui.states import StatePanel
from ui.token_secret import SecretDialog
from ui.tool_page import ToolPage

ACCOUNTS = "/api/admin/service-account"


def served(sb: SandboxProcess) -> list[ServiceAccount]:
    """The server's service accounts now, read over HTTP with its admin token."""
    with sb.admin() as http:
        answer = http.get(ACCOUNTS)
        answer.raise_for_status()
        return ServiceAccounts.model_validate(answer.json()).serviceAccounts


def account(sb: SandboxProcess, username: str) -> ServiceAccount | None:
    return next((a for a in served(sb) if a.username == username), None)


def make_token(sb: SandboxProcess, account_id: int, description: str) -> None:
    later = (datetime.now(UTC) + timedelta(days=30)).isoformat()
    with sb.admin() as http:
        answer = http.post(f"{ACCOUNTS}/{account_id}/token",
                           json={"description": description, "expiresAt": later})  # fmt: skip
        assert answer.status_code == 201, answer.text


def custom_root_role(sb: SandboxProcess, name: str) -> int:
    with sb.admin() as http:
        answer = http.post("/api/admin/roles", json={"name": name, "type": "root-custom",
                                                      "permissions": []})  # fmt: skip
        assert answer.status_code == 200, answer.text
        return int(answer.json()["roles"]["id"])


def open_view(qtbot: Any, session: Session) -> ServiceAccountsView:
    view = ServiceAccountsView(session)
    qtbot.addWidget(view)
    view.resize(1100, 700)
    view.show()
    qtbot.waitUntil(
        lambda: not view.model.busy and (view.model.loaded or bool(view.model.error)
                                         or view.model.phase is LoadPhase.UNAVAILABLE),
        timeout=20_000,
    )  # fmt: skip
    return view


def wait_idle(qtbot: Any, view: ServiceAccountsView) -> None:
    qtbot.waitUntil(lambda: not view.model.acting and not view.model.busy, timeout=30_000)


def choose(qtbot: Any, view: ServiceAccountsView, username: str) -> None:
    select_where(view.table.view, lambda r: r.username == username)
    qtbot.waitUntil(lambda: view.model.current is not None
                    and view.model.current.username == username)  # fmt: skip


def confirm(qtbot: Any, view: ServiceAccountsView, question: str) -> Any:
    qtbot.waitUntil(lambda: view.confirmation is not None)
    box: Any = view.confirmation
    assert box is not None
    text = box.question.text() if isinstance(box, TypedConfirmation) else box.text()
    assert text == question
    return box


def fill_account(qtbot: Any, view: ServiceAccountsView, *, editing: bool, username: str = "",
                 name: str | None = None, role: str = "") -> AccountDialog:  # fmt: skip
    qtbot.mouseClick(view.edit_button if editing else view.create_button,
                     Qt.MouseButton.LeftButton)  # fmt: skip
    form = view.account_dialog
    assert isinstance(form, AccountDialog) and form.isVisible()
    if username:
        qtbot.keyClicks(form.username_edit, username)
    if name is not None:
        form.name_edit.clear()
        qtbot.keyClicks(form.name_edit, name)
    if role:
        form.role_combo.setCurrentText(role)
        assert form.role_combo.currentText() == role
    return form


def create_token(qtbot: Any, view: ServiceAccountsView, description: str) -> SecretDialog:
    qtbot.mouseClick(view.create_token_button, Qt.MouseButton.LeftButton)
    form = view.token_dialog
    assert isinstance(form, CreateTokenDialog) and form.isVisible()
    qtbot.keyClicks(form.description_edit, description)
    form.create_button.click()
    current = view.model.current
    assert current is not None
    box = confirm(qtbot, view, f"Create the token “{description}” of the service account "
                  f"“{current.username}” (id {current.id})?")  # fmt: skip
    box.action_button.click()
    qtbot.waitUntil(lambda: view.secret_dialog is not None, timeout=20_000)
    wait_idle(qtbot, view)
    assert view.secret_dialog is not None
    return view.secret_dialog


def test_accounts_and_their_tokens_listed_created_edited_and_deleted(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, data_folder: Path,
    tmp_path: Path,
) -> None:  # fmt: skip
    deployers = custom_root_role(sandbox, "Deployers")
    view = open_view(qtbot, connect(sandbox))
    m = view.model
    assert view.states.state == StatePanel.CONTENT
    table = m.accounts
    assert [table.text(0, c) for c in range(5)][:3] == ["ci-deploy-bot", "CI deploy bot",
                                                        "Viewer"]  # fmt: skip
    assert table.text(0, 4) == "0" and table.text(0, 5) == "—"  # no token, so never used
    assert view.table.count_label.text() == "1 service account"
    assert view.tokens_title.text() == "Tokens: select a service account above"
    assert not view.create_token_button.isEnabled()
    assert view.create_token_button.toolTip() == "Select a service account first."

    # ---- created with a custom root role of the server's
    form = fill_account(qtbot, view, editing=False, username="deployer", name="Deployer",
                        role="Deployers")  # fmt: skip
    assert [form.role_combo.itemText(i) for i in range(form.role_combo.count())][:3] == [
        "Admin", "Editor", "Viewer"]  # fmt: skip
    form.save_button.click()
    box = confirm(qtbot, view, "Create the service account “deployer”?")
    assert "root role Deployers" in box.informativeText()
    assert account(sandbox, "deployer") is None  # nothing sent while asking
    box.action_button.click()
    qtbot.waitUntil(lambda: bool(m.outcome or m.outcome_error), timeout=20_000)
    assert m.outcome.startswith("Created"), m.outcome_error
    made = account(sandbox, "deployer")
    assert made is not None and (made.name, made.rootRole) == ("Deployer", deployers)
    assert m.outcome == f"Created the service account “deployer” (id {made.id}), Deployers."
    wait_idle(qtbot, view)
    # the new account is the one chosen, its (no) tokens below
    qtbot.waitUntil(lambda: m.current is not None and m.current.id == made.id)
    assert view.tokens_title.text() == "Tokens of “deployer”"
    assert [r.username for r in view.table.selected_items()] == ["deployer"]

    # ---- edited: its name and root role
    form = fill_account(qtbot, view, editing=True, name="Deploy bot", role="Admin")
    assert form.username_edit.isReadOnly() and form.username_edit.text() == "deployer"
    form.save_button.click()
    box = confirm(qtbot, view, f"Save the changes to the service account “deployer” (id "
                  f"{made.id})?")  # fmt: skip
    assert "root role Deployers (role " in box.informativeText()
    box.action_button.click()
    qtbot.waitUntil(lambda: m.outcome.startswith("Changed"), timeout=20_000)
    edited = account(sandbox, "deployer")
    assert edited is not None and (edited.name, edited.rootRole) == ("Deploy bot", 1)
    wait_idle(qtbot, view)
    row = table.row_of(lambda r: r.username == "deployer")
    assert [table.text(row, c) for c in (1, 2)] == ["Deploy bot", "Admin"]

    # ---- a token: its secret once, masked, copied, working as the account; no "Use for …"
    dialog = create_token(qtbot, view, "GitHub deploy")
    secret = dialog.secret
    assert dialog.secret_field.text() == "••••••••" + secret[-4:]
    assert dialog.use_button.isHidden()
    assert dialog.status.text().startswith("Give it to the program that acts as this account")
    QGuiApplication.clipboard().clear()
    dialog.copy_button.click()
    assert QGuiApplication.clipboard().text() == secret
    with sandbox.admin() as http:  # the secret shown works, as the account (an Admin now)
        answer = http.get(ACCOUNTS, headers={"Authorization": secret})
        assert answer.status_code == 200, answer.text
    assert m.outcome == (f"Created the token “GitHub deploy” of the service account “deployer” "
                         f"(id {made.id}), its secret ending …{secret[-4:]}.")  # fmt: skip
    dialog.close_button.click()
    assert view.secret_dialog is None and dialog.secret_field.text() == ""
    qtbot.waitUntil(lambda: len(m.tokens.all_rows) == 1, timeout=20_000)
    assert m.tokens.text(0, 0) == "GitHub deploy"
    texts = [t.text(r, c) for t in (table, m.tokens) for r in range(len(t.rows))
             for c in range(len(t.columns))]  # fmt: skip
    assert not any(secret in text for text in texts)
    row = table.row_of(lambda r: r.username == "deployer")
    assert table.text(row, 4) == "1" and table.text(row, 5) == "—"  # not used when listed

    # ---- two of three tokens deleted at once, their number typed
    for description in ("nightly", "staging"):
        make_token(sandbox, made.id, description)
    view.refresh()
    qtbot.waitUntil(lambda: len(m.tokens.all_rows) == 3 and not m.busy, timeout=20_000)
    assert m.current is not None and m.current.id == made.id  # still chosen after a reload
    row = table.row_of(lambda r: r.username == "deployer")
    assert table.text(row, 4) == "3" and table.text(row, 5) != "—"  # its secret used above
    used = m.tokens.row_of(lambda r: r.description == "GitHub deploy")
    assert m.tokens.text(used, 3) == table.text(row, 5)
    select_where(view.tokens_table.view, lambda r: r.description in ("nightly", "staging"))
    assert view.delete_tokens_button.isEnabled()
    view.delete_tokens_button.click()
    box = confirm(qtbot, view, f"Delete 2 tokens of the service account “deployer” (id "
                  f"{made.id})?")  # fmt: skip
    assert "“nightly”" in box.details.text() and "“staging”" in box.details.text()
    assert not box.action_button.isEnabled()
    box.typed.setText("2")
    box.action_button.click()
    qtbot.waitUntil(lambda: m.outcome.startswith("Deleted"), timeout=20_000)
    left = account(sandbox, "deployer")
    assert left is not None and [t.description for t in left.tokens] == ["GitHub deploy"]
    wait_idle(qtbot, view)
    qtbot.waitUntil(lambda: len(m.tokens.all_rows) == 1, timeout=20_000)

    # ---- the account deleted, the confirmation naming the token that goes with it
    view.delete_button.click()
    box = confirm(qtbot, view, f"Delete the service account “deployer” (id {made.id})?")
    token_id = left.tokens[0].id
    assert (f"Its token “GitHub deploy” (id {token_id}) goes with it. Whatever uses it is "
            "refused from its next request, and a deleted token's secret cannot come back."
            ) in box.informativeText()  # fmt: skip
    assert box.action_button.text() == "&Delete account and 1 token"
    box.action_button.click()
    qtbot.waitUntil(lambda: m.outcome.startswith("Deleted the service account"), timeout=20_000)
    assert m.outcome.startswith(f"Deleted the service account “deployer” (id {made.id}) and its "
                                "1 token. Snapshot: ")  # fmt: skip
    assert account(sandbox, "deployer") is None
    with sandbox.admin() as http:  # the token went with it
        assert http.get(ACCOUNTS, headers={"Authorization": secret}).status_code == 401
    wait_idle(qtbot, view)
    qtbot.waitUntil(lambda: m.current is None and len(table.all_rows) == 1, timeout=20_000)
    assert view.tokens_title.text() == "Tokens: select a service account above"

    entries = read_journal(journal_folder("test sandbox") / JOURNAL_NAME)
    assert [(e.action, e.state) for e in entries] == [
        ("service_accounts.create", State.DONE), ("service_accounts.edit", State.DONE),
        ("service_accounts.create_token", State.DONE),
        ("service_accounts.delete_token", State.DONE),
        ("service_accounts.delete_token", State.DONE), ("service_accounts.delete", State.DONE),
    ]  # fmt: skip
    assert [
        p
        for p in (data_folder, tmp_path / "config0")
        if any(secret in f.read_text(errors="replace") for f in p.rglob("*") if f.is_file())
    ] == []
    view.close_content()


def test_the_forms_say_what_is_wrong_and_send_nothing(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, data_folder: Path
) -> None:
    view = open_view(qtbot, connect(sandbox))
    m = view.model
    form = fill_account(qtbot, view, editing=False, name="Bot")
    form.save_button.click()
    assert form.isVisible() and form.error_label.text() == "A service account needs a username."
    qtbot.keyClicks(form.username_edit, "ci-deploy-bot")
    form.save_button.click()
    assert form.error_label.text().endswith("has the username already.")
    form.username_edit.setText("other")
    form.name_edit.clear()
    form.save_button.click()
    assert form.error_label.text() == "A service account needs a name."
    form.reject()
    assert view.confirmation is None

    choose(qtbot, view, "ci-deploy-bot")
    form = fill_account(qtbot, view, editing=True)
    form.save_button.click()
    assert form.error_label.text() == "Nothing differs: change the name or the root role first."
    form.reject()

    qtbot.mouseClick(view.create_token_button, Qt.MouseButton.LeftButton)
    token_form = view.token_dialog
    assert token_form is not None
    token_form.create_button.click()
    assert token_form.error_label.text() == "A token needs a description."
    qtbot.keyClicks(token_form.description_edit, "old")
    token_form.expires_edit.setDate(token_form.expires_edit.date().addDays(-400))
    token_form.create_button.click()
    assert "is not in the future" in token_form.error_label.text()
    token_form.reject()
    assert view.confirmation is None
    assert [a.username for a in served(sandbox)] == ["ci-deploy-bot"]
    assert not served(sandbox)[0].tokens
    assert not (journal_folder("test sandbox") / JOURNAL_NAME).exists()
    # a new connection forgets the account chosen
    view.session.open_spec(view.session.connection.spec)  # type: ignore[union-attr]
    assert m.current is None and view.tokens_title.text().startswith("Tokens: select")
    qtbot.waitUntil(lambda: m.loaded and not m.busy, timeout=30_000)
    view.close_content()


def test_the_filter_and_the_root_roles_when_the_roles_list_is_refused(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """Where `GET /api/admin/roles` is refused (a token that may list accounts but not roles),
    the forms offer the root roles the users' list names; the list filters as typed."""
    from app.api import errors
    from app.api.client import AdminClient

    custom_root_role(sandbox, "Deployers")

    async def refused(self: AdminClient) -> Any:
        raise errors.ClientError("403 roles refused (a test's)")

    monkeypatch.setattr(AdminClient, "roles", refused)
    view = open_view(qtbot, connect(sandbox))
    m = view.model
    with sandbox.admin() as http:
        listed = {r["id"]: r["name"] for r in http.get("/api/admin/user-admin").json()["rootRoles"]}
    assert dict(m.role_choices) == listed
    form = fill_account(qtbot, view, editing=False)
    assert [form.role_combo.itemText(i) for i in range(form.role_combo.count())] == list(
        listed.values())  # fmt: skip
    assert form.role_combo.currentText() == "Viewer"  # where a new account's form starts
    form.reject()

    view.table.filter_edit.setText("nobody")
    qtbot.waitUntil(lambda: m.accounts.shown_count == 0 and not m.accounts.filter_pending)
    assert view.table.count_label.text() == "0 of 1 service account"
    view.table.filter_edit.setText("deploy")
    qtbot.waitUntil(lambda: m.accounts.shown_count == 1)
    view.close_content()


@pytest.fixture
def open_source(tmp_path: Path) -> Iterator[SandboxProcess]:
    """A demo sandbox playing open-source Unleash 8.2 (8.2.0): no service accounts (404)."""
    sb = SandboxProcess(tmp_path / "oss.sqlite3", "--demo", "--as-version", "8.2")
    sb.start()
    yield sb
    sb.stop()


def test_open_source_unleash_says_service_accounts_need_enterprise(
    qtbot: Any, connect: Callable[..., Session], open_source: SandboxProcess,
    tool_page: Callable[..., ToolPage],
) -> None:  # fmt: skip
    with open_source.admin() as http:
        assert http.get(ACCOUNTS).status_code == 404
    page = tool_page("service_accounts", connect(open_source), (1100, 700))
    view = page.tool_content
    assert isinstance(view, ServiceAccountsView)
    m = view.model
    assert m.phase is LoadPhase.UNAVAILABLE
    assert page.banner.isVisible() and page.reason.text() == NEEDS_ENTERPRISE_SERVICE_ACCOUNTS
    assert view.states.empty_label.text() == NEEDS_ENTERPRISE_SERVICE_ACCOUNTS
    assert NEEDS_ENTERPRISE_SERVICE_ACCOUNTS.startswith("Service accounts need Unleash Enterprise")
    assert not view.create_button.isEnabled()
    assert view.create_button.toolTip() == NEEDS_ENTERPRISE_SERVICE_ACCOUNTS
    view.refresh()
    assert not m.busy and not m.tasks
