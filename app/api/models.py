"""The wire contract: every resource, envelope, request and error body of the admin API.

Field names are the wire names (camelCase) so that the same word names a thing in the JSON, in the
client, in the sandbox and in the GUI. Two base classes set the policy:

- `Response` models accept (and keep) unknown fields: servers add fields all the time.
- `Request` models validate what the spec demands and ignore fields it does not know.

The items of the two lists that run to 100,000 entries (inactive users, archived flags) are
`@row` dataclasses instead: pydantic validates them with the same types, but builds them about
three times faster and in a quarter of the memory of a model each (measured on 100,000 archived
flags: 2.0 s and 263 MB as models, 0.8 s and 63 MB as slotted dataclasses). They drop the fields
they do not know, which nothing reads.

Deprecated fields are kept and marked with `Field(deprecated=...)`, which shows in the JSON
schema and warns when the attribute is read (on the `@row` items, with a comment).

Every integer a `Request` model takes is bounded by `INT64` (what a 64-bit database column
holds: the sandbox's SQLite INTEGER), alone or within a tighter bound, so that a larger one is a
400 naming the field and never reaches a query. Names and other one-line texts of a `Request`
refuse control characters (`OneLine`, `ONE_LINE`; free texts such as descriptions, `Text`,
`FREE_TEXT`, take tabs and line breaks only): a name is printed in terminals and shown in
windows, where an escape sequence would act. `tests/sandbox/test_wire_bounds.py` walks every
request's JSON schema and fails on an integer without the bound or a text without the refusal
(or a reason to have none). Responses take any integer and any text: reading must not break on
what a server holds (`app.actions.groups.request_of` and the like make bodies from it
unvalidated).

One-ofs are discriminated unions (onboarding status, including the variants real Unleash sends;
owners as user, group or system). Fields typed "string or integer" in the spec (`rootRole` in
requests, metric `timestamp`, application `started`) have a single validator each, so an error
names the field's JSON path with one clear message.

No `from __future__ import annotations` here: with it, every field's annotation is a string that
pydantic turns back into a type as each class is made (`typing.ForwardRef`: a `compile` and an
`eval` for each of the 216 fields). Without it, importing this module takes 28 ms instead of 43
(the median of nine fresh processes, pydantic already imported), and both the window and the
sandbox child import it before the first data. A class names only the classes above it.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any, Literal, NotRequired, Required, TypeVar, dataclass_transform

from annotated_types import Interval
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    PlainSerializer,
    PlainValidator,
    RootModel,
    StrictBool,
    StrictInt,
    Tag,
    TypeAdapter,
    ValidationError,
    WithJsonSchema,
)
from pydantic_core import core_schema
from typing_extensions import TypedDict

from app.api.wire import MAX_METRIC_COUNT, MAX_TIME_MS

# --------------------------------------------------------------------------- shared pieces


class Response(BaseModel):
    """A body a server sends. Unknown fields are accepted and kept.

    Each builds its validator when it is first used (`defer_build`), not as this module is
    imported: the sandbox only names them in its OpenAPI document, and the window's start
    validates a handful of the forty, both on the way to the first data."""

    model_config = ConfigDict(extra="allow", defer_build=True)


class Request(BaseModel):
    """A body flagdesk (or any client) sends. Validated as the spec demands.

    Built when first used too: neither the window nor the sandbox validates one of the eighteen
    before the first data, and both import this module on the way to it (the sandbox child's
    boot to listening: 769M instructions with them built at import, 752M without, callgrind)."""

    model_config = ConfigDict(extra="ignore", defer_build=True)


#: the bound of every integer a request takes: what a 64-bit signed database column holds
#: (the sandbox's SQLite INTEGER; past it, "Python int too large to convert to SQLite INTEGER"
#: was a 500). Unleash 8.2's columns are 32-bit and it answers 500 past them: a larger number
#: is no more use to it, and the sandbox then answers 400 as for any invalid value.
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
INT64 = Interval(ge=INT64_MIN, le=INT64_MAX)
#: an integer within `INT64` (a number in a string, such as a path's, is taken for that number)
Int64 = Annotated[int, INT64]
#: an integer within `INT64`, and only an integer (no string, no float, no bool)
StrictInt64 = Annotated[StrictInt, INT64]


def int64_problem(value: int) -> str:
    """Why `value` is not within `INT64`, in pydantic's words ("" when it is): for the
    validators that take an integer themselves (`RootRoleRef`)."""
    if value > INT64_MAX:
        return f"Input should be less than or equal to {INT64_MAX}"
    if value < INT64_MIN:
        return f"Input should be greater than or equal to {INT64_MIN}"
    return ""


ROOT_ROLE_NAMES = ("Admin", "Editor", "Viewer", "Owner", "Member")
RootRoleName = Literal["Admin", "Editor", "Viewer", "Owner", "Member"]


def _root_role_ref(value: Any) -> int | str:
    if isinstance(value, int) and not isinstance(value, bool):
        problem = int64_problem(value)
        if problem:
            raise ValueError(problem)
        return value
    if isinstance(value, str) and value in ROOT_ROLE_NAMES:
        return value
    raise ValueError(
        f"{value!r} is not a role: give a role id (integer) or one of {', '.join(ROOT_ROLE_NAMES)}"
    )


#: A root role as the spec allows it in requests: the numeric role id or one of the role names.
#: (One validator rather than a union, so an error names the field and not a union member.)
RootRoleRef = Annotated[
    int | RootRoleName,
    PlainValidator(_root_role_ref),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "integer", "minimum": INT64_MIN, "maximum": INT64_MAX},
                {"enum": list(ROOT_ROLE_NAMES)},
            ]
        }
    ),
]

#: Role types the spec lists for dashboard roles. Responses keep any string (servers add types).
#: Unleash calls a custom root role `root-custom` (its `CUSTOM_ROOT_ROLE_TYPE`); the spec's
#: dashboard enum says `custom-root`, which flagdesk still reads as the same (`CUSTOM_ROOT_TYPES`)
ROLE_TYPES = ("custom", "project", "root", "custom-root", "root-custom")

#: C0 control characters, DEL and C1 control characters (what a terminal acts on), as a JSON
#: schema pattern (ECMA 262, as OpenAPI's) and as a Python one
ONE_LINE_PATTERN = "^[^\\u0000-\\u001f\\u007f-\\u009f]*$"
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
#: the same but tab, line feed and carriage return, which a free text may hold
TEXT_PATTERN = "^[^\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f]*$"
_CONTROL_IN_TEXT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def control_problem(text: str, *, lines: bool = False) -> str:
    """Why `text` cannot be a name (`OneLine`) or, with `lines`, a free text (`Text`): the
    first control character it holds ("" when none). The window's forms say it under the
    field; the sandbox answers it in its 400."""
    found = (_CONTROL_IN_TEXT if lines else _CONTROL).search(text)
    if found is None:
        return ""
    allowed = " (tabs and line breaks are)" if lines else ""
    return (
        f"control characters are not allowed{allowed}: U+{ord(found.group()):04X} at "
        f"character {found.start() + 1}"
    )


def _one_line(value: str) -> str:
    problem = control_problem(value)
    if problem:
        raise ValueError(problem)
    return value


class _Pattern:
    """Writes `pattern` into a text's JSON schema (the OpenAPI document), for a rule a validator
    checks with a clearer message than a pattern's."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern

    def __get_pydantic_json_schema__(
        self, core_schema: Any, handler: GetJsonSchemaHandler
    ) -> dict[str, Any]:
        schema = dict(handler(core_schema))
        schema["pattern"] = self.pattern
        return schema


class _NoControls:
    """The refusal of control characters (`control_problem`) as a text's last annotation: it
    checks after the text's own constraints (`Field(min_length=...)` before it keeps pydantic's
    own words for those), and writes its pattern into the JSON schema."""

    def __init__(self, *, lines: bool) -> None:
        self.lines = lines

    def _check(self, value: str) -> str:
        problem = control_problem(value, lines=self.lines)
        if problem:
            raise ValueError(problem)
        return value

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> Any:
        return core_schema.no_info_after_validator_function(self._check, handler(source))

    def __get_pydantic_json_schema__(
        self, schema: Any, handler: GetJsonSchemaHandler
    ) -> dict[str, Any]:
        written = dict(handler(schema))
        written["pattern"] = TEXT_PATTERN if self.lines else ONE_LINE_PATTERN
        return written


#: the last annotation of a name or other one-line text of a request:
#: `Annotated[str, Field(...), ONE_LINE]`
ONE_LINE = _NoControls(lines=False)
#: the last annotation of a free text of a request (a description): tabs and line breaks, no
#: other control character
FREE_TEXT = _NoControls(lines=True)
#: a name or other one-line text of a request, with no other constraint
OneLine = Annotated[str, ONE_LINE]
#: a free text of a request, with no other constraint
Text = Annotated[str, FREE_TEXT]

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def _check_email(value: str) -> str:
    _one_line(value)
    if not _EMAIL.match(value):
        raise ValueError(f"{value!r} is not a valid email address")
    return value


