"""The uploader against a real sandbox over HTTP: stored counts equal what was sent, per feature,
application, environment and window; 429/503/502/504 and dropped connections (injected by a
proxy in front of the sandbox, which forwards every other request) end with exact totals, 502
and 504 recorded in doubt, 429 and 503 not; no connection in time (a real connect timeout, or
no free connection in the pool) is not in doubt either; 400, 413 and 415 are reported per body
and never retried; a 3xx stops the upload with every body pending; a wrong token stops the
upload; an unreachable server leaves every body pending; each request starts only once its
`sent` line is on disk (checked by the proxy on a slow disk); Cancel and a cancelled task leave
the ledger consistent (the requests in flight in doubt), and a second run finishes the job;
cancelling `Upload.start` leaves no ledger open.

Every body carries features of its own, so the stored counts can be checked body by body: a body
whose 202 arrived is stored exactly once; a body the ledger marks in doubt (its request got no
answer at least once) is stored once or, at most, once more per unanswered attempt."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import re
import socket
import threading
import time
from collections.abc import Callable, Coroutine, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

import app.metrics.ledger as ledger_module
from app import resources
from app.api.client import AdminClient, RetryPolicy, bulk_metrics_bytes
from app.api.models import BulkApplication, BulkMetric, BulkMetrics
from app.metrics.batch import Row
from app.metrics.batch_upload import record_baseline, run_checked
from app.metrics.ledger import BODIES_NAME, LEDGER_NAME, Ledger, State
from app.metrics.upload import (
    CANCELLED,
    REFUSED,
    UNAUTHORISED,
    UNREACHABLE,
    Progress,
    Report,
    Upload,
)
from sandbox.process import SandboxProcess
from tests.conftest import known_flags
from tests.faults import Drop, FaultServer, Hang, Reply, Seen, closed_port

T = TypeVar("T")
ENVIRONMENT = "development"
HOUR_MS = 3_600_000
FAST = RetryPolicy(attempts=4, base_delay=0.01, max_delay=0.05)
#: (feature, application, environment, window start in ms)
Key = tuple[str, str, str, int]


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


# ---------------------------------------------------------------------------- bodies


@dataclass(frozen=True, slots=True)
class TestBody:
    """A body as `app.metrics.Body` has it, with what the sandbox should store for it."""

    __test__ = False

    index: int
    data: bytes
    metrics: int
    applications: int
    expected: dict[Key, tuple[int, int, dict[str, int]]] = field(default_factory=dict)

    @property
    def features(self) -> set[str]:
        return {key[0] for key in self.expected}


#: every flag the bodies made here name: the sandbox, as Unleash, stores no metrics of a flag
#: it does not know, so `client_for` creates them (`known_flags`) before a test uploads
MADE_FEATURES: set[str] = set()


def make_bodies(
    count: int, tag: str, *, per_body: int = 40, seed: int = 1, start: int = 0
) -> list[TestBody]:
    """`count` valid bodies; body i holds `per_body` metrics for two features of its own, two
    applications and the current and the previous hour window (integer ms timestamps)."""
    rng = random.Random(seed)
    now = int(time.time() * 1000)
    hour = now - now % HOUR_MS
    windows = [hour - HOUR_MS, hour]
    out = []
    for index in range(start, start + count):
        apps = [f"{tag}-app-{a}" for a in range(2)]
        expected: dict[Key, tuple[int, int, dict[str, int]]] = {}
        metrics = []
        for k in range(per_body):
            feature = f"{tag}-b{index:03d}-f{k % 2}"
            app = apps[(k // 2) % 2]
            window = windows[(k // 4) % 2]
            yes, no = rng.randint(0, 90), rng.randint(1, 90)
            variants = {"red": rng.randint(0, 9), "blue": rng.randint(1, 9)} if k % 3 == 0 else {}
            ts = window + rng.randint(0, HOUR_MS - 1) if window < hour else window
            metrics.append(BulkMetric(featureName=feature, appName=app, environment=ENVIRONMENT,
                                      timestamp=ts, yes=yes, no=no, variants=variants))  # fmt: skip
            key = (feature, app, ENVIRONMENT, window)
            y0, n0, v0 = expected.get(key, (0, 0, {}))
            merged = dict(v0)
            for name, n in variants.items():
                merged[name] = merged.get(name, 0) + n
            expected[key] = (y0 + yes, n0 + no, merged)
        applications = [
            BulkApplication(
                appName=app,
                environment=ENVIRONMENT,
                instanceId=f"{app}-1",
                interval=15000,
                started=windows[0],
                strategies=["default"],
            )
            for app in apps
        ]
        data = bulk_metrics_bytes(BulkMetrics(applications=applications, metrics=metrics))
        out.append(TestBody(index, data, per_body, len(applications), expected))
    MADE_FEATURES.update(key[0] for body in out for key in body.expected)
    return out


def raw_body(index: int, data: bytes, metrics: int = 1) -> TestBody:
    with contextlib.suppress(ValueError, TypeError, AttributeError):
        MADE_FEATURES.update(str(m["featureName"]) for m in json.loads(data)["metrics"])
    return TestBody(index, data, metrics, 0)


async def stored_counts(
    client: AdminClient, features: set[str]
) -> dict[Key, tuple[int, int, dict[str, int]]]:
    """What the sandbox stores for these features, by feature, application, environment and
    window."""
    out: dict[Key, tuple[int, int, dict[str, int]]] = {}
    for feature in sorted(features):
        raw = await client.feature_metrics_raw(feature, hours_back=48)
        for w in raw.data:
            assert w.featureName is not None and w.appName is not None
            key = (w.featureName, w.appName, w.environment, int(w.timestamp.timestamp() * 1000))
            assert key not in out
            out[key] = (w.yes, w.no, {k: v for k, v in w.variants.items() if v})
    return out


def times(counts: tuple[int, int, dict[str, int]], k: int) -> tuple[int, int, dict[str, int]]:
    yes, no, variants = counts
    return yes * k, no * k, {name: n * k for name, n in variants.items() if n}


async def assert_stored_exactly(
    client: AdminClient, bodies: Sequence[TestBody], ledger: Ledger | None = None
) -> dict[int, int]:
    """Every body is stored exactly once, except bodies the ledger marks in doubt, which may be
    stored once more per unanswered attempt. Returns how many times each body was stored."""
    features = set().union(*(b.features for b in bodies))
    stored = await stored_counts(client, features)
    assert set(stored) == set().union(*(set(b.expected) for b in bodies))
    found: dict[int, int] = {}
    for body in bodies:
        allowed = [1]
        if ledger is not None:
            entry = ledger.entry(body.index)
            assert entry.state is State.ACCEPTED, (body.index, entry.state)
            allowed = list(range(1, 2 + entry.unanswered))
        matches = [
            k
            for k in allowed
            if all(stored[key] == times(counts, k) for key, counts in body.expected.items())
        ]
        assert matches, (body.index, {key: stored[key] for key in body.expected}, body.expected)
        found[body.index] = matches[0]
    return found


# ---------------------------------------------------------------------------- a fault proxy


@dataclass(frozen=True)
class Forward:
    """Pass the request to the sandbox and its answer back."""


@dataclass(frozen=True)
class Lost:
    """Pass the request to the sandbox (which stores it), then close without the answer."""


ProxyAction = Reply | Drop | Forward | Lost


class FaultProxy:
    """An HTTP/1.1 proxy on 127.0.0.1 in front of a real server, on the test's loop: for the
    n-th bulk-metrics request it does `decide(n, request)`; other requests are forwarded."""

    def __init__(
        self, upstream: str, decide: Callable[[int, Seen], ProxyAction] | Sequence[ProxyAction]
    ) -> None:
        self.upstream = upstream
        if callable(decide):
            self.decide = decide
        else:
            script = list(decide)
            self.decide = lambda n, _: script[n] if n < len(script) else Forward()
        self.requests: list[Seen] = []
        self.actions: list[ProxyAction] = []
        self._server: asyncio.Server | None = None
        self._http: httpx.AsyncClient | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def __aenter__(self) -> FaultProxy:
        self._http = httpx.AsyncClient(base_url=self.upstream, timeout=30)
        self._server = await asyncio.start_server(self._connection, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None and self._http is not None
        self._server.close()
        for writer in list(self._writers):
            writer.close()
        await self._server.wait_closed()
        await self._http.aclose()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            while await self._one(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self._writers.discard(writer)
            writer.close()

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        head = await reader.readuntil(b"\r\n\r\n")
        request_line, *lines = head.decode("latin-1").split("\r\n")
        method, target, _ = request_line.split(" ", 2)
        headers: dict[str, str] = {}
        for line in lines:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        seen = Seen(method, target, headers, body)
        action: ProxyAction = Forward()
        if target.endswith("/metrics/bulk"):
            action = self.decide(len(self.requests), seen)
            self.requests.append(seen)
            self.actions.append(action)
        if isinstance(action, Drop):
            return False
        if isinstance(action, Reply):
            status, content, reply_headers = action.status, action.body, dict(action.headers)
        else:
            assert self._http is not None
            forwarded = {k: v for k, v in headers.items() if k not in ("host", "content-length")}
            response = await self._http.request(method, target, content=body, headers=forwarded)
            if isinstance(action, Lost):
                return False
            status, content = response.status_code, response.content
            reply_headers = {k: v for k, v in response.headers.items()
                             if k.lower() in ("content-type", "retry-after")}  # fmt: skip
        out = [f"HTTP/1.1 {status} Whatever", f"Content-Length: {len(content)}"]
        out += [f"{k}: {v}" for k, v in reply_headers.items()]
        writer.write(("\r\n".join(out) + "\r\n\r\n").encode("latin-1") + content)
        await writer.drain()
        return True


def error_reply(status: int, message: str, headers: dict[str, str] | None = None) -> Reply:
    body = json.dumps({"id": "x", "name": "Injected", "message": message}).encode()
    return Reply(status, body, {"Content-Type": "application/json", **(headers or {})})


# ---------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxProcess]:
    """One empty sandbox for this module; every test writes features of its own."""
    with SandboxProcess(tmp_path_factory.mktemp("upload") / "db.sqlite3", "--empty") as sb:
        yield sb


def client_for(sb: SandboxProcess, url: str | None = None, **kw: Any) -> AdminClient:
    """A client of `sb` with its client token, once `sb` knows the flags of `MADE_FEATURES`."""
    known_flags(sb, MADE_FEATURES)
    kw.setdefault("client_token", sb.client_token)
    return AdminClient(url or sb.url, sb.admin_token, **kw)


def rows_of(bodies: Sequence[TestBody]) -> list[Row]:
    """The preview rows of `bodies`: the keys a baseline records."""
    return [Row(f, a, e, w, 0, yes, no, 0)
            for b in bodies for (f, a, e, w), (yes, no, _) in b.expected.items()]  # fmt: skip


async def checked_upload(
    client: AdminClient, admin_token: str, bodies: Sequence[TestBody], folder: Path, **kw: Any
) -> tuple[Upload, Report]:
    """As `flagdesk metrics upload` sends: the baseline of the server's totals recorded before
    the first request, then the bodies, with the bodies in doubt checked against the totals
    (`batch_upload.run_checked`) rather than sent again blindly."""
    upload = await Upload.start(client, bodies, folder=folder, **kw)
    assert await record_baseline(client, folder, rows_of(bodies), admin_token=admin_token,
                                 client_token=None, known_features=None) == ""  # fmt: skip
    report, _ = await run_checked(upload, settle=0)
    return upload, report


async def upload_all(
    client: AdminClient,
    bodies: Sequence[Any],
    folder: Path,
    *,
    progress: Callable[[Progress], None] | None = None,
    **kw: Any,
) -> tuple[Upload, Report]:
    upload = await Upload.start(client, bodies, folder=folder, **kw)
    report = await upload.run(progress=progress)
    return upload, report


# ---------------------------------------------------------------------------- tests


def test_end_to_end_the_sandbox_stores_exactly_the_batch(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    bodies = make_bodies(30, "e2e")
    seen: list[Progress] = []

    async def main() -> Report:
        async with client_for(sandbox) as client:
            upload, report = await upload_all(client, bodies, tmp_path / "up", progress=seen.append)
            try:
                await assert_stored_exactly(client, bodies, upload.ledger)
            finally:
                upload.close()
            return report

    report = run(main())
    total_metrics = sum(b.metrics for b in bodies)
    assert report.complete and report.stopped == "" and report.error == ""
    assert (report.accepted.bodies, report.accepted.metrics) == (30, total_metrics)
    assert report.rejected.bodies == report.pending.bodies == report.in_doubt == 0
    assert report.requests == 30 and report.retries == 0
    assert report.rejected_file is None
    last = seen[-1]
    assert (last.requests_done, last.requests_total) == (30, 30)
    assert (last.metrics_done, last.metrics_total) == (total_metrics, total_metrics)
    assert last.bytes_done == last.bytes_total == sum(len(b.data) for b in bodies)
    assert [p.requests_done for p in seen] == sorted(p.requests_done for p in seen)
    assert seen[0].requests_done == 0
    # the ledger on disk says the same after the process is gone
    reopened = Ledger.open(tmp_path / "up", write=False)
    assert all(e.state is State.ACCEPTED and e.attempts == 1 for e in reopened.entries)


def test_429_503_and_dropped_connections_are_retried_and_totals_stay_exact(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    bodies = make_bodies(12, "faults")
    script: list[ProxyAction] = [
        error_reply(429, "slow down", {"Retry-After": "1"}),
        error_reply(503, "maintenance"),
        Drop(),  # read, never forwarded, connection closed
        error_reply(502, "bad gateway"),
        error_reply(504, "gateway timeout"),
        Reply(503, b"<html><body>Service Unavailable</body></html>", {"Content-Type": "text/html"}),
    ]

    async def main() -> tuple[Report, FaultProxy, list[float], int]:
        async with FaultProxy(sandbox.url, script) as proxy, client_for(sandbox) as direct:
            client = client_for(sandbox, proxy.url)
            upload, report = await checked_upload(
                client, sandbox.admin_token, bodies, tmp_path / "up", retry=FAST
            )
            await client.aclose()
            await assert_stored_exactly(direct, bodies)  # each exactly once
            unanswered = sum(e.unanswered for e in upload.ledger.entries)
            upload.close()
            return report, proxy, upload.waits, unanswered

    report, proxy, _, unanswered = run(main())
    assert report.complete and report.accepted.bodies == 12
    assert report.requests == 12 + 6
    assert len(proxy.requests) == 12 + 6
    # the dropped request (no answer), the 502 and the 504 (a gateway: the server behind it
    # may have stored the body) are in doubt, not sent again in that run; the check of the
    # server's totals finds them missing (the proxy never forwarded them) and they are sent
    # again. The 429 and the 503s are retried at once.
    assert unanswered == 3 and report.in_doubt == 0 and report.missing == 3


def test_a_lost_answer_is_found_on_the_server_and_not_sent_again(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    """The server stored the body but its 202 never arrived: the body is in doubt, and the
    check of the server's totals finds it counted: it is not sent again (it used to be, and
    the sandbox had it twice)."""
    bodies = make_bodies(4, "lost")

    async def main() -> tuple[Report, dict[int, int], Seen]:
        async with FaultProxy(sandbox.url, [Lost()]) as proxy, client_for(sandbox) as direct:
            client = client_for(sandbox, proxy.url)
            upload, report = await checked_upload(
                client, sandbox.admin_token, bodies, tmp_path / "up", retry=FAST, concurrency=1
            )
            await client.aclose()
            counted = await assert_stored_exactly(direct, bodies, upload.ledger)
            upload.close()
            return report, counted, proxy.requests[0]

    report, counted, first = run(main())
    assert report.complete and report.in_doubt == 0 and report.found == 1, report
    assert report.requests == 4
    assert first.body == bodies[0].data
    assert counted == {0: 1, 1: 1, 2: 1, 3: 1}
    assert report.in_doubt_text == (
        "1 body in doubt (no answer to a request) was found counted in the server's totals: "
        "not sent again."
    )


def test_400_413_415_are_reported_per_body_and_not_retried(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    good = make_bodies(3, "rejects")
    bad_schema = json.dumps({"applications": [], "metrics": [
        {"featureName": "rejects-x", "appName": "a", "environment": "development", "yes": -1}
    ]}).encode()  # fmt: skip
    too_large = json.dumps({"applications": [], "metrics": [
        {"featureName": "rejects-y", "appName": "a" * 200, "environment": "development",
         "yes": 1, "no": 1}] * 500}).encode()  # fmt: skip
    assert len(too_large) > 102_400
    media = json.dumps({"applications": [], "metrics": [], "marker": "415-me"}).encode()
    bodies: list[TestBody] = [
        good[0],
        raw_body(3, bad_schema),
        good[1],
        raw_body(4, too_large, 500),
        raw_body(5, media),
        good[2],
    ]

    def decide(n: int, seen: Seen) -> ProxyAction:
        if b"415-me" in seen.body:
            return error_reply(415, "Content-Type must be application/json")
        return Forward()

    async def main() -> tuple[Report, FaultProxy]:
        async with FaultProxy(sandbox.url, decide) as proxy, client_for(sandbox) as direct:
            client = client_for(sandbox, proxy.url)
            upload, report = await upload_all(client, bodies, tmp_path / "up", retry=FAST)
            await client.aclose()
            await assert_stored_exactly(direct, good)
            upload.close()
            return report, proxy

    report, proxy = run(main())
    assert len(proxy.requests) == len(bodies)  # one request each: nothing retried
    assert report.complete and report.stopped == ""
    assert report.accepted.bodies == 3
    assert (report.rejected.bodies, report.rejected.metrics) == (3, 1 + 500 + 1)
    by_body = {r.body: r for r in report.rejections}
    assert {i: r.status for i, r in by_body.items()} == {3: 400, 4: 413, 5: 415}
    assert "yes" in " ".join([by_body[3].message, *by_body[3].details])
    assert by_body[4].message  # the sandbox says the body is too large
    assert by_body[5].message == "Content-Type must be application/json"
    assert report.rejected_file == tmp_path / "up" / "rejected.json"
    saved = json.loads(report.rejected_file.read_text())
    assert [item["body"] for item in saved["rejected"]] == [3, 4, 5]
    assert saved["rejected"][0]["metrics"] == json.loads(bad_schema)["metrics"]
    assert saved["rejected"][2]["message"] == "Content-Type must be application/json"


@pytest.mark.parametrize("kind", ["unknown", "admin"])
def test_a_wrong_token_stops_the_upload(sandbox: SandboxProcess, tmp_path: Path, kind: str) -> None:
    bodies = make_bodies(10, f"token-{kind}")
    token = "default:development.not-a-real-token" if kind == "unknown" else sandbox.admin_token

    async def main() -> Report:
        async with client_for(sandbox, client_token=token) as client:
            upload, report = await upload_all(client, bodies, tmp_path / "up", retry=FAST)
            upload.close()
            return report

    report = run(main())
    assert report.stopped == UNAUTHORISED
    assert report.accepted.bodies == 0 and report.pending.bodies == 10
    assert report.requests <= 4  # the workers' first requests, then nothing more
    assert token not in report.error
    if kind == "admin":
        assert "403" in report.error
    else:
        assert "401" in report.error
    assert "admin API tokens and personal access tokens are refused" in report.error
    reopened = Ledger.open(tmp_path / "up", write=False)
    assert all(e.state is State.PENDING and not e.in_doubt for e in reopened.entries)


def test_an_unreachable_server_leaves_every_body_pending(tmp_path: Path) -> None:
    bodies = make_bodies(6, "unreachable")

    async def main() -> Report:
        url = f"http://127.0.0.1:{closed_port()}"
        async with AdminClient(url, "", client_token="x:development.y") as client:
            upload, report = await upload_all(client, bodies, tmp_path / "up", retry=FAST)
            upload.close()
            return report

    report = run(main())
    assert report.stopped == UNREACHABLE and not report.complete
    assert "connection refused" in report.error and "gave up after 4 attempts" in report.error
    assert report.pending.bodies == 6 and report.in_doubt == 0
    reopened = Ledger.open(tmp_path / "up", write=False)
    attempts = [e.attempts for e in reopened.entries]
    assert max(attempts) == FAST.attempts and all(a <= FAST.attempts for a in attempts)
    assert all(e.state is State.PENDING for e in reopened.entries)


def test_cancel_lets_requests_in_flight_finish_and_run_again_completes(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    bodies = make_bodies(40, "cancel")

    async def main() -> tuple[Report, Report, list[State]]:
        async with client_for(sandbox) as client:
            upload = await Upload.start(client, bodies, folder=tmp_path / "up")

            def cancel_after_five(p: Progress) -> None:
                if p.accepted >= 5:
                    upload.cancel()

            first = await upload.run(progress=cancel_after_five)
            states = [e.state for e in upload.ledger.entries]
            second = await upload.run()
            await assert_stored_exactly(client, bodies, upload.ledger)
            upload.close()
            return first, second, states

    first, second, states = run(main())
    assert first.stopped == CANCELLED and first.pending.bodies > 0
    assert first.accepted.bodies >= 5
    assert set(states) == {State.ACCEPTED, State.PENDING}  # nothing left in flight
    assert first.in_doubt == 0
    assert second.complete and second.stopped == "" and second.accepted.bodies == 40
    assert second.requests == first.pending.bodies


def test_a_cancelled_task_leaves_requests_in_doubt_and_resume_accounts_for_them(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    bodies = make_bodies(40, "hardcancel")
    folder = tmp_path / "up"

    async def main() -> tuple[list[int], Report, dict[int, int]]:
        async with client_for(sandbox) as client:
            upload = await Upload.start(client, bodies, folder=folder)
            await record_baseline(client, folder, rows_of(bodies), admin_token=sandbox.admin_token,
                                  client_token=None, known_features=None)  # fmt: skip
            task: asyncio.Task[Report] | None = None
            accepted = on_wire = 0

            def count(p: Progress) -> None:
                nonlocal accepted
                accepted = p.accepted

            def cancel_task(in_flight: int) -> None:
                nonlocal on_wire
                going_out, on_wire = in_flight > on_wire, in_flight
                # cancel as a request goes out, once five were accepted: it is on the wire
                # when the cancellation reaches its worker. (Cancelling on the fifth answer
                # missed, once under load and often with a faster server: the requests then
                # on the wire could all be answered before the cancellation came.)
                if going_out and accepted >= 5 and task is not None and not task.cancelling():
                    task.cancel()

            client.on_activity = cancel_task
            task = asyncio.create_task(upload.run(progress=count))
            with pytest.raises(asyncio.CancelledError):
                await task
            client.on_activity = None
            in_flight = [e.index for e in upload.ledger.entries if e.state is State.SENT]
            upload.close()
            resumed = await Upload.resume(client, folder)
            report, _ = await run_checked(resumed, settle=0.3)
            counted = await assert_stored_exactly(client, bodies, resumed.ledger)
            resumed.close()
            return in_flight, report, counted

    in_flight, report, counted = run(main())
    assert in_flight  # cancelled with requests on the wire
    assert report.complete and report.accepted.bodies == 40
    assert report.in_doubt == 0 and report.found + report.missing == len(in_flight)
    assert set(counted.values()) == {1}  # the ones in flight checked, not sent blindly


def journal_events(folder: Path, index: int) -> list[str]:
    """The journal's events for body `index`, in order, as on disk."""
    lines = (folder / LEDGER_NAME).read_bytes().splitlines()[1:]
    return [r["e"] for r in map(json.loads, lines) if r["i"] == index]


