"""Login history (Unleash Enterprise 4.22+; `sandbox.app` serves it only when the sandbox plays
no open-source release, which answers 404): who tried to log in or out, when, how (`auth_type`),
from which address, and why a try failed.

As Enterprise keeps it: every event, no filter and no paging (`GET /api/admin/logins` "returns
all login events"; the UI filters, sorts and pages on its side), and only the last 14 days
(`KEPT_MS`): older events are deleted as the history is read, as Enterprise's scheduled
clean-up deletes them. Nothing in the sandbox logs in through a form, so its events come from
the demo data (`sandbox.demo`) or `record_login` (tests)."""

from __future__ import annotations

import sqlite3

from app.api import models as m
from sandbox.store.core import DAY_MS, Core, to_dt

#: how long login events are kept (Enterprise: 336 hours)
KEPT_MS = 14 * DAY_MS
#: the columns of the CSV, in loginEventSchema's order
CSV_FIELDS = ("id", "username", "auth_type", "created_at", "successful", "ip", "failure_reason",
              "type")  # fmt: skip


def _event(row: sqlite3.Row) -> m.LoginEvent:
    return m.LoginEvent(
        id=row["id"], username=row["username"], auth_type=row["auth_type"],
        created_at=to_dt(row["created_at"]), successful=bool(row["successful"]), ip=row["ip"],
        failure_reason=row["failure_reason"], type=row["type"],
    )  # fmt: skip


class Logins(Core):
    """The login history's one read, and what records an event."""

    def login_events(self) -> m.LoginEvents:
        """`GET /api/admin/logins`: every event of the last 14 days, newest first (Enterprise's
        order: by id, descending); those older are deleted first."""
        with self.tx() as c:
            c.execute("DELETE FROM login_events WHERE created_at < ?", (self.clock() - KEPT_MS,))
            rows = c.execute("SELECT * FROM login_events ORDER BY id DESC").fetchall()
        return m.LoginEvents(events=[_event(r) for r in rows])

    def record_login(
        self,
        username: str,
        *,
        successful: bool = True,
        auth_type: str = "password",
        ip: str | None = None,
        failure_reason: str | None = None,
        kind: str = "login",
        at: int | None = None,
    ) -> int:
        """A login (or logout) tried now (or `at`, ms); its id."""
        with self.tx() as c:
            cursor = c.execute(
                "INSERT INTO login_events(username, auth_type, created_at, successful, ip,"
                " failure_reason, type) VALUES(?, ?, ?, ?, ?, ?, ?)",
                (username, auth_type, self.clock() if at is None else at, int(successful), ip,
                 None if successful else failure_reason, kind),
            )  # fmt: skip
            return int(cursor.lastrowid or 0)
