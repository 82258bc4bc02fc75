"""What the commands share in how they talk: `Output` (text as it goes, or with `--json` one
object at the end, failures included), `whole_number` (an argument that is a number within
bounds, with an error that says which bound), `add_action` (a sub-action with its own
help page), and for the commands that change things `run_job` (a job's failures as the exit
statuses every command shares), `require_yes` (no terminal and no --yes: nothing changes),
`ask` (the confirmation on the terminal) and `print_request` (what --dry-run prints)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any

from app.api.errors import ApiError, ClientError, Forbidden, Unauthorized, Unsupported
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


def run_job(out: Output, job: Coroutine[Any, Any, int]) -> int:
    """Run a command's job and return its exit status; its failures as the statuses every
    command shares: 2 usage, 4 a token refused or lacking a role (or an action the
    capabilities rule out), 1 another error answer, 3 unreachable, 130 Ctrl+C."""
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


def require_yes(args: argparse.Namespace, what: str) -> None:
    """`UsageError` when a change would be made with no terminal to confirm it on and no
    `--yes` (`--dry-run` changes nothing, so it needs neither). `what`: "deleted"."""
    if not args.dry_run and not args.yes and not sys.stdin.isatty():
        raise UsageError(
            f"no terminal to confirm on: nothing was {what}. Add --yes to go ahead without "
            "asking (--dry-run shows the request)"
        )


def ask(lines: Sequence[str], question: str) -> bool:
    """Ask on the terminal (on stderr, so stdout stays the result); yes or y confirms."""
    for line in lines:
        print(line, file=sys.stderr)
    print(f"{question} [y/N] ", end="", file=sys.stderr, flush=True)
    answer = sys.stdin.readline().strip().casefold()
    return answer in ("y", "yes")


def print_request(out: Output, request: WriteRequest, server: str, what: str, **fields: Any) -> int:
    """--dry-run: the exact request (method, path and, when it has one, its JSON body), and
    that nothing was sent; with --json as `request` in the object."""
    body = json.loads(request.body) if request.body else None
    out.update(dry_run=True, request={"method": request.method, "path": request.path,
                                      "body": body}, **fields)  # fmt: skip
    if not out.as_json:
        print(f"{request.method} {request.path}")
        if request.body:
            print("Content-Type: application/json")
            print()
            print(request.body.decode())
        print(f"Dry run: nothing was sent to {server} ({what}).", file=sys.stderr)
    return out.done(0)


def print_table(titles: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """Rows under their titles, in columns as wide as their widest cell."""
    widths = [max(len(r[i]) for r in [titles, *rows]) for i in range(len(titles))]
    for row in [titles, *rows]:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
