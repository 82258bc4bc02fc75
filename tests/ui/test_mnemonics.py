"""No label of any window or dialog shows the "&" of a mnemonic it has no buddy for (the new
context field dialog's "&Legal values" did): every page of the main window on a sandbox, loaded,
and the dialogs its buttons open (New user…, New field…, the connections, About)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtWidgets import QDialog, QWidget

from app.viewmodels.session import Session
from sandbox.process import SandboxProcess
from tests.ui.mnemonics import shown_ampersands
from ui.about import AboutDialog
from ui.connection_dialog import ConnectionDialog
from ui.context_usage import ContextUsageViewer
from ui.main_window import MainWindow
from ui.users import UserEditor


def test_no_label_shows_the_ampersand_of_its_mnemonic(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess
) -> None:
    session = connect(sandbox)
    window = MainWindow(session)
    qtbot.addWidget(window)
    window.resize(1100, 700)
    window.show()
    problems: list[str] = []
    dialogs: list[QWidget] = []
    try:
        for key in ["overview", "history", *window.tool_pages]:
            window.show_page(key)
            content = window.tool_pages[key].ensure_content() if key in window.tool_pages else None
            model = getattr(content, "model", None)
            qtbot.waitUntil(lambda m=model: m is None or not m.busy, timeout=20_000)
            if isinstance(content, UserEditor):
                content.open_item(39)  # the form, filled
                content.on_new_button_clicked()
                dialogs.append(content.create_dialog)  # type: ignore[arg-type]
            if isinstance(content, ContextUsageViewer):
                content.on_new_button_clicked()
                qtbot.waitUntil(lambda c=content: c.dialog is not None, timeout=20_000)
                dialogs.append(content.dialog)  # type: ignore[arg-type]
            qtbot.wait(100)
            problems += [f"{key}: {p}" for p in shown_ampersands(window)]
        dialogs += [ConnectionDialog(session, window), AboutDialog(session, window)]
        for dialog in dialogs:
            dialog.show()
            problems += [f"{dialog.objectName()}: {p}" for p in shown_ampersands(dialog)]
            if isinstance(dialog, QDialog):
                dialog.reject()
    finally:
        window.close()
    assert len(dialogs) == 4
    assert problems == [], "\n".join(problems)
