"""What the commands that change a server share: running the job with each failure as its exit
status (`run_job`), refusing without a terminal or --yes (`need_terminal`), printing exactly
what would be sent (`dry_run`) and asking on the terminal (`confirmed`). No Qt."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Coroutine, Sequence
from typing import TYPE_CHECKING, Any

from app.api.errors import ApiError, ClientError, Forbidden, Unauthorized, Unsupported
from app.commands.connection import (
    EXIT_OK,
    EXIT_UNAUTHORISED,
    EXIT_UNREACHABLE,
    EXIT_USAGE,
    UsageError,
)
from app.commands.output import Output

if TYPE_CHECKING:
    from app.api.client import WriteRequest

#: the server refused the change (an error answer other than 401/403), or the person said no
EXIT_REFUSED = 1
#: Ctrl+C
EXIT_CANCELLED = 130


def run_job(job: Coroutine[Any, Any, int], out: Output) -> int:
    """Run a command's coroutine, each failure as its exit status and message."""
    try:
        return asyncio.run(job)
    except UsageError as exc:
        return out.fail(EXIT_USAGE, str(exc))
    except (Unauthorized, Forbidden, Unsupported) as exc:
        return out.fail(EXIT_UNAUTHORISED, str(exc), http_status=_status(exc))
    except ApiError as exc:
        return out.fail(EXIT_REFUSED, str(exc), http_status=exc.status)
    except ClientError as exc:
        return out.fail(EXIT_UNREACHABLE, str(exc))
    except KeyboardInterrupt:
        return out.fail(EXIT_CANCELLED, "cancelled")


def _status(exc: ClientError) -> int | None:
    return exc.status if isinstance(exc, ApiError) else None


def need_terminal(args: argparse.Namespace, what: str, done: str, verb: str) -> None:
    """A change asks on a terminal: without one, and without --yes or --dry-run, refused."""
    if not args.dry_run and not args.yes and not sys.stdin.isatty():
        raise UsageError(
            f"no terminal to confirm {what} on: nothing was {done}. Add --yes to {verb} "
            "without asking (--dry-run shows the request)"
        )


def dry_run(requests: Sequence[WriteRequest], server: str, what: str, out: Output) -> int:
    """Print exactly the requests that would be sent (with --json, in the object) and send
    nothing."""
    out.update(dry_run=True, requests=[_request_json(r) for r in requests])
    if len(requests) == 1:
        out.update(request=_request_json(requests[0]))
    if not out.as_json:
        for n, request in enumerate(requests):
            if n:
                print()
            print(f"{request.method} {request.path}")
            if request.body:
                print("Content-Type: application/json")
                print()
                print(request.body.decode())
        print(f"Dry run: nothing was sent to {server} ({what}).", file=sys.stderr)
    return out.done(EXIT_OK)


def _request_json(request: WriteRequest) -> dict[str, Any]:
    body = json.loads(request.body) if request.body else None
    return {"method": request.method, "path": request.path, "body": body}


def confirmed(lines: Sequence[str], question: str) -> bool:
    """Ask on the terminal (on stderr, so stdout stays the result); yes or y confirms."""
    for line in lines:
        print(line, file=sys.stderr)
    print(f"{question} [y/N] ", end="", file=sys.stderr, flush=True)
    answer = sys.stdin.readline().strip().casefold()
    return answer in ("y", "yes")
