"""The event log's reads (issue 38): every event of a server, newest first, page by page, with
filters by type, who, project, flag, environment and time (`EventFilter`), on every release.

Two ways to one result:

- **the server's search** where it has one: `GET /api/admin/search/events` (Unleash 6.0 on and
  the sandbox), its filters `IS:`/`IS_ANY_OF:` and `from`/`to` (`IS:YYYY-MM-DD`, whole days),
  pages of `SEARCH_PAGE`; on 5.x the older `POST /api/admin/events/search` (`{type, project,
  feature}`, one value each, pages of `BODY_PAGE`), the only read there of more than the newest
  100. What the server is asked only narrows: every event it sends is then held to the whole
  filter by flagdesk (`EventFilter.matches`), so a filter the server cannot do (a time of day,
  who by name, 5.x's environment, several types), or does otherwise (6.x may ignore some), still
  gives the exact events;
- **flagdesk's own filtering** (`own=True`): every event read unfiltered through the same read
  and the filter applied here alone. Tests hold the two equal on each filter
  (`tests/api/test_events.py`, and on the real releases `tests/compat/test_event_filters.py`).

What the server is asked is always wider than the filter, never narrower: the days of `from`
and `to` a day wider each side (Unleash reads them in its database's time zone), who only by
user id (`createdBy` takes ids; a name is matched here, on the `createdBy` each event logs), and
a value holding a comma is left to flagdesk (the search splits values at commas).

Paging is by offset, newest first; an event arriving meanwhile pushes the others down a place,
so an event seen on two pages is given once (by id). The next page is asked for while the
caller works on this one (`pages`). Unleash orders the search by time alone: events of one
transaction share a time, and their order is then the database's.

A read from a time (`since`) stops at the first page older than it: the search is asked only
whole days, and 5.x's search by body and flagdesk's own reading no time at all. 5.x's search
by body also takes one value of each field, and each of its pages counts every event it takes:
reading all of a long history there costs minutes. So on 5.x a filter of several flags
(projects, types: up to `SPLIT_MOST`) is read as one search for each, side by side, merged
newest first (`_merged`): what each is asked is exactly one of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import csv
import dataclasses
import functools
import json
import os
import re
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal, TextIO

from app.api.errors import BadRequest
from app.api.models import Event, EventPage

SEARCH_EVENTS_PATH = "/api/admin/search/events"
SEARCH_BY_BODY_PATH = "/api/admin/events/search"
#: the largest page the search gives (Unleash: up to 1000; anything more is its default, 50)
SEARCH_PAGE = 1000
#: the largest page of 5.x's and 6.x's `POST` search (more: 400)
BODY_PAGE = 100
#: the first Unleash release with `GET /api/admin/search/events`
SEARCH_SINCE = (6, 0)
#: 5.x's search by body takes one value of a field: a filter of up to this many flags
#: (projects, types) is read as as many searches side by side; of more, every event is read
SPLIT_MOST = 20

#: turns of the event loop that put the next page's request on the wire (httpx: a few awaits
#: from the pool to the socket), so that the server reads it while the caller works on this one
_TURNS_TO_SEND = 8

#: how a server's events are read: its search, or 5.x's search by body
Way = Literal["search", "body"]

#: reads one page: the query parameters (the search) or the body (5.x's) -> the page
PageReader = Callable[[Mapping[str, Any]], Awaitable[EventPage]]


def _is_id(text: str) -> bool:
    return re.fullmatch(r"-?[0-9]+", text) is not None


def _utc(when: datetime | None) -> datetime | None:
    if when is None or when.tzinfo is not None:
        return when
    return when.replace(tzinfo=UTC)  # a time without a zone is UTC, as the server's are


@dataclass(frozen=True, slots=True)
class EventFilter:
    """Which events: each field empty (or None) takes any; several values of one field take
    any of them; the fields together must all hold.

    `users`: a user id (`42`, `-42` for the admin API token, `-1337` for the system), or a name
    as the event logs who made it (`createdBy`: a user's email or user name, "admin" for the
    admin API token), matched ignoring case. `since` and `until`: from `since` (included) to
    `until` (excluded); a time without a zone is UTC."""

    types: tuple[str, ...] = ()
    users: tuple[str, ...] = ()
    projects: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()
    environments: tuple[str, ...] = ()
    since: datetime | None = None
    until: datetime | None = None
    _ids: frozenset[int] = field(init=False, repr=False, compare=False)
    _names: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("types", "users", "projects", "flags", "environments"):
            object.__setattr__(self, name, tuple(dict.fromkeys(getattr(self, name))))
        object.__setattr__(self, "since", _utc(self.since))
        object.__setattr__(self, "until", _utc(self.until))
        object.__setattr__(self, "_ids", frozenset(int(u) for u in self.users if _is_id(u)))
        object.__setattr__(
            self, "_names", frozenset(u.casefold() for u in self.users if not _is_id(u))
        )

    @property
    def empty(self) -> bool:
        return not (self.types or self.users or self.projects or self.flags
                    or self.environments or self.since or self.until)  # fmt: skip

    def matches(self, event: Event) -> bool:
        """flagdesk's own filtering: whether `event` is one of these."""
        if self.types and event.type not in self.types:
            return False
        if self.projects and event.project not in self.projects:
            return False
        if self.flags and event.featureName not in self.flags:
            return False
        if self.environments and event.environment not in self.environments:
            return False
        if self.users and not (
            event.createdByUserId in self._ids
            or (event.createdBy is not None and event.createdBy.casefold() in self._names)
        ):
            return False
        at = _utc(event.createdAt)
        assert at is not None
        if self.since is not None and at < self.since:
            return False
        return not (self.until is not None and at >= self.until)

    def search_params(self) -> dict[str, str]:
        """What `GET /api/admin/search/events` is asked: never narrower than the filter."""
        params: dict[str, str] = {}
        named = (("type", self.types), ("project", self.projects), ("feature", self.flags),
                 ("environment", self.environments))  # fmt: skip
        for name, values in named:
            if values and not any("," in v for v in values):
                params[name] = _operator(values)
        if self.users and not self._names:  # a name is matched here: the search takes ids
            params["createdBy"] = _operator([str(i) for i in sorted(self._ids)])
        day = timedelta(days=1)
        if self.since is not None and self.since > datetime.min.replace(tzinfo=UTC) + day:
            params["from"] = f"IS:{(self.since - day).date().isoformat()}"
        if self.until is not None and self.until < datetime.max.replace(tzinfo=UTC) - day:
            params["to"] = f"IS:{(self.until + day).date().isoformat()}"
        return params

    def body(self) -> dict[str, str]:
        """What 5.x's and 6.x's `POST /api/admin/events/search` is asked: its type, project
        and flag, where the filter has one of each."""
        named = (("type", self.types), ("project", self.projects), ("feature", self.flags))
        return {name: values[0] for name, values in named if len(values) == 1}

    def to_json(self) -> dict[str, Any]:
        """The filter as `flagdesk events --json` says it."""
        out: dict[str, Any] = {
            name: list(getattr(self, name))
            for name in ("types", "users", "projects", "flags", "environments")
            if getattr(self, name)
        }
        for name in ("since", "until"):
            when = getattr(self, name)
            if when is not None:
                out[name] = wire_time(when)
        return out


