"""`flagdesk serve`: open (or create) a sandbox database and serve it with uvicorn."""

from __future__ import annotations

import ipaddress
import os
import socket
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import uvicorn

from sandbox import db
from sandbox.app import create_app, wrap
from sandbox.demo import load_demo, load_scale
from sandbox.store import Store

ADMIN_TOKEN_ENV = "FLAGDESK_SANDBOX_ADMIN_TOKEN"
CLIENT_TOKEN_ENV = "FLAGDESK_SANDBOX_CLIENT_TOKEN"


def default_db_path() -> Path:
    from platformdirs import user_data_path

    return user_data_path("flagdesk", appauthor=False) / "sandbox.sqlite3"


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


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def prepare(options: ServeOptions, out: TextIO = sys.stdout) -> Store:
    """Open, migrate and (when new) fill the database; make sure both tokens exist."""
    path = options.db or default_db_path()
    conn = db.connect(path)
    store = Store(conn, inactive_days=options.inactive_days)
    new = not store.is_initialised()
    if new:
        store.initialise()
        if options.demo is not False:
            load_demo(store)
        print(f"created sandbox database {path}", file=out)
    elif options.demo:
        print(f"{path} already holds data; --demo only applies to a new database", file=out)
    if options.scale:
        load_scale(store, options.scale)
    for kind, given in (("admin", options.admin_token), ("client", options.client_token)):
        token, generated = store.ensure_token(kind, given)
        if generated:
            print(f"{kind} token (shown once, kept in the database): {token}", file=out)
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


def serve(options: ServeOptions, out: TextIO = sys.stdout) -> int:
    options.admin_token = options.admin_token or os.environ.get(ADMIN_TOKEN_ENV) or None
    options.client_token = options.client_token or os.environ.get(CLIENT_TOKEN_ENV) or None
    if not is_loopback(options.host):
        print(
            f"warning: serving on {options.host}, reachable from other machines; the sandbox is "
            "for local use (its tokens travel in clear over plain HTTP)",
            file=sys.stderr,
        )
    try:
        store = prepare(options, out)
    except (OSError, RuntimeError) as exc:
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
    config = uvicorn.Config(
        wrap(create_app(store)),
        log_level="warning",
        access_log=False,
        http="httptools",
        lifespan="off",
        server_header=False,
        timeout_graceful_shutdown=5,
    )
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        store.conn.close()
    return 0
