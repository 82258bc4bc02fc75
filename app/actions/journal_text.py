"""How a journal entry reads, the same in the History (`app.viewmodels.history`) and in `flagdesk
journal list` (`app.commands.journal`): its action's title, its items, its outcome, who made it,
the file it names (a snapshot, or an upload's ledger folder), and the entry as JSON. No Qt.
"""

from __future__ import annotations

from datetime import UTC
from pathlib import Path
from typing import Any

from app.actions.journal import Entry, State
from app.registry import ACTIONS_BY_KEY, UPLOAD_METRICS
from app.text import plural

__all__ = [
    "NAMED",
    "OUTCOME",
    "action_title",
    "by_text",
    "entry_json",
    "file_of",
    "items_text",
    "outcome_text",
    "state_text",
    "time_text",
]

#: what an entry's state reads as
OUTCOME = {
    State.DONE: "done",
    State.FAILED: "failed",
    State.IN_DOUBT: "in doubt",
    State.SENT: "in doubt",
}
#: the ids a row names before "and N more"
NAMED = 3


def action_title(entry: Entry) -> str:
    """The action's title in the registry ("Delete inactive users"), or its key when this
    flagdesk does not know it (a newer one wrote it)."""
    action = ACTIONS_BY_KEY.get(entry.action)
    return action.title if action is not None else entry.action


def _before(entry: Entry) -> dict[str, Any]:
    return entry.before if isinstance(entry.before, dict) else {}


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def items_text(entry: Entry) -> str:
    """'3 items: 39, 43, 51' or '1 item: 7', the ids as the entry lists them; an upload's
    '12 bodies (5,000 metrics)' (', resumed' for a resume)."""
    if entry.action == UPLOAD_METRICS.key:
        before = _before(entry)
        bodies, metrics = _count(before.get("bodies")), _count(before.get("metrics"))
        if bodies is not None:
            text = plural(bodies, "body", "bodies")
            if metrics is not None:
                text += f" ({plural(metrics, 'metric')})"
            return text + (", resumed" if before.get("resume") is True else "")
    ids = [str(i) for i in entry.ids]
    if not ids:
        return "—"
    shown = ", ".join(ids[:NAMED]) + (f" and {len(ids) - NAMED} more" if len(ids) > NAMED else "")
    return f"{plural(len(ids), 'item')}: {shown}"


def state_text(entry: Entry) -> str:
    """'done', 'failed' or 'in doubt'."""
    return OUTCOME[entry.state]


def outcome_text(entry: Entry) -> str:
    """'done (200)': the state, and the answer's status when there was one."""
    text = state_text(entry)
    return f"{text} ({entry.status})" if entry.status is not None else text


def by_text(entry: Entry) -> str:
    """Who made the change: the token's kind and the user it acts as."""
    parts = [p for p in (entry.token, entry.user) if p]
    return " · ".join(parts) if parts else "—"


def time_text(entry: Entry) -> str:
    """When the entry was begun, in local time to the second ('2026-11-24 23:10:05')."""
    return entry.time.astimezone().strftime("%Y-%m-%d %H:%M:%S")


def file_of(entry: Entry, folder: Path) -> Path | None:
    """The file the entry names, if any: the snapshot written before the change (its name in
    `before`, in the journal's `folder`), or the ledger folder of an upload."""
    before = _before(entry)
    snapshot = before.get("snapshot")
    if isinstance(snapshot, str) and snapshot:
        return folder / Path(snapshot).name
    ledger = before.get("ledger")
    if isinstance(ledger, str) and ledger:
        return Path(ledger)
    return None


def _iso(entry_time: Any) -> str | None:
    if entry_time is None:
        return None
    text: str = entry_time.astimezone(UTC).isoformat(timespec="milliseconds")
    return text.replace("+00:00", "Z")


def entry_json(entry: Entry, folder: Path) -> dict[str, Any]:
    """The entry as `flagdesk journal list --json` gives it (stable keys): its id, when
    (UTC), the connection and server, who (the token's kind, never a token, and the user),
    the action's key and title, the ids, the state ("done", "failed", "in doubt"), the answer's
    status and message, what it recorded before and of the request, when it was completed,
    what the answer made (`after`: a creation's id) and the file it names (`file_of`)."""
    file = file_of(entry, folder)
    return {
        "entry": entry.id,
        "time": _iso(entry.time),
        "connection": entry.connection,
        "server": entry.server,
        "token": entry.token,
        "user": entry.user,
        "action": entry.action,
        "title": action_title(entry),
        "ids": entry.ids,
        "state": state_text(entry),
        "status": entry.status,
        "message": entry.message,
        "before": entry.before,
        "request": entry.request,
        "finished": _iso(entry.finished),
        "after": entry.after,
        "file": str(file) if file is not None else None,
    }
