"""AdminClient retries: reads retry on connection failures and 502/503/504, writes only when the
server certainly did not process them (no connection, or 429); `Retry-After` is honoured up to
`max_retry_after`; backoff grows and stays bounded.

Requests are counted by a real server on 127.0.0.1 (`tests/faults.py`); the client's sleep
is a fake that records the delays, so no test waits for a backoff."""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

import httpx
import pytest

from app.api import errors as e
from app.api.client import AdminClient, RetryPolicy
from app.api.failures import retry_after_seconds
from app.api.models import ProjectList, UpdateUser, User
from tests.faults import Action, Drop, FaultServer, Reply, closed_port

T = TypeVar("T")
TOKEN = "*:*.0123456789abcdef-secret"
FAST = RetryPolicy(attempts=4, base_delay=0.001, max_delay=0.01)
PROJECTS = b'{"version": 1, "projects": [{"id": "default", "name": "Default"}]}'
USER = b'{"id": 1, "name": "x", "email": "x@example.com"}'
BULK = b'{"applications":[],"metrics":[]}'


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def unavailable(status: int, message: str) -> Reply:
    body = json.dumps({"name": "ServiceUnavailable", "message": message}).encode()
    return Reply(status, body)


class Sleeps:
    """A fake `sleep` that records what it was asked to wait, and may run a hook first."""

    def __init__(self, hook: Callable[[], Awaitable[None]] | None = None) -> None:
        self.delays: list[float] = []
        self._hook = hook

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)
        if self._hook is not None:
            hook, self._hook = self._hook, None
            await hook()


Op = Callable[[AdminClient], Awaitable[T]]


def list_projects(client: AdminClient) -> Awaitable[ProjectList]:
    return client.list_projects()


def update_user(client: AdminClient) -> Awaitable[User]:
    return client.update_user(1, UpdateUser(name="x"))


def send_bulk(client: AdminClient) -> Awaitable[None]:
    return client.send_bulk_metrics(BULK)


class Outcome:
    def __init__(self) -> None:
        self.result: object = None
        self.error: e.ClientError | None = None
        self.requests = 0
        self.connections = 0
        self.bodies: list[bytes] = []
        self.in_flight_after = -1


def against(*script: Action, op: Op[Any], policy: RetryPolicy = FAST, sleeps: Sleeps) -> Outcome:
    """Run `op` once against a real server that follows `script`."""
    out = Outcome()

    async def go() -> None:
        async with FaultServer(*script) as server:
            async with AdminClient(server.url, TOKEN, retry=policy, sleep=sleeps) as client:
                try:
                    out.result = await op(client)
                except e.ClientError as error:
                    out.error = error
                out.in_flight_after = client.in_flight
            out.requests = len(server.requests)
            out.connections = server.connections
            out.bodies = [seen.body for seen in server.requests]

    run(go())
    return out


def assert_backoff(delays: list[float], policy: RetryPolicy = FAST) -> None:
    """Each delay within its retry's window: [ceiling/2, ceiling], ceiling doubling to max."""
    for retry, delay in enumerate(delays, start=1):
        ceiling = min(policy.max_delay, policy.base_delay * 2 ** (retry - 1))
        assert ceiling / 2 <= delay <= ceiling, (retry, delay)


# ---------------------------------------------------------------------------- reads


def test_a_read_is_retried_on_502_503_504_then_succeeds() -> None:
    sleeps = Sleeps()
    out = against(
        unavailable(502, "a"),
        unavailable(503, "b"),
        unavailable(504, "c"),
        Reply(200, PROJECTS),
        op=list_projects,
        sleeps=sleeps,
    )
    assert out.error is None
    assert isinstance(out.result, ProjectList)
    assert [p.id for p in out.result.projects] == ["default"]
    assert out.requests == 4
    assert len(sleeps.delays) == 3
    assert_backoff(sleeps.delays)
    assert out.in_flight_after == 0


@pytest.mark.parametrize("status", [502, 503, 504])
def test_each_retryable_status_is_retried_once_then_succeeds(status: int) -> None:
    sleeps = Sleeps()
    out = against(unavailable(status, "x"), Reply(200, PROJECTS), op=list_projects, sleeps=sleeps)
    assert isinstance(out.result, ProjectList)
    assert out.requests == 2
    assert len(sleeps.delays) == 1
    assert 0.0005 <= sleeps.delays[0] <= 0.001


