"""Run a real `flagdesk serve` in a child process on a free loopback port: for the GUI's embedded
sandbox, tests and benchmarks. The tokens are made here and travel in the environment, never in
argv, nor back from the database (which keeps their hashes alone).

By default the child is started with `--exit-with-parent` and a pipe on its standard input whose
write end only this process holds: when this process ends, however it ends (a SIGKILL or a
segfault included), the pipe closes and the child shuts down by itself, so no orphan server is
left listening. Closing the pipe is also how `stop()` asks the child to stop.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx

#: lines of the child's output kept (the oldest go first)
OUTPUT_LINES = 200

log = logging.getLogger("flagdesk.sandbox")


class SandboxProcess:
    def __init__(self, db: Path, *args: str, admin_token: str | None = None,
                 client_token: str | None = None, exit_with_parent: bool = True,
                 session_tokens: bool = False) -> None:  # fmt: skip
        """`exit_with_parent`: the child stops when this process exits, however it exits.

        The tokens are made here (unless given) and handed to the child in its environment:
        known before the launch, never read back (the database keeps their hashes alone).
        By default they replace the database's own. `session_tokens`: they are the child's
        for this run alone, held in its memory beside the database's own tokens, which stay as
        they are, so that several processes can serve the same database at once (two windows),
        each with tokens of its own, and a token printed once by `flagdesk serve` (and saved in
        a profile) keeps working; the database never holds them."""
        if session_tokens and (admin_token or client_token):
            raise ValueError("session_tokens makes tokens of its own; give no token")
        self.db = Path(db)
        self.args = list(args)
        self.exit_with_parent = exit_with_parent
        self.session_tokens = session_tokens
        # os.urandom, as `secrets.token_hex` (whose import, 5 ms, the window would wait for)
        self.admin_token = admin_token or "*:*." + os.urandom(24).hex()
        self.client_token = client_token or "default:development." + os.urandom(24).hex()
        self.proc: subprocess.Popen[str] | None = None
        self.url = ""
        self._lines: collections.deque[str] = collections.deque(maxlen=OUTPUT_LINES)
        self._lock = threading.Lock()
        self._listening = threading.Event()  # set once the URL is known, or at end of output
        #: `wait_ready()` saw the child answer /health
        self._ready = False
        self._reader: threading.Thread | None = None
        #: when `launch()` started the child, and when it printed its address (time.monotonic)
        self._launched_at = self._listening_at = 0.0
        #: how the last stop() ended the child: "stdin" (closed, as when the GUI exits),
        #: "SIGTERM" or "SIGKILL"; "" before any stop
        self.stopped_by = ""

    @property
    def output(self) -> list[str]:
        """The last OUTPUT_LINES lines the child printed (stdout and stderr), newline included."""
        with self._lock:
            return list(self._lines)

    def start(self, timeout: float = 30.0) -> SandboxProcess:
        """Start the child (unless `launch()` did) and return once it answers /health.
        Blocking: call it off the GUI thread. Raises RuntimeError (with the child's output) when
        it does not come up."""
        if self.proc is None or self.proc.poll() is not None:
            self.launch()
        return self.wait_ready(timeout)

    def launch(self) -> None:
        """Start the child process and return at once (it takes a few tenths of a second to
        serve: `wait_ready()` waits for that). The GUI launches its sandbox before it loads
        its own pages, so both happen at the same time."""
        env = dict(os.environ)
        env["FLAGDESK_SANDBOX_ADMIN_TOKEN"] = self.admin_token
        env["FLAGDESK_SANDBOX_CLIENT_TOKEN"] = self.client_token
        env["FLAGDESK_SANDBOX_RUN_TOKENS"] = "1" if self.session_tokens else ""
        env["PYTHONUNBUFFERED"] = "1"
        argv = [*serve_command(), "--port", "0", "--db", str(self.db)]
        if self.exit_with_parent:
            argv.append("--exit-with-parent")
        self.url = ""
        self.stopped_by = ""
        self._listening.clear()
        self._ready = False
        self._launched_at = time.monotonic()
        self.proc = subprocess.Popen(
            [*argv, *self.args],
            # the write end of this pipe stays open, unused, for the child's lifetime
            stdin=subprocess.PIPE if self.exit_with_parent else None,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            env=env,
        )
        # read the child's output for as long as it runs: a child blocked on a full pipe would
        # stop answering
        self._reader = threading.Thread(
            target=self._read_output, args=(self.proc,), name="sandbox-output", daemon=True
        )
        self._reader.start()

    @property
    def launched(self) -> bool:
        """`launch()` was called and the child has not exited."""
        return self.proc is not None and self.proc.poll() is None

    def wait_ready(self, timeout: float = 30.0) -> SandboxProcess:
        """Wait until the launched child answers /health (blocking)."""
        deadline = time.monotonic() + timeout
        if not self._listening.wait(timeout):
            raise RuntimeError("sandbox did not start:\n" + "".join(self.output))
        if not self.url:
            raise RuntimeError("sandbox exited early:\n" + "".join(self.output))
        while time.monotonic() < deadline:
            if _answers_health(self.url):
                break
            time.sleep(0.05)
        else:
            raise RuntimeError("sandbox never became healthy")
        self._ready = True
        # (`flagdesk --verbose` shows it: where the wait for the first data went)
        log.debug(
            "sandbox %s: listening %.0f ms after its launch, answering at %.0f ms", self.url,
            (self._listening_at - self._launched_at) * 1000,
            (time.monotonic() - self._launched_at) * 1000,
        )  # fmt: skip
        return self

    def _read_output(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        try:
            for line in proc.stdout:
                with self._lock:
                    self._lines.append(line)
                if not self.url and "listening on " in line:
                    self.url = line.rsplit(" ", 1)[1].strip()
                    self._listening_at = time.monotonic()
                    self._listening.set()
        except (OSError, ValueError):  # closed under us
            pass
        finally:
            self._listening.set()

    def stop(self, timeout: float = 5.0) -> None:
        """Ask the child to stop (closing its standard input, else SIGTERM), waiting up to
        `timeout` seconds a step before the next, harder one (SIGTERM, then SIGKILL)."""
        proc = self.proc
        if proc is None:
            return
        if proc.poll() is None and proc.stdin is not None:
            self._close_stdin()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout)
                self.stopped_by = self.stopped_by or "stdin"
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout)
                self.stopped_by = "SIGTERM"
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                self.stopped_by = "SIGKILL"
        self._release()

    def kill(self) -> None:
        """SIGKILL: no shutdown handler runs, as in a crash."""
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait()
        self._release()

    def _close_stdin(self) -> None:
        if self.proc is not None and self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()

    def _release(self) -> None:
        """After the child has ended: close the pipes, once its output has been read."""
        self._close_stdin()
        if self._reader is not None:
            self._reader.join(5)
            if self._reader.is_alive():  # the pipe is held open elsewhere: leave it to the thread
                return
        if self.proc is not None and self.proc.stdout is not None:
            self.proc.stdout.close()

    @property
    def running(self) -> bool:
        """Started (it answered /health: `start()` or `wait_ready()` returned) and not exited. A
        child that is only listening is not running yet: a window that took one launched early
        as running once it had printed its address, before the session waited for it, connected
        with no token (401, one start in about fifty)."""
        return self.proc is not None and self.proc.poll() is None and self._ready

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def admin(self) -> httpx.Client:
        """A synchronous HTTP client authorised with the admin token."""
        import httpx

        return httpx.Client(base_url=self.url, headers={"Authorization": self.admin_token},
                            timeout=30)  # fmt: skip

    def client(self) -> httpx.Client:
        """A synchronous HTTP client authorised with the client token."""
        import httpx

        return httpx.Client(base_url=self.url, headers={"Authorization": self.client_token},
                            timeout=30)  # fmt: skip

    def __enter__(self) -> SandboxProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve_command() -> list[str]:
    """How to start `flagdesk serve` in a child: `python -m sandbox`, the command without the
    rest of the program (see sandbox/__main__.py); in the PyInstaller bundle, which has no
    Python of its own to run `-m` with, its own executable with `serve` (its entry,
    packaging/bundle/entry.py, hands `serve` straight to the same `sandbox.__main__.main`)."""
    if getattr(sys, "frozen", False):
        return [sys.executable, "serve"]
    return [sys.executable, "-m", "sandbox"]


class EarlySandbox:
    """The embedded sandbox, launched as soon as the window's frame is on screen, before the
    session and the rest of the window are imported. A process of its own, it boots (Python,
    Starlette, uvicorn and pydantic, its database: 0.3 s of CPU, most of the wait for the first
    data) on the other core while this one loads the pages and the client.

    Not before the frame: launched as `flagdesk` started, before Qt was imported, its boot ran
    beside the frame's, and whenever the machine had less than two free cores the two shared
    one, and the frame waited: with one core kept busy, the frame showed at 1.8-2.2x a bare
    window's time, against 1.3-1.4x with the launch after it, and the first data came alike
    (0.83-0.93 s against 0.86-0.94 s; with both cores free, 0.63-0.78 s either way:
    `bench/gui_startup.py`, alternated). Not later either: by `Session.prelaunch()`, after the
    session's imports, the first data came 0.1 s later.

    Whether the session will open the sandbox is guessed from `profiles.json` with `json` alone
    (`app.paths.sandbox_was_last`): likely when no connection was used last. The session decides
    for real (`Session.prelaunch`): given as its sandbox factory, this hands the process to the
    session's first call; `release()` stops it when the session did not take it. A wrong guess
    costs a process started for nothing, or the time saved."""

    def __init__(self, sandbox: SandboxProcess) -> None:
        self._early: SandboxProcess | None = sandbox

    @classmethod
    def if_likely(cls, config: Path | None = None) -> EarlySandbox | None:
        """The embedded sandbox, not launched yet, when the last run used it (or there was
        none)."""
        from app.paths import sandbox_was_last

        if not sandbox_was_last(config):
            return None
        return cls(embedded_sandbox())

    def launch(self) -> None:
        """Launch the process now (once; not after the session took it)."""
        early = self._early
        if early is None or early.launched:
            return
        with contextlib.suppress(OSError):  # the session launches it again and says what failed
            early.launch()

    def __call__(self) -> SandboxProcess:
        """The session's sandbox factory: the early process first, new ones after."""
        early, self._early = self._early, None
        return early if early is not None else embedded_sandbox()

    @property
    def taken(self) -> bool:
        return self._early is None

    def release(self) -> None:
        """Stop the early process unless the session took it (on a thread: stopping waits for
        the child to see its standard input close)."""
        early, self._early = self._early, None
        if early is not None:
            threading.Thread(target=early.stop, name="sandbox-unused", daemon=True).start()


def _answers_health(url: str) -> bool:
    """Whether `GET <url>/health` answers 200. With `http.client`: the GUI waits on this for its
    first data, and an `httpx` client per try built a TLS context each time (certificates
    loaded) for a plain-HTTP loopback address, and imported httpx if nothing had yet."""
    import http.client
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=1)
    try:
        conn.request("GET", "/health")
        return conn.getresponse().status == 200
    except (OSError, http.client.HTTPException):
        return False
    finally:
        conn.close()


