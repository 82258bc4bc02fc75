"""The `flagdesk` command. With no arguments it starts the GUI; every subcommand is headless and
imports no Qt.

Every subcommand is a module of `app.commands` with the same pair: `add_arguments(parser)` fills
its parser and `run(args)` runs it, returning the exit status. `commands()` lists them; this
module imports the one a command line names (`Command.module`), and none of them imports this
one. The window's start (`flagdesk`, or `flagdesk -v`) parses nothing and imports no command
module: they bring the profile store, pydantic and asyncio, which cost 0.2 to 0.5 s before the
window showed (`bench/gui_startup.py` starts flagdesk through `main`, as the launcher does).
`run_gui` is the one place the command imports `ui`, lazily."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, NamedTuple, Protocol, cast

from app import __version__, startup
from app.display import window_problem

if TYPE_CHECKING:  # the window's start parses nothing: argparse is imported for a command line
    import argparse


class CommandModule(Protocol):
    """What a subcommand's module provides."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...
    def run(self, args: argparse.Namespace) -> int: ...


class Command(NamedTuple):
    """A subcommand (a named tuple: `dataclasses` imports `inspect`, which the window's start
    would pay for before the sandbox is launched and the frame shown). Its module,
    `app.commands.<name>`, is imported when the command is used (`module`): `flagdesk
    --version`, `flagdesk --help` and every command but the one given import none of the others
    (all eight took 0.25 s: the profile store, pydantic, asyncio, httpx)."""

    name: str
    help: str
    description: str

    @property
    def module(self) -> CommandModule:
        import importlib

        # a command of two words is a module of two (`service-accounts`: `service_accounts`)
        module = self.name.replace("-", "_")
        return cast("CommandModule", importlib.import_module(f"app.commands.{module}"))


