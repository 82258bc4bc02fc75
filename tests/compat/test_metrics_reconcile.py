"""Bodies in doubt reconciled against a real Unleash 8.2's totals (`app.metrics.reconcile`).

Unleash aggregates metrics in memory and writes them on an interval: measured on the 8.2 peer,
posted counts showed in the raw read (`GET /api/admin/client-metrics/features/:name/raw`) 2.0
to 4.5 s after the 202 (seven posts), so the check waits `UNLEASH_SETTLE` (10 s) before it
reads. Two bodies are put in doubt:

- one whose request never reached the server (the transport fails it after its `sent` line,
  as a connection lost before the server read it): the check finds it missing, and it is sent
  again in the same upload;
- one the server stored while its 202 was lost (its `accepted` line taken out of the ledger,
  as a kill leaves it): on resume the check finds it counted, and it is not sent again.

The totals end exact. The raw read answers 1 to 48 hours (hoursBack 0, 49 or "abc" read 24).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import httpx

from app.api.client import AdminClient, bulk_metrics_bytes
from app.api.models import BulkApplication, BulkMetric, BulkMetrics, CreateFeature
from app.metrics.batch import Row
from app.metrics.batch_upload import record_baseline, run_checked
from app.metrics.ledger import LEDGER_NAME
from app.metrics.reconcile import HOUR_MS, UNLEASH_SETTLE
from app.metrics.upload import Upload
from tests.compat.test_operations import FLAG_NAMES_CACHE_S

if TYPE_CHECKING:
    from tests.compat.conftest import Cleanup, Peer


class LosesOne(httpx.AsyncHTTPTransport):
    """The real transport, but the `n`-th bulk-metrics request fails as a connection lost
    before the server read it (nothing is sent)."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.n = n
        self.bulk = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/metrics/bulk"):
            self.bulk += 1
            if self.bulk == self.n:
                raise httpx.ReadError("connection lost", request=request)
        return await super().handle_async_request(request)


class Body:
    def __init__(self, index: int, data: bytes, metrics: int) -> None:
        self.index, self.data, self.metrics, self.applications = index, data, metrics, 1


def make_bodies(flags: list[str], app: str) -> tuple[list[Body], list[Row]]:
    now = datetime.now(UTC)
    ms = int(now.timestamp() * 1000)
    hour = ms - ms % HOUR_MS
    bodies, sums = [], {}
    for index in range(6):
        metrics = []
        for k, flag in enumerate(flags):
            yes, no = 3 + index + k, 1 + 2 * index
            metrics.append(BulkMetric(featureName=flag, appName=app, environment="development",
                                      timestamp=now, yes=yes, no=no))  # fmt: skip
            y0, n0 = sums.get(flag, (0, 0))
            sums[flag] = (y0 + yes, n0 + no)
        application = BulkApplication(
            appName=app, environment="development", instanceId=f"{app}-1", interval=10_000,
            started=now,
        )  # fmt: skip
        data = bulk_metrics_bytes(BulkMetrics(applications=[application], metrics=metrics))
        bodies.append(Body(index, data, len(metrics)))
    rows = [Row(f, app, "development", hour, 6, y, n, 0) for f, (y, n) in sums.items()]
    return bodies, rows


async def totals(client: AdminClient, flags: list[str], app: str) -> dict[str, tuple[int, int]]:
    out = {}
    for flag in flags:
        raw = await client.feature_metrics_raw(flag, 2)
        mine = [w for w in raw.data if w.appName == app]
        out[flag] = (sum(w.yes for w in mine), sum(w.no for w in mine))
    return out


def test_bodies_in_doubt_are_decided_from_the_totals_after_the_flush(
    peer: Peer, unique: Callable[[str], str], cleanup: Cleanup, tmp_path: Path
) -> None:
    client_token = peer.require_client_token()
    flags = [unique("reconcile"), unique("reconcile")]
    app = unique("app")
    bodies, rows = make_bodies(flags, app)
    expected = {r.feature: (r.yes, r.no) for r in rows}
    folder = tmp_path / "up"

    async def body() -> None:
        async with AdminClient(peer.url, peer.admin_token) as plain:
            for flag in flags:
                await plain.create_feature("default", CreateFeature(name=flag))
                cleanup.features.append(flag)
        await asyncio.sleep(FLAG_NAMES_CACHE_S + 1)  # the metrics service knows the flags
        transport = LosesOne(3)
        async with AdminClient(peer.url, peer.admin_token, client_token=client_token,
                               transport=transport) as client:  # fmt: skip
            upload = await Upload.start(client, bodies, folder=folder, concurrency=1)
            said = await record_baseline(
                client, folder, rows, admin_token=peer.admin_token, client_token=client_token,
                known_features=None,
            )  # fmt: skip
            assert said == ""
            started = time.monotonic()
            report, checked = await run_checked(upload)  # the server's kind: unleash, 10 s
            assert time.monotonic() - started >= UNLEASH_SETTLE
            upload.close()
            assert checked is not None and [v.outcome for v in checked.verdicts] == ["lacks"]
            assert report.complete and report.missing == 1 and report.requests == 7
            assert report.in_doubt_text == (
                "1 body in doubt was missing from the server's totals: sent again, counted once."
            )
        # a kill after the server stored body 4, before its `accepted` line reached the disk
        journal = folder / LEDGER_NAME
        lines = journal.read_bytes().splitlines(keepends=True)
        journal.write_bytes(b"".join(x for x in lines if b'"i":4,"e":"accepted"' not in x))
        async with AdminClient(peer.url, peer.admin_token, client_token=client_token) as client:
            resumed = await Upload.resume(client, folder)
            report, checked = await run_checked(resumed)
            resumed.close()
            assert checked is not None and [v.outcome for v in checked.verdicts] == ["has"]
            assert report.complete and report.found == 1 and report.requests == 0
            await asyncio.sleep(UNLEASH_SETTLE)  # anything sent twice would show by now
            assert await totals(client, flags, app) == expected

    asyncio.run(body())
