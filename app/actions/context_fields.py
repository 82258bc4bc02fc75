"""Creating, editing and deleting context fields (`context_fields.create`, `.edit`, `.delete`),
and undoing an edit or a deletion: the one path the context-usage window and `flagdesk context`
share.

1. A plan fixes what will happen before it is confirmed: the field, the server, the connection,
   the exact request (built by the client's own request functions) and, for an edit or a
   deletion, where the snapshot goes. `FieldPlan.lines()` is the confirmation, the same words in
   the dialog and on the terminal.
2. `app.actions.runner.carry_out(client, plan)` writes the snapshot (the field as the server gave
   it, JSON, fsync'ed) into the journal's folder on a worker thread, then the journal's `sent` line,
   then sends the request and completes the entry with the answer.

Unleash 7+ refuses to delete a field that a strategy of a live flag uses (409): `plan_delete`
predicts that from the field's usage (`GET /api/admin/context/:name/strategies`) and raises
`FieldInUse`, saying which flags use it, so that nothing is sent; a 409 that comes anyway is
the client's `Conflict`.

Undo: an edit is undone by putting the previous field back (`PUT`, the whole field from the
snapshot), a deletion by creating the field again from its snapshot (`POST`; only its creation
time is new). An undo is planned, confirmed and journaled like any change. A creation is not
undone here: deleting the new field (while nothing uses it) is the way back.

Unleash 8.2's `PUT` replaces the whole field (stickiness, sort order and legal values left out
are emptied; a description left out is kept, as measured on the 8.2 peer), so an edit always
sends every part of it; on the 8.2 peer a `PUT` leaves the sort order 0 whatever it sends, a 5
given at creation included (tests/compat/test_context_actions.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from app.actions.journal import Journal
from app.actions.runner import Done, PlanBase, Step
from app.actions.snapshots import write_whole
from app.api.client import (
    WriteRequest,
    create_context_field_request,
    delete_context_field_request,
    update_context_field_request,
)
from app.api.models import (
    ContextField,
    ContextFieldStrategy,
    CreateContextField,
    LegalValueBody,
    UpdateContextField,
)
from app.changes import Changes, Resource
from app.registry import CREATE_CONTEXT_FIELD, DELETE_CONTEXT_FIELD, EDIT_CONTEXT_FIELD, Action
from app.text import plural

__all__ = [
    "FieldChanged",
    "FieldInUse",
    "FieldPlan",
    "body_of",
    "plan_create",
    "plan_delete",
    "plan_edit",
    "plan_undo",
    "plan_undo_of",
    "read_snapshot",
    "spread",
    "usage_summary",
    "write_field_json",
]

#: the flags a refusal names before "and N more"
NAMED = 5


def spread(strategies: Sequence[ContextFieldStrategy]) -> str:
    """ "7 features across 3 projects"."""
    features = {(s.projectId, s.featureName) for s in strategies}
    projects = {s.projectId for s in strategies}
    return f"{plural(len(features), 'feature')} across {plural(len(projects), 'project')}"


def usage_summary(strategies: Sequence[ContextFieldStrategy]) -> str:
    """ "12 strategies in 7 features across 3 projects"."""
    return f"{plural(len(strategies), 'strategy', 'strategies')} in {spread(strategies)}"


class FieldInUse(Exception):
    """The field is used by strategies, so the server would refuse to delete it (409): nothing
    was sent. `usage` holds them; `str()` says so and names the first flags."""

    def __init__(self, name: str, usage: Sequence[ContextFieldStrategy]) -> None:
        self.name = name
        self.usage = list(usage)
        flags = list(dict.fromkeys(f"{s.projectId}/{s.featureName}" for s in self.usage))
        named = ", ".join(flags[:NAMED]) + (f" and {len(flags) - NAMED:,} more" if
                                            len(flags) > NAMED else "")  # fmt: skip
        super().__init__(
            f"The context field “{name}” cannot be deleted: {usage_summary(self.usage)} use it "
            f"({named}), and the server refuses to delete a field in use. Remove it from those "
            "strategies' constraints first. Nothing was sent."
        )


def body_of(field: ContextField) -> UpdateContextField:
    """Every part of `field` that a `PUT` replaces, as it is now. Made as the server holds it,
    not validated: a text the request's model refuses (control characters, which a server of
    someone else's may hold) must not stop reading, comparing or snapshotting the field."""
    return UpdateContextField.model_construct(
        description=field.description,
        stickiness=bool(field.stickiness),
        sortOrder=field.sortOrder or 0,
        legalValues=[
            LegalValueBody.model_construct(value=v.value, description=v.description)
            for v in field.legalValues
        ],
    )


