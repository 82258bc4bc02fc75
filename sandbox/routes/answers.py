"""What each endpoint declares it answers, for the OpenAPI document at `/docs/openapi.json`.

Routes build their answers themselves (`json_response`, a bare `Response`), so nothing can
read what they send from them: each endpoint declares its success body's type (`ok`), the
answers with no body (`no_body`) and the error statuses it can send (`errors`), every error with
the spec's error body (`m.ErrorBody`); the token errors (401, 403) come with its side
(`sandbox.routes.endpoint`). The fuzz test (tests/sandbox/test_fuzz.py, schemathesis) holds the
sandbox to what is declared here: every status it answers is listed, every body fits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.api import models as m


@dataclass(frozen=True)
class Answer:
    """One answer: its description, and the type of its JSON body (a model, or a type such as
    `list[m.X]`; None: no body), or a `schema` of another `media_type` given as it is."""

    description: str
    body: Any = None
    media_type: str = "application/json"
    schema: dict[str, Any] | None = None


#: what each error status means here (all with `m.ErrorBody`)
ERROR_MEANINGS: dict[int, str] = {
    400: "The request is invalid (ValidationError, BadDataError): the details name each "
    "problem's JSON path or parameter",
    401: "No token, or a token the server does not know (AuthenticationRequired)",
    403: "A token of another kind, or without the root role this needs (NoAccessError)",
    404: "No such thing (NotFoundError)",
    409: "It conflicts with what exists (NameExistsError and the like)",
    413: "The body is larger than the limit (ContentTooLarge)",
    415: "The body is not JSON (ContentTypeerror)",
    429: "Too many of these in the window (TooManyRequests); Retry-After says when to retry",
    503: "The server is in maintenance mode: no change is made until it is switched off",
}

#: the answers of every endpoint behind a token (its side "admin" or "client")
TOKEN_ERRORS = (401, 403)


def errors(*codes: int) -> dict[int, Answer]:
    """The error answers `codes`, each with the error body."""
    return {code: Answer(ERROR_MEANINGS[code], m.ErrorBody) for code in codes}


def ok(body: Any, *codes: int, status: int = 200) -> dict[int, Answer]:
    """A success answer with a body of `body` (a model, or a type such as `list[m.X]`; `Any`
    for a body the document leaves open), and the error answers `codes`."""
    return {status: Answer("Successful Response", body), **errors(*codes)}


def no_body(status: int, description: str, *codes: int) -> dict[int, Answer]:
    """A success answer with no body, and the error answers `codes`."""
    return {status: Answer(description), **errors(*codes)}
