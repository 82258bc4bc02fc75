"""AdminClient's one-group operations against a sandbox over HTTP: `get_group`, `update_group`
(nulls sent as nulls, the members read back), `delete_group`, their errors, and the exact
requests `--dry-run` prints."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.api import errors as e
from app.api.client import (
    AdminClient,
    delete_group_request,
    update_group_request,
)
from app.api.models import CreateGroup, CreateGroupMember, UserRef
from sandbox.process import SandboxProcess
from tests.api.test_operations import PersonalToken, with_client


def members(*ids: int) -> list[CreateGroupMember]:
    return [CreateGroupMember(user=UserRef(id=i)) for i in ids]


def test_get_update_and_delete_read_back(sandbox: SandboxProcess) -> None:
    async def job(c: AdminClient) -> tuple[Any, ...]:
        a, b, c3 = [u.id for u in (await c.list_users()).users[1:4]]
        made = await c.create_group(
            CreateGroup(name="Before", description="old", rootRole=2, users=members(a, b))
        )
        read = await c.get_group(made.id)
        answer = await c.update_group(
            made.id, CreateGroup(name="After", mappingsSSO=["sso"], users=members(b, c3))
        )
        after = await c.get_group(made.id)
        status = await c.delete_group(made.id)
        try:
            await c.get_group(made.id)
        except e.NotFound as gone:
            missing = gone
        return (a, b, c3), read, answer, after, status, missing

    (a, b, c3), read, answer, after, status, missing = with_client(sandbox, job)
    assert sorted(m.user.id for m in read.users) == sorted([a, b])
    assert answer.name == "After" and answer.users == []  # groupWriteResponseSchema
    assert (after.name, after.description, after.rootRole, after.mappingsSSO) == (
        "After", None, None, ["sso"])  # fmt: skip
    assert sorted(m.user.id for m in after.users) == sorted([b, c3])
    assert status == 200
    assert missing.status == 404


def test_update_errors_name_the_field(sandbox: SandboxProcess) -> None:
    async def job(c: AdminClient) -> list[e.ClientError]:
        one = await c.create_group(CreateGroup(name="One"))
        await c.create_group(CreateGroup(name="Two"))
        found = []
        for gid, body in (
            (one.id, CreateGroup(name="Two")),
            (one.id, CreateGroup(name="One", users=members(987654))),
            (987654, CreateGroup(name="Ghost")),
        ):
            with pytest.raises(e.ClientError) as caught:
                await c.update_group(gid, body)
            found.append(caught.value)
        return found

    conflict, bad, missing = with_client(sandbox, job)
    assert isinstance(conflict, e.Conflict) and "Two" in conflict.message
    assert isinstance(bad, e.BadRequest) and bad.details[0].path == "users[0].user.id"
    assert isinstance(missing, e.NotFound)


def test_a_viewer_is_refused_before_anything_is_sent(
    sandbox: SandboxProcess, personal_token: PersonalToken
) -> None:
    viewer = personal_token(sandbox, "sofia.mendes")

    async def job(c: AdminClient) -> list[type[BaseException]]:
        kinds: list[type[BaseException]] = []
        for call in (lambda: c.update_group(1, CreateGroup(name="X")), lambda: c.delete_group(1)):
            with pytest.raises(e.ClientError) as caught:
                await call()
            kinds.append(type(caught.value))
        return kinds

    assert with_client(sandbox, job, token=viewer) == [e.Unsupported, e.Unsupported]


def test_the_requests_as_sent() -> None:
    put = update_group_request(7, CreateGroup(name="G", users=members(3)))
    assert (put.method, put.path) == ("PUT", "/api/admin/groups/7")
    assert json.loads(put.body) == {
        "name": "G", "description": None, "mappingsSSO": [], "rootRole": None,
        "users": [{"user": {"id": 3}}],
    }  # fmt: skip
    delete = delete_group_request(7)
    assert (delete.method, delete.path, delete.body) == ("DELETE", "/api/admin/groups/7", b"")
