"""API tokens (`/api/admin/api-tokens`, `/api/admin/projects/:p/api-tokens`): the list, by name,
creating, changing the expiry, deleting; and the project's list, creation and deletion. As
Unleash 8.2 answers them (measured: `unleash-admin-console-behaviour.md` §1), with one
difference on purpose:

**The sandbox cannot list secrets.** It keeps only their hashes (`sandbox.db.token_hash`), so
its list gives each token's `secret` masked, `<project>:<env>.…<last 8>` (`tokens.masked`, the
token's `handle`, unique: a new secret whose handle is taken is drawn again), and its `PUT` and
`DELETE` take that handle as well as the whole secret. The creation's answer holds the whole
secret, once. Real Unleash lists every secret in clear; flagdesk names a token in `PUT` and
`DELETE` by whatever `secret` the list holds, so one client path serves both.

The admin and client tokens `flagdesk serve` keeps (and the embedded sandbox's tokens of one
run) are listed too, as Unleash lists its own admin token: named `admin` and `client`. A
`client` or `backend` token reads the client API; a `frontend` token only the frontend API
(which the sandbox does not serve); an expired token is refused at once. An event is logged
for each change (`api-token-created`, `-updated`, `-deleted`), naming the token, never its
secret."""

from __future__ import annotations

import json
import secrets
import sqlite3
from datetime import datetime
from typing import Any

import msgspec

from app.api import models as m
from sandbox.db import token_hash
from sandbox.store.core import Principal, Refusal, bad_request, not_found, to_wire_time
from sandbox.store.tokens import Tokens, masked

#: the secret's random part: 56 hex digits, as Unleash's
SECRET_BYTES = 28


def _ms(when: datetime) -> int:
    return int(when.timestamp() * 1000)


def _bad_data(message: str) -> Refusal:
    """Unleash's BadDataError of a request its handler refuses."""
    return Refusal(400, "BadDataError", message, [{"message": message}])


