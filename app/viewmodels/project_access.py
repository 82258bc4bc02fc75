"""`ProjectAccessModel`: who holds which role in one project (`GET
/api/admin/projects/:p/access`, Unleash Pro and Enterprise, the sandbox): its users, service
accounts and groups with their roles, and granting, changing and revoking them through the plans
of `app.actions.project_access` and the runner. On open source the tool is unavailable with the
registry's reason (project access needs Pro or Enterprise); who can do what where there is
`app.viewmodels.access_overview`.

The project is picked like the dashboard's (`app.viewmodels.choices`); a project chosen on
another connection is checked against the new server's (`revalidated`). Whom a grant can name
comes from the server's users and groups where the token may list them (an Admin's), else from
the project's own holders (a project Owner who is no Admin).

QtCore only: no QtWidgets below `app/`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from operator import attrgetter

from PySide6.QtCore import QObject, Signal

from app.actions.journal import Journal

# the plan is re-exported: the window shows it, and reaches the actions only through here
from app.actions.project_access import AccessPlan as AccessPlan
from app.actions.project_access import Subject, plan_grant, plan_revoke, plan_set
from app.actions.runner import journal_of
from app.api import errors as e
from app.api.client import AdminClient
from app.api.models import Group, ProjectAccess, Role, User
from app.changes import Resource
from app.registry import GRANT_PROJECT_ACCESS, REVOKE_PROJECT_ACCESS, SET_PROJECT_ROLES, Action
from app.text import count_text, plural
from app.viewmodels.choices import ChoicesModel, project_choices, revalidated
from app.viewmodels.session import Session
from app.viewmodels.table import Column, TableModel, prepare_rows
from app.viewmodels.tools import ActionViewModel

#: at most this many members named in a group's tooltip (the rest counted)
MEMBERS_SHOWN = 25
SERVICE_ACCOUNT = "Service Account"


@dataclass(slots=True)
class HolderRow:
    """A user, service account or group holding roles in the project, as the table shows it."""

    subject: Subject = field(repr=False)
    #: "User", "Service account" or "Group"
    kind: str
    name: str
    #: a user's email or username; a group's description
    detail: str
    roles: tuple[int, ...]
    roles_text: str
    added: datetime | None
    #: a group's members (None for a user)
    members: int | None
    #: a group's members, one a line (the tooltip); "" for a user
    members_text: str


def _user_name(user: User) -> str:
    return user.name or user.username or user.email or f"user {user.id}"


def holder_rows(access: ProjectAccess) -> list[HolderRow]:
    names = {r.id: r.name for r in access.roles}

    def roles_text(roles: Sequence[int]) -> str:
        return ", ".join(names.get(r, f"role {r}") for r in roles)

    rows = []
    for user in access.users:
        robot = user.accountType == SERVICE_ACCOUNT
        label = user.email or user.username or user.name or f"user {user.id}"
        rows.append(HolderRow(
            Subject("user", user.id, label), "Service account" if robot else "User",
            user.name or user.username or label, user.email or user.username or "",
            tuple(user.roles), roles_text(user.roles), user.addedAt, None, "",
        ))  # fmt: skip
    for group in access.groups:
        people = [_user_name(m.user) + (f" <{m.user.email}>" if m.user.email else "")
                  for m in group.users]  # fmt: skip
        shown = "\n".join(people[:MEMBERS_SHOWN])
        if len(people) > MEMBERS_SHOWN:
            shown += f"\n… and {len(people) - MEMBERS_SHOWN:,} more"
        rows.append(HolderRow(
            Subject("group", group.id, group.name), "Group", group.name,
            group.description or "", tuple(group.roles), roles_text(group.roles),
            group.addedAt, len(group.users),
            f"{plural(len(people), 'member')} of “{group.name}”:\n{shown}" if people
            else f"“{group.name}” has no members",
        ))  # fmt: skip
    return rows


HOLDER_COLUMNS: list[Column[HolderRow]] = [
    Column("Name", attrgetter("name"), tooltip=lambda r: r.members_text or r.detail or None,
           width=22),
    Column("Kind", attrgetter("kind"), width=14),
    Column("Email / description", attrgetter("detail"), width=26),
    Column("Roles", attrgetter("roles_text"), width=20),
    Column("Members", attrgetter("members"), numeric=True,
           tooltip=lambda r: r.members_text or None),
    Column("Added", attrgetter("added")),
]  # fmt: skip
NAME_COLUMN = 0
#: the column that takes the table's spare width
DETAIL_COLUMN = 2


def holders_count_text(shown: int, total: int) -> str:
    return count_text(shown, total, "holder")


@dataclass(frozen=True)
class Candidate:
    """Someone a grant can name: a user, service account or group."""

    subject: Subject
    #: "User", "Service account", "Group"
    kind: str
    #: what the list shows: "Maria Admin <maria@example.com>", "Group: Checkout squad"
    label: str


class ProjectAccessModel(ActionViewModel):
    """One project's access: the picker's project, its holders, and the changes made here."""

    #: the project shown changed (typed, picked or corrected on a new connection)
    project_changed = Signal(str)
    #: the project's access (or the lack of it) changed
    changed = Signal()

    shows = frozenset({Resource.PROJECTS, Resource.USERS, Resource.GROUPS})

    def __init__(self, session: Session, parent: QObject | None = None) -> None:
        super().__init__("project_access", session, parent)
        self.choices: ChoicesModel = project_choices(session, self)
        self.choices.changed.connect(self._on_choices_changed)
        self.table: TableModel[HolderRow] = TableModel(HOLDER_COLUMNS, self)
        #: the project asked for ("" until one is chosen)
        self.project = ""
        #: the project `access` belongs to
        self.loaded_project = ""
        self.access: ProjectAccess | None = None
        #: whom a grant can name (users, service accounts, groups), read with the access
        self.candidates: list[Candidate] = []
        #: the note on `candidates` ("" when the server's users were listed)
        self.candidates_note = ""
        self.selected: list[HolderRow] = []
        #: what was done on a new connection with the previous connection's project
        self.notice = ""
        self._load_task: asyncio.Task[None] | None = None
        self._checking: asyncio.Task[None] | None = None
        session.state_changed.connect(self.actions_changed)

    # ------------------------------------------------------------------ the window's state

    @property
    def roles(self) -> list[Role]:
        """The project roles there are (the access lists every one)."""
        return list(self.access.roles) if self.access is not None else []

    @property
    def project_label(self) -> str:
        choice = self.choices.find(self.project) if self.project else None
        return choice.label if choice is not None else self.project

    def is_loaded(self) -> bool:
        return not self.project or (self.loaded and self.loaded_project == self.project)

    def is_empty(self) -> bool:
        return not self.project or self.table.total_count == 0

    @property
    def empty_title(self) -> str:
        if not self.project:
            return "Choose a project"
        return f"Nobody holds a role in {self.project_label}"

    @property
    def empty_text(self) -> str:
        if not self.project:
            return ("Pick one of the server's projects above, or type a project id and press "
                    "Enter, to see who holds which role in it.")  # fmt: skip
        return "Grant a role with Grant access…; Admins can change it through their root role."

    @property
    def loading_text(self) -> str:
        return self.status or f"Loading the access of {self.project_label}…"

    @property
    def failed_title(self) -> str:
        return f"Could not load the access of {self.project_label or 'the project'}"

    @property
    def waiting_text(self) -> str:
        return self.session.message or "Connecting…"

    # ------------------------------------------------------------------ loading

    def start(self) -> None:
        if self.session.ready:
            self.choices.load()
        super().start()

    def refresh(self) -> None:
        if self.closed:
            return
        if self.session.ready:
            self.choices.load()
        super().refresh()

    def show_project(self, project: str) -> None:
        """Show `project`'s access (load it, also when it is shown already)."""
        project = project.strip()
        if not project or self.closed:
            return
        if self._checking is not None:
            self._checking.cancel()
            self._checking = None
        if project != self.project:
            self.project = project
            self.selected = []
            self.project_changed.emit(project)
        self.notice = ""
        self.set_error("")
        self.changed.emit()
        if self.available:
            self.load()
        self.phase_changed.emit()

    def load(self) -> None:
        if not self.project or self.closed:
            self.changed.emit()
            return
        if self._checking is not None and not self._checking.done():
            return
        if self._load_task is not None and not self._load_task.done():
            self._load_task.cancel()  # an older project's answer is not wanted any more
        self._load_task = self.run(self._load(self.project))

    async def _load(self, project: str) -> None:
        self.set_status(f"Loading the access of {self.project_label}…")
        client = await self.session.client()
        try:
            access = await client.project_access(project)
        except e.NotFound as exc:
            raise e.ClientError(f"No project “{project}” on {self.session.name}: check the id, "
                                "or pick a project from the list.") from exc  # fmt: skip
        candidates, note = await self._candidates(client, access)
        if project != self.project:
            return
        sort = self.table.sort_state
        prepared = await asyncio.to_thread(
            prepare_rows, HOLDER_COLUMNS, holder_rows(access), [sort[0]] if sort else []
        )
        self.access = access
        self.candidates, self.candidates_note = candidates, note
        self.loaded_project = project
        self.table.set_prepared(prepared)
        self.selected = [r for r in self.table.all_rows
                         if r.subject in {s.subject for s in self.selected}]  # fmt: skip
        self.loaded = True
        self.changed.emit()
        self.phase_changed.emit()
        self.actions_changed.emit()

    async def _candidates(
        self, client: AdminClient, access: ProjectAccess
    ) -> tuple[list[Candidate], str]:
        """Whom a grant can name: the server's users and groups where the token may list them,
        else the project's own holders (and a note saying so)."""
        users: list[User] = []
        groups: list[Group] = []
        # the service accounts too (`GET /api/admin/service-account`: the users' list leaves
        # them out), where the server has them
        note = ""
        try:
            users = list((await client.list_users()).users)
        except (e.Forbidden, e.Unsupported):
            note = ("This token may not list the server's users (an Admin's may): only those "
                    "who hold a role here already are offered.")  # fmt: skip
        caps = self.session.capabilities
        if caps is not None and caps.operation("service_accounts").available:
            with contextlib.suppress(e.Forbidden, e.Unsupported):  # Enterprise's, an Admin's
                listed_users = {u.id for u in users}
                users += [
                    User(id=a.id, name=a.name, username=a.username, accountType=SERVICE_ACCOUNT)
                    for a in (await client.service_accounts()).serviceAccounts
                    if a.id not in listed_users
                ]
        if caps is not None and caps.operation("groups").available:
            with contextlib.suppress(e.Forbidden, e.Unsupported):
                groups = list((await client.list_groups()).groups)
        known = {u.id for u in users}
        for held in access.users:
            if held.id not in known:
                known.add(held.id)
                users.append(User.model_validate(held.model_dump()))
        listed = {g.id for g in groups}
        groups += [Group.model_validate(g.model_dump()) for g in access.groups
                   if g.id not in listed]  # fmt: skip
        # the groups first: fewer, and what a project's access is best given to
        out = [Candidate(Subject("group", g.id, g.name), "Group", f"Group: {g.name}")
               for g in sorted(groups, key=lambda g: g.name.casefold())]  # fmt: skip
        for user in sorted(users, key=lambda u: _user_name(u).casefold()):
            robot = user.accountType == SERVICE_ACCOUNT
            handle = user.email or user.username or ""
            name = _user_name(user)
            label = f"{name} <{handle}>" if handle and handle != name else name
            subject = Subject("user", user.id, user.email or user.username or name)
            out.append(Candidate(subject, "Service account" if robot else "User",
                                 f"{label} (service account)" if robot else label))  # fmt: skip
        return out, note

    def on_connection_changed(self) -> None:
        asked = self.project
        self.reset()
        if not (self._started and self.available):
            return
        if asked:
            self._load_task = self._checking = self.run(self._revalidate(asked))
        else:
            self.load()

    async def _revalidate(self, asked: str) -> None:
        self.set_status("Checking the project on this server…")
        listed = await self.choices.listed()
        project, self.notice = revalidated(asked, listed, self.session.name)
        if project != self.project:
            self.project = project
            self.project_changed.emit(project)
        self.changed.emit()
        await self._load(project)

    def reset(self) -> None:
        self._load_task = None
        self.loaded = False
        self.loaded_project = ""
        self.access = None
        self.candidates, self.candidates_note = [], ""
        self.selected = []
        self.notice = ""
        self.table.clear()
        self.changed.emit()
        self.actions_changed.emit()

    def _on_choices_changed(self) -> None:
        if not self.closed:
            self.changed.emit()

    # ------------------------------------------------------------------ selection

    def select(self, rows: list[HolderRow]) -> None:
        self.selected = rows
        self.actions_changed.emit()

    def _reason(self, action: Action) -> str:
        reason = self.action_reason(action)
        if reason:
            return reason
        if self.acting:
            return "Another change is under way."
        if self.access is None or self.loaded_project != self.project:
            return "Choose a project first."
        return ""

    @property
    def grant_reason(self) -> str:
        return self._reason(GRANT_PROJECT_ACCESS)

    @property
    def change_reason(self) -> str:
        reason = self._reason(SET_PROJECT_ROLES)
        if reason:
            return reason
        if len(self.selected) != 1:
            return "Select one user or group to change its roles."
        return ""

    @property
    def revoke_reason(self) -> str:
        reason = self._reason(REVOKE_PROJECT_ACCESS)
        if reason:
            return reason
        return "" if self.selected else "Select the users and groups to revoke."

    # ------------------------------------------------------------------ plans

    def _journal(self) -> Journal:
        caps = self.session.capabilities
        if caps is None:
            raise ValueError("Not connected.")
        return journal_of(self.session.name, caps)

    def plan_grant(self, subjects: Sequence[Subject], roles: Sequence[int]) -> AccessPlan:
        """The grant's plan; `ValueError` saying what is missing or why nothing would change."""
        if self.grant_reason or self.access is None:
            raise ValueError(self.grant_reason or "Choose a project first.")
        if not subjects:
            raise ValueError("Choose at least one user or group.")
        if not roles:
            raise ValueError("Choose at least one role.")
        try:
            return plan_grant(self.project, self.access, subjects, roles, self._journal())
        except ValueError as exc:
            raise ValueError(_sentence(str(exc))) from None

    def plan_change(self, roles: Sequence[int]) -> AccessPlan:
        """The plan giving the selected holder exactly `roles` (none: revoke is the way)."""
        if self.change_reason or self.access is None:
            raise ValueError(self.change_reason or "Choose a project first.")
        if not roles:
            raise ValueError("Choose at least one role (to remove them all, use Revoke).")
        (row,) = self.selected
        try:
            return plan_set(self.project, self.access, [(row.subject, list(roles))],
                            self._journal())  # fmt: skip
        except ValueError as exc:
            raise ValueError(_sentence(str(exc))) from None

    def plan_revoke(self) -> AccessPlan | None:
        if self.revoke_reason or self.access is None:
            return None
        return plan_revoke(self.project, self.access, [r.subject for r in self.selected],
                           self._journal())  # fmt: skip

    # ------------------------------------------------------------------ carrying out

    def carry_out(self, plan: AccessPlan) -> asyncio.Task[None] | None:
        """Carry out a confirmed grant, change or revocation; the outcome says how it went."""
        caps = self.session.capabilities
        if self.acting or self.closed:
            return None
        if caps is None or plan.server != caps.base_url:
            self._set_outcome_error("Nothing was changed: the connection changed after the "
                                    f"confirmation (it named {plan.server}).")  # fmt: skip
            self.action_finished.emit()
            return None
        self.clear_outcome()
        self._action_task = self.run(self._carry_out(plan), busy=False)
        self.set_status(f"{plan.action.title}: {plural(len(plan.changes), 'change')}…")
        self.actions_changed.emit()
        return self._action_task

    async def _carry_out(self, plan: AccessPlan) -> None:
        try:
            await self.run_plan(plan, after_sent=self.load)
        except e.ClientError as exc:
            self._set_outcome_error(str(exc))
            self.report_error(self.outcome_error)
        else:
            lines = [f"{c.subject.text}: {plan.names(c.before)} → {plan.names(c.after)}"
                     for c in plan.changes]  # fmt: skip
            self._set_outcome(f"{_done_word(plan.action)} in “{plan.project}”: "
                              + "; ".join(lines) + ".")  # fmt: skip
            self.selected = []
        finally:
            self._action_task = None
            self.set_status("")
            if not self.closed:
                self.action_finished.emit()
                self.actions_changed.emit()

    def close(self) -> None:
        if not self.closed:
            self.session.state_changed.disconnect(self.actions_changed)
            self.choices.close()
        super().close()


def _done_word(action: Action) -> str:
    if action is GRANT_PROJECT_ACCESS:
        return "Granted"
    if action is REVOKE_PROJECT_ACCESS:
        return "Revoked"
    return "Changed roles"


def _sentence(text: str) -> str:
    text = text[:1].upper() + text[1:]
    return text if text.endswith(".") else text + "."
