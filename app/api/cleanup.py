"""The clean-up report (issue 36): what on a server can probably go, read through `AdminClient`
and nothing else, and what each finding's remedy is. Read only: nothing is sent but `GET`s.
`flagdesk cleanup report` prints it (`app.commands.cleanup`); its window shows it the same way
(`app.viewmodels.cleanup`, `ui.cleanup`: a Qt-free job of the client, as `app.api.search` is),
and acts on a finding through its tool's own plans.

A finding is a `Finding`: its kind (`KINDS`: what was found), the thing's id and name as its own
tool names it, a detail (a token's type and scope, a group's projects), why it was found ("never
seen, created 2026-10-01", "last seen 41 days ago (2026-10-27)", "expired 2026-11-02"), and the
action that acts on it, from the registry (`api_tokens.delete`, `personal_tokens.delete`,
`groups.delete`, `inactive_users.delete`, `service_accounts.delete`, `roles.delete`) or
none, when the remedy is to open its tool and look (`Kind.tool`). The action is carried out
as that tool's own (plan, confirmation, journal, snapshot, undo): the report itself changes
nothing.

What is read, and where each part is unavailable (the report then says so in one line,
`Unavailable`, with the capability report's reason, instead of failing):

- **API tokens** (`GET /api/admin/api-tokens`, every release: `seenAt`, `expiresAt`,
  `createdAt`; `unleash-admin-console-behaviour.md` §1): expired (`expiresAt` past), else never
  seen (`seenAt` null: Unleash writes it by a flush a minute, so a token used in the last
  minute may still show as never seen), else not seen for `days` or more. The connection's
  own token is never a finding. Each token is one finding, in that order of precedence.
- **Personal access tokens** (`GET /api/admin/user/tokens`): the connected user's alone, and
  only when the connection's token is a personal access token: Unleash shows nobody another
  user's, and an admin API token has no user (§2: 403). Expired, never used, not used for
  `days`.
- **Groups** (`GET /api/admin/groups`, with their members: Unleash Enterprise and the sandbox;
  open-source Unleash has none, §7): groups with no members.
- **Inactive users** (`GET /api/admin/user-admin/inactive`, the inactive users tool's read):
  as the server counts them (Unleash: no login and no personal-token use in 180 days; `days`
  does not change it).
- **Service accounts** (`GET /api/admin/service-account`, with their tokens: Unleash
  Enterprise and the sandbox): those with no token, with tokens none of which was ever used,
  or whose newest use (`seenAt`, the latest of its tokens') is `days` or more ago; the `why`
  says which. Removed by `service_accounts.delete` (its tokens go with it).
- **Custom roles** (`GET /api/admin/roles`: Unleash Enterprise and the sandbox; where
  `roles.delete` is not available the part says why): a custom root role (`root-custom`) that
  no user (`GET /api/admin/user-admin`), service account or group has as its root role; a
  custom project role held in no project (`GET /api/admin/projects/roles/:id/access`, a few
  roles at a time). Removed by `roles.delete`, whose plan reads the holders again.

**Adding a kind of finding**: add its `Kind`s to `KINDS` (the report's order; `action` the
registry key of the action that removes one, or None to open `tool`), and a `Reader` to
`READERS`: `source` the registry tool (or action) whose availability decides (its reason is
the `Unavailable` line), and `read`, an async function of a `Context` returning `Finding`s made
with `finding(...)`. The command, its JSON and its counts follow; its test plants the cases
with `sandbox.demo.ACCESS_SCALE_PLANTERS`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from app.api import errors as e
from app.registry import (
    API_TOKENS,
    CLEANUP,
    DELETE_API_TOKEN,
    DELETE_GROUP,
    DELETE_INACTIVE_USERS,
    DELETE_PAT,
    DELETE_ROLE,
    DELETE_SERVICE_ACCOUNT,
    OPERATIONS,
    PERSONAL_TOKENS,
    ROLES,
    SERVICE_ACCOUNTS,
    TOOL,
)

if TYPE_CHECKING:
    from app.api.capabilities import Capabilities
    from app.api.client import AdminClient
    from app.api.models import Role

#: "not seen" (and "not used") means for this many days or more, unless told
DEFAULT_DAYS = 30


@dataclass(frozen=True, slots=True)
class Kind:
    """One kind of finding: its key (in `--json`), its heading, and its remedy."""

    key: str
    title: str
    #: the registry action that removes one (None: open `tool` and look)
    action: str | None
    #: the registry tool it belongs to (the one to open)
    tool: str


KINDS: tuple[Kind, ...] = (
    Kind("api_token_expired", "API tokens expired", DELETE_API_TOKEN.key, API_TOKENS.key),
    Kind("api_token_never_seen", "API tokens never seen", DELETE_API_TOKEN.key, API_TOKENS.key),
    Kind("api_token_not_seen", "API tokens not seen lately", DELETE_API_TOKEN.key,
         API_TOKENS.key),
    Kind("pat_expired", "Your personal access tokens expired", DELETE_PAT.key,
         PERSONAL_TOKENS.key),
    Kind("pat_never_used", "Your personal access tokens never used", DELETE_PAT.key,
         PERSONAL_TOKENS.key),
    Kind("pat_not_used", "Your personal access tokens not used lately", DELETE_PAT.key,
         PERSONAL_TOKENS.key),
    Kind("group_empty", "Groups with no members", DELETE_GROUP.key, TOOL.groups.key),
    Kind("user_inactive", "Inactive users", DELETE_INACTIVE_USERS.key, TOOL.inactive_users.key),
    # service accounts and custom roles (Unleash Enterprise and the sandbox)
    Kind("service_account_unused", "Service accounts with no token used lately",
         DELETE_SERVICE_ACCOUNT.key, SERVICE_ACCOUNTS.key),
    Kind("role_unused", "Custom roles nobody holds", DELETE_ROLE.key, ROLES.key),
)  # fmt: skip
KINDS_BY_KEY: dict[str, Kind] = {kind.key: kind for kind in KINDS}


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing that can probably go. `id` names it to its action (an API token's secret's
    last four characters `…3f9a`, never more; a personal access token's, group's or user's
    id); `subject` is the model read (an API token's with its `secret`, for a plan to delete
    it): never printed, never in `to_json`."""

    kind: str
    id: str
    name: str
    detail: str
    why: str
    #: the time `why` is about (last seen, expired, created), when there is one
    since: datetime | None = None
    subject: object = field(default=None, compare=False, repr=False)

    @property
    def action(self) -> str | None:
        return KINDS_BY_KEY[self.kind].action

    @property
    def tool(self) -> str:
        return KINDS_BY_KEY[self.kind].tool

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "id": self.id,
            "name": self.name,
            "detail": self.detail,
            "why": self.why,
            "since": _wire(self.since),
            "action": self.action,
            "tool": self.tool,
        }


