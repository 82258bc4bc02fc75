"""Bulk actions through the GUI's view-models (issue 15): deleting 10,000 inactive users.

    .venv/bin/python bench/actions.py [--scale 100000] [--delete 10000]

Starts `flagdesk serve --empty --scale N` (about 55% of N users inactive), opens the
inactive-users view-model as the window does (one qasync loop, the shared client), selects
`--delete` users and deletes them as a confirmed plan: the snapshot, the journal entry, the
request, the list read again. For the deletion it reports:

- wall_s: from the confirmed plan to the deletion's outcome (snapshot, journal, request, answer);
- reloaded_s: from the confirmed plan to the list read again without them;
- requests: the requests the deletion sent (goal: one per batch, not one per user: 1);
- longest_stall_ms: the longest the GUI thread went without turning its event loop meanwhile;
- the deleted users are gone on the server (`verified`).

Goals (issue 15): wall under 3 s, requests = batches, longest stall under 50 ms; with the margin
of issue 14 (bench/margin.py): 2.4 s and 40 ms. Exactly one JSON object goes to stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import qasync
from margin import margin_goals, meets
from PySide6.QtWidgets import QApplication
from ui_tables import StallMeter, connected, until

from app.viewmodels.inactive_users import InactiveUsersModel
from app.viewmodels.session import Session
from sandbox.process import SandboxProcess
from ui.main_window import share_the_interpreter

GOALS = {"wall_s_max": 3.0, "longest_stall_ms_max": 50}


async def delete_inactive(session: Session, count: int) -> dict[str, Any]:
    model = InactiveUsersModel(session)
    model.start()
    await until(lambda: model.loaded)
    rows = model.table.all_rows[:count]
    ids = {r.id for r in rows}
    client = await session.client()
    sent: list[str] = []
    send = client._send  # counted here only: the bench's view of the wire

    async def counted(method: str, path: str, *args: Any, **kwargs: Any) -> Any:
        sent.append(f"{method} {path}")
        return await send(method, path, *args, **kwargs)

    client._send = counted  # type: ignore[method-assign]
    model.select(rows)
    plan = model.plan_delete()
    assert plan is not None, model.delete_reason
    meter = StallMeter()
    meter.start()
    started = time.perf_counter()
    task = model.delete(plan)
    assert task is not None
    await task
    wall_s = time.perf_counter() - started
    writes = [s for s in sent if not s.startswith("GET")]
    await until(lambda: model.loaded and not model.busy_loading)
    reloaded_s = time.perf_counter() - started
    meter.stop()
    client._send = send  # type: ignore[method-assign]
    if model.outcome_error:
        raise SystemExit(f"the deletion failed: {model.outcome_error}")
    left = {u.id for u in (await client.inactive_users()).inactiveUsers}
    model.close()
    return {
        "users": len(rows),
        "wall_s": round(wall_s, 3),
        "reloaded_s": round(reloaded_s, 3),
        "requests": len(writes),
        "longest_stall_ms": meter.longest,
        "verified": not (ids & left),
    }


async def bench(sandbox: SandboxProcess, count: int) -> dict[str, Any]:
    async with connected(sandbox) as session:
        return {"delete_inactive_users": await delete_inactive(session, count)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=int, default=100_000)
    parser.add_argument("--delete", type=int, default=10_000)
    args = parser.parse_args()
    app = QApplication(sys.argv[:1])
    app.setQuitOnLastWindowClosed(False)
    share_the_interpreter()
    with tempfile.TemporaryDirectory(prefix="flagdesk-bench-") as tmp:
        # the journal and snapshots of the bench's deletions: not the user's
        os.environ["FLAGDESK_DATA_DIR"] = str(Path(tmp) / "data")
        sandbox = SandboxProcess(Path(tmp) / "scale.sqlite3", "--empty", "--scale", str(args.scale))
        sandbox.start(timeout=600)
        try:
            loop = qasync.QEventLoop(app)
            asyncio.set_event_loop(loop)
            with loop:
                result = loop.run_until_complete(bench(sandbox, args.delete))
        finally:
            sandbox.stop()
    deletion = result["delete_inactive_users"]
    figures = {name: deletion[name.removesuffix("_max")] for name in GOALS}
    margin = margin_goals(GOALS)
    ok = deletion["verified"] and deletion["requests"] == 1
    print(
        json.dumps(
            {
                "benchmark": "actions",
                "scale": args.scale,
                **result,
                "goal": {**GOALS, "requests": "one per batch"},
                "margin_goal": margin,
                "met": ok and meets(figures, GOALS),
                "met_with_margin": ok and meets(figures, margin),
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