@pytest.mark.parametrize("status", [400, 404, 500, 501])
def test_a_read_is_not_retried_on_other_errors(status: int) -> None:
    sleeps = Sleeps()
    out = against(unavailable(status, "no"), Reply(200, PROJECTS), op=list_projects, sleeps=sleeps)
    assert isinstance(out.error, e.ApiError)
    assert out.error.status == status
    assert (out.requests, sleeps.delays) == (1, [])


def test_a_read_is_retried_on_a_dropped_connection() -> None:
    sleeps = Sleeps()
    out = against(Drop(), Reply(200, PROJECTS), op=list_projects, sleeps=sleeps)
    assert isinstance(out.result, ProjectList)
    assert (out.requests, out.connections) == (2, 2)
    assert len(sleeps.delays) == 1


def test_a_read_is_retried_on_a_refused_connection_until_the_server_is_up() -> None:
    port = closed_port()
    server = FaultServer(Reply(200, PROJECTS), port=port)

    async def start() -> None:
        await server.start()

    sleeps = Sleeps(hook=start)

    async def go() -> ProjectList:
        try:
            async with AdminClient(
                f"http://127.0.0.1:{port}", TOKEN, retry=FAST, sleep=sleeps
            ) as client:
                return await client.list_projects()
        finally:
            await server.stop()

    assert [p.id for p in run(go()).projects] == ["default"]
    assert len(sleeps.delays) == 1
    assert len(server.requests) == 1


def test_a_read_gives_up_after_the_attempts_with_the_last_error() -> None:
    sleeps = Sleeps()
    out = against(
        unavailable(503, "first"),
        unavailable(502, "second"),
        unavailable(504, "third"),
        unavailable(503, "fourth"),
        Reply(200, PROJECTS),
        op=list_projects,
        sleeps=sleeps,
    )
    assert type(out.error) is e.ServerError
    assert (out.error.status, out.error.message) == (503, "fourth")
    assert out.requests == 4
    assert len(sleeps.delays) == 3
    assert out.in_flight_after == 0


def test_a_read_that_keeps_losing_the_connection_gives_up_with_connection_lost() -> None:
    sleeps = Sleeps()
    out = against(Drop(), op=list_projects, sleeps=sleeps)
    assert type(out.error) is e.ConnectionLost
    assert (out.requests, out.connections) == (4, 4)
    assert len(sleeps.delays) == 3
    assert out.in_flight_after == 0


def test_a_refused_read_gives_up_with_connection_refused() -> None:
    sleeps = Sleeps()
    port = closed_port()

    async def go() -> None:
        async with AdminClient(
            f"http://127.0.0.1:{port}", TOKEN, retry=FAST, sleep=sleeps
        ) as client:
            try:
                await client.list_projects()
            finally:
                assert client.in_flight == 0

    with pytest.raises(e.ConnectionRefused):
        run(go())
    assert len(sleeps.delays) == 3
    assert_backoff(sleeps.delays)


def test_one_attempt_means_no_retry() -> None:
    sleeps = Sleeps()
    once = RetryPolicy(attempts=1, base_delay=0.001, max_delay=0.01)
    out = against(
        unavailable(503, "x"), Reply(200, PROJECTS), op=list_projects, sleeps=sleeps, policy=once
    )
    assert isinstance(out.error, e.ServerError)
    assert (out.requests, sleeps.delays) == (1, [])


# ---------------------------------------------------------------------------- writes


@pytest.mark.parametrize("op", [update_user, send_bulk], ids=["PUT", "POST"])
@pytest.mark.parametrize("status", [502, 503, 504])
def test_a_write_is_not_retried_on_a_gateway_error(op: Op[Any], status: int) -> None:
    sleeps = Sleeps()
    out = against(unavailable(status, "busy"), Reply(200, USER), op=op, sleeps=sleeps)
    assert isinstance(out.error, e.ServerError)
    assert (out.error.status, out.error.message) == (status, "busy")
    assert (out.requests, sleeps.delays) == (1, [])
    assert out.in_flight_after == 0


@pytest.mark.parametrize("op", [update_user, send_bulk], ids=["PUT", "POST"])
def test_a_write_is_not_retried_on_a_dropped_connection(op: Op[Any]) -> None:
    sleeps = Sleeps()
    out = against(Drop(), Reply(200, USER), op=op, sleeps=sleeps)
    assert type(out.error) is e.ConnectionLost
    assert (out.requests, sleeps.delays) == (1, [])


