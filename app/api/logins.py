"""Login history (issue 38; Unleash Enterprise 4.22+): what flagdesk does with the server's
list, the same for `flagdesk logins` (`app.commands.logins`) and the window
(`app.viewmodels.logins`). The server neither filters nor pages (`GET /api/admin/logins`
answers every login it keeps, the last 14 days), so flagdesk filters what it read: by user (any
part of the username, any case) and to the failed logins alone, newest first; and writes what
it shows as JSON (each event as the server sent it) or CSV (the server's columns). No Qt, no
I/O: pure functions over the wire models."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any, TextIO

from app.api.models import LoginEvent

#: the CSV's columns: the fields of loginEventSchema, as Unleash's own CSV names them
CSV_COLUMNS = ("id", "username", "auth_type", "created_at", "successful", "ip", "failure_reason",
               "type")  # fmt: skip
#: how long Unleash Enterprise keeps login events (what the empty list and the help say)
KEPT_DAYS = 14

_OLDEST = datetime.min.replace(tzinfo=UTC)


def newest_first(events: Iterable[LoginEvent]) -> list[LoginEvent]:
    """By time, newest first (the id, which grows, breaks ties and orders events without one)."""
    return sorted(events, key=lambda ev: (ev.created_at or _OLDEST, ev.id), reverse=True)


def failed(event: LoginEvent) -> bool:
    """A login that did not succeed (a logout never fails)."""
    return event.successful is False


def user_matches(event: LoginEvent, user: str) -> bool:
    """Whether `user` is part of the event's username, in any case."""
    return user.casefold() in (event.username or "").casefold()


def select_logins(
    events: Iterable[LoginEvent], *, user: str | None = None, failed_only: bool = False
) -> list[LoginEvent]:
    """The events of `user` (any part of the username), only the failed ones with
    `failed_only`, newest first."""
    return newest_first(
        ev for ev in events
        if (not user or user_matches(ev, user)) and (not failed_only or failed(ev))
    )  # fmt: skip


def login_json(event: LoginEvent) -> dict[str, Any]:
    """An event as `--json` and the window's JSON export write it: the server's fields, its
    snake_case names, times in RFC 3339 with milliseconds."""
    data: dict[str, Any] = event.model_dump(mode="json")
    if event.created_at is not None:
        data["created_at"] = _wire_time(event.created_at)
    return data


def _wire_time(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


def csv_cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def write_logins_csv(stream: TextIO, events: Sequence[LoginEvent]) -> int:
    """The events as CSV, a header of `CSV_COLUMNS` then a line each; the number written."""
    writer = csv.writer(stream)
    writer.writerow(CSV_COLUMNS)
    for event in events:
        data = login_json(event)
        writer.writerow([csv_cell(data.get(column)) for column in CSV_COLUMNS])
    return len(events)


def outcome(event: LoginEvent) -> str:
    """What happened, in a word or two: "Logged in", "Logged out", "Failed"."""
    if failed(event):
        return "Failed"
    return "Logged out" if event.type == "logout" else "Logged in"
