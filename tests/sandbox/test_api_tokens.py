"""API tokens on the sandbox (`sandbox.store.api_tokens`): the list (the served admin and client
tokens in it, every secret masked as a unique handle), by name, creating (201, the whole secret
once, `location: api-tokens`, the type lower-cased, the defaults), the 400s Unleash 8.2 answers,
the expiry's PUT and DELETE by handle or whole secret (200 also for an unknown token), a deleted
or expired token refused at once, the project routes (404 for no project, 400/404 with no body
on delete), the events, and the played releases' types (`backend` from 7.0)."""

from __future__ import annotations

import re
import sqlite3
from urllib.parse import quote

import httpx
import pytest

from app.api.models import ApiToken, ApiTokenList
from sandbox.process import SandboxProcess
from tests.sandbox.conftest import assert_error

TOKENS = "/api/admin/api-tokens"
HANDLE = re.compile(r"^[^.]+:[^.]+\.…[0-9a-f#]{8,9}$")


def listed(http: httpx.Client, path: str = TOKENS) -> list[ApiToken]:
    r = http.get(path)
    assert r.status_code == 200, r.text
    return ApiTokenList.model_validate(r.json()).tokens


def create(http: httpx.Client, body: dict[str, object], path: str = TOKENS) -> ApiToken:
    r = http.post(path, json=body)
    assert r.status_code == 201, r.text
    assert r.headers["location"] == "api-tokens"
    return ApiToken.model_validate(r.json())


def test_the_list_holds_the_served_tokens_masked(sandbox: SandboxProcess) -> None:
    with sandbox.admin() as http:
        tokens = listed(http)
    by_name = {t.name: t for t in tokens}
    assert by_name["admin"].type == "admin" and by_name["admin"].projects == ["*"]
    assert by_name["client"].type == "client" and by_name["client"].environment == "development"
    for token in tokens:
        assert token.secret is not None and HANDLE.match(token.secret), token.secret
    assert by_name["admin"].secret == "*:*.…" + sandbox.admin_token[-8:]
    assert by_name["client"].secret == "default:development.…" + sandbox.client_token[-8:]
    # the admin token was used just now: seen
    assert by_name["admin"].seenAt is not None
    text = str(tokens)
    assert sandbox.admin_token not in text and sandbox.client_token not in text


def test_create_answers_the_whole_secret_once_and_lists_it_masked(
    sandbox: SandboxProcess,
) -> None:
    with sandbox.admin() as http:
        made = create(http, {"tokenName": "checkout", "type": "CLIENT"})
        assert made.type == "client" and made.projects == ["*"] and made.project == "*"
        assert made.environment == "development"
        assert made.secret is not None
        assert re.fullmatch(r"\*:development\.[0-9a-f]{56}", made.secret)
        handle = "*:development.…" + made.secret[-8:]
        assert [t.secret for t in listed(http) if t.name == "checkout"] == [handle]
        assert made.secret not in http.get(TOKENS).text
        backend = create(http, {"tokenName": "b", "type": "backend", "projects": ["default"],
                                "environment": "production",
                                "expiresAt": "2031-01-02T03:04:05Z"})  # fmt: skip
        assert backend.type == "backend" and backend.projects == ["default"]
        assert backend.secret and backend.secret.startswith("default:production.")
        assert backend.expiresAt is not None and backend.expiresAt.year == 2031
        by_name = listed(http, f"{TOKENS}/checkout")
        assert [t.secret for t in by_name] == [handle]
        assert listed(http, f"{TOKENS}/nobody") == []
    # the new token reads the client API
    with httpx.Client(base_url=sandbox.url, headers={"Authorization": made.secret}) as c:
        assert c.get("/api/admin/api-tokens").status_code == 403


