"""One group: GET, PUT and DELETE /api/admin/groups/:id, with the statuses of Unleash
Enterprise's group service (404 unknown id to read or update, 200 to delete one it does not know;
409 a name another group has; 400 a bad body or a SCIM group's name or members; 401/403), events
recorded, and the state read back over HTTP."""

from __future__ import annotations

import httpx

from app.api.models import Group, GroupList, UserList
from sandbox.process import SandboxProcess
from tests.sandbox.conftest import assert_error
from tests.sandbox.test_inactive_delete import PersonalToken, sql


def user_ids(http: httpx.Client, n: int) -> list[int]:
    users = UserList.model_validate(http.get("/api/admin/user-admin").json()).users
    return [u.id for u in users[1 : n + 1]]


def make_group(http: httpx.Client, name: str, members: list[int], **fields: object) -> Group:
    body = {"name": name, "users": [{"user": {"id": i}} for i in members], **fields}
    r = http.post("/api/admin/groups", json=body)
    assert r.status_code == 201, r.text
    return Group.model_validate(r.json())


def test_get_one_group_with_its_members(sandbox: SandboxProcess) -> None:
    with sandbox.admin() as http:
        ids = user_ids(http, 2)
        made = make_group(http, "Readers", ids, description="d", mappingsSSO=["okta"], rootRole=3)
        r = http.get(f"/api/admin/groups/{made.id}")
        assert r.status_code == 200, r.text
        group = Group.model_validate(r.json())
        assert_error(http.get("/api/admin/groups/987654"), 404, "NotFoundError")
    assert (group.name, group.description, group.mappingsSSO, group.rootRole) == (
        "Readers", "d", ["okta"], 3)  # fmt: skip
    assert sorted(m.user.id for m in group.users) == sorted(ids)
    assert group.userCount == 2


def test_put_replaces_every_field_and_the_members(sandbox: SandboxProcess) -> None:
    with sandbox.admin() as http:
        a, b, c = user_ids(http, 3)
        made = make_group(http, "Before", [a, b], description="old", rootRole=2)
        body = {"name": "After", "description": None, "mappingsSSO": ["x", "y"], "rootRole": None,
                "users": [{"user": {"id": b}}, {"user": {"id": c}}]}  # fmt: skip
        r = http.put(f"/api/admin/groups/{made.id}", json=body)
        assert r.status_code == 200, r.text
        assert "users" not in r.json()  # groupWriteResponseSchema: members left out
        assert r.json()["name"] == "After"
        group = Group.model_validate(http.get(f"/api/admin/groups/{made.id}").json())
    assert (group.name, group.description, group.mappingsSSO, group.rootRole) == (
        "After", None, ["x", "y"], None)  # fmt: skip
    assert sorted(m.user.id for m in group.users) == sorted([b, c])
    stayed = next(m for m in group.users if m.user.id == b)
    joined = next(m for m in made.users if m.user.id == b)
    assert stayed.joinedAt == joined.joinedAt  # who stays keeps their joining time
    events = sql(sandbox, "SELECT type, created_by, summary FROM events "
                 "WHERE type = 'group-updated'")  # fmt: skip
    assert events == [("group-updated", "admin", "**admin** updated group **After**")]


def test_put_keeping_the_name_is_no_conflict_and_a_taken_name_is_409(
    sandbox: SandboxProcess,
) -> None:
    with sandbox.admin() as http:
        one = make_group(http, "One", [])
        make_group(http, "Two", [])
        assert http.put(f"/api/admin/groups/{one.id}", json={"name": "One"}).status_code == 200
        body = assert_error(
            http.put(f"/api/admin/groups/{one.id}", json={"name": "Two"}), 409, "NameExistsError"
        )
        assert "Two" in body["message"]
        assert Group.model_validate(http.get(f"/api/admin/groups/{one.id}").json()).name == "One"


