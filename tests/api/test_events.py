"""The event log's reads (issue 38, `app.api.events`, `AdminClient.events`) against sandboxes over
HTTP, unplayed and playing 5.12, 6.10 and 7.6: every filter (type, who by id and by name, project,
flag, environment, time, and together) gives the same events through the server's search as
through flagdesk's own filtering of every event, and both the events the database holds; the
server is asked no narrower than the filter; paging at any size, an event arriving meanwhile
given once, the page ahead dropped when the reader stops; 5.x read through its search by body."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from app.api.client import AdminClient
from app.api.errors import BadRequest
from app.api.events import SPLIT_MOST, EventFilter, pages, way_of, wire_time
from app.api.models import Event, EventPage
from sandbox import db
from sandbox.process import SandboxProcess

#: the releases the sandbox plays here (None: unplayed, as 8.2)
PLAYED = (None, "5.12", "6.10", "7.6")


@pytest.fixture(scope="module", params=PLAYED, ids=lambda p: p or "unplayed")
def played(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[SandboxProcess]:  # fmt: skip
    extra = ("--as-version", request.param) if request.param else ()
    path = tmp_path_factory.mktemp("events") / "s.sqlite3"
    with SandboxProcess(path, "--demo", *extra) as sb:
        with sb.admin() as http:  # events of the admin API token too, in two environments
            for n in range(3):
                made = http.post("/api/admin/projects/default/features", json={"name": f"ev-{n}"})
                assert made.status_code == 201, made.text
            added = http.post("/api/admin/projects/default/features/ev-1/environments/"
                              "production/strategies", json={"name": "default"})  # fmt: skip
            assert added.status_code == 200, added.text
        yield sb


def _rows(sb: SandboxProcess) -> list[sqlite3.Row]:
    conn = db.connect(sb.db)
    try:
        return conn.execute(
            "SELECT id, type, project, feature, environment, created_by, created_by_user_id,"
            " created_at FROM events ORDER BY id DESC"
        ).fetchall()
    finally:
        conn.close()


def _truth(rows: list[sqlite3.Row], f: EventFilter) -> list[int]:
    """The events of `f`, straight from the database."""
    ids = {int(u) for u in f.users if u.lstrip("-").isdigit()}
    names = {u.casefold() for u in f.users if not u.lstrip("-").isdigit()}
    since = f.since.timestamp() * 1000 if f.since else None
    until = f.until.timestamp() * 1000 if f.until else None
    return [
        r["id"] for r in rows
        if (not f.types or r["type"] in f.types)
        and (not f.projects or r["project"] in f.projects)
        and (not f.flags or r["feature"] in f.flags)
        and (not f.environments or r["environment"] in f.environments)
        and (not f.users or r["created_by_user_id"] in ids or r["created_by"].casefold() in names)
        and (since is None or r["created_at"] >= since)
        and (until is None or r["created_at"] < until)
    ]  # fmt: skip


async def _ids(client: AdminClient, f: EventFilter, *, own: bool = False,
               size: int | None = None) -> list[int]:  # fmt: skip
    return [e.id async for page in client.events(f, own=own, size=size) for e in page]


def _at(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


def _filters(rows: list[sqlite3.Row]) -> list[EventFilter]:
    times = sorted(r["created_at"] for r in rows)
    middle, later = times[len(times) // 3], times[2 * len(times) // 3]
    flag = next(r["feature"] for r in rows if r["feature"] and r["feature"].startswith("ev-1"))
    user = next(r for r in rows if r["created_by_user_id"] and r["created_by_user_id"] > 0)
    return [
        EventFilter(types=("feature-created",)),
        EventFilter(types=("feature-created", "feature-archived")),
        EventFilter(users=(str(user["created_by_user_id"]),)),
        EventFilter(users=(user["created_by"].upper(),)),  # by name, ignoring case
        EventFilter(users=("-42", user["created_by"])),
        EventFilter(users=("admin",)),
        EventFilter(projects=("web-shop",)),
        EventFilter(projects=("payments", "default")),
        EventFilter(flags=(flag,)),
        EventFilter(environments=("production",)),
        EventFilter(since=_at(middle)),  # that event's very time: it is in
        EventFilter(until=_at(later)),  # and that one's: it is out
        EventFilter(since=_at(middle) + timedelta(minutes=17), until=_at(later)),
        EventFilter(
            projects=("web-shop",),
            environments=("development",),
            types=("feature-environment-enabled",),
            since=_at(middle),
        ),
        EventFilter(projects=("nowhere",)),
        EventFilter(flags=("a,b",)),  # a comma: left to flagdesk
    ]


def test_the_search_and_own_filtering_give_the_same_events(played: SandboxProcess) -> None:
    rows = _rows(played)
    cases = _filters(rows)

    async def job() -> list[tuple[list[int], list[int], list[int]]]:
        async with AdminClient(played.url, played.admin_token) as client:
            caps = await client.capabilities()
            assert caps.operation("events").available
            found = []
            for f in cases:
                found.append((await _ids(client, f), await _ids(client, f, own=True),
                              _truth(rows, f)))  # fmt: skip
            return found

    found = asyncio.run(job())
    for f, (searched, own, truth) in zip(cases, found, strict=True):
        assert searched == own == truth, f
    counts = [len(truth) for _, _, truth in found]
    assert all(counts[:-2]) and counts[-2:] == [0, 0]  # each filter finds some, but nowhere


def test_every_event_page_by_page(played: SandboxProcess) -> None:
    rows = _rows(played)

    async def job() -> tuple[list[int], list[int], list[list[Event]]]:
        async with AdminClient(played.url, played.admin_token) as client:
            whole = await _ids(client, EventFilter())
            small = await _ids(client, EventFilter(), size=7)
            paged = [page async for page in client.events(EventFilter(), size=50)]
            return whole, small, paged

    whole, small, paged = asyncio.run(job())
    assert whole == small == [r["id"] for r in rows] and len(whole) > 100
    assert [len(p) for p in paged[:-1]] == [50] * (len(paged) - 1)
    first = paged[0][0]
    assert first.id == rows[0]["id"] and first.createdAt.tzinfo is not None
    assert wire_time(first.createdAt).endswith("Z")


def test_the_server_is_asked_no_narrower_than_the_filter() -> None:
    since = datetime(2026, 3, 10, 0, 30, tzinfo=UTC)
    f = EventFilter(types=("feature-created",), projects=("a", "b", "a"), users=("7", "-42"),
                    environments=("x,y",), since=since,
                    until=datetime(2026, 3, 12, 23, 0, tzinfo=UTC))  # fmt: skip
    assert f.projects == ("a", "b")
    assert f.search_params() == {
        "type": "IS:feature-created", "project": "IS_ANY_OF:a,b",
        "createdBy": "IS_ANY_OF:-42,7",  # ids only; the comma's environment left out
        "from": "IS:2026-03-09", "to": "IS:2026-03-13",  # a day wider each side
    }  # fmt: skip
    assert EventFilter(users=("7", "alice")).search_params() == {}  # a name: flagdesk's
    assert f.body() == {"type": "feature-created"}  # one value of each only
    assert EventFilter(flags=("f",), projects=("p",)).body() == {"project": "p", "feature": "f"}
    naive = EventFilter(since=datetime(2026, 1, 1))
    assert naive.since == datetime(2026, 1, 1, tzinfo=UTC)
    assert way_of("sandbox", None) == "search"
    assert way_of("unleash", (6, 10, 1)) == way_of("unleash", (8, 2)) == "search"
    assert way_of("unleash", (5, 12, 8)) == "body" and way_of("unknown", None) is None


def _event(n: int) -> dict[str, Any]:
    return {"id": n, "type": "t", "createdAt": "2026-01-01T00:00:00.000Z"}


def test_an_event_arriving_while_paging_is_given_once_and_the_page_ahead_dropped() -> None:
    log = [_event(n) for n in range(20, 0, -1)]
    asked: list[Mapping[str, Any]] = []

    async def read(params: Mapping[str, Any]) -> EventPage:
        asked.append(params)
        offset, limit = int(params["offset"]), int(params["limit"])
        page = EventPage.model_validate({"events": log[offset : offset + limit],
                                         "total": len(log)})  # fmt: skip
        log.insert(0, _event(100 + len(asked)))  # a newer event pushes the others down
        return page

    async def every() -> list[int]:
        return [e.id async for page in pages(read, "search", EventFilter(), size=6)
                for e in page]  # fmt: skip

    got = asyncio.run(every())
    assert len(got) == len(set(got))
    assert set(range(1, 21)) <= set(got)

    async def first_only() -> list[int]:
        stream = pages(read, "body", EventFilter(types=("t",)), size=5)
        async for page in stream:
            await stream.aclose()  # the reader stops: the next page, asked ahead, is dropped
            return [e.id for e in page]
        return []

    asked.clear()
    assert len(asyncio.run(first_only())) == 5
    assert asked[0] == {"type": "t", "offset": 0, "limit": 5}  # 5.x's body: numbers


def test_a_type_5x_does_not_know_is_filtered_by_flagdesk() -> None:
    """5.x's search by body refuses a type it does not know (400 naming its list): the type is
    then flagdesk's to filter, and none has it, as the search finds none."""
    sent: list[Mapping[str, Any]] = []

    async def read(body: Mapping[str, Any]) -> EventPage:
        sent.append(dict(body))
        if "type" in body:
            raise BadRequest(400, "BadDataError", '"type" must be one of [...]')
        events = [{**_event(n), "project": "p"} for n in (2, 1)]
        return EventPage.model_validate({"events": events, "totalEvents": 2})

    async def every(types: tuple[str, ...]) -> list[int]:
        found = pages(read, "body", EventFilter(types=types, projects=("p",)))
        return [e.id async for page in found for e in page]

    assert asyncio.run(every(("no-such-type",))) == []
    assert sent == [{"type": "no-such-type", "project": "p", "offset": 0, "limit": 100},
                    {"project": "p", "offset": 0, "limit": 100}]  # fmt: skip
    sent.clear()
    assert asyncio.run(every(("t",))) == [2, 1]  # and one it has: filtered here all the same


