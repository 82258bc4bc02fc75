"""`flagdesk promote SOURCE TARGET`: make a live server's configuration (or one environment's)
what another's is, through the plan `app.actions.promote` makes, shown whole before anything is
sent, carried out by the runner in its two stages, journaled, undone as one by `flagdesk
journal undo ENTRY`.

SOURCE is read as `flagdesk diff` reads a side (`app.commands.sides`); TARGET is a profile's
server (`PROFILE[:ENVIRONMENT]`): a file cannot be promoted to. No Qt, and light to import."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from app.commands.connection import EXIT_OK, UsageError
from app.commands.output import (
    EXIT_CANCELLED,
    EXIT_REFUSED,
    Output,
    add_change_options,
    confirmed,
    need_terminal,
    run_job,
)
from app.commands.sides import add_selection_arguments, parse_side, profile_args

if TYPE_CHECKING:
    from app.actions.promote import PromotePlan
    from app.api.client import AdminClient

__all__ = ["add_arguments", "run"]

#: a server refused a read (as `flagdesk diff` says it)
EXIT_READ_REFUSED = 5

DESCRIPTION = """\
Promote configuration from SOURCE to TARGET: make TARGET's flags (their type, description,
impression data, stale, tags, dependencies, and per environment their strategies, variants
and whether they are on), segments, context fields, tag types, custom strategies and the
environments its projects have what SOURCE's are, with the requests shown first, exactly.

  flagdesk promote SOURCE TARGET [--kinds K,K...] [--project P] [--tag TYPE:VALUE]
                   [--name GLOB] [--map-project A=B] [--map-env A=B] [--delete-extra]
                   [--dry-run] [--yes] [--json]

SOURCE is a snapshot file or a saved profile's server (read now), TARGET a saved profile's
server: a file cannot be promoted to. PROFILE:ENVIRONMENT promotes one environment:
`prod:staging prod:production` makes production's strategies, variants and on/off what
staging's are. The selection and the maps are `flagdesk diff`'s: after a promote, `flagdesk
diff SOURCE TARGET` with the same options finds nothing.

The plan comes in two stages: first what the flags need (context fields, tag types, segments,
custom strategy definitions, an environment a project lacks), then the flags (created or
changed, then their tags, dependencies, and per environment strategies, variants, on/off). A
strategy names its segments by id, so stage 2 is planned again once stage 1 has made them (a
line says `segment “Beta testers” (created in stage 1)`), and stops if it would differ from
what was shown. Strategies are matched by content, never id: promoting twice sends nothing the
second time.

Not promoted, and said why: people and access (users, groups, roles, project access, API
tokens), a project or environment the target lacks (flagdesk does not create projects), a
custom strategy the target lacks unless --kinds takes strategies, a kind a side could not read.

What only the target has stays: a promote adds and changes, it does not delete. With
--delete-extra it does: strategies deleted, flags archived, tags and dependencies removed,
segments, tag types, context fields and custom strategies deleted when nothing uses them.

Before the first request a snapshot of the target's configuration is written to the journal's
folder, and each request is journaled; `flagdesk journal undo ENTRY` (any entry of the promote)
puts back everything the promote changed: a flag it created is archived, one it changed put
back; a flag it archived is not revived (flagdesk archive revive). Ctrl+C while it sends stops
it after the request under way (none is left in doubt); a second Ctrl+C cuts it off.

  --kinds K,K      only these kinds (flagdesk diff --help lists them)
  --project P      what belongs to project P (as the target names it); again for more
  --tag TYPE:VALUE only the flags tagged so, on either side; again for more
  --name GLOB      only the objects whose name matches; again for more
  --map-project A=B, --map-env A=B
                   the source's project A (environment A) is the target's B; given, only
                   those mapped are promoted
  --delete-extra   delete what only the target has (see above)
  --dry-run        print the plan, send nothing
  --yes            do not ask (needed without a terminal)
  --json           print one JSON object: the plan (stages, requests with their bodies, what
                   is left out), and what was done

