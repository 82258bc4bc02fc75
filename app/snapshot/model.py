"""The snapshot model: one server's configuration at one time, as one JSON document
(`schemaVersion: 1`), in pydantic models whose field names are Unleash 8.2's where its schemas
have the thing (`featureSchema`, `featureStrategySchema`, `segmentSchema`, `contextFieldSchema`,
`tagTypeSchema`, `strategySchema`, `dependentFeatureSchema`, `apiTokenSchema`, ...).

Everything is named by its natural key, never by a server's numeric id: a flag by its name, a
project by its id (its key on Unleash), a segment a strategy uses by the segment's name, a
group's members and a project's access by email and group name, a role by its name. The one id
kept is a strategy's (`FlagStrategy.id`, optional): the comparison never matches by it, a
planner that writes a strategy needs it.

A snapshot never holds a secret: an API token is its metadata only (`ApiToken` has no
`secret`, and unknown fields are refused), the server's `url` has no user, password, query or
fragment, and `secrets_in` (checked on every load and save, `app.snapshot.files`) finds any
text that looks like a token, which refuses the document.

The models are frozen and refuse unknown fields: a misspelt field in a hand-edited file is an
error naming its JSON path, not a value silently dropped. Pydantic and the standard library
only."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator

#: the versions of the snapshot document this flagdesk reads (and the one it writes: the last)
SCHEMA_VERSIONS = (1,)
SCHEMA_VERSION: Literal[1] = 1


class Part(BaseModel):
    """A part of a snapshot: frozen, unknown fields refused."""

    model_config = ConfigDict(extra="forbid", frozen=True)


# ---------------------------------------------------------------------------------- server


class Server(Part):
    """Where the snapshot was taken: the server's kind and version (`uiConfigSchema.version`),
    its address without secrets, and its edition when known ("Open source", "Pro",
    "Enterprise")."""

    kind: Literal["unleash", "sandbox"]
    version: str
    url: str
    edition: str | None = None

    @field_validator("url")
    @classmethod
    def _no_secret_in_url(cls, url: str) -> str:
        parts = urlsplit(url)
        if parts.username is not None or parts.password is not None:
            raise ValueError(
                "the address holds a user or password: keep only scheme, host and path"
            )
        if parts.query or parts.fragment:
            raise ValueError(
                "the address holds a query or fragment: keep only scheme, host and path"
            )
        return url


# ------------------------------------------------------------------------------ configuration


class Project(Part):
    """A project (`projectSchema`) and the environments enabled in it."""

    id: str
    name: str
    description: str | None = None
    environments: list[str] = Field(default_factory=list)


class Environment(Part):
    """An environment (`environmentSchema`)."""

    name: str
    type: str
    enabled: bool = True
    sortOrder: int = 0


class Tag(Part):
    """A tag on a flag (`tagSchema`), shown as `type:value`."""

    type: str
    value: str

    def __str__(self) -> str:
        return f"{self.type}:{self.value}"


class Dependency(Part):
    """A flag's parent (`dependentFeatureSchema`): the parent flag's name, whether the parent
    must be enabled, and the parent's variants that count."""

    feature: str
    enabled: bool = True
    variants: list[str] = Field(default_factory=list)


class Constraint(Part):
    """A constraint (`constraintSchema`)."""

    contextName: str
    operator: str
    values: list[str] = Field(default_factory=list)
    value: str | None = None
    caseInsensitive: bool = False
    inverted: bool = False


class Payload(Part):
    """A variant's payload (`variantSchema.payload`)."""

    type: str
    value: str


class Override(Part):
    """A flag variant's override (`overrideSchema`)."""

    contextName: str
    values: list[str] = Field(default_factory=list)


class StrategyVariant(Part):
    """A variant of a strategy (`strategyVariantSchema`)."""

    name: str
    weight: int
    weightType: str = "variable"
    stickiness: str = "default"
    payload: Payload | None = None


class Variant(StrategyVariant):
    """A variant of a flag in an environment (`variantSchema`)."""

    overrides: list[Override] = Field(default_factory=list)


