"""`flagdesk diff SOURCE TARGET`: the differences of one configuration from another
(`app.snapshot`): snapshot files or live servers, whole or one environment each
(`FILE:production PROFILE:staging`). Read only: nothing changed, nothing journaled.

A side is `FILE`, `FILE:ENVIRONMENT`, `PROFILE` or `PROFILE:ENVIRONMENT` (`parse_side`); a
profile's server is read now (`app.snapshot.read`), both sides at once. No Qt, and light to
import: pydantic, the client and the snapshot package are imported by `run()`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from app.commands.connection import EXIT_OK, EXIT_USAGE
from app.commands.output import Output, echo, run_job
from app.commands.sides import Side, add_selection_arguments, compare_sides, pairs, parse_side

__all__ = ["Side", "add_arguments", "pairs", "parse_side", "run"]

if TYPE_CHECKING:
    from app.snapshot.compare import Comparison

#: the sides differ
EXIT_DIFFERENT = 1
#: a server refused a read (not 1: a drift check must not take a refusal for a difference)
EXIT_READ_REFUSED = 5

DESCRIPTION = """\
The differences of SOURCE from TARGET: projects, environments, flags (with their strategies,
variants, tags and dependencies per environment), segments, context fields, tag types, custom
strategies, users, groups, roles, project access and API tokens (never a secret).

  flagdesk diff SOURCE TARGET [--kinds K,K...] [--project P] [--tag TYPE:VALUE] [--name GLOB]
                [--map-project A=B] [--map-env A=B] [--json | --markdown FILE]

SOURCE and TARGET are snapshot files (`schemaVersion` 1, as `flagdesk snapshot` writes them)
or saved connection profiles, whose servers are read now. FILE:ENVIRONMENT or
PROFILE:ENVIRONMENT compares one environment: `prod:production prod:staging` shows how
production differs from staging; a side without an environment takes the other's name. A
snapshot saved yesterday against the server today answers "what changed since" (drift). A
list a side could not read (open source has no groups) is left out, and said.

Objects are matched by name (a flag by its name, a user by email, ...), never by id; a flag's
strategies by content (name, title and place, then name), so a strategy's id never counts. A
value shown as `A → B` is the target's, then the source's.

  --kinds K,K      only these kinds: projects, environments, flags, segments, context-fields,
                   tag-types, strategies, users, groups, roles, project-access, api-tokens
  --project P      what belongs to project P (projects, flags, segments, project access, API
                   tokens; the other kinds whole); again for more
  --tag TYPE:VALUE only the flags tagged so, on either side; again for more
  --name GLOB      only the objects whose name matches (`checkout-*`, `web-shop/*`); again
                   for more
  --map-project A=B, --map-env A=B
                   the source's project A (environment A) is the target's B; given, only the
                   projects (environments) mapped are compared
  --json           print the comparison as one JSON object: source, target, same, kinds,
                   total, counts {kind: {change: n}}, differences [{kind, object, path, key,
                   change, old, new}] (old: the target's value, new: the source's)
  --markdown FILE  also write the comparison as Markdown (a table per kind) to FILE (`-`:
                   standard output instead of the text)

exit status:
  0  the same
  1  they differ
  2  bad usage, or a file that cannot be read (which file, where in it, what is wrong)
  3  a server was unreachable
  4  a profile's token was refused
  5  a server refused a read (its message is printed)
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.description = DESCRIPTION
    parser.add_argument("source", metavar="SOURCE", help="FILE or PROFILE, [:ENVIRONMENT]")
    parser.add_argument("target", metavar="TARGET", help="FILE or PROFILE, [:ENVIRONMENT]")
    add_selection_arguments(parser)
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument("--json", action="store_true", help="print one JSON object")
    shown.add_argument("--markdown", metavar="FILE", help="write Markdown to FILE (`-`: print it)")


def run(args: argparse.Namespace) -> int:
    out = Output("flagdesk", "diff", args.json)
    return run_job(out, _diff(args, out))


async def _diff(args: argparse.Namespace, out: Output) -> int:
    from app.api.errors import ApiError, Forbidden, Unauthorized

    try:
        comparison = await _compare(args)
    except ApiError as exc:
        if isinstance(exc, (Unauthorized, Forbidden)):
            raise
        return out.fail(EXIT_READ_REFUSED, str(exc), http_status=exc.status)
    status = EXIT_OK if comparison.same else EXIT_DIFFERENT
    if out.as_json:
        out.update(**comparison.to_json())
        return out.done(status)
    if args.markdown == "-":
        for line in comparison.to_markdown().splitlines():
            echo(line)
        return status
    if args.markdown:
        from app.snapshot.files import SnapshotFileError, write_private

        try:
            write_private(Path(args.markdown), comparison.to_markdown())
        except SnapshotFileError as exc:
            return out.fail(EXIT_USAGE, f"the Markdown was not written: {exc}")
    for line in comparison.text_lines():
        echo(line)
    if args.markdown:
        echo(f"Markdown written to {args.markdown}")
    return status


async def _compare(args: argparse.Namespace) -> Comparison:
    from dataclasses import replace

    compared = await compare_sides(args, read_kinds_only=True)
    return replace(compared.comparison, source=args.source, target=args.target)
