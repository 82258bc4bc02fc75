"""`RolesModel`: the server's roles (`app.actions.roles.read_roles`: `GET /api/admin/roles`, or
on open-source Unleash the built-in root roles its users' list gives) as a table, each with the
permissions it holds (`GET /api/admin/roles/:id`, a few at a time, off the GUI thread) grouped
root / project / per environment; creating, editing and deleting custom roles through the plans
of `app.actions.roles` and the runner (journal, snapshot, capability check).

The form's permission picker offers the server's catalogue (`GET /api/admin/permissions`)
grouped as the role's type takes it (`catalogue_groups`): a custom root role its root
permissions, a custom project role its project permissions and each environment's. `plan_save`
turns the form into a plan or raises `FormError` naming the field that is wrong; a save the
server refuses emits `save_failed(field, text)` with the field its answer is about (a name
taken: `name`; an unknown permission or environment: `permissions`), so the form shows it
there and stays open.

Deleting: `prepare_delete()` reads the role and who holds it now (`read_holders`: users,
groups and service accounts for a root role, projects for a project role) off the GUI thread,
then emits `delete_planned(plan)` for the confirmation, or `delete_refused(text)` naming the
holders: nothing is asked and nothing sent.

QtCore only: no QtWidgets below `app/`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from operator import attrgetter

from PySide6.QtCore import QObject, Signal

from app.actions.roles import (
    RoleChanged,
    RoleInUse,
    is_custom,
    plan_create,
    plan_delete,
    plan_edit,
    read_holders,
    read_roles,
    wire_type,
)

# the plan is re-exported: the window shows plans, and reaches the actions only through here
from app.actions.roles import RolePlan as RolePlan
from app.actions.runner import journal_of
from app.api import errors as e
from app.api.models import (
    CUSTOM_ROOT_TYPES,
    ROOT_TYPES,
    AdminPermission,
    AdminPermissions,
    CreateRole,
    Role,
    RolePermission,
    RoleWithPermissions,
)
from app.changes import Resource
from app.registry import CREATE_ROLE, DELETE_ROLE, EDIT_ROLE
from app.text import count_text
from app.viewmodels.base import FormError as FormError  # the window catches it
from app.viewmodels.session import Session
from app.viewmodels.table import Column, TableModel, prepare_rows
from app.viewmodels.tools import ActionViewModel

#: how many roles' permissions are read at once
READ_AT_ONCE = 8
#: the form's types: what it shows -> the wire type
KINDS = {"Custom root role": "root-custom", "Custom project role": "custom"}
#: the form's fields an error can land on ("" is the form as a whole)
FIELDS = ("name", "description", "type", "permissions", "")


def type_text(role: Role) -> str:
    """ "root", "project" (built in), "custom root", "custom project"."""
    if role.type in ("root", "project"):
        return role.type
    return "custom root" if role.type in CUSTOM_ROOT_TYPES else "custom project"


@dataclass(slots=True)
class RoleRow:
    """One role as the table shows it; `permissions` None where the server cannot say."""

    role: Role = field(repr=False)
    id: int
    name: str
    type: str
    built_in: bool
    description: str
    permissions: int | None


ROLE_COLUMNS: list[Column[RoleRow]] = [
    Column("Name", attrgetter("name"), width=24,
           tooltip=lambda r: "Built in: it cannot be changed or deleted" if r.built_in
           else r.name if len(r.name) > 24 else None),
    Column("Type", attrgetter("type"), width=18),
    Column("Built in", lambda r: "built in" if r.built_in else "", width=9,
           sort_key=lambda r: not r.built_in),
    Column("Permissions", attrgetter("permissions"), numeric=True, width=14,
           tooltip=lambda r: "The server did not give this role's permissions"
           if r.permissions is None else None),
    Column("Description", attrgetter("description"),
           tooltip=lambda r: r.description or None),
    Column("Id", attrgetter("id"), numeric=True, shown=False),
]  # fmt: skip
#: the column that takes the width left
DESCRIPTION_COLUMN = 4


def role_rows(roles: list[Role], details: dict[int, RoleWithPermissions]) -> list[RoleRow]:
    rows = []
    for role in roles:
        held = details.get(role.id)
        rows.append(RoleRow(role, role.id, role.name, type_text(role), not is_custom(role),
                            role.description or "",
                            len(held.permissions) if held is not None else None))  # fmt: skip
    return rows


def roles_count_text(shown: int, total: int) -> str:
    return count_text(shown, total, "role")


# ---------------------------------------------------------------------------- permissions


@dataclass(frozen=True)
class PermissionItem:
    """One permission as the picker and the role's list show it: `display` its displayName
    (the name where there is none), `name` the one the server knows it by."""

    name: str
    display: str
    environment: str | None = None

    @property
    def key(self) -> tuple[str, str | None]:
        return (self.name, self.environment)

    def matches(self, text: str) -> bool:
        """Whether the search `text` finds it (in its display name or its name)."""
        folded = text.strip().casefold()
        return not folded or folded in self.display.casefold() or folded in self.name.casefold()


@dataclass(frozen=True)
class PermissionGroup:
    """A group of permissions: `key` "root", "project" or "environment:<name>"."""

    key: str
    title: str
    items: tuple[PermissionItem, ...]


def _item(p: AdminPermission, environment: str | None = None) -> PermissionItem:
    return PermissionItem(p.name, p.displayName or p.name, environment)


def _environment_title(name: str) -> str:
    return "Every environment" if name == "*" else f"Environment “{name}”"


def held_groups(
    role: RoleWithPermissions, catalogue: AdminPermissions | None
) -> list[PermissionGroup]:
    """The permissions `role` holds, grouped: root, project, then each environment (in the
    catalogue's order); a permission's kind is its own `type`, else the catalogue's."""
    kinds: dict[str, str] = {}
    shown: dict[str, str] = {}  # the catalogue's display names, for a role's without one
    order: list[str] = []
    if catalogue is not None:
        groups = catalogue.permissions
        kinds.update({p.name: "root" for p in groups.root})
        kinds.update({p.name: "project" for p in groups.project})
        for listed in groups.environments:
            kinds.update({p.name: "environment" for p in listed.permissions})
            order.append(listed.name)
        for p in (*groups.root, *groups.project,
                  *(q for listed in groups.environments for q in listed.permissions)):  # fmt: skip
            if p.displayName:
                shown.setdefault(p.name, p.displayName)
    root: list[PermissionItem] = []
    project: list[PermissionItem] = []
    by_environment: dict[str, list[PermissionItem]] = {}
    for p in role.permissions:
        if not p.displayName and p.name in shown:
            p = p.model_copy(update={"displayName": shown[p.name]})
        kind = p.type or kinds.get(p.name, "environment" if p.environment else "project")
        if kind == "environment" or p.environment:
            by_environment.setdefault(p.environment or "*", []).append(_item(p, p.environment))
        elif kind == "root":
            root.append(_item(p))
        else:
            project.append(_item(p))
    out = []
    if root:
        out.append(PermissionGroup("root", "Root permissions", tuple(root)))
    if project:
        out.append(PermissionGroup("project", "Project permissions", tuple(project)))
    for env in sorted(
        by_environment, key=lambda n: (order.index(n) if n in order else len(order), n)
    ):
        out.append(PermissionGroup(f"environment:{env}", _environment_title(env),
                                   tuple(by_environment[env])))  # fmt: skip
    return out


def catalogue_groups(catalogue: AdminPermissions, kind: str,
                     held: RoleWithPermissions | None = None) -> list[PermissionGroup]:  # fmt: skip
    """What the picker offers a role of `kind` (a wire type): a root role the root
    permissions (and the project ones too when `held`, the role edited, holds any: none is
    dropped unseen), a project role the project permissions and each environment's."""
    groups = catalogue.permissions
    out = []
    if kind in ROOT_TYPES:
        out.append(PermissionGroup("root", "Root permissions",
                                   tuple(_item(p) for p in groups.root)))  # fmt: skip
        project_names = {p.name for p in groups.project}
        if held is not None and any(p.name in project_names for p in held.permissions):
            out.append(PermissionGroup("project", "Project permissions",
                                       tuple(_item(p) for p in groups.project)))  # fmt: skip
        return out
    out.append(PermissionGroup("project", "Project permissions",
                               tuple(_item(p) for p in groups.project)))  # fmt: skip
    for env in groups.environments:
        out.append(PermissionGroup(f"environment:{env.name}", _environment_title(env.name),
                                   tuple(_item(p, env.name) for p in env.permissions)))  # fmt: skip
    return out


def form_kind(role: Role | None) -> str:
    """The form's type for `role` (a new role is a project role first)."""
    root = role is not None and role.type in CUSTOM_ROOT_TYPES
    return "Custom root role" if root else "Custom project role"


def held_keys(role: RoleWithPermissions) -> set[tuple[str, str | None]]:
    """The (name, environment) of each permission `role` holds, as the picker ticks them."""
    return {(p.name, p.environment or None) for p in role.permissions}


# ---------------------------------------------------------------------------- the form


def _sentence(text: str) -> str:
    text = text.strip()
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "?", "!")) else f"{text}."


