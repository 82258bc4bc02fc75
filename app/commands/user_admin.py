"""`flagdesk users create|delete|reset-password`: the Users window's actions on the command line,
through the same plans and journal (`app.actions.users`). No Qt; the client and the actions are
imported by the running command, not when the parser is built."""

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
    echo,
    need_terminal,
    print_requests,
    run_job,
    whole_number,
)
from app.text import plural

if TYPE_CHECKING:
    from pydantic import ValidationError

    from app.api.client import AdminClient

CREATE_DESCRIPTION = """\
Create a user (POST /api/admin/user-admin).

  flagdesk users create --email E [--name N] [--username U] --root-role ROLE [--send-email]
                        [--dry-run] [--yes] [--json]

The root role is one of the server's root roles (GET /api/admin/user-admin lists them): Admin,
Editor, Viewer, or a custom root role where the server has them (Unleash Enterprise), by name
or id; anything else (Owner and Member are project roles) is refused before anything is sent.
No welcome email is sent unless --send-email is given (Unleash's own default is to send one).
Servers limit how many users are created a minute (Unleash: 20): past it the command waits as
the server asks and goes on. The journal records the creation before it is sent and the answer
after. On a terminal the command asks first; without a terminal it creates nothing unless --yes
is given. --dry-run prints the exact request and sends nothing.

exit status:
  0  created (or, with --dry-run, printed)
  1  the server refused (its message is printed: the email is taken, say), or the answer was no
  2  bad usage (a root role the server does not have, say), or no terminal to ask and no --yes
  3  the server was unreachable
  4  the token was refused, or lacks the Admin root role
"""

DELETE_DESCRIPTION = """\
Delete users by id (DELETE /api/admin/user-admin/:id, one request each).

  flagdesk users delete ID [ID ...] [--dry-run] [--yes] [--json]

The users are read first: an id that is not a user is refused before anything is sent, and so
is deleting the last Admin (GET /api/admin/user-admin/admin-count), which would leave nobody to
manage users. Before each request a JSON snapshot of the user is written to the connection's
journal folder. A deleted user cannot be brought back. On a terminal the command asks first
(y for one user; for more, the number of users typed); without a terminal it deletes nothing
unless --yes is given. --dry-run prints the exact requests.

exit status:
  0  deleted (or, with --dry-run, printed)
  1  some or all deletions were refused (the last Admin, or the server's message), or the
     answer was no
  2  bad usage: ids that are not users, no terminal to ask and no --yes
  3  the server was unreachable
  4  the token was refused, or lacks the Admin root role
"""

RESET_DESCRIPTION = """\
Make a password reset link for a user (POST /api/admin/user-admin/reset-password) and print it.

  flagdesk users reset-password ID [--json]

Unleash finds the user by email, so the user needs one; it makes one link a minute for each
user. The link lets whoever has it set the user's password: hand it over privately. The journal
records that a link was made (not the link).

exit status: 0 printed, 1 refused (no email, or a link made less than a minute ago), 2 bad
usage, 3 unreachable, 4 not authorised
"""


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    create = add_action(sub, "create", "create a user", CREATE_DESCRIPTION)
    create.add_argument("--email", required=True, help="the user's email address")
    create.add_argument("--name", help="the user's name")
    create.add_argument("--username", help="the user's username")
    create.add_argument("--root-role", required=True, metavar="ROLE",
                        help="the root role: Admin, Editor, Viewer, or a custom root role "
                        "of the server (its name or id)")  # fmt: skip
    create.add_argument("--send-email", action="store_true",
                        help="send the user a welcome email (not sent by default)")  # fmt: skip
    _change_arguments(create)
    delete = add_action(sub, "delete", "delete users", DELETE_DESCRIPTION)
    delete.add_argument("ids", nargs="+", type=_user_id, metavar="ID", help="user ids")
    _change_arguments(delete)
    reset = add_action(sub, "reset-password", "make a password reset link", RESET_DESCRIPTION)
    reset.add_argument("id", type=_user_id, metavar="ID", help="the user's id")
    add_connection_arguments(reset)
    reset.add_argument("--json", action="store_true", help="print one JSON object")


