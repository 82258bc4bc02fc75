"""Personal access tokens (PATs) of the user a request is made as, `/api/admin/user/tokens`, as
Unleash 8.2 answers (measured on 5.12, 6.10, 7.6 and 8.2:
../shared/reference/unleash-admin-console-behaviour.md section 2):

- they are the caller's own: the list, a creation and a deletion act on the user behind the
  personal access token sent; an admin API token is no user's, and is refused with 403
  ForbiddenError "PATs require an authenticated user." (Unleash answers a DELETE sent with one
  with a 500 of its database; the sandbox refuses it as the others, and flagdesk never sends
  it: its capabilities say a personal access token is needed);
- the list never holds a secret; a creation answers 201 with the token and its `secret`
  (`user:` and 56 hex digits), the one time it is shown, with no `Location` header;
- a description the user's tokens have already is a 409 NameExistsError "PAT description
  already exists."; an empty one, or an expiry that is not in the future, a 400 BadDataError;
- a deletion answers 200 with no body, and the deleted token is refused (401) on its next
  request; an id that is not one of the caller's tokens is a 200 that does nothing on 8.x, a
  404 "No PAT found." before (`Played.unknown_pat_delete_is_404`);
- `pat-created` and `pat-deleted` events.

The database keeps a token's hash alone (`tokens.secret_hash`, `sandbox.db.token_hash`), as for
every token; this table adds what Unleash keeps of a PAT: its id (never given again), its
description, its expiry and when it was last used. An expired token is refused as an unknown
one (401). `seenAt` is written as the token is used, at once (Unleash gathers the uses and
writes them every few minutes), with the user's `pat_seen_at` (the inactive users' list).
"""

from __future__ import annotations

import secrets
import sqlite3
from typing import Any

from app.api import models as m
from sandbox.db import PAT_DEFAULT_EXPIRY, token_hash
from sandbox.store.core import Principal, Refusal, not_found, to_dt, to_wire_time
from sandbox.store.users import Users, bad_data

#: what Unleash answers a caller that is no user (an admin API token)
NEEDS_A_USER = "PATs require an authenticated user."


def insert_personal_token(
    c: sqlite3.Connection,
    user_id: int,
    now: int,
    description: str | None = None,
    expires_at: int = PAT_DEFAULT_EXPIRY,
) -> tuple[int, str]:
    """Make a personal access token of `user_id` in the transaction `c`: its id and its secret
    (shown once: only its hash is kept). Without `description`, "Personal access token <id>"."""
    secret = "user:" + secrets.token_hex(28)
    hashed = token_hash(secret)
    c.execute(
        "INSERT INTO tokens(secret_hash, kind, user_id, created_at) VALUES(?, 'personal', ?, ?)",
        (hashed, user_id, now),
    )
    cursor = c.execute(
        "INSERT INTO personal_access_tokens(secret_hash, description, expires_at) VALUES(?, ?, ?)",
        (hashed, description or "", expires_at),
    )
    pat_id = int(cursor.lastrowid or 0)
    if description is None:
        c.execute(
            "UPDATE personal_access_tokens SET description = ? WHERE id = ?",
            (f"Personal access token {pat_id}", pat_id),
        )
    return pat_id, secret


def personal_token_used(c: sqlite3.Connection, secret_hash: str, now: int) -> bool:
    """Record a use of the personal access token with `secret_hash` (its `seenAt`); False when
    it has expired (it is then refused as an unknown token)."""
    row = c.execute(
        "SELECT id, expires_at FROM personal_access_tokens WHERE secret_hash = ?", (secret_hash,)
    ).fetchone()
    if row is None:  # a token written straight into `tokens` (tests): no expiry
        return True
    if row[1] is not None and row[1] <= now:
        return False
    c.execute("UPDATE personal_access_tokens SET seen_at = ? WHERE id = ?", (now, row[0]))
    return True


_LIST = (
    "SELECT p.id, p.description, p.expires_at, p.seen_at, t.user_id, t.created_at"
    " FROM personal_access_tokens p JOIN tokens t ON t.secret_hash = p.secret_hash"
    " WHERE t.user_id = ? ORDER BY p.id"
)


def _pat(row: sqlite3.Row) -> m.PersonalAccessToken:
    return m.PersonalAccessToken(
        id=row["id"],
        description=row["description"],
        expiresAt=to_dt(row["expires_at"]),
        userId=row["user_id"],
        createdAt=to_dt(row["created_at"]),
        seenAt=to_dt(row["seen_at"]),
    )