def test_a_5x_server_is_read_through_its_search_by_body(tmp_path: Path) -> None:
    """5.12 has no `GET /api/admin/search/events` (404): the body's search, pages of 100."""
    with SandboxProcess(tmp_path / "s.sqlite3", "--demo", "--as-version", "5.12") as sb:

        async def job() -> tuple[str, int]:
            async with AdminClient(sb.url, sb.admin_token) as client:
                caps = await client.capabilities()
                got = await _ids(client, EventFilter(types=("feature-archived",)))
                return caps.server_version, len(got)

        version, count = asyncio.run(job())
        with sb.admin() as http:
            assert http.get("/api/admin/search/events").status_code == 404
    assert version.startswith("5.12") and count == 15


def _body_search(log: list[dict[str, Any]], asked: list[dict[str, Any]]) -> Any:
    """5.x's search by body over `log` (newest first): one value of type, project and flag,
    a page by offset, every event it takes counted."""

    async def read(body: Mapping[str, Any]) -> EventPage:
        asked.append(dict(body))
        named = {"type": "type", "project": "project", "feature": "featureName"}
        taken = [e for e in log if all(e.get(named[k]) == v for k, v in body.items() if k in named)]
        offset, limit = int(body["offset"]), int(body["limit"])
        await asyncio.sleep(0)
        return EventPage.model_validate({"events": taken[offset : offset + limit],
                                         "totalEvents": len(taken)})  # fmt: skip

    return read


