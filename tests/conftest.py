from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import keyring
import keyring.backend
import keyring.errors
import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from sandbox import db
from sandbox.process import SandboxProcess
from sandbox.store import Store


@pytest.fixture(scope="session", autouse=True)
def _private_folders(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Profiles, window state, logs, the sandbox's default database and the metrics ledgers of
    the whole run in folders of their own, never the user's (child processes inherit the
    variables)."""
    saved = {
        k: os.environ.get(k)
        for k in ("FLAGDESK_CONFIG_DIR", "FLAGDESK_LOG_DIR", "FLAGDESK_DATA_DIR")
    }
    os.environ["FLAGDESK_CONFIG_DIR"] = str(tmp_path_factory.mktemp("config"))
    os.environ["FLAGDESK_DATA_DIR"] = str(tmp_path_factory.mktemp("data"))
    os.environ["FLAGDESK_LOG_DIR"] = str(tmp_path_factory.mktemp("logs"))
    yield
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture(autouse=True)
def _config_of_its_own(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Profiles and window state (`window.ini`: the page shown, column widths) per test: a
    window one test closed on a tool page made the next test's window open on that page."""
    saved = os.environ["FLAGDESK_CONFIG_DIR"]
    os.environ["FLAGDESK_CONFIG_DIR"] = str(tmp_path_factory.mktemp("config"))
    yield
    os.environ["FLAGDESK_CONFIG_DIR"] = saved


@pytest.fixture(scope="session")
def demo_sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxProcess]:
    """One sandbox with the demo data for the whole run: for tests that only read."""
    with SandboxProcess(tmp_path_factory.mktemp("demo") / "demo.sqlite3", "--demo") as sb:
        yield sb


class Spares:
    """Fresh demo sandboxes, each booted while the test before the one that takes it runs.

    A sandbox's boot (Python, Starlette, pydantic: 0.4-0.7 s of one core) and its stop (0.2-0.3 s)
    were spent, waiting, by each of the ~180 tests that use a fresh one: 3-4 minutes of the run.
    The next spare is launched as one is taken, and a finished one is stopped on a thread. Each
    is still a process and a database of its own, made for one test only."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.made = 0
        self.next: SandboxProcess | None = None
        self.stopping: list[threading.Thread] = []

    def _launch(self) -> SandboxProcess:
        self.made += 1
        spare = SandboxProcess(self.folder / f"sandbox-{self.made}.sqlite3", "--demo")
        spare.launch()
        return spare

    def take(self) -> SandboxProcess:
        taken = self.next if self.next is not None and self.next.launched else self._launch()
        self.next = self._launch()
        return taken.wait_ready()

    def give_back(self, sandbox: SandboxProcess) -> None:
        stopping = threading.Thread(target=sandbox.stop, name="sandbox-stop", daemon=True)
        stopping.start()
        self.stopping = [t for t in self.stopping if t.is_alive()] + [stopping]

    def close(self) -> None:
        if self.next is not None:
            self.next.stop()
        for stopping in self.stopping:
            stopping.join(30)


@pytest.fixture(scope="session")
def _spares(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Spares]:
    spares = Spares(tmp_path_factory.mktemp("spares"))
    yield spares
    spares.close()


@pytest.fixture
def sandbox(_spares: Spares) -> Iterator[SandboxProcess]:
    """A fresh demo sandbox of this test's own, free to change."""
    sb = _spares.take()
    try:
        yield sb
    finally:
        _spares.give_back(sb)


@pytest.fixture
def limited_sandbox(tmp_path: Path) -> Iterator[SandboxProcess]:
    """A demo sandbox of this test's own that creates one user every 2 seconds and answers
    429 past that, as Unleash limits user creation (20 a minute), only faster."""
    with SandboxProcess(tmp_path / "limited.sqlite3", "--demo", "--create-user-limit", "1",
                        "--create-user-window", "2") as sb:  # fmt: skip
        yield sb


@pytest.fixture
def personal_token() -> Callable[[SandboxProcess, str], str]:
    """A personal access token for the user with `username`, written straight into the running
    sandbox's database (the sandbox has no login page to make one through)."""

    return personal_token_of


def personal_token_of(sb: SandboxProcess, username: str) -> str:
    """A personal access token for the user with `username` of the running sandbox `sb`."""
    conn = db.connect(sb.db)
    try:
        row = conn.execute("SELECT id FROM users WHERE username = ?", (username,)).fetchone()
        assert row is not None, username
        return Store(conn).create_personal_token(int(row[0]))
    finally:
        conn.close()


#: SQL (on `sandbox.db.connect`, which has `token_hash`) that revokes the token given, as another
#: administrator would, and that gives an admin API token back (the database keeps their hashes)
REVOKE = "DELETE FROM tokens WHERE secret_hash = token_hash(?)"
RESTORE = "INSERT INTO tokens(secret_hash, kind, created_at) VALUES(token_hash(?), 'admin', 0)"


def known_flags(sb: SandboxProcess, names: Iterable[str], project: str = "default") -> None:
    """Flags named `names` in `project` of the running sandbox `sb`, written straight into its
    database in one transaction (those it has already are left as they are): the sandbox, as
    Unleash, stores no metrics of a flag it does not know, and tests upload metrics of
    hundreds of flags of their own."""
    rows = [(name, project) for name in dict.fromkeys(names)]
    conn = db.connect(sb.db)
    try:
        with conn:
            conn.executemany(
                "INSERT OR IGNORE INTO features(name, project, type, created_at)"
                " VALUES(?, ?, 'release', 0)",
                rows,
            )
            conn.executemany(
                "INSERT OR IGNORE INTO feature_environments(feature, environment, enabled)"
                " SELECT ?, name, 0 FROM environments",
                [(name,) for name, _ in rows],
            )
    finally:
        conn.close()


class MemoryKeyring(keyring.backend.KeyringBackend):
    """A keyring that keeps passwords in a dict: the OS keyring's interface, for tests."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.passwords: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.passwords.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.passwords[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if self.passwords.pop((service, username), None) is None:
            raise keyring.errors.PasswordDeleteError(username)


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)
