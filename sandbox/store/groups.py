"""Groups: the list, one group, creating, updating and deleting one (the routes exist only when
groups are served). Statuses follow Unleash Enterprise's group service: an unknown id is a 404 to
read or update and a 200 to delete (it does nothing); a name another group has is a 409; a
SCIM-managed group keeps its name and members (400)."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from app.api import models as m
from sandbox.store.core import (
    ROOT_ROLE_TYPES,
    Principal,
    Refusal,
    bad_request,
    not_found,
    to_dt,
)
from sandbox.store.users import Users


def _group_event_data(c: sqlite3.Connection, group_id: int) -> dict[str, Any]:
    """A group as Unleash records it in `group-created`, `-updated` and `-deleted` events: its
    fields with `users` the members' ids."""
    row = c.execute("SELECT * FROM groups_ WHERE id = ?", (group_id,)).fetchone()
    users = [
        r[0]
        for r in c.execute(
            "SELECT user_id FROM group_users WHERE group_id = ? ORDER BY user_id", (group_id,)
        )
    ]
    return {"id": row["id"], "name": row["name"], "description": row["description"],
            "mappingsSSO": json.loads(row["mappings_sso"] or "[]"), "rootRole": row["root_role"],
            "createdBy": row["created_by"], "users": users}  # fmt: skip


