"""AdminClient errors: every way a request fails becomes the right `ClientError`, readable and
without the token.

Canned answers come from `httpx.MockTransport`; transport failures use real sockets on
127.0.0.1 (`tests/api/faults.py`) wherever the operating system can produce them."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from app.api import errors as e
from app.api.client import AdminClient, RetryPolicy
from app.api.models import (
    ArchivedFeature,
    ArchivedFeatures,
    CurrentUser,
    Health,
    InactiveUsers,
    UpdateUser,
)
from app.api.streaming import PIECE_BYTES, ListStream
from tests.api.faults import (
    CA_BUNDLE,
    Cut,
    Drop,
    FaultServer,
    Hang,
    Reply,
    closed_port,
    server_tls,
)

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


async def outcome(url: str, **options: Any) -> Health | e.ClientError:
    """`GET /health` on a real server: the answer, or the error."""
    options.setdefault("retry", ONCE)
    async with AdminClient(url, TOKEN, **options) as client:
        try:
            return await client.health()
        except e.ClientError as error:
            return error


# ---------------------------------------------------------------------------- error bodies


def test_shape_one_with_id_name_message_and_details() -> None:
    body = {
        "id": "4c6b8a1e-0c2f-4f3b-9a57-1d2e3f4a5b6c",
        "name": "ValidationError",
        "message": "Request validation failed: your request body or params contain invalid data.",
        "details": [
            {"message": "The `email` property must be a string.", "path": "email"},
            {"message": "must be integer", "path": "users[0].user.id"},
            {"message": "", "path": "ignored"},
        ],
    }
    error = failure(canned(400, jsonb(body))[0], update_user)
    assert type(error) is e.BadRequest
    assert (error.status, error.name, error.error_id) == (
        400,
        "ValidationError",
        "4c6b8a1e-0c2f-4f3b-9a57-1d2e3f4a5b6c",
    )
    assert error.message == body["message"]
    assert error.details == (
        e.Problem("The `email` property must be a string.", "email"),
        e.Problem("must be integer", "users[0].user.id"),
    )
    assert (error.method, error.path, error.hint) == ("PUT", "/api/admin/user-admin/7", "")
    assert str(error) == (
        "400 ValidationError (PUT /api/admin/user-admin/7): Request validation failed: your "
        "request body or params contain invalid data. (email: The `email` property must be a "
        "string.; users[0].user.id: must be integer)"
    )
    assert repr(error) == (
        f"BadRequest(status=400, name='ValidationError', message={body['message']!r}, "
        "error_id='4c6b8a1e-0c2f-4f3b-9a57-1d2e3f4a5b6c')"
    )


def test_shape_two_without_id() -> None:
    body = {
        "name": "NotFoundError",
        "message": "No user found",
        "details": [{"message": "No user found"}],
    }
    error = failure(canned(404, jsonb(body))[0], update_user)
    assert type(error) is e.NotFound
    assert (error.status, error.name, error.message, error.error_id) == (
        404,
        "NotFoundError",
        "No user found",
        None,
    )
    assert error.details == (e.Problem("No user found", ""),)
    assert error.hint == ""
    # a detail that repeats the message is not said twice
    assert str(error) == "404 NotFoundError (PUT /api/admin/user-admin/7): No user found"


def test_shape_two_unknown_error_500() -> None:
    body = {"name": "UnknownError", "message": "Unexpected error: Cannot read properties"}
    error = failure(canned(500, jsonb(body))[0])
    assert type(error) is e.ServerError
    assert (error.status, error.name, error.message, error.details) == (
        500,
        "UnknownError",
        "Unexpected error: Cannot read properties",
        (),
    )
    assert error.hint == ""  # the server said something: no generic hint
    assert str(error) == (
        "500 UnknownError (GET /api/admin/projects): Unexpected error: Cannot read properties"
    )


def test_shape_three_bare_message() -> None:
    error = failure(canned(413, b'{"message":"request entity too large"}')[0], send_bulk)
    assert type(error) is e.PayloadTooLarge
    assert isinstance(error, e.BadRequest)
    assert (error.status, error.name, error.message, error.error_id, error.details) == (
        413,
        "Request Entity Too Large",
        "request entity too large",
        None,
        (),
    )
    assert (error.method, error.path) == ("POST", "/api/client/metrics/bulk")
    assert error.hint == "The request body is larger than the server accepts"
    assert str(error) == (
        "413 Request Entity Too Large (POST /api/client/metrics/bulk): request entity too large. "
        "The request body is larger than the server accepts"
    )


def test_unauthorized_shape_one() -> None:
    body = {
        "id": "b1",
        "name": "AuthenticationRequired",
        "message": "You must log in to use Unleash.",
        "details": [{"message": "You must log in to use Unleash."}],
    }
    error = failure(canned(401, jsonb(body))[0])
    assert type(error) is e.Unauthorized
    assert (error.name, error.error_id) == ("AuthenticationRequired", "b1")
    assert error.hint == "The token is missing, expired or unknown to this server"
    assert str(error) == (
        "401 AuthenticationRequired (GET /api/admin/projects): You must log in to use Unleash. "
        "The token is missing, expired or unknown to this server"
    )


def test_an_unknown_path_says_the_endpoint_is_missing() -> None:
    message = "The path you were looking for (/api/admin/projects) is not available."
    body = {
        "id": "c2",
        "name": "NotFoundError",
        "message": message,
        "details": [{"message": message}],
    }
    error = failure(canned(404, jsonb(body))[0])
    assert type(error) is e.NotFound
    assert error.hint == "This server does not have this endpoint"
    assert str(error) == (
        f"404 NotFoundError (GET /api/admin/projects): {message} "
        "This server does not have this endpoint"
    )


WRONG_TYPE = b'{"message":"invalid token: expected a different token type for this endpoint"}'


def test_an_admin_token_on_the_client_api_is_the_wrong_token_type() -> None:
    error = failure(canned(403, WRONG_TYPE)[0], send_bulk)
    assert type(error) is e.WrongTokenType
    assert isinstance(error, e.Forbidden)
    assert (error.status, error.name, error.method, error.path) == (
        403,
        "Forbidden",
        "POST",
        "/api/client/metrics/bulk",
    )
    assert error.message == "invalid token: expected a different token type for this endpoint"
    assert "client token" in error.hint
    assert error.hint == (
        "Use a client token: admin API tokens and personal access tokens are refused "
        "on the client API"
    )
    assert str(error) == (
        "403 Forbidden (POST /api/client/metrics/bulk): invalid token: expected a different "
        f"token type for this endpoint. {error.hint}"
    )


def test_a_client_token_on_the_admin_api_is_the_wrong_token_type() -> None:
    error = failure(canned(403, WRONG_TYPE)[0])
    assert type(error) is e.WrongTokenType
    assert error.path == "/api/admin/projects"
    assert "admin API token or a personal access token" in error.hint
    assert error.hint == (
        "Use an admin API token or a personal access token: this is a client token"
    )


def test_a_plain_403_is_forbidden_not_the_wrong_token_type() -> None:
    body = b'{"name":"NoAccessError","message":"You need permission=ADMIN to perform this action"}'
    error = failure(canned(403, body)[0])
    assert type(error) is e.Forbidden
    assert error.hint == "The token is valid but lacks the permission for this"


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (400, e.BadRequest),
        (401, e.Unauthorized),
        (403, e.Forbidden),
        (404, e.NotFound),
        (409, e.Conflict),
        (413, e.PayloadTooLarge),
        (415, e.UnsupportedMediaType),
        (418, e.ApiError),
        (422, e.BadRequest),
        (429, e.RateLimited),
        (500, e.ServerError),
        (501, e.ServerError),
        (503, e.ServerError),
    ],
)
def test_each_status_has_its_class(status: int, cls: type[e.ApiError]) -> None:
    error = failure(canned(status, b'{"name":"SomeError","message":"it went wrong"}')[0])
    assert type(error) is cls
    assert isinstance(error, e.ApiError)
    assert (error.status, error.name, error.message) == (status, "SomeError", "it went wrong")


# ---------------------------------------------------------------------------- bodies not JSON

EXPRESS_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Error</title>
</head>
<body>
<pre>SyntaxError: Unexpected token<br> &nbsp; &nbsp;at JSON.parse (&lt;anonymous&gt;)<br> &nbsp; \
&nbsp;at parse (/app/node_modules/body-parser/lib/types/json.js:92:19)</pre>
</body>
</html>
"""