@dataclass(frozen=True, slots=True)
class Unavailable:
    """A part of the report this server or token cannot give, and why (one line)."""

    what: str
    kinds: tuple[str, ...]
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"what": self.what, "kinds": list(self.kinds), "reason": self.reason}


@dataclass(frozen=True, slots=True)
class Context:
    """What a reader reads with: the client, its capabilities, the days, and now."""

    client: AdminClient
    caps: Capabilities
    days: int
    now: datetime

    @property
    def cutoff(self) -> datetime:
        """Seen before this: not seen for `days` or more."""
        return self.now - timedelta(days=self.days)


@dataclass(frozen=True, slots=True)
class Reader:
    """One part of the report: `read` gives its findings, when the registry tool `source` (or
    action: `roles.delete` for custom roles) is available on the connection (else the report
    says why, as an `Unavailable`)."""

    what: str
    kinds: tuple[str, ...]
    source: str
    read: Callable[[Context], Awaitable[list[Finding]]]


@dataclass
class Report:
    server: str
    days: int
    as_of: datetime
    findings: list[Finding]
    unavailable: list[Unavailable]
    #: the kinds its readers look for (those of `unavailable` included)
    looked_for: frozenset[str] = frozenset()

    def of_kind(self, key: str) -> list[Finding]:
        return [f for f in self.findings if f.kind == key]

    @property
    def kinds(self) -> list[Kind]:
        """The kinds the report could look for here, in `KINDS` order."""
        out = {k for u in self.unavailable for k in u.kinds}
        return [kind for kind in KINDS if kind.key not in out and kind.key in self.looked_for]

    def counts(self) -> dict[str, int]:
        """Each kind looked for, with how many were found (0 included), in `KINDS` order."""
        return {kind.key: len(self.of_kind(kind.key)) for kind in self.kinds}

    def to_json(self) -> dict[str, Any]:
        """The `--json` shape: `server`, `days`, `asOf`, `counts` (every kind looked for),
        `total`, `unavailable` (what could not be read, and why), `findings` (by kind)."""
        return {
            "server": self.server,
            "days": self.days,
            "asOf": _wire(self.as_of),
            "counts": self.counts(),
            "total": len(self.findings),
            "unavailable": [u.to_json() for u in self.unavailable],
            "findings": [f.to_json() for f in self.findings],
        }


