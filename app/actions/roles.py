"""Creating, editing and deleting custom roles (`roles.create`, `roles.edit`, `roles.delete`),
and undoing each: the one path `flagdesk roles` (and a window, later) takes.

Custom roles are Unleash Enterprise's (`/api/admin/roles`; open-source Unleash answers 404 and
lists only its built-in root roles, with its users: `read_roles` falls back on those, saying
so). What this relies on of Unleash (../shared/reference/unleash-enterprise-admin-api.md §2):

- a role is `root` or `project` (built in: Admin, Editor, Viewer; Owner, Member), `root-custom`
  (a custom root role; the spec's dashboard enum says `custom-root`, read as the same) or
  `custom` (a custom project role); only custom roles can be changed or deleted (403);
- role names are unique across every type (409); the permissions are the catalogue's
  (`GET /api/admin/permissions`: 400 for others), given by name, an environment permission of
  a project role with its environment (`NAME:ENVIRONMENT` on the command line); a root role's
  permissions have no environment;
- create and update answer 200 `{version, roles: <the role>}`; an update replaces name,
  description and type, and the permissions when they are sent (this module always sends
  them: what the role becomes is the whole of it);
- a role in use is refused (400 RoleInUseError, with counts only). `plan_delete` reads who holds
  it first and refuses naming them (`RoleInUse`): for a root role the users, groups and
  service accounts whose root role it is, for a project role the projects where it is held
  with how many users, service accounts and groups; the plan's last look (`refusal`) reads
  them again just before the request.

The journal records a creation's name and type, and after it the new role's id; an edit's
role id, its name, the body sent and the role's body before (how an edit in doubt is checked);
a deletion's role id, name and type. An edit and a deletion write the role as the server gave
it (with its permissions) to a snapshot first.

Undo: a creation by deleting the role it made (its id, from the entry's `after`), while no one
holds it; an edit by putting the role back as its snapshot holds it (name, description, type,
permissions); a deletion by creating the role again from its snapshot, with the same
permissions, under a new id (Unleash never gives an id again): the confirmation says so.
"""

from __future__ import annotations

import asyncio
import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, cast

from app.actions.journal import Journal
from app.actions.runner import Done, PlanBase, Step
from app.actions.snapshots import write_whole
from app.api import errors as e
from app.api.client import (
    Answer,
    WriteRequest,
    create_role_request,
    delete_role_request,
    update_role_request,
)
from app.api.models import (
    CUSTOM_ROOT_TYPES,
    PREDEFINED_ROLE_TYPES,
    ROOT_TYPES,
    AdminPermissions,
    CreateRole,
    CustomRoleType,
    ProjectRoleUsage,
    Role,
    RoleAnswer,
    RolePermission,
    RoleWithPermissions,
)
from app.changes import Changes, Resource
from app.registry import CREATE_ROLE, DELETE_ROLE, EDIT_ROLE, Action
from app.text import plural

if TYPE_CHECKING:
    from app.api.client import AdminClient

__all__ = [
    "Holders",
    "RoleInUse",
    "RoleListing",
    "RolePlan",
    "body_of",
    "find_role",
    "is_custom",
    "kind_of",
    "parse_permissions",
    "permission_text",
    "plan_create",
    "plan_delete",
    "plan_edit",
    "read_holders",
    "read_roles",
    "read_snapshot",
    "role_json",
    "role_state",
    "wire_type",
]

#: the names a text lists before "and N more"
NAMED = 5
#: what `--type` takes -> the type Unleash creates
WIRE_TYPES = {"root": "root-custom", "project": "custom"}


def wire_type(kind: str) -> str:
    """ "root" -> "root-custom", "project" -> "custom" (a wire type is kept as it is, the
    spec's `custom-root` read as `root-custom`); `ValueError` for another word."""
    if kind in WIRE_TYPES:
        return WIRE_TYPES[kind]
    if kind in CUSTOM_ROOT_TYPES:
        return "root-custom"
    if kind == "custom":
        return kind
    raise ValueError(f"a custom role's type is root or project, not {kind!r}")


