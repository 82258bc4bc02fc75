"""The sandbox's fuzz run (tests/sandbox/test_fuzz.py) against a real Unleash 8.2: the same
OpenAPI document (the sandbox's), the same checks, the same tokens per side. It records where
Unleash answers otherwise than the sandbox documents (its 500s, statuses or bodies the sandbox
does not send) and passes: the sandbox follows Unleash where that is right, and does not copy
its server errors. What it found goes to `unleash-fuzz.json` in pytest's base temp folder (the
path is printed), one entry per operation and difference.

Only what changes nothing on the shared peer is sent: the GET operations, and bulk metrics
(whose names are made up, so nothing is stored). Creating, changing and deleting users, groups,
flags and context fields at random would break the other tests that use the peer.

The run is Unleash 8.2's (the sandbox follows 8.2): on older versions nothing is sent, by
design and said per version in FUZZED. Unleash 5.12 stops altogether on a bulk body whose
application lacks `interval` (a ValidationError it does not catch), which took every later
compat test down with it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from schemathesis import Case
from schemathesis.core.failures import Failure, FailureGroup
from schemathesis.schemas import BaseSchema

from sandbox.process import SandboxProcess
from tests.compat.conftest import Peer, per_version
from tests.fuzz import CHECKS, FUZZ, token_for

#: whether the peer's version is fuzzed (see above)
FUZZED = {"5.12 6.10 7.6": False, "8.2": True}

#: operation -> (difference -> how many cases showed it); and the cases run per operation
FOUND: dict[str, Counter[str]] = {}
RUN: Counter[str] = Counter()


def safe(case: Case) -> bool:
    """Sent to the shared peer: reads, and bulk metrics; and only with the operation's own
    method (schemathesis also tries the methods a path does not list, which on Unleash may be
    routes that change something)."""
    method = case.operation.method.upper()
    if case.method.upper() != method:
        return False
    return method == "GET" or case.operation.path == "/api/client/metrics/bulk"


@pytest.fixture(scope="module")
def sandbox_openapi(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BaseSchema]:
    """The sandbox's OpenAPI document (read from a sandbox of its own); on teardown, what the
    run found is written down."""
    db = Path(tmp_path_factory.mktemp("openapi")) / "db.sqlite3"
    with SandboxProcess(db, "--empty") as sb:
        schema = schemathesis.openapi.from_url(f"{sb.url}/docs/openapi.json")
    yield schema
    out = tmp_path_factory.getbasetemp() / "unleash-fuzz.json"
    record = {op: {"cases": RUN[op], "differences": dict(FOUND.get(op, {}))} for op in sorted(RUN)}
    out.write_text(json.dumps(record, indent=2) + "\n")
    print(f"\nUnleash 8.2 against the sandbox's OpenAPI: {out}")
    for op, found in record.items():
        for what, n in found["differences"].items():
            print(f"  {op}: {what} ({n} of {found['cases']} cases)")


schema = schemathesis.pytest.from_fixture("sandbox_openapi")


@schema.parametrize()
@FUZZ
def test_unleash_against_the_sandboxs_openapi(case: Case, peer: Peer) -> None:
    if not safe(case) or not per_version(peer, FUZZED):
        return  # not sent (a skip here would end the operation's whole run)
    operation = f"{case.method.upper()} {case.path}"
    RUN[operation] += 1
    token = token_for(case.path, peer.admin_token, peer.require_client_token())
    try:
        case.call_and_validate(base_url=peer.url, headers={"Authorization": token}, checks=CHECKS)
    except (Failure, FailureGroup) as exc:
        failures = exc.exceptions if isinstance(exc, FailureGroup) else [exc]
        found = FOUND.setdefault(operation, Counter())
        for failure in failures:
            title = getattr(failure, "title", type(failure).__name__)
            message = str(getattr(failure, "message", "")).strip().splitlines()
            found[f"{title}: {' '.join(message)[:200]}"] += 1


def test_the_run_reached_the_peer(sandbox_openapi: BaseSchema, peer: Peer) -> None:
    """Runs after the fuzz (file order): on 8.2 it sent requests for every read and the bulk
    endpoint, whatever Unleash answered; on the other versions none."""
    if not per_version(peer, FUZZED):
        assert not RUN
        return
    assert RUN["POST /api/client/metrics/bulk"] > 0
    assert sum(1 for op in RUN if op.startswith("GET ")) >= 10
