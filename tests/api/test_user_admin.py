"""The client's user actions against sandboxes over HTTP: creating (a 429 waited out, or left to
the caller with its `retry_after`), deleting (200, then `NotFound`), the admin count, reset links
(`NotFound`, `RateLimited`), and the exact bytes `--dry-run` prints being those sent."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest

from app.api import errors as e
from app.api.client import (
    AdminClient,
    create_user_request,
    delete_user_request,
    reset_password_request,
)
from app.api.models import CreateUser
from sandbox.process import SandboxProcess
from tests.api.test_operations import with_client


def test_a_429_on_create_is_waited_out_or_left_to_the_caller(
    limited_sandbox: SandboxProcess,
) -> None:
    async def job(c: AdminClient) -> tuple[Any, ...]:
        first = await c.create_user(CreateUser(email="a@example.com", rootRole="Viewer"))
        with pytest.raises(e.RateLimited) as limited_error:
            await c.create_user(CreateUser(email="b@example.com", rootRole="Viewer"),
                                wait_out_limit=False)  # fmt: skip
        started = time.monotonic()
        second = await c.create_user(CreateUser(email="b@example.com", rootRole="Viewer"))
        return first, limited_error.value, second, time.monotonic() - started

    first, error, second, took = with_client(limited_sandbox, job)
    assert error.status == 429 and error.retry_after is not None and 0 < error.retry_after <= 2
    assert first.email == "a@example.com" and second.email == "b@example.com"
    assert 0.5 < took < 10


def test_delete_admin_count_and_reset_link(sandbox: SandboxProcess) -> None:
    sent: list[httpx.Request] = []

    async def job(c: AdminClient) -> tuple[Any, ...]:
        c._http.event_hooks["request"].append(_record(sent))
        count = await c.admin_count()
        link = await c.reset_password_link("greta.schmidt@example.com")
        with pytest.raises(e.RateLimited):
            await c.reset_password_link("greta.schmidt@example.com")
        with pytest.raises(e.NotFound):
            await c.reset_password_link("nobody@example.com")
        status = await c.delete_user(8)
        with pytest.raises(e.NotFound):
            await c.delete_user(8)
        return count, link, status

    count, link, status = with_client(sandbox, job)
    assert (count.password + count.noPassword, count.service, count.people) == (4, 0, 4)
    assert link.resetPasswordUrl.startswith(sandbox.url + "/reset-password?token=")
    assert status == 200
    assert 8 not in {u.id for u in with_client(sandbox, lambda c: c.list_users()).users}
    # what --dry-run prints is what went out
    reset = next(r for r in sent if r.url.path.endswith("/reset-password"))
    assert reset.content == reset_password_request("greta.schmidt@example.com").body
    deleted = next(r for r in sent if r.method == "DELETE")
    assert (deleted.url.path, deleted.content) == (
        delete_user_request(8).path, delete_user_request(8).body)  # fmt: skip


def test_the_create_request_is_what_is_sent(sandbox: SandboxProcess) -> None:
    sent: list[httpx.Request] = []
    user = CreateUser(email="new@example.com", name="New", rootRole="Editor")

    async def job(c: AdminClient) -> None:
        c._http.event_hooks["request"].append(_record(sent))
        await c.create_user(user)

    with_client(sandbox, job)
    (request,) = [r for r in sent if r.method == "POST"]
    assert request.content == create_user_request(user).body
    assert b'"sendEmail":false' in request.content


def _record(sent: list[httpx.Request]) -> Any:
    async def hook(request: httpx.Request) -> None:
        sent.append(request)

    return hook
