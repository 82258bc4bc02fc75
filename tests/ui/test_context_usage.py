"""The context usage viewer against real sandboxes: the strategies that use a field, grouped
project > feature > environment · strategy with counts; a field no strategy uses; an unknown
field; the filter and Ctrl+F; Ctrl+C and the Copy button; CSV export; F5; and a server that goes
away (error, Retry)."""

from __future__ import annotations

import csv
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QWidget

from app.api.client import AdminClient
from app.api.models import Constraint, ContextFieldStrategy, CreateFeature, CreateFeatureStrategy
from app.viewmodels.context_usage import CONTENT, EMPTY, ERROR, IDLE, LOADING, summary
from app.viewmodels.session import Session
from sandbox.process import SandboxProcess
from ui.context_usage import STRATEGY_ROLE, ContextUsageViewer
from ui.tool_page import ToolPage


@pytest.fixture
def open_page(tool_page: Callable[..., ToolPage]) -> Callable[[Session], ToolPage]:
    """`open_page(session)`: the context usage page, shown, its window built."""

    def make(session: Session) -> ToolPage:
        page = tool_page("context_usage", session)
        assert isinstance(page.tool_content, ContextUsageViewer)
        return page

    return make


def viewer(page: ToolPage) -> ContextUsageViewer:
    assert isinstance(page.tool_content, ContextUsageViewer)
    return page.tool_content


def wait_state(qtbot: Any, content: ContextUsageViewer, state: str, timeout: int = 20_000) -> None:
    qtbot.waitUntil(lambda: content.model.state == state, timeout=timeout)
    assert content.states.state == {CONTENT: "content", ERROR: "error"}.get(state, "empty")


def choose(qtbot: Any, content: ContextUsageViewer, field: str) -> None:
    """Put a field's name in the picker and press Enter (set, not typed: typed keys open the
    completer's popup, which the offscreen platform cannot raise)."""
    content.picker.combo.setEditText(field)
    qtbot.keyClick(content.picker.combo.lineEdit(), Qt.Key.Key_Return)


def press(
    qtbot: Any, page: ToolPage, key: Qt.Key, modifier: Any = Qt.KeyboardModifier.NoModifier
) -> None:
    page.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is page)
    viewer(page).tree.setFocus()
    qtbot.keyClick(viewer(page).tree, key, modifier)


def tree_rows(content: ContextUsageViewer) -> list[tuple[int, str, str]]:
    """Every row of the tree, depth first: (depth, text, count column)."""
    model = content.items
    out: list[tuple[int, str, str]] = []

    def walk(parent: QModelIndex, depth: int) -> None:
        for row in range(model.rowCount(parent)):
            index = model.index(row, 0, parent)
            out.append((depth, str(index.data()), str(index.siblingAtColumn(1).data() or "")))
            walk(index, depth + 1)

    walk(QModelIndex(), 0)
    return out


def expected_rows(strategies: list[ContextFieldStrategy]) -> list[tuple[int, str, str]]:
    """The tree the viewer should show for `strategies`, made here independently."""
    projects: dict[str, dict[str, list[ContextFieldStrategy]]] = {}
    for s in strategies:
        assert s.projectId and s.featureName
        projects.setdefault(s.projectId, {}).setdefault(s.featureName, []).append(s)
    out: list[tuple[int, str, str]] = []
    for project in sorted(projects, key=str.casefold):
        features = projects[project]
        out.append((0, project, str(sum(len(v) for v in features.values()))))
        for feature in sorted(features, key=str.casefold):
            out.append((1, feature, str(len(features[feature]))))
            out.extend((2, f"{s.environment} · {s.strategyName}", "") for s in features[feature])
    return out


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# ---------------------------------------------------------------------------- the happy path


