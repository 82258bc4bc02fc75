"""Changing context fields in the context usage window (`ContextUsageViewer` over
`ContextUsageModel`) against sandboxes over HTTP, state read back from the server: create a
field; a refused form (taken name, a name that is not URL friendly) keeps what was typed; edit
its legal values; delete an unused field after the confirmation (keyboard only); a field in use
is refused with the reason and its usage, nothing sent; cancel changes nothing; undo of an edit
and of a deletion, each journaled; a 409 that comes anyway; buttons disabled with their reasons
(no field picked, a token that cannot change fields)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from app.actions.journal import JOURNAL_NAME, State, journal_folder, read_journal
from app.api import errors as e
from app.api.client import AdminClient
from app.api.models import Constraint, ContextField, CreateFeature, CreateFeatureStrategy
from app.changes import Changes, Resource
from app.registry import CREATE_CONTEXT_FIELD
from app.viewmodels.context_usage import CONTENT
from app.viewmodels.session import Session
from sandbox.process import SandboxProcess
from tests.ui.mnemonics import shown_ampersands
from ui.context_usage import ContextUsageViewer, FieldConfirmation, FieldDialog
from ui.tool_page import ToolPage


@pytest.fixture
def window(
    qtbot: Any,
    connect: Callable[..., Session],
    sandbox: SandboxProcess,
    tool_page: Callable[..., ToolPage],
    data_folder: Path,
) -> ContextUsageViewer:
    """The window on a sandbox of this test's own, its context fields loaded."""
    page = tool_page("context_usage", connect(sandbox))
    content = page.tool_content
    assert isinstance(content, ContextUsageViewer)
    qtbot.waitUntil(lambda: bool(content.model.fields.choices), timeout=20_000)
    return content


def read(arun: Any, content: ContextUsageViewer, name: str) -> ContextField | None:
    """The field as the server has it now (None: gone)."""
    client: AdminClient = arun(content.session.client())
    try:
        return arun(client.get_context_field(name))
    except e.NotFound:
        return None


def show(qtbot: Any, content: ContextUsageViewer, name: str) -> None:
    content.picker.combo.setEditText(name)
    qtbot.keyClick(content.picker.combo.lineEdit(), Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: content.model.loaded_field == name and not content.model.busy,
                    timeout=20_000)  # fmt: skip
    qtbot.waitUntil(lambda: content.edit_button.isEnabled())


def open_dialog(qtbot: Any, button: Any, content: ContextUsageViewer) -> FieldDialog:
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: content.dialog is not None and content.dialog.isVisible(),
                    timeout=20_000)  # fmt: skip
    assert content.dialog is not None
    return content.dialog


def confirmation(qtbot: Any, content: ContextUsageViewer) -> FieldConfirmation:
    qtbot.waitUntil(lambda: content.confirmation is not None, timeout=20_000)
    box = content.confirmation
    assert box is not None and box.isVisible()
    assert box.defaultButton() is box.cancel_button  # Enter does not change anything
    return box


def confirm(qtbot: Any, content: ContextUsageViewer, box: FieldConfirmation) -> None:
    box.confirm_button.setFocus()
    qtbot.keyClick(box.confirm_button, Qt.Key.Key_Space)  # keyboard only
    qtbot.waitUntil(lambda: not content.model.changing and content.confirmation is None,
                    timeout=20_000)  # fmt: skip


def entries(content: ContextUsageViewer) -> list[Any]:
    return read_journal(journal_folder("test sandbox") / JOURNAL_NAME)


