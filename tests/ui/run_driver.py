"""Drive `ui.main_window.run()` as a user would, in a child process (see test_run.py): wait for
the window to show the loaded overview, optionally save a screenshot, close the window, and print
one JSON line saying what happened. Point XDG_DATA_HOME at a scratch folder first: run() opens
the sandbox database in the user data folder."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from PySide6 import QtCore
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from ui.main_window import MainWindow, run

TIMEOUT_S = 30


def children_of(pid: int) -> list[int]:
    """The pids whose parent is `pid` (as tests/processes.py: this driver also runs alone, from
    an installed wheel outside the checkout, where `tests` is not importable)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def page(window: MainWindow) -> str:
    current = window.overview.stack.currentWidget()
    return current.objectName() if current is not None else ""


def main(argv: list[str]) -> int:
    png = argv[1] if len(argv) > 1 else ""
    app = QApplication([argv[0]])
    started = time.monotonic()
    report: dict[str, object] = {}

    def poll() -> None:
        windows = [w for w in app.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()]
        if not windows:
            return
        window = windows[0]
        if "frame_named_qt" not in report:
            # PySide6 makes the `Qt` namespace (and its 93 Python enums) when it is first named
            report["frame_named_qt"] = "Qt" in vars(QtCore)
        if not window.bound:  # the frame shows first; the pages (the overview's model) follow
            return
        model = window.overview_model
        if "shown_after_s" not in report:
            report["shown_after_s"] = round(time.monotonic() - started, 3)
            report["first_status"] = model.status
            report["first_page"] = page(window)
        done = (model.has_data or model.error) and not model.busy
        if not done and time.monotonic() - started < TIMEOUT_S:
            return
        timer.stop()
        report["loaded_after_s"] = round(time.monotonic() - started, 3)
        report["page"] = page(window)
        report["error"] = model.error
        report["source"] = window.overview.source_label.text()
        report["url"] = window.overview.url_label.text()
        report["version"] = window.overview.version_label.text()
        report["users"] = window.overview.users_label.text()
        report["projects"] = window.overview.projects_table.model().rowCount()
        report["children"] = children_of(os.getpid())
        if png:
            window.grab().save(png)
        window.close()

    timer = QTimer()
    timer.timeout.connect(poll)
    timer.start(20)
    report["exit_code"] = run()
    children = report.get("children") or []
    assert isinstance(children, list)
    report["children_alive_after_exit"] = [pid for pid in children if alive(pid)]
    print(json.dumps(report), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