def test_an_express_html_error_page_gives_its_first_line() -> None:
    transport, _ = canned(400, EXPRESS_PAGE, {"content-type": "text/html; charset=utf-8"})
    error = failure(transport, update_user)
    assert type(error) is e.BadRequest
    assert (error.status, error.name, error.message, error.error_id, error.details) == (
        400,
        "Bad Request",
        "SyntaxError: Unexpected token",
        None,
        (),
    )
    assert (
        str(error) == "400 Bad Request (PUT /api/admin/user-admin/7): SyntaxError: Unexpected token"
    )


def test_an_html_429_is_rate_limited_with_retry_after() -> None:
    transport, seen = canned(
        429,
        "Too many requests, please try again later.",
        {"content-type": "text/html; charset=utf-8", "retry-after": "30"},
    )
    error = failure(transport)
    assert type(error) is e.RateLimited
    assert error.retry_after == 30.0
    assert (error.name, error.message) == (
        "Too Many Requests",
        "Too many requests, please try again later.",
    )
    assert error.hint == "Try again in 30 s"
    assert str(error) == (
        "429 Too Many Requests (GET /api/admin/projects): Too many requests, please try again "
        "later. Try again in 30 s"
    )
    assert len(seen) == 1


def test_a_429_without_retry_after() -> None:
    error = failure(canned(429, b"", {})[0])
    assert isinstance(error, e.RateLimited)
    assert error.retry_after is None
    assert error.hint == "Try again later"


