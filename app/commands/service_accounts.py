"""`flagdesk service-accounts list|create|edit|delete` and `flagdesk service-accounts tokens
list|create|delete`: Unleash Enterprise's service accounts and their tokens, through the plans
and journal of `app.actions.service_accounts`. A created token's secret goes to standard output,
once, and nowhere else (not the log, not the journal). No Qt; the client and the actions are
imported by the running command."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
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
    print_table,
    run_job,
)
from app.text import plural

if TYPE_CHECKING:
    from app.api.client import AdminClient
    from app.api.models import ServiceAccount

DESCRIPTION = """\
Service accounts of a server (Unleash Enterprise and the sandbox; open-source Unleash has none,
and the command says so with exit status 4, sending nothing): accounts for machines, each with
a root role and tokens of its own (GET, POST /api/admin/service-account, PUT, DELETE
/api/admin/service-account/ID, GET, POST /api/admin/service-account/ID/token, DELETE
/api/admin/service-account/ID/token/TOKEN_ID). They need the Admin root role.

  flagdesk service-accounts list [--json]
  flagdesk service-accounts create --username U --name N --root-role ROLE [--dry-run] [--yes]
                                   [--json]
  flagdesk service-accounts edit ACCOUNT [--name N] [--root-role ROLE] [--dry-run] [--yes]
                                 [--json]
  flagdesk service-accounts delete ACCOUNT [--dry-run] [--yes] [--json]
  flagdesk service-accounts tokens list ACCOUNT [--json]
  flagdesk service-accounts tokens create ACCOUNT --description D --expires DATE [--dry-run]
                                          [--yes] [--json]
  flagdesk service-accounts tokens delete ACCOUNT DESCRIPTION_OR_ID... [--dry-run] [--yes]
                                          [--json]

