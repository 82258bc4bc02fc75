"""Project access (Unleash Pro and Enterprise): who holds which project role in a project, users
and groups, as `GET|POST /api/admin/projects/:p/access` and `PUT|DELETE
/api/admin/projects/:p/{users,groups}/:id/roles` answer (the reference's section 3; the sandbox
serves them only when it serves groups, never when it plays an open-source release: 404 there).

- read: every user (service accounts too, `accountType`) and group holding a role here, each
  with all its roles here (`roles`; `roleId` the first), groups with their members, and every
  project role (`roles`). An unknown project is a 404 (Unleash documents none; the sandbox says
  which project it does not know).
- add: every role x user and role x group pair stored; pairs held already are kept (an upsert,
  never a conflict). 400 for no roles, for a role that is no project role (or no role), for
  user or group ids that do not exist (`details[].message`), and for a group with a custom root
  role (Unleash's docs: such a group cannot be added to a project).
- set roles: the user's or group's project roles here replaced; ids that are not project roles
  are dropped silently; `[]` removes them all. Remove: all its roles here (200 even if none).
  An unknown user or group id is a 404.
- who may grant or assign: the Admin root role (an admin API token has it) or the project's
  Owner role (directly or through a group); anyone else is refused 403 InvalidOperationError
  "User tried to grant role they did not have access to" (add) or "User tried to assign a role
  they did not have access to" (set roles); removing needs the same (403 NoAccessError). The
  `projectRoleAssignment` refinement (a custom role's holder granting roles whose permissions it
  has) is not played: the sandbox has no custom project roles with permissions.
- events: `project-access-added`, `project-access-user-roles-updated`,
  `project-access-group-roles-updated`, `project-access-user-roles-deleted`,
  `project-access-group-roles-deleted` (Unleash's names, `src/lib/types/events.ts`), each with
  its project.
"""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from app.api import models as m
from sandbox.store.core import (
    ADMIN_ROLE,
    EDITOR_ROLE,
    OWNER_ROLE,
    VIEWER_ROLE,
    Principal,
    Refusal,
    not_found,
    to_dt,
)
from sandbox.store.groups import Groups

#: the role types a project role can have (predefined and custom)
PROJECT_ROLE_TYPES = ("project", "custom")

GRANT_REFUSED = "User tried to grant role they did not have access to"
ASSIGN_REFUSED = "User tried to assign a role they did not have access to"


def _bad_data(message: str) -> Refusal:
    return Refusal(400, "BadDataError", message, [{"message": message}])


def _held(c: sqlite3.Connection, project: str, column: str, subject_id: int) -> list[int]:
    """The ids of the roles a user (`column` "user_id") or group ("group_id") holds in
    `project`: what Unleash's `project-access-*-roles-*` events list as `roles`."""
    return [r[0] for r in c.execute(
        f"SELECT DISTINCT role_id FROM project_roles WHERE project = ? AND {column} = ?"
        " ORDER BY role_id", (project, subject_id))]  # fmt: skip


