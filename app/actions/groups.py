"""Creating, editing and deleting a group (`groups.create`, `groups.edit`, `groups.delete`), and
undoing an edit or a deletion: the one path the groups window and `flagdesk groups delete` share.

1. A plan fixes what will happen: the group as it was read (`GET /api/admin/groups/:id`, with
   its members), the server, the connection, the exact request and where the snapshot goes.
   `plan_create` creates a group (POST; nothing before it, so no snapshot); `plan_edit` puts a
   new body on a group (PUT); `plan_delete` deletes it (DELETE); `plan_recreate` creates a
   deleted group again from its snapshot (POST: a new id, the same name, description, SSO
   mappings, root role and members). The confirmation shows `plan.lines()`.
2. `app.actions.runner.carry_out(client, plan)` writes the snapshot (the group as read, as JSON,
   fsync'ed, on a worker thread) into the journal's folder, then the journal's `sent` line naming
   it, then sends the request, then completes the entry with the answer; `group_change` reads the
   group the server answered.

Undo is a plan like any other: an edit is undone by putting the previous group back
(`plan_edit(group now, request_of(group before))`), a deletion by `plan_recreate(snapshot)`. A
deleted group's access to projects is not part of the group's API, so a recreated group does not
get it back: the confirmation of a deletion says so.

What it relies on of the server: a `PUT` carries the whole group, nulls included, since Unleash
keeps a field left out; a recreated group gets a new id (Unleash's ids are a sequence, and the
sandbox never gives a deleted group's id again); and Unleash answers `DELETE` with 200 for an id
it does not know (its group service does nothing), so the command and the window read the group
first and a missing one is a 404 before anything is sent. Groups are Unleash Enterprise's and the
sandbox's (open-source Unleash has none), so no compat test covers them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from app.actions.inactive_users import user_label
from app.actions.journal import Journal
from app.actions.runner import Done, PlanBase, Step
from app.actions.snapshots import write_whole
from app.api.client import (
    WriteRequest,
    create_group_request,
    delete_group_request,
    update_group_request,
)
from app.api.models import CreateGroup, CreateGroupMember, Group, UserRef
from app.changes import Changes, Resource
from app.registry import CREATE_GROUP, DELETE_GROUP, EDIT_GROUP, Action
from app.text import plural

if TYPE_CHECKING:
    from app.api.client import AdminClient

__all__ = [
    "GroupChange",
    "GroupPlan",
    "Kind",
    "group_change",
    "group_json",
    "plan_create",
    "plan_delete",
    "plan_edit",
    "plan_recreate",
    "read_snapshot",
    "request_of",
    "write_group_json",
]

#: the members a confirmation names before "and N more"
NAMED = 5


class Kind(StrEnum):
    CREATE = "create"
    EDIT = "edit"
    DELETE = "delete"
    RECREATE = "recreate"


#: the registry's action of each kind (recreating is creating a group)
ACTION_OF: Mapping[Kind, Action] = {
    Kind.CREATE: CREATE_GROUP,
    Kind.EDIT: EDIT_GROUP,
    Kind.DELETE: DELETE_GROUP,
    Kind.RECREATE: CREATE_GROUP,
}


def request_of(group: Group) -> CreateGroup:
    """The body that gives a group back what `group` holds (PUT it, or POST it anew). Made as
    the server holds it, not validated: a text the request's model refuses (a name with
    control characters, which a server of someone else's may hold) must not stop reading,
    comparing or snapshotting the group; only a draft typed in the form is validated."""
    return CreateGroup.model_construct(
        name=group.name,
        description=group.description,
        mappingsSSO=list(group.mappingsSSO),
        rootRole=group.rootRole,
        users=[
            CreateGroupMember.model_construct(user=UserRef.model_construct(id=m.user.id))
            for m in group.users
        ],
    )


def group_json(group: Group) -> dict[str, Any]:
    """The group as the snapshot and `--json` hold it: the wire's fields, members included."""
    return group.model_dump(mode="json", exclude_none=True)


def write_group_json(path: Path, group: Group) -> None:
    """Write the group as JSON to `path`, whole or not at all."""

    def fill(f: TextIO) -> int:
        json.dump(group_json(group), f, ensure_ascii=False, indent=2)
        return 1

    write_whole(path, fill)


def read_snapshot(path: Path) -> Group:
    """A group as `write_group_json` wrote it."""
    return Group.model_validate_json(path.read_bytes())


