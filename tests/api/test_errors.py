"""AdminClient errors: every way a request fails becomes the right `ClientError`, readable and
without the token.

Canned answers come from `httpx.MockTransport`; transport failures use real sockets on
127.0.0.1 (`tests/faults.py`) wherever the operating system can produce them."""

from __future__ import annotations

import json
import logging
import socket
import ssl
from collections.abc import Awaitable, Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.api import errors as e
from app.api.client import AdminClient, RetryPolicy
from app.api.models import (
    CurrentUser,
    Health,
)
from app.api.sending import tls_context
from tests.api.helpers import (
    BASE,
    CLIENT_SECRET,
    CLIENT_TOKEN,
    EMPTY_BULK,
    ONCE,
    SECRET,
    TOKEN,
    assert_clean,
    assert_no_secret,
    canned,
    failure,
    jsonb,
    run,
    send_bulk,
    update_user,
)
from tests.faults import (
    CA_BUNDLE,
    Drop,
    FaultServer,
    Hang,
    Reply,
    closed_port,
    server_tls,
)


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
    # an odd key is written `["..."]` in the one JSON path notation (`app.api.wire.json_path`);
    # the token in it is hidden whole
    assert 'lastHourUsage[0].variants["***"]: Input should be a valid integer' in str(error)


def test_a_token_echoed_as_the_error_id_is_scrubbed() -> None:
    failure(canned(401, jsonb({"id": TOKEN, "name": "AuthError", "message": "no"}))[0])


def test_a_token_in_a_bad_response_field_is_scrubbed() -> None:
    error = failure(canned(200, usage_with_variant(TOKEN))[0], feature_usage)
    assert isinstance(error, e.BadResponse)
    assert error.field.startswith("lastHourUsage[0].variants[")
    assert_no_secret(error.field)


def test_a_large_body_with_several_long_lists_validates_each_and_names_a_bad_item() -> None:
    """A batch export of 3,000 flags (over the size parsed a slice at a time): every long list
    is validated a slice at a time, and a bad item of the second list is named by its path."""
    count = 3000
    body: dict[str, Any] = {
        "features": [{"name": f"flag-{i}", "description": "x" * 60} for i in range(count)],
        "featureEnvironments": [
            {"featureName": f"flag-{i}", "enabled": True} for i in range(count)
        ],
    }

    async def export(client: AdminClient) -> Any:
        return await client.export_features("production")

    async def good() -> Any:
        async with AdminClient(BASE, TOKEN, transport=canned(200, jsonb(body))[0],
                               retry=ONCE) as client:  # fmt: skip
            return await export(client)

    found = run(good())
    assert len(found.features) == len(found.featureEnvironments) == count
    assert found.featureEnvironments[-1].featureName == f"flag-{count - 1}"
    body["featureEnvironments"][2500]["enabled"] = "sometimes"
    error = failure(canned(200, jsonb(body))[0], export)
    assert isinstance(error, e.BadResponse)
    assert error.field.startswith("featureEnvironments[2500].enabled"), error.field


def test_a_projects_export_as_plain_data_asks_for_it_and_names_a_bad_item() -> None:
    """`exported`: one project's export in one environment, validated from its bytes into
    plain data (`app.api.exported`); an item unlike the API's model is named by its path, as
    the models' are."""
    body: dict[str, Any] = {
        "features": [{"name": "flag-1", "project": "web", "extra": "kept out"}],
        "featureEnvironments": [{"featureName": "flag-1", "enabled": True}],
    }

    async def export(client: AdminClient) -> Any:
        return await client.exported("production", "web")

    async def good() -> Any:
        async with AdminClient(BASE, TOKEN, transport=transport, retry=ONCE) as client:
            return await export(client)

    transport, seen = canned(200, jsonb(body))
    found = run(good())
    assert found["features"] == [{"name": "flag-1", "project": "web"}]
    assert found["featureEnvironments"][0]["enabled"] is True
    assert json.loads(seen[0].content) == {"environment": "production", "project": "web"}
    body["featureEnvironments"][0]["enabled"] = "sometimes"
    error = failure(canned(200, jsonb(body))[0], export)
    assert isinstance(error, e.BadResponse)
    assert error.field.startswith("featureEnvironments[0].enabled"), error.field


def test_a_large_projects_export_is_validated_a_slice_at_a_time_as_the_small_one_is() -> None:
    """Past the size validated in one call, `exported` decodes the body and validates each list
    a slice at a time (the window's thread turns between): the same plain data as validated
    whole, a bad item named by its path as before, and a body that is no JSON said as such."""
    from app.api import client as client_module
    from app.api.exported import EXPORTED

    count = 2000
    body: dict[str, Any] = {
        "features": [{"name": f"flag-{i}", "project": "web", "description": "x" * 60,
                      "extra": "kept out"} for i in range(count)],
        "featureEnvironments": [{"featureName": f"flag-{i}", "enabled": i % 2 == 0}
                                for i in range(count)],
        "featureTags": [],
    }  # fmt: skip
    content = jsonb(body)
    assert len(content) > client_module.THREAD_PARSE_BYTES

    async def export(client: AdminClient) -> Any:
        return await client.exported("production", "web")

    async def good() -> Any:
        async with AdminClient(BASE, TOKEN, transport=canned(200, content)[0],
                               retry=ONCE) as client:  # fmt: skip
            return await export(client)

    assert run(good()) == EXPORTED.validate_json(content)
    body["featureEnvironments"][1500]["enabled"] = "sometimes"
    error = failure(canned(200, jsonb(body))[0], export)
    assert isinstance(error, e.BadResponse)
    assert error.field.startswith("featureEnvironments[1500].enabled"), error.field
    not_json = b"[" + b" " * client_module.THREAD_PARSE_BYTES
    assert isinstance(failure(canned(200, not_json)[0], export), e.BadResponse)


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


def test_only_a_tls_url_loads_certificates() -> None:
    """A plain-HTTP base URL never uses TLS: no certificates are loaded for it (20-35 ms of the
    GUI's way to its first data); an https one, or any given a CA bundle, checks them."""
    assert tls_context(True, None, "http://127.0.0.1:4242") is False
    context = tls_context(True, None, "https://unleash.example.com")
    assert isinstance(context, ssl.SSLContext) and context.verify_mode == ssl.CERT_REQUIRED
    assert isinstance(tls_context(True, CA_BUNDLE, "http://127.0.0.1:4242"), ssl.SSLContext)
    assert tls_context(False, None, "https://unleash.example.com") is False


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