def test_a_plain_text_body_gives_its_first_line() -> None:
    transport, _ = canned(
        502,
        "\n  upstream connect error  \nreset reason: overflow\n",
        {"content-type": "text/plain"},
    )
    error = failure(transport)
    assert type(error) is e.ServerError
    assert (error.name, error.message) == ("Bad Gateway", "upstream connect error")
    assert error.hint == ""
    assert str(error) == "502 Bad Gateway (GET /api/admin/projects): upstream connect error"


def test_a_long_text_body_is_cut() -> None:
    transport, _ = canned(500, "x" * 5000, {"content-type": "text/plain"})
    error = failure(transport)
    assert isinstance(error, e.ApiError)
    assert error.message == "x" * 199 + "…"


def test_an_empty_body_gives_the_reason_phrase_and_a_hint() -> None:
    error = failure(canned(502, b"", {})[0])
    assert type(error) is e.ServerError
    assert (error.status, error.name, error.message, error.details) == (502, "Bad Gateway", "", ())
    assert error.hint == "The server failed; its log may say why"
    assert str(error) == (
        "502 Bad Gateway (GET /api/admin/projects). The server failed; its log may say why"
    )


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"[1, 2]", "[1, 2]"),
        (b'"just text"', '"just text"'),
        (b'{"message": 5}', '{"message": 5}'),
        (b'{"error": "upstream down"}', '{"error": "upstream down"}'),
    ],
)
def test_json_that_is_not_an_error_body_is_quoted(body: bytes, message: str) -> None:
    error = failure(canned(503, body)[0])
    assert type(error) is e.ServerError
    assert (error.name, error.message) == ("Service Unavailable", message)
    assert str(error) == f"503 Service Unavailable (GET /api/admin/projects): {message}"


# ---------------------------------------------------------------------------- 2xx not as promised


def test_a_body_unlike_the_model_names_the_field() -> None:
    body = b'{"projects": [{"id": "a", "name": "A"}, {"name": "B"}]}'
    error = failure(canned(200, body)[0])
    assert type(error) is e.BadResponse
    assert error.field == "projects[1].id"
    assert str(error) == (
        "GET /api/admin/projects: the server's answer does not match the API (ProjectList): "
        "projects[1].id: Field required"
    )