exit status:
  0  promoted, or nothing to promote (said), or --dry-run
  1  not confirmed, or the server refused a request (what went through is said; the journal
     has each)
  2  bad usage, a file that cannot be read, or the snapshot or journal could not be written
     (nothing sent)
  3  a server was unreachable
  4  a token was refused, or lacks what a promote needs (an Admin's)
  5  a server refused a read
  130  stopped by Ctrl+C (what went through is said; the journal has each)
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.description = DESCRIPTION
    parser.add_argument("source", metavar="SOURCE", help="FILE or PROFILE, [:ENVIRONMENT]")
    parser.add_argument("target", metavar="TARGET", help="PROFILE[:ENVIRONMENT]: a live server")
    add_selection_arguments(parser)
    parser.add_argument(
        "--delete-extra",
        action="store_true",
        help="delete what only the target has (off by default)",
    )
    add_change_options(parser, "promote")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    out = Output("flagdesk", "promote", args.json)
    try:
        need_terminal(args, "the promote", "promoted", "promote")
    except UsageError as exc:
        from app.commands.connection import EXIT_USAGE

        return out.fail(EXIT_USAGE, str(exc))
    return run_job(out, _promote(args, out))


async def _promote(args: argparse.Namespace, out: Output) -> int:
    from app.commands.connection import connection_from_args

    side = parse_side(args.target)
    if side.profile is None:
        raise UsageError(
            f"TARGET {args.target}: a promote writes to a live server, "
            "PROFILE[:ENVIRONMENT]; a file cannot be promoted to"
        )
    spec = connection_from_args(profile_args(side.profile))
    try:
        client = spec.client()
    except ValueError as exc:
        raise UsageError(f"profile {side.profile!r}: {exc}") from None
    async with client:
        return await _with(args, out, client, side.profile)


async def _with(args: argparse.Namespace, out: Output, client: AdminClient, profile: str) -> int:
    from app.actions.promote import (
        ImportRefused,
        Selection,
        StageTwoRefused,
        apply_promote,
        batching_for,
        plan_promote,
        segment_ids_of,
        validated,
    )
    from app.actions.runner import PartlyDone, Stopped, journal_of, require
    from app.api.errors import ApiError, Forbidden, Unauthorized
    from app.commands.sides import compare_sides
    from app.registry import PROMOTE
    from app.snapshot.read import read_snapshot

    caps = await client.capabilities()
    require(caps, PROMOTE)
    try:
        target = await read_snapshot(client)
        compared = await compare_sides(args, target=target)
        segment_ids = await segment_ids_of(client)
    except ApiError as exc:
        if isinstance(exc, (Unauthorized, Forbidden)):
            raise
        return out.fail(EXIT_READ_REFUSED, str(exc), http_status=exc.status)
    selection = Selection(
        kinds=None if compared.kinds is None else tuple(compared.kinds),
        projects=tuple(args.project) if args.project else None,
        tags=tuple(args.tag) if args.tag else None,
        names=tuple(args.name) if args.name else None,
        delete_extra=args.delete_extra,
    )
    journal = journal_of(profile, caps)
    plan = plan_promote(
        compared.source,
        target,
        compared.comparison,
        selection,
        journal,
        map_project=compared.map_project,
        map_env=compared.map_env,
        segment_ids=segment_ids,
        batching=await batching_for(client),
    )
    try:
        plan = await validated(client, plan)
    except ImportRefused as exc:
        out.update(source=args.source, target=args.target, server=client.base_url,
                   plan=plan.to_json())  # fmt: skip
        for line in plan.lines():
            out.say(line)
        return out.fail(EXIT_REFUSED, str(exc))
    except ApiError as exc:
        if isinstance(exc, (Unauthorized, Forbidden)):
            raise
        return out.fail(EXIT_READ_REFUSED, str(exc), http_status=exc.status)
    out.update(source=args.source, target=args.target, server=client.base_url, plan=plan.to_json())
    where = f"{client.base_url} (profile “{profile}”)"
    for line in plan.lines():
        out.say(line)
    if plan.nothing_to_do:
        out.say(f"Nothing to promote from {args.source} to {args.target}: nothing was sent.")
        out.update(promoted=False)
        return out.done(EXIT_OK)
    if args.dry_run:
        out.update(dry_run=True)
        out.say(f"Dry run: nothing was sent to {where}.")
        return out.done(EXIT_OK)
    question = plan.question(args.source, where)
    said = [
        f"A snapshot of the target's configuration is written first to {journal.folder}; "
        "each request is journaled, and `flagdesk journal undo ENTRY` undoes the whole "
        "promote."
    ]
    if not args.yes and not confirmed(said, question):
        return out.fail(EXIT_REFUSED, "not confirmed: nothing was promoted")
    from app.registry import PROMOTE as ACTION

    snapshot_path = journal.new_file(ACTION.key, ".json")
    entries: list[str] = []
    quiet = args.json or not sys.stderr.isatty()

    def progress(stage: int, done: int, total: int) -> None:
        if not quiet:
            print(f"  stage {stage}: {done:,} of {total:,}", file=sys.stderr)

    try:
        with stop_on_interrupt() as stopping:
            await apply_promote(client, plan, journal, snapshot_path, target, segment_ids,
                                entries, on_step=progress, stop=stopping)  # fmt: skip
    except Stopped as exc:
        out.update(entries=entries, journal=str(journal.path))
        back = (f" What went through is journaled in {journal.path}; `flagdesk journal undo "
                "ENTRY` takes it back." if exc.done or entries else "")  # fmt: skip
        return out.fail(EXIT_CANCELLED, f"stopped (Ctrl+C): {exc}.{back}")
    except StageTwoRefused as exc:
        out.update(entries=entries, journal=str(journal.path))
        return out.fail(EXIT_REFUSED, str(exc))
    except PartlyDone as exc:
        out.update(entries=entries, journal=str(journal.path))
        return out.fail(
            EXIT_REFUSED,
            f"{exc}. What went through is journaled in "
            f"{journal.path}; `flagdesk journal undo ENTRY` takes it back.",
        )
    out.update(
        promoted=True, entries=entries, journal=str(journal.path), snapshot=str(snapshot_path)
    )
    out.say(
        f"Promoted {args.source} to {where}: {plural_requests(plan)}, journaled in "
        f"{journal.path} (entries {entries[0]} to {entries[-1]}); the target as it was: "
        f"{snapshot_path}. `flagdesk journal undo {entries[0]}` takes it back."
    )
    return out.done(EXIT_OK)


@contextlib.contextmanager
def stop_on_interrupt() -> Iterator[Callable[[], bool]]:
    """While a promote sends: the first Ctrl+C asks it to stop after the request under way
    (the runner's `stop`, so no request is cut off and left in doubt), the second cuts it off
    as Ctrl+C does elsewhere. Where the event loop cannot take signals (Windows), Ctrl+C cuts
    off at once."""
    asked = [False]
    loop = asyncio.get_running_loop()

    def interrupted() -> None:
        if asked[0]:
            signal.default_int_handler(signal.SIGINT, None)  # raises KeyboardInterrupt
        asked[0] = True
        print("Stopping after the request under way (Ctrl+C again cuts it off)…",
              file=sys.stderr)  # fmt: skip

    try:
        loop.add_signal_handler(signal.SIGINT, interrupted)
    except (NotImplementedError, RuntimeError):  # Windows; a thread other than the main one
        yield lambda: False
        return
    try:
        yield lambda: asked[0]
    finally:
        loop.remove_signal_handler(signal.SIGINT)


def plural_requests(plan: PromotePlan) -> str:
    from app.text import plural

    return plural(plan.count, "request")