Email = Annotated[str, AfterValidator(_check_email), _Pattern(ONE_LINE_PATTERN)]
NonNegativeInt = Annotated[StrictInt64, Field(ge=0)]
#: an id as a server's database holds it (64 bits; Unleash 8.2's are 32 and it answers 500
#: past them): a larger one is refused (400) before any query
RowId = StrictInt64
#: a metric's count: Unleash refuses more than 2^53 - 1 with 400
MetricCount = Annotated[StrictInt64, Field(ge=0, le=MAX_METRIC_COUNT)]
_DATETIME: TypeAdapter[datetime] = TypeAdapter(datetime)
#: time strings read -> the datetime each is: a bulk body's hundreds of items repeat a few
#: timestamps, read once each then, and each read the same datetime object, whose hash (which
#: asks its time zone for the offset) is then made once too (`Store.ingest_bulk` groups by it)
_TIMES: dict[str, datetime] = {}


def time_value(value: Any) -> datetime | int:
    """`TimeValue`'s validator: an integer (milliseconds since the epoch) within what a server
    reads, or a datetime, or a string pydantic reads as one. `app.metrics.items` checks the time
    strings of the items it reads without pydantic with it."""
    if isinstance(value, int) and not isinstance(value, bool):
        if abs(value) > MAX_TIME_MS:
            raise ValueError(
                f"{value} ms is further from 1970 than a server can read "
                f"(at most {MAX_TIME_MS:,} ms either way)"
            )
        return value
    if isinstance(value, datetime):
        return value
    if isinstance(value, str):
        found = _TIMES.get(value)
        if found is not None:
            return found
        try:
            found = _DATETIME.validate_python(value)
        except ValidationError:
            pass
        else:
            if len(_TIMES) > 10_000:  # bounded: a long-lived sandbox reads new ones every hour
                _TIMES.clear()
            _TIMES[value] = found
            return found
    raise ValueError(
        f"{value!r} is not a time: give an RFC 3339 date-time string "
        "or an integer (milliseconds since the epoch)"
    )


def _time_json(value: datetime | int) -> str | int:
    # explicit: pydantic's union serializer warns on PlainValidator-typed unions
    if isinstance(value, datetime):
        return value.isoformat().replace("+00:00", "Z")
    return value


#: RFC 3339 date-time string or integer (milliseconds since the epoch), as in the bulk schema.
TimeValue = Annotated[
    datetime | int,
    PlainValidator(time_value),
    PlainSerializer(_time_json, when_used="json"),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string", "format": "date-time"},
                {"type": "integer", "minimum": -MAX_TIME_MS, "maximum": MAX_TIME_MS},
            ]
        }
    ),
]


class ErrorDetail(Response):
    """One item of an error body's `details`: what is wrong and, where known, its JSON path."""

    message: str = ""
    path: str | None = None


class ErrorBody(Response):
    """`{id, name, message}`, plus `details` for validation errors. All three shapes real Unleash
    sends fit: with id, without id, and bare `{message}`."""

    id: str | None = None
    name: str | None = None
    message: str = ""
    details: list[ErrorDetail] | None = None


# --------------------------------------------------------------------------- users and roles


class User(Response):
    """A user (response of user update; embedded in group members)."""

    id: int
    isAPI: bool | None = Field(None, deprecated="isAPI is deprecated since v5")
    name: str | None = None
    email: str | None = None
    username: str | None = None
    imageUrl: str | None = None
    inviteLink: str | None = None
    loginAttempts: int | None = None
    emailSent: bool | None = None
    #: normally the numeric role id; a string only when a server echoes a string role it was sent
    rootRole: int | str | None = None
    seenAt: datetime | None = None
    createdAt: datetime | None = None
    accountType: str | None = None
    permissions: list[str] | None = Field(None, deprecated="permissions is deprecated")
    scimId: str | None = None


class Role(Response):
    id: int
    name: str
    type: str
    description: str | None = None
    project: str | None = None


class UserList(Response):
    """`GET /api/admin/user-admin`: the users and the server's root roles."""

    users: list[User]
    rootRoles: list[Role] = Field(default_factory=list)


class UpdateUser(Request):
    """updateUserSchema: only the fields given are updated (see `model_fields_set`)."""

    email: Email | None = None
    name: OneLine | None = None
    rootRole: RootRoleRef | None = None


class CreateUser(Request):
    """`POST /api/admin/user-admin` (a supporting route, as on Unleash 8.2)."""

    email: Email | None = None
    name: OneLine | None = None
    username: OneLine | None = None
    rootRole: RootRoleRef = "Viewer"
    sendEmail: bool = False


_T = TypeVar("_T")


#: the class attribute of a `@row` class naming its `shared` fields
SHARED_FIELDS = "__row_shared__"


@dataclass_transform(kw_only_default=True)
def row(*, shared: tuple[str, ...] = ()) -> Callable[[type[_T]], type[_T]]:
    """A wire item of a list that can hold 100,000 entries (see the module's docstring): a
    slotted dataclass that pydantic validates, ignoring fields it does not know.

    `shared`: the fields whose values repeat from item to item (a flag's type and project, an
    environment's name). A streamed list (`app.api.streaming.ListStream`) makes equal values
    of these one object: msgspec, which decodes the items first, gives every item its own copy
    of every string (on 100,000 archived flags, 24 MB of copies of a few words)."""

    def make(cls: type[_T]) -> type[_T]:
        cls.__pydantic_config__ = ConfigDict(extra="ignore")  # type: ignore[attr-defined]
        made = dataclass(slots=True, kw_only=True)(cls)
        unknown = set(shared).difference(made.__dataclass_fields__)  # type: ignore[attr-defined]
        if unknown:
            raise TypeError(f"{cls.__name__} has no field {', '.join(sorted(unknown))}")
        setattr(made, SHARED_FIELDS, shared)
        return made

    return make


@row()
class InactiveUser:
    id: int
    name: str | None = None
    email: str | None = None
    username: str | None = None
    seenAt: datetime | None = None
    createdAt: datetime | None = None
    #: last use of a personal access token
    patSeenAt: datetime | None = None


class InactiveUsers(Response):
    version: Annotated[int, Field(ge=1)]
    inactiveUsers: list[InactiveUser]


class Ids(Request):
    """`idsSchema`: the ids of a bulk request, such as the users of `POST
    /api/admin/user-admin/inactive/delete`. Whole numbers from 0; as on Unleash 8.2 (measured),
    a number in a string (`"5"`) is taken for that number and any other property is refused
    (`additionalProperties: false`). Unleash answers a fraction with a 500 from its database;
    here it is a 400."""

    model_config = ConfigDict(extra="forbid")

    ids: list[Annotated[Int64, Field(ge=0)]]


class AdminCount(Response):
    """`GET /api/admin/user-admin/admin-count` (adminCountSchema): the users with the Admin root
    role that have a password, that have none (SSO, or never set one), and the service accounts
    with it."""

    password: int
    noPassword: int
    service: int

    @property
    def people(self) -> int:
        """The admins who are people (what the users list shows)."""
        return self.password + self.noPassword


class ResetPasswordRequest(Request):
    """`POST /api/admin/user-admin/reset-password` (idSchema): despite its name, `id` is the
    user's email address, as Unleash 8.2 looks the user up by it."""

    model_config = ConfigDict(extra="forbid")

    id: str


class ResetPasswordLink(Response):
    """The answer (resetPasswordSchema): the link that lets the user choose a new password."""

    resetPasswordUrl: str


# --------------------------------------------------------------------------- groups


class GroupMember(Response):
    joinedAt: datetime | None = None
    createdBy: str | None = None
    user: User


class Group(Response):
    id: int
    name: str
    description: str | None = None
    mappingsSSO: list[str] = Field(default_factory=list)
    rootRole: int | None = None
    createdBy: str | None = None
    createdAt: datetime | None = None
    users: list[GroupMember] = Field(default_factory=list)
    projects: list[str] = Field(default_factory=list)
    userCount: int | None = None
    scimId: str | None = None


class GroupList(Response):
    groups: list[Group]


class UserRef(Request):
    id: RowId


class CreateGroupMember(Request):
    user: UserRef


class CreateGroup(Request):
    """createGroupSchema."""

    name: Annotated[str, Field(min_length=1), ONE_LINE]
    description: Text | None = None
    mappingsSSO: list[OneLine] = Field(default_factory=list)
    #: id of the root role (Viewer, Editor or Admin) applied to every user in the group
    rootRole: RowId | None = None
    users: list[CreateGroupMember] = Field(default_factory=list)


# --------------------------------------------------------------------------- features, archive


@row(shared=("name",))
class ArchivedFeatureEnvironment:
    name: str
    lastSeenAt: datetime | None = None
    enabled: bool | None = None


@row(shared=("type", "project"))
class ArchivedFeature:
    name: str
    type: str | None = None
    description: str | None = None
    project: str
    stale: bool | None = None
    impressionData: bool | None = None
    createdAt: datetime | None = None
    archivedAt: datetime | None = None
    #: deprecated since v5 (use the environments'); the search API's items have none
    lastSeenAt: datetime | None = None
    #: deprecated by the spec, yet the only place the per-environment state is given
    environments: list[ArchivedFeatureEnvironment] | None = None


class ArchivedFeatures(Response):
    """archivedFeaturesSchema."""

    version: int
    features: list[ArchivedFeature]


class SearchEventsSchema(Request):
    """searchEventsSchema: the body of `POST /api/admin/events/search` (Unleash 5.x and 6.x;
    7.0 removed it): filters, and a page of at most 100."""

    type: OneLine | None = None
    project: OneLine | None = None
    feature: OneLine | None = None
    query: Text | None = None
    limit: Annotated[StrictInt, Field(ge=1, le=100)] = 100
    offset: Annotated[StrictInt, Field(ge=0, le=INT64_MAX)] = 0


class SearchFeatureEnvironment(Response):
    name: str
    enabled: bool | None = None
    lastSeenAt: datetime | None = None


