"""Schemathesis over the sandbox's own OpenAPI document (`/docs/openapi.json`): what the fuzz
tests of the sandbox (tests/sandbox/test_fuzz.py) and of a real Unleash 8.2 against the same
document (tests/compat/test_fuzz.py) share.

Each generated request goes with the token its side of the API takes: the client token to
`/api/client/...`, the admin token to the rest. The checks: no 5xx, and every answer as the
document says (a status it lists, its content type, a body that fits its schema).
"""

from __future__ import annotations

from hypothesis import HealthCheck, Phase, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

#: every answer: no server error, and as the OpenAPI document says
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]

#: generated requests per operation: 40 operations x 25 = 1,000 requests, about a minute on
#: two shared cores (the run reports its own time; `--durations` shows it)
EXAMPLES = 25

#: the same cases every run (a fixed seed: a failure found once is found again), no time
#: limit per example (the machine is shared), no shrinking (each failure is shown as found)
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
    database=None,
)


def token_for(path: str, admin: str, client: str) -> str:
    """The token a request to `path` goes with: the client token on the client API."""
    return client if path.startswith("/api/client/") else admin
