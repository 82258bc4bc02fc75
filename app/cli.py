"""The `flagdesk` command. With no arguments it starts the GUI; every subcommand is headless and
imports no Qt."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from app import __version__


def port_number(text: str) -> int:
    port = int(text)
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port (0 to 65535; 0 picks a free one)")
    return port


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="flagdesk",
        description="Administer Unleash-compatible feature-flag servers. "
        "With no command, opens the window.",
    )
    parser.add_argument("--version", action="version", version=f"flagdesk {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="write more detail to the log file (debug level)")  # fmt: skip
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    serve = sub.add_parser(
        "serve",
        help="run the embedded sandbox server",
        description="Serve the sandbox: the admin and client-metrics API on SQLite. Tokens can "
        "also come from FLAGDESK_SANDBOX_ADMIN_TOKEN and FLAGDESK_SANDBOX_CLIENT_TOKEN, which "
        "keeps them out of the process list.",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (loopback)")
    serve.add_argument("--port", type=port_number, default=4242, help="port (0 picks a free one)")
    serve.add_argument("--db", type=Path, help="database file (default: in the user data folder)")
    data = serve.add_mutually_exclusive_group()
    data.add_argument("--demo", dest="demo", action="store_const", const=True,
                      help="load the demo data into a new database (the default)")  # fmt: skip
    data.add_argument("--empty", dest="demo", action="store_const", const=False,
                      help="start a new database with no demo data")  # fmt: skip
    serve.add_argument("--scale", type=int, default=0, metavar="N",
                       help="add N users and N archived flags (benchmarks)")  # fmt: skip
    serve.add_argument("--admin-token", metavar="T", help="admin API token to accept")
    serve.add_argument("--client-token", metavar="C", help="client token to accept")
    serve.add_argument("--without-groups", action="store_true",
                       help="no groups endpoints, as on open-source Unleash (404)")  # fmt: skip
    serve.add_argument("--inactive-days", type=int, default=180, metavar="DAYS",
                       help="days without login after which a user is inactive")  # fmt: skip
    serve.add_argument("--exit-with-parent", action="store_true",
                       help="stop when standard input closes, which happens when the process "
                       "that started this one exits, however it exits")  # fmt: skip
    check = sub.add_parser(
        "check",
        help="connect to a server and report what works there",
        description="Connect, then print the server kind and version, the token kind, and which "
        "operations are available here, each with the reason when it is not. Exit status: 0 "
        "reachable and authorised, 2 bad usage, 3 not reachable, 4 not authorised.",
    )
    add_connection_arguments(check)
    check.add_argument("--json", action="store_true", help="print one JSON object")

    from app.commands import metrics

    metrics.add_arguments(
        sub.add_parser(
            "metrics",
            help="validate metrics files, or upload them to a server",
            description="Metrics batches: `validate` checks files, `upload` sends them with a "
            "client token through a ledger that `--resume` continues. "
            "Run `flagdesk metrics ACTION --help` for each.",
        )
    )

    from app.commands import profiles

    profiles.add_arguments(
        sub.add_parser(
            "profiles",
            help="list, show, add or remove connection profiles",
            description="Connection profiles, shared with the window. Tokens live in the OS "
            "keyring, never in profiles.json.",
        )
    )
    return parser


def add_connection_arguments(parser: argparse.ArgumentParser) -> None:
    """`--profile NAME`, or `--url URL` with the tokens read from environment variables (a token
    in argv would show in the process list and the shell history)."""
    where = parser.add_argument_group("connection")
    where.add_argument("--profile", metavar="NAME", help="a saved connection profile")
    where.add_argument("--url", metavar="URL", help="the server's base URL")
    where.add_argument("--token-env", metavar="VAR", default="FLAGDESK_TOKEN",
                       help="environment variable holding the admin API token or personal "
                       "access token (default: FLAGDESK_TOKEN)")  # fmt: skip
    where.add_argument("--client-token-env", metavar="VAR", default="FLAGDESK_CLIENT_TOKEN",
                       help="environment variable holding a client token, for metrics "
                       "(default: FLAGDESK_CLIENT_TOKEN; optional)")  # fmt: skip
    where.add_argument("--ca-bundle", metavar="FILE", help="trust this CA bundle as well")
    where.add_argument("--insecure", action="store_true",
                       help="INSECURE: do not verify the server's TLS certificate")  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "serve":
        from sandbox.server import ServeOptions, serve

        return serve(
            ServeOptions(
                host=args.host,
                port=args.port,
                db=args.db,
                demo=args.demo,
                scale=args.scale,
                admin_token=args.admin_token,
                client_token=args.client_token,
                inactive_days=args.inactive_days,
                exit_with_parent=args.exit_with_parent,
                groups=not args.without_groups,
            )
        )
    if args.command == "profiles":
        from app.commands import profiles

        return profiles.run(args)
    if args.command == "check":
        from app.commands import check

        return check.run(args)
    if args.command == "metrics":
        from app.commands import metrics

        return metrics.run(args)
    return run_gui(verbose=args.verbose)


def has_display() -> bool:
    platform = os.environ.get("QT_QPA_PLATFORM", "")
    if platform.startswith(("offscreen", "minimal", "vnc", "eglfs", "linuxfb")):
        return True
    if sys.platform != "linux":
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def run_gui(*, verbose: bool = False) -> int:
    if not has_display():
        print(
            "flagdesk: no display found (DISPLAY is not set): run `xvfb-run make run` for a "
            "virtual screen, or `flagdesk serve` for the sandbox server alone.",
            file=sys.stderr,
        )
        return 2
    from ui.main_window import run

    return run(verbose=verbose)