class SearchFeature(Response):
    """An item of `GET /api/admin/search/features` (Unleash 5.9+; the archive's replacement)."""

    name: str
    type: str | None = None
    description: str | None = None
    project: str
    stale: bool | None = None
    impressionData: bool | None = None
    createdAt: datetime | None = None
    archivedAt: datetime | None = None
    environments: list[SearchFeatureEnvironment] = Field(default_factory=list)


class SearchFeatures(Response):
    features: list[SearchFeature]
    total: int | None = None


FeatureType = Literal["experiment", "kill-switch", "release", "operational", "permission"]
FEATURE_TYPES: tuple[str, ...] = (
    "release",
    "experiment",
    "operational",
    "kill-switch",
    "permission",
)


class CreateFeature(Request):
    """`POST /api/admin/projects/:p/features` (supporting route)."""

    name: Annotated[str, Field(min_length=1, max_length=255, pattern=r"^[A-Za-z0-9_.~-]+$")]
    type: FeatureType = "release"
    description: Text | None = None
    impressionData: bool = False


class BatchFeatures(Request):
    """`batchFeaturesSchema`: the flags of a project's bulk request (`POST
    /api/admin/projects/:p/revive`, `/delete`, `/archive`), by name. Other properties are
    ignored, as Unleash 8.2's schema allows them."""

    features: list[str]


class VariantPayload(Response):
    type: str
    value: str


class Override(Response):
    contextName: str
    values: list[str] = Field(default_factory=list)


class StrategyVariant(Response):
    """strategyVariantSchema: a variant of a strategy."""

    name: str
    weight: int
    weightType: str
    stickiness: str
    payload: VariantPayload | None = None


class Variant(Response):
    """variantSchema: a variant of a flag in an environment."""

    name: str
    weight: float
    weightType: str | None = None
    stickiness: str | None = None
    payload: VariantPayload | None = None
    overrides: list[Override] = Field(default_factory=list)


class FeatureStrategy(Response):
    id: str
    name: str
    featureName: str | None = None
    environment: str | None = None
    constraints: list[dict[str, Any]] = Field(default_factory=list)
    parameters: dict[str, Any] = {}
    # flag configuration (issue 37): the rest of featureStrategySchema
    title: str | None = None
    disabled: bool | None = None
    sortOrder: int | None = None
    segments: list[int] = Field(default_factory=list)
    variants: list[StrategyVariant] = Field(default_factory=list)


class FeatureEnvironment(Response):
    """featureEnvironmentSchema: a flag in one environment."""

    name: str
    enabled: bool
    featureName: str | None = None
    environment: str | None = None
    type: str | None = None
    sortOrder: int | float | None = None
    variantCount: int | float | None = None
    strategies: list[FeatureStrategy] = Field(default_factory=list)
    variants: list[Variant] = Field(default_factory=list)
    lastSeenAt: datetime | None = None
    hasStrategies: bool | None = None
    hasEnabledStrategies: bool | None = None


class Feature(Response):
    name: str
    type: str | None = None
    description: str | None = None
    project: str | None = None
    impressionData: bool | None = None
    createdAt: datetime | None = None
    archivedAt: datetime | None = None
    stale: bool | None = None
    # flag configuration (issue 37): what `GET /api/admin/projects/:p/features/:name` adds
    # (featureSchema; the classes are in that slice's block at the end of the module)
    archived: bool | None = None
    enabled: bool | None = None
    favorite: bool | None = None
    environments: list[FeatureEnvironment] = Field(default_factory=list)
    variants: list[Variant] = Field(default_factory=list)
    dependencies: list[dict[str, Any]] = Field(default_factory=list)
    children: list[str] = Field(default_factory=list)


class FeatureList(Response):
    """`GET /api/admin/projects/:projectId/features`: a project's flags (not the archived)."""

    version: int = 1
    features: list[Feature]


ConstraintOperator = Literal[
    "NOT_IN", "IN", "STR_ENDS_WITH", "STR_STARTS_WITH", "STR_CONTAINS", "NUM_EQ", "NUM_GT",
    "NUM_GTE", "NUM_LT", "NUM_LTE", "DATE_AFTER", "DATE_BEFORE", "SEMVER_EQ", "SEMVER_GT",
    "SEMVER_LT", "SEMVER_GTE", "SEMVER_LTE", "REGEX",
]  # fmt: skip


class Constraint(Request):
    contextName: Annotated[str, Field(min_length=1), ONE_LINE]
    operator: ConstraintOperator
    values: list[str] = Field(default_factory=list)
    value: str | None = None
    inverted: bool = False
    caseInsensitive: bool = False


PayloadType = Literal["json", "csv", "string", "number"]
WeightType = Literal["variable", "fix"]
VariantWeight = Annotated[StrictInt64, Field(ge=0, le=1000)]


class PayloadBody(Request):
    type: PayloadType
    value: Text


class CreateStrategyVariant(Request):
    """createStrategyVariantSchema."""

    name: Annotated[str, Field(min_length=1), ONE_LINE]
    weight: VariantWeight
    weightType: WeightType
    stickiness: Annotated[str, Field(min_length=1), ONE_LINE]
    payload: PayloadBody | None = None


class CreateFeatureStrategy(Request):
    """Adding a strategy to a feature's environment (supporting route)."""

    name: Annotated[str, Field(min_length=1), ONE_LINE] = "flexibleRollout"
    title: OneLine | None = None
    disabled: bool = False
    constraints: list[Constraint] = Field(default_factory=list)
    parameters: dict[str, str] = {}
    # flag configuration (issue 37): the rest of createFeatureStrategySchema
    variants: list[CreateStrategyVariant] = Field(default_factory=list)
    segments: list[RowId] = Field(default_factory=list)
    sortOrder: StrictInt64 | None = None


# --------------------------------------------------------------------------- context usage


class ContextFieldStrategy(Response):
    id: str | None = None
    featureName: str | None = None
    projectId: str | None = None
    environment: str | None = None
    strategyName: str | None = None


class ContextFieldStrategies(Response):
    strategies: list[ContextFieldStrategy]


class LegalValue(Response):
    value: str
    description: str | None = None


class ContextField(Response):
    name: str
    description: str | None = None
    stickiness: bool | None = None
    sortOrder: int | None = None
    createdAt: datetime | None = None
    legalValues: list[LegalValue] = Field(default_factory=list)
    usedInFeatures: int | None = None
    usedInProjects: int | None = None
    #: the project of a project-specific field (Unleash 7.4+); a global field has none
    project: str | None = None


def _url_friendly(name: str) -> str:
    """A context field's name as Unleash 8.2 takes it (its `nameType`): unchanged by URL
    encoding, and neither "." nor ".."."""
    if re.fullmatch(r"[A-Za-z0-9\-_.!~*'()]+", name) is None or name in (".", ".."):
        raise ValueError(
            "must be URL friendly: letters, digits and - _ . ! ~ * ' ( ) only (no spaces)"
        )
    return name


#: a context field's name: 1 to 100 URL-friendly characters
ContextFieldName = Annotated[
    str,
    Field(min_length=1, max_length=100),
    AfterValidator(_url_friendly),
    _Pattern(r"^[A-Za-z0-9\-_.!~*'()]+$"),
]


class LegalValueBody(Request):
    """legalValueSchema in a request (`additionalProperties: false`): a value of 1 to 100
    characters and its optional description."""

    model_config = ConfigDict(extra="forbid")

    value: Annotated[str, Field(min_length=1, max_length=100), ONE_LINE]
    description: Text | None = None


def _unique_values(values: list[LegalValueBody] | None) -> list[LegalValueBody] | None:
    if values is not None:
        seen: set[str] = set()
        for value in values:
            if value.value in seen:
                raise ValueError(f"the legal value {value.value!r} is given twice")
            seen.add(value.value)
    return values


class UpdateContextField(Request):
    """updateContextFieldSchema, `PUT /api/admin/context/:name`. Unleash 8.2 replaces the whole
    field with it: a description, sort order or legal values left out are emptied (stickiness
    false, sort order 0), so flagdesk always sends all four."""

    description: Annotated[str, Field(max_length=250), FREE_TEXT] | None = None
    stickiness: bool | None = None
    sortOrder: StrictInt64 | None = None
    legalValues: Annotated[list[LegalValueBody] | None, AfterValidator(_unique_values)] = None


class CreateContextField(UpdateContextField):
    """createContextFieldSchema, `POST /api/admin/context`."""

    name: ContextFieldName


# --------------------------------------------------------------------------- projects, dashboard


class OnboardingStatusPlain(Response):
    status: Literal["onboarding-started", "sdk-connected", "onboarded"]


class OnboardingStatusFirstFlag(Response):
    status: Literal["first-flag-created"]
    feature: str


class OnboardingStatusOther(Response):
    """A status this version of flagdesk does not know yet; shown as its raw name."""

    status: str


def _onboarding_variant(value: Any) -> str:
    status = value.get("status") if isinstance(value, dict) else getattr(value, "status", None)
    if status == "first-flag-created":
        return "first-flag-created"
    if status in ("onboarding-started", "sdk-connected", "onboarded"):
        return "plain"
    return "other"


class _AnyOf:
    """Marks a union whose JSON schema is `anyOf`, not `oneOf`: its last variant takes any
    value, so a value can fit two of them (the OpenAPI document must not promise one)."""

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: Any, handler: GetJsonSchemaHandler
    ) -> dict[str, Any]:
        schema = dict(handler(core_schema))
        if "oneOf" in schema:
            schema["anyOf"] = schema.pop("oneOf")
        return schema