class FlagStrategy(Part):
    """A strategy of a flag in an environment (`featureStrategySchema`), its segments by NAME.
    `id` is the server's, kept for whoever writes it back; nothing compares it."""

    id: str | None = None
    name: str
    title: str | None = None
    parameters: dict[str, str] = Field(default_factory=dict)
    constraints: list[Constraint] = Field(default_factory=list)
    segments: list[str] = Field(default_factory=list)
    variants: list[StrategyVariant] = Field(default_factory=list)
    disabled: bool = False
    sortOrder: int = 0


class FlagEnvironment(Part):
    """A flag in one environment (`featureEnvironmentSchema`): on or off, its strategies and
    its variants."""

    name: str
    enabled: bool = False
    strategies: list[FlagStrategy] = Field(default_factory=list)
    variants: list[Variant] = Field(default_factory=list)


class Flag(Part):
    """A feature flag (`featureSchema`) and its environments."""

    name: str
    project: str
    type: str = "release"
    description: str | None = None
    impressionData: bool = False
    stale: bool = False
    tags: list[Tag] = Field(default_factory=list)
    dependencies: list[Dependency] = Field(default_factory=list)
    environments: list[FlagEnvironment] = Field(default_factory=list)


class Segment(Part):
    """A segment (`segmentSchema`); `project` None for a global one."""

    name: str
    description: str | None = None
    project: str | None = None
    constraints: list[Constraint] = Field(default_factory=list)


class LegalValue(Part):
    """A legal value of a context field (`legalValueSchema`)."""

    value: str
    description: str | None = None


class ContextField(Part):
    """A context field (`contextFieldSchema`)."""

    name: str
    description: str | None = None
    stickiness: bool = False
    legalValues: list[LegalValue] = Field(default_factory=list)


class TagType(Part):
    """A tag type (`tagTypeSchema`)."""

    name: str
    description: str | None = None
    icon: str | None = None


class StrategyParameter(Part):
    """A parameter of a strategy definition (`createStrategySchema.parameters`)."""

    name: str
    type: str
    description: str | None = None
    required: bool = False


class StrategyDefinition(Part):
    """A custom strategy's definition (`strategySchema`)."""

    name: str
    description: str | None = None
    parameters: list[StrategyParameter] = Field(default_factory=list)
    deprecated: bool = False


# -------------------------------------------------------------------------- people and access


class User(Part):
    """A user (`userSchema`), by email; `rootRole` is the root role's NAME."""

    email: str
    name: str | None = None
    rootRole: str | None = None


class Group(Part):
    """A group (`groupSchema`); `users` are its members' emails, `rootRole` a role's NAME."""

    name: str
    description: str | None = None
    rootRole: str | None = None
    users: list[str] = Field(default_factory=list)


class Permission(Part):
    """A permission a role holds, for one environment where it is an environment's."""

    name: str
    environment: str | None = None

    def __str__(self) -> str:
        return self.name if self.environment is None else f"{self.name}@{self.environment}"


class Role(Part):
    """A role (`roleSchema`) and its permissions."""

    name: str
    type: str
    description: str | None = None
    permissions: list[Permission] = Field(default_factory=list)


class ProjectAccess(Part):
    """Who holds a role in a project: users by email, groups by name."""

    project: str
    role: str
    users: list[str] = Field(default_factory=list)
    groups: list[str] = Field(default_factory=list)


class ApiToken(Part):
    """An API token's metadata (`apiTokenSchema` without `secret`: never a secret)."""

    tokenName: str
    type: str
    projects: list[str] = Field(default_factory=list)
    environment: str | None = None
    expiresAt: AwareDatetime | None = None


# ---------------------------------------------------------------------------------- snapshot


