"""Groups: the list and creating one (the routes exist only when groups are served)."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from app.api import models as m
from sandbox.store.core import ROOT_ROLE_TYPES, Principal, Refusal, bad_request, to_dt
from sandbox.store.users import Users


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

    def create_group(self, req: m.CreateGroup, by: Principal) -> m.Group:
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
        now = self.clock()
        with self.tx() as c:
            taken = c.execute("SELECT 1 FROM groups_ WHERE name = ?", (req.name,)).fetchone()
            if taken is not None:
                raise Refusal(409, "NameExistsError", f"Group name {req.name!r} already exists")
            cur = c.execute(
                "INSERT INTO groups_(name, description, mappings_sso, root_role, created_by,"
                " created_at) VALUES(?, ?, ?, ?, ?, ?)",
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
                        f"**{req.name}**")  # fmt: skip
        row = self.conn.execute("SELECT * FROM groups_ WHERE id = ?", (group_id,)).fetchone()
        return self._group(row)