#: The onboarding-status one-of: the spec's two values plus the variants real servers send.
OnboardingStatus = Annotated[
    Annotated[OnboardingStatusFirstFlag, Tag("first-flag-created")]
    | Annotated[OnboardingStatusPlain, Tag("plain")]
    | Annotated[OnboardingStatusOther, Tag("other")],
    Discriminator(_onboarding_variant),
    _AnyOf,
]


class UserOwner(Response):
    ownerType: Literal["user"]
    name: str
    imageUrl: str | None = None
    email: str | None = None


class GroupOwner(Response):
    ownerType: Literal["group"]
    name: str


class SystemOwner(Response):
    """Stands in the owners list when no user or group holds the owner role."""

    ownerType: Literal["system"]


Owner = Annotated[UserOwner | GroupOwner | SystemOwner, Field(discriminator="ownerType")]


class DashboardRole(Response):
    name: str
    id: int
    #: one of `ROLE_TYPES`
    type: str


class LatestEvent(Response):
    id: Annotated[int, Field(ge=1)]
    #: experimental markdown summary
    summary: str | None
    createdBy: str
    createdByImageUrl: str
    createdAt: datetime | None = None


class PersonalDashboardProjectDetails(Response):
    """personalDashboardProjectDetailsSchema."""

    onboardingStatus: OnboardingStatus
    latestEvents: list[LatestEvent]
    owners: list[Owner]
    roles: list[DashboardRole]


class Project(Response):
    id: str
    name: str
    description: str | None = None
    featureCount: int | None = None
    memberCount: int | None = None
    createdAt: datetime | None = None
    onboardingStatus: OnboardingStatus | None = None


class ProjectList(Response):
    version: int = 1
    projects: list[Project]


# --------------------------------------------------------------------------- API tokens

#: the types of API token a release may list (`admin` only 5.x creates; `backend` from 7.0)
API_TOKEN_TYPES = ("client", "frontend", "backend", "admin")
#: the types `POST /api/admin/api-tokens` takes on Unleash 8.2 (case-insensitive, stored lower)
CREATE_TOKEN_TYPE_PATTERN = (
    "^([Cc][Ll][Ii][Ee][Nn][Tt]|[Bb][Aa][Cc][Kk][Ee][Nn][Dd]|[Ff][Rr][Oo][Nn][Tt][Ee][Nn][Dd])$"
)


class ApiToken(Response):
    """apiTokenSchema: one API token, as every release lists it and as a creation answers it.
    5.x and 6.x send `username` beside `tokenName` (the same name); 8.x adds `secure`. Real
    Unleash lists every `secret` in clear; the sandbox keeps only hashes and lists a masked
    handle unique to the token (`<project>:<env>.…<last 8>`), which its PUT and DELETE take in
    place of the secret: flagdesk names a token by whatever `secret` the list holds. A
    creation's answer holds the whole secret, once. `seenAt` is written by the server now and
    then (Unleash: a flush a minute), null until then."""

    secret: str | None = None
    tokenName: str = ""
    username: str | None = None
    type: str = ""
    environment: str | None = None
    project: str | None = None
    projects: list[str] = Field(default_factory=list)
    expiresAt: datetime | None = None
    createdAt: datetime | None = None
    seenAt: datetime | None = None
    alias: str | None = None
    secure: bool | None = None

    @property
    def name(self) -> str:
        """The token's name, whichever field the release sent it in."""
        return self.tokenName or self.username or ""

    @property
    def scope(self) -> list[str]:
        """The projects it is for (`["*"]`: all), from `projects` or the older `project`."""
        return list(self.projects) or ([self.project] if self.project else [])


class ApiTokenList(Response):
    """apiTokensSchema (`GET /api/admin/api-tokens`, `…/api-tokens/:name`, the project's)."""

    tokens: list[ApiToken]


class CreateApiToken(Request):
    """createApiTokenSchema as Unleash 8.2 takes it (the client/frontend branch of its one-of:
    no `admin` type; `project` singular is ignored from 7.0 and not sent). `environment` left
    out is `development` from 7.0 (5.x and 6.x: the disabled `default`); `projects` left out
    is every project (`["*"]`)."""

    tokenName: Annotated[str, Field(min_length=1), ONE_LINE]
    type: Annotated[str, Field(pattern=CREATE_TOKEN_TYPE_PATTERN)]
    environment: Annotated[str, Field(min_length=1), ONE_LINE] | None = None
    projects: (
        Annotated[list[Annotated[str, Field(min_length=1), ONE_LINE]], Field(min_length=1)] | None
    ) = None
    expiresAt: datetime | None = None


class UpdateApiToken(Request):
    """updateApiTokenSchema: `PUT /api/admin/api-tokens/:token` changes the expiry alone."""

    expiresAt: datetime


# --------------------------------------------------------------------------- bulk metrics


class ConnectVia(Request):
    appName: str
    instanceId: str


class BulkApplication(Request):
    """Application item of bulkMetricsSchema."""

    appName: str
    environment: str
    instanceId: str
    interval: float | None = None
    started: TimeValue | None = None
    strategies: list[str] = Field(default_factory=list)
    sdkVersion: str | None = None
    connectVia: list[ConnectVia] = Field(default_factory=list)
    #: Unleash's bulkRegistrationSchema: a "frontend" item with an `sdkVersion` is registered
    #: without `started` and `interval`, which a backend item needs (else Unleash answers 400)
    sdkType: Literal["frontend", "backend"] | None = None

    @property
    def needs_started_and_interval(self) -> bool:
        return not (self.sdkType == "frontend" and self.sdkVersion is not None)


class BulkMetric(Request):
    """Metric item of bulkMetricsSchema: counts for one feature in a one-hour window."""

    featureName: str
    appName: str
    environment: str
    #: start of the one-hour window; integers are milliseconds since the epoch
    timestamp: TimeValue | None = None
    yes: MetricCount = 0
    no: MetricCount = 0
    variants: dict[str, MetricCount] = {}


class BulkMetrics(Request):
    """bulkMetricsSchema: the body of `POST /api/client/metrics/bulk`."""

    applications: list[BulkApplication]
    metrics: list[BulkMetric]


def plain_items(model: type[BaseModel], name: str) -> Any:
    """A TypedDict with the fields and constraints of `model`, which pydantic validates into
    plain dicts (three times faster than models, which matters for 100,000s of metric items)
    that serialise to the same JSON. Fields left out stay out: their defaults are not filled
    in. Only fields are carried over: should the model gain a model validator, validate with
    the model instead (tests/metrics/test_read.py checks both agree)."""
    fields: dict[str, Any] = {}
    for field_name, info in model.model_fields.items():
        kind: Any = info.annotation
        if info.metadata:
            kind = Annotated[(kind, *info.metadata)]
        fields[field_name] = Required[kind] if info.is_required() else NotRequired[kind]
    make: Any = TypedDict  # a TypedDict made at run time, which mypy cannot follow
    item: Any = make(name, fields)
    # the JSON standard has no NaN or Infinity, and neither has the JSON Unleash parses
    item.__pydantic_config__ = ConfigDict(extra="ignore", allow_inf_nan=False)
    return item


#: `BulkMetric` and `BulkApplication` as plain dicts (`plain_items`)
BulkMetricItem = plain_items(BulkMetric, "BulkMetricItem")
BulkApplicationItem = plain_items(BulkApplication, "BulkApplicationItem")


class BulkMetricsItems(TypedDict):
    """`BulkMetrics` with plain-dict items: what the sandbox validates a bulk body into (a
    body of 550 metrics: 1.4 ms instead of 4.4 ms as models, most of the sandbox's time)."""

    __pydantic_config__ = ConfigDict(extra="ignore")  # type: ignore[misc]
    applications: list[BulkApplicationItem]  # type: ignore[valid-type]
    metrics: list[BulkMetricItem]  # type: ignore[valid-type]


class MetricsWindow(Response):
    """One stored count. `/raw` names the feature and application of each; `lastHourUsage` on
    Unleash 8.2 gives only environment, timestamp, yes and no (the sandbox gives all)."""

    featureName: str | None = None
    appName: str | None = None
    environment: str
    timestamp: datetime
    yes: int
    no: int
    variants: dict[str, int] = {}


class FeatureUsage(Response):
    version: int = 1
    maturity: str = "stable"
    featureName: str
    lastHourUsage: list[MetricsWindow]
    seenApplications: list[str] = Field(default_factory=list)


class FeatureMetricsRaw(Response):
    version: int = 1
    maturity: str = "stable"
    data: list[MetricsWindow]


# --------------------------------------------------------------------------- server info


class VersionInfo(Response):
    current: dict[str, str] = {}
    #: the server's instance id: Unleash generates it when its database is made (5 to 8), the
    #: sandbox too; what `app.metrics.identity` knows a server by
    instanceId: str | None = None


class Permission(Response):
    permission: str
    project: str | None = None
    environment: str | None = None


class CurrentUser(Response):
    """`GET /api/admin/user`: who the token acts as. For a personal access token `user` is that
    user (with `id`); for an admin API token it describes the token (`type` "admin"; Unleash even
    echoes the token's secret here, so this model never reaches a log)."""

    user: dict[str, Any]
    permissions: list[Permission] = Field(default_factory=list)

    def __repr__(self) -> str:  # keep a secret the server echoed out of reprs and tracebacks
        return f"CurrentUser(permissions={[p.permission for p in self.permissions]!r})"

    __str__ = __repr__


