"""`flagdesk archive list|revive|delete`: a project's archived flags, reviving them and deleting
them for good (journaled, with a snapshot first: `app.actions.archived_features`). No Qt, and
light to import: the client and the actions are imported by `run()`."""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

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
    need_terminal,
    print_requests,
    print_table,
    run_job,
)
from app.text import plural

if TYPE_CHECKING:
    from app.actions.archived_features import ArchivePlan
    from app.api.client import AdminClient
    from app.api.models import ArchivedFeature

EXIT_STATUSES = """\
exit status:
  0  done (or, with --dry-run, nothing to do but print)
  1  the server refused it (its message is printed), part of it failed, or the answer was no
  2  bad usage: a project the server does not have, names that are not archived flags of the
     project, no terminal to ask and no --yes, a file that cannot be written
  3  the server was unreachable
  4  the token was refused, or cannot do this here
"""

LIST_DESCRIPTION = f"""\
List a project's archived flags (GET /api/admin/archive/features/:projectId, or the search API
on servers without it: Unleash 7 and later).

  flagdesk archive list PROJECT [--csv FILE] [--json]

{EXIT_STATUSES}"""


def _act_description(verb: str, one: str, many: str, ask: str, after: str) -> str:
    """The help page of `revive` or `delete`, its paragraphs wrapped."""
    past = _past(verb)
    paragraphs = [
        f"{verb.title()} archived flags of a project: one flag with {one}, many with {many} "
        "{features: [...]}, one request per 1,000 flags.",
        f"  flagdesk archive {verb} PROJECT (NAME ... | --all) [--dry-run] [--yes] [--json]",
        f"The project's archived flags are listed first, and only those are {past}: a name "
        "that is not an archived flag of the project is refused before anything is sent. "
        "Before the first request a JSON snapshot of the flags as listed is written to the "
        "connection's journal folder, and the journal records each request before it is sent "
        f"and the server's answer after. {ask} Without a terminal it changes nothing unless "
        f"--yes is given. --dry-run prints the exact requests and sends nothing. {after}",
    ]
    wrapped = [p if p.startswith("  ") else textwrap.fill(p, 96) for p in paragraphs]
    return "\n\n".join([*wrapped, EXIT_STATUSES])


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="verb", metavar="VERB", required=True)
    listing = add_action(sub, "list", "list a project's archived flags", LIST_DESCRIPTION)
    listing.add_argument("project", metavar="PROJECT", help="the project's id")
    add_connection_arguments(listing)
    listing.add_argument("--csv", metavar="FILE", type=Path,
                         help="write the list to FILE as CSV instead of printing it")  # fmt: skip
    listing.add_argument("--json", action="store_true", help="print one JSON object")
    for verb, helping, details in (
        ("revive", "revive archived flags", dict(
            one="POST /api/admin/archive/revive/:name",
            many="POST /api/admin/projects/:projectId/revive",
            ask="On a terminal the command asks first (y to revive).",
            after="Unleash turns every environment of a revived flag off. A revive is undone "
                  "by archiving the flags again.")),
        ("delete", "delete archived flags for good", dict(
            one="DELETE /api/admin/archive/:name",
            many="POST /api/admin/projects/:projectId/delete",
            ask="On a terminal the command asks the person to type the project's id (the "
                "flag's name for one flag); --yes stands for it.",
            after="A flag deleted for good cannot be brought back: the snapshot is what is "
                  "left of it.")),
    ):  # fmt: skip
        act = add_action(sub, verb, helping, _act_description(verb, **details))
        act.add_argument("project", metavar="PROJECT", help="the project's id")
        act.add_argument("names", nargs="*", metavar="NAME", help="the archived flags' names")
        act.add_argument("--all", action="store_true",
                         help=f"{verb} every archived flag of the project")  # fmt: skip
        add_connection_arguments(act)
        add_change_options(act, verb)
        act.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    out = Output("flagdesk archive", args.verb, args.json)
    try:
        _check_usage(args)
        client, connection = client_from_args(args)
    except UsageError as exc:
        return out.fail(EXIT_USAGE, str(exc))
    if args.verb == "list":
        return run_job(out, _list(args, client, out))
    return run_job(out, _act(args, client, connection, out))


def _check_usage(args: argparse.Namespace) -> None:
    if args.verb == "list":
        return
    if args.names and args.all:
        raise UsageError("give either the flags' names or --all, not both")
    if not args.names and not args.all:
        raise UsageError(f"say which flags to {args.verb}: NAME [NAME ...] or --all")
    need_terminal(args, "", _past(args.verb), args.verb)


def _past(verb: str) -> str:
    return "revived" if verb == "revive" else "deleted"


# ---------------------------------------------------------------------------- list


async def _require_project(client: AdminClient, project: str, nothing: str = "") -> None:
    """`UsageError` naming `project` when the server lists no project with that id (checked as
    the window checks it, against `GET /api/admin/projects`): Unleash and the sandbox answer the
    archive of a project they do not have as an empty one, and Unleash 7+ searches it the same,
    so without this a mistyped id read as "0 archived flags". `nothing` ends the message ("
    Nothing was revived."). A server that lists no projects to this token, or refuses to, is
    not second-guessed: the archive's own answer decides."""
    import difflib

    from app.api.errors import ApiError, Unauthorized

    try:
        ids = sorted((p.id for p in (await client.list_projects()).projects), key=str.casefold)
    except Unauthorized:
        raise
    except ApiError:
        return
    if not ids or project in ids:
        return
    shown = ", ".join(ids[:_PROJECTS_SHOWN])
    if len(ids) > _PROJECTS_SHOWN:
        shown += f", … ({len(ids):,} in all)"
    folded = {i.casefold(): i for i in ids}
    near = folded.get(project.casefold()) or next(
        iter(difflib.get_close_matches(project, ids, n=1, cutoff=0.75)), None
    )
    hint = f" Did you mean “{near}”?" if near else ""
    raise UsageError(
        f"no project “{project}” on {client.base_url} (its projects: {shown}).{hint}{nothing}"
    )


