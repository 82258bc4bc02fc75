"""Whether a request may have reached the server is said by the client's error itself
(`ClientError.never_sent`, `in_doubt`), decided once where httpx's failures are classified
(`app.api.failures.classify`), and read alike by the client's retries, the journal and the
metrics upload (issue 34).

The failures come from real servers on 127.0.0.1 (`tests/faults.py`) where one can be made:
a closed port, a dropped connection, a gateway's 502; the timeouts from httpx's own transport
raising them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest

from app.actions.journal import Actor, Journal
from app.actions.runner import NotStarted, carry_out
from app.actions.users import plan_edit
from app.api import errors as e
from app.api.client import AdminClient, RetryPolicy
from app.api.models import UpdateUser
from app.changes import Changes
from sandbox.process import SandboxProcess
from tests.faults import Drop, FaultServer, Reply, closed_port

TOKEN = "*:*.0123456789abcdef-secret"
ONCE = RetryPolicy(attempts=1, base_delay=0.001, max_delay=0.01)


async def _error_of(url: str, transport: httpx.AsyncBaseTransport | None = None) -> e.ClientError:
    async with AdminClient(url, TOKEN, retry=ONCE, transport=transport) as client:
        with pytest.raises(e.ClientError) as raised:
            await client.update_user(1, UpdateUser(name="x"))
    return raised.value


def _raising(exc: type[httpx.TransportError]) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        raise exc("failed", request=request)

    return httpx.MockTransport(handler)


def test_a_refused_connection_never_reached_the_server() -> None:
    error = asyncio.run(_error_of(f"http://127.0.0.1:{closed_port()}"))
    assert type(error) is e.ConnectionRefused
    assert error.never_sent and not error.in_doubt


def test_a_dropped_connection_may_have_reached_it() -> None:
    async def go() -> e.ClientError:
        async with FaultServer(Drop()) as server:
            return await _error_of(server.url)

    error = asyncio.run(go())
    assert type(error) is e.ConnectionLost
    assert not error.never_sent and error.in_doubt


@pytest.mark.parametrize(
    ("failure", "never_sent"),
    [
        (httpx.ConnectTimeout, True),
        (httpx.PoolTimeout, True),
        (httpx.ReadTimeout, False),
        (httpx.WriteTimeout, False),
    ],
)
def test_timeouts_before_and_after_the_connection(
    failure: type[httpx.TransportError], never_sent: bool
) -> None:
    """The same kind of error, `TimedOut`, says which: no connection within the connect
    timeout (never sent) or no answer in time (it may have arrived)."""
    error = asyncio.run(_error_of("http://unleash.test", _raising(failure)))
    assert type(error) is e.TimedOut
    assert (error.never_sent, error.in_doubt) == (never_sent, not never_sent)


@pytest.mark.parametrize(("status", "in_doubt"), [(400, False), (500, False), (502, True),
                                                  (504, True)])  # fmt: skip
def test_an_answer_says_what_came_of_it_except_a_gateway_s(status: int, in_doubt: bool) -> None:
    async def go() -> e.ClientError:
        body = json.dumps({"name": "Failed", "message": "no"}).encode()
        async with FaultServer(Reply(status, body)) as server:
            return await _error_of(server.url)

    error = asyncio.run(go())
    assert isinstance(error, e.ApiError) and error.status == status
    assert not error.never_sent
    assert error.in_doubt is in_doubt


def test_refusals_before_sending_never_reached_the_server() -> None:
    assert e.Unsupported("Delete", "needs Enterprise").never_sent
    assert NotStarted("Could not write the snapshot").never_sent


class _WritesFail(httpx.AsyncBaseTransport):
    """Reads reach the real server; every write fails with `failure` on its way."""

    def __init__(self, failure: type[httpx.TransportError]) -> None:
        self.real = httpx.AsyncHTTPTransport()
        self.failure = failure

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method != "GET":
            raise self.failure("failed", request=request)
        return await self.real.handle_async_request(request)

    async def aclose(self) -> None:
        await self.real.aclose()


@pytest.mark.parametrize(
    ("failure", "state"),
    [
        (httpx.ConnectTimeout, "failed"),  # journaled as in doubt before: no connection was made
        (httpx.ConnectError, "failed"),
        (httpx.ReadTimeout, "in doubt"),
        (httpx.RemoteProtocolError, "in doubt"),
    ],
)
def test_the_journal_reads_the_error(
    demo_sandbox: SandboxProcess, tmp_path: Path, failure: type[httpx.TransportError],
    state: str,
) -> None:  # fmt: skip
    """The runner's journal entry of a write that failed says "failed" when the error says the
    request never reached the server, "in doubt" when it may have; the other windows are told
    of the change only when it may have happened."""
    journal = Journal(Actor("c", demo_sandbox.url, "admin", None), tmp_path / "journal")
    told: list[Changes] = []

    async def go() -> None:
        async with AdminClient(demo_sandbox.url, demo_sandbox.admin_token, retry=ONCE,
                               transport=_WritesFail(failure)) as client:  # fmt: skip
            listed = await client.list_users()
            roles = {r.id: r.name for r in listed.rootRoles}
            plan = plan_edit(listed.users[-1], UpdateUser(name="x"), roles, journal)
            with pytest.raises(e.ClientError):
                await carry_out(client, plan, announce=told.append)

    asyncio.run(go())
    (entry,) = journal.entries()
    assert entry.state.value == state
    assert bool(told) is (state == "in doubt")
