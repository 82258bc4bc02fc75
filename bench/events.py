"""The event log at scale (issue 38): 100,000 events exported as CSV. Prints one JSON object.

    .venv/bin/python bench/events.py [--runs 3]

Starts `flagdesk serve --empty --scale` (the access set with its 100,000 planted events,
`sandbox.demo._plant_events`) and measures:

- `csv_export_s`: `flagdesk events --csv FILE` run as a person runs it (a new process: its
  start, the client, every page of the server's search, the file written as the pages arrive,
  fsync'ed and renamed), every event of the server; the median of `--runs`, the slowest as
  `csv_export_s_max`; `csv_rows` and `csv_bytes` say what was written, `csv_pages` how many
  pages it read (`app.api.events.SEARCH_PAGE` a page);
- `csv_peak_rss_mb`: the command's peak memory (its `ru_maxrss`), which stays that of a few
  pages however many events there are;
- `csv_client_cpu_s` and `csv_sandbox_cpu_s`: the CPU time the command and the sandbox spent on
  an export (medians; on a busy machine the wall time is theirs and the waits for a core: the
  two overlap, the next page asked for while this one is written).

The event log's window (`ui.events.EventLogView`), opened offscreen in this process as the GUI
opens it (one qasync loop, the session's shared client, `ToolPage`, bench/ui_tables.py's
`StallMeter`), against the same sandbox:

- `first_page_s`: from the window shown (its first request sent) to the newest page's rows
  painted; the median of `--runs` openings, the slowest as `first_page_s_max`;
- `load_all_s`: Load all, every one of the 100,000 events read page by page into the list, to
  the last painted; `longest_stall_ms`, the longest the GUI thread went without turning its
  event loop meanwhile (a 5 ms timer), and `open_stall_ms` while the window was built and its
  first page came (the window's modules imported on its first opening);
- `keystroke_ms`: one character typed in the list's quick filter over the 100,000 loaded, to
  the filtered rows painted (`e`, then `7` narrowing it; median, and `keystroke_ms_max`);
- `peak_rss_mb`: this process's peak memory (the window with 100,000 events loaded; the
  commands ran as processes of their own).

Goals (issue 38): the CSV export of 100,000 events in at most 5 s, the first page in at most
1 s, a keystroke in at most 50 ms, the longest stall under 50 ms and the peak memory under
300 MB; with the margin of issue 14 (bench/margin.py), 4 s, 0.8 s, 40 ms, 40 ms and 240 MB:
`met` and `met_with_margin` hold the slowest figures to them. `--no-window` measures the export
alone.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import math
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from margin import margin_goals, meets

from app.api.events import SEARCH_PAGE
from sandbox.process import SandboxProcess

ROOT = Path(__file__).resolve().parent.parent
#: issue 38: a CSV export of 100,000 events in at most 5 s, and the window's figures (the
#: slowest run of each is held to them)
#: the window's figures the JSON names first
WINDOW_SHOWN = ("first_page_s", "keystroke_ms", "longest_stall_ms", "peak_rss_mb")
GOALS = {"csv_export_s_max": 5.0, "first_page_s_max": 1.0, "keystroke_ms_max": 50,
         "longest_stall_ms_max": 50, "peak_rss_mb_max": 300}  # fmt: skip


def cpu_seconds(pid: int) -> float:
    """The user and system CPU time process `pid` has used (Linux: /proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def export(sb: SandboxProcess, target: Path) -> tuple[float, float, float]:
    """One `flagdesk events --csv` in a new process: its wall time, peak memory (MB) and CPU."""
    env = {**os.environ, "FLAGDESK_TOKEN": sb.admin_token}
    env["FLAGDESK_DATA_DIR"] = str(target.parent / "data")
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    before, cpu = usage.ru_maxrss, usage.ru_utime + usage.ru_stime
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "app", "events", "--csv", str(target), "--url", sb.url],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=120,
    )  # fmt: skip
    took = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"flagdesk events --csv failed ({done.returncode}): {done.stderr}")
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    used = usage.ru_utime + usage.ru_stime - cpu
    return took, max(usage.ru_maxrss, before) / 1024, used  # ru_maxrss: KB (the largest so far)


