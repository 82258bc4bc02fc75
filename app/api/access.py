"""Who can do what where: for one user, every project with the roles they hold there and why;
for one project, everyone who can change it. Unleash's own pages answer this one project at a
time; this answers for the whole server, reading only what the question needs.

Two halves, kept apart so the computation is tested without a server:

- the I/O. `read_directory(client)` reads who there is: the users with their root roles (`GET
  /api/admin/user-admin`), the groups with their members, root roles and the projects they hold
  roles in (`GET /api/admin/groups`, where there are groups), the projects, the service
  accounts (Enterprise) and, where the server has it (Enterprise, the sandbox), the access
  overview (`GET /api/admin/access/overview`: the projects each user holds a role in). Then
  `read_projects(client, data, ids)` reads those projects' access (`GET
  /api/admin/projects/:p/access`, Pro and Enterprise), at most `concurrency` at a time, each
  once (`AccessData.access` keeps them). Which projects a question needs:
  `needed_for_user(data, person)` (where the overview knows the person, the projects it lists
  for them and their groups' projects; else every project) and `needed_for_project`. On a
  server without project access (open source) nothing more is read (`AccessData.project_access`
  is False). `read_access(client)` reads the directory and every project's access.
- the computation, with no I/O: `user_access(data, who)` and `project_access(data, project)`,
  over data holding what `needed_for_*` named.

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
    "NoSuchPerson",
    "Person",
    "ProjectAnswer",
    "Reason",
    "UserAnswer",
    "any_named",
    "find_person",
    "needed_for_project",
    "needed_for_user",
    "project_access",
    "read_access",
    "read_directory",
    "read_projects",
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
    #: the projects in which the group holds roles (the groups' list says so)
    projects: frozenset[str] = frozenset()


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
    #: the access of each project read so far (`read_projects`); none when `project_access`
    #: is False
    access: dict[str, ProjectAccess] = field(default_factory=dict)
    #: the projects whose access was asked for (a project deleted meanwhile has none)
    read: set[str] = field(default_factory=set)
    #: the server has project access (Pro, Enterprise, the sandbox)
    project_access: bool = True
    #: role id -> name, root and project roles
    role_names: dict[int, str] = field(default_factory=dict)
    #: user id -> the projects in which the access overview says they hold a project role;
    #: None where the server has no overview (open source, Pro) or the token may not read it
    reach: dict[int, frozenset[str]] | None = None
    #: the users' and service accounts' lists name everyone (else a service account may be
    #: named only by a project's access: the server lists none, or the token may not read them)
    everyone: bool = False

    @property
    def note(self) -> str:
        return "" if self.project_access else ROOT_ONLY_NOTE

    @property
    def complete(self) -> bool:
        """Every project's access is read (or there is none to read)."""
        return not self.project_access or all(p.id in self.read for p in self.projects)

    @property
    def knows_everyone(self) -> bool:
        """Everyone there is, is among `people`: a name found in none is nobody's."""
        return self.everyone or self.complete


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


async def _service_accounts(client: AdminClient) -> list[User] | None:
    """The server's service accounts where it lists them (Enterprise, the sandbox); None where
    it does not (open source: 404) or the token may not read them (403): they are then found
    only where a project's access lists them."""
    try:
        return (await client.get("/api/admin/service-account", _ServiceAccounts)).serviceAccounts
    except e.ClientError:
        return None


async def _access_overview(client: AdminClient) -> dict[int, frozenset[str]] | None:
    """Each user's projects from the access overview, where the server has one (Enterprise,
    the sandbox) and the token may read it; None where it has not (open source and Pro: 404)."""
    try:
        found = await client.access_overview()
    except e.ClientError:
        return None
    return {u.userId: frozenset(u.accessibleProjects) | frozenset(u.groupProjects)
            for u in found.overview}  # fmt: skip


