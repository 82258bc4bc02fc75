"""`flagdesk maintenance [on | off]`: whether the server is in maintenance mode, or switch it,
through the plan and journal of `app.actions.instance`. No Qt; the client and the actions are
imported by the running command."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from app.commands.connection import (
    EXIT_OK,
    EXIT_USAGE,
    UsageError,
    add_connection_arguments,
    client_from_args,
)
from app.commands.output import (
    EXIT_REFUSED,
    Output,
    add_change_options,
    confirmed,
    dry_run,
    need_terminal,
    run_job,
)

if TYPE_CHECKING:
    from app.api.client import AdminClient

DESCRIPTION = """\
Maintenance mode of a server (GET, POST /api/admin/maintenance; Unleash 5.12 to 8.2 alike).

  flagdesk maintenance [--json]                          say whether it is on
  flagdesk maintenance on|off [--dry-run] [--yes] [--json]

While it is on, the server refuses every change through its admin API with 503 ("Unleash is
currently in maintenance mode."): flags, strategies, tokens, users, projects, context fields,
imports and exports; reads, SDKs' flag fetches and metrics, and logins go on. Switching it
needs an Admin's token. Switched off, Unleash may go on refusing changes for up to a minute:
it keeps the switch in memory for that long, and a check racing the switch can keep "on".

The journal records the switch before it is sent and the answer after; `flagdesk journal undo
ENTRY` switches it back. On a terminal a switch asks first; without one it changes nothing
unless --yes is given. --dry-run prints the exact request and sends nothing.

exit status:
  0  said, or switched (also when it was so already: nothing is sent then)
  1  the server refused, or the answer was no
  2  bad usage: no terminal to ask and no --yes
  3  the server was unreachable
  4  the token was refused, or may not switch it
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.description = DESCRIPTION
    parser.add_argument("state", nargs="?", choices=("on", "off"),
                        help="switch it on or off (left out: say whether it is on)")  # fmt: skip
    add_change_options(parser, "switch")
    add_connection_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    out = Output("flagdesk", "maintenance", args.json)
    try:
        if args.state is not None:
            need_terminal(args, "the switch", "changed", "switch")
        elif args.dry_run or args.yes:
            raise UsageError("--dry-run and --yes go with on or off")
        client, connection = client_from_args(args)
    except UsageError as exc:
        return out.fail(EXIT_USAGE, str(exc))
    if args.state is None:
        return run_job(out, _show(client, out))
    return run_job(out, _switch(args, client, connection, out))


def _said(enabled: bool) -> str:
    return "on" if enabled else "off"


async def _show(client: AdminClient, out: Output) -> int:
    async with client:
        enabled = (await client.maintenance()).enabled
    out.update(server=client.base_url, enabled=enabled)
    out.say(f"Maintenance mode is {_said(enabled)} on {client.base_url}"
            + (": the server refuses every change." if enabled else "."))  # fmt: skip
    return out.done(EXIT_OK)


async def _switch(args: argparse.Namespace, client: AdminClient, connection: str,
                  out: Output) -> int:  # fmt: skip
    from app.actions.instance import plan_maintenance
    from app.actions.runner import carry_out, journal_of, require
    from app.registry import SWITCH_MAINTENANCE

    enabled = args.state == "on"
    async with client:
        caps = await client.capabilities()
        require(caps, SWITCH_MAINTENANCE)
        was = (await client.maintenance()).enabled
        out.update(server=client.base_url, connection=connection, was=was)
        if was is enabled:
            out.update(enabled=enabled, changed=False)
            out.say(f"Maintenance mode is {_said(enabled)} already on {client.base_url}: "
                    "nothing was sent.")  # fmt: skip
            return out.done(EXIT_OK)
        plan = plan_maintenance(enabled, was, journal_of(connection, caps))
        if args.dry_run:
            return dry_run(out, [plan.request], plan.server, f"maintenance {args.state}")
        if not args.yes and not confirmed(plan.lines(), plan.question):
            return out.fail(EXIT_REFUSED, "not confirmed: nothing was changed")
        done = await carry_out(client, plan)
    out.update(enabled=enabled, changed=True, status=done.status, journal=str(done.journal),
               entry=done.entry)  # fmt: skip
    on = ": the server refuses every change until it is switched off."
    off = ": the server takes changes again (Unleash may refuse them for a minute more)."
    then = on if enabled else off
    out.say(f"Maintenance mode is {_said(enabled)} on {plan.server}{then}")
    return out.done(EXIT_OK)