def test_several_problems_are_counted() -> None:
    body = b'{"projects": [{"name": "A"}, {"id": 5, "name": "B"}, {"id": "c"}]}'
    error = failure(canned(200, body)[0])
    assert isinstance(error, e.BadResponse)
    assert error.field == "projects[0].id"
    assert str(error).endswith("projects[0].id: Field required (and 2 more problems)")


def test_a_list_body_unlike_the_model_names_the_index() -> None:
    body = b'[{"name": "region"}, {"description": "no name"}]'
    error = failure(canned(200, body)[0], lambda client: client.list_context_fields())
    assert isinstance(error, e.BadResponse)
    assert error.field == "[1].name"
    assert "(list of ContextField)" in str(error)


def test_a_large_body_unlike_the_model_is_a_bad_response_too() -> None:
    projects: list[dict[str, object]] = [{"id": f"p{i}", "name": "x" * 100} for i in range(3000)]
    projects.append({"id": "last", "name": None})
    body = jsonb({"projects": projects})
    assert len(body) > 256 * 1024  # validated on a worker thread
    error = failure(canned(200, body)[0])
    assert isinstance(error, e.BadResponse)
    assert error.field == "projects[3000].name"


def test_a_large_body_is_validated_in_slices_letting_the_event_loop_turn() -> None:
    """100,000 inactive users (20 MB): the same result as one `model_validate_json`, but the
    event loop runs between slices, so a window stays responsive meanwhile."""
    users = [
        {"id": i, "name": f"User {i}", "email": f"u{i}@example.com", "username": f"u{i}",
         "seenAt": "2025-01-02T03:04:05.000Z", "createdAt": 1704164645000, "extra": i}
        for i in range(100_000)
    ]  # fmt: skip
    body = jsonb({"version": 1, "inactiveUsers": users, "total": 100_000})
    transport, _ = canned(200, body)
    turns = 0

    async def ticker() -> None:
        nonlocal turns
        while True:
            turns += 1
            await asyncio.sleep(0)

    async def go() -> InactiveUsers:
        async with AdminClient(BASE, TOKEN, transport=transport, retry=ONCE) as client:
            tick = asyncio.create_task(ticker())
            try:
                return await client.inactive_users()
            finally:
                tick.cancel()

    result = run(go())
    assert result == InactiveUsers.model_validate_json(body)
    assert result.model_extra == {"total": 100_000}  # a member after the list is kept
    assert len(result.inactiveUsers) == 100_000
    assert turns >= len(body) // PIECE_BYTES  # at least one turn per piece


def test_a_large_list_streamed_with_cuts_in_awkward_places() -> None:
    """Items whose strings hold `},{` and braces, nested objects, pretty-printed JSON, and
    chunks of every size: the streamed parse gives what one `model_validate_json` gives."""
    features = [
        {"name": f"f{i}", "project": "p", "description": "odd },{ \"x\" } {" * (i % 3),
         "environments": [{"name": "dev", "enabled": True}, {"name": "prod", "enabled": False}]}
        for i in range(3000)
    ]  # fmt: skip
    whole = {"version": 1, "features": features}
    for body, chunk in ((jsonb(whole), 1000), (json.dumps(whole, indent=2).encode(), 7777)):
        stream: ListStream[ArchivedFeature] = ListStream("features", ArchivedFeature, 4096)
        items = []
        for start in range(0, len(body), chunk):
            items.extend(stream.feed(body[start : start + chunk]))
        items.extend(stream.finish())
        assert items == ArchivedFeatures.model_validate_json(body).features
        assert stream.envelope == {"version": 1}


def test_a_bad_item_in_a_streamed_list_is_named_by_its_index() -> None:
    users = [{"id": i, "name": f"User {i}"} for i in range(20_000)]
    users[15_000]["id"] = "fifteen thousand"
    error = failure(canned(200, jsonb({"version": 1, "inactiveUsers": users}))[0],
                    lambda c: c.inactive_users())  # fmt: skip
    assert isinstance(error, e.BadResponse)
    assert error.field == "inactiveUsers[15000].id"


