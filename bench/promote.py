"""Comparing two servers at scale (issue 37): two sandboxes of `flagdesk serve --empty --scale`
(10,000 flags in 20 projects, development, staging and production, two strategies each, and
the access set: 500 projects, 2,000 users, 10,000 API tokens), the second a copy of the first
with 1% of its flags changed (100 flags: production's rollout), compared by the command line
and by the Compare window. (A copy: two sets planted apart differ in their 2,000 expiring
tokens' `expiresAt` by the milliseconds between the plantings.)

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/promote.py [--runs 3]

- diff_s: `flagdesk diff a b --json` as a subprocess, two saved profiles (tokens in the file
  store of a configuration folder of its own), from start to exit: reading both servers (a
  batch export an environment, a list a project, the people), comparing, printing (the median
  of --runs; diff_s_max the slowest); it must find exactly the 100 changed rollouts
  (diff_found);
- window_diff_s: the Compare window (this connection against the saved profile of the other),
  from Compare clicked to the tree showing the differences (the median of --runs openings, the
  slowest as window_diff_s_max), and longest_stall_ms: the GUI thread's longest stall
  meanwhile (a 5 ms timer);
- promote_s and requests: `flagdesk promote a c --project scale-project-001 --project
  scale-project-002 --yes --json` (1,000 flags) to a third sandbox, `--empty` but for those two
  projects and the staging environment (flagdesk creates neither), reached with its admin's
  personal access token so that the flags go in imports (one a project and environment: an
  admin API token's promote goes request by request), from start to exit, and the requests it
  sent (journaled); promote_verified: `flagdesk diff` of the same selection is then the same
  (exit 0).

Goals (issue 37): diff within 5 s, the window within 5 s with no stall over 50 ms, a promote of
1,000 flags within 20 s. Exactly one JSON object goes to stdout. `--no-promote` measures the
diff and the window alone (promote_s null, `met` false): what reading and comparing changes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import qasync  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402
from ui_tables import StallMeter, painted, until  # noqa: E402

from app.connection import ConnectionSpec  # noqa: E402
from app.profiles import ProfileStore  # noqa: E402
from app.startup import tune_interpreter  # noqa: E402
from app.viewmodels.compare import Side  # noqa: E402
from app.viewmodels.session import READY, Session  # noqa: E402
from sandbox import db, demo  # noqa: E402
from sandbox.process import SandboxProcess  # noqa: E402
from sandbox.store import Store  # noqa: E402

GOALS = {"diff_s_max": 5.0, "window_diff_s_max": 5.0, "longest_stall_ms": 50,
         "promote_s": 20.0}  # fmt: skip
#: the flags changed on the second server: every 100th
CHANGED = range(0, demo.SCALE_FLAGS, 100)


def copy_database(source: Path, copy: Path) -> None:
    """`source`'s database, as it is now (while its sandbox runs), into a new file `copy`."""
    given, made = sqlite3.connect(source), sqlite3.connect(copy)
    try:
        given.backup(made)
    finally:
        given.close()
        made.close()


def change_one_percent(db: Path) -> None:
    """Production's rollout of every 100th planted flag set to 77 (while the sandbox runs:
    WAL lets this connection write beside it)."""
    conn = sqlite3.connect(db)
    try:
        with conn:
            for k in CHANGED:
                name, _ = demo.scale_flag(k)
                row = conn.execute(
                    "SELECT id, parameters FROM strategies WHERE feature = ? AND environment ="
                    " 'production' AND name = 'flexibleRollout'",
                    (name,),
                ).fetchone()
                parameters = {**json.loads(row[1]), "rollout": "77"}
                conn.execute("UPDATE strategies SET parameters = ? WHERE id = ?",
                             (json.dumps(parameters), row[0]))  # fmt: skip
    finally:
        conn.close()