def test_the_strategies_that_use_a_field_grouped_with_counts(
    qtbot: Any,
    arun: Callable[..., Any],
    connect: Callable[..., Session],
    demo_sandbox: SandboxProcess,
    open_page: Callable[[Session], ToolPage],
) -> None:
    session = connect(demo_sandbox)
    client: AdminClient = arun(session.client())
    expected = arun(client.context_strategies("region")).strategies
    assert len(expected) > 5

    page = open_page(session)
    content = viewer(page)
    model = content.model
    assert model.state == IDLE
    assert content.states.empty_title.text() == "Choose a context field"
    qtbot.waitUntil(lambda: bool(model.fields.choices))
    assert "region" in [
        content.picker.combo.itemText(i) for i in range(content.picker.combo.count())
    ]

    choose(qtbot, content, "region")
    assert model.state == LOADING and content.states.state == "loading"
    assert content.states.loading_label.text() == (
        "Looking for the strategies that use the context field “region”…"
    )
    wait_state(qtbot, content, CONTENT)

    projects = {s.projectId for s in expected}
    features = {(s.projectId, s.featureName) for s in expected}
    counts = (
        f"{len(expected)} strategies in {len(features)} features across {len(projects)} projects"
    )
    assert content.count_label.text() == counts
    assert summary(expected) == counts
    assert tree_rows(content) == expected_rows(expected)
    # expanded: every leaf is on screen without a click
    assert all(content.tree.isExpanded(content.items.index(r, 0)) for r in range(len(projects)))
    leaf_parent = content.items.index(0, 0)
    assert content.tree.isExpanded(content.items.index(0, 0, leaf_parent))
    ids = {s.id for s in expected}
    leaf = content.items.index(0, 0, content.items.index(0, 0, leaf_parent))
    strategy = leaf.data(STRATEGY_ROLE)
    assert isinstance(strategy, ContextFieldStrategy) and strategy.id in ids
    assert f"Strategy id: {strategy.id}" == leaf.data(Qt.ItemDataRole.ToolTipRole)

    for widget in content.findChildren(QWidget):
        if widget.focusPolicy() != Qt.FocusPolicy.NoFocus and widget.isVisible():
            assert widget.objectName().startswith("contextUsage"), widget
            assert widget.accessibleName() or widget.objectName().endswith(
                ("Button", "Filter", "PickerEdit")
            ), widget


def test_a_field_no_strategy_uses_and_an_unknown_field_are_named(
    qtbot: Any,
    connect: Callable[..., Session],
    demo_sandbox: SandboxProcess,
    open_page: Callable[[Session], ToolPage],
) -> None:
    page = open_page(connect(demo_sandbox))
    content = viewer(page)
    qtbot.waitUntil(lambda: bool(content.model.fields.choices))

    content.open_item("tenantId")  # a field of the server's that no strategy uses
    assert content.picker.combo.currentText() == "tenantId"
    wait_state(qtbot, content, EMPTY)
    assert content.states.empty_title.text() == "No strategy uses the context field “tenantId”"
    assert "No constraint of any strategy" in content.states.empty_label.text()

    choose(qtbot, content, "no-such-field")  # the server answers an unknown field: no strategies
    wait_state(qtbot, content, EMPTY)
    assert content.states.empty_title.text() == (
        "No strategy uses the context field “no-such-field”"
    )
    assert content.states.empty_label.text().startswith(
        "The server lists no context field named “no-such-field”"
    )
    assert content.picker.combo.currentText() == "no-such-field"  # what was typed stays

    content.open_item("Region")  # names differ in case: the server's own is suggested
    wait_state(qtbot, content, EMPTY)
    assert content.states.empty_label.text().endswith("Did you mean “region”?")


# ---------------------------------------------------------------------------- filter, copy, CSV