def test_a_streamed_list_cut_short_is_a_bad_response() -> None:
    body = jsonb({"version": 1, "inactiveUsers": [{"id": i} for i in range(20_000)]})
    error = failure(canned(200, body[:-5000])[0], lambda c: c.inactive_users())
    assert isinstance(error, e.BadResponse)
    assert "not JSON" in str(error)


def test_streamed_answers_that_are_not_json_over_a_real_socket() -> None:
    """A streamed read consumes the body as it comes: what is wrong with it is still said from
    the bytes seen (the response itself holds none)."""
    users = jsonb({"version": 1, "inactiveUsers": [{"id": i} for i in range(20_000)]})

    async def go() -> list[BaseException]:
        async with FaultServer(
            Reply(200, b"OK", {"Content-Type": "text/plain"}),
            Reply(200, b"<!doctype html><p>app</p>", {"Content-Type": "application/octet-stream"}),
            Reply(200, users[:-5000]),  # whole as sent, but not the whole JSON
        ) as server:
            errors: list[BaseException] = []
            async with AdminClient(server.url, TOKEN, retry=ONCE) as client:
                for _ in range(3):
                    try:
                        await client.inactive_users()
                    except e.ClientError as exc:
                        errors.append(exc)
            return errors

    plain, page, cut = run(go())
    assert type(plain) is e.BadResponse and "not JSON (text/plain)" in str(plain)
    assert type(page) is e.BadResponse and "an HTML page" in str(page)
    assert type(cut) is e.BadResponse and "not JSON (application/json)" in str(cut)