@pytest.mark.parametrize(
    ("body", "status", "name", "words"),
    [
        ({"tokenName": "x", "type": "admin"}, 400, "ValidationError", "$.type"),
        ({"type": "client"}, 400, "ValidationError", "tokenName"),
        ({"tokenName": "", "type": "client"}, 400, "ValidationError", "tokenName"),
        ({"tokenName": "x", "type": "client", "environment": "nope"}, 400, "BadDataError",
         "Environment=nope does not exist"),
        ({"tokenName": "x", "type": "client", "projects": ["nope"]}, 400, "BadDataError",
         "Project=nope does not exist"),
        ({"tokenName": "x", "type": "client", "projects": []}, 400, "ValidationError",
         "projects"),
        ({"tokenName": "x", "type": "frontend", "environment": "*"}, 400, "BadDataError",
         "Frontend token cannot be scoped to all environments"),
        ({"tokenName": "x", "type": "client", "expiresAt": "tomorrow"}, 400, "ValidationError",
         "expiresAt"),
    ],
)  # fmt: skip
def test_create_refusals(
    sandbox: SandboxProcess, body: dict[str, object], status: int, name: str, words: str
) -> None:
    with sandbox.admin() as http:
        before = len(listed(http))
        error = assert_error(http.post(TOKENS, json=body), status, name)
        assert words in str(error), error
        assert len(listed(http)) == before


def test_expiry_and_delete_take_the_handle_or_the_secret(sandbox: SandboxProcess) -> None:
    with sandbox.admin() as http:
        one = create(http, {"tokenName": "one", "type": "client"})
        two = create(http, {"tokenName": "two", "type": "client"})
        assert one.secret and two.secret
        handle = next(t.secret for t in listed(http) if t.name == "one")
        assert handle
        r = http.put(
            f"{TOKENS}/{quote(handle, safe='')}", json={"expiresAt": "2040-01-01T00:00:00Z"}
        )
        assert r.status_code == 200 and r.content == b""
        (token,) = listed(http, f"{TOKENS}/one")
        assert token.expiresAt is not None and token.expiresAt.year == 2040
        assert_error(http.put(f"{TOKENS}/{quote(handle, safe='')}", json={}), 400,
                     "ValidationError")  # fmt: skip
        # an unknown token: 200, nothing done (as Unleash)
        assert (
            http.put(f"{TOKENS}/nope", json={"expiresAt": "2040-01-01T00:00:00Z"}).status_code
            == 200
        )
        assert http.delete(f"{TOKENS}/nope").status_code == 200
        assert http.delete(f"{TOKENS}/one").status_code == 200  # a name is no secret
        assert len(listed(http, f"{TOKENS}/one")) == 1
        r = http.delete(f"{TOKENS}/{quote(handle, safe='')}")
        assert r.status_code == 200 and r.content == b""
        r = http.delete(f"{TOKENS}/{quote(two.secret, safe='')}")
        assert r.status_code == 200
        assert {t.name for t in listed(http)} == {"admin", "client"}
        events = (
            sqlite3.connect(sandbox.db)
            .execute("SELECT type, summary FROM events WHERE type LIKE 'api-token-%' ORDER BY id")
            .fetchall()
        )
    assert [e[0] for e in events] == ["api-token-created", "api-token-created",
                                      "api-token-updated", "api-token-deleted",
                                      "api-token-deleted"]  # fmt: skip
    assert all(one.secret[-8:] not in e[1] and two.secret[-8:] not in e[1] for e in events)
    # deleted: refused at once
    with httpx.Client(base_url=sandbox.url, headers={"Authorization": one.secret}) as c:
        assert c.post("/api/client/metrics/bulk", json={}).status_code == 401


def test_an_expired_token_is_refused_at_once(sandbox: SandboxProcess) -> None:
    with sandbox.admin() as http:
        old = create(http, {"tokenName": "old", "type": "client",
                            "expiresAt": "2001-01-01T00:00:00Z"})  # fmt: skip
    assert old.secret
    with httpx.Client(base_url=sandbox.url, headers={"Authorization": old.secret}) as c:
        assert c.post("/api/client/metrics/bulk", json={}).status_code == 401


