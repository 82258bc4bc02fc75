"""What the server recorded of a journal entry (issue 38): the events its change made there.

flagdesk's journal says what flagdesk sent; the server's event log says what the server did, by
anyone. `recorded(client, entry)` finds the events an entry's request made: those of the types
its action makes (`EVENT_TYPES`: Unleash's, which the sandbox logs alike), within `SKEW` of the
time the request went out and its answer came (the two clocks are different machines'), that
name what the entry names (`names_of` and `names_in`: a flag, a user's id or email, a group's or
token's name, the project, a setting's key). A change of many things (deleting twelve inactive
users) made an event each; one that failed made none, and one **in doubt** (no answer came) is
settled by them: an event says the server made the change (`checked`, which the History's
check and `flagdesk journal check` use beside the state the server holds now).

The events are read through the event log's own read (`AdminClient.events`: the server's
search where it has one, 5.x's older search, held to the filter here), one time window an
entry, at most `MOST` events of it. No Qt.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from app.actions.check import Verdict, check_entry
from app.actions.journal import Entry, State
from app.api.errors import ClientError
from app.api.events import EventFilter
from app.registry import (
    ARCHIVE_FEATURES,
    CREATE_API_TOKEN,
    CREATE_BANNER,
    CREATE_CONTEXT_FIELD,
    CREATE_GROUP,
    CREATE_PAT,
    CREATE_ROLE,
    CREATE_SERVICE_ACCOUNT,
    CREATE_SERVICE_ACCOUNT_TOKEN,
    CREATE_USER,
    DELETE_API_TOKEN,
    DELETE_BANNER,
    DELETE_CONTEXT_FIELD,
    DELETE_FEATURE,
    DELETE_FEATURES,
    DELETE_GROUP,
    DELETE_INACTIVE_USERS,
    DELETE_PAT,
    DELETE_ROLE,
    DELETE_SERVICE_ACCOUNT,
    DELETE_SERVICE_ACCOUNT_TOKEN,
    DELETE_USER,
    EDIT_BANNER,
    EDIT_CONTEXT_FIELD,
    EDIT_GROUP,
    EDIT_ROLE,
    EDIT_SERVICE_ACCOUNT,
    EDIT_USER,
    EXPIRE_API_TOKEN,
    GRANT_PROJECT_ACCESS,
    IMPORT,
    PROMOTE,
    RESET_PASSWORD,
    REVIVE_FEATURE,
    REVIVE_FEATURES,
    REVOKE_PROJECT_ACCESS,
    SET_CORS,
    SET_PROJECT_ROLES,
    SWITCH_MAINTENANCE,
    UPLOAD_METRICS,
)
from app.text import plural

if TYPE_CHECKING:
    from app.api.client import AdminClient
    from app.api.models import Event

#: how far apart the journal's clock and the server's may be (and the server's event from the
#: answer), each side of the request's time
SKEW = timedelta(minutes=2)
#: within `SKEW`, the events made while the request was under way, give or take `CLOSE` (the
#: server's clock read as the journal's, as on one machine), are the entry's alone when there
#: are any: two switches of maintenance half a second apart name the same setting; an entry whose
#: answer never came is taken as under way `UNANSWERED` long
CLOSE = timedelta(seconds=0.2)
UNANSWERED = timedelta(seconds=30)
#: the most events of one window read (a busy server's two minutes); past them, the search
#: stops and says so
MOST = 5_000

_PROJECT_ACCESS = ("project-access-*", "project-user-*", "project-group-*")
#: the event types each action makes (one ending in "*" stands for every type it starts); one
#: named with none makes no event. An action not named here (a newer flagdesk's, in an older
#: one's History) is matched by what it names, whatever the type
EVENT_TYPES: dict[str, tuple[str, ...]] = {
    CREATE_GROUP.key: ("group-created",),
    EDIT_GROUP.key: ("group-updated", "group-user-added", "group-user-removed"),
    DELETE_GROUP.key: ("group-deleted",),
    CREATE_USER.key: ("user-created",),
    RESET_PASSWORD.key: (),
    EDIT_USER.key: ("user-updated",),
    DELETE_USER.key: ("user-deleted",),
    DELETE_INACTIVE_USERS.key: ("user-deleted",),
    REVIVE_FEATURE.key: ("feature-revived",),
    REVIVE_FEATURES.key: ("feature-revived",),
    DELETE_FEATURE.key: ("feature-deleted",),
    DELETE_FEATURES.key: ("feature-deleted",),
    ARCHIVE_FEATURES.key: ("feature-archived",),
    CREATE_CONTEXT_FIELD.key: ("context-field-created",),
    EDIT_CONTEXT_FIELD.key: ("context-field-updated",),
    DELETE_CONTEXT_FIELD.key: ("context-field-deleted",),
    UPLOAD_METRICS.key: (),
    CREATE_API_TOKEN.key: ("api-token-created",),
    DELETE_API_TOKEN.key: ("api-token-deleted",),
    EXPIRE_API_TOKEN.key: ("api-token-updated",),
    CREATE_PAT.key: ("pat-created",),
    DELETE_PAT.key: ("pat-deleted",),
    CREATE_SERVICE_ACCOUNT.key: ("service-account-created",),
    EDIT_SERVICE_ACCOUNT.key: ("service-account-updated",),
    DELETE_SERVICE_ACCOUNT.key: ("service-account-deleted",),
    CREATE_SERVICE_ACCOUNT_TOKEN.key: ("pat-created", "api-token-created"),
    DELETE_SERVICE_ACCOUNT_TOKEN.key: ("pat-deleted", "api-token-deleted"),
    CREATE_ROLE.key: ("role-created",),
    EDIT_ROLE.key: ("role-updated",),
    DELETE_ROLE.key: ("role-deleted",),
    GRANT_PROJECT_ACCESS.key: _PROJECT_ACCESS,
    SET_PROJECT_ROLES.key: _PROJECT_ACCESS,
    REVOKE_PROJECT_ACCESS.key: _PROJECT_ACCESS,
    PROMOTE.key: ("feature*", "context-field-*", "segment-*", "tag*", "strategy-*",
                  "project-environment-*"),
    IMPORT.key: ("feature*", "context-field-*", "segment-*", "tag*"),
    SWITCH_MAINTENANCE.key: ("setting-created", "setting-updated"),
    SET_CORS.key: ("setting-created", "setting-updated"),
    CREATE_BANNER.key: ("banner-created",),
    EDIT_BANNER.key: ("banner-updated",),
    DELETE_BANNER.key: ("banner-deleted",),
}  # fmt: skip

#: what an action names that its entry does not say as the server does (a setting's key)
_ALSO_NAMED: dict[str, tuple[str, ...]] = {
    SWITCH_MAINTENANCE.key: ("maintenance.mode",),
    SET_CORS.key: ("unleash.frontend",),
}

#: the fields of a body, a snapshot's record or an event's data that name their object
_NAMING = ("id", "name", "username", "email", "tokenName", "featureName", "description",
           "message", "project")  # fmt: skip

#: why an action makes no event, for those that make none
_NO_EVENT = {
    UPLOAD_METRICS.key: "Uploaded metrics make no event on the server: they show as the flags' "
    "and applications' metrics.",
    RESET_PASSWORD.key: "A reset link makes no event on the server (neither Unleash nor the "
    "sandbox logs one): only the user's next sign-in shows it was used.",
}


def _names(value: Any, into: set[str], *, depth: int = 0) -> None:
    """The naming fields of `value` (a mapping, or a list of them) into `into`, as text."""
    if isinstance(value, Mapping):
        for key in _NAMING:
            found = value.get(key)
            if isinstance(found, (str, int)) and not isinstance(found, bool) and found != "":
                into.add(str(found).casefold())
        if depth < 2:
            for key in ("flags", "features", "data", "users", "groups"):
                if key in value:
                    _names(value[key], into, depth=depth + 1)
    elif isinstance(value, list) and depth < 3:
        for item in value[:1000]:
            if isinstance(item, (str, int)) and not isinstance(item, bool):
                into.add(str(item).casefold())
            else:
                _names(item, into, depth=depth + 1)


def names_of(entry: Entry) -> set[str]:
    """What `entry` names, as text in lower case: its ids, the path's parts after the admin
    API's, the naming fields of the body sent, of what was there before and of what the answer
    made."""
    found: set[str] = set()
    _names(list(entry.ids), found)
    request = entry.request or {}
    path = str(request.get("path") or "")
    parts = path.split("?")[0].strip("/").split("/")
    found.update(p.casefold() for p in parts[2:] if p and not p.startswith(":"))
    _names(request.get("body"), found)
    _names(entry.before, found)
    _names(entry.after, found)
    found.update(n.casefold() for n in _ALSO_NAMED.get(entry.action, ()))
    # a secret's tail ("…39fc") and the admin API's words name nothing an event holds
    return {n for n in found if not n.startswith("…")} - _WORDS


#: the words of the admin API's paths, which name no object
_WORDS = frozenset({
    "api", "admin", "features", "environments", "strategies", "projects", "user-admin",
    "inactive", "delete", "revive", "archive", "groups", "roles", "context", "api-tokens",
    "user", "tokens", "service-account", "banners", "on", "off", "access", "users",
    "features-batch", "import", "validate", "variants", "maintenance", "ui-config", "cors",
    "expire", "role", "bulk_revive", "bulk_delete", "bulk_archive",
})  # fmt: skip


def names_in(event: Event) -> set[str]:
    """What `event` names, as text in lower case: its flag, and the naming fields of its data
    before and after (its project only when it names nothing else)."""
    found: set[str] = set()
    if event.featureName:
        found.add(event.featureName.casefold())
    _names(event.data, found)
    _names(event.preData, found)
    if not found and event.project:
        found.add(event.project.casefold())
    return found


def _typed(types: tuple[str, ...], event_type: str) -> bool:
    return any(event_type.startswith(t[:-1]) if t.endswith("*") else event_type == t
               for t in types)  # fmt: skip


def made_by(entry: Entry, event: Event, names: set[str] | None = None) -> bool:
    """Whether `event` is of a type `entry`'s action makes and names what the entry names."""
    types = EVENT_TYPES.get(entry.action)
    if types is not None and not _typed(types, event.type):
        return False
    names = names_of(entry) if names is None else names
    return bool(names & names_in(event))


