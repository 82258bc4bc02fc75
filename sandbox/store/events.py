"""The event log's reads (issue 38), as Unleash answers them (measured on 5.12.8, 6.10.1, 7.6.5
and 8.2.0; `docs` of the measurements: the admin console's behaviour, section 5):

- `GET /api/admin/events` (every release): `{version: 1, events, totalEvents}`, the newest 100;
  of the query only `project` counts (then that project's newest 100 on 5.x and 6.x, 50 from
  7.0, and its own count), `type`, `limit`, `offset` and `feature` are ignored;
- `GET /api/admin/events/:featureName`: `{version: 1, toggleName, events, totalEvents}`, every
  event of that flag;
- `POST /api/admin/events/search` (5.x and 6.x; 404 from 7.0: only served then,
  `sandbox.routes.event_search_body`): `{type, project, feature, query, limit (1-100, 100),
  offset}` -> `{version: 1, events, totalEvents}`, the count without
  the text filter (as measured); an unknown `type` is not refused (Unleash: 400 naming its
  list of types, which the sandbox does not hold);
- `GET /api/admin/search/events` (6.x on; `EventQuery`): filters `IS:v` or `IS_ANY_OF:v1,v2` on
  the type, the creator's user id, the project, the flag, the environment, the id and the group
  (the last two ignored on 6.x), `from`/`to` as `IS:YYYY-MM-DD` (`to` takes all of that day),
  `query` (case-insensitive, in the flag's and project's names and the creator's name),
  `offset`, and `limit` (default 50, up to 1000; anything else is 50); `{events, total}`, the
  total of the filtered events. Each item has `label` (`LABELS`) and `summary` there too;
- `GET /api/admin/event-creators` (6.x on): who has made events, `[{id, name}]`;
- from 7.0 an item has `groupType` ("transaction") and `groupId` (a ULID; the sandbox makes a
  group of each event), neither for tags, tokens, segments and exports (`UNGROUPED`).

Newest first everywhere (by id). The filters' columns are indexed (`sandbox/db.py`, 15 -> 16),
so a page of 100,000 events is read in milliseconds whatever the filter. Items carry no `tags`
(the sandbox tags no event), nor Enterprise's `ip`."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sandbox.store.core import DAY_MS, Core, Refusal, to_wire_time

#: what a filter must look like (Unleash's `EventQuery` schema; its 400 quotes this)
FILTER_PATTERN = "^(IS|IS_ANY_OF):(.*?)(,([a-zA-Z0-9_]+))*$"
DATE_PATTERN = r"^(IS):\d{4}-\d{2}-\d{2}$"
#: the filters of `/api/admin/search/events` -> the column each one compares
FILTER_COLUMNS: dict[str, str] = {
    "type": "e.type",
    "createdBy": "e.created_by_user_id",
    "project": "e.project",
    "feature": "e.feature",
    "environment": "e.environment",
    "id": "e.id",
    "groupId": "e.id",  # the sandbox's group of an event is the event itself
}
SEARCH_LIMIT, SEARCH_MAX = 50, 1000
#: an event type's `label` in the search's answers (6.x on; measured on 6.10, 7.6 and 8.2): the
#: types seen there; any other type is its own label, as `features-exported` is on Unleash
LABELS: dict[str, str] = {
    "context-field-created": "Context field created",
    "context-field-updated": "Context field updated",
    "context-field-deleted": "Context field deleted",
    "feature-archived": "Flag archived",
    "feature-created": "Flag created",
    "feature-environment-disabled": "Flag disabled",
    "feature-environment-enabled": "Flag enabled",
    "feature-strategy-add": "Flag strategy added",
    "feature-strategy-remove": "Flag strategy removed",
    "feature-tagged": "Flag tagged",
    "segment-created": "Segment created",
    "segment-deleted": "Segment deleted",
}
#: the types whose events Unleash 7.6 and 8.2 log outside a group (no `groupType`, `groupId`;
#: measured, and the measurements' note on tags and tokens)
UNGROUPED = ("tag-created", "feature-tagged", "features-exported", "segment-created",
             "segment-updated", "segment-deleted")  # fmt: skip
UNGROUPED_PREFIXES = ("api-token-", "pat-")
#: Crockford's base 32, the alphabet of a ULID
_BASE32 = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
#: the ids Unleash gives who is not a user (`event-creators`)
CREATOR_NAMES = {-1337: "Unleash System", -42: "Unleash Admin Token"}


def _pattern_refusal(name: str, pattern: str, sent: str) -> Refusal:
    """The 400 of a query parameter that does not match its pattern, as Unleash words it."""
    message = f'The `/query/{name}` property must match pattern "{pattern}". You sent "{sent}".'
    return Refusal(
        400,
        "ValidationError",
        "Request validation failed: your request body or params contain invalid data. Refer"
        " to the `details` list for more information.",
        [{"message": message, "path": f"/query/{name}"}],
        by="checks",
    )


@dataclass(frozen=True, slots=True)
class EventQuery:
    """The search's filters, read from the query string (`EventQuery.of`)."""

    #: column -> the values any of which an event's column must be
    equal: dict[str, tuple[str, ...]] = field(default_factory=dict)
    since_ms: int | None = None  # from: midnight UTC of that day
    before_ms: int | None = None  # to: midnight UTC of the day after
    text: str = ""
    offset: int = 0
    limit: int = SEARCH_LIMIT

    @classmethod
    def of(cls, params: dict[str, str], *, by_id: bool = True) -> EventQuery:
        """Refusal (400) naming the first filter of the wrong form, as Unleash does. `by_id`:
        the `id` and `groupId` filters are honoured (7.0 on; 6.x ignores them)."""
        equal: dict[str, tuple[str, ...]] = {}
        for name, column in FILTER_COLUMNS.items():
            sent = params.get(name)
            if sent is None:
                continue
            if re.match(FILTER_PATTERN, sent) is None:
                raise _pattern_refusal(name, FILTER_PATTERN, sent)
            if name in ("id", "groupId") and not by_id:
                continue
            operator, _, values = sent.partition(":")
            listed = tuple(values.split(",")) if operator == "IS_ANY_OF" else (values,)
            if name == "createdBy":
                for value in listed:
                    if not re.fullmatch(r"-?\d+", value.strip()):
                        # Unleash hands the text to PostgreSQL as an integer (8.2: 500)
                        raise Refusal(
                            500,
                            "UnknownError",
                            f'invalid input syntax for type integer: "{value}"',
                        )
            equal[column] = equal.get(column, ()) + listed
        days: dict[str, int] = {}
        for name in ("from", "to"):
            sent = params.get(name)
            if sent is None:
                continue
            if re.match(DATE_PATTERN, sent) is None:
                raise _pattern_refusal(name, DATE_PATTERN, sent)
            try:
                day = datetime.strptime(sent[3:], "%Y-%m-%d").replace(tzinfo=UTC)
            except ValueError as e:
                raise _pattern_refusal(name, DATE_PATTERN, sent) from e
            days[name] = int(day.timestamp() * 1000)
        return cls(
            equal=equal,
            since_ms=days.get("from"),
            before_ms=None if "to" not in days else days["to"] + DAY_MS,
            text=params.get("query", ""),
            offset=_number(params.get("offset"), 0, lowest=0),
            limit=_number(params.get("limit"), SEARCH_LIMIT, lowest=1, highest=SEARCH_MAX),
        )

    def where(self) -> tuple[str, list[Any]]:
        """The SQL condition and its arguments."""
        terms: list[str] = []
        args: list[Any] = []
        for column, values in self.equal.items():
            terms.append(f"{column} IN ({','.join('?' * len(values))})")
            args.extend(values)
        if self.since_ms is not None:
            terms.append("e.created_at >= ?")
            args.append(self.since_ms)
        if self.before_ms is not None:
            terms.append("e.created_at < ?")
            args.append(self.before_ms)
        if self.text:
            like = "%" + self.text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            like += "%"
            terms.append(
                "(e.feature LIKE ? ESCAPE '\\' OR e.project LIKE ? ESCAPE '\\'"
                " OR e.created_by LIKE ? ESCAPE '\\')"
            )
            args.extend([like, like, like])
        return (" AND ".join(terms) or "1"), args


