"""`flagdesk tokens list|create|delete|expire`: a server's API tokens (`/api/admin/api-tokens`),
creating one (its secret printed once, to standard output), deleting (revoking) some, journaled
with a snapshot first, and changing one's expiry (`app.actions.api_tokens`: never a secret,
only its last four characters). No Qt, and light to import: the client and the actions are
imported by `run()`."""

from __future__ import annotations

import argparse
from datetime import UTC, date, datetime
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
    need_terminal,
    print_table,
    run_job,
)
from app.text import plural

if TYPE_CHECKING:
    from app.api.client import AdminClient
    from app.api.models import ApiToken

DESCRIPTION = """\
API tokens of a server (GET /api/admin/api-tokens): the tokens SDKs and programs connect with.

  flagdesk tokens list [--type T] [--project P] [--json]
  flagdesk tokens create --name N --type client|frontend|backend [--project P ...]
                         [--environment E] [--expires DATE] [--dry-run] [--yes] [--json]
  flagdesk tokens delete NAME_OR_LAST_CHARS... [--dry-run] [--yes] [--json]
  flagdesk tokens expire NAME_OR_LAST_CHARS --at DATE [--dry-run] [--yes] [--json]

Secrets are masked everywhere flagdesk shows or records them (`…3f9a`: the last four
characters). `create` prints the new token's secret once, to standard output (--json holds it
too); it is never written to the log or the journal, so copy it then. `backend` tokens came with
Unleash 7.0 (before, `client` is the same token). `--environment` is development unless given
(Unleash 5 and 6 would otherwise choose their disabled `default` environment); `--project`
again for more projects, none for all of them. `--expires` takes a date (2027-01-31, midnight
UTC) or a date and time (2027-01-31T12:00:00Z).

`delete` names each token by its name where that is unique, else by the last characters of its
secret (four or more, as `list` shows them); a name or ending that fits several tokens is
refused (exit status 2) with the candidates listed. It says where each was last seen, writes a
JSON snapshot of the tokens (no secrets) to the connection's journal folder, records each
deletion in the journal, then sends DELETE /api/admin/api-tokens/SECRET for each. A deleted
token cannot be brought back. On a terminal it asks first (several: type their number); without
a terminal it changes nothing unless --yes is given. --dry-run prints the requests (secrets
masked) and sends nothing. `flagdesk journal undo ENTRY` deletes a token `create` made.

`expire` sets when a token expires (PUT /api/admin/api-tokens/SECRET {expiresAt}: the only
field, a date is required, so "never" cannot be set again); a date in the past ends the token.
`flagdesk journal undo ENTRY` puts the previous expiry back, where it had one.

exit status:
  0  listed, created, deleted, changed (or, with --dry-run, printed)
  1  the server refused (its message is printed), no token has that name or ending, or the
     answer was no
  2  bad usage: a name or ending that fits several tokens, a type this server does not have,
     no terminal to ask and no --yes
  3  the server was unreachable
  4  the token was refused or lacks the Admin root role
"""

TYPES = ("client", "frontend", "backend")
#: the fewest last characters of a secret that name a token
MIN_ENDING = 4


def _expiry(text: str) -> datetime:
    """`--expires`: a date (midnight UTC) or an ISO date and time (UTC when it says no zone)."""
    try:
        if len(text) == 10:
            day = date.fromisoformat(text)
            return datetime(day.year, day.month, day.day, tzinfo=UTC)
        when = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a date (2027-01-31) or a date and time (2027-01-31T12:00:00Z)"
        ) from None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="what", metavar="WHAT", required=True)
    listing = add_action(sub, "list", "list the API tokens (secrets masked)", DESCRIPTION)
    listing.add_argument("--type", choices=("client", "frontend", "backend", "admin"),
                         help="only tokens of this type")  # fmt: skip
    listing.add_argument("--project", metavar="P",
                         help="only tokens for project P (and for every project)")  # fmt: skip
    create = add_action(sub, "create", "create an API token (its secret printed once)",
                        DESCRIPTION)  # fmt: skip
    create.add_argument("--name", required=True, metavar="N", help="the token's name")
    create.add_argument("--type", required=True, choices=TYPES, help="the token's type")
    create.add_argument("--project", action="append", metavar="P", dest="projects",
                        help="a project it is for (again for more; none: all)")  # fmt: skip
    create.add_argument("--environment", default="development", metavar="E",
                        help="the environment it is for (default: development)")  # fmt: skip
    create.add_argument("--expires", type=_expiry, metavar="DATE",
                        help="when it expires (a date, or date and time; none: never)")  # fmt: skip
    add_change_options(create, "create")
    delete = add_action(sub, "delete", "delete (revoke) API tokens", DESCRIPTION)
    delete.add_argument("tokens", nargs="+", metavar="NAME_OR_LAST_CHARS",
                        help="a token's name, or the last characters of its secret")  # fmt: skip
    add_change_options(delete, "delete")
    expire = add_action(sub, "expire", "change when an API token expires", DESCRIPTION)
    expire.add_argument("token", metavar="NAME_OR_LAST_CHARS",
                        help="a token's name, or the last characters of its secret")  # fmt: skip
    expire.add_argument("--at", type=_expiry, required=True, metavar="DATE",
                        help="when it expires (a date, or a date and time)")  # fmt: skip
    add_change_options(expire, "change it")
    for action in (listing, create, delete, expire):
        add_connection_arguments(action)
        action.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    out = Output("flagdesk tokens", args.what, args.json)
    try:
        if args.what == "create":
            need_terminal(args, "the new token", "created", "create")
        elif args.what == "delete":
            need_terminal(args, "the deletion", "deleted", "delete")
        elif args.what == "expire":
            need_terminal(args, "the change", "changed", "change it")
        client, connection = client_from_args(args)
    except UsageError as exc:
        return out.fail(EXIT_USAGE, str(exc))
    if args.what == "list":
        return run_job(out, _list(args, client, out))
    if args.what == "create":
        return run_job(out, _create(args, client, connection, out))
    if args.what == "expire":
        return run_job(out, _expire(args, client, connection, out))
    return run_job(out, _delete(args, client, connection, out))