@cache
def commands() -> tuple[Command, ...]:
    """The subcommands, in the order `flagdesk --help` lists them."""
    from sandbox.options import DESCRIPTION as SERVE_DESCRIPTION  # standard library only

    return (
        Command("serve", "run the embedded sandbox server", SERVE_DESCRIPTION),
        Command(
            "check",
            "connect to a server and report what works there",
            "Connect, then print the server kind and version, the token kind, and which operations "
            "are available here, each with the reason when it is not. Exit status: 0 reachable and "
            "authorised, 2 bad usage, 3 not reachable, 4 not authorised.",
        ),
        Command(
            "metrics",
            "validate metrics files, or upload them to a server",
            "Metrics batches: `validate` checks files, `upload` sends them with a client token "
            "through a ledger that `--resume` continues. Run `flagdesk metrics ACTION --help` for "
            "each.",
        ),
        Command(
            "users",
            "create or delete users, make reset links, list or delete inactive users",
            "Users of a server. `flagdesk users create|delete` creates and deletes users, "
            "`flagdesk users reset-password` makes a password reset link; "
            "`flagdesk users inactive` lists the users with no login in 180 days, "
            "`flagdesk users inactive delete` deletes some of them. Every change is journaled "
            "(deletions with a snapshot first). Run `flagdesk users WHAT --help` for the options.",
        ),
        Command(
            "archive",
            "list a project's archived flags, revive them or delete them for good",
            "Archived flags of a project. `flagdesk archive list PROJECT` lists them; `revive` and "
            "`delete` act on some or all of them, journaled, with a snapshot first. Run `flagdesk "
            "archive VERB --help` for each.",
        ),
        Command(
            "context",
            "list context fields, see which strategies use one, or delete one",
            "Context fields of a server. `flagdesk context list` lists them, "
            "`flagdesk context usage NAME` the strategies that use one, "
            "`flagdesk context delete NAME` deletes one no strategy uses, journaled, with a "
            "snapshot first. Run `flagdesk context delete --help` for the options.",
        ),
        Command(
            "groups",
            "list user groups, show one, or delete one",
            "User groups (Unleash Enterprise and the sandbox). `flagdesk groups list`, `flagdesk "
            "groups show ID` with its members, `flagdesk groups delete ID`: journaled, with a "
            "snapshot first. Run `flagdesk groups WHAT --help` for the options.",
        ),
        Command(
            "tokens",
            "list, create or delete (revoke) API tokens",
            "API tokens of a server. `flagdesk tokens list` lists them (secrets masked), "
            "`flagdesk tokens create` makes one and prints its secret once, `flagdesk tokens "
            "delete NAME_OR_LAST_CHARS...` revokes some, journaled, with a snapshot (no secrets) "
            "first. Run `flagdesk tokens WHAT --help` for the options.",
        ),
        Command(
            "pats",
            "list, create or delete your personal access tokens",
            "The personal access tokens of the user behind the connection's token (it must be "
            "one: an admin API token has no user). `flagdesk pats list`, `flagdesk pats create "
            "--description D --expires DATE` (the secret printed once, on standard output), "
            "`flagdesk pats delete DESCRIPTION_OR_ID...`: journaled. Run `flagdesk pats WHAT "
            "--help` for the options.",
        ),
        # roles (issue 36)
        Command(
            "roles",
            "list roles and their permissions; create, edit or delete custom roles",
            "The server's roles: `flagdesk roles list`, `flagdesk roles show ROLE` with its "
            "permissions, `flagdesk roles permissions` (what a role can hold), and custom roles "
            "(Unleash Enterprise) made, changed and deleted with `create`, `edit` and `delete`: "
            "journaled, with a snapshot first. Run `flagdesk roles WHAT --help` for the options.",
        ),
        # service accounts (Unleash Enterprise)
        Command(
            "service-accounts",
            "list, create, edit or delete service accounts and their tokens",
            "Service accounts of a server (Unleash Enterprise and the sandbox): `flagdesk "
            "service-accounts list|create|edit|delete` and `flagdesk service-accounts tokens "
            "list|create|delete ACCOUNT` (a token's secret printed once, on standard output), "
            "journaled. Run `flagdesk service-accounts WHAT --help` for the options.",
        ),
        # project access
        Command(
            "access",
            "who can do what where; grant, change or revoke project roles",
            "Who can do what where: `flagdesk access show --user EMAIL` (every project, the "
            "roles held and why) or `--project P` (everyone who can change it); project access "
            "(Pro, Enterprise, the sandbox): `flagdesk access grant|set|revoke --project P ...`, "
            "journaled, with a snapshot first. Run `flagdesk access WHAT --help` for the options.",
        ),
        Command(
            "journal",
            "list the changes flagdesk made on a connection (the History), or undo one",
            "The journal of the changes flagdesk made, from the window or a command, per "
            "connection: `flagdesk journal list --profile NAME | --url URL | --all`, newest "
            "first, as the window's History shows them (it reads local files only), and "
            "`flagdesk journal undo ENTRY`, the History's Undo. Run `flagdesk journal WHAT "
            "--help` for the options.",
        ),
        Command(
            "profiles",
            "list, show, add or remove connection profiles",
            "Connection profiles, shared with the window. Tokens live in the OS keyring, never in "
            "profiles.json.",
        ),
        # ---- the clean-up report (issue 36)
        Command(
            "cleanup",
            "report what can probably go: unused or expired tokens, empty groups, inactive users",
            "The clean-up report of a server (read only): `flagdesk cleanup report [--days N] "
            "[--json]` lists API tokens expired, never seen or not seen for N days, your "
            "personal access tokens alike, groups with no members and inactive users, each with "
            "why and the command that removes it. Run `flagdesk cleanup report --help`.",
        ),
        # ---- the comparison of snapshots (issue 37)
        Command(
            "diff",
            "compare two servers or snapshot files, or two environments of them",
            "The differences of SOURCE from TARGET, each a snapshot file or a profile's server "
            "read now (FILE or PROFILE, :ENVIRONMENT for one environment): projects, "
            "environments, flags and their strategies, segments, context fields, tag types, "
            "custom strategies, users, groups, roles, project access, API tokens. Exit status 0 "
            "the same, 1 they differ, 2 bad usage or an unreadable file. Run `flagdesk diff "
            "--help`.",
        ),
        Command(
            "snapshot",
            "write a server's configuration now to a snapshot file",
            "One server's configuration (flags and their configuration, segments, context "
            "fields, people and access, API tokens' metadata; never a secret) written to one "
            "file, mode 0600, that `flagdesk diff` compares offline. Run `flagdesk snapshot "
            "--help`.",
        ),
        # ---- promote (issue 37, slice 6)
        Command(
            "promote",
            "make a server's configuration (or an environment's) what another's is",
            "Promote flags and their configuration, segments, context fields, tag types and "
            "custom strategies from SOURCE (a snapshot file or a profile's server, "
            ":ENVIRONMENT for one) to TARGET (a profile's server): the exact requests shown "
            "first, in two stages, journaled, undone as one by `flagdesk journal undo ENTRY`. "
            "Run `flagdesk promote --help`.",
        ),
        # ---- the instance's settings (issue 38)
        Command(
            "stats",
            "the instance's statistics: users, flags, projects, tokens and the rest",
            "The instance's statistics as the server computes them now (`GET /api/admin/"
            "instance-admin/statistics`): `flagdesk stats [--json]`, or the server's own CSV of "
            "them with `--csv FILE`. Run `flagdesk stats --help`.",
        ),
        Command(
            "maintenance",
            "say whether the server is in maintenance mode, or switch it on or off",
            "Maintenance mode: `flagdesk maintenance` says whether it is on; `flagdesk "
            "maintenance on|off` switches it (while on, the server refuses every change), "
            "journaled, undone by `flagdesk journal undo`. Run `flagdesk maintenance --help`.",
        ),
        Command(
            "cors",
            "list or set the origins the frontend API answers (CORS)",
            "The frontend API's CORS origins: `flagdesk cors list`, `flagdesk cors set ORIGIN... "
            "| --none` (the whole list, by the server's own route), journaled, undone by "
            "`flagdesk journal undo`. Run `flagdesk cors WHAT --help`.",
        ),
        Command(
            "banners",
            "list, create, change or delete banners (Unleash Enterprise)",
            "Banners every user of the server's UI sees (Unleash Enterprise 5.7+, the sandbox): "
            "`flagdesk banners list|create|edit|delete`, journaled, with a snapshot first. Run "
            "`flagdesk banners WHAT --help`.",
        ),
        # ---- the event log (issue 38)
        Command(
            "events",
            "the server's event log: every change, by anyone, filtered; as text, JSON or CSV",
            "The server's event log, newest first: `flagdesk events [--type T] [--user U] "
            "[--project P] [--flag F] [--environment E] [--since WHEN] [--until WHEN] [--json "
            "| --csv FILE]`, through the server's search where it has one, filtered by flagdesk "
            "where it cannot (the same events). Run `flagdesk events --help`.",
        ),
        Command(
            "logins",
            "who logged in when, from where, and why a login failed (Unleash Enterprise)",
            "Login history (Unleash Enterprise 4.22+, the sandbox: `GET /api/admin/logins`, the "
            "last 14 days), newest first: `flagdesk logins [--user U] [--failed] [--json | "
            "--csv FILE]`. Run `flagdesk logins --help`.",
        ),
    )