async def _window(app: Any, sb: SandboxProcess, runs: int) -> dict[str, Any]:
    """The event log's window opened `runs` times: the first page each time; Load all and the
    keystrokes in the first."""
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest
    from ui_tables import StallMeter, connected, painted, until

    from app.registry import TOOLS_BY_KEY
    from app.viewmodels.table import releasing
    from app.viewmodels.tools import ToolModel
    from ui.events import EventLogView
    from ui.tool_page import ToolPage

    first_pages: list[float] = []
    open_stalls: list[int] = []
    figures: dict[str, Any] = {}
    async with connected(sb) as session:
        for run in range(runs):
            page = ToolPage(ToolModel(TOOLS_BY_KEY["events"], session))
            page.resize(1100, 700)
            meter = StallMeter()
            meter.start()
            started = time.perf_counter()
            page.show()  # builds the window, which sends its request
            view = page.ensure_content()
            assert isinstance(view, EventLogView)
            m = view.model
            await until(lambda v=view: v.model.table.total_count > 0 and v.table.isVisible())
            await painted(app)
            first_pages.append(time.perf_counter() - started)
            meter.stop()
            open_stalls.append(meter.longest)
            if run == 0:
                await until(lambda v=view: not v.model.fetching and not v.model.reading_ahead)
                meter.start()
                started = time.perf_counter()
                m.load_all()
                await until(lambda v=view: not v.model.loading_all and not v.model.more, 600)
                await painted(app)
                figures["load_all_s"] = round(time.perf_counter() - started, 3)
                meter.stop()
                figures["longest_stall_ms"] = meter.longest
                figures["window_events"] = m.table.total_count
                keystrokes: list[float] = []
                edit = view.table.filter_edit
                for _ in range(runs):
                    edit.clear()
                    await painted(app)
                    for key in (Qt.Key.Key_E, Qt.Key.Key_7):
                        t = time.perf_counter()
                        QTest.keyClick(edit, key)
                        await painted(app)
                        keystrokes.append((time.perf_counter() - t) * 1000)
                edit.clear()
                await painted(app)
                figures["keystroke_ms"] = round(statistics.median(keystrokes), 1)
                figures["keystroke_ms_max"] = round(max(keystrokes), 1)
            page.close_page()
            page.deleteLater()
            del page, view, m
            await painted(app)
            await until(lambda: not releasing(), 60)
    figures["first_page_s"] = round(statistics.median(first_pages), 3)
    figures["first_page_s_max"] = round(max(first_pages), 3)
    figures["open_stall_ms"] = max(open_stalls)
    return figures


def window_figures(sb: SandboxProcess, runs: int) -> dict[str, Any]:
    """`_window` on a qasync loop of this process's QApplication (offscreen), then its peak
    memory."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import qasync
    from PySide6.QtWidgets import QApplication

    from app.startup import tune_interpreter

    layout = tempfile.mkdtemp(prefix="flagdesk-bench-layout-")
    # remembered column widths and sort orders from a real desktop would change the figures
    os.environ["FLAGDESK_CONFIG_DIR"] = layout
    app = QApplication(sys.argv[:1])
    app.setQuitOnLastWindowClosed(False)
    tune_interpreter()  # as `ui.main_window.run` does
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    try:
        with loop:
            figures = loop.run_until_complete(_window(app, sb, runs))
    finally:
        shutil.rmtree(layout, ignore_errors=True)
    figures["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-window", action="store_true", help="the CSV export alone")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="flagdesk-bench-events-") as folder:
        where = Path(folder)
        with SandboxProcess(where / "events.sqlite3", "--empty", "--scale") as sb:
            times: list[float] = []
            peaks: list[float] = []
            client_cpu: list[float] = []
            sandbox_cpu: list[float] = []
            target = where / "events.csv"
            assert sb.proc is not None
            for _ in range(args.runs):
                served = cpu_seconds(sb.proc.pid)
                took, peak, used = export(sb, target)
                sandbox_cpu.append(cpu_seconds(sb.proc.pid) - served)
                times.append(took)
                peaks.append(peak)
                client_cpu.append(used)
            with target.open(encoding="utf-8", newline="") as f:
                rows = sum(1 for _ in csv.reader(f)) - 1
            size = target.stat().st_size
            window = {} if args.no_window else window_figures(sb, args.runs)
    slowest = max(times)
    measured = {"csv_export_s_max": slowest, **{k: window[k] for k in GOALS if k in window}}
    if window:  # one figure each: the largest of its run
        measured["longest_stall_ms_max"] = window["longest_stall_ms"]
        measured["peak_rss_mb_max"] = window["peak_rss_mb"]
    goals = {k: v for k, v in GOALS.items() if k in measured}
    print(json.dumps({
        "benchmark": "events",
        "events": rows,
        "csv_export_s": round(statistics.median(times), 3),
        "csv_export_s_max": round(slowest, 3),
        "csv_rows": rows,
        "csv_bytes": size,
        "csv_pages": math.ceil(rows / SEARCH_PAGE) + (rows % SEARCH_PAGE == 0),
        "csv_peak_rss_mb": round(max(peaks), 1),
        "csv_client_cpu_s": round(statistics.median(client_cpu), 2),
        "csv_sandbox_cpu_s": round(statistics.median(sandbox_cpu), 2),
        "load": round(os.getloadavg()[0], 2),
        "runs": args.runs,
        "first_page_s": window.get("first_page_s"),
        "keystroke_ms": window.get("keystroke_ms"),
        "longest_stall_ms": window.get("longest_stall_ms"),
        "peak_rss_mb": window.get("peak_rss_mb"),
        **{k: v for k, v in window.items() if k not in WINDOW_SHOWN},
        "goal": goals,
        "margin_goal": margin_goals(goals),
        "met": meets(measured, goals),
        "met_with_margin": meets(measured, margin_goals(goals)),
    }))  # fmt: skip


if __name__ == "__main__":
    main()