def _when(value: datetime | None) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M") if value is not None else ""


def _row(token: ApiToken) -> tuple[str, ...]:
    from app.actions.api_tokens import scope_text
    from app.api.client import secret_tail

    return (token.name, token.type, scope_text(token), secret_tail(token.secret or ""),
            _when(token.createdAt), _when(token.expiresAt) or "never",
            _when(token.seenAt) or "never")  # fmt: skip


TITLES = ("NAME", "TYPE", "PROJECTS / ENV", "SECRET", "CREATED", "EXPIRES", "LAST SEEN")


async def _list(args: argparse.Namespace, client: AdminClient, out: Output) -> int:
    from app.actions.api_tokens import token_facts

    async with client:
        tokens = (await client.api_tokens()).tokens
    if args.type:
        tokens = [t for t in tokens if t.type == args.type]
    if args.project:
        tokens = [t for t in tokens if args.project in t.scope or "*" in t.scope]
    out.update(server=client.base_url, count=len(tokens))
    if out.as_json:
        out.update(tokens=[token_facts(t) for t in tokens])
    else:
        print_table(TITLES, [_row(t) for t in tokens])
    out.say(f"{plural(len(tokens), 'API token')} on {client.base_url} (secrets masked)")
    return out.done(EXIT_OK)


async def _create(
    args: argparse.Namespace, client: AdminClient, connection: str, out: Output
) -> int:
    from pydantic import ValidationError

    from app import logs
    from app.actions.api_tokens import plan_create, scope_text, token_facts, type_refusal
    from app.actions.runner import carry_out, journal_of, require
    from app.api.models import ApiToken, CreateApiToken
    from app.registry import CREATE_API_TOKEN

    try:
        body = CreateApiToken(tokenName=args.name, type=args.type, environment=args.environment,
                              projects=args.projects, expiresAt=args.expires)  # fmt: skip
    except ValidationError as exc:
        said = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise UsageError(f"the token cannot be made so: {said}") from None
    async with client:
        caps = await client.capabilities()
        require(caps, CREATE_API_TOKEN)
        refusal = type_refusal(caps, args.type)
        if refusal:
            raise UsageError(refusal)
        plan = plan_create(body, journal_of(connection, caps))
        out.update(server=client.base_url, connection=connection, name=args.name)
        if args.dry_run:
            return dry_run(out, [plan.request], plan.server, f"1 new {args.type} token")
        if not args.yes and not confirmed(plan.lines(), plan.question):
            return out.fail(EXIT_REFUSED, "not confirmed: nothing was created")
        done = await carry_out(client, plan)
        token = await client.read_answer(done.answer, ApiToken)
    secret = token.secret or ""
    logs.register_secret(secret)  # whatever logs it from now on shows ***
    out.update(created=True, status=done.status, journal=str(done.journal), entry=done.entry,
               token={**token_facts(token), "secret": secret})  # fmt: skip
    out.say(f"Created {token.type} token “{token.name}” on {plan.server} for "
            f"{scope_text(token)}. Its secret, shown this once (flagdesk keeps only its last "
            "four characters):")  # fmt: skip
    out.say(secret)
    return out.done(EXIT_OK)


def _masked_list(tokens: list[ApiToken]) -> str:
    from app.actions.api_tokens import last_seen, scope_text
    from app.api.client import secret_tail

    return "; ".join(f"“{t.name}” ({t.type}, {scope_text(t)}, {secret_tail(t.secret or '')}, "
                     f"{last_seen(t)})" for t in tokens)  # fmt: skip