#: how many of a server's project ids the message about an unknown one names
_PROJECTS_SHOWN = 12


async def _list(args: argparse.Namespace, client: AdminClient, out: Output) -> int:
    from app.actions.archived_features import feature_json

    async with client:
        await _require_project(client, args.project)
        features = (await client.archived_features(args.project)).features
    out.update(server=client.base_url, project=args.project, count=len(features))
    if args.csv is not None:
        try:
            await asyncio.to_thread(_write_csv, args.csv, features)
        except OSError as exc:
            raise UsageError(f"--csv: cannot write {args.csv}: {exc.strerror or exc}") from None
        out.update(csv=str(args.csv))
        out.say(f"Wrote {plural(len(features), 'archived flag')} to {args.csv}")
    elif args.json:
        out.update(features=[feature_json(f) for f in features])
    else:
        _print_table(features)
    out.say(f"{plural(len(features), 'archived flag')} in project {args.project} on "
            f"{client.base_url}")  # fmt: skip
    return out.done(EXIT_OK)


def _write_csv(path: Path, features: list[ArchivedFeature]) -> int:
    """The list as CSV: the snapshot's fields, the environments as JSON in their cell; an
    export where the person chose: the file private as a snapshot is, its folder left alone
    (`write_whole`)."""
    from app.actions.archived_features import SNAPSHOT_FIELDS, feature_json
    from app.actions.snapshots import write_whole

    def fill(f: TextIO) -> int:
        writer = csv.writer(f)
        writer.writerow(SNAPSHOT_FIELDS)
        for feature in features:
            values = feature_json(feature)
            values["environments"] = json.dumps(values["environments"], ensure_ascii=False)
            writer.writerow(["" if values[k] is None else values[k] for k in SNAPSHOT_FIELDS])
        return len(features)

    return write_whole(path, fill, private=False)


def _print_table(features: list[ArchivedFeature]) -> None:
    from app.actions.snapshots import wire_time

    titles = ("NAME", "TYPE", "ARCHIVED", "STALE", "LAST SEEN")
    rows = [
        (f.name, f.type or "", wire_time(f.archivedAt)[:10], "yes" if f.stale else "no",
         wire_time(f.lastSeenAt)[:10])
        for f in features
    ]  # fmt: skip
    print_table(titles, rows)


# ---------------------------------------------------------------------------- revive, delete


async def _act(args: argparse.Namespace, client: AdminClient, connection: str, out: Output) -> int:
    from app.actions.archived_features import (
        BATCH,
        REVIVE,
        action_for,
        journal_of,
        plan_delete,
        plan_revive,
    )
    from app.actions.runner import PartlyDone, carry_out, require

    verb = args.verb
    async with client:
        caps = await client.capabilities()
        await _require_project(client, args.project, f" Nothing was {_past(verb)}.")
        listed = (await client.archived_features(args.project)).features
        if args.all:
            chosen = listed
        else:
            by_name = {f.name: f for f in listed}
            names = list(dict.fromkeys(args.names))
            strangers = [n for n in names if n not in by_name]
            if strangers:
                raise UsageError(
                    f"not archived flags of project {args.project} on {client.base_url}: "
                    f"{', '.join(strangers)}. Nothing was {_past(verb)} "
                    f"(`flagdesk archive list {args.project}` lists them)"
                )
            chosen = [by_name[n] for n in names]
        out.update(server=client.base_url, connection=connection, project=args.project)
        if not chosen:
            out.update(count=0, names=[])
            out.say(f"No archived flags in project {args.project} on {client.base_url}: "
                    f"nothing to {verb}.")  # fmt: skip
            return out.done(EXIT_OK)
        require(caps, action_for(verb, len(chosen)))
        journal = journal_of(connection, caps)
        plan = (plan_revive if verb == REVIVE else plan_delete)(chosen, args.project, journal)
        out.update(count=plan.count, names=plan.names)
        if args.dry_run:
            print_requests(out, plan.requests, f"Dry run: nothing was sent to {plan.server} "
                           f"({plural(plan.count, 'flag')}).")  # fmt: skip
            return out.done(EXIT_OK)
        if not args.yes and not _confirmed(plan):
            return out.fail(EXIT_REFUSED, f"not confirmed: nothing was {_past(verb)}")
        try:
            done = await carry_out(client, plan)
        except PartlyDone as exc:
            went = min(plan.count, exc.done * BATCH)
            out.update(done=went, snapshot=str(plan.snapshot), journal=str(journal.path))
            return out.fail(EXIT_REFUSED, str(exc))
    out.update(statuses=list(done.statuses), snapshot=str(plan.snapshot),
               journal=str(done.journal), entries=list(done.entries))  # fmt: skip
    flags = plural(plan.count, "flag")
    out.say(f"{flags[0].upper()}{flags[1:]} of project {plan.project} {plan.past} on "
            f"{plan.server}. Snapshot: {plan.snapshot}")  # fmt: skip
    return out.done(EXIT_OK)


def _confirmed(plan: ArchivePlan) -> bool:
    """Ask on the terminal: y to revive; the project's id (the flag's name for one) typed to
    delete for good."""
    expected = plan.confirm_text
    lines = plan.lines() if expected is None else plan.lines()[:-1]
    return confirmed(lines, plan.question, expected)
