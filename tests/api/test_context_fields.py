"""The client's context-field writes against a sandbox over HTTP: create (201), read back,
replace (200), delete (200), and each refusal as its error (409 name taken, 409 in use, 404
unknown, 400 bad body, 403 for a Viewer); the request builders are the bytes sent."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from app.api import errors as e
from app.api.client import (
    AdminClient,
    create_context_field_request,
    delete_context_field_request,
    update_context_field_request,
)
from app.api.models import CreateContextField, LegalValueBody, UpdateContextField
from sandbox.process import SandboxProcess
from tests.api.test_operations import run

PersonalToken = Callable[[SandboxProcess, str], str]


def test_create_read_replace_and_delete(sandbox: SandboxProcess) -> None:
    async def job() -> None:
        async with AdminClient(sandbox.url, sandbox.admin_token) as c:
            draft = CreateContextField(
                name="plan", description="The plan", stickiness=True, sortOrder=3,
                legalValues=[LegalValueBody(value="gold", description="Top")],
            )  # fmt: skip
            assert await c.create_context_field(draft) == 201
            read = await c.get_context_field("plan")
            assert (read.description, read.stickiness, read.sortOrder) == ("The plan", True, 3)
            assert [(v.value, v.description) for v in read.legalValues] == [("gold", "Top")]
            with pytest.raises(e.Conflict, match="already exist"):
                await c.create_context_field(CreateContextField(name="plan"))

            change = UpdateContextField(description="Plan", stickiness=False, sortOrder=3,
                                        legalValues=[LegalValueBody(value="free")])  # fmt: skip
            assert await c.update_context_field("plan", change) == 200
            read = await c.get_context_field("plan")
            assert (read.description, read.stickiness) == ("Plan", False)
            assert [v.value for v in read.legalValues] == ["free"]

            assert await c.delete_context_field("plan") == 200
            with pytest.raises(e.NotFound):
                await c.get_context_field("plan")
            with pytest.raises(e.NotFound, match="Could not find context field with name plan"):
                await c.delete_context_field("plan")
            with pytest.raises(e.NotFound):
                await c.update_context_field("plan", change)
            in_use = await c.context_strategies("region")
            assert in_use.strategies
            with pytest.raises(e.Conflict, match="in use by existing flags") as caught:
                await c.delete_context_field("region")
            assert caught.value.status == 409 and caught.value.name == "ConflictError"
            assert (await c.get_context_field("region")).name == "region"

    run(job())


def test_a_bad_body_and_a_viewer_are_refused(
    sandbox: SandboxProcess, personal_token: PersonalToken
) -> None:
    async def job() -> None:
        async with AdminClient(sandbox.url, sandbox.admin_token) as c:
            bad = UpdateContextField.model_construct(legalValues=[
                LegalValueBody.model_construct(value="")])  # fmt: skip
            with pytest.raises(e.BadRequest) as caught:
                await c.update_context_field("region", bad)
            assert caught.value.details[0].path == "legalValues[0].value"
        async with AdminClient(sandbox.url, personal_token(sandbox, "uma.iyer")) as viewer:
            with pytest.raises(e.Forbidden, match="Admin or Editor root role"):
                await viewer.delete_context_field("tenantId")
            assert (await viewer.get_context_field("tenantId")).name == "tenantId"

    run(job())


def test_the_requests_are_the_bytes_sent() -> None:
    create = create_context_field_request(
        CreateContextField(
            description="Ré", name="plan", stickiness=False, legalValues=[LegalValueBody(value="a")]
        )
    )
    assert (create.method, create.path) == ("POST", "/api/admin/context")
    assert create.body == ('{"name":"plan","description":"Ré","stickiness":false,'
                           '"legalValues":[{"value":"a"}]}').encode()  # fmt: skip
    update = update_context_field_request("a/b", UpdateContextField(sortOrder=2, legalValues=[]))
    assert (update.method, update.path, update.body) == (
        "PUT", "/api/admin/context/a%2Fb", b'{"sortOrder":2,"legalValues":[]}')  # fmt: skip
    delete = delete_context_field_request("plan")
    assert (delete.method, delete.path, delete.body) == ("DELETE", "/api/admin/context/plan", b"")
    with pytest.raises(ValueError, match="URL friendly"):
        CreateContextField(name="has space")
    with pytest.raises(ValueError, match="given twice"):
        UpdateContextField(legalValues=[LegalValueBody(value="a"), LegalValueBody(value="a")])
