"""Service accounts, `/api/admin/service-account` (Unleash Enterprise 4.21+), and their tokens,
as the public shapes of ../shared/reference/unleash-enterprise-admin-api.md section 1 say
(Enterprise's server is closed source: what is marked [I] there is inferred, and so it is here):

- a service account is a user row with `account_type = 'Service Account'`: a name, a username
  (unique among users and service accounts alike: the `users.username` column; a taken one is
  a 409 NameExistsError [I]) and a root role (an id of a root role: 400 otherwise). It is left
  out of the users' list (`/api/admin/user-admin`), the inactive users and the admin count's
  people, as on Unleash (`Users.list_users`, `INACTIVE_USERS_QUERY`, `admin_count`);
- the list holds every account with its tokens (no secrets) and the root roles they hold;
  there is no GET of one account (Unleash has none: Terraform lists and filters);
- a creation answers 201 with the account and a `location`; an update 200 with the account
  (only `name` and `rootRole` change; a username sent is ignored); a deletion 200 with no body,
  its tokens gone with it; an id that is no service account's (a person's included) is a 404;
- its tokens are personal access tokens owned by the account (`personal_access_tokens`, the
  same storage, hashes and rules as `sandbox.store.personal_tokens`: a description unique per
  account (409), not empty and an expiry in the future (400), at most 10 (403 [I], Unleash's
  PAT service limit); the secret is in the creation's answer only. A token of a service account
  authenticates as the account, with its root role's permissions;
- events: `service-account-created`, `-updated`, `-deleted`, and `pat-created` / `pat-deleted`
  for its tokens (Unleash's PAT events), each naming the account.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from app.api import models as m
from sandbox.store.core import (
    ROOT_ROLE_TYPES,
    Principal,
    Refusal,
    avatar_url,
    not_found,
    to_dt,
    to_wire_time,
)
from sandbox.store.personal_tokens import insert_personal_token
from sandbox.store.users import Users, bad_data

#: the `users.account_type` of a service account (Unleash's `accountType`)
SERVICE_ACCOUNT = "Service Account"
#: how many tokens an account may have (Unleash's PAT limit)
TOKEN_LIMIT = 10
#: the `settings` key of the largest service account id deleted (never given again)

_TOKENS = (
    "SELECT p.id, p.description, p.expires_at, p.seen_at, t.user_id, t.created_at"
    " FROM personal_access_tokens p JOIN tokens t ON t.secret_hash = p.secret_hash"
    " WHERE t.user_id = ? ORDER BY p.id"
)


def _token(row: sqlite3.Row) -> m.PersonalAccessToken:
    return m.PersonalAccessToken(
        id=row["id"],
        description=row["description"],
        expiresAt=to_dt(row["expires_at"]),
        userId=row["user_id"],
        createdAt=to_dt(row["created_at"]),
        seenAt=to_dt(row["seen_at"]),
    )


def _conflict(message: str) -> Refusal:
    return Refusal(409, "NameExistsError", message, [{"message": message}])


def _account_event_data(c: sqlite3.Connection, account_id: int) -> dict[str, Any]:
    """A service account in its `service-account-*` events' `data` and `preData`: as a user's
    (`mapUserToData`), Enterprise's own payload not being public."""
    row = c.execute("SELECT * FROM users WHERE id = ?", (account_id,)).fetchone()
    return {"id": row["id"], "name": row["name"], "username": row["username"],
            "rootRole": row["root_role"]}  # fmt: skip


