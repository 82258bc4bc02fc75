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

`first_page_s`, `keystroke_ms`, `longest_stall_ms` and `peak_rss_mb` are the event log
window's, which does not exist yet: null until it does.

Goal (issue 38): the CSV export of 100,000 events in at most 5 s; with the margin of issue 14
(bench/margin.py), 4 s: `met` and `met_with_margin` hold the slowest run to them.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from margin import margin_goals, meets

from app.api.events import SEARCH_PAGE
from sandbox.process import SandboxProcess

ROOT = Path(__file__).resolve().parent.parent
#: issue 38: a CSV export of 100,000 events in at most 5 s (the slowest run is held to it)
GOALS = {"csv_export_s_max": 5.0}


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
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
    slowest = max(times)
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
        "first_page_s": None,
        "keystroke_ms": None,
        "longest_stall_ms": None,
        "peak_rss_mb": None,
        "goal": GOALS,
        "margin_goal": margin_goals(GOALS),
        "met": meets({"csv_export_s_max": slowest}, GOALS),
        "met_with_margin": meets({"csv_export_s_max": slowest}, margin_goals(GOALS)),
    }))  # fmt: skip


if __name__ == "__main__":
    main()
