"""Tokens: the admin and client tokens `flagdesk serve` keeps, the tokens of one run (the
embedded sandbox's), personal access tokens, and who a token is.

The database keeps a token's hash alone (`sandbox.db.token_hash`): a token is shown once, when
it is made, and then only its holder has it. The tokens of one run are held in memory only.
Every API token (these and those made through `POST /api/admin/api-tokens`,
`sandbox.store.api_tokens`) also has a `handle`, its masked secret (`masked`), which the list
shows in place of the secret."""

from __future__ import annotations

import json
import secrets
import sqlite3

from sandbox.db import has_token, token_hash
from sandbox.store.core import ADMIN_TOKEN_NAME, ADMIN_TOKEN_USER_ID, Principal
from sandbox.store.personal_tokens import insert_personal_token, personal_token_used
from sandbox.store.users import Users

#: how often a token's `seenAt` is written at most (Unleash writes it by a flush a minute)
SEEN_EVERY_MS = 60_000


def masked(secret: str) -> str:
    """What the API token list shows of `secret`: its `<project>:<environment>.` head and its
    last 8 characters, `default:development.…3f9a01bc`: unique per token (the sandbox makes no
    two alike), and taken by `PUT` and `DELETE` in place of the whole secret."""
    head, dot, _ = secret.rpartition(".")
    return f"{head}{dot}…{secret[-8:]}"


def _projects(secret: str) -> list[str]:
    """The projects an admin or client token given whole is for, from its head."""
    head = secret.split(".", 1)[0]
    project = head.split(":", 1)[0] if ":" in head else "*"
    return ["*"] if project in ("*", "[]") else [project]


def _environment(kind: str, secret: str) -> str | None:
    """The environment a client token is for: the part of its name after the project
    ("default:development.<secret>"), else development."""
    if kind != "client":
        return None
    head = secret.split(".", 1)[0]
    return head.split(":", 1)[1] if ":" in head else "development"


class Tokens(Users):
    def ensure_token(self, kind: str, secret: str | None) -> tuple[str | None, bool]:
        """The token of `kind` ("admin" or "client"): `secret` when given (it replaces the
        stored one), else a new one when none is stored. Returns (token, generated_now); the
        token is None when the database already holds one: only its hash is kept."""
        if secret:
            with self.tx() as c:
                c.execute("DELETE FROM tokens WHERE kind = ? AND served = 1", (kind,))
                self._insert_token(c, kind, secret)
            return secret, False
        if has_token(self.conn, kind):
            return None, False
        prefix = "*:*." if kind == "admin" else "default:development."
        secret = prefix + secrets.token_hex(24)
        with self.tx() as c:
            self._insert_token(c, kind, secret)
        return secret, True

    def accept_for_this_run(self, kind: str, secret: str) -> None:
        """Accept `secret` as a token of `kind` while this process serves, beside the stored
        ones, without storing it: the embedded sandbox's tokens, made by the window that starts
        it (`sandbox.process.SandboxProcess`), so that two windows on one database never replace
        each other's and the database never holds one."""
        hashed = token_hash(secret)
        self.run_tokens[hashed] = (kind, _environment(kind, secret))
        self.run_token_rows[hashed] = {
            "handle": masked(secret), "name": kind, "api_type": kind,
            "projects": _projects(secret), "environment": _environment(kind, secret) or "*",
            "created_at": self.clock(), "seen_at": None, "expires_at": None,
        }  # fmt: skip

    def create_personal_token(self, user_id: int) -> str:
        """A personal access token acting as `user_id` (tests and `flagdesk serve` use it),
        listed among the user's as "Personal access token <id>", expiring in 2099."""
        self._user_row(user_id)
        with self.tx() as c:
            _pat_id, secret = insert_personal_token(c, user_id, self.clock())
        return secret

    def _insert_token(self, c: sqlite3.Connection, kind: str, secret: str) -> None:
        c.execute("DELETE FROM tokens WHERE handle = ?", (masked(secret),))
        c.execute(
            "INSERT INTO tokens(secret_hash, kind, user_id, environment, created_at, served,"
            " name, api_type, projects, handle) VALUES(?, ?, NULL, ?, ?, 1, ?, ?, ?, ?)",
            # an admin API token is no user's (`Principal`)
            (token_hash(secret), kind, _environment(kind, secret), self.clock(), kind, kind,
             json.dumps(_projects(secret)), masked(secret)),
        )  # fmt: skip

    def authenticate(self, secret: str) -> Principal | None:
        hashed = token_hash(secret)
        now = self.clock()
        run = self.run_tokens.get(hashed)
        if run is not None:
            kind, environment = run
            listed = self.run_token_rows.get(hashed)
            if listed is not None:
                if listed["expires_at"] is not None and listed["expires_at"] <= now:
                    return None  # its expiry changed (`PUT /api/admin/api-tokens/:token`)
                listed["seen_at"] = now
            if kind == "admin":
                return Principal("admin", ADMIN_TOKEN_USER_ID, ADMIN_TOKEN_NAME)
            return Principal(kind, None, "client", environment)
        row = self.conn.execute(
            "SELECT t.kind, t.user_id, t.environment, u.username, u.name, t.expires_at,"
            " t.seen_at FROM tokens t LEFT JOIN users u ON u.id = t.user_id"
            " WHERE t.secret_hash = ?",
            (hashed,),
        ).fetchone()
        if row is None:
            return None
        if row["expires_at"] is not None and row["expires_at"] <= now:
            return None  # an expired token is refused at once (as Unleash 8.2)
        if row["kind"] != "personal" and (
            row["seen_at"] is None or now - row["seen_at"] >= SEEN_EVERY_MS
        ):
            with self.tx() as c:  # `seenAt`, written at most once a minute as Unleash's flush
                c.execute("UPDATE tokens SET seen_at = ? WHERE secret_hash = ?", (now, hashed))
        if row["kind"] == "admin":
            return Principal("admin", ADMIN_TOKEN_USER_ID, ADMIN_TOKEN_NAME)
        if row["kind"] == "personal":
            with self.tx() as c:
                if not personal_token_used(c, hashed, now):
                    return None  # expired: refused as an unknown token
                c.execute("UPDATE users SET pat_seen_at = ? WHERE id = ?", (now, row[1]))
        name = row["username"] or row["name"] or "unknown"
        if row["kind"] in ("client", "frontend"):
            name = row["kind"]
        return Principal(row["kind"], row["user_id"], name, row["environment"])
