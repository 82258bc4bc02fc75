"""`flagdesk journal list`: the changes flagdesk made on a connection (or on every one), read from
the journal (`app.actions.journal`), newest first, in the History's words
(`app.actions.journal_text`). It reads local files only: no server is asked, and no token is
needed. `flagdesk journal undo ENTRY`: the History's Undo, headless (`app.actions.undo` plans
it, the runner carries it out). `flagdesk journal events ENTRY`: what the server's event log
recorded of one change (`app.actions.recorded`), as the History shows it. No Qt."""

from __future__ import annotations

import argparse
from pathlib import Path
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
    echo,
    json_text,
    need_terminal,
    print_requests,
    print_table,
    run_job,
)

if TYPE_CHECKING:
    from app.actions.journal import Entry
    from app.api.client import AdminClient

DESCRIPTION = """\
The changes flagdesk made on a server, from the window or a command (metrics uploads included),
as the window's History lists them: read from the journal kept per connection in your user data
folder, newest first. No server is asked and no token is needed.

  flagdesk journal list --profile NAME [--json]
  flagdesk journal list --url URL [--json]
  flagdesk journal list --all [--json]

--profile and --url name the connection as the other commands do (a profile's journal is the
one its window and `--profile NAME` write; `--url URL` the one `--url URL` writes); --all lists
every connection's. Each line: when (local time), the connection (with --all), the change, its
items, its outcome (done, failed, or in doubt: the request went out and no answer said what came
of it), the server's HTTP status, the entry's id, and the file it names: the snapshot written
before the change, or an upload's ledger folder.

--json prints one JSON array, an object per entry, with the keys entry, time (UTC), connection,
server, token (the token's kind: tokens are never journaled), user, action, title, ids, state
("done", "failed", "in doubt"), status, message, before, request, finished and file. A
failure is said on stderr (and, with --json, as one object with error and exit_status).

exit status:
  0  listed (an empty journal too)
  2  bad usage: no --profile, --url or --all; an unknown profile; a journal that cannot be read
"""

UNDO = """\
Undo one change of a connection's journal, as the window's History does: the plan that takes it
back is made from the entry, its snapshot and what the server holds now, shown, confirmed, and
carried out like any change (journaled, as an undo of ENTRY).

  flagdesk journal undo ENTRY --profile NAME [--dry-run] [--yes] [--json]
  flagdesk journal undo ENTRY --url URL [--dry-run] [--yes] [--json]

ENTRY is an entry's id as `flagdesk journal list` prints it (its first characters do, when no
other entry starts with them). What can be undone, once done: a group's edit (put back) or
deletion (recreated from its snapshot, with a new id), a user's edit (the previous values put
back), a context field's edit or deletion, a revive of archived flags (archived again), a
personal access token's creation (the token deleted). What cannot, and says why: a deletion of
users, of flags for good or of personal access tokens, a reset link, another creation (delete
what was created instead), an entry in doubt (check it in the History first), an undo.

On a terminal it asks first; without a terminal it changes nothing unless --yes is given.
--dry-run prints the exact requests and sends nothing.

exit status:
  0  undone (or, with --dry-run, printed)
  1  the entry cannot be undone (why is said), the server refused, or the answer was no
  2  bad usage: no such entry, no terminal to ask and no --yes
  3  the server was unreachable
  4  the token was refused, or lacks what the undo needs
"""

