"""`flagdesk snapshot (--profile P | --url U) [-o FILE] [--json]`: one server's configuration
now, written as one snapshot file (`app.snapshot`: `schemaVersion` 1, never a secret, mode
0600, whole or not at all), read through `app.snapshot.read`. Read only: nothing is changed on
the server, nothing journaled. No Qt, and light to import: the client and the snapshot package
are imported by `run()`."""

from __future__ import annotations

import argparse
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from app.commands.connection import (
    EXIT_OK,
    EXIT_USAGE,
    UsageError,
    add_connection_arguments,
    client_from_args,
)
from app.commands.output import Output, run_job
from app.text import plural

if TYPE_CHECKING:
    from app.api.client import AdminClient

DESCRIPTION = """\
Write one server's configuration now to a snapshot file: projects, environments, flags (with
their strategies, variants, tags and dependencies per environment), segments, context fields,
tag types, custom strategies, users, groups, roles, project access and API tokens' metadata
(never a secret: a snapshot holds no token). A snapshot opens offline: `flagdesk diff` compares
two of them, or one with itself between two environments.

  flagdesk snapshot (--profile NAME | --url URL) [-o FILE] [--json]

-o FILE   where to write it (default: flagdesk-snapshot-<profile or host>-<time>.json here);
          written whole or not at all, readable by you only (mode 0600)
--json    print one JSON object: file, server, takenAt, counts {list: n}, unread {list: why}

A list this server has not (open source has no groups nor project access) or the token may not
read is left out and named in the file's `unread`, with why; a comparison then leaves it out
and says so.

exit status:
  0  written
  1  the server refused a read (its message is printed)
  2  bad usage, or the file cannot be written
  3  the server was unreachable
  4  the token was refused or lacks the Admin root role
"""

#: each list's noun, and its plural where an "s" will not do
WORDS = {"projects": ("project", None), "environments": ("environment", None),
         "flags": ("flag", None), "segments": ("segment", None),
         "contextFields": ("context field", None), "tagTypes": ("tag type", None),
         "strategies": ("custom strategy", "custom strategies"), "users": ("user", None),
         "groups": ("group", None), "roles": ("role", None),
         "projectAccess": ("project role held", "project roles held"),
         "apiTokens": ("API token", None)}  # fmt: skip


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.description = DESCRIPTION
    add_connection_arguments(parser)
    parser.add_argument("-o", "--output", metavar="FILE", help="the snapshot file to write")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def default_name(where: str, now: datetime) -> str:
    """`flagdesk-snapshot-<where>-<UTC time>.json`, `where` reduced to safe characters (one
    rule with the window's File > Save snapshot…: `app.snapshot.files.default_name`)."""
    from app.snapshot.files import default_name as name

    return name(where, now)


def run(args: argparse.Namespace) -> int:
    out = Output("flagdesk", "snapshot", args.json)
    try:
        client, name = client_from_args(args)
    except UsageError as exc:
        return out.fail(EXIT_USAGE, str(exc))
    return run_job(out, _snapshot(args, client, name, out))


async def _snapshot(args: argparse.Namespace, client: AdminClient, name: str, out: Output) -> int:
    from app.snapshot.files import SnapshotFileError, save
    from app.snapshot.read import read_snapshot

    async with client:
        taken = await read_snapshot(client)
    path = Path(args.output or default_name(name, taken.takenAt))
    try:
        save(taken, path)
    except SnapshotFileError as exc:
        raise UsageError(f"the snapshot was not written: {exc}") from None
    counts = {name: len(getattr(taken, name)) for name in WORDS if name not in taken.unread}
    out.update(file=str(path), server=taken.server.url, version=taken.server.version,
               takenAt=taken.takenAt.isoformat(), counts=counts,
               unread=taken.unread)  # fmt: skip
    for name, why in taken.unread.items():
        out.say(f"{name} not read: {why}")
    read = ", ".join(plural(n, *WORDS[name]) for name, n in counts.items())
    out.say(f"Snapshot of {taken.server.url} (Unleash {taken.server.version}) written to "
            f"{path}: {read}")  # fmt: skip
    return out.done(EXIT_OK)