class UiConfig(Response):
    name: str | None = None
    version: str
    versionInfo: VersionInfo | None = None
    authenticationType: str | None = None
    #: (issue 38) whether the server is in maintenance mode: top-level, as Unleash 5 to 8 say it
    #: (their `flags.maintenanceMode` stays false); None from a server that does not say
    maintenanceMode: bool | None = None
    #: (issue 38) the origins the frontend API answers (Unleash's default `["*"]`), the only way
    #: to read them back: there is no `GET /api/admin/ui-config/cors`
    frontendApiOrigins: list[str] | None = None


class Health(Response):
    health: str


# --------------------------------------------------------------------------- personal access tokens

#: a date-time as RFC 3339 writes it, its time zone included (AJV's `date-time`, as Unleash 8.2
#: checks `expiresAt`: a date alone or a number is refused)
_RFC_3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


def _date_time_text(value: Any) -> datetime:
    if isinstance(value, datetime) and value.tzinfo is not None:
        return value
    if not isinstance(value, str) or _RFC_3339.match(value) is None:
        raise ValueError(
            f"{value!r} is not a date-time: give one as RFC 3339 writes it, with its time zone "
            '("2030-01-31T00:00:00Z")'
        )
    return _DATETIME.validate_python(value)


def _wire_date_time(value: datetime) -> str:
    return value.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


#: a request's date-time: a string in the RFC 3339 notation with a time zone, and only that
DateTimeText = Annotated[
    datetime,
    PlainValidator(_date_time_text),
    PlainSerializer(_wire_date_time, when_used="json"),
    WithJsonSchema({"type": "string", "format": "date-time"}),
]


class PersonalAccessToken(Response):
    """patSchema as `GET /api/admin/user/tokens` lists it: the connected user's token, never its
    secret (Unleash shows the secret once, in the answer to its creation)."""

    id: int
    description: str
    expiresAt: datetime | None = None
    userId: int | None = None
    createdAt: datetime | None = None
    #: when it was last used (Unleash writes it every few minutes; the sandbox at once)
    seenAt: datetime | None = None


class PersonalAccessTokens(Response):
    """patsSchema: `GET /api/admin/user/tokens`, the tokens of the user behind the token."""

    pats: list[PersonalAccessToken] = Field(default_factory=list)


class CreatePersonalAccessToken(Request):
    """createPatSchema, `POST /api/admin/user/tokens`: a description (the user's tokens each
    have their own: 409 for one taken; empty is a 400 of the server's) and the expiry, in the
    future (400 otherwise)."""

    description: OneLine
    expiresAt: DateTimeText


class CreatedPersonalAccessToken(PersonalAccessToken):
    """The answer to a creation (patSchema with `secret`): the one time the secret is shown.
    Kept out of `repr()`, so no traceback or log line holds it."""

    secret: str = Field(repr=False)


# --------------------------------------------------------------------------- roles and permissions
# (Unleash Enterprise's custom roles: ../shared/reference/unleash-enterprise-admin-api.md §2)

#: a custom root role's type as Unleash sends it, and as the spec's dashboard enum wrote it
CUSTOM_ROOT_TYPES = ("root-custom", "custom-root")
#: the built-in roles' types (Unleash refuses to change or delete these: 403)
PREDEFINED_ROLE_TYPES = ("root", "project")
#: the root roles' types (a user's, a group's or a service account's root role is one of them)
ROOT_TYPES = ("root", *CUSTOM_ROOT_TYPES)
#: the types a role can be created with: a custom root role, a custom project role
CustomRoleType = Literal["root-custom", "custom"]


class AdminPermission(Response):
    """adminPermissionSchema: one permission of the catalogue (`GET /api/admin/permissions`) or
    of a role (`RoleWithPermissions.permissions`); `environment` set for an environment's."""

    id: int | None = None
    name: str
    displayName: str | None = None
    #: root, project or environment
    type: str | None = None
    environment: str | None = None


class RoleWithPermissions(Role):
    """roleWithPermissionsSchema: `GET /api/admin/roles/:id`, a role and its permissions."""

    permissions: list[AdminPermission] = Field(default_factory=list)


class RoleList(Response):
    """`GET /api/admin/roles`: every role, built-in and custom, root and project."""

    version: int = 1
    roles: list[Role]


class RoleAnswer(Response):
    """roleWithVersionSchema: what a role's creation and update answer (200), the one role
    under the *plural* key `roles`, as Unleash sends it."""

    version: int = 1
    roles: Role


class EnvironmentPermissions(Response):
    """One environment of the catalogue with the environment permissions set for it."""

    name: str
    permissions: list[AdminPermission] = Field(default_factory=list)


class PermissionGroups(Response):
    root: list[AdminPermission] = Field(default_factory=list)
    project: list[AdminPermission]
    environments: list[EnvironmentPermissions] = Field(default_factory=list)


class AdminPermissions(Response):
    """adminPermissionsSchema: the catalogue of permissions a role can hold."""

    version: int = 1
    permissions: PermissionGroups


class RolePermission(Request):
    """A permission given to a role: its name, and for an environment permission of a custom
    project role the environment (Unleash stores `""` as none, and drops it on a root role)."""

    name: Annotated[str, Field(min_length=1), ONE_LINE]
    environment: OneLine | None = None


class CreateRole(Request):
    """createRoleWithPermissionsSchema, the body of a role's creation, update and validation:
    `type` left out is `custom` (a project role); `permissions` left out (or null) on an update
    keeps the role's, `[]` takes them all away."""

    name: Annotated[str, Field(min_length=1), ONE_LINE]
    description: Text | None = None
    type: CustomRoleType | None = None
    permissions: list[RolePermission] | None = None


class ProjectRoleUsage(Response):
    """projectRoleSchema: in one project, how many hold the role."""

    project: str
    role: int | None = None
    userCount: int = 0
    serviceAccountCount: int = 0
    groupCount: int = 0


class ProjectRoleUsages(Response):
    """`GET /api/admin/projects/roles/:roleId/access`: the projects where the role is held."""

    projects: list[ProjectRoleUsage] = Field(default_factory=list)


# --------------------------------------------------------------------------- service accounts
# Unleash Enterprise's service accounts (../shared/reference/unleash-enterprise-admin-api.md
# section 1): users with `accountType: "Service Account"` and tokens of their own (patSchema).


class ServiceAccount(Response):
    """serviceAccountSchema: an account and its tokens (never their secrets). `seenAt` is
    deprecated and null on Unleash (its tokens' `seenAt` say when it was used)."""

    id: int
    name: str | None = None
    username: str | None = None
    imageUrl: str | None = None
    #: the root role's id
    rootRole: int | None = None
    createdAt: datetime | None = None
    seenAt: datetime | None = None
    tokens: list[PersonalAccessToken] = Field(default_factory=list)


class ServiceAccounts(Response):
    """serviceAccountsSchema, `GET /api/admin/service-account`: every service account, and the
    root roles they hold."""

    serviceAccounts: list[ServiceAccount]
    rootRoles: list[Role] = Field(default_factory=list)


class CreateServiceAccount(Request):
    """createServiceAccountSchema, `POST /api/admin/service-account`: a name, a username (unique
    among users and service accounts: 409 otherwise) and a root role's id, all required."""

    name: OneLine
    username: OneLine
    rootRole: StrictInt64


class UpdateServiceAccount(Request):
    """updateServiceAccountSchema, `PUT /api/admin/service-account/:id`: the name and the root
    role's id, each optional (only those given change; anything else is ignored, the username
    included)."""

    name: OneLine | None = None
    rootRole: StrictInt64 | None = None


# --------------------------------------------------------------------------- project access
# (Unleash Pro and Enterprise: `/api/admin/projects/:p/access`; open source answers 404)


class ProjectAccessUser(Response):
    """A user (or service account: `accountType` "Service Account") holding project roles, as
    `GET /api/admin/projects/:p/access` lists them: the user record with its roles here."""

    id: int
    name: str | None = None
    email: str | None = None
    username: str | None = None
    imageUrl: str | None = None
    accountType: str | None = None
    addedAt: datetime | None = None
    #: the first role (legacy); `roles` holds them all
    roleId: int | None = None
    roles: list[int] = Field(default_factory=list)


class ProjectAccessGroup(Response):
    """A group holding project roles (groupWithProjectRoleSchema), its members included."""

    id: int
    name: str
    description: str | None = None
    mappingsSSO: list[str] = Field(default_factory=list)
    rootRole: int | None = None
    scimId: str | None = None
    createdBy: str | None = None
    createdAt: datetime | None = None
    users: list[GroupMember] = Field(default_factory=list)
    addedAt: datetime | None = None
    roleId: int | None = None
    roles: list[int] = Field(default_factory=list)


class ProjectAccess(Response):
    """projectAccessSchema: who holds which role in a project, and every project role."""

    users: list[ProjectAccessUser] = Field(default_factory=list)
    groups: list[ProjectAccessGroup] = Field(default_factory=list)
    roles: list[Role] = Field(default_factory=list)


class UserAccess(Response):
    """userAccessSchema (Unleash Enterprise's access overview): one user's root role (its
    *name*), groups (their *names*) and the projects in which they hold a project role
    (`accessibleProjects`). Unleash's own query keeps the projects held through a group apart
    (`groupProjects`); read both where a server sends both."""

    userId: int
    userEmail: str | None = None
    userName: str | None = None
    rootRole: str | None = None
    accessibleProjects: list[str] = Field(default_factory=list)
    groupProjects: list[str] = Field(default_factory=list)
    groups: list[str] = Field(default_factory=list)
    createdAt: datetime | None = None
    lastSeen: datetime | None = None