EVENTS = """\
What the server's event log recorded of one change of a connection's journal, as the window's
History shows it below the selected change: the events its request made there (of the types
the change makes, naming what it names, made while it was under way, within two minutes each
side for the two machines' clocks), or that the server recorded none. A change in doubt (no
answer came) is one the server made if it recorded an event of it.

  flagdesk journal events ENTRY --profile NAME [--json]
  flagdesk journal events ENTRY --url URL [--json]

ENTRY is an entry's id as `flagdesk journal list` prints it (or its first characters). Each
event: its id, time (UTC), type, who made it and its summary; `flagdesk events` and the Event
log show more of each. --json prints one JSON object: entry, action, searched, since, until,
read (the events of that time read), events (each as `flagdesk events --json` gives it) and
text.

exit status:
  0  the server recorded the change (its events are listed)
  1  the server recorded no event of it, or the change makes none (a metrics upload)
  2  bad usage: no such entry
  3  the server was unreachable
  4  the token was refused, or may not read the event log
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="what", metavar="WHAT", required=True)
    listing = add_action(sub, "list", "list the changes journaled for a connection", DESCRIPTION)
    which = listing.add_argument_group("journal").add_mutually_exclusive_group()
    which.add_argument("--profile", metavar="NAME", help="the journal of a saved profile")
    which.add_argument("--url", metavar="URL",
                       help="the journal of the connection to this URL")  # fmt: skip
    which.add_argument("--all", action="store_true", help="every connection's journal")
    listing.add_argument("--json", action="store_true", help="print one JSON array")
    undo = add_action(sub, "undo", "undo one change of the journal", UNDO)
    undo.add_argument("entry", metavar="ENTRY", help="the entry's id (`flagdesk journal list`)")
    add_change_options(undo, "undo")
    add_connection_arguments(undo)
    undo.add_argument("--json", action="store_true", help="print one JSON object")
    events = add_action(sub, "events", "what the server's event log recorded of one change",
                        EVENTS)  # fmt: skip
    events.add_argument("entry", metavar="ENTRY", help="the entry's id (`flagdesk journal list`)")
    add_connection_arguments(events)
    events.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    from app.actions.journal import journal_folder

    out = Output("flagdesk journal", args.what, args.json)
    if args.what == "undo":
        try:
            need_terminal(args, "the undo", "undone", "undo")
            client, connection = client_from_args(args)
        except UsageError as exc:
            return out.fail(EXIT_USAGE, str(exc))
        return run_job(out, _undo(args, client, connection, out))
    if args.what == "events":
        try:
            client, connection = client_from_args(args)
        except UsageError as exc:
            return out.fail(EXIT_USAGE, str(exc))
        return run_job(out, _events(args, client, connection, out))
    try:
        name = "" if args.all else connection_name(args)
        journals = every_journal() if args.all else [journal_folder(name)]
        found = [(entry, folder) for folder in journals for entry in read_entries(folder)]
    except UsageError as exc:
        return out.fail(EXIT_USAGE, str(exc))
    # newest first; of two begun in the same millisecond, the one written later
    found.reverse()
    found.sort(key=lambda pair: pair[0].time, reverse=True)
    if args.json:
        from app.actions.journal_text import entry_json

        print(json_text([entry_json(e, f) for e, f in found]))
        return EXIT_OK
    print_entries(found, every=args.all)
    echo(summary([e for e, _ in found], name))
    return EXIT_OK


def every_journal() -> list[Path]:
    """The folder of every connection's journal (`--all`)."""
    from app.actions.journal import JOURNAL_FOLDER
    from app.paths import data_dir

    top = data_dir() / JOURNAL_FOLDER
    try:
        return sorted(p for p in top.iterdir() if p.is_dir())
    except FileNotFoundError:  # nothing journaled yet
        return []
    except OSError as exc:
        raise UsageError(f"cannot read {top}: {exc.strerror or exc}") from None


def connection_name(args: argparse.Namespace) -> str:
    """The name the connection's changes are journaled under, as the other commands name it:
    the profile's name (which must exist), or the URL as `--url` gives it to them."""
    if args.profile:
        from app.profiles import ProfileError, ProfileStore

        try:
            return ProfileStore().get(args.profile).name
        except ProfileError as exc:
            raise UsageError(str(exc)) from None
    if args.url:
        from app.api.client import normalise_base_url

        try:
            return normalise_base_url(args.url)
        except ValueError as exc:
            raise UsageError(f"--url: {exc}") from None
    raise UsageError("say which journal: --profile NAME, --url URL, or --all for every one")


def read_entries(folder: Path) -> list[Entry]:
    """The entries of the journal in `folder` (none when it has none yet)."""
    from app.actions.journal import JOURNAL_NAME, read_journal

    path = folder / JOURNAL_NAME
    try:
        return read_journal(path)
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None


