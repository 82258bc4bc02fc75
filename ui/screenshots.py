"""`make screenshots`: render the main window and every page offscreen against a demo sandbox
into docs/screenshots/, in the light and in a dark palette, plus the unavailable and error states,
a table header's menu and the connections dialog.

Run as `python -m ui.screenshots [OUT_DIR]` with QT_QPA_PLATFORM=offscreen; `--only events`
renders the event log's pictures alone, `--only banners` the banners'.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import datetime
import functools
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import qasync
from PySide6.QtCore import QEvent, QPoint, Qt
from PySide6.QtGui import QKeyEvent, QPainter, QPixmap
from PySide6.QtWidgets import QApplication, QWidget

from app import resources
from app.actions.journal import Actor, Journal
from app.api.wire import BULK_METRICS_BODY_LIMIT
from app.connection import ConnectionSpec
from app.profiles import ProfileStore
from app.registry import DELETE_INACTIVE_USERS
from app.viewmodels.archive import DELETE, EMPTY, REVIVE
from app.viewmodels.avatars import AvatarCache
from app.viewmodels.inactive_users import EMAIL_COLUMN
from app.viewmodels.metrics import AGAIN_HEADINGS, DROPPED
from app.viewmodels.session import Session
from sandbox.process import SandboxProcess
from ui.archive import ArchiveBrowser, ArchiveConfirmation
from ui.connection_dialog import ConnectionDialog
from ui.context_usage import ContextUsageViewer
from ui.groups import GroupEditor
from ui.inactive_users import DeleteConfirmation, InactiveUsersView
from ui.main_window import MainWindow
from ui.palette import dark_desktop_palette, use_readable_palette
from ui.tool_page import ToolContent
from ui.users import UserEditor


async def settle(widget: QWidget) -> None:
    """Let the loop run a moment (no processEvents() here: inside a coroutine it re-enters the
    qasync loop), then paint."""
    for _ in range(6):
        await asyncio.sleep(0.03)
    widget.repaint()


async def until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 30.0
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the window did not reach the state to photograph")
        await asyncio.sleep(0.02)


async def idle(content: ToolContent) -> None:
    """Until the tool's view-model has nothing running."""
    model: Any = getattr(content, "model", None)
    await asyncio.sleep(0.05)
    if model is not None:
        await until(lambda: not model.busy)


def no_pictures() -> AvatarCache:
    """People's pictures answered 404 at once: the screenshots never reach gravatar.com."""
    return AvatarCache(transport=httpx.MockTransport(lambda _request: httpx.Response(404)))


#: (file name, tool key, what to do with the tool's window once shown); the window is left as
#: the step leaves it, so the states of one tool follow each other
Step = tuple[str, str, Callable[[Any], Awaitable[None]]]


async def _nothing(content: Any) -> None:
    await idle(content)


async def _groups_loaded(content: Any) -> None:
    await idle(content)
    await until(lambda: content.model.loaded)


async def _group_filled(content: Any) -> None:
    m = content.model
    m.set_name("Platform team")  # taken: the live check says so
    m.add_mapping("okta-release-managers")
    m.set_root_role("Editor")
    m.add_member(2)
    m.add_member(14)


async def _group_created(content: Any) -> None:
    m = content.model
    m.set_name("Release managers")
    m.create()
    await until(lambda: m.created is not None and not m.busy)


async def _hostile_group(window: MainWindow, db: Path) -> None:
    """A group as a server of someone else's may hold it (written past the API, which refuses
    it: issue 35): a name that retitles and clears a terminal, a bell in the description. The
    editor opens it and marks what Save needs fixed."""
    import sqlite3

    with contextlib.closing(sqlite3.connect(db)) as conn, conn:
        conn.execute(
            "INSERT INTO groups_(name, description, mappings_sso, created_at) VALUES (?, ?, ?, 0)",
            ("\x1b]0;PWNED\x07\x1b[2J", "Ring the bell\x07", "[]"),
        )
    window.show_page("groups")
    content = window.tool_pages["groups"].ensure_content()
    assert content is not None
    m: Any = content.model
    content.refresh()
    await until(lambda: m.loaded and not m.busy)
    group = m.groups.row_at(m.groups.row_of(lambda g: g.name.startswith("\x1b")))
    m.open_group(group.id)
    await until(lambda: m.editing is not None and not m.opening)


async def _user_form(content: Any) -> None:
    content.open_item(39)
    await until(lambda: content.model.current_id == 39)


async def _user_problems(content: Any) -> None:
    content.model.edit("name", "")
    content.model.edit("email", "not-an-email")


async def _user_scim(content: Any) -> None:
    content.model.revert()
    content.open_item(45)
    await until(lambda: content.model.current_id == 45)


async def _inactive_filtered(content: Any) -> None:
    await idle(content)
    content.table.filter_edit.setText("ar")


async def _logins_loaded(content: Any) -> None:
    await idle(content)
    await until(lambda: content.model.loaded)


async def _logins_failed(content: Any) -> None:
    """Failed only, then the address the burst of guessed names came from typed in the filter."""
    await _logins_loaded(content)
    content.failed_check.setChecked(True)
    content.table.filter_edit.setText("192.0.2")


def _open(item: str) -> Callable[[Any], Awaitable[None]]:
    async def step(content: Any) -> None:
        content.open_item(item)
        await idle(content)

    return step


async def _archive_selected(content: Any) -> None:
    content.open_item("web-shop")
    await idle(content)
    content.table.view.selectRow(1)


SAMPLES = resources.samples()
_metrics_folder: list[Path] = []


def _metrics_scratch() -> Path:
    """A folder for the metrics steps' generated batch, removed when the run ends (the
    uploads' ledgers go to the run's private data folder, see `main`)."""
    if not _metrics_folder:
        folder = Path(tempfile.mkdtemp(prefix="flagdesk-screenshots-"))
        atexit.register(shutil.rmtree, folder, True)
        _metrics_folder.append(folder)
    return _metrics_folder[0]


async def _metrics_read(content: Any, paths: list[Path]) -> None:
    content.add_files([str(p) for p in paths])
    await until(lambda: not content.model.loading and not content.model.busy)


async def _metrics_preview(content: Any) -> None:
    import subprocess

    batch = _metrics_scratch() / "usage.ndjson"
    command = [sys.executable, str(SAMPLES / "generate.py"), "--metrics", "4000", "--hours",
               "12", "--seed", "7", "--out", str(batch)]  # fmt: skip
    await asyncio.to_thread(subprocess.run, command, check=True)
    await _metrics_read(content, [batch, SAMPLES / "bulk.json", SAMPLES / "sdk.json"])
    content.tabs.setCurrentIndex(1)


async def _metrics_problems(content: Any) -> None:
    await _metrics_read(content, [SAMPLES / "invalid.ndjson", SAMPLES / "invalid.json"])
    content.tabs.setCurrentIndex(2)
    content.problems.view.selectRow(0)


async def _confirmed_upload(content: Any) -> None:
    """Upload, answering Upload again to each question asked first, as a person does once told
    what it means (the generated batch has a metric the server drops; a batch sent before)."""
    model = content.model
    content.upload_button.click()
    for _ in range(3):
        await until(lambda: model.report is not None or (bool(model.again_question)
                                                         and not model.uploading))  # fmt: skip
        if model.report is not None:
            break
        content.again_button.click()
        await asyncio.sleep(0.2)
    await until(lambda: model.report is not None and not model.uploading)
    await idle(content)


async def _metrics_upload(content: Any, max_body: int) -> None:
    content.max_body_spin.setValue(max_body)
    await _confirmed_upload(content)


async def _metrics_uploaded(content: Any) -> None:
    await _metrics_upload(content, BULK_METRICS_BODY_LIMIT)


