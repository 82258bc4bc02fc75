"""Roles and their permissions, `/api/admin/roles*`, `/api/admin/permissions` and
`/api/admin/projects/roles/:roleId/access`, as Unleash Enterprise answers them
(../shared/reference/unleash-enterprise-admin-api.md section 2; served only when the sandbox
plays no open-source release, which has none of these routes: 404):

- the list holds every role, built-in and custom, root and project, by name; one role is read
  with its permissions (404 for an id it does not know);
- a creation answers 200 (not 201) `{version: 1, roles: <the role>}`, the one role under the
  plural key, as does an update; a deletion 200 with no body;
- types: `root` and `project` (built in: Admin 1, Editor 2, Viewer 3; Owner 4, Member 5),
  `root-custom` (a custom root role: Unleash's `CUSTOM_ROOT_ROLE_TYPE`; the sandbox called it
  `custom-root` before migration 12 -> 13) and `custom` (a custom project role); a type left out
  is `custom`;
- a name any role has already, whatever its type: 409 NameExistsError "There already exists a
  role with the name X" (names are trimmed; an empty one is a 400);
- changing or deleting a built-in role: 403 InvalidOperationError "You cannot change built in
  roles."; an id it does not know: 404 (the open-source service says 403 "You cannot change a
  non-existing role", the spec documents 404: the sandbox answers the spec's);
- a permission the catalogue does not have: 400 BadDataError "Invalid permissions supplied.
  The following permissions don't exist: X."; an environment permission of a custom project
  role names an environment (`""` is none), which must exist (the sandbox's own check: the
  answer names it); a root role's permissions keep no environment;
- an update replaces name, description and type, and the permissions when `permissions` is
  given (`[]` takes them all away), keeps them when it is left out or null;
- deleting a role in use: 400 RoleInUseError "Role is in use by users(N) or groups(M). ...".
  Unleash counts user and service-account assignments and groups' project roles only, its UI
  refuses the rest; the sandbox refuses every case: a root role any user, service account or
  group holds, a project role held in any project;
- `role-created`, `role-updated` and `role-deleted` events.

The catalogue (`PERMISSIONS`) has the permission names Unleash's `permissions.ts` lists, with
ids of the sandbox's own that never change (where Terraform's tests show Enterprise's, the same:
CREATE_PROJECT 12, UPDATE_PROJECT 13, CREATE_FEATURE_STRATEGY 25); the environment permissions
are listed once per environment. A role's id is never given again once it is deleted
(`role_sequence`): a journal names a role by its id.

Not the built-in project role `Reader` (added to Unleash by a migration of December 2025, its
id not fixed): no release the sandbox plays was measured with it, and the tools that show a
project's roles (the dashboard, groups) rely on Owner and Member alone.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from app.api import models as m
from sandbox.store.core import (
    ADMIN_ROLE,
    EDITOR_ROLE,
    MEMBER_ROLE,
    OWNER_ROLE,
    Principal,
    Refusal,
    not_found,
)
from sandbox.store.users import Users, bad_data

#: the custom root role's type, as Unleash names it
CUSTOM_ROOT = "root-custom"
CUSTOM_PROJECT = "custom"
BUILT_IN_TYPES = ("root", "project")
PROJECT_TYPES = ("project", CUSTOM_PROJECT)


def _permissions(first: int, kind: str, names: str) -> list[tuple[int, str, str]]:
    return [(first + i, name, kind) for i, name in enumerate(names.split())]


#: (id, name, type) of every permission a role can hold; ids fixed for good
PERMISSIONS: tuple[tuple[int, str, str], ...] = (
    *_permissions(
        1,
        "root",
        """ADMIN CREATE_ADDON UPDATE_ADDON DELETE_ADDON
        CREATE_CLIENT_API_TOKEN UPDATE_CLIENT_API_TOKEN DELETE_CLIENT_API_TOKEN
        READ_CLIENT_API_TOKEN CREATE_FRONTEND_API_TOKEN UPDATE_FRONTEND_API_TOKEN
        DELETE_FRONTEND_API_TOKEN CREATE_PROJECT""",
    ),
    *_permissions(
        13,
        "project",
        """UPDATE_PROJECT DELETE_PROJECT CREATE_FEATURE UPDATE_FEATURE
        DELETE_FEATURE UPDATE_FEATURE_DEPENDENCY UPDATE_FEATURE_VARIANTS MOVE_FEATURE_TOGGLE
        READ_PROJECT_API_TOKEN CREATE_PROJECT_API_TOKEN DELETE_PROJECT_API_TOKEN
        UPDATE_PROJECT_SEGMENT""",
    ),
    *_permissions(
        25,
        "environment",
        """CREATE_FEATURE_STRATEGY UPDATE_FEATURE_STRATEGY
        DELETE_FEATURE_STRATEGY UPDATE_FEATURE_ENVIRONMENT UPDATE_FEATURE_ENVIRONMENT_VARIANTS
        APPROVE_CHANGE_REQUEST APPLY_CHANGE_REQUEST SKIP_CHANGE_REQUEST""",
    ),
    *_permissions(
        33,
        "root",
        """READ_FRONTEND_API_TOKEN UPDATE_APPLICATION
        CREATE_CONTEXT_FIELD UPDATE_CONTEXT_FIELD DELETE_CONTEXT_FIELD CREATE_SEGMENT
        UPDATE_SEGMENT DELETE_SEGMENT CREATE_STRATEGY UPDATE_STRATEGY DELETE_STRATEGY
        CREATE_TAG_TYPE UPDATE_TAG_TYPE DELETE_TAG_TYPE READ_ROLE RELEASE_PLAN_TEMPLATE_CREATE
        RELEASE_PLAN_TEMPLATE_UPDATE RELEASE_PLAN_TEMPLATE_DELETE READ_LOGS
        UPDATE_MAINTENANCE_MODE UPDATE_INSTANCE_BANNERS UPDATE_CORS UPDATE_AUTH_CONFIGURATION""",
    ),
    *_permissions(
        56,
        "project",
        """UPDATE_PROJECT_CONTEXT UPDATE_PROJECT_RELEASE_TEMPLATE
        PROJECT_USER_ACCESS_READ PROJECT_USER_ACCESS_WRITE PROJECT_DEFAULT_STRATEGY_READ
        PROJECT_DEFAULT_STRATEGY_WRITE PROJECT_CHANGE_REQUEST_READ PROJECT_CHANGE_REQUEST_WRITE
        PROJECT_SETTINGS_READ PROJECT_SETTINGS_WRITE""",
    ),
)
PERMISSION_BY_NAME: dict[str, tuple[int, str, str]] = {p[1]: p for p in PERMISSIONS}
PERMISSION_BY_ID: dict[int, tuple[int, str, str]] = {p[0]: p for p in PERMISSIONS}

_EDITOR = """CREATE_PROJECT CREATE_ADDON UPDATE_ADDON DELETE_ADDON UPDATE_APPLICATION
    CREATE_CONTEXT_FIELD UPDATE_CONTEXT_FIELD DELETE_CONTEXT_FIELD CREATE_SEGMENT UPDATE_SEGMENT
    DELETE_SEGMENT CREATE_STRATEGY UPDATE_STRATEGY DELETE_STRATEGY CREATE_TAG_TYPE
    UPDATE_TAG_TYPE DELETE_TAG_TYPE"""
_MEMBER = """CREATE_FEATURE UPDATE_FEATURE DELETE_FEATURE UPDATE_FEATURE_DEPENDENCY
    UPDATE_FEATURE_VARIANTS READ_PROJECT_API_TOKEN CREATE_PROJECT_API_TOKEN
    DELETE_PROJECT_API_TOKEN"""
_MEMBER_ENVIRONMENT = """CREATE_FEATURE_STRATEGY UPDATE_FEATURE_STRATEGY DELETE_FEATURE_STRATEGY
    UPDATE_FEATURE_ENVIRONMENT UPDATE_FEATURE_ENVIRONMENT_VARIANTS"""

#: the built-in roles' permissions, (role, permission, environment: "" or "*" for each one)
BUILT_IN_PERMISSIONS: tuple[tuple[int, str, str], ...] = (
    (ADMIN_ROLE, "ADMIN", ""),
    *((EDITOR_ROLE, name, "") for name in _EDITOR.split()),
    *((OWNER_ROLE, name, "") for _, name, kind in PERMISSIONS if kind == "project"),
    *((OWNER_ROLE, name, "*") for _, name, kind in PERMISSIONS if kind == "environment"),
    *((MEMBER_ROLE, name, "") for name in _MEMBER.split()),
    *((MEMBER_ROLE, name, "*") for name in _MEMBER_ENVIRONMENT.split()),
)


def seed_built_in_permissions(c: sqlite3.Connection) -> None:
    """The built-in roles' permissions, those missing (`Store.initialise`): an environment
    permission of Owner and Member in each environment there is."""
    if c.execute("SELECT 1 FROM sqlite_master WHERE name = 'role_permissions'").fetchone() is None:
        return  # a database at a schema before roles' permissions (tests make such)
    environments = [row[0] for row in c.execute("SELECT name FROM environments ORDER BY name")]
    rows = [(role, name, env) for role, name, where in BUILT_IN_PERMISSIONS
            for env in (environments if where == "*" else [where])]  # fmt: skip
    c.executemany(
        "INSERT OR IGNORE INTO role_permissions(role_id, permission, environment)"
        " SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM roles WHERE id = ?)",
        [(*row, row[0]) for row in rows],
    )


def _display(name: str) -> str:
    return name.replace("_", " ").lower().capitalize()


def _permission(name: str, environment: str | None = None) -> m.AdminPermission:
    pid, _, kind = PERMISSION_BY_NAME[name]
    return m.AdminPermission(id=pid, name=name, displayName=_display(name), type=kind,
                             environment=environment or None)  # fmt: skip


def _role(row: sqlite3.Row) -> m.Role:
    return m.Role(id=row["id"], name=row["name"], type=row["type"],
                  description=row["description"], project=None)  # fmt: skip


def _name_taken(name: str) -> Refusal:
    message = f"There already exists a role with the name {name}"
    return Refusal(409, "NameExistsError", message, [{"message": message}])


def _built_in() -> Refusal:
    message = "You cannot change built in roles."
    return Refusal(403, "InvalidOperationError", message, [{"message": message}])


def _role_event_data(c: sqlite3.Connection, role_id: int) -> dict[str, Any]:
    """A role as Unleash records it in `role-created`, `-updated` and `-deleted` events: its
    fields and its permissions (name, and environment where it has one)."""
    row = c.execute("SELECT * FROM roles WHERE id = ?", (role_id,)).fetchone()
    permissions = [
        {"name": name, **({"environment": env} if env else {})}
        for name, env in c.execute(
            "SELECT permission, environment FROM role_permissions WHERE role_id = ?"
            " ORDER BY permission, environment", (role_id,))
    ]  # fmt: skip
    return {"id": row["id"], "name": row["name"], "type": row["type"],
            "description": row["description"], "permissions": permissions}  # fmt: skip


class Roles(Users):
    def list_roles(self) -> m.RoleList:
        rows = self.conn.execute("SELECT * FROM roles ORDER BY name, id").fetchall()
        return m.RoleList(version=1, roles=[_role(r) for r in rows])

    def _role_row(self, role_id: int) -> sqlite3.Row:
        row = self.conn.execute("SELECT * FROM roles WHERE id = ?", (role_id,)).fetchone()
        if row is None:
            raise not_found(f"Could not find role with id: {role_id}")
        return row  # type: ignore[no-any-return]

    def get_role(self, role_id: int) -> m.RoleWithPermissions:
        row = self._role_row(role_id)
        held = self.conn.execute(
            "SELECT permission, environment FROM role_permissions WHERE role_id = ?",
            (role_id,),
        ).fetchall()
        permissions = sorted(
            (_permission(p, env) for p, env in held if p in PERMISSION_BY_NAME),
            key=lambda p: (p.id or 0, p.environment or ""),
        )
        return m.RoleWithPermissions(**_role(row).model_dump(), permissions=permissions)

    def permission_catalogue(self) -> m.AdminPermissions:
        """adminPermissionsSchema: the root and project permissions, and the environment
        permissions once per environment (in the environments' order)."""
        environments = [row[0] for row in self.conn.execute(
            "SELECT name FROM environments ORDER BY sort_order, name")]  # fmt: skip
        of = [name for _, name, kind in PERMISSIONS if kind == "environment"]
        return m.AdminPermissions(version=1, permissions=m.PermissionGroups(
            root=[_permission(n) for _, n, k in PERMISSIONS if k == "root"],
            project=[_permission(n) for _, n, k in PERMISSIONS if k == "project"],
            environments=[m.EnvironmentPermissions(name=env, permissions=[
                _permission(n, env) for n in of]) for env in environments],
        ))  # fmt: skip

    def _checked(self, body: m.CreateRole, role_id: int | None) -> tuple[str, str]:
        """The role's trimmed name and its type; 400 for an empty name, 409 for one any other
        role has, 400 for permissions the catalogue does not have."""
        name = body.name.strip()
        if not name:
            raise bad_data('"name" is not allowed to be empty')
        kind = body.type or CUSTOM_PROJECT
        taken = self.conn.execute(
            "SELECT 1 FROM roles WHERE name = ? AND id IS NOT ?", (name, role_id)
        ).fetchone()
        if taken is not None:
            raise _name_taken(name)
        self._permission_rows(body.permissions or [], kind)
        return name, kind

    def _permission_rows(
        self, given: Sequence[m.RolePermission], kind: str
    ) -> list[tuple[str, str]]:
        """(name, environment) of each permission given, as stored: a root role's without an
        environment. 400 naming those the catalogue does not have, or an environment there is
        not."""
        unknown = [p.name for p in given if p.name not in PERMISSION_BY_NAME]
        if unknown:
            message = ("Invalid permissions supplied. The following permissions don't exist: "
                       f"{', '.join(unknown)}.")  # fmt: skip
            raise Refusal(400, "BadDataError", message, [{"message": message}])
        environments = {row[0] for row in self.conn.execute("SELECT name FROM environments")}
        rows: dict[tuple[str, str], None] = {}
        for p in given:
            environment = "" if kind != CUSTOM_PROJECT else (p.environment or "")
            if environment and environment not in environments:
                raise bad_data(f"The permission {p.name} names the environment {environment}, "
                               f"which does not exist")  # fmt: skip
            rows[(p.name, environment)] = None
        return list(rows)

    def _write_permissions(
        self, c: sqlite3.Connection, role_id: int, rows: Iterable[tuple[str, str]]
    ) -> None:
        c.execute("DELETE FROM role_permissions WHERE role_id = ?", (role_id,))
        c.executemany(
            "INSERT INTO role_permissions(role_id, permission, environment) VALUES(?, ?, ?)",
            [(role_id, name, env) for name, env in rows],
        )

    def validate_role(self, body: m.CreateRole) -> None:
        """`POST /api/admin/roles/validate`: the creation's checks, nothing stored."""
        self._checked(body, None)

    def create_role(self, body: m.CreateRole, who: Principal) -> m.RoleAnswer:
        name, kind = self._checked(body, None)
        rows = self._permission_rows(body.permissions or [], kind)
        with self.tx() as c:
            (last,) = c.execute("SELECT last FROM role_sequence").fetchone()
            (highest,) = c.execute("SELECT coalesce(max(id), 0) FROM roles").fetchone()
            role_id = max(int(last), int(highest)) + 1
            c.execute("INSERT INTO roles(id, name, type, description) VALUES(?, ?, ?, ?)",
                      (role_id, name, kind, body.description or ""))  # fmt: skip
            self._write_permissions(c, role_id, rows)
            self._event(c, "role-created", who,
                        summary=f"**{who.user_name}** created the role **{name}**",
                        data=_role_event_data(c, role_id))  # fmt: skip
        return m.RoleAnswer(version=1, roles=_role(self._role_row(role_id)))

    def _custom_row(self, role_id: int) -> sqlite3.Row:
        row = self._role_row(role_id)
        if row["type"] in BUILT_IN_TYPES:
            raise _built_in()
        return row

    def update_role(self, role_id: int, body: m.CreateRole, who: Principal) -> m.RoleAnswer:
        self._custom_row(role_id)
        name, kind = self._checked(body, role_id)
        with self.tx() as c:
            before = _role_event_data(c, role_id)
            c.execute("UPDATE roles SET name = ?, type = ?, description = ? WHERE id = ?",
                      (name, kind, body.description or "", role_id))  # fmt: skip
            if body.permissions is not None:
                self._write_permissions(c, role_id, self._permission_rows(body.permissions, kind))
            elif kind != CUSTOM_PROJECT:  # a root role keeps no environment
                names = [r[0] for r in c.execute(
                    "SELECT DISTINCT permission FROM role_permissions WHERE role_id = ?",
                    (role_id,))]  # fmt: skip
                self._write_permissions(c, role_id, [(n, "") for n in names])
            self._event(c, "role-updated", who,
                        summary=f"**{who.user_name}** updated the role **{name}**",
                        pre_data=before, data=_role_event_data(c, role_id))  # fmt: skip
        return m.RoleAnswer(version=1, roles=_role(self._role_row(role_id)))

    def role_holders(self, role_id: int) -> tuple[int, int]:
        """How many users (service accounts included) and groups hold the role: as their root
        role, or in any project."""
        (users,) = self.conn.execute(
            "SELECT count(*) FROM (SELECT id FROM users WHERE root_role = ?"
            " UNION SELECT user_id FROM project_roles WHERE role_id = ? AND user_id IS NOT NULL)",
            (role_id, role_id),
        ).fetchone()
        (groups,) = self.conn.execute(
            "SELECT count(*) FROM (SELECT id FROM groups_ WHERE root_role = ?"
            " UNION SELECT group_id FROM project_roles WHERE role_id = ? AND group_id IS NOT NULL)",
            (role_id, role_id),
        ).fetchone()
        return int(users), int(groups)

    def delete_role(self, role_id: int, who: Principal) -> None:
        row = self._custom_row(role_id)
        users, groups = self.role_holders(role_id)
        if users or groups:
            message = (f"Role is in use by users({users}) or groups({groups}). You cannot delete "
                       "a role that is in use without first removing the role from the users "
                       "and groups.")  # fmt: skip
            raise Refusal(400, "RoleInUseError", message, [{"message": message}])
        with self.tx() as c:
            before = _role_event_data(c, role_id)
            c.execute("DELETE FROM role_permissions WHERE role_id = ?", (role_id,))
            c.execute("DELETE FROM roles WHERE id = ?", (role_id,))
            self._event(c, "role-deleted", who, summary=f"**{who.user_name}** deleted the role "
                        f"**{row['name']}**", pre_data=before)  # fmt: skip

    def role_access(self, role_id: int) -> m.ProjectRoleUsages:
        """projectRoleSchema per project where the role is held: its users, service accounts
        and groups there (an unknown role: none)."""
        rows = self.conn.execute(
            "SELECT pr.project,"
            " count(DISTINCT CASE WHEN u.account_type = 'User' THEN u.id END),"
            " count(DISTINCT CASE WHEN u.account_type != 'User' THEN u.id END),"
            " count(DISTINCT pr.group_id)"
            " FROM project_roles pr LEFT JOIN users u ON u.id = pr.user_id"
            " WHERE pr.role_id = ? GROUP BY pr.project ORDER BY pr.project",
            (role_id,),
        ).fetchall()
        return m.ProjectRoleUsages(projects=[
            m.ProjectRoleUsage(project=r[0], role=role_id, userCount=r[1],
                               serviceAccountCount=r[2], groupCount=r[3])
            for r in rows
        ])  # fmt: skip
