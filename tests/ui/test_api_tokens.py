"""The API tokens window (`ApiTokensView` over `ApiTokensModel`, issue 36) against sandboxes of
its own over HTTP, state read back from the server: the list (every column, secrets masked),
filter and sort; creating each type through the form and its confirmation, the secret shown
once, masked, Show, Copy (the clipboard), and nowhere else (the table, the log folder, the
journal, the data and config folders); "Use for this connection's metrics uploads" storing it
as the profile's client token in the keyring; the types a played Unleash 6.10 offers (no
backend); deleting one and many after the typed confirmation naming where each was last seen,
with the progress counted and Stop ending it between two requests; the form's errors; and a new
connection dropping the selection and the outcome."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QLabel

from app import logs
from app.actions.journal import JOURNAL_NAME, State, journal_folder, read_journal
from app.api.models import ApiTokenList
from app.connection import ConnectionSpec
from app.profiles import Profile, ProfileStore
from app.viewmodels.api_tokens import token_row
from app.viewmodels.session import FAILED, READY, Session
from app.viewmodels.tools import LoadPhase
from sandbox.process import SandboxProcess
from tests.conftest import MemoryKeyring
from tests.qt_fixtures import select_where
from ui.api_tokens import ApiTokensView, CreateTokenDialog
from ui.states import StatePanel
from ui.token_secret import SecretDialog

TOKENS = "/api/admin/api-tokens"


def served(sb: SandboxProcess) -> list[Any]:
    """The server's tokens now, read over HTTP with its admin token."""
    with httpx.Client(base_url=sb.url, headers={"Authorization": sb.admin_token}) as http:
        answer = http.get(TOKENS)
        answer.raise_for_status()
        return ApiTokenList.model_validate(answer.json()).tokens


def make_tokens(sb: SandboxProcess, names: list[str], kind: str = "client") -> list[str]:
    """Tokens named `names` made over HTTP; their secrets."""
    secrets = []
    with httpx.Client(base_url=sb.url, headers={"Authorization": sb.admin_token}) as http:
        for name in names:
            answer = http.post(TOKENS, json={"tokenName": name, "type": kind,
                                             "environment": "development"})  # fmt: skip
            assert answer.status_code == 201, answer.text
            secrets.append(answer.json()["secret"])
    return secrets


def confirmation(view: Any) -> Any:
    """The confirmation the window has open (a message box or a typed confirmation)."""
    return view.confirmation


def open_view(qtbot: Any, session: Session) -> ApiTokensView:
    view = ApiTokensView(session)
    qtbot.addWidget(view)
    view.resize(1100, 600)
    view.show()
    qtbot.waitUntil(lambda: not view.model.busy and (view.model.loaded or bool(view.model.error)),
                    timeout=20_000)  # fmt: skip
    return view


def wait_idle(qtbot: Any, view: ApiTokensView) -> None:
    qtbot.waitUntil(lambda: not view.model.acting and not view.model.busy, timeout=30_000)


def create(qtbot: Any, view: ApiTokensView, name: str, kind: str,
           projects: tuple[str, ...] = ()) -> SecretDialog:  # fmt: skip
    """Create token…, the form filled, Create…, the confirmation's Create token: the secret's
    dialog."""
    qtbot.mouseClick(view.create_button, Qt.MouseButton.LeftButton)
    form = view.create_dialog
    assert isinstance(form, CreateTokenDialog) and form.isVisible()
    qtbot.keyClicks(form.name_edit, name)
    form.type_combo.setCurrentText(kind)
    assert form.type_combo.currentText() == kind
    for i in range(form.projects_list.count()):
        item = form.projects_list.item(i)
        if item.text() in projects:
            item.setCheckState(Qt.CheckState.Checked)
    form.create_button.click()
    qtbot.waitUntil(lambda: view.confirmation is not None)
    box = confirmation(view)
    assert box is not None and box.text() == f"Create API token “{name}”?"
    box.action_button.click()
    qtbot.waitUntil(lambda: view.secret_dialog is not None, timeout=20_000)
    wait_idle(qtbot, view)
    dialog = view.secret_dialog
    assert dialog is not None
    return dialog


@pytest.fixture
def log_folder(tmp_path: Path) -> Iterator[Path]:
    """The program's log, at its most verbose, written to a folder of the test's own."""
    folder = tmp_path / "logs"
    logs.setup_logging(verbose=True, directory=folder)
    yield folder
    logs.reset_logging()


def files_holding(text: str, *folders: Path) -> list[Path]:
    found = []
    for folder in folders:
        for path in folder.rglob("*") if folder.exists() else ():
            if path.is_file() and text in path.read_text(encoding="utf-8", errors="replace"):
                found.append(path)
    return found