async def read_directory(client: AdminClient) -> AccessData:
    """Who there is, with no project's access yet: the users, service accounts, groups and
    projects, and the access overview where the server has one, read concurrently."""
    from app.registry import PROJECT_ACCESS

    caps = await client.capabilities()
    has_access = caps.operation(PROJECT_ACCESS).available
    has_groups = caps.operation("groups").available

    async def no_reach() -> None:
        return None

    async def groups_of() -> list[Group]:
        return (await client.list_groups()).groups if has_groups else []

    users, projects, robots, groups, reach = await asyncio.gather(
        client.list_users(), client.list_projects(), _service_accounts(client), groups_of(),
        _access_overview(client) if has_access else no_reach(),
    )  # fmt: skip
    roles = {r.id: r.name for r in users.rootRoles}
    known = {u.id for u in users.users}
    return AccessData(
        projects=list(projects.projects),
        people=[_person(u, roles) for u in users.users]
        + [
            _person(r.model_copy(update={"accountType": "Service Account"}), roles)
            for r in robots or []
            if r.id not in known
        ],
        groups=[
            GroupInfo(
                g.id,
                g.name,
                roles.get(g.rootRole, "") if g.rootRole is not None else "",
                frozenset(m.user.id for m in g.users),
                frozenset(g.projects),
            )
            for g in groups
        ],
        role_names=roles,
        project_access=has_access,
        reach=reach,
        everyone=robots is not None or not has_access,
    )


def needed_for_user(data: AccessData, person: Person) -> list[str]:
    """The projects whose access `user_access(data, person)` needs and `data` has not read:
    where the access overview knows `person`, the projects it lists for them and the projects
    their groups hold roles in; else every project."""
    if not data.project_access:
        return []
    ids = [p.id for p in data.projects]
    if data.reach is not None and person.id in data.reach:
        wanted = set(data.reach[person.id])
        for group in data.groups:
            if person.id in group.members:
                wanted |= group.projects
        ids = [i for i in ids if i in wanted]
    return [i for i in ids if i not in data.read]


def needed_for_project(data: AccessData, project: str) -> list[str]:
    """What `project_access(data, project)` needs and `data` has not read: that project's
    access (nothing for a project the server does not have)."""
    known = any(p.id == project for p in data.projects)
    return [project] if data.project_access and known and project not in data.read else []


async def read_projects(
    client: AdminClient,
    data: AccessData,
    projects: Sequence[str],
    *,
    concurrency: int = CONCURRENCY,
    on_progress: Callable[[int, int], object] | None = None,
) -> None:
    """Read the access of `projects` into `data` (those read already are not read again), at
    most `concurrency` at once, each kept as it comes (a read cancelled keeps what it read).
    `on_progress(done, total)`, when given, is called once with 0 before the first, then after
    each project: the window's progress. Without cyclic garbage
    collection meanwhile (`app.startup.paused_gc`): the answers of `flagdesk serve --scale`'s
    500 projects made full collections of 130-140 ms, each a stall of the window reading them,
    in a read of about a second (bench/credentials.py, access_longest_gc_ms)."""
    wanted = list(dict.fromkeys(p for p in projects if p not in data.read))
    if not data.project_access or not wanted:
        return
    gate = asyncio.Semaphore(max(1, concurrency))
    total, done = len(wanted), 0
    if on_progress is not None:
        on_progress(0, total)

    async def one(project: str) -> None:
        nonlocal done
        async with gate:
            try:
                found = await client.project_access(project)
            except e.NotFound:  # deleted while being read
                found = None
            data.read.add(project)  # kept as it comes: a read stopped keeps what it read
            if found is not None:
                data.access[project] = found
                _add_from_access(data, [found])
            done += 1
            if on_progress is not None:
                on_progress(done, total)

    with paused_gc():
        await asyncio.gather(*(one(p) for p in wanted))


async def read_access(
    client: AdminClient,
    *,
    concurrency: int = CONCURRENCY,
    on_progress: Callable[[int, int], object] | None = None,
) -> AccessData:
    """The directory (`read_directory`) and every project's access (`read_projects`): all
    that any question needs."""
    data = await read_directory(client)
    await read_projects(client, data, [p.id for p in data.projects], concurrency=concurrency,
                        on_progress=on_progress)  # fmt: skip
    return data


def _add_from_access(data: AccessData, read: Iterable[ProjectAccess]) -> None:
    """The project roles' names, and the people only a project's access lists (service
    accounts: the users' list leaves them out), from the projects' access just `read`."""
    known = {p.id for p in data.people}
    for found in read:
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


def any_named(data: AccessData, asked: str) -> bool:
    """Whether `asked` names someone among the people read so far."""
    try:
        find_person(data, asked)
    except NoSuchPerson:
        return False
    return True


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