def test_filter_copy_and_export(
    qtbot: Any,
    arun: Callable[..., Any],
    connect: Callable[..., Session],
    demo_sandbox: SandboxProcess,
    open_page: Callable[[Session], ToolPage],
    tmp_path: Path,
) -> None:
    session = connect(demo_sandbox)
    client: AdminClient = arun(session.client())
    expected = arun(client.context_strategies("region")).strategies
    page = open_page(session)
    content = viewer(page)
    content.open_item("region")
    wait_state(qtbot, content, CONTENT)

    # leaving the picker (an editable combo box says "activated" then) loads nothing again
    loads: list[bool] = []
    content.model.busy_changed.connect(lambda busy: loads.append(busy))
    page.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is page)
    content.picker.combo.setFocus()
    qtbot.keyClick(content.picker.combo, Qt.Key.Key_Tab)
    assert not content.picker.combo.hasFocus()
    assert loads == [] and content.model.state == CONTENT

    # Ctrl+F reaches the filter box; the tree and the counts follow the filter
    press(qtbot, page, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert content.filter_edit.hasFocus()
    content.filter_edit.setText("PRODUCTION")
    production = [s for s in expected if s.environment == "production"]
    assert production and len(production) < len(expected)
    assert tree_rows(content) == expected_rows(production)
    features = {(s.projectId, s.featureName) for s in production}
    projects = {s.projectId for s in production}
    assert content.count_label.text() == (
        f"{len(production)} of {len(expected)} strategies, in {len(features)} features across "
        f"{len(projects)} projects"
    )

    # Ctrl+C on a feature row copies the strategies under it; Ctrl+click adds a leaf
    project = content.items.index(0, 0)
    feature = content.items.index(0, 0, project)
    under = [
        content.items.index(r, 0, feature).data(STRATEGY_ROLE)
        for r in range(content.items.rowCount(feature))
    ]
    selection = content.tree.selectionModel()
    flags = (
        QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
    )
    selection.setCurrentIndex(feature, flags)
    other_feature = content.items.index(1, 0, project)
    other_leaf = content.items.index(0, 0, other_feature)
    selection.select(
        other_leaf,
        QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows,
    )
    QGuiApplication.clipboard().clear()
    press(qtbot, page, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    lines = QGuiApplication.clipboard().text().splitlines()
    wanted = [*under, other_leaf.data(STRATEGY_ROLE)]
    assert lines == [
        f"{s.projectId}\t{s.featureName}\t{s.environment}\t{s.strategyName}" for s in wanted
    ]
    assert content.count_label.text().endswith(f"· {len(wanted)} strategies copied")

    # the Copy button without a selection copies every strategy shown
    selection.clearSelection()
    QGuiApplication.clipboard().clear()
    qtbot.mouseClick(content.copy_button, Qt.MouseButton.LeftButton)
    assert len(QGuiApplication.clipboard().text().splitlines()) == len(production)

    # CSV: one line per strategy shown, with its id
    path = tmp_path / "region.csv"
    task = content.export(str(path))
    qtbot.waitUntil(task.done)
    assert task.result() == len(production)
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["Project", "Feature", "Environment", "Strategy name", "Strategy id"]
    assert sorted(rows[1:]) == sorted(
        [s.projectId, s.featureName, s.environment, s.strategyName, s.id] for s in production
    )
    # the count says so from the task's done callback, a turn of the loop after the task ends
    qtbot.waitUntil(lambda: content.count_label.text().endswith(f"· {len(production)} exported"))

    # a filter that matches nothing says so, and there is nothing to copy or export
    content.filter_edit.setText("nothing-matches-this")
    assert tree_rows(content) == []
    assert content.no_match.isVisible()
    assert "nothing-matches-this" in content.no_match.text()
    assert not content.export_button.isEnabled() and not content.copy_button.isEnabled()
    assert content.count_label.text() == f"0 of {len(expected)} strategies"


# ---------------------------------------------------------------------------- F5, errors, Retry


def test_f5_reloads_and_a_server_that_goes_away_gives_an_error_with_retry(
    qtbot: Any,
    arun: Callable[..., Any],
    connect: Callable[..., Session],
    open_page: Callable[[Session], ToolPage],
    tmp_path: Path,
) -> None:
    server = SandboxProcess(tmp_path / "flaky.sqlite3", "--demo", "--port", str(closed_port()))
    server.start()
    try:
        session = connect(server)
        page = open_page(session)
        content = viewer(page)
        choose(qtbot, content, "tenantId")
        wait_state(qtbot, content, EMPTY)

        # F5 loads again: a strategy constrained on tenantId meanwhile shows up
        client: AdminClient = arun(session.client())
        arun(client.create_feature("payments", CreateFeature(name="tenant-pilot")))
        constraint = Constraint(contextName="tenantId", operator="IN", values=["t-1"])
        arun(
            client.add_strategy(
                "payments", "tenant-pilot", "production",
                CreateFeatureStrategy(constraints=[constraint]),
            )
        )  # fmt: skip
        page.activateWindow()
        qtbot.waitUntil(lambda: QApplication.activeWindow() is page)
        content.picker.combo.setFocus()
        qtbot.keyClick(content.picker.combo, Qt.Key.Key_F5)
        wait_state(qtbot, content, CONTENT)
        assert content.count_label.text() == "1 strategy in 1 feature across 1 project"
        assert tree_rows(content) == [
            (0, "payments", "1"),
            (1, "tenant-pilot", "1"),
            (2, "production · flexibleRollout", ""),
        ]
        content.filter_edit.setText("pilot")

        server.stop()
        press(qtbot, page, Qt.Key.Key_F5)
        wait_state(qtbot, content, ERROR, timeout=30_000)
        assert content.states.error_title.text() == (
            "Could not load the strategies that use the context field “tenantId”"
        )
        assert "connection refused" in content.states.error_label.text()
        assert content.states.retry_button.isVisible()
        # what the person typed is kept
        assert content.picker.combo.currentText() == "tenantId"
        assert content.filter_edit.text() == "pilot"

        server.start()
        qtbot.mouseClick(content.states.retry_button, Qt.MouseButton.LeftButton)
        wait_state(qtbot, content, CONTENT, timeout=30_000)
        assert content.model.loaded_field == "tenantId"
        assert len(content.model.shown) == 1
    finally:
        server.stop()
