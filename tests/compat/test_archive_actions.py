"""The archive's actions on a real Unleash (each of `VERSIONS`), read back from it: reviving and
deleting archived flags through the same path the window and the command take
(`app.actions.archived_features`: snapshot, journal, one request per batch), the undo of a revive
(archiving again, 202), and what Unleash answers that the sandbox copies
(tests/sandbox/test_archive_actions.py): 404 to revive an unknown flag, and into an unknown
project (200 on 5.12), 200 to delete a live flag (nothing done) and an unknown one (404 before
8.0), a live flag "revived" with its environments turned off, 400 for a body unlike
`batchFeaturesSchema`. From 7.0 Unleash lists its archive only through the rate-limited search
API, so each test lists it once."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from app.actions import archived_features as a
from app.actions.journal import Actor, Journal, State
from app.actions.runner import Done, carry_out
from app.api.client import AdminClient
from app.api.models import ArchivedFeature
from tests.compat.conftest import per_version
from tests.compat.test_operations import admin, new_feature

if TYPE_CHECKING:
    from tests.compat.conftest import Cleanup, Peer


def is_live(peer: Peer, name: str) -> bool:
    """Whether the flag is in the project, not archived (Unleash answers 404 for an archived or
    deleted one)."""
    with peer.raw() as http:
        answer = http.get(f"/api/admin/projects/default/features/{name}")
    assert answer.status_code in (200, 404), answer.text
    return answer.status_code == 200


async def archived_now(client: AdminClient, names: list[str]) -> list[ArchivedFeature]:
    """These flags as the archive lists them (one search), in the order given."""
    by_name = {f.name: f for f in (await client.archived_features("default")).features}
    return [by_name[n] for n in names if n in by_name]


async def made_and_archived(client: AdminClient, cleanup: Cleanup, names: list[str]) -> int:
    for name in names:
        await new_feature(client, cleanup, name)
    return await client.archive_features("default", names)


def test_revive_many_in_one_request_and_undo(
    peer: Peer, unique: Callable[[str], str], cleanup: Cleanup, tmp_path: Path
) -> None:
    names = [unique("revive") for _ in range(3)]

    async def go() -> tuple[int, Done, Done]:
        async with admin(peer) as client:
            archived_status = await made_and_archived(client, cleanup, names)
            features = await archived_now(client, names)
            assert [f.name for f in features] == names
            caps = await client.capabilities()
            journal = Journal(Actor("compat", caps.base_url, caps.token_kind), tmp_path)
            plan = a.plan_revive(features, "default", journal)
            assert len(plan.requests) == 1
            revived = await carry_out(client, plan)
            assert all(is_live(peer, n) for n in names)
            undone = await carry_out(client, a.plan_archive(features, "default",
                                                                        journal))  # fmt: skip
            return archived_status, revived, undone

    archived_status, revived, undone = asyncio.run(go())
    assert archived_status == 202
    assert revived.statuses == (200,) and undone.statuses == (202,)
    assert not any(is_live(peer, n) for n in names)  # archived again
    entries = Journal(Actor("compat", peer.url), tmp_path).entries()
    assert [(x.action, x.ids, x.state, x.status) for x in entries] == [
        ("archived_features.revive_bulk", names, State.DONE, 200),
        ("archived_features.archive", names, State.DONE, 202),
    ]
    snapshot = json.loads(revived.plan.snapshot.read_text(encoding="utf-8"))
    assert [f["name"] for f in snapshot["features"]] == names


def test_delete_one_and_many_for_good(
    peer: Peer, unique: Callable[[str], str], cleanup: Cleanup, tmp_path: Path
) -> None:
    names = [unique("delete") for _ in range(3)]

    async def go() -> tuple[Done, Done]:
        async with admin(peer) as client:
            await made_and_archived(client, cleanup, names)
            features = await archived_now(client, names)
            peer.settle(*names)  # deleted for good next
            caps = await client.capabilities()
            journal = Journal(Actor("compat", caps.base_url, caps.token_kind), tmp_path)
            one = await carry_out(client, a.plan_delete(features[:1], "default",
                                                                    journal))  # fmt: skip
            many = await carry_out(client, a.plan_delete(features[1:], "default",
                                                                     journal))  # fmt: skip
            return one, many

    one, many = asyncio.run(go())
    assert (one.plan.action.key, one.statuses) == ("archived_features.delete", (200,))
    assert (many.plan.action.key, many.statuses) == ("archived_features.delete_bulk", (200,))
    with peer.raw() as http:
        for name in names:  # gone for good: nothing to revive
            answer = http.post(f"/api/admin/archive/revive/{name}")
            assert answer.status_code == 404, answer.text
            assert answer.json()["message"] == per_version(
                peer, {"5.12": "No feature toggle found", "6.10 7.6 8.2": "No feature flag found"}
            )


def test_what_unleash_answers_that_the_sandbox_copies(
    peer: Peer, unique: Callable[[str], str], cleanup: Cleanup
) -> None:
    name = unique("live")

    async def make() -> None:
        async with admin(peer) as client:
            await new_feature(client, cleanup, name)

    asyncio.run(make())
    peer.sql(f"UPDATE feature_environments SET enabled = true WHERE feature_name = '{name}'")
    with peer.raw() as http:
        unknown = unique("unknown")
        answer = http.post(f"/api/admin/archive/revive/{unknown}")
        assert answer.status_code == 404 and answer.json()["name"] == "NotFoundError"
        # deleting an unknown flag from the archive: 404 before 8, 200 (nothing done) on 8.2
        assert http.delete(f"/api/admin/archive/{unknown}").status_code == per_version(
            peer, {"5.12 6.10 7.6": 404, "8.2": 200}
        )
        # a live flag: deleting leaves it; "reviving" it turns its environments off
        assert http.delete(f"/api/admin/archive/{name}").status_code == 200
        assert is_live(peer, name)
        assert http.post(f"/api/admin/archive/revive/{name}").status_code == 200
        feature = http.get(f"/api/admin/projects/default/features/{name}").json()
        assert [env["enabled"] for env in feature["environments"]] == [False] * len(
            feature["environments"]
        )
        for verb in ("revive", "delete"):
            path = f"/api/admin/projects/default/{verb}"
            assert http.post(path, json={}).status_code == 400
            assert http.post(path, json={"features": [unique("unknown")]}).status_code == 200
        missing = http.post("/api/admin/projects/no-such-project/revive", json={"features": []})
        # 5.12 revives nothing into an unknown project with a 200; later versions refuse it
        # (a flag of another project named: 403 on all four; test_versions.py, which asks the
        # sandbox playing each the same)
        assert missing.status_code == per_version(peer, {"5.12": 200, "6.10 7.6 8.2": 404})
        if missing.status_code == 404:
            message = "Active project with id no-such-project does not exist"
            assert missing.json()["message"] == message


def test_the_command_names_a_project_the_server_does_not_have(
    target: Peer, unique: Callable[[str], str], tmp_path: Path
) -> None:
    """`flagdesk archive list` of a project the server does not have: every version answers
    its archive (the endpoint before 7.0, the search after) as an empty one, so the command
    asks the projects list, as the window does, and refuses the id by name with exit status 2
    (it spends none of the search API's few requests a minute on it)."""
    project = unique("no-project")
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLAGDESK_")}
    env["FLAGDESK_TOKEN"] = target.admin_token
    env["FLAGDESK_DATA_DIR"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "app", "archive", "list", project, "--url", target.url],
        cwd=Path(__file__).resolve().parents[2], env=env, capture_output=True, text=True,
        stdin=subprocess.DEVNULL, timeout=120,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    said = done.stderr
    assert f"no project “{project}” on " in said and "(its projects: " in said, said
    assert "default" in said.partition("(its projects: ")[2]
