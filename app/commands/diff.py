"""`flagdesk diff SOURCE TARGET`: the differences of one configuration from another
(`app.snapshot`): snapshot files or live servers, whole or one environment each
(`FILE:production PROFILE:staging`). Read only: nothing changed, nothing journaled.

A side is `FILE`, `FILE:ENVIRONMENT`, `PROFILE` or `PROFILE:ENVIRONMENT` (`parse_side`); a
profile's server is read now (`app.snapshot.read`), both sides at once. No Qt, and light to
import: pydantic, the client and the snapshot package are imported by `run()`."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from app.commands.connection import EXIT_OK, EXIT_USAGE, UsageError
from app.commands.output import Output, echo, run_job

if TYPE_CHECKING:
    from app.snapshot.compare import Comparison
    from app.snapshot.model import Snapshot

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


@dataclass(frozen=True)
class Side:
    """A side of a comparison as given: a snapshot file or (later) a profile, and the one
    environment compared, if any."""

    text: str
    file: Path | None = None
    profile: str | None = None
    environment: str | None = None


_LOOKS_LIKE_A_FILE = re.compile(r"[/\\]|\.json$", re.IGNORECASE)


def parse_side(text: str) -> Side:
    """`FILE`, `FILE:ENVIRONMENT`, `PROFILE` or `PROFILE:ENVIRONMENT`. A file that exists is a
    file whatever its name holds; else what has a path separator or ends in `.json` (before
    an environment) is a file, the rest a profile's name."""
    if not text:
        raise UsageError("an empty side: give a snapshot file")
    whole = Path(text)
    if whole.is_file() or (":" not in text and _LOOKS_LIKE_A_FILE.search(text)):
        return Side(text, file=whole)
    head, colon, environment = text.rpartition(":")
    if colon and head:
        if not environment:
            raise UsageError(f"{text}: no environment after ':'")
        if Path(head).is_file() or _LOOKS_LIKE_A_FILE.search(head):
            return Side(text, file=Path(head), environment=environment)
        return Side(text, profile=head, environment=environment)
    return Side(text, profile=text)


def pairs(values: list[str] | None, option: str) -> dict[str, str]:
    """`A=B` options as {A: B}."""
    found: dict[str, str] = {}
    for value in values or ():
        left, equals, right = value.partition("=")
        if not (equals and left and right):
            raise UsageError(f"{option} {value}: write it as SOURCE_NAME=TARGET_NAME")
        if found.get(left, right) != right:
            raise UsageError(f"{option}: {left} is mapped twice ({found[left]}, {right})")
        found[left] = right
    return found


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.description = DESCRIPTION
    parser.add_argument("source", metavar="SOURCE", help="FILE or PROFILE, [:ENVIRONMENT]")
    parser.add_argument("target", metavar="TARGET", help="FILE or PROFILE, [:ENVIRONMENT]")
    parser.add_argument("--kinds", metavar="K,K", help="only these kinds (see above)")
    parser.add_argument("--project", action="append", metavar="P", help="only project P's")
    parser.add_argument("--tag", action="append", metavar="TYPE:VALUE",
                        help="only flags with this tag")  # fmt: skip
    parser.add_argument("--name", action="append", metavar="GLOB", help="only matching names")
    parser.add_argument("--map-project", action="append", metavar="A=B",
                        help="the source's project A is the target's B")  # fmt: skip
    parser.add_argument("--map-env", action="append", metavar="A=B",
                        help="the source's environment A is the target's B")  # fmt: skip
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
    import asyncio
    from dataclasses import replace

    from app.snapshot.compare import KIND_KEYS, compare

    source, target = parse_side(args.source), parse_side(args.target)
    kinds = None
    if args.kinds is not None:
        kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
        unknown = [k for k in kinds if k not in KIND_KEYS]
        if unknown or not kinds:
            raise UsageError(f"--kinds {args.kinds}: choose among {', '.join(KIND_KEYS)}")
    for tag in args.tag or ():
        if ":" not in tag.strip(":"):
            raise UsageError(f"--tag {tag}: write it as TYPE:VALUE (simple:beta)")
    map_project = pairs(args.map_project, "--map-project")
    map_env = pairs(args.map_env, "--map-env")
    theirs, ours = await asyncio.gather(_read(source), _read(target))
    if source.environment or target.environment:
        if map_env:
            raise UsageError("--map-env and FILE:ENVIRONMENT say the same: give one of them")
        given = source.environment or target.environment
        assert given is not None
        map_env = {source.environment or given: target.environment or given}
    _check_names(map_env, theirs, ours, "environment", _environments)
    _check_names(map_project, theirs, ours, "project", _projects)
    comparison = compare(theirs, ours, kinds=kinds, projects=args.project, tags=args.tag,
                         names=args.name, map_project=map_project,
                         map_env=map_env)  # fmt: skip
    return replace(comparison, source=args.source, target=args.target)


async def _read(side: Side) -> Snapshot:
    """The side's snapshot: its file loaded, or its profile's server read now."""
    from app.snapshot.files import SnapshotFileError, load

    if side.profile is not None:
        return await _read_live(side.profile)
    assert side.file is not None
    try:
        return load(side.file)
    except SnapshotFileError as exc:
        raise UsageError(str(exc)) from None


async def _read_live(profile: str) -> Snapshot:
    """The server of the saved profile `profile`, read now (`UsageError` for a profile that
    is not saved, or whose token is missing: which, and how to store one)."""
    from app.commands.connection import connection_from_args
    from app.snapshot.read import read_snapshot

    spec = connection_from_args(argparse.Namespace(
        profile=profile, url=None, token_env="FLAGDESK_TOKEN",
        client_token_env="FLAGDESK_CLIENT_TOKEN", ca_bundle=None, insecure=False,
    ))  # fmt: skip
    try:
        client = spec.client()
    except ValueError as exc:
        raise UsageError(f"profile {profile!r}: {exc}") from None
    async with client:
        return await read_snapshot(client)


def _environments(snapshot: Snapshot) -> list[str]:
    return [e.name for e in snapshot.environments]


def _projects(snapshot: Snapshot) -> list[str]:
    return [p.id for p in snapshot.projects]


def _check_names(
    mapping: dict[str, str],
    source: Snapshot,
    target: Snapshot,
    noun: str,
    names: Callable[[Snapshot], list[str]],
) -> None:
    """Each name a map (or FILE:ENVIRONMENT) gives is one its side has: a typo compares
    nothing, which would look like "the same"."""
    for side, snapshot, wanted in (("source", source, mapping.keys()),
                                   ("target", target, mapping.values())):  # fmt: skip
        known = names(snapshot)
        for name in wanted:
            if name not in known:
                raise UsageError(f"the {side} has no {noun} {name!r} (it has "
                                 f"{', '.join(known) or 'none'})")  # fmt: skip
