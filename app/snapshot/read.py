"""Reading a live server into a snapshot: `read_snapshot(client)` asks for each list of the
snapshot model (`app.snapshot.model.Snapshot`) through the admin client, concurrently, and names
everything by its natural key (a user by email, a group's members by email, a role by name, a
segment a strategy uses by the segment's name).

A list the server has not (groups, roles and project access on open source: the registry's
capabilities say so) or the token may not read (a 403) is not a failure: it goes into the
snapshot's `unread` with why, and the comparison leaves that kind out saying so. Anything else
(the server down, a 500, an answer that is not what it should be) fails the read with the
client's error, which names the request.

What is left out on purpose: the built-in strategy definitions (not `editable`: the same on
every server of a release), the built-in roles' permissions (only custom roles' are read, one
request each), API tokens' secrets (a snapshot never holds one: `ApiToken` has no field for it).

Environments come from the server's list and each project's (`visible`); flags from each
project's list, then each flag's own answer (its environments with their enabled state,
strategies in their order, variants, and its dependencies) and its tags: two requests a flag,
where the server has no batch export; where it has one
(Unleash 4.22 and later, the sandbox), one export a project that holds flags and an
environment gives them all, read as plain data (`_flags_exported`, `app.api.exported`). A
strategy's segments are named by the segments' list. The requests a list sends for each
project, role or flag go out at most `CONCURRENCY` at once, whichever list's (`Gate`)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from operator import attrgetter
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import quote, urlsplit, urlunsplit

from pydantic import TypeAdapter

from app.api import errors as e
from app.api.models import Response
from app.snapshot import model as s
from app.snapshot.compare import list_of
from app.startup import paused_gc

if TYPE_CHECKING:
    from app.api.capabilities import Capabilities
    from app.api.client import AdminClient
    from app.api.exported import Exported, Flag, Strategy
    from app.api.models import Project, Role, UserList

__all__ = ["CONCURRENCY", "read_snapshot"]

#: at most this many of a snapshot's per-project or per-object requests in flight at once
CONCURRENCY = 4
#: the role types whose permissions are read (a custom role's; the built-in ones' are the same
#: on every server of a release)
CUSTOM_ROLE_TYPES = frozenset({"root-custom", "custom-root", "custom"})

T = TypeVar("T")
Progress = Callable[[str], object]


class Unread(Exception):
    """A list this server or token cannot give: its text is why (kept in `unread`)."""


def public_url(url: str) -> str:
    """`url` with scheme, host and path only (no user, password, query or fragment)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


class Gate:
    """At most `limit` requests of one snapshot's read in flight at once, whichever list's:
    the lists read side by side share it. It holds single requests, never a job that sends
    more (which would wait on slots it holds). A gate a list had let 15 requests out at once
    and httpx's connection pool, which walks every connection it keeps on each request, grew
    to 20: a quarter of a 10,000-flag diff's 10 s of CPU."""

    def __init__(self, limit: int = CONCURRENCY) -> None:
        self._slots = asyncio.Semaphore(limit)

    async def sent(self, request: Awaitable[T]) -> T:
        async with self._slots:
            return await request


async def _gathered(jobs: Iterable[Awaitable[T]]) -> list[T]:
    return list(await asyncio.gather(*jobs))


def _needs(caps: Capabilities, key: str) -> None:
    """`Unread` when the registry's tool `key` does not work here (its reason says why)."""
    availability = caps.operation(key)
    if not availability.available:
        raise Unread(availability.reason or f"this server has no {key.replace('_', ' ')}")


# ------------------------------------------------------------------------------ the lists


async def _users(client: AdminClient) -> tuple[list[s.User], dict[int, str], UserList]:
    """The users by email (a user with none by username), {user id: that key} for the groups
    and project access, and the list as read (its root roles)."""
    found = await client.list_users()
    roles = {r.id: r.name for r in found.rootRoles}
    users, keys = [], {}
    for count, user in enumerate(found.users, 1):
        key = user.email or user.username
        if not key:
            continue  # nobody can name it on another server
        keys[user.id] = key
        root = user.rootRole
        role = roles.get(root) if isinstance(root, int) else (str(root) if root else None)
        users.append(s.User(email=key, name=user.name or None, rootRole=role))
        if count % USER_SLICE == 0:
            await asyncio.sleep(0)  # 2,000 users made at once held the window 25 ms
    return sorted(users, key=lambda u: u.email.casefold()), keys, found