async def _metrics_again(content: Any) -> None:
    """The same batch once more: this server accepted it already, so flagdesk asks first (after
    the question about the metric it would drop, answered as for the first upload)."""
    model = content.model
    content.upload_button.click()
    await until(lambda: bool(model.again_question) and not model.uploading)
    if model.again_heading == AGAIN_HEADINGS[DROPPED]:
        content.again_button.click()
        await until(lambda: model.again_heading not in ("", AGAIN_HEADINGS[DROPPED])
                    and not model.uploading)  # fmt: skip
    await idle(content)


async def _metrics_rejected(content: Any) -> None:
    """A body limit above the server's, confirmed as sent again: the larger bodies get 413,
    each reported."""
    content.max_body_spin.setValue(150_000)
    await _confirmed_upload(content)


STEPS: tuple[Step, ...] = (
    ("groups", "groups", _groups_loaded),
    ("groups-filled", "groups", _group_filled),
    ("groups-created", "groups", _group_created),
    ("users", "users", _user_form),
    ("users-problems", "users", _user_problems),
    ("users-scim", "users", _user_scim),
    ("inactive_users", "inactive_users", _nothing),
    ("inactive_users-filtered", "inactive_users", _inactive_filtered),
    ("project_dashboard", "project_dashboard", _open("web-shop")),
    ("project_dashboard-no-events", "project_dashboard", _open("mobile-app")),
    ("project_dashboard-unknown", "project_dashboard", _open("no-such-project")),
    ("archived_features", "archived_features", _archive_selected),
    ("archived_features-empty", "archived_features", _open("mobile-app")),
    ("context_usage", "context_usage", _open("region")),
    ("context_usage-empty", "context_usage", _open("tenantId")),
    ("metrics_upload", "metrics_upload", _nothing),
    ("metrics_upload-preview", "metrics_upload", _metrics_preview),
    ("metrics_upload-problems", "metrics_upload", _metrics_problems),
    ("metrics_upload-uploaded", "metrics_upload", _metrics_uploaded),
    ("metrics_upload-again", "metrics_upload", _metrics_again),
    ("metrics_upload-rejected", "metrics_upload", _metrics_rejected),
    # issue 38: login history, newest first; the failed logins from one address
    ("logins", "logins", _logins_loaded),
    ("logins-failed", "logins", _logins_failed),
)


