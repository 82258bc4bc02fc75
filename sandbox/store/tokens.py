"""Tokens: the admin and client tokens `flagdesk serve` keeps, personal access tokens, and who
a token is."""

from __future__ import annotations

import secrets
import sqlite3

from sandbox.db import stored_token
from sandbox.store.core import ADMIN_TOKEN_NAME, ADMIN_TOKEN_USER_ID, Principal
from sandbox.store.users import Users


class Tokens(Users):
    def ensure_token(self, kind: str, secret: str | None) -> tuple[str, bool]:
        """The token of `kind` ("admin" or "client"): `secret` when given, else the stored one,
        else a new one. Returns (token, generated_now)."""
        if secret:
            with self.tx() as c:
                c.execute("DELETE FROM tokens WHERE kind = ?", (kind,))
                self._insert_token(c, kind, secret)
            return secret, False
        stored = stored_token(self.conn, kind)
        if stored is not None:
            return stored, False
        prefix = "*:*." if kind == "admin" else "default:development."
        secret = prefix + secrets.token_hex(24)
        with self.tx() as c:
            self._insert_token(c, kind, secret)
        return secret, True

    def create_personal_token(self, user_id: int) -> str:
        """A personal access token acting as `user_id` (tests and `flagdesk serve` use it)."""
        self._user_row(user_id)
        secret = "user:" + secrets.token_hex(24)
        with self.tx() as c:
            c.execute(
                "INSERT INTO tokens(secret, kind, user_id, created_at) VALUES(?, 'personal', ?, ?)",
                (secret, user_id, self.clock()),
            )
        return secret

    def _insert_token(self, c: sqlite3.Connection, kind: str, secret: str) -> None:
        user_id = None  # an admin API token is no user's (`Principal`)
        environment = None
        if kind == "client":
            head = secret.split(".", 1)[0]
            environment = head.split(":", 1)[1] if ":" in head else "development"
        c.execute(
            "INSERT INTO tokens(secret, kind, user_id, environment, created_at)"
            " VALUES(?, ?, ?, ?, ?)",
            (secret, kind, user_id, environment, self.clock()),
        )

    def authenticate(self, secret: str) -> Principal | None:
        row = self.conn.execute(
            "SELECT t.kind, t.user_id, t.environment, u.username, u.name FROM tokens t"
            " LEFT JOIN users u ON u.id = t.user_id WHERE t.secret = ?",
            (secret,),
        ).fetchone()
        if row is None:
            return None
        if row["kind"] == "personal":
            with self.tx() as c:
                c.execute("UPDATE users SET pat_seen_at = ? WHERE id = ?", (self.clock(), row[1]))
        if row["kind"] == "admin":
            return Principal("admin", ADMIN_TOKEN_USER_ID, ADMIN_TOKEN_NAME)
        name = row["username"] or row["name"] or "unknown"
        if row["kind"] == "client":
            name = "client"
        return Principal(row["kind"], row["user_id"], name, row["environment"])