async def _groups(client: AdminClient, caps: Capabilities, roles: dict[int, str]) -> list[s.Group]:
    """The groups with their members, made a slice at a time (200 groups of 2,000 members made
    at once held the event loop's thread 20 ms)."""
    _needs(caps, "groups")
    found = (await client.list_groups()).groups
    made: list[s.Group] = []
    for start in range(0, len(found), GROUP_SLICE):
        made += (
            s.Group(
                name=g.name,
                description=g.description or None,
                rootRole=roles.get(g.rootRole) if g.rootRole is not None else None,
                users=sorted(key for m in g.users if (key := m.user.email or m.user.username)),
            )
            for g in found[start : start + GROUP_SLICE]
        )
        await asyncio.sleep(0)
    return sorted(made, key=lambda g: g.name.casefold())


async def _roles(client: AdminClient, gate: Gate, root_roles: list[Role]) -> list[s.Role]:
    """Every role, a custom one's permissions read; where the server lists no roles (open
    source: 404), the built-in root roles the users' list names."""
    try:
        found = (await client.roles()).roles
    except e.NotFound:
        found = root_roles

    async def one(role_id: int, name: str, kind: str, about: str | None) -> s.Role:
        permissions: list[s.Permission] = []
        if kind in CUSTOM_ROLE_TYPES:
            held = (await gate.sent(client.get_role(role_id))).permissions
            permissions = sorted(
                {s.Permission(name=p.name, environment=p.environment) for p in held},
                key=str,
            )
        return s.Role(name=name, type=kind, description=about or None, permissions=permissions)

    return sorted(
        await _gathered(one(r.id, r.name, r.type, r.description) for r in found),
        key=lambda r: r.name.casefold(),
    )


async def _project_access(
    client: AdminClient,
    caps: Capabilities,
    gate: Gate,
    projects: list[str],
    users: dict[int, str],
) -> list[s.ProjectAccess]:
    from app.registry import PROJECT_ACCESS

    _needs(caps, PROJECT_ACCESS.key)

    async def one(project: str) -> list[s.ProjectAccess]:
        try:
            found = await gate.sent(client.project_access(project))
        except e.NotFound:  # deleted meanwhile
            return []
        names = {r.id: r.name for r in found.roles}
        held: dict[str, tuple[set[str], set[str]]] = {}
        for user in found.users:
            key = users.get(user.id) or user.email or user.username
            for role in user.roles or ([user.roleId] if user.roleId is not None else []):
                if key:
                    held.setdefault(names.get(role, str(role)), (set(), set()))[0].add(key)
        for group in found.groups:
            for role in group.roles or ([group.roleId] if group.roleId is not None else []):
                held.setdefault(names.get(role, str(role)), (set(), set()))[1].add(group.name)
        return [
            s.ProjectAccess(project=project, role=role, users=sorted(u), groups=sorted(g))
            for role, (u, g) in sorted(held.items())
        ]

    return [a for found in await _gathered(one(p) for p in projects) for a in found]


async def _api_tokens(client: AdminClient) -> list[s.ApiToken]:
    """The tokens' metadata, made a slice at a time as the flags are (10,000 tokens made at
    once held the event loop's thread 50 ms)."""
    found = sorted(
        (await client.api_tokens()).tokens,
        key=lambda t: ((t.tokenName or t.username or "").casefold(), t.type.lower()),
    )
    made: list[s.ApiToken] = []
    for start in range(0, len(found), FLAG_SLICE):
        made += _API_TOKENS.validate_python(
            [
                {
                    "tokenName": t.tokenName or t.username or "",
                    "type": t.type.lower(),
                    "projects": sorted(t.projects or ([t.project] if t.project else [])),
                    "environment": t.environment,
                    "expiresAt": t.expiresAt,
                }
                for t in found[start : start + FLAG_SLICE]
            ]
        )
        await asyncio.sleep(0)
    return made


