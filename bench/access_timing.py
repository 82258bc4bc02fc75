"""Who can do what where over many projects: `flagdesk access show --user` against a sandbox
with 500 projects (a rough timing, not a test; the issue's goal: one user over 500 projects in
1 s or less).

    .venv/bin/python bench/access_timing.py [--projects 500] [--runs 5] [--concurrency 4]

Starts a demo sandbox, adds `--projects` projects straight into its database, each with two
users and one group holding roles (so every project's access has something in it), then times
`app.api.access.read_access` (the users, groups, projects, and every project's access read
concurrently, at most `--concurrency` at once) and `user_access` for one user, on a fresh client
each run (its capability probe included), and the whole command (`flagdesk access show --user`
as a subprocess, Python's start included). Prints one JSON object: each run's seconds and the
median.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.api.access import find_person, read_access, user_access  # noqa: E402
from app.api.client import AdminClient  # noqa: E402
from sandbox import db  # noqa: E402
from sandbox.process import SandboxProcess  # noqa: E402

USER = 6  # the demo's Editor in Platform team and Checkout squad


def seed(path: Path, count: int) -> None:
    conn = db.connect(path)
    try:
        with conn:
            conn.executemany(
                "INSERT INTO projects(id, name, description, created_at) VALUES(?, ?, '', 0)",
                [(f"bench-{i:04d}", f"Bench {i}") for i in range(count)],
            )
            rows: list[tuple[str, int, int | None, int | None]] = []
            for i in range(count):
                project = f"bench-{i:04d}"
                rows.append((project, 4, 2 + i % 40, None))
                rows.append((project, 5, USER if i % 3 == 0 else 3 + i % 30, None))
                rows.append((project, 5, None, 1 + i % 3))
            conn.executemany(
                "INSERT INTO project_roles(project, role_id, user_id, group_id, created_at)"
                " VALUES(?, ?, ?, ?, 0)",
                rows,
            )
    finally:
        conn.close()


def cpu_of(pid: int) -> float:
    """The CPU seconds (user and system) process `pid` has used (Linux `/proc`)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def once(url: str, token: str, concurrency: int) -> tuple[float, float, int]:
    start, cpu = time.perf_counter(), time.process_time()
    async with AdminClient(url, token) as client:
        data = await read_access(client, concurrency=concurrency)
    person = next(p for p in data.people if p.id == USER)
    answer = user_access(data, find_person(data, person.email))
    return time.perf_counter() - start, time.process_time() - cpu, len(answer.holdings)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--projects", type=int, default=500)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.sqlite3"
        with SandboxProcess(path, "--demo") as sb:
            seed(path, args.projects)
            runs, client_cpu, server_cpu, holdings = [], [], [], 0
            for _ in range(args.runs):
                before = cpu_of(sb.pid)
                seconds, cpu, holdings = asyncio.run(once(sb.url, sb.admin_token,
                                                          args.concurrency))  # fmt: skip
                server_cpu.append(round(cpu_of(sb.pid) - before, 3))
                runs.append(round(seconds, 3))
                client_cpu.append(round(cpu, 3))
            with sb.admin() as http:
                email = next(u["email"] for u in http.get("/api/admin/user-admin").json()["users"]
                             if u["id"] == USER)  # fmt: skip
            env = {**os.environ, "FLAGDESK_TOKEN": sb.admin_token,
                   "FLAGDESK_DATA_DIR": folder, "PYTHONPATH": str(ROOT)}  # fmt: skip
            command = []
            for _ in range(3):
                start = time.perf_counter()
                subprocess.run([sys.executable, "-m", "app", "access", "show", "--user", email,
                                "--json", "--url", sb.url], env=env, check=True,
                               capture_output=True)  # fmt: skip
                command.append(round(time.perf_counter() - start, 3))
    print(json.dumps({
        "projects": args.projects + 5, "concurrency": args.concurrency,
        "user_projects": holdings, "read_and_compute_s": runs,
        "median_s": statistics.median(runs),
        "client_cpu_s": client_cpu, "sandbox_cpu_s": server_cpu,
        "load_average": os.getloadavg()[0], "cores": os.cpu_count(),
        "command_s": command,
        "command_median_s": statistics.median(command),
    }))  # fmt: skip


if __name__ == "__main__":
    main()