def _wire(value: datetime | None) -> str | None:
    if value is None:
        return None
    return value.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _day(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%d")


def _ago(now: datetime, then: datetime) -> str:
    days = (now - then).days
    if days < 1:
        return "today"
    return f"{days} day ago" if days == 1 else f"{days} days ago"


def finding(kind: str, id: str, name: str, detail: str, why: str, since: datetime | None = None,
            subject: object = None) -> Finding:  # fmt: skip
    """A `Finding` of `kind` (a key of `KINDS`: KeyError for another)."""
    if kind not in KINDS_BY_KEY:
        raise KeyError(f"{kind!r} is not a kind of finding (app.api.cleanup.KINDS)")
    return Finding(kind, id, name, detail, why, since, subject)


# ---------------------------------------------------------------------------- the readers


async def _api_tokens(ctx: Context) -> list[Finding]:
    from app.api.client import secret_tail

    found = []
    for token in (await ctx.client.api_tokens()).tokens:
        secret = token.secret or ""
        if secret and ctx.client.is_own_token(secret):
            continue  # the connection's own token: in use now
        projects = token.scope
        where = "all projects" if projects in ([], ["*"]) else ", ".join(projects)
        detail = f"{token.type}, {where} / {token.environment or '*'}"
        args = (secret_tail(secret), token.name, detail)
        if token.expiresAt is not None and token.expiresAt <= ctx.now:
            why = f"expired {_day(token.expiresAt)}"
            found.append(finding("api_token_expired", *args, why, token.expiresAt, token))
        elif token.seenAt is None:
            created = f", created {_day(token.createdAt)}" if token.createdAt else ""
            found.append(finding("api_token_never_seen", *args, f"never seen{created}",
                                 token.createdAt, token))  # fmt: skip
        elif token.seenAt <= ctx.cutoff:
            why = f"last seen {_ago(ctx.now, token.seenAt)} ({_day(token.seenAt)})"
            found.append(finding("api_token_not_seen", *args, why, token.seenAt, token))
    return found


async def _personal_tokens(ctx: Context) -> list[Finding]:
    found = []
    for pat in (await ctx.client.personal_tokens()).pats:
        created = f"created {_day(pat.createdAt)}" if pat.createdAt else ""
        args = (str(pat.id), pat.description, created)
        if pat.expiresAt is not None and pat.expiresAt <= ctx.now:
            why = f"expired {_day(pat.expiresAt)}"
            found.append(finding("pat_expired", *args, why, pat.expiresAt, pat))
        elif pat.seenAt is None:
            found.append(finding("pat_never_used", *args, "never used", pat.createdAt, pat))
        elif pat.seenAt <= ctx.cutoff:
            why = f"last used {_ago(ctx.now, pat.seenAt)} ({_day(pat.seenAt)})"
            found.append(finding("pat_not_used", *args, why, pat.seenAt, pat))
    return found


async def _groups(ctx: Context) -> list[Finding]:
    found = []
    for group in (await ctx.client.list_groups()).groups:
        members = group.userCount if group.userCount is not None else len(group.users)
        if members:
            continue
        detail = f"roles in {', '.join(group.projects)}" if group.projects else "no project roles"
        created = f", created {_day(group.createdAt)}" if group.createdAt else ""
        found.append(finding("group_empty", str(group.id), group.name, detail,
                             f"no members{created}", group.createdAt, group))  # fmt: skip
    return found


async def _inactive_users(ctx: Context) -> list[Finding]:
    found = []
    for user in (await ctx.client.inactive_users()).inactiveUsers:
        name = user.name or user.username or user.email or f"user {user.id}"
        detail = user.email or user.username or ""
        since: datetime | None = user.seenAt
        if user.seenAt is not None:
            why = f"no login since {_day(user.seenAt)}"
        else:
            created = f", created {_day(user.createdAt)}" if user.createdAt else ""
            why, since = f"never logged in{created}", user.createdAt
        if user.patSeenAt is not None:
            why += f"; a personal access token last used {_day(user.patSeenAt)}"
        found.append(finding("user_inactive", str(user.id), name, detail, why, since, user))
    return found


async def _service_accounts(ctx: Context) -> list[Finding]:
    found = []
    for account in (await ctx.client.service_accounts()).serviceAccounts:
        name = account.name or account.username or f"service account {account.id}"
        detail = account.username or ""
        created = f", created {_day(account.createdAt)}" if account.createdAt else ""
        tokens = account.tokens
        used = [t.seenAt for t in tokens if t.seenAt is not None]
        if not tokens:
            why, since = f"no tokens{created}", account.createdAt
        elif not used:
            why = ("its token was never used" if len(tokens) == 1
                   else f"none of its {len(tokens)} tokens was ever used")  # fmt: skip
            since = account.createdAt
        else:
            since = max(used)
            if since > ctx.cutoff:
                continue  # a token used within `days`: in use
            its = "its token" if len(tokens) == 1 else f"the newest of its {len(tokens)} tokens"
            why = f"{its} last used {_ago(ctx.now, since)} ({_day(since)})"
        found.append(finding("service_account_unused", str(account.id), name, detail, why,
                             since, account))  # fmt: skip
    return found


def _id(role: int | str | None) -> int:
    """A root role's id as a list gives it (an integer, or one written as text); 0 for none."""
    if isinstance(role, int):
        return role
    return int(role) if role is not None and role.strip().isdigit() else 0


#: how many roles' project access `_roles` reads at once
ROLE_READS_AT_ONCE = 8


async def _roles(ctx: Context) -> list[Finding]:
    from app.api.models import PREDEFINED_ROLE_TYPES, ROOT_TYPES

    def is_root(role: Role) -> bool:
        return role.type in ROOT_TYPES

    client = ctx.client
    custom = [r for r in (await client.roles()).roles if r.type not in PREDEFINED_ROLE_TYPES]
    if not custom:
        return []
    held: set[int] = set()
    if any(is_root(r) for r in custom):
        # a root role is held by a user, a service account or a group whose root role it is
        held.update(_id(u.rootRole) for u in (await client.list_users()).users)
        if ctx.caps.operation(SERVICE_ACCOUNTS).available:
            accounts = (await client.service_accounts()).serviceAccounts
            held.update(_id(a.rootRole) for a in accounts)
        if ctx.caps.operation(TOOL.groups).available:
            groups = (await client.list_groups()).groups
            held.update(_id(g.rootRole) for g in groups)
    limit = asyncio.Semaphore(ROLE_READS_AT_ONCE)

    async def in_a_project(role_id: int) -> bool:
        async with limit:
            usage = (await client.role_access(role_id)).projects
        return any(p.userCount or p.serviceAccountCount or p.groupCount for p in usage)

    project_roles = [r for r in custom if not is_root(r)]
    answers = await asyncio.gather(*(in_a_project(r.id) for r in project_roles))
    held.update(r.id for r, used in zip(project_roles, answers, strict=True) if used)
    found = []
    for role in custom:
        if role.id in held:
            continue
        why = ("no user, service account or group has it as root role" if is_root(role)
               else "held in no project")  # fmt: skip
        kind = "custom root role" if is_root(role) else "custom project role"
        detail = kind + (f": {role.description}" if role.description else "")
        found.append(finding("role_unused", str(role.id), role.name, detail, why, None, role))
    return found


#: the report's parts, in order (see "Adding a kind of finding" above)
READERS: list[Reader] = [
    Reader("API tokens", ("api_token_expired", "api_token_never_seen", "api_token_not_seen"),
           API_TOKENS.key, _api_tokens),
    Reader("your personal access tokens", ("pat_expired", "pat_never_used", "pat_not_used"),
           PERSONAL_TOKENS.key, _personal_tokens),
    Reader("groups", ("group_empty",), TOOL.groups.key, _groups),
    Reader("inactive users", ("user_inactive",), TOOL.inactive_users.key, _inactive_users),
    # Enterprise's parts: where the server has none, their one line says so
    Reader("service accounts", ("service_account_unused",), SERVICE_ACCOUNTS.key,
           _service_accounts),
    Reader("custom roles", ("role_unused",), DELETE_ROLE.key, _roles),
]  # fmt: skip


async def _read(reader: Reader, ctx: Context) -> list[Finding] | Unavailable:
    """The reader's findings; an `Unavailable` when the server refuses its read although the
    capabilities said it could (403, 404: a release or a role the probe does not tell)."""
    try:
        return await reader.read(ctx)
    except (e.Forbidden, e.NotFound) as exc:
        return Unavailable(reader.what, reader.kinds, f"the server refused to list them: {exc}")


async def cleanup_report(
    client: AdminClient,
    *,
    days: int = DEFAULT_DAYS,
    now: datetime | None = None,
    readers: Sequence[Reader] | None = None,
) -> Report:
    """The report of the connection's server: `Unsupported` (nothing read) when the token
    cannot have it (the registry's `cleanup` tool: an Admin's token); each part this server
    or token cannot give (or whose read it refuses, 403 or 404) is an `Unavailable` line;
    another failure is the report's. The parts are read side by side; the
    findings come in `KINDS` order, each kind in the order the server listed them."""
    if days < 0:
        raise ValueError(f"days: {days} is not 0 or more")
    caps = await client.capabilities()
    availability = caps.operation(CLEANUP)
    if not availability.available:
        raise e.Unsupported(availability.title, availability.reason)
    ctx = Context(client, caps, days, now or datetime.now(UTC))
    parts = list(READERS if readers is None else readers)
    unavailable = []
    reading = []
    for reader in parts:
        # a tool's availability, or an action's (custom roles: `roles.delete`, where the roles
        # tool itself lists the built-in roles everywhere)
        source = (caps.operation(reader.source) if reader.source in OPERATIONS
                  else caps.action(reader.source))  # fmt: skip
        if source.available:
            reading.append(reader)
        else:
            unavailable.append(Unavailable(reader.what, reader.kinds, source.reason))
    results = await asyncio.gather(*(_read(reader, ctx) for reader in reading))
    read = []
    for found in results:
        if isinstance(found, Unavailable):
            unavailable.append(found)
        else:
            read += found
    order = {kind.key: n for n, kind in enumerate(KINDS)}
    read.sort(key=lambda f: order[f.kind])  # stable: the server's order within a kind
    looked_for = frozenset(k for reader in parts for k in reader.kinds)
    return Report(client.base_url, days, ctx.now, read, unavailable, looked_for)
