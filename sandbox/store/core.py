"""What every area of the store shares: the connection, transactions, settings, the event log,
the sandbox's refusals, who a request is made as, and the wire's time notation."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

import pydantic_core

from sandbox.db import now_ms

HOUR_MS = 3_600_000
DAY_MS = 24 * HOUR_MS

ADMIN_ROLE, EDITOR_ROLE, VIEWER_ROLE, OWNER_ROLE, MEMBER_ROLE = 1, 2, 3, 4, 5
BUILTIN_ROLES: list[tuple[int, str, str, str]] = [
    (ADMIN_ROLE, "Admin", "root", "Users with the root admin role have superuser access."),
    (
        EDITOR_ROLE,
        "Editor",
        "root",
        "Users with the root editor role can create projects and flags.",
    ),
    (
        VIEWER_ROLE,
        "Viewer",
        "root",
        "Users with the root viewer role can only read root resources.",
    ),
    (OWNER_ROLE, "Owner", "project", "Users with the project owner role have full control."),
    (MEMBER_ROLE, "Member", "project", "Users with the project member role can work on flags."),
]
ROOT_ROLE_TYPES = ("root", "root-custom")
ADMIN_USER_ID = 1
#: who an admin API token acts as in the event log (`created_by_user_id`): no user, as on Unleash
#: 8.2, which logs the token's changes as "admin" with the creator id -42 ("Unleash Admin
#: Token" in its `/api/admin/event-creators`); the token holds the Admin root role itself
ADMIN_TOKEN_USER_ID = -42
#: the name an admin API token's changes are logged under (Unleash: the token's user name)
ADMIN_TOKEN_NAME = "admin"


#: who refuses, which decides the shape of the error body an Unleash release answers with
#: (`sandbox.responses.error_response`): a route's `handler` (the default), the `checks` made
#: before any route (tokens, permissions, unknown paths, the request's schema, the content
#: type), or the `bare` answers of `{message}` alone (a wrong kind of token, a body that is not
#: JSON or is over the limit)
RefusedBy = Literal["handler", "checks", "bare"]


class Refusal(Exception):
    """What the sandbox answers instead of a result: status, the spec's error name, a message,
    details (each `{message, path}`), who refused (`by`) and any more fields of the body
    (`extra`). The app turns it into the spec's error body, or, playing an Unleash release,
    into that release's."""

    def __init__(
        self,
        status: int,
        name: str,
        message: str,
        details: Sequence[dict[str, str]] | None = None,
        *,
        by: RefusedBy = "handler",
        extra: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.name = name
        self.message = message
        self.details = list(details) if details else None
        self.by: RefusedBy = by
        self.extra = dict(extra or {})


def not_found(message: str) -> Refusal:
    return Refusal(404, "NotFoundError", message)


def bad_request(message: str, path: str | None = None) -> Refusal:
    details = [{"message": message, "path": path}] if path else [{"message": message}]
    return Refusal(400, "ValidationError", message, details)


#: the `settings` key of the instance id
INSTANCE_ID = "instance_id"
#: the settings key of the largest user id ever deleted (`Store.next_user_id`); service
#: accounts kept theirs under `_ACCOUNTS_KEY` before users kept it too
LAST_DELETED_USER = "user_last_deleted_id"
_ACCOUNTS_KEY = "service_account_last_deleted_id"


@dataclass(frozen=True)
class Principal:
    """Who a request is made as. An admin API token is no user: its `user_id` is
    ADMIN_TOKEN_USER_ID, what the event log names it by, and it holds the Admin root role
    whatever becomes of the users (`Users.root_role_of_caller`)."""

    kind: str  # admin, client, personal
    user_id: int | None
    user_name: str
    environment: str | None = None


def to_dt(ms: int | None) -> datetime | None:
    return None if ms is None else datetime.fromtimestamp(ms / 1000, tz=UTC)


def to_wire_time(ms: int | None) -> str | None:
    """Integer milliseconds as the API's RFC 3339 text ("2026-01-02T03:04:05.006Z")."""
    return None if ms is None else _wire_time(ms)


def _wire_time(ms: int) -> str:
    seconds, millis = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"


#: The two answers that run to 100,000 items (inactive users, archived flags) are JSON text
#: kept on each item's row by SQLite (migrations 5 -> 6 and 6 -> 7 in sandbox/db.py) and joined
#: a chunk at a time (building a pydantic model per item took seconds, a dict per item for
#: `to_json` most of a second). Their keys are the wire models' fields; tests/sandbox/
#: test_reads.py holds them to the bytes `pydantic_core.to_json` wrote for the whole body, and
#: tests/api and tests/compat parse these answers with those models, which keeps them in step.
#:
#: Items per chunk of a streamed answer (`Store.inactive_users`, `Store.archived_features`): a
#: few thousand, so the first bytes leave after milliseconds and the client parses one chunk
#: while the server reads the next.
CHUNK_ITEMS = 2000


def json_text_chunks(key: str, pages: Iterable[list[bytes]]) -> Iterator[bytes]:
    """`{"version":1,"<key>":[...]}` with a chunk per non-empty page of items, each item JSON
    text already: the same bytes `pydantic_core.to_json` writes for the whole body (compact, no
    spaces) when the items are, without holding it."""
    head = b'{"version":1,' + pydantic_core.to_json(key) + b":["
    first = True
    for page in pages:
        if page:
            yield (head if first else b",") + b",".join(page)
            first = False
    yield (head if first else b"") + b"]}"


def avatar_url(email: str | None, name: str | None) -> str:
    """A gravatar-style URL like the ones Unleash sends (flagdesk never fetches it in tests)."""
    digest = hashlib.md5((email or name or "").strip().lower().encode()).hexdigest()
    return f"https://gravatar.com/avatar/{digest}?s=42&d=retro&r=g"


class Core:
    """The database connection and what every area does with it. Each area of the store is a
    subclass adding its own methods; `Store` is all of them over one connection. Methods are
    synchronous and short, and run on the server's event-loop thread, so they never
    interleave and a write transaction is never shared between two requests."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        *,
        inactive_days: int = 180,
        clock: Callable[[], int] = now_ms,
    ) -> None:
        self.conn = conn
        self.inactive_days = inactive_days
        self.clock = clock
        #: the last password reset link made for each user id (ms), for Unleash's one a minute
        self.reset_links: dict[int, int] = {}
        #: the tokens of this run, never stored (`Tokens.accept_for_this_run`): their hash ->
        #: (kind, environment)
        self.run_tokens: dict[str, tuple[str, str | None]] = {}
        #: what the API token list shows of each of them (`sandbox.store.api_tokens`): hash ->
        #: its fields (handle, name, type, projects, environment, times)
        self.run_token_rows: dict[str, dict[str, Any]] = {}
        #: the API tokens of every project by environment, and the database's change counters
        #: when they were counted (`FlagConfig._tokens_of_every_project`)
        self._every_project_tokens: tuple[tuple[int, int], dict[str | None, int]] | None = None

    @contextmanager
    def tx(self) -> Iterator[sqlite3.Connection]:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    @contextmanager
    def snapshot(self) -> Iterator[sqlite3.Connection]:
        """One read transaction: every query in it sees the same committed state, so an answer
        read in pages is whole and consistent even while other requests write."""
        self.conn.execute("BEGIN")
        try:
            yield self.conn
        finally:
            self.conn.execute("COMMIT")

    def setting(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM settings WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def next_user_id(self, c: sqlite3.Connection) -> int:
        """An id no user or service account had before: Unleash's ids come from a sequence,
        while SQLite gives the largest id again once its row is deleted (a journal names a user
        by its id: an undo or a check must never find another user under it, nor a reset
        link's minute of another)."""
        largest = c.execute("SELECT coalesce(max(id), 0) FROM users").fetchone()[0]
        return max(int(largest), self._last_deleted_user()) + 1

    def forget_user_ids(self, ids: Iterable[int]) -> None:
        """Users (or service accounts) deleted: their ids are never given again."""
        last = max(ids, default=0)
        if last > self._last_deleted_user():
            self.set_setting(LAST_DELETED_USER, str(last))

    def _last_deleted_user(self) -> int:
        # before users kept it too, only the service accounts did, under their own key
        return max(int(self.setting(key) or 0) for key in (LAST_DELETED_USER, _ACCOUNTS_KEY))

    def set_setting(self, key: str, value: str) -> None:
        self.conn.execute(
            "INSERT INTO settings(key, value) VALUES(?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def instance_id(self) -> str | None:
        """The id this database was given when it was made (`GET /api/admin/ui-config` names it,
        as Unleash does: flagdesk knows a server by it)."""
        return self.setting(INSTANCE_ID)

    def is_initialised(self) -> bool:
        return self.setting("initialised_at") is not None

    def _event(
        self,
        c: sqlite3.Connection,
        event_type: str,
        by: Principal,
        *,
        summary: str,
        project: str | None = None,
        feature: str | None = None,
        environment: str | None = None,
        at: int | None = None,
        pre_data: Any = None,
        data: Any = None,
    ) -> None:
        """An event; with the `preData` and `data` Unleash records with it (JSON), kept in
        `event_data` when either is given."""
        added = c.execute(
            "INSERT INTO events(type, project, feature, environment, created_by,"
            " created_by_user_id, created_at, summary) VALUES(?, ?, ?, ?, ?, ?, ?, ?)",
            (event_type, project, feature, environment, by.user_name, by.user_id,
             self.clock() if at is None else at, summary),
        )  # fmt: skip
        if pre_data is not None or data is not None:
            c.execute(
                "INSERT INTO event_data(event_id, pre_data, data) VALUES(?, ?, ?)",
                (added.lastrowid, None if pre_data is None else json.dumps(pre_data),
                 None if data is None else json.dumps(data)),
            )  # fmt: skip
