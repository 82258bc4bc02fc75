"""Idle memory of the sandbox server: `flagdesk serve` with the demo data, after it settles.

    .venv/bin/python bench/sandbox_idle_rss.py [--idle 2.0]

Starts the server in a temporary folder (a new database gets the demo data), waits until
`/health` answers plus a couple of idle seconds, then reads VmRSS (and VmHWM, the peak) of the
server process from /proc/<pid>/status. Exactly one JSON object goes to stdout.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from margin import margin_goals, meets

from sandbox.process import SandboxProcess

GOAL_MB = 80
GOALS = {"rss_mb_max": GOAL_MB}


def proc_status_kb(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])  # "VmRSS:   51234 kB"
    raise KeyError(key)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--idle", type=float, default=2.0, help="seconds idle after healthy")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="flagdesk-rss-") as tmp:
        t0 = time.monotonic()
        sb = SandboxProcess(Path(tmp) / "sandbox.sqlite3", "--demo")
        sb.start()
        try:
            healthy_s = time.monotonic() - t0
            time.sleep(args.idle)
            rss_kb = proc_status_kb(sb.pid, "VmRSS")
            hwm_kb = proc_status_kb(sb.pid, "VmHWM")
            print(f"sandbox pid {sb.pid} healthy after {healthy_s:.2f} s; VmRSS {rss_kb} kB, "
                  f"VmHWM {hwm_kb} kB", file=sys.stderr)  # fmt: skip
        finally:
            sb.stop()
    rss_mb = round(rss_kb / 1024, 1)
    out = {
        "benchmark": "sandbox_idle_rss",
        "rss_mb": rss_mb,
        "peak_rss_mb": round(hwm_kb / 1024, 1),
        "start_to_healthy_s": round(healthy_s, 2),
        "goal_mb": GOAL_MB,
        "meets_goal": rss_mb <= GOAL_MB,
        "goal": GOALS,
        "margin_goal": margin_goals(GOALS),
        "met": meets({"rss_mb_max": rss_mb}, GOALS),
        "met_with_margin": meets({"rss_mb_max": rss_mb}, margin_goals(GOALS)),
    }
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
