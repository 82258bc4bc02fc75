"""Login history (issue 38; Unleash Enterprise 4.22+) as the sandbox serves it:
`GET /api/admin/logins`, every event of the last 14 days newest first as `{events}`, as CSV when
`Accept` asks for it, an Admin's (403 for an Editor, 401 without a token), kept 14 days (older
events deleted as it is read) and 404 on a played open-source release, as open source answers."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from app.api.models import LoginEvents
from sandbox import db
from sandbox.process import SandboxProcess
from sandbox.routes.logins import wants_csv
from sandbox.store import DAY_MS
from sandbox.versions import PLAYABLE

LOGINS = "/api/admin/logins"


def test_the_demo_has_two_weeks_of_logins_newest_first(demo_sandbox: SandboxProcess) -> None:
    with demo_sandbox.admin() as http:
        answer = http.get(LOGINS)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("application/json")
    assert set(answer.json()) == {"events"}
    events = LoginEvents.model_validate(answer.json()).events
    assert len(events) >= 30
    ids = [e.id for e in events]
    assert ids == sorted(ids, reverse=True)
    item = answer.json()["events"][0]
    assert set(item) >= {"id", "username", "auth_type", "created_at", "successful", "ip", "type"}
    now = datetime.now(UTC)
    assert all(e.created_at is not None and now - e.created_at <= timedelta(days=14)
               for e in events)  # fmt: skip
    failed = [e for e in events if not e.successful]
    assert failed and all(e.failure_reason for e in failed)
    assert all(e.failure_reason is None for e in events if e.successful)
    assert len({e.ip for e in events}) >= 4
    assert {e.auth_type for e in events} >= {"password", "open-id-connect"}
    assert {e.type for e in events} == {"login", "logout"}


def test_csv_when_asked(demo_sandbox: SandboxProcess) -> None:
    with demo_sandbox.admin() as http:
        listed = http.get(LOGINS).json()["events"]
        answer = http.get(LOGINS, headers={"Accept": "text/csv"})
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/csv")
    header, first = answer.text.split("\n")[:2]
    assert header == '"id","username","auth_type","created_at","successful","ip",' \
                     '"failure_reason","type"'  # fmt: skip
    rows = list(csv.DictReader(io.StringIO(answer.text)))
    assert [int(r["id"]) for r in rows] == [e["id"] for e in listed]
    assert rows[0]["username"] == listed[0]["username"]
    assert first.split(",")[4] in ("true", "false")  # booleans bare, as json2csv writes them


def test_the_accept_header_decides() -> None:
    assert wants_csv("text/csv")
    assert wants_csv("text/csv, application/json;q=0.5")
    assert not wants_csv("*/*") and not wants_csv("") and not wants_csv("application/json")
    assert not wants_csv("application/json, text/csv")


def test_an_admins_only(
    sandbox: SandboxProcess, personal_token: Callable[[SandboxProcess, str], str]
) -> None:
    editor = personal_token(sandbox, "dmitri.volkov")
    refused = httpx.get(sandbox.url + LOGINS, headers={"Authorization": editor})
    assert refused.status_code == 403 and refused.json()["name"] == "NoAccessError"
    assert httpx.get(sandbox.url + LOGINS).status_code == 401
    with sandbox.client() as client:
        assert client.get(LOGINS).status_code in (401, 403)


def test_kept_fourteen_days(sandbox: SandboxProcess) -> None:
    conn = db.connect(sandbox.db)
    try:
        before = conn.execute("SELECT count(*) FROM login_events").fetchone()[0]
        old = int(datetime.now(UTC).timestamp() * 1000) - 15 * DAY_MS
        conn.execute(
            "INSERT INTO login_events(username, auth_type, created_at, successful, ip)"
            " VALUES('old.login@example.com', 'password', ?, 1, '203.0.113.9')",
            (old,),
        )
    finally:
        conn.close()
    with sandbox.admin() as http:
        events = http.get(LOGINS).json()["events"]
    assert "old.login@example.com" not in {e["username"] for e in events}
    conn = db.connect(sandbox.db)
    try:
        after = conn.execute("SELECT count(*) FROM login_events").fetchone()[0]
    finally:
        conn.close()
    # the demo's four weeks, and the old one, are now only its last 14 days
    assert after == len(events) < before + 1


@pytest.mark.parametrize("line", list(PLAYABLE))
def test_open_source_releases_have_none(tmp_path: Path, line: str) -> None:
    with SandboxProcess(tmp_path / "s.sqlite3", "--as-version", line) as sb, sb.admin() as http:
        answer = http.get(LOGINS)
    assert answer.status_code == 404, answer.text
    assert "path you were looking for" in answer.json()["message"]
