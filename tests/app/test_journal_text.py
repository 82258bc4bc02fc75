"""How a journal entry reads (`app.actions.journal_text`), shared by the History and `flagdesk
journal list`: titles, items (an upload's bodies and metrics), outcomes, who, the file an entry
names, its JSON; and an upload's entry in doubt is not checked against the server
(`app.actions.check`): the verdict says to resume it, naming its ledger, without a request."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from app.actions.check import can_check, check_entry
from app.actions.journal import Entry, State
from app.actions.journal_text import (
    action_title,
    by_text,
    entry_json,
    file_of,
    items_text,
    outcome_text,
)

UPLOAD = {"ledger": "/data/uploads/20261121-101500-3fa2c1", "bodies": 12, "metrics": 5000,
          "pending": 12, "resume": False}  # fmt: skip


def entry(action: str, ids: list[Any], before: Any = None, **extra: Any) -> Entry:
    fields: dict[str, Any] = {
        "id": "0123456789abcdef", "time": datetime(2026, 11, 21, 10, 15, tzinfo=UTC),
        "action": action, "connection": "prod", "server": "https://unleash.example.com",
        "token": "admin", "user": None, "ids": ids, "before": before,
        "request": {"method": "POST", "path": "/x"}, "state": State.DONE, **extra,
    }  # fmt: skip
    return Entry(**fields)


def test_titles_items_outcomes_and_who() -> None:
    deletion = entry("inactive_users.delete", [39, 43, 51, 60], status=200)
    assert action_title(deletion) == "Delete inactive users"
    assert items_text(deletion) == "4 items: 39, 43, 51 and 1 more"
    assert outcome_text(deletion) == "done (200)"
    assert by_text(deletion) == "admin"
    assert action_title(entry("some.future_action", [])) == "some.future_action"
    assert items_text(entry("users.reset_password", [])) == "—"
    assert outcome_text(entry("x.y", [], state=State.IN_DOUBT)) == "in doubt"

    upload = entry("metrics.upload", [], UPLOAD, token="client")
    assert (action_title(upload), items_text(upload)) == ("Upload metrics",
                                                          "12 bodies (5,000 metrics)")  # fmt: skip
    resumed = entry("metrics.upload", [], {**UPLOAD, "bodies": 1, "resume": True})
    assert items_text(resumed) == "1 body (5,000 metrics), resumed"
    assert items_text(entry("metrics.upload", [], "damaged")) == "—"


def test_the_file_an_entry_names_and_its_json(tmp_path: Path) -> None:
    snapshot = entry("users.delete", [7], {"snapshot": "2026-11-21T10-15-00-users.delete-a1.json"})
    assert file_of(snapshot, tmp_path) == tmp_path / "2026-11-21T10-15-00-users.delete-a1.json"
    upload = entry("metrics.upload", [], UPLOAD)
    assert file_of(upload, tmp_path) == Path(str(UPLOAD["ledger"]))
    assert file_of(entry("users.edit", [7], {"user": {}}), tmp_path) is None
    as_json = entry_json(upload, tmp_path)
    assert list(as_json) == ["entry", "time", "connection", "server", "token", "user", "action",
                             "title", "ids", "state", "status", "message", "before", "request",
                             "finished", "after", "file"]  # fmt: skip
    assert as_json["time"] == "2026-11-21T10:15:00.000Z" and as_json["finished"] is None
    assert (as_json["state"], as_json["title"]) == ("done", "Upload metrics")
    assert as_json["file"] == UPLOAD["ledger"]


def test_an_upload_in_doubt_is_not_checked_against_the_server() -> None:
    upload = entry("metrics.upload", [], UPLOAD, state=State.IN_DOUBT)
    assert not can_check(upload)
    # no client is needed: nothing is asked of the server
    verdict = asyncio.run(check_entry(cast(Any, None), upload))
    assert verdict.state is State.IN_DOUBT
    assert f"resume the upload of {UPLOAD['ledger']}" in verdict.message
