"""Bulk-metrics ingestion benchmark: the sandbox against (optionally) a real Unleash 8.2.

    .venv/bin/python bench/sandbox_bulk_metrics.py [--requests 300] [--warmup 20]
                                                   [--concurrency 4 8] [--repeat 1]

Starts a fresh sandbox (`flagdesk serve --empty` in a temporary folder), then, for each
concurrency level N, sends a fixed number of pre-serialised `POST /api/client/metrics/bulk`
requests (compact JSON bodies just under the 102,400-byte limit, about 550 metrics each) over N
keep-alive connections, after a short warm-up. When UNLEASH_BASE_URL and UNLEASH_CLIENT_TOKEN
are set, the same bodies go to that real Unleash in the same run; a 429 there is honoured
(Retry-After) and counted.

The client is raw asyncio over keep-alive HTTP/1.1 sockets: each request is one prebuilt
bytes object (headers and body), each answer is read just far enough to know its status, so
the client costs a few microseconds per request and the server under test gets the CPU.

After the sandbox run the stored yes/no sums of one feature (raw endpoint, its 48 hours)
must equal what was sent. Exactly one JSON object goes to stdout; diagnostics go to stderr.
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
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit

import httpx
from flags import known_flags
from margin import at_least

from app.api.wire import BULK_METRICS_BODY_LIMIT
from sandbox.process import SandboxProcess

ENVIRONMENT = "development"
FEATURES = [f"bench.bulk-metrics.feature-{i:02d}" for i in range(24)]
APPS = [f"bench-service-{name}" for name in ("checkout", "search", "catalog", "payments")]
CHECKED_FEATURE = FEATURES[0]
DISTINCT_BODIES = 16
REFERENCE_UNLEASH_4CONN = 88_000
#: the goal: the sandbox ingests at least this many times what Unleash 8.2 does
GOAL_RATIO = 2.0


def log(*parts: object) -> None:
    print(*parts, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------- bodies


@dataclass
class Body:
    payload: bytes
    metrics: int
    #: feature -> [yes, no] summed over this body's items
    sums: dict[str, list[int]]


def build_body(seed: int, now: datetime, max_metrics: int = 560) -> Body:
    """One compact bulk body of at most BULK_METRICS_BODY_LIMIT bytes, filled up to about 550
    metrics.

    Items cycle over the features and apps, in the current and the previous hour, with yes and
    no both > 0 (Unleash drops yes=0,no=0) and variants on every third item."""
    hour = now.replace(minute=0, second=0, microsecond=0)
    hours = [hour, hour - timedelta(hours=1)]
    applications = [
        {
            "appName": app,
            "environment": ENVIRONMENT,
            "instanceId": f"{app}-instance-{seed % 3}",
            "sdkVersion": "unleash-client-node:6.1.0",
            "strategies": ["default", "flexibleRollout"],
            "interval": 15000,
            "started": hours[1].strftime("%Y-%m-%dT%H:%M:%S.000Z"),
        }
        for app in APPS
    ]
    metrics: list[dict[str, object]] = []
    sums: dict[str, list[int]] = {}
    skeleton = {"applications": applications, "metrics": metrics}
    size = len(json.dumps(skeleton, separators=(",", ":")))
    i = 0
    while len(metrics) < max_metrics:
        k = seed * 7919 + i
        feature = FEATURES[i % len(FEATURES)]
        item: dict[str, object] = {
            "featureName": feature,
            "appName": APPS[(i // len(FEATURES)) % len(APPS)],
            "environment": ENVIRONMENT,
            "timestamp": hours[i % 2].strftime("%Y-%m-%dT%H:%M:%S.000Z"),
            "yes": 1 + k % 97,
            "no": 1 + (k * 31) % 53,
            "variants": ({"control": 1 + k % 5, "treatment": 1 + k % 7} if i % 3 == 0 else {}),
        }
        extra = len(json.dumps(item, separators=(",", ":"))) + (1 if metrics else 0)
        if size + extra > BULK_METRICS_BODY_LIMIT - 512:  # stay near, but safely under, the limit
            break
        metrics.append(item)
        size += extra
        slot = sums.setdefault(feature, [0, 0])
        slot[0] += int(item["yes"])  # type: ignore[call-overload]
        slot[1] += int(item["no"])  # type: ignore[call-overload]
        i += 1
    payload = json.dumps(skeleton, separators=(",", ":")).encode()
    assert len(payload) <= BULK_METRICS_BODY_LIMIT, len(payload)
    return Body(payload, len(metrics), sums)


# ---------------------------------------------------------------------- raw HTTP/1.1 client


class HttpError(Exception):
    pass


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes


class Connection:
    """One keep-alive HTTP/1.1 connection; reopened when the server closes it."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            with contextlib.suppress(OSError):
                await self.writer.wait_closed()
        self.reader = self.writer = None

    async def request(self, raw: bytes) -> Answer:
        if self.writer is None:
            await self.open()
        assert self.reader is not None and self.writer is not None
        self.writer.write(raw)
        await self.writer.drain()
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if ":" in line:
                k, v = line.split(":", 1)
                headers[k.strip().lower()] = v.strip()
        if "content-length" in headers:
            body = await self.reader.readexactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            parts = []
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
                parts.append(await self.reader.readexactly(size + 2))
                if size == 0:
                    break
            body = b"".join(p[:-2] for p in parts)
        elif status in (204, 304) or 100 <= status < 200:
            body = b""
        else:  # no framing: the body runs to the end of the connection
            body = await self.reader.read()
            await self.close()
        if headers.get("connection", "").lower() == "close":
            await self.close()
        return Answer(status, headers, body)


