"""`flagdesk events` (issue 38) against sandboxes over HTTP, as subprocesses: the event log as
text, one JSON object and a CSV file (0600, whole: no `.part` left; a folder that does not exist
refused with exit 2), each filter as the client's (the same events as the database holds, on a
played 5.12 through its search by body too), WHEN as dates, times and `7d`/`12h`, a bad one
refused naming its option, `--since` after `--until` refused, the token refused (4) and the
server unreachable (3), and no secret in any output."""

from __future__ import annotations

import csv
import io
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from app.api.events import COLUMNS, _json_cell, masked, when
from sandbox import db
from sandbox.process import SandboxProcess
from tests.app.test_cli_users import as_json, run_flagdesk


def flagdesk(sb: SandboxProcess | str, *args: str, data: Path,
             token: str | None = None) -> subprocess.CompletedProcess[str]:  # fmt: skip
    return run_flagdesk(("events",), sb, args, data, token)


def _ids(sb: SandboxProcess, where: str = "1", *args: object) -> list[int]:
    conn = db.connect(sb.db)
    try:
        rows = conn.execute(f"SELECT id FROM events WHERE {where} ORDER BY id DESC", args)
        return [r[0] for r in rows]
    finally:
        conn.close()


def test_when_takes_dates_times_and_times_ago() -> None:
    now = datetime(2026, 5, 10, 12, 0, tzinfo=UTC)
    assert when("7d", now=now) == now - timedelta(days=7)
    assert when("12h", now=now) == now - timedelta(hours=12)
    assert when("30m", now=now) == now - timedelta(minutes=30)
    assert when("2w", now=now) == now - timedelta(weeks=2)
    assert when("2026-01-31") == datetime(2026, 1, 31, tzinfo=UTC)
    assert when("2026-01-31", end_of_day=True) == datetime(2026, 2, 1, tzinfo=UTC)
    assert when("2026-01-31T14:00") == datetime(2026, 1, 31, 14, tzinfo=UTC)
    assert when("2026-01-31T14:00:00Z") == datetime(2026, 1, 31, 14, tzinfo=UTC)
    assert when("2026-01-31T14:00+01:00") == datetime(2026, 1, 31, 13, tzinfo=UTC)
    for bad in ("yesterday", "7", "7y", "2026-02-30", "2026-01-31T25:00", "", "-7d"):
        with pytest.raises(ValueError, match="is not a time"):
            when(bad)


def test_secrets_are_masked() -> None:
    logged = {"description": "ci", "secret": "user:abc123", "nested": [{"token": "t0k3n"}],
              "tokenName": "kept", "secure": False}  # fmt: skip
    assert masked(logged) == {"description": "ci", "secret": "***", "nested": [{"token": "***"}],
                              "tokenName": "kept", "secure": False}  # fmt: skip
    assert _json_cell({"Secret": "abc", "n": "é"}) == '{"Secret":"***","n":"é"}'
    assert _json_cell({"tokenName": "kept"}) == '{"tokenName":"kept"}' and _json_cell(None) == ""


def test_events_as_text_json_and_csv(demo_sandbox: SandboxProcess, tmp_path: Path) -> None:
    sb = demo_sandbox
    text = flagdesk(sb, "--type", "feature-created", "--project", "web-shop", data=tmp_path)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    expected = _ids(sb, "type = 'feature-created' AND project = 'web-shop'")
    assert lines[0].split()[:4] == ["TIME", "ID", "TYPE", "BY"]
    assert [int(line.split()[1]) for line in lines[1:-1]] == expected
    assert all("feature-created" in line and "web-shop/" in line for line in lines[1:-1])
    assert lines[-1] == f"{len(expected)} events of {sb.url}"

    shown = as_json(flagdesk(sb, "--environment", "production", "--user", "AMARA.OKAFOR",
                             "--user", "3", "--json", data=tmp_path))  # fmt: skip
    expected = _ids(sb, "environment = 'production' AND (created_by = 'amara.okafor'"
                    " OR created_by_user_id = 3)")  # fmt: skip
    assert [e["id"] for e in shown["events"]] == expected and shown["count"] == len(expected)
    assert shown["filters"] == {"users": ["AMARA.OKAFOR", "3"], "environments": ["production"]}
    assert set(shown["events"][0]) == {
        "id", "type", "createdAt", "createdBy", "createdByUserId", "project", "featureName",
        "environment", "groupType", "groupId", "label", "summary", "tags", "preData", "data",
    }  # fmt: skip
    assert shown["exit_status"] == 0 and shown["server"] == sb.url

    target = tmp_path / "events.csv"
    written = flagdesk(sb, "--csv", str(target), data=tmp_path)
    assert written.returncode == 0, written.stderr
    rows = list(csv.reader(io.StringIO(target.read_text(encoding="utf-8"))))
    assert tuple(rows[0]) == COLUMNS
    assert [int(r[0]) for r in rows[1:]] == _ids(sb)
    assert target.stat().st_mode & 0o777 == 0o600
    assert not target.with_name("events.csv.part").exists()
    assert written.stdout.strip() == f"Wrote {len(rows) - 1} events of {sb.url} to {target}."
    for result in (text, written):
        assert sb.admin_token not in result.stdout + result.stderr
    assert sb.admin_token not in target.read_text(encoding="utf-8")

    nowhere = flagdesk(sb, "--csv", str(tmp_path / "no" / "e.csv"), data=tmp_path)
    assert nowhere.returncode == 2 and "does not exist" in nowhere.stderr
    both = flagdesk(sb, "--json", "--csv", str(target), data=tmp_path)
    assert both.returncode == 2