def is_custom(role: Role) -> bool:
    return role.type not in PREDEFINED_ROLE_TYPES


def is_root(role: Role | CreateRole) -> bool:
    return (role.type or "custom") in ROOT_TYPES


def kind_of(role: Role) -> str:
    """ "built-in root role", "custom project role", ..."""
    made = "built-in" if not is_custom(role) else "custom"
    scope = "root" if is_root(role) else "project"
    return f"{made} {scope} role"


def label(role: Role) -> str:
    """ "“Ops” (id 7)"."""
    return f"“{role.name}” (id {role.id})"


def _names(names: Sequence[str]) -> str:
    shown = ", ".join(names[:NAMED])
    return shown + (f" and {len(names) - NAMED:,} more" if len(names) > NAMED else "")


def permission_text(name: str, environment: str | None) -> str:
    """ "CREATE_FEATURE", "UPDATE_FEATURE_ENVIRONMENT:development"."""
    return f"{name}:{environment}" if environment else name


def role_json(role: Role) -> dict[str, Any]:
    """A role as `--json` shows it (its permissions when read with them)."""
    out: dict[str, Any] = {"id": role.id, "name": role.name, "type": role.type,
                           "description": role.description, "custom": is_custom(role)}  # fmt: skip
    if isinstance(role, RoleWithPermissions):
        out["permissions"] = [permission_text(p.name, p.environment) for p in role.permissions]
    return out


# ---------------------------------------------------------------------------- reading


@dataclass(frozen=True)
class RoleListing:
    """The server's roles; `custom` False where the server has no roles API (open-source
    Unleash: its built-in root roles, from its users' list), `note` saying so."""

    roles: list[Role]
    custom: bool
    note: str = ""


async def read_roles(client: AdminClient) -> RoleListing:
    """Every role the server has: `GET /api/admin/roles`, or where the probe (or that request)
    found none (open-source Unleash: 404) the built-in root roles `GET /api/admin/user-admin`
    lists."""
    from app.api.capabilities import NEEDS_ENTERPRISE_ROLES

    caps = await client.capabilities()
    if caps.action(CREATE_ROLE).reason != NEEDS_ENTERPRISE_ROLES:
        try:
            return RoleListing((await client.roles()).roles, True)
        except e.NotFound:
            pass
    roots = (await client.list_users()).rootRoles
    return RoleListing(list(roots), False, "custom roles need Unleash Enterprise: this server "
                       "has none, and lists its built-in root roles only")  # fmt: skip


def find_role(word: str, roles: Sequence[Role], server: str) -> Role:
    """The role `word` names: by its name (exactly), else by its id. `ValueError` naming the
    word, and the closest names, when none does."""
    named = [r for r in roles if r.name == word]
    if named:
        return named[0]
    if word.strip().isdigit():
        numbered = [r for r in roles if r.id == int(word)]
        if numbered:
            return numbered[0]
    close = difflib.get_close_matches(word, [r.name for r in roles], n=3)
    hint = f" (did you mean {', '.join(f'“{c}”' for c in close)}?)" if close else ""
    raise ValueError(f"no role on {server} is named or numbered “{word}”{hint}")


