"""Reviving and deleting archived flags through the client and `app.actions.archived_features`
against the sandbox over HTTP (state read back): one flag by name, many in one request per
batch, the undo of a revive, the snapshot and the journal, the bytes of each request, the
errors as the client's messages, an action the token cannot do refused before any request; and
the same actions on a server that lists its archive only through the search API (Unleash 7+,
played by `Unleash82`)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from app.actions import archived_features as a
from app.actions.journal import Actor, Journal, State
from app.actions.runner import Done, PartlyDone, carry_out, journal_of
from app.api import errors as e
from app.api.client import (
    AdminClient,
    archive_features_request,
    delete_feature_request,
    revive_features_request,
)
from app.api.models import ArchivedFeature
from app.registry import REVIVE_FEATURES
from sandbox.process import SandboxProcess
from tests.api.test_fallbacks import Unleash82, client_for
from tests.api.test_operations import run, with_client
from tests.sandbox.test_archive_actions import PersonalToken


async def listed(client: AdminClient, project: str) -> list[ArchivedFeature]:
    return (await client.archived_features(project)).features


async def live(client: AdminClient, project: str) -> set[str]:
    return {f.name for f in (await client.project_features(project)).features}


def test_the_requests_are_the_bytes_the_plan_shows() -> None:
    assert revive_features_request("web shop", ["a", "b/c"]).path == (
        "/api/admin/projects/web%20shop/revive"
    )
    assert revive_features_request("p", ["a", "b"]).body == b'{"features":["a","b"]}'
    assert archive_features_request("p", ["a"]).path == "/api/admin/projects/p/archive"
    one = delete_feature_request("a/b?")
    assert (one.method, one.path, one.body) == ("DELETE", "/api/admin/archive/a%2Fb%3F", b"")


def test_the_client_revives_deletes_and_archives_again(sandbox: SandboxProcess) -> None:
    async def job(c: AdminClient) -> None:
        first, second, third, *_ = [f.name for f in await listed(c, "web-shop")]
        assert await c.revive_feature(first) == 200
        assert await c.revive_features("web-shop", [second, third]) == 200
        assert {first, second, third} <= await live(c, "web-shop")
        assert await c.archive_features("web-shop", [first, second, third]) == 202
        assert await c.delete_feature(first) == 200
        assert await c.delete_features("web-shop", [second, third]) == 200
        names = {f.name for f in await listed(c, "web-shop")}
        assert not {first, second, third} & (names | await live(c, "web-shop"))
        with pytest.raises(e.NotFound) as caught:
            await c.revive_feature("no-such-flag")
        assert str(caught.value) == (
            "404 NotFoundError (POST /api/admin/archive/revive/no-such-flag): No feature flag found"
        )

    with_client(sandbox, job)


def test_revive_many_is_one_request_per_batch_journaled_and_undone(
    sandbox: SandboxProcess, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(a, "BATCH", 2)  # 3 flags: two requests

    async def job(c: AdminClient) -> tuple[Done, Done, list[str], set[str]]:
        journal = Journal(Actor("test", c.base_url, "admin"), tmp_path)
        chosen = (await listed(c, "web-shop"))[:3]
        plan = a.plan_revive(chosen, "web-shop", journal)
        assert [r.path for r in plan.requests] == ["/api/admin/projects/web-shop/revive"] * 2
        revived = await carry_out(c, plan)
        names = {f.name for f in await listed(c, "web-shop")}
        back = await carry_out(c, a.plan_archive(chosen, "web-shop", journal))
        return revived, back, plan.names, names - {f.name for f in await listed(c, "web-shop")}

    revived, back, names, missing = with_client(sandbox, job)
    assert revived.statuses == (200, 200) and back.statuses == (202, 202)
    assert missing == set()  # archived again: every one listed as before
    entries = Journal(Actor("test", sandbox.url), tmp_path).entries()
    assert [(x.action, x.ids, x.state, x.status) for x in entries] == [
        ("archived_features.revive_bulk", names[:2], State.DONE, 200),
        ("archived_features.revive_bulk", names[2:], State.DONE, 200),
        ("archived_features.archive", names[:2], State.DONE, 202),
        ("archived_features.archive", names[2:], State.DONE, 202),
    ]
    assert entries[0].before == {"snapshot": revived.plan.snapshot.name, "count": 2,
                                 "project": "web-shop"}  # fmt: skip
    assert entries[0].request == {"method": "POST", "path": "/api/admin/projects/web-shop/revive"}
    snapshot = json.loads(revived.plan.snapshot.read_text(encoding="utf-8"))
    assert (snapshot["server"], snapshot["project"]) == (sandbox.url, "web-shop")
    assert [f["name"] for f in snapshot["features"]] == names
    assert list(snapshot["features"][0]) == list(a.SNAPSHOT_FIELDS)
    assert snapshot["features"][0]["archivedAt"].endswith("Z")
    assert {env["name"] for env in snapshot["features"][0]["environments"]} == {
        "development", "production"}  # fmt: skip


def test_delete_one_plan_says_it_cannot_be_undone_and_asks_for_the_name(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    async def job(c: AdminClient) -> tuple[a.ArchivePlan, a.ArchivePlan, Done]:
        journal = journal_of("test", await c.capabilities())
        journal = Journal(journal.actor, tmp_path)
        features = await listed(c, "default")
        many = a.plan_delete(features, "default", journal)
        one = a.plan_delete(features[:1], "default", journal)
        return many, one, await carry_out(c, one)

    many, one, done = with_client(sandbox, job)
    assert (many.confirm_text, one.confirm_text) == ("default", one.names[0])
    assert many.action.key == "archived_features.delete_bulk"
    assert one.action.key == "archived_features.delete"
    assert one.requests == (delete_feature_request(one.names[0]),)
    assert one.question == "Delete 1 flag for good?"
    said = many.lines()[0]
    assert said.startswith(f"{many.count} flags of project “default” will be deleted for good "
                           f"on {sandbox.url} (connection “test”): ")  # fmt: skip
    assert "cannot be undone" in many.lines()[2]
    assert many.lines()[3] == "To confirm, type the project's id: default"
    assert not many.confirmed_by("defaul") and many.confirmed_by(" default ")
    assert done.statuses == (200,) and one.snapshot.exists()
    assert one.names[0] not in {f.name for f in with_client(
        sandbox, lambda c: listed(c, "default"))}  # fmt: skip
    with pytest.raises(ValueError, match="not flags of project web-shop"):
        a.plan_revive(list(one.features), "web-shop", Journal(Actor("t", "u"), tmp_path))
    with pytest.raises(ValueError, match="no flags"):
        a.plan_revive([], "web-shop", Journal(Actor("t", "u"), tmp_path))


def test_an_action_the_token_cannot_do_sends_nothing_writes_nothing(
    sandbox: SandboxProcess, personal_token: PersonalToken, tmp_path: Path
) -> None:
    viewer = personal_token(sandbox, "uma.iyer")  # an active Viewer

    async def job(c: AdminClient) -> None:
        features = await listed(c, "web-shop")
        journal = Journal(Actor("t", c.base_url), tmp_path)
        plan = a.plan_revive(features[:2], "web-shop", journal)
        with pytest.raises(e.ApiError) as caught:  # the sandbox: the probe cannot tell
            await carry_out(c, plan)
        assert caught.value.status == 403
        (entry,) = journal.entries()
        assert (entry.state, entry.status) == (State.FAILED, 403)

    with_client(sandbox, job, token=viewer)
    assert len(with_client(sandbox, lambda c: listed(c, "web-shop"))) > 2


def test_the_actions_work_where_the_archive_is_read_through_search(tmp_path: Path) -> None:
    server = Unleash82()

    async def job() -> tuple[Done, list[str]]:
        async with client_for(server) as c:
            caps = await c.capabilities()
            assert caps.archive_endpoint is False and caps.action(REVIVE_FEATURES).available
            features = await listed(c, "default")  # through the search API
            journal = Journal(journal_of("unleash", caps).actor, tmp_path)
            done = await carry_out(c, a.plan_revive(features, "default", journal))
            return done, [f.name for f in await listed(c, "default")]

    before = server.hits["/api/admin/projects/default/revive"]
    done, left = run(job())
    assert done.statuses == (200,) and done.plan.count == 5 and left == []
    assert server.hits["/api/admin/projects/default/revive"] == before + 1


class FailsSecondBatch(Unleash82):
    """Unleash 8.2 refusing the second bulk request (a 403, as for a flag moved meanwhile)."""

    def _bulk(self, project: str, verb: str, names: list[str]) -> httpx.Response:
        self.batches = getattr(self, "batches", 0) + 1
        if self.batches == 2:
            return httpx.Response(403, json={"name": "InvalidOperationError",
                                             "message": "moved meanwhile"})  # fmt: skip
        return super()._bulk(project, verb, names)


def test_a_later_batch_that_fails_says_how_many_were_done(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(a, "BATCH", 2)
    server = FailsSecondBatch()

    async def job() -> PartlyDone:
        async with client_for(server) as c:
            features = await listed(c, "default")
            journal = Journal(Actor("unleash", c.base_url, "admin"), tmp_path)
            with pytest.raises(PartlyDone) as caught:
                await carry_out(c, a.plan_delete(features, "default", journal))
            return caught.value

    failed = run(job())
    assert failed.done == 1 and failed.plan.count == 5  # one request of three
    assert str(failed).startswith("2 of 5 flags were deleted for good; then: 403 ")
    entries = Journal(Actor("unleash", "x"), tmp_path).entries()
    assert [(x.state, x.status, len(x.ids)) for x in entries] == [
        (State.DONE, 200, 2), (State.FAILED, 403, 2)]  # fmt: skip