def test_times(demo_sandbox: SandboxProcess, tmp_path: Path) -> None:
    sb = demo_sandbox
    conn = db.connect(sb.db)
    try:
        times = [r[0] for r in conn.execute("SELECT created_at FROM events ORDER BY created_at")]
    finally:
        conn.close()
    since_ms, until_ms = times[len(times) // 4], times[len(times) // 2]
    since = datetime.fromtimestamp(since_ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3]
    until = datetime.fromtimestamp(until_ms / 1000, UTC).isoformat()
    between = as_json(flagdesk(sb, "--since", since + "Z", "--until", until, "--json",
                               data=tmp_path))  # fmt: skip
    expected = _ids(sb, "created_at >= ? AND created_at < ?", since_ms, until_ms)
    assert [e["id"] for e in between["events"]] == expected and expected

    day = datetime.fromtimestamp(since_ms / 1000, UTC).date().isoformat()
    of_day = as_json(flagdesk(sb, "--since", day, "--until", day, "--json", data=tmp_path))
    start = int(datetime.fromisoformat(day).replace(tzinfo=UTC).timestamp() * 1000)
    expected = _ids(sb, "created_at >= ? AND created_at < ?", start, start + 86_400_000)
    assert [e["id"] for e in of_day["events"]] == expected and expected

    recent = as_json(flagdesk(sb, "--since", "30d", "--json", data=tmp_path))
    month_ago = (datetime.now(UTC) - timedelta(days=30)).timestamp() * 1000
    assert [e["id"] for e in recent["events"]] == _ids(sb, "created_at >= ?", month_ago)

    bad = flagdesk(sb, "--since", "last tuesday", data=tmp_path)
    assert bad.returncode == 2
    assert "--since" in bad.stderr and "'last tuesday' is not a time" in bad.stderr
    worse = flagdesk(sb, "--until", "2026-13-01", data=tmp_path)
    assert worse.returncode == 2 and "--until" in worse.stderr
    crossed = flagdesk(sb, "--since", "2026-02-01", "--until", "2026-01-01", data=tmp_path)
    assert crossed.returncode == 2 and "--since must be before --until" in crossed.stderr


def test_on_a_played_5x_the_same_filters(tmp_path: Path) -> None:
    """5.12 has no event search: its search by body, flagdesk filtering the rest."""
    with SandboxProcess(tmp_path / "s.sqlite3", "--demo", "--as-version", "5.12") as sb:
        shown = as_json(flagdesk(sb, "--type", "feature-environment-enabled", "--environment",
                                 "development", "--json", data=tmp_path))  # fmt: skip
        expected = _ids(sb, "type = 'feature-environment-enabled' AND environment = 'development'")
    assert [e["id"] for e in shown["events"]] == expected and expected
    assert all("groupId" not in e or e["groupId"] is None for e in shown["events"])


def test_refused_and_unreachable(demo_sandbox: SandboxProcess, tmp_path: Path) -> None:
    refused = flagdesk(demo_sandbox, "--json", data=tmp_path, token="*:*.not-a-token")
    assert refused.returncode == 4
    assert as_json(refused)["http_status"] == 401
    assert "not-a-token" not in refused.stdout + refused.stderr
    gone = flagdesk("http://127.0.0.1:9", data=tmp_path)
    assert gone.returncode == 3, gone.stderr
