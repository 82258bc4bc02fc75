"""`ui` makes PySide6's question of every later import (does this module use PySide6?) cheap:
asked of the file's bytes rather than through `inspect.getsource`, which kept every source in
`linecache`; and of a module whose source is missing (the bundle's), answered at once. The
answers stay PySide6's own."""

from __future__ import annotations

import json
import os
import subprocess
import sys

CHILD = """
import inspect, json, linecache, sys
import ui
feature = sys.modules["shibokensupport.feature"]
import app.api.client, ui.icons, http.cookiejar
kept = sorted(f for f in linecache.cache if "/app/api/" in f or "/httpx/" in f or "/pydantic/" in f)
def pyside6s(module):  # PySide6's own answer (shibokensupport.feature._mod_uses_pyside)
    try:
        return "PySide6" in inspect.getsource(module)
    except (TypeError, OSError):
        return False
import types
ghost = types.ModuleType("ghost")  # a module whose source is not where it says (the bundle's)
ghost.__file__ = "/nonexistent/ghost.py"
modules = [sys.modules[n] for n in ("app.api.client", "ui.icons", "http.cookiejar", "sys", "_io")]
modules.append(ghost)
asked = []  # what PySide6's check (the cheap one's fallback) searched the source of
getsource = inspect.getsource
inspect.getsource = lambda module: asked.append(module) or getsource(module)
answers = [feature._mod_uses_pyside(m) for m in modules]
inspect.getsource = getsource
print(json.dumps({
    "cheap": getattr(feature._mod_uses_pyside, "reads_bytes", False),
    "answers": answers,
    "asked": [modules.index(m) for m in asked],
    "expected": [pyside6s(m) for m in modules],
    "kept": kept,
}))
"""


def test_later_imports_are_checked_from_their_bytes_and_not_kept() -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                         timeout=60, check=True, env=env)  # fmt: skip
    found = json.loads(out.stdout)
    assert found["cheap"]
    assert found["answers"] == found["expected"] == [False, True, False, False, False, False]
    # PySide6's own search of the source is left for the modules with no path to read:
    # builtins, not a module whose file is missing
    assert found["asked"] == [3, 4]
    # the client, httpx and pydantic were imported after Qt: none of their sources is held
    assert found["kept"] == []
