"""What each route declares it answers, for the OpenAPI document at `/docs/openapi.json`.

Routes build their answers themselves (`json_response`, a bare `Response`), so FastAPI cannot
see what they send: each declares its success body's model (`ok`), the answers with no body
(`no_body`) and the error statuses it can send (`errors`), every error with the spec's error
body (`m.ErrorBody`). The fuzz test (tests/sandbox/test_fuzz.py, schemathesis) holds the
sandbox to what is declared here: every status it answers is listed, every body fits.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from app.api import models as m

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
}

#: the answers of every route behind a token (`deps.Admin`, `deps.Client`)
TOKEN_ERRORS = (401, 403)


def errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    """The error answers `codes`, each with the error body."""
    return {code: {"model": m.ErrorBody, "description": ERROR_MEANINGS[code]} for code in codes}


def ok(model: type[BaseModel] | Any, *codes: int, status: int = 200) -> dict[int | str, Any]:
    """A success answer with a body of `model` (a model, or a type such as `list[m.X]`), and
    the error answers `codes`."""
    return {status: {"model": model}, **errors(*codes)}


def no_body(status: int, description: str, *codes: int) -> dict[int | str, Any]:
    """A success answer with no body (use with `response_class=Response`), and the error
    answers `codes`."""
    return {status: {"description": description, "content": {}}, **errors(*codes)}