def raw_request(host: str, port: int, path: str, token: str, body: bytes) -> bytes:
    head = (
        f"POST {path} HTTP/1.1\r\n"
        f"Host: {host}:{port}\r\n"
        f"Authorization: {token}\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n"
        "User-Agent: flagdesk-bench\r\n"
        "\r\n"
    )
    return head.encode("latin-1") + body


# ---------------------------------------------------------------------- one load run


@dataclass
class RunResult:
    requests: int = 0
    metrics: int = 0
    elapsed_s: float = 0.0
    latencies_ms: list[float] = field(default_factory=list)
    statuses: dict[int, int] = field(default_factory=dict)
    rate_limited: int = 0
    paused_s: float = 0.0
    sent_sums: dict[str, list[int]] = field(default_factory=dict)


class Gate:
    """Shared back-off: a 429's Retry-After pauses every worker, not only the one that got it."""

    def __init__(self) -> None:
        self.until = 0.0
        self.paused = 0.0

    async def wait(self) -> None:
        delay = self.until - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)

    def hold(self, seconds: float) -> None:
        until = time.monotonic() + seconds
        if until > self.until:
            self.paused += until - max(self.until, time.monotonic())
            self.until = until


def retry_after(headers: dict[str, str]) -> float:
    value = headers.get("retry-after", "")
    try:
        return max(0.0, float(value))
    except ValueError:
        return 1.0


async def load(
    url: str,
    token: str,
    bodies: list[Body],
    concurrency: int,
    total: int,
    offset: int = 0,
    max_429: int = 50,
) -> RunResult:
    """`total` requests over `concurrency` connections; request i sends bodies[(offset+i) % n]."""
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    path = (parts.path.rstrip("/")) + "/api/client/metrics/bulk"
    raws = [raw_request(host, port, path, token, b.payload) for b in bodies]
    result = RunResult()
    gate = Gate()
    next_index = 0
    conns = [Connection(host, port) for _ in range(concurrency)]
    for c in conns:
        await c.open()

    async def worker(conn: Connection) -> None:
        nonlocal next_index
        while next_index < total:
            i = next_index
            next_index += 1
            body_no = (offset + i) % len(bodies)
            while True:
                await gate.wait()
                t0 = time.perf_counter()
                try:
                    answer = await conn.request(raws[body_no])
                except (OSError, asyncio.IncompleteReadError) as exc:
                    await conn.close()
                    raise HttpError(f"request failed: {exc!r}") from exc
                dt = (time.perf_counter() - t0) * 1000
                result.statuses[answer.status] = result.statuses.get(answer.status, 0) + 1
                if answer.status == 429:
                    result.rate_limited += 1
                    if result.rate_limited > max_429:
                        raise HttpError("too many 429 answers; giving up")
                    wait = retry_after(answer.headers)
                    log(f"  429 from {url}: Retry-After {answer.headers.get('retry-after')!r}")
                    gate.hold(wait)
                    continue
                if answer.status != 202:
                    raise HttpError(f"HTTP {answer.status}: {answer.body[:300]!r}")
                result.latencies_ms.append(dt)
                result.requests += 1
                result.metrics += bodies[body_no].metrics
                for feature, (yes, no) in bodies[body_no].sums.items():
                    slot = result.sent_sums.setdefault(feature, [0, 0])
                    slot[0] += yes
                    slot[1] += no
                break

    t_start = time.perf_counter()
    try:
        await asyncio.gather(*(worker(c) for c in conns))
    finally:
        result.elapsed_s = time.perf_counter() - t_start
        result.paused_s = gate.paused
        for c in conns:
            await c.close()
    return result


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[rank]