def _named(labels: list[str]) -> str:
    """The first labels, and how many more."""
    if len(labels) > NAMED:
        labels = [*labels[:NAMED], f"and {len(labels) - NAMED:,} more"]
    return ", ".join(labels)


@dataclass(frozen=True)
class GroupPlan(PlanBase):
    """What a change to one group will do, fixed before it is confirmed (a `runner.Plan`)."""

    kind: Kind
    #: the group as it was read (for a recreation: as its snapshot holds it; for a creation:
    #: the group to be, its id 0)
    group: Group
    #: the body sent (None to delete)
    body: CreateGroup | None
    journal: Journal
    #: where the snapshot of `group` is written (None for a creation: nothing is there yet)
    snapshot: Path | None
    request: WriteRequest
    #: root roles' names by id, for the confirmation
    roles: Mapping[int, str]
    #: this plan undoes an earlier change
    undo: bool = False

    nothing = "Nothing was changed."

    @property
    def action(self) -> Action:
        return ACTION_OF[self.kind]

    @property
    def connection(self) -> str:
        return self.journal.actor.connection

    @property
    def announced(self) -> tuple[Changes, ...]:
        ids = () if self.kind in (Kind.CREATE, Kind.RECREATE) else (self.group.id,)
        return (Changes.of(Resource.GROUPS, *ids),)

    def steps(self) -> tuple[Step, ...]:
        before: dict[str, Any] = {
            "name": self.group.name,
            "members": len(self.group.users),
            "undo": self.undo,
        }
        if self.snapshot is not None:
            before = {"snapshot": self.snapshot.name, **before}
        if self.kind is Kind.EDIT:
            # the group as a body: an edit in doubt is "not applied" when the server still has it
            before["body"] = request_of(self.group).model_dump(mode="json")
        ids: list[Any] = [self.group.name] if self.kind is Kind.CREATE else [self.group.id]
        return (Step(self.request, ids, before, with_body=True),)

    def write_snapshot(self) -> None:
        assert self.snapshot is not None
        write_group_json(self.snapshot, self.group)

    @property
    def title(self) -> str:
        return f"{'Undo: ' if self.undo else ''}{self.action.title}"

    @property
    def question(self) -> str:
        name = self.group.name
        if self.kind is Kind.EDIT:
            return f"{'Put back' if self.undo else 'Save the changes to'} group “{name}”?"
        if self.kind is Kind.DELETE:
            return f"Delete group “{name}”?"
        if self.kind is Kind.CREATE:
            return f"Create group “{name}”?"
        return f"Recreate group “{name}”?"

    @property
    def button(self) -> str:
        """The confirming button's text, with its mnemonic."""
        return {Kind.CREATE: "&Create", Kind.EDIT: "&Save", Kind.DELETE: "&Delete group",
                Kind.RECREATE: "&Recreate"}[self.kind]  # fmt: skip

    def _role(self, role: int | None) -> str:
        return "none" if role is None else self.roles.get(role, f"role {role}")

    def changes(self, people: Mapping[int, str] | None = None) -> list[str]:
        """An edit's differences, one phrase each (empty when the body changes nothing).
        `people`: users' names by id, for members who join (the group as read names only its
        own members)."""
        people = people or {}
        g, b = self.group, self.body
        if b is None:
            return []
        out = []
        if b.name != g.name:
            out.append(f"name “{g.name}” → “{b.name}”")
        if (b.description or None) != (g.description or None):
            out.append("description changed")
        if list(b.mappingsSSO) != list(g.mappingsSSO):
            out.append(f"SSO mappings: {', '.join(b.mappingsSSO) or 'none'}")
        if b.rootRole != g.rootRole:
            out.append(f"root role {self._role(g.rootRole)} → {self._role(b.rootRole)}")
        before = {m.user.id: user_label(m.user) for m in g.users}
        after = [m.user.id for m in b.users]
        joining = [people.get(i, f"User {i}") for i in after if i not in before]
        leaving = [before[i] for i in before if i not in after]
        if joining:
            out.append(f"{len(joining)} joining ({_named(joining)})")
        if leaving:
            out.append(f"{len(leaving)} leaving ({_named(leaving)})")
        return out

    def lines(self, people: Mapping[int, str] | None = None) -> list[str]:
        """Everything the confirmation says, one sentence a line (`people` as `changes`)."""
        g = self.group
        where = f"on {self.server} (connection “{self.connection}”)"
        members = plural(len(g.users), "member")
        who = f" ({_named([user_label(m.user) for m in g.users])})" if g.users else ""
        if self.kind is Kind.EDIT:
            changes = self.changes(people) or ["nothing differs from the group as read"]
            first = (
                f"Group “{g.name}” (id {g.id}, {members}) will change {where}: "
                + "; ".join(changes)
                + "."
            )
            undo = (
                "This can be undone: Undo puts the group back as it is now."
                if not self.undo
                else "The group as it is now is in the snapshot."
            )
        elif self.kind is Kind.DELETE:
            first = f"Group “{g.name}” (id {g.id}, {members}{who}) will be deleted {where}."
            projects = (
                f" Its access to projects ({', '.join(g.projects)}) is not restored."
                if g.projects
                else ""
            )
            undo = (
                "Undo recreates it from the snapshot: a new id, the same name, description, "
                f"SSO mappings, root role and members.{projects}"
            )
        elif self.kind is Kind.CREATE:
            first = f"Group “{g.name}” will be created {where} with {members}{who}."
            undo = "Deleting it is the way back."
            return [first, undo]
        else:
            first = (
                f"Group “{g.name}” will be created again {where} with {members}{who}, "
                f"root role {self._role(g.rootRole)}: it gets a new id (it had {g.id})."
            )
            undo = "Deleting it again is the way back."
        return [first, f"A snapshot of the group is written first to {self.snapshot}.", undo]