class Snapshot(Part):
    """One server's configuration at one time."""

    schemaVersion: Literal[1] = SCHEMA_VERSION
    server: Server
    takenAt: AwareDatetime
    projects: list[Project] = Field(default_factory=list)
    environments: list[Environment] = Field(default_factory=list)
    flags: list[Flag] = Field(default_factory=list)
    segments: list[Segment] = Field(default_factory=list)
    contextFields: list[ContextField] = Field(default_factory=list)
    tagTypes: list[TagType] = Field(default_factory=list)
    strategies: list[StrategyDefinition] = Field(default_factory=list)
    users: list[User] = Field(default_factory=list)
    groups: list[Group] = Field(default_factory=list)
    roles: list[Role] = Field(default_factory=list)
    projectAccess: list[ProjectAccess] = Field(default_factory=list)
    apiTokens: list[ApiToken] = Field(default_factory=list)
    #: the lists not read, each with why ({"groups": "Unleash Enterprise only"}): the server
    #: has none of them, or the token may not read them. An empty list is read and empty; a
    #: list named here is not compared (`app.snapshot.compare`)
    unread: dict[str, str] = Field(default_factory=dict)

    @field_validator("unread")
    @classmethod
    def _lists_named(cls, unread: dict[str, str]) -> dict[str, str]:
        unknown = sorted(set(unread) - set(NATURAL_KEYS))
        if unknown:
            raise ValueError(f"names no list of a snapshot: {', '.join(unknown)} (the lists: "
                             f"{', '.join(NATURAL_KEYS)})")  # fmt: skip
        return unread


# ----------------------------------------------------------------------------------- secrets

#: what a secret looks like (the shapes `app.logs` redacts): admin and multi-project API tokens
#: `*:*.<secret>` / `[]:<env>.<secret>`, project tokens `<project>:<env>.<hex>`, personal
#: access tokens `user:<hex>`, and a bearer credential
SECRET_SHAPES = re.compile(
    r"(?:\*|\[\]):[\w\-*]+\.[\w\-]{8,}"
    r"|\b[\w\-]+:[\w\-*]+\.[0-9a-fA-F]{20,}\b"
    r"|\buser:[0-9a-fA-F]{20,}\b"
    r"|\bBearer\s+[\w\-.~+/*:\[\]]{8,}",
    re.IGNORECASE,
)


def _texts(value: Any, path: str) -> Iterator[tuple[str, str]]:
    """Every text inside a JSON value (keys included), with its JSON path."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield f"{path}.{key}", str(key)
            yield from _texts(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _texts(item, f"{path}[{index}]")


def secrets_in(document: Any) -> list[str]:
    """The JSON paths (`$.apiTokens[0].tokenName`) of the texts in `document` that look like a
    token's secret."""
    return [path for path, text in _texts(document, "$") if SECRET_SHAPES.search(text)]


# ------------------------------------------------------------------------------ natural keys

#: each list of a snapshot and what names an item of it (what the comparison matches by)
NATURAL_KEYS: dict[str, tuple[str, ...]] = {
    "projects": ("id",),
    "environments": ("name",),
    "flags": ("name",),
    "segments": ("name",),
    "contextFields": ("name",),
    "tagTypes": ("name",),
    "strategies": ("name",),
    "users": ("email",),
    "groups": ("name",),
    "roles": ("name",),
    "projectAccess": ("project", "role"),
    "apiTokens": ("tokenName", "type"),
}


def repeated_key(snapshot: Snapshot) -> tuple[str, str] | None:
    """The first item whose natural key an earlier one of its list has (a flag's environments
    included), as (its JSON path, what is wrong); None when every key is unique."""
    for field, names in NATURAL_KEYS.items():
        seen: dict[tuple[str, ...], int] = {}
        for index, item in enumerate(getattr(snapshot, field)):
            key = tuple(str(getattr(item, name)) for name in names)
            if key in seen:
                return (f"$.{field}[{index}]",
                        f"{' '.join(names)} {' '.join(key)!r} again (the first: "
                        f"$.{field}[{seen[key]}]): each is named once")  # fmt: skip
            seen[key] = index
    for f, flag in enumerate(snapshot.flags):
        places: dict[str, int] = {}
        for e, environment in enumerate(flag.environments):
            if environment.name in places:
                return (f"$.flags[{f}].environments[{e}]",
                        f"environment {environment.name!r} again (the first: "
                        f"$.flags[{f}].environments[{places[environment.name]}])")  # fmt: skip
            places[environment.name] = e
    return None
