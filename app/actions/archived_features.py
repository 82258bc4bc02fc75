"""Reviving archived flags, deleting them for good, and archiving revived ones again (the undo of
a revive): the one path the archived-features window and `flagdesk archive revive|delete` share.
The actions `archived_features.revive`, `.delete` (one flag: `POST /api/admin/archive/revive/:name`,
`DELETE /api/admin/archive/:name`), `.revive_bulk`, `.delete_bulk` (many: `POST
/api/admin/projects/:p/revive` and `/delete` with `{features}`, one request per batch of up to
`BATCH` flags, never one per flag) and `.archive` (`POST /api/admin/projects/:p/archive`).

1. `plan_revive`, `plan_delete`, `plan_archive` fix what will happen: the flags (each once, all of
   the one project), the server, the connection, the exact requests and where the snapshot goes.
   The confirmation shows `plan.lines()`; deleting for good also asks the person to type
   `plan.confirm_text` (the project's id, or the flag's name for one flag).
2. `app.actions.runner.carry_out(client, plan)` writes the snapshot, a JSON file of the flags as the
   server listed them (name, type, description, project, stale, impressionData, createdAt,
   archivedAt, lastSeenAt, environments), fsync'ed, into the journal's folder on a worker thread;
   then for each request the journal's `sent` line, the request, the answer in the journal.

A flag deleted for good cannot be brought back (the snapshot is what is left of it); a revive is
undone by archiving the flags again, which Unleash 8.2 offers as one request. Unleash turns every
environment of a revived flag off; the confirmation says so. The flags a plan names were listed
as archived just before: Unleash "revives" a live flag as well (turning it off), and skips the
names it does not know.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from app.actions.journal import Journal
from app.actions.runner import PlanBase, Step, journal_of, typed_confirms
from app.actions.snapshots import wire_time, write_whole
from app.api.client import (
    WriteRequest,
    archive_features_request,
    delete_feature_request,
    delete_features_request,
    revive_feature_request,
    revive_features_request,
)
from app.changes import Changes, Resource
from app.registry import (
    ARCHIVE_FEATURES,
    DELETE_FEATURE,
    DELETE_FEATURES,
    REVIVE_FEATURE,
    REVIVE_FEATURES,
    Action,
)
from app.text import first_named, plural

if TYPE_CHECKING:
    from app.api.models import ArchivedFeature

__all__ = [
    "ARCHIVE",
    "BATCH",
    "DELETE",
    "REVIVE",
    "SNAPSHOT_FIELDS",
    "ArchivePlan",
    "action_for",
    "feature_json",
    "journal_of",
    "plan_archive",
    "plan_delete",
    "plan_revive",
    "write_features_json",
]

#: what a plan does
REVIVE, DELETE, ARCHIVE = "revive", "delete", "archive"
#: the most flags one bulk request names (2,000 flags are two requests)
BATCH = 1000
#: the flags a confirmation names before "and N more"
NAMED = 5
#: the snapshot's fields of each flag: the wire's names
SNAPSHOT_FIELDS = ("name", "type", "description", "project", "stale", "impressionData",
                   "createdAt", "archivedAt", "lastSeenAt", "environments")  # fmt: skip

#: per verb: (one flag's action, many flags' action, past tense, what stops short of it)
_VERBS: dict[str, tuple[Action, Action, str, str]] = {
    REVIVE: (REVIVE_FEATURE, REVIVE_FEATURES, "revived", "Nothing was revived."),
    DELETE: (DELETE_FEATURE, DELETE_FEATURES, "deleted for good", "Nothing was deleted."),
    ARCHIVE: (ARCHIVE_FEATURES, ARCHIVE_FEATURES, "archived again", "Nothing was archived."),
}


def action_for(verb: str, count: int) -> Action:
    """The registry's action that does `verb` to `count` flags (the bulk one for many)."""
    one, many, _past, _nothing = _VERBS[verb]
    return one if count == 1 else many


def feature_json(feature: ArchivedFeature) -> dict[str, Any]:
    """A flag as the snapshot (and `flagdesk archive list --json`) has it: the wire's fields
    and notation."""
    return {
        "name": feature.name,
        "type": feature.type,
        "description": feature.description,
        "project": feature.project,
        "stale": feature.stale,
        "impressionData": feature.impressionData,
        "createdAt": wire_time(feature.createdAt) or None,
        "archivedAt": wire_time(feature.archivedAt) or None,
        "lastSeenAt": wire_time(feature.lastSeenAt) or None,
        "environments": [
            {"name": env.name, "enabled": env.enabled,
             "lastSeenAt": wire_time(env.lastSeenAt) or None}
            for env in feature.environments or []
        ],
    }  # fmt: skip


def write_features_json(
    path: Path, server: str, project: str, features: Sequence[ArchivedFeature]
) -> int:
    """Write the flags to `path` as one JSON object (`server`, `project`, `features`), whole or
    not at all (see `write_whole`). Returns the number of flags written."""

    def fill(f: TextIO) -> int:
        body = {"server": server, "project": project,
                "features": [feature_json(x) for x in features]}  # fmt: skip
        json.dump(body, f, ensure_ascii=False, indent=1)
        f.write("\n")
        return len(features)

    return write_whole(path, fill)


