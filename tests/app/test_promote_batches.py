"""A promote in batches (issue 37): with a personal access token on the target, `flagdesk
promote` sends the flags' configuration per environment as imports, one a target project and
environment, validated by the target first, and says so; the demo's flags promoted to an empty
sandbox then compare the same (`flagdesk diff` exits 0), in a few requests rather than one a
flag, strategy and environment; `flagdesk journal undo` puts the target back to its snapshot
before. With the admin API token (which Unleash refuses for an import) the plan is request by
request and says why. An error of the target's validation stops the promote with the server's
words, nothing sent. Real sandboxes over HTTP, state read back."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.actions.promote import (
    ImportRefused,
    Selection,
    batching_for,
    plan_promote,
    segment_ids_of,
    validated,
)
from app.api.client import AdminClient
from app.snapshot.compare import compare
from app.snapshot.read import read_snapshot
from sandbox import db
from sandbox.process import SandboxProcess
from tests.app.test_cli_promote import SELECTION, Cli, _ok
from tests.conftest import personal_token_of


@pytest.fixture
def batched(tmp_path: Path) -> Iterator[tuple[Cli, SandboxProcess, SandboxProcess]]:
    """A demo sandbox (profile `demo`) and an empty one, reached with its admin's personal
    access token (profile `empty`) and with the admin API token (profile `empty-admin`)."""
    with (
        SandboxProcess(tmp_path / "a.sqlite3", "--demo") as a,
        SandboxProcess(tmp_path / "b.sqlite3", "--empty") as b,
    ):
        cli = Cli(tmp_path)
        cli.profile("demo", a)
        cli.profile("empty-admin", b)
        pat = personal_token_of(b, "admin")
        added = cli("profiles", "add", "empty", "--url", b.url, "--token-store", "file",
                    token=pat)  # fmt: skip
        assert added.returncode == 0, added.stderr
        yield cli, a, b


def test_a_promote_in_imports_then_undone(
    batched: tuple[Cli, SandboxProcess, SandboxProcess], tmp_path: Path
) -> None:
    cli, _a, b = batched
    before = cli.snapshot("empty", tmp_path / "before.json")
    planned = _ok(cli("promote", "demo", "empty", *SELECTION, "--dry-run"))
    lines = planned.splitlines()
    imports = [x for x in lines if "POST /api/admin/features-batch/import  import into" in x]
    # one import a project and environment: the selection's project, its two environments
    assert [x.split("import into ")[1].split(":")[0] for x in imports] == [
        "“default”, development", "“default”, production"]  # fmt: skip
    assert all(" flags (" in x and " created), " in x for x in imports), imports
    assert all(re.search(r"created\), [\d,]+ strateg(y|ies)$", x) for x in imports), imports
    assert any(x.startswith("How: the flags' configuration per environment goes in imports")
               for x in lines), planned  # fmt: skip
    # nothing of a flag's strategies, variants or state goes one by one
    assert not [
        x
        for x in lines
        if "/strategies" in x or x.endswith((" on in production", " on in development"))
    ]
    _ok(cli("diff", before, "empty"))  # the dry run sent nothing

    result = json.loads(_ok(cli("promote", "demo", "empty", *SELECTION, "--yes", "--json")))
    assert result["promoted"] is True
    sent = [p for stage in result["plan"]["stages"] for p in stage]
    assert len(result["entries"]) == len(sent) < 20, sent
    _ok(cli("diff", "demo", "empty", *SELECTION))  # the same now
    again = _ok(cli("promote", "demo", "empty", *SELECTION, "--yes"))
    assert "Nothing to promote" in again
    # the server recorded one import a project and environment (the sandbox's database)
    conn = db.connect(b.db)
    try:
        recorded = conn.execute(
            "SELECT project, environment FROM events WHERE type = 'features-imported'"
            " ORDER BY id").fetchall()  # fmt: skip
    finally:
        conn.close()
    assert [tuple(r) for r in recorded] == [("default", "development"),
                                            ("default", "production")]  # fmt: skip

    _ok(cli("journal", "undo", result["entries"][-1], "--profile", "empty", "--yes"))
    _ok(cli("diff", before, "empty"))


def test_with_the_admin_token_the_plan_is_request_by_request_and_says_why(
    batched: tuple[Cli, SandboxProcess, SandboxProcess],
) -> None:
    cli, _a, _b = batched
    planned = _ok(cli("promote", "demo", "empty-admin", *SELECTION, "--dry-run"))
    assert "POST /api/admin/features-batch/import  " not in planned
    how = next(x for x in planned.splitlines() if x.startswith("How: "))
    assert how == (
        "How: the flags go request by request, not in imports (POST "
        "/api/admin/features-batch/import): Unleash refuses an import sent with an admin API "
        "token (“You can't use an admin token to import features”): a personal access token "
        "or a service account's token of an Admin may import."
    )
    assert "/environments/production/strategies" in planned


def test_an_error_of_the_target_s_validation_stops_the_promote(
    batched: tuple[Cli, SandboxProcess, SandboxProcess],
) -> None:
    """The target changed after the plan was made: a flag of the plan now exists in another
    of its projects. Validate says so; nothing is sent."""
    _cli, a, b = batched
    pat = personal_token_of(b, "admin")

    async def body() -> str:
        async with AdminClient(a.url, a.admin_token) as source_client:
            source = await read_snapshot(source_client)
        async with AdminClient(b.url, pat) as client:
            target = await read_snapshot(client)
            comparison = compare(source, target, kinds=["flags"], projects=["default"],
                                 names=["billing-*"])  # fmt: skip
            plan = plan_promote(
                source, target, comparison, Selection(), segment_ids=await segment_ids_of(client),
                batching=await batching_for(client),
            )  # fmt: skip
            imported = [p for p in plan.second if p.query is not None]
            assert imported and imported[0].flags
            taken = imported[0].flags[0]
            _project(b, "other")  # the empty sandbox has only `default`
            with b.admin() as http:  # made meanwhile, in another project of the target
                made = http.post("/api/admin/projects/other/features", json={"name": taken})
                assert made.status_code == 201, made.text
            with pytest.raises(ImportRefused) as refused:
                await validated(client, plan)
            after = await read_snapshot(client)
            assert {f.name for f in after.flags} == {f.name for f in target.flags} | {taken}
            return str(refused.value)

    said = asyncio.run(body())
    assert "You cannot import a features that already exist in other projects" in said
    assert "(in project other)" in said


def _project(sb: SandboxProcess, name: str) -> None:
    """A project `name` written into the running sandbox's database (it has no route to make
    one; its environments come with it)."""
    conn = db.connect(sb.db)
    try:
        with conn:
            conn.execute("INSERT INTO projects(id, name, created_at) VALUES(?, ?, 0)", (name, name))
    finally:
        conn.close()