def test_502_and_504_are_in_doubt_but_503_and_429_are_not(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    """A gateway's 502 or 504 may come after the server behind it stored the body: recorded
    "maybe counted" (lost), and not sent again until the server's totals show it missing. 503
    and 429 are the server's own refusal: certainly not counted (retry at once)."""
    bodies = make_bodies(2, "gateway")
    script: list[ProxyAction] = [
        error_reply(502, "bad gateway"),
        error_reply(504, "gateway timeout"),
        error_reply(503, "maintenance"),
        error_reply(429, "slow down", {"Retry-After": "0"}),
    ]

    async def main() -> tuple[Report, int, int]:
        async with FaultProxy(sandbox.url, script) as proxy, client_for(sandbox) as direct:
            client = client_for(sandbox, proxy.url)
            upload, report = await checked_upload(
                client, sandbox.admin_token, bodies, tmp_path / "up", retry=FAST, concurrency=1
            )
            await client.aclose()
            await assert_stored_exactly(direct, bodies)  # the faults were never forwarded
            first, second = upload.ledger.entry(0), upload.ledger.entry(1)
            upload.close()
            return report, first.unanswered, second.unanswered

    report, first, second = run(main())
    assert report.complete and report.accepted.bodies == 2
    assert (first, second) == (1, 1) and report.in_doubt == 0 and report.missing == 2
    assert journal_events(tmp_path / "up", 0) == [
        "sent", "lost", "checked", "sent", "retry", "sent", "retry", "sent", "accepted"
    ]  # fmt: skip
    assert report.in_doubt_text == (
        "2 bodies in doubt were missing from the server's totals: sent again, counted once."
    )


@contextlib.contextmanager
def unanswered_port() -> Iterator[int]:
    """A port on 127.0.0.1 whose listen queue is full: the kernel drops every new SYN, so a
    client's connect times out (a real `ConnectTimeout`): the request never left."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(0)
    port: int = server.getsockname()[1]
    fillers = [socket.create_connection(("127.0.0.1", port))]  # the queue's one place
    try:
        yield port
    finally:
        for filler in fillers:
            filler.close()
        server.close()


def test_no_connection_in_time_is_retried_and_not_in_doubt(tmp_path: Path) -> None:
    bodies = make_bodies(3, "connect-timeout")
    retry = RetryPolicy(attempts=2, base_delay=0.01, max_delay=0.02)

    async def main() -> Report:
        with unanswered_port() as port:
            url = f"http://127.0.0.1:{port}"
            async with AdminClient(url, "", client_token="x:development.y",
                                   connect_timeout=0.2) as client:  # fmt: skip
                upload, report = await upload_all(
                    client, bodies, tmp_path / "up", retry=retry, concurrency=1
                )
                upload.close()
                return report

    report = run(main())
    assert report.stopped == UNREACHABLE and "no connection within" in report.error
    assert report.pending.bodies == 3 and report.in_doubt == 0
    assert journal_events(tmp_path / "up", 0) == ["sent", "retry", "sent", "retry"]


class PoolTimeouts(httpx.AsyncBaseTransport):
    """The first `n` requests fail as httpx fails them when no pooled connection is free in
    time (`PoolTimeout`: nothing was sent); the others go to the server for real."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.real = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self.n > 0:
            self.n -= 1
            raise httpx.PoolTimeout("timed out waiting for a connection", request=request)
        return await self.real.handle_async_request(request)

    async def aclose(self) -> None:
        await self.real.aclose()


def test_no_free_connection_in_time_is_retried_and_not_in_doubt(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    bodies = make_bodies(2, "pool-timeout")

    async def main() -> Report:
        async with client_for(sandbox, transport=PoolTimeouts(2)) as client:
            upload, report = await upload_all(
                client, bodies, tmp_path / "up", retry=FAST, concurrency=1
            )
            await assert_stored_exactly(client, bodies, upload.ledger)
            upload.close()
            return report

    report = run(main())
    assert report.complete and report.retries == 2 and report.in_doubt == 0
    assert journal_events(tmp_path / "up", 0) == ["sent", "retry", "sent", "retry", "sent",
                                                  "accepted"]  # fmt: skip


REDIRECT_TO = "https://metrics.example.com/api/client/metrics/bulk"


def redirected_upload(tmp_path: Path) -> tuple[Report, int]:
    """An upload to a server answering 308 to everything; (report, requests it read)."""
    bodies = make_bodies(5, "redirect", per_body=2)

    async def main() -> tuple[Report, int]:
        async with FaultServer(Reply(308, b"", {"Location": REDIRECT_TO})) as server:
            async with AdminClient(server.url, "", client_token="x:development.y") as client:
                upload, report = await upload_all(client, bodies, tmp_path / "up", retry=FAST)
                upload.close()
            return report, len(server.requests)

    return run(main())


def test_a_redirect_stops_the_upload_with_every_body_pending(tmp_path: Path) -> None:
    """The client follows no redirect, so every body would get the same 3xx: not a rejection
    of the bodies, but a wrong URL."""
    report, requests = redirected_upload(tmp_path)
    assert report.stopped == REFUSED and "308" in report.error and "use that URL" in report.error
    assert report.rejected.bodies == 0 and report.rejected_file is None
    assert report.pending.bodies == 5 and report.in_doubt == 0
    assert requests <= 4  # the workers' first requests, then nothing more
    reopened = Ledger.open(tmp_path / "up", write=False)
    assert all(e.state is State.PENDING and not e.in_doubt for e in reopened.entries)


def test_a_redirects_message_names_where_it_points(tmp_path: Path) -> None:
    report, _ = redirected_upload(tmp_path)
    assert f"the server answered 308 and points to {REDIRECT_TO}: use that URL" in report.error


# ---------------------------------------------------------------------------- the ledger first


class SlowDisk:
    """The ledger module's `os`, with an fsync slow enough that a request started without
    waiting for its `sent` line reaches the server first. After each fsync it keeps what the
    journal holds: what is durable."""

    def __init__(self, journal: Path, delay: float) -> None:
        self.journal = journal
        self.delay = delay
        self.durable = b""

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    def fsync(self, fd: int) -> None:
        time.sleep(self.delay)
        os.fsync(fd)
        if self.journal.exists():
            self.durable = self.journal.read_bytes()


def test_a_request_starts_only_once_its_sent_line_is_on_disk(
    sandbox: SandboxProcess, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the server reads a body, the journal already holds its `sent` line, fsynced: a
    process killed then leaves the body in doubt, never `pending` while it was counted."""
    bodies = make_bodies(8, "durable", per_body=4)
    folder = tmp_path / "up"
    disk = SlowDisk(folder / LEDGER_NAME, delay=0.05)
    monkeypatch.setattr(ledger_module, "os", disk)
    number = re.compile(rb'"featureName":"durable-b(\d+)-f')
    early: list[int] = []

    def decide(n: int, seen: Seen) -> ProxyAction:
        found = number.search(seen.body)
        index = int(found.group(1)) if found else -1
        if b'{"i":%d,"e":"sent"' % index not in disk.durable:
            early.append(index)
        return Forward()

    async def main() -> Report:
        async with FaultProxy(sandbox.url, decide) as proxy, client_for(sandbox) as direct:
            client = client_for(sandbox, proxy.url)
            upload, report = await upload_all(client, bodies, folder)
            await client.aclose()
            await assert_stored_exactly(direct, bodies, upload.ledger)
            upload.close()
            return report

    report = run(main())
    assert report.complete and report.accepted.bodies == 8
    assert early == []


# ---------------------------------------------------------------------------- stopping


def test_stopping_at_once_counts_the_requests_in_flight_in_doubt(tmp_path: Path) -> None:
    """A cancelled task (a second Ctrl+C, a closed window): `report()` right after counts the
    requests that were in flight, whose answers will never be read."""
    bodies = make_bodies(6, "at-once", per_body=2)

    async def main() -> Report:
        async with (
            FaultServer(Hang()) as server,
            AdminClient(server.url, "", client_token="x:development.y") as client,
        ):
            upload = await Upload.start(client, bodies, folder=tmp_path / "up")
            task = asyncio.create_task(upload.run())
            for _ in range(3000):  # until the four workers' requests are read
                if len(server.requests) >= 4:
                    break
                await asyncio.sleep(0.01)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            report = upload.report()
            upload.close()
            return report

    report = run(main())
    assert report.in_doubt == 4 and report.pending.bodies == 6
    assert report.in_doubt_text == (
        "4 bodies got no answer to a request and are left in doubt, not sent again: the "
        "server may have counted them. Resume checks the server's totals again; "
        "--resend-in-doubt sends them anyway (the server may then count them twice)."
    )
    reopened = Ledger.open(tmp_path / "up", write=False)
    assert sum(e.in_doubt for e in reopened.entries) == 4


def journal_threads() -> int:
    return sum(1 for t in threading.enumerate() if t.name == "ledger-journal")


def test_cancelling_start_while_the_bodies_are_written_leaves_no_ledger(tmp_path: Path) -> None:
    made = make_bodies(6, "start-cancel", per_body=2)
    folder = tmp_path / "up"
    started, stop = threading.Event(), threading.Event()

    def bodies() -> Iterator[TestBody]:
        yield made[0]
        started.set()
        stop.wait()  # a long split: goes on once the cancellation reached the writer
        yield from made[1:]

    async def main() -> None:
        async with AdminClient("http://127.0.0.1:9", "", client_token="x:d.y") as client:
            task = asyncio.create_task(Upload.start(client, bodies(), folder=folder, cancel=stop))
            await asyncio.to_thread(started.wait)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

    before = journal_threads()
    run(main())
    assert journal_threads() == before
    assert not folder.exists()  # nothing of it was left: the folder was made for it
    Ledger.create(made, folder=folder).close()  # free for a new upload


def test_cancelling_start_as_the_ledger_is_completed_closes_it(tmp_path: Path) -> None:
    """The writer thread cannot be stopped after its last check: the ledger it completes is
    closed (lock released, journal thread ended), and can be resumed."""
    made = make_bodies(4, "start-late", per_body=2)
    folder = tmp_path / "up"
    in_note, go = threading.Event(), threading.Event()

    def note() -> dict[str, Any]:
        in_note.set()
        go.wait()
        return {"invalid": 0}

    async def main() -> None:
        async with AdminClient("http://127.0.0.1:9", "", client_token="x:d.y") as client:
            task = asyncio.create_task(Upload.start(client, made, folder=folder, note=note))
            await asyncio.to_thread(in_note.wait)
            task.cancel()
            loop = asyncio.get_running_loop()
            loop.call_soon(go.set)  # after the task has seen its cancellation
            with pytest.raises(asyncio.CancelledError):
                await task

    before = journal_threads()
    run(main())
    assert journal_threads() == before
    with Ledger.open(folder) as ledger:  # not LedgerBusy: nobody holds it
        assert [e.state for e in ledger.entries] == [State.PENDING] * 4
        assert (folder / BODIES_NAME).exists()


# ---------------------------------------------------------------------------- from a file

GENERATE = resources.samples() / "generate.py"


def generate(path: Path, metrics: int, *extra: str) -> Path:
    """A batch file from the samples' generator (demo features and applications)."""
    import subprocess
    import sys

    subprocess.run(
        [sys.executable, str(GENERATE), "--metrics", str(metrics), "--out", str(path), *extra],
        check=True,
    )
    return path


async def stored_rows(
    client: AdminClient, features: set[str]
) -> dict[tuple[str, str, str, int | None], tuple[int, int, int]]:
    """Stored yes, no and the sum of variant counts by feature, application, environment and
    window: the shape of the preview's `Row`s."""
    return {
        key: (yes, no, sum(variants.values()))
        for key, (yes, no, variants) in (await stored_counts(client, features)).items()
    }


def file_rows(batch: Any) -> dict[tuple[str, str, str, int | None], tuple[int, int, int]]:
    return {(r.feature, r.app, r.environment, r.window): (r.yes, r.no, r.variants)
            for r in batch.totals().rows}  # fmt: skip


@pytest.mark.parametrize("fmt", ["ndjson", "bulk"])
def test_a_loaded_file_is_stored_exactly_per_feature_application_environment_and_window(
    tmp_path: Path, fmt: str
) -> None:
    from app.metrics import load

    path = generate(tmp_path / f"batch.{fmt}", 30_000, "--format", fmt, "--seed", "3",
                    "--environments", "development,production")  # fmt: skip
    batch = load([path])
    assert not batch.errors and batch.metric_count == 30_000
    expected = file_rows(batch)
    MADE_FEATURES.update(key[0] for key in expected)

    async def main() -> tuple[Report, dict[Any, tuple[int, int, int]]]:
        async with client_for(sandbox_here) as client:
            upload = await Upload.start(client, batch.iter_bodies(), folder=tmp_path / "up")
            report = await upload.run()
            upload.close()
            return report, await stored_rows(client, {key[0] for key in expected})

    with SandboxProcess(tmp_path / "db.sqlite3", "--empty") as sandbox_here:
        report, stored = run(main())
    assert report.complete and report.accepted.metrics == 30_000 and report.rejected.bodies == 0
    # the client token is for development: production's are answered 202 and dropped, as Unleash
    assert {key[2] for key in expected} == {"development", "production"}
    assert stored == {key: v for key, v in expected.items() if key[2] == "development"}