def summarise(r: RunResult) -> dict[str, object]:
    out: dict[str, object] = {
        "requests": r.requests,
        "metrics": r.metrics,
        "elapsed_s": round(r.elapsed_s, 3),
        "metrics_per_s": round(r.metrics / r.elapsed_s),
        "requests_per_s": round(r.requests / r.elapsed_s, 1),
        "p50_ms": round(statistics.median(r.latencies_ms), 2),
        "p99_ms": round(percentile(r.latencies_ms, 99), 2),
        "max_ms": round(max(r.latencies_ms), 2),
    }
    if r.rate_limited:
        out["rate_limited_429"] = r.rate_limited
        out["paused_s"] = round(r.paused_s, 2)
        busy = r.elapsed_s - r.paused_s
        if busy > 0:
            out["metrics_per_s_excluding_pauses"] = round(r.metrics / busy)
    return out


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process, from /proc (Linux)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def bench_server(
    name: str,
    url: str,
    token: str,
    bodies: list[Body],
    levels: list[int],
    requests: int,
    warmup: int,
    repeat: int,
    pid: int | None = None,
) -> tuple[dict[str, dict[str, object]], dict[str, list[int]]]:
    """Per concurrency level the best of `repeat` runs (by metrics/s), plus all sums sent."""
    results: dict[str, dict[str, object]] = {}
    sent: dict[str, list[int]] = {}
    offset = 0

    def add(r: RunResult) -> None:
        for feature, (yes, no) in r.sent_sums.items():
            slot = sent.setdefault(feature, [0, 0])
            slot[0] += yes
            slot[1] += no

    for n in levels:
        if warmup:
            w = await load(url, token, bodies, n, warmup, offset)
            add(w)
            offset += warmup
        runs = []
        for attempt in range(repeat):
            cpu0 = cpu_seconds(pid) if pid else None
            r = await load(url, token, bodies, n, requests, offset)
            cpu = cpu_seconds(pid) - cpu0 if pid and cpu0 is not None else None
            add(r)
            offset += requests
            s = summarise(r)
            if cpu is not None:
                s["server_cpu_s"] = round(cpu, 3)
                s["metrics_per_server_cpu_s"] = round(r.metrics / cpu) if cpu > 0 else None
            log(f"{name} {n} conn run {attempt + 1}/{repeat}: {s}")
            runs.append(s)
        best = max(runs, key=lambda s: s["metrics_per_s"])  # type: ignore[arg-type, return-value]
        if repeat > 1:
            best = dict(best)
            best["runs_metrics_per_s"] = [s["metrics_per_s"] for s in runs]
        results[str(n)] = best
    return results, sent


def verify_sandbox(sb: SandboxProcess, sent: dict[str, list[int]]) -> dict[str, object]:
    with sb.admin() as admin:
        response = admin.get(
            f"/api/admin/client-metrics/features/{CHECKED_FEATURE}/raw",
            params={"hoursBack": 48},
        )
    response.raise_for_status()
    data = response.json()["data"]
    yes = sum(row["yes"] for row in data)
    no = sum(row["no"] for row in data)
    want_yes, want_no = sent.get(CHECKED_FEATURE, [0, 0])
    ok = yes == want_yes and no == want_no
    out = {
        "feature": CHECKED_FEATURE,
        "rows": len(data),
        "stored_yes": yes,
        "stored_no": no,
        "sent_yes": want_yes,
        "sent_no": want_no,
        "ok": ok,
    }
    log(f"sandbox verification: {out}")
    return out


def ensure_unleash_features(url: str, admin_token: str) -> None:
    """A real Unleash stores metrics of known flags only: create the bench flags (idempotent)."""
    with httpx.Client(base_url=url, headers={"Authorization": admin_token}, timeout=30) as c:
        for feature in FEATURES:
            r = c.get(f"/api/admin/projects/default/features/{feature}")
            if r.status_code == 200:
                continue
            r = c.post("/api/admin/projects/default/features", json={"name": feature})
            if r.status_code not in (200, 201, 409):
                log(f"  could not create {feature} on Unleash: {r.status_code} {r.text[:200]}")


def check_unleash(url: str, admin_token: str) -> dict[str, object]:
    """Unleash aggregates in memory and writes every few seconds: wait, then confirm the
    checked flag shows usage (a sign the bodies were stored, not dropped)."""
    deadline = time.monotonic() + 30
    with httpx.Client(base_url=url, headers={"Authorization": admin_token}, timeout=30) as c:
        while True:
            r = c.get(f"/api/admin/client-metrics/features/{CHECKED_FEATURE}")
            usage = r.json().get("lastHourUsage", []) if r.status_code == 200 else []
            yes = sum(int(u.get("yes", 0)) for u in usage)
            if yes or time.monotonic() > deadline:
                break
            time.sleep(2)
    out = {"feature": CHECKED_FEATURE, "status": r.status_code, "last_hour_yes": yes}
    log(f"Unleash check: {out}")
    return out


