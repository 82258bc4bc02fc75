"""What each route declares it answers, for the OpenAPI document at `/docs/openapi.json`.

Routes build their answers themselves (`json_response`, a bare `Response`), so FastAPI cannot
see what they send: each declares its success body's model (`ok`), the answers with no body
(`no_body`) and the error statuses it can send (`errors`), every error with the spec's error
body (`m.ErrorBody`). The fuzz test (tests/sandbox/test_fuzz.py, schemathesis) holds the
sandbox to what is declared here: every status it answers is listed, every body fits.
"""

from __future__ import annotations

import copy
from typing import Any

from fastapi.routing import APIRoute
from fastapi.utils import create_model_field
from pydantic import BaseModel
from starlette.routing import BaseRoute

from app.api import models as m

#: where a declared answer keeps the type of its body, in place of FastAPI's own key ("model"):
#: under that key FastAPI builds a serialiser for each answer of each route as the route is
#: declared (about 150 for the sandbox's routes, 0.05 s of the child's boot that the GUI waits
#: for), used for nothing but the OpenAPI document; `documented` gives them to it when it is made
BODY = "flagdesk-body"

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
    return {code: {BODY: m.ErrorBody, "description": ERROR_MEANINGS[code]} for code in codes}


def ok(model: type[BaseModel] | Any, *codes: int, status: int = 200) -> dict[int | str, Any]:
    """A success answer with a body of `model` (a model, or a type such as `list[m.X]`), and
    the error answers `codes`."""
    return {status: {BODY: model}, **errors(*codes)}


def no_body(status: int, description: str, *codes: int) -> dict[int | str, Any]:
    """A success answer with no body (use with `response_class=Response`), and the error
    answers `codes`."""
    return {status: {"description": description, "content": {}}, **errors(*codes)}


def documented(route: BaseRoute) -> BaseRoute:
    """`route` as the OpenAPI document describes it: a copy whose answers give the types of
    their bodies as FastAPI reads them for the document, as though declared under "model"."""
    if not isinstance(route, APIRoute) or not any(BODY in a for a in route.responses.values()):
        return route
    doc = copy.copy(route)
    doc.responses = {
        code: {key: value for key, value in answer.items() if key != BODY}
        for code, answer in route.responses.items()
    }
    doc.response_fields = {
        code: create_model_field(  # named as FastAPI names those it makes
            name=f"Response_{code}_{route.unique_id}", type_=answer[BODY], mode="serialization"
        )
        for code, answer in route.responses.items()
        if BODY in answer
    }
    return doc
