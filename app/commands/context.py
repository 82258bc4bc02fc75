"""`flagdesk context list|usage|delete`: the server's context fields, which strategies use one,
and deleting one (journaled, with a snapshot first: `app.actions.context_fields`). No Qt, and
light to import: the client and the actions are imported by `run()`."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

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
    need_terminal,
    print_table,
    run_job,
)

if TYPE_CHECKING:
    from app.api.client import AdminClient
    from app.api.models import ContextFieldStrategy

DESCRIPTION = """\
The server's context fields (GET /api/admin/context), which strategies use one (GET
/api/admin/context/NAME/strategies), and deleting one (DELETE /api/admin/context/NAME).

  flagdesk context list [--json]
  flagdesk context usage NAME [--json]
  flagdesk context delete NAME [--dry-run] [--yes] [--json]

Deleting reads the field and its usage first: a field that strategies use is refused with
their list, as the server (Unleash 7+) would refuse it, and nothing is sent. Before the
request, a JSON snapshot of the field is written to the connection's journal folder, and the
journal records the change before it is sent and the server's answer after; the window's
Undo (or creating it again from the snapshot) brings it back. On a terminal the command asks
first; without a terminal it changes nothing unless --yes is given. --dry-run prints the exact
request and sends nothing.

exit status:
  0  listed, deleted (or, with --dry-run, nothing sent)
  1  the field is in use, the server refused the deletion (its message is printed), or the
     answer was no
  2  bad usage: no terminal to ask and no --yes
  3  the server was unreachable
  4  the token was refused, or may not change context fields
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="what", metavar="WHAT", required=True)
    listing = add_action(sub, "list", "list the context fields", DESCRIPTION)
    usage = add_action(sub, "usage", "list the strategies that use a context field", DESCRIPTION)
    usage.add_argument("name", metavar="NAME", help="the context field's name")
    delete = add_action(sub, "delete", "delete a context field no strategy uses", DESCRIPTION)
    delete.add_argument("name", metavar="NAME", help="the context field's name")
    add_change_options(delete, "delete")
    for each in (listing, usage, delete):
        add_connection_arguments(each)
        each.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    out = Output("flagdesk context", args.what, args.json)
    try:
        if args.what == "delete":
            need_terminal(args, "the deletion", "deleted", "delete")
        client, connection = client_from_args(args)
    except UsageError as exc:
        return out.fail(EXIT_USAGE, str(exc))
    if args.what == "list":
        return run_job(out, _list(client, out))
    if args.what == "usage":
        return run_job(out, _usage(client, args.name, out))
    return run_job(out, _delete(args, client, connection, out))


async def _list(client: AdminClient, out: Output) -> int:
    async with client:
        fields = await client.list_context_fields()
    listed = [f.model_dump(mode="json", exclude_none=True) for f in fields]
    out.update(server=client.base_url, count=len(fields), contextFields=listed)
    rows = [(f.name, "yes" if f.stickiness else "no", str(len(f.legalValues)),
             "" if f.usedInFeatures is None else str(f.usedInFeatures), f.description or "")
            for f in fields]  # fmt: skip
    if not out.as_json:
        print_table(("NAME", "STICKY", "LEGAL VALUES", "USED IN FLAGS", "DESCRIPTION"), rows)
    out.say(f"{len(fields):,} context field{'s' * (len(fields) != 1)} on {client.base_url}")
    return out.done(EXIT_OK)


def _strategies_json(strategies: list[ContextFieldStrategy]) -> list[dict[str, Any]]:
    return [s.model_dump(mode="json", exclude_none=True) for s in strategies]


def _print_usage(strategies: list[ContextFieldStrategy]) -> None:
    print_table(("PROJECT", "FLAG", "ENVIRONMENT", "STRATEGY", "STRATEGY ID"),
                 [(s.projectId or "", s.featureName or "", s.environment or "",
                   s.strategyName or "", s.id or "") for s in strategies])  # fmt: skip


async def _usage(client: AdminClient, name: str, out: Output) -> int:
    from app.actions.context_fields import usage_summary

    async with client:
        strategies = (await client.context_strategies(name)).strategies
    out.update(server=client.base_url, name=name, count=len(strategies),
               strategies=_strategies_json(strategies))  # fmt: skip
    if not out.as_json and strategies:
        _print_usage(strategies)
    out.say(f"“{name}” is used by {usage_summary(strategies)} on {client.base_url}"
            if strategies else f"No strategy uses “{name}” on {client.base_url}")  # fmt: skip
    return out.done(EXIT_OK)


async def _delete(
    args: argparse.Namespace, client: AdminClient, connection: str, out: Output
) -> int:
    from app.actions.context_fields import FieldInUse, plan_delete
    from app.actions.runner import carry_out, journal_of, require
    from app.registry import DELETE_CONTEXT_FIELD

    async with client:
        caps = await client.capabilities()
        require(caps, DELETE_CONTEXT_FIELD)
        field = await client.get_context_field(args.name)
        usage = (await client.context_strategies(args.name)).strategies
        out.update(server=client.base_url, connection=connection, name=args.name)
        journal = journal_of(connection, caps)
        try:
            plan = plan_delete(field, usage, journal)
        except FieldInUse as exc:
            out.update(strategies=_strategies_json(usage))
            if not out.as_json:
                _print_usage(usage)
            return out.fail(EXIT_REFUSED, str(exc))
        if args.dry_run:
            return dry_run(out, [plan.request], plan.server, f"context field “{args.name}”")
        if not args.yes and not confirmed(plan.lines(), plan.question):
            return out.fail(EXIT_REFUSED, "not confirmed: nothing was deleted")
        done = await carry_out(client, plan)
    out.update(deleted=args.name, status=done.status, snapshot=str(plan.snapshot),
               journal=str(done.journal), entry=done.entry)  # fmt: skip
    out.say(f"Deleted the context field “{args.name}” on {plan.server}. Snapshot: "
            f"{plan.snapshot}")  # fmt: skip
    return out.done(EXIT_OK)