def test_create_a_field_read_back(
    qtbot: Any, window: ContextUsageViewer, arun: Any, sandbox: SandboxProcess
) -> None:
    content = window
    changes: list[Changes] = []
    content.session.data_changed.connect(lambda c, _source: changes.append(c))
    dialog = open_dialog(qtbot, content.new_button, content)
    assert dialog.windowTitle() == "New context field" and not dialog.name_edit.isReadOnly()
    qtbot.keyClicks(dialog.name_edit, "plan")
    qtbot.keyClicks(dialog.description_edit, "The customer's plan")
    dialog.stickiness_box.setChecked(True)
    dialog.add_value("gold", "Top tier")
    dialog.add_value("free", "")
    dialog.add_value("", "")  # an empty row is left out
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    box = confirmation(qtbot, content)
    assert box.text() == "Create the context field “plan”?"
    said = box.informativeText().split("\n\n")
    assert said[0] == (f"The context field “plan” will be created on {sandbox.url} (connection "
                       "“test sandbox”): description “The customer's plan”, stickiness on, "
                       "2 legal values (gold, free).")  # fmt: skip
    assert read(arun, content, "plan") is None  # nothing sent while asking
    confirm(qtbot, content, box)
    qtbot.waitUntil(lambda: content.dialog is None)
    assert content.outcome_label.text() == "Created the context field “plan”."
    field = read(arun, content, "plan")
    assert field is not None and field.stickiness is True
    assert (field.description, [(v.value, v.description) for v in field.legalValues]) == (
        "The customer's plan", [("gold", "Top tier"), ("free", None)])  # fmt: skip
    assert changes == [Changes.of(Resource.CONTEXT_FIELDS, "plan")]
    qtbot.waitUntil(lambda: "plan" in [c.value for c in content.model.fields.choices])
    (entry,) = entries(content)
    assert (entry.action, entry.ids, entry.state, entry.status) == (
        "context_fields.create", ["plan"], State.DONE, 201)  # fmt: skip
    assert not content.undo_button.isVisible()  # a creation is taken back by deleting


def test_a_refused_form_keeps_what_was_typed(
    qtbot: Any, window: ContextUsageViewer, arun: Any
) -> None:
    content = window
    dialog = open_dialog(qtbot, content.new_button, content)
    qtbot.keyClicks(dialog.name_edit, "has space")
    qtbot.keyClicks(dialog.description_edit, "typed by hand")
    dialog.add_value("a", "first")
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    assert content.confirmation is None  # refused before any question
    assert dialog.isVisible() and dialog.error_label.isVisible()
    assert dialog.error_label.text().startswith("Name: must be URL friendly")
    assert dialog.name_edit.text() == "has space"

    # a name the server already has: it answers 409, the form stays with everything typed
    dialog.name_edit.setText("region")
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    confirm(qtbot, content, confirmation(qtbot, content))
    qtbot.waitUntil(lambda: dialog.error_label.isVisible())
    assert dialog.error_label.text().startswith("A context field named “region” already exists")
    assert content.dialog is dialog and dialog.isVisible()
    typed = (dialog.name_edit.text(), dialog.description_edit.text())
    assert typed == ("region", "typed by hand")
    assert dialog.draft().legal_values == [("a", "first")]
    region = read(arun, content, "region")
    assert region is not None and region.description != "typed by hand"
    (entry,) = entries(content)
    assert (entry.state, entry.status) == (State.FAILED, 409)

    qtbot.keyClick(dialog, Qt.Key.Key_Escape)  # Cancel: the form goes, nothing more is sent
    qtbot.waitUntil(lambda: content.dialog is None)
    assert content.model.form is None and len(entries(content)) == 1


def test_edit_legal_values_read_back_then_undo(
    qtbot: Any, window: ContextUsageViewer, arun: Any, sandbox: SandboxProcess
) -> None:
    content = window
    original = read(arun, content, "region")
    assert original is not None and [v.value for v in original.legalValues] == [
        "eu-west", "eu-central", "us-east", "ap-south"]  # fmt: skip
    show(qtbot, content, "region")
    dialog = open_dialog(qtbot, content.edit_button, content)
    assert dialog.name_edit.isReadOnly() and dialog.name_edit.text() == "region"
    assert dialog.values.rowCount() == 4
    dialog.values.setCurrentCell(3, 0)  # ap-south
    qtbot.mouseClick(dialog.remove_button, Qt.MouseButton.LeftButton)
    dialog.values.item(0, 1).setText("Dublin")
    dialog.add_value("sa-east", "São Paulo")
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    box = confirmation(qtbot, content)
    assert box.text() == "Change the context field “region”?"
    said = box.informativeText().split("\n\n")
    assert said[0] == (f"The context field “region” will be changed on {sandbox.url} "
                       "(connection “test sandbox”): legal values added: sa-east; legal values "
                       "removed: ap-south; descriptions changed: eu-west.")  # fmt: skip
    snapshot = box.plan.snapshot
    assert snapshot is not None and said[2] == (
        f"A snapshot of the field as it is now is written first to {snapshot}.")  # fmt: skip
    assert said[3] == "Undo, offered right after, puts the previous field back."
    confirm(qtbot, content, box)
    qtbot.waitUntil(lambda: content.dialog is None)
    edited = read(arun, content, "region")
    assert edited is not None
    assert [(v.value, v.description) for v in edited.legalValues] == [
        ("eu-west", "Dublin"), ("eu-central", "Frankfurt"), ("us-east", "Virginia"),
        ("sa-east", "São Paulo")]  # fmt: skip
    # the sort order is the server's: Unleash 6.10 to 8.2 (and the sandbox) set it to 0 on a
    # PUT whatever is sent (tests/compat/test_versions.py)
    assert (edited.stickiness, edited.sortOrder) == (original.stickiness, 0)
    assert json.loads(snapshot.read_text())["legalValues"][3]["value"] == "ap-south"

    assert content.undo_button.isVisible() and content.undo_button.isEnabled()
    qtbot.mouseClick(content.undo_button, Qt.MouseButton.LeftButton)
    box = confirmation(qtbot, content)
    assert box.text() == "Undo the last change to the context field “region”?"
    assert box.informativeText().startswith("The context field “region” will be put back as it "
                                            "was on ")  # fmt: skip
    confirm(qtbot, content, box)
    back = read(arun, content, "region")
    assert back is not None and back.legalValues == original.legalValues
    assert content.outcome_label.text().startswith("Undone: the context field “region” is back.")
    assert not content.undo_button.isVisible()
    first, undo = entries(content)
    assert (first.action, undo.action) == ("context_fields.edit", "context_fields.edit")
    assert undo.state is State.DONE and undo.before["undoes"] == first.id


