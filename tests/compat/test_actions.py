"""The actions of issue 15 on a real Unleash, read back from it: deleting inactive users
through the same path the window and the command take (`app.actions.inactive_users`: snapshot,
journal, request), and what Unleash does with ids that are not inactive, which the sandbox
copies (tests/sandbox/test_inactive_delete.py). Every one of `VERSIONS` answers alike here
(measured: 5.12.8, 6.10.1, 7.6.5 and 8.2.0)."""

from __future__ import annotations

import asyncio
import csv
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from app import cli
from app.actions.inactive_users import plan_deletion
from app.actions.journal import Actor, Journal, State
from app.actions.runner import carry_out
from app.api.client import AdminClient
from tests.app.test_cli_users import Terminal
from tests.compat.test_operations import admin, new_user

if TYPE_CHECKING:
    from tests.compat.conftest import Cleanup, Peer

PATH = "/api/admin/user-admin/inactive/delete"


def make_inactive(peer: Peer, *user_ids: int) -> None:
    peer.sql(
        "UPDATE users SET seen_at = now() - interval '200 days', created_at = now() - "
        f"interval '400 days' WHERE id IN ({', '.join(map(str, user_ids))})"
    )


def test_delete_inactive_users_with_snapshot_and_journal(
    peer: Peer, unique: Callable[[str], str], cleanup: Cleanup, tmp_path: Path
) -> None:
    async def make() -> tuple[int, int]:
        async with admin(peer) as client:
            gone = await new_user(client, cleanup, f"{unique('gone')}@example.com", "Gone")
            kept = await new_user(client, cleanup, f"{unique('kept')}@example.com", "Kept")
        return gone, kept

    gone, kept = asyncio.run(make())
    make_inactive(peer, gone, kept)

    async def delete() -> tuple[int, set[int], Journal]:
        async with admin(peer) as client:
            caps = await client.capabilities()
            journal = Journal(Actor("compat", caps.base_url, caps.token_kind), tmp_path)
            listed = (await client.inactive_users()).inactiveUsers
            plan = plan_deletion([u for u in listed if u.id == gone], journal)
            done = await carry_out(client, plan)
            after = {u.id for u in (await client.inactive_users()).inactiveUsers}
        return done.status, after, journal

    status, after, journal = asyncio.run(delete())
    assert status == 200 and gone not in after and kept in after
    with peer.raw() as http:
        assert http.get(f"/api/admin/user-admin/{gone}").status_code == 404
    (entry,) = journal.entries()
    assert (entry.ids, entry.state, entry.status) == ([gone], State.DONE, 200)
    with (tmp_path / entry.before["snapshot"]).open(newline="", encoding="utf-8") as f:
        assert [r["name"] for r in csv.DictReader(f)] == ["Gone"]


def test_unleash_deletes_any_id_and_stops_at_an_unknown_one(
    peer: Peer, unique: Callable[[str], str], cleanup: Cleanup
) -> None:
    """What the sandbox copies: an active user given is deleted, the first unknown id ends the
    request with 404, the users before it are deleted and those after it are not."""

    async def make() -> list[int]:
        async with AdminClient(peer.url, peer.admin_token) as client:
            return [
                await new_user(client, cleanup, f"{unique(kind)}@example.com", kind)
                for kind in ("active", "after")
            ]

    active, after = asyncio.run(make())
    with peer.raw() as http:
        answer = http.post(PATH, json={"ids": [active, 2_000_000_000, after]})
        assert answer.status_code == 404, answer.text
        assert answer.json()["name"] == "NotFoundError"
        assert http.get(f"/api/admin/user-admin/{active}").status_code == 404
        assert http.get(f"/api/admin/user-admin/{after}").status_code == 200
        extra = http.post(PATH, json={"ids": [], "names": ["x"]})
        assert extra.status_code == 400, extra.text  # additionalProperties: false
        assert http.post(PATH, json={"ids": [-1]}).status_code == 400
        assert http.post(PATH, json={"ids": []}).status_code == 200
        # a number in a string is taken for the number
        assert http.post(PATH, json={"ids": [str(after)]}).status_code == 200
        assert http.get(f"/api/admin/user-admin/{after}").status_code == 404


def test_on_a_terminal_deleting_several_inactive_users_asks_for_their_number(
    peer: Peer, unique: Callable[[str], str], cleanup: Cleanup, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """`flagdesk users inactive delete` of two users on Unleash 8.2: y or a wrong number
    deletes nothing (exit 1), the number typed deletes both."""

    async def make() -> list[int]:
        async with admin(peer) as client:
            return [await new_user(client, cleanup, f"{unique(k)}@example.com", k)
                    for k in ("typed-a", "typed-b")]  # fmt: skip

    ids = asyncio.run(make())
    make_inactive(peer, *ids)
    monkeypatch.setenv("FLAGDESK_TOKEN", peer.admin_token)
    monkeypatch.setenv("FLAGDESK_DATA_DIR", str(tmp_path))
    argv = ["users", "inactive", "delete", "--ids", *map(str, ids), "--url", peer.url]

    def inactive() -> set[int]:
        with peer.raw() as http:
            return {u["id"] for u in http.get("/api/admin/user-admin/inactive").json()[
                "inactiveUsers"]}  # fmt: skip

    for wrong in ("y", "3"):
        monkeypatch.setattr(sys, "stdin", Terminal(f"{wrong}\n"))
        assert cli.main(argv) == 1
        assert "Type 2 to confirm:" in capsys.readouterr().err
        assert set(ids) <= inactive()
    monkeypatch.setattr(sys, "stdin", Terminal("2\n"))
    assert cli.main(argv) == 0
    assert not set(ids) & inactive()