async def _context_fields(client: AdminClient) -> list[s.ContextField]:
    return sorted(
        (
            s.ContextField(
                name=f.name,
                description=f.description or None,
                stickiness=bool(f.stickiness),
                legalValues=[
                    s.LegalValue(value=v.value, description=v.description or None)
                    for v in f.legalValues
                ],
            )
            for f in await client.list_context_fields()
        ),
        key=lambda f: f.name,
    )


async def _segments(client: AdminClient, names: dict[int, str]) -> list[s.Segment]:
    """The segments; `names` gets {segment id: name} for the strategies that use them."""
    found = (await client.segments()).segments
    names.update((g.id, g.name) for g in found)
    return sorted(
        (
            s.Segment(
                name=g.name,
                description=g.description or None,
                project=g.project,
                constraints=[_constraint(c.model_dump(exclude_none=True)) for c in g.constraints],
            )
            for g in found
        ),
        key=lambda g: g.name,
    )


# A flag is assembled as plain data (`_flag`) and validated into the snapshot's models a slice
# of flags at a time (`_validated_flags`): one model built at a time was 3 s of 10,000 flags,
# all of it on the event loop's thread. The assembly reads plain data too: the batch export's
# as validated (`app.api.exported`), or a flag's own answer dumped (`_flags`); a key the wire
# model defaults may be absent, so each is read with its default.


def _constraint(raw: dict[str, Any]) -> dict[str, Any]:
    """A constraint as the snapshot keeps it (`s.Constraint`; what else a server sends is left
    out)."""
    return {
        "contextName": str(raw.get("contextName", "")),
        "operator": str(raw.get("operator", "")),
        "values": [str(v) for v in raw.get("values") or []],
        "value": None if raw.get("value") is None else str(raw["value"]),
        "caseInsensitive": bool(raw.get("caseInsensitive", False)),
        "inverted": bool(raw.get("inverted", False)),
    }


def _payload(found: Mapping[str, Any] | None) -> dict[str, Any] | None:
    return None if found is None else {"type": found["type"], "value": found["value"]}


def _strategy(found: Mapping[str, Any], segments: dict[int, str]) -> dict[str, Any]:
    """`s.FlagStrategy`'s data from a strategy's (`FeatureStrategy`'s)."""
    ids = found.get("segments")
    return {
        "id": found["id"],
        "name": found["name"],
        "title": found.get("title") or None,
        "parameters": _texts(found.get("parameters") or {}),
        "constraints": [_constraint(c) for c in found.get("constraints") or ()],
        "segments": sorted(segments.get(i, f"#{i}") for i in ids) if ids else [],
        "variants": [
            {"name": v["name"], "weight": v["weight"], "weightType": v["weightType"],
             "stickiness": v["stickiness"], "payload": _payload(v.get("payload"))}
            for v in found.get("variants") or ()
        ],
        "disabled": bool(found.get("disabled")),
        "sortOrder": found.get("sortOrder") or 0,
    }  # fmt: skip


def _texts(parameters: dict[str, Any]) -> dict[str, str]:
    """A strategy's parameters as text: as they are when they are (Unleash's always are)."""
    if set(map(type, parameters.values())) <= {str}:
        return parameters
    return {k: _text(v) for k, v in parameters.items()}


