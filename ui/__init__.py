"""The Qt windows. Importing the package makes PySide6's check of later imports cheap
(`_cheap_feature_check`), before any window module imports the rest of the program, and in the
PyInstaller bundle points Qt at its own plugins (`_qt_of_the_bundle`)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from types import ModuleType

import PySide6.QtCore  # noqa: F401 - sets up the check replaced below


def _cheap_feature_check() -> None:
    """PySide6 asks of every module imported after it whether it uses PySide6 (which decides
    how its `__feature__` switches, snake_case and true_property, apply to that module) by
    reading the module's whole source with `inspect.getsource`: 1-2 ms a module, a fifth of
    the time the window's start spends importing the client, pydantic and httpx after Qt, and
    every such source is kept in `linecache` for the life of the process (about 390 files).
    The same question, answered from the file's bytes, read once and let go. Only where
    PySide6 has this check (a private module): elsewhere its own runs as before."""
    feature = sys.modules.get("shibokensupport.feature")
    original: Callable[[ModuleType], bool] | None = getattr(feature, "_mod_uses_pyside", None)
    if original is None or getattr(original, "reads_bytes", False):
        return

    def _mod_uses_pyside(module: ModuleType) -> bool:
        path = getattr(module, "__file__", None)
        if isinstance(path, str) and path.endswith(".py"):
            try:
                with open(path, "rb") as source:
                    return b"PySide6" in source.read()
            except FileNotFoundError:
                # no source where the module says (every module of the bundle, which holds
                # their bytecode alone): its loader reads it from that same path, so PySide6's
                # own check, after `inspect` has looked everywhere, answers no as well (its
                # failing search was 5-7 ms of the bundle's window before its first data)
                return False
            except OSError:
                pass
        return original(module)  # no source file (a builtin, a zip's member): its answer

    _mod_uses_pyside.reads_bytes = True  # type: ignore[attr-defined]
    feature._mod_uses_pyside = _mod_uses_pyside  # type: ignore[union-attr]


_cheap_feature_check()


def _qt_of_the_bundle() -> None:
    """In the bundle (`make bundle`), what PyInstaller's run-time hook for PySide6 does, which
    the bundle leaves out (packaging/bundle/flagdesk.spec: it imported Qt in every process, the
    sandbox child's included, as each started): Qt's plugins are looked for in the bundle, and
    an embedded qt.conf relocates Qt's prefix there. Before the window's QApplication is made,
    which is what reads them."""
    bundle = getattr(sys, "_MEIPASS", None)
    if not getattr(sys, "frozen", False) or bundle is None:
        return
    from _pyi_rth_utils import qt  # PyInstaller's helpers for its Qt run-time hooks

    qt_root = os.path.join(bundle, "PySide6", "Qt")
    os.environ["QT_PLUGIN_PATH"] = os.path.join(qt_root, "plugins")
    qt.create_embedded_qt_conf("PySide6", qt_root)


_qt_of_the_bundle()
