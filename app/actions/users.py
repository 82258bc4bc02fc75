"""Creating, editing and deleting a user and making a password reset link (`users.create`,
`users.edit`, `users.delete`, `users.reset_password`): the one path the Users window and
`flagdesk users create|delete|reset-password` share, as `app.actions.inactive_users` is for
inactive users.

Each action is planned first (`plan_create`, `plan_edit`, `plan_delete`, `plan_reset`): the plan
fixes the exact request, the server and the connection, and says in `lines()` what the
confirmation shows. Carrying it out (`create_user`, `edit_user`, `delete_user`,
`reset_password`) writes the journal's `sent` line (and, for a deletion, first the snapshot of
the user: JSON, fsync'ed, on a worker thread), sends, and completes the entry.

- The last Admin is never deleted or demoted: Unleash would do it (and lock everyone out of user
  administration), so `admin_problem` asks `GET /api/admin/user-admin/admin-count` first and the
  action stops with `LastAdmin` before anything is written or sent.
- Creating waits out the server's limit on new users (Unleash: 20 a minute): a 429 is waited for
  as `Retry-After` says, second by second through `on_wait`, so a window can show the wait; it
  is never reported as a failure.
- An edit can be undone: `plan_undo` makes the plan that puts back the previous values, carried
  out (and journaled) as any edit. A deleted user cannot be brought back: the confirmation says
  so, and the snapshot is what is left of them.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from app.actions.journal import Journal, Pending
from app.actions.journaled import NotStarted, send_journaled
from app.actions.journaled import journal_of as journal_of
from app.actions.snapshots import write_whole
from app.api.client import (
    WriteRequest,
    create_user_request,
    delete_user_request,
    reset_password_request,
    update_user_request,
)
from app.api.errors import RateLimited, Unsupported
from app.api.models import CreateUser, Role, UpdateUser, User
from app.registry import CREATE_USER, DELETE_USER, EDIT_USER, RESET_PASSWORD, Action

if TYPE_CHECKING:
    from app.api.client import AdminClient

__all__ = [
    "ADMIN",
    "PREDEFINED_ROOT_ROLES",
    "CreatePlan",
    "Created",
    "DeleteUserPlan",
    "EditPlan",
    "LastAdmin",
    "NotARootRole",
    "ResetPlan",
    "admin_problem",
    "create_user",
    "delete_user",
    "edit_user",
    "plan_create",
    "plan_delete",
    "plan_edit",
    "plan_reset",
    "plan_undo",
    "predefined_root_role",
    "reset_password",
    "role_of",
    "root_role_of",
    "user_label",
]

#: the root role that administers users
ADMIN = "Admin"
#: the longest `Retry-After` waited out (Unleash's window is a minute)
MAX_WAIT = 120.0


class LastAdmin(NotStarted):
    """The change would leave the server without an Admin: refused before anything was sent."""


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


async def admin_problem(client: AdminClient, user: User, doing: str) -> str:
    """Why `doing` ("delete", "make Editor") to `user`, an Admin, must not be done ("" when
    it may): it is the last Admin who is a person (`GET .../admin-count`)."""
    count = await client.admin_count()
    if count.people > 1:
        return ""
    return (
        f"{user_label(user)} is the only Admin on {client.base_url}: refused to {doing} them, "
        "as nobody could then manage users. Make another user Admin first."
    )


@dataclass(frozen=True)
class _Plan:
    server: str
    connection: str
    request: WriteRequest

    @property
    def where(self) -> str:
        return f"{self.server} (connection “{self.connection}”)"


# ---------------------------------------------------------------------------- create


@dataclass(frozen=True)
class CreatePlan(_Plan):
    user: CreateUser
    role: str

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
    actor = journal.actor
    return CreatePlan(actor.server, actor.connection, create_user_request(user), user, role)


@dataclass(frozen=True)
class Created:
    plan: CreatePlan
    user: User
    status: int
    entry: str
    #: the seconds spent waiting for the server's limit on new users
    waited: float = 0.0


async def create_user(
    client: AdminClient,
    journal: Journal,
    plan: CreatePlan,
    *,
    on_wait: Callable[[float], None] | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> Created:
    """Carry out `plan`: the journal's `sent` line, the request, the answer in the journal. A
    429 is waited out (`Retry-After`, or a second when it gives none): `on_wait(seconds left)`
    is called each second of the wait."""
    await _require(client, CREATE_USER)
    pending = await _begin(journal, CREATE_USER, [plan.user.email or plan.user.username],
                           plan, before=None, nothing="Nothing was created")  # fmt: skip
    made: list[User] = []
    waited = 0.0

    async def send() -> int:
        nonlocal waited
        while True:
            try:
                made.append(await client.create_user(plan.user, wait_out_limit=False))
                return 201
            except RateLimited as exc:
                wait = exc.retry_after if exc.retry_after is not None else 1.0
                if wait > MAX_WAIT:
                    raise
                waited += wait
                left = wait
                while left > 0:
                    if on_wait is not None:
                        on_wait(left)
                    step = min(1.0, left)
                    await sleep(step)
                    left -= step

    status = await send_journaled(pending, send())
    return Created(plan, made[0], status, pending.entry, waited)


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

    def demotes_admin(self) -> bool:
        if "rootRole" not in self.changes.model_fields_set:
            return False
        was = role_of(self.user.rootRole, self.roles)
        return was == ADMIN and role_of(self.changes.rootRole, self.roles) != ADMIN

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
    user: User, changes: UpdateUser, roles: Mapping[int, str], journal: Journal
) -> EditPlan:
    """The plan to change the fields set on `changes`; what they were is kept for the undo."""
    if not changes.model_fields_set:
        raise ValueError("nothing to change")
    values = {name: getattr(user, name) for name in changes.model_fields_set}
    if isinstance(values.get("rootRole"), str):
        # Unleash 8.2 answers a creation with the role as sent ("Viewer"), and reads it back
        # as its id: the id is kept, so an edit in doubt compares like with like
        by_name = {role: role_id for role_id, role in roles.items()}
        values["rootRole"] = by_name.get(values["rootRole"], values["rootRole"])
    previous = UpdateUser.model_construct(_fields_set=set(changes.model_fields_set), **values)
    actor = journal.actor
    request = update_user_request(user.id, changes)
    return EditPlan(actor.server, actor.connection, request, user, changes, previous, roles)


def plan_undo(edit: EditPlan, answer: User) -> EditPlan:
    """The plan that puts back what `edit` changed, on the user as the server answered it."""
    data = answer.model_dump()
    for name in edit.changes.model_fields_set:  # what the answer left out is what was sent
        if name not in answer.model_fields_set:
            data[name] = getattr(edit.changes, name)
    now = User.model_validate(data)
    return EditPlan(edit.server, edit.connection, update_user_request(now.id, edit.previous),
                    now, edit.previous, edit.changes, edit.roles, undo=True)  # fmt: skip


async def edit_user(client: AdminClient, journal: Journal, plan: EditPlan) -> User:
    """Carry out `plan` (an edit or its undo), journaled; the server's answer. `LastAdmin` when
    it would demote the last Admin."""
    await _require(client, EDIT_USER)
    if plan.demotes_admin():
        role = role_of(plan.changes.rootRole, plan.roles)
        problem = await admin_problem(client, plan.user, f"make {role}")
        if problem:
            raise LastAdmin(problem + " Nothing was changed.")
    before = plan.previous.model_dump(mode="json", exclude_unset=True)
    pending = await _begin(journal, EDIT_USER, [plan.user.id], plan,
                           before={"user": before, "undo": plan.undo},
                           nothing="Nothing was changed")  # fmt: skip
    answers: list[User] = []

    async def send() -> int:
        answers.append(await client.update_user(plan.user.id, plan.changes))
        return 200

    await send_journaled(pending, send())
    return answers[0]


# ---------------------------------------------------------------------------- delete


@dataclass(frozen=True)
class DeleteUserPlan(_Plan):
    user: User
    role: str | None
    #: where the snapshot of the user will be written
    snapshot: Path

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


def plan_delete(user: User, roles: Mapping[int, str], journal: Journal) -> DeleteUserPlan:
    actor = journal.actor
    return DeleteUserPlan(actor.server, actor.connection, delete_user_request(user.id), user,
                          role_of(user.rootRole, roles),
                          journal.new_file(DELETE_USER.key, ".json"))  # fmt: skip


def _write_user(path: Path, user: User, role: str | None) -> None:
    def fill(f: TextIO) -> int:
        data: dict[str, Any] = user.model_dump(mode="json", exclude_none=True)
        data["rootRoleName"] = role
        json.dump(data, f, ensure_ascii=False, indent=2)
        f.write("\n")
        return 1

    write_whole(path, fill)


async def delete_user(client: AdminClient, journal: Journal, plan: DeleteUserPlan) -> int:
    """Carry out `plan`: the last-Admin check, the snapshot, the journal, the request. The
    answer's status; `LastAdmin` or `NotStarted` when nothing was sent."""
    await _require(client, DELETE_USER)
    if plan.role == ADMIN:
        problem = await admin_problem(client, plan.user, "delete")
        if problem:
            raise LastAdmin(problem + " Nothing was deleted.")
    try:
        await asyncio.to_thread(_write_user, plan.snapshot, plan.user, plan.role)
    except OSError as exc:
        raise NotStarted(
            f"Could not write the snapshot {plan.snapshot}: {exc.strerror or exc}. "
            "Nothing was deleted."
        ) from None
    pending = await _begin(journal, DELETE_USER, [plan.user.id], plan,
                           before={"snapshot": plan.snapshot.name},
                           nothing="Nothing was deleted")  # fmt: skip
    return await send_journaled(pending, client.delete_user(plan.user.id))