def admin_pat(sandbox: SandboxProcess) -> str:
    """A personal access token of the sandbox's `admin` user, made in its database (the
    sandbox has no login to make one through): Unleash refuses an import sent with an admin API
    token, so a promote in batches needs a user's."""
    conn = db.connect(sandbox.db)
    try:
        row = conn.execute("SELECT id FROM users WHERE username = 'admin'").fetchone()
        return Store(conn).create_personal_token(int(row[0]))
    finally:
        conn.close()


def save_profile(config: Path, name: str, sandbox: SandboxProcess, token: str = "") -> None:
    env = {**os.environ, "FLAGDESK_CONFIG_DIR": str(config),
           "FLAGDESK_TOKEN": token or sandbox.admin_token}  # fmt: skip
    subprocess.run([sys.executable, "-m", "app", "profiles", "add", name, "--url", sandbox.url,
                    "--token-store", "file"], check=True, capture_output=True, env=env,
                   cwd=ROOT)  # fmt: skip


def measure_diff(config: Path, runs: int) -> dict[str, Any]:
    env = {**os.environ, "FLAGDESK_CONFIG_DIR": str(config), "PYTHONPATH": str(ROOT)}
    seconds, found = [], 0
    for _ in range(runs):
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "app", "diff", "a", "b", "--json"],
                              capture_output=True, text=True, env=env, cwd=ROOT)  # fmt: skip
        seconds.append(time.perf_counter() - started)
        if done.returncode != 1:
            raise SystemExit(f"flagdesk diff said {done.returncode}: {done.stderr[-2000:]}")
        out = json.loads(done.stdout)
        rollouts = [d for d in out["differences"] if d["key"].endswith("parameters.rollout")]
        found = sum(1 for d in rollouts if d["new"] != d["old"])
    return {"diff_s": round(statistics.median(seconds), 3), "diff_s_max": round(max(seconds), 3),
            "diff_runs_s": [round(s, 3) for s in seconds], "diff_found": found}  # fmt: skip


def compared(model: Any) -> bool:
    return model.comparison is not None and not model.busy


async def measure_window(app: QApplication, a: SandboxProcess, config: Path,
                         runs: int) -> dict[str, Any]:  # fmt: skip
    from ui.compare import CompareView

    session = Session(ProfileStore(config), health_interval=0)
    session.open_spec(ConnectionSpec(a.url, a.admin_token, label="a"))
    await until(lambda: session.state != "connecting")
    if session.state != READY:
        raise SystemExit(f"could not connect: {session.message}")
    seconds, stalls, shown = [], [], 0
    try:
        for _ in range(runs):
            view = CompareView(session)
            view.resize(1200, 800)
            view.show()
            await painted(app)
            model = view.model
            view.pick_side("source", Side("connection"))
            view.pick_side("target", Side("profile", "b"))
            meter = StallMeter()
            meter.start()
            started = time.perf_counter()
            view.compare_button.click()
            await until(partial(compared, model), 300)
            await painted(app)
            seconds.append(time.perf_counter() - started)
            meter.stop()
            stalls.append(meter.longest)
            assert model.comparison is not None
            shown = len(model.comparison.differences)
            model.close()
            view.close()
            view.deleteLater()
            await painted(app)
    finally:
        await session.aclose()
    return {"window_diff_s": round(statistics.median(seconds), 3),
            "window_diff_s_max": round(max(seconds), 3),
            "window_runs_s": [round(s, 3) for s in seconds],
            "longest_stall_ms": max(stalls), "window_differences": shown}  # fmt: skip


PROMOTED = ("scale-project-001", "scale-project-002")


def prepare_target(db: Path) -> None:
    """The projects promoted and the staging environment, made in the empty target's database
    (while it runs): a promote creates neither."""
    conn = sqlite3.connect(db)
    try:
        with conn:
            conn.execute("INSERT OR IGNORE INTO environments(name, type, sort_order)"
                         " VALUES('staging', 'test', 2)")  # fmt: skip
            conn.executemany(
                "INSERT INTO projects(id, name, description, created_at) VALUES(?, ?, '', 0)",
                [(p, p) for p in PROMOTED],
            )
    finally:
        conn.close()


