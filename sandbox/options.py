"""`flagdesk serve`'s options: its command-line arguments and `ServeOptions`. Standard library
only: `app.commands.serve` (imported for every `flagdesk` command) builds its parser from here, and
`python -m sandbox` (how `SandboxProcess` starts the child) parses the same arguments without the
rest of the `flagdesk` program."""

from __future__ import annotations

import argparse
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sandbox.versions import PLAYABLE

DESCRIPTION = (
    "Serve the sandbox: the admin and client-metrics API on SQLite. Tokens can also come from "
    "FLAGDESK_SANDBOX_ADMIN_TOKEN and FLAGDESK_SANDBOX_CLIENT_TOKEN, which keeps them out of "
    "the process list."
)


@dataclass
class ServeOptions:
    host: str = "127.0.0.1"
    port: int = 4242
    db: Path | None = None
    demo: bool | None = None  # None: demo data for a new database, nothing for an existing one
    scale: int = 0
    admin_token: str | None = None
    client_token: str | None = None
    inactive_days: int = 180
    exit_with_parent: bool = False  # stop when standard input closes
    #: serve the groups endpoints (open-source Unleash has none: 404)
    groups: bool = True
    #: users `POST /api/admin/user-admin` creates in a window before it answers 429, as Unleash
    #: limits it (`createUserMaxPerMinute`, 20 a minute by default); 0: no limit
    create_user_limit: int = 20
    #: that window, in seconds (a minute on Unleash; tests use a short one)
    create_user_window: float = 60.0
    #: the open-source Unleash release to play ("5.12", "6.10", "7.6", "8.2"; `sandbox.versions`)
    as_version: str | None = None
    #: the tokens given are this run's alone, held in memory beside the database's own, which
    #: stay as they are (none is made): the embedded sandbox's (FLAGDESK_SANDBOX_RUN_TOKENS=1,
    #: set by `sandbox.process.SandboxProcess`)
    run_tokens: bool = False
    # ---- `--scale` alone (issue 36): the credentials and access set
    #: plant it (`sandbox.demo.load_access_scale`; once per database)
    scale_access: bool = False


#: what `--scale` given alone (no N) stands for in the parsed arguments: the access set
ACCESS_SET = -1


def port_number(text: str) -> int:
    port = int(text)
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port (0 to 65535; 0 picks a free one)")
    return port


def at_least(low: int, noun: str) -> Callable[[str], int]:
    """An argparse `type`: a whole number from `low` up, refused with what is wrong ("-5: a
    number of users is 0 or more")."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{value}: {noun} is {low} or more")
        return value

    return parse


def seconds(text: str) -> float:
    """An argparse `type`: a time in seconds, more than 0 and finite."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text}: a time is more than 0 seconds, and finite")
    return value


def refusal(options: ServeOptions) -> str | None:
    """Why `flagdesk serve` cannot run with `options`, found before anything is made (the
    database, its tokens printed): a `--db` whose folder does not exist (it is not made: a
    mistyped path would otherwise grow folders, as root even at `/`), or an address it cannot
    listen on (not an address, not this machine's, the port taken; tried by binding it once).
    None when nothing is wrong."""
    if options.db is not None and not options.db.parent.is_dir():
        return f"--db: the folder {options.db.parent} does not exist; nothing was made"
    family = socket.AF_INET6 if ":" in options.host else socket.AF_INET  # as server.bind
    try:
        with socket.socket(family, socket.SOCK_STREAM) as trial:
            trial.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            trial.bind((options.host, options.port))
    except (OSError, UnicodeError, OverflowError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        return f"cannot listen on {options.host}:{options.port}: {reason}; nothing was made"
    return None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (loopback)")
    parser.add_argument("--port", type=port_number, default=4242,
                        help="port (0 picks a free one)")  # fmt: skip
    parser.add_argument("--db", type=Path,
                        help="database file (default: in the user data folder)")  # fmt: skip
    data = parser.add_mutually_exclusive_group()
    data.add_argument("--demo", dest="demo", action="store_const", const=True,
                      help="load the demo data into a new database (the default)")  # fmt: skip
    data.add_argument("--empty", dest="demo", action="store_const", const=False,
                      help="start a new database with no demo data")  # fmt: skip
    parser.add_argument("--scale", type=at_least(0, "a number of users and flags"), default=0,
                        nargs="?", const=ACCESS_SET, metavar="N",
                        help="with N: add N inactive users and N archived flags (benchmarks); "
                        "alone: plant the credentials and access set once (500 projects, "
                        "2,000 users in 200 groups, 10,000 API tokens, personal access "
                        "tokens, their clean-up cases: sandbox.demo.load_access_scale)",
                        )  # fmt: skip
    parser.add_argument("--admin-token", metavar="T", help="admin API token to accept")
    parser.add_argument("--client-token", metavar="C", help="client token to accept")
    parser.add_argument("--without-groups", action="store_true",
                        help="no groups endpoints, as on open-source Unleash (404)")  # fmt: skip
    parser.add_argument("--inactive-days", type=at_least(0, "a number of days"), default=180,
                        metavar="DAYS",
                        help="days without login after which a user is inactive")  # fmt: skip
    parser.add_argument("--create-user-limit", type=at_least(0, "a number of users"), default=20,
                        metavar="N",
                        help="users created per window before 429, as Unleash's "
                        "createUserMaxPerMinute (0: no limit)")  # fmt: skip
    parser.add_argument("--create-user-window", type=seconds, default=60.0, metavar="SECONDS",
                        help="the window of --create-user-limit (default 60)")  # fmt: skip
    parser.add_argument("--as-version", choices=tuple(PLAYABLE), metavar="VERSION",
                        help="play open-source Unleash " + ", ".join(PLAYABLE) + " (the "
                        "latest release of each): its version, routes, differences, no "
                        "groups")  # fmt: skip
    parser.add_argument("--exit-with-parent", action="store_true",
                        help="stop when standard input closes, which happens when the process "
                        "that started this one exits, however it exits")  # fmt: skip


def options_of(args: argparse.Namespace) -> ServeOptions:
    """The options the arguments of `add_arguments` give."""
    return ServeOptions(
        host=args.host,
        port=args.port,
        db=args.db,
        demo=args.demo,
        scale=max(args.scale, 0),
        admin_token=args.admin_token,
        client_token=args.client_token,
        inactive_days=args.inactive_days,
        exit_with_parent=args.exit_with_parent,
        groups=not args.without_groups and args.as_version is None,
        create_user_limit=args.create_user_limit,
        create_user_window=args.create_user_window,
        as_version=args.as_version,
        # `--scale` alone (issue 36)
        scale_access=args.scale == ACCESS_SET,
    )
