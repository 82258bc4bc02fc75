r"""What the commands share in how they talk: `Output` (text as it goes, or with `--json` one
object at the end, failures included), `whole_number` (an argument that is a number within
bounds, with an error that says which bound), `add_action` (a sub-action with its own help
page), `print_table` (rows in aligned columns), and for the commands that change a server:
`add_change_options` (`--dry-run`, `--yes`), `run_job` (the job run, each failure turned into
its exit status), `need_terminal` (no terminal and no --yes: refused), `dry_run` and
`print_requests` (what `--dry-run` prints), `ask` and `confirmed` (the terminal's question).

A server's text never drives the terminal: every line of plain output goes through `visible`
(control characters and line breaks shown as `\x1b`, `\n`), through `Output.say`,
`Output.fail`, `print_table`, `ask` or `echo` (a command's own `print` of text is `echo`);
`--json` through `json_text`, JSON with DEL and the C1 controls escaped as well. A test walks
every command's output with a hostile name (`tests/app/test_cli_control_chars.py`)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from app.api.client import WriteRequest

#: each control character (C0, DEL, C1) as an escape a person can read: `\x1b`, `\n`, `\t`
_VISIBLE = {
    **{code: f"\\x{code:02x}" for code in (*range(0x20), *range(0x7F, 0xA0))},
    **{ord(char): repr(char)[1:-1] for char in "\t\n\r"},
}


def visible(text: str) -> str:
    r"""`text` with every control character (C0, DEL, C1, line breaks included) shown as its
    escape (`\x1b`, `\n`): what a server sends (a group named `\x1b]0;PWNED\x07`) is printed
    as text on one line, never obeyed by the terminal. Every line of the plain output goes
    through it (`Output.say`, `Output.fail`, `print_table`, `ask`, `echo`); `--json` is JSON,
    whose escapes are JSON's."""
    return text.translate(_VISIBLE)


#: DEL and the C1 controls, which JSON leaves as they are, as JSON's `\u` escapes
_JSON_CONTROLS = {code: f"\\u{code:04x}" for code in range(0x7F, 0xA0)}


def json_text(value: Any) -> str:
    r"""`value` as the indented JSON `--json` prints: text as it is (not ASCII-escaped), but DEL
    and the C1 controls (`\x9b` starts a terminal's control sequence as ESC [ does) escaped as
    well as the C0 ones JSON always escapes. The same JSON: such a character can only be inside
    a string."""
    return json.dumps(value, indent=2, ensure_ascii=False).translate(_JSON_CONTROLS)


def echo(text: str = "", *, file: TextIO | None = None) -> None:
    """`print` a line of plain output through `visible` (a line break inside it included)."""
    print(visible(text), file=file)


#: the server refused the change (an error answer other than 401/403), part of it failed, or
#: the person said no
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
            echo(line)

    def json(self, fields: dict[str, Any]) -> None:
        print(json_text({**self.data, **fields}))

    def done(self, status: int) -> int:
        if self.as_json:
            self.json({"exit_status": status})
        return status

    def fail(self, status: int, message: str, *, http_status: int | None = None) -> int:
        """Say `message` (and, with --json, put it in the object as `error`, with the server's
        `http_status` when there was one) and return `status`."""
        echo(f"{self.program} {self.data['command']}: {message}", file=sys.stderr)
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
    """Run a command's job and return its exit status; a failure is said through `out` with
    its status: 2 bad usage (a snapshot or the journal that cannot be written, too: nothing was
    sent), 4 the token refused or lacking what the action needs, 1 another error answer, 3 the
    server unreachable, 130 Ctrl+C."""
    from app.actions.runner import NotStarted
    from app.api.errors import ApiError, ClientError, Forbidden, Unauthorized, Unsupported
    from app.commands.connection import (
        EXIT_UNAUTHORISED,
        EXIT_UNREACHABLE,
        EXIT_USAGE,
        UsageError,
    )

    try:
        return asyncio.run(job)
    except UsageError as exc:
        return out.fail(EXIT_USAGE, str(exc))
    except (Unauthorized, Forbidden, Unsupported) as exc:
        status = exc.status if isinstance(exc, ApiError) else None
        return out.fail(EXIT_UNAUTHORISED, str(exc), http_status=status)
    except ApiError as exc:
        return out.fail(EXIT_REFUSED, str(exc), http_status=exc.status)
    except NotStarted as exc:
        return out.fail(EXIT_USAGE, str(exc))
    except ClientError as exc:
        return out.fail(EXIT_UNREACHABLE, str(exc))
    except KeyboardInterrupt:
        return out.fail(EXIT_CANCELLED, "cancelled")


