"""`flagdesk events [--type T] [--user U] [--project P] [--flag F] [--environment E]
[--since WHEN] [--until WHEN] [--json | --csv FILE]`: the server's event log, newest first, read
page by page (`AdminClient.events`, `app.api.events`: the server's search where it has one,
flagdesk's own filtering where it cannot), as text, one JSON object, or a CSV file written as
the pages arrive. Read only. No Qt; the client is imported by the running command."""

from __future__ import annotations

import argparse
import csv
import os
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from app.commands.connection import (
    EXIT_OK,
    EXIT_USAGE,
    UsageError,
    add_connection_arguments,
    client_from_args,
)
from app.commands.output import Output, echo, run_job

if TYPE_CHECKING:
    from app.api.client import AdminClient
    from app.api.events import EventFilter
    from app.api.models import Event

DESCRIPTION = """\
The server's event log: every change made on it, by anyone, newest first, with what it was
before and after (preData, data). Filters, each repeatable (any of its values), all together:

  --type T          the event's type (feature-created, feature-strategy-add, ...)
  --user U          who made it: a user id (-42 is the admin API token, -1337 the system) or
                    the name the event logs (a user's email or user name; "admin" for the
                    admin API token), ignoring case
  --project P, --flag F, --environment E
  --since WHEN      from WHEN on;  --until WHEN  before WHEN
                    WHEN: a date (2026-01-31; --until takes all of that day), a date and time
                    (2026-01-31T14:00, UTC unless it has a zone: 2026-01-31T14:00+01:00), or a
                    time ago: 30m, 12h, 7d, 2w

  flagdesk events [FILTERS] [--json]
  flagdesk events [FILTERS] --csv FILE

The server's search filters where it has one (Unleash 6.0 on, the sandbox: GET
/api/admin/search/events, pages of 1000); on 5.x its older search by body is read and flagdesk
filters. Either way each event is held to the whole filter here: the same events. --csv writes
one row an event (its preData and data as JSON text) to FILE as the pages arrive, mode 0600,
whole or not at all (FILE.part meanwhile); the folder must exist. Any admin-API token can read
the events.

exit status:
  0  read (or written)
  1  the server answered with an error
  2  bad usage: a WHEN that is not one, a file that cannot be written
  3  the server was unreachable
  4  the token was refused
"""


def _when_type(end_of_day: bool) -> Any:
    def parse(text: str) -> datetime:
        from app.api.events import when

        try:
            return when(text, end_of_day=end_of_day)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parse.__name__ = "WHEN"  # argparse's "invalid WHEN value" when it says nothing else
    return parse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.description = DESCRIPTION
    add_connection_arguments(parser)
    chosen = parser.add_argument_group("filters (each repeatable)")
    for option, dest, metavar, what in (
        ("--type", "types", "T", "the event's type"),
        ("--user", "users", "U", "who made it: a user id or name"),
        ("--project", "projects", "P", "the project"),
        ("--flag", "flags", "F", "the flag"),
        ("--environment", "environments", "E", "the environment"),
    ):
        chosen.add_argument(option, dest=dest, metavar=metavar, action="append", default=[],
                            help=what)  # fmt: skip
    chosen.add_argument("--since", type=_when_type(False), metavar="WHEN",
                        help="from WHEN on (2026-01-31, 2026-01-31T14:00, 12h, 7d)")  # fmt: skip
    chosen.add_argument("--until", type=_when_type(True), metavar="WHEN",
                        help="before WHEN (a date: all of that day)")  # fmt: skip
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument("--json", action="store_true", help="print one JSON object")
    shown.add_argument("--csv", type=Path, metavar="FILE", help="write the events to FILE as CSV")


def run(args: argparse.Namespace) -> int:
    out = Output("flagdesk", "events", args.json)
    if args.since is not None and args.until is not None and args.since >= args.until:
        return out.fail(EXIT_USAGE, "--since must be before --until: no event can be both")
    try:
        client, _ = client_from_args(args)
    except UsageError as exc:
        return out.fail(EXIT_USAGE, str(exc))
    from app.api.events import EventFilter

    filters = EventFilter(
        types=tuple(args.types),
        users=tuple(args.users),
        projects=tuple(args.projects),
        flags=tuple(args.flags),
        environments=tuple(args.environments),
        since=args.since,
        until=args.until,
    )
    if args.csv is not None:
        return run_job(out, _csv(client, filters, args.csv, out))
    return run_job(out, _show(client, filters, out))


def _line(event: Event) -> str:
    from app.api.events import wire_time

    by = event.createdBy or ""
    if event.createdByUserId is not None:
        by = f"{by} ({event.createdByUserId})"
    where = "/".join(part for part in (event.project, event.featureName) if part)
    return "  ".join((
        wire_time(event.createdAt), str(event.id).rjust(7), event.type.ljust(36), by.ljust(24),
        where, event.environment or "",
    )).rstrip()  # fmt: skip


async def _show(client: AdminClient, filters: EventFilter, out: Output) -> int:
    from app.api.events import event_json

    shown: list[dict[str, Any]] = []
    count = 0
    async with client:
        async for page in client.events(filters):
            count += len(page)
            if out.as_json:
                shown.extend(map(event_json, page))
                continue
            if count == len(page) and page:
                echo(f"{'TIME'.ljust(24)}  {'ID'.rjust(7)}  {'TYPE'.ljust(36)}  "
                     f"{'BY'.ljust(24)}  PROJECT/FLAG  ENVIRONMENT")  # fmt: skip
            for event in page:
                echo(_line(event))
    out.update(server=client.base_url, filters=filters.to_json(), count=count, events=shown)
    out.say(f"{count} event{'s' * (count != 1)} of {client.base_url}")
    return out.done(EXIT_OK)


async def _csv(client: AdminClient, filters: EventFilter, path: Path, out: Output) -> int:
    """The events written to `path` as they arrive, into `path.part` (0600), which becomes
    `path` once all are in: whole or not at all."""
    from app.actions.journal import FILE_MODE, private_fd

    if not path.parent.is_dir():
        raise UsageError(f"could not write {path}: the folder {path.parent} does not exist")
    part = path.with_name(path.name + ".part")
    try:
        fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
        private_fd(fd)
    except OSError as exc:
        raise UsageError(f"could not write {path}: {exc.strerror or exc}") from None
    count = 0
    finished = False
    try:
        with _text_file(fd) as f:
            count = await _write_rows(client, filters, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(part, path)
        finished = True
    except OSError as exc:
        raise UsageError(f"could not write {path}: {exc.strerror or exc}") from None
    finally:
        if not finished:
            part.unlink(missing_ok=True)
    out.update(server=client.base_url, filters=filters.to_json(), count=count, csv=str(path))
    out.say(f"Wrote {count} event{'s' * (count != 1)} of {client.base_url} to {path}.")
    return out.done(EXIT_OK)


def _text_file(fd: int) -> TextIO:
    # the caller closes it; written a megabyte at a time (32 MB for 100,000 events)
    return open(fd, "w", newline="", encoding="utf-8", buffering=1 << 20)


async def _write_rows(client: AdminClient, filters: EventFilter, f: TextIO) -> int:
    from app.api.events import COLUMNS, csv_row

    writer = csv.writer(f)
    writer.writerow(COLUMNS)
    count = 0
    async with client:
        async for page in client.events(filters):
            writer.writerows(csv_row(e) for e in page)
            count += len(page)
    return count
