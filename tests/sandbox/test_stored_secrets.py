"""The sandbox's database is the user's alone and holds no token in clear (issue 35, item 4):
`sandbox.sqlite3` was 0644 under umask 022, with the tokens in clear. Now the database, its
-wal/-shm files and its lock are 0600, a folder made for it 0700 (the user data folder too), the
tokens are stored as hashes (printed once, as before), and an older database's tokens are
hashed in place, so a profile saved with one still connects."""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from sandbox import db
from sandbox.demo import load_demo
from sandbox.process import SandboxProcess, serve_command
from sandbox.store import Store

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX file modes")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def files_of(database: Path) -> list[Path]:
    """The database and the files SQLite keeps beside it."""
    suffixes = ("", "-wal", "-shm", "-journal")
    return [p for p in (Path(f"{database}{s}") for s in suffixes) if p.exists()]


def bytes_of(database: Path) -> bytes:
    return b"".join(p.read_bytes() for p in files_of(database))


def test_the_database_and_its_files_are_the_user_s_alone(tmp_path: Path) -> None:
    """A database in a folder of the user's choosing (`--db`: the folder must exist, and is
    left as it is; the default folder is made 0700, below): the database, its write-ahead files
    and its lock are 0600 under the usual umask."""
    folder = tmp_path / "chosen-folder"
    folder.mkdir()
    path = folder / "sandbox.sqlite3"
    old = os.umask(0o022)  # the usual umask, which made the database 0644
    try:
        with SandboxProcess(path, "--empty") as sb, sb.admin() as http:
            assert http.post("/api/admin/projects/default/features",
                             json={"name": "x"}).status_code == 201  # fmt: skip
            present = files_of(path)
            assert Path(f"{path}-wal") in present and Path(f"{path}-shm") in present
            for file in [*present, path.with_name(path.name + ".lock")]:
                assert mode(file) == 0o600, (file, oct(mode(file)))
    finally:
        os.umask(old)


