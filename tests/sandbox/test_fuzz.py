"""Schemathesis against the sandbox's own OpenAPI document: every operation, admin and client
tokens, `tests.fuzz.EXAMPLES` generated requests each (1,000 in all, about a minute): no server
error, and every answer one the document lists, with its content type and a body that fits.
Then with no token, `NO_TOKEN_EXAMPLES` each (200 in all): the 401 of every side behind a token,
answered before any body is read, and the open routes as they are.
Fails on a sandbox whose OpenAPI leaves out the 400/403/404/415 it answers, lists a 422 it never
sends, or declares a JSON body where it sends none."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from hypothesis import settings
from schemathesis import Case
from schemathesis.schemas import BaseSchema

from sandbox.process import SandboxProcess
from tests.fuzz import CHECKS, FUZZ, token_for

#: generated requests per operation without a token: 40 x 5 = 200, a few seconds (each is
#: refused before its body is read, the open routes aside)
NO_TOKEN_EXAMPLES = 5
#: maintenance mode (issue 38), which the fuzz switches off again after each of its cases
MAINTENANCE = "/api/admin/maintenance"


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxProcess]:
    """A demo sandbox of this module's own (the fuzz changes and deletes what it finds), with
    no limit on creating users (a 429 is declared, but would hide the rest)."""
    db = Path(tmp_path_factory.mktemp("fuzz")) / "fuzz.sqlite3"
    with SandboxProcess(db, "--demo", "--create-user-limit", "0") as sb:
        yield sb


@pytest.fixture(scope="module")
def sandbox_openapi(fuzzed: SandboxProcess) -> BaseSchema:
    return schemathesis.openapi.from_url(f"{fuzzed.url}/docs/openapi.json")


schema = schemathesis.pytest.from_fixture("sandbox_openapi")


@schema.parametrize()
@FUZZ
def test_the_sandbox_answers_as_its_openapi_says(case: Case, fuzzed: SandboxProcess) -> None:
    token = token_for(case.path, fuzzed.admin_token, fuzzed.client_token)
    try:
        case.call_and_validate(base_url=fuzzed.url, headers={"Authorization": token},
                               checks=CHECKS)  # fmt: skip
    finally:
        if case.path == MAINTENANCE:  # switched on, it would answer every later write 503
            with fuzzed.admin() as http:
                assert http.post(MAINTENANCE, json={"enabled": False}).status_code == 204


@schema.parametrize()
@settings(FUZZ, max_examples=NO_TOKEN_EXAMPLES)
def test_the_sandbox_answers_as_its_openapi_says_without_a_token(
    case: Case, fuzzed: SandboxProcess
) -> None:
    case.call_and_validate(base_url=fuzzed.url, checks=CHECKS)
