"""`flagdesk promote` run as a subprocess against real sandboxes: a demo sandbox promoted to an
empty one, and one demo sandbox's staging promoted to its production. `--dry-run` sends
nothing (the target read back the same); applied, `flagdesk diff` with the same selection then
finds nothing (exit 0), the segment and context field the flags need made first; a second
promote has nothing to do; `flagdesk journal undo` of any of its entries puts the target back
(a snapshot taken before compares the same as the server after, exit 0), but for a change
made since in an environment the promote did not write to, which stays. A file is no
TARGET; without a terminal and without --yes nothing is sent. State is read back from the
servers, never assumed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox.process import SandboxProcess

ROOT = Path(__file__).resolve().parents[2]


class Cli:
    """`flagdesk` with its own config and data folders, and profiles of sandboxes."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path
        self.env = {
            **os.environ,
            "FLAGDESK_DATA_DIR": str(tmp_path / "data"),
            "FLAGDESK_CONFIG_DIR": str(tmp_path / "config"),
            "FLAGDESK_LOG_DIR": str(tmp_path / "logs"),
            "PYTHONPATH": str(ROOT),
        }
        self.env.pop("FLAGDESK_TOKEN", None)

    def __call__(self, *args: str | Path, token: str = "") -> subprocess.CompletedProcess[str]:
        env = dict(self.env)
        if token:
            env["FLAGDESK_TOKEN"] = token
        return subprocess.run(
            [sys.executable, "-m", "app", *map(str, args)],
            capture_output=True,
            text=True,
            env=env,
            cwd=self.tmp,
            stdin=subprocess.DEVNULL,
            timeout=120,
        )

    def profile(self, name: str, sandbox: SandboxProcess) -> None:
        added = self(
            "profiles",
            "add",
            name,
            "--url",
            sandbox.url,
            "--token-store",
            "file",
            token=sandbox.admin_token,
        )
        assert added.returncode == 0, added.stderr

    def snapshot(self, profile: str, path: Path) -> Path:
        taken = self("snapshot", "--profile", profile, "-o", path)
        assert taken.returncode == 0, taken.stderr
        return path


@pytest.fixture
def two(tmp_path: Path) -> Iterator[tuple[Cli, SandboxProcess, SandboxProcess]]:
    with (
        SandboxProcess(tmp_path / "a.sqlite3", "--demo") as a,
        SandboxProcess(tmp_path / "b.sqlite3", "--empty") as b,
    ):
        cli = Cli(tmp_path)
        cli.profile("demo", a)
        cli.profile("empty", b)
        yield cli, a, b


def _ok(done: subprocess.CompletedProcess[str], status: int = 0) -> str:
    assert done.returncode == status, done.stdout + done.stderr
    return done.stdout


#: the demo's flags of project `default` but the two whose production variants Unleash 8.2
#: would refuse on a flag with none (environment variants are deprecated): the segment “Beta
#: testers” and the context field “region” they use are left out by the selection (a global
#: segment is no project's, a context field matches no flag's name) and made all the same
SELECTION = (
    "--project",
    "default",
    "--map-env",
    "development=development",
    "--map-env",
    "production=production",
    *(
        x
        for n in (
            "billing-*",
            "checkout-kill-switch",
            "coupons-limits",
            "invoices-*",
            "notifications-*",
            "profile-*",
            "refunds-*",
            "reviews-*",
            "search-*",
            "shipping-*",
            "wishlist-*",
        )
        for x in ("--name", n)
    ),
)