def print_requests(out: Output, requests: Sequence[WriteRequest], summary: str) -> None:
    """`--dry-run`: the requests exactly as they would go (with --json, in `out`'s object as
    `requests`, each with its method, path and body), then `summary` on stderr."""
    out.update(dry_run=True, requests=[
        {"method": r.method, "path": r.public_path, "body": json.loads(r.body) if r.body else None}
        for r in requests
    ])  # fmt: skip
    if out.as_json:
        return
    for i, request in enumerate(requests):
        if i:
            print()
        echo(f"{request.method} {request.public_path}")
        if request.body:
            print("Content-Type: application/json")
            print()
            print("\n".join(visible(line) for line in request.body.decode().split("\n")))
    print(summary, file=sys.stderr)


def ask(lines: Sequence[str], question: str) -> str:
    """Say `lines` and ask `question` on the terminal (on stderr, so stdout stays the
    result); the answer, stripped."""
    for line in lines:
        echo(line, file=sys.stderr)
    print(f"{visible(question)} ", end="", file=sys.stderr, flush=True)
    return sys.stdin.readline().strip()


def print_table(titles: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """`rows` under `titles`, in columns as wide as their widest cell, two spaces apart; each
    cell `visible`."""
    cells = [[visible(cell) for cell in row] for row in [titles, *rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(titles))]
    for row in cells:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
              .rstrip())  # fmt: skip


def add_change_options(parser: argparse._ActionsContainer, verb: str) -> None:
    """`--dry-run` and `--yes` of a command that changes a server by `verb`ing something."""
    parser.add_argument("--dry-run", action="store_true",
                        help="print the requests that would be sent; send nothing")  # fmt: skip
    parser.add_argument("--yes", action="store_true",
                        help=f"{verb} without asking (needed without a terminal)")  # fmt: skip


def need_terminal(args: argparse.Namespace, what: str, done: str, verb: str) -> None:
    """A change asks on a terminal: without one, and without --yes or --dry-run, it is refused
    (a `UsageError` saying that nothing was `done` and naming --yes). `what`: what would have
    been confirmed ("the deletion"), or "" to leave it unsaid."""
    from app.commands.connection import UsageError

    if not args.dry_run and not args.yes and not sys.stdin.isatty():
        raise UsageError(
            f"no terminal to confirm {what + ' ' if what else ''}on: nothing was {done}. "
            f"Add --yes to {verb} without asking (--dry-run shows the requests)"
        )


def confirmed(lines: Sequence[str], question: str, typed: str | None = None) -> bool:
    """`ask` the yes/no `question` after `lines`; y or yes confirms. With `typed` (a
    destructive bulk action), the question asks for that text instead, and only it, typed
    exactly (spaces around it aside), confirms."""
    if typed is None:
        return ask(lines, f"{question} [y/N]").casefold() in ("y", "yes")
    return ask(lines, f"{question} Type {typed} to confirm:") == typed


def dry_run(out: Output, requests: Sequence[WriteRequest], server: str, what: str) -> int:
    """`--dry-run`: `print_requests` (one request is also `request` in the JSON object), a
    line saying nothing was sent to `server` (`what` would have changed), exit status 0."""
    if len(requests) == 1:
        only = requests[0]
        out.update(request={"method": only.method, "path": only.public_path,
                            "body": json.loads(only.body) if only.body else None})  # fmt: skip
    print_requests(out, requests, f"Dry run: nothing was sent to {server} ({what}).")
    return out.done(0)