def _plan(
    kind: Kind,
    group: Group,
    body: CreateGroup | None,
    request: WriteRequest,
    journal: Journal,
    roles: Mapping[int, str] | None,
    undo: bool,
) -> GroupPlan:
    return GroupPlan(
        kind=kind,
        group=group,
        body=body,
        journal=journal,
        snapshot=None if kind is Kind.CREATE else journal.new_file(ACTION_OF[kind].key, ".json"),
        request=request,
        roles=dict(roles or {}),
        undo=undo,
    )


def plan_create(
    body: CreateGroup, journal: Journal, roles: Mapping[int, str] | None = None
) -> GroupPlan:
    """The plan to create the group `body` describes (its members named by id)."""
    members = [{"user": {"id": m.user.id}} for m in body.users]
    group = Group.model_validate({"id": 0, "name": body.name, "description": body.description,
                                  "mappingsSSO": list(body.mappingsSSO),
                                  "rootRole": body.rootRole, "users": members})  # fmt: skip
    return _plan(Kind.CREATE, group, body, create_group_request(body), journal, roles, False)


def plan_edit(
    group: Group,
    body: CreateGroup,
    journal: Journal,
    roles: Mapping[int, str] | None = None,
    *,
    undo: bool = False,
) -> GroupPlan:
    """The plan to put `body` on `group` (as read, with its members)."""
    request = update_group_request(group.id, body)
    return _plan(Kind.EDIT, group, body, request, journal, roles, undo)


def plan_delete(
    group: Group, journal: Journal, roles: Mapping[int, str] | None = None
) -> GroupPlan:
    """The plan to delete `group` (as read, with its members)."""
    return _plan(Kind.DELETE, group, None, delete_group_request(group.id), journal, roles, False)


def plan_recreate(
    group: Group, journal: Journal, roles: Mapping[int, str] | None = None
) -> GroupPlan:
    """The plan to create a deleted group again from its snapshot (undoing a deletion)."""
    body = request_of(group)
    return _plan(Kind.RECREATE, group, body, create_group_request(body), journal, roles, True)


@dataclass(frozen=True)
class GroupChange:
    """A change the server answered with success."""

    plan: GroupPlan
    status: int
    #: the group the server answered with (an edit's and a recreation's; None for a deletion)
    answer: Group | None
    #: the journal's file and this entry's id in it
    journal: Path
    entry: str


async def group_change(client: AdminClient, done: Done) -> GroupChange:
    """What `runner.carry_out` did with a `GroupPlan`, the group the server answered read (a
    creation's, an edit's, a recreation's)."""
    plan: GroupPlan = done.plan
    answer = None
    if plan.kind is not Kind.DELETE:
        answer = await client.read_answer(done.answer, Group)
    return GroupChange(plan, done.status, answer, done.journal, done.entry)