def field_of(error: Exception) -> str:
    """The form's field a server's refusal is about: a name taken (409) `name`; a permission or
    environment it does not have `permissions`; else by what its message names, or ""."""
    if isinstance(error, e.Conflict):
        return "name"
    if isinstance(error, e.ApiError) and error.status == 400:
        said = f"{error.message} {' '.join(str(d) for d in error.details)}".casefold()
        for word, name in (("permission", "permissions"), ("environment", "permissions"),
                           ("name", "name"), ("description", "description"),
                           ("type", "type")):  # fmt: skip
            if word in said:
                return name
    return ""


class RolesModel(ActionViewModel):
    #: the rows were loaded (or emptied)
    rows_loaded = Signal()
    #: the role whose permissions are shown changed (or its details came)
    current_changed = Signal()
    #: a deletion was planned: the plan, to confirm
    delete_planned = Signal(object)
    #: a deletion was refused before anything was sent (the role is held): the text
    delete_refused = Signal(str)
    #: a save ended well
    save_finished = Signal()
    #: a save failed: (the form's field it is about, or "", the text)
    save_failed = Signal(str, str)

    shows = frozenset({Resource.ROLES})

    def __init__(self, session: Session, parent: QObject | None = None) -> None:
        super().__init__("roles", session, parent)
        self.table: TableModel[RoleRow] = TableModel(ROLE_COLUMNS, self)
        self.selected: list[RoleRow] = []
        #: each role with its permissions, by id (empty where the server has no roles API)
        self.details: dict[int, RoleWithPermissions] = {}
        #: the permissions a role can hold (None where the server has no catalogue)
        self.catalogue: AdminPermissions | None = None
        #: what the list is, where it is not every role (open-source Unleash)
        self.note = ""
        self._load_task: asyncio.Task[None] | None = None
        session.state_changed.connect(self.actions_changed)

    def is_empty(self) -> bool:
        return self.table.total_count == 0

    @property
    def empty_text(self) -> str:
        return "This server lists no roles."

    def load(self) -> None:
        if self._load_task is not None and not self._load_task.done():
            return
        self.set_status("Loading roles…")
        self._load_task = self.run(self._load())

    async def _load(self) -> None:
        client = await self.session.client()
        listing = await read_roles(client)
        details: dict[int, RoleWithPermissions] = {}
        catalogue = None
        if listing.custom:
            gate = asyncio.Semaphore(READ_AT_ONCE)

            async def one(role: Role) -> RoleWithPermissions:
                async with gate:
                    return await client.get_role(role.id)

            for full in await asyncio.gather(*(one(r) for r in listing.roles)):
                details[full.id] = full
            try:
                catalogue = await client.permissions()
            except e.NotFound:
                catalogue = None
        sort = self.table.sort_state
        prepared = await asyncio.to_thread(
            prepare_rows, ROLE_COLUMNS, role_rows(listing.roles, details), [sort[0]] if sort else []
        )
        self.details, self.catalogue, self.note = details, catalogue, listing.note
        self.table.set_prepared(prepared)
        self.loaded = True
        self.selected = [r for r in self.table.rows if r.id in {s.id for s in self.selected}]
        self.rows_loaded.emit()
        self.phase_changed.emit()
        self.actions_changed.emit()
        self.current_changed.emit()

    def select(self, rows: list[RoleRow]) -> None:
        """The rows selected in the window (what Edit… and Delete… act on)."""
        self.selected = rows
        self.actions_changed.emit()
        self.current_changed.emit()

    @property
    def current(self) -> RoleRow | None:
        return self.selected[0] if len(self.selected) == 1 else None

    def current_groups(self) -> list[PermissionGroup]:
        """The selected role's permissions, grouped ([] when none is selected or none held)."""
        row = self.current
        held = self.details.get(row.id) if row is not None else None
        return held_groups(held, self.catalogue) if held is not None else []

    @property
    def current_text(self) -> str:
        """A line over the selected role's permissions."""
        row = self.current
        if row is None:
            return ("Select a role to see its permissions." if not self.selected
                    else f"{len(self.selected)} roles selected.")  # fmt: skip
        held = self.details.get(row.id)
        kind = f"{'built-in' if row.built_in else 'custom'} {row.type.removeprefix('custom ')} role"
        if held is None:
            return (f"“{row.name}”, a {kind}: its permissions cannot be read here (the server "
                    "has no roles API: custom roles need Unleash Enterprise).")  # fmt: skip
        count = len(held.permissions)
        if not count:
            return f"“{row.name}” ({kind}) holds no permissions."
        return f"“{row.name}” ({kind}): {count:,} permission{'s' if count != 1 else ''}"

    # ------------------------------------------------------------------ reasons

    @property
    def create_reason(self) -> str:
        """Why Create role… cannot be used now ("" when it can)."""
        reason = self.action_reason(CREATE_ROLE)
        if reason:
            return reason
        if self.acting:
            return "Another change is under way."
        if self.catalogue is None:
            return "The server gave no permission catalogue to pick from."
        return ""

    def _one_custom(self, action: str) -> str:
        if not self.selected:
            return f"Select the custom role to {action}."
        if len(self.selected) > 1:
            return f"Select one role to {action}."
        if self.selected[0].built_in:
            return (
                f"“{self.selected[0].name}” is built in: built-in roles cannot be {action[:-1]}ed."
            )
        return ""

    @property
    def edit_reason(self) -> str:
        reason = self.action_reason(EDIT_ROLE)
        if reason:
            return reason
        if self.acting:
            return "Another change is under way."
        reason = self._one_custom("change")
        if reason:
            return reason
        if self.catalogue is None or self.current is None or self.current.id not in self.details:
            return "The role's permissions were not read: refresh (F5)."
        return ""

    @property
    def delete_reason(self) -> str:
        reason = self.action_reason(DELETE_ROLE)
        if reason:
            return reason
        if self.acting:
            return "Another change is under way."
        return self._one_custom("delete")

    # ------------------------------------------------------------------ the form

    def form_role(self) -> RoleWithPermissions | None:
        """The role Edit… opens (the selected one, with its permissions)."""
        row = self.current
        return self.details.get(row.id) if row is not None and not self.edit_reason else None

    def picker_groups(
        self, kind: str, role: RoleWithPermissions | None = None
    ) -> list[PermissionGroup]:
        """The picker's groups for a role of `kind` (a wire type, or the form's words)."""
        if self.catalogue is None:
            return []
        return catalogue_groups(self.catalogue, KINDS.get(kind, kind), role)

    def plan_save(self, role: RoleWithPermissions | None, name: str, description: str,
                  kind: str, chosen: list[tuple[str, str | None]]) -> RolePlan:  # fmt: skip
        """The confirmation's plan for the form: a new role (`role` None) or `role` changed.
        `FormError` naming the field that is wrong, or saying why it cannot be saved now."""
        from pydantic import ValidationError

        caps = self.session.capabilities
        reason = self.create_reason if role is None else self.action_reason(EDIT_ROLE)
        if not reason and self.acting:
            reason = "Another change is under way."
        if reason or caps is None:
            raise FormError("", reason or "Not connected.")
        if not name.strip():
            raise FormError("name", "The role needs a name.")
        wire = wire_type(KINDS.get(kind, kind))
        root = wire in ROOT_TYPES
        permissions: dict[tuple[str, str | None], None] = {}
        for permission, environment in chosen:
            permissions[(permission, None if root else environment)] = None
        try:
            given = [RolePermission(name=n, environment=env) for n, env in permissions]
            after = CreateRole(name=name.strip(), description=description.strip(),
                               type=wire, permissions=given)  # fmt: skip
        except ValidationError as exc:
            problem = exc.errors()[0]
            where = str(problem["loc"][0]) if problem["loc"] else ""
            text = _sentence(f"{where}: {problem['msg']}" if where else problem["msg"])
            raise FormError(where if where in FIELDS else "", text) from None
        journal = journal_of(self.session.name, caps)
        try:
            if role is None:
                return plan_create(after.name, wire, after.description or "", given, journal)
            return plan_edit(role, after, journal)
        except ValueError as exc:
            text = str(exc)
            raise FormError("name" if "name" in text else "", _sentence(text)) from None

    def save(self, plan: RolePlan) -> asyncio.Task[None] | None:
        """Carry out a confirmed creation or edit; None when another action is under way or the
        connection changed since the plan was made (`save_failed` says so)."""
        if not self._may_start(plan.server, "saved"):
            self.save_failed.emit("", self.outcome_error or "Another change is under way.")
            return None
        verb = "Creating" if plan.before is None else "Saving"
        self._action_task = self.run(self._save(plan), busy=False)
        self.set_status(f"{verb} the role “{plan.name}”…")
        self.actions_changed.emit()
        return self._action_task

    async def _save(self, plan: RolePlan) -> None:
        try:
            done = await self.run_plan(plan, after_sent=self.load)
            changed = await RoleChanged.of(await self.session.client(), done)
        except e.ClientError as exc:
            self._set_outcome_error(str(exc))
            self.report_error(self.outcome_error)
            if not self.closed:
                where = field_of(exc)
                # under a field, the server's own sentence; the outcome line has the whole error
                said = exc.message if where and isinstance(exc, e.ApiError) else ""
                self.save_failed.emit(where, _sentence(said) if said else str(exc))
        else:
            role = changed.role
            what = f"“{role.name}” (id {role.id})" if role is not None else f"“{plan.name}”"
            verb = "Created" if plan.before is None else "Saved"
            self._set_outcome(f"{verb} the role {what}.")
            if not self.closed:
                self.save_finished.emit()
        finally:
            self._finish()

    # ------------------------------------------------------------------ deleting

    def prepare_delete(self) -> asyncio.Task[None] | None:
        """Read the selected role and who holds it now, then emit `delete_planned` (the plan to
        confirm) or `delete_refused` (it is held: nothing to confirm)."""
        caps = self.session.capabilities
        row = self.current
        if self.delete_reason or caps is None or row is None or self.acting:
            return None
        self.clear_outcome()
        self._action_task = self.run(self._prepare_delete(row.id), busy=False)
        self.set_status(f"Reading who holds the role “{row.name}”…")
        self.actions_changed.emit()
        return self._action_task

    async def _prepare_delete(self, role_id: int) -> None:
        caps = self.session.capabilities
        try:
            client = await self.session.client()
            before = await client.get_role(role_id)
            holders = await read_holders(client, before)
            assert caps is not None
            plan = plan_delete(before, holders, journal_of(self.session.name, caps))
        except RoleInUse as exc:
            if not self.closed:
                self.delete_refused.emit(str(exc))
        except (e.ClientError, ValueError) as exc:
            self._set_outcome_error(f"Nothing was deleted: {exc}")
        else:
            if not self.closed:
                self.delete_planned.emit(plan)
        finally:
            self._finish()

    def delete(self, plan: RolePlan) -> asyncio.Task[None] | None:
        """Carry out a confirmed deletion."""
        if not self._may_start(plan.server, "deleted"):
            return None
        self._action_task = self.run(self._delete(plan), busy=False)
        self.set_status(f"Deleting the role “{plan.name}”…")
        self.actions_changed.emit()
        return self._action_task

    async def _delete(self, plan: RolePlan) -> None:
        try:
            await self.run_plan(plan, after_sent=self.load)
        except e.ClientError as exc:
            self._set_outcome_error(str(exc))
            self.report_error(self.outcome_error)
        else:
            self._set_outcome(f"Deleted the role “{plan.name}” (id {plan.role_id}). Snapshot: "
                              f"{plan.snapshot}")  # fmt: skip
            self.selected = []
        finally:
            self._finish()

    # ------------------------------------------------------------------ common

    def _finish(self) -> None:
        super()._finish()
        if not self.closed:
            self.current_changed.emit()

    def reset(self) -> None:
        """A new connection: the old one's rows, details, catalogue and selection go."""
        self._load_task = None
        self.loaded = False
        self.selected = []
        self.details = {}
        self.catalogue = None
        self.note = ""
        self.table.clear()
        self.rows_loaded.emit()
        self.actions_changed.emit()
        self.current_changed.emit()

    def close(self) -> None:
        if not self.closed:
            self.session.state_changed.disconnect(self.actions_changed)
        super().close()