def _operator(values: Iterable[str]) -> str:
    listed = list(values)
    return f"IS:{listed[0]}" if len(listed) == 1 else f"IS_ANY_OF:{','.join(listed)}"


def wire_time(when: datetime) -> str:
    """A time as Unleash writes it: UTC to the millisecond, `Z`."""
    text = when.isoformat(timespec="milliseconds")
    if text.endswith("+00:00"):  # UTC already: what every server sends
        return text[:-6] + "Z"
    at = _utc(when)
    assert at is not None
    return at.astimezone(UTC).isoformat(timespec="milliseconds")[:-6] + "Z"


def json_text(value: Any) -> str:
    """`data`, `preData` or `tags` as compact JSON text (msgspec: five times `json.dumps`'s
    speed, which was a third of a CSV export's own time)."""
    import msgspec

    return msgspec.json.encode(value).decode()


@functools.cache
def _page_decoder() -> Any:
    """msgspec's decoder of a page into `Event`s (imported on the first page: the window's start
    does without it)."""
    import msgspec

    class Page(msgspec.Struct):
        events: list[Event]
        total: int | None = None
        totalEvents: int | None = None

    return msgspec.json.Decoder(Page)


def decode_page(content: bytes) -> EventPage | None:
    """A page's body as `EventPage`, decoded by msgspec into the same `Event`s pydantic makes,
    in half the time (2 ms a page of 1,000 against 5, and no decoding on a worker thread
    first); None when msgspec refuses it: the caller reads it with pydantic, whose error says
    what is wrong, or which takes what msgspec does not (a number in a string)."""
    import msgspec

    try:
        page = _page_decoder().decode(content)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return None
    return EventPage.model_construct(
        events=page.events, total=page.total, totalEvents=page.totalEvents
    )