def test_a_demo_promoted_to_an_empty_server_then_undone(
    two: tuple[Cli, SandboxProcess, SandboxProcess], tmp_path: Path
) -> None:
    cli, _a, b = two
    before = cli.snapshot("empty", tmp_path / "before.json")
    planned = _ok(cli("promote", "demo", "empty", *SELECTION, "--dry-run"))
    lines = planned.splitlines()
    stage_one, stage_two = (
        lines.index(next(x for x in lines if x.startswith("Stage 1"))),
        lines.index(next(x for x in lines if x.startswith("Stage 2"))),
    )
    segment = next(
        i
        for i, x in enumerate(lines)
        if "POST /api/admin/segments  segment “Beta "
        "testers” (1 constraint) (needed by the flags promoted)" in x
    )
    field = next(
        i for i, x in enumerate(lines) if "POST /api/admin/context  context field “region”" in x
    )
    assert stage_one < field < stage_two and stage_one < segment < stage_two
    assert any("segment “Beta testers” (created in stage 1)" in x for x in lines[stage_two:])
    # a flag's strategies come before it is turned on
    on = next(i for i, x in enumerate(lines) if x.endswith("“billing-beta” on in production"))
    assert "billing-beta/environments/production/strategies" in lines[on - 1]
    # what cannot be promoted is said, and why (everything: the demo's people, its projects)
    whole = _ok(cli("promote", "demo", "empty", "--dry-run"))
    assert (
        "users (44: " in whole and "not promoted: people and access are not configuration" in whole
    )
    assert (
        "projects payments: the target has no such project: flagdesk does not create "
        "projects" in whole
    )
    # the dry run sent nothing: the server is as it was
    _ok(cli("diff", before, "empty"))
    # without a terminal and without --yes, nothing either
    refused = cli("promote", "demo", "empty", *SELECTION)
    assert refused.returncode == 2 and "--yes" in refused.stderr
    _ok(cli("diff", before, "empty"))

    result = json.loads(_ok(cli("promote", "demo", "empty", *SELECTION, "--yes", "--json")))
    assert result["promoted"] is True and result["entries"]
    # read back: the segment is there, and the strategies that use it hold its new id
    with b.admin() as http:
        segments = http.get("/api/admin/segments").json()["segments"]
        made = next(g for g in segments if g["name"] == "Beta testers")
        used = http.get(f"/api/admin/segments/{made['id']}/strategies").json()
        assert used["strategies"], used
    # the same selection compares the same now
    _ok(cli("diff", "demo", "empty", *SELECTION))
    # and a second promote has nothing to do
    again = _ok(cli("promote", "demo", "empty", *SELECTION, "--yes"))
    assert "Nothing to promote" in again

    # one undo for the whole promote, from any of its entries
    _ok(cli("journal", "undo", result["entries"][-1], "--profile", "empty", "--yes"))
    _ok(cli("diff", before, "empty"))


def test_two_environments_of_one_server(tmp_path: Path) -> None:
    """staging promoted to production of one demo sandbox: production's strategies, variants
    and on/off become staging's; staging is untouched; the undo puts production back."""
    kinds = ("--kinds", "projects,flags,segments,context-fields,tag-types,strategies")
    with SandboxProcess(tmp_path / "a.sqlite3", "--demo") as a:
        cli = Cli(tmp_path)
        cli.profile("demo", a)
        before = cli.snapshot("demo", tmp_path / "before.json")
        # a flag whose production variants are its last environment variants keeps them (an
        # undo could not put them back on 8.2): said, and left out of the selection here
        kept = []
        for flag in json.loads(before.read_text())["flags"]:
            variants = {e["name"]: e["variants"] for e in flag["environments"]}
            if variants.get("production") and not any(
                v for n, v in variants.items() if n != "production"
            ):
                kept.append(flag["name"])
        assert kept
        plan = _ok(cli("promote", "demo:staging", "demo:production", *kinds, "--dry-run"))
        assert f"flags default/{kept[0]}: production: variants: not emptied" in plan or any(
            f"/{name}: production: variants: not emptied" in plan for name in kept
        )
        names = sorted({f["name"] for f in json.loads(before.read_text())["flags"]} - set(kept))
        kinds = (*kinds, *(x for n in names for x in ("--name", n)))
        assert cli("diff", "demo:staging", "demo:production", *kinds).returncode == 1
        plan = _ok(cli("promote", "demo:staging", "demo:production", *kinds, "--dry-run"))
        requests = [x for x in plan.splitlines() if x.startswith("  ") and " /api/" in x]
        assert requests and all("/environments/production/" in x for x in requests), requests
        # the demo's rollout 100 in production, 25 in staging (app.snapshot.read's docstring)
        assert any(
            "PUT " in x and "(rollout 25" in x and "was flexibleRollout" in x for x in requests
        ), requests
        _ok(cli("diff", before, "demo"))
        done = json.loads(
            _ok(cli("promote", "demo:staging", "demo:production", *kinds, "--yes", "--json"))
        )
        _ok(cli("diff", "demo:staging", "demo:production", *kinds))
        _ok(cli("diff", f"{before}:staging", "demo:staging"))  # staging itself untouched
        again = _ok(cli("promote", "demo:staging", "demo:production", *kinds, "--yes"))
        assert "Nothing to promote" in again
        _ok(cli("journal", "undo", done["entries"][0], "--profile", "demo", "--yes"))
        _ok(cli("diff", before, "demo"))


