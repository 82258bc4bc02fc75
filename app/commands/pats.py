"""`flagdesk pats list|create|delete`: the personal access tokens of the user behind the
connection's token, through the plans and journal of `app.actions.personal_tokens`. A created
token's secret goes to standard output, once, and nowhere else (not the log, not the journal).
No Qt; the client and the actions are imported by the running command."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, date, datetime, time
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

DESCRIPTION = """\
The personal access tokens of the user behind the connection's token (GET, POST
/api/admin/user/tokens, DELETE /api/admin/user/tokens/ID). They are that user's own: the
connection needs a personal access token (an admin API token has no user; the command says so,
with exit status 4, and sends nothing to these endpoints).

  flagdesk pats list [--json]
  flagdesk pats create --description D --expires DATE [--dry-run] [--yes] [--json]
  flagdesk pats delete DESCRIPTION_OR_ID [DESCRIPTION_OR_ID ...] [--dry-run] [--yes] [--json]

`create` prints the new token's secret on standard output, once: the server never shows it
again, and flagdesk keeps it nowhere (the journal records the description and the secret's
last four characters; the log never holds it). --json puts it in the object as `secret`.
--expires takes a date (YYYY-MM-DD: the token expires as that day begins, UTC) or a date-time
with its time zone (2030-01-31T12:00:00Z), in the future.

`delete` names tokens by description or id (`list` shows both); it reads the list first, so
only the user's own tokens are sent, one request each. A deleted token is refused from its
next request, the connection's own too if it is one of them; it cannot be brought back.

The journal records each change before it is sent and the answer after; `flagdesk journal undo
ENTRY` undoes a creation by deleting the token. On a terminal a change asks first (for more
than one token, their number typed); without a terminal it changes nothing unless --yes is
given. --dry-run prints the exact requests and sends nothing.

exit status:
  0  listed, created, deleted (or, with --dry-run, printed)
  1  the server refused (its message is printed: a description taken, say), some deletions
     failed, or the answer was no
  2  bad usage: no such token, a date that is not one, no terminal to ask and no --yes
  3  the server was unreachable
  4  the token was refused, or is not a personal access token