@dataclass(frozen=True)
class ArchivePlan(PlanBase):
    """What reviving, deleting or archiving flags will do, fixed before it is confirmed (a
    `runner.Plan`)."""

    #: REVIVE, DELETE or ARCHIVE
    verb: str
    project: str
    features: tuple[ArchivedFeature, ...]
    journal: Journal
    #: where the snapshot will be written
    snapshot: Path
    #: one for one flag; one per batch of BATCH flags for many
    requests: tuple[WriteRequest, ...]

    @property
    def connection(self) -> str:
        return self.journal.actor.connection

    @property
    def announced(self) -> tuple[Changes, ...]:
        """The archived flags, and the live ones (a revive makes them live again)."""
        return (Changes.of(Resource.ARCHIVED_FEATURES, *self.names),
                Changes.of(Resource.FEATURES, *self.names))  # fmt: skip

    def steps(self) -> tuple[Step, ...]:
        """One a request, each naming its batch of flags."""
        steps = []
        for number, request in enumerate(self.requests):
            batch = self.names[number * BATCH : (number + 1) * BATCH]
            before = {"snapshot": self.snapshot.name, "count": len(batch),
                      "project": self.project}  # fmt: skip
            steps.append(Step(request, batch, before))
        return tuple(steps)

    def write_snapshot(self) -> int:
        return write_features_json(self.snapshot, self.server, self.project, self.features)

    def partly(self, steps: int) -> str:
        """ "2 of 5 flags were deleted for good": what the first `steps` requests did."""
        done = min(self.count, steps * BATCH)
        return f"{done:,} of {plural(self.count, 'flag')} were {self.past}"

    @property
    def names(self) -> list[str]:
        return [f.name for f in self.features]

    @property
    def count(self) -> int:
        return len(self.features)

    @property
    def action(self) -> Action:
        return action_for(self.verb, self.count)

    @property
    def past(self) -> str:
        """ "revived", "deleted for good", "archived again"."""
        return _VERBS[self.verb][2]

    @property
    def nothing(self) -> str:
        return _VERBS[self.verb][3]

    @property
    def question(self) -> str:
        flags = plural(self.count, "flag")
        return {
            REVIVE: f"Revive {flags}?",
            DELETE: f"Delete {flags} for good?",
            ARCHIVE: f"Archive {flags} again?",
        }[self.verb]

    @property
    def progress(self) -> str:
        """What a window's status says while the plan is carried out: "Reviving 3 flags…"."""
        return f"{self.question.split(' ', 1)[0][:-1]}ing {plural(self.count, 'flag')}…"

    @property
    def confirm_text(self) -> str | None:
        """What the person types to confirm: the flag's name for one flag, the project's id for
        many; None when no typing is asked (revive, archive)."""
        if self.verb != DELETE:
            return None
        return self.features[0].name if self.count == 1 else self.project

    def named(self) -> list[str]:
        return first_named(self.names[:NAMED], self.count, NAMED)

    def lines(self) -> list[str]:
        """Everything the confirmation says, one sentence a line."""
        flags = plural(self.count, "flag")
        lines = [
            f"{flags} of project “{self.project}” will be {self.past} on {self.server} "
            f"(connection “{self.connection}”): {', '.join(self.named())}.",
        ]
        if self.verb == REVIVE:
            lines.append("Revived flags come back with every environment turned off.")
        lines.append(f"A snapshot of them is written first to {self.snapshot}.")
        if self.verb == REVIVE:
            lines.append("This can be undone: Undo archives them again.")
        elif self.verb == DELETE:
            lines.append("A flag deleted for good cannot be brought back: this cannot be undone.")
            what = "the flag's name" if self.count == 1 else "the project's id"
            lines.append(f"To confirm, type {what}: {self.confirm_text}")
        else:
            lines.append("This undoes the revive: revive them again to bring them back.")
        return lines

    def confirmed_by(self, typed: str) -> bool:
        """Whether `typed` confirms the plan (always, when no typing is asked)."""
        return typed_confirms(self.confirm_text, typed)


def _plan(
    verb: str, features: Sequence[ArchivedFeature], project: str, journal: Journal
) -> ArchivePlan:
    first: dict[str, ArchivedFeature] = {}
    for feature in features:
        first.setdefault(feature.name, feature)
    unique = tuple(first.values())
    if not unique:
        raise ValueError("no flags chosen: select some first")
    strangers = [f.name for f in unique if f.project not in (None, project)]
    if strangers:
        raise ValueError(f"not flags of project {project}: {', '.join(strangers)}")
    names = [f.name for f in unique]
    if len(unique) == 1 and verb != ARCHIVE:
        one = revive_feature_request if verb == REVIVE else delete_feature_request
        requests: tuple[WriteRequest, ...] = (one(names[0]),)
    else:
        many = {REVIVE: revive_features_request, DELETE: delete_features_request,
                ARCHIVE: archive_features_request}[verb]  # fmt: skip
        requests = tuple(
            many(project, names[start : start + BATCH]) for start in range(0, len(names), BATCH)
        )
    return ArchivePlan(
        verb=verb,
        project=project,
        features=unique,
        journal=journal,
        snapshot=journal.new_file(f"archived_features.{verb}", ".json"),
        requests=requests,
    )


def plan_revive(features: Sequence[ArchivedFeature], project: str, journal: Journal) -> ArchivePlan:
    """The plan to revive `features` (each once, in order), archived flags of `project`.
    `ValueError` when there is none, or one of another project."""
    return _plan(REVIVE, features, project, journal)


def plan_delete(features: Sequence[ArchivedFeature], project: str, journal: Journal) -> ArchivePlan:
    """The plan to delete `features` for good (as `plan_revive`)."""
    return _plan(DELETE, features, project, journal)


def plan_archive(
    features: Sequence[ArchivedFeature], project: str, journal: Journal
) -> ArchivePlan:
    """The plan to archive `features` again: the undo of a revive (always one bulk request per
    batch, `archived_features.archive`)."""
    return _plan(ARCHIVE, features, project, journal)
