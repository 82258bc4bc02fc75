"""What the commands share in how they talk: `Output` (text as it goes, or with `--json` one
object at the end, failures included), `whole_number` (an argument that is a number within
bounds, with an error that says which bound) and `add_action` (a sub-action with its own
help page); and how the commands that change a server ask first: `needs_terminal` (no terminal
and no --yes: nothing changes), `confirmed` (the question on the terminal), `print_request` (what
--dry-run prints) and `run_change` (a job's errors as the exit statuses every command shares)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any

from app.commands.connection import EXIT_UNAUTHORISED, EXIT_UNREACHABLE, EXIT_USAGE, UsageError

if TYPE_CHECKING:
    from app.api.client import WriteRequest

#: the server refused the change (an error answer other than 401/403), or the person said no
EXIT_REFUSED = 1
#: Ctrl+C
EXIT_CANCELLED = 130


class Output:
    """A command's summary: with `as_json`, printed as one JSON object when it ends (also on
    failure, with `error` and `exit_status`); failures are also said on stderr, prefixed by
    `program command` ("flagdesk metrics upload: ...")."""

    def __init__(self, program: str, command: str, as_json: bool) -> None:
        self.program = program
        self.as_json = as_json
        self.data: dict[str, Any] = {"command": command}

    def update(self, **fields: Any) -> None:
        self.data.update(fields)

    def say(self, line: str) -> None:
        """A line of the text report (nothing with --json: the object says it)."""
        if not self.as_json:
            print(line)

    def json(self, fields: dict[str, Any]) -> None:
        print(json.dumps({**self.data, **fields}, indent=2, ensure_ascii=False))

    def done(self, status: int) -> int:
        if self.as_json:
            self.json({"exit_status": status})
        return status

    def fail(self, status: int, message: str, *, http_status: int | None = None) -> int:
        """Say `message` (and, with --json, put it in the object as `error`, with the server's
        `http_status` when there was one) and return `status`."""
        print(f"{self.program} {self.data['command']}: {message}", file=sys.stderr)
        if self.as_json:
            extra = {} if http_status is None else {"http_status": http_status}
            self.json({"error": message, **extra, "exit_status": status})
        return status


def whole_number(low: int, high: int | None = None, noun: str = "number") -> Callable[[str], int]:
    """An argparse `type`: a whole number from `low` (to `high`), refused with a message that
    names what is wrong ("'x' is not a number", "70: choose 1 to 64")."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a {noun}") from None
        if high is not None and not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value}: choose {low} to {high}")
        if value < low:
            raise argparse.ArgumentTypeError(f"{value}: a {noun} is {low} or more")
        return value

    return parse


def add_action(
    actions: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    help: str,
    description: str,
) -> argparse.ArgumentParser:
    """A sub-action's parser (`flagdesk metrics upload`, `flagdesk users inactive`) whose
    description (usage lines, exit statuses) is printed as written."""
    return actions.add_parser(
        name,
        help=help,
        description=description,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def needs_terminal(args: argparse.Namespace, doing: str, done: str) -> None:
    """`UsageError` when a change would be asked about with no terminal to ask on and no
    `--yes` (with `--dry-run` nothing is asked). `doing`: "the deletion"; `done`: "deleted"."""
    if not args.dry_run and not args.yes and not sys.stdin.isatty():
        verb = done.removesuffix("d")
        raise UsageError(
            f"no terminal to confirm {doing} on: nothing was {done}. Add --yes to {verb} "
            "without asking (--dry-run shows the request)"
        )


def confirmed(lines: Sequence[str], question: str) -> bool:
    """Ask on the terminal (on stderr, so stdout stays the result); yes or y confirms."""
    for line in lines:
        print(line, file=sys.stderr)
    print(f"{question} [y/N] ", end="", file=sys.stderr, flush=True)
    answer = sys.stdin.readline().strip().casefold()
    return answer in ("y", "yes")


def print_request(request: WriteRequest, out: Output, note: str) -> int:
    """What --dry-run prints: the request exactly as it would be sent (or, with --json, in the
    object), and on stderr that nothing was sent (`note`)."""
    body = json.loads(request.body) if request.body else None
    out.update(dry_run=True, request={"method": request.method, "path": request.path,
                                      "body": body})  # fmt: skip
    if not out.as_json:
        print(f"{request.method} {request.path}")
        if request.body:
            print("Content-Type: application/json")
            print()
            print(request.body.decode())
        print(note, file=sys.stderr)
    return out.done(0)


def run_change(out: Output, job: Coroutine[Any, Any, int]) -> int:
    """Run a command's job; its errors as the exit statuses every command shares."""
    import asyncio

    from app.api.errors import ApiError, ClientError, Forbidden, Unauthorized, Unsupported

    try:
        return asyncio.run(job)
    except UsageError as exc:
        return out.fail(EXIT_USAGE, str(exc))
    except (Unauthorized, Forbidden, Unsupported) as exc:
        status = exc.status if isinstance(exc, ApiError) else None
        return out.fail(EXIT_UNAUTHORISED, str(exc), http_status=status)
    except ApiError as exc:
        return out.fail(EXIT_REFUSED, str(exc), http_status=exc.status)
    except ClientError as exc:
        return out.fail(EXIT_UNREACHABLE, str(exc))
    except KeyboardInterrupt:
        return out.fail(EXIT_CANCELLED, "cancelled")


def print_rows(titles: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """A table in columns as wide as their widest cell, titles first."""
    widths = [max(len(r[i]) for r in [titles, *rows]) for i in range(len(titles))]
    for row in [titles, *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
              .rstrip())  # fmt: skip