def _number(text: str | None, default: int, *, lowest: int, highest: int | None = None) -> int:
    """A plain number of the query; anything else (not a number, out of range) the default."""
    if text is None or not re.fullmatch(r"\d+", text.strip()):
        return default
    value = int(text)
    if value < lowest or (highest is not None and value > highest):
        return default
    return value


_ITEM_QUERY = (
    "SELECT e.id, e.type, e.project, e.feature, e.environment, e.created_by,"
    " e.created_by_user_id, e.created_at, e.summary, d.pre_data, d.data"
    " FROM events e LEFT JOIN event_data d ON d.event_id = e.id"
)


#: every two characters of Crockford's base 32, by the 10 bits they say
_PAIRS = [a + b for a in _BASE32 for b in _BASE32]


def group_id(created_at: int, event_id: int) -> str:
    """The event's group as a ULID (its time, then its id where a ULID has randomness): the
    sandbox makes one group of each event. Its 130 bits as 26 characters, two at a time (a
    page of 1,000 events spent a third of its time on them a character at a time)."""
    number = (created_at % (1 << 48)) << 80 | event_id % (1 << 80)
    return "".join([_PAIRS[(number >> shift) & 1023] for shift in _SHIFTS])


_SHIFTS = tuple(range(120, -1, -10))