def _describe(body: UpdateContextField) -> str:
    """ "description “Plan”, stickiness on, 2 legal values (gold, free)"."""
    values = body.legalValues or []
    shown = ", ".join(v.value for v in values[:NAMED]) + (", …" if len(values) > NAMED else "")
    parts = [
        f"description “{body.description}”" if body.description else "no description",
        f"stickiness {'on' if body.stickiness else 'off'}",
        plural(len(values), "legal value") + (f" ({shown})" if values else ""),
    ]
    return ", ".join(parts)


def _differences(before: UpdateContextField, after: UpdateContextField) -> list[str]:
    """What changes from `before` to `after`, a phrase each."""
    out: list[str] = []
    if (before.description or "") != (after.description or ""):
        out.append(f"description “{before.description or ''}” → “{after.description or ''}”")
    if bool(before.stickiness) != bool(after.stickiness):
        out.append(f"stickiness {'on' if after.stickiness else 'off'}")
    if (before.sortOrder or 0) != (after.sortOrder or 0):
        out.append(f"sort order {before.sortOrder or 0} → {after.sortOrder or 0}")
    old = {v.value: v.description or "" for v in before.legalValues or []}
    new = {v.value: v.description or "" for v in after.legalValues or []}
    added = [v for v in new if v not in old]
    removed = [v for v in old if v not in new]
    described = [v for v in new if v in old and old[v] != new[v]]
    if added:
        out.append(f"legal values added: {', '.join(added)}")
    if removed:
        out.append(f"legal values removed: {', '.join(removed)}")
    if described:
        out.append(f"descriptions changed: {', '.join(described)}")
    if not (added or removed) and list(old) != list(new):
        out.append("legal values reordered")
    return out


@dataclass(frozen=True)
class FieldPlan(PlanBase):
    """What a change to one context field will do, fixed before it is confirmed (a
    `runner.Plan`)."""

    action: Action
    name: str
    journal: Journal
    request: WriteRequest
    #: the field as the server gave it before the change (None: it does not exist)
    before: ContextField | None
    #: what it becomes (None for a deletion)
    after: UpdateContextField | None
    #: where the snapshot of `before` goes (None when there is nothing before)
    snapshot: Path | None
    #: the journal entry this change undoes ("" when it is not an undo)
    undoes: str = ""

    nothing = "Nothing was changed."

    @property
    def connection(self) -> str:
        return self.journal.actor.connection

    @property
    def announced(self) -> tuple[Changes, ...]:
        return (Changes.of(Resource.CONTEXT_FIELDS, self.name),)

    def steps(self) -> tuple[Step, ...]:
        record: dict[str, object] = {"field": self.name}
        if self.snapshot is not None:
            record["snapshot"] = self.snapshot.name
        if self.undoes:
            record["undoes"] = self.undoes
        if self.action is EDIT_CONTEXT_FIELD and self.before is not None:
            # what the field was: an edit in doubt is "not applied" when the server still has it
            record["body"] = body_of(self.before).model_dump(mode="json", exclude_none=True)
        return (Step(self.request, [self.name], record, with_body=True),)

    def write_snapshot(self) -> int:
        assert self.snapshot is not None and self.before is not None
        return write_field_json(self.snapshot, self.before)

    @property
    def verb(self) -> str:
        return {CREATE_CONTEXT_FIELD.key: "create", EDIT_CONTEXT_FIELD.key: "change",
                DELETE_CONTEXT_FIELD.key: "delete"}[self.action.key]  # fmt: skip

    @property
    def question(self) -> str:
        if self.undoes:
            return f"Undo the last change to the context field “{self.name}”?"
        return f"{self.verb.capitalize()} the context field “{self.name}”?"

    @property
    def button(self) -> str:
        """The confirming button's words: "Delete", "Create", "Save", "Undo"."""
        if self.undoes:
            return "Undo"
        return {"create": "Create", "change": "Save", "delete": "Delete"}[self.verb]

    def lines(self) -> list[str]:
        """Everything the confirmation says, one sentence a line."""
        where = f"on {self.server} (connection “{self.connection}”)"
        out: list[str] = []
        if self.action is CREATE_CONTEXT_FIELD:
            assert self.after is not None
            again = " again from its snapshot" if self.undoes else ""
            out.append(f"The context field “{self.name}” will be created{again} {where}: "
                       f"{_describe(self.after)}.")  # fmt: skip
        elif self.action is EDIT_CONTEXT_FIELD:
            assert self.after is not None and self.before is not None
            changes = "; ".join(_differences(body_of(self.before), self.after))
            how = "put back as it was" if self.undoes else "changed"
            out.append(f"The context field “{self.name}” will be {how} {where}: {changes}.")
            out.append("The server replaces the whole field: description, stickiness, sort "
                       "order and legal values are all sent.")  # fmt: skip
        else:
            out.append(f"The context field “{self.name}” will be deleted {where}. No strategy "
                       "uses it.")  # fmt: skip
        if self.snapshot is not None:
            out.append(f"A snapshot of the field as it is now is written first to "
                       f"{self.snapshot}.")  # fmt: skip
        if self.undoes:
            out.append("The undo is journaled like any change.")
        elif self.action is CREATE_CONTEXT_FIELD:
            out.append("Nothing is overwritten. To take it back, delete the field while no "
                       "strategy uses it.")  # fmt: skip
        elif self.action is EDIT_CONTEXT_FIELD:
            out.append("Undo, offered right after, puts the previous field back.")
        else:
            out.append("Undo, offered right after, creates it again from the snapshot (with a "
                       "new creation time).")  # fmt: skip
        return out


