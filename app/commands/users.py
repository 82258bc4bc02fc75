"""`flagdesk users inactive [delete]`: list the users with no login in 180 days, and delete
them (journaled, with a snapshot first: `app.actions.inactive_users`). No Qt, and light to import:
the parser is built for every `flagdesk` command, so the client and the actions are imported by
`run()`."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
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
    whole_number,
)
from app.commands.user_admin import add_commands, run_user_command
from app.text import plural

if TYPE_CHECKING:
    from app.actions.inactive_users import DeletePlan, InactiveUserLike
    from app.api.client import AdminClient
    from app.api.models import InactiveUser

INACTIVE_DESCRIPTION = """\
List the users with no login in the last 180 days (GET /api/admin/user-admin/inactive), or
with `delete`, delete some of them (POST /api/admin/user-admin/inactive/delete).

  flagdesk users inactive [--csv FILE] [--json]
  flagdesk users inactive delete (--ids ID [ID ...] | --all) [--dry-run] [--yes] [--json]

Deleting reads the inactive list first and deletes only users on it: an id that is not an
inactive user is refused before anything is sent (the server itself would delete any user it
is given). Before the request, a CSV snapshot of the users is written to the connection's
journal folder, and the journal records the change before it is sent and the server's answer
after. On a terminal the command asks first: y for one user, and for more the number of users
typed; without a terminal it changes nothing unless --yes is given. --dry-run prints the exact
request and sends nothing. A deleted user cannot be brought back.

exit status:
  0  listed, deleted (or, with --dry-run, nothing to do but print)
  1  the server refused the deletion (its message is printed), or the answer was no
  2  bad usage: ids that are not inactive users, no terminal to ask and no --yes, a file that
     cannot be written
  3  the server was unreachable
  4  the token was refused, or lacks the Admin root role
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="what", metavar="WHAT", required=True)
    inactive = add_action(
        sub, "inactive", "list the inactive users, or delete some of them", INACTIVE_DESCRIPTION
    )
    inactive.add_argument("verb", nargs="?", choices=["delete"], metavar="delete",
                          help="delete inactive users (with --ids or --all)")  # fmt: skip
    add_connection_arguments(inactive)
    listing = inactive.add_argument_group("listing")
    listing.add_argument("--csv", metavar="FILE", type=Path,
                         help="write the list to FILE as CSV instead of printing it")  # fmt: skip
    deleting = inactive.add_argument_group("delete")
    which = deleting.add_mutually_exclusive_group()
    which.add_argument("--ids", nargs="+", type=_user_id, metavar="ID",
                       help="the ids of the inactive users to delete")  # fmt: skip
    which.add_argument("--all", action="store_true", help="delete every inactive user")
    add_change_options(deleting, "delete")
    inactive.add_argument("--json", action="store_true", help="print one JSON object")
    add_commands(sub)


_user_id = whole_number(0, noun="user id")


def run(args: argparse.Namespace) -> int:
    if args.what != "inactive":
        return run_user_command(args)
    out = Output("flagdesk users", "inactive" + (" delete" if args.verb else ""), args.json)
    try:
        _check_usage(args)
        client, connection = client_from_args(args)
    except UsageError as exc:
        return out.fail(EXIT_USAGE, str(exc))
    job = _delete(args, client, connection, out) if args.verb else _list(
        args, client, out)  # fmt: skip
    return run_job(out, job)


def _check_usage(args: argparse.Namespace) -> None:
    if args.verb is None:
        given = [o for o, v in (("--ids", args.ids), ("--all", args.all),
                                ("--dry-run", args.dry_run), ("--yes", args.yes)) if v]  # fmt: skip
        if given:
            raise UsageError(f"{', '.join(given)} go with `delete`: "
                             "flagdesk users inactive delete (--ids ID ... | --all)")  # fmt: skip
        return
    if args.csv is not None:
        raise UsageError("--csv goes with the list, not with `delete` (the deletion writes "
                         "its own snapshot)")  # fmt: skip
    if not args.ids and not args.all:
        raise UsageError("say which users to delete: --ids ID [ID ...] or --all")
    need_terminal(args, "the deletion", "deleted", "delete")


# ---------------------------------------------------------------------------- list