class ApiTokens(Tokens):
    # ------------------------------------------------------------------ reading

    def _api_token_data(self, row: sqlite3.Row | dict[str, Any]) -> dict[str, Any]:
        """A token as the list answers it (`m.ApiToken`'s fields), as plain data: the list's
        10,000 tokens of the scale set made as models and written out took 170 ms, as data
        100."""
        projects = row["projects"]
        projects = msgspec.json.decode(projects) if isinstance(projects, str) else list(projects)
        return {
            "secret": row["handle"], "tokenName": row["name"] or "",
            "type": row["api_type"] or "", "environment": row["environment"] or "*",
            "project": projects[0] if len(projects) == 1 else "[]", "projects": projects,
            "expiresAt": to_wire_time(row["expires_at"]),
            "createdAt": to_wire_time(row["created_at"]), "seenAt": to_wire_time(row["seen_at"]),
            "alias": None, "secure": False,
        }  # fmt: skip

    def _api_token(self, row: sqlite3.Row | dict[str, Any]) -> m.ApiToken:
        return m.ApiToken.model_validate(self._api_token_data(row))

    def _logged_token(
        self, row: sqlite3.Row | dict[str, Any], logged: str = "secure"
    ) -> dict[str, Any]:
        """A token as Unleash logs it in an event (`preData`): its listing without the secret,
        with `logged` (measured: `secure` on 8.2, `username` on 5.12 and 6.10, neither on 7.6:
        `Played.token_event_field`)."""
        projects = row["projects"]
        projects = json.loads(projects) if isinstance(projects, str) else list(projects)
        token = {
            "type": row["api_type"] or "", "alias": None, "seenAt": to_wire_time(row["seen_at"]),
            "project": projects[0] if len(projects) == 1 else "[]", "projects": projects,
            "createdAt": to_wire_time(row["created_at"]),
            "expiresAt": to_wire_time(row["expires_at"]), "tokenName": row["name"] or "",
            "environment": row["environment"] or "*",
        }  # fmt: skip
        return {**token, **_token_extra(logged, row["name"] or "")}

    def _all_api_token_data(self) -> list[dict[str, Any]]:
        run = [self._api_token_data(r) for r in self.run_token_rows.values()]
        rows = self.conn.execute(
            "SELECT * FROM tokens WHERE handle IS NOT NULL AND kind != 'personal'"
            " ORDER BY created_at, rowid"
        ).fetchall()
        return run + [self._api_token_data(r) for r in rows]

    def list_api_tokens(self, name: str | None = None) -> dict[str, Any]:
        """`GET /api/admin/api-tokens` (every token), `…/api-tokens/:name` (those of that name:
        names are not unique; none is `{"tokens": []}`), as plain data (`m.ApiTokenList`'s)."""
        tokens = self._all_api_token_data()
        if name is not None:
            tokens = [t for t in tokens if t["tokenName"] == name]
        return {"tokens": tokens}

    def project_api_tokens(self, project: str) -> m.ApiTokenList:
        """`GET /api/admin/projects/:p/api-tokens`: the project's tokens and those for every
        project, the admin token included, as every release answers (measured on 5.12, 6.10,
        7.6 and 8.2). 404 for no project."""
        self._known_project(project)
        tokens = [m.ApiToken.model_validate(t) for t in self._all_api_token_data()
                  if project in t["projects"] or "*" in t["projects"]]  # fmt: skip
        return m.ApiTokenList(tokens=tokens)

    def _known_project(self, project: str) -> None:
        if self.conn.execute("SELECT 1 FROM projects WHERE id = ?", (project,)).fetchone() is None:
            raise not_found("No project found")

    # ------------------------------------------------------------------ creating

    def create_api_token(
        self,
        req: m.CreateApiToken,
        by: Principal,
        project: str | None = None,
        *,
        backend: bool = True,
        logged: str = "secure",
    ) -> m.ApiToken:
        """`POST /api/admin/api-tokens` (or the project's, `project` from its path: the body's
        projects are then ignored, as 7.0 and later do). 201 with the whole secret, once.
        `backend`: the type `backend` exists (from 7.0; before, 400 as its schema says)."""
        kind = req.type.lower()
        if kind == "backend" and not backend:
            raise Refusal(400, "ValidationError", "Request validation failed", [{
                "message": "The `/body/type` property must match pattern "
                '"^([Cc][Ll][Ii][Ee][Nn][Tt]|[Ff][Rr][Oo][Nn][Tt][Ee][Nn][Dd])$". '
                f'You sent "{req.type}".', "path": "/body/type"}], by="checks")  # fmt: skip
        environment = req.environment or "development"
        if environment == "*":
            word = "Frontend" if kind == "frontend" else "Client"
            raise _bad_data(f"{word} token cannot be scoped to all environments")
        if project is not None:
            self._known_project(project)
            projects = [project]
        else:
            projects = list(req.projects or ["*"])
        if len(set(projects)) != len(projects):
            # (Unleash 8.2: a 500 exposing the duplicate key; the sandbox says which)
            raise bad_request("projects: a project is named twice", "$.projects")
        known = {r[0] for r in self.conn.execute("SELECT name FROM environments")}
        prefix = "Request validation failed: your request body or params contain invalid data"
        if environment not in known:
            raise _bad_data(f"{prefix}: Environment={environment} does not exist")
        for name in projects:
            if (
                name != "*"
                and self.conn.execute("SELECT 1 FROM projects WHERE id = ?", (name,)).fetchone()
                is None
            ):
                raise _bad_data(f"{prefix}: Project={name} does not exist")
        if "*" in projects and len(projects) > 1:
            raise bad_request("projects: `*` (every project) stands alone", "$.projects")
        head = (projects[0] if len(projects) == 1 else "[]") + ":" + environment
        now = self.clock()
        expires = _ms(req.expiresAt) if req.expiresAt is not None else None
        with self.tx() as c:
            while True:  # no two handles alike: a secret whose last 8 digits are taken is redrawn
                secret = f"{head}.{secrets.token_hex(SECRET_BYTES)}"
                if c.execute(
                    "SELECT 1 FROM tokens WHERE handle = ?", (masked(secret),)
                ).fetchone() is None and not any(
                    r["handle"] == masked(secret) for r in self.run_token_rows.values()
                ):
                    break
            c.execute(
                "INSERT INTO tokens(secret_hash, kind, user_id, environment, created_at, served,"
                " name, api_type, projects, handle, expires_at)"
                " VALUES(?, ?, NULL, ?, ?, 0, ?, ?, ?, ?, ?)",
                (token_hash(secret), "frontend" if kind == "frontend" else "client", environment,
                 now, req.tokenName, kind, json.dumps(projects), masked(secret), expires),
            )  # fmt: skip
            made = {"tokenName": req.tokenName, "environment": environment,
                    "projects": projects, "type": kind, "alias": None,
                    "project": projects[0] if len(projects) == 1 else "[]",
                    "createdAt": to_wire_time(now),
                    **_token_extra(logged, req.tokenName)}  # fmt: skip
            if expires is not None:
                made["expiresAt"] = to_wire_time(expires)
            self._event(c, "api-token-created", by, summary=f"**{by.user_name}** created API "
                        f"token **{req.tokenName}** ({kind}, {', '.join(projects)}, "
                        f"{environment})", environment=environment, at=now, data=made,
                        project=projects[0] if len(projects) == 1 else None)  # fmt: skip
        row = self.conn.execute("SELECT * FROM tokens WHERE handle = ?", (masked(secret),))
        token = self._api_token(row.fetchone())
        return token.model_copy(update={"secret": secret})

    # ------------------------------------------------------------------ changing, deleting

    def _find(self, token: str) -> tuple[str, dict[str, Any] | sqlite3.Row] | None:
        """The token named by its whole secret or its handle: (its hash, its row); None."""
        hashed = token_hash(token)
        if hashed in self.run_token_rows:
            return hashed, self.run_token_rows[hashed]
        for key, run in self.run_token_rows.items():
            if run["handle"] == token:
                return key, run
        row = self.conn.execute(
            "SELECT * FROM tokens WHERE kind != 'personal' AND handle IS NOT NULL"
            " AND (secret_hash = ? OR handle = ?)",
            (hashed, token),
        ).fetchone()
        return (row["secret_hash"], row) if row is not None else None

    def update_api_token(
        self, token: str, req: m.UpdateApiToken, by: Principal, *, logged: str = "secure"
    ) -> None:
        """`PUT /api/admin/api-tokens/:token {expiresAt}`: 200 with no body, also for a token
        it does not know (as Unleash: nothing changes)."""
        found = self._find(token)
        if found is None:
            return
        hashed, row = found
        expires = _ms(req.expiresAt)
        before = self._logged_token(row, logged)
        # data: the token after, every project as Unleash 8.2 logs it whatever its projects
        after = {**before, "project": "*", "projects": ["*"], "expiresAt": to_wire_time(expires)}
        with self.tx() as c:
            if hashed in self.run_token_rows:
                self.run_token_rows[hashed]["expires_at"] = expires
            else:
                c.execute("UPDATE tokens SET expires_at = ? WHERE secret_hash = ?",
                          (expires, hashed))  # fmt: skip
            self._event(c, "api-token-updated", by, summary=f"**{by.user_name}** changed the "
                        f"expiry of API token **{row['name']}**", project="*",
                        environment=before["environment"], pre_data=before,
                        data=after)  # fmt: skip

    def delete_api_token(
        self, token: str, by: Principal, project: str | None = None, *, logged: str = "secure"
    ) -> int:
        """`DELETE /api/admin/api-tokens/:token`: 200 with no body, also for a token it does
        not know (Unleash: nothing done). Under a project (`project`): 404 (no body) for an
        unknown token, 400 (no body) for one that is not that project's alone; 200 when done.
        Returns the status."""
        found = self._find(token)
        if found is None:
            return 404 if project is not None else 200
        hashed, row = found
        projects = row["projects"]
        projects = json.loads(projects) if isinstance(projects, str) else list(projects)
        if project is not None and projects != [project]:
            return 400
        before = self._logged_token(row, logged)
        with self.tx() as c:
            if hashed in self.run_token_rows:
                del self.run_token_rows[hashed]
                self.run_tokens.pop(hashed, None)
            else:
                c.execute("DELETE FROM tokens WHERE secret_hash = ?", (hashed,))
            self._event(c, "api-token-deleted", by, summary=f"**{by.user_name}** deleted API "
                        f"token **{row['name']}**", pre_data=before,
                        project=projects[0] if len(projects) == 1 else None,
                        environment=before["environment"])  # fmt: skip
        return 200


def _token_extra(logged: str, name: str) -> dict[str, Any]:
    """What a release logs of a token besides its listing (`Played.token_event_field`)."""
    if logged == "secure":
        return {"secure": False}
    if logged == "username":
        return {"username": name}
    return {}
