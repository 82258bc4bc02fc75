"""`flagdesk stats [--json | --csv FILE]`: the instance's statistics as the server computes them
now (`GET /api/admin/instance-admin/statistics`), or the server's own CSV of them
(`…/statistics/csv`) written to a file. Read only. No Qt; the client is imported by the running
command."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.commands.connection import (
    EXIT_OK,
    EXIT_USAGE,
    UsageError,
    add_connection_arguments,
    client_from_args,
)
from app.commands.output import Output, print_table, run_job

if TYPE_CHECKING:
    from app.api.client import AdminClient

DESCRIPTION = """\
The instance's statistics (GET /api/admin/instance-admin/statistics), computed by the server
now: users, service accounts, API tokens by type, active users, flags, archived flags,
projects, context fields, roles, groups, environments, segments, strategies, client
applications, production changes and the rest, as the server's release reports them (5.12
sends fewer than 8.2).

  flagdesk stats [--json]
  flagdesk stats --csv FILE

--csv writes the server's own CSV of them (GET …/statistics/csv: a header row and one row of
values, nested counts as JSON text) to FILE, mode 0600, whole or not at all; the folder must
exist. Any admin-API token can read them.

exit status:
  0  read (or written)
  2  bad usage: a file that cannot be written
  3  the server was unreachable
  4  the token was refused
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.description = DESCRIPTION
    add_connection_arguments(parser)
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument("--json", action="store_true", help="print one JSON object")
    shown.add_argument("--csv", type=Path, metavar="FILE",
                       help="write the server's CSV of the statistics to FILE")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    out = Output("flagdesk", "stats", args.json)
    try:
        client, _ = client_from_args(args)
    except UsageError as exc:
        return out.fail(EXIT_USAGE, str(exc))
    if args.csv is not None:
        return run_job(out, _csv(client, args.csv, out))
    return run_job(out, _show(client, out))


def cell(value: Any) -> str:
    """A statistic as the table shows it: counts as numbers, nested counts as `k=v` pairs."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items()) or "-"
    if isinstance(value, list):
        return ", ".join(
            f"{v.get('range')}={v.get('count')}" if isinstance(v, dict) else str(v) for v in value
        )
    return "" if value is None else str(value)


async def _show(client: AdminClient, out: Output) -> int:
    async with client:
        stats = await client.statistics()
    fields: dict[str, Any] = json.loads(stats.model_dump_json(exclude_unset=True))
    out.update(server=client.base_url, statistics=fields)
    if not out.as_json:
        print_table(("STATISTIC", "VALUE"), [(name, cell(v)) for name, v in fields.items()])
    out.say(f"{len(fields)} statistics of {client.base_url}")
    return out.done(EXIT_OK)


async def _csv(client: AdminClient, path: Path, out: Output) -> int:
    import asyncio

    from app.actions.snapshots import write_whole

    async with client:
        text = (await client.statistics_csv()).decode("utf-8", errors="replace")

    def fill(f: Any) -> int:
        f.write(text)
        return 1

    try:
        await asyncio.to_thread(write_whole, path, fill, private=False)
    except OSError as exc:
        raise UsageError(f"could not write {path}: {exc.strerror or exc}") from None
    out.update(server=client.base_url, csv=str(path))
    out.say(f"Wrote the statistics of {client.base_url} to {path}.")
    return out.done(EXIT_OK)
