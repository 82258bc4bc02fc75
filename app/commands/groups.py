"""`flagdesk groups list|show|delete`: a server's user groups (Unleash Enterprise and the sandbox;
open-source Unleash has none), one group with its members, and deleting one (journaled, with a
JSON snapshot of the group first: `app.actions.groups`). No Qt, and light to import: the client
and the actions are imported by `run()`."""

from __future__ import annotations

import argparse
import sys
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
    ask,
    echo,
    print_requests,
    print_table,
    run_job,
    whole_number,
)
from app.text import plural

if TYPE_CHECKING:
    from app.api.client import AdminClient
    from app.api.models import Group

DESCRIPTION = """\
User groups of a server (GET /api/admin/groups): Unleash Enterprise and the sandbox have them,
open-source Unleash has none (the commands say so, with exit status 4).

  flagdesk groups list [--json]
  flagdesk groups show ID [--json]
  flagdesk groups delete ID [--dry-run] [--yes] [--json]

`delete` reads the group first (GET /api/admin/groups/ID), writes it with its members as a JSON
snapshot to the connection's journal folder, records the change in the journal, then sends
DELETE /api/admin/groups/ID. On a terminal it asks first; without a terminal it changes nothing
unless --yes is given. --dry-run prints the exact request and sends nothing. The window's Undo
recreates a deleted group from its snapshot (a new id, the same members); its access to
projects is not restored.

exit status:
  0  listed, shown, deleted (or, with --dry-run, printed)
  1  the server refused (its message is printed: no group with that id, say), or the answer
     was no
  2  bad usage: no terminal to ask and no --yes
  3  the server was unreachable
  4  the token was refused, lacks the Admin root role, or the server has no groups
"""

_group_id = whole_number(0, noun="group id")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="what", metavar="WHAT", required=True)
    listing = add_action(sub, "list", "list the groups", DESCRIPTION)
    show = add_action(sub, "show", "show one group with its members", DESCRIPTION)
    show.add_argument("id", type=_group_id, metavar="ID", help="the group's id")
    delete = add_action(sub, "delete", "delete one group", DESCRIPTION)
    delete.add_argument("id", type=_group_id, metavar="ID", help="the group's id")
    add_change_options(delete, "delete")
    for action in (listing, show, delete):
        add_connection_arguments(action)
        action.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    out = Output("flagdesk groups", args.what, args.json)
    try:
        if args.what == "delete" and not args.dry_run and not args.yes and not sys.stdin.isatty():
            raise UsageError(
                "no terminal to confirm the deletion on: nothing was deleted. Add --yes to "
                "delete without asking (--dry-run shows the request)"
            )
        client, connection = client_from_args(args)
    except UsageError as exc:
        return out.fail(EXIT_USAGE, str(exc))
    if args.what == "list":
        return run_job(out, _list(client, out))
    if args.what == "show":
        return run_job(out, _show(args.id, client, out))
    return run_job(out, _delete(args, client, connection, out))


def _label(group: Group) -> str:
    count = group.userCount if group.userCount is not None else len(group.users)
    return f"{group.name} (id {group.id}, {plural(count, 'member')})"


async def _list(client: AdminClient, out: Output) -> int:
    from app.actions.groups import group_json

    async with client:
        groups = (await client.list_groups()).groups
        roles = {r.id: r.name for r in await _root_roles(client)}
    out.update(server=client.base_url, count=len(groups))
    if out.as_json:
        out.update(groups=[_with_role_name(group_json(g), g, roles) for g in groups])
    else:
        print_table(
            ("ID", "NAME", "MEMBERS", "ROOT ROLE", "SSO MAPPINGS"),
            [(str(g.id), g.name, str(g.userCount if g.userCount is not None else len(g.users)),
              _role_label(g, roles), ", ".join(g.mappingsSSO))
             for g in groups],
        )  # fmt: skip
    out.say(f"{plural(len(groups), 'group')} on {client.base_url}")
    return out.done(EXIT_OK)


def _role_label(group: Group, roles: dict[int, str]) -> str:
    """A group's root role as the text shows it: its name ("" for none; the id where the
    server's root roles could not be read)."""
    return "" if group.rootRole is None else roles.get(group.rootRole, str(group.rootRole))


def _with_role_name(data: dict[str, Any], group: Group, roles: dict[int, str]) -> dict[str, Any]:
    """`--json`'s group: the wire's fields (`rootRole` its id) and `rootRoleName`, its name
    (None for none, or where the server's root roles could not be read)."""
    return {**data, "rootRoleName": None if group.rootRole is None else roles.get(group.rootRole)}


async def _show(group_id: int, client: AdminClient, out: Output) -> int:
    from app.actions.groups import group_json
    from app.actions.inactive_users import user_label

    async with client:
        group = await client.get_group(group_id)
        roles = {r.id: r.name for r in await _root_roles(client)}
    out.update(server=client.base_url, group=_with_role_name(group_json(group), group, roles))
    if not out.as_json:
        role = _role_label(group, roles) or "none"
        for caption, value in (
            ("Group", _label(group)),
            ("Description", group.description or "—"),
            ("SSO mappings", ", ".join(group.mappingsSSO) or "—"),
            ("Root role", role),
            ("Projects", ", ".join(group.projects) or "—"),
            ("Created", f"{group.createdAt or '—'} by {group.createdBy or '—'}"),
        ):
            echo(f"{caption + ':':14}{value}")
        print()
        print_table(
            ("ID", "NAME", "EMAIL", "JOINED", "ADDED BY"),
            [(str(m.user.id), user_label(m.user), m.user.email or "",
              m.joinedAt.isoformat(timespec="seconds") if m.joinedAt else "", m.createdBy or "")
             for m in group.users],
        )  # fmt: skip
    return out.done(EXIT_OK)


async def _root_roles(client: AdminClient) -> list[Any]:
    """The server's root roles, to name a group's; none when the token may not list users."""
    from app.api.errors import ClientError

    try:
        return list((await client.list_users()).rootRoles)
    except ClientError:
        return []


async def _delete(
    args: argparse.Namespace, client: AdminClient, connection: str, out: Output
) -> int:
    from app.actions.groups import plan_delete
    from app.actions.runner import carry_out, journal_of, require
    from app.registry import DELETE_GROUP

    async with client:
        caps = await client.capabilities()
        require(caps, DELETE_GROUP)
        group = await client.get_group(args.id)
        roles = {r.id: r.name for r in await _root_roles(client)}
        journal = journal_of(connection, caps)
        plan = plan_delete(group, journal, roles)
        out.update(server=client.base_url, connection=connection, id=group.id, name=group.name)
        if args.dry_run:
            print_requests(out, [plan.request], f"Dry run: nothing was sent to {plan.server} "
                           f"(group {_label(group)}).")  # fmt: skip
            return out.done(EXIT_OK)
        if not args.yes and ask(plan.lines(), f"{plan.question} [y/N]").casefold() not in (
            "y", "yes"):  # fmt: skip
            return out.fail(EXIT_REFUSED, "not confirmed: nothing was deleted")
        change = await carry_out(client, plan)
    out.update(deleted=True, status=change.status, snapshot=str(plan.snapshot),
               journal=str(change.journal), entry=change.entry)  # fmt: skip
    out.say(f"Deleted group {_label(group)} on {plan.server}. Snapshot: {plan.snapshot}")
    return out.done(EXIT_OK)