def _plan(
    action: Action,
    name: str,
    journal: Journal,
    request: WriteRequest,
    before: ContextField | None,
    after: UpdateContextField | None,
    undoes: str = "",
) -> FieldPlan:
    snapshot = journal.new_file(action.key, ".json") if before is not None else None
    return FieldPlan(action, name, journal, request, before, after, snapshot, undoes)


def plan_create(draft: CreateContextField, journal: Journal) -> FieldPlan:
    """The plan to create the field `draft` describes."""
    return _plan(CREATE_CONTEXT_FIELD, draft.name, journal, create_context_field_request(draft),
                 None, draft)  # fmt: skip


def plan_edit(before: ContextField, after: UpdateContextField, journal: Journal) -> FieldPlan:
    """The plan to replace `before` (the field as just read) with `after`. `ValueError` when
    nothing would change."""
    if not _differences(body_of(before), after):
        raise ValueError(f"nothing to save: the context field “{before.name}” is like this already")
    request = update_context_field_request(before.name, after)
    return _plan(EDIT_CONTEXT_FIELD, before.name, journal, request, before, after)


def plan_delete(
    before: ContextField, usage: Sequence[ContextFieldStrategy], journal: Journal
) -> FieldPlan:
    """The plan to delete `before` (the field as just read), given its usage as just read;
    `FieldInUse` when strategies use it (the server would refuse)."""
    if usage:
        raise FieldInUse(before.name, usage)
    request = delete_context_field_request(before.name)
    return _plan(DELETE_CONTEXT_FIELD, before.name, journal, request, before, None)


def plan_undo(done: FieldChanged, previous: ContextField, current: ContextField | None,
              journal: Journal) -> FieldPlan:  # fmt: skip
    """The plan to undo `done` (an edit or a deletion): `previous` is the field as its snapshot
    holds it (`read_snapshot`), `current` the field as the server has it now (None when it is
    gone). `ValueError` for a change that has no undo, or when the server's field has changed
    in a way that makes the undo unsafe (a deleted field created again meanwhile)."""
    return plan_undo_of(done.plan.action.key, previous, current, done.entry, journal)


def plan_undo_of(action: str, previous: ContextField, current: ContextField | None,
                 entry: str, journal: Journal) -> FieldPlan:  # fmt: skip
    """The plan to undo the journal's `entry`, which did `action` (a key) to the field
    `previous` (as its snapshot holds it); `current` and `ValueError` as for `plan_undo`."""
    name = previous.name
    if action == EDIT_CONTEXT_FIELD.key:
        if current is None:
            raise ValueError(f"the context field “{name}” is gone: nothing to put back")
        after = body_of(previous)
        request = update_context_field_request(name, after)
        return _plan(EDIT_CONTEXT_FIELD, name, journal, request, current, after, entry)
    if action == DELETE_CONTEXT_FIELD.key:
        if current is not None:
            raise ValueError(f"a context field “{name}” exists again: it is not recreated")
        draft = CreateContextField(name=name, **body_of(previous).model_dump())
        request = create_context_field_request(draft)
        return _plan(CREATE_CONTEXT_FIELD, name, journal, request, None, draft, entry)
    raise ValueError("a creation is undone by deleting the field")


def write_field_json(path: Path, field: ContextField) -> int:
    """Write `field` as the server gave it to `path` as JSON, whole or not at all (see
    `write_whole`)."""

    def fill(f: TextIO) -> int:
        f.write(field.model_dump_json(exclude_none=True, indent=2) + "\n")
        return 1

    return write_whole(path, fill)


def _read(path: Path) -> ContextField:
    return ContextField.model_validate_json(path.read_bytes())


async def read_snapshot(path: Path) -> ContextField:
    """The field a snapshot holds (read on a worker thread)."""
    return await asyncio.to_thread(_read, path)


@dataclass(frozen=True)
class FieldChanged:
    """A change the server answered with success."""

    plan: FieldPlan
    status: int
    #: the journal's file and this entry's id in it
    journal: Path
    entry: str

    @classmethod
    def of(cls, done: Done) -> FieldChanged:
        """What `runner.carry_out` did with a `FieldPlan`."""
        return cls(done.plan, done.status, done.journal, done.entry)

    @property
    def undoable(self) -> bool:
        """An edit or a deletion (not itself an undo) can be undone."""
        return not self.plan.undoes and self.plan.action is not CREATE_CONTEXT_FIELD
