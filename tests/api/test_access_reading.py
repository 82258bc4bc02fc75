"""`app.api.access` over HTTP. A question reads only what it needs: one user's answer the projects
the access overview lists for them and their groups' projects, one project's answer that
project's access; and each answer equals the answer over the whole server read
(`read_access`), for every person and every project of the demo. The reads build their answers
with the cyclic collector paused (`app.startup.paused_gc`): over the 500 projects of `flagdesk
serve --scale` its full collections took 130-140 ms each, stalls of the window reading them
(bench/credentials.py, access_longest_gc_ms); and the collector is back on once the read is
done."""

from __future__ import annotations

import asyncio
import gc

from app.api.access import (
    AccessData,
    needed_for_project,
    needed_for_user,
    project_access,
    read_access,
    read_directory,
    read_projects,
    user_access,
)
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


def test_each_question_reads_only_what_it_needs_and_answers_as_the_whole_read(
    demo_sandbox: SandboxProcess,
) -> None:
    asked: list[str] = []

    async def check() -> None:
        async with AdminClient(demo_sandbox.url, demo_sandbox.admin_token) as client:
            whole = await read_access(client)
            real = client.project_access

            async def counted(project: str) -> object:
                asked.append(project)
                return await real(project)

            client.project_access = counted  # type: ignore[method-assign,assignment]
            read = {}
            for person in whole.people:
                lean = await read_directory(client)
                assert lean.reach is not None and person.id in lean.reach
                asked.clear()
                found = next(p for p in lean.people if p.id == person.id)
                await read_projects(client, lean, needed_for_user(lean, found))
                read[person.id] = sorted(asked)
                assert user_access(lean, found) == user_access(whole, person), person
                assert not needed_for_user(lean, found)
            for project in whole.projects:
                lean = await read_directory(client)
                asked.clear()
                await read_projects(client, lean, needed_for_project(lean, project.id))
                assert asked == [project.id]
                assert project_access(lean, project.id) == project_access(whole, project.id)
            # user 6: web-shop's Owner and Member, payments' Member through a group
            assert read[6] == ["payments", "web-shop"]
            assert len(whole.projects) > 2
            lean = await read_directory(client)
            assert needed_for_project(lean, "no-such-project") == []

    asyncio.run(check())


def test_without_the_access_overview_a_user_needs_every_project(
    demo_sandbox: SandboxProcess,
) -> None:
    """Pro (project access, no access overview): a user's answer reads every project."""

    async def check() -> tuple[AccessData, list[str]]:
        async with AdminClient(demo_sandbox.url, demo_sandbox.admin_token) as client:
            data = await read_directory(client)
        data.reach = None  # as on Pro, whose overview route answers 404
        person = next(p for p in data.people if p.id == 6)
        return data, needed_for_user(data, person)

    data, needed = asyncio.run(check())
    assert needed == [p.id for p in data.projects]
