"""What `flagdesk diff` and `flagdesk promote` share: a side (`FILE`, `FILE:ENVIRONMENT`,
`PROFILE`, `PROFILE:ENVIRONMENT`: `parse_side`), the selection's and maps' options
(`add_selection_arguments`, `pairs`), and reading both sides and comparing them
(`compare_sides`: a file loaded, a profile's server read now, both at once; an environment on
a side is a map of environments; each mapped name one its side has). No Qt, and light to
import: pydantic, the client and the snapshot package are imported when used."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from app.commands.connection import UsageError

if TYPE_CHECKING:
    from app.snapshot.compare import Comparison
    from app.snapshot.model import Snapshot

__all__ = [
    "Compared",
    "Side",
    "add_selection_arguments",
    "compare_sides",
    "kinds_of",
    "pairs",
    "parse_side",
    "read_live",
    "read_side",
]


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


def add_selection_arguments(parser: argparse.ArgumentParser) -> None:
    """--kinds, --project, --tag, --name, --map-project, --map-env."""
    parser.add_argument("--kinds", metavar="K,K", help="only these kinds (see above)")
    parser.add_argument("--project", action="append", metavar="P", help="only project P's")
    parser.add_argument("--tag", action="append", metavar="TYPE:VALUE",
                        help="only flags with this tag")  # fmt: skip
    parser.add_argument("--name", action="append", metavar="GLOB", help="only matching names")
    parser.add_argument("--map-project", action="append", metavar="A=B",
                        help="the source's project A is the target's B")  # fmt: skip
    parser.add_argument("--map-env", action="append", metavar="A=B",
                        help="the source's environment A is the target's B")  # fmt: skip


def kinds_of(args: argparse.Namespace) -> list[str] | None:
    """--kinds as a list (None: all), each one a kind of the comparison."""
    from app.snapshot.compare import KIND_KEYS

    if args.kinds is None:
        return None
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in KIND_KEYS]
    if unknown or not kinds:
        raise UsageError(f"--kinds {args.kinds}: choose among {', '.join(KIND_KEYS)}")
    return kinds


@dataclass(frozen=True)
class Compared:
    """Both sides as read, the comparison, and the selection and maps it was made with."""

    source: Snapshot
    target: Snapshot
    comparison: Comparison
    kinds: list[str] | None
    map_project: dict[str, str]
    map_env: dict[str, str]


async def compare_sides(
    args: argparse.Namespace, *, target: Snapshot | None = None, read_kinds_only: bool = False
) -> Compared:
    """Read `args.source` and `args.target` (or take `target`, read already) and compare them
    with the selection and maps the options give. `read_kinds_only`: a server is read only for
    the kinds `--kinds` names (`flagdesk diff`; a promote reads everything, since what a flag
    needs comes with it)."""
    import asyncio

    from app.snapshot.compare import compare

    source_side, target_side = parse_side(args.source), parse_side(args.target)
    kinds = kinds_of(args)
    for tag in args.tag or ():
        if ":" not in tag.strip(":"):
            raise UsageError(f"--tag {tag}: write it as TYPE:VALUE (simple:beta)")
    map_project = pairs(args.map_project, "--map-project")
    map_env = pairs(args.map_env, "--map-env")
    if target is None:
        read = kinds if read_kinds_only else None
        theirs, ours = await asyncio.gather(read_side(source_side, read),
                                            read_side(target_side, read))  # fmt: skip
    else:
        theirs, ours = await read_side(source_side), target
    if source_side.environment or target_side.environment:
        if map_env:
            raise UsageError("--map-env and FILE:ENVIRONMENT say the same: give one of them")
        given = source_side.environment or target_side.environment
        assert given is not None
        map_env = {source_side.environment or given: target_side.environment or given}
    _check_names(map_env, theirs, ours, "environment", _environments)
    _check_names(map_project, theirs, ours, "project", _projects)
    comparison = compare(theirs, ours, kinds=kinds, projects=args.project, tags=args.tag,
                         names=args.name, map_project=map_project,
                         map_env=map_env)  # fmt: skip
    return Compared(theirs, ours, comparison, kinds, map_project, map_env)


async def read_side(side: Side, kinds: list[str] | None = None) -> Snapshot:
    """The side's snapshot: its file loaded, or its profile's server read now (for `kinds`
    only, when given: `read_snapshot`)."""
    from app.snapshot.files import SnapshotFileError, load

    if side.profile is not None:
        return await read_live(side.profile, kinds)
    assert side.file is not None
    try:
        return load(side.file)
    except SnapshotFileError as exc:
        raise UsageError(str(exc)) from None


def profile_args(profile: str) -> argparse.Namespace:
    """The connection options of the saved profile `profile` (its token from the keyring or
    the variable FLAGDESK_TOKEN)."""
    return argparse.Namespace(
        profile=profile, url=None, token_env="FLAGDESK_TOKEN",
        client_token_env="FLAGDESK_CLIENT_TOKEN", ca_bundle=None, insecure=False,
    )  # fmt: skip


async def read_live(profile: str, kinds: list[str] | None = None) -> Snapshot:
    """The server of the saved profile `profile`, read now (`UsageError` for a profile that
    is not saved, or whose token is missing: which, and how to store one)."""
    from app.commands.connection import connection_from_args
    from app.snapshot.read import read_snapshot

    spec = connection_from_args(profile_args(profile))
    try:
        client = spec.client()
    except ValueError as exc:
        raise UsageError(f"profile {profile!r}: {exc}") from None
    async with client:
        return await read_snapshot(client, kinds=kinds)


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
