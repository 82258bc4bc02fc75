"""The client's reads of a flag's configuration (issue 37, slice 1) against a sandbox: the
environments and a project's, a flag with its environments, strategies and variants, one
environment's strategies and variants; a flag not in the project is `NotFound`."""

from __future__ import annotations

import pytest

from app.api import errors as e
from app.api.client import AdminClient
from sandbox.process import SandboxProcess
from tests.api.test_operations import with_client


def test_environments_and_a_projects(demo_sandbox: SandboxProcess) -> None:
    async def job(c: AdminClient) -> tuple[list[tuple[str, str]], list[tuple[str, bool | None]]]:
        every = await c.environments()
        project = await c.project_environments("web-shop")
        return ([(x.name, x.type) for x in every.environments],
                [(x.name, x.visible) for x in project.environments])  # fmt: skip

    every, project = with_client(demo_sandbox, job)
    assert every == [("development", "development"), ("staging", "test"),
                     ("production", "production")]  # fmt: skip
    assert project == [("development", True), ("staging", True), ("production", True)]


def test_a_flags_configuration(demo_sandbox: SandboxProcess) -> None:
    async def job(c: AdminClient) -> None:
        names = [f.name for f in (await c.project_features("web-shop")).features]
        flags = [await c.feature("web-shop", name) for name in names]
        with_variants = next(f for f in flags if any(e.variants for e in f.environments))
        envs = {e.name: e for e in with_variants.environments}
        assert [e.name for e in with_variants.environments] == [
            "development", "staging", "production"]  # fmt: skip
        variants = await c.feature_variants("web-shop", with_variants.name, "production")
        assert [v.name for v in variants] == [v.name for v in envs["production"].variants]
        assert [v.name for v in variants] == ["blue", "green"]
        assert await c.feature_variants("web-shop", with_variants.name, "staging") == []
        for flag in flags:
            for env in flag.environments:
                strategies = await c.feature_strategies("web-shop", flag.name, env.name)
                assert [s.id for s in strategies] == [s.id for s in env.strategies]
                assert all(s.name == "flexibleRollout" for s in strategies)
        staged = [f for f in flags
                  if {e.name: e.strategies[0].parameters["rollout"] for e in f.environments}
                  .items() >= {("staging", "100"), ("production", "25")}]  # fmt: skip
        assert staged

    with_client(demo_sandbox, job)


def test_a_flag_not_in_the_project(demo_sandbox: SandboxProcess) -> None:
    async def job(c: AdminClient) -> None:
        name = (await c.project_features("web-shop")).features[0].name
        with pytest.raises(e.NotFound):
            await c.feature("payments", name)
        with pytest.raises(e.NotFound):
            await c.feature_strategies("web-shop", name, "qa")

    with_client(demo_sandbox, job)
