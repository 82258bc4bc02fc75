"""Credentials and access at scale (issue 36): the API tokens window over 10,000 tokens, who
can do what where for one user over 500 projects, and revoking 1,000 unused tokens.

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/credentials.py [--runs 3]

Starts `flagdesk serve --empty --scale` (the credentials and access set,
`sandbox.demo.load_access_scale`: 500 projects, 2,000 users in 200 groups, 10,000 API tokens, of
which 1,000 never seen), connects a GUI session to it (one qasync loop, the windows' shared
client) and measures, in this process, offscreen:

- tokens_shown_s: from asking the API tokens window to load (the page shown: its window sends
  its request) to its rows painted, every token listed (the median of --runs openings, the
  slowest as tokens_shown_s_max; tokens_shown_stall_ms: the longest the GUI thread went without
  turning its event loop meanwhile);
- keystroke_ms: one keystroke in the window's filter box to the filtered rows painted, once
  the table has made its filter texts: "client" typed a character at a time, erased with
  Backspace a character at a time (the last one clears the filter: every row again), then
  "token-0999" (down to a few rows): the median, and the slowest as keystroke_ms_max; and
  first_keystroke_ms: one character typed as soon as the rows are painted, while the table
  still makes its filter texts, to the window painted again (the slowest of the openings);
- access_s: who can do what where for one user (`--user`: by default `scale.user.0000`, an
  Admin, whose answer holds every project) over every project, in the who-can window: from
  the window opened with the user asked at once to their answer painted (the window reads who
  there is, the access overview and the projects' access the user's answer needs:
  access_projects_read of access_projects, in access_requests requests); the median of --runs
  openings, the slowest as access_s_max; access_stall_ms, the GUI thread's longest stall
  meanwhile, and access_longest_gc_ms, the longest collections; access_client_cpu_s and
  access_sandbox_cpu_s, the CPU time this process and the sandbox spent on an opening
  (medians: on a busy machine the wall time is theirs and the waits for a core); and
  access_whole_read_s, every project's access read once through the same client (what a
  server without the access overview, Pro, needs for a user's answer), `--concurrency`
  projects at once (flagdesk's `app.api.access.CONCURRENCY` unless given);
- revoke: `--revoke` (1,000) never-seen tokens selected in the window, Delete…, the typed
  confirmation filled in and accepted programmatically, the window's own bulk delete (one
  DELETE a token through the runner: snapshot, journal, request): revoke_longest_stall_ms, the
  GUI thread's longest stall from the confirmation accepted to the list read again (a 5 ms
  timer); revoke_s, to the outcome; revoke_reloaded_s, to the list read again; the progress the
  window reported (revoke_progress: each token counted before its request, the line beside the
  buttons saying so) and that the tokens are gone from the server (revoke_verified);
  revoke_longest_gc_ms, the longest collections meanwhile;
- cancel: a second, smaller deletion (`--cancel-of`, 200 tokens not seen for more than 30 days)
  stopped with the window's Stop button once `--cancel-after` (10) were reported: how many were
  deleted, that the rest are still on the server, and how long Stop took to end it.

Goals (issue 36): tokens shown within 1 s, a keystroke under 50 ms (every keystroke: the
slowest is held to it), access within 1 s, the revoke's longest stall under 50 ms; with the
margin of issue 14 (bench/margin.py): 0.8 s, 40 ms, 0.8 s, 40 ms. `met` also needs the revoke's
progress reported, its tokens gone and the cancelled run stopped. Exactly one JSON object goes
to stdout.

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/credentials.py --tokens 200

a small run (`tests/bench/test_credentials_bench.py` keeps it working): a demo sandbox with
`--tokens` API tokens planted (every tenth never seen, every tenth from the second not seen for
months) and `--projects` projects with access (as bench/access_timing.py plants them), the user
the demo's id 6; the revoke and the cancel take a tenth of the tokens, or fewer.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import gc
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import qasync
from access_timing import cpu_of
from access_timing import seed as seed_projects
from margin import margin_goals, meets
from PySide6.QtCore import QItemSelection, QItemSelectionModel, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from ui_tables import GcMeter, StallMeter, connected, painted, until

from app.api.access import CONCURRENCY, read_access
from app.registry import TOOLS_BY_KEY
from app.startup import tune_interpreter
from app.viewmodels.api_tokens import TokenRow
from app.viewmodels.session import Session
from app.viewmodels.table import releasing
from app.viewmodels.tools import ToolModel
from sandbox import db
from sandbox.process import SandboxProcess
from ui.access_overview import AccessOverviewView
from ui.api_tokens import ApiTokensView, DeleteTokensConfirmation
from ui.table import DataTable
from ui.tool_page import ToolPage

GOALS = {
    "tokens_shown_s_max": 1.0,
    "keystroke_ms_max": 50,
    "access_s_max": 1.0,
    "revoke_longest_stall_ms_max": 50,
}
#: the access set's user whose answer is measured: an Admin (every 200th planted user), so the
#: answer holds every project
SCALE_USER = "scale.user.0000@access.example.com"
#: the demo's Editor in Platform team and Checkout squad (bench/access_timing.py's)
DEMO_USER = "6"
#: the keystrokes typed in the filter box (`\b`: Backspace)
KEYSTROKES = "client" + "\b" * 6 + "token-0999"
DAY_MS = 86_400_000


@contextmanager
def collections_meanwhile() -> Iterator[GcMeter]:
    """The longest cyclic garbage collections of each generation while in the block (a stall
    of the GUI thread is one of them, or the machine giving the process no core)."""
    meter = GcMeter()
    try:
        yield meter
    finally:
        gc.callbacks.remove(meter._callback)


# ---------------------------------------------------------------------------- the small mode


def plant_tokens(path: Path, count: int, now_ms: int) -> None:
    """`count` API tokens `bench-token-NNNNN` straight into the sandbox's database (while it
    runs, as bench/access_timing.py plants its projects): every tenth never seen (k % 10 == 0),
    every tenth from the second last seen 40 days ago or more, the rest seen within the month."""
    rows = []
    for k in range(count):
        seen: int | None = now_ms - (k % 30) * DAY_MS
        if k % 10 == 0:
            seen = None
        elif k % 10 == 1:
            seen = now_ms - (40 + k % 300) * DAY_MS
        rows.append((f"{k:064x}", ("development", "production")[k % 2], now_ms - 400 * DAY_MS,
                     f"bench-token-{k:05d}", ("client", "frontend", "backend")[k % 3],
                     f"*:development.…{k:08x}", seen))  # fmt: skip
    conn = db.connect(path)
    try:
        with conn:
            conn.executemany(
                "INSERT INTO tokens(secret_hash, kind, environment, created_at, served, name,"
                " api_type, projects, handle, seen_at) VALUES(?, 'client', ?, ?, 1, ?, ?,"
                " '[\"*\"]', ?, ?)",
                rows,
            )
    finally:
        conn.close()


# ---------------------------------------------------------------------------- the window


class ToolWindow:
    """A tool's page, opened as the main window opens it."""

    def __init__(self, session: Session, key: str) -> None:
        self.page = ToolPage(ToolModel(TOOLS_BY_KEY[key], session))
        self.page.resize(1100, 700)
        self.page.show()  # builds the window, which sends its request
        self.view: Any = self.page.ensure_content()

    async def close(self, app: QApplication) -> None:
        page, self.page = self.page, None  # type: ignore[assignment]
        del self.view
        page.close_page()
        page.deleteLater()
        del page
        await painted(app)
        await until(lambda: not releasing())  # its rows let go of before the next opening
        await painted(app)