class NoSuchToken(Exception):
    """A name or ending that no token has."""


def resolve(tokens: list[ApiToken], asked: list[str]) -> list[ApiToken]:
    """The tokens `asked` names, each by its name where unique, else by its secret's last
    characters (at least `MIN_ENDING`); `UsageError` listing the candidates (masked) when one
    fits several, `NoSuchToken` when one fits none. Each token once, in the order asked."""
    chosen: dict[int, ApiToken] = {}
    for word in asked:
        fits = [t for t in tokens if t.name == word]
        how = "name"
        if not fits and len(word) >= MIN_ENDING:
            fits = [t for t in tokens if (t.secret or "").endswith(word)]
            how = "ending"
        if not fits:
            more = "" if len(word) >= MIN_ENDING else f" (an ending needs {MIN_ENDING} or more)"
            raise NoSuchToken(f"no API token has the name or secret ending {word!r}{more}")
        if len(fits) > 1:
            raise UsageError(
                f"{len(fits)} API tokens have the {how} {word!r}: {_masked_list(fits)}. Name one "
                "by the last characters of its secret (as `flagdesk tokens list` shows them): "
                "nothing was deleted"
            )
        chosen.setdefault(id(fits[0]), fits[0])
    return list(chosen.values())


async def _delete(
    args: argparse.Namespace, client: AdminClient, connection: str, out: Output
) -> int:
    from app.actions.api_tokens import last_seen, plan_delete, token_facts
    from app.actions.runner import PartlyDone, carry_out, journal_of, require
    from app.api.client import secret_tail
    from app.registry import DELETE_API_TOKEN

    async with client:
        caps = await client.capabilities()
        require(caps, DELETE_API_TOKEN)
        listed = (await client.api_tokens()).tokens
        try:
            tokens = resolve(listed, args.tokens)
        except NoSuchToken as exc:
            return out.fail(EXIT_REFUSED, f"{exc}: nothing was deleted")
        journal = journal_of(connection, caps)
        plan = plan_delete(tokens, journal)
        out.update(server=client.base_url, connection=connection,
                   tokens=[token_facts(t) for t in tokens])  # fmt: skip
        if args.dry_run:
            return dry_run(out, plan.requests, plan.server, plural(len(tokens), "API token"))
        lines = plan.lines()
        if not args.yes and not confirmed(lines, plan.question, plan.confirm_text):
            return out.fail(EXIT_REFUSED, "not confirmed: nothing was deleted")
        try:
            done = await carry_out(client, plan)
        except PartlyDone as exc:
            out.update(deleted=exc.done, snapshot=str(plan.snapshot), journal=str(journal.path))
            return out.fail(EXIT_REFUSED, str(exc))
    out.update(deleted=len(tokens), statuses=list(done.statuses), snapshot=str(plan.snapshot),
               journal=str(done.journal), entries=list(done.entries))  # fmt: skip
    for token in tokens:
        out.say(f"Deleted {token.type} token “{token.name}” ({secret_tail(token.secret or '')}), "
                f"{last_seen(token)}.")  # fmt: skip
    out.say(f"{plural(len(tokens), 'API token')} deleted on {plan.server}. Snapshot: "
            f"{plan.snapshot}")  # fmt: skip
    return out.done(EXIT_OK)


async def _expire(
    args: argparse.Namespace, client: AdminClient, connection: str, out: Output
) -> int:
    from app.actions.api_tokens import plan_expire, token_facts
    from app.actions.runner import carry_out, journal_of, require
    from app.actions.snapshots import wire_time
    from app.api.client import secret_tail
    from app.registry import EXPIRE_API_TOKEN

    async with client:
        caps = await client.capabilities()
        require(caps, EXPIRE_API_TOKEN)
        try:
            (token,) = resolve((await client.api_tokens()).tokens, [args.token])
        except NoSuchToken as exc:
            return out.fail(EXIT_REFUSED, f"{exc}: nothing was changed")
        plan = plan_expire(token, args.at, journal_of(connection, caps))
        out.update(server=client.base_url, connection=connection, token=token_facts(token),
                   expiresAt=wire_time(args.at))  # fmt: skip
        if args.dry_run:
            return dry_run(out, [plan.request], plan.server, f"API token “{token.name}”")
        if not args.yes and not confirmed(plan.lines(), plan.question):
            return out.fail(EXIT_REFUSED, "not confirmed: nothing was changed")
        done = await carry_out(client, plan)
    out.update(changed=True, status=done.status, journal=str(done.journal), entry=done.entry)
    was = wire_time(token.expiresAt) or "never"
    out.say(f"API token “{token.name}” ({secret_tail(token.secret or '')}) on {plan.server} "
            f"expires at {wire_time(args.at)} (was: {was}).")  # fmt: skip
    return out.done(EXIT_OK)