def measure_promote(config: Path, data: Path) -> dict[str, Any]:
    env = {**os.environ, "FLAGDESK_CONFIG_DIR": str(config), "PYTHONPATH": str(ROOT),
           "FLAGDESK_DATA_DIR": str(data)}  # fmt: skip
    selection = [arg for p in PROMOTED for arg in ("--project", p)]
    started = time.perf_counter()
    command = [sys.executable, "-m", "app", "promote", "a", "c", *selection, "--yes", "--json"]
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT)
    promote_s = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"flagdesk promote said {done.returncode}: {done.stderr[-2000:]}")
    out = json.loads(done.stdout)
    again = subprocess.run([sys.executable, "-m", "app", "diff", "a", "c", *selection,
                            "--kinds", "flags"], capture_output=True, text=True, env=env,
                           cwd=ROOT)  # fmt: skip
    return {"promote_s": round(promote_s, 2), "requests": len(out["entries"]),
            "promote_flags": len(PROMOTED) * demo.SCALE_FLAGS // demo.SCALE_FLAG_PROJECTS,
            "promote_verified": again.returncode == 0}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="diffs and window comparisons (3)")
    parser.add_argument(
        "--no-promote",
        action="store_true",
        help="measure the diff and the window only (no promote_s: `met` false)",
    )
    args = parser.parse_args()
    app = QApplication(sys.argv[:1])
    app.setQuitOnLastWindowClosed(False)
    tune_interpreter()
    with tempfile.TemporaryDirectory(prefix="flagdesk-bench-promote-") as tmp:
        root = Path(tmp)
        os.environ["FLAGDESK_DATA_DIR"] = str(root / "data")
        a = SandboxProcess(root / "a.sqlite3", "--empty", "--scale")
        b = SandboxProcess(root / "b.sqlite3", "--empty", "--scale")
        c = SandboxProcess(root / "c.sqlite3", "--empty")
        started = time.perf_counter()
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(lambda sb: sb.start(timeout=600), (a, c)))
        copy_database(a.db, b.db)
        b.start(timeout=600)  # planted already: it plants nothing
        prepared = time.perf_counter() - started
        try:
            change_one_percent(b.db)
            config = root / "config"
            save_profile(config, "a", a)
            save_profile(config, "b", b)
            save_profile(config, "c", c, admin_pat(c))  # a user's token: imports
            prepare_target(c.db)
            diff = measure_diff(config, args.runs)
            loop = qasync.QEventLoop(app)
            asyncio.set_event_loop(loop)
            with loop:
                window = loop.run_until_complete(measure_window(app, a, config, args.runs))
            promoted = (
                {"promote_s": None, "requests": None, "promote_verified": False}
                if args.no_promote
                else measure_promote(config, root / "data")
            )
        finally:
            a.stop()
            b.stop()
            c.stop()
    figures = {"diff_s_max": diff["diff_s_max"], "window_diff_s_max": window["window_diff_s_max"],
               "longest_stall_ms": window["longest_stall_ms"],
               "promote_s": promoted["promote_s"]}  # fmt: skip
    met = (all(figures[k] is not None and figures[k] <= GOALS[k] for k in figures)
           and diff["diff_found"] == len(CHANGED) and promoted["promote_verified"])  # fmt: skip
    print(json.dumps({
        "benchmark": "promote",
        "sandbox": "two of serve --empty --scale, the second with 100 rollouts changed",
        "flags": demo.SCALE_FLAGS, "changed": len(CHANGED), "runs": args.runs,
        "sandboxes_prepared_s": round(prepared, 1),
        **diff, **window, **promoted,
        "goal": GOALS, "met": met,
        "load_average": round(os.getloadavg()[0], 2),
    }))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
