"""Deleting inactive users (`inactive_users.delete`): the one path the inactive-users window and
`flagdesk users inactive delete` share.

1. `plan_deletion` fixes what will happen: the users (each id once, in the order given), the
   server, the connection, the exact request (`delete_inactive_users_request`) and where the
   snapshot will be. The confirmation (a dialog, or the terminal's question) shows `plan.lines()`.
2. `app.actions.runner.carry_out(client, plan)` carries it out: the snapshot, a CSV of the users
   as the server listed them (id, name, email, username, seenAt, createdAt, patSeenAt), fsync'ed
   into the journal's folder on a worker thread (10,000 users take about 30 ms); then the
   journal's `sent` line naming it, the request, the entry completed with the answer.

A deleted user cannot be brought back by the API (Unleash has no undelete): the snapshot is what
is left of them, and the confirmation says so.

Unleash deletes any user id given to the endpoint (its handler does not check inactivity) and
stops at the first unknown id with 404, the users before it deleted: flagdesk sends only ids it
has just listed as inactive (the command refuses others before anything is sent; the window's
selection comes from its list), and reloads after a failure as well. More than one user is
confirmed by typing their number (`runner.count_to_type`).
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Protocol, TextIO

from app.actions.journal import Journal
from app.actions.runner import PlanBase, Step, count_to_type, journal_of, typed_confirms
from app.actions.snapshots import wire_time, write_whole
from app.api.client import WriteRequest, delete_inactive_users_request
from app.changes import Changes, Resource
from app.registry import DELETE_INACTIVE_USERS, Action
from app.text import first_named, plural

__all__ = [
    "SNAPSHOT_COLUMNS",
    "DeletePlan",
    "InactiveUserLike",
    "journal_of",
    "plan_deletion",
    "user_label",
    "wire_time",
    "write_users_csv",
]

#: the snapshot's columns: the wire's names for the fields of an inactive user
SNAPSHOT_COLUMNS = ("id", "name", "email", "username", "seenAt", "createdAt", "patSeenAt")
#: the users a confirmation names before "and N more"
NAMED = 5


class NamedUser(Protocol):
    """Anything a person is named by: a user, an inactive user, a group's member."""

    id: int
    name: str | None
    email: str | None
    username: str | None


class InactiveUserLike(Protocol):
    """An inactive user as the wire has it (`app.api.models.InactiveUser`) or as a window's row
    holds it (`app.viewmodels.inactive_users.InactiveRow`)."""

    id: int
    name: str | None
    email: str | None
    username: str | None
    seenAt: datetime | None
    createdAt: datetime | None
    patSeenAt: datetime | None


def user_label(user: NamedUser) -> str:
    """How a person recognises a user: the name, else the username, the email, the id."""
    return user.name or user.username or user.email or f"User {user.id}"


def write_users_csv(path: Path, users: Iterable[InactiveUserLike], *, private: bool = True) -> int:
    """Write the users to `path` as CSV (a header of `SNAPSHOT_COLUMNS`, then a row each),
    whole or not at all: written beside it, fsync'ed, then renamed into place; private (0600)
    and in a private folder, made when missing, unless `private` is False (an export to a file
    of the person's choosing: 0600 too, in a folder that must exist; see `write_whole`).
    Returns the number of users written."""

    def fill(f: TextIO) -> int:
        count = 0
        writer = csv.writer(f)
        writer.writerow(SNAPSHOT_COLUMNS)
        for u in users:
            writer.writerow([u.id, u.name or "", u.email or "", u.username or "",
                             wire_time(u.seenAt), wire_time(u.createdAt),
                             wire_time(u.patSeenAt)])  # fmt: skip
            count += 1
        return count

    return write_whole(path, fill, private=private)


@dataclass(frozen=True)
class DeletePlan(PlanBase):
    """What a deletion will do, fixed before it is confirmed (a `runner.Plan`)."""

    users: tuple[InactiveUserLike, ...]
    journal: Journal
    #: where the snapshot will be written
    snapshot: Path
    request: WriteRequest
    action: Action = DELETE_INACTIVE_USERS
    nothing: str = "Nothing was deleted."

    @property
    def connection(self) -> str:
        return self.journal.actor.connection

    @property
    def announced(self) -> tuple[Changes, ...]:
        return (Changes.of(Resource.USERS, *self.ids),)

    def steps(self) -> tuple[Step, ...]:
        before = {"snapshot": self.snapshot.name, "count": self.count}
        return (Step(self.request, self.ids, before),)

    def write_snapshot(self) -> int:
        return write_users_csv(self.snapshot, self.users)

    @property
    def ids(self) -> list[int]:
        return [u.id for u in self.users]

    @property
    def count(self) -> int:
        return len(self.users)

    @property
    def question(self) -> str:
        return f"Delete {plural(self.count, 'inactive user')}?"

    def named(self) -> list[str]:
        """The first users, by name, and how many more."""
        return first_named([user_label(u) for u in self.users[:NAMED]], self.count, NAMED)

    @property
    def confirm_text(self) -> str | None:
        """What the person types to confirm: the number of users when more than one (None for
        one user: asked yes or no)."""
        return count_to_type(self.count)

    def lines(self) -> list[str]:
        """Everything the confirmation says, one sentence a line; the last says what to type
        when typing is asked."""
        lines = [
            f"{plural(self.count, 'user')} will be deleted on {self.server} (connection "
            f"“{self.connection}”): {', '.join(self.named())}.",
            f"A snapshot of them is written first to {self.snapshot}.",
            "A deleted user cannot be brought back: this cannot be undone.",
        ]
        if self.confirm_text is not None:
            lines.append(f"To confirm, type the number of users: {self.confirm_text}")
        return lines

    def confirmed_by(self, typed: str) -> bool:
        """Whether `typed` confirms the plan (always, for one user)."""
        return typed_confirms(self.confirm_text, typed)


def plan_deletion(users: Sequence[InactiveUserLike], journal: Journal) -> DeletePlan:
    """The plan to delete `users` (each once, in order) through the connection of `journal`.
    `ValueError` when there is none to delete or an id is not a user id."""
    first: dict[int, InactiveUserLike] = {}
    for user in users:
        first.setdefault(user.id, user)
    unique = tuple(first.values())
    if not unique:
        raise ValueError("no users to delete: select some first")
    request = delete_inactive_users_request(u.id for u in unique)
    return DeletePlan(
        users=unique,
        journal=journal,
        snapshot=journal.new_file(DELETE_INACTIVE_USERS.key, ".csv"),
        request=request,
    )
