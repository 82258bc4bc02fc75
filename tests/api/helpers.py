"""What the client's tests share: a fake server's address and tokens (whose secret parts must
never show), canned answers from an `httpx.MockTransport`, and `failure`, the error an operation
raises, checked to hold no token."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any, TypeVar

import httpx
import pytest

from app.api import errors as e
from app.api.client import AdminClient, RetryPolicy
from app.api.models import UpdateUser

T = TypeVar("T")
Op = Callable[[AdminClient], Awaitable[object]]

BASE = "http://unleash.test"
TOKEN = "*:*.0123456789abcdef-secret"
SECRET = "0123456789abcdef-secret"
CLIENT_TOKEN = "default:development.fedcba9876543210-client"
CLIENT_SECRET = "fedcba9876543210-client"
ONCE = RetryPolicy(attempts=1)
EMPTY_BULK = b'{"applications":[],"metrics":[]}'


def list_projects(client: AdminClient) -> Awaitable[object]:
    return client.list_projects()


def update_user(client: AdminClient) -> Awaitable[object]:
    return client.update_user(7, UpdateUser(name="x"))


def send_bulk(client: AdminClient) -> Awaitable[object]:
    return client.send_bulk_metrics(EMPTY_BULK)


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def assert_no_secret(*texts: str) -> None:
    for text in texts:
        for secret in (TOKEN, SECRET, CLIENT_TOKEN, CLIENT_SECRET):
            assert secret not in text, text


def assert_clean(error: BaseException) -> None:
    """Neither token, nor the secret part of either, anywhere a person or a log could see."""
    texts = [str(error), repr(error)]
    if isinstance(error, e.ApiError):
        texts += [error.name, error.message, error.hint, *(repr(d) for d in error.details)]
    if isinstance(error, e.ServerUnreachable):
        texts += [error.url, error.reason]
    assert_no_secret(*texts)


def canned(
    status: int, body: bytes | str, headers: Mapping[str, str] | None = None
) -> tuple[httpx.MockTransport, list[httpx.Request]]:
    """A transport giving every request the same answer, and the requests it saw."""
    seen: list[httpx.Request] = []
    content = body.encode() if isinstance(body, str) else body
    all_headers = dict(headers if headers is not None else {"content-type": "application/json"})

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(status, content=content, headers=all_headers)

    return httpx.MockTransport(handler), seen


def jsonb(value: object) -> bytes:
    return json.dumps(value).encode()


def failure(
    transport: httpx.AsyncBaseTransport, op: Op = list_projects, **options: Any
) -> e.ClientError:
    """The error `op` raises against `transport` (one attempt), checked to hold no token."""

    async def go() -> None:
        async with AdminClient(BASE, TOKEN, transport=transport, retry=ONCE, **options) as client:
            await op(client)

    with pytest.raises(e.ClientError) as info:
        run(go())
    assert_clean(info.value)
    return info.value