# ---------------------------------------------------------------------------- the list


def test_the_list_masked_filtered_and_sorted(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess
) -> None:
    secrets = make_tokens(sandbox, ["zeta-service", "alpha-service", "checkout"])
    session = connect(sandbox)
    view = open_view(qtbot, session)
    model = view.model.table
    assert view.states.state == StatePanel.CONTENT
    assert [c.title for c in model.columns] == [
        "Name",
        "Type",
        "Projects",
        "Environment",
        "Secret",
        "Created",
        "Expires",
        "Last seen",
    ]
    listed = served(sandbox)
    assert len(model.all_rows) == len(listed) >= 3
    assert view.table.count_label.text() == f"{len(listed)} API tokens"
    checkout = model.rows[model.row_of(lambda r: r.name == "checkout")]
    assert (checkout.type, checkout.projects, checkout.environment) == ("client", "all projects",
                                                                       "development")  # fmt: skip
    assert checkout.secret == "…" + secrets[2][-4:]
    # no cell holds a secret: only the last four characters
    texts = [model.text(r, c) for r in range(len(model.rows)) for c in range(8)]
    assert not any(s in t or s.split(".")[-1] in t for s in secrets for t in texts)
    assert model.text(model.row_of(lambda r: r.name == "checkout"), 6) == "—"  # never expires
    tip = model.data(model.index(model.row_of(lambda r: r.name == "checkout"), 7),
                     Qt.ItemDataRole.ToolTipRole)  # fmt: skip
    assert tip.startswith("The server has not said it saw this token")

    qtbot.keyClicks(view.table.filter_edit, "service")
    qtbot.waitUntil(lambda: len(model.rows) == 2)
    assert view.table.count_label.text() == f"2 of {len(listed)} API tokens"
    header = view.table.view.horizontalHeader()
    x = header.sectionViewportPosition(0) + header.sectionSize(0) // 2
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton,
                     pos=QPoint(x, header.height() // 2))  # fmt: skip
    first = [r.name for r in model.rows]
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton,
                     pos=QPoint(x, header.height() // 2))  # fmt: skip
    assert sorted([first, [r.name for r in model.rows]]) == [
        ["alpha-service", "zeta-service"], ["zeta-service", "alpha-service"]]  # fmt: skip
    view.close_content()


def test_10000_tokens_listed_and_filtered(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess
) -> None:
    """10,000 tokens on the server: all listed (their rows, filter texts and sort keys made on a
    worker thread), and a keystroke in the filter finds one. The times are printed (run with -s);
    `bench/` is where they are held to their bounds, on a machine of their own."""
    import time

    from sandbox import db

    conn = db.connect(sandbox.db)
    try:
        with conn:
            conn.executemany(
                "INSERT INTO tokens(secret_hash, kind, environment, created_at, served, name,"
                " api_type, projects, handle) VALUES(?, 'client', 'development', ?, 1, ?,"
                " 'client', '[\"*\"]', ?)",
                [(f"{i:064x}", 1_700_000_000_000 + i, f"svc-{i:05}",
                  f"*:development.…{i:08x}") for i in range(10_000)],
            )  # fmt: skip
    finally:
        conn.close()
    session = connect(sandbox)
    started = time.perf_counter()
    view = open_view(qtbot, session)
    loaded = time.perf_counter() - started
    assert view.model.table.total_count == len(served(sandbox)) >= 10_000
    assert view.table.count_label.text() == f"{view.model.table.total_count:,} API tokens"
    started = time.perf_counter()
    qtbot.keyClicks(view.table.filter_edit, "svc-09999")
    qtbot.waitUntil(lambda: view.model.table.shown_count == 1)
    filtered = time.perf_counter() - started
    print(f"10,000 API tokens: listed in {loaded:.2f} s, filtered in {filtered * 1000:.0f} ms")
    view.close_content()


# ---------------------------------------------------------------------------- creating


@pytest.mark.parametrize("kind", ["client", "frontend", "backend"])
def test_create_each_type_and_see_its_secret_once(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, data_folder: Path,
    log_folder: Path, kind: str, tmp_path: Path,
) -> None:  # fmt: skip
    session = connect(sandbox)
    view = open_view(qtbot, session)
    assert view.model.type_choices == ["client", "frontend", "backend"]
    dialog = create(qtbot, view, f"new-{kind}", kind, projects=("default",))
    secret = dialog.secret
    # the server has it, as the form said
    (made,) = [t for t in served(sandbox) if t.name == f"new-{kind}"]
    assert (made.type, made.scope, made.environment) == (kind, ["default"], "development")
    # shown masked: the last four characters
    assert dialog.secret_field.text() == "••••••••" + secret[-4:]
    assert secret not in dialog.secret_field.text()
    once = dialog.findChild(QLabel, "apiTokensSecretOnce")
    assert once is not None and "you will not see it again" in once.text()
    dialog.show_button.click()
    assert dialog.secret_field.text() == secret
    dialog.show_button.click()
    assert dialog.secret_field.text() == "••••••••" + secret[-4:]
    # Copy: on the clipboard, and said so
    QGuiApplication.clipboard().clear()
    dialog.copy_button.click()
    assert QGuiApplication.clipboard().text() == secret
    assert dialog.status.text() == "Copied to the clipboard."
    # the outcome names it by its last four characters
    assert view.model.outcome == (f"Created the {kind} token “new-{kind}” for default / "
                                  f"development (…{secret[-4:]}).")  # fmt: skip
    # the table shows the new token, never its secret
    qtbot.waitUntil(lambda: view.model.loaded and view.model.table.row_of(
        lambda r: r.name == f"new-{kind}") >= 0)  # fmt: skip
    table = view.model.table
    texts = [table.text(r, c) for r in range(len(table.rows)) for c in range(8)]
    assert not any(secret in t for t in texts)
    # the journal: done, the last four characters
    (entry,) = read_journal(journal_folder("test sandbox") / JOURNAL_NAME)
    assert (entry.action, entry.state) == ("api_tokens.create", State.DONE)
    assert entry.after == {"secret": "…" + secret[-4:]}
    # no log line can hold it: the log hides it from its creation on
    assert secret not in logs.redact(f"sent {secret}")
    # closing the dialog forgets it: the field, and the one holder
    new = dialog.new
    dialog.close_button.click()
    assert view.secret_dialog is None and new is not None and new.secret == ""
    assert dialog.secret_field.text() == ""
    # no secret in the log, the journal, the data or config folders
    assert logs.current_log_file() is not None and (log_folder / "flagdesk.log").exists()
    assert files_holding(secret, log_folder, data_folder, tmp_path / "config0") == []
    view.close_content()


def test_use_for_this_connections_metrics_uploads_stores_the_client_token(
    qtbot: Any, qloop: Any, sandbox: SandboxProcess, arun: Any, tmp_path: Path,
    data_folder: Path, memory_keyring: MemoryKeyring,
) -> None:  # fmt: skip
    store = ProfileStore(tmp_path / "config")
    store.save(Profile(name="Staging", url=sandbox.url), token=sandbox.admin_token)
    session = Session(store, health_interval=0)
    session.open_profile("Staging")
    qtbot.waitUntil(lambda: session.state in (READY, FAILED), timeout=30_000)
    assert session.state == READY, session.message
    try:
        view = open_view(qtbot, session)
        dialog = create(qtbot, view, "uploads", "backend")
        secret = dialog.secret
        assert dialog.use_button.text() == "Use for this connection's metrics uploads"
        assert dialog.use_button.isEnabled()
        dialog.use_button.click()
        qtbot.waitUntil(lambda: dialog.status.text().startswith("Saved"), timeout=20_000)
        assert dialog.status.text() == (
            "Saved as the client token (metrics uploads) of the "
            "profile “Staging”, in the OS keyring; reconnecting."
        )
        assert memory_keyring.passwords[("flagdesk", "Staging/client")] == secret
        assert store.get("Staging").has_client_token
        assert store.tokens(store.get("Staging")) == (sandbox.admin_token, secret)
        qtbot.waitUntil(lambda: session.state == READY, timeout=30_000)
        assert session.connection is not None and session.connection.spec.client_token == secret
        dialog.close_button.click()
        view.close_content()
    finally:
        arun(session.aclose())


def test_use_goes_to_the_connection_the_token_was_made_on_only(
    qtbot: Any, qloop: Any, sandbox: SandboxProcess, demo_sandbox: SandboxProcess, arun: Any,
    tmp_path: Path, data_folder: Path, memory_keyring: MemoryKeyring,
) -> None:  # fmt: skip
    """A secret still shown after the window moved to another connection is not put into that
    one's profile: it is another server's token."""
    store = ProfileStore(tmp_path / "config")
    store.save(Profile(name="Staging", url=sandbox.url), token=sandbox.admin_token)
    store.save(Profile(name="Other", url=demo_sandbox.url), token=demo_sandbox.admin_token)
    session = Session(store, health_interval=0)
    session.open_profile("Staging")
    qtbot.waitUntil(lambda: session.state in (READY, FAILED), timeout=30_000)
    try:
        view = open_view(qtbot, session)
        dialog = create(qtbot, view, "for staging", "client")
        session.open_profile("Other")
        qtbot.waitUntil(lambda: session.state == READY, timeout=30_000)
        dialog.use_button.click()
        qtbot.waitUntil(lambda: "connected elsewhere" in dialog.status.text(), timeout=10_000)
        assert dialog.status.text() == (
            f"The token was made on {sandbox.url} (connection “Staging”), and the window is "
            "connected elsewhere now: nothing was saved."
        )
        assert not any(user.endswith("/client") for _, user in memory_keyring.passwords)
        assert not store.get("Other").has_client_token
        dialog.close_button.click()
        view.close_content()
    finally:
        arun(session.aclose())


def test_use_is_refused_with_its_reason_where_it_cannot(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, data_folder: Path
) -> None:
    """A connection that is no saved profile has nowhere to keep it; a frontend token cannot
    upload metrics."""
    view = open_view(qtbot, connect(sandbox))
    dialog = create(qtbot, view, "web", "frontend")
    assert not dialog.use_button.isEnabled()
    assert dialog.use_button.toolTip().startswith("A frontend token cannot upload metrics")
    dialog.close_button.click()
    dialog = create(qtbot, view, "svc", "client")
    assert not dialog.use_button.isEnabled()
    assert "no saved profile" in dialog.use_button.toolTip()
    assert dialog.status.text() == dialog.use_button.toolTip()
    dialog.close_button.click()
    view.close_content()


def test_the_form_says_what_is_wrong_and_stays_open(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, data_folder: Path
) -> None:
    before = len(served(sandbox))
    view = open_view(qtbot, connect(sandbox))
    qtbot.mouseClick(view.create_button, Qt.MouseButton.LeftButton)
    form = view.create_dialog
    assert form is not None
    form.create_button.click()
    assert form.isVisible() and form.error_label.text() == "The token needs a name."
    form.name_edit.setText("line\nbreak")  # a paste can bring one
    form.create_button.click()
    assert form.isVisible() and form.error_label.text().startswith("The token cannot be made so")
    form.reject()
    assert view.confirmation is None and len(served(sandbox)) == before
    view.close_content()


def test_an_unleash_6_offers_no_backend_tokens(
    qtbot: Any, connect: Callable[..., Session], tmp_path: Path, data_folder: Path
) -> None:
    with SandboxProcess(tmp_path / "six.sqlite3", "--demo", "--as-version", "6.10") as sb:
        view = open_view(qtbot, connect(sb))
        assert view.model.type_choices == ["client", "frontend"]
        with pytest.raises(ValueError, match="has no backend tokens"):
            view.model.plan_create("x", "backend", [], "development", None)
        view.close_content()


# ---------------------------------------------------------------------------- deleting


def test_delete_one_and_then_many_after_the_confirmation(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, data_folder: Path
) -> None:
    make_tokens(sandbox, ["one", "two", "three"])
    session = connect(sandbox)
    view = open_view(qtbot, session)
    assert not view.delete_button.isEnabled()
    assert view.delete_button.toolTip().startswith("Select the tokens to delete")

    select_where(view.table.view, lambda r: r.name == "one")
    assert view.delete_button.isEnabled()
    view.table.view.setFocus()
    qtbot.keyClick(view.table.view, Qt.Key.Key_Delete)
    box = confirmation(view)
    assert box is not None and box.question.text() == "Delete API token “one”?"
    assert "never seen" in box.details.text()  # where it was last seen
    assert box.typed.isHidden()  # one token: nothing to type
    assert {t.name for t in served(sandbox)} >= {"one", "two", "three"}  # nothing sent yet
    box.action_button.click()
    wait_idle(qtbot, view)
    assert view.model.outcome.startswith("Deleted 1 API token: “one” (never seen). Snapshot: ")
    assert "one" not in {t.name for t in served(sandbox)}

    qtbot.waitUntil(lambda: view.model.loaded and not view.model.busy)
    select_where(view.table.view, lambda r: r.name in ("two", "three"))
    view.delete_button.click()
    box = confirmation(view)
    assert box is not None and box.question.text() == "Delete 2 API tokens?"
    assert not box.action_button.isEnabled()
    qtbot.keyClicks(box.typed, "2")
    assert box.action_button.isEnabled()
    box.action_button.click()
    wait_idle(qtbot, view)
    assert view.model.outcome.startswith("Deleted 2 API tokens: ")
    assert not {"two", "three"} & {t.name for t in served(sandbox)}
    entries = read_journal(journal_folder("test sandbox") / JOURNAL_NAME)
    assert [(e.action, e.state) for e in entries] == [("api_tokens.delete", State.DONE)] * 3
    snapshot = json.loads(Path(view.model.outcome.split("Snapshot: ")[1]).read_text())
    assert {t["name"] for t in snapshot["tokens"]} == {"two", "three"}
    view.close_content()


def test_the_connections_own_token_is_not_deleted(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess
) -> None:
    """Deleting the token the connection uses would lock flagdesk out: Delete… says so, alone
    or among others, and sends nothing."""
    make_tokens(sandbox, ["other"])
    session = connect(sandbox)
    view = open_view(qtbot, session)
    own = view.model.own_secret
    assert own and own.endswith(sandbox.admin_token[-8:])
    select_where(view.table.view, lambda r: r.token.secret == own or r.name == "other")
    assert len(view.model.selected) == 2
    assert not view.delete_button.isEnabled()
    assert "is the token this connection uses" in view.delete_button.toolTip()
    assert view.model.plan_delete() is None
    select_where(view.table.view, lambda r: r.name == "other")
    assert view.delete_button.isEnabled()
    assert own in {t.secret for t in served(sandbox)}
    view.close_content()


def test_many_deletions_count_their_progress_and_stop_between_two_requests(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, data_folder: Path
) -> None:
    names = [f"bulk-{i:02}" for i in range(30)]
    make_tokens(sandbox, names)
    view = open_view(qtbot, connect(sandbox))
    select_where(view.table.view, lambda r: r.name.startswith("bulk-"))
    assert len(view.model.selected) == 30
    view.delete_button.click()
    box = confirmation(view)
    assert box is not None
    assert "and 25 more" in box.details.text()  # five named, the rest counted
    qtbot.keyClicks(box.typed, "30")
    seen: list[tuple[int, int]] = []
    shown: list[str] = []

    def on_progress(number: int, total: int) -> None:
        seen.append((number, total))
        shown.append(view.outcome_label.text())
        if number == 2:
            assert view.stop_button.isVisible()
            view.stop_button.click()  # as a person would, while it runs

    view.model.progress_changed.connect(on_progress)
    box.action_button.click()
    wait_idle(qtbot, view)
    assert seen == [(0, 30), (1, 30), (2, 30)]
    assert shown[-1] == "Deleting API token 3 of 30…"
    assert view.model.outcome.startswith(
        "Stopped: 3 of 30 API tokens deleted, the other 27 not sent. Snapshot: "
    )
    left = {t.name for t in served(sandbox)} & set(names)
    assert len(left) == 27
    entries = read_journal(journal_folder("test sandbox") / JOURNAL_NAME)
    assert len(entries) == 3 and all(e.state == State.DONE for e in entries)
    assert not view.stop_button.isVisible()
    view.close_content()


def test_a_new_connection_drops_the_selection_and_the_outcome(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess,
    demo_sandbox: SandboxProcess, data_folder: Path,
) -> None:  # fmt: skip
    make_tokens(sandbox, ["gone", "kept"])
    session = connect(sandbox)
    view = open_view(qtbot, session)
    select_where(view.table.view, lambda r: r.name == "gone")
    view.delete_button.click()
    assert view.confirmation is not None
    confirmation(view).action_button.click()
    wait_idle(qtbot, view)
    qtbot.waitUntil(lambda: view.model.loaded and not view.model.busy)
    select_where(view.table.view, lambda r: r.name == "kept")
    assert view.model.outcome and view.model.selected

    session.open_spec(ConnectionSpec(url=demo_sandbox.url, token=demo_sandbox.admin_token,
                                     label="other"))  # fmt: skip
    qtbot.waitUntil(lambda: session.state == READY, timeout=30_000)
    qtbot.waitUntil(lambda: view.model.phase is LoadPhase.READY and not view.model.busy,
                    timeout=20_000)  # fmt: skip
    assert view.model.selected == [] and view.model.outcome == ""
    assert view.outcome_label.text() == ""
    assert "kept" not in {r.name for r in view.model.table.all_rows}
    assert not view.delete_button.isEnabled()
    view.close_content()


def test_token_row_holds_only_the_last_four_characters() -> None:
    from app.api.models import ApiToken

    row = token_row(
        ApiToken(
            secret="default:development.abcdef0123456789",
            tokenName="x",
            type="client",
            environment="development",
            projects=["default"],
        )
    )
    assert row.secret == "…6789" and row.projects == "default"