class AccessOverview(Response):
    """accessOverviewSchema, `GET /api/admin/access/overview` (Unleash Enterprise and the
    sandbox; open source and Pro answer 404): every user's access at once."""

    overview: list[UserAccess] = Field(default_factory=list)


class AddProjectAccess(Request):
    """`POST /api/admin/projects/:p/access`: every role given to every user and group (all three
    lists required; existing pairs are kept)."""

    roles: list[RowId]
    groups: list[RowId]
    users: list[RowId]


class ProjectRoles(Request):
    """`PUT /api/admin/projects/:p/users/:id/roles` (and `groups/:id/roles`): the roles the user
    or group holds in the project from now on (`[]`: none)."""

    roles: list[RowId]


# ------------------------------------------------ flag extras (issue 37, slice 2): segments,
# tag types and tags, dependencies, strategy definitions


class SegmentConstraint(Response):
    """constraintSchema as a server sends it (in a segment)."""

    contextName: str
    operator: str
    values: list[str] = Field(default_factory=list)
    value: str | None = None
    inverted: bool | None = None
    caseInsensitive: bool | None = None


class Segment(Response):
    """adminSegmentSchema: a segment; `usedInFeatures` and `usedInProjects` only in the list."""

    id: int
    name: str
    description: str | None = None
    constraints: list[SegmentConstraint] = Field(default_factory=list)
    usedInFeatures: int | None = None
    usedInProjects: int | None = None
    project: str | None = None
    createdBy: str | None = None
    createdAt: datetime | None = None


class Segments(Response):
    """segmentsSchema: `GET /api/admin/segments`, `/segments/strategies/:strategyId`."""

    segments: list[Segment] = Field(default_factory=list)


class UpsertSegment(Request):
    """upsertSegmentSchema, `POST /api/admin/segments` and `PUT /api/admin/segments/:id`."""

    name: Annotated[str, Field(min_length=1, max_length=255), ONE_LINE]
    description: Annotated[str, FREE_TEXT] | None = None
    project: Annotated[str, Field(min_length=1), ONE_LINE] | None = None
    constraints: list[Constraint]


class SegmentNameBody(Request):
    """nameSchema, `POST /api/admin/segments/validate`."""

    name: Annotated[str, Field(max_length=255), ONE_LINE]


class SegmentStrategy(Response):
    id: str | None = None
    featureName: str
    projectId: str
    environment: str
    strategyName: str


class SegmentStrategies(Response):
    """segmentStrategiesSchema, `GET /api/admin/segments/:id/strategies` (open source: no change
    requests)."""

    strategies: list[SegmentStrategy] = Field(default_factory=list)
    changeRequestStrategies: list[SegmentStrategy] = Field(default_factory=list)


class UpdateFeatureStrategySegments(Request):
    """updateFeatureStrategySegmentsSchema, `POST /api/admin/segments/strategies`: a strategy's
    segments from now on."""

    projectId: Annotated[str, Field(min_length=1), ONE_LINE]
    strategyId: Annotated[str, Field(min_length=1), ONE_LINE]
    environmentId: Annotated[str, Field(min_length=1), ONE_LINE]
    segmentIds: list[Annotated[StrictInt, Field(ge=0, le=INT64_MAX)]]


class FeatureStrategySegments(Response):
    """The same, as the server answers it (201)."""

    projectId: str
    strategyId: str
    environmentId: str
    segmentIds: list[int] = Field(default_factory=list)


_HEX_COLOUR = r"^#[0-9A-Fa-f]{6}$"


class TagType(Response):
    """tagTypeSchema as a server sends it."""

    name: str
    description: str | None = None
    icon: str | None = None
    color: str | None = None


class TagTypes(Response):
    """tagTypesSchema, `GET /api/admin/tag-types`."""

    version: int = 1
    tagTypes: list[TagType] = Field(default_factory=list)


class TagTypeWithVersion(Response):
    """`GET /api/admin/tag-types/:name` as Unleash 8.2 answers it (`{version, tagType}`; its
    document says a bare tagTypeSchema)."""

    version: int = 1
    tagType: TagType


#: a tag type's name (Unleash: URL friendly, 2 to 50 characters)
TagTypeName = Annotated[
    str,
    Field(min_length=2, max_length=50),
    AfterValidator(_url_friendly),
    _Pattern(r"^[A-Za-z0-9\-_.!~*'()]+$"),
]
HexColour = Annotated[str, Field(pattern=_HEX_COLOUR)]


class TagTypeBody(Request):
    """tagTypeSchema in a request (`POST /api/admin/tag-types`, `/tag-types/validate`)."""

    model_config = ConfigDict(extra="forbid")

    name: TagTypeName
    description: Annotated[str, Field(max_length=1000), FREE_TEXT] | None = None
    icon: Annotated[str, Field(max_length=100), ONE_LINE] | None = None
    color: HexColour | None = None


class UpdateTagType(Request):
    """updateTagTypeSchema, `PUT /api/admin/tag-types/:name`: the fields sent replace."""

    description: Annotated[str, Field(max_length=1000), FREE_TEXT] | None = None
    icon: Annotated[str, Field(max_length=100), ONE_LINE] | None = None
    color: HexColour | None = None


class ValidateTagType(Response):
    """validateTagTypeSchema: `{valid: true, tagType}` (the body as sent)."""

    valid: bool
    tagType: TagType


class TagItem(Response):
    """tagSchema as a server sends it (a flag's tags carry their type's `color`); not `Tag`,
    which is pydantic's here."""

    value: str
    type: str
    color: str | None = None


class Tags(Response):
    """tagsSchema: `GET /api/admin/tags`, `/tags/:type`, `/features/:name/tags`."""

    version: int = 1
    tags: list[TagItem] = Field(default_factory=list)


class TagWithVersion(Response):
    """tagWithVersionSchema: `GET /api/admin/tags/:type/:value`, `POST /api/admin/tags`."""

    version: int = 1
    tag: TagItem


#: a tag's value or its type's name in a request (tagSchema: 2 to 50 characters)
TagText = Annotated[str, Field(min_length=2, max_length=50), ONE_LINE]


class TagBody(Request):
    """tagSchema in a request (`POST /api/admin/features/:name/tags`, `updateTagsSchema`)."""

    model_config = ConfigDict(extra="forbid")

    value: TagText
    type: TagText
    color: HexColour | None = None


class CreateTag(Request):
    """createTagSchema, `POST /api/admin/tags`: the value is trimmed (2 to 50 characters once
    trimmed)."""

    model_config = ConfigDict(extra="forbid")

    value: Annotated[str, Field(pattern=r"^\s*\S.{0,48}\S\s*$"), ONE_LINE]
    type: TagText
    color: HexColour | None = None


class UpdateTags(Request):
    """updateTagsSchema, `PUT /api/admin/features/:name/tags`."""

    model_config = ConfigDict(extra="forbid")

    addedTags: list[TagBody]
    removedTags: list[TagBody]


class CreateDependentFeature(Request):
    """createDependentFeatureSchema, `POST .../features/:child/dependencies`: the parent flag,
    whether it must be on (`enabled`, true unless false) and in which of its variants."""

    feature: Annotated[str, Field(min_length=1), ONE_LINE]
    enabled: bool | None = None
    variants: list[Annotated[str, ONE_LINE]] | None = None


class DependentFeature(Response):
    """dependentFeatureSchema: one of a flag's parents (the flag's `dependencies`)."""

    feature: str
    enabled: bool | None = None
    variants: list[str] | None = None


class StrategyParameter(Response):
    name: str | None = None
    type: str | None = None
    description: str | None = None
    required: bool | None = None


class StrategyDefinition(Response):
    """strategySchema: a strategy definition (built-in ones are not `editable`)."""

    name: str
    title: str | None = None
    displayName: str | None = None
    description: str | None = None
    editable: bool | None = None
    deprecated: bool | None = None
    parameters: list[StrategyParameter] = Field(default_factory=list)


class StrategyDefinitions(Response):
    """strategiesSchema, `GET /api/admin/strategies`."""

    version: int = 1
    strategies: list[StrategyDefinition] = Field(default_factory=list)


class StrategyParameterBody(Request):
    """A parameter of a strategy definition in a request."""

    name: Annotated[str, Field(min_length=1, max_length=100), ONE_LINE]
    type: Literal["string", "percentage", "list", "number", "boolean"]
    description: Annotated[str, Field(max_length=1000), FREE_TEXT] | None = None
    required: bool | None = None


class UpdateStrategy(Request):
    """updateStrategySchema, `PUT /api/admin/strategies/:name`: the parameters replace; the
    description and title replace where sent."""

    title: Annotated[str, Field(max_length=255), ONE_LINE] | None = None
    description: Annotated[str, Field(max_length=1000), FREE_TEXT] | None = None
    parameters: list[StrategyParameterBody]


class CreateStrategy(UpdateStrategy):
    """createStrategySchema, `POST /api/admin/strategies`."""

    name: Annotated[
        str,
        Field(min_length=1, max_length=100),
        AfterValidator(_url_friendly),
        _Pattern(r"^[A-Za-z0-9\-_.!~*'()]+$"),
    ]
    editable: bool | None = None
    deprecated: bool | None = None