ACCOUNT is a service account's username or id (`list` shows both). ROLE is a root role's name
(Admin, Editor, Viewer, or a custom root role's) or id. `tokens create` prints the new token's
secret on standard output, once: the server never shows it again, and flagdesk keeps it nowhere
(the journal records the description and the secret's last four characters; the log never
holds it). --json puts it in the object as `secret`. --expires takes a date (YYYY-MM-DD: the
token expires as that day begins, UTC) or a date-time with its time zone.

`delete` takes the account's tokens with it: whatever uses them is refused from then on. A
snapshot of the account (no secrets) is written to the connection's journal folder first.

The journal records each change before it is sent and the answer after; `flagdesk journal undo
ENTRY` deletes an account or a token that was created, puts an edited account's name and root
role back, and creates a deleted account again (a new id, without its tokens: their secrets
are gone). A deleted token cannot be brought back. On a terminal a change asks first (several
tokens: their number typed); without a terminal it changes nothing unless --yes is given.
--dry-run prints the exact requests and sends nothing.

exit status:
  0  listed, created, changed, deleted (or, with --dry-run, printed)
  1  the server refused (its message is printed: a username taken, say), some deletions
     failed, or the answer was no
  2  bad usage: no such account, token or role, a date that is not one, no terminal to ask and
     no --yes
  3  the server was unreachable
  4  the token was refused, lacks the Admin root role, or the server has no service accounts
     (it needs Unleash Enterprise)
"""


def expiry(text: str) -> datetime:
    """An argparse `type`: `flagdesk pats`'s (a date, or a date-time with its time zone),
    imported only when a token's expiry is read (no other command is loaded before)."""
    from app.commands.pats import expiry as pats_expiry

    return pats_expiry(text)


#: Unleash's built-in root roles, when the server's list of roles cannot be read
BUILT_IN_ROLES = {1: "Admin", 2: "Editor", 3: "Viewer"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="what", metavar="WHAT", required=True)
    listing = add_action(sub, "list", "list the service accounts", DESCRIPTION)
    create = add_action(sub, "create", "create a service account", DESCRIPTION)
    create.add_argument("--username", required=True, metavar="U",
                        help="its username (unique among users and service accounts)")  # fmt: skip
    create.add_argument("--name", required=True, metavar="N", help="its name")
    create.add_argument(
        "--root-role",
        required=True,
        metavar="ROLE",
        help="its root role: a name (Admin, Editor, Viewer, ...) or an id",
    )
    add_change_options(create, "create")
    edit = add_action(sub, "edit", "change a service account's name or root role", DESCRIPTION)
    edit.add_argument("account", metavar="ACCOUNT", help="the account's username or id")
    edit.add_argument("--name", metavar="N", help="its new name")
    edit.add_argument("--root-role", metavar="ROLE", help="its new root role: a name or an id")
    add_change_options(edit, "change")
    delete = add_action(sub, "delete", "delete a service account and its tokens", DESCRIPTION)
    delete.add_argument("account", metavar="ACCOUNT", help="the account's username or id")
    add_change_options(delete, "delete")
    tokens = add_action(sub, "tokens", "list, create or delete a service account's tokens",
                        DESCRIPTION)  # fmt: skip
    token_sub = tokens.add_subparsers(dest="token_what", metavar="WHAT", required=True)
    t_list = add_action(token_sub, "list", "list a service account's tokens", DESCRIPTION)
    t_list.add_argument("account", metavar="ACCOUNT", help="the account's username or id")
    t_create = add_action(token_sub, "create", "create a token (its secret shown once)",
                          DESCRIPTION)  # fmt: skip
    t_create.add_argument("account", metavar="ACCOUNT", help="the account's username or id")
    t_create.add_argument(
        "--description",
        required=True,
        metavar="D",
        help="what the token is for (unique among the account's tokens)",
    )
    t_create.add_argument("--expires", required=True, type=expiry, metavar="DATE",
                          help="when it expires: YYYY-MM-DD (UTC) or a date-time with its time "
                          "zone")  # fmt: skip
    add_change_options(t_create, "create")
    t_delete = add_action(token_sub, "delete", "delete tokens of a service account", DESCRIPTION)
    t_delete.add_argument("account", metavar="ACCOUNT", help="the account's username or id")
    t_delete.add_argument("tokens", nargs="+", metavar="DESCRIPTION_OR_ID",
                          help="the tokens, by description or id")  # fmt: skip
    add_change_options(t_delete, "delete")
    for each in (listing, create, edit, delete, t_list, t_create, t_delete):
        add_connection_arguments(each)
        each.add_argument("--json", action="store_true", help="print one JSON object")


#: what each change confirms and does, for `need_terminal`
_CHANGES = {
    "create": ("the new service account", "created", "create"),
    "edit": ("the change", "changed", "change"),
    "delete": ("the deletion", "deleted", "delete"),
    "tokens create": ("the new token", "created", "create"),
    "tokens delete": ("the deletion", "deleted", "delete"),
}


def run(args: argparse.Namespace) -> int:
    command = args.what if args.what != "tokens" else f"tokens {args.token_what}"
    out = Output("flagdesk service-accounts", command, args.json)
    try:
        if command in _CHANGES:
            need_terminal(args, *_CHANGES[command])
        if command == "edit" and args.name is None and args.root_role is None:
            raise UsageError("give --name, --root-role or both: nothing was changed")
        client, connection = client_from_args(args)
    except UsageError as exc:
        return out.fail(EXIT_USAGE, str(exc))
    jobs = {"list": _list, "create": _create, "edit": _edit, "delete": _delete,
            "tokens list": _list_tokens, "tokens create": _create_token,
            "tokens delete": _delete_tokens}  # fmt: skip
    return run_job(out, jobs[command](args, client, connection, out))


def _when(value: datetime | None) -> str:
    return "" if value is None else value.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


async def _roles(client: AdminClient) -> dict[int, str]:
    """The server's root roles by id (the users' list names them all); Unleash's built-in
    ones when that list cannot be read."""
    from app.api.errors import ClientError

    try:
        listed = (await client.list_users()).rootRoles
    except ClientError:
        return dict(BUILT_IN_ROLES)
    return {r.id: r.name for r in listed} or dict(BUILT_IN_ROLES)


def _role_id(asked: str, roles: Mapping[int, str]) -> int:
    """The root role `asked` names (its name, any case, or its id); `UsageError` naming them."""
    text = asked.strip()
    if text.isdigit() and int(text) in roles:
        return int(text)
    found = [i for i, name in roles.items() if name.casefold() == text.casefold()]
    if found:
        return found[0]
    known = ", ".join(f"{name} ({i})" for i, name in sorted(roles.items()))
    raise UsageError(f"“{asked}” is not a root role of this server: choose one of {known}")


async def _account(client: AdminClient, asked: str, verb: str) -> ServiceAccount:
    from app.actions.service_accounts import NotFound, find_account

    accounts = (await client.service_accounts()).serviceAccounts
    try:
        return find_account(asked, accounts, client.base_url)
    except NotFound as exc:
        raise UsageError(f"{exc}. Nothing was {verb}") from None


async def _list(args: argparse.Namespace, client: AdminClient, connection: str,
                out: Output) -> int:  # fmt: skip
    from app.actions.service_accounts import account_json

    async with client:
        listed = await client.service_accounts()
    roles = {r.id: r.name for r in listed.rootRoles}
    accounts = listed.serviceAccounts
    out.update(server=client.base_url, count=len(accounts),
               serviceAccounts=[account_json(a) for a in accounts])  # fmt: skip
    if not out.as_json:
        print_table(("ID", "USERNAME", "NAME", "ROOT ROLE", "TOKENS", "CREATED"),
                    [(str(a.id), a.username or "", a.name or "",
                      roles.get(a.rootRole or -1, str(a.rootRole or "")), str(len(a.tokens)),
                      _when(a.createdAt)) for a in accounts])  # fmt: skip
    out.say(f"{plural(len(accounts), 'service account')} on {client.base_url}")
    return out.done(EXIT_OK)


async def _create(args: argparse.Namespace, client: AdminClient, connection: str,
                  out: Output) -> int:  # fmt: skip
    from app.actions.runner import carry_out, journal_of, require
    from app.actions.service_accounts import account_json, account_label, plan_create
    from app.api.models import ServiceAccount
    from app.registry import CREATE_SERVICE_ACCOUNT

    async with client:
        caps = await client.capabilities()
        require(caps, CREATE_SERVICE_ACCOUNT)
        roles = await _roles(client)
        role = _role_id(args.root_role, roles)
        journal = journal_of(connection, caps)
        try:
            plan = plan_create(args.name, args.username, role, journal, roles)
        except ValueError as exc:
            raise UsageError(f"{exc}. Nothing was created") from None
        out.update(server=plan.server, connection=connection)
        if args.dry_run:
            return dry_run(out, [plan.request], plan.server, "1 new service account")
        if not args.yes and not confirmed(plan.lines(), plan.question):
            return out.fail(EXIT_REFUSED, "not confirmed: nothing was created")
        done = await carry_out(client, plan)
        made = await client.read_answer(done.answer, ServiceAccount)
    out.update(id=made.id, serviceAccount=account_json(made), status=done.status,
               journal=str(done.journal), entry=done.entry)  # fmt: skip
    out.say(f"Created the service account {account_label(made)} on {plan.server}.")
    return out.done(EXIT_OK)


async def _edit(args: argparse.Namespace, client: AdminClient, connection: str,
                out: Output) -> int:  # fmt: skip
    from app.actions.runner import carry_out, journal_of, require
    from app.actions.service_accounts import account_json, account_label, plan_edit
    from app.api.models import ServiceAccount
    from app.registry import EDIT_SERVICE_ACCOUNT

    async with client:
        caps = await client.capabilities()
        require(caps, EDIT_SERVICE_ACCOUNT)
        account = await _account(client, args.account, "changed")
        roles = await _roles(client)
        role = None if args.root_role is None else _role_id(args.root_role, roles)
        journal = journal_of(connection, caps)
        try:
            plan = plan_edit(account, args.name, role, journal, roles)
        except ValueError as exc:
            raise UsageError(f"{exc}. Nothing was changed") from None
        out.update(server=plan.server, connection=connection, id=account.id)
        if args.dry_run:
            return dry_run(out, [plan.request], plan.server,
                           f"the service account {account_label(account)}")  # fmt: skip
        if not args.yes and not confirmed(plan.lines(), plan.question):
            return out.fail(EXIT_REFUSED, "not confirmed: nothing was changed")
        done = await carry_out(client, plan)
        changed = await client.read_answer(done.answer, ServiceAccount)
    out.update(serviceAccount=account_json(changed), status=done.status,
               journal=str(done.journal), entry=done.entry)  # fmt: skip
    out.say(f"Changed the service account {account_label(changed)} on {plan.server}: "
            + ("; ".join(plan.changes()) or "nothing differed") + ".")  # fmt: skip
    return out.done(EXIT_OK)


async def _delete(args: argparse.Namespace, client: AdminClient, connection: str,
                  out: Output) -> int:  # fmt: skip
    from app.actions.runner import carry_out, journal_of, require
    from app.actions.service_accounts import account_label, plan_delete
    from app.registry import DELETE_SERVICE_ACCOUNT

    async with client:
        caps = await client.capabilities()
        require(caps, DELETE_SERVICE_ACCOUNT)
        account = await _account(client, args.account, "deleted")
        roles = await _roles(client)
        journal = journal_of(connection, caps)
        plan = plan_delete(account, journal, roles)
        out.update(server=plan.server, connection=connection, id=account.id)
        if args.dry_run:
            return dry_run(out, [plan.request], plan.server,
                           f"the service account {account_label(account)}")  # fmt: skip
        if not args.yes and not confirmed(plan.lines(), plan.question):
            return out.fail(EXIT_REFUSED, "not confirmed: nothing was deleted")
        done = await carry_out(client, plan)
    out.update(
        deleted=account.id,
        tokens=len(account.tokens),
        status=done.status,
        snapshot=str(plan.snapshot),
        journal=str(done.journal),
        entry=done.entry,
    )
    out.say(f"Deleted the service account {account_label(account)} and its "
            f"{plural(len(account.tokens), 'token')} on {plan.server}.")  # fmt: skip
    return out.done(EXIT_OK)


async def _list_tokens(args: argparse.Namespace, client: AdminClient, connection: str,
                       out: Output) -> int:  # fmt: skip
    from app.actions.service_accounts import account_label, token_json

    async with client:
        account = await _account(client, args.account, "listed")
        tokens = (await client.service_account_tokens(account.id)).pats
    out.update(server=client.base_url, id=account.id, username=account.username,
               count=len(tokens), tokens=[token_json(t) for t in tokens])  # fmt: skip
    if not out.as_json:
        print_table(("ID", "DESCRIPTION", "EXPIRES", "CREATED", "LAST USED"),
                    [(str(t.id), t.description, _when(t.expiresAt), _when(t.createdAt),
                      _when(t.seenAt) or "never") for t in tokens])  # fmt: skip
    out.say(f"{plural(len(tokens), 'token')} of the service account {account_label(account)} "
            f"on {client.base_url}")  # fmt: skip
    return out.done(EXIT_OK)


async def _create_token(args: argparse.Namespace, client: AdminClient, connection: str,
                        out: Output) -> int:  # fmt: skip
    from app.actions.personal_tokens import secret_end
    from app.actions.runner import carry_out, journal_of, require
    from app.actions.service_accounts import (
        CreatedToken,
        account_label,
        plan_create_token,
        token_json,
    )
    from app.registry import CREATE_SERVICE_ACCOUNT_TOKEN

    async with client:
        caps = await client.capabilities()
        require(caps, CREATE_SERVICE_ACCOUNT_TOKEN)
        account = await _account(client, args.account, "created")
        journal = journal_of(connection, caps)
        try:
            plan = plan_create_token(account, args.description, args.expires, journal)
        except ValueError as exc:
            raise UsageError(f"{exc}. Nothing was created") from None
        out.update(server=plan.server, connection=connection, id=account.id)
        if args.dry_run:
            return dry_run(out, [plan.request], plan.server, "1 new service account token")
        if not args.yes and not confirmed(plan.lines(), plan.question):
            return out.fail(EXIT_REFUSED, "not confirmed: nothing was created")
        created = await CreatedToken.of(client, await carry_out(client, plan))
    token = created.token
    out.update(token=token_json(token), secret=token.secret, status=created.status,
               journal=str(journal.path), entry=created.entry)  # fmt: skip
    if not out.as_json:
        echo(f"Created the token “{token.description}” (id {token.id}) of the service account "
             f"{account_label(account)} on {plan.server}, expiring {_when(token.expiresAt)} "
             f"(secret ending …{secret_end(token.secret)}). Its secret, on standard output, is "
             "shown this once.", file=sys.stderr)  # fmt: skip
        echo(token.secret)
    return out.done(EXIT_OK)


async def _delete_tokens(args: argparse.Namespace, client: AdminClient, connection: str,
                         out: Output) -> int:  # fmt: skip
    from app.actions.runner import PartlyDone, carry_out, count_to_type, journal_of, require
    from app.actions.service_accounts import (
        NotFound,
        account_label,
        find_tokens,
        plan_delete_tokens,
    )
    from app.registry import DELETE_SERVICE_ACCOUNT_TOKEN

    async with client:
        caps = await client.capabilities()
        require(caps, DELETE_SERVICE_ACCOUNT_TOKEN)
        account = await _account(client, args.account, "deleted")
        try:
            chosen = find_tokens(args.tokens, account)
        except NotFound as exc:
            raise UsageError(f"{exc}. Nothing was deleted") from None
        journal = journal_of(connection, caps)
        plan = plan_delete_tokens(account, chosen, journal)
        out.update(server=plan.server, connection=connection, id=account.id)
        if args.dry_run:
            return dry_run(
                out,
                plan.requests,
                plan.server,
                f"{plural(len(chosen), 'token')} of {account_label(account)}",
            )
        if not args.yes and not confirmed(plan.lines(), plan.question,
                                          count_to_type(len(chosen))):  # fmt: skip
            return out.fail(EXIT_REFUSED, "not confirmed: nothing was deleted")
        try:
            done = await carry_out(client, plan)
        except PartlyDone as exc:
            out.update(deleted=[t.id for t in chosen[: exc.done]], journal=str(journal.path))
            return out.fail(EXIT_REFUSED, str(exc))
    out.update(deleted=[t.id for t in chosen], statuses=list(done.statuses),
               journal=str(done.journal), entries=list(done.entries))  # fmt: skip
    for token in chosen:
        out.say(f"Deleted the token “{token.description}” (id {token.id}) of the service "
                f"account {account_label(account)} on {plan.server}.")  # fmt: skip
    return out.done(EXIT_OK)
