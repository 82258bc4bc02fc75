"""The sandbox's personal access tokens, `/api/admin/user/tokens`, over HTTP as Unleash 8.2
answers them (../shared/reference/unleash-admin-console-behaviour.md section 2): the caller's
own tokens, listed without secrets; a creation's 201 with the secret once, usable at once; a
description taken (409), empty or an expiry in the past or not a date-time (400); a deletion's
200 after which the token is refused (401); an unknown id (200 unplayed and on 8.2, 404 on
5.12 to 7.6); an admin API token refused (403, no user behind it); `seenAt` written as the token
is used; an expired token refused; the events; nothing of a secret in the database."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from app.api import models as m
from sandbox import db
from sandbox.process import SandboxProcess
from sandbox.store import Store
from tests.conftest import personal_token_of
from tests.sandbox.conftest import assert_error

PATS = "/api/admin/user/tokens"
FUTURE = "2031-01-31T00:00:00.000Z"


def as_user(sb: SandboxProcess, username: str) -> httpx.Client:
    """A client with a new personal access token of `username`."""
    token = personal_token_of(sb, username)
    return httpx.Client(base_url=sb.url, timeout=30, headers={"Authorization": token})


@pytest.fixture
def mine(sandbox: SandboxProcess) -> Iterator[httpx.Client]:
    """A client with a personal access token of the demo's `admin`."""
    with as_user(sandbox, "admin") as http:
        yield http


def _listed(http: httpx.Client) -> list[m.PersonalAccessToken]:
    answer = http.get(PATS)
    assert answer.status_code == 200, answer.text
    assert "secret" not in answer.text
    return m.PersonalAccessTokens.model_validate(answer.json()).pats


def test_create_list_use_and_delete(sandbox: SandboxProcess, mine: httpx.Client) -> None:
    (own,) = _listed(mine)  # the token this client sends is one of them
    assert own.description == f"Personal access token {own.id}" and own.seenAt is not None

    made = mine.post(PATS, json={"description": "ci deploy", "expiresAt": FUTURE})
    assert made.status_code == 201, made.text
    assert "location" not in made.headers
    body = made.json()
    assert list(body) == ["id", "description", "expiresAt", "userId", "createdAt", "seenAt",
                          "secret"]  # fmt: skip
    created = m.CreatedPersonalAccessToken.model_validate(body)
    assert created.secret.startswith("user:") and len(created.secret) == 5 + 56
    assert created.description == "ci deploy" and created.seenAt is None
    assert created.expiresAt is not None and created.expiresAt.year == 2031
    assert created.id > own.id and created.userId == own.userId

    listed = _listed(mine)
    assert [t.id for t in listed] == [own.id, created.id]
    assert listed[1].seenAt is None
    # the new token works at once, as its user, and is seen as it is used
    with httpx.Client(base_url=sandbox.url, headers={"Authorization": created.secret}) as new:
        assert new.get("/api/admin/user").json()["user"]["username"] == "admin"
    seen = next(t for t in _listed(mine) if t.id == created.id)
    assert seen.seenAt is not None

    gone = mine.delete(f"{PATS}/{created.id}")
    assert (gone.status_code, gone.content) == (200, b"")
    assert [t.id for t in _listed(mine)] == [own.id]
    with httpx.Client(base_url=sandbox.url, headers={"Authorization": created.secret}) as new:
        assert new.get(PATS).status_code == 401
    # an id never given again
    again = mine.post(PATS, json={"description": "ci deploy", "expiresAt": FUTURE})
    assert again.status_code == 201 and again.json()["id"] > created.id

    events = sql(sandbox, "SELECT type, created_by FROM events WHERE type LIKE 'pat-%' ORDER BY id")
    assert events == [("pat-created", "admin"), ("pat-deleted", "admin"), ("pat-created", "admin")]


def test_the_tokens_are_the_caller_s_own(sandbox: SandboxProcess, mine: httpx.Client) -> None:
    other = personal_token_of(sandbox, "jonas.muller")
    jonas = httpx.Client(base_url=sandbox.url, headers={"Authorization": other})
    with jonas:
        (theirs,) = _listed(jonas)
        # the same description is another user's to take
        assert (
            jonas.post(PATS, json={"description": "shared", "expiresAt": FUTURE}).status_code == 201
        )
    assert mine.post(PATS, json={"description": "shared", "expiresAt": FUTURE}).status_code == 201
    assert theirs.id not in {t.id for t in _listed(mine)}
    # another's token is not the caller's to delete: 200, nothing done (as on 8.2)
    assert mine.delete(f"{PATS}/{theirs.id}").status_code == 200
    with httpx.Client(base_url=sandbox.url, headers={"Authorization": other}) as again:
        assert theirs.id in {t.id for t in _listed(again)}


