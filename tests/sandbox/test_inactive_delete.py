"""POST /api/admin/user-admin/inactive/delete `{ids}`: 200 with no body, as Unleash 8.2 answers;
400 for a body unlike `idsSchema`, 401/403 without the Admin root role; what Unleash does with
ids that are not inactive (deleted all the same), unknown (404, the earlier ones deleted) and the
caller's own (skipped); a `user-deleted` event per user; state read back over HTTP."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from app.api.models import InactiveUsers, UserList
from sandbox import db
from sandbox.process import SandboxProcess
from tests.conftest import personal_token_of
from tests.sandbox.conftest import assert_error

PATH = "/api/admin/user-admin/inactive/delete"
LEON_ID, PRIYA_ID = 39, 43  # inactive in the demo (tests/ui/test_inactive_users.py)
PersonalToken = Callable[[SandboxProcess, str], str]


def inactive_ids(http: httpx.Client) -> set[int]:
    body = InactiveUsers.model_validate(http.get("/api/admin/user-admin/inactive").json())
    return {u.id for u in body.inactiveUsers}


def user_ids(http: httpx.Client) -> set[int]:
    return {u.id for u in UserList.model_validate(http.get("/api/admin/user-admin").json()).users}


def sql(sb: SandboxProcess, query: str, *args: object) -> list[tuple[object, ...]]:
    conn = db.connect(sb.db)
    try:
        return [tuple(row) for row in conn.execute(query, args).fetchall()]
    finally:
        conn.close()


def test_deletes_the_users_with_what_they_hold_and_records_events(
    sandbox: SandboxProcess, personal_token: PersonalToken
) -> None:
    # Leon holds a personal access token, a group membership and a project role
    pat = personal_token(sandbox, "leon.weber")
    sql(sandbox, "INSERT INTO group_users(group_id, user_id, joined_at) "
        "SELECT id, ?, 0 FROM groups_ LIMIT 1", LEON_ID)  # fmt: skip
    sql(sandbox, "INSERT INTO project_roles(project, role_id, user_id, created_at) "
        "VALUES('default', 5, ?, 0)", LEON_ID)  # fmt: skip
    with sandbox.admin() as http:
        before = inactive_ids(http)
        assert {LEON_ID, PRIYA_ID} <= before
        r = http.post(PATH, json={"ids": [LEON_ID, PRIYA_ID]})
        assert (r.status_code, r.content) == (200, b"")
        assert inactive_ids(http) == before - {LEON_ID, PRIYA_ID}
        assert {LEON_ID, PRIYA_ID}.isdisjoint(user_ids(http))
        assert_error(http.get(f"/api/admin/user-admin/{LEON_ID}"), 404, "NotFoundError")
    for table in ("tokens", "group_users", "project_roles"):
        assert sql(sandbox, f"SELECT * FROM {table} WHERE user_id = ?", LEON_ID) == []
    assert httpx.get(sandbox.url + "/api/admin/user", headers={"Authorization": pat}).status_code \
        == 401  # fmt: skip
    events = sql(sandbox, "SELECT type, created_by, summary, project FROM events "
                 "WHERE type = 'user-deleted' ORDER BY id")  # fmt: skip
    assert events == [
        ("user-deleted", "admin", "**admin** deleted user **Leon Weber**", None),
        ("user-deleted", "admin", "**admin** deleted user **Priya Nair**", None),
    ]


def test_a_body_unlike_ids_schema_is_400_and_changes_nothing(demo_sandbox: SandboxProcess) -> None:
    with demo_sandbox.admin() as http:
        before = user_ids(http)
        for body, path in (
            ({}, "$.ids"),
            ({"ids": 39}, "$.ids"),
            ({"ids": [-1]}, "$.ids[0]"),
            ({"ids": ["leon"]}, "$.ids[0]"),
            ({"ids": [39, 1.5]}, "$.ids[1]"),
            ({"ids": [39], "names": ["Leon Weber"]}, "$.names"),  # additionalProperties: false
        ):
            error = assert_error(http.post(PATH, json=body), 400, "ValidationError")
            assert any(d.get("path") == path for d in error["details"]), (body, error)
        not_json = http.post(
            PATH, content=b"{ids: [39]", headers={"Content-Type": "application/json"}
        )
        assert not_json.status_code == 400
        assert http.post(PATH, content=b"ids=39", headers={"Content-Type": "text/plain"}
                         ).status_code == 415  # fmt: skip
        assert user_ids(http) == before


def test_only_the_admin_root_role_may(
    demo_sandbox: SandboxProcess, personal_token: PersonalToken
) -> None:
    body = {"ids": [LEON_ID]}
    assert_error(httpx.post(demo_sandbox.url + PATH, json=body), 401, "AuthenticationRequired")
    editor = personal_token(demo_sandbox, "greta.schmidt")
    refused = httpx.post(demo_sandbox.url + PATH, json=body, headers={"Authorization": editor})
    error = assert_error(refused, 403, "NoAccessError")
    assert error["message"] == "You need the Admin root role to delete inactive users."
    with demo_sandbox.client() as client:
        assert_error(client.post(PATH, json=body), 403, "NoAccessError")
    with demo_sandbox.admin() as http:
        assert LEON_ID in inactive_ids(http)


def test_what_unleash_does_with_ids_that_are_not_inactive(sandbox: SandboxProcess) -> None:
    """Unleash 8.2's handler deletes each id in turn (its service calls `deleteUser` on every
    one, inactive or not), skips the caller's own user, and stops at the first unknown id with
    404, the users before it deleted. The sandbox does the same; flagdesk sends only ids it has
    just read from the inactive list."""
    with sandbox.admin() as http:
        users = UserList.model_validate(http.get("/api/admin/user-admin").json()).users
        active, other = [u.id for u in users
                         if u.id not in inactive_ids(http) and u.id != 1][:2]  # fmt: skip
        r = http.post(PATH, json={"ids": [active]})
        assert r.status_code == 200
        assert active not in user_ids(http)

        # the caller's own user is skipped (an admin API token is no user: it skips none)
        mine = personal_token_of(sandbox, "admin")
        r = httpx.post(sandbox.url + PATH, json={"ids": [1]}, headers={"Authorization": mine})
        assert r.status_code == 200
        assert 1 in user_ids(http)

        error = assert_error(http.post(PATH, json={"ids": [LEON_ID, 99999, PRIYA_ID]}), 404,
                             "NotFoundError")  # fmt: skip
        assert error["message"] == "No user found with id 99999"
        left = user_ids(http)
        assert LEON_ID not in left and PRIYA_ID in left
        # an id given twice: the second finds no user, as on Unleash
        error = assert_error(http.post(PATH, json={"ids": [PRIYA_ID, PRIYA_ID]}), 404,
                             "NotFoundError")  # fmt: skip
        assert PRIYA_ID not in user_ids(http)
        assert http.post(PATH, json={"ids": []}).status_code == 200
        # a number in a string is that number, as Unleash's validation coerces it
        assert http.post(PATH, json={"ids": [str(other)]}).status_code == 200
        assert other not in user_ids(http)
