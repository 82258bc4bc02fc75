"""The sandbox's service accounts, `/api/admin/service-account` (Unleash Enterprise, section 1 of
../shared/reference/unleash-enterprise-admin-api.md), over HTTP: list, create (201 and
`location`), update (name and root role only), delete (200, no body, its tokens gone); their
tokens listed without secrets, created with the secret once (201 and `location`), deleted; the
errors (400, 404, 409, 403 without the Admin root role, the token limit) with the error body;
the events; a service account's token acting as the account with its root role's permissions;
service accounts kept out of the users' list and the inactive users; and on a played
open-source release every route a 404 as for an unknown path."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import httpx
import pytest

from app.api import models as m
from sandbox import db
from sandbox.process import SandboxProcess
from tests.conftest import personal_token_of
from tests.sandbox.conftest import assert_error

ACCOUNTS = "/api/admin/service-account"
FUTURE = "2031-01-31T00:00:00.000Z"
ADMIN, EDITOR, VIEWER = 1, 2, 3


@pytest.fixture
def admin(sandbox: SandboxProcess) -> Iterator[httpx.Client]:
    with sandbox.admin() as http:
        yield http


def _accounts(http: httpx.Client) -> list[m.ServiceAccount]:
    answer = http.get(ACCOUNTS)
    assert answer.status_code == 200, answer.text
    assert "secret" not in answer.text
    return m.ServiceAccounts.model_validate(answer.json()).serviceAccounts


def _events(sb: SandboxProcess) -> list[tuple[str, str]]:
    conn = sqlite3.connect(sb.db)
    try:
        return conn.execute("SELECT type, summary FROM events ORDER BY id").fetchall()
    finally:
        conn.close()


def test_create_list_update_and_delete(sandbox: SandboxProcess, admin: httpx.Client) -> None:
    (bot,) = _accounts(admin)  # the demo's
    assert bot.username == "ci-deploy-bot" and bot.rootRole == VIEWER and bot.tokens == []

    made = admin.post(ACCOUNTS, json={"name": "Deployer", "username": "deployer",
                                      "rootRole": EDITOR})  # fmt: skip
    assert made.status_code == 201, made.text
    account = m.ServiceAccount.model_validate(made.json())
    assert made.headers["location"] == f"service-account/{account.id}"
    assert (account.name, account.username, account.rootRole) == ("Deployer", "deployer", EDITOR)
    assert account.tokens == [] and account.createdAt is not None

    listing = admin.get(ACCOUNTS).json()
    assert [a["username"] for a in listing["serviceAccounts"]] == ["ci-deploy-bot", "deployer"]
    assert sorted(r["id"] for r in listing["rootRoles"]) == [EDITOR, VIEWER]

    # only the name and the root role change; a username sent is ignored
    changed = admin.put(
        f"{ACCOUNTS}/{account.id}",
        json={"name": "Deploy bot", "rootRole": ADMIN, "username": "other"},
    )
    assert changed.status_code == 200, changed.text
    assert (changed.json()["name"], changed.json()["username"], changed.json()["rootRole"]) == (
        "Deploy bot", "deployer", ADMIN)  # fmt: skip
    assert admin.put(f"{ACCOUNTS}/{account.id}", json={}).json()["name"] == "Deploy bot"

    gone = admin.delete(f"{ACCOUNTS}/{account.id}")
    assert (gone.status_code, gone.content) == (200, b"")
    assert [a.username for a in _accounts(admin)] == ["ci-deploy-bot"]
    types = [t for t, _ in _events(sandbox)]
    assert types[-4:] == ["service-account-created", "service-account-updated",
                          "service-account-updated", "service-account-deleted"]  # fmt: skip
    assert "deployer" in _events(sandbox)[-1][1]
    # its id is never given again (a journal names an account by its id)
    after = admin.post(ACCOUNTS, json={"name": "D", "username": "deployer", "rootRole": VIEWER})
    assert after.status_code == 201 and after.json()["id"] > account.id


def test_a_custom_root_role_is_a_root_role(admin: httpx.Client) -> None:
    """An account is made with, and changed to, a custom root role (type `root-custom` as
    Unleash sends it; the check looked for the sandbox's old spelling and refused it, 400)."""
    role = admin.post("/api/admin/roles", json={"name": "Deployers", "type": "root-custom",
                                                "permissions": []})  # fmt: skip
    assert role.status_code == 200, role.text
    custom = role.json()["roles"]["id"]
    made = admin.post(ACCOUNTS, json={"name": "D", "username": "deployer", "rootRole": custom})
    assert made.status_code == 201, made.text
    assert made.json()["rootRole"] == custom
    changed = admin.put(f"{ACCOUNTS}/{made.json()['id']}", json={"rootRole": VIEWER})
    assert changed.status_code == 200 and changed.json()["rootRole"] == VIEWER
    back = admin.put(f"{ACCOUNTS}/{made.json()['id']}", json={"rootRole": custom})
    assert back.status_code == 200 and back.json()["rootRole"] == custom


def test_the_errors(sandbox: SandboxProcess, admin: httpx.Client) -> None:
    body = {"name": "Bot", "username": "ci-deploy-bot", "rootRole": VIEWER}
    taken = assert_error(admin.post(ACCOUNTS, json=body), 409, "NameExistsError")
    assert "ci-deploy-bot" in str(taken["message"])
    # a person's username is taken too (one column for both)
    assert_error(admin.post(ACCOUNTS, json={**body, "username": "admin"}), 409, "NameExistsError")
    for bad in ({**body, "username": "new", "rootRole": 4},  # a project role
                {**body, "username": "new", "rootRole": 999},
                {**body, "username": "  "},
                {"name": "Bot", "rootRole": VIEWER},  # no username
                {**body, "username": "new", "rootRole": "Viewer"},  # an id, not a name
                {**body, "username": "new\x1b[2J"}):  # fmt: skip
        answer = admin.post(ACCOUNTS, json=bad)
        assert answer.status_code == 400, (bad, answer.text)
        assert answer.json()["name"] in ("BadDataError", "ValidationError")
    # a person is no service account
    for answer in (admin.put(f"{ACCOUNTS}/1", json={"name": "x"}), admin.delete(f"{ACCOUNTS}/1"),
                   admin.get(f"{ACCOUNTS}/1/token"), admin.delete(f"{ACCOUNTS}/999999"),
                   admin.post(f"{ACCOUNTS}/1/token",
                              json={"description": "x", "expiresAt": FUTURE})):  # fmt: skip
        assert_error(answer, 404, "NotFoundError")
    assert_error(admin.put(f"{ACCOUNTS}/999999", json={"name": "x"}), 404, "NotFoundError")
    (bot,) = _accounts(admin)
    assert_error(admin.put(f"{ACCOUNTS}/{bot.id}", json={"rootRole": 5}), 400, "BadDataError")
    assert_error(admin.delete(f"{ACCOUNTS}/{bot.id}/token/1"), 404, "NotFoundError")

    # the Admin root role, for reads too
    editor = admin.post("/api/admin/user-admin", json={"username": "ed", "rootRole": "Editor"})
    assert editor.status_code == 201, editor.text
    with httpx.Client(
        base_url=sandbox.url, headers={"Authorization": personal_token_of(sandbox, "ed")}
    ) as ed:
        for answer in (
            ed.get(ACCOUNTS),
            ed.post(ACCOUNTS, json={**body, "username": "n"}),
            ed.delete(f"{ACCOUNTS}/{bot.id}"),
            ed.get(f"{ACCOUNTS}/{bot.id}/token"),
        ):
            assert_error(answer, 403, "NoAccessError")
    with httpx.Client(base_url=sandbox.url) as nobody:
        assert nobody.get(ACCOUNTS).status_code == 401
    assert [a.username for a in _accounts(admin)] == ["ci-deploy-bot"]


def test_tokens_act_as_their_account(sandbox: SandboxProcess, admin: httpx.Client) -> None:
    (bot,) = _accounts(admin)
    tokens = f"{ACCOUNTS}/{bot.id}/token"
    assert admin.get(tokens).json() == {"pats": []}
    made = admin.post(tokens, json={"description": "deploy", "expiresAt": FUTURE})
    assert made.status_code == 201, made.text
    created = m.CreatedPersonalAccessToken.model_validate(made.json())
    assert made.headers["location"] == f"service-account/{bot.id}/token/{created.id}"
    assert created.secret.startswith("user:") and len(created.secret) == 5 + 56
    assert created.userId == bot.id and created.description == "deploy"

    listed = admin.get(tokens)
    assert created.secret not in listed.text and "secret" not in listed.text
    assert [t["id"] for t in listed.json()["pats"]] == [created.id]
    assert [t.id for t in _accounts(admin)[0].tokens] == [created.id]

    # the account's token acts as the account, with its root role (Viewer): it reads, it may
    # not change what needs the Admin role
    with httpx.Client(base_url=sandbox.url, headers={"Authorization": created.secret}) as bot_http:
        me = bot_http.get("/api/admin/user")
        assert me.status_code == 200, me.text
        assert me.json()["user"]["username"] == "ci-deploy-bot"
        assert me.json()["user"]["accountType"] == "Service Account"
        assert me.json()["permissions"] == []
        assert bot_http.get("/api/admin/projects").status_code == 200
        assert_error(bot_http.get(ACCOUNTS), 403, "NoAccessError")
        # made an Admin, the same token may
        assert admin.put(f"{ACCOUNTS}/{bot.id}", json={"rootRole": ADMIN}).status_code == 200
        assert bot_http.get("/api/admin/user").json()["permissions"] == [{"permission": "ADMIN"}]
        assert bot_http.get(ACCOUNTS).status_code == 200
        assert bot_http.get("/api/admin/user-admin").status_code == 200
    assert next(t for t in admin.get(tokens).json()["pats"])["seenAt"] is not None

    again = admin.post(tokens, json={"description": "deploy", "expiresAt": FUTURE})
    assert assert_error(again, 409, "NameExistsError")["message"] == (
        "PAT description already exists.")  # fmt: skip
    for bad in ({"description": "", "expiresAt": FUTURE},
                {"description": "x", "expiresAt": "2001-01-01T00:00:00Z"},
                {"description": "x", "expiresAt": "2031-01-31"}):  # fmt: skip
        assert admin.post(tokens, json=bad).status_code == 400, bad

    gone = admin.delete(f"{tokens}/{created.id}")
    assert (gone.status_code, gone.content) == (200, b"")
    with httpx.Client(base_url=sandbox.url, headers={"Authorization": created.secret}) as bot_http:
        assert bot_http.get("/api/admin/user").status_code == 401
    assert_error(admin.delete(f"{tokens}/{created.id}"), 404, "NotFoundError")
    assert [t for t, _ in _events(sandbox)][-3:] == ["pat-created", "service-account-updated",
                                                     "pat-deleted"]  # fmt: skip

    # at most ten; deleting the account takes its tokens with it
    secrets = [admin.post(tokens, json={"description": f"t{i}", "expiresAt": FUTURE}).json()
               ["secret"] for i in range(10)]  # fmt: skip
    limit = assert_error(admin.post(tokens, json={"description": "t10", "expiresAt": FUTURE}),
                         403, "OperationDeniedError")  # fmt: skip
    assert limit["message"] == "Too many PATs (10) already exist for this user."
    assert admin.delete(f"{ACCOUNTS}/{bot.id}").status_code == 200
    with httpx.Client(base_url=sandbox.url, headers={"Authorization": secrets[0]}) as bot_http:
        assert bot_http.get("/api/admin/user").status_code == 401
    conn = db.connect(sandbox.db)
    try:
        assert conn.execute("SELECT count(*) FROM tokens WHERE user_id = ?",
                            (bot.id,)).fetchone()[0] == 0  # fmt: skip
        stored = b"".join(str(row).encode() for row in conn.execute("SELECT * FROM tokens"))
        assert not any(s.encode() in stored for s in secrets)
    finally:
        conn.close()


def test_users_lists_leave_them_out(sandbox: SandboxProcess, admin: httpx.Client) -> None:
    """As Unleash: not in user-admin's users, nor among the inactive users (the demo's account
    was last seen 500 days ago, and a new one has never been), nor among the people the admin
    count counts; still a user by id."""
    made = admin.post(ACCOUNTS, json={"name": "N", "username": "new-bot", "rootRole": ADMIN})
    ids = {a.id for a in _accounts(admin)}
    assert len(ids) == 2
    users = admin.get("/api/admin/user-admin").json()["users"]
    assert not ids & {u["id"] for u in users}
    assert all(u["accountType"] == "User" for u in users)
    inactive = admin.get("/api/admin/user-admin/inactive").json()["inactiveUsers"]
    assert inactive and not ids & {u["id"] for u in inactive}
    count = admin.get("/api/admin/user-admin/admin-count").json()
    assert count["service"] == 1
    one = admin.get(f"/api/admin/user-admin/{made.json()['id']}").json()
    assert one["accountType"] == "Service Account"


@pytest.mark.parametrize("line", ["5.12", "8.2"])
def test_an_open_source_release_has_none(tmp_path: object, line: str) -> None:
    from pathlib import Path

    assert isinstance(tmp_path, Path)
    with SandboxProcess(tmp_path / "s.sqlite3", "--demo", "--as-version", line) as sb, \
            sb.admin() as http:  # fmt: skip
        for method, path in (("GET", ACCOUNTS), ("POST", ACCOUNTS), ("PUT", f"{ACCOUNTS}/1"),
                             ("DELETE", f"{ACCOUNTS}/1"), ("GET", f"{ACCOUNTS}/1/token"),
                             ("POST", f"{ACCOUNTS}/1/token"),
                             ("DELETE", f"{ACCOUNTS}/1/token/1")):  # fmt: skip
            answer = http.request(method, path, json={} if method in ("POST", "PUT") else None)
            assert answer.status_code == 404, (method, path, answer.text)
            assert "is not available" in answer.json()["message"], answer.text
