"""What each real Unleash's event log recorded of flagdesk's changes (`app.actions.recorded`,
issue 38), and the sandbox playing it (`target`): changes made through the command line, then
`flagdesk journal events ENTRY` for each, as a person runs it. A user created and deleted, an
API token created and deleted, a reset link: each change finds its own event (of the type
`EVENT_TYPES` says, naming what it names, on 5.12 through the older search by body), and a
reset link none, as `EVENT_TYPES` says of it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.actions.journal import JOURNAL_NAME, Entry, read_journal

if TYPE_CHECKING:
    from tests.compat.conftest import Peer


def flagdesk(target: Peer, data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "FLAGDESK_TOKEN": target.admin_token, "FLAGDESK_DATA_DIR": str(data)}
    return subprocess.run(
        [sys.executable, "-m", "app", *args, "--url", target.url],
        capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=120,
    )  # fmt: skip


def entries(data: Path) -> list[Entry]:
    (folder,) = (data / "journal").iterdir()
    return read_journal(folder / JOURNAL_NAME)


def recorded(target: Peer, data: Path, entry: Entry) -> tuple[int, Any]:
    answer = flagdesk(target, data, "journal", "events", entry.id, "--json")
    assert answer.returncode in (0, 1), answer.stderr
    return answer.returncode, json.loads(answer.stdout)


def test_each_change_finds_its_own_events(
    target: Peer, unique: Callable[[str], str], tmp_path: Path
) -> None:
    email = f"{unique('recuser')}@example.com"
    token = unique("rectoken")
    made = flagdesk(target, tmp_path, "users", "create", "--email", email, "--name", "Rec",
                    "--root-role", "Viewer", "--yes", "--json")  # fmt: skip
    assert made.returncode == 0, made.stderr
    user_id = json.loads(made.stdout)["user"]["id"]
    steps = [
        ("users", "reset-password", str(user_id)),
        ("users", "delete", str(user_id), "--yes"),
        ("tokens", "create", "--name", token, "--type", "client", "--environment", "development",
         "--yes"),
        ("tokens", "delete", token, "--yes"),
    ]  # fmt: skip
    for step in steps:
        done = flagdesk(target, tmp_path, *step, "--json")
        assert done.returncode == 0, (step, done.stderr)
    by_action = {e.action: e for e in entries(tmp_path)}
    assert set(by_action) == {"users.create", "users.reset_password", "users.delete",
                              "api_tokens.create", "api_tokens.delete"}  # fmt: skip

    def events(action: str) -> list[Any]:
        status, said = recorded(target, tmp_path, by_action[action])
        assert status == (0 if said["events"] else 1), said
        return list(said["events"])

    (created,) = events("users.create")
    assert created["type"] == "user-created" and created["data"]["email"] == email
    (deleted,) = events("users.delete")
    assert deleted["type"] == "user-deleted" and deleted["preData"]["id"] == user_id
    (token_made,) = events("api_tokens.create")
    assert token_made["type"] == "api-token-created"
    assert token_made["data"]["tokenName"] == token
    (token_gone,) = events("api_tokens.delete")
    assert token_gone["type"] == "api-token-deleted"
    assert token_gone["preData"]["tokenName"] == token
    status, said = recorded(target, tmp_path, by_action["users.reset_password"])
    assert status == 1 and said["searched"] is False and said["events"] == []
    # and, looked for by time and user alone, the server logged nothing of the link either
    with target.raw() as http:
        latest = http.get("/api/admin/events").json()["events"]
    mine = [e for e in latest if str(user_id) in json.dumps([e.get("data"), e.get("preData")])
            and email in json.dumps([e.get("data"), e.get("preData")])]  # fmt: skip
    assert sorted(e["type"] for e in mine) == ["user-created", "user-deleted"]