def _sql_text(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _sql_group_id() -> str:
    """`group_id` in SQL: its 26 characters, 5 bits each, the first 10 from the time's 48 bits
    (two leading zero bits), the other 16 from the id's 80 (an id, under 2**63, fills the last
    63: the first three characters are 0). A character from the 32 of the alphabet (`substr`
    counts characters from the start: a longer table, two characters at a time, was slower)."""
    alphabet = _sql_text(_BASE32)
    time_ = f"(e.created_at % {1 << 48})"
    chars = [f"substr({alphabet}, (({time_} >> {45 - 5 * k}) & 31) + 1, 1)" for k in range(10)]
    chars.append("'000'")
    chars += [f"substr({alphabet}, ((e.id >> {125 - 5 * k}) & 31) + 1, 1)" for k in range(13, 26)]
    return " || ".join(chars)


def _sql_item(*, groups: bool) -> str:
    """A search item as JSON text made by SQLite, as `_item(searched=True)` makes it (the same
    keys in the same order; `data` and `preData` as stored): a page of 1,000 is the rows'
    texts joined, not objects built and encoded (a page at 99,000 of 100,000: 57 ms with the
    offset's rows read, 18 without, 10 so)."""
    wire_time = ("strftime('%Y-%m-%dT%H:%M:%S', e.created_at / 1000, 'unixepoch') || '.' ||"
                 " substr('00' || (e.created_at % 1000), -3) || 'Z'")  # fmt: skip
    labels = " ".join(f"WHEN {_sql_text(k)} THEN {_sql_text(v)}" for k, v in LABELS.items())
    parts = [
        "'{\"id\":' || e.id",
        "',\"type\":' || json_quote(e.type)",
        "',\"createdBy\":' || json_quote(e.created_by)",
        f"',\"createdAt\":\"' || {wire_time} || '\"'",
        "',\"createdByUserId\":' || json_quote(e.created_by_user_id)",
        "',\"data\":' || coalesce(d.data, 'null')",
        "',\"preData\":' || coalesce(d.pre_data, 'null')",
        "',\"tags\":[]'",
        "',\"featureName\":' || json_quote(e.feature)",
        "',\"project\":' || json_quote(e.project)",
        "',\"environment\":' || json_quote(e.environment)",
    ]
    if groups:
        ungrouped = " OR ".join(
            [f"e.type IN ({', '.join(_sql_text(t) for t in UNGROUPED)})"]
            + [f"substr(e.type, 1, {len(p)}) = {_sql_text(p)}" for p in UNGROUPED_PREFIXES]
        )
        parts.append(f"CASE WHEN {ungrouped} THEN '' ELSE ',\"groupType\":\"transaction\""
                     f",\"groupId\":\"' || {_sql_group_id()} || '\"' END")  # fmt: skip
    parts.append(f"',\"label\":' || json_quote(CASE e.type {labels} ELSE e.type END)")
    parts.append("',\"summary\":' || json_quote(e.summary) || '}'")
    return " || ".join(f"({part})" for part in parts)


def _item(row: sqlite3.Row, *, searched: bool, groups: bool) -> dict[str, Any]:
    item: dict[str, Any] = {
        "id": row["id"],
        "type": row["type"],
        "createdBy": row["created_by"],
        "createdAt": to_wire_time(row["created_at"]),
        "createdByUserId": row["created_by_user_id"],
        "data": None if row["data"] is None else json.loads(row["data"]),
        "preData": None if row["pre_data"] is None else json.loads(row["pre_data"]),
        "tags": [],
        "featureName": row["feature"],
        "project": row["project"],
        "environment": row["environment"],
    }
    if groups:
        kind = row["type"]
        if kind not in UNGROUPED and not kind.startswith(UNGROUPED_PREFIXES):
            item["groupType"] = "transaction"
            item["groupId"] = group_id(row["created_at"], row["id"])
    if searched:
        item["label"] = LABELS.get(row["type"], row["type"])
        item["summary"] = row["summary"]
    return item


class Events(Core):
    """The event log's reads (the events themselves are written by `Core._event`)."""

    def latest_events(
        self, project: str | None, count: int, *, groups: bool = True
    ) -> dict[str, Any]:
        """`GET /api/admin/events`: the newest `count` events (of `project` when given), and
        how many there are. `groups`: items have `groupType` and `groupId` (7.0 on)."""
        where, args = ("e.project = ?", [project]) if project is not None else ("1", [])
        rows = self.conn.execute(
            f"{_ITEM_QUERY} WHERE {where} ORDER BY e.id DESC LIMIT ?", (*args, count)
        ).fetchall()
        total = self.conn.execute(f"SELECT count(*) FROM events e WHERE {where}", args)
        return {
            "version": 1,
            "events": [_item(r, searched=False, groups=groups) for r in rows],
            "totalEvents": total.fetchone()[0],
        }

    def feature_events(self, feature: str, *, groups: bool = True) -> dict[str, Any]:
        """`GET /api/admin/events/:featureName`: every event of that flag, newest first (none
        for a flag never heard of: 200 all the same)."""
        rows = self.conn.execute(
            f"{_ITEM_QUERY} WHERE e.feature = ? ORDER BY e.id DESC", (feature,)
        ).fetchall()
        return {
            "version": 1,
            "toggleName": feature,
            "events": [_item(r, searched=False, groups=groups) for r in rows],
            "totalEvents": len(rows),
        }

    def search_events(self, query: EventQuery, *, groups: bool = True) -> str:
        """`GET /api/admin/search/events`: a page of the filtered events, and their count, as
        the answer's JSON text (each item made by SQLite, `_sql_item`)."""
        where, args = query.where()
        items = self.conn.execute(
            f"SELECT {_sql_item(groups=groups)} FROM events e"
            " LEFT JOIN event_data d ON d.event_id = e.id"
            f" WHERE e.id IN (SELECT e.id FROM events e WHERE {where}"
            " ORDER BY e.id DESC LIMIT ? OFFSET ?) ORDER BY e.id DESC",
            (*args, query.limit, query.offset),
        ).fetchall()
        total = self.conn.execute(f"SELECT count(*) FROM events e WHERE {where}", args)
        return '{"events":[' + ",".join(r[0] for r in items) + f'],"total":{total.fetchone()[0]}}}'

    def search_events_body(self, filters: EventQuery, *, offset: int, limit: int) -> dict[str, Any]:
        """`POST /api/admin/events/search` (5.x, 6.x): a page of the events of that type,
        project and flag matching the text, newest first; `totalEvents` counts them without
        the text (measured: with only `query`, the count of every event)."""
        where, args = filters.where()
        rows = self._page(where, args, limit, offset)
        counted = EventQuery(equal=filters.equal).where()
        total = self.conn.execute(f"SELECT count(*) FROM events e WHERE {counted[0]}", counted[1])
        return {
            "version": 1,
            "events": [_item(r, searched=False, groups=False) for r in rows],
            "totalEvents": total.fetchone()[0],
        }

    def _page(self, where: str, args: list[Any], limit: int, offset: int) -> list[sqlite3.Row]:
        """A page of the events `where` takes, newest first: the page's ids skipped to on the
        index alone, then only their rows read and joined (the offset's rows read and joined
        as well made a page at 99,000 of 100,000 take 57 ms, this 18)."""
        return self.conn.execute(
            f"{_ITEM_QUERY} WHERE e.id IN (SELECT e.id FROM events e WHERE {where}"
            " ORDER BY e.id DESC LIMIT ? OFFSET ?) ORDER BY e.id DESC",
            (*args, limit, offset),
        ).fetchall()

    def event_creators(self) -> list[dict[str, Any]]:
        """`GET /api/admin/event-creators`: everyone who made an event, by creator id; a user
        by the name the events give them, the admin token and the system by Unleash's words."""
        rows: Sequence[sqlite3.Row] = self.conn.execute(
            "SELECT e.created_by_user_id AS id, max(e.created_by) AS logged FROM events e"
            " WHERE e.created_by_user_id IS NOT NULL GROUP BY e.created_by_user_id"
            " ORDER BY e.created_by_user_id"
        ).fetchall()
        return [{"id": r["id"], "name": CREATOR_NAMES.get(r["id"], r["logged"])} for r in rows]
