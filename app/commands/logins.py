"""`flagdesk logins [--json] [--csv FILE] [--user U] [--failed]`: who logged in or out when, how
and from where, and why a login failed (Unleash Enterprise 4.22+ and the sandbox: `GET
/api/admin/logins`; open-source Unleash keeps none, which the command says, exit status 4).
Read only. The server neither filters nor pages: flagdesk filters what it read
(`app.api.logins`). No Qt; the client is imported by the running command."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from app.commands.connection import (
    EXIT_OK,
    EXIT_UNAUTHORISED,
    EXIT_USAGE,
    UsageError,
    add_connection_arguments,
    client_from_args,
)
from app.commands.output import Output, print_table, run_job
from app.text import plural

if TYPE_CHECKING:
    from app.api.client import AdminClient
    from app.api.models import LoginEvent

DESCRIPTION = """\
Login history (GET /api/admin/logins): every login and logout the server keeps (Unleash
Enterprise keeps 14 days), newest first: when, who (the name typed), how (password, single
sign-on), from which address, and why a login failed. Unleash Enterprise 4.22 and later, and
the sandbox; open-source Unleash keeps no login history: the command says so (exit status 4).
Reading it needs an Admin's token.

  flagdesk logins [--user U] [--failed] [--json]
  flagdesk logins [--user U] [--failed] --csv FILE

--user keeps the events whose username holds U (any case); --failed keeps the failed logins.
--csv writes what is kept as CSV (the server's columns: id, username, auth_type, created_at,
successful, ip, failure_reason, type) to FILE, mode 0600, whole or not at all; the folder must
exist. --json prints one JSON object with the events as the server sent them.

exit status:
  0  read (or written), even when nothing is left
  2  bad usage: a file that cannot be written
  3  the server was unreachable
  4  the token was refused or is not an Admin's, or the server has no login history (open
     source)
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.description = DESCRIPTION
    add_connection_arguments(parser)
    parser.add_argument("--user", metavar="U", help="only the events whose username holds U")
    parser.add_argument("--failed", action="store_true", help="only the failed logins")
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument("--json", action="store_true", help="print one JSON object")
    shown.add_argument("--csv", type=Path, metavar="FILE",
                       help="write the events kept to FILE as CSV")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    out = Output("flagdesk", "logins", args.json)
    try:
        client, _ = client_from_args(args)
    except UsageError as exc:
        return out.fail(EXIT_USAGE, str(exc))
    return run_job(out, _logins(args, client, out))


def _when(value: datetime | None) -> str:
    return "" if value is None else value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


async def _logins(args: argparse.Namespace, client: AdminClient, out: Output) -> int:
    from app.api.errors import Unsupported
    from app.api.logins import login_json, outcome, select_logins

    async with client:
        try:
            events = (await client.login_history()).events
        except Unsupported as exc:
            # "Login history needs Unleash Enterprise ...": said once, not after the tool's name
            said = exc.reason if exc.reason.startswith(exc.operation) else str(exc)
            return out.fail(EXIT_UNAUTHORISED, said)
    kept = select_logins(events, user=args.user, failed_only=args.failed)
    filters = {"user": args.user, "failed": args.failed}
    out.update(server=client.base_url, total=len(events), count=len(kept), filters=filters)
    what = plural(len(kept), "login event")
    if args.failed:
        what = plural(len(kept), "failed login")
    if args.user:
        what += f" of users matching {args.user!r}"
    if args.csv is not None:
        await _write_csv(args.csv, kept)
        out.update(csv=str(args.csv))
        out.say(f"Wrote {what} of {client.base_url} (of {len(events):,} kept) to {args.csv}.")
        return out.done(EXIT_OK)
    out.update(events=[login_json(ev) for ev in kept])
    if not out.as_json:
        print_table(("TIME", "USER", "OUTCOME", "ADDRESS", "AUTH", "REASON"),
                    [(_when(ev.created_at), ev.username or "", outcome(ev), ev.ip or "",
                      ev.auth_type or "", ev.failure_reason or "") for ev in kept])  # fmt: skip
    shown = f"{what} on {client.base_url}"
    if len(kept) != len(events):
        shown += f" ({len(events):,} kept in all)"
    out.say(shown)
    return out.done(EXIT_OK)


async def _write_csv(path: Path, events: list[LoginEvent]) -> None:
    import asyncio

    from app.actions.snapshots import write_whole
    from app.api.logins import write_logins_csv

    try:
        await asyncio.to_thread(write_whole, path, lambda f: write_logins_csv(f, events),
                                private=False)  # fmt: skip
    except OSError as exc:
        raise UsageError(f"could not write {path}: {exc.strerror or exc}") from None