async def _list(args: argparse.Namespace, client: AdminClient, out: Output) -> int:
    from app.actions.inactive_users import write_users_csv

    async with client:
        users = (await client.inactive_users()).inactiveUsers
    out.update(server=client.base_url, count=len(users))
    if args.csv is not None:
        try:
            await asyncio.to_thread(write_users_csv, args.csv, users, private=False)
        except OSError as exc:
            raise UsageError(f"--csv: cannot write {args.csv}: {exc.strerror or exc}") from None
        out.update(csv=str(args.csv))
        out.say(f"Wrote {plural(len(users), 'inactive user')} to {args.csv}")
    elif args.json:
        out.update(inactiveUsers=[_user_json(u) for u in users])
    else:
        _print_table(users)
    out.say(f"{plural(len(users), 'user')} with no login in 180 days on {client.base_url}")
    return out.done(EXIT_OK)


def _user_json(user: InactiveUserLike) -> dict[str, Any]:
    from app.actions.inactive_users import SNAPSHOT_COLUMNS, wire_time

    values: dict[str, Any] = {key: getattr(user, key) for key in SNAPSHOT_COLUMNS}
    for key in ("seenAt", "createdAt", "patSeenAt"):
        values[key] = wire_time(values[key]) or None
    return values


def _print_table(users: list[InactiveUser]) -> None:
    from app.actions.inactive_users import wire_time

    titles = ("ID", "NAME", "USERNAME", "EMAIL", "LAST LOGIN", "CREATED", "TOKEN LAST USED")
    rows = [
        (str(u.id), u.name or "", u.username or "", u.email or "", wire_time(u.seenAt)[:10],
         wire_time(u.createdAt)[:10], wire_time(u.patSeenAt)[:10])
        for u in users
    ]  # fmt: skip
    print_table(titles, rows)


# ---------------------------------------------------------------------------- delete


async def _delete(
    args: argparse.Namespace, client: AdminClient, connection: str, out: Output
) -> int:
    from app.actions.inactive_users import journal_of, plan_deletion
    from app.actions.runner import carry_out, require
    from app.registry import DELETE_INACTIVE_USERS

    async with client:
        caps = await client.capabilities()
        require(caps, DELETE_INACTIVE_USERS)
        listed = (await client.inactive_users()).inactiveUsers
        if args.all:
            chosen = listed
        else:
            by_id = {u.id: u for u in listed}
            strangers = [i for i in dict.fromkeys(args.ids) if i not in by_id]
            if strangers:
                raise UsageError(
                    f"not inactive users on {client.base_url}: "
                    f"{', '.join(map(str, strangers))}. Nothing was deleted "
                    "(`flagdesk users inactive` lists them)"
                )
            chosen = [by_id[i] for i in dict.fromkeys(args.ids)]
        out.update(server=client.base_url, connection=connection)
        if not chosen:
            out.update(deleted=0, ids=[])
            out.say(f"No inactive users on {client.base_url}: nothing to delete.")
            return out.done(EXIT_OK)
        journal = journal_of(connection, caps)
        plan = plan_deletion(chosen, journal)
        if args.dry_run:
            return _dry_run(plan, out)
        if not args.yes and not _confirmed(plan):
            return out.fail(EXIT_REFUSED, "not confirmed: nothing was deleted")
        deletion = await carry_out(client, plan)
    out.update(deleted=plan.count, ids=plan.ids, status=deletion.status,
               snapshot=str(plan.snapshot), journal=str(deletion.journal),
               entry=deletion.entry)  # fmt: skip
    out.say(f"Deleted {plural(plan.count, 'inactive user')} on {plan.server}. "
            f"Snapshot: {plan.snapshot}")  # fmt: skip
    return out.done(EXIT_OK)


def _dry_run(plan: DeletePlan, out: Output) -> int:
    out.update(count=plan.count)
    return dry_run(out, [plan.request], plan.server, plural(plan.count, "inactive user"))


def _confirmed(plan: DeletePlan) -> bool:
    """y/N for one user; the number of users typed for more (the last line, saying so, is the
    terminal's question)."""
    expected = plan.confirm_text
    lines = plan.lines() if expected is None else plan.lines()[:-1]
    return confirmed(lines, plan.question, expected)