def _history(count: int) -> list[dict[str, Any]]:
    """`count` events, newest first, a minute apart, of flags f0 to f4 by turns (the two
    newest of one time, as events of one transaction)."""
    start = datetime(2026, 1, 1, tzinfo=UTC)
    return [
        {"id": n, "type": "t", "project": "p", "featureName": f"f{n % 5}",
         "createdAt": wire_time(start + timedelta(minutes=min(n, count - 1)))}
        for n in range(count, 0, -1)
    ]  # fmt: skip


def test_several_flags_on_5x_are_one_search_each_merged_newest_first() -> None:
    """5.x's search by body takes one flag: a filter of three is three searches side by side,
    each asked for one flag, merged newest first, with their count together; a filter of more
    values than `SPLIT_MOST` reads every event, and flagdesk's own filtering gives the same."""
    log = _history(230)
    asked: list[dict[str, Any]] = []
    read = _body_search(log, asked)
    totals: list[int | None] = []

    async def ids(f: EventFilter, **kw: Any) -> list[int]:
        return [e.id async for page in pages(read, "body", f, size=10, **kw) for e in page]

    f = EventFilter(flags=("f1", "f3", "f4"), types=("t",))
    got = asyncio.run(ids(f, on_total=totals.append))
    assert got == [e["id"] for e in log if e["featureName"] in f.flags]  # newest first
    assert {a.get("feature") for a in asked} == {"f1", "f3", "f4"}  # none asked for every event
    assert all(a["type"] == "t" for a in asked)
    assert len(asked) == 3 * 5  # 46 events a flag, pages of 10 (the last one short)
    assert totals == [138]
    asked.clear()
    assert asyncio.run(ids(f, own=True)) == got and all("feature" not in a for a in asked)
    many = EventFilter(flags=tuple(f"f{n}" for n in range(SPLIT_MOST + 1)))
    asked.clear()
    assert asyncio.run(ids(many)) == [e["id"] for e in log]
    assert all("feature" not in a for a in asked)

    async def first_page() -> list[int]:
        stream = pages(read, "body", f, size=10)
        async for page in stream:
            await stream.aclose()  # the reader stops: each search's page ahead is dropped
            return [e.id for e in page]
        return []

    first = asyncio.run(first_page())
    assert first and first == got[: len(first)]