def build_parser(given: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The command line's parser. With `given` (the arguments to parse), only the command they
    name has its arguments added (its module imported); the others are listed by name and help,
    which is all `flagdesk --help` shows of them. Without, every command's."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="flagdesk",
        description="Administer Unleash-compatible feature-flag servers. "
        "With no command, opens the window.",
    )
    parser.add_argument("--version", action="version", version=f"flagdesk {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="write more detail to the log file (debug level); a command says "
                        "where the file is")  # fmt: skip
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    # the command is the first word that is not an option: no option before it takes a value
    named = None if given is None else next((a for a in given if not a.startswith("-")), "")
    for command in commands():
        command_parser = sub.add_parser(
            command.name, help=command.help, description=command.description
        )
        if named is None or named == command.name:
            command.module.add_arguments(command_parser)
    return parser


#: what `flagdesk` takes when it opens the window
WINDOW_OPTIONS = frozenset({"-v", "--verbose"})

#: the exit status of a command whose output's reader went away (`flagdesk ... | head`):
#: 128 + SIGPIPE, what a shell reports for `cat`, `grep` or `git` ended by that signal, so a
#: pipeline under `set -o pipefail` sees flagdesk as it sees them, and a script can tell that
#: the output was cut short from a failure (1-7) or a success (0) of the command itself
EXIT_CLOSED_PIPE = 141