async def main_async(args: argparse.Namespace) -> dict[str, object]:
    now = datetime.now(UTC)
    bodies = [build_body(seed, now) for seed in range(DISTINCT_BODIES)]
    body_bytes = [len(b.payload) for b in bodies]
    per_body = [b.metrics for b in bodies]
    log(
        f"{len(bodies)} distinct bodies: {min(body_bytes)}-{max(body_bytes)} bytes, "
        f"{min(per_body)}-{max(per_body)} metrics each"
    )
    levels = args.concurrency

    out: dict[str, object] = {
        "benchmark": "sandbox_bulk_metrics",
        "body_bytes": max(body_bytes),
        "body_limit_bytes": BULK_METRICS_BODY_LIMIT,
        "metrics_per_body": round(statistics.mean(per_body)),
        "requests_per_level": args.requests,
        "warmup_requests": args.warmup,
        "client": "raw asyncio HTTP/1.1 keep-alive, pre-serialised requests",
        "cpus": os.cpu_count(),
    }

    with tempfile.TemporaryDirectory(prefix="flagdesk-bench-") as tmp:
        sb = SandboxProcess(Path(tmp) / "bench.sqlite3", "--empty")
        sb.start()
        known_flags(sb.db, FEATURES)
        try:
            log(f"sandbox at {sb.url} (pid {sb.pid})")
            sandbox, sent = await bench_server(
                "sandbox",
                sb.url,
                sb.client_token,
                bodies,
                levels,
                args.requests,
                args.warmup,
                args.repeat,
                pid=sb.pid,
            )
            out["sandbox"] = sandbox
            out["sandbox_verification"] = verify_sandbox(sb, sent)
        finally:
            sb.stop()

    unleash: dict[str, dict[str, object]] | None = None
    base = os.environ.get("UNLEASH_BASE_URL")
    client_token = os.environ.get("UNLEASH_CLIENT_TOKEN")
    if base and client_token and not args.sandbox_only:
        if not client_token.split(".", 1)[0].endswith(":" + ENVIRONMENT):
            log(f"warning: the Unleash client token's environment is not {ENVIRONMENT!r}; "
                "Unleash will drop these metrics")  # fmt: skip
        admin_token = os.environ.get("UNLEASH_ADMIN_TOKEN")
        if admin_token:
            ensure_unleash_features(base, admin_token)
        log(f"Unleash at {base}")
        unleash, _ = await bench_server(
            "unleash", base, client_token, bodies, levels, args.requests, args.warmup, args.repeat
        )
        if admin_token:
            out["unleash_check"] = check_unleash(base, admin_token)
    out["unleash"] = unleash
    if unleash:
        out["ratio_sandbox_over_unleash"] = {
            n: round(
                sandbox[n]["metrics_per_s"] / unleash[n]["metrics_per_s"],  # type: ignore[operator]
                2,
            )
            for n in sandbox
            if n in unleash
        }
    else:
        out["ratio_sandbox_over_unleash"] = None
    out["goal"] = "sandbox >= 2x Unleash 8.2"
    out["reference_unleash_metrics_per_s_4conn"] = REFERENCE_UNLEASH_4CONN
    if "4" in sandbox:
        out["ratio_sandbox_4conn_over_reference"] = round(
            sandbox["4"]["metrics_per_s"] / REFERENCE_UNLEASH_4CONN,  # type: ignore[operator]
            2,
        )
    # against the Unleash of this run when there is one, else the reference figure
    ratios = out["ratio_sandbox_over_unleash"] or (
        {"4": out["ratio_sandbox_4conn_over_reference"]} if "4" in sandbox else {}
    )
    out["margin_goal"] = f"sandbox >= {at_least(GOAL_RATIO):g}x Unleash 8.2"
    out["met"] = bool(ratios) and min(ratios.values()) >= GOAL_RATIO  # type: ignore[operator]
    out["met_with_margin"] = bool(ratios) and min(ratios.values()) >= at_least(GOAL_RATIO)  # type: ignore[operator]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=300, help="requests per level and run")
    parser.add_argument("--warmup", type=int, default=20, help="warm-up requests per level")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[4, 8])
    parser.add_argument("--repeat", type=int, default=1, help="runs per level (best is kept)")
    parser.add_argument("--sandbox-only", action="store_true", help="ignore UNLEASH_BASE_URL")
    args = parser.parse_args()
    try:
        out = asyncio.run(main_async(args))
    except (HttpError, OSError, RuntimeError, httpx.HTTPError) as exc:
        log(f"benchmark failed: {exc!r}")
        print(json.dumps({"benchmark": "sandbox_bulk_metrics", "error": repr(exc)}))
        return 1
    print(json.dumps(out))
    verification = out.get("sandbox_verification")
    return 0 if isinstance(verification, dict) and verification.get("ok") else 1


if __name__ == "__main__":
    sys.exit(main())