def test_refusals(mine: httpx.Client) -> None:
    mine.post(PATS, json={"description": "taken", "expiresAt": FUTURE})
    body = assert_error(mine.post(PATS, json={"description": "taken", "expiresAt": FUTURE}),
                        409, "NameExistsError")  # fmt: skip
    assert body["message"] == "PAT description already exists."
    body = assert_error(mine.post(PATS, json={"description": "", "expiresAt": FUTURE}),
                        400, "BadDataError")  # fmt: skip
    assert body["message"].endswith("PAT description cannot be empty.")
    body = assert_error(mine.post(PATS, json={"description": "old",
                                              "expiresAt": "2020-01-01T00:00:00Z"}),
                        400, "BadDataError")  # fmt: skip
    assert body["message"].endswith("The expiry date should be in future.")
    for when in ("notadate", "2030-01-01", 1900000000000):
        answer = mine.post(PATS, json={"description": "bad", "expiresAt": when})
        body = assert_error(answer, 400, "ValidationError")
        assert "expiresAt" in body["message"], body
    answer = mine.post(PATS, json={"expiresAt": FUTURE})
    assert "description" in assert_error(answer, 400, "ValidationError")["message"]
    answer = mine.post(PATS, json={"description": "esc\x1b[2J", "expiresAt": FUTURE})
    assert "control character" in assert_error(answer, 400, "ValidationError")["message"]
    assert "bad" not in {t.description for t in _listed(mine)}
    # an unknown id: 200 and nothing done (Unleash 8); not a number: 400
    assert mine.delete(f"{PATS}/987654").status_code == 200
    assert_error(mine.delete(f"{PATS}/abc"), 400, "ValidationError")


def test_an_admin_api_token_has_no_user(sandbox: SandboxProcess) -> None:
    with sandbox.admin() as http:
        for answer in (http.get(PATS),
                       http.post(PATS, json={"description": "x", "expiresAt": FUTURE}),
                       http.delete(f"{PATS}/1")):  # fmt: skip
            body = assert_error(answer, 403, "ForbiddenError")
            assert body["message"] == "PATs require an authenticated user."


def test_an_expired_token_is_refused(sandbox: SandboxProcess) -> None:
    secret = personal_token_of(sandbox, "admin")
    with httpx.Client(base_url=sandbox.url, headers={"Authorization": secret}) as http:
        assert http.get(PATS).status_code == 200
        conn = db.connect(sandbox.db)
        try:
            conn.execute("UPDATE personal_access_tokens SET expires_at = 1000 WHERE"
                         " secret_hash = ?", (db.token_hash(secret),))  # fmt: skip
        finally:
            conn.close()
        assert http.get(PATS).status_code == 401


@pytest.mark.parametrize(("line", "status"), [("5.12", 404), ("7.6", 404), ("8.2", 200)])
def test_an_unknown_id_as_each_release_answers(tmp_path: Path, line: str, status: int) -> None:
    with SandboxProcess(tmp_path / "played.sqlite3", "--demo", "--as-version", line) as sb:
        with as_user(sb, "admin") as http:
            answer = http.delete(f"{PATS}/987654")
        assert answer.status_code == status, answer.text
        if status == 404:
            assert answer.json()["message"] == "No PAT found."


def test_the_database_keeps_no_secret_and_old_tokens_get_a_row(tmp_path: Path) -> None:
    """A created secret is nowhere in the database's files; a personal token of a database made
    before migration 10 is listed, with a description and an expiry of its own."""
    path = tmp_path / "pats.sqlite3"
    conn = db.connect(path)
    store = Store(conn)
    store.initialise()
    who = store.authenticate(store.create_personal_token(1))
    assert who is not None
    made = store.create_personal_access_token(
        m.CreatePersonalAccessToken(description="kept", expiresAt=FUTURE), who
    )
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    assert made.secret.encode() not in stored and made.secret[5:].encode() not in stored

    old = sqlite3.connect(tmp_path / "old.sqlite3", isolation_level=None)
    old.create_function("token_hash", 1, db.token_hash, deterministic=True)
    for version in range(9):
        old.execute("BEGIN")
        for statement in db._split_sql(db.MIGRATIONS[version]):
            old.execute(statement)
        old.execute(f"PRAGMA user_version = {version + 1}")
        old.execute("COMMIT")
    old.execute("INSERT INTO users(id, name, username, created_at) VALUES(1, 'A', 'a', 0)")
    old.execute("INSERT INTO tokens(secret_hash, kind, user_id, created_at)"
                " VALUES(?, 'personal', 1, 0)", (db.token_hash("user:old"),))  # fmt: skip
    old.close()
    upgraded = Store(db.connect(tmp_path / "old.sqlite3"))
    who = upgraded.authenticate("user:old")
    assert who is not None
    (listed,) = upgraded.personal_tokens(who).pats
    assert listed.description == f"Personal access token {listed.id}"
    assert listed.expiresAt is not None and listed.expiresAt.year == 2099
    upgraded.conn.close()


def sql(sb: SandboxProcess, query: str) -> list[tuple[object, ...]]:
    conn = db.connect(sb.db)
    try:
        return [tuple(row) for row in conn.execute(query).fetchall()]
    finally:
        conn.close()