def default_db_path() -> Path:
    """The embedded sandbox's database, in the user's data folder."""
    from app.paths import data_dir

    return data_dir() / "sandbox.sqlite3"


def embedded_sandbox() -> SandboxProcess:
    """The GUI's embedded sandbox (not started yet): the user's own database (demo data on first
    start), tokens of this run's own (any other flagdesk on the same database keeps its own, and
    the database's stay as they are), and stopped when this process ends. The GUI's entry point
    (`ui.main_window.run`) gives it to the session.

    The user data folder is made here (0700, as `flagdesk serve` makes it without --db): the
    child is given the database's path, and `serve` makes no folder for a --db, which must
    exist (`sandbox.options.refusal`), so the window's first start on a new machine would
    otherwise find no sandbox (tests/ui/test_run.py). A folder that cannot be made is left to
    the child to name: its refusal reaches the window's overview, with Retry."""
    return _local(default_db_path())


def local_sandbox(number: int) -> SandboxProcess:
    """Local sandbox `number` (2 and up; not started yet), which File > Connections starts in
    one click: a second server to compare with and promote to. As the embedded sandbox, but
    on a database of its own beside the first's (`sandbox-<number>.sqlite3`: demo data on its
    first start, kept for the next run)."""
    if number < 2:
        raise ValueError(f"local sandbox {number}: the first is embedded_sandbox()")
    return _local(default_db_path().with_name(f"sandbox-{number}.sqlite3"))


def _local(path: Path) -> SandboxProcess:
    with contextlib.suppress(OSError):
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    return SandboxProcess(path, session_tokens=True, exit_with_parent=True)