def parse_permissions(words: Sequence[str], catalogue: AdminPermissions,
                      role_type: str) -> list[RolePermission]:  # fmt: skip
    """The permissions `words` give (each `NAME` or, for an environment permission of a project
    role, `NAME:ENVIRONMENT`), checked against the server's catalogue, once each, in order.
    `ValueError` naming the word and what is wrong (an unknown name, with the closest; an
    environment missing, unknown, or given where none belongs)."""
    groups = catalogue.permissions
    kinds = {p.name: "root" for p in groups.root}
    kinds.update({p.name: "project" for p in groups.project})
    environments = [env.name for env in groups.environments]
    for env in groups.environments:
        kinds.update({p.name: "environment" for p in env.permissions})
    root = role_type in ROOT_TYPES
    chosen: dict[tuple[str, str | None], None] = {}
    for word in words:
        name, colon, environment = word.strip().partition(":")
        name = name.strip().upper()
        kind = kinds.get(name)
        if kind is None:
            close = difflib.get_close_matches(name, list(kinds), n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise ValueError(f"--permission {word}: the server has no permission {name}{hint} "
                             "(`flagdesk roles permissions` lists them)")  # fmt: skip
        if kind == "environment":
            if root:
                raise ValueError(f"--permission {word}: {name} is an environment permission, "
                                 "for project roles; a root role cannot hold it")  # fmt: skip
            if not environment:
                raise ValueError(
                    f"--permission {word}: {name} is an environment permission: give it as "
                    f"{name}:ENVIRONMENT ({', '.join(environments)})"
                )
            if environment not in environments:
                raise ValueError(f"--permission {word}: the server has no environment "
                                 f"“{environment}” ({', '.join(environments)})")  # fmt: skip
        elif colon:
            raise ValueError(f"--permission {word}: {name} is a {kind} permission, which has no "
                             f"environment: give it as {name}")  # fmt: skip
        chosen[(name, environment or None)] = None
    return [RolePermission(name=n, environment=env) for n, env in chosen]


def body_of(role: RoleWithPermissions) -> CreateRole:
    """The whole of `role` as a body that makes it again (name, description, type, every
    permission), made as the server holds it, unvalidated (a name with control characters a
    server of someone else's may hold must not stop a snapshot or a comparison)."""
    kind: CustomRoleType = "root-custom" if role.type in CUSTOM_ROOT_TYPES else "custom"
    permissions = [RolePermission.model_construct(name=p.name, environment=p.environment)
                   for p in role.permissions]  # fmt: skip
    return CreateRole.model_construct(name=role.name, description=role.description or "",
                                      type=kind, permissions=permissions)  # fmt: skip


def role_state(body: dict[str, Any] | None) -> object:
    """A role's body (`CreateRole` as JSON) in a form to compare: the type's two spellings as
    one, the permissions unordered (a root role's without environments)."""
    if body is None:
        return None
    kind = wire_type(str(body.get("type") or "custom"))
    root = kind == "root-custom"
    permissions = sorted({(str(p.get("name")), "" if root else str(p.get("environment") or ""))
                          for p in body.get("permissions") or []})  # fmt: skip
    return (str(body.get("name") or "").strip(), body.get("description") or "", kind, permissions)


def _json(body: CreateRole) -> dict[str, Any]:
    return body.model_dump(mode="json", exclude_none=True)


# ---------------------------------------------------------------------------- who holds a role


@dataclass(frozen=True)
class Holders:
    """Who holds a role: the users, groups and service accounts whose root role it is, the
    projects where it is held (with how many users, service accounts and groups each)."""

    users: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    projects: tuple[ProjectRoleUsage, ...] = ()
    service_accounts: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.users or self.groups or self.projects or self.service_accounts)

    def text(self) -> str:
        """ "2 users (Ann, Bo), 1 group (Ops)", "the projects web-shop (2 users, 1 group)"."""
        parts = []
        if self.users:
            parts.append(f"{plural(len(self.users), 'user')} ({_names(self.users)})")
        if self.groups:
            parts.append(f"{plural(len(self.groups), 'group')} ({_names(self.groups)})")
        if self.service_accounts:
            parts.append(f"{plural(len(self.service_accounts), 'service account')} "
                         f"({_names(self.service_accounts)})")  # fmt: skip
        if self.projects:
            where = [f"{p.project} ({self._counts(p)})" for p in self.projects]
            parts.append(f"{plural(len(self.projects), 'project')}: {_names(where)}")
        return "; ".join(parts)

    @staticmethod
    def _counts(usage: ProjectRoleUsage) -> str:
        counts = [(usage.userCount, "user"), (usage.serviceAccountCount, "service account"),
                  (usage.groupCount, "group")]  # fmt: skip
        return ", ".join(plural(n, noun) for n, noun in counts if n) or "no one now"


