"""`UserEditorModel`: the user editor's state. A searchable list of the server's users
(`GET /api/admin/user-admin`) and a form for the selected one: name, email and root role (shown
and chosen by name, sent as the role's id), saved with `PUT /api/admin/user-admin/:id` sending
only the fields that changed.

- What the person types is a `Draft`; it is checked before anything is sent (email format, a user
  keeps an email or a username, a name or email cannot be removed: real Unleash keeps the old
  value when it gets an empty one). Drafts of other users are kept when the selection moves, and
  nothing typed is dropped when a request fails.
- The answer is shown as returned; fields it leaves out (Unleash omits `rootRole` when none was
  sent) keep their known value. The row in the list is updated in place.
- A 400 puts the server's details on the fields they name; a 404 says the user no longer exists
  and reloads the list; anything else is shown as the client's message.
- SCIM-managed users (`scimId` set) are read-only: the identity provider would overwrite changes.
- Saving is an `app.actions.users` plan carried out by the runner (the action `users.edit`):
  journaled, refused for the last Admin's demotion before any confirmation (`admins`), and
  undoable right after (`undo_plan`, `undo()`: the previous values PUT back, journaled like any
  edit).
- Creating (`plan_create`, `create`), deleting (`plan_delete`, `delete`) and reset links
  (`reset_password`) go through `app.actions.users` too; `action_reason(ACTION)` says why one
  cannot be used now ("" when it can). A create the server refuses leaves `create_error` and the
  person's form as typed (the window keeps its dialog open); a 429 is waited out with
  `create_progress` saying how long.

Which of the window's states to show is the shared `phase` (`ToolViewModel`): loaded once the
list came, empty when it holds nobody.

QtCore only: no QtWidgets below `app/`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from pydantic import ValidationError
from PySide6.QtCore import QObject, Signal

from app.actions.users import (
    ADMIN,
    Created,
    NotARootRole,
    edited_user,
    journal_of,
    plan_create,
    plan_delete,
    plan_edit,
    plan_reset,
    plan_undo,
    reset_link,
    role_of,
    root_role_of,
)
from app.actions.users import CreatePlan as CreatePlan
from app.actions.users import DeleteUserPlan as DeleteUserPlan
from app.actions.users import EditPlan as EditPlan
from app.actions.users import ResetPlan as ResetPlan
from app.api.errors import BadRequest, ClientError, NotFound
from app.api.models import CreateUser, Role, UpdateUser, User, control_problem
from app.changes import Resource
from app.registry import CREATE_USER, DELETE_USER, EDIT_USER, RESET_PASSWORD, Action
from app.text import plural
from app.viewmodels.session import Session
from app.viewmodels.table import Column, PreparedRows, TableModel, cell_text, prepare_rows
from app.viewmodels.tools import ToolViewModel

#: the form's fields, by their wire names
NAME, EMAIL, ROOT_ROLE = "name", "email", "rootRole"
FIELDS = (NAME, EMAIL, ROOT_ROLE)
FIELD_LABELS = {NAME: "name", EMAIL: "email", ROOT_ROLE: "root role"}

#: the tooltip of a user marked in the list
UNSAVED = "Unsaved changes: select the user to save or revert them."
SCIM_REASON = "Changes would be overwritten by the identity provider; change this user there."


@dataclass(frozen=True)
class Draft:
    """The form as typed: name, email and the root role's name."""

    name: str = ""
    email: str = ""
    rootRole: str = ""

    def cleaned(self) -> Draft:
        return Draft(self.name.strip(), self.email.strip(), self.rootRole)


def email_problem(text: str) -> str:
    """What is wrong with `text` as an email address ("" when nothing): the wire model's check."""
    problem = control_problem(text)
    if problem:
        return problem[:1].upper() + problem[1:] + "."
    try:
        UpdateUser(email=text)
    except ValidationError:
        return f"“{text}” is not an email address (name@example.com)."
    return ""


def user_label(user: User) -> str:
    return user.name or user.username or user.email or f"User {user.id}"


def merged_user(old: User, answer: User) -> User:
    """The server's answer, with what it left out (say `rootRole`) taken from `old`."""
    data = old.model_dump()
    data.update(answer.model_dump(exclude_unset=True))
    return User.model_validate(data)


