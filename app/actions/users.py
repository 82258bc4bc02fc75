"""Creating, editing and deleting a user and making a password reset link (`users.create`,
`users.edit`, `users.delete`, `users.reset_password`): the one path the Users window and
`flagdesk users create|delete|reset-password` share, as `app.actions.inactive_users` is for
inactive users.

Each action is planned first (`plan_create`, `plan_edit`, `plan_delete`, `plan_reset`): the plan
fixes the exact request, the server and the connection, and says in `lines()` what the
confirmation shows. `app.actions.runner.carry_out(client, plan)` carries it out: for a deletion
the snapshot of the user first (JSON, fsync'ed, on a worker thread), the journal's `sent` line,
the request, the entry completed. `Created.of`, `edited_user` and `reset_link` read the answer.

- The last Admin is never deleted or demoted: Unleash would do it (and lock everyone out of user
  administration). A plan made knowing the server's Admins (`admins`, from `GET
  /api/admin/user-admin/admin-count` or the list of users) says so in `refused`, before any
  confirmation and in `--dry-run`; the runner asks again just before sending (`refusal`) and
  stops with `Refused`, nothing written or sent.
- Creating waits out the server's limit on new users (Unleash: 20 a minute): the runner waits
  for a 429 as `Retry-After` says, second by second through `on_wait`, so a window can show the
  wait; it is never reported as a failure.
- An edit can be undone: `plan_undo` makes the plan that puts back the previous values, carried
  out (and journaled) as any edit. A deleted user cannot be brought back: the confirmation says
  so, and the snapshot is what is left of them.
- A reset link (`plan_reset`): its confirmation says that anyone with the link can set the
  password (Unleash keeps it 24 hours). Unleash's reset-password body `{id}` is the user's
  **email**, not the id (idSchema); the link is not written to the journal.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TextIO

from app.actions.journal import Journal
from app.actions.runner import Done, PlanBase, Step
from app.actions.runner import journal_of as journal_of
from app.actions.snapshots import write_whole
from app.api.client import (
    WriteRequest,
    create_user_request,
    delete_user_request,
    reset_password_request,
    update_user_request,
)
from app.api.models import CreateUser, ResetPasswordLink, Role, UpdateUser, User
from app.changes import Changes, Resource
from app.registry import CREATE_USER, DELETE_USER, EDIT_USER, RESET_PASSWORD

if TYPE_CHECKING:
    from app.api.client import AdminClient

__all__ = [
    "ADMIN",
    "PREDEFINED_ROOT_ROLES",
    "CreatePlan",
    "Created",
    "DeleteUserPlan",
    "EditPlan",
    "NotARootRole",
    "ResetPlan",
    "admin_problem",
    "edited_user",
    "last_admin",
    "plan_create",
    "plan_delete",
    "plan_edit",
    "plan_reset",
    "plan_undo",
    "predefined_root_role",
    "reset_link",
    "role_of",
    "root_role_of",
    "user_label",
]

#: the root role that administers users
ADMIN = "Admin"


#: the root roles every Unleash has (type `root`), which a request may name (its schema also
#: names Owner and Member, which are project roles: the server refuses them as a root role)
PREDEFINED_ROOT_ROLES = ("Admin", "Editor", "Viewer")
#: the predefined project roles: held in a project, never a user's root role
PROJECT_ROLES = ("Owner", "Member")
#: role types that are not root roles (the server's `rootRoles` should hold none)
_PROJECT_ROLE_TYPES = ("project", "custom")


class NotARootRole(ValueError):
    """A root role asked for that the server does not have; `str()` says so and names the
    root roles it has."""


def predefined_root_role(asked: str) -> str | None:
    """The predefined root role `asked` names (any case), or None."""
    folded = asked.strip().casefold()
    return next((n for n in PREDEFINED_ROOT_ROLES if n.casefold() == folded), None)


def root_role_of(asked: str, roles: Sequence[Role], server: str) -> tuple[str, int | str]:
    """The root role `asked` names among the server's `roles` (the `rootRoles` of `GET
    /api/admin/user-admin`: the predefined root roles and any custom ones), by name (exact,
    else in any case) or by id: its name, and what a creation sends for it, the name of a
    predefined one (as the window sends it, and Unleash echoes it), the id of a custom one
    (the request's schema names no other role). `NotARootRole` when it names none of them,
    saying which it names (a project role) and naming the server's root roles."""
    listed = [r for r in roles if r.type not in _PROJECT_ROLE_TYPES]
    text = asked.strip()
    if listed:
        found = (
            [r for r in listed if r.name == text]
            or [r for r in listed if r.name.casefold() == text.casefold()]
            or [r for r in listed if str(r.id) == text]
        )
        if len(found) == 1:
            (role,) = found
            return role.name, role.name if role.name in PREDEFINED_ROOT_ROLES else role.id
        names = ", ".join(r.name for r in listed)
    else:  # a server that lists none: the predefined ones, by name
        if predefined := predefined_root_role(text):
            return predefined, predefined
        names = ", ".join(PREDEFINED_ROOT_ROLES)
    if text.casefold() in (p.casefold() for p in PROJECT_ROLES):
        raise NotARootRole(
            f"“{text}” is a project role, not a root role; the root roles on {server}: {names}"
        )
    raise NotARootRole(f"“{text}” is not a root role on {server}; its root roles: {names}")


def user_label(user: User) -> str:
    """How a person recognises a user: the name, else the username, the email, the id."""
    return user.name or user.username or user.email or f"User {user.id}"


def role_of(ref: int | str | None, roles: Mapping[int, str]) -> str | None:
    """A root role by name: `ref` is a role's id (as the server lists users), a name, or a
    number in a string; `roles` the server's root roles by id."""
    if ref is None:
        return None
    if isinstance(ref, str):
        if not ref.strip().isdigit():
            return ref
        ref = int(ref)
    return roles.get(ref, f"Role {ref}")


def last_admin(user: User, doing: str, admins: int, server: str) -> str:
    """Why `doing` ("delete", "make Editor") to `user`, an Admin, must not be done when the
    server has `admins` Admins who are people ("" when it may)."""
    if admins > 1:
        return ""
    return (
        f"{user_label(user)} is the only Admin on {server}: refused to {doing} them, as nobody "
        "could then manage users. Make another user Admin first."
    )


async def admin_problem(client: AdminClient, user: User, doing: str) -> str:
    """`last_admin`, the Admins counted by the server now (`GET .../admin-count`)."""
    count = await client.admin_count()
    return last_admin(user, doing, count.people, client.base_url)


@dataclass(frozen=True)
class _Plan(PlanBase):
    journal: Journal
    request: WriteRequest

    @property
    def connection(self) -> str:
        return self.journal.actor.connection

    @property
    def where(self) -> str:
        return f"{self.server} (connection “{self.connection}”)"

    @property
    def announced(self) -> tuple[Changes, ...]:
        user = getattr(self, "user", None)
        ids = (user.id,) if isinstance(user, User) else ()
        return (Changes.of(Resource.USERS, *ids),)


# ---------------------------------------------------------------------------- create


@dataclass(frozen=True)
class CreatePlan(_Plan):
    user: CreateUser
    role: str

    action = CREATE_USER
    nothing = "Nothing was created."
    snapshot: ClassVar[None] = None

    def steps(self) -> tuple[Step, ...]:
        # a 429 is waited out, second by second (the server limits new users)
        who = self.user.email or self.user.username
        return (Step(self.request, [who], None, attempts=1, wait_out_limit=True),)

    @property
    def label(self) -> str:
        u = self.user
        return u.name or u.username or u.email or "the new user"

    @property
    def question(self) -> str:
        return f"Create {self.label}?"

    def lines(self) -> list[str]:
        u = self.user
        who = ", ".join(x for x in (u.name, u.username and f"username {u.username}",
                                    u.email) if x)  # fmt: skip
        mail = (
            "A welcome email with a link to set a password is sent to them."
            if u.sendEmail
            else "No email is sent: give them the invite link yourself."
        )
        return [
            f"A user will be created on {self.where}: {who}, root role {self.role}.",
            mail,
            "It can be undone by deleting the user.",
        ]


def plan_create(user: CreateUser, role: str, journal: Journal) -> CreatePlan:
    """The plan to create `user` (`role` is its root role's name, for the confirmation)."""
    if not user.email and not user.username:
        raise ValueError("a user needs an email address or a username")
    return CreatePlan(journal, create_user_request(user), user, role)


@dataclass(frozen=True)
class Created:
    plan: CreatePlan
    user: User
    status: int
    entry: str
    #: the seconds spent waiting for the server's limit on new users
    waited: float = 0.0

    @classmethod
    async def of(cls, client: AdminClient, done: Done) -> Created:
        """What `runner.carry_out` did with a `CreatePlan`: the user the server made."""
        user = await client.read_answer(done.answer, User)
        return cls(done.plan, user, done.status, done.entry, done.waited)


# ---------------------------------------------------------------------------- edit and undo


@dataclass(frozen=True)
class EditPlan(_Plan):
    user: User
    changes: UpdateUser
    #: the changed fields' values before (what an undo puts back)
    previous: UpdateUser
    #: the root roles' names by id, for the confirmation and the admin check
    roles: Mapping[int, str] = field(default_factory=dict)
    undo: bool = False
    #: the server's Admins who are people, as last read (None: not known)
    admins: int | None = None

    action = EDIT_USER
    nothing = "Nothing was changed."
    snapshot: ClassVar[None] = None

    def steps(self) -> tuple[Step, ...]:
        before = self.previous.model_dump(mode="json", exclude_unset=True)
        return (Step(self.request, [self.user.id], {"user": before, "undo": self.undo},
                     with_body=True),)  # fmt: skip

    def demotes_admin(self) -> bool:
        if "rootRole" not in self.changes.model_fields_set:
            return False
        was = role_of(self.user.rootRole, self.roles)
        return was == ADMIN and role_of(self.changes.rootRole, self.roles) != ADMIN

    @property
    def _doing(self) -> str:
        return f"make {role_of(self.changes.rootRole, self.roles)}"

    @property
    def refused(self) -> str:
        """Why it must not be confirmed ("" when it may): it demotes the last Admin."""
        if not self.demotes_admin() or self.admins is None:
            return ""
        return last_admin(self.user, self._doing, self.admins, self.server)

    async def refusal(self, client: AdminClient) -> str:
        return await admin_problem(client, self.user, self._doing) if self.demotes_admin() else ""

    def _shown(self, values: UpdateUser, name: str) -> str:
        value = getattr(values, name)
        if name == "rootRole":
            value = role_of(value, self.roles)
        return f"“{value or ''}”"

    def describe(self, values: UpdateUser) -> str:
        """The fields set on `values`, each with its value: 'name “Greta”, root role “Admin”'."""
        return ", ".join(f"{EDIT_LABELS.get(name, name).lower()} {self._shown(values, name)}"
                         for name in sorted(values.model_fields_set))  # fmt: skip

    @property
    def question(self) -> str:
        verb = "Put back the previous values of" if self.undo else "Save the changes to"
        return f"{verb} {user_label(self.user)}?"

    def changed(self) -> list[str]:
        """Each field that changes, 'Name: “old” → “new”', the root role last and called out."""
        names = sorted(self.changes.model_fields_set, key=lambda n: (n == "rootRole", n))
        lines = []
        for name in names:
            line = (f"{EDIT_LABELS.get(name, name)}: {self._shown(self.previous, name)} → "
                    f"{self._shown(self.changes, name)}")  # fmt: skip
            if name == "rootRole":
                line += " (the root role: what they may do on the whole server)"
            lines.append(line)
        return lines

    def lines(self) -> list[str]:
        """Everything the confirmation says: where, each change on a line of its own, that it
        can be undone."""
        return [
            f"{user_label(self.user)} on {self.where} will change:",
            "\n".join(self.changed()),
            "It can be undone: Undo puts back the previous values."
            if not self.undo
            else "This undoes the last save.",
        ]


#: the user's fields as a confirmation names them
EDIT_LABELS = {"name": "Name", "email": "Email", "username": "Username",
               "rootRole": "Root role"}  # fmt: skip


def plan_edit(
    user: User,
    changes: UpdateUser,
    roles: Mapping[int, str],
    journal: Journal,
    admins: int | None = None,
) -> EditPlan:
    """The plan to change the fields set on `changes`; what they were is kept for the undo.
    `admins`: the server's Admins who are people, as last read (the plan is `refused` when it
    demotes the last one)."""
    if not changes.model_fields_set:
        raise ValueError("nothing to change")
    values = {name: getattr(user, name) for name in changes.model_fields_set}
    if isinstance(values.get("rootRole"), str):
        # Unleash 8.2 answers a creation with the role as sent ("Viewer"), and reads it back
        # as its id: the id is kept, so an edit in doubt compares like with like
        by_name = {role: role_id for role_id, role in roles.items()}
        values["rootRole"] = by_name.get(values["rootRole"], values["rootRole"])
    previous = UpdateUser.model_construct(_fields_set=set(changes.model_fields_set), **values)
    request = update_user_request(user.id, changes)
    return EditPlan(journal, request, user, changes, previous, roles, admins=admins)


def plan_undo(edit: EditPlan, answer: User) -> EditPlan:
    """The plan that puts back what `edit` changed, on the user as the server answered it."""
    data = answer.model_dump()
    for name in edit.changes.model_fields_set:  # what the answer left out is what was sent
        if name not in answer.model_fields_set:
            data[name] = getattr(edit.changes, name)
    now = User.model_validate(data)
    return EditPlan(edit.journal, update_user_request(now.id, edit.previous), now, edit.previous,
                    edit.changes, edit.roles, undo=True, admins=edit.admins)  # fmt: skip


async def edited_user(client: AdminClient, done: Done) -> User:
    """The user the server answered an `EditPlan` carried out with."""
    return await client.read_answer(done.answer, User)


# ---------------------------------------------------------------------------- delete


@dataclass(frozen=True)
class DeleteUserPlan(_Plan):
    user: User
    role: str | None
    #: where the snapshot of the user will be written
    snapshot: Path
    #: the server's Admins who are people, as last read (None: not known)
    admins: int | None = None

    action = DELETE_USER
    nothing = "Nothing was deleted."

    def steps(self) -> tuple[Step, ...]:
        return (Step(self.request, [self.user.id], {"snapshot": self.snapshot.name}),)

    def write_snapshot(self) -> None:
        _write_user(self.snapshot, self.user, self.role)

    @property
    def refused(self) -> str:
        """Why it must not be confirmed ("" when it may): it deletes the last Admin."""
        if self.role != ADMIN or self.admins is None:
            return ""
        return last_admin(self.user, "delete", self.admins, self.server)

    async def refusal(self, client: AdminClient) -> str:
        return await admin_problem(client, self.user, "delete") if self.role == ADMIN else ""

    @property
    def question(self) -> str:
        return f"Delete {user_label(self.user)}?"

    def lines(self) -> list[str]:
        u = self.user
        who = ", ".join(x for x in (u.name, u.username, u.email) if x) or f"user {u.id}"
        return [
            f"The user {who} (id {u.id}, root role {self.role or 'none'}) will be deleted on "
            f"{self.where}, with their personal access tokens and memberships.",
            f"A snapshot of the user is written first to {self.snapshot}.",
            "A deleted user cannot be brought back: this cannot be undone.",
        ]


def plan_delete(
    user: User, roles: Mapping[int, str], journal: Journal, admins: int | None = None
) -> DeleteUserPlan:
    """The plan to delete `user`; `admins` as for `plan_edit`."""
    return DeleteUserPlan(journal, delete_user_request(user.id), user,
                          role_of(user.rootRole, roles),
                          journal.new_file(DELETE_USER.key, ".json"), admins)  # fmt: skip


def _write_user(path: Path, user: User, role: str | None) -> None:
    def fill(f: TextIO) -> int:
        data: dict[str, Any] = user.model_dump(mode="json", exclude_none=True)
        data["rootRoleName"] = role
        json.dump(data, f, ensure_ascii=False, indent=2)
        f.write("\n")
        return 1

    write_whole(path, fill)


# ---------------------------------------------------------------------------- reset password


@dataclass(frozen=True)
class ResetPlan(_Plan):
    user: User

    action = RESET_PASSWORD
    nothing = "No link was made."
    snapshot: ClassVar[None] = None

    def steps(self) -> tuple[Step, ...]:
        # the link itself is not journaled (it is a credential): the answer is not recorded
        return (Step(self.request, [self.user.id], None, attempts=1),)

    @property
    def question(self) -> str:
        return f"Make a password reset link for {user_label(self.user)}?"

    def lines(self) -> list[str]:
        return [
            f"A password reset link for {user_label(self.user)} will be made on {self.where}.",
            f"Anyone with the link can set {user_label(self.user)}'s password: hand it over "
            f"privately. It expires after {RESET_LINK_HOURS} hours, or when another link is "
            "made for them; their current password keeps working until the link is used.",
        ]


#: how long Unleash keeps a reset link (its `ResetTokenService.createToken`: 24 hours)
RESET_LINK_HOURS = 24


def plan_reset(user: User, journal: Journal) -> ResetPlan:
    """`ValueError` for a user without an email: Unleash finds the user by email."""
    if not user.email:
        raise ValueError(
            f"{user_label(user)} has no email address: Unleash makes reset links only for "
            "users it can find by email."
        )
    return ResetPlan(journal, reset_password_request(user.email), user)


async def reset_link(client: AdminClient, done: Done) -> str:
    """The link the server made for a `ResetPlan` carried out."""
    return (await client.read_answer(done.answer, ResetPasswordLink)).resetPasswordUrl
