"""Who can do what where: for one user, every project with the roles they hold there and why;
for one project, everyone who can change it. Unleash's own pages answer this one project at a
time; this reads the whole server once and answers for all of it.

Two halves, kept apart so the computation is tested without a server:

- `read_access(client)` is the I/O: the users with their root roles (`GET
  /api/admin/user-admin`), the groups with their members and root roles (`GET
  /api/admin/groups`, where there are groups), the projects, and every project's access (`GET
  /api/admin/projects/:p/access`, Pro and Enterprise), read concurrently, at most `concurrency`
  at a time. On a server without project access (open source) the projects' access is not read
  (`AccessData.project_access` is False).
- `user_access(data, who)` and `project_access(data, project)` are the computation, with no I/O.

What is counted, and why (Unleash's RBAC, as its access store and RBAC documentation describe
it):

- the **Admin** root role, held by the user or by a group the user is in (a group's root role
  applies to every member): every project, as Admin;
- the **Editor** root role (the user's or a group's): the `default` project (Unleash gives
  editors the default project's flags: "create feature toggles on the default project"); the
  projects an Editor creates they own through the Owner role Unleash gives the creator, which
  the project's access lists like any other holding ("directly");
- the **Viewer** root role: nothing to change anywhere;
- a project role held **directly** (users and service accounts alike: `accountType`), or
  **through a group** (every member holds the group's project roles);
- a custom root role: its permissions are not read; the answer names it and counts nothing.

On a server without project access (open source) the answer comes from the root roles alone,
and says so (`AccessData.note`): open source has no project roles to hold.

Service accounts appear among the users of a project's access (`accountType` "Service
Account"); Unleash lists them nowhere else an admin API of open source reads, so one that holds
no project role is found only by its root role where the sandbox or Enterprise lists it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from app.api import errors as e
from app.api.models import Group, Project, ProjectAccess, Response, User
from app.startup import paused_gc

if TYPE_CHECKING:
    from app.api.client import AdminClient

__all__ = [
    "AccessData",
    "Holding",
    "Person",
    "ProjectAnswer",
    "Reason",
    "UserAnswer",
    "find_person",
    "project_access",
    "read_access",
    "user_access",
]

#: at most this many projects' access read at once (more only adds the connection pool's
#: work: over 500 projects of the sandbox 4 took the client 0.75 s of CPU, 16 took 1.0 s;
#: bench/access_timing.py)
CONCURRENCY = 4
DEFAULT_PROJECT = "default"
ADMIN, EDITOR, VIEWER = "Admin", "Editor", "Viewer"
ROOT_ONLY_NOTE = (
    "This server has no project access (open source: no project roles): derived from root "
    "roles only"
)

How = Literal["root role", "group root role", "directly", "group"]


@dataclass(frozen=True)
class Person:
    """A user or a service account, with its root role's name ("" for none)."""

    id: int
    name: str
    email: str
    username: str
    account_type: str
    root_role: str

    @property
    def label(self) -> str:
        shown = self.email or self.username or self.name or f"user {self.id}"
        return f"{self.name} <{shown}>" if self.name and shown != self.name else shown

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name or None, "email": self.email or None,
                "username": self.username or None, "accountType": self.account_type,
                "rootRole": self.root_role or None}  # fmt: skip


@dataclass(frozen=True)
class GroupInfo:
    id: int
    name: str
    root_role: str
    members: frozenset[int]


@dataclass(frozen=True)
class Reason:
    """One way a role is held: `how` ("root role", "group root role", "directly", "group"),
    and the group's name for the two through a group."""

    role: str
    how: How
    group: str = ""

    @property
    def text(self) -> str:
        if self.how == "root role":
            if self.role == EDITOR:
                return "Editor root role (the default project)"
            return f"{self.role} root role"
        if self.how == "group root role":
            return f"{self.role} root role of group “{self.group}”"
        if self.how == "group":
            return f"{self.role} through group “{self.group}”"
        return f"{self.role} directly"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role, "through": self.how}
        if self.group:
            out["group"] = self.group
        return out


@dataclass(frozen=True)
class Holding:
    """The roles one person holds in one project, and each way they hold them."""

    project: str
    person: Person
    reasons: tuple[Reason, ...]

    @property
    def roles(self) -> list[str]:
        return list(dict.fromkeys(r.role for r in self.reasons))

    def to_json(self) -> dict[str, Any]:
        return {"roles": self.roles, "why": [r.to_json() for r in self.reasons]}