def test_a_streamed_read_lost_midway_is_retried_until_items_were_handed_out() -> None:
    users = [{"id": i, "name": f"User {i}"} for i in range(20_000)]
    body = jsonb({"version": 1, "inactiveUsers": users})
    retry = RetryPolicy(attempts=3, base_delay=0.001, max_delay=0.001)

    async def go() -> tuple[int, int, BaseException | None, int]:
        async with FaultServer(Cut(body, len(body) // 2), Reply(200, body)) as server:
            async with AdminClient(server.url, TOKEN, retry=retry) as client:
                result = await client.inactive_users()  # lost, then read again whole
                first_requests = len(server.requests)
            server.script[:] = [Cut(body, len(body) // 2), Reply(200, body)]
            server.requests.clear()
            handed: list[Any] = []
            failure: BaseException | None = None
            async with AdminClient(server.url, TOKEN, retry=retry) as client:
                try:
                    await client.inactive_users(on_items=handed.extend)
                except e.ClientError as exc:
                    failure = exc
            return len(result.inactiveUsers), first_requests, failure, len(server.requests)

    count, requests, failure, requests_with_items = run(go())
    assert (count, requests) == (20_000, 2)
    # items had gone to the caller: not read again (they would come twice), the loss is raised
    assert isinstance(failure, e.ConnectionLost), failure
    assert requests_with_items == 1


def test_an_answer_of_another_shape_is_parsed_whole() -> None:
    """Members before the list that are not plain values: not streamed, same result."""
    users = [{"id": i} for i in range(20_000)]
    body = jsonb({"meta": {"a": [1, 2]}, "version": 1, "inactiveUsers": users})

    async def go() -> InactiveUsers:
        async with AdminClient(BASE, TOKEN, transport=canned(200, body)[0], retry=ONCE) as c:
            return await c.inactive_users()

    result = run(go())
    assert result == InactiveUsers.model_validate_json(body)
    assert result.model_extra == {"meta": {"a": [1, 2]}}


def test_a_200_html_page_is_a_bad_response() -> None:
    page = "<!doctype html><html><head><title>Unleash</title></head><body>app</body></html>"
    error = failure(canned(200, page, {"content-type": "text/html"})[0])
    assert type(error) is e.BadResponse
    assert error.field == ""
    assert "HTML page" in str(error)
    assert str(error) == (
        "GET /api/admin/projects: the server answered 200 with an HTML page, where the API "
        "sends JSON. Is the server URL right (it should be the Unleash base URL, not a page of "
        "its web interface or a proxy)?"
    )


def test_a_200_text_body_is_a_bad_response() -> None:
    error = failure(canned(200, "OK", {"content-type": "text/plain"})[0])
    assert isinstance(error, e.BadResponse)
    assert str(error).startswith(
        "GET /api/admin/projects: the server answered 200 with not JSON (text/plain)"
    )


# ---------------------------------------------------------------------------- no token anywhere

ECHOES: list[tuple[int, bytes, Mapping[str, str]]] = [
    (401, jsonb({"name": "AuthError", "message": f"token {TOKEN} is not valid."}), {}),
    (401, jsonb({"name": "AuthError", "message": f"token '{SECRET}' is not valid."}), {}),
    (400, jsonb({"name": f"Bad{TOKEN}", "message": "m"}), {}),
    (400, jsonb({"id": "i", "name": f"{TOKEN}", "message": ""}), {}),
    (
        400,
        jsonb(
            {
                "name": "ValidationError",
                "message": "invalid",
                "details": [
                    {"message": f"{TOKEN} is not allowed", "path": TOKEN},
                    {"message": "bad", "path": f"headers.authorization.{TOKEN}"},
                    {"message": "bad", "path": f"tokens[{SECRET}]"},
                ],
            }
        ),
        {},
    ),
    (
        500,
        f"<html><body><pre>Error: {TOKEN}<br>at x</pre></body></html>".encode(),
        {"content-type": "text/html"},
    ),
    (500, f"Authorization: {TOKEN}\nmore".encode(), {"content-type": "text/plain"}),
    (429, f"slow down {SECRET}".encode(), {"content-type": "text/plain", "retry-after": "3"}),
]


@pytest.mark.parametrize(("status", "body", "headers"), ECHOES)
def test_a_token_the_server_echoes_is_scrubbed(
    status: int, body: bytes, headers: Mapping[str, str]
) -> None:
    error = failure(canned(status, body, {"content-type": "application/json", **headers})[0])
    assert isinstance(error, e.ApiError)
    assert error.status == status
    assert "***" in str(error)  # it was there, and was replaced


def test_the_echoed_token_is_replaced_in_place() -> None:
    body = jsonb({"name": "AuthError", "message": f"token {TOKEN} is not valid."})
    error = failure(canned(401, body)[0])
    assert isinstance(error, e.ApiError)
    assert error.message == "token *** is not valid."


def test_the_client_token_is_scrubbed_too() -> None:
    body = jsonb(
        {
            "name": "Forbidden",
            "message": f"token {CLIENT_TOKEN} may not; nor {CLIENT_SECRET}",
            "details": [{"message": "no", "path": CLIENT_TOKEN}],
        }
    )
    transport, seen = canned(401, body)
    error = failure(transport, send_bulk, client_token=CLIENT_TOKEN)
    assert isinstance(error, e.ApiError)
    assert error.message == "token *** may not; nor ***"
    assert error.details == (e.Problem("no", "***"),)
    assert seen[0].headers["authorization"] == CLIENT_TOKEN


def usage_with_variant(key: str) -> bytes:
    window = {
        "featureName": "f",
        "appName": "a",
        "environment": "e",
        "timestamp": "2024-01-01T00:00:00Z",
        "yes": 1,
        "no": 0,
        "variants": {key: "not a number"},
    }
    return jsonb({"featureName": "f", "lastHourUsage": [window]})


def feature_usage(client: AdminClient) -> Awaitable[object]:
    return client.feature_usage("f")


def test_a_bad_response_quoting_the_token_is_scrubbed() -> None:
    error = failure(canned(200, usage_with_variant(TOKEN))[0], feature_usage)
    assert isinstance(error, e.BadResponse)
    assert "lastHourUsage[0].variants.*:*.***: Input should be a valid integer" in str(error)


def test_a_token_echoed_as_the_error_id_is_scrubbed() -> None:
    failure(canned(401, jsonb({"id": TOKEN, "name": "AuthError", "message": "no"}))[0])


def test_a_token_in_a_bad_response_field_is_scrubbed() -> None:
    error = failure(canned(200, usage_with_variant(TOKEN))[0], feature_usage)
    assert isinstance(error, e.BadResponse)
    assert error.field.startswith("lastHourUsage[0].variants.")
    assert_no_secret(error.field)


def test_the_client_repr_and_the_requests_hold_the_token_only_in_the_header() -> None:
    transport, seen = canned(200, b'{"health": "GOOD"}')

    async def go() -> AdminClient:
        async with AdminClient(
            "http://unleash.test/prefix/", TOKEN, client_token=CLIENT_TOKEN, transport=transport
        ) as client:
            assert_no_secret(repr(client), str(client))
            await client.health()
            return client

    client = run(go())
    assert repr(client) == "AdminClient(base_url='http://unleash.test/prefix')"
    assert client.closed
    request = seen[0]
    assert str(request.url) == "http://unleash.test/prefix/health"
    assert request.headers["authorization"] == TOKEN
    other = [v for k, v in request.headers.items() if k != "authorization"]
    assert_no_secret(str(request.url), *other)


def test_debug_logs_never_hold_the_token(caplog: pytest.LogCaptureFixture) -> None:
    user = {
        "user": {"username": "admin", "type": "admin", "secret": TOKEN, "permissions": ["ADMIN"]},
        "permissions": [{"permission": "ADMIN"}],
    }
    echo = jsonb({"name": "AuthError", "message": f"token {TOKEN} / {CLIENT_TOKEN} is bad"})

    async def go() -> CurrentUser:
        async with FaultServer(
            Reply(200, jsonb(user)), Reply(401, echo), Reply(503, echo), Drop(), Reply(401, echo)
        ) as server:
            retry = RetryPolicy(attempts=2, base_delay=0.001, max_delay=0.001)
            async with AdminClient(
                server.url, TOKEN, client_token=CLIENT_TOKEN, retry=retry
            ) as client:
                me = await client.current_user()
                with pytest.raises(e.Unauthorized):
                    await client.list_projects()
                with pytest.raises(e.ConnectionLost):
                    await client.list_users()  # 503, retried, then the connection drops
                with pytest.raises(e.Unauthorized):
                    await client.send_bulk_metrics(EMPTY_BULK)
            return me

    with caplog.at_level(logging.DEBUG):
        me = run(go())
    assert me.user["secret"] == TOKEN  # the answer itself holds it; it must not reach a log
    assert_no_secret(repr(me), str(me))
    messages = [record.getMessage() for record in caplog.records]
    assert any("GET /api/admin/user -> 200" in m for m in messages)
    assert any("GET /api/admin/user-admin: 503; retry 1" in m for m in messages)
    assert_no_secret(caplog.text, *messages)


# ---------------------------------------------------------------------------- no answer at all


def test_a_closed_port_is_connection_refused() -> None:
    port = closed_port()
    error = run(outcome(f"http://127.0.0.1:{port}"))
    assert type(error) is e.ConnectionRefused
    assert isinstance(error, e.ServerUnreachable)
    assert error.url == f"http://127.0.0.1:{port}"
    assert error.reason == "connection refused (is the server running, on that port?)"
    assert str(error) == f"Cannot reach {error.url}: {error.reason}"
    assert_clean(error)


def test_a_closed_port_on_a_name_with_two_addresses_is_connection_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    port = closed_port()
    real = socket.getaddrinfo

    def two_addresses(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host in ("twice.test", b"twice.test"):
            return [
                (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port)),
                (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.2", port)),
            ]
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", two_addresses)
    error = run(outcome(f"http://twice.test:{port}"))
    assert type(error) is e.ConnectionRefused


def test_a_name_that_does_not_resolve_is_host_not_found() -> None:
    error = run(outcome("http://flagdesk-test.invalid"))
    assert type(error) is e.HostNotFound
    assert error.reason == "the host name 'flagdesk-test.invalid' does not resolve (DNS)"
    assert str(error) == f"Cannot reach http://flagdesk-test.invalid: {error.reason}"


def test_https_to_a_plain_http_server_is_a_tls_error() -> None:
    async def go() -> Health | e.ClientError:
        async with FaultServer(Reply(200, b'{"health": "GOOD"}')) as server:
            return await outcome(server.url.replace("http://", "https://"))

    error = run(go())
    assert type(error) is e.TlsError
    assert error.reason.startswith("the TLS handshake failed (")
    assert error.reason.endswith("); is it an https server?")


def test_an_untrusted_certificate_is_a_tls_error_and_is_not_retried() -> None:
    delays: list[float] = []

    async def sleep(delay: float) -> None:
        delays.append(delay)

    async def go() -> Health | e.ClientError:
        async with FaultServer(Reply(200, b'{"health": "GOOD"}'), tls=server_tls()) as server:
            return await outcome(server.url, retry=RetryPolicy(attempts=4), sleep=sleep)

    error = run(go())
    assert type(error) is e.TlsError
    assert "certificate" in error.reason
    assert error.reason.startswith("the server's TLS certificate was refused (")
    assert "give its CA bundle in the connection settings" in error.reason
    assert delays == []  # every retry sleeps first: there was none


@pytest.mark.parametrize(
    "options",
    [{"ca_bundle": CA_BUNDLE}, {"verify_tls": False}],
    ids=["ca_bundle", "no_verify"],
)
def test_a_private_certificate_is_accepted_when_told(options: dict[str, Any]) -> None:
    async def go() -> list[Health | e.ClientError]:
        async with FaultServer(Reply(200, b'{"health": "GOOD"}'), tls=server_tls()) as server:
            by_ip = await outcome(server.url, **options)
            by_name = await outcome(server.url.replace("127.0.0.1", "localhost"), **options)
            return [by_ip, by_name]

    assert run(go()) == [Health(health="GOOD"), Health(health="GOOD")]


def test_an_unreadable_ca_bundle_is_refused_up_front(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="cannot be read"):
        AdminClient(BASE, TOKEN, ca_bundle=str(tmp_path / "missing.pem"))


def test_a_server_that_never_answers_times_out() -> None:
    async def go() -> tuple[Health | e.ClientError, int]:
        async with FaultServer(Hang()) as server:
            return await outcome(server.url, read_timeout=0.3), len(server.requests)

    error, requests = run(go())
    assert type(error) is e.TimedOut
    assert error.reason == "no answer within 0.3 s"
    assert requests == 1


def test_a_server_that_hangs_up_is_connection_lost() -> None:
    async def go() -> tuple[Health | e.ClientError, int]:
        async with FaultServer(Drop()) as server:
            return await outcome(server.url), len(server.requests)

    error, requests = run(go())
    assert type(error) is e.ConnectionLost
    assert error.reason.startswith("the connection broke before the answer was complete (")
    assert requests == 1


def test_no_connection_in_time_is_timed_out() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectTimeout("timed out", request=request)

    error = failure(httpx.MockTransport(handler), connect_timeout=2.5)
    assert type(error) is e.TimedOut
    assert error.reason == "no connection within 2.5 s"
    assert str(error) == "Cannot reach http://unleash.test: no connection within 2.5 s"


def test_an_unknown_transport_failure_is_server_unreachable() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.UnsupportedProtocol(f"odd failure near {TOKEN}", request=request)

    error = failure(httpx.MockTransport(handler))
    assert type(error) is e.ServerUnreachable
    assert error.reason == "odd failure near ***"


def test_a_streamed_read_counts_as_in_flight_until_its_answer_is_read() -> None:
    """The status bar's request count: a 38 MB answer is still a request in flight while its
    body arrives, not only until its headers do."""
    body = jsonb({"version": 1, "inactiveUsers": [{"id": i} for i in range(20_000)]})
    seen: list[int] = []

    async def go() -> int:
        async with AdminClient(BASE, TOKEN, transport=canned(200, body)[0], retry=ONCE) as c:
            await c.inactive_users(on_items=lambda users: seen.append(c.in_flight))
            return c.in_flight

    after = run(go())
    assert seen and set(seen) == {1}
    assert after == 0