class TokensWindow(ToolWindow):
    """The API tokens tool's page."""

    def __init__(self, session: Session) -> None:
        super().__init__(session, "api_tokens")
        assert isinstance(self.view, ApiTokensView), self.view
        self.table: DataTable = self.view.table

    async def close(self, app: QApplication) -> None:
        del self.table
        await super().close(app)


async def open_tokens(app: QApplication, session: Session, expected: int) -> dict[str, Any]:
    """The window opened, to its `expected` rows painted; then one character typed at once."""
    meter = StallMeter()
    meter.start()
    started = time.perf_counter()
    window = TokensWindow(session)
    table = window.table
    await until(lambda: table.model.total_count >= expected and table.isVisible())
    await painted(app)
    shown_s = time.perf_counter() - started
    meter.stop()
    out = {"window": window, "shown_s": shown_s, "stall_ms": meter.longest,
           "rows": table.model.total_count}  # fmt: skip
    t = time.perf_counter()
    QTest.keyClick(table.filter_edit, Qt.Key.Key_C)
    await painted(app)
    out["first_keystroke_ms"] = (time.perf_counter() - t) * 1000
    await until(lambda: not table.model.filter_pending)
    table.filter_edit.clear()
    await painted(app)
    return out


async def keystrokes(app: QApplication, table: DataTable) -> list[float]:
    """Each of `KEYSTROKES` typed in the filter box, to the filtered rows painted (ms)."""
    await until(lambda: not table.model.filter_pending)
    table.filter_edit.clear()
    await painted(app)
    times = []
    for char in KEYSTROKES:
        t = time.perf_counter()
        if char == "\b":
            QTest.keyClick(table.filter_edit, Qt.Key.Key_Backspace)
        else:
            QTest.keyClicks(table.filter_edit, char)
        await painted(app)
        times.append((time.perf_counter() - t) * 1000)
    table.filter_edit.clear()
    await painted(app)
    return times


