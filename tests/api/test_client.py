"""AdminClient: against the sandbox, and against canned answers for the error paths."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Coroutine
from typing import Any, TypeVar

import httpx
import pytest

from app import __version__
from app.api.client import AdminClient
from app.api.errors import ApiError, BadResponse, ClientError, ServerUnreachable
from sandbox.process import SandboxProcess

T = TypeVar("T")
TOKEN = "*:*.0123456789abcdef-secret"


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def canned(status: int, body: bytes | str, content_type: str = "application/json") -> Any:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(status, content=body, headers={"content-type": content_type})

    return httpx.MockTransport(handler), seen


async def call(transport: httpx.AsyncBaseTransport, method: str = "list_projects") -> Any:
    async with AdminClient("http://server.test/unleash", TOKEN, transport=transport) as client:
        return await getattr(client, method)()


def error_of(transport: httpx.AsyncBaseTransport, method: str = "list_projects") -> ClientError:
    with pytest.raises(ClientError) as info:
        run(call(transport, method))
    assert TOKEN not in str(info.value) and TOKEN not in repr(info.value)
    return info.value


def test_against_the_demo_sandbox(demo_sandbox: SandboxProcess) -> None:
    async def everything() -> tuple[Any, ...]:
        async with AdminClient(demo_sandbox.url, demo_sandbox.admin_token) as client:
            return (
                await client.health(),
                await client.ui_config(),
                await client.list_projects(),
                await client.list_users(),
            )

    health, ui, projects, users = run(everything())
    assert health.health == "GOOD"
    assert ui.name == "flagdesk sandbox" and ui.version
    assert sorted(p.id for p in projects.projects) == [
        "default",
        "mobile-app",
        "payments",
        "web-shop",
    ]
    assert len(users.users) > 0 and users.rootRoles


def test_a_wrong_token_is_an_api_error_without_the_token(demo_sandbox: SandboxProcess) -> None:
    async def attempt() -> None:
        async with AdminClient(demo_sandbox.url, TOKEN) as client:
            await client.list_projects()

    with pytest.raises(ApiError) as info:
        run(attempt())
    assert info.value.status == 401
    assert info.value.name == "AuthenticationRequired"
    assert info.value.message
    assert TOKEN not in str(info.value) and TOKEN not in repr(info.value)


def test_headers_timeouts_and_repr() -> None:
    transport, seen = canned(200, b'{"health": "GOOD"}')
    assert run(call(transport, "health")).health == "GOOD"
    request = seen[0]
    assert str(request.url) == "http://server.test/unleash/health"  # a path prefix is kept
    assert request.headers["authorization"] == TOKEN
    assert request.headers["user-agent"] == f"flagdesk/{__version__}"
    client = AdminClient("http://server.test", TOKEN)
    timeout = client._http.timeout
    assert (timeout.connect, timeout.read) == (5.0, 30.0)
    assert TOKEN not in repr(client) and "server.test" in repr(client)
    run(client.aclose())
    assert client.closed


def test_an_unleash_error_body_is_parsed() -> None:
    body = b'{"id": "abc", "name": "NotFoundError", "message": "Could not find project x"}'
    error = error_of(canned(404, body)[0])
    assert isinstance(error, ApiError)
    assert (error.status, error.name, error.message) == (
        404,
        "NotFoundError",
        "Could not find project x",
    )
    assert error.error_id == "abc"
    assert str(error) == "404 NotFoundError (GET /api/admin/projects): Could not find project x"


def test_validation_details_are_kept() -> None:
    body = b'{"name": "ValidationError", "message": "", "details": [{"message": "bad name"}]}'
    error = error_of(canned(400, body)[0])
    assert isinstance(error, ApiError) and error.message == "bad name"


@pytest.mark.parametrize(
    ("body", "content_type", "message"),
    [
        ("upstream timed out\nmore lines", "text/plain", "upstream timed out"),
        ("<html><body>Bad gateway</body></html>", "text/html", ""),
        ("", "text/plain", ""),
        ("[1, 2]", "application/json", "[1, 2]"),
    ],
)
def test_a_non_json_error_body_is_tolerated(body: str, content_type: str, message: str) -> None:
    error = error_of(canned(502, body, content_type)[0])
    assert isinstance(error, ApiError)
    assert (error.status, error.name, error.message) == (502, "Bad Gateway", message)


def test_a_token_echoed_by_the_server_is_scrubbed() -> None:
    body = f'{{"name": "AuthError", "message": "token {TOKEN} is not valid."}}'
    error = error_of(canned(401, body)[0])
    assert isinstance(error, ApiError) and error.message == "token *** is not valid."


def test_a_body_that_does_not_fit_the_model_is_a_bad_response() -> None:
    error = error_of(canned(200, b'{"projects": "nope"}')[0])
    assert isinstance(error, BadResponse)
    assert "ProjectList" in str(error) and "projects" in str(error)
    assert isinstance(error_of(canned(200, b"not json")[0]), BadResponse)


def test_a_closed_port_is_unreachable() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    async def attempt() -> None:
        async with AdminClient(f"http://127.0.0.1:{port}", TOKEN) as client:
            await client.health()

    with pytest.raises(ServerUnreachable) as info:
        run(attempt())
    assert str(info.value) == f"Cannot reach http://127.0.0.1:{port}: connection refused"


def test_timeouts_are_named() -> None:
    def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=request)

    assert str(error_of(httpx.MockTransport(slow))).endswith("no answer within 30 s")