class PersonalTokens(Users):
    def _pat_user(self, who: Principal) -> int:
        """The user whose tokens these are: the caller's, or 403 for an admin API token."""
        if who.kind != "personal" or who.user_id is None:
            raise Refusal(403, "ForbiddenError", NEEDS_A_USER, [{"message": NEEDS_A_USER}])
        return who.user_id

    def personal_tokens(self, who: Principal) -> m.PersonalAccessTokens:
        """patsSchema: the caller's tokens, oldest first, without secrets."""
        user_id = self._pat_user(who)
        rows = self.conn.execute(_LIST, (user_id,)).fetchall()
        return m.PersonalAccessTokens(pats=[_pat(row) for row in rows])

    def create_personal_access_token(
        self, body: m.CreatePersonalAccessToken, who: Principal, *, secure: bool = True
    ) -> m.CreatedPersonalAccessToken:
        """The caller's new token, with its secret (the only time it is given). Its event's
        `data`: `{id, description, expiresAt, secure}` (`secure`: 8.x), else the body with the
        secret masked (5.x-7.x; measured)."""
        user_id = self._pat_user(who)
        if not body.description:
            raise bad_data("PAT description cannot be empty.")
        now = self.clock()
        expires = int(body.expiresAt.timestamp() * 1000)
        if expires <= now:
            raise bad_data("The expiry date should be in future.")
        taken = self.conn.execute(
            "SELECT 1 FROM personal_access_tokens p JOIN tokens t"
            " ON t.secret_hash = p.secret_hash WHERE t.user_id = ? AND p.description = ?",
            (user_id, body.description),
        ).fetchone()
        if taken is not None:
            message = "PAT description already exists."
            raise Refusal(409, "NameExistsError", message, [{"message": message}])
        with self.tx() as c:
            pat_id, secret = insert_personal_token(c, user_id, now, body.description, expires)
            logged: dict[str, Any] = {"description": body.description,
                                      "expiresAt": to_wire_time(expires)}  # fmt: skip
            extra: dict[str, Any] = {"id": pat_id, "secure": False} if secure else {"secret": "***"}
            logged.update(extra)
            self._event(c, "pat-created", who, summary=f"**{who.user_name}** created the "
                        f"personal access token **{body.description}**",
                        data=logged)  # fmt: skip
            row = c.execute(_LIST.replace("ORDER BY", "AND p.id = ? ORDER BY"),
                            (user_id, pat_id)).fetchone()  # fmt: skip
        made = _pat(row)
        return m.CreatedPersonalAccessToken(**made.model_dump(), secret=secret)

    def delete_personal_access_token(
        self, pat_id: int, who: Principal, *, unknown_is_404: bool = False, secure: bool = True
    ) -> None:
        """Delete the caller's token `pat_id` (its hash goes: it is refused from the next
        request on). Another's or an unknown id: nothing, or 404 with `unknown_is_404`. Its
        event's `data` (not `preData`, as Unleash logs it): as `pat-created`'s on 8.x, the
        whole token with the secret masked before (measured)."""
        user_id = self._pat_user(who)
        row = self.conn.execute(
            "SELECT p.secret_hash, p.description, p.expires_at, p.seen_at, t.created_at"
            " FROM personal_access_tokens p JOIN tokens t"
            " ON t.secret_hash = p.secret_hash WHERE p.id = ? AND t.user_id = ?",
            (pat_id, user_id),
        ).fetchone()
        if row is None:
            if unknown_is_404:
                raise not_found("No PAT found.")
            return
        pat = _pat(self.conn.execute(_LIST.replace("ORDER BY", "AND p.id = ? ORDER BY"),
                                     (user_id, pat_id)).fetchone())  # fmt: skip
        logged: dict[str, Any] = {"id": pat.id, "description": pat.description,
                                  "expiresAt": to_wire_time(row["expires_at"])}  # fmt: skip
        if secure:
            logged["secure"] = False
        else:
            logged.update({"secret": "***", "userId": pat.userId,
                           "seenAt": to_wire_time(row["seen_at"]),
                           "createdAt": to_wire_time(row["created_at"])})  # fmt: skip
        with self.tx() as c:
            c.execute("DELETE FROM tokens WHERE secret_hash = ?", (row["secret_hash"],))
            self._event(c, "pat-deleted", who, summary=f"**{who.user_name}** deleted the "
                        f"personal access token **{row['description']}**",
                        data=logged)  # fmt: skip