async def _act_and_look_back(
    window: MainWindow, session: Session, palette: str, save: Callable[[QWidget, str], None]
) -> None:
    """The confirmation of deleting three inactive users, before their number is typed, after
    Enter with a wrong one (it says what to type), and typed; the deletion; and the History with
    it and a change in doubt (the `sent` line of a deletion whose answer never came, as a
    process killed at that moment leaves it), before and after the check against the server."""
    window.show_page("inactive_users")
    view = window.tool_pages["inactive_users"].ensure_content()
    assert isinstance(view, InactiveUsersView)
    await until(lambda: view.model.loaded)
    view.table.filter_edit.clear()  # an earlier picture filtered the list
    rows = view.model.table.rows
    view.model.select(rows[:3])
    plan = view.model.plan_delete()
    assert plan is not None, view.model.delete_reason
    dialog = DeleteConfirmation(plan, window)
    dialog.show()
    await settle(dialog)
    save(dialog, f"inactive_users-confirm-{palette}")  # the number of users to type: 3
    dialog.typed.setText("33")
    enter = QKeyEvent(QEvent.Type.KeyPress, Qt.Key.Key_Return, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(dialog.typed, enter)
    await settle(dialog)
    save(dialog, f"inactive_users-confirm-hint-{palette}")  # Enter with 33: what to type
    dialog.typed.setText("3")
    await settle(dialog)
    save(dialog, f"inactive_users-confirm-typed-{palette}")  # typed: Delete enabled
    dialog.close()
    task = view.model.delete(plan)
    assert task is not None
    await task
    caps = session.capabilities
    assert caps is not None
    journal = Journal(Actor(session.name, caps.base_url, caps.token_kind, caps.user_name))
    await journal.begin(DELETE_INACTIVE_USERS.key, [rows[3].id], before={"snapshot": "-"})
    window.show_page("history")
    history = window.history_model
    history.refresh()
    await until(lambda: bool(history.in_doubt))
    await settle(window)
    save(window, f"history-{palette}")
    window.history.check_button.click()
    await until(lambda: not history.in_doubt and not history.busy)
    await settle(window)
    save(window, f"history-checked-{palette}")

    # a group renamed in its window, then taken back from the History: the question, the outcome
    window.show_page("groups")
    editor = window.tool_pages["groups"].ensure_content()
    assert isinstance(editor, GroupEditor)
    await until(lambda: editor.model.loaded)
    opened = editor.model.open_group(editor.model.groups.all_rows[0].id)
    assert opened is not None
    await opened
    editor.model.set_name(editor.model.name + " (renamed)")
    saving = editor.model.plan_save()
    assert saving is not None, editor.model.save_reason
    changed = editor.model.change(saving)
    assert changed is not None
    await changed
    window.show_page("history")
    await until(lambda: any(e.action == "groups.edit" for e in history.entries))
    await settle(window)
    table = window.history.table
    row = next(r for r in range(history.table.rowCount())
               if history.table.row_at(r).action == "groups.edit")  # fmt: skip
    table.view.selectRow(row)
    # what the server's event log recorded of the edit, below the table
    await until(lambda: "recorded it" in history.record_text)
    await settle(window)
    save(window, f"history-recorded-{palette}")
    window.history.undo_button.click()
    await until(lambda: window.history.confirmations.box is not None)
    box = window.history.confirmations.box
    assert box is not None
    await settle(box)
    save(box, f"history-undo-confirm-{palette}")
    box.action_button.click()  # type: ignore[attr-defined]
    await until(lambda: bool(history.undo_outcome or history.undo_error))
    await settle(window)
    save(window, f"history-undone-{palette}")


async def _column_menu(
    window: MainWindow, palette: str, save: Callable[[QPixmap, str], None]
) -> None:
    """The inactive users' header menu, opened over the Email column: which columns are shown,
    and "Reset columns". A menu is a window of its own: it is drawn onto the window's picture
    where it opened."""
    window.show_page("inactive_users")
    view = window.tool_pages["inactive_users"].ensure_content()
    assert isinstance(view, InactiveUsersView)
    await until(lambda: view.model.loaded)
    view.table.filter_edit.clear()  # the picture before filtered the list
    await settle(window)
    header = view.table.view.horizontalHeader()
    x = header.sectionViewportPosition(EMAIL_COLUMN) + 40
    at = header.mapToGlobal(QPoint(x, header.height() // 2))
    menu = view.table.column_menu()
    menu.popup(at)
    await settle(menu)
    picture = window.grab()
    painter = QPainter(picture)
    painter.drawPixmap(window.mapFromGlobal(menu.pos()), menu.grab())
    painter.end()
    save(picture, f"inactive_users-columns-{palette}")
    menu.close()
    menu.deleteLater()


async def _revive_and_delete(
    window: MainWindow, palette: str, save: Callable[[QWidget, str], None]
) -> None:
    """Archived flags: the confirmation of reviving two, the window with Undo after it, the
    confirmation of deleting two for good, the project's id half typed, and the window after
    every archived flag of the project was deleted for good (what it did above the empty list)."""
    window.show_page("archived_features")
    browser = window.tool_pages["archived_features"].ensure_content()
    assert isinstance(browser, ArchiveBrowser)
    browser.open_item("web-shop")
    model = browser.model
    await until(lambda: model.loaded_project == "web-shop" and not model.busy)
    rows = model.table.rows
    model.select_rows(rows[:2])
    plan = model.plan(REVIVE)
    assert plan is not None, model.reason(REVIVE)
    dialog = ArchiveConfirmation(plan, window)
    dialog.show()
    await settle(dialog)
    save(dialog, f"archived_features-revive-confirm-{palette}")
    dialog.close()
    task = model.carry_out(plan)
    assert task is not None
    await task
    await until(lambda: not model.busy and model.undoable is not None)
    await settle(window)
    save(window, f"archived_features-undo-{palette}")
    model.select_rows(model.table.rows[2:4])
    plan = model.plan(DELETE)
    assert plan is not None, model.reason(DELETE)
    dialog = ArchiveConfirmation(plan, window)
    dialog.show()
    dialog.typed.setText("web-")
    await settle(dialog)
    save(dialog, f"archived_features-delete-confirm-{palette}")
    dialog.close()
    model.select_rows(list(model.table.rows))
    plan = model.plan(DELETE)
    assert plan is not None, model.reason(DELETE)
    task = model.carry_out(plan)
    assert task is not None
    await task
    await until(lambda: not model.busy and model.state == EMPTY)
    await settle(window)
    save(window, f"archived_features-deleted-empty-{palette}")


async def _confirmations(
    window: MainWindow, palette: str, save: Callable[[QWidget, str], None]
) -> None:
    """The questions asked before deleting a group, a user and a context field, saving a user
    and making a reset link (the confirmation as the window opens it, over the window)."""
    window.show_page("groups")
    editor = window.tool_pages["groups"].ensure_content()
    assert isinstance(editor, GroupEditor)
    await until(lambda: editor.model.loaded)
    groups = editor.model.groups.all_rows
    task = editor.model.open_group(groups[0].id)
    assert task is not None
    await task
    editor.confirm(editor.model.plan_delete())
    await until(lambda: editor.confirmations.box is not None)
    await _save_box(editor.confirmations.box, f"groups-delete-confirm-{palette}", save)

    window.show_page("users")
    users = window.tool_pages["users"].ensure_content()
    assert isinstance(users, UserEditor)
    users.open_item(36)  # an inactive user the earlier step left (39 was deleted there)
    await until(lambda: users.model.current_id == 36)
    users.on_delete_button_clicked()
    await until(lambda: users.confirmation is not None)
    await _save_box(users.confirmation, f"users-delete-confirm-{palette}", save)
    # a save asks too, naming each change (a long name, a root role changed)
    users.model.edit("name", "Alexandra Konstantinopoulou-Vandenberghe (Platform)")
    users.model.edit("rootRole", "Admin")
    users.ask_to_save()
    await until(lambda: users.confirmation is not None)
    await _save_box(users.confirmation, f"users-save-confirm-{palette}", save)
    users.model.revert()
    users.on_reset_button_clicked()
    await until(lambda: users.confirmation is not None)
    await _save_box(users.confirmation, f"users-reset-confirm-{palette}", save)

    window.show_page("context_usage")
    usage = window.tool_pages["context_usage"].ensure_content()
    assert isinstance(usage, ContextUsageViewer)
    usage.open_item("tenantId")
    await until(lambda: usage.model.field == "tenantId" and not usage.model.busy)
    task = usage.model.delete_field()
    assert task is not None
    await task
    await until(lambda: usage.confirmations.box is not None)
    await _save_box(usage.confirmations.box, f"context_usage-delete-confirm-{palette}", save)


# ---------------------------------------------------------------------------- issue 36: tokens


def _personal_token(db_path: Path, username: str) -> str:
    """A personal access token of `username`, written into the sandbox's database (the sandbox
    has no login page to make one through)."""
    from sandbox import db
    from sandbox.store import Store

    conn = db.connect(db_path)
    try:
        row = conn.execute("SELECT id FROM users WHERE username = ?", (username,)).fetchone()
        return Store(conn).create_personal_token(int(row[0]))
    finally:
        conn.close()


def _revoke(db_path: Path, token: str) -> None:
    from sandbox import db

    conn = db.connect(db_path)
    try:
        with conn:
            conn.execute("DELETE FROM tokens WHERE secret_hash = token_hash(?)", (token,))
    finally:
        conn.close()


async def _tokens(
    window: MainWindow, session: Session, palette: str, save: Callable[[QWidget, str], None],
    db_path: Path,
) -> None:  # fmt: skip
    """The API tokens' and personal access tokens' windows (issue 36): the creation form, the
    secret shown once (masked: no secret is ever in a picture), the lists, an admin API token's
    personal tokens page (unavailable), every API token deleted (empty), and both windows once
    their token was revoked (error)."""
    from ui.api_tokens import ApiTokensView, CreateTokenDialog
    from ui.personal_tokens import PersonalTokensView

    window.show_page("api_tokens")
    view = window.tool_pages["api_tokens"].ensure_content()
    assert isinstance(view, ApiTokensView)
    m = view.model
    await until(lambda: m.loaded and not m.busy)
    form = CreateTokenDialog(m, window)
    form.name_edit.setText("checkout-service (production, eu-west-1 canary)")
    form.type_combo.setCurrentText("backend")
    for i in range(min(2, form.projects_list.count())):
        form.projects_list.item(i).setCheckState(Qt.CheckState.Checked)
    form.expires_check.setChecked(True)
    form.show()
    await settle(form)
    save(form, f"api_tokens-create-{palette}")
    plan = m.plan_create(form.name_edit.text(), "backend", form.projects(), "production",
                         form.expires())  # fmt: skip
    form.close()
    for made in (plan, m.plan_create("storefront web app", "frontend", [], "development", None),
                 m.plan_create("nightly reports job", "client", ["default"], "development",
                               None)):  # fmt: skip
        task = m.create(made)
        assert task is not None
        await task
        await until(lambda: m.loaded and not m.busy)
        if made is plan:
            await until(lambda: view.secret_dialog is not None)
            assert view.secret_dialog is not None
            await settle(view.secret_dialog)
            save(view.secret_dialog, f"api_tokens-secret-{palette}")  # masked
    if view.secret_dialog is not None:
        view.secret_dialog.done(0)
    view.table.view.selectRow(0)
    await settle(window)
    save(window, f"api_tokens-{palette}")

    window.show_page("personal_tokens")
    await settle(window)
    save(window, f"personal_tokens-unavailable-{palette}")  # an admin API token has no user

    pat = _personal_token(db_path, "admin")
    await session.open_spec(ConnectionSpec(session.url, pat, label="Demo sandbox as Admin"))
    pats = window.tool_pages["personal_tokens"].ensure_content()
    assert isinstance(pats, PersonalTokensView)
    p = pats.model
    await until(lambda: p.loaded and not p.busy)
    for description in ("flagdesk on my laptop", "release pipeline (deploys to production)"):
        task = p.create(p.plan_create(description, datetime.date.today()
                                      + datetime.timedelta(days=60)))  # fmt: skip
        assert task is not None
        await task
        await until(lambda: p.loaded and not p.busy)
    assert pats.secret_dialog is not None
    await settle(pats.secret_dialog)
    save(pats.secret_dialog, f"personal_tokens-secret-{palette}")  # masked
    pats.secret_dialog.done(0)
    await settle(window)
    save(window, f"personal_tokens-{palette}")

    window.show_page("api_tokens")
    await until(lambda: m.loaded and not m.busy)
    m.select(list(m.table.rows))
    deletion = m.plan_delete()
    assert deletion is not None, m.delete_reason
    task = m.delete(deletion)
    assert task is not None
    await task
    await until(lambda: m.loaded and not m.busy)
    await settle(window)
    save(window, f"api_tokens-empty-{palette}")  # what it did, above the empty list

    _revoke(db_path, pat)
    view.refresh()
    await until(lambda: bool(m.error) and not m.busy)
    await settle(window)
    save(window, f"api_tokens-error-{palette}")
    window.show_page("personal_tokens")
    pats.refresh()
    await until(lambda: bool(p.error) and not p.busy)
    await settle(window)
    save(window, f"personal_tokens-error-{palette}")


# ---------------------------------------------------------------- issue 36: service accounts


async def _service_accounts(
    window: MainWindow, session: Session, palette: str, save: Callable[[QWidget, str], None],
    db_path: Path,
) -> None:  # fmt: skip
    """The service accounts' window (issue 36), connected as the demo's Admin (a personal access
    token of its own: the token windows' step revoked theirs): the account form, the list with
    an account's tokens below, a new token's secret (masked), the deletions' confirmations
    (an account naming its tokens; two tokens, their number to type), every account deleted
    (empty), the token revoked (error), and a played open-source Unleash (unavailable)."""
    from ui.service_accounts import (
        AccountDialog,
        DeleteAccountConfirmation,
        DeleteTokensConfirmation,
        ServiceAccountsView,
    )

    pat = _personal_token(db_path, "admin")
    await session.open_spec(ConnectionSpec(session.url, pat, label="Demo sandbox as Admin"))
    with httpx.Client(base_url=session.url, headers={"Authorization": pat}) as http:
        http.post("/api/admin/roles", json={"name": "Release automation", "type": "root-custom",
                                            "permissions": []}).raise_for_status()  # fmt: skip
    window.show_page("service_accounts")
    view = window.tool_pages["service_accounts"].ensure_content()
    assert isinstance(view, ServiceAccountsView)
    m = view.model
    await until(lambda: m.loaded and not m.busy)
    form = AccountDialog(m, editing=False, parent=window)
    form.username_edit.setText("github-actions-deployer")
    form.name_edit.setText("GitHub Actions deployer (production, eu-west-1 and us-east-1)")
    form.role_combo.setCurrentText("Release automation")
    form.show()
    await settle(form)
    save(form, f"service_accounts-create-{palette}")
    roles = {name: role for role, name in m.role_choices}
    plans = [m.plan_create(form.username_edit.text(), form.name_edit.text(),
                           roles["Release automation"]),
             m.plan_create("terraform", "Terraform (infrastructure)", roles["Editor"]),
             m.plan_create("grafana-reader", "Grafana dashboards", roles["Viewer"])]  # fmt: skip
    form.close()
    for made in plans:
        task = m.create(made)
        assert task is not None
        await task
        await until(lambda: m.loaded and not m.busy)
    m.choose(next(r.id for r in m.accounts.all_rows if r.username == "github-actions-deployer"))
    view.on_accounts_reset()
    later = datetime.date.today() + datetime.timedelta(days=90)
    for description in ("GitHub Actions: deploy to production", "nightly smoke tests",
                        "release notes bot"):  # fmt: skip
        task = m.create_token(m.plan_create_token(description, later))
        assert task is not None
        await task
        await until(lambda: m.loaded and not m.busy)
        if description.startswith("GitHub"):
            assert view.secret_dialog is not None
            await settle(view.secret_dialog)
            save(view.secret_dialog, f"service_accounts-secret-{palette}")  # masked
            # used once, as a deployment would: its last use shows in both lists
            secret = view.secret_dialog.secret
            with httpx.Client(base_url=session.url, headers={"Authorization": secret}) as http:
                http.get("/api/admin/projects").raise_for_status()
        if view.secret_dialog is not None:
            view.secret_dialog.done(0)
    view.refresh()  # the token's use
    await until(lambda: m.loaded and not m.busy)
    view.tokens_table.view.selectRow(0)
    view.tokens_table.view.selectionModel().select(
        m.tokens.index(1, 0), view.tokens_table.view.selectionModel().SelectionFlag.Select
        | view.tokens_table.view.selectionModel().SelectionFlag.Rows,
    )  # fmt: skip
    await settle(window)
    save(window, f"service_accounts-{palette}")
    deletion = m.plan_delete_tokens()
    assert deletion is not None, m.delete_tokens_reason
    box: QWidget = DeleteTokensConfirmation(deletion, window)
    box.show()
    await settle(box)
    save(box, f"service_accounts-tokens-delete-confirm-{palette}")
    box.close()
    account_deletion = m.plan_delete()
    assert account_deletion is not None, m.delete_reason
    box = DeleteAccountConfirmation(account_deletion, window)
    box.show()
    await settle(box)
    save(box, f"service_accounts-delete-confirm-{palette}")
    box.close()

    for row in list(m.accounts.all_rows):  # every account deleted: the empty list
        m.choose(row.id)
        gone = m.plan_delete()
        assert gone is not None, m.delete_reason
        task = m.delete(gone)
        assert task is not None
        await task
        await until(lambda: m.loaded and not m.busy)
    await settle(window)
    save(window, f"service_accounts-empty-{palette}")


# ---------------------------------------------------------------------------- issue 36: clean-up


def _plant_cleanup(url: str, token: str) -> None:
    """A few clean-up cases made through the API: never-seen API tokens, idle service accounts
    (one with a long name), custom roles nobody holds, an empty group."""
    with httpx.Client(base_url=url, headers={"Authorization": token}) as http:
        for name in ("legacy-ios-app (retired 2025)", "load-test runner", "partner feed"):
            body = {"tokenName": name, "type": "client", "environment": "production"}
            http.post("/api/admin/api-tokens", json=body).raise_for_status()
        for name, username in (
            ("Nightly data export to the warehouse (eu-west-1)", "warehouse-export"),
            ("Old deploy bot", "old-deploy-bot"),
        ):
            account: dict[str, object] = {"name": name, "username": username, "rootRole": 3}
            http.post("/api/admin/service-account", json=account).raise_for_status()
        for name, kind in (
            ("Auditors", "root-custom"),
            ("Release managers", "custom"),
            ("Contractors (read only, web shop and payments)", "custom"),
        ):
            http.post("/api/admin/roles", json={"name": name, "type": kind, "permissions": [],
                                                "description": "made for a project that ended"},
                      ).raise_for_status()  # fmt: skip
        http.post("/api/admin/groups", json={"name": "Q3 hackathon", "users": []})


async def _cleanup(
    window: MainWindow, session: Session, palette: str, save: Callable[[QWidget, str], None],
    root: Path, db_path: Path,
) -> None:  # fmt: skip
    """The clean-up report's window (issue 36), as an Admin's personal access token sees the
    demo with a few cases more: the service accounts chosen (loaded), the typed confirmation of
    deleting three custom roles, what it did; the report once the token was revoked (error);
    and a new server whose one finding was revoked here (empty, the outcome above it)."""
    from ui.cleanup import CleanupView

    pat = _personal_token(db_path, "admin")
    await asyncio.to_thread(_plant_cleanup, session.url, pat)
    await session.open_spec(ConnectionSpec(session.url, pat, label="Demo sandbox as Admin"))
    window.show_page("cleanup")
    view = window.tool_pages["cleanup"].ensure_content()
    assert isinstance(view, CleanupView)
    m = view.model
    await until(lambda: m.loaded and not m.busy)
    shown = m.choose_kind("service_account_unused")
    if shown is not None:
        await shown
    view.on_model_report_loaded()
    view.table.view.selectRow(0)
    await settle(window)
    save(window, f"cleanup-{palette}")

    shown = m.choose_kind("role_unused")
    if shown is not None:
        await shown
    view.on_model_report_loaded()
    view.table.view.selectAll()
    planned = m.plan_act()
    assert planned is not None, m.act_reason
    await planned
    await until(lambda: view.confirmation is not None)
    box = view.confirmation
    assert box is not None
    await settle(box)
    save(box, f"cleanup-confirm-{palette}")
    box.typed.setText(box.plan.confirm_text)  # type: ignore[attr-defined]
    box.action_button.click()  # type: ignore[attr-defined]
    await until(lambda: not m.acting and m.loaded and not m.busy)
    await settle(window)
    save(window, f"cleanup-acted-{palette}")

    _revoke(db_path, pat)
    view.refresh()
    await until(lambda: bool(m.error) and not m.busy)
    await settle(window)
    save(window, f"service_accounts-error-{palette}")

    oss = SandboxProcess(db_path.with_name(f"oss-8.2-{palette}.sqlite3"), "--demo",
                         "--as-version", "8.2")  # fmt: skip
    await asyncio.to_thread(oss.start)
    try:
        await session.open_spec(ConnectionSpec(oss.url, oss.admin_token,
                                               label="Open-source Unleash 8.2"))  # fmt: skip
        await settle(window)
        save(window, f"service_accounts-unavailable-{palette}")
        # issue 38: login history is Enterprise's too
        window.show_page("logins")
        await settle(window)
        save(window, f"logins-unavailable-{palette}")
    finally:
        await asyncio.to_thread(oss.stop)
    save(window, f"cleanup-error-{palette}")

    empty = SandboxProcess(root / f"cleanup-empty-{palette}.sqlite3", "--empty")
    await asyncio.to_thread(empty.start)
    try:
        await session.open_spec(ConnectionSpec(empty.url, _personal_token(empty.db, "admin"),
                                               label="New server as Admin"))  # fmt: skip
        await until(lambda: m.loaded and not m.busy)
        shown = m.choose_kind("api_token_never_seen")
        if shown is not None:
            await shown
        # the tokens `flagdesk serve` made, never used: the new server's admin and client tokens
        m.select(list(m.table.rows))
        planned = m.plan_act()
        assert planned is not None, m.act_reason
        await planned
        await until(lambda: view.confirmation is not None)
        box = view.confirmation
        assert box is not None
        box.typed.setText(box.plan.confirm_text or "")  # type: ignore[attr-defined]
        box.action_button.click()  # type: ignore[attr-defined]
        await until(lambda: bool(m.outcome) and m.loaded and not m.busy)
        await settle(window)
        save(window, f"cleanup-empty-{palette}")
    finally:
        await asyncio.to_thread(empty.stop)


# ---------------------------------------------------------------------------- issue 36: access


async def _access(
    window: MainWindow, palette: str, save: Callable[[QWidget, str], None], root: Path
) -> None:
    """Project access and who can do what where (issue 36): a project's holders (a group
    selected), the grant form, the change of roles, the revocation's question, a project nobody
    holds a role in (empty), an unknown project (error); one user's projects and why, one
    project's people and why, a read stopped (error); and on a played open-source release,
    project access unavailable and who-can answered from root roles with its note."""
    from ui.access_overview import AccessOverviewView
    from ui.project_access import ChangeRolesDialog, GrantDialog, ProjectAccessView

    window.show_page("project_access")
    view = window.tool_pages["project_access"].ensure_content()
    assert isinstance(view, ProjectAccessView)
    m = view.model
    view.open_item("web-shop")
    await until(lambda: m.loaded_project == "web-shop" and not m.busy)
    view.table.view.selectRow(
        next(i for i, r in enumerate(m.table.rows) if r.kind == "Group" and r.members)
    )
    await settle(window)
    save(window, f"project_access-{palette}")

    grant = GrantDialog(m, window)
    for candidate in m.candidates[:40]:
        if candidate.kind == "User" and candidate.subject.id not in {
            r.subject.id for r in m.table.rows if r.subject.kind == "user"
        }:
            grant.check(candidate.label)
            break
    grant.check("Group: Support")
    grant.check_role("Member")
    grant.show()
    await settle(grant)
    save(grant, f"project_access-grant-{palette}")
    grant.close()

    select = view.table.view.selectionModel()
    view.table.view.selectRow(next(i for i, r in enumerate(m.table.rows) if r.kind == "User"))
    await until(lambda: len(m.selected) == 1)
    change = ChangeRolesDialog(m, window)
    change.set_role("Owner", True)
    change.show()
    await settle(change)
    save(change, f"project_access-change-{palette}")
    change.close()

    flags = select.SelectionFlag.Select | select.SelectionFlag.Rows
    select.select(m.table.index(0, 0), flags)
    select.select(m.table.index(1, 0), flags)
    await until(lambda: len(m.selected) == 2)
    view.on_revoke_button_clicked()
    await _save_box(view.confirmation, f"project_access-revoke-{palette}", save)

    view.open_item("mobile-app")
    await until(lambda: m.loaded_project == "mobile-app" and not m.busy)
    await settle(window)
    save(window, f"project_access-empty-{palette}")
    view.open_item("no-such-project")
    await until(lambda: bool(m.error) and not m.busy)
    await settle(window)
    save(window, f"project_access-error-{palette}")

    window.show_page("access_overview")
    who = window.tool_pages["access_overview"].ensure_content()
    assert isinstance(who, AccessOverviewView)
    w = who.model
    await until(lambda: w.loaded and not w.busy)
    person = next(p for p in w.data.people if p.id == 6)  # type: ignore[union-attr]
    who.ask("user", person.email)
    await until(lambda: w.where_table.total_count > 0)
    await settle(window)
    save(window, f"access_overview-{palette}")
    who.ask("project", "web-shop")
    await until(lambda: w.who_table.total_count > 0)
    await settle(window)
    save(window, f"access_overview-project-{palette}")
    shot: list[bool] = []

    def reading(done: int, total: int) -> None:  # mid-read: the progress bar and Stop
        if done * 2 >= total and not shot:
            shot.append(True)
            save(window, f"access_overview-reading-{palette}")

    def as_on_pro() -> None:
        """Read again, then as on Pro (project access, no access overview): a user's answer
        reads every project's access."""
        assert w.data is not None
        w.data.reach = None
        who.ask("user", person.email)

    w.refresh()
    await until(lambda: w.loaded and not w.busy)
    w.progress.connect(reading)
    as_on_pro()
    await until(lambda: bool(shot) and not w.busy)
    w.progress.disconnect(reading)

    def stop(done: int, _total: int) -> None:  # the person's Stop, one project in
        if done == 1:
            w.cancel()

    w.refresh()
    await until(lambda: w.loaded and not w.busy)
    w.progress.connect(stop)
    as_on_pro()
    await until(lambda: bool(w.error) and not w.busy)
    w.progress.disconnect(stop)
    await settle(window)
    save(window, f"access_overview-stopped-{palette}")
    w.refresh()
    await until(lambda: w.loaded and not w.busy and not w.error)

    played = SandboxProcess(root / f"played-{palette}.sqlite3", "--demo", "--as-version", "8.2")
    await asyncio.to_thread(played.start)
    try:
        session = window.session
        await session.open_spec(ConnectionSpec(played.url, played.admin_token,
                                               label="Unleash 8.2 (open source)"))  # fmt: skip
        window.show_page("project_access")
        await settle(window)
        save(window, f"project_access-unavailable-{palette}")
        window.show_page("access_overview")
        await until(lambda: w.loaded and not w.busy)
        who.ask("user", person.email)
        await until(lambda: w.where_table.total_count > 0)
        await settle(window)
        save(window, f"access_overview-open-source-{palette}")
    finally:
        await asyncio.to_thread(played.stop)


async def _maintenance(
    window: MainWindow, palette: str, save: Callable[[QWidget, str], None]
) -> None:
    """Issue 38: the switch's confirmation (what maintenance stops), the Overview and the status
    bar while the server is in maintenance, then switched off again."""
    panel, instance = window.instance_panel, window.instance_model
    panel.switch_button.click()
    await until(lambda: panel.confirmations.box is not None)
    box = panel.confirmations.box
    await settle(box)  # type: ignore[arg-type]
    save(box, f"maintenance-confirm-{palette}")  # type: ignore[arg-type]
    box.confirm_button.click()  # type: ignore[union-attr]
    await until(lambda: window.session.maintenance is True and not instance.acting)
    await settle(window)
    save(window, f"main_window-maintenance-{palette}")
    plan = instance.plan_switch()
    assert plan is not None
    task = instance.switch(plan)
    assert task is not None
    await task
    await until(lambda: window.session.maintenance is False)


async def _save_box(box: QWidget | None, name: str, save: Callable[[QWidget, str], None]) -> None:
    assert box is not None
    await settle(box)
    save(box, name)
    box.close()


# ---------------------------------------------------------------------------- issue 36: roles


async def _roles(
    window: MainWindow, session: Session, palette: str, save: Callable[[QWidget, str], None],
    db_path: Path, folder: Path,
) -> None:  # fmt: skip
    """The roles' window (issue 36): custom roles made through the model's plans, the list with
    a custom role's permissions beside it, the form's permission picker (searched), the
    confirmation, the server's refusal under the name, a held role's deletion refused naming
    its holders, a deletion's confirmation; an open-source Unleash 8.2 (the built-in root roles,
    the buttons disabled: the roles' "empty"), and the connection's token revoked (error)."""
    from ui.roles import RoleDialog, RolesView

    demo = session.url
    pat = _personal_token(db_path, "admin")
    await session.open_spec(ConnectionSpec(demo, pat, label="Demo sandbox as Admin"))
    window.show_page("roles")
    view = window.tool_pages["roles"].ensure_content()
    assert isinstance(view, RolesView)
    m = view.model
    await until(lambda: m.loaded and not m.busy)
    assert m.catalogue is not None
    groups = m.catalogue.permissions
    Picked = list[tuple[str, str | None]]
    root: Picked = [(p.name, None) for p in groups.root[:6]]
    project: Picked = [(p.name, None) for p in groups.project[:5]]
    environments: Picked = [(p.name, env.name) for env in groups.environments
                            for p in env.permissions[:3]]  # fmt: skip
    for name, kind, description, chosen in (
        ("Release manager", "custom", "Ships flags to production", project + environments),
        ("Auditor", "root-custom", "Reads everything, changes nothing", root),
        ("Support engineer (EU, follow-the-sun rotation, read only)", "custom",
         "Looks at flags for customers", project[:2]),
    ):  # fmt: skip
        task = m.save(m.plan_save(None, name, description, kind, chosen))
        assert task is not None
        await task
        await until(lambda: m.loaded and not m.busy)
    auditor = next(r.id for r in m.table.all_rows if r.name == "Auditor")
    async with httpx.AsyncClient(base_url=demo, headers={"Authorization": pat}) as http:
        for person in ("Ines Auditt", "Bo Checker"):
            user = {"email": f"{person.split()[0].lower()}@example.com", "name": person,
                    "rootRole": auditor}  # fmt: skip
            (await http.post("/api/admin/user-admin", json=user)).raise_for_status()
    view.refresh()
    await until(lambda: m.loaded and not m.busy)
    view.table.view.selectRow(m.table.row_of(lambda r: r.name == "Release manager"))
    await settle(window)
    save(window, f"roles-{palette}")

    picker = RoleDialog(m, None, lambda _plan: None, window)
    picker.name_edit.setText("Flag janitor")
    picker.description_edit.setText("Archives stale flags in every project")
    picker.picker.search_edit.setText("feature")
    group = picker.picker.group("environment:development")
    if group is not None:
        group.setCheckState(0, Qt.CheckState.Checked)
    picker.show()
    await settle(picker)
    save(picker, f"roles-picker-{palette}")
    picker.close()

    view.on_create_button_clicked()
    form = view.dialog
    assert form is not None
    form.name_edit.setText("Auditor")
    form.on_save_button_clicked()
    await until(lambda: view.confirmation is not None)
    box: Any = view.confirmation
    await settle(box)
    save(box, f"roles-save-confirm-{palette}")
    box.action_button.click()
    await until(lambda: form.name_error.isVisible() and not m.acting)
    await settle(form)
    save(form, f"roles-name-taken-{palette}")  # the server's 409, under the name
    form.reject()
    await until(lambda: view.dialog is None)

    view.table.view.selectRow(m.table.row_of(lambda r: r.name == "Auditor"))
    view.on_delete_button_clicked()
    await until(lambda: view.refusal is not None)
    await _save_box(view.refusal, f"roles-delete-refused-{palette}", save)
    await until(lambda: view.refusal is None and not m.acting)
    view.table.view.selectRow(m.table.row_of(lambda r: r.name.startswith("Support")))
    view.on_delete_button_clicked()
    await until(lambda: view.deletions.box is not None)
    await _save_box(view.deletions.box, f"roles-delete-confirm-{palette}", save)
    await until(lambda: view.deletions.box is None and not m.acting)

    oss = SandboxProcess(folder / f"roles-oss-{palette}.sqlite3", "--demo", "--as-version", "8.2")
    await asyncio.to_thread(oss.start)
    try:
        await session.open_spec(ConnectionSpec(oss.url, oss.admin_token,
                                               label="Open-source Unleash 8.2"))  # fmt: skip
        await until(lambda: m.loaded and not m.busy)
        view.table.view.selectRow(m.table.row_of(lambda r: r.name == "Editor"))
        await settle(window)
        save(window, f"roles-open-source-{palette}")
    finally:
        await asyncio.to_thread(oss.stop)

    await session.open_spec(ConnectionSpec(demo, pat, label="Demo sandbox as Admin"))
    await until(lambda: m.loaded and not m.busy)
    _revoke(db_path, pat)
    view.refresh()
    await until(lambda: bool(m.error) and not m.busy)
    await settle(window)
    save(window, f"roles-error-{palette}")


# ---------------------------------------------------------------------------- issue 37: compare


def _staging_of(saved: Path, staging: Path) -> None:
    """`staging`: the snapshot `saved` as another server would have it (a segment it lacks,
    one of its own with a long name, a context field's legal values, a user's root role, a tag
    type's description): what an administrator compares."""
    import json

    document = json.loads(saved.read_text(encoding="utf-8"))
    if document["segments"]:
        document["segments"].pop(0)
    document["segments"].append(
        {
            "name": "customers-in-the-nordics-and-the-baltics-beta-2026",
            "description": "Only staging has it",
            "constraints": [
                {
                    "contextName": "region",
                    "operator": "IN",
                    "values": ["se", "no", "dk", "fi", "ee", "lv", "lt"],
                }
            ],
        }
    )
    for field in document["contextFields"][:1]:
        field["legalValues"] = [*field["legalValues"][1:], {"value": "staging-only"}]
    for user in document["users"][:2]:
        user["rootRole"] = "Viewer" if user.get("rootRole") != "Viewer" else "Editor"
    for tag_type in document["tagTypes"][:1]:
        tag_type["description"] = "Changed on staging"
    staging.write_text(json.dumps(document), encoding="utf-8")  # fmt: skip


async def _compare(
    window: MainWindow, session: Session, palette: str, save: Callable[[QWidget, str], None],
    root: Path,
) -> None:  # fmt: skip
    """The Compare window (issue 37): the demo sandbox against a snapshot of it as another
    server has it (loaded, then one difference's details), against its own snapshot (the
    same), and against a file that is no snapshot (the error)."""
    from app.viewmodels.compare import KIND_ROLE, Side
    from ui.compare import CompareView

    saved = root / f"compare-saved-{palette}.json"
    staging = root / f"compare-staging-{palette}.json"
    notes = root / f"compare-notes-{palette}.json"
    saver = window.snapshot_saver
    window.save_snapshot(str(saved))
    await until(lambda: (saved.exists() or bool(saver.error)) and not saver.busy)
    assert saved.exists(), saver.error
    await asyncio.to_thread(_staging_of, saved, staging)
    notes.write_text('{"notes": "not a snapshot"}', encoding="utf-8")

    window.show_page("compare")
    view = window.tool_pages["compare"].ensure_content()
    assert isinstance(view, CompareView)
    m = view.model

    async def compared(target: Path) -> None:
        view.pick_side("source", Side("connection"))
        view.open_file("target", str(target))
        m.load()
        await until(lambda: not m.busy and not m.reading and not m.tasks)

    await compared(staging)
    await settle(window)
    save(window, f"compare-{palette}")
    tree = m.tree
    kind = next(
        tree.index(r, 0)
        for r in range(tree.rowCount())
        if tree.index(r, 0).data(KIND_ROLE) == "context-fields"
    )
    leaf = tree.index(0, 0, tree.index(0, 0, kind))
    view.tree.setCurrentIndex(leaf)
    view.tree.scrollTo(leaf)
    await settle(window)
    save(window, f"compare-details-{palette}")

    await compared(saved)
    await settle(window)
    save(window, f"compare-same-{palette}")
    await compared(notes)
    await settle(window)
    save(window, f"compare-error-{palette}")
    await _promote(window, view, palette, save)


async def _promote(
    window: MainWindow, view: Any, palette: str, save: Callable[[QWidget, str], None]
) -> None:
    """The demo sandbox's staging promoted to its production in the Compare window: the two
    environments compared, the plan shown before anything is sent, the window after, the undo's
    plan and the window after it."""
    from app.viewmodels.compare import Side

    m = view.model
    view.pick_side("source", Side("connection"))
    view.pick_side("target", Side("connection"))
    m.load()
    await until(lambda: not m.busy and not m.reading and not m.tasks)
    m.set_environment("source", "staging")
    m.set_environment("target", "production")
    await until(lambda: not m.tasks)
    view.on_model_choices_changed()
    await settle(window)
    save(window, f"compare-environments-{palette}")
    for button, planned, after in ((view.promote_button, "promote-plan", "promoted"),
                                   (view.undo_button, "undo-plan", "undone")):  # fmt: skip
        button.click()
        await until(lambda: view.confirmation() is not None)
        box = view.confirmation()
        assert box is not None
        await settle(box)
        save(box, f"compare-{planned}-{palette}")
        box.action_button.click()
        await until(lambda: bool(m.outcome or m.outcome_error) and not m.tasks and not m.reading)
        await settle(window)
        save(window, f"compare-{after}-{palette}")


def _changes_to_show(url: str, token: str) -> None:
    """Changes with a state before and after for the event log's pictures (the demo's history
    records none): a flag's description, and its first strategy's rollout."""
    with httpx.Client(base_url=url, headers={"Authorization": token}, timeout=10) as http:
        flags = http.get("/api/admin/projects/web-shop/features").json()["features"]
        flag = next(f["name"] for f in flags if not f.get("archived"))
        base = f"/api/admin/projects/web-shop/features/{flag}"
        http.patch(
            base,
            json=[
                {
                    "op": "replace",
                    "path": "/description",
                    "value": "Checkout v2, behind a 50% rollout",
                }
            ],
        ).raise_for_status()
        for env in http.get(base).json()["environments"]:
            for strategy in env.get("strategies", []):
                if "rollout" in (strategy.get("parameters") or {}):
                    http.patch(f"{base}/environments/{env['name']}/strategies/{strategy['id']}",
                               json=[{"op": "replace", "path": "/parameters/rollout",
                                      "value": "75"}]).raise_for_status()  # fmt: skip
                    return


async def _events(
    window: MainWindow, session: Session, palette: str, save: Callable[[QWidget, str], None],
    db_path: Path,
) -> None:  # fmt: skip
    """The event log (issue 38): the list newest first, an event opened as the change it made
    (a strategy's rollout: its field chosen), and filters that match nothing."""
    from ui.events import EventLogView

    token = await asyncio.to_thread(_personal_token, db_path, "admin")
    await asyncio.to_thread(_changes_to_show, session.url, token)
    window.show_page("events")
    view = window.tool_pages["events"].ensure_content()
    assert isinstance(view, EventLogView)
    m = view.model
    view.clear_filters()
    m.refresh()
    await until(lambda: m.loaded and not m.busy and not m.fetching and not m.reading_ahead)
    await settle(window)
    save(window, f"events-{palette}")
    table = m.table
    row = table.row_of(lambda e: e.type == "feature-strategy-update")
    if row < 0:
        row = table.row_of(lambda e: e.preData is not None)
    view.table.view.setCurrentIndex(table.index(max(row, 0), 0))
    changes = m.changes
    field = next((r for r in range(changes.rowCount())
                  if "rollout" in str(changes.index(r, 0).data())), 0)  # fmt: skip
    view.changes_view.setCurrentIndex(changes.index(field, 0))
    await settle(window)
    save(window, f"events-opened-{palette}")
    view.set_filter_texts(flags="no-such-flag")
    await until(lambda: m.loaded and not m.busy and not m.reading_ahead)
    await settle(window)
    save(window, f"events-empty-{palette}")
    view.clear_filters()
    await until(lambda: m.loaded and not m.busy and not m.reading_ahead)


# ---------------------------------------------------------------------------- issue 38: banners

#: the banners the pictures show (the demo plants none: other tests count its banners)
SHOWN_BANNERS = (
    dict(
        message="**Scheduled maintenance** on Saturday 14 December, 06:00 to 08:00 UTC: flag "
        "changes are paused while the database moves.",
        variant="warning",
        sticky=True,
        link="https://status.example.com",
        linkText="Status page",
    ),
    dict(
        message="Welcome to the new **release dashboard**: every flag's lifecycle at a glance.",
        variant="success",
        link="dialog",
        linkText="What's new",
        dialogTitle="What's new in the release dashboard",
        dialog="- Each flag's **stage**, from *define* to *archived*\n- Who changed it last\n"
        "- Flags ready to clean up",
    ),
    dict(
        message="Reminder: flags untouched for 90 days are archived on the first Monday of "
        "each month. Review yours in the clean-up report before then, or tell "
        "#platform-team which ones must stay.\nThe list is sent by email on the Friday "
        "before.",
        enabled=False,
        link="/projects",
    ),
)


async def _banners(
    window: MainWindow, session: Session, palette: str, save: Callable[[QWidget, str], None],
    db_path: Path,
) -> None:  # fmt: skip
    """The banners' window (issue 38): none yet (empty), three made through the model's plans
    (one sticky warning, one with a dialog, a long one switched off), the list with the first
    one's message, the editor of the dialog's banner, the editor saying a link is wrong, a
    deletion's confirmation, and an open-source Unleash 8.2 (unavailable). It leaves the
    connection on the demo sandbox."""
    from app.viewmodels.banners import BannerForm
    from ui.banners import BannerDialog, BannersView

    window.show_page("banners")
    view = window.tool_pages["banners"].ensure_content()
    assert isinstance(view, BannersView)
    m = view.model
    view.refresh()
    await until(lambda: m.loaded and not m.busy)
    await settle(window)
    save(window, f"banners-empty-{palette}")

    for fields in SHOWN_BANNERS:
        task = m.save(m.plan_save(None, BannerForm(**fields)))
        assert task is not None
        await task
        await until(lambda: m.loaded and not m.busy)
    rows = m.table.all_rows
    view.table.view.selectRow(m.table.row_of(lambda r: r.id == rows[0].id))
    await settle(window)
    save(window, f"banners-{palette}")

    view.table.view.selectRow(m.table.row_of(lambda r: r.link == "dialog"))
    view.on_edit_button_clicked()
    form = view.dialog
    assert isinstance(form, BannerDialog)
    await settle(form)
    save(form, f"banners-editor-{palette}")
    form.link_edit.setText("status page")
    form.on_save_button_clicked()
    await settle(form)
    save(form, f"banners-editor-error-{palette}")
    form.reject()
    await until(lambda: view.dialog is None)

    view.table.view.selectRow(m.table.row_of(lambda r: r.on == "off"))
    view.on_delete_button_clicked()
    await until(lambda: view.deletions.box is not None)
    await _save_box(view.deletions.box, f"banners-delete-confirm-{palette}", save)
    await until(lambda: view.deletions.box is None and not m.acting)

    oss = SandboxProcess(db_path.with_name(f"banners-oss-{palette}.sqlite3"), "--demo",
                         "--as-version", "8.2")  # fmt: skip
    await asyncio.to_thread(oss.start)
    try:
        await session.open_spec(ConnectionSpec(oss.url, oss.admin_token,
                                               label="Open-source Unleash 8.2"))  # fmt: skip
        await settle(window)
        save(window, f"banners-unavailable-{palette}")
    finally:
        await asyncio.to_thread(oss.stop)
    await session.open_sandbox()


async def shoot_alone(app: QApplication, out: Path, only: str = "events") -> list[Path]:
    """One window's pictures alone (`--only events`, `--only banners`), in both palettes."""
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for palette_name, desktop in (("light", None), ("dark", dark_desktop_palette())):
            use_readable_palette(app, desktop)
            os.environ["FLAGDESK_DATA_DIR"] = str(root / f"data-{palette_name}")
            db_path = root / f"demo-{palette_name}.sqlite3"
            session = Session(
                ProfileStore(root / f"config-{palette_name}"),
                sandbox_factory=functools.partial(SandboxProcess, db_path, session_tokens=True),
                health_interval=0,
            )
            session.avatars = no_pictures()
            window = MainWindow(session)
            window.resize(1100, 700)
            window.show()
            await session.open_sandbox()

            def save(widget: QWidget, name: str) -> None:
                path = out / f"{name}.png"
                widget.grab().save(str(path))
                written.append(path)

            await ALONE[only](window, session, palette_name, save, db_path)
            window.close()
            await session.aclose()
        use_readable_palette(app)
    return written


#: the windows whose pictures `--only` renders alone
ALONE = {"events": _events, "banners": _banners}


async def shoot(app: QApplication, out: Path) -> list[Path]:
    """The main window on the overview and every tool in its loaded, empty and error states,
    the connections dialog, a server without groups and a server that cannot be reached, in
    both palettes."""
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []

    def save_picture(picture: QPixmap, name: str) -> None:
        path = out / f"{name}.png"
        picture.save(str(path))
        written.append(path)

    def save(widget: QWidget, name: str) -> None:
        save_picture(widget.grab(), name)

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        oss = SandboxProcess(root / "oss.sqlite3", "--without-groups")
        await asyncio.to_thread(oss.start)
        try:
            # the desktop's light palette (Fusion's), and a dark desktop's, as flagdesk makes
            # them readable (`ui.palette`)
            for palette_name, desktop in (("light", None), ("dark", dark_desktop_palette())):
                use_readable_palette(app, desktop)
                # journals of their own: the History of each shows that palette's changes
                os.environ["FLAGDESK_DATA_DIR"] = str(root / f"data-{palette_name}")
                # a database per palette: the steps change data (a saved user, say)
                session = Session(
                    ProfileStore(root / f"config-{palette_name}"),
                    sandbox_factory=functools.partial(
                        SandboxProcess, root / f"demo-{palette_name}.sqlite3", session_tokens=True
                    ),
                    # File > Connections offers another local sandbox (none is started here)
                    more_sandboxes=functools.partial(_numbered, root / f"demo-{palette_name}"),
                    health_interval=0,
                )
                session.avatars = no_pictures()
                window = MainWindow(session)
                window.resize(1100, 700)
                window.show()
                await session.open_sandbox()
                model = window.overview_model
                await until(lambda m=model: m.has_data and not m.busy)  # type: ignore[misc]
                # issue 38: the instance's statistics under the server's name
                instance = window.instance_model
                await until(lambda i=instance: i.statistics is not None)  # type: ignore[misc]
                await settle(window)
                save(window, f"main_window-{palette_name}")
                await _maintenance(window, palette_name, save)
                for name, key, step in STEPS:
                    window.show_page(key)
                    content = window.tool_pages[key].ensure_content()
                    if content is not None:
                        await step(content)
                    await settle(window)
                    save(window, f"{name}-{palette_name}")

                await _column_menu(window, palette_name, save_picture)
                await _act_and_look_back(window, session, palette_name, save)
                await _revive_and_delete(window, palette_name, save)
                await _confirmations(window, palette_name, save)
                # last of this palette's steps on the demo data: its group cannot be saved as it is
                await _hostile_group(window, root / f"demo-{palette_name}.sqlite3")
                await settle(window)
                save(window, f"groups-control-characters-{palette_name}")
                # issue 36: project access and who can do what where (on the demo data; it
                # leaves the connection on a played open-source release: reopened after)
                await _access(window, palette_name, save, root)
                await session.open_sandbox()
                # issue 38: the event log, with what the steps above changed in it
                await _events(window, session, palette_name, save,
                              root / f"demo-{palette_name}.sqlite3")  # fmt: skip
                # issue 38: the banners (it leaves the connection on the demo sandbox)
                await _banners(window, session, palette_name, save,
                               root / f"demo-{palette_name}.sqlite3")  # fmt: skip
                # issue 36: the token windows (they change the connection: before the others')
                await _tokens(window, session, palette_name, save,
                              root / f"demo-{palette_name}.sqlite3")  # fmt: skip
                # issue 36: the service accounts' window (a token of its own; then open source)
                await _service_accounts(window, session, palette_name, save,
                                        root / f"demo-{palette_name}.sqlite3")  # fmt: skip
                # issue 36: the roles' window (it changes the connection too)
                await _roles(window, session, palette_name, save,
                             root / f"demo-{palette_name}.sqlite3", root)  # fmt: skip
                # issue 36: the clean-up report's window (it changes the connection too)
                await _cleanup(window, session, palette_name, save, root,
                               root / f"demo-{palette_name}.sqlite3")  # fmt: skip
                # issue 37: the Compare window, on the demo sandbox as its Admin (the token
                # windows' step deleted every API token, the sandbox's own among them)
                await session.open_sandbox()
                pat = _personal_token(root / f"demo-{palette_name}.sqlite3", "admin")
                await session.open_spec(ConnectionSpec(session.url, pat, label="Demo sandbox"))
                assert session.ready, session.message
                await _compare(window, session, palette_name, save, root)

                await session.open_spec(ConnectionSpec(oss.url, oss.admin_token,
                                                       label="Open-source Unleash"))  # fmt: skip
                window.show_page("groups")
                await settle(window)
                save(window, f"groups-unavailable-{palette_name}")

                await session.open_spec(ConnectionSpec("http://127.0.0.1:9", "*:*.x",
                                                       label="Production"))  # fmt: skip
                window.show_page("archived_features")
                await settle(window)
                save(window, f"archived_features-not-connected-{palette_name}")
                window.show_page("overview")
                await until(lambda m=model: bool(m.error) and not m.busy)  # type: ignore[misc]
                await settle(window)
                save(window, f"main_window-error-{palette_name}")

                dialog = ConnectionDialog(session, window)
                dialog.show()
                await settle(dialog)
                save(dialog, f"connections-{palette_name}")
                dialog.close()
                window.close()
                await session.aclose()
        finally:
            use_readable_palette(app)
            await asyncio.to_thread(oss.stop)
    return written


def _numbered(stem: Path, number: int) -> SandboxProcess:
    """Local sandbox `number` of a picture's session: a database beside its first's."""
    return SandboxProcess(stem.with_name(f"{stem.name}-{number}.sqlite3"), session_tokens=True)


def main() -> int:
    args = sys.argv[1:]
    only = ""
    if "--only" in args:  # `--only events`, `--only banners`: one window's pictures
        at = args.index("--only")
        only = args[at + 1] if at + 1 < len(args) else ""
        del args[at : at + 2]
        if only not in ALONE:
            sys.exit(f"usage: python -m ui.screenshots [OUT_DIR] [--only {'|'.join(ALONE)}]")
    out = Path(args[0]) if args else Path("docs/screenshots")
    # the window layouts and data of a desktop would change the pictures, and the steps would
    # write into them: a folder of the run's own for both
    private = Path(tempfile.mkdtemp(prefix="flagdesk-screenshots-home-"))
    os.environ["FLAGDESK_CONFIG_DIR"] = str(private / "config")
    os.environ["FLAGDESK_DATA_DIR"] = str(private / "data")
    atexit.register(shutil.rmtree, private, True)
    app = QApplication(sys.argv[:1])
    app.setStyle("Fusion")  # the same look on every machine, so screenshots compare
    app.setQuitOnLastWindowClosed(False)  # each window is closed after its picture
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        written = loop.run_until_complete(shoot_alone(app, out, only) if only else shoot(app, out))
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
