"""Granting, changing and revoking project roles (`project_access.grant`, `.set_roles`,
`.revoke`; Unleash Pro and Enterprise): the one path `flagdesk access` (and a window, later)
takes, through the runner.

A plan is made from the project's access as just read (`AdminClient.project_access`), which is
also its snapshot (written whole before the first request), and names each user or group it
changes with the roles held before and after:

- `plan_grant`: roles to users and groups, one `POST /api/admin/projects/:p/access` (Unleash
  keeps the pairs held already: the entry records, per user and group, the roles it did not
  hold before, `added`, which is what an undo takes away again);
- `plan_set`: a user's or group's roles in the project replaced (`PUT .../roles`), one request
  each (Unleash has no bulk form); also what `revoke --role R` is (the roles held, less R);
- `plan_revoke`: every role of users or groups in the project removed (`DELETE .../roles`).

Unleash refuses (403) a caller who is neither an Admin nor the project's Owner; the plans do
not guess: the server's refusal is the answer, journaled as failed.

Undo (`app.actions.undo`), from the entry and the project's access now: a grant by setting each
user's and group's roles to those held now less the ones the grant added (exactly what was
added goes); a change of roles by setting the previous roles again; a revocation by granting
the previous roles again. Each is carried out by the runner as a change of its own, naming the
entry it undoes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from app.actions.journal import Entry, Journal
from app.actions.runner import PlanBase, Step
from app.actions.snapshots import write_whole
from app.api.client import (
    WriteRequest,
    add_project_access_request,
    remove_project_access_request,
    set_project_roles_request,
)
from app.api.models import AddProjectAccess, Group, ProjectAccess, Role, User
from app.changes import Changes, Resource
from app.registry import (
    GRANT_PROJECT_ACCESS,
    REVOKE_PROJECT_ACCESS,
    SET_PROJECT_ROLES,
    Action,
)
from app.text import plural

__all__ = [
    "AccessPlan",
    "Change",
    "NotFound",
    "Subject",
    "find_groups",
    "find_roles",
    "find_users",
    "plan_grant",
    "plan_revoke",
    "plan_set",
    "plan_undo_of",
    "roles_held",
]

Kind = Literal["user", "group"]


class NotFound(ValueError):
    """Words that name no user, group or project role; `str()` says which."""


@dataclass(frozen=True)
class Subject:
    """A user (or service account) or a group, as a change names it."""

    kind: Kind
    id: int
    label: str

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.id}"

    @property
    def text(self) -> str:
        return f"{self.kind} “{self.label}” (id {self.id})"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "id": self.id, "label": self.label}


@dataclass(frozen=True)
class Change:
    """One user's or group's roles in the project: before, after, and (a grant) those added."""

    subject: Subject
    before: tuple[int, ...]
    after: tuple[int, ...]

    @property
    def added(self) -> tuple[int, ...]:
        return tuple(r for r in self.after if r not in self.before)


# ---------------------------------------------------------------------------- finding


def _user_label(user: User) -> str:
    return user.email or user.username or user.name or f"user {user.id}"


def find_users(asked: Sequence[str], users: Sequence[User], access: ProjectAccess,
               *, any_id: bool = False) -> list[Subject]:  # fmt: skip
    """The users (or service accounts) `asked` names, each by email (any case), username or
    id, among the server's users and those the project's access lists (service accounts are
    in no users' list). With `any_id` (the users could not be listed: the token's user is the
    project's Owner, no Admin) an id is taken as it is, for the server to check. `NotFound`
    naming every word that names none."""
    known: dict[int, User] = {u.id: u for u in users}
    for held in access.users:
        known.setdefault(held.id, User.model_validate(held.model_dump()))
    found: dict[int, Subject] = {}
    missing = []
    for word in asked:
        folded = word.strip().casefold()
        match = [u for u in known.values() if (u.email or "").casefold() == folded and u.email]
        match = match or [u for u in known.values()
                          if (u.username or "").casefold() == folded and u.username]  # fmt: skip
        if not match and folded.isdigit():
            match = [u for u in known.values() if u.id == int(folded)]
            if not match and any_id:
                match = [User(id=int(folded))]
        if not match:
            missing.append(word)
            continue
        user = match[0]
        found.setdefault(user.id, Subject("user", user.id, _user_label(user)))
    if missing:
        raise NotFound("no user or service account has the email, username or id "
                       + ", ".join(f"“{w}”" for w in missing))  # fmt: skip
    return list(found.values())


def find_groups(asked: Sequence[str], groups: Sequence[Group]) -> list[Subject]:
    """The groups `asked` names, each by name (exactly, else in any case) or id."""
    found: dict[int, Subject] = {}
    missing = []
    for word in asked:
        match = [g for g in groups if g.name == word]
        match = match or [g for g in groups if g.name.casefold() == word.strip().casefold()]
        if not match and word.strip().isdigit():
            match = [g for g in groups if g.id == int(word.strip())]
        if not match:
            missing.append(word)
            continue
        found.setdefault(match[0].id, Subject("group", match[0].id, match[0].name))
    if missing:
        raise NotFound("no group is named or numbered " + ", ".join(f"“{w}”" for w in missing))
    return list(found.values())


def find_roles(asked: Sequence[str], roles: Sequence[Role]) -> list[Role]:
    """The project roles `asked` names, by name (any case) or id, among `roles` (the project's
    access lists every project role). `NotFound` naming the words and the roles there are."""
    found: dict[int, Role] = {}
    missing = []
    for word in asked:
        folded = word.strip().casefold()
        match = [r for r in roles if r.name.casefold() == folded]
        if not match and folded.isdigit():
            match = [r for r in roles if r.id == int(folded)]
        if not match:
            missing.append(word)
            continue
        found.setdefault(match[0].id, match[0])
    if missing:
        names = ", ".join(r.name for r in roles) or "none"
        raise NotFound(f"no project role is named {', '.join(f'“{w}”' for w in missing)} "
                       f"(the project roles: {names})")  # fmt: skip
    return list(found.values())


def roles_held(access: ProjectAccess, subject: Subject) -> tuple[int, ...]:
    """The roles `subject` holds in the project, as its access lists them."""
    holders: Sequence[Any] = access.users if subject.kind == "user" else access.groups
    for holder in holders:
        if holder.id == subject.id:
            return tuple(holder.roles)
    return ()


# ---------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class AccessPlan(PlanBase):
    journal: Journal
    action: Action
    project: str
    changes: tuple[Change, ...]
    requests: tuple[WriteRequest, ...]
    #: the project's access as read: the snapshot
    access: ProjectAccess
    snapshot: Path
    #: role id -> name, for the words
    role_names: Mapping[int, str]
    #: the journal entry this plan undoes ("" when it is not an undo)
    undoes: str = ""

    @property
    def nothing(self) -> str:
        return "Nothing was changed."

    @property
    def announced(self) -> tuple[Changes, ...]:
        return (Changes.of(Resource.PROJECTS, self.project),)

    def write_snapshot(self) -> None:
        text = self.access.model_dump_json(indent=2)

        def fill(f: Any) -> int:
            f.write(text)
            return 1

        write_whole(self.snapshot, fill)

    def _before(self, changes: Sequence[Change]) -> dict[str, Any]:
        before: dict[str, Any] = {
            "snapshot": self.snapshot.name,
            "project": self.project,
            "subjects": [
                {
                    **c.subject.to_json(),
                    "roles": list(c.before),
                    "to": list(c.after),
                    "added": list(c.added),
                }
                for c in changes
            ],
        }
        if self.undoes:
            before["undoes"] = self.undoes
        return before

    def steps(self) -> tuple[Step, ...]:
        if self.action is GRANT_PROJECT_ACCESS:  # one request for every user and group
            (request,) = self.requests
            return (Step(request, [self.project, *(c.subject.key for c in self.changes)],
                         self._before(self.changes), with_body=True),)  # fmt: skip
        return tuple(
            Step(request, [self.project, change.subject.key], self._before([change]),
                 with_body=True)
            for change, request in zip(self.changes, self.requests, strict=True)
        )  # fmt: skip

    def names(self, roles: Sequence[int]) -> str:
        return ", ".join(self.role_names.get(r, f"role {r}") for r in roles) or "none"

    @property
    def question(self) -> str:
        who = (self.changes[0].subject.text if len(self.changes) == 1
               else plural(len(self.changes), "user or group", "users and groups"))  # fmt: skip
        if self.undoes:
            return f"Undo the change of project access in “{self.project}” for {who}?"
        if self.action is GRANT_PROJECT_ACCESS:
            roles = self.names(sorted({r for c in self.changes for r in c.after
                                       if r not in c.before}))  # fmt: skip
            return f"Grant {roles} in project “{self.project}” to {who}?"
        if self.action is REVOKE_PROJECT_ACCESS:
            return f"Revoke every role of {who} in project “{self.project}”?"
        return f"Change the roles of {who} in project “{self.project}”?"

    def lines(self) -> list[str]:
        lines = [f"In project “{self.project}” on {self.server} (connection "
                 f"“{self.journal.actor.connection}”):"]  # fmt: skip
        for change in self.changes:
            lines.append(f"{change.subject.text}: {self.names(change.before)} → "
                         f"{self.names(change.after)}")  # fmt: skip
        lines.append(f"The project's access as it is now is written first to {self.snapshot}.")
        lines.append("It can be undone (flagdesk journal undo ENTRY).")
        return lines

    def partly(self, steps: int) -> str:
        return f"{steps:,} of {plural(len(self.changes), 'change')} went through"


def _plan(
    action: Action,
    project: str,
    access: ProjectAccess,
    changes: Sequence[Change],
    requests: Sequence[WriteRequest],
    journal: Journal,
    undoes: str,
) -> AccessPlan:
    return AccessPlan(
        journal, action, project, tuple(changes), tuple(requests), access,
        journal.new_file(action.key, ".json"), {r.id: r.name for r in access.roles}, undoes,
    )  # fmt: skip


def plan_grant(project: str, access: ProjectAccess, subjects: Sequence[Subject],
               roles: Sequence[int], journal: Journal, undoes: str = "") -> AccessPlan:  # fmt: skip
    """The plan to give every one of `roles` to every one of `subjects` in `project`.
    `ValueError` for no roles or no one, or when each already holds them all."""
    if not roles:
        raise ValueError("no role to grant")
    if not subjects:
        raise ValueError("no user or group to grant roles to")
    changes = []
    for subject in subjects:
        before = roles_held(access, subject)
        after = before + tuple(r for r in dict.fromkeys(roles) if r not in before)
        changes.append(Change(subject, before, after))
    if not any(c.added for c in changes):
        raise ValueError(f"each already holds these roles in “{project}”: nothing to grant")
    body = AddProjectAccess(
        roles=list(dict.fromkeys(roles)),
        groups=[s.id for s in subjects if s.kind == "group"],
        users=[s.id for s in subjects if s.kind == "user"],
    )
    return _plan(GRANT_PROJECT_ACCESS, project, access, changes,
                 [add_project_access_request(project, body)], journal, undoes)  # fmt: skip


def plan_set(project: str, access: ProjectAccess, changes: Sequence[tuple[Subject, Sequence[int]]],
             journal: Journal, undoes: str = "") -> AccessPlan:  # fmt: skip
    """The plan to set each subject's roles in `project` to those given (`[]`: none), one
    request each. `ValueError` when nothing would change."""
    made = [Change(s, roles_held(access, s), tuple(dict.fromkeys(r))) for s, r in changes]
    made = [c for c in made if set(c.before) != set(c.after)]
    if not made:
        raise ValueError(f"the roles in “{project}” are already those: nothing to change")
    requests = [set_project_roles_request(project, c.subject.kind, c.subject.id, c.after)
                for c in made]  # fmt: skip
    return _plan(SET_PROJECT_ROLES, project, access, made, requests, journal, undoes)


def plan_revoke(project: str, access: ProjectAccess, subjects: Sequence[Subject],
                journal: Journal, role: int | None = None) -> AccessPlan:  # fmt: skip
    """The plan to remove every role of `subjects` in `project` (`DELETE`, one each), or with
    `role` only that one (a change of roles: `PUT` of the others). `ValueError` naming who
    holds nothing to revoke."""
    if not subjects:
        raise ValueError("no user or group to revoke")
    holding = [s for s in subjects if roles_held(access, s) and
               (role is None or role in roles_held(access, s))]  # fmt: skip
    idle = [s for s in subjects if s not in holding]
    if idle:
        what = "that role" if role is not None else "any role"
        raise ValueError(f"{', '.join(s.text for s in idle)} does not hold {what} in "
                         f"“{project}”: nothing to revoke")  # fmt: skip
    if role is not None:
        rest = [(s, [r for r in roles_held(access, s) if r != role]) for s in holding]
        return plan_set(project, access, rest, journal)
    changes = [Change(s, roles_held(access, s), ()) for s in holding]
    requests = [remove_project_access_request(project, s.kind, s.id) for s in holding]
    return _plan(REVOKE_PROJECT_ACCESS, project, access, changes, requests, journal, "")


# ---------------------------------------------------------------------------- undo


def _subjects_of(entry: Entry) -> list[dict[str, Any]]:
    before = entry.before if isinstance(entry.before, dict) else {}
    subjects = before.get("subjects")
    return [s for s in subjects if isinstance(s, dict)] if isinstance(subjects, list) else []


def _subject(data: Mapping[str, Any]) -> Subject:
    kind = data.get("kind")
    if kind not in ("user", "group") or not isinstance(data.get("id"), int):
        raise ValueError("the entry does not say which user or group it changed")
    return Subject(kind, int(data["id"]), str(data.get("label") or data["id"]))


def _ids(value: Any) -> list[int]:
    return [r for r in value if isinstance(r, int)] if isinstance(value, list) else []


def plan_undo_of(entry: Entry, access: ProjectAccess, journal: Journal) -> AccessPlan:
    """The plan that undoes `entry` (a grant, a change of roles or a revocation), from the
    project's access now (`access`). `ValueError` saying why there is nothing to undo."""
    before = entry.before if isinstance(entry.before, dict) else {}
    project = str(before.get("project") or "")
    subjects = _subjects_of(entry)
    if not project or not subjects:
        raise ValueError("the entry does not name its project and who it changed")
    if entry.action == REVOKE_PROJECT_ACCESS.key:  # grant the previous roles again
        (one,) = subjects
        return plan_grant(project, access, [_subject(one)], _ids(one.get("roles")), journal,
                          undoes=entry.id)  # fmt: skip
    targets: list[tuple[Subject, Sequence[int]]] = []
    for data in subjects:
        subject = _subject(data)
        if entry.action == GRANT_PROJECT_ACCESS.key:  # take away exactly what was added
            added = set(_ids(data.get("added")))
            targets.append((subject, [r for r in roles_held(access, subject) if r not in added]))
        else:  # a change of roles: the previous ones back
            targets.append((subject, _ids(data.get("roles"))))
    return plan_set(project, access, targets, journal, undoes=entry.id)