async def read_holders(client: AdminClient, role: Role) -> Holders:
    """Who holds `role` now. A root role: the users (`GET /api/admin/user-admin`), groups
    (`GET /api/admin/groups`, where there are groups) and service accounts (`GET
    /api/admin/service-account`, where there are: the users' list leaves them out) whose root
    role it is; a project role: `GET /api/admin/projects/roles/:id/access`."""
    if is_root(role):
        listed = (await client.list_users()).users
        users = tuple(u.name or u.username or u.email or f"user {u.id}"
                      for u in listed if u.rootRole == role.id)  # fmt: skip
        groups: tuple[str, ...] = ()
        caps = await client.capabilities()
        if caps.operation("groups").available:
            groups = tuple(g.name for g in (await client.list_groups()).groups
                           if g.rootRole == role.id)  # fmt: skip
        accounts: tuple[str, ...] = ()
        if caps.operation("service_accounts").available:
            accounts = tuple(a.name or a.username or f"service account {a.id}"
                             for a in (await client.service_accounts()).serviceAccounts
                             if a.rootRole == role.id)  # fmt: skip
        return Holders(users, groups, service_accounts=accounts)
    usage = (await client.role_access(role.id)).projects
    held = tuple(p for p in usage if p.userCount or p.serviceAccountCount or p.groupCount)
    return Holders(projects=held)


class RoleInUse(Exception):
    """The role is held, so the server would refuse to delete it: nothing was sent. `str()`
    names who holds it and what to do."""

    def __init__(self, role: Role, holders: Holders) -> None:
        self.role = role
        self.holders = holders
        how = ("their root role" if is_root(role)
               else "each project's access")  # fmt: skip
        super().__init__(
            f"The role {label(role)} cannot be deleted: it is held by {holders.text()}. Take it "
            f"from them first ({how}). Nothing was sent."
        )


# ---------------------------------------------------------------------------- plans


def after_creation(answer: Answer) -> dict[str, Any]:
    """What the journal keeps of a creation's answer: the new role's id."""
    made = RoleAnswer.model_validate_json(answer.response.content)
    return {"id": made.roles.id}


