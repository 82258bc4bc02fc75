"""The sandbox's project access (Unleash Pro and Enterprise, the reference's section 3) over HTTP:
the read (users with their roles, service accounts among them, groups with their members and
roles, every project role); the add (200, an upsert: pairs held are kept), and its 400s (no
roles, roles that are no project roles, unknown user or group ids in `details[].message`); a
user's and a group's roles set (ids that are no project roles dropped, `[]` removing all) and
removed; unknown projects, users and groups (404); who may grant (the Admin root role or the
project's Owner, through a group too; anyone else 403 with Unleash's texts); the events Unleash
names; and, playing an open-source release, no such routes (404 as on OSS)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import httpx
import pytest

from app.api import models as m
from sandbox.process import SandboxProcess
from tests.conftest import personal_token_of
from tests.sandbox.conftest import assert_error

ACCESS = "/api/admin/projects/{}/access"
USER_ROLES = "/api/admin/projects/{}/users/{}/roles"
GROUP_ROLES = "/api/admin/projects/{}/groups/{}/roles"
OVERVIEW = "/api/admin/access/overview"
OWNER, MEMBER = 4, 5


@pytest.fixture
def admin(sandbox: SandboxProcess) -> Iterator[httpx.Client]:
    with sandbox.admin() as http:
        yield http


def access(http: httpx.Client, project: str) -> m.ProjectAccess:
    answer = http.get(ACCESS.format(project))
    assert answer.status_code == 200, answer.text
    return m.ProjectAccess.model_validate(answer.json())


def held(got: m.ProjectAccess) -> tuple[dict[int, list[int]], dict[int, list[int]]]:
    return ({u.id: sorted(u.roles) for u in got.users},
            {g.id: sorted(g.roles) for g in got.groups})  # fmt: skip


def as_user(sb: SandboxProcess, user_id: int) -> httpx.Client:
    with sb.admin() as http:
        users = http.get("/api/admin/user-admin").json()["users"]
    username = next(u["username"] for u in users if u["id"] == user_id)
    token = personal_token_of(sb, username)
    return httpx.Client(base_url=sb.url, timeout=30, headers={"Authorization": token})


def test_the_read(admin: httpx.Client) -> None:
    answer = admin.get(ACCESS.format("web-shop"))
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert set(body) == {"users", "groups", "roles"}
    got = m.ProjectAccess.model_validate(body)
    users, groups = held(got)
    assert users == {1: [MEMBER], 6: [OWNER], 7: [OWNER], 10: [MEMBER]}
    assert groups == {1: [MEMBER], 2: [OWNER]}
    first = next(u for u in got.users if u.id == 6)
    assert first.roleId == OWNER and first.addedAt is not None and first.email
    assert first.accountType == "User"
    squad = next(g for g in got.groups if g.id == 2)
    assert squad.name == "Checkout squad" and {u.user.id for u in squad.users} == set(range(6, 14))
    assert [(r.id, r.name, r.type) for r in got.roles] == [
        (OWNER, "Owner", "project"), (MEMBER, "Member", "project")]  # fmt: skip
    assert held(access(admin, "mobile-app")) == ({}, {})
    missing = assert_error(admin.get(ACCESS.format("nope")), 404, "NotFoundError")
    assert "nope" in str(missing["message"])


def test_add_is_an_upsert_and_says_what_is_wrong(
    sandbox: SandboxProcess, admin: httpx.Client
) -> None:
    url = ACCESS.format("payments")
    body = {"roles": [MEMBER], "users": [20, 46], "groups": [3]}
    done = admin.post(url, json=body)
    assert done.status_code == 200 and done.content == b""
    assert admin.post(url, json=body).status_code == 200  # again: kept, no conflict
    assert admin.post(url, json={"roles": [OWNER, MEMBER], "users": [20], "groups": []}
                      ).status_code == 200  # fmt: skip
    got = access(admin, "payments")
    users, groups = held(got)
    assert users[20] == [OWNER, MEMBER] and users[46] == [MEMBER]
    assert groups[3] == [MEMBER] and groups[2] == [MEMBER]
    robot = next(u for u in got.users if u.id == 46)
    assert robot.accountType == "Service Account" and robot.username == "ci-deploy-bot"

    empty = assert_error(admin.post(url, json={"roles": [], "users": [20], "groups": []}), 400,
                         "BadDataError")  # fmt: skip
    assert empty["message"] == (
        "You can't grant access without any roles. The roles array you sent was empty."
    )
    root = assert_error(admin.post(url, json={"roles": [1, 99, MEMBER], "users": [20],
                                              "groups": []}), 400, "BadDataError")  # fmt: skip
    assert str(root["message"]).endswith("These roles are not valid: 1, 99")
    nobody = assert_error(admin.post(url, json={"roles": [MEMBER], "users": [20, 9999],
                                                "groups": []}), 400, "BadDataError")  # fmt: skip
    assert nobody["details"] == [{"message": "Your request contains one or more user IDs that "
                                  "do not exist. You sent these user IDs: 20, 9999"}]  # fmt: skip
    no_group = assert_error(
        admin.post(url, json={"roles": [MEMBER], "users": [], "groups": [77]}), 400, "BadDataError"
    )
    assert "group IDs that do not exist" in str(no_group["message"])
    assert_error(admin.post(url, json={"roles": [MEMBER], "users": []}), 400, "ValidationError")
    assert_error(admin.post(ACCESS.format("nope"), json=body), 404, "NotFoundError")
    assert held(access(admin, "payments")) == (users, groups)  # the refusals changed nothing


def test_set_and_remove_roles(sandbox: SandboxProcess, admin: httpx.Client) -> None:
    assert admin.put(USER_ROLES.format("web-shop", 6), json={"roles": [MEMBER, 1, 99]}
                     ).status_code == 200  # fmt: skip
    assert admin.put(GROUP_ROLES.format("web-shop", 1), json={"roles": [OWNER, MEMBER]}
                     ).status_code == 200  # fmt: skip
    users, groups = held(access(admin, "web-shop"))
    assert users[6] == [MEMBER] and groups[1] == [OWNER, MEMBER]
    assert admin.put(USER_ROLES.format("web-shop", 7), json={"roles": []}).status_code == 200
    assert admin.delete(USER_ROLES.format("web-shop", 10)).status_code == 200
    assert admin.delete(GROUP_ROLES.format("web-shop", 2)).status_code == 200
    assert admin.delete(GROUP_ROLES.format("web-shop", 3)).status_code == 200  # held none
    users, groups = held(access(admin, "web-shop"))
    assert users == {1: [MEMBER], 6: [MEMBER]} and groups == {1: [OWNER, MEMBER]}
    assert_error(admin.put(USER_ROLES.format("web-shop", 9999), json={"roles": [MEMBER]}), 404,
                 "NotFoundError")  # fmt: skip
    assert_error(admin.delete(GROUP_ROLES.format("web-shop", 77)), 404, "NotFoundError")
    assert_error(admin.delete(USER_ROLES.format("nope", 6)), 404, "NotFoundError")
    assert_error(admin.put(USER_ROLES.format("web-shop", 6), json={"roles": ["x"]}), 400,
                 "ValidationError")  # fmt: skip

    with sqlite3.connect(sandbox.db) as conn:
        events = [r[0] for r in conn.execute(
            "SELECT type FROM events WHERE project = 'web-shop' AND type LIKE 'project-access-%'"
            " ORDER BY id")]  # fmt: skip
    assert events == [
        "project-access-user-roles-updated",
        "project-access-group-roles-updated",
        "project-access-user-roles-updated",
        "project-access-user-roles-deleted",
        "project-access-group-roles-deleted",
        "project-access-group-roles-deleted",
    ]


def test_only_an_admin_or_the_projects_owner_grants(sandbox: SandboxProcess) -> None:
    grant = {"roles": [MEMBER], "users": [20], "groups": []}
    with as_user(sandbox, 5) as editor:  # an Editor, no role in web-shop
        refused = assert_error(editor.post(ACCESS.format("web-shop"), json=grant), 403,
                               "InvalidOperationError")  # fmt: skip
        assert refused["message"] == "User tried to grant role they did not have access to"
        assigned = assert_error(editor.put(USER_ROLES.format("web-shop", 10),
                                           json={"roles": [OWNER]}), 403,
                                "InvalidOperationError")  # fmt: skip
        assert assigned["message"] == "User tried to assign a role they did not have access to"
        assert_error(editor.delete(USER_ROLES.format("web-shop", 10)), 403, "NoAccessError")
        assert editor.get(ACCESS.format("web-shop")).status_code == 200  # reading is open
    with sandbox.admin() as http:  # user 30, a Viewer, made a Member of web-shop
        assert (
            http.post(
                ACCESS.format("web-shop"), json={"roles": [MEMBER], "users": [30], "groups": []}
            ).status_code
            == 200
        )
    with as_user(sandbox, 30) as member:  # a Member of web-shop is no Owner
        assert_error(member.post(ACCESS.format("web-shop"), json=grant), 403,
                     "InvalidOperationError")  # fmt: skip
    with as_user(sandbox, 6) as owner:  # web-shop's Owner
        assert owner.post(ACCESS.format("web-shop"), json=grant).status_code == 200
        assert_error(owner.post(ACCESS.format("payments"), json=grant), 403,
                     "InvalidOperationError")  # fmt: skip
    with as_user(sandbox, 13) as through_group:  # in Checkout squad, web-shop's Owner group
        assert through_group.delete(USER_ROLES.format("web-shop", 20)).status_code == 200
    with sandbox.admin() as http:
        assert 20 not in held(access(http, "web-shop"))[0]
        with sqlite3.connect(sandbox.db) as conn:
            added = conn.execute("SELECT created_by FROM events WHERE type ="
                                 " 'project-access-added'").fetchall()  # fmt: skip
        assert len(added) == 2


def test_an_open_source_release_has_no_project_access(tmp_path: object) -> None:
    from pathlib import Path

    assert isinstance(tmp_path, Path)
    with SandboxProcess(tmp_path / "s.sqlite3", "--demo", "--as-version", "8.2") as sb, \
            sb.admin() as http:  # fmt: skip
        for method, path in (("GET", ACCESS.format("default")),
                             ("POST", ACCESS.format("default")),
                             ("PUT", USER_ROLES.format("default", 1)),
                             ("DELETE", GROUP_ROLES.format("default", 1)),
                             ("GET", OVERVIEW)):  # fmt: skip
            answer = http.request(method, path, json={"roles": [5]})
            assert answer.status_code == 404, (method, path, answer.text)
            assert answer.json()["message"] == (
                f"The path you were looking for ({path}) is not available."
            )
    with SandboxProcess(tmp_path / "w.sqlite3", "--demo", "--without-groups") as sb, \
            sb.admin() as http:  # fmt: skip
        assert http.get(ACCESS.format("default")).status_code == 404
        assert http.get(OVERVIEW).status_code == 404


def test_the_access_overview_lists_every_users_projects(sandbox: SandboxProcess) -> None:
    """Enterprise's `GET /api/admin/access/overview` (the reference's section 4): each user's
    root role and groups by name, and the projects they hold a role in, directly or through a
    group (the group's part apart too, as Unleash's own query has it); the Admin root role's."""
    with sandbox.admin() as http:
        answer = http.get(OVERVIEW)
        assert answer.status_code == 200, answer.text
        body = answer.json()
        users = http.get("/api/admin/user-admin").json()["users"]
    assert set(body) == {"overview"}
    rows = {u["userId"]: u for u in body["overview"]}
    assert set(rows) >= {u["id"] for u in users}
    for row in rows.values():  # userAccessSchema's required fields
        assert {"userId", "userEmail", "rootRole", "accessibleProjects", "groups"} <= set(row)
    six = rows[6]  # web-shop's Owner directly and through Checkout squad; payments' Member
    assert six["rootRole"] == "Editor"
    assert six["accessibleProjects"] == ["payments", "web-shop"]
    assert six["groupProjects"] == ["payments", "web-shop"]
    assert set(six["groups"]) >= {"Checkout squad", "Platform team"}
    admin = rows[1]  # web-shop's Member directly, in no group
    assert admin["accessibleProjects"] == ["web-shop"] and admin["groupProjects"] == []
    assert admin["rootRole"] == "Admin"
    with as_user(sandbox, 5) as editor:
        refused = assert_error(editor.get(OVERVIEW), 403, "NoAccessError")
    assert refused["message"] == "You need the Admin root role to read the access overview."
