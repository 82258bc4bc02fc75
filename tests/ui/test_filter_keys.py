"""Down in a list's filter box goes to the list, in every window: the table (or the context
usage's tree) takes the focus, its first row current and selected when none was; a row already
current stays so."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtWidgets import QAbstractItemView, QApplication, QLineEdit

from app.viewmodels.session import Session
from sandbox.process import SandboxProcess
from ui.main_window import MainWindow


def test_down_in_every_filter_box_goes_to_its_list(
    qtbot: Any, connect: Callable[..., Session],
    demo_sandbox: SandboxProcess,
) -> None:  # fmt: skip
    session = connect(demo_sandbox)
    window = MainWindow(session)
    qtbot.addWidget(window)
    window.resize(1100, 700)
    window.show()
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    went: list[str] = []
    try:
        for key in ["history", *window.tool_pages]:
            window.show_page(key)
            page = window.tool_pages.get(key)
            content = page.ensure_content() if page is not None else None
            if key in ("archived_features", "context_usage"):
                content.open_item("web-shop" if key == "archived_features" else "region")  # type: ignore[union-attr]
            model = getattr(content, "model", None)
            qtbot.waitUntil(lambda m=model: m is None or not m.busy, timeout=20_000)
            qtbot.wait(100)
            # a box that is off (the service accounts' tokens before an account is chosen)
            # takes no keys
            boxes = [e for e in window.findChildren(QLineEdit)
                     if e.objectName().endswith("Filter") and e.isVisible()
                     and e.isEnabled()]  # fmt: skip
            for box in boxes:
                box.setFocus()
                assert box.hasFocus()
                qtbot.keyClick(box, Qt.Key.Key_Down)
                view = QApplication.focusWidget()
                assert isinstance(view, QAbstractItemView), (key, box.objectName(), view)
                rows = view.model().rowCount()
                if rows:
                    current = view.currentIndex()
                    assert current.isValid() and current.row() == 0, (key, box.objectName())
                    assert view.selectionModel().isRowSelected(0, current.parent())
                    # back in the box, Down again: the row current stays so
                    if rows > 2:
                        flags = (QItemSelectionModel.SelectionFlag.ClearAndSelect
                                 | QItemSelectionModel.SelectionFlag.Rows)  # fmt: skip
                        view.selectionModel().setCurrentIndex(view.model().index(2, 0), flags)
                        box.setFocus()
                        qtbot.keyClick(box, Qt.Key.Key_Down)
                        assert QApplication.focusWidget() is view
                        assert view.currentIndex().row() == 2
                went.append(f"{key}:{box.objectName()}")
    finally:
        window.close()
    # the lists of the windows with data: the History, the groups, the users, the inactive
    # users, the archived flags and the strategies using a context field
    assert len(went) >= 6, went
