"""The banners' window (`BannersView` over `BannersModel`, issue 38) against sandboxes of its own
over HTTP, the state read back from the server each time: the banners listed (the message's
first line as plain text, on or off, variant, sticky, link) with the selected one's message;
one created through the form and its confirmation, edited (a dialog link with its title and
text), switched off, deleted, and the deletion undone from the History (the window lists it
again, under a new id), each journaled; the form's errors (an empty message, a bad link, an
over-long link text, a dialog without its text) under their fields, the form open with what
was typed and nothing sent; and on a played open-source Unleash 8.2 the page unavailable with
the capability's reason."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from PySide6.QtCore import Qt

from app.actions.journal import JOURNAL_NAME, State, journal_folder, read_journal
from app.api.models import Banner, Banners
from app.viewmodels.banners import plain_first_line
from app.viewmodels.history import HistoryModel
from app.viewmodels.session import Session
from app.viewmodels.tools import LoadPhase
from sandbox import db
from sandbox.process import SandboxProcess
from tests.qt_fixtures import select_where
from ui.banners import BannerDialog, BannersView
from ui.states import StatePanel

BANNERS = "/api/admin/banners"


def http(sb: SandboxProcess) -> httpx.Client:
    return httpx.Client(base_url=sb.url, headers={"Authorization": sb.admin_token})


def served(sb: SandboxProcess) -> list[Banner]:
    with http(sb) as c:
        return Banners.model_validate(c.get(BANNERS).raise_for_status().json()).banners


def make_banner(sb: SandboxProcess, **body: Any) -> int:
    with http(sb) as c:
        answer = c.post(BANNERS, json=body)
        assert answer.status_code == 201, answer.text
        return int(answer.json()["id"])


def open_view(qtbot: Any, session: Session) -> BannersView:
    view = BannersView(session)
    qtbot.addWidget(view)
    view.resize(1100, 700)
    view.show()
    qtbot.waitUntil(lambda: view.model.phase not in (LoadPhase.WAITING, LoadPhase.LOADING)
                    and not view.model.busy, timeout=20_000)  # fmt: skip
    return view


def wait_idle(qtbot: Any, view: BannersView) -> None:
    qtbot.waitUntil(lambda: not view.model.acting and not view.model.busy, timeout=30_000)


def select(view: BannersView, banner_id: int) -> None:
    select_where(view.table.view, lambda r: r.id == banner_id)
    assert view.model.current is not None and view.model.current.id == banner_id


def confirm(qtbot: Any, view: BannersView, question: str) -> None:
    qtbot.waitUntil(lambda: view.confirmation is not None)
    box = view.confirmation
    assert box is not None and box.text() == question
    assert "test sandbox" in box.informativeText() and view.model.session.url in (
        box.informativeText())  # fmt: skip
    box.action_button.click()


def test_plain_first_line_takes_the_markdown_marks_off() -> None:
    assert plain_first_line("\n## **Upgrade** on [Friday](/x) at `10:00`\nmore") == (
        "Upgrade on Friday at 10:00")  # fmt: skip
    assert plain_first_line("- _one_ item") == "one item"
    assert plain_first_line("   \n") == ""


def test_banners_listed_then_made_edited_switched_deleted_and_brought_back(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, data_folder: Path
) -> None:
    first = make_banner(sandbox, message="**Maintenance** on *Saturday*\nfrom 06:00 UTC",
                        variant="warning", sticky=True, link="https://status.example.com",
                        linkText="Status page")  # fmt: skip
    view = open_view(qtbot, connect(sandbox))
    model = view.model.table
    assert view.states.state == StatePanel.CONTENT
    assert [c.title for c in model.columns] == [
        "Message", "On/Off", "Variant", "Sticky", "Link", "Created", "Id"]  # fmt: skip
    (row,) = model.all_rows
    assert (row.id, row.message, row.on, row.variant, row.sticky, row.link) == (
        first,
        "Maintenance on Saturday",
        "on",
        "warning",
        True,
        "https://status.example.com",
    )
    assert model.text(0, 3) == "yes"
    assert view.table.count_label.text() == "1 banner"
    assert not view.edit_button.isEnabled()
    assert view.edit_button.toolTip() == "Select the banner to edit."
    select(view, first)
    assert view.current_label.text() == (
        f"Banner {first} (warning, sticky), shown to every user of the server's UI. Its link "
        "“Status page” goes to https://status.example.com. The message:"
    )
    assert view.message_view.markdown == served(sandbox)[0].message
    assert view.switch_button.text() == "Switch o&ff"

    # created through the form, after its confirmation naming the server
    qtbot.mouseClick(view.create_button, Qt.MouseButton.LeftButton)
    form = view.dialog
    assert isinstance(form, BannerDialog) and form.isVisible()
    assert form.enabled_check.isChecked() and form.variant_combo.currentText() == "info"
    assert not form.link_text_edit.isEnabled() and not form.dialog_edit.isEnabled()
    form.message_edit.setPlainText("New **release** is out")
    form.variant_combo.setCurrentText("success")
    form.save_button.click()
    confirm(qtbot, view, "Create the banner?")
    qtbot.waitUntil(lambda: view.dialog is None, timeout=20_000)
    wait_idle(qtbot, view)
    made = next(b for b in served(sandbox) if b.id != first)
    assert (made.message, made.variant, made.enabled, made.sticky) == (
        "New **release** is out", "success", True, False)  # fmt: skip
    assert view.model.outcome == (f"Created the banner “New **release** is out” (id {made.id}) "
                                  f"on {sandbox.url}.")  # fmt: skip
    qtbot.waitUntil(lambda: len(view.model.table.all_rows) == 2, timeout=20_000)

    # edited: a link to a dialog, with its title and text
    select(view, made.id)
    view.edit_button.click()
    form = view.dialog
    assert isinstance(form, BannerDialog)
    assert form.message_edit.toPlainText() == "New **release** is out"
    assert form.variant_combo.currentText() == "success"
    form.link_edit.setText("dialog")
    assert form.dialog_edit.isEnabled() and form.link_text_edit.isEnabled()
    form.link_text_edit.setText("What's new")
    form.dialog_title_edit.setText("Release 2.0")
    form.dialog_edit.setPlainText("- faster\n- **safer**")
    form.save_button.click()
    confirm(qtbot, view, "Change the banner?")
    qtbot.waitUntil(lambda: view.dialog is None, timeout=20_000)
    wait_idle(qtbot, view)
    edited = next(b for b in served(sandbox) if b.id == made.id)
    assert (edited.link, edited.linkText, edited.dialogTitle, edited.dialog) == (
        "dialog", "What's new", "Release 2.0", "- faster\n- **safer**")  # fmt: skip
    assert edited.message == made.message and edited.variant == "success"

    # switched off: the whole banner sent, only `enabled` changed
    qtbot.waitUntil(lambda: not view.model.busy, timeout=20_000)
    select(view, made.id)
    assert view.switch_button.isEnabled()
    view.switch_button.click()
    confirm(qtbot, view, "Change the banner?")
    wait_idle(qtbot, view)
    off = next(b for b in served(sandbox) if b.id == made.id)
    assert off.enabled is False
    assert off.model_copy(update={"enabled": True}) == edited
    assert view.model.outcome.startswith("Switched off the banner “New **release** is out”")
    qtbot.waitUntil(lambda: any(r.id == made.id and r.on == "off"
                                for r in view.model.table.all_rows), timeout=20_000)  # fmt: skip
    select(view, made.id)
    assert view.switch_button.text() == "Switch &on"

    # deleted after its confirmation, a snapshot written first
    view.delete_button.click()
    confirm(qtbot, view, "Delete the banner?")
    wait_idle(qtbot, view)
    assert [b.id for b in served(sandbox)] == [first]
    assert view.model.outcome.startswith(
        f"Deleted the banner “New **release** is out” (id {made.id}) on {sandbox.url}. Snapshot: "
    )
    qtbot.waitUntil(lambda: [r.id for r in view.model.table.all_rows] == [first],
                    timeout=20_000)  # fmt: skip
    entries = read_journal(journal_folder("test sandbox") / JOURNAL_NAME)
    assert [(e.action, e.state) for e in entries] == [
        ("banners.create", State.DONE), ("banners.edit", State.DONE),
        ("banners.edit", State.DONE), ("banners.delete", State.DONE)]  # fmt: skip

    # the deletion undone from the History: made again (a new id), and the window shows it
    history = HistoryModel(view.model.session)
    try:
        history.refresh()
        qtbot.waitUntil(lambda: len(history.entries) == 4, timeout=20_000)
        history.select(next(e for e in history.entries if e.action == "banners.delete"))
        with qtbot.waitSignal(history.undo_planned, timeout=20_000) as planned:
            history.plan_undo()
        task = history.undo(planned.args[0])
        assert task is not None
        qtbot.waitUntil(lambda: not history.undoing, timeout=20_000)
        assert history.undo_outcome.startswith("Undone:"), history.undo_error
    finally:
        history.close()
    (again,) = [b for b in served(sandbox) if b.id != first]
    assert again.id > made.id
    assert again.model_copy(update={"id": made.id, "createdAt": off.createdAt}) == off
    qtbot.waitUntil(lambda: {r.id for r in view.model.table.all_rows} == {first, again.id},
                    timeout=20_000)  # fmt: skip


def test_the_form_says_what_is_wrong_under_the_field_and_keeps_what_was_typed(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, data_folder: Path
) -> None:
    view = open_view(qtbot, connect(sandbox))
    assert view.states.state == StatePanel.EMPTY
    view.create_button.click()
    form = view.dialog
    assert isinstance(form, BannerDialog)

    form.message_edit.setPlainText("   ")
    form.save_button.click()  # no message: said under it, nothing asked
    assert view.confirmation is None
    assert form.message_error.isVisible()
    assert form.message_error.text() == "The banner needs a message."
    assert form.message_edit.hasFocus() or not form.isActiveWindow()

    form.message_edit.setPlainText("Read the **notes**")
    form.link_edit.setText("notes please")
    form.link_text_edit.setText("x" * 300)
    form.save_button.click()
    assert view.confirmation is None
    assert not form.message_error.isVisible() and form.link_error.isVisible()
    assert form.link_error.text() == (
        "The link “notes please” is neither a web address "
        "(https://…), a path on the server (/…) nor “dialog”."
    )

    form.link_edit.setText("/projects/default")
    # Enter in a one-line field saves, as in every other window's form; in the message it is a
    # new line
    qtbot.keyClick(form.link_edit, Qt.Key.Key_Return)
    assert view.confirmation is None
    assert not form.link_error.isVisible() and form.link_text_error.isVisible()
    assert form.link_text_error.text() == (
        "Link text: 300 characters, over the 255 the server takes.")  # fmt: skip

    form.link_text_edit.setText("Notes")
    form.link_edit.setText("dialog")
    form.save_button.click()
    assert view.confirmation is None
    assert form.dialog_error.text() == "A link to a dialog needs the dialog's text."

    form.clear_errors()  # a save would say the dialog's text is missing again
    form.message_edit.setFocus()
    form.message_edit.moveCursor(form.message_edit.textCursor().MoveOperation.End)
    qtbot.keyClick(form.message_edit, Qt.Key.Key_Return)
    assert form.message_edit.toPlainText() == "Read the **notes**\n"
    assert form.isVisible() and form.dialog_error.isHidden()
    form.message_edit.setPlainText("Read the **notes**")

    # nothing was lost, nothing sent
    assert form.message_edit.toPlainText() == "Read the **notes**"
    assert (form.link_edit.text(), form.link_text_edit.text()) == ("dialog", "Notes")
    assert served(sandbox) == []
    entries = read_journal(journal_folder("test sandbox") / JOURNAL_NAME)
    assert entries == []

    # Escape closes the form, as every other window's form
    qtbot.keyClick(form, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: view.dialog is None)


def test_an_edit_that_changes_nothing_says_so_and_sends_nothing(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, data_folder: Path
) -> None:
    banner = make_banner(sandbox, message="Hello")  # no variant: an info banner, kept so
    view = open_view(qtbot, connect(sandbox))
    select(view, banner)
    view.edit_button.click()
    form = view.dialog
    assert isinstance(form, BannerDialog)
    form.save_button.click()
    assert view.confirmation is None
    assert form.form_error.isVisible()
    assert form.form_error.text() == (f"The banner “Hello” (id {banner}) is that already: "
                                      "nothing to change.")  # fmt: skip
    assert read_journal(journal_folder("test sandbox") / JOURNAL_NAME) == []
    form.reject()


def test_a_banner_holding_control_characters_is_shown_and_only_deleted(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, data_folder: Path
) -> None:
    """A server may hold texts its own form refuses: the banner is listed, its message shown
    as text; Edit… and Switch say why they cannot send it back, Delete… still can."""
    conn = db.connect(sandbox.db)
    try:
        with conn:
            body = {"message": "Hi \x1b[2J there", "enabled": True, "linkText": "\x1b]0;x\x07"}
            conn.execute("INSERT INTO banners(body, created_at) VALUES(?, 0)", (json.dumps(body),))
    finally:
        conn.close()
    view = open_view(qtbot, connect(sandbox))
    (row,) = view.model.table.all_rows
    select(view, row.id)
    reason = (
        f"The banner “Hi \x1b[2J there” (id {row.id}) holds control characters the server's "
        "form refuses: it cannot be sent back as it is (it can be deleted)."
    )
    for button in (view.edit_button, view.switch_button):
        assert not button.isEnabled() and button.toolTip() == reason
    view.on_switch_button_clicked()
    view.on_edit_button_clicked()
    assert view.confirmation is None and view.dialog is None
    assert view.delete_button.isEnabled()
    view.delete_button.click()
    confirm(qtbot, view, "Delete the banner?")
    wait_idle(qtbot, view)
    assert served(sandbox) == []


@pytest.fixture
def open_source(tmp_path: Path) -> Iterator[SandboxProcess]:
    sb = SandboxProcess(tmp_path / "oss.sqlite3", "--demo", "--as-version", "8.2")
    sb.start()
    try:
        yield sb
    finally:
        sb.stop()


def test_open_source_has_no_banners_and_says_why(
    qtbot: Any, connect: Callable[..., Session], open_source: SandboxProcess
) -> None:
    session = connect(open_source)
    view = open_view(qtbot, session)
    caps = session.capabilities
    assert caps is not None
    reason = caps.operation("banners").reason
    assert reason and "Enterprise" in reason
    assert view.model.phase is LoadPhase.UNAVAILABLE
    assert view.states.state == StatePanel.EMPTY  # the unavailable page: its title and why
    assert view.states.empty_title.text() == "Not available"
    assert view.states.empty_label.text() == reason
    assert not view.create_button.isEnabled()
    assert "Enterprise" in view.create_button.toolTip()