"""


def expiry(text: str) -> datetime:
    """An argparse `type`: a date (the day's start, UTC) or an RFC 3339 date-time with its time
    zone, as an aware datetime; refused with a message that shows both forms."""
    from app.api.models import CreatePersonalAccessToken

    try:
        return datetime.combine(date.fromisoformat(text.strip()), time(), UTC)
    except ValueError:
        pass
    try:
        body = CreatePersonalAccessToken.model_validate({"description": "-", "expiresAt": text})
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a date: give YYYY-MM-DD or a date-time with its time zone "
            "(2030-01-31T12:00:00Z)"
        ) from None
    return body.expiresAt


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="what", metavar="WHAT", required=True)
    listing = add_action(sub, "list", "list your personal access tokens", DESCRIPTION)
    create = add_action(sub, "create", "create a personal access token", DESCRIPTION)
    create.add_argument("--description", required=True, metavar="D",
                        help="what the token is for (unique among your tokens)")  # fmt: skip
    create.add_argument("--expires", required=True, type=expiry, metavar="DATE",
                        help="when it expires: YYYY-MM-DD (UTC) or a date-time with its time "
                        "zone")  # fmt: skip
    add_change_options(create, "create")
    delete = add_action(sub, "delete", "delete personal access tokens", DESCRIPTION)
    delete.add_argument("tokens", nargs="+", metavar="DESCRIPTION_OR_ID",
                        help="the tokens, by description or id")  # fmt: skip
    add_change_options(delete, "delete")
    for each in (listing, create, delete):
        add_connection_arguments(each)
        each.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    out = Output("flagdesk pats", args.what, args.json)
    try:
        if args.what == "create":
            need_terminal(args, "the new token", "created", "create")
        elif args.what == "delete":
            need_terminal(args, "the deletion", "deleted", "delete")
        client, connection = client_from_args(args)
    except UsageError as exc:
        return out.fail(EXIT_USAGE, str(exc))
    if args.what == "list":
        return run_job(out, _list(client, out))
    if args.what == "create":
        return run_job(out, _create(args, client, connection, out))
    return run_job(out, _delete(args, client, connection, out))


def _when(value: datetime | None) -> str:
    return "" if value is None else value.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


async def _list(client: AdminClient, out: Output) -> int:
    from app.actions.personal_tokens import pat_json

    async with client:
        tokens = (await client.personal_tokens()).pats
        caps = await client.capabilities()
    out.update(server=client.base_url, user=caps.user_name, count=len(tokens),
               pats=[pat_json(t) for t in tokens])  # fmt: skip
    if not out.as_json:
        print_table(("ID", "DESCRIPTION", "EXPIRES", "CREATED", "LAST USED"),
                    [(str(t.id), t.description, _when(t.expiresAt), _when(t.createdAt),
                      _when(t.seenAt) or "never") for t in tokens])  # fmt: skip
    whose = f" of {caps.user_name}" if caps.user_name else ""
    out.say(f"{plural(len(tokens), 'personal access token')}{whose} on {client.base_url}")
    return out.done(EXIT_OK)


async def _create(args: argparse.Namespace, client: AdminClient, connection: str,
                  out: Output) -> int:  # fmt: skip
    from app.actions.personal_tokens import Created, pat_json, pat_label, plan_create, secret_end
    from app.actions.runner import carry_out, journal_of, require
    from app.registry import CREATE_PAT

    async with client:
        caps = await client.capabilities()
        require(caps, CREATE_PAT)
        journal = journal_of(connection, caps)
        try:
            plan = plan_create(args.description, args.expires, journal)
        except ValueError as exc:
            raise UsageError(f"{exc}. Nothing was created") from None
        out.update(server=plan.server, connection=connection)
        if args.dry_run:
            return dry_run(out, [plan.request], plan.server, "1 new personal access token")
        if not args.yes and not confirmed(plan.lines(), plan.question):
            return out.fail(EXIT_REFUSED, "not confirmed: nothing was created")
        created = await Created.of(client, await carry_out(client, plan))
    token = created.token
    out.update(id=token.id, token=pat_json(token), secret=token.secret, status=created.status,
               journal=str(journal.path), entry=created.entry)  # fmt: skip
    if not out.as_json:
        echo(f"Created the personal access token {pat_label(token)} on {plan.server}, expiring "
             f"{_when(token.expiresAt)} (secret ending …{secret_end(token.secret)}). Its "
             "secret, on standard output, is shown this once.", file=sys.stderr)  # fmt: skip
        echo(token.secret)
    return out.done(EXIT_OK)


async def _delete(args: argparse.Namespace, client: AdminClient, connection: str,
                  out: Output) -> int:  # fmt: skip
    from app.actions.personal_tokens import NotFound, find_tokens, pat_label, plan_delete
    from app.actions.runner import PartlyDone, carry_out, count_to_type, journal_of, require
    from app.registry import DELETE_PAT

    async with client:
        caps = await client.capabilities()
        require(caps, DELETE_PAT)
        listed = (await client.personal_tokens()).pats
        try:
            chosen = find_tokens(args.tokens, listed, client.base_url)
        except NotFound as exc:
            raise UsageError(f"{exc}. Nothing was deleted") from None
        journal = journal_of(connection, caps)
        plan = plan_delete(chosen, journal)
        out.update(server=plan.server, connection=connection)
        if args.dry_run:
            return dry_run(out, plan.requests, plan.server,
                           plural(len(chosen), "personal access token"))  # fmt: skip
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
        out.say(f"Deleted the personal access token {pat_label(token)} on {plan.server}.")
    return out.done(EXIT_OK)