@dataclass
class AccessData:
    """What `read_access` read (or a test made): everything the computation needs."""

    projects: list[Project]
    people: list[Person]
    groups: list[GroupInfo]
    #: each project's access; empty when `project_access` is False
    access: dict[str, ProjectAccess] = field(default_factory=dict)
    #: the server has project access (Pro, Enterprise, the sandbox)
    project_access: bool = True
    #: role id -> name, root and project roles
    role_names: dict[int, str] = field(default_factory=dict)

    @property
    def note(self) -> str:
        return "" if self.project_access else ROOT_ONLY_NOTE


@dataclass(frozen=True)
class UserAnswer:
    person: Person
    holdings: list[Holding]
    note: str
    #: custom root roles whose permissions were not read
    unread: list[str]

    def to_json(self) -> dict[str, Any]:
        return {
            "user": self.person.to_json(),
            "projectAccess": not self.note,
            "note": self.note or None,
            "notEvaluated": self.unread,
            "projects": [{"project": h.project, **h.to_json()} for h in self.holdings],
        }


@dataclass(frozen=True)
class ProjectAnswer:
    project: Project
    holdings: list[Holding]
    #: the groups holding project roles here: (name, roles, member count)
    groups: list[tuple[str, list[str], int]]
    note: str

    def to_json(self) -> dict[str, Any]:
        return {
            "project": {"id": self.project.id, "name": self.project.name},
            "projectAccess": not self.note,
            "note": self.note or None,
            "people": [{**h.person.to_json(), **h.to_json()} for h in self.holdings],
            "groups": [
                {"name": name, "roles": roles, "members": count}
                for name, roles, count in self.groups
            ],
        }


# ---------------------------------------------------------------------------- reading


def _person(user: User, roles: Mapping[int, str]) -> Person:
    root = user.rootRole
    root_name = roles.get(root, str(root)) if isinstance(root, int) else str(root or "")
    return Person(user.id, user.name or "", user.email or "", user.username or "",
                  user.accountType or "User", root_name)  # fmt: skip


class _ServiceAccounts(Response):
    """`GET /api/admin/service-account` (Enterprise): what is read of it here."""

    serviceAccounts: list[User] = []


async def _service_accounts(client: AdminClient) -> list[User]:
    """The server's service accounts where it lists them (Enterprise); none where it does not
    (open source: 404) or the token may not read them (403): they are then found only where a
    project's access lists them."""
    try:
        return (await client.get("/api/admin/service-account", _ServiceAccounts)).serviceAccounts
    except e.ClientError:
        return []


# ---- no collections while the answers are built (bench/credentials.py, issue 36)
async def read_access(
    client: AdminClient,
    *,
    concurrency: int = CONCURRENCY,
    on_progress: Callable[[int, int], object] | None = None,
) -> AccessData:
    """The server's users, groups, projects and (where it has project access) every project's
    access, read concurrently (at most `concurrency` projects' at once). `on_progress(done,
    total)`, when given, is called as the projects' access is read (once with 0 before the
    first, then after each project): the window's progress. Without cyclic garbage collection
    meanwhile (`app.startup.paused_gc`): the answers of `flagdesk serve --scale`'s 500 projects
    made full collections of 130-140 ms, each a stall of the window reading them, in a read of
    about a second (bench/credentials.py, access_longest_gc_ms)."""
    with paused_gc():
        return await _read_all(client, concurrency=concurrency, on_progress=on_progress)


async def _read_all(
    client: AdminClient,
    *,
    concurrency: int,
    on_progress: Callable[[int, int], object] | None,
) -> AccessData:
    """`read_access`'s reads."""
    from app.registry import PROJECT_ACCESS

    caps = await client.capabilities()
    users, projects, robots = await asyncio.gather(
        client.list_users(), client.list_projects(), _service_accounts(client)
    )
    roles = {r.id: r.name for r in users.rootRoles}
    groups: list[Group] = []
    if caps.operation("groups").available:
        groups = (await client.list_groups()).groups
    data = AccessData(
        projects=list(projects.projects),
        people=[_person(u, roles) for u in users.users]
        + [
            _person(r.model_copy(update={"accountType": "Service Account"}), roles)
            for r in robots
            if r.id not in {u.id for u in users.users}
        ],
        groups=[
            GroupInfo(
                g.id,
                g.name,
                roles.get(g.rootRole, "") if g.rootRole is not None else "",
                frozenset(m.user.id for m in g.users),
            )
            for g in groups
        ],
        role_names=roles,
        project_access=caps.operation(PROJECT_ACCESS).available,
    )
    if not data.project_access:
        return data
    gate = asyncio.Semaphore(max(1, concurrency))
    total, read = len(data.projects), 0
    if on_progress is not None:
        on_progress(0, total)

    async def one(project: str) -> tuple[str, ProjectAccess | None]:
        nonlocal read
        async with gate:
            try:
                return project, await client.project_access(project)
            except e.NotFound:  # deleted while being read
                return project, None
            finally:
                read += 1
                if on_progress is not None:
                    on_progress(read, total)

    for project, found in await asyncio.gather(*(one(p.id) for p in data.projects)):
        if found is not None:
            data.access[project] = found
    _add_from_access(data)
    return data


