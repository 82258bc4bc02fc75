"""`flagdesk access show|grant|set|revoke`: who can do what where (for one user, every project
with the roles held and why; for one project, everyone who can change it: `app.api.access`),
and project access changed through the plans and journal of `app.actions.project_access`. No
Qt; the client and the actions are imported by the running command."""

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
from app.text import plural

if TYPE_CHECKING:
    from app.actions.project_access import AccessPlan, Subject
    from app.api.client import AdminClient
    from app.api.models import ProjectAccess
    from app.registry import Action

DESCRIPTION = """\
Who can do what where, and project access (Unleash Pro and Enterprise, and the sandbox).

  flagdesk access show --user EMAIL [--json]
  flagdesk access show --project P [--json]
  flagdesk access grant --project P --role R [--role R ...] (--user EMAIL | --group NAME)...
  flagdesk access set --project P --role R [--role R ...] (--user EMAIL | --group NAME)
  flagdesk access revoke --project P (--user EMAIL | --group NAME)... [--role R]
  (each change takes --dry-run, --yes and --json)

`show --user` reads the whole server once (users and their root roles, groups with their
members and root roles, every project's access, read concurrently) and lists every project in
which the user (or service account) holds a role, and why: the Admin root role (every
project), the Editor root role (the default project), a role held directly, through a group,
or through a group's root role. `show --project` lists everyone who can change the project,
each with why, and the groups holding roles there. On open-source Unleash (no project access)
both answer from the root roles alone and say so.

`grant` gives every --role to every --user and --group (POST /api/admin/projects/P/access;
roles held already are kept). `set` replaces one user's or group's roles in the project (PUT
.../users/ID/roles or .../groups/ID/roles). `revoke` removes every role of each (DELETE
.../roles), or with --role only that one (a PUT of the others). A user is named by email,
username or id (service accounts by username), a group by name or id, a role by name or id.
Unleash lets an Admin or the project's Owner do this; anyone else is refused (403).

The journal records each change before it is sent and the answer after, and the project's
access is written to a snapshot first; `flagdesk journal undo ENTRY` undoes a grant (exactly
the roles it added go), a change (the previous roles back) or a revocation (the previous roles
granted again). On a terminal a change asks first; without a terminal it changes nothing
unless --yes is given. --dry-run prints the exact requests and sends nothing.

exit status:
  0  shown, changed (or, with --dry-run, printed)
  1  the server refused (its message is printed), or the answer was no
  2  bad usage: no such project, user, group or role; nothing to change; no terminal to ask
     and no --yes
  3  the server was unreachable
  4  the token was refused (403: its user is neither an Admin nor the project's Owner), or
     the server has no project access (open source) for a change
"""

