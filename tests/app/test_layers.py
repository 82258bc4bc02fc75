"""The layer rules import-linter cannot say (it sees an external package only whole, `PySide6`,
not `PySide6.QtWidgets`): nothing under `app/` imports QtWidgets or QtGui, not even inside a
function; the view-models use QtCore only. The other rules are `lint-imports` contracts
(pyproject.toml), run by `make test` and `make lint`."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WIDGETS = ("PySide6.QtWidgets", "PySide6.QtGui")


def qt_gui_imports(path: Path) -> list[str]:
    """Each import statement of `path` that brings QtWidgets or QtGui, as "file:line"."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        else:
            continue
        if any(name.startswith(WIDGETS) for name in names):
            found.append(f"{path.name}:{node.lineno}")
    return found


def test_nothing_in_app_imports_widgets_or_gui() -> None:
    files = sorted((ROOT / "app").rglob("*.py"))
    assert len(files) > 20
    assert [hit for path in files for hit in qt_gui_imports(path)] == []


def test_the_check_sees_a_widget_import(tmp_path: Path) -> None:
    """The scan finds what it looks for, also inside a function and as `from PySide6 import`."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from PySide6.QtCore import QObject\n"
        "def f():\n"
        "    from PySide6 import QtGui\n"
        "    from PySide6.QtWidgets import QLabel\n"
    )
    assert qt_gui_imports(probe) == ["probe.py:3", "probe.py:4"]