def test_a_write_is_not_retried_on_a_read_timeout() -> None:
    calls: list[httpx.Request] = []
    sleeps = Sleeps()

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        raise httpx.ReadTimeout("timed out", request=request)

    async def go() -> None:
        transport = httpx.MockTransport(handler)
        async with AdminClient(
            "http://unleash.test", TOKEN, retry=FAST, sleep=sleeps, transport=transport
        ) as client:
            await client.send_bulk_metrics(BULK)

    with pytest.raises(e.TimedOut):
        run(go())
    assert (len(calls), sleeps.delays) == (1, [])


def test_a_write_is_retried_on_429_with_the_same_body() -> None:
    sleeps = Sleeps()
    limited = Reply(429, b"Too many requests", {"Content-Type": "text/html", "Retry-After": "0"})
    out = against(limited, Reply(200, USER), op=update_user, sleeps=sleeps)
    assert isinstance(out.result, User)
    assert out.result.id == 1
    assert out.requests == 2
    assert out.bodies == [b'{"name":"x"}', b'{"name":"x"}']
    assert sleeps.delays == [0.0]


def test_a_429_without_retry_after_backs_off() -> None:
    sleeps = Sleeps()
    out = against(Reply(429, b""), Reply(202, b""), op=send_bulk, sleeps=sleeps)
    assert out.error is None
    assert out.requests == 2
    assert len(sleeps.delays) == 1
    assert_backoff(sleeps.delays)


def test_a_write_is_retried_when_the_connection_was_refused() -> None:
    port = closed_port()
    server = FaultServer(Reply(200, USER), port=port)

    async def start() -> None:
        await server.start()

    sleeps = Sleeps(hook=start)

    async def go() -> User:
        try:
            async with AdminClient(
                f"http://127.0.0.1:{port}", TOKEN, retry=FAST, sleep=sleeps
            ) as client:
                return await client.update_user(1, UpdateUser(name="x"))
        finally:
            await server.stop()

    assert run(go()).id == 1
    assert len(sleeps.delays) == 1
    assert [(r.method, r.target, r.body) for r in server.requests] == [
        ("PUT", "/api/admin/user-admin/1", b'{"name":"x"}')
    ]


def test_a_write_is_retried_when_no_connection_was_made_in_time() -> None:
    calls: list[httpx.Request] = []
    sleeps = Sleeps()

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        if len(calls) < 3:
            raise httpx.ConnectTimeout("timed out", request=request)
        return httpx.Response(202)

    async def go() -> None:
        transport = httpx.MockTransport(handler)
        async with AdminClient(
            "http://unleash.test", TOKEN, retry=FAST, sleep=sleeps, transport=transport
        ) as client:
            await client.send_bulk_metrics(BULK)

    run(go())
    assert len(calls) == 3
    assert len(sleeps.delays) == 2


# ---------------------------------------------------------------------------- Retry-After


def test_retry_after_seconds_is_waited_exactly() -> None:
    sleeps = Sleeps()
    limited = Reply(429, b"Too many requests", {"Content-Type": "text/html", "Retry-After": "2"})
    out = against(limited, Reply(200, PROJECTS), op=list_projects, sleeps=sleeps)
    assert isinstance(out.result, ProjectList)
    assert sleeps.delays == [2.0]
    assert out.requests == 2


def test_retry_after_as_an_http_date() -> None:
    sleeps = Sleeps()
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    limited = Reply(429, b"", {"Retry-After": when})
    out = against(limited, Reply(200, PROJECTS), op=list_projects, sleeps=sleeps)
    assert isinstance(out.result, ProjectList)
    assert len(sleeps.delays) == 1
    assert 28.0 <= sleeps.delays[0] <= 30.0


def test_retry_after_beyond_the_limit_is_raised_at_once() -> None:
    sleeps = Sleeps()
    policy = RetryPolicy(attempts=4, base_delay=0.001, max_delay=0.01, max_retry_after=60)
    limited = Reply(429, b"Too many requests", {"Content-Type": "text/html", "Retry-After": "120"})
    out = against(limited, Reply(200, PROJECTS), op=list_projects, sleeps=sleeps, policy=policy)
    assert type(out.error) is e.RateLimited
    assert out.error.retry_after == 120.0
    assert out.error.hint == "Try again in 120 s"
    assert (out.requests, sleeps.delays) == (1, [])