def test_an_undo_leaves_a_change_made_since_where_the_promote_did_not_write(
    tmp_path: Path,
) -> None:
    """A flag's description and a production strategy promoted from one demo sandbox to
    another (an entry for the flag itself, one for production); someone then switches the flag
    in the target's development. The undo puts the description and production back and leaves
    development as it was switched."""
    with (
        SandboxProcess(tmp_path / "a.sqlite3", "--demo") as a,
        SandboxProcess(tmp_path / "b.sqlite3", "--demo") as b,
    ):
        cli = Cli(tmp_path)
        cli.profile("source", a)
        cli.profile("target", b)
        before = cli.snapshot("target", tmp_path / "before.json")
        touched = next(f for f in json.loads(before.read_text())["flags"]
                       if f["project"] == "default" and not f.get("dependencies"))  # fmt: skip
        path = f"/api/admin/projects/default/features/{touched['name']}"
        with a.admin() as http:
            patched = http.patch(path, json=[{"op": "replace", "path": "/description",
                                              "value": "Promoted from the source"}])  # fmt: skip
            assert patched.status_code == 200, patched.text
            added = http.post(f"{path}/environments/production/strategies",
                              json={"name": "default", "title": "from the source"})  # fmt: skip
            assert added.status_code == 200, added.text
        chosen = ("--kinds", "flags", "--name", touched["name"])
        done = json.loads(_ok(cli("promote", "source", "target", *chosen, "--yes", "--json")))
        _ok(cli("diff", "source", "target", *chosen))
        was = {e["name"]: e["enabled"] for e in touched["environments"]}["development"]
        with b.admin() as http:
            switched = http.post(f"{path}/environments/development/{'off' if was else 'on'}")
            assert switched.status_code == 200, switched.text
        _ok(cli("journal", "undo", done["entries"][0], "--profile", "target", "--yes"))
        since = json.loads(_ok(cli("diff", before, "target", "--json"), 1))["differences"]
        key = f"flag default/{touched['name']} \u203a development \u203a enabled"
        assert [(d["key"], d["old"], d["new"]) for d in since] == [(key, not was, was)], since


def test_a_file_is_no_target(tmp_path: Path) -> None:
    cli = Cli(tmp_path)
    (tmp_path / "x.json").write_text("{}")
    done = cli("promote", "x.json", "x.json", "--dry-run")
    assert done.returncode == 2
    assert "a file cannot be promoted to" in done.stderr


def test_a_promote_entry_in_doubt_is_checked_against_the_server(sandbox: SandboxProcess) -> None:
    """A flag's creation in doubt: there (done) or not (failed); a strategy's update cannot be
    told, and the verdict names the promote's snapshot to compare with."""
    import asyncio
    from datetime import UTC, datetime

    from app.actions.check import check_entry
    from app.actions.journal import Entry, State
    from app.api.client import AdminClient

    def entry(name: str, method: str, path: str) -> Entry:
        before = {"snapshot": "s.json", "promote": "p", "stage": 2, "kind": "flags", "object": name}
        return Entry(
            "e",
            datetime.now(UTC),
            "compare.promote",
            "c",
            sandbox.url,
            "admin",
            None,
            ["flags", name],
            before,
            {"method": method, "path": path},
            State.IN_DOUBT,
        )

    async def body() -> None:
        async with AdminClient(sandbox.url, sandbox.admin_token) as client:
            flags = (await client.project_features("default")).features
            there = await check_entry(
                client, entry(flags[0].name, "POST", "/api/admin/projects/default/features")
            )
            assert there.state is State.DONE, there
            missing = await check_entry(
                client, entry("never-made", "POST", "/api/admin/projects/default/features")
            )
            assert missing.state is State.FAILED, missing
            other = await check_entry(
                client,
                entry(
                    flags[0].name,
                    "PUT",
                    "/api/admin/projects/default/features/x/environments/production/strategies/1",
                ),
            )
            assert other.state is State.IN_DOUBT and "s.json" in other.message

    asyncio.run(body())