_user_id = whole_number(0, noun="user id")


def _change_arguments(parser: argparse.ArgumentParser) -> None:
    add_connection_arguments(parser)
    add_change_options(parser, "go ahead")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run_user_command(args: argparse.Namespace) -> int:
    out = Output("flagdesk users", args.what, args.json)
    try:
        if args.what == "create":
            need_terminal(args, "the new user", "created", "create")
        elif args.what == "delete":
            need_terminal(args, "the deletion", "deleted", "delete")
        client, connection = client_from_args(args)
    except UsageError as exc:
        return out.fail(EXIT_USAGE, str(exc))
    jobs = {"create": _create, "delete": _delete, "reset-password": _reset}
    return run_job(out, jobs[args.what](args, client, connection, out))


def _refused(exc: ValidationError, email: str | None) -> str:
    """The first refusal of `CreateUser` as the option that gave the value says it (a name
    with control characters is the name's, not the email's)."""
    error = exc.errors()[0]
    field = str(error["loc"][0]) if error["loc"] else "email"
    if field == "email" and "control character" not in error["msg"]:
        return f"--email: {email!r} is not an email address"
    return f"--{field}: {str(error['msg']).removeprefix('Value error, ')}"


async def _create(args: argparse.Namespace, client: AdminClient, connection: str,
                  out: Output) -> int:  # fmt: skip
    from pydantic import ValidationError

    from app.actions.runner import carry_out
    from app.actions.users import (
        Created,
        NotARootRole,
        journal_of,
        plan_create,
        predefined_root_role,
        root_role_of,
    )
    from app.api.models import CreateUser

    async with client:
        caps = await client.capabilities()
        predefined = predefined_root_role(args.root_role)
        sent: int | str
        if predefined is not None:
            role, sent = predefined, predefined
        else:  # a custom root role, or none: the server's list of its root roles says
            try:
                role, sent = root_role_of(
                    args.root_role, (await client.list_users()).rootRoles, client.base_url
                )
            except NotARootRole as exc:
                raise UsageError(f"--root-role: {exc}. Nothing was created") from None
        try:
            user = CreateUser(email=args.email, name=args.name, username=args.username,
                              rootRole=sent, sendEmail=args.send_email)  # fmt: skip
        except ValidationError as exc:
            raise UsageError(_refused(exc, args.email)) from None
        journal = journal_of(connection, caps)
        plan = plan_create(user, role, journal)
        out.update(server=plan.server, connection=connection)
        if args.dry_run:
            return dry_run(out, [plan.request], plan.server, "1 new user")
        if not args.yes and not confirmed(plan.lines(), plan.question):
            return out.fail(EXIT_REFUSED, "not confirmed: nothing was created")

        def waiting(left: float) -> None:
            out.say(f"The server limits new users: waiting {left:.0f} s…")

        created = await Created.of(client, await carry_out(client, plan, on_wait=waiting))
    made = created.user
    out.update(id=made.id, user=made.model_dump(mode="json", exclude_none=True),
               status=created.status, waited=created.waited, journal=str(journal.path),
               entry=created.entry)  # fmt: skip
    out.say(f"Created {plan.label} (id {made.id}) on {plan.server}.")
    if made.inviteLink:
        out.say(f"Invite link: {made.inviteLink}")
    return out.done(EXIT_OK)