def test_put_bad_bodies_are_400_with_paths_and_change_nothing(sandbox: SandboxProcess) -> None:
    with sandbox.admin() as http:
        made = make_group(http, "Stays", [])
        path = f"/api/admin/groups/{made.id}"
        for bad, where in (
            ({"description": "no name"}, "$.name"),
            ({"name": ""}, "$.name"),
            ({"name": "G", "rootRole": 4}, "$.rootRole"),
            ({"name": "G", "users": [{"user": {"id": 987654}}]}, "$.users[0].user.id"),
        ):
            body = assert_error(http.put(path, json=bad), 400, "ValidationError")
            assert body["details"][0]["path"] == where, body
        assert_error(http.put("/api/admin/groups/987654", json={"name": "G"}), 404,
                     "NotFoundError")  # fmt: skip
        assert Group.model_validate(http.get(path).json()).name == "Stays"


def test_scim_group_keeps_its_name_and_members(sandbox: SandboxProcess) -> None:
    with sandbox.admin() as http:
        (a,) = user_ids(http, 1)
        made = make_group(http, "From SCIM", [a])
        sql(sandbox, "UPDATE groups_ SET scim_id = 'scim-1' WHERE id = ?", made.id)
        path = f"/api/admin/groups/{made.id}"
        body = assert_error(http.put(path, json={"name": "Renamed"}), 400, "ValidationError")
        assert "SCIM" in body["message"]
        assert_error(http.put(path, json={"name": "From SCIM"}), 400, "ValidationError")
        same = {"name": "From SCIM", "description": "ok", "users": [{"user": {"id": a}}]}
        assert http.put(path, json=same).status_code == 200


def test_delete_removes_the_group_its_members_and_roles(sandbox: SandboxProcess) -> None:
    with sandbox.admin() as http:
        made = make_group(http, "Doomed", user_ids(http, 2))
        sql(sandbox, "INSERT INTO project_roles(project, role_id, group_id, created_at) "
            "VALUES('default', 5, ?, 0)", made.id)  # fmt: skip
        r = http.delete(f"/api/admin/groups/{made.id}")
        assert (r.status_code, r.content) == (200, b"")
        assert_error(http.get(f"/api/admin/groups/{made.id}"), 404, "NotFoundError")
        listed = GroupList.model_validate(http.get("/api/admin/groups").json())
        assert "Doomed" not in [g.name for g in listed.groups]
        # an id it does not know: nothing to do, and no error (as Unleash's group service)
        assert http.delete(f"/api/admin/groups/{made.id}").status_code == 200
        # the id of the latest group, deleted, is not given again (Unleash's ids are a sequence)
        assert make_group(http, "Doomed", []).id > made.id
    for table in ("group_users", "project_roles"):
        assert sql(sandbox, f"SELECT * FROM {table} WHERE group_id = ?", made.id) == []
    assert sql(sandbox, "SELECT summary FROM events WHERE type = 'group-deleted'") == [
        ("**admin** deleted group **Doomed**",)
    ]


def test_401_without_a_token_and_403_without_the_admin_role(
    sandbox: SandboxProcess, personal_token: PersonalToken
) -> None:
    with sandbox.admin() as http:
        made = make_group(http, "Guarded", [])
    path = sandbox.url + f"/api/admin/groups/{made.id}"
    assert_error(httpx.get(path), 401, "AuthenticationRequired")
    assert_error(httpx.put(path, json={"name": "X"}), 401, "AuthenticationRequired")
    assert_error(httpx.delete(path), 401, "AuthenticationRequired")
    viewer = {"Authorization": personal_token(sandbox, "sofia.mendes")}
    assert httpx.get(path, headers=viewer).status_code == 200  # read as the list is
    for r in (httpx.put(path, json={"name": "X"}, headers=viewer),
              httpx.delete(path, headers=viewer)):  # fmt: skip
        assert "Admin" in assert_error(r, 403, "NoAccessError")["message"]
    with sandbox.admin() as http:
        assert Group.model_validate(http.get(path).json()).name == "Guarded"
