"""Bulk actions through the GUI's view-models (issue 15): deleting 10,000 inactive users and
reviving 2,000 archived flags.

    .venv/bin/python bench/actions.py [--scale 100000] [--delete 10000] [--revive 2000]

Starts `flagdesk serve --empty --scale N` (about 55% of N users inactive), opens the
inactive-users view-model as the window does (one qasync loop, the shared client), selects
`--delete` users and deletes them as a confirmed plan: the snapshot, the journal entry, the
request, the list read again. Its table is sorted as the window sorts it when it opens (days
inactive, most first; the archive: archived, newest first), so the list read again is sorted
as in the window. For the deletion it reports:

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

    .venv/bin/python bench/actions.py --unleash [--unleash-items 1000]

adds the same two jobs against a real Unleash (UNLEASH_BASE_URL, UNLEASH_ADMIN_TOKEN and
DATABASE_URL from the environment, else from the peer's /var/tmp/unleash-peer/run/unleash.env),
reported as `unleash` beside the sandbox's figures, with the sandbox run on the same counts
(`--delete` and `--revive` default to `--unleash-items`). Its SETUP ONLY reaches behind the
API: Unleash creates at most 20 users a minute, so the inactive users are inserted straight into
its PostgreSQL (`psql`), created 400 days ago and last seen 300 days ago, which is what its
inactive list (`InactiveUsersStore`: no login, creation or token use in 180 days, not a service
or system user, not deleted) counts. The flags are made with the admin API and archived in one
request (`POST /api/admin/projects/default/archive`). Everything it seeded is removed at the end,
whatever happened: the flags archived again and deleted for good through the API, the users'
rows deleted in SQL (Unleash only marks a user deleted), so the compat suite finds the peer as
it was. Only rows named `flagdesk-bench-<run>-...` are touched.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import httpx
import qasync
from margin import margin_goals, meets
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from ui_tables import StallMeter, connected, connected_to, until

from app.actions.archived_features import BATCH
from app.api.errors import ClientError
from app.startup import tune_interpreter
from app.viewmodels.archive import ARCHIVED_COLUMN, DEFAULT_ORDER, REVIVE, ArchiveBrowserModel
from app.viewmodels.inactive_users import DAYS_COLUMN, InactiveUsersModel
from app.viewmodels.session import Session
from sandbox.process import SandboxProcess

GOALS = {"wall_s_max": 3.0, "longest_stall_ms_max": 50}
#: how long a list may take to load: a real Unleash reads the archive through its search API,
#: 500 flags a request and about 15 requests a minute (429s waited out)
WAIT_S = {"sandbox": 120.0, "unleash": 900.0}


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


def anything(_name: str) -> bool:
    return True


async def delete_inactive(
    session: Session, count: int, pick: Callable[[str], bool] = anything, wait: float = 120
) -> dict[str, Any]:
    """Delete `count` of the inactive users whose name `pick` takes, as the window does."""
    model = InactiveUsersModel(session)
    model.table.sort(DAYS_COLUMN, Qt.SortOrder.DescendingOrder)  # as the window opens
    model.start()
    await until(lambda: model.loaded, wait)
    rows = [r for r in model.table.all_rows if pick(r.name or "")][:count]
    ids = {r.id for r in rows}
    client = await session.client()
    with counting(client) as sent:
        return await _delete(model, rows, ids, sent, client, wait)


async def _delete(
    model: InactiveUsersModel, rows: list[Any], ids: set[int], sent: list[str], client: Any,
    wait: float,
) -> dict[str, Any]:  # fmt: skip
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
    await until(lambda: model.loaded and not model.busy_loading, wait)
    reloaded_s = time.perf_counter() - started
    meter.stop()
    error = model.outcome_error
    model.close()
    # a deletion whose answer did not come in time (the client waits 30 s) may still be under
    # way on the server: how long until the users are gone, read every 2 s (up to 10 minutes)
    while True:
        left = {u.id for u in (await client.inactive_users()).inactiveUsers}
        gone_s = time.perf_counter() - started
        if not ids & left or not error or gone_s > 600:
            break
        await asyncio.sleep(2)
    return {
        "users": len(rows),
        "wall_s": round(wall_s, 3),
        "reloaded_s": round(reloaded_s, 3),
        "requests": len(writes),
        "longest_stall_ms": meter.longest,
        "verified": not (ids & left),
        **({"error": error, "gone_on_the_server_s": round(gone_s, 1)} if error else {}),
    }


async def revive_archived(
    session: Session, count: int, pick: Callable[[str], bool] = anything, wait: float = 120
) -> dict[str, Any]:
    """Revive `count` of project default's archived flags whose name `pick` takes."""
    model = ArchiveBrowserModel(session)
    model.table.sort(ARCHIVED_COLUMN, DEFAULT_ORDER)  # as the window opens
    model.start()
    started = time.perf_counter()
    model.show_project("default")
    await until(lambda: model.loaded_project == "default" and not model.busy, wait)
    listed_s = time.perf_counter() - started
    rows = [f for f in model.table.all_rows if pick(f.name)][:count]
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
        await until(lambda: model.loaded_project == "default" and not model.busy, wait)
        reloaded_s = time.perf_counter() - started
        meter.stop()
    error = model.outcome_error
    left = {f.name for f in (await client.archived_features("default")).features}
    model.close()
    return {
        **({"error": error} if error else {}),
        "flags": len(rows),
        "listed_s": round(listed_s, 3),
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


# ------------------------------------------------------------------ a real Unleash

#: where the peer kit (../shared/peers/unleash) writes its variables
PEER_ENV = Path("/var/tmp/unleash-peer/run/unleash.env")


def unleash_settings() -> dict[str, str]:
    """UNLEASH_BASE_URL, UNLEASH_ADMIN_TOKEN and DATABASE_URL: from the environment, else
    from the peer's env file (`KEY=value` lines, values maybe quoted)."""
    names = ("UNLEASH_BASE_URL", "UNLEASH_ADMIN_TOKEN", "DATABASE_URL")
    found = {n: os.environ.get(n, "") for n in names}
    if not all(found.values()) and PEER_ENV.exists():
        for line in PEER_ENV.read_text().splitlines():
            key, _, value = line.partition("=")
            if key in found and not found[key]:
                found[key] = value.strip().strip("'\"")
    missing = [n for n in names if not found[n]]
    if missing:
        raise SystemExit(f"--unleash: {', '.join(missing)} not set (nor in {PEER_ENV})")
    if shutil.which("psql") is None:
        raise SystemExit("--unleash: psql is not installed (the postgresql-client package)")
    return found


class UnleashSeed:
    """What the bench puts on a real Unleash, and takes off again: `count` inactive users
    (SQL: the setup's one way behind the API) and `count` archived flags of project default,
    all named `flagdesk-bench-<run>-...`."""

    def __init__(self, settings: dict[str, str], count: int) -> None:
        self.url = settings["UNLEASH_BASE_URL"].rstrip("/")
        self.token = settings["UNLEASH_ADMIN_TOKEN"]
        self.database = settings["DATABASE_URL"]
        self.count = count
        self.prefix = f"flagdesk-bench-{uuid.uuid4().hex[:8]}-"
        self.flags = [f"{self.prefix}flag-{i:04d}" for i in range(count)]
        self.seed_s: dict[str, float] = {}

    def picks(self, name: str) -> bool:
        return name.startswith(self.prefix)

    def sql(self, statement: str) -> str:
        done = subprocess.run(
            ["psql", self.database, "-v", "ON_ERROR_STOP=1", "-q", "-At", "-c", statement],
            check=True, timeout=120, capture_output=True, text=True,
        )  # fmt: skip
        return done.stdout.strip()

    def http(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": self.token}, timeout=60)

    def seed(self) -> None:
        started = time.perf_counter()
        # SETUP ONLY, behind the API: Unleash creates 20 users a minute at most. Inactive as
        # its InactiveUsersStore counts: created and last seen long before 180 days ago.
        self.sql(
            "INSERT INTO users (name, username, email, created_at, seen_at) "
            f"SELECT '{self.prefix}user-' || lpad(i::text, 4, '0'), "
            f"'{self.prefix}user-' || i, '{self.prefix}user-' || i || '@example.com', "
            "now() - interval '400 days', now() - interval '300 days' "
            f"FROM generate_series(1, {self.count}) AS i"
        )
        self.seed_s["users_sql"] = round(time.perf_counter() - started, 2)
        started = time.perf_counter()
        with self.http() as http:
            for name in self.flags:
                answer = http.post("/api/admin/projects/default/features", json={"name": name})
                answer.raise_for_status()
            self.seed_s["flags_api"] = round(time.perf_counter() - started, 2)
            started = time.perf_counter()
            answer = http.post("/api/admin/projects/default/archive",
                               json={"features": self.flags})  # fmt: skip
            answer.raise_for_status()
        self.seed_s["archive_api"] = round(time.perf_counter() - started, 2)

    def clean(self) -> dict[str, int]:
        """Take off everything seeded, whatever state the jobs left it in; what was left."""
        try:
            with self.http() as http:
                # revived ones are live: archive them again (archived ones are skipped), then
                # delete every one from the archive for good
                for i in range(0, len(self.flags), 1000):
                    batch = self.flags[i : i + 1000]
                    http.post("/api/admin/projects/default/archive", json={"features": batch})
                    http.post("/api/admin/projects/default/delete", json={"features": batch})
        except httpx.HTTPError:  # the server went away (restarted?): the rows go in SQL
            self.sql(f"DELETE FROM features WHERE name LIKE '{self.prefix}%'")
        # the users: Unleash's deletion only marks a row deleted (its name kept)
        self.sql(f"DELETE FROM users WHERE name LIKE '{self.prefix}%'")
        flags_left = self.sql(f"SELECT count(*) FROM features WHERE name LIKE '{self.prefix}%'")
        users_left = self.sql(f"SELECT count(*) FROM users WHERE name LIKE '{self.prefix}%'")
        return {"flags_left": int(flags_left or 0), "users_left": int(users_left or 0)}


async def bench_unleash(seed: UnleashSeed) -> dict[str, Any]:
    """The two jobs; one that cannot finish is reported with its error, the other still runs."""
    out: dict[str, Any] = {}
    wait = WAIT_S["unleash"]
    async with connected_to(seed.url, seed.token) as session:
        for name, job in (("delete_inactive_users", delete_inactive),
                          ("revive_archived_features", revive_archived)):  # fmt: skip
            try:
                out[name] = await job(session, seed.count, seed.picks, wait)
            except (TimeoutError, ClientError) as exc:
                out[name] = {"error": f"{type(exc).__name__}: {exc}"}
    return out


def run_unleash(app: QApplication, count: int) -> dict[str, Any]:
    """The two jobs on a real Unleash, seeded with `count` of each first and cleaned after."""
    seed = UnleashSeed(unleash_settings(), count)
    try:
        seed.seed()
        loop = qasync.QEventLoop(app)
        asyncio.set_event_loop(loop)
        with loop:
            result = loop.run_until_complete(bench_unleash(seed))
    finally:
        left = seed.clean()
    return {"url": seed.url, **result, "seeding_s": seed.seed_s, "cleaned": left}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=int, default=100_000)
    parser.add_argument(
        "--delete",
        type=int,
        default=None,
        help="inactive users to delete (10,000; with --unleash, its items)",
    )
    parser.add_argument(
        "--revive",
        type=int,
        default=None,
        help="archived flags to revive (2,000; with --unleash, its items)",
    )
    parser.add_argument(
        "--unleash", action="store_true", help="run the same jobs on a real Unleash too (see above)"
    )
    parser.add_argument(
        "--unleash-items",
        type=int,
        default=1_000,
        help="inactive users and archived flags seeded on it (1,000)",
    )
    args = parser.parse_args()
    default = args.unleash_items if args.unleash else None
    args.delete = args.delete or default or 10_000
    args.revive = args.revive or default or 2_000
    app = QApplication(sys.argv[:1])
    app.setQuitOnLastWindowClosed(False)
    tune_interpreter()  # as `ui.main_window.run` does
    unleash: dict[str, Any] | None = None
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
        if args.unleash:
            unleash = run_unleash(app, args.unleash_items)
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
                **({} if unleash is None else {"unleash": unleash}),
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