def window(entry: Entry) -> tuple[datetime, datetime]:
    """The times the entry's events were made within: `SKEW` each side of its request (from
    its sending to its answer, or the sending alone when no answer came)."""
    end = entry.finished if entry.finished is not None else entry.time
    return entry.time - SKEW, max(end, entry.time) + SKEW


def _clock(when: datetime) -> str:
    return when.strftime("%H:%M:%S UTC") if when.utcoffset() is not None else str(when)


def _ids_text(events: Iterable[Event]) -> str:
    ids = sorted(e.id for e in events)
    if len(ids) > 2 and ids[-1] - ids[0] == len(ids) - 1:
        return f"{ids[0]}-{ids[-1]}"
    shown = ", ".join(str(i) for i in ids[:5])
    return shown + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")


@dataclass(frozen=True)
class Recorded:
    """The events the server recorded of one entry's change (or why none are looked for)."""

    entry: Entry
    #: the events found, oldest first
    events: tuple[Event, ...] = ()
    #: the time window searched (None: not searched, the action makes no event)
    since: datetime | None = None
    until: datetime | None = None
    #: how many events of the window were read, and whether `MOST` stopped the read
    read: int = 0
    stopped: bool = False

    @property
    def searched(self) -> bool:
        return self.since is not None

    @property
    def filters(self) -> EventFilter | None:
        """The event log's filter that shows these events (and those of their types made in the
        same minutes): what "Open in the event log" applies."""
        if self.since is None or self.until is None:
            return None
        types = tuple(sorted({e.type for e in self.events})) or tuple(
            t for t in EVENT_TYPES.get(self.entry.action, ()) if not t.endswith("*")
        )
        return EventFilter(types=types, since=self.since, until=self.until)

    @property
    def text(self) -> str:
        """One sentence: the events, or that the server recorded none (and when it was asked)."""
        if not self.searched:
            return _NO_EVENT.get(self.entry.action, "This change makes no event on the server.")
        if not self.events:
            assert self.since is not None and self.until is not None
            more = f" (the first {MOST:,} read)" if self.stopped else ""
            return (f"The server recorded no event of it between {_clock(self.since)} and "
                    f"{_clock(self.until)}{more}.")  # fmt: skip
        first = self.events[0]
        types = ", ".join(sorted({e.type for e in self.events}))
        by = f" by {first.createdBy}" if first.createdBy else ""
        if len(self.events) == 1:
            return (f"The server recorded it: event {first.id} ({types}) at "
                    f"{_clock(first.createdAt)}{by}.")  # fmt: skip
        return (f"The server recorded it in {plural(len(self.events), 'event')}: "
                f"{_ids_text(self.events)} ({types}), the first at {_clock(first.createdAt)}"
                f"{by}.")  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        return {
            "entry": self.entry.id,
            "searched": self.searched,
            "since": None if self.since is None else self.since.isoformat(),
            "until": None if self.until is None else self.until.isoformat(),
            "read": self.read,
            "stopped": self.stopped,
            "events": [e.id for e in self.events],
            "text": self.text,
        }