def _text(value: Any) -> str:
    """A strategy parameter as text (Unleash keeps them as strings; some send numbers)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else str(value)


def _variant(v: Mapping[str, Any]) -> dict[str, Any]:
    """`s.Variant`'s data from a flag's variant in an environment (`Variant`'s)."""
    return {
        "name": v["name"],
        "weight": int(v["weight"]),
        "weightType": v.get("weightType") or "variable",
        "stickiness": v.get("stickiness") or "default",
        "payload": _payload(v.get("payload")),
        "overrides": [
            {"contextName": o["contextName"], "values": sorted(o.get("values") or ())}
            for o in v.get("overrides") or ()
        ],
    }


def _flag(
    found: Mapping[str, Any],
    project: str,
    tags: Iterable[tuple[str, str]],
    dependencies: list[dict[str, Any]],
    environments: list[dict[str, Any]],
) -> dict[str, Any]:
    """`s.Flag`'s data from a flag's (`Feature`'s, its environments given apart, each
    `s.FlagEnvironment`'s data), its tags (type, value) and its parents."""
    return {
        "name": found["name"],
        "project": project,
        "type": found.get("type") or "release",
        "description": found.get("description") or None,
        "impressionData": bool(found.get("impressionData")),
        "stale": bool(found.get("stale")),
        "tags": [
            {"type": t, "value": v} for t, v in sorted(set(tags), key=lambda t: f"{t[0]}:{t[1]}")
        ],
        "dependencies": sorted(
            (
                {
                    "feature": str(d.get("feature")),
                    "enabled": bool(d.get("enabled", True)),
                    "variants": sorted(str(v) for v in d.get("variants") or []),
                }
                for d in dependencies
            ),
            key=lambda d: d["feature"],
        ),
        "environments": environments,
    }


def _environment(
    name: str,
    enabled: bool,
    strategies: Sequence[Mapping[str, Any]],
    variants: Sequence[Mapping[str, Any]],
    segments: dict[int, str],
) -> dict[str, Any]:
    """`s.FlagEnvironment`'s data: strategies as `FeatureStrategy`'s, variants as `Variant`'s."""
    return {
        "name": name,
        "enabled": enabled,
        "strategies": [_strategy(x, segments) for x in strategies],
        "variants": [_variant(v) for v in variants],
    }  # fmt: skip


#: flags assembled, or validated into the snapshot's models, between two turns of the event
#: loop (a few ms each; 200 of the scale set's flags, two strategies in each of three
#: environments, held the Compare window up to 30 ms)
FLAG_SLICE = 100
#: groups made between two turns of the event loop
GROUP_SLICE = 50
#: users made between two turns of the event loop
USER_SLICE = 500
#: a flag's places in an environment assembled between two turns of the event loop (a
#: project's 500 flags in three environments: 23 ms whole, about 8 ms an environment)
ASSEMBLY_SLICE = 250
_FLAGS: TypeAdapter[list[s.Flag]] = TypeAdapter(list[s.Flag])
_API_TOKENS: TypeAdapter[list[s.ApiToken]] = TypeAdapter(list[s.ApiToken])


async def _validated_flags(found: list[dict[str, Any]]) -> list[s.Flag]:
    """The flags' data as the snapshot's models, in their order, a slice at a time with a turn
    of the event loop between: the window keeps answering while 10,000 flags are validated."""
    flags: list[s.Flag] = []
    for start in range(0, len(found), FLAG_SLICE):
        flags += _FLAGS.validate_python(found[start : start + FLAG_SLICE])
        await asyncio.sleep(0)
    return flags


async def _environments(client: AdminClient) -> list[s.Environment]:
    return sorted(
        (
            s.Environment(name=e.name, type=e.type, enabled=e.enabled, sortOrder=e.sortOrder)
            for e in (await client.environments()).environments
        ),
        key=lambda e: (e.sortOrder, e.name),
    )


class _ProjectEnvironment(Response):
    environment: str


class _ProjectDetail(Response):
    """`GET /api/admin/projects/:p` of Unleash 5 (gone by 8): what is read of it."""

    environments: list[_ProjectEnvironment] = []


async def _project_environments(
    client: AdminClient, gate: Gate, projects: list[str]
) -> dict[str, list[str]]:
    """Each project's environments, in their order: those `visible` in it
    (`/api/admin/environments/project/:p`); a release that does not say `visible` there (5.x)
    lists them in the project's own answer."""

    async def one(project: str) -> tuple[str, list[str]]:
        try:
            found = (await gate.sent(client.project_environments(project))).environments
            ordered = sorted(found, key=lambda x: (x.sortOrder, x.name))
            if any(x.visible is None for x in found):
                detail = await gate.sent(client.get(
                    f"/api/admin/projects/{quote(project, safe='')}", _ProjectDetail))  # fmt: skip
                has = {x.environment for x in detail.environments}
                return project, [x.name for x in ordered if x.name in has]
        except e.NotFound:  # deleted meanwhile
            return project, []
        return project, [x.name for x in ordered if x.visible]

    return dict(await _gathered(one(p) for p in projects))


async def _flags(
    client: AdminClient, gate: Gate, projects: list[str], segments: dict[int, str]
) -> list[s.Flag]:
    """Every live flag with its configuration: each project's list, then each flag's own
    answer (environments, strategies, variants, dependencies) and its tags."""
    listed = await _gathered(gate.sent(client.project_features(p)) for p in projects)

    async def one(project: str, name: str) -> dict[str, Any] | None:
        try:
            found, tags = await asyncio.gather(
                gate.sent(client.feature(project, name)), gate.sent(client.feature_tags(name))
            )
        except e.NotFound:  # archived or deleted meanwhile
            return None
        data = found.model_dump()
        places = [_environment(x["name"], x["enabled"], x["strategies"], x["variants"], segments)
                  for x in data["environments"]]  # fmt: skip
        return _flag(data, project, ((t.type, t.value) for t in tags.tags),
                     data["dependencies"], places)  # fmt: skip

    jobs = [one(p, f.name) for p, answer in zip(projects, listed, strict=True)
            for f in answer.features]  # fmt: skip
    found = [f for f in await _gathered(jobs) if f is not None]
    found.sort(key=lambda f: f["name"])
    return await _validated_flags(found)


def _export_says_on(caps: Capabilities) -> bool:
    """Whether the server's batch export says rightly whether a flag is on in its environment:
    Unleash 6.10's says `enabled: true` for a flag that is off, wherever the environment is
    enabled (measured on the 6.10.1 peer; 5.12, 7.6, 8.2 and the sandbox say it right). Not
    trusted on any 6.x, nor on a release that does not say its version."""
    from app.registry import version_tuple

    if caps.server_kind == "sandbox":
        return True
    found = version_tuple(caps.server_version)
    return found is not None and found[0] != 6


async def _flags_exported(
    client: AdminClient,
    caps: Capabilities,
    gate: Gate,
    projects: list[Project],
    environments: list[str],
    segments: dict[int, str],
) -> list[s.Flag]:
    """Every live flag with its configuration from the batch export, one request a project
    that holds flags and an environment (`AdminClient.exported`: no one answer long to decode),
    assembled as each flag's own answer would give it, a project at a time as its answers come
    while the others' are served. A project holds flags unless the server's list says it holds
    none (`featureCount` 0: a server of 500 projects may have flags in 20). Where the export
    may say wrongly whether a flag is on (`_export_says_on`), its project's list says it."""
    lists = not _export_says_on(caps)

    async def one(project: str) -> list[s.Flag]:
        exports = await asyncio.gather(
            *(gate.sent(client.exported(env, project)) for env in environments)
        )
        on: dict[tuple[str, str], bool] = {}
        if lists:
            listed = await gate.sent(client.project_features(project))
            on = {(f.name, x.name): x.enabled for f in listed.features for x in f.environments}
        return await _validated_flags(await _assembled(environments, exports, on, segments))

    found = await _gathered(one(p.id) for p in projects if p.featureCount != 0)
    return sorted((flag for flags in found for flag in flags), key=attrgetter("name"))


async def _assembled(
    environments: list[str],
    exports: list[Exported],
    on: dict[tuple[str, str], bool],
    segments: dict[int, str],
) -> list[dict[str, Any]]:
    """`s.Flag`'s data of the live flags of `exports` (one an environment, in that order),
    sorted by name; a flag on in an environment where `on` says so, else where its export
    says so."""
    flags: dict[str, Flag] = {}
    tags: dict[str, set[tuple[str, str]]] = {}
    parents: dict[str, list[dict[str, Any]]] = {}
    places: dict[str, list[dict[str, Any]]] = {}
    for env, found in zip(environments, exports, strict=True):
        for flag in found.get("features", ()):
            if not flag.get("archived"):
                flags.setdefault(flag["name"], flag)
        for tag in found.get("featureTags", ()):
            tags.setdefault(tag["featureName"], set()).add((tag["tagType"], tag["tagValue"]))
        for dependency in found.get("dependencies", ()):
            parents[dependency["feature"]] = dependency.get("dependencies", [])
        strategies: dict[str, list[Strategy]] = {}
        for strategy in sorted(found.get("featureStrategies", ()),
                               key=lambda x: x.get("sortOrder") or 0):  # fmt: skip
            strategies.setdefault(strategy.get("featureName") or "", []).append(strategy)
        for count, place in enumerate(found.get("featureEnvironments", ()), 1):
            name = place["featureName"]
            places.setdefault(name, []).append(_environment(
                env, on.get((name, env), place["enabled"]), strategies.get(name, []),
                place.get("variants", []), segments,
            ))  # fmt: skip
            if count % ASSEMBLY_SLICE == 0:
                await asyncio.sleep(0)  # the event loop's thread is the window's
        await asyncio.sleep(0)
    return [
        _flag(flag, flag.get("project") or "", tags.get(name, ()), parents.get(name, []),
              places.get(name, []))
        for name, flag in sorted(flags.items())
    ]  # fmt: skip


async def _tag_types(client: AdminClient) -> list[s.TagType]:
    return sorted(
        (
            s.TagType(name=t.name, description=t.description or None, icon=t.icon or None)
            for t in (await client.tag_types()).tagTypes
        ),
        key=lambda t: t.name,
    )


async def _strategies(client: AdminClient) -> list[s.StrategyDefinition]:
    """The custom strategy definitions (the built-in ones are not `editable`)."""
    return sorted(
        (
            s.StrategyDefinition(
                name=d.name,
                description=d.description or None,
                parameters=[
                    s.StrategyParameter(
                        name=p.name,
                        type=p.type,
                        description=p.description or None,
                        required=bool(p.required),
                    )
                    for p in d.parameters
                ],
                deprecated=bool(d.deprecated),
            )
            for d in (await client.strategy_definitions()).strategies
            if d.editable
        ),
        key=lambda d: d.name,
    )


# ------------------------------------------------------------------------------ the whole


async def _nothing_in_projects(unread: dict[str, str]) -> dict[str, list[str]]:
    """The projects' environments when the projects are not asked for: none read."""
    unread["projects"] = NOT_ASKED
    return {}


async def _part(
    name: str, job: Awaitable[list[T]], unread: dict[str, str], progress: Progress | None
) -> list[T]:
    """A list read, or `[]` with why in `unread` when this server or token cannot give it."""
    try:
        found = await job
    except Unread as why:
        unread[name] = str(why)
        return []
    except e.Forbidden as refused:
        unread[name] = f"the token may not read them ({refused})"
        return []
    if progress is not None:
        progress(name)
    return found


#: why a list was left out of a snapshot read for some kinds only (`read_snapshot(kinds=...)`)
NOT_ASKED = "not asked for"


async def read_snapshot(
    client: AdminClient,
    *,
    progress: Progress | None = None,
    batch: bool = True,
    kinds: Iterable[str] | None = None,
) -> s.Snapshot:
    """The server's configuration now, as a snapshot. `progress(list name)`, when given, is
    called as each list is read. The flags come from the batch export where the server has it
    (`batch`), else from each flag's own answer.

    `kinds` (the comparison's kind keys, `app.snapshot.compare.KINDS`): read only what those
    need (`flagdesk diff --kinds flags` reads no project's access nor API token); every other
    list is left empty and said in `unread` as not asked for, so a comparison of it says it was
    not compared. The users, the project list, the environments and the segments are always
    read (the others name them). None: everything, as a snapshot saved to a file is."""
    # a server of 10,000 flags is a million objects, which live as long as the snapshot: no
    # collection walks them while they are made, nor after (a full one held the window 1.7 s;
    # one as the users and the projects were read, 0.1 s), as `read_access` does
    with paused_gc():
        return await _read(client, progress, batch, None if kinds is None else frozenset(kinds))


async def _read(
    client: AdminClient, progress: Progress | None, batch: bool, wanted: frozenset[str] | None
) -> s.Snapshot:
    caps = await client.capabilities()
    unread: dict[str, str] = {}
    gate = Gate()

    def asked(kind: str) -> bool:
        return wanted is None or kind in wanted

    async def not_asked(name: str) -> list[Any]:
        unread[name] = NOT_ASKED
        return []

    (users, user_keys, listed), projects = await asyncio.gather(
        _users(client), client.list_projects()
    )
    roles = {r.id: r.name for r in listed.rootRoles}
    project_ids = sorted(p.id for p in projects.projects)
    segment_names: dict[int, str] = {}
    segments, environments_read = await asyncio.gather(
        _part("segments", _segments(client, segment_names), unread, progress),
        _part("environments", _environments(client), unread, progress),
    )
    names = [x.name for x in environments_read]

    async def flags_of() -> list[s.Flag]:
        if batch and names:
            try:
                return await _flags_exported(client, caps, gate, projects.projects, names,
                                             segment_names)  # fmt: skip
            except (e.NotFound, e.BadRequest):
                pass  # no batch export here: each flag's own answer
        return await _flags(client, gate, project_ids, segment_names)

    # named tasks, not one gather: past six awaitables `asyncio.gather` loses their types
    task = asyncio.create_task

    def part(kind: str, job: Callable[[], Awaitable[list[T]]]) -> asyncio.Task[list[T]]:
        """The list of `kind` read (`job()` awaited) when it is asked for, else left out."""
        name = list_of(kind)
        return task(_part(name, job(), unread, progress) if asked(kind) else not_asked(name))

    groups = part("groups", lambda: _groups(client, caps, roles))
    roles_read = part("roles", lambda: _roles(client, gate, listed.rootRoles))
    access = part("project-access",
                  lambda: _project_access(client, caps, gate, project_ids, user_keys))  # fmt: skip
    tokens = part("api-tokens", lambda: _api_tokens(client))
    fields = part("context-fields", lambda: _context_fields(client))
    tag_types = part("tag-types", lambda: _tag_types(client))
    strategies = part("strategies", lambda: _strategies(client))
    in_projects = task(_project_environments(client, gate, project_ids) if asked("projects")
                       else _nothing_in_projects(unread))  # fmt: skip
    flags = part("flags", flags_of)
    every = (groups, roles_read, access, tokens, fields, tag_types, strategies, in_projects,
             flags)  # fmt: skip
    try:
        await asyncio.gather(*every)
    finally:
        for pending in every:
            pending.cancel()  # one failed: the others are not left running
    in_project = in_projects.result()
    return s.Snapshot(
        server=s.Server(
            kind="sandbox" if caps.server_kind == "sandbox" else "unleash",
            version=caps.server_version,
            url=public_url(client.base_url),
            edition=caps.edition or None,
        ),
        takenAt=datetime.now(UTC),
        projects=[
            s.Project(
                id=p.id,
                name=p.name,
                description=p.description or None,
                environments=in_project.get(p.id, []),
            )
            for p in sorted(projects.projects, key=lambda p: p.id)
        ],
        environments=environments_read,
        flags=flags.result(),
        users=users,
        groups=groups.result(),
        roles=roles_read.result(),
        projectAccess=access.result(),
        apiTokens=tokens.result(),
        contextFields=fields.result(),
        segments=segments,
        tagTypes=tag_types.result(),
        strategies=strategies.result(),
        unread={k: unread[k] for k in sorted(unread)},
    )