def field_of(path: str, message: str) -> str | None:
    """The form field a 400's detail is about: by its path (`email`, `$.email`, `body.email`),
    or when the server gave no path, by the words of its message."""
    tail = path.replace("[", ".").split(".")[-1].strip().casefold() if path else ""
    for field in FIELDS:
        if tail == field.casefold():
            return field
    if not tail:
        words = message.casefold()
        if "email" in words:
            return EMAIL
        if "rootrole" in words or "role" in words:
            return ROOT_ROLE
    return None


class UserEditorModel(ToolViewModel):
    #: the list was loaded again (or emptied)
    users_loaded = Signal()
    #: another user is selected, or the selected user's server copy changed
    current_changed = Signal()
    #: the draft, its problems, the saving state or the messages changed
    form_changed = Signal()
    #: a create, delete or reset started, waits, or ended (see `create_error`,
    #: `create_progress`, `action_error`, `reset_link`); with True when a create succeeded
    action_changed = Signal(bool)

    shows = frozenset({Resource.USERS})

    def __init__(self, session: Session, parent: QObject | None = None) -> None:
        super().__init__("users", session, parent)
        self._roles: list[Role] = []
        self._role_by_id: dict[int, str] = {}
        self.users: TableModel[User] = TableModel(self._columns(), self)
        self._by_id: dict[int, User] = {}
        self._load_task: asyncio.Task[None] | None = None
        #: the selected user's id and its latest server copy
        self._current_id: int | None = None
        self._current: User | None = None
        #: the selected user answered 404: it is shown, read-only, until another is chosen
        self._gone = False
        self._draft = Draft()
        self._drafts: dict[int, Draft] = {}
        self._server_errors: dict[str, str] = {}
        #: a failure that belongs to no field (or to the whole form)
        self.form_error = ""
        #: what happened last ("Saved at 14:03: …"), or why a user cannot be shown
        self.notice = ""
        self._saving = False
        self._pending_open: int | None = None
        #: the users with unsaved changes, as the list last marked them
        self._marked: frozenset[int] = frozenset()
        #: what Undo puts back after the last save (None when there is nothing to undo)
        self.undo_plan: EditPlan | None = None
        #: the running create, delete or reset (one at a time)
        self._action: asyncio.Task[None] | None = None
        #: how the last create went: its error (the form is kept) and the wait for the limit
        self.create_error = ""
        self.create_progress = ""
        #: how the last delete or reset went ("" when it went well), and the last reset link
        self.action_error = ""
        self.reset_link = ""
        #: the invite link of the user just created, while they are the one selected ("" when
        #: there is none), and whether the server emailed it to them too
        self.invite_link = ""
        self.invite_emailed = False
        #: the creation to tell of once its user is shown (their notice and invite link)
        self._just_created: Created | None = None
        self.users.mark = self.draft_mark
        self.form_changed.connect(self._marks_may_change)
        session.state_changed.connect(self._actions_may_change)

    def _actions_may_change(self, *_: object) -> None:
        if not self.closed:
            self.action_changed.emit(False)

    # ------------------------------------------------------------------ the list

    def _columns(self) -> list[Column[User]]:
        return [
            Column("Name", lambda u: u.name, tooltip=self._row_tooltip),
            # mostly the email's first part: narrow (elided, whole in the form and the filter)
            Column("Username", lambda u: u.username, width=12),
            Column("Email", lambda u: u.email),
            Column("Root role", self.role_name, width=11),
            Column("Last login", lambda u: u.seenAt, tooltip=_login_tooltip),
        ]

    @staticmethod
    def _row_tooltip(user: User) -> str | None:
        return "Managed by SCIM (read-only here)" if user.scimId else None

    @property
    def roles(self) -> list[Role]:
        """The server's root roles (what `rootRoles` listed)."""
        return list(self._roles)

    @property
    def role_names(self) -> list[str]:
        return [r.name for r in self._roles]

    def role_description(self, name: str) -> str:
        return next((r.description or "" for r in self._roles if r.name == name), "")

    def role_name(self, user: User) -> str | None:
        """A user's root role by name (`rootRole` may be an id, a name or a numeric string)."""
        return role_of(user.rootRole, self._role_by_id)

    def role_id(self, name: str) -> int | None:
        return next((r.id for r in self._roles if r.name == name), None)

    @property
    def busy_loading(self) -> bool:
        return self._load_task is not None and not self._load_task.done()

    def is_empty(self) -> bool:
        return self.users.total_count == 0

    @property
    def empty_text(self) -> str:
        return "This server lists no user accounts. (Service accounts are never listed here.)"

    def load(self) -> None:
        if self.busy_loading:
            return
        self.set_status("Loading users…")
        self._load_task = self.run(self._load())

    async def _load(self) -> None:
        client = await self.session.client()
        result = await client.list_users()
        roles = list(result.rootRoles)
        role_by_id = {r.id: r.name for r in roles}
        users = result.users
        # the role names are needed by the "Root role" column while the rows are prepared
        self._roles, self._role_by_id = roles, role_by_id
        prepared, by_id = await asyncio.to_thread(_prepare_users, self.users.columns, users)
        self.users.set_prepared(prepared)
        self._by_id = by_id
        self.loaded = True
        self._rebind_current()
        self.users_loaded.emit()
        self.phase_changed.emit()
        if self._pending_open is not None:
            user_id, self._pending_open = self._pending_open, None
            self.open_user(user_id)
            created, self._just_created = self._just_created, None
            if created is not None:  # what the creation of that user said
                self.notice = f"Created {created.plan.label} (id {created.user.id})."
                if self._current_id == user_id:
                    # in a field of its own beside the notice (a URL does not wrap in it)
                    self.invite_link = created.user.inviteLink or ""
                    self.invite_emailed = bool(created.user.emailSent)
                self.form_changed.emit()

    def _rebind_current(self) -> None:
        """After a reload: the selected user is the list's new copy, or gone from the list."""
        if self._current_id is None:
            return
        fresh = self._by_id.get(self._current_id)
        if fresh is not None:
            self._current = fresh
            self._gone = False
        elif not self._gone and self._current is not None:
            self._gone = True
            self.notice = f"{user_label(self._current)} is no longer on the server."
        self.current_changed.emit()
        self.form_changed.emit()

    def reset(self) -> None:
        """A new connection: forget the users, the roles, the selection and the drafts."""
        self._load_task = None
        self.loaded = False
        self._roles, self._role_by_id, self._by_id = [], {}, {}
        self.users.clear()
        self._current_id, self._current, self._gone = None, None, False
        self._draft, self._drafts = Draft(), {}
        self._server_errors, self.form_error, self.notice = {}, "", ""
        self._saving = False
        self._pending_open = None
        self.undo_plan, self.create_error, self.create_progress = None, "", ""
        self.action_error, self.reset_link, self._just_created = "", "", None
        self.invite_link, self.invite_emailed = "", False
        self.users_loaded.emit()
        self.current_changed.emit()
        self.form_changed.emit()

    # ------------------------------------------------------------------ unsaved drafts

    @property
    def drafted(self) -> frozenset[int]:
        """The ids of the users with changes typed and not saved (the selected one included)."""
        ids = set(self._drafts)
        if self._current_id is not None and self.dirty:
            ids.add(self._current_id)
        return frozenset(ids)

    def draft_mark(self, user: User) -> str:
        """Why the list marks `user` ("" when it does not)."""
        return UNSAVED if user.id in self._marked else ""

    @property
    def drafts_text(self) -> str:
        """ "2 users with unsaved changes" ("" when there are none)."""
        n = len(self._marked)
        return f"{plural(n, 'user')} with unsaved changes" if n else ""

    def _marks_may_change(self) -> None:
        drafted = self.drafted
        if drafted != self._marked:
            self._marked = drafted
            self.users.marks_changed()

    # ------------------------------------------------------------------ selection

    @property
    def current(self) -> User | None:
        """The selected user as the server last gave it (None when none is selected)."""
        return self._current

    @property
    def current_id(self) -> int | None:
        return self._current_id

    @property
    def gone(self) -> bool:
        return self._gone

    def user(self, user_id: int) -> User | None:
        return self._by_id.get(user_id)

    def select(self, user_id: int | None) -> None:
        """Show this user in the form (their draft, if one was typed before)."""
        if user_id == self._current_id and (user_id is None or not self._gone):
            return
        if self._current_id is not None and self.dirty:
            self._drafts[self._current_id] = self._draft
        user = self._by_id.get(user_id) if user_id is not None else None
        self._current_id = user.id if user is not None else None
        self._current = user
        self._gone = False
        self._server_errors, self.form_error, self.notice = {}, "", ""
        self.action_error, self.reset_link = "", ""
        self.invite_link, self.invite_emailed = "", False  # the user just created's alone
        baseline = self.baseline
        self._draft = self._drafts.pop(user.id, baseline) if user is not None else baseline
        self.current_changed.emit()
        self.form_changed.emit()

    def open_user(self, user_id: int) -> None:
        """Select this user (what another window asked for): at once when the list is here,
        after the load otherwise; when the list does not hold them, say so."""
        if not self.loaded:
            self._pending_open = int(user_id)
            if self.available and not self.busy_loading:
                self.load()
            return
        if int(user_id) in self._by_id:
            self.select(int(user_id))
            return
        self.select(None)
        self.notice = (
            f"User {user_id} is not in the list of users: they may have been deleted, "
            "or it is a service account, which this list leaves out."
        )
        self.form_changed.emit()

    # ------------------------------------------------------------------ the form

    @property
    def baseline(self) -> Draft:
        """The selected user's values as the server has them."""
        return self._baseline_of(self._current)

    def _baseline_of(self, user: User | None) -> Draft:
        if user is None:
            return Draft()
        return Draft(user.name or "", user.email or "", self.role_name(user) or "")

    @property
    def draft(self) -> Draft:
        return self._draft

    def edit(self, field: str, value: str) -> None:
        """The person changed a field of the form."""
        if field not in FIELDS:
            raise ValueError(field)
        if getattr(self._draft, field) == value:
            return
        self._draft = replace(self._draft, **{field: value})
        self._server_errors.pop(field, None)
        self.form_error = ""
        self.form_changed.emit()

    def revert(self) -> None:
        """Back to the server's values."""
        if self._current is None:
            return
        self._draft = self.baseline
        self._server_errors, self.form_error = {}, ""
        self.form_changed.emit()

    @property
    def editable(self) -> bool:
        user = self._current
        return user is not None and not self._gone and not user.scimId

    @property
    def read_only_reason(self) -> str:
        user = self._current
        if user is None:
            return ""
        if self._gone:
            return "This user no longer exists on the server: nothing can be saved."
        if user.scimId:
            return SCIM_REASON
        return ""

    @property
    def changed_fields(self) -> list[str]:
        draft, base = self._draft.cleaned(), self.baseline
        return [f for f in FIELDS if getattr(draft, f) != getattr(base, f)]

    @property
    def dirty(self) -> bool:
        return self._current is not None and bool(self.changed_fields)

    @property
    def problems(self) -> dict[str, str]:
        """What is wrong with the draft, by field, before anything is sent."""
        if self._current is None:
            return {}
        draft, base, user = self._draft.cleaned(), self.baseline, self._current
        out: dict[str, str] = {}
        if not draft.name and base.name:
            out[NAME] = (
                "A name cannot be removed: Unleash keeps the old name when it gets an empty "
                "one. Type a new name, or Escape to revert."
            )
        elif draft.name != base.name and (problem := control_problem(draft.name)):
            out[NAME] = problem[:1].upper() + problem[1:] + "."
        if draft.email:
            if draft.email != base.email and (problem := email_problem(draft.email)):
                out[EMAIL] = problem
        elif not user.username:
            out[EMAIL] = "This user has no username, so they must keep an email address."
        elif base.email:
            out[EMAIL] = (
                "An email address cannot be removed, only changed: Unleash keeps the old "
                "address when it gets an empty one."
            )
        if (
            draft.rootRole
            and draft.rootRole != base.rootRole
            and self.role_id(draft.rootRole) is None
        ):
            out[ROOT_ROLE] = f"{draft.rootRole} is not one of this server's root roles."
        return out

    @property
    def field_errors(self) -> dict[str, str]:
        """The problems of the draft, then what the server said about a field."""
        return {**self._server_errors, **self.problems}

    @property
    def saving(self) -> bool:
        return self._saving

    @property
    def can_save(self) -> bool:
        return self.editable and self.dirty and not self.problems and not self._saving

    def changes(self) -> dict[str, Any]:
        """The body of the update: only the fields that changed, the role by its id."""
        draft = self._draft.cleaned()
        out: dict[str, Any] = {}
        for field in self.changed_fields:
            if field == ROOT_ROLE:
                out[ROOT_ROLE] = self.role_id(draft.rootRole)
            else:
                out[field] = getattr(draft, field)
        return out

    def plan_save(self) -> EditPlan | None:
        """What saving the draft will change, for the confirmation (each field, old and new);
        None when there is nothing (valid) to send."""
        caps = self.session.capabilities
        if not self.can_save or self._current is None or caps is None:
            return None
        plan = plan_edit(self._current, UpdateUser(**self.changes()), self._role_by_id,
                         journal_of(self.session.name, caps), self.admins)  # fmt: skip
        if plan.refused:  # said before any confirmation, and nothing is sent
            self.form_error = plan.refused
            self.form_changed.emit()
            return None
        return plan

    @property
    def admins(self) -> int | None:
        """The server's users with the Admin root role, as last listed (None before that)."""
        if not self.loaded:
            return None
        return sum(1 for user in self._by_id.values() if self.role_name(user) == ADMIN)

    def save(self, plan: EditPlan) -> asyncio.Task[None] | None:
        """Send a confirmed `plan` (from `plan_save`); None when it no longer applies (another
        user, another server, or nothing to save now): nothing is sent."""
        caps = self.session.capabilities
        user = self._current
        if (
            not self.can_save
            or user is None
            or caps is None
            or plan.user.id != user.id
            or plan.server != caps.base_url
        ):
            return None
        self._saving = True
        self.form_error = ""
        self.form_changed.emit()
        return self.run(self._save(user, plan, self._draft), busy=False)

    async def _save(self, user: User, plan: EditPlan, sent: Draft) -> None:
        self.undo_plan = None
        body = plan.changes.model_dump(exclude_unset=True)
        changes = {f: body[f] for f in FIELDS if f in body}  # in the form's order
        try:
            answer = await edited_user(await self.session.client(), await self.run_plan(plan))
        except ClientError as exc:
            self._saving = False
            if isinstance(exc, NotFound):
                self._on_not_found(user)
            elif isinstance(exc, BadRequest):
                self._on_bad_request(user, exc)
            else:
                self._on_failure(user, str(exc))
            return
        except BaseException:  # cancelled (a new connection), or a bug
            self._saving = False
            raise
        self._saving = False
        self.undo_plan = plan_undo(plan, answer) if not plan.undo else None
        self._on_saved(user, changes, answer, sent)

    # ------------------------------------------------------------------ undo

    @property
    def can_undo(self) -> bool:
        plan = self.undo_plan
        return (
            plan is not None
            and plan.user.id == self._current_id
            and not self._saving
            and not self.action_reason(EDIT_USER)
        )

    def undo(self) -> asyncio.Task[None] | None:
        """Put back what the last save changed (journaled as an edit of its own)."""
        plan = self.undo_plan
        if plan is None or not self.can_undo:
            return None
        self.undo_plan = None
        self._saving = True
        self.form_error = ""
        self.form_changed.emit()
        return self.run(self._undo(plan), busy=False)

    async def _undo(self, plan: EditPlan) -> None:
        user = plan.user
        try:
            answer = await edited_user(await self.session.client(), await self.run_plan(plan))
        except ClientError as exc:
            self._saving = False
            self._on_failure(user, f"Not undone: {exc}")
            return
        except BaseException:
            self._saving = False
            raise
        self._saving = False
        changes = plan.changes.model_dump(exclude_unset=True)
        old = self._by_id.get(user.id, user)
        self._on_saved(old, changes, answer, self._draft)
        self.notice = "Undone: " + self.notice
        self.form_changed.emit()

    # ------------------------------------------------------------------ create, delete, reset

    @property
    def acting(self) -> bool:
        return self._action is not None and not self._action.done()

    def action_reason(self, action: Action) -> str:
        """Why `action` cannot be used now, and what would help ("" when it can)."""
        reason = super().action_reason(action)
        if reason:
            return reason
        if action is CREATE_USER:
            return "Wait for the user being created." if self.acting else ""
        if self.acting:
            return "Wait for the change under way."
        user = self._current
        if user is None or self._gone:
            return "Select a user first."
        if action is RESET_PASSWORD and not user.email:
            return "This user has no email address: Unleash makes reset links by email."
        if action in (DELETE_USER, RESET_PASSWORD) and user.scimId:
            return SCIM_REASON
        return ""

    def _start(self, coro: Any) -> asyncio.Task[None]:
        self.action_error = ""
        self._action = self.run(coro, busy=False)
        self.action_changed.emit(False)
        return self._action

    def plan_create(
        self, email: str, name: str, username: str, role: str, send_email: bool
    ) -> CreatePlan | str | None:
        """What creating the user typed in the New user dialog does, for the confirmation; what
        is wrong with it (a sentence) when it cannot be sent; None when no user can be created
        now. The root role is sent as the server expects it: a predefined one by name, a custom
        one by its id (the request's schema names only the predefined ones)."""
        caps = self.session.capabilities
        if caps is None or self.action_reason(CREATE_USER):
            return None
        email, username = email.strip(), username.strip()
        if not email and not username:
            return "Give an email address (or at least a username)."
        if email and (problem := email_problem(email)):
            return problem
        try:
            role_name, sent = root_role_of(role, self._roles, caps.base_url)
            user = CreateUser(email=email or None, name=name.strip() or None,
                              username=username or None, rootRole=sent,
                              sendEmail=send_email)  # fmt: skip
        except NotARootRole as exc:
            return f"{exc}."
        except ValidationError as exc:
            said = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            return f"Not a user the server would take: {said}."
        return plan_create(user, role_name, journal_of(self.session.name, caps))

    def create(self, plan: CreatePlan) -> asyncio.Task[None] | None:
        """Carry out a confirmed create; the window's form stays as typed until it succeeds."""
        if self.action_reason(CREATE_USER):
            return None
        self.create_error, self.create_progress = "", ""
        return self._start(self._create(plan))

    def _waiting(self, left: float) -> None:
        self.create_progress = (
            f"The server limits how many users are created a minute: waiting {left:.0f} s, "
            "then creating…"
        )
        self.action_changed.emit(False)

    async def _create(self, plan: CreatePlan) -> None:
        try:
            done = await Created.of(await self.session.client(),
                                    await self.run_plan(plan, on_wait=self._waiting))  # fmt: skip
        except ClientError as exc:
            self.create_error = f"Not created: {exc}"
            self.create_progress = ""
            self.report_error(self.create_error)
            self._action = None
            self.action_changed.emit(False)
            return
        self._action = None
        self.create_progress = ""
        self._just_created = done
        self._pending_open = done.user.id
        self.action_changed.emit(True)
        self.refresh()

    def plan_delete(self) -> DeleteUserPlan | None:
        caps = self.session.capabilities
        if caps is None or self._current is None or self.action_reason(DELETE_USER):
            return None
        plan = plan_delete(self._current, self._role_by_id, journal_of(self.session.name, caps),
                           self.admins)  # fmt: skip
        if plan.refused:  # said before any confirmation, and nothing is sent
            self.action_error = plan.refused
            self.report_error(plan.refused)
            self.action_changed.emit(False)
            return None
        return plan

    def delete(self, plan: DeleteUserPlan) -> asyncio.Task[None] | None:
        """Carry out a confirmed delete (`LastAdmin` ends it before anything is sent)."""
        if self.acting:
            return None
        return self._start(self._delete(plan))

    async def _delete(self, plan: DeleteUserPlan) -> None:
        try:
            await self.run_plan(plan, after_sent=self.refresh)
        except ClientError as exc:
            self.action_error = str(exc)
            self.report_error(self.action_error)
        else:
            self.notice = f"Deleted {user_label(plan.user)}. Snapshot: {plan.snapshot}"
            self._drafts.pop(plan.user.id, None)
            if self._current_id == plan.user.id:
                self.undo_plan = None
                self.select(None)
                self.notice = f"Deleted {user_label(plan.user)}. Snapshot: {plan.snapshot}"
        finally:
            self._action = None
            self.action_changed.emit(False)
            self.form_changed.emit()

    def plan_reset(self) -> ResetPlan | None:
        """What making a reset link for the selected user does, for the confirmation; None
        when it cannot be made now (`action_reason(RESET_PASSWORD)` says why)."""
        caps = self.session.capabilities
        user = self._current
        if caps is None or user is None or self.action_reason(RESET_PASSWORD):
            return None
        return plan_reset(user, journal_of(self.session.name, caps))

    def reset_password(self, plan: ResetPlan) -> asyncio.Task[None] | None:
        """Make the reset link of a confirmed `plan` (`reset_link` holds it); None when it no
        longer applies (another user selected, or an action under way)."""
        if self.action_reason(RESET_PASSWORD) or plan.user.id != self._current_id:
            return None
        self.reset_link = ""
        return self._start(self._reset(plan))

    async def _reset(self, plan: Any) -> None:
        try:
            self.reset_link = await reset_link(await self.session.client(),
                                               await self.run_plan(plan))  # fmt: skip
        except ClientError as exc:
            self.action_error = f"No reset link: {exc}"
            self.report_error(self.action_error)
        finally:
            self._action = None
            self.action_changed.emit(False)

    def _on_saved(self, old: User, changes: dict[str, Any], answer: User, sent: Draft) -> None:
        """Show the answer; what was typed after the request went is kept as a draft."""
        fresh = merged_user(self._by_id.get(old.id, old), answer)
        row = self._by_id.get(old.id)
        if row is not None:
            self.users.replace_row(row, fresh)
        if old.id in self._by_id:
            self._by_id[old.id] = fresh
        if self._drafts.get(old.id) == sent:
            del self._drafts[old.id]
        summary = _saved_text(changes, fresh, self)
        if self._current_id == old.id:
            self._current = fresh
            if self._draft == sent:
                self._draft = self.baseline
            self._server_errors, self.form_error = {}, ""
            self.notice = summary
            self.current_changed.emit()
        else:
            self.notice = f"{user_label(fresh)}: {summary}"
        self.form_changed.emit()

    def _on_not_found(self, user: User) -> None:
        text = (
            f"{user_label(user)} no longer exists on the server (deleted meanwhile?). "
            "The list has been refreshed."
        )
        self.report_error(text)
        self._drafts.pop(user.id, None)
        if self._current_id == user.id:
            self._gone = True
            self.form_error = text
        else:
            self.notice = text
        self.form_changed.emit()
        self.current_changed.emit()
        self.load()

    def _on_bad_request(self, user: User, exc: BadRequest) -> None:
        self.report_error(str(exc))
        fields: dict[str, str] = {}
        other: list[str] = []
        for detail in exc.details:
            field = field_of(detail.path, detail.message)
            if field is not None and detail.message:
                fields[field] = detail.message
            elif detail.message:
                other.append(str(detail))
        if not exc.details and exc.message and (field := field_of("", exc.message)):
            fields[field] = exc.message
        if self._current_id != user.id:
            self.notice = f"Could not save {user_label(user)}: {exc}"
            self.form_changed.emit()
            return
        self._server_errors = fields
        if other or not fields:
            self.form_error = f"The server refused the change: {exc}"
        else:
            named = ", ".join(FIELD_LABELS[f] for f in fields)
            self.form_error = f"The server refused the change (see {named})."
        self.form_changed.emit()

    def _on_failure(self, user: User, text: str) -> None:
        self.report_error(text)
        if self._current_id == user.id:
            self.form_error = f"Not saved: {text}"
        else:
            self.notice = f"Could not save {user_label(user)}: {text}"
        self.form_changed.emit()

    def close(self) -> None:
        if not self.closed:
            self.session.state_changed.disconnect(self._actions_may_change)
        super().close()