def test_project_routes(sandbox: SandboxProcess) -> None:
    path = "/api/admin/projects/default/api-tokens"
    with sandbox.admin() as http:
        made = create(http, {"tokenName": "proj", "type": "frontend",
                             "projects": ["other-ignored"]}, path)  # fmt: skip
        assert made.projects == ["default"] and made.secret
        assert made.secret.startswith("default:development.")
        every = create(http, {"tokenName": "every", "type": "client"})
        names = {t.name for t in listed(http, path)}
        assert {"proj", "every", "admin", "client"} <= names  # `*` tokens too (7.0 on)
        assert_error(http.get("/api/admin/projects/nope/api-tokens"), 404, "NotFoundError")
        assert every.secret
        r = http.delete(f"{path}/{quote(every.secret, safe='')}")  # every project's: 400
        assert r.status_code == 400 and r.content == b""
        r = http.delete(f"{path}/nope")
        assert r.status_code == 404 and r.content == b""
        handle = next(t.secret for t in listed(http, path) if t.name == "proj")
        assert handle
        assert http.delete(f"{path}/{quote(handle, safe='')}").status_code == 200
        assert "proj" not in {t.name for t in listed(http)}


def test_only_an_admin_changes_tokens(sandbox: SandboxProcess, personal_token) -> None:  # type: ignore[no-untyped-def]
    with sandbox.client() as http:
        assert http.get(TOKENS).status_code == 403
    conn = sqlite3.connect(sandbox.db)
    editor = conn.execute(
        "SELECT username FROM users WHERE root_role = 2 AND username IS NOT NULL LIMIT 1"
    ).fetchone()
    if editor is not None:
        pat = personal_token(sandbox, editor[0])
        with httpx.Client(base_url=sandbox.url, headers={"Authorization": pat}) as http:
            assert_error(http.post(TOKENS, json={"tokenName": "x", "type": "client"}), 403,
                         "NoAccessError")  # fmt: skip


@pytest.mark.parametrize(("line", "backend"), [("6.10", False), ("7.6", True)])
def test_played_releases_types_and_project_lists(tmp_path, line: str, backend: bool) -> None:  # type: ignore[no-untyped-def]
    """`backend` tokens from 7.0; a project's list holds the tokens for every project (the admin
    token's among them) on every release (measured on 5.12 and 6.10 as on 7.6 and 8.2)."""
    with SandboxProcess(tmp_path / "s.sqlite3", "--demo", "--as-version", line) as sb, \
            sb.admin() as http:  # fmt: skip
        r = http.post(TOKENS, json={"tokenName": "b", "type": "backend"})
        assert r.status_code == (201 if backend else 400), r.text
        if not backend:
            assert "/body/type" in r.text
        assert http.post(TOKENS, json={"tokenName": "c", "type": "client"}).status_code == 201
        names = {t.name for t in listed(http, "/api/admin/projects/default/api-tokens")}
        assert "admin" in names


def test_an_older_databases_tokens_are_listed_by_their_hashs_ending(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A database from before migration 10 holds hashes alone: its served tokens are listed,
    named `admin` and `client`, their handles ending with `…#` and their hash's last eight
    (the secret's last characters cannot be known), and those handles name them; a token
    given again (`--admin-token`) replaces the stored one, with its own ending."""
    from app.api import models as m
    from sandbox import db
    from sandbox.db import token_hash
    from sandbox.store import Principal, Store
    from tests.sandbox.test_stored_secrets import old_database

    path = tmp_path / "old.sqlite3"
    admin = "*:*." + "0123456789abcdef" * 3
    client = "default:development." + "fedcba9876543210" * 3
    old_database(path, admin, client, "user:" + "00112233445566778899aabbccddeeff" * 2)
    store = Store(db.connect(path))
    tokens = {t.name: t for t in m.ApiTokenList.model_validate(store.list_api_tokens()).tokens}
    assert set(tokens) == {"admin", "client"}  # the personal access token is no API token
    assert tokens["admin"].secret == "*:*.…#" + token_hash(admin)[-8:]
    assert tokens["client"].secret == "default:development.…#" + token_hash(client)[-8:]
    assert tokens["client"].projects == ["default"] and tokens["client"].type == "client"
    who = Principal("admin", -42, "admin")
    assert store.delete_api_token(tokens["client"].secret or "", who) == 200
    assert store.authenticate(client) is None
    store.ensure_token("admin", admin)
    assert [t["secret"] for t in store.list_api_tokens()["tokens"]] == ["*:*.…" + admin[-8:]]
    store.conn.close()
