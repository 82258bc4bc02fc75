"""The sandbox's roles and permissions over HTTP, as Unleash Enterprise answers them
(../shared/reference/unleash-enterprise-admin-api.md section 2): the list of every role; one
role with its permissions (404 for an unknown id); the catalogue with the same permission ids
in each environment; a creation's 200 `{version, roles: <the role>}` with the name trimmed and
`custom` for no type; custom root roles typed `root-custom`; a name any role has (409), unknown
permissions (400), a built-in role changed or deleted (403), an update's permissions replaced,
kept or wiped; a role in use refused (400 RoleInUseError with the counts) whoever holds it, and
where a project role is held; ids never given again; the events; an older database's
`custom-root` rows read as `root-custom`; and every roles route a 404 on a played open-source
release."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.api import models as m
from sandbox import db
from sandbox.process import SandboxProcess
from sandbox.store import Store
from sandbox.versions import PLAYABLE
from tests.compat import test_roles as scenarios
from tests.compat.conftest import Peer
from tests.conftest import personal_token_of
from tests.sandbox.conftest import assert_error

ROLES = "/api/admin/roles"


def sql(sb: SandboxProcess, query: str, *params: object) -> list[tuple[object, ...]]:
    conn = db.connect(sb.db)
    try:
        with conn:
            return [tuple(row) for row in conn.execute(query, params).fetchall()]
    finally:
        conn.close()


def made(http: httpx.Client, **body: Any) -> m.Role:
    answer = http.post(ROLES, json=body)
    assert answer.status_code == 200, answer.text
    return m.RoleAnswer.model_validate(answer.json()).roles


def test_the_list_and_one_role_with_its_permissions(demo_sandbox: SandboxProcess) -> None:
    with demo_sandbox.admin() as http:
        listed = http.get(ROLES)
        assert listed.status_code == 200, listed.text
        body = listed.json()
        assert body["version"] == 1
        roles = m.RoleList.model_validate(body).roles
        builtin = {(r.id, r.name, r.type) for r in roles if r.id <= 5}
        assert builtin == {(1, "Admin", "root"), (2, "Editor", "root"), (3, "Viewer", "root"),
                           (4, "Owner", "project"), (5, "Member", "project")}  # fmt: skip
        assert [r.name for r in roles] == sorted(r.name for r in roles)  # by name

        admin = m.RoleWithPermissions.model_validate(http.get(f"{ROLES}/1").json())
        assert [(p.name, p.type) for p in admin.permissions] == [("ADMIN", "root")]
        member = m.RoleWithPermissions.model_validate(http.get(f"{ROLES}/5").json())
        held = {(p.name, p.environment) for p in member.permissions}
        assert ("CREATE_FEATURE", None) in held
        assert {("UPDATE_FEATURE_ENVIRONMENT", "development"),
                ("UPDATE_FEATURE_ENVIRONMENT", "production")} <= held  # fmt: skip
        viewer = m.RoleWithPermissions.model_validate(http.get(f"{ROLES}/3").json())
        assert viewer.permissions == []

        assert_error(http.get(f"{ROLES}/999"), 404, "NotFoundError")
        assert_error(http.get(f"{ROLES}/x"), 400, "ValidationError")


def test_the_permission_catalogue(demo_sandbox: SandboxProcess) -> None:
    with demo_sandbox.admin() as http:
        answer = http.get("/api/admin/permissions")
    assert answer.status_code == 200, answer.text
    catalogue = m.AdminPermissions.model_validate(answer.json()).permissions
    root = {p.name: p.id for p in catalogue.root}
    project = {p.name: p.id for p in catalogue.project}
    # the ids Terraform's tests show on Enterprise
    assert root["CREATE_PROJECT"] == 12 and project["UPDATE_PROJECT"] == 13
    assert {"ADMIN", "READ_ROLE", "UPDATE_CORS"} <= set(root)
    assert {"CREATE_FEATURE", "PROJECT_SETTINGS_WRITE"} <= set(project)
    # the demo's three environments (flag configuration, issue 37 slice 1, added staging)
    assert [env.name for env in catalogue.environments] == ["development", "staging", "production"]
    first, second, _ = catalogue.environments
    assert [(p.id, p.name) for p in first.permissions] == [(p.id, p.name) for p in
                                                           second.permissions]  # fmt: skip
    assert {p.environment for p in first.permissions} == {"development"}
    assert next(p.id for p in first.permissions if p.name == "CREATE_FEATURE_STRATEGY") == 25
    ids = [p.id for p in (*catalogue.root, *catalogue.project, *first.permissions)]
    assert len(ids) == len(set(ids))


def test_create_read_update_and_delete(sandbox: SandboxProcess) -> None:
    with sandbox.admin() as http:
        answer = http.post(ROLES, json={
            "name": "  Deployer ", "description": "Ships flags",
            "permissions": [{"name": "CREATE_FEATURE"},
                            {"name": "UPDATE_FEATURE_ENVIRONMENT", "environment": "development"},
                            {"name": "UPDATE_FEATURE", "environment": ""}],
        })  # fmt: skip
        assert answer.status_code == 200, answer.text  # not 201
        assert "location" not in answer.headers
        body = answer.json()
        assert body["version"] == 1 and isinstance(body["roles"], dict)  # the plural key
        role = m.RoleAnswer.model_validate(body).roles
        assert (role.name, role.type, role.description) == ("Deployer", "custom", "Ships flags")

        read = m.RoleWithPermissions.model_validate(http.get(f"{ROLES}/{role.id}").json())
        assert {(p.name, p.environment) for p in read.permissions} == {
            ("CREATE_FEATURE", None), ("UPDATE_FEATURE", None),
            ("UPDATE_FEATURE_ENVIRONMENT", "development")}  # fmt: skip
        assert role.id in {r.id for r in m.RoleList.model_validate(http.get(ROLES).json()).roles}

        # permissions left out: kept; name, description and type replaced
        kept = http.put(f"{ROLES}/{role.id}", json={"name": "Shipper"})
        assert kept.status_code == 200, kept.text
        assert m.RoleAnswer.model_validate(kept.json()).roles.description == ""
        again = m.RoleWithPermissions.model_validate(http.get(f"{ROLES}/{role.id}").json())
        assert again.name == "Shipper" and len(again.permissions) == 3
        # given: replaced; `[]`: all gone
        replaced = http.put(f"{ROLES}/{role.id}", json={
            "name": "Shipper", "permissions": [{"name": "DELETE_FEATURE"}]})  # fmt: skip
        assert replaced.status_code == 200, replaced.text
        again = m.RoleWithPermissions.model_validate(http.get(f"{ROLES}/{role.id}").json())
        assert [p.name for p in again.permissions] == ["DELETE_FEATURE"]
        wiped = http.put(f"{ROLES}/{role.id}", json={"name": "Shipper", "permissions": []})
        assert wiped.status_code == 200, wiped.text
        assert http.get(f"{ROLES}/{role.id}").json()["permissions"] == []

        gone = http.delete(f"{ROLES}/{role.id}")
        assert (gone.status_code, gone.content) == (200, b"")
        assert_error(http.get(f"{ROLES}/{role.id}"), 404, "NotFoundError")
        assert_error(http.delete(f"{ROLES}/{role.id}"), 404, "NotFoundError")
        assert_error(http.put(f"{ROLES}/{role.id}", json={"name": "Z"}), 404, "NotFoundError")
        # the id is never given again
        assert made(http, name="Deployer").id > role.id
    events = sql(sandbox, "SELECT type FROM events WHERE type LIKE 'role-%' ORDER BY id")
    assert [e[0] for e in events] == ["role-created", "role-updated", "role-updated",
                                      "role-updated", "role-deleted", "role-created"]  # fmt: skip


def test_a_custom_root_role_is_root_custom_and_keeps_no_environment(
    sandbox: SandboxProcess,
) -> None:
    with sandbox.admin() as http:
        given = [{"name": "READ_LOGS"}, {"name": "UPDATE_PROJECT", "environment": "development"}]
        role = made(http, name="Auditor", type="root-custom", permissions=given)
        assert role.type == "root-custom"
        read = m.RoleWithPermissions.model_validate(http.get(f"{ROLES}/{role.id}").json())
        assert {(p.name, p.environment) for p in read.permissions} == {
            ("READ_LOGS", None), ("UPDATE_PROJECT", None)}  # fmt: skip
        # a user can hold it as their root role, and the users' list names it with the others
        user = http.post("/api/admin/user-admin", json={"email": "aud@example.com",
                                                        "rootRole": role.id})  # fmt: skip
        assert user.status_code == 201, user.text
        root_roles = m.UserList.model_validate(http.get("/api/admin/user-admin").json()).rootRoles
        assert (role.id, "root-custom") in {(r.id, r.type) for r in root_roles}
        assert http.post(ROLES, json={"name": "X", "type": "custom-root"}).status_code == 400


def test_refusals(sandbox: SandboxProcess) -> None:
    with sandbox.admin() as http:
        made(http, name="Ops")
        for name in ("Admin", "Owner", "Ops", " Ops "):  # whatever the type
            body = assert_error(http.post(ROLES, json={"name": name}), 409, "NameExistsError")
            assert body["message"] == f"There already exists a role with the name {name.strip()}"
        other = made(http, name="Other")
        assert_error(http.put(f"{ROLES}/{other.id}", json={"name": "Ops"}), 409,
                     "NameExistsError")  # fmt: skip
        given = [{"name": "FLY"}, {"name": "CREATE_FEATURE"}, {"name": "SWIM"}]
        answer = http.post(ROLES, json={"name": "N", "permissions": given})
        body = assert_error(answer, 400, "BadDataError")
        assert body["message"] == ("Invalid permissions supplied. The following permissions "
                                   "don't exist: FLY, SWIM.")  # fmt: skip
        body = assert_error(http.post(ROLES, json={"name": "N", "permissions": [
            {"name": "UPDATE_FEATURE_ENVIRONMENT", "environment": "qa"}]}), 400,
            "BadDataError")  # fmt: skip
        assert "qa" in str(body["message"])  # (the demo has a staging: issue 37 slice 1)
        assert_error(http.post(ROLES, json={"name": ""}), 400, "ValidationError")
        assert_error(http.post(ROLES, json={"name": "   "}), 400, "BadDataError")
        for role_id in (1, 2, 3, 4, 5):
            for answer in (http.put(f"{ROLES}/{role_id}", json={"name": f"B{role_id}"}),
                           http.delete(f"{ROLES}/{role_id}")):  # fmt: skip
                body = assert_error(answer, 403, "InvalidOperationError")
                assert body["message"] == "You cannot change built in roles."
        # validate: the creation's checks, nothing made
        valid = http.post(f"{ROLES}/validate", json={"name": "Fresh"})
        assert (valid.status_code, valid.content) == (200, b"")
        assert_error(http.post(f"{ROLES}/validate", json={"name": "Ops"}), 409, "NameExistsError")
        assert "Fresh" not in http.get(ROLES).text
    # an Editor or Viewer may read, not change
    viewer = personal_token_of(sandbox, "sofia.mendes")
    with httpx.Client(base_url=sandbox.url, headers={"Authorization": viewer}) as http:
        assert http.get(ROLES).status_code == 200
        assert_error(http.post(ROLES, json={"name": "V"}), 403, "NoAccessError")


def test_a_role_in_use_is_not_deleted(sandbox: SandboxProcess) -> None:
    with sandbox.admin() as http:
        root = made(http, name="Reader root", type="root-custom")
        user = http.post("/api/admin/user-admin", json={"email": "r@example.com",
                                                        "rootRole": root.id}).json()  # fmt: skip
        body = assert_error(http.delete(f"{ROLES}/{root.id}"), 400, "RoleInUseError")
        assert str(body["message"]).startswith(
            "Role is in use by users(1) or groups(0). You cannot delete a role that is in use"
        )
        # a group's root role counts too (Unleash's UI refuses it; the sandbox as well)
        http.put(f"/api/admin/user-admin/{user['id']}", json={"rootRole": 3})
        group = http.post("/api/admin/groups", json={"name": "Readers", "rootRole": root.id})
        assert group.status_code == 201, group.text
        body = assert_error(http.delete(f"{ROLES}/{root.id}"), 400, "RoleInUseError")
        assert "users(0) or groups(1)" in str(body["message"])
        http.delete(f"/api/admin/groups/{group.json()['id']}")
        assert http.delete(f"{ROLES}/{root.id}").status_code == 200

        project = made(http, name="Deployer")
        usage = http.get(f"/api/admin/projects/roles/{project.id}/access")
        assert (usage.status_code, usage.json()) == (200, {"projects": []})
    sql(sandbox, "INSERT INTO project_roles(project, role_id, user_id, created_at)"
        " SELECT 'web-shop', ?, id, 0 FROM users WHERE username IN ('ci-deploy-bot', 'admin')",
        project.id)  # fmt: skip
    sql(sandbox, "UPDATE users SET account_type = 'Service Account' WHERE username = ?",
        "ci-deploy-bot")  # fmt: skip
    sql(sandbox, "INSERT INTO project_roles(project, role_id, group_id, created_at)"
        " SELECT 'payments', ?, min(id), 0 FROM groups_", project.id)  # fmt: skip
    with sandbox.admin() as http:
        held = m.ProjectRoleUsages.model_validate(
            http.get(f"/api/admin/projects/roles/{project.id}/access").json()
        )
        assert [(p.project, p.role, p.userCount, p.serviceAccountCount, p.groupCount)
                for p in held.projects] == [("payments", project.id, 0, 0, 1),
                                             ("web-shop", project.id, 1, 1, 0)]  # fmt: skip
        body = assert_error(http.delete(f"{ROLES}/{project.id}"), 400, "RoleInUseError")
        assert "users(2) or groups(1)" in str(body["message"])


def test_an_older_database_s_custom_root_roles_become_root_custom(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.create_function("token_hash", 1, db.token_hash)
    # the schema before roles' permissions (no longer the last migration)
    before = next(
        i for i, sql in enumerate(db.MIGRATIONS) if "CREATE TABLE role_permissions" in sql
    )
    for version in range(before):
        conn.execute("BEGIN")
        for statement in db._split_sql(db.MIGRATIONS[version]):
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {version + 1}")
        conn.execute("COMMIT")
    Store(conn).initialise()
    conn.execute("INSERT INTO roles(id, name, type, description) VALUES(9, 'Auditor',"
                 " 'custom-root', 'Reads everything')")  # fmt: skip
    conn.close()
    with SandboxProcess(path) as sb, sb.admin() as http:
        roles = m.RoleList.model_validate(http.get(ROLES).json()).roles
        assert (9, "Auditor", "root-custom") in {(r.id, r.name, r.type) for r in roles}
        assert [p["name"] for p in http.get(f"{ROLES}/1").json()["permissions"]] == ["ADMIN"]
        # the id is not given again to a new role
        assert made(http, name="New").id == 10


@pytest.mark.parametrize("line", list(PLAYABLE))
def test_open_source_releases_have_no_roles_api(tmp_path: Path, line: str) -> None:
    """tests/compat/test_roles.py's scenarios (each stating what every release answers) against
    the sandbox playing `line`: every roles route a 404 with the admin API token and a personal
    access token, the built-in root roles listed with the users, the client changing nothing."""
    with SandboxProcess(tmp_path / "s.sqlite3", "--demo", "--as-version", line) as sb:
        target = Peer(sb.url, sb.admin_token, sb.client_token, personal_token_of(sb, "admin"), "")
        for token_kind in ("admin", "personal"):
            scenarios.test_the_roles_routes_are_not_there(target, token_kind)
        scenarios.test_the_built_in_root_roles_come_with_the_users(target)
        scenarios.test_the_client_lists_them_and_changes_nothing(target, tmp_path / "journal")