class DependenciesExist(RootModel[bool]):
    """dependenciesExistSchema, `GET /api/admin/projects/:p/dependencies`: whether any flag
    depends on another (8.2: in any project)."""

    model_config = ConfigDict(defer_build=True)


class ParentFeatureOptions(RootModel[list[str]]):
    """parentFeatureOptionsSchema, `GET .../features/:child/parents`: the flags a flag could
    depend on."""

    model_config = ConfigDict(defer_build=True)


# --------------------------------------------------------------------------- flag configuration
# (issue 37, slice 1: environments, a flag's configuration per environment, strategies and
# variants, as Unleash 8.2 names and answers them)


class Environment(Response):
    """environmentSchema: `GET /api/admin/environments` (and `/:name`)."""

    name: str
    type: str
    enabled: bool = True
    protected: bool = False
    sortOrder: int = 0
    projectCount: int | None = None
    apiTokenCount: int | None = None
    enabledToggleCount: int | None = None


class Environments(Response):
    """environmentsSchema."""

    version: int = 1
    environments: list[Environment]


class EnvironmentProject(Response):
    """environmentProjectSchema: an environment as a project sees it; `visible` says whether
    the project has it."""

    name: str
    type: str
    enabled: bool = True
    protected: bool = False
    sortOrder: int = 0
    projectApiTokenCount: int | None = None
    projectEnabledToggleCount: int | None = None
    visible: bool | None = None


class EnvironmentsProject(Response):
    """environmentsProjectSchema: `GET /api/admin/environments/project/:projectId`."""

    version: int = 1
    environments: list[EnvironmentProject]


class ProjectEnvironment(Request):
    """projectEnvironmentSchema: `POST /api/admin/projects/:p/environments` (Unleash's handler
    reads `environment` alone)."""

    environment: Annotated[str, Field(min_length=1), ONE_LINE]
    changeRequestsEnabled: bool | None = None


class FeatureVariants(Response):
    """featureVariantsSchema: `GET|PUT|PATCH .../environments/:env/variants`."""

    version: int = 1
    variants: list[Variant]


class OverrideBody(Request):
    contextName: Annotated[str, Field(min_length=1), ONE_LINE]
    values: list[OneLine]


class VariantBody(Request):
    """variantSchema as a body (`PUT .../variants`: a list of them)."""

    name: Annotated[str, Field(min_length=1), ONE_LINE]
    weight: VariantWeight = 0
    weightType: WeightType = "variable"
    stickiness: OneLine = "default"
    payload: PayloadBody | None = None
    overrides: list[OverrideBody] = Field(default_factory=list)


class UpdateFeatureStrategy(Request):
    """updateFeatureStrategySchema: `PUT .../strategies/:id` (the name, title and disabled
    left out are kept; the parameters, constraints and variants are what is sent, none when
    left out; `sortOrder` is not changed by it, as on Unleash)."""

    name: Annotated[str, Field(min_length=1), ONE_LINE] | None = None
    title: OneLine | None = None
    disabled: bool | None = None
    sortOrder: StrictInt64 | None = None
    constraints: list[Constraint] | None = None
    parameters: dict[str, str] | None = None
    variants: list[CreateStrategyVariant] | None = None
    segments: list[RowId] | None = None


class StrategySortOrder(Request):
    """An item of setStrategySortOrderSchema."""

    id: Annotated[str, Field(min_length=1), ONE_LINE]
    sortOrder: StrictInt64


class Patch(Request):
    """patchSchema: one JSON Patch (RFC 6902) operation."""

    model_config = ConfigDict(extra="ignore", defer_build=True, populate_by_name=True)

    op: Literal["add", "remove", "replace", "copy", "move", "test"]
    path: OneLine
    from_: OneLine | None = Field(default=None, alias="from")
    value: Any = None


class UpdateFeature(Request):
    """updateFeatureSchema: `PUT /api/admin/projects/:p/features/:name`."""

    name: OneLine | None = None
    description: Text | None = None
    type: (
        Literal["experiment", "kill-switch", "release", "operational", "permission", "sunset"]
        | None
    ) = None
    stale: bool | None = None
    archived: bool | None = None
    impressionData: bool | None = None


class BatchStale(Request):
    """batchStaleSchema: `POST /api/admin/projects/:p/stale`."""

    features: list[str]
    stale: bool


class StrategySortOrders(RootModel[list[StrategySortOrder]]):
    """setStrategySortOrderSchema: `POST .../strategies/set-sort-order`."""

    model_config = ConfigDict(defer_build=True)


class VariantsBody(RootModel[list[VariantBody]]):
    """variantsSchema as a body: `PUT .../environments/:env/variants`."""

    model_config = ConfigDict(defer_build=True)


class Patches(RootModel[list[Patch]]):
    """patchesSchema: a JSON Patch document (`PATCH` of a flag, a strategy, variants)."""

    model_config = ConfigDict(defer_build=True)


class FeatureStrategies(RootModel[list[FeatureStrategy]]):
    """`GET .../environments/:env/strategies`: a flag's strategies in one environment, in their
    order."""

    model_config = ConfigDict(defer_build=True)


# ------------------------------------------------------------- batch export (issue 37)
# `POST /api/admin/features-batch/export` (open source since Unleash 4.22)


class ExportQuery(Request):
    """exportQuerySchema: one environment, and the flags by name (`features`; empty: every
    live flag), else by `tag` (`type:value`), else a `project`'s."""

    environment: Annotated[str, Field(min_length=1), ONE_LINE]
    features: list[Annotated[str, Field(min_length=1), ONE_LINE]] | None = None
    tag: Annotated[str, Field(min_length=1), ONE_LINE] | None = None
    project: Annotated[str, Field(min_length=1), ONE_LINE] | None = None
    downloadFile: bool | None = None


class ExportStrategy(FeatureStrategy):
    """A strategy in an export: the flag it belongs to (`featureName`)."""

    featureName: str | None = None


class ExportEnvironment(Response):
    """A flag in the export's environment: on or off, its variants there."""

    featureName: str
    enabled: bool
    environment: str | None = None
    variants: list[Variant] = Field(default_factory=list)


class ExportTag(Response):
    """featureTagSchema: a flag's tag in an export."""

    featureName: str
    tagType: str
    tagValue: str


class ExportSegment(Response):
    id: int
    name: str


class ExportDependencies(Response):
    """A flag (`feature`) and its parents (`dependencies`: {feature, enabled, variants})."""

    feature: str
    dependencies: list[dict[str, Any]] = Field(default_factory=list)


class ExportResult(Response):
    """exportResultSchema: the flags of one environment and what they use."""

    features: list[Feature] = Field(default_factory=list)
    featureStrategies: list[ExportStrategy] = Field(default_factory=list)
    featureEnvironments: list[ExportEnvironment] = Field(default_factory=list)
    contextFields: list[ContextField] = Field(default_factory=list)
    featureTags: list[ExportTag] = Field(default_factory=list)
    segments: list[ExportSegment] = Field(default_factory=list)
    tagTypes: list[TagType] = Field(default_factory=list)
    dependencies: list[ExportDependencies] = Field(default_factory=list)
    links: list[dict[str, Any]] = Field(default_factory=list)


# --------------------------------------------------------------------------- batch import
# `POST /api/admin/features-batch/validate` and `/import` (importTogglesSchema): an export's
# data, into one project and environment. Unleash's schemas say `additionalProperties: false`
# on every level; the sandbox refuses unknown fields where the releases were seen to (the body
# and its `data`; `links` before 7.0 and a tag type's `color` on 5.x: `sandbox.versions`) and
# reads the items as the other requests here, ignoring what it does not use.


class ImportFeature(Request):
    """A flag in an import's `data.features`: created, or its metadata overwritten."""

    name: Annotated[str, Field(min_length=1, max_length=255, pattern=r"^[A-Za-z0-9_.~-]+$")]
    type: Annotated[str, Field(min_length=1, max_length=100), ONE_LINE] | None = None
    description: Text | None = None
    project: OneLine | None = None
    stale: bool | None = None
    impressionData: bool | None = None
    archived: bool | None = None


class ImportStrategy(CreateFeatureStrategy):
    """A strategy in an import's `data.featureStrategies`: the flag it belongs to, and the id
    it had where it was exported (the target gives it a new one)."""

    featureName: Annotated[str, Field(min_length=1), ONE_LINE] | None = None
    id: OneLine | None = None


class ImportEnvironment(Request):
    """A flag in the import's environment (`data.featureEnvironments`): on or off, and its
    variants there (written only when there are some)."""

    name: Annotated[str, Field(min_length=1), ONE_LINE]
    featureName: Annotated[str, Field(min_length=1), ONE_LINE] | None = None
    environment: OneLine | None = None
    enabled: bool
    variants: list[VariantBody] = Field(default_factory=list)


class ImportTag(Request):
    """A flag's tag in an import (`data.featureTags`)."""

    featureName: Annotated[str, Field(min_length=1), ONE_LINE]
    tagType: TagText
    tagValue: TagText


class ImportSegment(Request):
    """A segment a strategy of the import uses: matched on the target by `name`."""

    id: RowId
    name: Annotated[str, Field(min_length=1), ONE_LINE]


class ImportTagType(Request):
    """A tag type of the import's tags (`data.tagTypes`): created where the target lacks it."""

    name: TagTypeName
    description: Annotated[str, Field(max_length=1000), FREE_TEXT] | None = None
    icon: Annotated[str, Field(max_length=100), ONE_LINE] | None = None
    color: HexColour | None = None