def select(table: DataTable, keep: Callable[[TokenRow], bool], count: int) -> list[TokenRow]:
    """Select the first `count` rows `keep` takes, in one change of the view's selection (what a
    person's Shift- and Ctrl-clicks end with)."""
    model = table.model
    last = len(model.columns) - 1
    chosen = QItemSelection()
    picked: list[TokenRow] = []
    for row, item in enumerate(model.rows):
        if len(picked) == count:
            break
        if keep(item):
            chosen.select(model.index(row, 0), model.index(row, last))
            picked.append(item)
    flag = QItemSelectionModel.SelectionFlag
    table.view.selectionModel().select(chosen, flag.ClearAndSelect | flag.Rows)
    return picked


async def revoke(
    app: QApplication,
    session: Session,
    window: TokensWindow,
    keep: Callable[[TokenRow], bool],
    count: int,
    stop_after: int | None = None,
) -> dict[str, Any]:
    """Delete `count` tokens `keep` takes through the window: selected, Delete…, the typed
    confirmation accepted, the deletion carried out and the list read again. With `stop_after`,
    the window's Stop is clicked once that many were reported."""
    view, model = window.view, window.view.model
    await until(lambda: model.loaded and not model.busy and not model.acting)
    picked = select(window.table, keep, count)
    assert len(picked) == count, f"only {len(picked)} tokens to delete, not {count}"
    assert len(model.selected) == count, model.delete_reason
    names = {r.name for r in picked}
    view.delete_button.click()
    box = view.confirmation
    assert isinstance(box, DeleteTokensConfirmation), model.delete_reason or model.outcome_error
    box.typed.setText(box.plan.confirm_text or "")
    progress: list[int] = []
    said: list[str] = []
    stopped_at = 0.0

    def on_progress(number: int, total: int) -> None:
        nonlocal stopped_at
        progress.append(number)
        if number in (0, total // 2):
            said.append(view.outcome_label.text())
        if stop_after is not None and number + 1 == stop_after:
            assert view.stop_button.isVisible()
            stopped_at = time.perf_counter()
            view.stop_button.click()

    finished: list[float] = []
    model.progress_changed.connect(on_progress)
    model.action_finished.connect(lambda: finished.append(time.perf_counter()))
    meter = StallMeter()
    meter.start()
    started = time.perf_counter()
    with collections_meanwhile() as collections:
        box.action_button.click()  # the confirmation accepted: the window's own path from here
        await until(lambda: bool(finished), 600)
        done_s = finished[0] - started
        await until(lambda: model.loaded and not model.busy and not model.acting, 600)
        await painted(app)
    reloaded_s = time.perf_counter() - started
    meter.stop()
    model.progress_changed.disconnect(on_progress)
    client = await session.client()
    left = names & {t.name for t in (await client.api_tokens()).tokens}
    out: dict[str, Any] = {
        "selected": count,
        "wall_s": round(done_s, 3),
        "reloaded_s": round(reloaded_s, 3),
        "longest_stall_ms": meter.longest,
        "longest_gc_ms": collections.report(),
        "progress_reported": len(progress),
        "progress_shown": said,
        "outcome": (model.outcome_error or model.outcome).split(" Snapshot: ")[0],
    }
    if stop_after is None:
        out["verified"] = not left and len(progress) == count
    else:
        deleted = count - len(left)
        out["deleted"] = deleted
        out["not_sent"] = len(left)
        out["stop_to_end_ms"] = round((finished[0] - stopped_at) * 1000, 1)
        # what was reported was sent; nothing after the Stop
        out["verified"] = deleted == len(progress) == stop_after and len(left) == count - deleted
    return out


# ---------------------------------------------------------------------------- who can


def answered(view: AccessOverviewView) -> bool:
    return "holds roles in" in view.summary_label.text() and not view.model.busy


async def measure_access(
    app: QApplication,
    session: Session,
    sandbox: SandboxProcess,
    user: str,
    runs: int,
    concurrency: int,
) -> dict[str, Any]:
    """The who-can window opened `runs` times, `user` asked at once, to their answer painted;
    the CPU time this process (the client) and the sandbox spent on it (on a busy machine the
    wall time is theirs and the waits for a core). Then, once, the whole server's read
    (`read_access`, `concurrency` projects at once): what a server without the access overview
    (Pro) needs for a user's answer."""
    seconds: list[float] = []
    stalls: list[int] = []
    client_cpu: list[float] = []
    server_cpu: list[float] = []
    holdings = projects = read = requests = 0
    gc_ms: dict[str, float] = {}
    for _ in range(runs):
        meter = StallMeter()
        meter.start()
        cpu, served = time.process_time(), cpu_of(sandbox.pid)
        t = time.perf_counter()
        with collections_meanwhile() as collections:
            window = ToolWindow(session, "access_overview")
            view = window.view
            assert isinstance(view, AccessOverviewView), view
            view.ask("user", user)
            await until(partial(answered, view), 60)
            await painted(app)
        seconds.append(time.perf_counter() - t)
        for gen, ms in collections.report().items():
            gc_ms[gen] = max(gc_ms.get(gen, 0.0), ms)
        client_cpu.append(time.process_time() - cpu)
        server_cpu.append(cpu_of(sandbox.pid) - served)
        meter.stop()
        stalls.append(meter.longest)
        data = view.model.data
        assert data is not None
        holdings, projects, read = view.model.where_table.total_count, len(data.projects), len(
            data.read)  # fmt: skip
        requests = 4 + (data.reach is not None) + read  # who there is, the overview, projects
        await window.close(app)
    client = await session.client()
    t = time.perf_counter()
    whole = await read_access(client, concurrency=concurrency)
    whole_s = time.perf_counter() - t
    return {
        "access_s": round(statistics.median(seconds), 3),
        "access_s_max": round(max(seconds), 3),
        "access_runs_s": [round(s, 3) for s in seconds],
        "access_stall_ms": max(stalls),
        "access_longest_gc_ms": gc_ms,
        "access_client_cpu_s": round(statistics.median(client_cpu), 3),
        "access_sandbox_cpu_s": round(statistics.median(server_cpu), 3),
        "access_projects": projects,
        "access_projects_read": read,
        "access_requests": requests,
        "access_user": user,
        "access_user_projects": holdings,
        "access_whole_read_s": round(whole_s, 3),
        "access_whole_read_projects": len(whole.read),
        "access_concurrency": concurrency,
        "access_measured": "the who-can window opened, the user asked at once, to the answer "
        "painted (reading who there is, the access overview and the user's projects' access); "
        "access_whole_read_s: every project's access read once (a server without the overview)",
    }


# ---------------------------------------------------------------------------- the run


def never_seen(prefix: str) -> Callable[[TokenRow], bool]:
    return lambda r: r.name.startswith(prefix) and r.seenAt is None


def long_unseen(prefix: str, now: float) -> Callable[[TokenRow], bool]:
    """Seen, but not for 30 days or more."""
    return lambda r: (r.name.startswith(prefix) and r.seenAt is not None
                      and now - r.seenAt.timestamp() > 30 * 86_400)  # fmt: skip


async def bench(app: QApplication, sandbox: SandboxProcess, args: argparse.Namespace,
                expected: int, prefix: str) -> dict[str, Any]:  # fmt: skip
    async with connected(sandbox) as session:
        opened = []
        typed: list[float] = []
        for run in range(args.runs):
            o = await open_tokens(app, session, expected)
            if run == 0:
                typed = await keystrokes(app, o["window"].table)
            if run < args.runs - 1:
                await o["window"].close(app)
            opened.append(o)
        window = opened[-1]["window"]
        access = await measure_access(app, session, sandbox, args.user, args.runs,
                                      args.concurrency)  # fmt: skip
        revoked = await revoke(app, session, window, never_seen(prefix), args.revoke)
        cancelled = await revoke(app, session, window, long_unseen(prefix, time.time()),
                                 args.cancel_of, stop_after=args.cancel_after)  # fmt: skip
        await window.close(app)
    shown = [o["shown_s"] for o in opened]
    return {
        "tokens": opened[0]["rows"],
        "tokens_shown_s": round(statistics.median(shown), 3),
        "tokens_shown_s_max": round(max(shown), 3),
        "tokens_shown_stall_ms": max(o["stall_ms"] for o in opened),
        "keystroke_ms": round(statistics.median(typed), 1),
        "keystroke_ms_max": round(max(typed), 1),
        "keystrokes": len(typed),
        "first_keystroke_ms_max": round(max(o["first_keystroke_ms"] for o in opened), 1),
        **access,
        "revoke_longest_stall_ms": revoked["longest_stall_ms"],
        "revoke_s": revoked["wall_s"],
        "revoke_reloaded_s": revoked["reloaded_s"],
        "revoke_longest_gc_ms": revoked["longest_gc_ms"],
        "revoke_progress": revoked["progress_reported"],
        "revoke_verified": revoked["verified"],
        "revoke": revoked,
        "cancel": cancelled,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3,
                        help="window openings and access reads (3)")  # fmt: skip
    parser.add_argument(
        "--tokens",
        type=int,
        default=None,
        help="a small run: a demo sandbox with this many tokens planted",
    )
    parser.add_argument("--projects", type=int, default=20,
                        help="with --tokens: projects planted (20)")  # fmt: skip
    parser.add_argument(
        "--revoke",
        type=int,
        default=None,
        help="never-seen tokens revoked (1,000; with --tokens, a tenth)",
    )
    parser.add_argument(
        "--cancel-of",
        type=int,
        default=None,
        help="tokens of the cancelled deletion (200; with --tokens, a tenth)",
    )
    parser.add_argument("--cancel-after", type=int, default=10,
                        help="Stop clicked once this many are reported (10)")  # fmt: skip
    parser.add_argument(
        "--concurrency",
        type=int,
        default=CONCURRENCY,
        help=f"projects' access read at once ({CONCURRENCY}, as flagdesk)",
    )
    parser.add_argument(
        "--user", default=None, help=f"whose access (email, username or id; {SCALE_USER})"
    )
    args = parser.parse_args()
    small = args.tokens is not None
    tenth = (args.tokens or 0) // 10
    args.revoke = args.revoke or (tenth if small else 1_000)
    args.cancel_of = args.cancel_of or (tenth if small else 200)
    args.cancel_after = min(args.cancel_after, max(1, args.cancel_of // 2))
    args.user = args.user or (DEMO_USER if small else SCALE_USER)
    layout = tempfile.mkdtemp(prefix="flagdesk-bench-layout-")
    atexit.register(shutil.rmtree, layout, True)
    # remembered column widths and sort orders from a real desktop would change the figures
    os.environ.setdefault("FLAGDESK_CONFIG_DIR", layout)
    app = QApplication(sys.argv[:1])
    app.setQuitOnLastWindowClosed(False)
    tune_interpreter()  # as `ui.main_window.run` does
    collections = GcMeter()
    with tempfile.TemporaryDirectory(prefix="flagdesk-bench-") as tmp:
        # the journal and snapshots of the bench's deletions: not the user's
        os.environ["FLAGDESK_DATA_DIR"] = str(Path(tmp) / "data")
        path = Path(tmp) / "credentials.sqlite3"
        t = time.perf_counter()
        if small:
            sandbox = SandboxProcess(path, "--demo")
            sandbox.start(timeout=120)
            plant_tokens(path, args.tokens, int(time.time() * 1000))
            seed_projects(path, args.projects)
            prefix, described = (
                "bench-token-",
                (f"serve --demo, {args.tokens} tokens and {args.projects} projects planted"),
            )
        else:
            sandbox = SandboxProcess(path, "--empty", "--scale")
            sandbox.start(timeout=600)
            prefix, described = "scale-token-", "serve --empty --scale (the access set)"
        prepared_s = time.perf_counter() - t
        try:
            with sandbox.admin() as http:
                expected = len(http.get("/api/admin/api-tokens").json()["tokens"])
            loop = qasync.QEventLoop(app)
            asyncio.set_event_loop(loop)
            with loop:
                result = loop.run_until_complete(bench(app, sandbox, args, expected, prefix))
        finally:
            sandbox.stop()
    figures = {
        "tokens_shown_s_max": result["tokens_shown_s"],
        "keystroke_ms_max": result["keystroke_ms_max"],  # every keystroke within
        "access_s_max": result["access_s"],
        "revoke_longest_stall_ms_max": result["revoke_longest_stall_ms"],
    }
    margin = margin_goals(GOALS)
    ok = bool(result["revoke_verified"] and result["cancel"]["verified"])
    print(
        json.dumps(
            {
                "benchmark": "credentials",
                "sandbox": described,
                "runs": args.runs,
                "sandbox_prepared_s": round(prepared_s, 1),
                **result,
                "longest_gc_ms": collections.report(),
                "load_average": round(os.getloadavg()[0], 2),
                "goal": GOALS,
                "margin_goal": margin,
                "met": ok and meets(figures, GOALS),
                "met_with_margin": ok and meets(figures, margin),
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
