"""`GroupEditorModel`: the group editor's state (issue 5, operation 1, `POST /api/admin/groups`).

What it loads, together: the server's groups (for the list beside the form and the live check of
the name) and its users with the root roles (for the members and the root role). A refusal of
either list (403, 404) is not a dead end: without the groups the list is hidden and a note says
why; without the users, members and a root role cannot be chosen and a note says why. Any other
failure is the window's error, with Retry.

The form is a draft kept here (name, description, SSO group mappings, root role by name, members),
validated as it is typed. A failed Create keeps it: a 409 lands on the name, a 400's details land
on the fields their paths name, anything else (401, 403...) is said under the form. A 201 shows
the group the server returned until "Create another" clears the draft.

Opening an existing group (`open_group`, `GET /api/admin/groups/:id`) puts it, members and
all, in the same draft (`editing` is the group as read). Saving (`groups.edit`) and deleting
(`groups.delete`) go through `app.actions.groups`: `plan_save()`/`plan_delete()` fix what the
confirmation shows, `change(plan)` does it once confirmed (the snapshot written on a worker
thread, the journal, the request), then reads the group back, tells the other windows and
lists the groups again. A refused save keeps the draft as typed, with the server's words on the
fields they name. Right after a change, `plan_undo()` offers its inverse (an edit: the previous
group put back; a deletion: the group recreated from its snapshot, with a new id), which is
confirmed and journaled the same way.

QtCore only: no QtWidgets below `app/`.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, TypeVar

from PySide6.QtCore import QObject, Signal

from app.actions.groups import (
    GroupChange,
    Kind,
    group_change,
    plan_recreate,
    request_of,
)
from app.actions.groups import GroupPlan as GroupPlan  # the window shows plans through here
from app.actions.groups import plan_create as plan_group_create
from app.actions.groups import plan_delete as plan_group_delete
from app.actions.groups import plan_edit as plan_group_edit
from app.actions.journal import Journal
from app.actions.runner import journal_of
from app.api.errors import (
    BadRequest,
    ClientError,
    Conflict,
    Forbidden,
    NotFound,
    Problem,
    Unauthorized,
    Unsupported,
)
from app.api.models import (
    CreateGroup,
    CreateGroupMember,
    Group,
    GroupList,
    Role,
    User,
    UserList,
    UserRef,
    control_problem,
)
from app.changes import Changes, Resource
from app.registry import DELETE_GROUP, EDIT_GROUP, Action
from app.text import plural
from app.viewmodels.session import Session
from app.viewmodels.table import Column, TableModel, cell_text, prepare_rows
from app.viewmodels.tools import ToolViewModel

log = logging.getLogger("flagdesk.groups")

T = TypeVar("T")

#: the form's fields, by the wire's names where there is one ("members" are the wire's `users`)
NAME, DESCRIPTION, MAPPINGS, ROOT_ROLE, MEMBERS = (
    "name",
    "description",
    "mappingsSSO",
    "rootRole",
    "members",
)
FIELDS = (NAME, DESCRIPTION, MAPPINGS, ROOT_ROLE, MEMBERS)
#: the first segment of an error detail's path, and the field it belongs to
_FIELD_OF_SEGMENT = {
    "name": NAME,
    "description": DESCRIPTION,
    "mappingsSSO": MAPPINGS,
    "rootRole": ROOT_ROLE,
    "users": MEMBERS,
}
#: users shown at most in the search results (a refined search shows the others)
SEARCH_LIMIT = 200


def user_label(user: User) -> str:
    """What a person is called in the editor: their name, else username, else email."""
    return user.name or user.username or user.email or f"User {user.id}"


def user_detail(user: User) -> str:
    """The line under the name: the email, else the username (when it is not the label)."""
    detail = user.email or user.username or ""
    return "" if detail.casefold() == user_label(user).casefold() else detail


def _haystack(user: User) -> str:
    return " ".join(x for x in (user.name, user.username, user.email) if x).casefold()


def field_of_path(path: str) -> tuple[str, int | None]:
    """An error detail's path (`users[1].user.id`, `rootRole`) as (field, index): the form's
    field it belongs to ("" when none) and the list index it names, if any."""
    match = re.match(r"^\$?\.?([A-Za-z_][A-Za-z0-9_]*)(?:\[(\d+)\])?", path.strip())
    if match is None:
        return "", None
    field = _FIELD_OF_SEGMENT.get(match.group(1), "")
    index = int(match.group(2)) if match.group(2) is not None else None
    return field, index


def _detail_text(problem: Problem) -> str:
    """The detail's message without the path some servers repeat in front of it."""
    message = problem.message.strip()
    head, sep, rest = message.partition(": ")
    if sep and (head.startswith("$") or head == problem.path):
        return rest[:1].upper() + rest[1:]
    return message