def way_of(server_kind: str, version: tuple[int, ...] | None) -> Way | None:
    """How a server's events are read: the search (the sandbox, Unleash 6.0 on), 5.x's search by
    body, or None: not known (the search is tried, then the body)."""
    if server_kind == "sandbox":
        return "search"
    if server_kind == "unleash" and version is not None:
        return "search" if version >= SEARCH_SINCE else "body"
    return None


async def pages(
    read: PageReader,
    way: Way,
    filters: EventFilter,
    *,
    own: bool = False,
    size: int | None = None,
    on_total: Callable[[int | None], object] | None = None,
) -> AsyncGenerator[list[Event]]:
    """The events `filters` takes, newest first, a page at a time as each arrives (a page may
    be empty: none of its events was one of these). `own`: the server asked for every event,
    the filter applied here alone. `size`: the page asked for (the read's largest by default).
    `on_total`: told, with the first page, how many events the server counts for what it was
    asked (None when it does not say): never fewer than the filter takes (what it is asked is
    never narrower), the window's progress."""
    limit = size or (SEARCH_PAGE if way == "search" else BODY_PAGE)
    parts = _split(filters) if way == "body" and not own else None
    if parts:
        totals: list[int | None] = []

        def each_total(total: int | None) -> None:
            totals.append(total)
            if on_total is not None and len(totals) == len(parts):
                on_total(None if None in totals else sum(t or 0 for t in totals))

        streams = [pages(read, way, p, size=size, on_total=each_total) for p in parts]
        async for found in _merged(streams):
            yield found
        return
    asked: dict[str, Any]
    if way == "search":
        asked = {} if own else filters.search_params()
    else:
        asked = {} if own else dict(filters.body())

    def request(offset: int) -> Mapping[str, Any]:
        if way == "search":
            return {**asked, "offset": str(offset), "limit": str(limit)}
        return {**asked, "offset": offset, "limit": limit}

    seen: set[int] = set()
    offset = 0
    if way == "body" and "type" in asked:
        try:
            first = await read(request(offset))
        except BadRequest:
            # 5.x refuses a type it does not know (400 naming its list): flagdesk filters
            # by type instead, and finds none, as the search does with one
            del asked["type"]
            first = await read(request(offset))
        ahead: asyncio.Future[EventPage] = asyncio.ensure_future(_given(first))
    else:
        ahead = asyncio.ensure_future(read(request(offset)))
    try:
        while True:
            page = await ahead
            at_start = offset == 0
            offset += len(page.events)
            total = page.total if page.total is not None else page.totalEvents
            if at_start and on_total is not None:
                on_total(total)
            last = (
                not page.events
                or (len(page.events) < limit and (total is None or offset >= total))
                or _before(page.events[-1], filters.since)
            )
            if not last:
                ahead = asyncio.ensure_future(read(request(offset)))
                for _ in range(_TURNS_TO_SEND):  # the request on its way before the caller
                    await asyncio.sleep(0)  # works on this page (which may not await at all)
            fresh = [e for e in page.events if e.id not in seen]
            seen.update(e.id for e in fresh)
            yield fresh if filters.empty else [e for e in fresh if filters.matches(e)]
            if last:
                return
    finally:
        if not ahead.done():
            ahead.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await ahead