def test_a_stage_reports_its_progress_and_a_cancel_between_steps_sends_no_more(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    """Through the runner: `on_step(done, total)` after each request; the task cancelled after
    the first leaves the rest unsent (the journal has one request done, none after it in any
    state but the one in flight, which stays in doubt), and the server has only the first."""
    import asyncio

    from app.actions.journal import Journal, State
    from app.actions.promote import Selection, plan_promote, stage
    from app.actions.runner import carry_out, journal_of
    from app.api.client import AdminClient
    from app.snapshot.compare import compare
    from app.snapshot.model import TagType
    from app.snapshot.read import read_snapshot

    async def body() -> tuple[list[tuple[int, int]], Journal, list[str]]:
        async with AdminClient(sandbox.url, sandbox.admin_token) as client:
            target = await read_snapshot(client)
            source = target.model_copy(
                update={
                    "tagTypes": [
                        *target.tagTypes,
                        *(TagType(name=f"promoted-{i}") for i in range(4)),
                    ]
                }
            )
            comparison = compare(source, target, kinds=["tag-types"])
            plan = plan_promote(source, target, comparison, Selection(), None)
            journal = Journal(
                journal_of("sb", await client.capabilities()).actor, tmp_path / "journal"
            )
            seen: list[tuple[int, int]] = []

            def step(done: int, total: int) -> None:
                seen.append((done, total))
                if done == 1:
                    task.cancel()

            snapshot = journal.new_file("compare.promote", ".json")
            task = asyncio.ensure_future(
                carry_out(client, stage(plan, 1, journal, snapshot, target), on_step=step)
            )
            with pytest.raises(asyncio.CancelledError):
                await task
            names = [t.name for t in (await client.tag_types()).tagTypes]
            return seen, journal, names

    seen, journal, names = asyncio.run(body())
    assert seen == [(1, 4)]
    entries = journal.entries()
    assert entries[0].state is State.DONE
    assert all(e.state is State.IN_DOUBT for e in entries[1:]) and len(entries) <= 2
    assert "promoted-0" in names and "promoted-2" not in names and "promoted-3" not in names
    assert entries[0].before["promote"] and entries[0].before["snapshot"].endswith(".json")


def test_stop_between_steps_ends_a_stage_with_none_in_doubt(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    """The runner's `stop`, asked before each step: true after the first, the stage ends with
    `Stopped` (1 of 4 done), the journal has that one request done and nothing else, and the
    server has only the first tag type."""
    import asyncio

    from app.actions.journal import Journal, State
    from app.actions.promote import Selection, plan_promote, stage
    from app.actions.runner import Stopped, carry_out, journal_of
    from app.api.client import AdminClient
    from app.snapshot.compare import compare
    from app.snapshot.model import TagType
    from app.snapshot.read import read_snapshot

    async def body() -> tuple[Stopped, Journal, list[str]]:
        async with AdminClient(sandbox.url, sandbox.admin_token) as client:
            target = await read_snapshot(client)
            source = target.model_copy(update={"tagTypes": [
                *target.tagTypes, *(TagType(name=f"stopped-{i}") for i in range(4))]})  # fmt: skip
            plan = plan_promote(source, target, compare(source, target, kinds=["tag-types"]),
                                Selection(), None)  # fmt: skip
            journal = Journal(
                journal_of("sb", await client.capabilities()).actor, tmp_path / "journal"
            )
            seen: list[int] = []
            snapshot = journal.new_file("compare.promote", ".json")
            with pytest.raises(Stopped) as stopped:
                await carry_out(client, stage(plan, 1, journal, snapshot, target),
                                on_step=lambda done, _total: seen.append(done),
                                stop=lambda: bool(seen))  # fmt: skip
            names = [t.name for t in (await client.tag_types()).tagTypes]
            return stopped.value, journal, names

    stopped, journal, names = asyncio.run(body())
    assert stopped.done == 1 and "1 of 4 requests" in str(stopped)
    assert [e.state for e in journal.entries()] == [State.DONE]
    assert "stopped-0" in names and not {"stopped-1", "stopped-2", "stopped-3"} & set(names)


def test_ctrl_c_stops_a_promote_after_the_request_under_way(
    two: tuple[Cli, SandboxProcess, SandboxProcess], tmp_path: Path
) -> None:
    """Ctrl+C (SIGINT) once the first request is journaled: `flagdesk promote` stops after the
    request under way (exit 130, said), no entry is in doubt, and the undo puts the target
    back."""
    import signal
    import time

    cli, _a, _b = two
    before = cli.snapshot("empty", tmp_path / "before.json")
    journal = tmp_path / "data" / "journal"
    process = subprocess.Popen(
        [sys.executable, "-m", "app", "promote", "demo", "empty", *SELECTION, "--yes", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli.env, cwd=tmp_path,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not any(p.read_text().strip() for p in journal.glob("*/journal.jsonl")):
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()
        time.sleep(0.005)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130, out + err
    result = json.loads(out)
    assert "stopped (Ctrl+C)" in result["error"] and "nothing more was sent" in result["error"]
    listed = json.loads(_ok(cli("journal", "list", "--profile", "empty", "--json")))
    assert listed and all(e["state"] == "done" for e in listed), listed
    left = json.loads(_ok(cli("promote", "demo", "empty", *SELECTION, "--dry-run", "--json")))
    assert any(left["plan"]["stages"])  # what was not sent is still to promote
    _ok(cli("journal", "undo", listed[0]["entry"], "--profile", "empty", "--yes"))
    _ok(cli("diff", before, "empty"))
