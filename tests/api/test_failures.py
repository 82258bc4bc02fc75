"""The client's jobs one by one, without a client: `app.api.failures` (answers and transport
failures into errors) and `app.api.html_pages` (the readable line of an error page). Their work
through `AdminClient` is in test_errors.py."""

from __future__ import annotations

import httpx
import pytest

from app.api import errors as e
from app.api.failures import Scrubber, api_error, normalise_path, retry_after_seconds
from app.api.html_pages import readable_text


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("$.users[0].user.id", "users[0].user.id"),
        ("/users/0/user/id", "users[0].user.id"),
        ("/a~1b/0", '["a/b"][0]'),  # JSON Pointer escapes, and a key that needs quoting
        ("users[0].name", "users[0].name"),
        ("", ""),
    ],
)
def test_error_detail_paths_in_the_one_notation(path: str, expected: str) -> None:
    assert normalise_path(path) == expected


def test_an_error_body_with_details_becomes_its_error_class() -> None:
    response = httpx.Response(
        400,
        json={
            "id": "abc",
            "name": "BadDataError",
            "message": "Request validation failed",
            "details": [{"message": "must be integer", "path": "/users/0/id"}],
        },
        request=httpx.Request("POST", "http://unleash.test/api/admin/x"),
    )
    error = api_error("POST", "/api/admin/x", response, Scrubber([]))
    assert isinstance(error, e.BadRequest)
    assert (error.name, error.message, error.error_id) == (
        "BadDataError",
        "Request validation failed",
        "abc",
    )
    assert [(d.message, d.path) for d in error.details] == [("must be integer", "users[0].id")]


def test_the_token_is_scrubbed_from_what_the_server_says() -> None:
    token = "*:*.0123456789abcdef-secret"
    response = httpx.Response(
        401, json={"message": f"token {token} is unknown"}, request=httpx.Request("GET", "http://x")
    )
    error = api_error("GET", "/api/admin/user", response, Scrubber([token]))
    assert isinstance(error, e.Unauthorized)
    assert token not in error.message and "0123456789abcdef" not in error.message


def test_the_readable_line_of_an_html_page() -> None:
    page = (
        "<html><head><title>Proxy</title><style>p {}</style></head>"
        "<body><h1>502 Bad Gateway</h1><p>nginx</p></body></html>"
    )
    response = httpx.Response(502, text=page, headers={"content-type": "text/html"})
    assert readable_text(response) == "502 Bad Gateway"
    titled = httpx.Response(502, text="<html><head><title>Down</title></head></html>")
    assert readable_text(titled) == "Down"
    assert readable_text(httpx.Response(500, text="  \n")) == ""


def test_retry_after_as_seconds() -> None:
    assert retry_after_seconds("7") == 7.0
    assert retry_after_seconds("soon") is None