def main(argv: Sequence[str] | None = None) -> int:
    startup.quiet_libraries()
    given = list(sys.argv[1:] if argv is None else argv)
    if set(given) <= WINDOW_OPTIONS:  # the window: nothing to parse, no command to import
        return run_gui(verbose=bool(given))
    try:
        try:
            return run_command(given)
        finally:  # what is still buffered is written now, where a closed pipe can be caught
            if sys.stdout is not None:
                sys.stdout.flush()
    except BrokenPipeError:
        return closed_pipe()


def run_command(given: list[str]) -> int:
    args = build_parser(given).parse_args(given)
    for command in commands():
        if args.command == command.name:
            logged = start_log(given, verbose=args.verbose)
            ending = "ended by an exception"
            try:
                status = command.module.run(args)
                ending = f"exit status {status}"
                return status
            except BaseException as exc:
                ending = f"ended by {type(exc).__name__}"  # a closed pipe, Ctrl+C, a bug
                raise
            finally:
                if logged:
                    end_log(given, ending)
    return run_gui(verbose=args.verbose)


def command_words(given: Sequence[str]) -> str:
    """What the log says a command line was: its words before the first option after the
    command ("groups show 1", "users inactive delete"), never an option's value (`serve
    --admin-token T` takes a token)."""
    words = [word for word in given if word not in WINDOW_OPTIONS]
    taken = []
    for word in words:
        if word.startswith("-"):
            break
        taken.append(word)
    return "flagdesk " + " ".join(taken)


def start_log(given: Sequence[str], *, verbose: bool) -> bool:
    """A command writes the window's log (`app.logs`: rotating, private, tokens redacted):
    where it started and ended, the requests (`flagdesk.api`) and the warnings; `--verbose`
    adds the debug lines (each request's status and time) and says on stderr where the file
    is. A log that cannot be written is said once on stderr and the command runs all the same.
    Returns whether the log was set up."""
    import logging

    from app import logs

    try:
        path = logs.setup_logging(verbose)
    except OSError as exc:
        print(f"flagdesk: no log ({logs.log_dir()}: {exc.strerror or exc})", file=sys.stderr)
        return False
    logging.getLogger("flagdesk.cli").info("%s (flagdesk %s)", command_words(given), __version__)
    if verbose:
        print(f"flagdesk: debug log in {path}", file=sys.stderr)
    return True


def end_log(given: Sequence[str], ending: str) -> None:
    """How the command ended ("exit status 0", "ended by BrokenPipeError") in the log, then the
    log closed (a command run in process, as tests do, leaves logging as it found it)."""
    import logging

    from app import logs

    logging.getLogger("flagdesk.cli").info("%s: %s", command_words(given), ending)
    logs.reset_logging()


def closed_pipe() -> int:
    """The reader of the output went away (`flagdesk archive list P --json | head -3`): end
    quietly, as tools ended by SIGPIPE do, with `EXIT_CLOSED_PIPE`. What the command had done
    stays done: a change's journal entry is complete before anything about it is printed, and
    the command stops at its first write that fails. Python ignores SIGPIPE, and it stays
    ignored (its default action would also kill the process for a write to a server's closed
    socket); the failed write is a `BrokenPipeError`, caught in `main`. Standard output then
    points at the null device, so that Python's flush of what is left in its buffer at exit
    does not fail a second time ("Exception ignored ... BrokenPipeError", exit status 120).
    Standard error needs nothing: Python drops its failures at exit silently."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        if sys.stdout is not None:
            os.dup2(devnull, sys.stdout.fileno())
    finally:
        os.close(devnull)
    return EXIT_CLOSED_PIPE


def run_gui(*, verbose: bool = False) -> int:
    """Start the window: the only place `app.cli` imports `ui` (lazily, so that no subcommand
    loads Qt)."""
    problem = window_problem()
    if problem:
        print(problem, file=sys.stderr)
        return 2
    # until `ui.main_window` has built every page (app.startup)
    startup.start_without_collector()
    # the embedded sandbox, when the last run used it: the window launches it once its frame
    # is shown, and it boots on the other core while this one loads the rest
    from sandbox.process import EarlySandbox

    early = EarlySandbox.if_likely() if startup.early_sandbox() else None
    from ui.main_window import run

    return run(verbose=verbose, sandbox_factory=early)
