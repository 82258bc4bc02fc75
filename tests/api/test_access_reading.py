"""`app.api.access.read_access` over HTTP builds its answers with the cyclic collector paused
(`app.startup.paused_gc`): over the 500 projects of `flagdesk serve --scale` its full
collections took 130-140 ms each, stalls of the window reading them (bench/credentials.py,
access_longest_gc_ms); and the collector is back on once the read is done."""

from __future__ import annotations

import asyncio
import gc

from app.api.access import AccessData, read_access
from app.api.client import AdminClient
from sandbox.process import SandboxProcess


def test_the_read_pauses_the_collector_and_turns_it_back_on(
    demo_sandbox: SandboxProcess,
) -> None:
    seen: list[bool] = []

    async def read() -> AccessData:
        async with AdminClient(demo_sandbox.url, demo_sandbox.admin_token) as client:
            real = client.project_access

            async def watched(project: str) -> object:
                seen.append(gc.isenabled())  # as each project's answer is asked for
                return await real(project)

            client.project_access = watched  # type: ignore[method-assign,assignment]
            return await read_access(client)

    assert gc.isenabled()
    data = asyncio.run(read())
    assert gc.isenabled()
    assert data.access and len(seen) == len(data.projects)
    assert not any(seen)