async def _outcome(awaitable: Awaitable[T]) -> T | ClientError:
    try:
        return await awaitable
    except ClientError as error:
        return error


@dataclass(frozen=True)
class CreatedMember:
    user: User
    #: "joined 2026-05-01 10:12"
    joined: str
    #: "added by admin", or ""
    added_by: str = ""


class GroupEditorModel(ToolViewModel):
    #: the lists from the server (groups, users, root roles) or their notes changed
    changed = Signal()
    #: the draft, its problems, or whether Create can be pressed changed
    form_changed = Signal()
    #: a Create is on its way (True) or answered (False)
    creating_changed = Signal(bool)
    #: a group was created (`created` is set), or "Create another" cleared it
    created_changed = Signal()
    #: an existing group was opened into the form, or the form went back to a new group
    editing_changed = Signal()
    #: a save, deletion or undo started or ended (`outcome`, `outcome_error`, `undoable`)
    change_changed = Signal()

    shows = frozenset({Resource.GROUPS, Resource.USERS})

    def __init__(self, session: Session, parent: QObject | None = None) -> None:
        super().__init__("groups", session, parent)
        # ---- from the server
        self.groups: TableModel[Group] = TableModel(self._columns(), self)
        #: the server lists its groups to this token (else the list is hidden)
        self.can_list_groups = True
        #: why the groups are not listed ("" when they are)
        self.groups_note = ""
        self.users: list[User] = []
        self.root_roles: list[Role] = []
        #: why users and root roles cannot be chosen ("" when they can)
        self.users_note = ""
        self._load_task: asyncio.Task[None] | None = None
        self._reload_task: asyncio.Task[None] | None = None
        # ---- the draft
        self.name = ""
        self.description = ""
        self.mappings: list[str] = []
        #: the root role's name, "" for none
        self.root_role = ""
        self.members: list[User] = []
        #: what the server said about a field, by field (cleared when the field is edited)
        self.field_errors: dict[str, str] = {}
        #: what the server said about one member, by user id
        self.member_errors: dict[int, str] = {}
        #: why the last Create failed when no field is to blame
        self.submit_error = ""
        self.creating = False
        self.created: Group | None = None
        # ---- an existing group
        #: the group in the form, as read from the server (None: the form is a new group)
        self.editing: Group | None = None
        self._open_task: asyncio.Task[None] | None = None
        self._change_task: asyncio.Task[None] | None = None
        #: how the last change went, or the client's message when it failed
        self.outcome, self.outcome_error = "", ""
        #: what Undo would undo: the last change's plan (None when nothing can be undone)
        self.undoable: GroupPlan | None = None

    # ------------------------------------------------------------------ the window's state

    def is_loaded(self) -> bool:
        """The groups were listed on this connection, and are not being listed again: the
        whole window (the form too) shows the loading state while they are."""
        return self.loaded and not self.busy

    @property
    def waiting_text(self) -> str:
        return self.session.message  # "Connecting to …"

    @property
    def unavailable_title(self) -> str:
        return "Groups cannot be used on this connection"

    @property
    def unavailable_reason(self) -> str:
        """Why the window cannot be used on this connection ("" when it can)."""
        if self.available:
            return ""
        caps = self.session.capabilities
        if not self.session.ready or caps is None:
            return self.session.message or "Not connected."
        return caps.operation("groups").reason

    # ------------------------------------------------------------------ loading

    def load(self) -> None:
        if self.closed or (self._load_task is not None and not self._load_task.done()):
            return  # one load at a time: F5 pressed twice joins the first
        self._load_task = self.run(self._load())
        self.set_status("Loading groups and users…")

    async def _load(self) -> None:
        client = await self.session.client()
        groups_r, users_r = await asyncio.gather(
            _outcome(client.list_groups()), _outcome(client.list_users())
        )
        for outcome in (groups_r, users_r):
            if isinstance(outcome, ClientError) and not _is_refusal(outcome):
                raise outcome
        if isinstance(users_r, UserList):
            self.users = sorted(users_r.users, key=lambda u: user_label(u).casefold())
            self.root_roles = list(users_r.rootRoles)
            self.users_note = ""
        else:
            self.users, self.root_roles = [], []
            self.users_note = (
                f"The server did not list its users ({_said(users_r)}): members and a root "
                "role cannot be chosen with this token."
            )
            if self.root_role:
                self.root_role = ""
        if isinstance(groups_r, GroupList):
            await self._show_groups(groups_r.groups)
            self.can_list_groups, self.groups_note = True, ""
        else:
            self.groups.clear()
            self.can_list_groups = False
            self.groups_note = (
                f"The server did not list its groups ({_said(groups_r)}), so a name already "
                "taken is found only when you press Create."
            )
        self.loaded = True
        self.changed.emit()
        self.form_changed.emit()

    async def _show_groups(self, groups: list[Group]) -> None:
        prepared = await asyncio.to_thread(prepare_rows, self.groups.columns, groups)
        self.groups.set_prepared(prepared)

    def _reload_groups_quietly(self) -> None:
        """List the groups again without the loading state (after a Create, or a 409)."""
        if not self.can_list_groups or self.closed:
            return
        if self._reload_task is not None and not self._reload_task.done():
            return
        self._reload_task = self.run(self._reload_groups(), busy=False)

    async def _reload_groups(self) -> None:
        client = await self.session.client()
        try:
            groups = (await client.list_groups()).groups
        except ClientError as exc:  # the list stays as it was; the next F5 says more
            log.info("could not list the groups again: %s", exc)
            return
        await self._show_groups(groups)
        self.changed.emit()
        self.form_changed.emit()

    def on_changes(self, changes: Changes) -> None:
        """Groups changed elsewhere: list them again quietly; users changed: load both lists
        again (the draft stays)."""
        if changes.resource is Resource.GROUPS and self.loaded:
            self._reload_groups_quietly()
        else:
            super().on_changes(changes)

    def reset(self) -> None:
        """A new connection: forget its lists, the members and the root role (ids belong to a
        server); keep the name, description and mappings typed."""
        self._load_task = None
        self._reload_task = None
        self.groups.clear()
        self.loaded = False
        self.can_list_groups, self.groups_note = True, ""
        self.users, self.root_roles, self.users_note = [], [], ""
        self.members, self.root_role = [], ""
        self.field_errors, self.member_errors, self.submit_error = {}, {}, ""
        self._set_creating(False)
        if self.created is not None:
            self.created = None
            self.created_changed.emit()
        self._open_task = self._change_task = None
        self.undoable, self.outcome, self.outcome_error = None, "", ""
        if self.editing is not None:
            self.editing = None
            self.editing_changed.emit()
        self.change_changed.emit()
        self.changed.emit()
        self.form_changed.emit()

    # ------------------------------------------------------------------ the groups list

    def _columns(self) -> list[Column[Group]]:
        return [
            # fitted to the names (never cut); the SSO mappings take what is left, which the
            # creation date (a column the header's menu shows) left them too little of
            Column("Name", lambda g: g.name, tooltip=lambda g: g.description or None),
            Column("Members", member_count, numeric=True, width=10),
            Column("Root role", lambda g: self.role_name(g.rootRole), width=11),
            Column("SSO mappings", lambda g: ", ".join(g.mappingsSSO) or None,
                   tooltip=lambda g: "\n".join(g.mappingsSSO) or None),
            Column("Created", lambda g: g.createdAt, shown=False),
        ]  # fmt: skip

    def role_name(self, role_id: int | None) -> str | None:
        """A root role's name by id (None for no role)."""
        if role_id is None:
            return None
        for role in self.root_roles:
            if role.id == role_id:
                return role.name
        return f"role {role_id}"

    @property
    def group_names(self) -> list[str]:
        return [g.name for g in self.groups.all_rows]

    # ------------------------------------------------------------------ the draft

    def set_name(self, text: str) -> None:
        if text != self.name:
            self.name = text
            self._clear_field(NAME)
            self.form_changed.emit()

    def set_description(self, text: str) -> None:
        if text != self.description:
            self.description = text
            self._clear_field(DESCRIPTION)
            self.form_changed.emit()

    def _check_texts(self) -> None:
        """Mark the description and the mappings when they hold control characters, which the
        request refuses (`CreateGroup`): typed or pasted, or as a group read from a server of
        someone else's holds them (the name's is `name_problem`'s)."""
        problem = control_problem(self.description.strip(), lines=True)
        if problem:
            self.field_errors.setdefault(DESCRIPTION, _sentence(problem))
        for mapping in self.mappings:
            problem = control_problem(mapping)
            if problem:
                self.field_errors.setdefault(MAPPINGS, f"“{mapping}”: {problem}.")
                break

    def set_root_role(self, name: str) -> None:
        """Choose a root role by name ("" for none)."""
        if name and self.role_by_name(name) is None:
            raise ValueError(f"{name!r} is not one of the server's root roles")
        if name != self.root_role:
            self.root_role = name
            self._clear_field(ROOT_ROLE)
            self.form_changed.emit()

    def role_by_name(self, name: str) -> Role | None:
        return next((r for r in self.root_roles if r.name == name), None)

    @property
    def root_role_names(self) -> list[str]:
        return [r.name for r in self.root_roles]

    def _clear_field(self, field: str) -> None:
        self.field_errors.pop(field, None)
        self.submit_error = ""
        self._check_texts()

    # ---- SSO group mappings: a list without blanks or duplicates

    def mapping_problem(self, text: str, *, index: int | None = None) -> str:
        """Why `text` cannot be a mapping (in place of the one at `index`), or ""."""
        value = text.strip()
        if not value:
            return "An SSO group mapping cannot be blank."
        problem = control_problem(value)
        if problem:
            return _sentence(problem)
        others = [m for i, m in enumerate(self.mappings) if i != index]
        if value in others:
            return f"“{value}” is already in the list."
        return ""

    def add_mapping(self, text: str) -> str:
        """Add a mapping; returns why not ("" when added)."""
        problem = self.mapping_problem(text)
        if not problem:
            self.mappings.append(text.strip())
            self._clear_field(MAPPINGS)
            self.form_changed.emit()
        return problem

    def edit_mapping(self, index: int, text: str) -> str:
        """Change the mapping at `index`; returns why not ("" when changed)."""
        if not 0 <= index < len(self.mappings):
            return "No such mapping."
        problem = self.mapping_problem(text, index=index)
        if not problem and self.mappings[index] != text.strip():
            self.mappings[index] = text.strip()
            self._clear_field(MAPPINGS)
            self.form_changed.emit()
        return problem

    def remove_mapping(self, index: int) -> None:
        if 0 <= index < len(self.mappings):
            del self.mappings[index]
            self._clear_field(MAPPINGS)
            self.form_changed.emit()

    # ---- members

    def search_users(self, text: str) -> tuple[list[User], int]:
        """Users who are not members yet whose name, username or email holds every word of
        `text` (any case): at most `SEARCH_LIMIT` of them, and how many match in all."""
        terms = text.casefold().split()
        chosen = {u.id for u in self.members}
        matches = [
            u for u in self.users if u.id not in chosen and all(t in _haystack(u) for t in terms)
        ]
        return matches[:SEARCH_LIMIT], len(matches)

    def user(self, user_id: int) -> User | None:
        return next((u for u in self.users if u.id == user_id), None)

    def add_member(self, user_id: int) -> bool:
        """Add the user with `user_id` to the members; False when unknown or already in."""
        user = self.user(user_id)
        if user is None or any(m.id == user_id for m in self.members):
            return False
        self.members.append(user)
        self._clear_field(MEMBERS)
        self.form_changed.emit()
        return True

    def remove_member(self, user_id: int) -> None:
        before = len(self.members)
        self.members = [m for m in self.members if m.id != user_id]
        if len(self.members) != before:
            self.member_errors.pop(user_id, None)
            self._clear_field(MEMBERS)
            if self.member_errors:  # another member is still refused
                self.field_errors[MEMBERS] = next(iter(self.member_errors.values()))
            self.form_changed.emit()

    # ---- validity

    @property
    def taken_name(self) -> str:
        """The listed group's name the draft's name collides with ("" when none)."""
        name = self.name.strip()
        own = self.editing.name if self.editing is not None else None
        return name if name and name != own and name in self.group_names else ""

    @property
    def name_problem(self) -> str:
        """What is wrong with the name, as the form shows it under the field."""
        if NAME in self.field_errors:
            return self.field_errors[NAME]
        if not self.name.strip():
            return "A name is required."
        problem = control_problem(self.name.strip())
        if problem:
            return _sentence(problem)
        if self.taken_name:
            return f"A group named “{self.taken_name}” already exists."
        return ""

    @property
    def name_hint(self) -> str:
        """A remark that does not block Create: a group with the same name in another case."""
        name = self.name.strip().casefold()
        if not name or self.name_problem:
            return ""
        own = self.editing.name if self.editing is not None else None
        similar = [n for n in self.group_names if n.casefold() == name and n != own]
        return f"Note: a group named “{similar[0]}” exists." if similar else ""

    @property
    def valid(self) -> bool:
        return not self.name_problem and not any(
            self.field_errors.get(f) for f in FIELDS if f != NAME
        )

    @property
    def can_create(self) -> bool:
        return (
            self.available
            and self.loaded
            and self.valid
            and not self.creating
            and self.created is None
            and self.editing is None
        )

    def request(self) -> CreateGroup:
        """The draft as the body of `POST /api/admin/groups` (validated: `ValidationError`
        for a draft the request refuses; `valid` says whether it is one)."""
        return CreateGroup.model_validate(self._draft().model_dump())

    def _draft(self) -> CreateGroup:
        """The draft as it stands, unvalidated: to compare with a group as a server holds it
        (`request_of`), whatever either holds."""
        role = self.role_by_name(self.root_role) if self.root_role else None
        return CreateGroup.model_construct(
            name=self.name.strip(),
            description=self.description.strip() or None,
            mappingsSSO=list(self.mappings),
            rootRole=role.id if role is not None else None,
            users=[
                CreateGroupMember.model_construct(user=UserRef.model_construct(id=m.id))
                for m in self.members
            ],
        )

    # ------------------------------------------------------------------ Create

    def create(self) -> asyncio.Task[None] | None:
        """Send the draft (through the runner, journaled: `groups.create`); None when the form
        cannot be sent now."""
        if not self.can_create or self.closed:
            return None
        plan = plan_group_create(self.request(), self._journal(), self.roles_by_id)
        self.field_errors, self.member_errors, self.submit_error = {}, {}, ""
        self._set_creating(True)
        self.form_changed.emit()
        return self.run(self._create(plan, [m.id for m in self.members]), busy=False)

    async def _create(self, plan: GroupPlan, member_ids: list[int]) -> None:
        try:
            done = await self.run_plan(plan, after_sent=self._reload_groups_quietly)
            group = (await group_change(await self.session.client(), done)).answer
        except ClientError as exc:
            self._refused(exc, member_ids, "created")
        else:
            self.created = group
            self.created_changed.emit()
        finally:
            self._set_creating(False)
            if not self.closed:
                self.form_changed.emit()
        if self.submit_error:
            self.report_error(self.submit_error)

    def _refused(self, exc: ClientError, member_ids: list[int], done: str) -> None:
        """Say on the form why the server refused the draft (created or saved): a 409 on the
        name, a 400's details on their fields, anything else under the form. The draft stays."""
        if isinstance(exc, Conflict):
            self.field_errors[NAME] = exc.message or str(exc)
            self._reload_groups_quietly()  # so the live check knows the name from now on
        elif isinstance(exc, BadRequest):
            if not self._apply_details(exc, member_ids):
                self.submit_error = f"The server refused the group: {exc}"
        elif isinstance(exc, Forbidden):
            verb = "create" if done == "created" else "change"
            self.submit_error = (
                f"The token lacks the permission to {verb} groups. The server said: "
                f"{exc.message or exc}"
            )
        elif isinstance(exc, Unsupported):  # known before sending: the capabilities say so
            verb = "create" if done == "created" else "change"
            self.submit_error = f"The token cannot {verb} groups: {exc.reason}. Nothing was sent."
        elif isinstance(exc, Unauthorized):
            self.submit_error = (
                "The server did not accept the token (was it deleted or has it expired?). "
                f"The server said: {exc.message or exc}"
            )
        else:
            self.submit_error = f"The group was not {done}: {exc}"

    def _apply_details(self, exc: BadRequest, member_ids: list[int]) -> bool:
        """Put each detail on the field its path names; False when none names a field."""
        placed = False
        for problem in exc.details:
            field, index = field_of_path(problem.path)
            if not field:
                continue
            text = _detail_text(problem)
            if field == MEMBERS and index is not None and index < len(member_ids):
                user_id = member_ids[index]
                member = next((m for m in self.members if m.id == user_id), None)
                who = user_label(member) if member is not None else f"User {user_id}"
                text = f"{who}: {text}"
                self.member_errors[user_id] = text
            self.field_errors.setdefault(field, text)
            placed = True
        return placed

    def _set_creating(self, creating: bool) -> None:
        if creating != self.creating:
            self.creating = creating
            if not self.closed:
                self.creating_changed.emit(creating)

    def create_another(self) -> None:
        """Back to an empty form after a group was created."""
        self.name, self.description, self.mappings = "", "", []
        self.root_role, self.members = "", []
        self.field_errors, self.member_errors, self.submit_error = {}, {}, ""
        self.created = None
        self.created_changed.emit()
        self.form_changed.emit()

    # ------------------------------------------------------------------ the created group

    @property
    def created_fields(self) -> list[tuple[str, str]]:
        """The created group as (caption, text) rows."""
        g = self.created
        if g is None:
            return []
        count = g.userCount if g.userCount is not None else len(g.users)
        return [
            ("Id", str(g.id)),
            ("Name", g.name),
            ("Description", g.description or "—"),
            ("SSO mappings", ", ".join(g.mappingsSSO) or "—"),
            ("Root role", self.role_name(g.rootRole) or "none"),
            ("Users", f"{count:,}"),
            ("Created by", g.createdBy or "—"),
            ("Created at", cell_text(g.createdAt)),
        ]

    @property
    def created_members(self) -> list[CreatedMember]:
        g = self.created
        if g is None:
            return []
        out = []
        for member in g.users:
            added_by = f"added by {member.createdBy}" if member.createdBy else ""
            out.append(CreatedMember(member.user, f"joined {cell_text(member.joinedAt)}", added_by))
        return out

    # ------------------------------------------------------------------ an existing group

    @property
    def opening(self) -> bool:
        return self._open_task is not None and not self._open_task.done()

    @property
    def changing(self) -> bool:
        return self._change_task is not None and not self._change_task.done()

    def open_group(self, group_id: int) -> asyncio.Task[None] | None:
        """Read the group with `group_id` (with its members) into the form; None when the
        window cannot be used now."""
        if self.closed or not self.available or self.changing:
            return None
        self.outcome_error = ""
        self.set_status("Opening the group…")
        self._open_task = self.run(self._open(group_id), busy=False)
        return self._open_task

    async def _open(self, group_id: int) -> None:
        client = await self.session.client()
        try:
            group = await client.get_group(group_id)
        except ClientError as exc:
            self.outcome_error = f"Could not open the group: {exc}"
            self.report_error(self.outcome_error)
            self.change_changed.emit()
            if isinstance(exc, NotFound):
                self._reload_groups_quietly()
            return
        finally:
            self.set_status("")
        self._fill(group)

    def _fill(self, group: Group) -> None:
        """The form holds `group` as read (the draft's former text is replaced)."""
        self.editing = group
        self.name, self.description = group.name, group.description or ""
        self.mappings = list(group.mappingsSSO)
        role = next((r for r in self.root_roles if r.id == group.rootRole), None)
        self.root_role = role.name if role is not None else ""
        self.members = [m.user for m in group.users]
        self.field_errors, self.member_errors, self.submit_error = {}, {}, ""
        self._check_texts()
        if self.created is not None:
            self.created = None
            self.created_changed.emit()
        self.editing_changed.emit()
        self.form_changed.emit()

    def new_group(self) -> None:
        """Back to an empty form for a new group (what was opened is left as it is)."""
        self.editing = None
        self.create_another()
        self.editing_changed.emit()

    def _action_reason(self, action: Action) -> str:
        reason = self.action_reason(action)
        if not reason and self.changing:
            return "A change is under way."
        return reason

    @property
    def save_reason(self) -> str:
        """Why Save cannot be used now ("" when it can)."""
        reason = self._action_reason(EDIT_GROUP)
        if reason or self.editing is None:
            return reason or "Open a group first."
        if self.users_note:
            return ("The server did not list its users to this token: the group's members and "
                    "root role cannot be shown, so it cannot be changed here.")  # fmt: skip
        if not self.valid:
            return "Fix what is marked to save the group."
        if self._draft() == request_of(self.editing):
            return "Nothing has changed."
        return ""

    @property
    def unsaved_changes(self) -> str:
        """What quitting now would lose, in a sentence ("" when nothing): the opened group's
        changes not saved."""
        group = self.editing
        if group is None:
            return ""
        if self._draft() == request_of(group):
            return ""
        return f"The changes to the group “{group.name}” (id {group.id}) are not saved."

    @property
    def delete_reason(self) -> str:
        """Why Delete… cannot be used now ("" when it can)."""
        reason = self._action_reason(DELETE_GROUP)
        if not reason and self.editing is None:
            return "Open a group first."
        return reason

    @property
    def undo_reason(self) -> str:
        last = self.undoable
        if last is None:
            return "Nothing to undo."
        if last.kind is Kind.EDIT and (self.editing is None or self.editing.id != last.group.id):
            name = last.body.name if last.body is not None else last.group.name
            return f"Open group “{name}” again to undo its edit."
        return self._action_reason(last.action)

    @property
    def people(self) -> dict[int, str]:
        """Users' names by id, for the confirmation."""
        return {u.id: user_label(u) for u in self.users}

    @property
    def roles_by_id(self) -> dict[int, str]:
        return {r.id: r.name for r in self.root_roles}

    def _journal(self) -> Journal:
        caps = self.session.capabilities
        assert caps is not None  # the reasons said the connection is ready
        return journal_of(self.session.name, caps)

    def plan_save(self) -> GroupPlan | None:
        """What saving the form will do, for the confirmation; None when Save cannot be used."""
        if self.save_reason or self.editing is None:
            return None
        return plan_group_edit(self.editing, self.request(), self._journal(), self.roles_by_id)

    def plan_delete(self) -> GroupPlan | None:
        """What deleting the open group will do; None when Delete… cannot be used now."""
        if self.delete_reason or self.editing is None:
            return None
        return plan_group_delete(self.editing, self._journal(), self.roles_by_id)

    def plan_undo(self) -> GroupPlan | None:
        """The inverse of the last change: its group put back, or recreated from its
        snapshot; None when there is nothing to undo."""
        last = self.undoable
        if self.undo_reason or last is None:
            return None
        if last.kind is Kind.DELETE:
            return plan_recreate(last.group, self._journal(), self.roles_by_id)
        if self.editing is None or self.editing.id != last.group.id:
            return None
        return plan_group_edit(
            self.editing, request_of(last.group), self._journal(), self.roles_by_id, undo=True
        )

    def change(self, plan: GroupPlan) -> asyncio.Task[None] | None:
        """Carry out a confirmed `plan`; None when a change is under way, or when the
        connection changed since the plan was made (`outcome_error` says so)."""
        caps = self.session.capabilities
        if self.changing or self.closed:
            return None
        self.outcome, self.outcome_error = "", ""
        if caps is None or plan.server != caps.base_url or plan.connection != self.session.name:
            self.outcome_error = (f"Nothing was changed: the connection changed after the "
                                  f"confirmation (it named {plan.server}).")  # fmt: skip
            self.change_changed.emit()
            return None
        self.field_errors, self.member_errors, self.submit_error = {}, {}, ""
        self.set_status(f"{plan.title}…")
        self._change_task = self.run(self._change(plan), busy=False)
        self.change_changed.emit()
        self.form_changed.emit()
        return self._change_task

    async def _change(self, plan: GroupPlan) -> None:
        try:
            # the server may have changed the group even when the answer was lost: read again
            done = await self.run_plan(plan, after_sent=self._reload_groups_quietly)
            client = await self.session.client()
            change = await group_change(client, done)
        except ClientError as exc:
            self.outcome_error = str(exc)
            if plan.kind is Kind.EDIT and not plan.undo:
                self._refused(exc, [m.user.id for m in (plan.body.users if plan.body else [])],
                              "saved")  # fmt: skip
            self.report_error(self.outcome_error)
        else:
            await self._after(client, change)
        finally:
            self._change_task = None
            self.set_status("")
            if not self.closed:
                self.change_changed.emit()
                self.form_changed.emit()

    async def _after(self, client: Any, done: GroupChange) -> None:
        """A change succeeded: say so, show the group as it now is, offer its Undo."""
        plan = done.plan
        self.undoable = None if plan.undo else plan
        name = plan.body.name if plan.body is not None else plan.group.name
        if plan.kind is Kind.DELETE:
            self.outcome = f"Deleted group “{name}”. Snapshot: {plan.snapshot}"
            self.new_group()
            return
        group_id = done.answer.id if done.answer is not None else plan.group.id
        if plan.kind is Kind.RECREATE:
            self.outcome = (
                f"Recreated group “{name}” (new id {group_id}) with "
                + plural(len(plan.group.users), "member")
                + "."
            )
        else:
            self.outcome = (f"{'Put back' if plan.undo else 'Saved'} group “{name}”. "
                            f"Snapshot of before: {plan.snapshot}")  # fmt: skip
        try:
            self._fill(await client.get_group(group_id))
        except ClientError as exc:  # changed, but not read back: the list still says
            log.info("could not read the group back: %s", exc)


def _sentence(problem: str) -> str:
    """A problem of `app.api.models` (lower case, no full stop) as the form says it."""
    return problem[:1].upper() + problem[1:] + "."


def member_count(group: Group) -> int:
    return group.userCount if group.userCount is not None else len(group.users)


def _is_refusal(error: ClientError) -> bool:
    """The server says this list is not for this token or does not exist (not a failure)."""
    return isinstance(error, Forbidden | NotFound | Unsupported)


def _said(error: ClientError) -> str:
    if isinstance(error, Unsupported):
        return error.reason
    message = getattr(error, "message", "") or str(error)
    status = getattr(error, "status", None)
    return f"{status}: {message}" if status else message
