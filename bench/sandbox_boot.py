"""The embedded sandbox's boot, as the GUI waits for it: from the child's spawn to the capability
probe's and the overview's requests answered. Prints one JSON object.

    .venv/bin/python bench/sandbox_boot.py [--runs 9] [--bundle [DIR]] [--baseline DIR]

Each run starts the child as the GUI does (`sandbox.process.embedded_sandbox()`: `python -m
sandbox`, tokens of its run's own handed over in its environment, `--exit-with-parent`), on a
database of the benchmark's own: made with the demo data by a first start that is not counted
(which also writes the bytecode any first start writes), then opened again by each run, as at
a person's second start and in `bench/gui_startup.py` (`--first-start`: a new database for each
run, the demo data loaded by the run). Each run times, from just before the spawn:

- `listening_s`: the child printed its URL (its socket is bound);
- `healthy_s`: it answered `/health` (`SandboxProcess.start()`, what the session waits on);
- `probed_s`: the capability probe's requests answered (`AdminClient.capabilities()`, as
  `Session` does on a new connection: the real client and `app.api.probe`);
- `first_data_s`: then the overview's three requests answered (`ui_config`, `list_projects`,
  `list_users`, at once, as `OverviewViewModel` sends them);
- `child_cpu_s`: the CPU time the child used until then (user and system, from /proc: Linux
  only), which other work on the machine moves less than the times above.

`first_data_s` is the child's share of `bench/gui_startup.py`'s "first data" (the GUI's frame is
up long before it). Figures: median, min and max over `--runs`.

`--bundle [DIR]` starts the child of the PyInstaller bundle in DIR (default: dist/flagdesk, made
by `make bundle`) instead, as the bundle's window does: its executable with `serve`.

`--baseline DIR` alternates the runs with the child started from another checkout's code (its
`sandbox` and `app` first on the child's `PYTHONPATH`), or from another bundle (a DIR holding a
`flagdesk` executable and its `_internal` folder), to compare before and after one change on the
same machine at the same time; the client side stays this checkout's.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from app.api.client import AdminClient
from app.connection import ConnectionSpec
from sandbox import process
from sandbox.process import SandboxProcess

MARKS = ("listening_s", "healthy_s", "probed_s", "first_data_s", "child_cpu_s")


def cpu_seconds(pid: int) -> float:
    """The user and system CPU time process `pid` has used (Linux: /proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def is_bundle(source: Path) -> bool:
    """`source` is a PyInstaller bundle's folder (`make bundle`: dist/flagdesk), not a checkout."""
    return (source / "flagdesk").is_file() and (source / "_internal").is_dir()


@contextlib.contextmanager
def child_code(source: Path | None) -> Iterator[None]:
    """The child imports `sandbox` and `app` from `source` (None: from this checkout, as
    installed), or is the bundle `source`'s executable, and starts in a folder of no checkout
    (`python -m` puts its folder first)."""
    saved_cwd, saved_env = os.getcwd(), dict(os.environ)
    saved_command = process.serve_command
    with tempfile.TemporaryDirectory(prefix="flagdesk-boot-cwd-") as cwd:
        os.chdir(cwd)
        if source is not None and is_bundle(source):
            # the command the bundle's window runs (`serve_command()` in a frozen program)
            process.serve_command = lambda: [str(source / "flagdesk"), "serve"]
        elif source is not None:
            os.environ["PYTHONPATH"] = str(source)
        # a user's second start finds the bytecode the first one wrote (as bench/gui_startup.py)
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        try:
            yield
        finally:
            process.serve_command = saved_command
            os.chdir(saved_cwd)
            os.environ.clear()
            os.environ.update(saved_env)


async def probe_and_overview(client: AdminClient, t0: float, marks: dict[str, float]) -> None:
    async with client:
        await client.capabilities(refresh=True)
        marks["probed_s"] = time.perf_counter() - t0
        await asyncio.gather(client.ui_config(), client.list_projects(), client.list_users())
        marks["first_data_s"] = time.perf_counter() - t0


def one_run(source: Path | None, database: Path) -> dict[str, float]:
    marks: dict[str, float] = {}
    with child_code(source):
        # as `embedded_sandbox()` makes it, on the benchmark's database
        sandbox = SandboxProcess(database, session_tokens=True, exit_with_parent=True)
        t0 = time.perf_counter()
        sandbox.launch()
        try:
            while not sandbox.url and sandbox.launched:
                time.sleep(0.001)
            marks["listening_s"] = time.perf_counter() - t0
            sandbox.start()
            marks["healthy_s"] = time.perf_counter() - t0
            spec = ConnectionSpec(url=sandbox.url, token=sandbox.admin_token,
                                  client_token=sandbox.client_token)  # fmt: skip
            asyncio.run(probe_and_overview(spec.client(), t0, marks))
            marks["child_cpu_s"] = cpu_seconds(sandbox.pid)
        finally:
            sandbox.stop()
    return marks


def summary(runs: list[dict[str, float]]) -> dict[str, dict[str, float]]:
    return {
        mark: {
            "median": round(statistics.median(r[mark] for r in runs), 3),
            "min": round(min(r[mark] for r in runs), 3),
            "max": round(max(r[mark] for r in runs), 3),
        }
        for mark in MARKS
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--bundle", type=Path, nargs="?", const=Path("dist/flagdesk"),
                        default=None, metavar="DIR",
                        help="the child of the bundle in DIR (default: dist/flagdesk)")  # fmt: skip
    parser.add_argument("--baseline", type=Path, default=None,
                        help="a checkout or bundle whose child to alternate with")  # fmt: skip
    parser.add_argument("--first-start", action="store_true",
                        help="a new database (with the demo data) for each run")  # fmt: skip
    args = parser.parse_args()
    sources: dict[str, Path | None] = {"this": None}
    if args.bundle is not None:
        if not is_bundle(args.bundle):
            raise SystemExit(f"no bundle in {args.bundle}: run `make bundle` first")
        sources["this"] = args.bundle.resolve()
    if args.baseline is not None:
        sources["baseline"] = args.baseline.resolve()
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in sources}
    with tempfile.TemporaryDirectory(prefix="flagdesk-boot-") as tmp:
        folder = Path(tmp)

        def database(name: str, run: int) -> Path:
            return folder / name / (f"{run}.sqlite3" if args.first_start else "sandbox.sqlite3")

        for name, source in sources.items():  # not counted: the bytecode, the database
            one_run(source, database(name, -1))
        for run in range(args.runs):
            for name, source in sources.items():
                runs[name].append(one_run(source, database(name, run)))
    out: dict[str, object] = {"benchmark": "sandbox_boot", "runs": args.runs,
                              "first_start": args.first_start}  # fmt: skip
    if args.bundle is not None:
        out["bundle"] = str(sources["this"])
    out.update(summary(runs["this"]))
    if args.baseline is not None:
        out["baseline"] = {"source": str(sources["baseline"]), **summary(runs["baseline"])}
        for mark in ("first_data_s", "child_cpu_s"):  # pair by pair: the machine drifts
            out[f"{mark[:-2]}_saved_s"] = round(
                statistics.median(
                    b[mark] - t[mark] for t, b in zip(runs["this"], runs["baseline"], strict=True)
                ),
                3,
            )
    json.dump(out, sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