def test_a_database_made_readable_by_others_is_made_private(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    db.connect(path).close()
    path.chmod(0o644)
    with SandboxProcess(path, "--empty"):
        assert mode(path) == 0o600


def test_the_default_folder_is_made_private(tmp_path: Path) -> None:
    """`flagdesk serve` without --db: the user data folder (here FLAGDESK_DATA_DIR) is 0700,
    even when it was there before, readable by others."""
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    data.chmod(0o755)
    env = {**os.environ, "FLAGDESK_DATA_DIR": str(data), "PYTHONUNBUFFERED": "1"}
    child = subprocess.Popen([*serve_command(), "--port", "0", "--empty", "--exit-with-parent"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, env=env)  # fmt: skip
    try:
        assert child.stdout is not None
        lines = []
        for line in child.stdout:
            lines.append(line)
            if "listening on" in line:
                break
        assert any("listening on" in line for line in lines), lines
        assert mode(data) == 0o700
        assert mode(data / "sandbox.sqlite3") == 0o600
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait(10)


def test_tokens_are_stored_as_hashes(tmp_path: Path) -> None:
    path = tmp_path / "hashed.sqlite3"
    with SandboxProcess(path, "--demo") as sb:
        with sb.admin() as http:
            assert http.get("/api/admin/user-admin").status_code == 200
        conn = db.connect(path)
        try:
            personal = Store(conn).create_personal_token(1)
        finally:
            conn.close()
        with httpx.Client(base_url=sb.url, headers={"Authorization": personal}) as http:
            assert http.get("/api/admin/user").status_code == 200
        stored = bytes_of(path)
        for secret in (sb.admin_token, sb.client_token, personal):
            assert secret.encode() not in stored
            assert secret.split(".")[-1].encode() not in stored


def test_a_new_database_prints_its_tokens_once_and_keeps_their_hashes(tmp_path: Path) -> None:
    path = tmp_path / "printed.sqlite3"
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLAGDESK_SANDBOX_")}
    first = subprocess.Popen([*serve_command(), "--port", "0", "--db", str(path), "--empty",
                              "--exit-with-parent"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             env=env)  # fmt: skip
    assert first.stdout is not None and first.stdin is not None
    tokens = {}
    url = ""
    for line in first.stdout:
        if "token (shown once" in line:
            tokens[line.split()[0]] = line.rsplit(" ", 1)[1].strip()
        if "listening on" in line:
            url = line.rsplit(" ", 1)[1].strip()
            break
    try:
        assert set(tokens) == {"admin", "client"}, tokens
        with httpx.Client(base_url=url, headers={"Authorization": tokens["admin"]}) as http:
            assert http.get("/api/admin/user-admin").status_code == 200
        for secret in tokens.values():
            assert secret.encode() not in bytes_of(path)
    finally:
        first.stdin.close()
        first.wait(10)
    # started again: nothing to show but how to replace them
    again = subprocess.Popen([*serve_command(), "--port", "0", "--db", str(path),
                              "--exit-with-parent"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             env=env)  # fmt: skip
    assert again.stdout is not None and again.stdin is not None
    lines = []
    for line in again.stdout:
        lines.append(line)
        if "listening on" in line:
            break
    again.stdin.close()
    again.wait(10)
    assert not any(secret in "".join(lines) for secret in tokens.values()), lines
    assert any("--admin-token T replaces it" in line for line in lines), lines


def old_database(path: Path, admin: str, client: str, personal: str) -> None:
    """A database as flagdesk made it before the tokens were hashed (schema 7), with its tokens
    in clear: the admin token user 1's, as it was then."""
    conn = sqlite3.connect(path, isolation_level=None)
    for version in range(7):
        conn.execute("BEGIN")
        for statement in db._split_sql(db.MIGRATIONS[version]):
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {version + 1}")
        conn.execute("COMMIT")
    conn.execute("PRAGMA journal_mode=WAL")
    old = Store(conn)
    old.initialise()
    load_demo(old)
    conn.execute("DELETE FROM tokens")
    for secret, kind, user_id, environment in (
        (admin, "admin", 1, None),
        (client, "client", None, "development"),
        (personal, "personal", 1, None),
    ):
        conn.execute(
            "INSERT INTO tokens(secret, kind, user_id, environment, created_at)"
            " VALUES(?, ?, ?, ?, 0)",
            (secret, kind, user_id, environment),
        )
    conn.close()


def test_an_older_database_s_tokens_are_hashed_in_place_and_still_connect(
    tmp_path: Path,
) -> None:
    """A profile saved with the token `flagdesk serve` printed still connects after the upgrade,
    and the clear tokens are gone from the files, freed pages and write-ahead log included."""
    path = tmp_path / "before.sqlite3"
    admin = "*:*.0123456789abcdef0123456789abcdef0123456789abcdef"
    client = "default:development.fedcba9876543210fedcba9876543210fedcba9876543210"
    personal = "user:00112233445566778899aabbccddeeff00112233445566"
    old_database(path, admin, client, personal)
    assert admin.encode() in bytes_of(path)
    # the embedded sandbox's way: the database's own tokens kept as they are
    with SandboxProcess(path, session_tokens=True) as sb:
        for token, route in ((admin, "/api/admin/user-admin"), (personal, "/api/admin/user")):
            with httpx.Client(base_url=sb.url, headers={"Authorization": token}) as http:
                assert http.get(route).status_code == 200, token
        with httpx.Client(base_url=sb.url, headers={"Authorization": client}) as http:
            r = http.post("/api/client/metrics/bulk", json={"applications": [], "metrics": []})
            assert r.status_code == 202
        stored = bytes_of(path)
        for secret in (admin, client, personal):
            assert secret.encode() not in stored, secret
            assert secret.split(".")[-1].encode() not in stored, secret
    assert mode(path) == 0o600


def test_the_embedded_sandbox_s_tokens_are_its_own_and_never_stored(tmp_path: Path) -> None:
    """The window's sandbox: tokens made by this process and handed to the child in its
    environment, valid for that run alone, beside the database's own; two windows on one
    database each keep theirs, and neither is ever written to it."""
    path = tmp_path / "embedded.sqlite3"
    first = SandboxProcess(path, session_tokens=True)
    assert first.admin_token.startswith("*:*.")  # known before the launch: nothing to read back
    assert first.client_token.startswith("default:development.")
    with first:
        with SandboxProcess(path, session_tokens=True) as second:
            assert second.admin_token != first.admin_token
            for sb in (first, second):
                with sb.admin() as http:
                    assert http.get("/api/admin/projects").status_code == 200
                with sb.client() as http:
                    r = http.post("/api/client/metrics/bulk",
                                  json={"applications": [], "metrics": []})  # fmt: skip
                    assert r.status_code == 202
            # a run's token is that run's alone
            with httpx.Client(base_url=second.url,
                              headers={"Authorization": first.admin_token}) as http:  # fmt: skip
                assert http.get("/api/admin/projects").status_code == 401
        with first.admin() as http:  # and after the second one has stopped
            assert http.get("/api/admin/projects").status_code == 200
        stored = bytes_of(path)
        for secret in (first.admin_token, first.client_token):
            assert secret.split(".")[-1].encode() not in stored
    conn = db.connect(path)
    try:
        assert conn.execute("SELECT count(*) FROM tokens").fetchone()[0] == 0
    finally:
        conn.close()
