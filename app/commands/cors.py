"""`flagdesk cors [list] | set ORIGIN... | set --none`: the origins the frontend API answers
(CORS), read from `ui-config` and set through the plan and journal of `app.actions.instance`.
No Qt; the client and the actions are imported by the running command."""

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
    add_action,
    add_change_options,
    confirmed,
    dry_run,
    echo,
    need_terminal,
    run_job,
)
from app.text import plural

if TYPE_CHECKING:
    from app.api.client import AdminClient

DESCRIPTION = """\
The origins the frontend API answers from browsers (CORS): read from GET /api/admin/ui-config
(`frontendApiOrigins`; there is no other read), set whole through POST
/api/admin/ui-config/cors (Unleash 6.0 and later, the sandbox) or, on Unleash 5.x, POST
/api/admin/ui-config {frontendSettings}: flagdesk takes the server's own route.

  flagdesk cors list [--json]
  flagdesk cors set ORIGIN [ORIGIN ...] [--dry-run] [--yes] [--json]
  flagdesk cors set --none [--dry-run] [--yes] [--json]

An origin is * (any) or scheme://host[:port], such as https://app.example.com: no path, no
trailing slash, lower case (the server refuses anything else with 400, so flagdesk does first,
sending nothing). `set` replaces the whole list; --none leaves it empty, which shuts every
browser out. The frontend API follows within seconds. Setting them needs an Admin's token.

The journal records the list before and the one sent; `flagdesk journal undo ENTRY` sets the
list before again. On a terminal `set` asks first; without one it changes nothing unless --yes
is given. --dry-run prints the exact request and sends nothing.

exit status:
  0  listed, or set (also when the list was that already: nothing is sent then)
  1  the server refused, or the answer was no
  2  bad usage: an origin that is not one, no terminal to ask and no --yes
  3  the server was unreachable
  4  the token was refused, or may not set them
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="what", metavar="WHAT", required=True)
    listing = add_action(sub, "list", "list the CORS origins", DESCRIPTION)
    setting = add_action(sub, "set", "set the CORS origins (the whole list)", DESCRIPTION)
    setting.add_argument("origins", nargs="*", metavar="ORIGIN",
                         help="an origin (scheme://host[:port]) or *")  # fmt: skip
    setting.add_argument("--none", action="store_true",
                         help="no origin at all: the frontend API answers no browser")  # fmt: skip
    add_change_options(setting, "set them")
    for each in (listing, setting):
        add_connection_arguments(each)
        each.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    out = Output("flagdesk cors", args.what, args.json)
    try:
        if args.what == "set":
            if bool(args.origins) == bool(args.none):
                raise UsageError("give the origins, or --none for an empty list (not both)")
            need_terminal(args, "the origins", "changed", "set them")
        client, connection = client_from_args(args)
    except UsageError as exc:
        return out.fail(EXIT_USAGE, str(exc))
    if args.what == "list":
        return run_job(out, _list(client, out))
    return run_job(out, _set(args, client, connection, out))


async def _list(client: AdminClient, out: Output) -> int:
    from app.actions.instance import origins_now

    async with client:
        origins = await origins_now(client)
    out.update(server=client.base_url, origins=origins)
    if origins is None:
        out.say(f"{client.base_url} does not say which origins its frontend API answers.")
        return out.done(EXIT_OK)
    if not out.as_json:
        for origin in origins:
            echo(origin)
    out.say(f"{plural(len(origins), 'CORS origin')} on {client.base_url}"
            + ("" if origins else ": the frontend API answers no browser"))  # fmt: skip
    return out.done(EXIT_OK)


async def _set(args: argparse.Namespace, client: AdminClient, connection: str,
               out: Output) -> int:  # fmt: skip
    from app.actions.instance import origins_now, plan_cors
    from app.actions.runner import carry_out, journal_of, require
    from app.api.client import unleash_release
    from app.registry import SET_CORS

    wanted: list[str] = [] if args.none else list(args.origins)
    async with client:
        caps = await client.capabilities()
        require(caps, SET_CORS)
        was = await origins_now(client)
        try:
            plan = plan_cors(wanted, was, journal_of(connection, caps),
                             release=unleash_release(caps))  # fmt: skip
        except ValueError as exc:
            raise UsageError(f"{exc}. Nothing was changed") from None
        out.update(server=client.base_url, connection=connection, was=was)
        if was is not None and list(plan.origins) == was:
            out.update(origins=was, changed=False)
            out.say(f"The CORS origins on {client.base_url} are those already: nothing was sent.")
            return out.done(EXIT_OK)
        if args.dry_run:
            return dry_run(out, [plan.request], plan.server, "the CORS origins")
        if not args.yes and not confirmed(plan.lines(), plan.question):
            return out.fail(EXIT_REFUSED, "not confirmed: nothing was changed")
        done = await carry_out(client, plan)
    out.update(origins=list(plan.origins), changed=True, status=done.status,
               journal=str(done.journal), entry=done.entry)  # fmt: skip
    out.say(f"Set {plural(len(plan.origins), 'CORS origin')} on {plan.server}.")
    return out.done(EXIT_OK)