class ProjectAccessStore(Groups):
    def _project_known(self, project: str) -> None:
        row = self.conn.execute("SELECT 1 FROM projects WHERE id = ?", (project,)).fetchone()
        if row is None:
            raise not_found(f"Could not find project with id {project}")

    def project_roles(self) -> list[m.Role]:
        return self.roles(PROJECT_ROLE_TYPES)

    def project_access(self, project: str) -> m.ProjectAccess:
        """`GET /api/admin/projects/:p/access`."""
        self._project_known(project)
        held: dict[int, list[int]] = defaultdict(list)
        added: dict[int, int] = {}
        group_held: dict[int, list[int]] = defaultdict(list)
        group_added: dict[int, int] = {}
        for row in self.conn.execute(
            "SELECT user_id, group_id, role_id, created_at FROM project_roles WHERE project = ?"
            " ORDER BY created_at, role_id",
            (project,),
        ):
            roles, since = (
                (held, added) if row["user_id"] is not None else (group_held, group_added)
            )
            key = row["user_id"] if row["user_id"] is not None else row["group_id"]
            if row["role_id"] not in roles[key]:
                roles[key].append(row["role_id"])
            since.setdefault(key, row["created_at"])
        users: list[m.ProjectAccessUser] = []
        if held:
            marks = ",".join("?" * len(held))
            for row in self.conn.execute(
                f"SELECT * FROM users WHERE id IN ({marks}) ORDER BY id", tuple(held)
            ):
                user = self._user(row)
                users.append(m.ProjectAccessUser(
                    **user.model_dump(exclude_unset=True, exclude={"isAPI"}),
                    addedAt=to_dt(added[row["id"]]), roleId=held[row["id"]][0],
                    roles=held[row["id"]],
                ))  # fmt: skip
        groups: list[m.ProjectAccessGroup] = []
        if group_held:
            marks = ",".join("?" * len(group_held))
            members: dict[int, list[m.GroupMember]] = defaultdict(list)
            for row in self.conn.execute(
                "SELECT gu.group_id, gu.joined_at, gu.created_by, u.* FROM group_users gu"
                f" JOIN users u ON u.id = gu.user_id WHERE gu.group_id IN ({marks})"
                " ORDER BY gu.joined_at, u.id",
                tuple(group_held),
            ):
                members[row["group_id"]].append(m.GroupMember(
                    joinedAt=to_dt(row["joined_at"]), createdBy=row["created_by"],
                    user=self._user(row)))  # fmt: skip
            for row in self.conn.execute(
                f"SELECT * FROM groups_ WHERE id IN ({marks}) ORDER BY name", tuple(group_held)
            ):
                fields: dict[str, Any] = {}
                if row["scim_id"]:
                    fields["scimId"] = row["scim_id"]
                groups.append(m.ProjectAccessGroup(
                    id=row["id"], name=row["name"], description=row["description"],
                    mappingsSSO=json.loads(row["mappings_sso"]), rootRole=row["root_role"],
                    createdBy=row["created_by"], createdAt=to_dt(row["created_at"]),
                    users=members[row["id"]], addedAt=to_dt(group_added[row["id"]]),
                    roleId=group_held[row["id"]][0], roles=group_held[row["id"]], **fields,
                ))  # fmt: skip
        return m.ProjectAccess(users=users, groups=groups, roles=self.project_roles())

    def access_overview(self) -> m.AccessOverview:
        """`GET /api/admin/access/overview` (Enterprise's, the reference's section 4): every
        user and service account by id, with its root role's name, its groups' names, and the
        projects in which it holds a project role, directly or through a group
        (`accessibleProjects`, the union the reference infers; Unleash's own query returns the
        group's part apart too, `groupProjects`, which is sent as well)."""
        direct: dict[int, set[str]] = defaultdict(set)
        through: dict[int, set[str]] = defaultdict(set)
        names: dict[int, list[str]] = defaultdict(list)
        for row in self.conn.execute(
            "SELECT user_id, project FROM project_roles WHERE user_id IS NOT NULL"
        ):
            direct[row[0]].add(row[1])
        for row in self.conn.execute(
            "SELECT gu.user_id, pr.project FROM group_users gu"
            " JOIN project_roles pr ON pr.group_id = gu.group_id"
        ):
            through[row[0]].add(row[1])
        for row in self.conn.execute(
            "SELECT gu.user_id, g.name FROM group_users gu JOIN groups_ g ON g.id = gu.group_id"
            " ORDER BY g.name"
        ):
            names[row[0]].append(row[1])
        overview = [
            m.UserAccess(
                userId=row["id"], userEmail=row["email"], userName=row["name"],
                rootRole=row["role"], createdAt=to_dt(row["created_at"]),
                lastSeen=to_dt(row["seen_at"]), groups=names[row["id"]],
                accessibleProjects=sorted(direct[row["id"]] | through[row["id"]]),
                groupProjects=sorted(through[row["id"]]),
            )
            for row in self.conn.execute(
                "SELECT u.id, u.email, u.name, u.created_at, u.seen_at, r.name AS role"
                " FROM users u LEFT JOIN roles r ON r.id = u.root_role ORDER BY u.id"
            )
        ]  # fmt: skip
        return m.AccessOverview(overview=overview)

    # ------------------------------------------------------------------ who may

    def _may_manage(self, project: str, who: Principal) -> bool:
        """The Admin root role, or the project's Owner role (directly or through a group)."""
        if self.root_role_of_caller(who) == ADMIN_ROLE:
            return True
        if who.user_id is None:
            return False
        row = self.conn.execute(
            "SELECT 1 FROM project_roles WHERE project = ? AND role_id = ? AND (user_id = ?"
            " OR group_id IN (SELECT group_id FROM group_users WHERE user_id = ?))",
            (project, OWNER_ROLE, who.user_id, who.user_id),
        ).fetchone()
        return row is not None

    def _project_role_ids(self) -> set[int]:
        marks = ",".join("?" * len(PROJECT_ROLE_TYPES))
        return {
            r[0]
            for r in self.conn.execute(
                f"SELECT id FROM roles WHERE type IN ({marks})", PROJECT_ROLE_TYPES
            )
        }

    @staticmethod
    def _ids_text(ids: Sequence[int]) -> str:
        return ", ".join(str(i) for i in ids)

    # ------------------------------------------------------------------ add

    def add_project_access(self, project: str, req: m.AddProjectAccess, by: Principal) -> None:
        """`POST /api/admin/projects/:p/access` (see the module's text)."""
        self._project_known(project)
        if not self._may_manage(project, by):
            raise Refusal(403, "InvalidOperationError", GRANT_REFUSED)
        roles = list(dict.fromkeys(req.roles))
        if not roles:
            raise _bad_data(
                "You can't grant access without any roles. The roles array you sent was empty."
            )
        valid = self._project_role_ids()
        invalid = [r for r in roles if r not in valid]
        if invalid:
            raise _bad_data(
                "You can't add access to a project with roles that aren't project roles or that "
                f"don't exist. These roles are not valid: {self._ids_text(invalid)}"
            )
        users = list(dict.fromkeys(req.users))
        groups = list(dict.fromkeys(req.groups))
        self._all_exist("users", users, "user IDs")
        self._all_exist("groups_", groups, "group IDs")
        custom = [
            r["name"]
            for r in self._rows_in("groups_", groups)
            if r["root_role"] is not None
            and r["root_role"] not in (ADMIN_ROLE, EDITOR_ROLE, VIEWER_ROLE)
        ]
        if custom:
            raise _bad_data(
                "A group with a custom root role cannot be given project roles: "
                + ", ".join(custom)
            )
        now = self.clock()
        with self.tx() as c:
            for role in roles:
                for user_id in users:
                    self._grant(c, project, role, now, user_id=user_id)
                for group_id in groups:
                    self._grant(c, project, role, now, group_id=group_id)
            self._event(c, "project-access-added", by, project=project,
                        summary=f"**{by.user_name}** gave roles {self._ids_text(roles)} in "
                        f"**{project}** to users {self._ids_text(users) or '-'} and groups "
                        f"{self._ids_text(groups) or '-'}",
                        data={"roles": [{"roleId": role, "groupIds": groups, "userIds": users}
                                        for role in roles]})  # fmt: skip

    def _rows_in(self, table: str, ids: Sequence[int]) -> list[sqlite3.Row]:
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        return self.conn.execute(
            f"SELECT * FROM {table} WHERE id IN ({marks})", tuple(ids)
        ).fetchall()

    def _all_exist(self, table: str, ids: Sequence[int], noun: str) -> None:
        found = {r["id"] for r in self._rows_in(table, ids)}
        if len(found) < len(ids):
            message = (
                f"Your request contains one or more {noun} that do not exist. You sent these "
                f"{noun}: {self._ids_text(ids)}"
            )
            raise Refusal(400, "BadDataError", message, [{"message": message}])

    @staticmethod
    def _grant(
        c: sqlite3.Connection,
        project: str,
        role: int,
        now: int,
        *,
        user_id: int | None = None,
        group_id: int | None = None,
    ) -> None:
        c.execute(
            "INSERT INTO project_roles(project, role_id, user_id, group_id, created_at)"
            " SELECT ?, ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM project_roles WHERE"
            " project = ? AND role_id = ? AND user_id IS ? AND group_id IS ?)",
            (project, role, user_id, group_id, now, project, role, user_id, group_id),
        )

    # ------------------------------------------------------------------ set, remove

    def _subject(self, kind: str, subject_id: int) -> str:
        """The user's or group's name for the event; 404 for an id that is none."""
        if kind == "user":
            row = self.conn.execute(
                "SELECT coalesce(email, username, name) FROM users WHERE id = ?", (subject_id,)
            ).fetchone()
            if row is None:
                raise not_found(f"No user found with id {subject_id}")
        else:
            row = self.conn.execute(
                "SELECT name FROM groups_ WHERE id = ?", (subject_id,)
            ).fetchone()
            if row is None:
                raise not_found(f"Could not find group with id {subject_id}")
        return str(row[0])

    def set_project_roles(
        self, project: str, kind: str, subject_id: int, req: m.ProjectRoles, by: Principal
    ) -> None:
        """`PUT /api/admin/projects/:p/{users,groups}/:id/roles` (`kind` "user" or "group")."""
        self._project_known(project)
        name = self._subject(kind, subject_id)
        if not self._may_manage(project, by):
            raise Refusal(403, "InvalidOperationError", ASSIGN_REFUSED)
        valid = self._project_role_ids()
        roles = [r for r in dict.fromkeys(req.roles) if r in valid]
        column = "user_id" if kind == "user" else "group_id"
        now = self.clock()
        with self.tx() as c:
            before = _held(c, project, column, subject_id)
            c.execute(
                f"DELETE FROM project_roles WHERE project = ? AND {column} = ?"
                + (f" AND role_id NOT IN ({','.join('?' * len(roles))})" if roles else ""),
                (project, subject_id, *roles),
            )
            for role in roles:
                self._grant(c, project, role, now, **{column: subject_id})
            key = f"{kind}Id"
            self._event(c, f"project-access-{kind}-roles-updated", by, project=project,
                        summary=f"**{by.user_name}** set the roles of {kind} **{name}** in "
                        f"**{project}** to {self._ids_text(roles) or 'none'}",
                        pre_data={"roles": before, key: subject_id},
                        data={"roles": _held(c, project, column, subject_id),
                              key: subject_id})  # fmt: skip

    def remove_project_access(
        self, project: str, kind: str, subject_id: int, by: Principal
    ) -> None:
        """`DELETE /api/admin/projects/:p/{users,groups}/:id/roles`: every role it holds here."""
        self._project_known(project)
        name = self._subject(kind, subject_id)
        if not self._may_manage(project, by):
            raise Refusal(
                403, "NoAccessError",
                "You need the Admin root role or the project's Owner role to remove access "
                f"to project {project}.",
                by="checks", extra={"permissions": ["PROJECT_USER_ACCESS_WRITE"]},
            )  # fmt: skip
        column = "user_id" if kind == "user" else "group_id"
        with self.tx() as c:
            before = _held(c, project, column, subject_id)
            c.execute(
                f"DELETE FROM project_roles WHERE project = ? AND {column} = ?",
                (project, subject_id),
            )
            self._event(c, f"project-access-{kind}-roles-deleted", by, project=project,
                        summary=f"**{by.user_name}** removed {kind} **{name}**'s roles in "
                        f"**{project}**",
                        pre_data={"roles": before, f"{kind}Id": subject_id})  # fmt: skip