@dataclass(frozen=True)
class RolePlan(PlanBase):
    """What a change to one role will do, fixed before it is confirmed (a `runner.Plan`)."""

    action: Action
    name: str
    journal: Journal
    request: WriteRequest
    #: the role as the server gave it before the change (None: a creation)
    before: RoleWithPermissions | None
    #: what it becomes (None for a deletion)
    after: CreateRole | None
    #: where the snapshot of `before` goes (None when there is nothing before)
    snapshot: Path | None
    #: the journal entry this change undoes ("" when it is not an undo)
    undoes: str = ""
    #: (an undone deletion, created again) the id the role had
    undone: str = ""

    nothing = "Nothing was changed."

    @property
    def connection(self) -> str:
        return self.journal.actor.connection

    @property
    def role_id(self) -> int | None:
        return self.before.id if self.before is not None else None

    @property
    def announced(self) -> tuple[Changes, ...]:
        ids = () if self.role_id is None else (self.role_id,)
        return (Changes.of(Resource.ROLES, *ids),)

    def steps(self) -> tuple[Step, ...]:
        record: dict[str, Any] = {"name": self.name}
        if self.after is not None:
            record["type"] = self.after.type
        elif self.before is not None:
            record["type"] = self.before.type
        if self.snapshot is not None:
            record["snapshot"] = self.snapshot.name
        if self.undoes:
            record["undoes"] = self.undoes
        if self.action is CREATE_ROLE:
            # never retried: a second try would be a 409 that hides what the first did
            return (Step(self.request, [self.name], record, with_body=True, attempts=1,
                         after=after_creation),)  # fmt: skip
        assert self.before is not None
        if self.action is EDIT_ROLE:
            # what the role was: an edit in doubt is "not applied" when the server still has it
            record["body"] = _json(body_of(self.before))
        return (Step(self.request, [self.before.id], record,
                     with_body=self.action is EDIT_ROLE),)  # fmt: skip

    def write_snapshot(self) -> int:
        assert self.snapshot is not None and self.before is not None
        return write_role_json(self.snapshot, self.before)

    async def refusal(self, client: AdminClient) -> str:
        """A deletion's last look: the role is held by no one now."""
        if self.action is not DELETE_ROLE or self.before is None:
            return ""
        holders = await read_holders(client, self.before)
        if not holders:
            return ""
        return f"The role {label(self.before)} is held by {holders.text()} now."

    @property
    def question(self) -> str:
        if self.undoes:
            return f"Undo the last change to the role “{self.name}”?"
        verb = {CREATE_ROLE.key: "Create", EDIT_ROLE.key: "Change",
                DELETE_ROLE.key: "Delete"}[self.action.key]  # fmt: skip
        return f"{verb} the role “{self.name}”?"

    def _permissions(self, body: CreateRole) -> str:
        given = [permission_text(p.name, p.environment) for p in body.permissions or []]
        return (f"{plural(len(given), 'permission')} ({_names(given)})" if given
                else "no permissions")  # fmt: skip

    def lines(self) -> list[str]:
        where = f"on {self.server} (connection “{self.connection}”)"
        out: list[str] = []
        if self.action is CREATE_ROLE:
            assert self.after is not None
            scope = "root" if is_root(self.after) else "project"
            again = (f" again from its snapshot, under a new id (the server never gives the old "
                     f"one, {self.undone}, again)" if self.undoes else "")  # fmt: skip
            out.append(f"A custom {scope} role “{self.name}” will be created{again} {where}, "
                       f"with {self._permissions(self.after)}.")  # fmt: skip
        elif self.action is EDIT_ROLE:
            assert self.after is not None and self.before is not None
            how = "put back as it was" if self.undoes else "changed"
            changes = "; ".join(differences(body_of(self.before), self.after))
            out.append(f"The role {label(self.before)} will be {how} {where}: {changes}.")
            out.append("Whoever holds it gets the new permissions at once.")
        else:
            assert self.before is not None
            out.append(f"The {kind_of(self.before)} {label(self.before)} will be deleted "
                       f"{where}. No one holds it now.")  # fmt: skip
        if self.snapshot is not None:
            out.append(f"A snapshot of the role as it is now, with its permissions, is written "
                       f"first to {self.snapshot}.")  # fmt: skip
        if self.undoes:
            out.append("The undo is journaled like any change.")
        elif self.action is CREATE_ROLE:
            out.append("Undo deletes it again, while no one holds it.")
        elif self.action is EDIT_ROLE:
            out.append("Undo puts the previous name, description, type and permissions back.")
        else:
            out.append("Undo creates it again from the snapshot, with the same permissions, "
                       "under a new id.")  # fmt: skip
        return out


def differences(before: CreateRole, after: CreateRole) -> list[str]:
    """What changes from `before` to `after`, a phrase each."""
    out: list[str] = []
    if before.name != after.name:
        out.append(f"name “{before.name}” → “{after.name}”")
    if (before.description or "") != (after.description or ""):
        out.append(f"description “{before.description or ''}” → “{after.description or ''}”")
    if wire_type(before.type or "custom") != wire_type(after.type or "custom"):
        out.append(f"type {before.type} → {after.type}")
    old = [permission_text(p.name, p.environment) for p in before.permissions or []]
    new = [permission_text(p.name, p.environment) for p in after.permissions or []]
    added = [p for p in new if p not in old]
    removed = [p for p in old if p not in new]
    if added:
        out.append(f"permissions added: {_names(added)}")
    if removed:
        out.append(f"permissions removed: {_names(removed)}")
    return out


