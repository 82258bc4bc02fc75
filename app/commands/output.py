"""What the commands share in how they talk: `Output` (text as it goes, or with `--json` one
object at the end, failures included), `whole_number` (an argument that is a number within
bounds, with an error that says which bound) and `add_action` (a sub-action with its own
help page)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any


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
