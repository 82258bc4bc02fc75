"""Event-loop and HTTP stress under qasync, shared by the in-process tests and the subprocess.

Run as a script (`python -m tests.ui.loop_stress URL`, admin token in FLAGDESK_STRESS_TOKEN) it
makes its own QApplication and qasync loop, runs both workloads and prints one JSON line. A
binding that corrupts reference counts (PySide6 6.12.0 on CPython 3.11: "Fatal Python error:
none_dealloc") kills this process, not pytest, and the test shows its output.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import sys
import time
from collections import Counter

import httpx
from PySide6.QtCore import QObject, Signal

TURNS = 10_000
REQUESTS = 2_000
CONCURRENCY = 16
#: auth, a database read and a 1 kB body: more work per request than /health
PATH = "/api/admin/projects"
TOKEN_ENV = "FLAGDESK_STRESS_TOKEN"


class Ticker(QObject):
    ticked = Signal(int)


async def spin(turns: int, ticker: Ticker) -> int:
    """`turns` trips through the event loop, each a Qt timer event under qasync, each with a
    Signal.emit (the call that leaked a reference to True on the bad pair)."""
    done = 0
    for i in range(turns):
        ticker.ticked.emit(i)
        await asyncio.sleep(0)
        done += 1
    return done


async def hammer(
    url: str, token: str, requests: int = REQUESTS, concurrency: int = CONCURRENCY
) -> Counter[int]:
    """`requests` GETs of PATH over one httpx.AsyncClient, `concurrency` at a time; returns the
    count of each status code."""
    statuses: Counter[int] = Counter()
    shares = [requests // concurrency + (i < requests % concurrency) for i in range(concurrency)]
    async with httpx.AsyncClient(
        base_url=url, headers={"Authorization": token}, timeout=30
    ) as http:

        async def worker(n: int) -> None:
            for _ in range(n):
                response = await http.get(PATH)
                statuses[response.status_code] += 1

        await asyncio.gather(*(worker(n) for n in shares))
    return statuses


def versions() -> dict[str, str]:
    import PySide6
    from PySide6.QtCore import qVersion

    return {"pyside6": PySide6.__version__, "qt": qVersion(), "python": platform.python_version()}


def main(argv: list[str]) -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import qasync
    from PySide6.QtCore import QtMsgType, qInstallMessageHandler
    from PySide6.QtWidgets import QApplication

    url, token = argv[1], os.environ[TOKEN_ENV]
    app = QApplication([argv[0]])
    qt_warnings: list[str] = []

    def on_message(mode: QtMsgType, _context: object, message: str) -> None:
        if mode != QtMsgType.QtDebugMsg and mode != QtMsgType.QtInfoMsg:
            qt_warnings.append(message)

    qInstallMessageHandler(on_message)
    received = 0

    def on_ticked(_: int) -> None:
        nonlocal received
        received += 1

    ticker = Ticker()
    ticker.ticked.connect(on_ticked)

    async def both() -> dict[str, object]:
        t0 = time.perf_counter()
        turns = await spin(TURNS, ticker)
        t1 = time.perf_counter()
        statuses = await hammer(url, token)
        t2 = time.perf_counter()
        return {
            "turns": turns,
            "signals": received,
            "statuses": {str(k): v for k, v in statuses.items()},
            "turns_s": round(t1 - t0, 3),
            "requests_s": round(t2 - t1, 3),
        }

    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        result = loop.run_until_complete(both())
    asyncio.set_event_loop(None)
    result["qt_warnings"] = qt_warnings
    result.update(versions())
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
