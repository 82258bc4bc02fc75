"""Endpoint 1, POST /api/admin/groups: 201, 400, 401, 403, 409."""

from __future__ import annotations

from app.api.models import Group, GroupList, UserList
from tests.sandbox.conftest import assert_error


def member_ids(sb, n):
    with sb.admin() as http:
        users = UserList.model_validate(http.get("/api/admin/user-admin").json()).users
    return [u.id for u in users[1 : n + 1]]


def test_create_group_returns_the_whole_group(sandbox):
    ids = member_ids(sandbox, 3)
    body = {
        "name": "Release managers",
        "description": "People who flip production flags",
        "mappingsSSO": ["okta-release", "okta-oncall"],
        "rootRole": 2,
        "users": [{"user": {"id": i}} for i in ids],
    }
    with sandbox.admin() as http:
        r = http.post("/api/admin/groups", json=body)
        assert r.status_code == 201, r.text
        assert r.headers["content-type"] == "application/json"
        group = Group.model_validate(r.json())
        listed = GroupList.model_validate(http.get("/api/admin/groups").json())
    assert group.name == "Release managers"
    assert group.description == "People who flip production flags"
    assert group.mappingsSSO == ["okta-release", "okta-oncall"]
    assert group.rootRole == 2
    assert group.createdBy == "admin"
    assert group.createdAt is not None
    assert group.userCount == 3
    assert group.projects == []
    assert sorted(m.user.id for m in group.users) == sorted(ids)
    assert all(m.joinedAt is not None and m.createdBy == "admin" for m in group.users)
    assert all(m.user.email for m in group.users)
    assert "Release managers" in [g.name for g in listed.groups]


def test_minimal_group_and_null_root_role(sandbox):
    with sandbox.admin() as http:
        r = http.post("/api/admin/groups", json={"name": "Just a name", "rootRole": None})
    assert r.status_code == 201, r.text
    group = Group.model_validate(r.json())
    assert group.rootRole is None and group.users == [] and group.userCount == 0


def test_duplicate_name_is_409(sandbox):
    with sandbox.admin() as http:
        assert http.post("/api/admin/groups", json={"name": "Twins"}).status_code == 201
        body = assert_error(
            http.post("/api/admin/groups", json={"name": "Twins"}), 409, "NameExistsError"
        )
    assert "Twins" in body["message"]


def test_demo_group_name_is_taken(demo_sandbox):
    with demo_sandbox.admin() as http:
        assert_error(
            http.post("/api/admin/groups", json={"name": "Platform team"}), 409, "NameExistsError"
        )


def test_missing_name_is_400_with_path(demo_sandbox):
    with demo_sandbox.admin() as http:
        body = assert_error(
            http.post("/api/admin/groups", json={"description": "x"}), 400, "ValidationError"
        )
    assert {"path": "$.name"}.items() <= body["details"][0].items()


def test_unknown_member_is_400_naming_the_id(demo_sandbox):
    ids = member_ids(demo_sandbox, 1)
    users = [{"user": {"id": ids[0]}}, {"user": {"id": 987654}}]
    with demo_sandbox.admin() as http:
        body = assert_error(
            http.post("/api/admin/groups", json={"name": "G", "users": users}),
            400,
            "ValidationError",
        )
    assert "987654" in body["message"]
    assert body["details"][0]["path"] == "$.users[1].user.id"


def test_root_role_must_be_a_root_role(demo_sandbox):
    with demo_sandbox.admin() as http:
        for role in (4, 9999):  # 4 is the project Owner role
            body = assert_error(
                http.post("/api/admin/groups", json={"name": "G", "rootRole": role}),
                400,
                "ValidationError",
            )
            assert body["details"][0]["path"] == "$.rootRole"
        body = assert_error(
            http.post("/api/admin/groups", json={"name": "G", "rootRole": "2"}),
            400,
            "ValidationError",
        )


def test_wrong_types_name_their_paths(demo_sandbox):
    bad = {"name": "G", "mappingsSSO": "okta", "users": [{"user": {"id": "seven"}}]}
    with demo_sandbox.admin() as http:
        body = assert_error(http.post("/api/admin/groups", json=bad), 400, "ValidationError")
    assert {d["path"] for d in body["details"]} == {"$.mappingsSSO", "$.users[0].user.id"}


def test_no_token_401_unknown_token_401(demo_sandbox):
    import httpx

    r = httpx.post(demo_sandbox.url + "/api/admin/groups", json={"name": "G"})
    assert_error(r, 401, "AuthenticationRequired")
    r = httpx.post(
        demo_sandbox.url + "/api/admin/groups",
        json={"name": "G"},
        headers={"Authorization": "*:*.not-a-token"},
    )
    assert_error(r, 401, "AuthenticationRequired")


def test_bearer_prefix_is_accepted(demo_sandbox):
    import httpx

    r = httpx.get(
        demo_sandbox.url + "/api/admin/groups",
        headers={"Authorization": "Bearer " + demo_sandbox.admin_token},
    )
    assert r.status_code == 200


def test_client_token_403_says_which_token(demo_sandbox):
    with demo_sandbox.client() as http:
        body = assert_error(
            http.post("/api/admin/groups", json={"name": "G"}), 403, "NoAccessError"
        )
    assert "admin API token" in body["message"]


def test_viewer_personal_token_403(sandbox, personal_token):
    import httpx

    token = personal_token(sandbox, "sofia.mendes")  # a Viewer in the demo data
    r = httpx.post(
        sandbox.url + "/api/admin/groups", json={"name": "G"}, headers={"Authorization": token}
    )
    body = assert_error(r, 403, "NoAccessError")
    assert "Admin" in body["message"]
    admin_pat = personal_token(sandbox, "amara.okafor")  # an Admin
    r = httpx.post(
        sandbox.url + "/api/admin/groups",
        json={"name": "By PAT"},
        headers={"Authorization": admin_pat},
    )
    assert r.status_code == 201
    assert r.json()["createdBy"] == "amara.okafor"