def print_entries(found: list[tuple[Entry, Path]], *, every: bool) -> None:
    """One line per entry, under titles (nothing when there is none)."""
    from app.actions.journal_text import action_title, file_of, items_text, state_text, time_text

    if not found:
        return
    titles = ["WHEN", *(["CONNECTION"] if every else []), "CHANGE", "ITEMS", "OUTCOME", "STATUS",
              "ENTRY", "FILE"]  # fmt: skip
    rows = []
    for entry, folder in found:
        file = file_of(entry, folder)
        rows.append([
            time_text(entry), *([entry.connection] if every else []), action_title(entry),
            items_text(entry), state_text(entry),
            "" if entry.status is None else str(entry.status), entry.id,
            "" if file is None else str(file),
        ])  # fmt: skip
    print_table(titles, rows)


def summary(entries: list[Entry], name: str) -> str:
    """'3 changes on prod, 1 in doubt' ('on 2 connections' without a `name`: --all), or that
    there are none yet."""
    from app.actions.journal import State
    from app.text import plural

    where = f"on {name}" if name else "on any connection"
    if not entries:
        return f"No changes made through flagdesk {where} yet."
    if not name:
        where = f"on {plural(len({e.connection for e in entries}), 'connection')}"
    doubt = sum(1 for e in entries if e.state is State.IN_DOUBT)
    return f"{plural(len(entries), 'change')} {where}" + (f", {doubt} in doubt" if doubt else "")


async def _undo(args: argparse.Namespace, client: AdminClient, connection: str, out: Output) -> int:
    from app.actions.journal_text import action_title
    from app.actions.runner import carry_out, journal_of
    from app.actions.undo import CannotUndo, find_entry, plan_undo

    async with client:
        caps = await client.capabilities()
        journal = journal_of(connection, caps)
        try:
            entries = read_entries(journal.folder)
            entry = find_entry(entries, args.entry)
        except CannotUndo as exc:
            raise UsageError(f"{exc} ({journal.path})") from None
        out.update(server=client.base_url, connection=connection, entry=entry.id,
                   action=entry.action)  # fmt: skip
        try:
            plan = await plan_undo(client, journal, entry)
        except CannotUndo as exc:
            return out.fail(EXIT_REFUSED, str(exc))
        requests = [step.request for step in plan.steps()]
        if args.dry_run:
            print_requests(out, requests, f"Dry run: nothing was sent to {client.base_url} "
                           f"(the undo of {entry.id}).")  # fmt: skip
            return out.done(EXIT_OK)
        if not args.yes and not confirmed(plan.lines(), plan.question):
            return out.fail(EXIT_REFUSED, "not confirmed: nothing was undone")
        done = await carry_out(client, plan)
    out.update(undone=True, statuses=list(done.statuses), journal=str(done.journal),
               entries=list(done.entries))  # fmt: skip
    out.say(f"Undid entry {entry.id} ({action_title(entry)}) on {client.base_url}: the undo is "
            f"entry {', '.join(done.entries)} of {done.journal}.")  # fmt: skip
    return out.done(EXIT_OK)


async def _events(
    args: argparse.Namespace, client: AdminClient, connection: str, out: Output
) -> int:
    from app.actions.journal_text import action_title
    from app.actions.recorded import recorded
    from app.actions.runner import journal_of
    from app.actions.undo import CannotUndo, find_entry
    from app.api.events import event_json

    async with client:
        caps = await client.capabilities()
        journal = journal_of(connection, caps)
        try:
            entry = find_entry(read_entries(journal.folder), args.entry)
        except CannotUndo as exc:
            raise UsageError(f"{exc} ({journal.path})") from None
        record = await recorded(client, entry)
    out.update(server=client.base_url, connection=connection, action=entry.action,
               **record.to_json())  # fmt: skip
    out.update(events=[event_json(e) for e in record.events])
    if not args.json:
        echo(f"{action_title(entry)} ({entry.id}) on {client.base_url}: {record.text}")
        if record.events:
            print_table(["ID", "WHEN", "TYPE", "BY", "SUMMARY"], [
                [str(e.id), e.createdAt.strftime("%Y-%m-%d %H:%M:%S"), e.type,
                 e.createdBy or "", e.summary or e.label or ""] for e in record.events
            ])  # fmt: skip
    return out.done(EXIT_OK if record.events else EXIT_REFUSED)
