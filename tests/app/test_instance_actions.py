"""`app.actions.instance` against sandboxes over HTTP (issue 38): maintenance switched, the CORS
origins set and a banner created, edited and deleted through the runner (the journal's entries
with the state before and the body sent, the banner's snapshot, the new banner's id in the
creation's `after`); each undone from its journal entry alone; the checks of entries in doubt
(done, not applied); origins the server would refuse refused before planning, naming them;
the confirmation's words (what maintenance stops); and an undo refused when the server is no
longer as the change left it."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path

import pytest

from app.actions import instance
from app.actions.check import can_check, check_entry
from app.actions.journal import Actor, Journal, State
from app.actions.runner import carry_out
from app.actions.undo import CannotUndo, plan_undo
from app.api.client import AdminClient
from app.api.models import Banner, CreateBanner
from sandbox.process import SandboxProcess


def journal_for(sb: SandboxProcess, folder: Path) -> Journal:
    return Journal(Actor("test", sb.url, "admin", None), folder)


def test_origins_are_checked_before_anything_is_planned(tmp_path: Path) -> None:
    journal = Journal(Actor("test", "http://x", "admin", None), tmp_path)
    for bad, said in (("https://a.example/", "Invalid origin: https://a.example/"),
                      ("a.example", "Invalid origin: a.example")):  # fmt: skip
        with pytest.raises(ValueError, match=said):
            instance.plan_cors(["*", bad], ["*"], journal)
    with pytest.raises(ValueError, match="given twice"):
        instance.plan_cors(["https://a.example", "https://a.example"], None, journal)
    plan = instance.plan_cors([], ["*"], journal, release="5.12.8")
    assert plan.request.path == "/api/admin/ui-config"
    assert "none (the frontend API answers no other origin)" in plan.lines()[0]
    on = instance.plan_maintenance(True, False, journal)
    assert on.question == "Switch maintenance mode on?"
    assert any("refuses every change" in line and "Reads" in line for line in on.lines())


def test_maintenance_and_cors_through_the_runner_checked_and_undone(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    journal = journal_for(sandbox, tmp_path)

    async def job() -> None:
        async with AdminClient(sandbox.url, sandbox.admin_token) as c:
            done = await carry_out(c, instance.plan_maintenance(True, False, journal))
            assert done.status == 204 and (await c.maintenance()).enabled
            try:
                switch = journal.entries()[-1]
                assert switch.before == {"enabled": False}
                assert switch.request == {"method": "POST", "path": "/api/admin/maintenance",
                                          "body": {"enabled": True}}  # fmt: skip
                verdict = await check_entry(c, replace(switch, state=State.IN_DOUBT))
                assert verdict.state is State.DONE
                undo = await plan_undo(c, journal, switch)
                assert undo.question == "Undo: switch maintenance mode off again?"
                await carry_out(c, undo)
                assert not (await c.maintenance()).enabled
                verdict = await check_entry(c, replace(switch, state=State.IN_DOUBT))
                assert verdict.state is State.FAILED and "not applied" in verdict.message
                with pytest.raises(CannotUndo, match="off already"):
                    await plan_undo(c, journal, switch)
            finally:
                await c.set_maintenance(False)

            wanted = ["https://acp.example.com", "http://localhost:3000"]
            await carry_out(c, instance.plan_cors(wanted, ["*"], journal))
            assert (await c.ui_config()).frontendApiOrigins == wanted
            setting = journal.entries()[-1]
            assert setting.before == {"origins": ["*"]}
            doubt = replace(setting, state=State.IN_DOUBT)
            assert can_check(doubt)
            assert (await check_entry(c, doubt)).state is State.DONE
            await carry_out(c, await plan_undo(c, journal, setting))
            assert (await c.ui_config()).frontendApiOrigins == ["*"]
            assert (await check_entry(c, doubt)).state is State.FAILED

    asyncio.run(job())


def test_a_banner_created_edited_deleted_and_each_undone(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    journal = journal_for(sandbox, tmp_path)

    async def job() -> None:
        async with AdminClient(sandbox.url, sandbox.admin_token) as c:
            body = CreateBanner(message="Upgrade on Friday", variant="warning")
            made = await carry_out(c, instance.plan_banner_create(body, journal))
            banner = await c.read_answer(made.answer, Banner)
            created = journal.entries()[-1]
            assert created.after == {"id": banner.id}
            assert (await check_entry(c, replace(created, state=State.IN_DOUBT))).state \
                is State.DONE  # fmt: skip

            changed = body.model_copy(update={"message": "Upgrade on Monday", "sticky": True})
            with pytest.raises(ValueError, match="nothing to change"):
                instance.plan_banner_edit(banner, instance.banner_body(banner), journal)
            plan = instance.plan_banner_edit(banner, changed, journal)
            assert "message 'Upgrade on Friday' → 'Upgrade on Monday'" in plan.lines()[0]
            await carry_out(c, plan)
            edited = journal.entries()[-1]
            assert plan.snapshot is not None and plan.snapshot.stat().st_mode & 0o777 == 0o600
            held = json.loads(plan.snapshot.read_text(encoding="utf-8"))["banner"]
            assert held["message"] == "Upgrade on Friday"
            assert (await check_entry(c, replace(edited, state=State.IN_DOUBT))).state \
                is State.DONE  # fmt: skip
            await carry_out(c, await plan_undo(c, journal, edited))
            (now,) = (await c.banners()).banners
            assert (now.message, now.sticky) == ("Upgrade on Friday", False)

            await carry_out(c, instance.plan_banner_delete(now, journal))
            deleted = journal.entries()[-1]
            assert (await c.banners()).banners == []
            back = await plan_undo(c, journal, deleted)
            assert "again from its snapshot, under a new id" in back.lines()[0]
            await carry_out(c, back)
            (again,) = (await c.banners()).banners
            assert again.message == "Upgrade on Friday" and again.id != now.id
            # the creation's undo: its banner is gone (deleted above), so nothing to delete
            with pytest.raises(CannotUndo, match="deleted already"):
                await plan_undo(c, journal, created)

    asyncio.run(job())
