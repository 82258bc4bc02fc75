"""`flagdesk cleanup report [--days N] [--json]`: what on a server can probably go (API tokens
expired, never seen or not seen for N days; the connected user's personal access tokens alike;
groups with no members; inactive users; service accounts with no token used for N days; custom
roles nobody holds), each with why and the action that removes it
(`app.api.cleanup`). Read only: nothing is changed; each finding names the command that acts
on it, through that tool's own plan, confirmation and journal. No Qt, and light to import: the
client and the report are imported by `run()`."""

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
from app.commands.output import Output, add_action, echo, print_table, run_job, whole_number
from app.text import plural

if TYPE_CHECKING:
    from app.api.cleanup import Report
    from app.api.client import AdminClient

DESCRIPTION = """\
The clean-up report of a server: what can probably go, and how.

  flagdesk cleanup report [--days N] [--json]

It lists, grouped by kind with a count each:
  - API tokens expired, never seen, or not seen for N days or more (GET /api/admin/api-tokens;
    the connection's own token is never listed; Unleash writes `seen` once a minute);
  - your personal access tokens expired, never used, or not used for N days (only with a
    personal access token: Unleash shows nobody another user's, and an admin API token has no
    user);
  - groups with no members (Unleash Enterprise and the sandbox);
  - inactive users, as the server counts them (Unleash: no login in 180 days; N does not
    change it);
  - service accounts with no token used for N days: none, none ever used, or the newest use
    N days ago or more (Unleash Enterprise and the sandbox);
  - custom roles nobody holds: a custom root role no user, service account or group has, a
    custom project role held in no project (Unleash Enterprise and the sandbox).
A part this server or token cannot give (or whose list it refuses, 403 or 404) is said in
one line, with why. Each finding says why
(`never seen, created 2026-10-01`, `last seen 41 days ago (2026-10-27)`, `expired 2026-11-02`)
and the action that removes it, with its command: `flagdesk tokens delete LAST_CHARS`,
`flagdesk pats delete ID`, `flagdesk groups delete ID`, `flagdesk users inactive delete --ids
ID...`, `flagdesk service-accounts delete ID`, `flagdesk roles delete ID` (each journaled, with
a snapshot first). API tokens are named by the last four
characters of their secret, never more.

--days N: "not seen" and "not used" mean for N days or more (default 30; 0: every token seen
before now). --json prints one object: server, days, asOf, counts (each kind looked for, 0
included), total, unavailable ([{what, kinds, reason}]), findings ([{kind, id, name, detail,
why, since, action, tool}], by kind).

exit status:
  0  the report was made (whatever it found)
  1  the server refused a read (its message is printed)
  2  bad usage
  3  the server was unreachable
  4  the token was refused or lacks the Admin root role
"""

#: the command that carries out each action a finding names (its id after it)
COMMANDS = {
    "api_tokens.delete": "flagdesk tokens delete",
    "personal_tokens.delete": "flagdesk pats delete",
    "groups.delete": "flagdesk groups delete",
    "inactive_users.delete": "flagdesk users inactive delete --ids",
    "service_accounts.delete": "flagdesk service-accounts delete",
    "roles.delete": "flagdesk roles delete",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="what", metavar="WHAT", required=True)
    report = add_action(sub, "report", "what can probably go (read only)", DESCRIPTION)
    report.add_argument("--days", type=whole_number(0, noun="number of days"), default=30,
                        metavar="N",
                        help="not seen or not used for N days or more (default 30)")  # fmt: skip
    add_connection_arguments(report)
    report.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    out = Output("flagdesk cleanup", args.what, args.json)
    try:
        client, _connection = client_from_args(args)
    except UsageError as exc:
        return out.fail(EXIT_USAGE, str(exc))
    return run_job(out, _report(args, client, out))


async def _report(args: argparse.Namespace, client: AdminClient, out: Output) -> int:
    from app.api.cleanup import cleanup_report

    async with client:
        report = await cleanup_report(client, days=args.days)
    if out.as_json:
        out.update(**report.to_json())
        return out.done(EXIT_OK)
    _print(report)
    out.say(f"{plural(len(report.findings), 'finding')} on {report.server} (nothing was changed)")
    return out.done(EXIT_OK)


def _print(report: Report) -> None:
    when = report.as_of.strftime("%Y-%m-%d %H:%M UTC")
    echo(f"Clean-up report of {report.server}, {when}; not seen or not used: "
         f"{plural(report.days, 'day')} or more")  # fmt: skip
    for kind in report.kinds:
        found = report.of_kind(kind.key)
        echo()
        if kind.action in COMMANDS:
            how = f" · {kind.action}: {COMMANDS[kind.action]} ID"
        else:
            how = f" · {kind.action or 'open ' + kind.tool}"
        echo(f"{kind.title}: {len(found):,}{how if found else ''}")
        if found:
            print_table(("ID", "NAME", "DETAIL", "WHY"),
                        [(f.id, f.name, f.detail, f.why) for f in found])  # fmt: skip
    for part in report.unavailable:
        echo()
        echo(f"{part.what[:1].upper()}{part.what[1:]}: not available here: {part.reason}")
    echo()