async def _given(page: EventPage) -> EventPage:
    return page


def _time(event: Event) -> datetime:
    at = _utc(event.createdAt)
    assert at is not None
    return at


def _before(event: Event, since: datetime | None) -> bool:
    """Whether `event` (the oldest of a page read newest first) is older than `since`: the
    events after it are too (both reads are ordered by time: the search's `from` is only a
    day, and 5.x's search by body and flagdesk's own reading have no time at all)."""
    return since is not None and _time(event) < since


def _split(filters: EventFilter) -> list[EventFilter] | None:
    """`filters` as one filter for each of its flags (else projects, else types) where it has
    several (up to `SPLIT_MOST`): each one 5.x's search by body can be asked; None when the
    search can be asked the filter as it is, or too many values would make too many reads."""
    for name in ("flags", "projects", "types"):
        values: tuple[str, ...] = getattr(filters, name)
        if 1 < len(values) <= SPLIT_MOST:
            one: list[dict[str, Any]] = [{name: (value,)} for value in values]
            return [dataclasses.replace(filters, **changes) for changes in one]
    return None


async def _merged(streams: list[AsyncGenerator[list[Event]]]) -> AsyncGenerator[list[Event]]:
    """The events of `streams` (each newest first, no event in two) as one stream, newest
    first: a page as soon as every stream still open has events in hand. An event held is given
    once it is no older than the oldest in hand of each open stream, as what a stream has still
    to give is older than what it gave; a stream whose hand is empty is read on, all of them
    side by side."""
    held: list[list[Event]] = [[] for _ in streams]
    open_ = set(range(len(streams)))
    try:
        while open_:
            wanting = sorted(i for i in open_ if not held[i])
            reads = [asyncio.ensure_future(anext(streams[i], None)) for i in wanting]
            try:
                got = await asyncio.gather(*reads)
            except BaseException:
                # one failed (or the reader went): the others' reads stopped before the
                # streams are closed, not left running with no one to hear how they end
                for pending in reads:
                    pending.cancel()
                await asyncio.gather(*reads, return_exceptions=True)
                raise
            for i, page in zip(wanting, got, strict=True):
                if page is None:
                    open_.discard(i)
                else:
                    held[i].extend(page)
            if any(not held[i] for i in open_):
                continue  # a page of none of these (filtered out here): read that one on
            bound = max((_time(held[i][-1]) for i in open_), default=None)
            out: list[Event] = []
            for hand in held:
                cut = len(hand) if bound is None else _newer(hand, bound)
                out.extend(hand[:cut])
                del hand[:cut]
            if out:
                out.sort(key=_time, reverse=True)
                yield out
    finally:
        for stream in streams:
            with contextlib.suppress(Exception):
                await stream.aclose()


def _newer(hand: list[Event], bound: datetime) -> int:
    """How many of `hand` (newest first) are no older than `bound`."""
    n = 0
    while n < len(hand) and _time(hand[n]) >= bound:
        n += 1
    return n


# ------------------------------------------------------------------ an event as a file's row
# (the command's `--json` and `--csv`, and the window's export: one writer for both)

#: the CSV's columns (and the command's text's, less the JSON ones)
COLUMNS = ("id", "createdAt", "type", "createdBy", "createdByUserId", "project", "featureName",
           "environment", "groupId", "label", "summary", "tags", "preData", "data")  # fmt: skip
_AGO = re.compile(r"(\d{1,6})\s*([mhdw])")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
#: a secret's keys in an event's data: shown masked whatever the server logged (Unleash masks
#: them itself: `***`, or leaves the secret out)
_SECRET_KEYS = frozenset({"secret", "token", "password"})