async def _delete(args: argparse.Namespace, client: AdminClient, connection: str,
                  out: Output) -> int:  # fmt: skip
    from app.actions.runner import NotStarted, carry_out, count_to_type
    from app.actions.users import (
        ADMIN,
        DeleteUserPlan,
        journal_of,
        plan_delete,
        role_of,
        user_label,
    )
    from app.api.errors import ApiError

    async with client:
        caps = await client.capabilities()
        listed = await client.list_users()
        by_id = {u.id: u for u in listed.users}
        ids = list(dict.fromkeys(args.ids))
        strangers = [i for i in ids if i not in by_id]
        if strangers:
            raise UsageError(f"not users on {client.base_url}: "
                             f"{', '.join(map(str, strangers))}. Nothing was deleted")  # fmt: skip
        roles = {r.id: r.name for r in listed.rootRoles}
        journal = journal_of(connection, caps)
        out.update(server=client.base_url, connection=connection)
        # the last Admin is never deleted: said here, before the question and in --dry-run
        deletes_admin = any(role_of(by_id[i].rootRole, roles) == ADMIN for i in ids)
        admins = (await client.admin_count()).people if deletes_admin else None
        plans: list[DeleteUserPlan] = []
        refused: list[dict[str, Any]] = []
        for i in ids:
            plan = plan_delete(by_id[i], roles, journal, admins)
            if plan.refused:
                refused.append({"id": i, "error": plan.refused})
                out.say(f"Refused: {plan.refused}")
                continue
            if admins is not None and plan.role == ADMIN:
                admins -= 1
            plans.append(plan)
        if refused and not plans:
            out.update(deleted=[], failed=refused)
            return out.fail(EXIT_REFUSED, "nothing was deleted: " + refused[0]["error"])
        if args.dry_run and refused:
            out.update(failed=refused)
            print_requests(out, [p.request for p in plans], f"Dry run: nothing was sent to "
                           f"{client.base_url} ({plural(len(plans), 'user')}).")  # fmt: skip
            return out.fail(EXIT_REFUSED, f"{plural(len(refused), 'user')} would be refused")
        if args.dry_run:
            return dry_run(out, [p.request for p in plans], client.base_url,
                           plural(len(plans), "user"))  # fmt: skip
        lines = [line for p in plans for line in p.lines()[:2]]
        lines.append("A deleted user cannot be brought back: this cannot be undone.")
        question = f"Delete {plural(len(plans), 'user')}?"
        if not args.yes and not confirmed(lines, question, count_to_type(len(plans))):
            return out.fail(EXIT_REFUSED, "not confirmed: nothing was deleted")
        deleted: list[int] = []
        failed: list[dict[str, Any]] = list(refused)
        for plan in plans:
            try:
                await carry_out(client, plan)
            except (NotStarted, ApiError) as exc:
                failed.append({"id": plan.user.id, "error": str(exc)})
                out.say(f"Not deleted: {exc}")
                continue
            deleted.append(plan.user.id)
            out.say(f"Deleted {user_label(plan.user)} (id {plan.user.id}). "
                    f"Snapshot: {plan.snapshot}")  # fmt: skip
    out.update(deleted=deleted, failed=failed, journal=str(journal.path))
    if failed:
        return out.fail(EXIT_REFUSED, f"{plural(len(failed), 'user')} not deleted")
    return out.done(EXIT_OK)


async def _reset(args: argparse.Namespace, client: AdminClient, connection: str,
                 out: Output) -> int:  # fmt: skip
    from app.actions.runner import carry_out
    from app.actions.users import journal_of, plan_reset, reset_link
    from app.api.errors import NotFound

    async with client:
        caps = await client.capabilities()
        try:
            user = await client.get_user(args.id)
        except NotFound:
            raise UsageError(f"{args.id} is not a user on {client.base_url}") from None
        journal = journal_of(connection, caps)
        try:
            plan = plan_reset(user, journal)
        except ValueError as exc:
            return out.fail(EXIT_REFUSED, str(exc))
        link = await reset_link(client, await carry_out(client, plan))
    out.update(server=plan.server, id=user.id, email=user.email, resetPasswordUrl=link)
    if not out.as_json:
        echo(link)
    return out.done(EXIT_OK)
