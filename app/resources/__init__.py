"""Files flagdesk reads at run time (the icons, the metrics samples and their generator), as
package data: found the same way in a clone, an installed wheel and the PyInstaller bundle,
beside this module (not through `importlib.resources`, whose import, zipfile and tempfile
among it, cost the window's start 5-10 ms before its frame showed). A leaf: the standard
library only.

`icons/` holds the SVGs the window draws (`ui.icons`) and the application icon, `flagdesk.svg`
(`packaging/linux/` derives the launcher's icons from it); `samples/` holds small metrics
batches in every format `flagdesk metrics` reads, and `generate.py`, which writes large ones."""

from __future__ import annotations

from pathlib import Path

#: the application's id: the launcher entry's and the AppStream metainfo's name
#: (packaging/linux/), and the desktop file name the window gives Wayland to find them by
APP_ID = "io.flagdesk.Flagdesk"


def folder(name: str) -> Path:
    """The folder `name` (``"icons"``, ``"samples"``) as a path on disk. Every way flagdesk is
    installed keeps its package data as plain files beside this module (a clone, a wheel
    unpacked by pip, the bundle's `_internal/app/resources`); a zipped install has no such
    folder, and says so."""
    path = Path(__file__).with_name(name)
    if not path.is_dir():
        raise FileNotFoundError(f"flagdesk's {name} are missing: no folder {path}")
    return path


def icons() -> Path:
    return folder("icons")


def samples() -> Path:
    return folder("samples")
