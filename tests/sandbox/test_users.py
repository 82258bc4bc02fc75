"""Endpoint 2, PUT /api/admin/user-admin/:id: 200, 400, 401, 403, 404."""

from __future__ import annotations

import httpx

from app.api.models import User, UserList
from tests.sandbox.conftest import assert_error


def find(http, username):
    users = UserList.model_validate(http.get("/api/admin/user-admin").json()).users
    return next(u for u in users if u.username == username)


def test_only_given_fields_change(sandbox):
    with sandbox.admin() as http:
        before = find(http, "chiara.rossi")
        r = http.put(f"/api/admin/user-admin/{before.id}", json={"name": "Chiara R."})
        assert r.status_code == 200, r.text
        after = User.model_validate(r.json())
        again = User.model_validate(http.get(f"/api/admin/user-admin/{before.id}").json())
    assert after.name == "Chiara R." and again.name == "Chiara R."
    assert after.email == before.email
    assert after.rootRole == before.rootRole
    assert after.username == before.username
    assert after.createdAt == before.createdAt


def test_root_role_by_id_and_by_name(sandbox):
    with sandbox.admin() as http:
        user = find(http, "pedro.alves")
        r = http.put(f"/api/admin/user-admin/{user.id}", json={"rootRole": 3})
        assert r.status_code == 200 and r.json()["rootRole"] == 3
        r = http.put(f"/api/admin/user-admin/{user.id}", json={"rootRole": "Admin"})
        assert r.status_code == 200 and r.json()["rootRole"] == 1
        r = http.put(f"/api/admin/user-admin/{user.id}", json={"email": "pedro@new.example"})
        assert r.json()["email"] == "pedro@new.example" and r.json()["rootRole"] == 1


def test_unknown_or_project_role_is_400(demo_sandbox):
    with demo_sandbox.admin() as http:
        user = find(http, "pedro.alves")
        for role in (9999, "Owner", "Superuser"):
            body = assert_error(
                http.put(f"/api/admin/user-admin/{user.id}", json={"rootRole": role}),
                400,
                "ValidationError",
            )
            assert body["details"][0]["path"] == "$.rootRole"


def test_invalid_email_is_400(demo_sandbox):
    with demo_sandbox.admin() as http:
        user = find(http, "pedro.alves")
        body = assert_error(
            http.put(f"/api/admin/user-admin/{user.id}", json={"email": "nope"}),
            400,
            "ValidationError",
        )
    assert body["details"][0]["path"] == "$.email"
    assert "nope" in body["message"]


def test_a_user_keeps_an_email_or_a_username(sandbox):
    with sandbox.admin() as http:
        created = http.post(
            "/api/admin/user-admin",
            json={"email": "only.email@example.com", "name": "Only Email", "rootRole": "Viewer"},
        )
        assert created.status_code == 201, created.text
        uid = created.json()["id"]
        body = assert_error(
            http.put(f"/api/admin/user-admin/{uid}", json={"email": None}), 400, "ValidationError"
        )
        assert "username" in body["message"]
        # a user with a username may drop the email
        user = find(http, "jonas.muller")
        r = http.put(f"/api/admin/user-admin/{user.id}", json={"email": None})
        assert r.status_code == 200 and r.json()["email"] is None


def test_email_taken_by_another_user_is_400(demo_sandbox):
    with demo_sandbox.admin() as http:
        a, b = find(http, "pedro.alves"), find(http, "rosa.moreno")
        assert_error(
            http.put(f"/api/admin/user-admin/{a.id}", json={"email": b.email}),
            400,
            "ValidationError",
        )


def test_unknown_id_404_and_non_integer_id_400(demo_sandbox):
    with demo_sandbox.admin() as http:
        assert_error(
            http.put("/api/admin/user-admin/987654", json={"name": "x"}), 404, "NotFoundError"
        )
        assert_error(
            http.put("/api/admin/user-admin/abc", json={"name": "x"}), 400, "ValidationError"
        )


def test_scim_managed_user_is_403(demo_sandbox):
    with demo_sandbox.admin() as http:
        user = find(http, "sofia.mendes")
        assert user.scimId
        body = assert_error(
            http.put(f"/api/admin/user-admin/{user.id}", json={"name": "x"}), 403, "NoAccessError"
        )
    assert "SCIM" in body["message"]


def test_auth_statuses(demo_sandbox):
    url = demo_sandbox.url + "/api/admin/user-admin/2"
    assert_error(httpx.put(url, json={"name": "x"}), 401, "AuthenticationRequired")
    assert_error(
        httpx.put(url, json={"name": "x"}, headers={"Authorization": "nope"}),
        401,
        "AuthenticationRequired",
    )
    with demo_sandbox.client() as http:
        assert_error(http.put("/api/admin/user-admin/2", json={"name": "x"}), 403, "NoAccessError")


def test_editor_personal_token_cannot_update_users(sandbox, personal_token):
    token = personal_token(sandbox, "jonas.muller")  # an Editor
    r = httpx.put(
        sandbox.url + "/api/admin/user-admin/2",
        json={"name": "x"},
        headers={"Authorization": token},
    )
    assert_error(r, 403, "NoAccessError")


def test_text_plain_is_415(demo_sandbox):
    with demo_sandbox.admin() as http:
        r = http.put(
            "/api/admin/user-admin/2",
            content=b'{"name":"x"}',
            headers={"content-type": "text/plain"},
        )
    assert_error(r, 415, "ContentTypeerror")


def test_malformed_json_is_400(demo_sandbox):
    with demo_sandbox.admin() as http:
        r = http.put(
            "/api/admin/user-admin/2",
            content=b'{"name": ',
            headers={"content-type": "application/json"},
        )
    body = assert_error(r, 400, "ValidationError")
    assert "Malformed JSON" in body["message"]