def _prepare_users(
    columns: list[Column[User]], users: Iterable[User]
) -> tuple[PreparedRows[User], dict[int, User]]:
    """The rows' filter texts and the users by id. No Qt: runs on a worker thread."""
    prepared = prepare_rows(columns, users)
    return prepared, {u.id: u for u in prepared.rows}


def _login_tooltip(user: User) -> str | None:
    return None if user.seenAt is not None else "Never logged in"


def _saved_text(changes: dict[str, Any], fresh: User, model: UserEditorModel) -> str:
    """'Saved at 14:03: name and email changed.', plus what the server did not take."""
    names = [FIELD_LABELS[f] for f in changes]
    what = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    text = f"Saved at {datetime.now().strftime('%H:%M:%S')}: {what} changed."
    kept = []
    if NAME in changes and (fresh.name or "") != changes[NAME]:
        kept.append(f"the name is {cell_text(fresh.name)}")
    if EMAIL in changes and (fresh.email or "") != changes[EMAIL]:
        kept.append(f"the email is {cell_text(fresh.email)}")
    if ROOT_ROLE in changes:
        role = model.role_name(fresh)
        if fresh.rootRole is not None and model.role_id(role or "") != changes[ROOT_ROLE]:
            kept.append(f"the root role is {role}")
    if kept:
        text += " The server answered differently: " + "; ".join(kept) + "."
    return text