VERBS = {"grant": "granted", "set": "changed", "revoke": "revoked"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="what", metavar="WHAT", required=True)
    show = add_action(sub, "show", "who can do what where: one user's projects, or one "
                      "project's people", DESCRIPTION)  # fmt: skip
    which = show.add_mutually_exclusive_group(required=True)
    which.add_argument("--user", metavar="EMAIL", help="every project of this user, and why")
    which.add_argument("--project", metavar="P", help="everyone who can change this project")
    show.add_argument("--concurrency", type=int, default=4, metavar="N",
                      help="read at most N projects' access at once (default 4)")  # fmt: skip
    grant = add_action(sub, "grant", "give roles in a project to users and groups", DESCRIPTION)
    change = add_action(sub, "set", "replace a user's or group's roles in a project",
                        DESCRIPTION)  # fmt: skip
    revoke = add_action(sub, "revoke", "remove a user's or group's roles in a project",
                        DESCRIPTION)  # fmt: skip
    for each, verb in ((grant, "grant"), (change, "change"), (revoke, "revoke")):
        each.add_argument("--project", required=True, metavar="P", help="the project's id")
        each.add_argument(
            "--user",
            action="append",
            default=[],
            metavar="EMAIL",
            help="a user or service account (email, username or id); repeatable",
        )
        each.add_argument("--group", action="append", default=[], metavar="NAME",
                          help="a group (name or id); repeatable")  # fmt: skip
        add_change_options(each, verb)
    grant.add_argument("--role", action="append", required=True, metavar="R",
                       help="a project role (name or id); repeatable")  # fmt: skip
    change.add_argument(
        "--role",
        action="append",
        required=True,
        metavar="R",
        help="the roles it holds from now on (name or id); repeatable",
    )
    revoke.add_argument("--role", metavar="R", help="only this role (the others are kept)")
    for each in (show, grant, change, revoke):
        add_connection_arguments(each)
        each.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    out = Output("flagdesk access", args.what, args.json)
    try:
        if args.what != "show":
            if not args.user and not args.group:
                raise UsageError("name at least one --user or --group")
            if args.what == "set" and len(args.user) + len(args.group) != 1:
                raise UsageError("set changes one user or group at a time")
            need_terminal(args, "the change", VERBS[args.what], args.what)
        elif args.concurrency < 1:
            raise UsageError(f"--concurrency {args.concurrency}: give 1 or more")
        client, connection = client_from_args(args)
    except UsageError as exc:
        return out.fail(EXIT_USAGE, str(exc))
    if args.what == "show":
        return run_job(out, _show(args, client, out))
    return run_job(out, _change(args, client, connection, out))


# ---------------------------------------------------------------------------- show


async def _show(args: argparse.Namespace, client: AdminClient, out: Output) -> int:
    from app.api.access import (
        NoSuchPerson,
        any_named,
        find_person,
        needed_for_project,
        needed_for_user,
        project_access,
        read_directory,
        read_projects,
        user_access,
    )

    async with client:
        data = await read_directory(client)
        concurrency = args.concurrency
        if args.user is not None:
            if not data.knows_everyone and not any_named(data, args.user):
                # a service account only a project's access lists (a server that lists none)
                await read_projects(client, data, [p.id for p in data.projects],
                                    concurrency=concurrency)  # fmt: skip
            try:
                person = find_person(data, args.user)
            except NoSuchPerson as exc:
                raise UsageError(f"{exc} on {client.base_url}") from None
            needed = needed_for_user(data, person)
        else:
            needed = needed_for_project(data, args.project)
        await read_projects(client, data, needed, concurrency=concurrency)
    out.update(server=client.base_url)
    if args.user is not None:
        answer = user_access(data, person)
        out.update(**answer.to_json())
        if not out.as_json:
            print_table(("PROJECT", "ROLES", "WHY"),
                        [(h.project, ", ".join(h.roles), "; ".join(r.text for r in h.reasons))
                         for h in answer.holdings])  # fmt: skip
        if answer.unread:
            out.say(f"Not evaluated (custom root roles): {', '.join(answer.unread)}")
        if answer.note:
            out.say(answer.note + ".")
        out.say(f"{person.label} ({person.account_type}, root role {person.root_role or 'none'})"
                f" holds roles in {plural(len(answer.holdings), 'project')} of "
                f"{len(data.projects)} on {client.base_url}")  # fmt: skip
        return out.done(EXIT_OK)
    try:
        found = project_access(data, args.project)
    except KeyError as exc:
        raise UsageError(f"{exc.args[0]} ({client.base_url})") from None
    out.update(**found.to_json())
    if not out.as_json:
        print_table(("WHO", "ACCOUNT", "ROLES", "WHY"),
                    [(h.person.label, h.person.account_type, ", ".join(h.roles),
                      "; ".join(r.text for r in h.reasons)) for h in found.holdings])  # fmt: skip
        for name, roles, members in found.groups:
            out.say(f"Group “{name}” holds {', '.join(roles)} "
                    f"({plural(members, 'member')})")  # fmt: skip
    if found.note:
        out.say(found.note + ".")
    out.say(f"{plural(len(found.holdings), 'user')} can change project “{args.project}” on "
            f"{client.base_url}")  # fmt: skip
    return out.done(EXIT_OK)


