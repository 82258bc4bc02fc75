"""The client's reads of issue 37's second slice against a demo sandbox over HTTP: segments
(with the strategies that use one, and a strategy's segments), tag types, tags and a flag's
tags, whether dependencies exist and the flags one could depend on, and the strategy
definitions; an unknown flag's tags are `NotFound`."""

from __future__ import annotations

import pytest

from app.api import errors as e
from app.api.client import AdminClient
from sandbox import db
from sandbox.process import SandboxProcess
from tests.api.test_operations import run


def test_the_flag_extras_read_from_a_sandbox(demo_sandbox: SandboxProcess) -> None:
    conn = db.connect(demo_sandbox.db)
    try:
        parent, child, project = conn.execute(
            "SELECT d.parent, d.child, f.project FROM feature_dependencies d"
            " JOIN features f ON f.name = d.child WHERE f.project = 'web-shop'"
        ).fetchone()
        tagged = conn.execute(
            "SELECT feature FROM feature_tags WHERE tag_type = 'ticket' ORDER BY feature LIMIT 1"
        ).fetchone()[0]
    finally:
        conn.close()

    async def job() -> None:
        async with AdminClient(demo_sandbox.url, demo_sandbox.admin_token) as c:
            segments = (await c.segments()).segments
            assert [s.name for s in segments] == ["Beta testers", "EU customers", "Internal staff"]
            beta = segments[0]
            using = (await c.segment_strategies(beta.id)).strategies
            assert len(using) == 2 and {s.environment for s in using} == {"production"}
            of_strategy = (await c.strategy_segments(str(using[0].id))).segments
            assert [s.name for s in of_strategy] == ["Beta testers"]

            assert [t.name for t in (await c.tag_types()).tagTypes] == ["simple", "team", "ticket"]
            assert ("ticket", "SHOP-142") in {(t.type, t.value) for t in (await c.tags()).tags}
            on_flag = (await c.feature_tags(tagged)).tags
            assert "ticket" in {t.type for t in on_flag} and all(t.color for t in on_flag)
            with pytest.raises(e.NotFound):
                await c.feature_tags("no-such-flag")

            assert await c.project_dependencies(project) is True
            options = await c.parent_options(project, child)
            assert parent in options and child not in options

            definitions = (await c.strategy_definitions()).strategies
            assert [(d.name, d.editable) for d in definitions] == [
                ("flexibleRollout", False), ("default", False), ("remoteAddress", False),
                ("applicationHostname", False), ("byTenant", True)]  # fmt: skip

    run(job())
