"""`flagdesk serve`: open (or create) a sandbox database and serve it with uvicorn.

It binds the socket itself (`bind`), so `--port 0` works and the real address is printed, and
hands it to uvicorn. `sandbox.process` runs this command as a child process: tests, benchmarks
and the GUI's embedded sandbox use it."""

from __future__ import annotations

import ipaddress
import logging
import os
import socket
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from uvicorn.config import Config
from uvicorn.server import Server

from sandbox import db
from sandbox.app import create_app, wrap
from sandbox.demo import load_access_scale, load_demo, load_scale
from sandbox.options import ServeOptions
from sandbox.process import default_db_path
from sandbox.store import Store
from sandbox.versions import Played

ADMIN_TOKEN_ENV = "FLAGDESK_SANDBOX_ADMIN_TOKEN"
CLIENT_TOKEN_ENV = "FLAGDESK_SANDBOX_CLIENT_TOKEN"
#: "1": the tokens of the two variables above are this run's alone (`ServeOptions.run_tokens`)
RUN_TOKENS_ENV = "FLAGDESK_SANDBOX_RUN_TOKENS"

log = logging.getLogger(__name__)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@contextmanager
def exclusive(path: Path, timeout: float = 60.0) -> Iterator[None]:
    """Hold an exclusive lock on the file `path` (made when missing, the user's alone), across
    processes; the OS drops it when the holder ends, however it ends."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    deadline = time.monotonic() + timeout
    with open(os.open(path, os.O_RDWR | os.O_CREAT, 0o600), "a+b") as f:
        while True:
            try:
                if sys.platform == "win32":
                    import msvcrt

                    f.seek(0)
                    msvcrt.locking(f.fileno(), msvcrt.LK_NBLCK, 1)
                else:
                    import fcntl

                    fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{path} stayed locked by another process") from None
                time.sleep(0.05)
        try:
            yield
        finally:
            if sys.platform == "win32":
                import msvcrt

                f.seek(0)
                msvcrt.locking(f.fileno(), msvcrt.LK_UNLCK, 1)
            # elsewhere closing the file releases the lock


def prepare(options: ServeOptions, out: TextIO = sys.stdout) -> Store:
    """Open, migrate and (when new) fill the database; make sure both tokens exist.

    One process at a time (a lock on a `.lock` file beside the database): two sandboxes started
    together on a new database would otherwise both migrate it and both load the demo data."""
    path = options.db or default_db_path()
    if options.db is None and os.name == "posix":
        # flagdesk's own data folder (the ledgers of metrics uploads are there too): the
        # user's alone, as it may have been made readable by others before; a folder given
        # with --db is the user's to set, and only one made for the database is made 0700
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        path.parent.chmod(0o700)
    with exclusive(path.with_name(path.name + ".lock")):
        return _prepare(path, options, out)


def _prepare(path: Path, options: ServeOptions, out: TextIO) -> Store:
    conn = db.connect(path)
    store = Store(conn, inactive_days=options.inactive_days)
    new = not store.is_initialised()
    store.initialise()  # on an older database: adds what a fresh server has and it lacks
    if new:
        if options.demo is not False:
            load_demo(store)
        print(f"created sandbox database {path}", file=out)
    elif options.demo:
        print(f"{path} already holds data; --demo only applies to a new database", file=out)
    if options.scale:
        load_scale(store, options.scale)
    # `--scale` alone (issue 36): the credentials and access set, once per database
    if options.scale_access and not load_access_scale(store):
        print(f"{path} holds the --scale access set already; nothing more planted", file=out)
    for kind, given in (("admin", options.admin_token), ("client", options.client_token)):
        if options.run_tokens:
            if given:
                store.accept_for_this_run(kind, given)
            continue
        token, generated = store.ensure_token(kind, given)
        if generated:
            print(f"{kind} token (shown once, its hash kept in the database): {token}",
                  file=out)  # fmt: skip
        elif token is None:
            print(f"{kind} token: the one shown when it was made (the database keeps its hash "
                  f"alone; --{kind}-token T replaces it)", file=out)  # fmt: skip
    return store


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY on accepted connections only when the
    # listening socket says it is TCP; without it every reused keep-alive request waits ~40 ms
    # for Nagle's algorithm and the client's delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def watch_stdin(on_eof: Callable[[], None]) -> threading.Thread | None:
    """Call `on_eof` (on a daemon thread) once standard input reaches its end: when the parent
    holds the write end of a pipe to our stdin, that happens however the parent ends, a SIGKILL
    or a segfault included. None when there is no standard input to watch."""
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):  # None (pythonw), closed, or not a real file
        return None

    def run() -> None:
        # os.read on the descriptor, not sys.stdin.buffer: a daemon thread still blocked in the
        # buffered reader when the interpreter exits (after a SIGTERM, say) would hold its lock
        # and make the interpreter abort at shutdown
        try:
            while os.read(fd, 65536):
                pass
        except OSError:
            pass
        on_eof()

    thread = threading.Thread(target=run, name="exit-with-parent", daemon=True)
    thread.start()
    return thread


def serve(options: ServeOptions, out: TextIO = sys.stdout) -> int:
    options.admin_token = options.admin_token or os.environ.get(ADMIN_TOKEN_ENV) or None
    options.client_token = options.client_token or os.environ.get(CLIENT_TOKEN_ENV) or None
    options.run_tokens = options.run_tokens or os.environ.get(RUN_TOKENS_ENV) == "1"
    if os.name == "posix":
        # what this process makes (the database, its -wal and -shm, the lock, a folder) is the
        # user's alone, whatever the umask (`sandbox.db.make_private` sees to existing ones)
        os.umask(0o077)
    if not is_loopback(options.host):
        print(
            f"warning: serving on {options.host}, reachable from other machines; the sandbox is "
            "for local use (its tokens travel in clear over plain HTTP)",
            file=sys.stderr,
        )
    parent_gone = threading.Event()
    server: Server | None = None

    def stop_serving() -> None:
        parent_gone.set()
        if server is not None:
            # uvicorn's main loop polls this flag (every 0.1 s) and then shuts down gracefully;
            # a plain attribute store, safe from another thread
            server.should_exit = True

    if options.exit_with_parent and watch_stdin(stop_serving) is None:
        print("flagdesk serve: no standard input to watch; --exit-with-parent ignored",
              file=sys.stderr)  # fmt: skip
    try:
        store = prepare(options, out)
    except (OSError, RuntimeError, sqlite3.Error) as exc:
        print(f"flagdesk serve: {exc}", file=sys.stderr)
        return 2
    try:
        sock = bind(options.host, options.port)
    except OSError as exc:
        print(f"flagdesk serve: cannot listen on {options.host}:{options.port}: {exc.strerror}",
              file=sys.stderr)  # fmt: skip
        return 2
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    print(f"flagdesk sandbox listening on http://{shown}:{port}", file=out, flush=True)
    limit = (options.create_user_limit, options.create_user_window)
    app = wrap(
        create_app(
            store,
            groups=options.groups,
            create_user_limit=limit,
            played=Played.of(options.as_version) if options.as_version else None,
        )
    )
    config = Config(
        app,
        log_level="warning",
        access_log=False,
        http="httptools",
        # no WebSocket route: not "auto", which imports a WebSocket library (websockets or
        # wsproto) during the boot the GUI waits for when one is installed, looks for them when not
        ws="none",
        lifespan="off",
        server_header=False,
        timeout_graceful_shutdown=5,
    )
    server = Server(config)
    if parent_gone.is_set():  # the parent went away while the database was being prepared
        server.should_exit = True
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
        store.conn.close()
    return 0