@pytest.mark.parametrize("way", ["body", "search"])
@pytest.mark.parametrize("own", [False, True])
def test_a_read_from_a_time_stops_at_the_first_page_older_than_it(way: Any, own: bool) -> None:
    """5.x's search by body has no time, the search takes whole days, and flagdesk's own
    reading none: a filter from a time reads back to the first page older than it, not the
    whole history."""
    log = _history(1000)
    asked: list[dict[str, Any]] = []
    since = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(minutes=955)

    async def ids() -> list[int]:
        f = EventFilter(since=since)
        read = _body_search(log, asked)
        return [e.id async for page in pages(read, way, f, size=20, own=own) for e in page]

    assert asyncio.run(ids()) == list(range(1000, 954, -1))  # its time's own is in
    assert [int(a["offset"]) for a in asked] == [0, 20, 40]  # the third page reaches past it


def test_a_failed_search_of_several_ends_the_read_and_stops_the_others() -> None:
    """One of the side-by-side searches fails: the read raises its error, and the others'
    requests under way are cancelled, none left running."""
    started: list[str] = []
    cancelled: list[str] = []

    async def read(body: Mapping[str, Any]) -> EventPage:
        started.append(body["feature"])
        if body["feature"] == "f1":
            raise BadRequest(400, "BadDataError", "refused")
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.append(body["feature"])
            raise
        raise AssertionError("not cancelled")

    async def every() -> None:
        f = EventFilter(flags=("f1", "f2", "f3"))
        async for _ in pages(read, "body", f):
            pass

    async def job() -> set[asyncio.Task[Any]]:
        async with asyncio.timeout(10):
            with pytest.raises(BadRequest):
                await every()
        return {t for t in asyncio.all_tasks() if t is not asyncio.current_task()}

    assert asyncio.run(job()) == set()
    assert sorted(started) == ["f1", "f2", "f3"] and sorted(cancelled) == ["f2", "f3"]
