"""The event log's filters through flagdesk's client (issue 38, `app.api.events`) on a real
Unleash (each of `VERSIONS`) and on the sandbox playing it (`target`): for each filter (type,
a type the server does not know (5.12's search by body refuses it), who by id and by name,
project, flag, environment, time, and together), the events read through
the server's search (6.10 on: `GET /api/admin/search/events`; 5.12: its search by body) are those
flagdesk's own filtering finds among every event since the test began (a long history is not
read whole: the read stops at its start). Other tests add events meanwhile: both reads are
compared on the events there were before them (by id), and the filters are narrowed to this
test's time or its own flags."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import httpx

from app.api.client import AdminClient
from app.api.events import EventFilter, way_of
from app.api.models import Event
from app.registry import version_tuple
from tests.compat.conftest import per_version

if TYPE_CHECKING:
    from tests.compat.conftest import Peer


def _flags(http: httpx.Client, names: list[str]) -> None:
    for name in names:
        made = http.post("/api/admin/projects/default/features", json={"name": name})
        assert made.status_code == 201, made.text


def _cases(start: datetime, names: list[str], mine: list[Event], user_id: int) -> list[EventFilter]:
    later = next(e for e in mine if e.featureName == names[2] and e.type == "feature-created")
    today = start.replace(hour=0, minute=0, second=0, microsecond=0)
    return [
        EventFilter(flags=(names[0],)),
        EventFilter(flags=tuple(names)),
        EventFilter(types=("feature-created",), since=start),
        EventFilter(types=("feature-created", "feature-strategy-add"), since=start),
        EventFilter(environments=("development",), since=start),
        EventFilter(projects=("default",), since=start),
        EventFilter(users=("-42",), since=start),
        EventFilter(users=("ADMIN",), since=start),  # the name the events log, either token
        EventFilter(users=(str(user_id),), since=start),  # the personal access token's user
        EventFilter(since=start),
        EventFilter(since=start, until=later.createdAt),  # its own time: it is out
        EventFilter(since=later.createdAt, flags=tuple(names)),  # and in here
        EventFilter(since=today, until=today + timedelta(days=1), flags=tuple(names)),
        EventFilter(types=("flagdesk-no-such-type",), flags=tuple(names)),  # 5.12: a 400
        EventFilter(
            projects=("default",),
            environments=("development",),
            types=("feature-strategy-add",),
            flags=tuple(names),
        ),
    ]


def test_the_search_and_own_filtering_give_the_same_events(
    target: Peer, unique: Callable[[str], str]
) -> None:
    start = datetime.now(UTC).replace(microsecond=0) - timedelta(seconds=1)
    names = [unique("evfilter") for _ in range(3)]
    pat = target.require_pat()
    with target.raw() as http:
        _flags(http, names[:1])
        with httpx.Client(base_url=target.url, headers={"Authorization": pat}, timeout=30) as by:
            _flags(by, names[1:2])  # made by the personal access token's user
            me = by.get("/api/admin/user").json()["user"]["id"]
        time.sleep(1.1)  # the last flag a second later: a time between them
        _flags(http, names[2:])
        added = http.post(f"/api/admin/projects/default/features/{names[0]}/environments/"
                          "development/strategies", json={"name": "default"})  # fmt: skip
        assert added.status_code == 200, added.text
        try:
            found = asyncio.run(_read(target, start, names, int(me)))
        finally:
            target.remove_flags(http, names)
    assert way_of("unleash", version_tuple(target.version)) == per_version(
        target, {"5.12": "body", "6.10 7.6 8.2": "search"}
    )
    for f, searched, own in found:
        assert searched == own, f
    counts = [len(searched) for _, searched, _ in found]
    assert counts[-2] == 0 and all(counts[:-2] + counts[-1:]), counts  # no such type: none
    # this test's own: three flags created (one by the PAT's user), one strategy added
    assert counts[:2] == [2, 4] and counts[-4:] == [2, 4, 0, 1], counts
    # since it began (nothing else runs meanwhile, but the server may log its own)
    assert counts[2] >= 3 and counts[6] >= 3 and counts[7] >= 4 and counts[8] >= 1, counts


async def _read(
    target: Peer, start: datetime, names: list[str], me: int
) -> list[tuple[EventFilter, list[int], list[int]]]:
    async with AdminClient(target.url, target.admin_token) as client:
        # every event since it began (all those of its own flags too), read through the
        # same pages unfiltered: bounded by this test, however long the server's history
        since = EventFilter(since=start)
        every = [e async for page in client.events(since, own=True) for e in page]
        before = max(e.id for e in every)  # what came later is left out of both
        mine = [e for e in every if e.featureName in names]
        found = []
        for f in _cases(start, names, mine, me):
            searched = [e.id async for page in client.events(f) for e in page if e.id <= before]
            own = [e.id for e in every if f.matches(e)]
            assert len(searched) == len(set(searched)), f
            found.append((f, sorted(searched), sorted(own)))
        # the own filtering of the client itself, once: every event read, filtered there
        f = EventFilter(flags=tuple(names), since=start)
        by_client = [e.id async for page in client.events(f, own=True) for e in page]
        assert sorted(i for i in by_client if i <= before) == found[1][2]
        return found
