"""A command whose reader goes away (`flagdesk ... | head -3`), through real pipes closed early:
it stops writing quietly, no traceback, with exit status 141 (what a shell reports for `cat` or
`grep` ended by SIGPIPE); a change it had made stays made and journaled. Listings too long for
a pipe's buffer are read in part, as `head` reads them; a change's output goes to a pipe closed
before the command starts, so its very first write fails."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.actions.journal import JOURNAL_NAME, State, journal_folder, read_journal
from sandbox.process import SandboxProcess
from tests.app.test_cli_user_admin import by_email

#: 128 + SIGPIPE
EXIT_CLOSED_PIPE = 141
#: archived flags and inactive users the big sandbox adds to the demo: the listings run to
#: hundreds of kilobytes, far more than a pipe holds (64 KiB on Linux)
SCALE = 2000


@pytest.fixture(scope="module")
def big_sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxProcess]:
    path = tmp_path_factory.mktemp("big") / "big.sqlite3"
    with SandboxProcess(path, "--demo", "--scale", str(SCALE)) as sb:
        yield sb


def environment(sb: SandboxProcess, data: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "FLAGDESK_TOKEN"}
    env["FLAGDESK_TOKEN"] = sb.admin_token
    env["FLAGDESK_DATA_DIR"] = str(data)
    return env


def read_in_part(
    sb: SandboxProcess, args: list[str], data: Path, lines: int = 3
) -> tuple[list[bytes], int, str]:
    """`flagdesk ARGS --url <sandbox> | head -LINES`: the lines read, then the pipe closed while
    the command still writes; its exit status and what it said on stderr."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "app", *args, "--url", sb.url], env=environment(sb, data),
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdout is not None
    read = [proc.stdout.readline() for _ in range(lines)]
    proc.stdout.close()
    _out, err = proc.communicate(timeout=60)
    return read, proc.returncode, err.decode()


def into_closed_pipe(
    sb: SandboxProcess | None, args: list[str], data: Path, *, stderr_too: bool = False
) -> tuple[int, str]:
    """`flagdesk ARGS` with stdout (and with `stderr_too` stderr) a pipe nobody reads any more:
    its read end is closed before the command starts. Its exit status and stderr."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    where = [] if sb is None else ["--url", sb.url]
    env = dict(os.environ) if sb is None else environment(sb, data)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "app", *args, *where], env=env, stdin=subprocess.DEVNULL,
            stdout=write_end, stderr=write_end if stderr_too else subprocess.PIPE, timeout=60,
        )  # fmt: skip
    finally:
        os.close(write_end)
    return done.returncode, "" if stderr_too else done.stderr.decode()


@pytest.mark.parametrize(
    "args",
    [
        ["archive", "list", "default", "--json"],
        ["archive", "list", "default"],
        ["users", "inactive", "--json"],
        ["users", "inactive"],
    ],
    ids=["archive-json", "archive-text", "inactive-json", "inactive-text"],
)
def test_a_listing_read_in_part_ends_quietly(
    big_sandbox: SandboxProcess, tmp_path: Path, args: list[str]
) -> None:
    read, status, said = read_in_part(big_sandbox, args, tmp_path)
    assert all(line.endswith(b"\n") for line in read), read  # the start of the listing came
    assert said == "", said  # no traceback, no "Exception ignored"
    assert status == EXIT_CLOSED_PIPE


def test_a_change_whose_output_cannot_be_written_stays_made_and_journaled(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    email = "piped.person@example.com"
    args = ["users", "create", "--email", email, "--root-role", "Viewer", "--yes", "--json"]
    status, said = into_closed_pipe(sandbox, args, tmp_path)
    assert (status, said) == (EXIT_CLOSED_PIPE, "")
    made = by_email(sandbox, email)
    assert made is not None
    entries = read_journal(journal_folder(sandbox.url, tmp_path) / JOURNAL_NAME)
    assert [(x.action, x.state, x.status) for x in entries] == [("users.create", State.DONE, 201)]

    # as text, and a change of another kind: the flags revived all the same
    status, said = into_closed_pipe(sandbox, ["archive", "revive", "web-shop", "--all",
                                              "--yes"], tmp_path)  # fmt: skip
    assert (status, said) == (EXIT_CLOSED_PIPE, "")
    entries = read_journal(journal_folder(sandbox.url, tmp_path) / JOURNAL_NAME)
    assert [(x.action, x.state) for x in entries[1:]] == [
        ("archived_features.revive_bulk", State.DONE)]  # fmt: skip


def test_help_and_failures_into_a_closed_pipe_end_quietly(
    demo_sandbox: SandboxProcess, tmp_path: Path
) -> None:
    # argparse prints the help and exits: the output is still in the buffer then
    assert into_closed_pipe(None, ["archive", "--help"], tmp_path) == (EXIT_CLOSED_PIPE, "")
    # `2>&1 | head`: the failure said on stderr, which is the closed pipe too (a second failure
    # at exit would make it 120)
    status, _ = into_closed_pipe(demo_sandbox, ["archive", "list", "nope"], tmp_path,
                                 stderr_too=True)  # fmt: skip
    assert status == EXIT_CLOSED_PIPE
