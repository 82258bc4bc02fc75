"""Bulk actions through the GUI's view-models (issue 15): deleting 10,000 inactive users and
reviving 2,000 archived flags.

    .venv/bin/python bench/actions.py [--scale 100000] [--delete 10000] [--revive 2000]

Starts `flagdesk serve --empty --scale N` (about 55% of N users inactive), opens the
inactive-users view-model as the window does (one qasync loop, the shared client), selects
`--delete` users and deletes them as a confirmed plan: the snapshot, the journal entry, the
request, the list read again. For the deletion it reports:

- wall_s: from the confirmed plan to the deletion's outcome (snapshot, journal, request, answer);
- reloaded_s: from the confirmed plan to the list read again without them;
- requests: the requests the deletion sent (goal: one per batch, not one per user: 1);
- longest_stall_ms: the longest the GUI thread went without turning its event loop meanwhile;
- the deleted users are gone on the server (`verified`).

The same for reviving `--revive` of the N archived flags of project `default` (the archive
browser's view-model: `plan(REVIVE)`, `carry_out`): one request per batch of 1,000 flags.

Goals (issue 15), for each job: wall under 3 s, requests = batches, longest stall under 50 ms;
with the margin of issue 14 (bench/margin.py): 2.4 s and 40 ms. Exactly one JSON object goes to
stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import qasync
from margin import margin_goals, meets
from PySide6.QtWidgets import QApplication
from ui_tables import StallMeter, connected, until

from app.actions.archived_features import BATCH
from app.viewmodels.archive import REVIVE, ArchiveBrowserModel
from app.viewmodels.inactive_users import InactiveUsersModel
from app.viewmodels.session import Session
from sandbox.process import SandboxProcess
from ui.main_window import share_the_interpreter

GOALS = {"wall_s_max": 3.0, "longest_stall_ms_max": 50}


@contextmanager
def counting(client: Any) -> Iterator[list[str]]:
    """The requests `client` sends meanwhile ("METHOD path"): the bench's view of the wire."""
    sent: list[str] = []
    send = client._send

    async def counted(method: str, path: str, *args: Any, **kwargs: Any) -> Any:
        sent.append(f"{method} {path}")
        return await send(method, path, *args, **kwargs)

    client._send = counted
    try:
        yield sent
    finally:
        client._send = send


async def delete_inactive(session: Session, count: int) -> dict[str, Any]:
    model = InactiveUsersModel(session)
    model.start()
    await until(lambda: model.loaded)
    rows = model.table.all_rows[:count]
    ids = {r.id for r in rows}
    client = await session.client()
    with counting(client) as sent:
        return await _delete(model, rows, ids, sent, client)


async def _delete(
    model: InactiveUsersModel, rows: list[Any], ids: set[int], sent: list[str], client: Any
) -> dict[str, Any]:
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


async def revive_archived(session: Session, count: int) -> dict[str, Any]:
    model = ArchiveBrowserModel(session)
    model.start()
    model.show_project("default")
    await until(lambda: model.loaded_project == "default" and not model.busy)
    rows = model.table.all_rows[:count]
    names = {f.name for f in rows}
    client = await session.client()
    with counting(client) as sent:
        model.select_rows(rows)
        plan = model.plan(REVIVE)
        assert plan is not None, model.reason(REVIVE)
        meter = StallMeter()
        meter.start()
        started = time.perf_counter()
        task = model.carry_out(plan)
        assert task is not None
        await task
        wall_s = time.perf_counter() - started
        writes = [s for s in sent if not s.startswith("GET")]
        await until(lambda: model.loaded_project == "default" and not model.busy)
        reloaded_s = time.perf_counter() - started
        meter.stop()
    if model.outcome_error:
        raise SystemExit(f"the revive failed: {model.outcome_error}")
    left = {f.name for f in (await client.archived_features("default")).features}
    model.close()
    return {
        "flags": len(rows),
        "wall_s": round(wall_s, 3),
        "reloaded_s": round(reloaded_s, 3),
        "requests": len(writes),
        "batches": -(-len(rows) // BATCH),
        "longest_stall_ms": meter.longest,
        "verified": not (names & left),
    }


async def bench(sandbox: SandboxProcess, delete: int, revive: int) -> dict[str, Any]:
    async with connected(sandbox) as session:
        return {
            "delete_inactive_users": await delete_inactive(session, delete),
            "revive_archived_features": await revive_archived(session, revive),
        }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=int, default=100_000)
    parser.add_argument("--delete", type=int, default=10_000)
    parser.add_argument("--revive", type=int, default=2_000)
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
                result = loop.run_until_complete(bench(sandbox, args.delete, args.revive))
        finally:
            sandbox.stop()
    jobs = (result["delete_inactive_users"], result["revive_archived_features"])
    figures = {name: max(job[name.removesuffix("_max")] for job in jobs) for name in GOALS}
    margin = margin_goals(GOALS)
    ok = all(job["verified"] for job in jobs)
    ok = ok and jobs[0]["requests"] == 1 and jobs[1]["requests"] == jobs[1]["batches"]
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