class ServiceAccounts(Users):
    def _account_row(self, account_id: int) -> sqlite3.Row:
        row = self.conn.execute(
            "SELECT * FROM users WHERE id = ? AND account_type = ?", (account_id, SERVICE_ACCOUNT)
        ).fetchone()
        if row is None:
            raise not_found(f"No service account found with id {account_id}")
        return row  # type: ignore[no-any-return]

    def _account(self, row: sqlite3.Row) -> m.ServiceAccount:
        tokens = self.conn.execute(_TOKENS, (row["id"],)).fetchall()
        return m.ServiceAccount(
            id=row["id"],
            name=row["name"],
            username=row["username"],
            imageUrl=row["image_url"] or avatar_url(None, row["username"]),
            rootRole=row["root_role"],
            createdAt=to_dt(row["created_at"]),
            seenAt=None,
            tokens=[_token(t) for t in tokens],
        )

    def service_accounts(self) -> m.ServiceAccounts:
        """serviceAccountsSchema: every account, oldest first, and the root roles they hold."""
        rows = self.conn.execute(
            "SELECT * FROM users WHERE account_type = ? ORDER BY id", (SERVICE_ACCOUNT,)
        ).fetchall()
        accounts = [self._account(row) for row in rows]
        held = {a.rootRole for a in accounts}
        return m.ServiceAccounts(serviceAccounts=accounts,
                                 rootRoles=[r for r in self.roles() if r.id in held])  # fmt: skip

    def _root_role(self, role: int) -> int:
        found = self.conn.execute("SELECT type FROM roles WHERE id = ?", (role,)).fetchone()
        # a custom root role's type is `root-custom` since migration 13 (`ROOT_ROLE_TYPES`)
        if found is None or found["type"] not in ROOT_ROLE_TYPES:
            raise bad_data(f"{role} is not the id of a root role")
        return role

    def create_service_account(
        self, body: m.CreateServiceAccount, who: Principal
    ) -> m.ServiceAccount:
        """The new account (no tokens yet)."""
        if not body.username.strip():
            raise bad_data("A service account needs a username.")
        if not body.name.strip():
            raise bad_data("A service account needs a name.")
        role = self._root_role(body.rootRole)
        now = self.clock()
        with self.tx() as c:
            taken = c.execute("SELECT 1 FROM users WHERE username = ?", (body.username,)).fetchone()
            if taken is not None:
                raise _conflict(f"A user or service account with the username "
                                f"{body.username} already exists.")  # fmt: skip
            account_id = self.next_user_id(c)
            c.execute(
                "INSERT INTO users(id, name, username, root_role, created_at, account_type)"
                " VALUES(?, ?, ?, ?, ?, ?)",
                (account_id, body.name, body.username, role, now, SERVICE_ACCOUNT),
            )
            self._event(c, "service-account-created", who, summary=f"**{who.user_name}** "
                        f"created the service account **{body.username}**",
                        data=_account_event_data(c, account_id))  # fmt: skip
        return self._account(self._account_row(account_id))

    def update_service_account(
        self, account_id: int, body: m.UpdateServiceAccount, who: Principal
    ) -> m.ServiceAccount:
        """The account with the name and root role given (those not given stay)."""
        row = self._account_row(account_id)
        changes: dict[str, object] = {}
        given = body.model_fields_set
        if "name" in given and body.name is not None:
            if not body.name.strip():
                raise bad_data("A service account needs a name.")
            changes["name"] = body.name
        if "rootRole" in given and body.rootRole is not None:
            changes["root_role"] = self._root_role(body.rootRole)
        with self.tx() as c:
            before = _account_event_data(c, account_id)
            if changes:
                assignments = ", ".join(f"{column} = ?" for column in changes)
                c.execute(f"UPDATE users SET {assignments} WHERE id = ?",
                          (*changes.values(), account_id))  # fmt: skip
            self._event(c, "service-account-updated", who, summary=f"**{who.user_name}** "
                        f"updated the service account **{row['username']}**", pre_data=before,
                        data=_account_event_data(c, account_id))  # fmt: skip
        return self._account(self._account_row(account_id))

    def delete_service_account(self, account_id: int, who: Principal) -> None:
        """The account goes, and its tokens with it (refused from their next request)."""
        row = self._account_row(account_id)
        with self.tx() as c:
            before = _account_event_data(c, account_id)
            c.execute("DELETE FROM tokens WHERE user_id = ?", (account_id,))
            for table in ("group_users", "project_roles"):
                c.execute(f"DELETE FROM {table} WHERE user_id = ?", (account_id,))
            c.execute("DELETE FROM users WHERE id = ?", (account_id,))
            self.forget_user_ids([account_id])
            self._event(c, "service-account-deleted", who, summary=f"**{who.user_name}** "
                        f"deleted the service account **{row['username']}**",
                        pre_data=before)  # fmt: skip

    def service_account_tokens(self, account_id: int) -> m.PersonalAccessTokens:
        """patsSchema: the account's tokens, oldest first, without secrets."""
        self._account_row(account_id)
        rows = self.conn.execute(_TOKENS, (account_id,)).fetchall()
        return m.PersonalAccessTokens(pats=[_token(row) for row in rows])

    def create_service_account_token(
        self, account_id: int, body: m.CreatePersonalAccessToken, who: Principal
    ) -> m.CreatedPersonalAccessToken:
        """The account's new token with its secret (the only time it is given)."""
        row = self._account_row(account_id)
        if not body.description:
            raise bad_data("PAT description cannot be empty.")
        now = self.clock()
        expires = int(body.expiresAt.timestamp() * 1000)
        if expires <= now:
            raise bad_data("The expiry date should be in future.")
        held = self.conn.execute(_TOKENS, (account_id,)).fetchall()
        if any(t["description"] == body.description for t in held):
            raise _conflict("PAT description already exists.")
        if len(held) >= TOKEN_LIMIT:
            message = f"Too many PATs ({TOKEN_LIMIT}) already exist for this user."
            raise Refusal(403, "OperationDeniedError", message, [{"message": message}])
        with self.tx() as c:
            token_id, secret = insert_personal_token(c, account_id, now, body.description,
                                                     expires)  # fmt: skip
            self._event(c, "pat-created", who, summary=f"**{who.user_name}** created the token "
                        f"**{body.description}** of the service account "
                        f"**{row['username']}**",
                        data={"id": token_id, "description": body.description,
                              "expiresAt": to_wire_time(expires), "secure": False})  # fmt: skip
            made = c.execute(_TOKENS.replace("ORDER BY", "AND p.id = ? ORDER BY"),
                             (account_id, token_id)).fetchone()  # fmt: skip
        return m.CreatedPersonalAccessToken(**_token(made).model_dump(), secret=secret)

    def delete_service_account_token(self, account_id: int, token_id: int, who: Principal) -> None:
        """The account's token `token_id` goes (refused from its next request); 404 for an id
        that is not one of the account's tokens."""
        account = self._account_row(account_id)
        row = self.conn.execute(
            "SELECT p.secret_hash, p.description, p.expires_at FROM personal_access_tokens p"
            " JOIN tokens t"
            " ON t.secret_hash = p.secret_hash WHERE p.id = ? AND t.user_id = ?",
            (token_id, account_id),
        ).fetchone()
        if row is None:
            raise not_found(f"No token with id {token_id} of the service account {account_id}")
        with self.tx() as c:
            c.execute("DELETE FROM tokens WHERE secret_hash = ?", (row["secret_hash"],))
            self._event(c, "pat-deleted", who, summary=f"**{who.user_name}** deleted the token "
                        f"**{row['description']}** of the service account "
                        f"**{account['username']}**",
                        data={"id": token_id, "description": row["description"],
                              "expiresAt": to_wire_time(row["expires_at"]),
                              "secure": False})  # fmt: skip
