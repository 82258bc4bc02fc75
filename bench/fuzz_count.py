"""A large schemathesis run over the sandbox's own OpenAPI document, counted rather than stopped
at the first failure: the figure issue 35 asks for (cases, 5xx, undocumented statuses). Prints
one JSON object.

    .venv/bin/python bench/fuzz_count.py [--examples 250] [--seed 35]

It starts a demo sandbox of its own (`--create-user-limit 0`, as `tests/sandbox/test_fuzz.py`:
a 429 is declared, but would hide the rest), reads `/docs/openapi.json` and sends `--examples`
generated requests to each operation (hypothesis's examples, which stops earlier for an
operation with fewer distinct cases), each with the token its side takes (`tests.fuzz`). Each
answer is counted:

- `cases`: requests sent and answered (`positive_cases`, `negative_cases`: of each generation
  mode, `--modes`: positive ones are what the document allows and are held to all of
  `tests.fuzz.CHECKS`; negative ones what it refuses, held to no 5xx and a documented
  status, where the OverflowError 500s of issue 35 showed);
- `server_errors`: a 5xx answer (with the operation, status and the first lines of the body,
  at most five of each kind in `examples_of`);
- `undocumented_status`: a status the operation does not list;
- `other_failures`: any other check of `tests.fuzz.CHECKS` failing (content type, a body that
  does not fit its schema);
- `transport_errors`: no answer at all (the connection reset, a timeout).

`tests/sandbox/test_fuzz.py` runs 25 cases an operation in `make test` and stops at the first
failure; this one is the long run, by hand (about 10,000 cases: a few minutes on two cores).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import schemathesis
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.generation import GenerationMode

from sandbox.process import SandboxProcess

# the checks and tokens of the fuzz test, from the checkout this script is in (`tests` is no
# installed package: run as `.venv/bin/python bench/fuzz_count.py`, only bench/ is on the path)
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.fuzz import CHECKS, token_for


class Tally:
    """The counts, by kind and by operation, and a few examples of each kind."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.by_operation: dict[str, Counter[str]] = defaultdict(Counter)
        self.examples: dict[str, list[str]] = defaultdict(list)

    def note(self, kind: str, label: str, text: str) -> None:
        self.counts[kind] += 1
        self.by_operation[label][kind] += 1
        if len(self.examples[kind]) < 5:
            self.examples[kind].append(f"{label}: {text}")


#: maintenance mode (issue 38), switched off again after each of its cases, as the fuzz test does
MAINTENANCE = "/api/admin/maintenance"


def fuzz(
    operation: Any,
    mode: GenerationMode,
    sb: SandboxProcess,
    examples: int,
    chosen_seed: int,
    tally: Tally,
) -> None:
    """Send `examples` requests generated in `mode` to `operation` and count their answers."""
    label = operation.label
    listed = set(operation.definition.raw.get("responses", {}))

    # a fixed seed: the same cases each time it is run with the same arguments
    @seed(chosen_seed)
    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=examples,
        deadline=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
        database=None,
    )
    def run(case: Any) -> None:
        token = token_for(case.path, sb.admin_token, sb.client_token)
        try:
            response = case.call(base_url=sb.url, headers={"Authorization": token})
        except Exception as exc:  # no answer: counted, the run goes on
            tally.note("transport_errors", label, f"{type(exc).__name__}: {exc}"[:200])
            return
        tally.counts["cases"] += 1
        tally.counts[f"{mode.value}_cases"] += 1
        status = response.status_code
        if status >= 500:
            tally.note("server_errors", label, f"{status} {response.text[:200]!r}")
        documented = str(status) in listed or "default" in listed
        if not documented:
            tally.note("undocumented_status", label, f"{status} {response.text[:200]!r}")
        try:
            if mode is not GenerationMode.POSITIVE:
                return  # a request against the document: only no 5xx and a documented status
            try:
                case.validate_response(response, checks=CHECKS)
            except (Exception, BaseExceptionGroup) as exc:  # FailureGroup is the latter
                if status < 500 and documented:
                    tally.note("other_failures", label, str(exc).strip().splitlines()[0][:200])
        finally:
            if case.path == MAINTENANCE:  # switched on, every later write would be a 503
                with sb.admin() as http:
                    http.post(MAINTENANCE, json={"enabled": False})

    try:
        run()
    except Unsatisfiable:  # nothing of it can be made invalid (a GET without parameters)
        tally.counts[f"{mode.value}_operations_without_cases"] += 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=250, help="cases an operation")
    parser.add_argument("--seed", type=int, default=35, help="hypothesis's seed")
    parser.add_argument(
        "--modes",
        default="positive,negative",
        help="schemathesis's generation modes, each run in turn (positive: requests the document "
        "allows; negative: requests it refuses, such as an integer past its bound)",
    )
    args = parser.parse_args()
    tally, operations = Tally(), 0
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "fuzz.sqlite3"
        with SandboxProcess(db, "--demo", "--create-user-limit", "0") as sb:
            schema = schemathesis.openapi.from_url(f"{sb.url}/docs/openapi.json")
            modes = [GenerationMode(name.strip()) for name in args.modes.split(",")]
            for result in schema.get_all_operations():
                operations += 1
                for mode in modes:
                    fuzz(result.ok(), mode, sb, args.examples, args.seed, tally)
    counts = tally.counts
    report = {
        "examples_per_operation": args.examples,
        "seed": args.seed,
        "operations": operations,
        "modes": args.modes,
        "cases": counts["cases"],
        "positive_cases": counts["positive_cases"],
        "negative_cases": counts["negative_cases"],
        "operations_with_no_negative_case": counts["negative_operations_without_cases"],
        "server_errors": counts["server_errors"],
        "undocumented_status": counts["undocumented_status"],
        "other_failures": counts["other_failures"],
        "transport_errors": counts["transport_errors"],
        "seconds": round(time.monotonic() - started, 1),
        "failing_operations": {label: dict(kinds) for label, kinds in tally.by_operation.items()},
        "examples_of": dict(tally.examples),
    }
    print(json.dumps(report, indent=2))
    return 1 if counts["server_errors"] or counts["undocumented_status"] else 0


if __name__ == "__main__":
    sys.exit(main())