class Groups(Users):
    def _group(self, row: sqlite3.Row) -> m.Group:
        members = self.conn.execute(
            "SELECT gu.joined_at, gu.created_by, u.* FROM group_users gu"
            " JOIN users u ON u.id = gu.user_id WHERE gu.group_id = ? ORDER BY gu.joined_at, u.id",
            (row["id"],),
        ).fetchall()
        projects = [
            r[0]
            for r in self.conn.execute(
                "SELECT DISTINCT project FROM project_roles WHERE group_id = ? ORDER BY project",
                (row["id"],),
            )
        ]
        fields: dict[str, Any] = {
            "id": row["id"],
            "name": row["name"],
            "description": row["description"],
            "mappingsSSO": json.loads(row["mappings_sso"]),
            "rootRole": row["root_role"],
            "createdBy": row["created_by"],
            "createdAt": to_dt(row["created_at"]),
            "users": [
                m.GroupMember(
                    joinedAt=to_dt(r["joined_at"]), createdBy=r["created_by"], user=self._user(r)
                )
                for r in members
            ],
            "projects": projects,
            "userCount": len(members),
        }
        if row["scim_id"]:
            fields["scimId"] = row["scim_id"]
        return m.Group(**fields)

    def list_groups(self) -> m.GroupList:
        rows = self.conn.execute("SELECT * FROM groups_ ORDER BY name").fetchall()
        return m.GroupList(groups=[self._group(r) for r in rows])

    def _group_row(self, group_id: int) -> sqlite3.Row:
        row = self.conn.execute("SELECT * FROM groups_ WHERE id = ?", (group_id,)).fetchone()
        if row is None:
            raise not_found(f"Could not find group with id {group_id}")
        return row  # type: ignore[no-any-return]

    def get_group(self, group_id: int) -> m.Group:
        return self._group(self._group_row(group_id))

    def _check_group(self, req: m.CreateGroup) -> None:
        """400 for a root role that is not one, or a member who is no user."""
        if req.rootRole is not None:
            row = self.conn.execute(
                "SELECT type FROM roles WHERE id = ?", (req.rootRole,)
            ).fetchone()
            if row is None or row["type"] not in ROOT_ROLE_TYPES:
                raise bad_request(
                    f"rootRole {req.rootRole} is not the id of a root role "
                    f"({', '.join(f'{r.id} {r.name}' for r in self.roles())})",
                    "$.rootRole",
                )
        for index, member in enumerate(req.users):
            exists = self.conn.execute(
                "SELECT 1 FROM users WHERE id = ?", (member.user.id,)
            ).fetchone()
            if exists is None:
                raise bad_request(f"No user with id {member.user.id}", f"$.users[{index}].user.id")

    @staticmethod
    def _name_free(c: sqlite3.Connection, name: str, group_id: int | None = None) -> None:
        taken = c.execute(
            "SELECT 1 FROM groups_ WHERE name = ? AND id IS NOT ?", (name, group_id)
        ).fetchone()
        if taken is not None:
            raise Refusal(409, "NameExistsError", f"Group name {name!r} already exists")

    def create_group(self, req: m.CreateGroup, by: Principal) -> m.Group:
        self._check_group(req)
        now = self.clock()
        with self.tx() as c:
            self._name_free(c, req.name)
            cur = c.execute(
                "INSERT INTO groups_(id, name, description, mappings_sso, root_role, created_by,"
                " created_at) VALUES((SELECT last + 1 FROM group_sequence), ?, ?, ?, ?, ?, ?)",
                (req.name, req.description, json.dumps(req.mappingsSSO), req.rootRole,
                 by.user_name, now),
            )  # fmt: skip
            group_id = int(cur.lastrowid or 0)
            c.executemany(
                "INSERT OR IGNORE INTO group_users(group_id, user_id, joined_at, created_by)"
                " VALUES(?, ?, ?, ?)",
                [(group_id, member.user.id, now, by.user_name) for member in req.users],
            )
            self._event(c, "group-created", by, summary=f"**{by.user_name}** created group "
                        f"**{req.name}**", data=_group_event_data(c, group_id))  # fmt: skip
        return self.get_group(group_id)

    def update_group(self, group_id: int, req: m.CreateGroup, by: Principal) -> m.Group:
        """`PUT /api/admin/groups/:id`: every field replaced by the body's; members not in
        `users` leave, new ones join (those who stay keep their joining time). Answered as
        Unleash 8.2's groupWriteResponseSchema: the group without its members."""
        row = self._group_row(group_id)
        self._check_group(req)
        wanted = list(dict.fromkeys(member.user.id for member in req.users))
        if row["scim_id"]:
            current = {
                r[0]
                for r in self.conn.execute(
                    "SELECT user_id FROM group_users WHERE group_id = ?", (group_id,)
                )
            }
            if req.name != row["name"]:
                raise bad_request("Cannot update the name of a SCIM group")
            if set(wanted) != current:
                raise bad_request("Cannot update users of a SCIM group")
        now = self.clock()
        with self.tx() as c:
            before = _group_event_data(c, group_id)
            self._name_free(c, req.name, group_id)
            c.execute(
                "UPDATE groups_ SET name = ?, description = ?, mappings_sso = ?, root_role = ?"
                " WHERE id = ?",
                (req.name, req.description, json.dumps(req.mappingsSSO), req.rootRole, group_id),
            )
            marks = ",".join("?" * len(wanted))
            c.execute(
                f"DELETE FROM group_users WHERE group_id = ? AND user_id NOT IN ({marks})",
                (group_id, *wanted),
            )
            c.executemany(
                "INSERT OR IGNORE INTO group_users(group_id, user_id, joined_at, created_by)"
                " VALUES(?, ?, ?, ?)",
                [(group_id, user_id, now, by.user_name) for user_id in wanted],
            )
            self._event(c, "group-updated", by, summary=f"**{by.user_name}** updated group "
                        f"**{req.name}**", pre_data=before,
                        data=_group_event_data(c, group_id))  # fmt: skip
        group = self.get_group(group_id)
        return m.Group(**group.model_dump(exclude_unset=True, exclude={"users"}))

    def delete_group(self, group_id: int, by: Principal) -> None:
        """`DELETE /api/admin/groups/:id`: the group, its memberships and the project roles it
        held. An unknown id changes nothing and is no error (as Unleash's group service)."""
        with self.tx() as c:
            row = c.execute("SELECT name FROM groups_ WHERE id = ?", (group_id,)).fetchone()
            if row is None:
                return
            before = _group_event_data(c, group_id)
            c.execute("DELETE FROM group_users WHERE group_id = ?", (group_id,))
            c.execute("DELETE FROM project_roles WHERE group_id = ?", (group_id,))
            c.execute("DELETE FROM groups_ WHERE id = ?", (group_id,))
            self._event(c, "group-deleted", by, summary=f"**{by.user_name}** deleted group "
                        f"**{row['name']}**", pre_data=before)  # fmt: skip
