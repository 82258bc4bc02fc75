"""The Qt windows. Importing the package, in the PyInstaller bundle, points Qt at its own plugins
(`_qt_of_the_bundle`)."""

from __future__ import annotations

import os
import sys


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