# ---------------------------------------------------------------------------- reset password


@dataclass(frozen=True)
class ResetPlan(_Plan):
    user: User

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
    actor = journal.actor
    return ResetPlan(actor.server, actor.connection, reset_password_request(user.email), user)


async def reset_password(client: AdminClient, journal: Journal, plan: ResetPlan) -> str:
    """Carry out `plan`, journaled (the link itself is not: it is a credential); the link."""
    await _require(client, RESET_PASSWORD)
    pending = await _begin(journal, RESET_PASSWORD, [plan.user.id], plan, before=None,
                           nothing="No link was made")  # fmt: skip
    links: list[str] = []
    email = plan.user.email or ""

    async def send() -> int:
        links.append((await client.reset_password_link(email)).resetPasswordUrl)
        return 200

    await send_journaled(pending, send())
    return links[0]


# ---------------------------------------------------------------------------- shared


async def _require(client: AdminClient, action: Action) -> None:
    availability = (await client.capabilities()).action(action)
    if not availability.available:
        raise Unsupported(availability.title, availability.reason)


async def _begin(
    journal: Journal, action: Action, ids: list[Any], plan: _Plan, *, before: Any, nothing: str
) -> Pending:
    try:
        request = (plan.request.describe_with_body() if action is EDIT_USER
                   else plan.request.describe())  # fmt: skip
        return await journal.begin(action.key, ids, before=before, request=request)
    except OSError as exc:
        raise NotStarted(
            f"Could not write the journal {journal.path}: {exc.strerror or exc}. {nothing}."
        ) from None