# ---------------------------------------------------------------------------- changes


async def _subjects(args: argparse.Namespace, client: AdminClient,
                    access: ProjectAccess) -> list[Subject]:  # fmt: skip
    from app.actions.project_access import NotFound, find_groups, find_users
    from app.api.errors import Forbidden, Unsupported

    users = []
    listed = True
    if args.user:
        try:
            users = (await client.list_users()).users
        except (Forbidden, Unsupported):  # an Owner who is no Admin: ids, or the project's own
            listed = False
    groups = (await client.list_groups()).groups if args.group else []
    try:
        return (find_users(args.user, users, access, any_id=not listed)
                + find_groups(args.group, groups))  # fmt: skip
    except NotFound as exc:
        raise UsageError(f"{exc} on {client.base_url}. Nothing was changed") from None


def _plan(args: argparse.Namespace, access: ProjectAccess, subjects: list[Subject],
          journal: Any) -> AccessPlan:  # fmt: skip
    from app.actions.project_access import NotFound, find_roles, plan_grant, plan_revoke, plan_set

    try:
        if args.what == "revoke":
            role = find_roles([args.role], access.roles)[0].id if args.role else None
            return plan_revoke(args.project, access, subjects, journal, role)
        roles = [r.id for r in find_roles(args.role, access.roles)]
        if args.what == "grant":
            return plan_grant(args.project, access, subjects, roles, journal)
        return plan_set(args.project, access, [(subjects[0], roles)], journal)
    except (NotFound, ValueError) as exc:
        raise UsageError(f"{exc}. Nothing was changed") from None


def _action(what: str) -> Action:
    from app.registry import GRANT_PROJECT_ACCESS, REVOKE_PROJECT_ACCESS, SET_PROJECT_ROLES

    return {"grant": GRANT_PROJECT_ACCESS, "set": SET_PROJECT_ROLES,
            "revoke": REVOKE_PROJECT_ACCESS}[what]  # fmt: skip


async def _change(args: argparse.Namespace, client: AdminClient, connection: str,
                  out: Output) -> int:  # fmt: skip
    from app.actions.runner import PartlyDone, carry_out, journal_of, require
    from app.api.errors import NotFound

    async with client:
        caps = await client.capabilities()
        require(caps, _action(args.what))
        try:
            access = await client.project_access(args.project)
        except NotFound:
            raise UsageError(f"no project “{args.project}” on {client.base_url}. Nothing was "
                             "changed") from None  # fmt: skip
        subjects = await _subjects(args, client, access)
        journal = journal_of(connection, caps)
        plan = _plan(args, access, subjects, journal)
        named = plan.role_names
        out.update(server=plan.server, connection=connection, project=args.project,
                   changes=[{**c.subject.to_json(),
                             "before": [named.get(r, str(r)) for r in c.before],
                             "after": [named.get(r, str(r)) for r in c.after]}
                            for c in plan.changes])  # fmt: skip
        if args.dry_run:
            who = plural(len(plan.changes), "user or group", "users and groups")
            return dry_run(out, plan.requests, plan.server, f"the project access of {who}")
        if not args.yes and not confirmed(plan.lines(), plan.question):
            return out.fail(EXIT_REFUSED, "not confirmed: nothing was changed")
        try:
            done = await carry_out(client, plan)
        except PartlyDone as exc:
            out.update(journal=str(journal.path))
            return out.fail(EXIT_REFUSED, str(exc))
    out.update(statuses=list(done.statuses), journal=str(done.journal),
               entries=list(done.entries), snapshot=str(plan.snapshot))  # fmt: skip
    for change in plan.changes:
        out.say(f"{change.subject.text} in “{args.project}”: {plan.names(change.before)} → "
                f"{plan.names(change.after)}")  # fmt: skip
    return out.done(EXIT_OK)