def when(text: str, *, end_of_day: bool = False, now: datetime | None = None) -> datetime:
    """A WHEN (`--since`/`--until`, the window's time range): a time ago (`30m`, `12h`, `7d`,
    `2w`), an ISO date (its midnight UTC; with `end_of_day`, the next midnight: all of that
    day) or date and time (UTC unless it says its zone). ValueError saying what it takes."""
    given = text.strip()
    ago = _AGO.fullmatch(given)
    if ago:
        now = now or datetime.now(UTC)
        return now - timedelta(**{_UNITS[ago.group(2)]: int(ago.group(1))})
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", given):
            day = datetime.fromisoformat(given).replace(tzinfo=UTC)
            return day + timedelta(days=1) if end_of_day else day
        at = datetime.fromisoformat(given.replace("z", "Z"))
    except ValueError:
        at = None
    if at is None or not re.match(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}", given):
        raise ValueError(
            f"{text!r} is not a time: give a date (2026-01-31), a date and time "
            "(2026-01-31T14:00, UTC unless it has a zone) or a time ago (30m, 12h, 7d, 2w)"
        )
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


def masked(value: Any) -> Any:
    """An event's `data` or `preData` with any secret's value shown as `***`."""
    if isinstance(value, dict):
        return {k: ("***" if k.casefold() in _SECRET_KEYS and isinstance(v, str) and v
                    else masked(v)) for k, v in value.items()}  # fmt: skip
    if isinstance(value, list):
        return [masked(v) for v in value]
    return value


#: a secret's key in an event's JSON text (one scan, where a casefold and a look for each key
#: a cell took a sixth of the export's own time)
_SECRET_KEY = re.compile("|".join(f'"{key}"' for key in sorted(_SECRET_KEYS)), re.IGNORECASE)


def _json_cell(value: Any) -> str:
    if value is None:
        return ""
    text = json_text(value)
    if _SECRET_KEY.search(text) is not None:
        text = json_text(masked(value))
    return text


def event_json(event: Event) -> dict[str, Any]:
    """An event as `--json` gives it: the server's fields, secrets masked."""
    return {
        "id": event.id, "type": event.type, "createdAt": wire_time(event.createdAt),
        "createdBy": event.createdBy, "createdByUserId": event.createdByUserId,
        "project": event.project, "featureName": event.featureName,
        "environment": event.environment, "groupType": event.groupType,
        "groupId": event.groupId, "label": event.label, "summary": event.summary,
        "tags": event.tags, "preData": masked(event.preData), "data": masked(event.data),
    }  # fmt: skip


def csv_row(event: Event) -> tuple[Any, ...]:
    """An event as a row of `COLUMNS`."""
    return (
        event.id, wire_time(event.createdAt), event.type, event.createdBy or "",
        "" if event.createdByUserId is None else event.createdByUserId, event.project or "",
        event.featureName or "", event.environment or "", event.groupId or "",
        event.label or "", event.summary or "", _json_cell(event.tags or None),
        _json_cell(event.preData), _json_cell(event.data),
    )  # fmt: skip


def write_csv(stream: TextIO, events: Iterable[Event]) -> int:
    """`COLUMNS`, then one row an event; the number of events written."""
    writer = csv.writer(stream)
    writer.writerow(COLUMNS)
    count = 0
    for event in events:
        writer.writerow(csv_row(event))
        count += 1
    return count


def write_file(path: Path, events: Sequence[Event], fmt: Literal["csv", "json"],
               about: Mapping[str, Any] | None = None) -> int:  # fmt: skip
    """`events` written to `path` as CSV (`write_csv`) or one JSON object (`about`'s fields,
    then `count` and `events`, as `flagdesk events --json` prints them), mode 0600 from its
    first byte, through `path.part` renamed once whole: whole or not at all. OSError as
    `open` raises it. No Qt: the window runs it on a worker thread."""
    part = path.with_name(path.name + ".part")
    fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # an older .part kept its mode through O_CREAT
    finished = False
    try:
        # written a megabyte at a time, as the command writes (32 MB for 100,000 events)
        with open(fd, "w", newline="", encoding="utf-8", buffering=1 << 20) as f:
            if fmt == "csv":
                count = write_csv(f, events)
            else:
                count = len(events)
                document = {**(about or {}), "count": count,
                            "events": [event_json(e) for e in events]}  # fmt: skip
                json.dump(document, f, ensure_ascii=False, indent=2)
                f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(part, path)
        finished = True
    finally:
        if not finished:
            part.unlink(missing_ok=True)
    return count