def test_delete_an_unused_field_then_undo(
    qtbot: Any, window: ContextUsageViewer, arun: Any, sandbox: SandboxProcess
) -> None:
    content = window
    before = read(arun, content, "tenantId")
    assert before is not None
    show(qtbot, content, "tenantId")
    qtbot.mouseClick(content.delete_button, Qt.MouseButton.LeftButton)
    box = confirmation(qtbot, content)
    assert box.text() == "Delete the context field “tenantId”?"
    said = box.informativeText().split("\n\n")
    assert said[0] == (f"The context field “tenantId” will be deleted on {sandbox.url} "
                       "(connection “test sandbox”). No strategy uses it.")  # fmt: skip
    assert said[-1].startswith("Undo, offered right after, creates it again from the snapshot")
    confirm(qtbot, content, box)
    assert read(arun, content, "tenantId") is None
    assert content.outcome_label.text().startswith("Deleted the context field “tenantId”.")
    (entry,) = entries(content)
    assert (entry.action, entry.state, entry.status) == ("context_fields.delete", State.DONE, 200)
    snapshot = journal_folder("test sandbox") / entry.before["snapshot"]
    assert json.loads(snapshot.read_text())["description"] == before.description

    qtbot.mouseClick(content.undo_button, Qt.MouseButton.LeftButton)
    box = confirmation(qtbot, content)
    assert box.informativeText().startswith(
        "The context field “tenantId” will be created again from its snapshot on "
    )
    confirm(qtbot, content, box)
    again = read(arun, content, "tenantId")
    assert again is not None
    assert (again.description, again.stickiness, again.sortOrder) == (
        before.description, before.stickiness, before.sortOrder)  # fmt: skip
    assert [x.action for x in entries(content)] == ["context_fields.delete",
                                                    "context_fields.create"]  # fmt: skip


def test_a_field_in_use_is_refused_with_the_reason_and_nothing_sent(
    qtbot: Any, window: ContextUsageViewer, arun: Any, data_folder: Path
) -> None:
    content = window
    show(qtbot, content, "region")
    qtbot.mouseClick(content.delete_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: content.model.outcome_error != "", timeout=20_000)
    assert content.confirmation is None
    text = content.outcome_label.text()
    assert text.startswith("The context field “region” cannot be deleted: ")
    assert text.endswith("Nothing was sent.")
    assert content.model.state == CONTENT and content.tree.model().rowCount() > 0  # the usage
    assert read(arun, content, "region") is not None
    assert not data_folder.exists()  # no snapshot, no journal