def _add_from_access(data: AccessData) -> None:
    """The project roles' names, and the people only a project's access lists (service
    accounts: the users' list leaves them out)."""
    known = {p.id for p in data.people}
    for found in data.access.values():
        for role in found.roles:
            data.role_names.setdefault(role.id, role.name)
        for user in found.users:
            if user.id not in known:
                known.add(user.id)
                root = user.model_extra.get("rootRole") if user.model_extra else None
                data.people.append(Person(
                    user.id, user.name or "", user.email or "", user.username or "",
                    user.accountType or "User",
                    data.role_names.get(root, "") if isinstance(root, int) else "",
                ))  # fmt: skip


# ---------------------------------------------------------------------------- computing


class NoSuchPerson(LookupError):
    """Words that name no user (or more than one); `str()` says which."""


def find_person(data: AccessData, asked: str) -> Person:
    """The user or service account `asked` names: by email (any case), username or id."""
    word = asked.strip()
    folded = word.casefold()
    found = [p for p in data.people if p.email.casefold() == folded and p.email]
    found = found or [p for p in data.people if p.username and p.username.casefold() == folded]
    if not found and word.isdigit():
        found = [p for p in data.people if p.id == int(word)]
    if not found:
        raise NoSuchPerson(f"no user or service account has the email, username or id “{word}”")
    return found[0]


def _root_reasons(person: Person, groups: Sequence[GroupInfo]) -> list[Reason]:
    """The root roles that reach `person`: theirs, and each of their groups'."""
    reasons = []
    if person.root_role:
        reasons.append(Reason(person.root_role, "root role"))
    for group in groups:
        if group.root_role and person.id in group.members:
            reasons.append(Reason(group.root_role, "group root role", group.name))
    return reasons


def _reach(root: Iterable[Reason], project: str) -> list[Reason]:
    """The root reasons that give a role in `project`: Admin everywhere, Editor in default."""
    return [r for r in root
            if r.role == ADMIN or (r.role == EDITOR and project == DEFAULT_PROJECT)]  # fmt: skip


def _project_reasons(data: AccessData, person: Person, project: str) -> list[Reason]:
    found = data.access.get(project)
    if found is None:
        return []
    names = data.role_names
    reasons: list[Reason] = []
    for user in found.users:
        if user.id == person.id:
            reasons += [Reason(names.get(r, str(r)), "directly") for r in user.roles]
    members = {g.id: g.members for g in data.groups}
    for group in found.groups:
        inside = members.get(group.id)
        if inside is None:
            inside = frozenset(m.user.id for m in group.users)
        if person.id in inside:
            reasons += [Reason(names.get(r, str(r)), "group", group.name) for r in group.roles]
    return reasons


def _unread(root: Iterable[Reason]) -> list[str]:
    return sorted({r.role for r in root if r.role not in (ADMIN, EDITOR, VIEWER)})


def user_access(data: AccessData, person: Person) -> UserAnswer:
    """Every project in which `person` holds a role, with each way they hold it."""
    root = _root_reasons(person, data.groups)
    holdings = []
    for project in data.projects:
        reasons = _reach(root, project.id) + _project_reasons(data, person, project.id)
        if reasons:
            holdings.append(Holding(project.id, person, tuple(reasons)))
    return UserAnswer(person, holdings, data.note, _unread(root))


def project_access(data: AccessData, project_id: str) -> ProjectAnswer:
    """Everyone who can change `project_id` (Admins, the default project's Editors, holders of
    a project role directly or through a group), each with why; and the groups holding roles
    there. `KeyError` naming the project when the server has none of that id."""
    project = next((p for p in data.projects if p.id == project_id), None)
    if project is None:
        raise KeyError(f"no project “{project_id}” on this server")
    holdings = []
    for person in data.people:
        reasons = _reach(_root_reasons(person, data.groups), project_id)
        reasons += _project_reasons(data, person, project_id)
        if reasons:
            holdings.append(Holding(project_id, person, tuple(reasons)))
    holdings.sort(key=lambda h: (h.person.name.casefold(), h.person.id))
    groups = []
    found = data.access.get(project_id)
    if found is not None:
        members = {g.id: len(g.members) for g in data.groups}
        for group in found.groups:
            groups.append((group.name, [data.role_names.get(r, str(r)) for r in group.roles],
                           members.get(group.id, len(group.users))))  # fmt: skip
    return ProjectAnswer(project, holdings, groups, data.note)
