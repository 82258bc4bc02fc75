"""What the journal writes is private whatever the umask: every action's snapshot (JSON of users,
flags, groups and fields; the CSV of inactive users: names and emails), the journal file, and
the folders they are in, made by the commands that change a server, as subprocesses against a
sandbox over HTTP: files 0600, folders 0700 (the folders missing on the way, the data folder
included, are made so too). A journal an older flagdesk left readable becomes private at the
next change."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from app.actions.journal import JOURNAL_FOLDER, JOURNAL_NAME, journal_folder, read_journal
from sandbox.process import SandboxProcess

LEON_ID = 39  # inactive in the demo
USER_ID = 5  # a demo user who is not an Admin
PLATFORM = 1  # a demo group
UNUSED_FIELD = "tenantId"  # a demo context field no strategy uses

#: one change of each action that writes a snapshot, each of a file kind of its own
CHANGES = (
    ("users", "delete", str(USER_ID)),
    ("users", "inactive", "delete", "--ids", str(LEON_ID)),
    ("archive", "revive", "web-shop", "--all"),
    ("context", "delete", UNUSED_FIELD),
    ("groups", "delete", str(PLATFORM)),
)


def change(sb: SandboxProcess, args: tuple[str, ...], data: Path, umask: int) -> None:
    env = {k: v for k, v in os.environ.items() if k != "FLAGDESK_TOKEN"}
    env["FLAGDESK_TOKEN"] = sb.admin_token
    env["FLAGDESK_DATA_DIR"] = str(data)
    done = subprocess.run(
        [sys.executable, "-m", "app", *args, "--yes", "--url", sb.url], env=env, umask=umask,
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, (args, done.stdout, done.stderr)


def modes(top: Path) -> dict[str, str]:
    """The permission bits of `top` and of everything under it, by path relative to `top`'s
    parent."""
    found = {top.name: oct(stat.S_IMODE(top.stat().st_mode))}
    for path in sorted(top.rglob("*")):
        found[str(path.relative_to(top.parent))] = oct(stat.S_IMODE(path.stat().st_mode))
    return found


def test_every_snapshot_the_journal_and_their_folders_are_private_whatever_the_umask(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    data = tmp_path / "data"  # missing: the first change makes it
    for args in CHANGES:
        change(sandbox, args, data, umask=0)  # a umask that takes nothing away
    folder = journal_folder(sandbox.url, data)
    entries = read_journal(folder / JOURNAL_NAME)
    assert len(entries) == len(CHANGES)
    files = sorted(p.name for p in folder.iterdir())
    snapshots = [name for name in files if name != JOURNAL_NAME]
    assert len(snapshots) == len(CHANGES)  # and no .part left over
    assert {Path(name).suffix for name in snapshots} == {".json", ".csv"}
    found = modes(data)
    assert {path: mode for path, mode in found.items() if mode != "0o600"} == {
        "data": "0o700",
        f"data/{JOURNAL_FOLDER}": "0o700",
        f"data/{JOURNAL_FOLDER}/{folder.name}": "0o700",
    }
    assert len(found) == 3 + len(CHANGES) + 1


def test_a_journal_left_readable_becomes_private_at_the_next_change(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    folder = journal_folder(sandbox.url, data)
    folder.mkdir(parents=True)
    for made in (data, data / JOURNAL_FOLDER, folder):
        made.chmod(0o755)
    (folder / JOURNAL_NAME).write_text("")
    (folder / JOURNAL_NAME).chmod(0o644)
    change(sandbox, CHANGES[0], data, umask=0o022)
    found = modes(data / JOURNAL_FOLDER)
    assert found.pop(JOURNAL_FOLDER) == "0o700"
    assert found.pop(f"{JOURNAL_FOLDER}/{folder.name}") == "0o700"
    assert set(found.values()) == {"0o600"} and len(found) == 2  # the journal, the snapshot
    # the data folder is not the journal's: what it was made as, it stays
    assert oct(stat.S_IMODE(data.stat().st_mode)) == "0o755"