def test_cancel_changes_nothing(
    qtbot: Any, window: ContextUsageViewer, arun: Any, data_folder: Path
) -> None:
    content = window
    show(qtbot, content, "tenantId")
    qtbot.mouseClick(content.delete_button, Qt.MouseButton.LeftButton)
    box = confirmation(qtbot, content)
    qtbot.keyClick(box, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: content.confirmation is None)
    assert not box.confirmed and not content.model.changing
    dialog = open_dialog(qtbot, content.edit_button, content)
    dialog.description_edit.setText("changed, then cancelled")
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    qtbot.keyClick(confirmation(qtbot, content), Qt.Key.Key_Return)  # Enter: Cancel
    qtbot.waitUntil(lambda: content.confirmation is None)
    assert dialog.isVisible()  # back at the form, as typed
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: content.dialog is None)
    field = read(arun, content, "tenantId")
    assert field is not None and field.description != "changed, then cancelled"
    assert not data_folder.exists()
    assert content.outcome_label.text() == "" and not content.undo_button.isVisible()


def test_buttons_say_why_they_cannot_be_used(qtbot: Any, window: ContextUsageViewer) -> None:
    content = window
    assert content.new_button.isEnabled()
    for button in (content.edit_button, content.delete_button):
        assert not button.isEnabled()
        assert button.toolTip() == "Pick one of the server's context fields first."
    content.picker.combo.setEditText("noSuchField")
    qtbot.keyClick(content.picker.combo.lineEdit(), Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: content.model.loaded_field == "noSuchField")
    assert not content.delete_button.isEnabled()


def test_a_409_that_comes_anyway_is_shown_and_the_usage_reloaded(
    qtbot: Any, window: ContextUsageViewer, arun: Any
) -> None:
    """A strategy starts using the field between the check and the request: the server's 409
    is shown as its message, the journal says failed, and the usage is read again."""
    content = window
    show(qtbot, content, "tenantId")
    qtbot.mouseClick(content.delete_button, Qt.MouseButton.LeftButton)
    box = confirmation(qtbot, content)
    client: AdminClient = arun(content.session.client())
    arun(client.create_feature("default", CreateFeature(name="race-flag")))
    arun(client.add_strategy("default", "race-flag", "development", CreateFeatureStrategy(
        name="default",
        constraints=[Constraint(contextName="tenantId", operator="IN", values=["acme"])],
    )))  # fmt: skip
    confirm(qtbot, content, box)
    assert content.outcome_label.text().startswith(
        "409 ConflictError (DELETE /api/admin/context/tenantId): This context field is in use"
    )
    assert read(arun, content, "tenantId") is not None
    (entry,) = entries(content)
    assert (entry.state, entry.status) == (State.FAILED, 409)
    assert not content.undo_button.isVisible()
    qtbot.waitUntil(lambda: not content.model.busy and [s.featureName for s in
                    content.model.strategies] == ["race-flag"], timeout=20_000)  # fmt: skip


def test_a_token_that_cannot_change_fields_sees_the_buttons_disabled_with_why(
    qtbot: Any,
    connect: Callable[..., Session],
    demo_sandbox: SandboxProcess,
    tool_page: Callable[..., ToolPage],
) -> None:
    session = connect(demo_sandbox, demo_sandbox.client_token)  # a client token: no admin API
    page = tool_page("context_usage", session)
    content = page.tool_content
    assert isinstance(content, ContextUsageViewer)
    caps = session.capabilities
    assert caps is not None
    reason = caps.action(CREATE_CONTEXT_FIELD).reason
    assert reason and not caps.action(CREATE_CONTEXT_FIELD).available
    # the whole tool is out of reach for this token (the page says so in its banner); its
    # actions' buttons are disabled with the registry's reason all the same
    for button in (content.new_button, content.edit_button, content.delete_button):
        assert not button.isEnabled() and button.toolTip() == reason
    content.model.new_field()
    assert content.model.form is None and content.dialog is None


def test_the_form_s_labels_give_their_mnemonics(qtbot: Any, window: ContextUsageViewer) -> None:
    """ "&Legal values" showed its ampersand (a label without a buddy): no label of the form
    shows one, and Alt+L goes to the legal values."""
    dialog = open_dialog(qtbot, window.new_button, window)
    assert shown_ampersands(dialog) == []
    dialog.activateWindow()  # mnemonics are the active window's
    qtbot.waitUntil(lambda: QApplication.activeWindow() is dialog)
    dialog.name_edit.setFocus()
    qtbot.keyClick(dialog, Qt.Key.Key_L, Qt.KeyboardModifier.AltModifier)
    assert dialog.focusWidget() is dialog.values
    qtbot.keyClick(dialog, Qt.Key.Key_N, Qt.KeyboardModifier.AltModifier)
    assert dialog.focusWidget() is dialog.name_edit