class ImportContextField(Request):
    """A context field the import's strategies use (`data.contextFields`): created where the
    target lacks it; an existing one must hold each of its legal values."""

    name: ContextFieldName
    description: Annotated[str, Field(max_length=250), FREE_TEXT] | None = None
    stickiness: bool | None = None
    sortOrder: StrictInt64 | None = None
    legalValues: list[LegalValueBody] | None = None
    project: OneLine | None = None


class ImportDependencies(Request):
    """A flag (`feature`) and its parents (`data.dependencies`)."""

    feature: Annotated[str, Field(min_length=1), ONE_LINE]
    dependencies: list[CreateDependentFeature]


class ImportLinkItem(Request):
    url: Annotated[str, Field(min_length=1), ONE_LINE]
    title: OneLine | None = None
    id: OneLine | None = None


class ImportLinks(Request):
    """A flag's links (`data.links`, 7.0 on)."""

    feature: Annotated[str, Field(min_length=1), ONE_LINE]
    links: list[ImportLinkItem]


class ImportData(Request):
    """The export an import takes (`data`): `features`, `featureStrategies` and `tagTypes`
    required, the rest optional; no other field."""

    model_config = ConfigDict(extra="forbid")

    features: list[ImportFeature]
    featureStrategies: list[ImportStrategy]
    featureEnvironments: list[ImportEnvironment] | None = None
    contextFields: list[ImportContextField] | None = None
    featureTags: list[ImportTag] | None = None
    segments: list[ImportSegment] | None = None
    tagTypes: list[ImportTagType]
    dependencies: list[ImportDependencies] | None = None
    links: list[ImportLinks] | None = None


class ImportQuery(Request):
    """importTogglesSchema: the body of `POST /api/admin/features-batch/validate` and
    `/import`: the target `project` and `environment`, and the export's `data`."""

    model_config = ConfigDict(extra="forbid")

    project: Annotated[str, Field(min_length=1), ONE_LINE]
    environment: Annotated[str, Field(min_length=1), ONE_LINE]
    data: ImportData


class ImportValidationItem(Response):
    """importTogglesValidateItemSchema: a message and the names it is about."""

    message: str
    affectedItems: list[str] = Field(default_factory=list)


class ImportValidation(Response):
    """importTogglesValidateSchema, what validate answers: `errors` stop an import,
    `warnings` say what it will do, `permissions` what the caller lacks for it."""

    errors: list[ImportValidationItem] = Field(default_factory=list)
    warnings: list[ImportValidationItem] = Field(default_factory=list)
    permissions: list[ImportValidationItem] = Field(default_factory=list)


# ------------------------------------------------- instance settings (issue 38): statistics,
# maintenance mode, CORS origins, banners


class ClientAppsCount(Response):
    range: str
    count: int


class InstanceStatistics(Response):
    """instanceAdminStatsSchema, `GET /api/admin/instance-admin/statistics`: computed on each
    request. The fields in the order Unleash 8.2 sends them (its CSV's columns); each release
    sends fewer (`sandbox.versions.Played.statistics_fields`), so every field is optional.
    The counts are read as the server sends them; `sum` is a SHA-256 over a few of them."""

    timestamp: datetime | None = None
    instanceId: str | None = None
    versionOSS: str | None = None
    versionEnterprise: str | None = None
    users: int | None = None
    serviceAccounts: int | None = None
    apiTokens: dict[str, int] | None = None
    activeUsers: dict[str, int] | None = None
    licensedUsers: int | None = None
    featureToggles: int | None = None
    archivedFeatureToggles: int | None = None
    projects: int | None = None
    contextFields: int | None = None
    roles: int | None = None
    customRootRoles: int | None = None
    customRootRolesInUse: int | None = None
    groups: int | None = None
    environments: int | None = None
    segments: int | None = None
    strategies: int | None = None
    SAMLenabled: bool | None = None
    OIDCenabled: bool | None = None
    passwordAuthEnabled: bool | None = None
    SCIMenabled: bool | None = None
    clientApps: list[ClientAppsCount] | None = None
    featureExports: int | None = None
    featureImports: int | None = None
    productionChanges: dict[str, int] | None = None
    previousDayMetricsBucketsCount: dict[str, int] | None = None
    maxEnvironmentStrategies: int | None = None
    maxConstraintValues: int | None = None
    maxConstraints: int | None = None
    releaseTemplates: int | None = None
    releasePlans: int | None = None
    edgeInstanceUsage: dict[str, float] | None = None
    readOnlyUsers: int | None = None
    sum: str | None = None


class Maintenance(Response):
    """maintenanceSchema, `GET /api/admin/maintenance`."""

    enabled: bool


class ToggleMaintenance(Request):
    """toggleMaintenanceSchema, `POST /api/admin/maintenance` (204): `enabled` required, a
    boolean and only that ("yes" is 400 "must be boolean" on Unleash 5 to 8)."""

    enabled: StrictBool


#: an origin the frontend API may answer (Unleash: "*", or a URL that is its own origin)
Origin = Annotated[str, Field(max_length=2048), ONE_LINE]


class SetCors(Request):
    """setCorsSchema, `POST /api/admin/ui-config/cors` (6.x on; 204). Without
    `frontendApiOrigins` Unleash answers 404 NotFoundError; each origin must be "*" or a URL that
    is its own origin (scheme, host, port: no path, no trailing slash), else 400 "Invalid origin:
    <value>" (checked by the server, not the schema)."""

    frontendApiOrigins: list[Origin] | None = None


class FrontendSettings(Request):
    frontendApiOrigins: list[Origin] | None = None


class SetUiConfig(Request):
    """setUiConfigSchema, `POST /api/admin/ui-config` (5.x and 6.x; 404 from 7.0): the CORS
    origins as 5.x sets them, `{frontendSettings: {frontendApiOrigins}}`; without
    `frontendSettings` 404 as `SetCors` without its list."""

    frontendSettings: FrontendSettings | None = None


#: what a banner looks like (Unleash Enterprise's variants; its schema takes any string)
BANNER_VARIANTS = ("info", "warning", "error", "success")


class CreateBanner(Request):
    """createBannerSchema (Enterprise 5.7+), `POST /api/admin/banners` (201) and
    `PUT /api/admin/banners/:id` (200, a whole replacement: Unleash's UI sends every field).
    `message` is Markdown and required; `link` is a URL, a path or `dialog` (then `dialog` is
    the Markdown shown)."""

    message: Annotated[str, Field(min_length=1, max_length=10_000), FREE_TEXT]
    enabled: StrictBool = True
    variant: Annotated[str, Field(max_length=100), ONE_LINE] | None = None
    sticky: StrictBool = False
    icon: Annotated[str, Field(max_length=100), ONE_LINE] | None = None
    link: Annotated[str, Field(max_length=2048), ONE_LINE] | None = None
    linkText: Annotated[str, Field(max_length=255), ONE_LINE] | None = None
    dialogTitle: Annotated[str, Field(max_length=255), ONE_LINE] | None = None
    dialog: Annotated[str, Field(max_length=10_000), FREE_TEXT] | None = None


class Banner(Response):
    """bannerSchema: a banner as Unleash Enterprise sends it."""

    id: int
    message: str
    enabled: bool | None = None
    variant: str | None = None
    sticky: bool | None = None
    icon: str | None = None
    link: str | None = None
    linkText: str | None = None
    dialogTitle: str | None = None
    dialog: str | None = None
    createdAt: datetime | None = None


class Banners(Response):
    """bannersSchema, `GET /api/admin/banners`."""

    banners: list[Banner] = Field(default_factory=list)


# --------------------------------------------------------------------------- event log (issue 38)


@row(shared=("type", "createdBy", "project", "environment", "groupType", "label"))
class Event:
    """eventSchema: a change the server recorded (`GET /api/admin/events`, the search's items),
    with the state before (`preData`) and after (`data`). The search adds `label` and `summary`
    (6.0 on), 7.0 on `groupType` and `groupId`; Enterprise's `ip` and anything else is dropped.
    `createdByUserId` is -42 for the admin API token, -1337 for the system."""

    id: int
    type: str
    createdAt: datetime
    createdBy: str | None = None
    createdByUserId: int | None = None
    data: Any = None
    preData: Any = None
    tags: list[Any] | None = None
    featureName: str | None = None
    project: str | None = None
    environment: str | None = None
    groupType: str | None = None
    groupId: str | None = None
    label: str | None = None
    summary: str | None = None


class EventPage(Response):
    """A page of events: the search's `{events, total}` (`GET /api/admin/search/events`, 6.0
    on; `total` the filtered count) or the older `{version, events, totalEvents}` (`GET
    /api/admin/events`, 5.x's and 6.x's `POST /api/admin/events/search`)."""

    events: list[Event]
    total: int | None = None
    totalEvents: int | None = None
    version: int | None = None


# ---------------------------------------------------------------------------- login history


class LoginEvent(Response):
    """loginEventSchema (Unleash Enterprise 4.22+; snake_case, as Enterprise sends it): one
    login or logout. `username` is what was typed ("Incorrectly configured provider" for a
    misconfigured SSO provider); `failure_reason` only when not `successful`; `type` (`login`
    or `logout`) is newer and may be absent on older servers."""

    id: int
    username: str | None = None
    auth_type: str | None = None
    created_at: datetime | None = None
    successful: bool | None = None
    ip: str | None = None
    failure_reason: str | None = None
    type: str | None = None


class LoginEvents(Response):
    """`GET /api/admin/logins` (Enterprise): every login event kept (14 days), no paging."""

    events: list[LoginEvent] = Field(default_factory=list)