def _plan(action: Action, name: str, journal: Journal, request: WriteRequest,
          before: RoleWithPermissions | None, after: CreateRole | None,
          undoes: str = "", undone: str = "") -> RolePlan:  # fmt: skip
    snapshot = journal.new_file(action.key, ".json") if before is not None else None
    return RolePlan(action, name, journal, request, before, after, snapshot, undoes, undone)


def plan_create(name: str, kind: str, description: str, permissions: Sequence[RolePermission],
                journal: Journal, *, undoes: str = "", undone: str = "") -> RolePlan:  # fmt: skip
    """The plan to create a custom role: `kind` root or project (or its wire type).
    `ValueError` for an empty name or another kind."""
    if not name.strip():
        raise ValueError("a role needs a name")
    body = CreateRole(name=name.strip(), description=description,
                      type=cast("CustomRoleType", wire_type(kind)),
                      permissions=list(permissions))  # fmt: skip
    return _plan(CREATE_ROLE, body.name, journal, create_role_request(body), None, body,
                 undoes, undone)  # fmt: skip


def plan_edit(before: RoleWithPermissions, after: CreateRole, journal: Journal, *,
              undoes: str = "") -> RolePlan:  # fmt: skip
    """The plan to make `before` (the role as just read) what `after` says, the whole of it.
    `ValueError` for a built-in role, or when nothing would change."""
    if not is_custom(before):
        raise ValueError(f"{label(before)} is a {kind_of(before)}: built-in roles cannot be "
                         "changed")  # fmt: skip
    if not differences(body_of(before), after):
        raise ValueError(f"nothing to change: the role {label(before)} is like this already")
    request = update_role_request(before.id, after)
    return _plan(EDIT_ROLE, before.name, journal, request, before, after, undoes)


def plan_delete(before: RoleWithPermissions, holders: Holders, journal: Journal, *,
                undoes: str = "") -> RolePlan:  # fmt: skip
    """The plan to delete `before` (the role as just read) given who holds it (as just read):
    `ValueError` for a built-in role, `RoleInUse` naming the holders when anyone holds it."""
    if not is_custom(before):
        raise ValueError(f"{label(before)} is a {kind_of(before)}: built-in roles cannot be "
                         "deleted")  # fmt: skip
    if holders:
        raise RoleInUse(before, holders)
    request = delete_role_request(before.id)
    return _plan(DELETE_ROLE, before.name, journal, request, before, None, undoes)


def plan_recreate(previous: RoleWithPermissions, journal: Journal, undoes: str) -> RolePlan:
    """The plan to create a deleted role again from its snapshot (`previous`): the same name,
    description, type and permissions, under a new id."""
    body = body_of(previous)
    return plan_create(body.name, body.type or "custom", body.description or "",
                       body.permissions or [], journal, undoes=undoes,
                       undone=str(previous.id))  # fmt: skip


def write_role_json(path: Path, role: RoleWithPermissions) -> int:
    """Write `role` as the server gave it to `path` as JSON, whole or not at all."""

    def fill(f: TextIO) -> int:
        f.write(role.model_dump_json(exclude_none=True, indent=2) + "\n")
        return 1

    return write_whole(path, fill)


def _read(path: Path) -> RoleWithPermissions:
    return RoleWithPermissions.model_validate_json(path.read_bytes())


async def read_snapshot(path: Path) -> RoleWithPermissions:
    """The role a snapshot holds (read on a worker thread)."""
    return await asyncio.to_thread(_read, path)


@dataclass(frozen=True)
class RoleChanged:
    """A change the server answered with success; a creation's role read from the answer."""

    plan: RolePlan
    status: int
    journal: Path
    entry: str
    role: Role | None = None

    @classmethod
    async def of(cls, client: AdminClient, done: Done) -> RoleChanged:
        plan: RolePlan = done.plan
        role = None
        if plan.action is not DELETE_ROLE:
            role = (await client.read_answer(done.answer, RoleAnswer)).roles
        return cls(plan, done.status, done.journal, done.entry, role)