async def recorded(client: AdminClient, entry: Entry) -> Recorded:
    """The events the server recorded of `entry`'s change, read from its event log (the
    client's errors propagate: a token that may not read it, an unreachable server)."""
    types = EVENT_TYPES.get(entry.action)
    if types == ():
        return Recorded(entry)
    since, until = window(entry)
    # the server is asked for the types where the action names each in full, else for the
    # time alone (a type ending in "*" is matched here)
    exact = bool(types) and not any(t.endswith("*") for t in types or ())
    asked = EventFilter(types=tuple(types or ()) if exact else (), since=since, until=until)
    names = names_of(entry)
    found: list[Event] = []
    read = 0
    stopped = False
    async for page in client.events(asked):
        read += len(page)
        found.extend(e for e in page if made_by(entry, e, names))
        if read >= MOST:
            stopped = True
            break
    start = entry.time - CLOSE
    end = (entry.finished or entry.time + UNANSWERED) + CLOSE
    close = [e for e in found if start <= e.createdAt <= end]
    found = sorted(close or found, key=lambda e: e.id)
    return Recorded(entry, tuple(found), since, until, read, stopped)


async def checked(client: AdminClient, entry: Entry) -> tuple[Verdict, Recorded | None]:
    """The verdict on an entry in doubt (`app.actions.check.check_entry`), and what the
    server's event log holds of it. Where the state the server holds cannot tell, an event of
    the change says it was made (done); the log's silence settles nothing (a log may be pruned,
    a token not allowed to read it), and is said. A failed read of the log leaves the verdict
    as it was (and no record: None)."""
    verdict = await check_entry(client, entry)
    try:
        record = await recorded(client, entry)
    except ClientError:
        return verdict, None
    if verdict.state is not State.IN_DOUBT or not record.searched:
        return verdict, record
    if record.events:
        return Verdict(State.DONE, record.text.rstrip(".")), record
    return Verdict(State.IN_DOUBT, f"{verdict.message}; {_lower(record.text)}"), record


def settles(entry: Entry) -> bool:
    """Whether an event of `entry`'s change would settle it (its action makes known events)."""
    return bool(EVENT_TYPES.get(entry.action))


def _lower(text: str) -> str:
    return text[:1].lower() + text[1:].rstrip(".")