def test_retry_after_at_the_limit_is_waited() -> None:
    sleeps = Sleeps()
    policy = RetryPolicy(attempts=2, base_delay=0.001, max_delay=0.01, max_retry_after=60)
    limited = Reply(429, b"", {"Retry-After": "60"})
    out = against(limited, Reply(200, PROJECTS), op=list_projects, sleeps=sleeps, policy=policy)
    assert isinstance(out.result, ProjectList)
    assert sleeps.delays == [60.0]


def test_a_429_on_the_last_attempt_is_raised_with_retry_after() -> None:
    sleeps = Sleeps()
    out = against(Reply(429, b"", {"Retry-After": "1"}), op=list_projects, sleeps=sleeps)
    assert type(out.error) is e.RateLimited
    assert out.error.retry_after == 1.0
    assert out.requests == 4
    assert sleeps.delays == [1.0, 1.0, 1.0]


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        (None, None),
        ("", None),
        ("2", 2.0),
        (" 1.5 ", 1.5),
        ("-3", 0.0),
        ("nan", None),
        ("inf", None),
        ("soon", None),
        ("Wed, 21 Oct 2015 07:28:00 GMT", 0.0),  # in the past
    ],
)
def test_retry_after_seconds(value: str | None, seconds: float | None) -> None:
    assert retry_after_seconds(value) == seconds


def test_retry_after_seconds_of_a_future_date() -> None:
    when = email.utils.formatdate(time.time() + 100, usegmt=True)
    wait = retry_after_seconds(when)
    assert wait is not None
    assert 98.0 <= wait <= 100.0


# ---------------------------------------------------------------------------- backoff


def test_backoff_grows_and_stays_within_max_delay() -> None:
    policy = RetryPolicy(attempts=10, base_delay=0.5, max_delay=8.0)
    delays = [policy.backoff(retry, random.Random(20240601)) for retry in range(1, 10)]
    rng = random.Random(7)
    delays_one_rng = [policy.backoff(retry, rng) for retry in range(1, 10)]
    for series in (delays, delays_one_rng):
        assert_backoff(series, policy)
        # until the cap the windows [c/2, c], c doubling, do not overlap: each wait is longer
        assert series[:5] == sorted(series[:5])
        assert all(4.0 <= d <= 8.0 for d in series[4:])  # capped from the fifth retry on
        assert max(series) <= 8.0
    assert 0.25 <= delays[0] <= 0.5
    # the same seed gives the same delays
    again = random.Random(7)
    assert [policy.backoff(retry, again) for retry in range(1, 10)] == delays_one_rng


def test_backoff_spreads_with_jitter() -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=8.0)
    rng = random.Random(42)
    third = {round(policy.backoff(3, rng), 6) for _ in range(50)}
    assert len(third) > 40
    assert min(third) >= 2.0
    assert max(third) <= 4.0


# ---------------------------------------------------------------------------- in flight


def test_in_flight_counts_requests_and_returns_to_zero() -> None:
    release = asyncio.Event()
    all_in = asyncio.Event()
    seen: list[int] = []
    holder: list[AdminClient] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        seen.append(holder[0].in_flight)
        if len(seen) == 3:
            all_in.set()
        if request.url.path == "/api/admin/projects":
            await release.wait()
            return httpx.Response(200, content=PROJECTS)
        if request.url.path == "/health":
            raise httpx.ReadError("reset", request=request)
        return httpx.Response(404, content=b'{"message": "no"}')

    async def go() -> list[int]:
        transport = httpx.MockTransport(handler)
        async with AdminClient(
            "http://unleash.test", TOKEN, retry=FAST, sleep=Sleeps(), transport=transport
        ) as client:
            holder.append(client)
            tasks = [asyncio.create_task(client.list_projects()) for _ in range(3)]
            await all_in.wait()
            during = client.in_flight
            release.set()
            await asyncio.gather(*tasks)
            after_success = client.in_flight
            with pytest.raises(e.NotFound):
                await client.get_user(5)
            after_error = client.in_flight
            with pytest.raises(e.ConnectionLost):
                await client.health()  # four attempts, every one fails
            return [during, after_success, after_error, client.in_flight]

    assert run(go()) == [3, 0, 0, 0]
    assert seen[:3] == [1, 2, 3]
    assert seen[3:] == [1, 1, 1, 1, 1]  # the 404, then each attempt at /health alone
