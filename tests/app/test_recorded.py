"""What the server's event log recorded of a journal entry (`app.actions.recorded`), against real
sandboxes over HTTP: each change made through the command line finds the events it made and no
other's (two switches of one setting half a second apart each find their own), a deletion of
twelve users its twelve events; `flagdesk journal events ENTRY` prints them and exits 0, or
says the server recorded none and exits 1; a change in doubt is settled by its event where the
state cannot tell, and left in doubt, saying so, where the log is silent."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from app.actions.journal import (
    JOURNAL_NAME,
    Actor,
    Entry,
    Journal,
    State,
    journal_folder,
    read_journal,
)
from app.actions.recorded import checked, made_by, names_of
from app.api.client import AdminClient, normalise_base_url
from app.api.models import Event
from sandbox.process import SandboxProcess
from tests.app.test_cli_users import run_flagdesk

INACTIVE = {32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43}  # the demo's inactive users


def journal_entries(data: Path) -> list[Entry]:
    (folder,) = (data / "journal").iterdir()
    return read_journal(folder / JOURNAL_NAME)


def events_of(sb: SandboxProcess, entry: Entry, data: Path, *more: str) -> Any:
    return run_flagdesk(("journal", "events"), sb, (entry.id, *more), data, None)


def test_each_change_finds_the_events_it_made_and_no_other(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    for words in (
        ("maintenance", "on"),
        ("maintenance", "off"),
        ("cors", "set", "https://shop.example"),
        ("users", "inactive", "delete"),
    ):
        more = ("--all", "--yes") if words[0] == "users" else ("--yes",)
        done = run_flagdesk(words, sandbox, more, tmp_path, None)
        assert done.returncode == 0, done.stderr  # fmt: skip
    on, off, cors, deleted = journal_entries(tmp_path)

    found = {}
    for entry in (on, off, cors, deleted):
        answer = events_of(sandbox, entry, tmp_path, "--json")
        assert answer.returncode == 0, answer.stderr
        found[entry.action, entry.id] = json.loads(answer.stdout)
    switched_on, switched_off = found[on.action, on.id], found[off.action, off.id]
    assert [(e["type"], e["data"]) for e in switched_on["events"]] == [
        ("setting-created", {"id": "maintenance.mode", "enabled": True})
    ]
    assert [(e["type"], e["data"]) for e in switched_off["events"]] == [
        ("setting-updated", {"id": "maintenance.mode", "enabled": False})
    ]
    assert [e["data"]["id"] for e in found[cors.action, cors.id]["events"]] == ["unleash.frontend"]
    users = found[deleted.action, deleted.id]
    assert {e["type"] for e in users["events"]} == {"user-deleted"}
    assert {e["preData"]["id"] for e in users["events"]} == INACTIVE == set(deleted.ids)
    assert users["text"].startswith("The server recorded it in 12 events: ")
    assert users["entry"] == deleted.id and users["searched"] is True

    text = events_of(sandbox, off, tmp_path)
    assert text.returncode == 0, text.stderr
    first, titles, row = text.stdout.splitlines()[:3]
    assert first.startswith(f"Switch maintenance mode ({off.id}) on {sandbox.url}: The server "
                            "recorded it: event ")  # fmt: skip
    assert titles.split() == ["ID", "WHEN", "TYPE", "BY", "SUMMARY"]
    assert row.split()[3:5] == ["setting-updated", "admin"]


def test_a_change_the_server_never_made_finds_none(sandbox: SandboxProcess, tmp_path: Path) -> None:
    """A switch journaled and never sent (its answer "lost"): no event names it, the command
    says so and exits 1; a metrics upload makes no event, and says that."""
    name = normalise_base_url(sandbox.url)  # the journal `--url URL` reads
    journal = Journal(Actor(name, sandbox.url, "admin"), journal_folder(name, tmp_path))
    asyncio.run(journal.begin("instance.maintenance", ["maintenance"], before={"enabled": False},
                              request={"method": "POST", "path": "/api/admin/maintenance",
                                       "body": {"enabled": True}}))  # fmt: skip
    asyncio.run(
        journal.begin(
            "metrics.upload", [], request={"method": "POST", "path": "/api/client/metrics/bulk"}
        )
    )
    asyncio.run(
        journal.begin(
            "instance.maintenance",
            ["maintenance"],
            request={"method": "POST", "path": "/api/admin/maintenance"},
        )
    )
    never, upload, bodiless = journal_entries(tmp_path)

    async def check(entry: Entry) -> Any:
        async with AdminClient(sandbox.url, sandbox.admin_token) as client:
            return await checked(client, entry)

    # its body journaled, the state read back says it was not made; without, the log's
    # silence is said, and settles nothing
    verdict, record = asyncio.run(check(never))
    assert verdict.state is State.FAILED and record is not None and not record.events
    verdict, _ = asyncio.run(check(bodiless))
    assert verdict.state is State.IN_DOUBT
    assert "; the server recorded no event of it between " in verdict.message

    answer = events_of(sandbox, never, tmp_path)
    assert answer.returncode == 1, answer.stderr
    assert "The server recorded no event of it between " in answer.stdout
    answer = events_of(sandbox, upload, tmp_path, "--json")
    assert answer.returncode == 1, answer.stderr
    said = json.loads(answer.stdout)
    assert said["searched"] is False and said["events"] == []
    assert said["text"].startswith("Uploaded metrics make no event on the server")
    unknown = run_flagdesk(("journal", "events"), sandbox, ("zzzz",), tmp_path, None)
    assert unknown.returncode == 2 and "no entry 'zzzz' in this connection's journal" in (
        unknown.stderr
    )


def test_a_change_in_doubt_is_settled_by_its_event_where_the_state_cannot_tell(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    """A switch journaled by an older flagdesk, which kept no body (so the state read back
    cannot say what was meant), in doubt and made: its event settles it, as done."""
    journal = Journal(Actor("x", sandbox.url, "admin"), tmp_path)
    request = {"method": "POST", "path": "/api/admin/maintenance"}
    asyncio.run(journal.begin("instance.maintenance", ["maintenance"], request=request))
    with sandbox.admin() as http:
        assert http.post("/api/admin/maintenance", json={"enabled": True}).status_code == 204
    (made,) = read_journal(tmp_path / JOURNAL_NAME)

    async def check(entry: Entry) -> Any:
        async with AdminClient(sandbox.url, sandbox.admin_token) as client:
            return await checked(client, entry)

    verdict, record = asyncio.run(check(made))
    assert verdict.state is State.DONE and record is not None
    assert verdict.message.startswith("The server recorded it: event ")
    assert [e.type for e in record.events] == ["setting-created"]


def test_what_an_entry_and_an_event_name() -> None:
    """Names are matched as text ignoring case: the ids, the path's object parts, the body's
    and the records' naming fields; an event's flag and data; a secret's tail names nothing."""
    entry = Entry(id="e", time=_now(), action="api_tokens.delete", connection="c", server="s",
                  token="admin", user=None, ids=["…39fc"],
                  before={"tokenName": "Checkout", "type": "client"},
                  request={"method": "DELETE", "path": "/api/admin/api-tokens/:secret"},
                  state=State.DONE)  # fmt: skip
    assert names_of(entry) == {"checkout"}
    event = Event(
        id=1,
        type="api-token-deleted",
        createdAt=_now(),
        preData={"tokenName": "checkout", "secret": "*:development.1234"},
    )
    assert made_by(entry, event)
    assert not made_by(entry, Event(id=2, type="api-token-created", createdAt=_now(),
                                    data={"tokenName": "Checkout"}))  # fmt: skip
    assert not made_by(entry, Event(id=3, type="api-token-deleted", createdAt=_now(),
                                    preData={"tokenName": "Other"}))  # fmt: skip


def _now() -> Any:
    from datetime import UTC, datetime

    return datetime.now(UTC)


def test_every_action_names_the_events_it_makes() -> None:
    """A new action says which events it makes (or that it makes none, and why): the History's
    record and the check of its changes in doubt match by them."""
    from app.actions.recorded import _NO_EVENT, EVENT_TYPES
    from app.registry import ACTIONS_BY_KEY

    assert set(EVENT_TYPES) == set(ACTIONS_BY_KEY)
    assert {key for key, types in EVENT_TYPES.items() if not types} == set(_NO_EVENT)
