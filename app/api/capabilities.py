"""What a server and a token can do, decided once per connection from the answers of a probe
(`app.api.probe` sends it; `capabilities_of` here decides, with no I/O).

Windows and commands read this to enable, disable or explain a tool or an action; they never
guess. What each tool and action needs is declared in `app.registry` (token kind, Admin role,
client token, server kind, version range, and which probe answer decides); `capabilities_of`
checks those needs in order against the probe's answers. The probe is a handful of small
requests sent concurrently:

- `GET /api/admin/ui-config`: server kind (the sandbox or Unleash) and version; a client token is
  refused here, which is how a client token is told apart;
- `GET /api/admin/user`: the token kind (admin API token or personal access token) and whether it
  holds the Admin root role (`ADMIN` permission);
- `GET /api/admin/groups`: groups exist (Unleash Enterprise, the sandbox) or not (404);
- `GET /api/admin/archive/features/<a project id nobody uses>`: the spec's archive endpoint exists
  (an empty list) or was removed (404, Unleash 7.0 and later);
- `GET /api/admin/personal-dashboard/default`: the dashboard answers this token (Unleash 8.2
  answers an admin API token with a 500);
- with a client token, `POST /api/client/metrics/bulk` with no metrics at all: the token is
  accepted there (a 202 that stores nothing);
- `GET /api/admin/roles`: custom roles exist (Unleash Enterprise, the sandbox) or not (404 "The
  path you were looking for ... is not available": open-source Unleash);
- `GET /api/admin/service-account`: service accounts exist (Unleash Enterprise, the sandbox) or
  not (open source: 404 "The path you were looking for ... is not available.");
- `GET /api/admin/projects/<a project id nobody uses>/access`: project access exists (Unleash
  Pro and Enterprise, the sandbox: an answer, or a 404 saying the project is not found, or a
  403) or not (open source: the 404 of a path that is not there, "The path you were looking
  for ... is not available");
- `GET /api/admin/banners` (issue 38): banners exist (Unleash Enterprise 5.7+, the sandbox) or
  not (open source: the 404 of a path that is not there); that answer and the edition also say
  whether login history is there (Enterprise's: no request of its own, `_logins`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.api import errors as e
from app.api.models import (
    ArchivedFeatures,
    Banners,
    CurrentUser,
    GroupList,
    PersonalDashboardProjectDetails,
    ProjectAccess,
    RoleList,
    ServiceAccounts,
    UiConfig,
)
from app.registry import (
    ACTIONS,
    ACTIONS_BY_KEY,
    EVERY_TOOL,
    OPERATIONS,
    TOKEN_LABELS,
    TOOL_OF,
    Action,
    Needs,
    Probe,
    ServerKind,
    TokenKind,
    Tool,
)

__all__ = [
    "NEEDS_ADMIN_ROLE",
    "NEEDS_ADMIN_SIDE",
    "NEEDS_CLIENT_TOKEN",
    "NEEDS_ENTERPRISE",
    "NEEDS_ENTERPRISE_LOGINS",
    "NEEDS_ENTERPRISE_ROLES",
    "NEEDS_PAT",
    "NEEDS_USER_TOKEN",
    "OPERATIONS",
    "Availability",
    "Capabilities",
    "ProbeOutcomes",
    "ServerKind",
    "TokenKind",
    "capabilities_of",
]

NEEDS_PAT = (
    "The dashboard needs a personal access token: it shows the projects of the user behind the "
    "token, and an admin API token has no user. Create one in the Unleash web interface under "
    "your profile > Personal API tokens, and use it for this connection"
)
NEEDS_USER_TOKEN = (
    "This needs a personal access token: it acts on the user behind the token, and an admin API "
    'token has no user (Unleash refuses it: "PATs require an authenticated user."). Create one '
    "in the Unleash web interface under your profile > Personal API tokens, and use it for this "
    "connection"
)
NEEDS_ENTERPRISE = "User groups need Unleash Enterprise: this server has no groups endpoint"
NEEDS_CLIENT_TOKEN = (
    "Uploading metrics needs a client (backend) token: servers refuse admin API tokens and "
    "personal access tokens on the metrics endpoint. Add a client token to the connection"
)
NEEDS_ADMIN_SIDE = (
    "This needs an admin API token or a personal access token; the connection's token is a "
    "client token"
)
NEEDS_ADMIN_ROLE = "The token's user does not have the Admin root role, which this needs"


@dataclass(frozen=True, slots=True)
class Availability:
    """Whether one tool or action (`key` as in `app.registry`) works here; if not, `reason` says
    why and what would make it work. `note` is a remark for when it works ("through the search
    API")."""

    key: str
    available: bool
    reason: str = ""
    note: str = ""

    @property
    def title(self) -> str:
        return (
            _title(self.key) if self.key in OPERATIONS or self.key in ACTIONS_BY_KEY else self.key
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"available": self.available}
        if self.reason:
            out["reason"] = self.reason
        if self.note:
            out["note"] = self.note
        return out


@dataclass(frozen=True, slots=True)
class Capabilities:
    base_url: str
    server_kind: ServerKind
    server_version: str
    #: "Open Source", "Enterprise", "sandbox", or "" when unknown
    edition: str
    token_kind: TokenKind
    #: the user a personal access token acts as
    user_name: str | None
    #: the token holds the Admin root role
    is_admin: bool
    #: the spec's `GET /api/admin/archive/features/:projectId` exists
    archive_endpoint: bool
    #: per tool key (`app.registry.EVERY_TOOL`: the command line's tools too)
    operations: dict[str, Availability] = field(default_factory=dict)
    #: per action key (`app.registry.ACTIONS`)
    actions: dict[str, Availability] = field(default_factory=dict)
    #: (issue 38) the server was in maintenance mode when probed (`ui-config`'s
    #: `maintenanceMode`; None: it did not say): every change is refused meanwhile
    maintenance: bool | None = None

    def operation(self, key: str | Tool) -> Availability:
        """Whether a tool works here (by its key or its `Tool`)."""
        key = key.key if isinstance(key, Tool) else key
        if key not in OPERATIONS:
            raise KeyError(key)
        return self.operations.get(key) or Availability(key, False, "not probed")

    def action(self, key: str | Action) -> Availability:
        """Whether an action works here (by its key or its `Action`)."""
        key = key.key if isinstance(key, Action) else key
        if key not in ACTIONS_BY_KEY:
            raise KeyError(key)
        return self.actions.get(key) or Availability(key, False, "not probed")

    @property
    def server_label(self) -> str:
        if self.server_kind == "sandbox":
            return f"flagdesk sandbox {self.server_version}".strip()
        if self.server_kind == "unleash":
            edition = f" ({self.edition})" if self.edition else ""
            return f"Unleash {self.server_version}{edition}"
        return "unknown server"

    @property
    def token_label(self) -> str:
        label = TOKEN_LABELS[self.token_kind]
        if self.token_kind == "personal" and self.user_name:
            label += f" of {self.user_name}"
        return label

    def to_json(self) -> dict[str, Any]:
        return {
            "url": self.base_url,
            "server": {
                "kind": self.server_kind,
                "version": self.server_version,
                "edition": self.edition,
                "label": self.server_label,
            },
            "token": {
                "kind": self.token_kind,
                "label": self.token_label,
                "user": self.user_name,
                "admin": self.is_admin,
            },
            "archiveEndpoint": self.archive_endpoint,
            "operations": {key: self.operation(key).to_json() for key in OPERATIONS},
            "actions": {a.key: self.action(a).to_json() for a in ACTIONS},
        }


@dataclass(frozen=True, slots=True)
class ProbeOutcomes:
    """What the probe's requests answered (see the module's docstring): each an answer or the
    `ClientError` it raised. `capabilities_of` turns them into `Capabilities`, with no I/O."""

    base_url: str
    #: the connection has a client token besides its admin-side token
    has_client_token: bool
    #: the admin-side token's part before the first `:` (`user` for a personal access token)
    token_prefix: str
    #: None: `ui-config` refused the token as the wrong type, and the metrics endpoint accepted
    #: it, so it is a client token (the other outcomes are then None too)
    ui: UiConfig | None
    user: CurrentUser | e.ClientError | None = None
    groups: GroupList | e.ClientError | None = None
    archive: ArchivedFeatures | e.ClientError | None = None
    dashboard: PersonalDashboardProjectDetails | e.ClientError | None = None
    #: the empty bulk batch sent with the client token: None when accepted (or not sent)
    metrics: e.ClientError | None = None
    #: `GET /api/admin/roles` (roles, issue 36)
    roles: RoleList | e.ClientError | None = None
    #: `GET /api/admin/service-account` (None: not asked)
    service_accounts: ServiceAccounts | e.ClientError | None = None
    #: project access of a project nobody uses (Pro and Enterprise)
    project_access: ProjectAccess | e.ClientError | None = None
    #: `GET /api/admin/banners` (issue 38; None: not asked)
    banners: Banners | e.ClientError | None = None


def capabilities_of(outcomes: ProbeOutcomes) -> Capabilities:
    """What the server and token can do, decided from the probe's answers alone: for each tool
    of the registry, then each of its actions, the first of its `Needs` that is not met says
    why not (an action also needs its tool)."""
    facts = _facts_of(outcomes)
    operations = {tool.key: _availability(tool.key, tool.needs, facts) for tool in EVERY_TOOL}
    actions: dict[str, Availability] = {}
    for action in ACTIONS:
        tool = operations[TOOL_OF[action.key].key]
        if not tool.available:
            actions[action.key] = Availability(action.key, False, tool.reason)
        else:
            own = _availability(action.key, action.needs, facts)
            actions[action.key] = own if not own.available else Availability(action.key, True)
    return Capabilities(
        base_url=outcomes.base_url,
        server_kind=facts.server_kind,
        server_version=facts.version,
        edition=facts.edition,
        token_kind=facts.token_kind,
        user_name=facts.user_name,
        is_admin=facts.is_admin,
        archive_endpoint=(outcomes.ui is not None and not isinstance(outcomes.archive, e.NotFound)),
        operations=operations,
        actions=actions,
        maintenance=None if outcomes.ui is None else outcomes.ui.maintenanceMode,
    )


@dataclass(frozen=True, slots=True)
class _Facts:
    """What the probe says about the server and the token, before any tool is considered."""

    outcomes: ProbeOutcomes
    server_kind: ServerKind
    version: str
    edition: str
    token_kind: TokenKind
    user_name: str | None
    is_admin: bool


def _facts_of(outcomes: ProbeOutcomes) -> _Facts:
    if outcomes.ui is None:
        return _Facts(outcomes, "unknown", "", "", "client", None, False)
    server_kind, version, edition = _server_of(outcomes.ui)
    user_r = outcomes.user
    token_kind: TokenKind
    user_name: str | None = None
    is_admin = False
    if not isinstance(user_r, CurrentUser):
        # a server without `/api/admin/user`: fall back on the token's shape
        token_kind = "personal" if outcomes.token_prefix == "user" else "admin"
    else:
        user = user_r.user
        if isinstance(user.get("id"), int) and user.get("type") != "admin":
            token_kind = "personal"
            user_name = user.get("name") or user.get("username") or user.get("email")
        else:
            token_kind = "admin"
        is_admin = any(p.permission == "ADMIN" for p in user_r.permissions)
    return _Facts(outcomes, server_kind, version, edition, token_kind, user_name, is_admin)


def _availability(key: str, needs: Needs, facts: _Facts) -> Availability:
    """`needs` checked in their declared order against `facts`."""
    if facts.token_kind not in needs.tokens:
        if facts.token_kind == "client":
            return Availability(key, False, NEEDS_ADMIN_SIDE)
        if needs.tokens == {"personal"}:
            return Availability(key, False, NEEDS_USER_TOKEN)
        kinds = " or ".join(TOKEN_LABELS[k] for k in sorted(needs.tokens))
        return Availability(key, False, f"This needs a {kinds}")
    if needs.admin_role and not facts.is_admin:
        return Availability(key, False, NEEDS_ADMIN_ROLE)
    has_client_token = facts.outcomes.has_client_token or facts.token_kind == "client"
    if needs.client_token and not has_client_token:
        return Availability(key, False, NEEDS_CLIENT_TOKEN)
    if needs.servers is not None and facts.server_kind not in needs.servers:
        return Availability(key, False, "This server does not have it")
    for versions in needs.versions:
        if not versions.admits(facts.server_kind, facts.version):
            return Availability(key, False, versions.reason(_title(key), facts.version))
    if needs.probe is None:
        return Availability(key, True)
    return _READERS[needs.probe](key, facts)


def _title(key: str) -> str:
    action = ACTIONS_BY_KEY.get(key)
    return action.title if action is not None else OPERATIONS[key]


def _groups(key: str, facts: _Facts) -> Availability:
    groups = facts.outcomes.groups
    if isinstance(groups, GroupList):
        return Availability(key, True)
    if isinstance(groups, e.NotFound):
        return Availability(key, False, NEEDS_ENTERPRISE)
    if isinstance(groups, e.Forbidden):
        return Availability(key, False, "The token may not read user groups")
    return Availability(key, False, f"Could not be checked: {groups}")


def _archive(key: str, facts: _Facts) -> Availability:
    archive = facts.outcomes.archive
    if isinstance(archive, ArchivedFeatures):
        return Availability(key, True)
    if isinstance(archive, e.NotFound):
        return Availability(
            key,
            True,
            note="through the feature search API: this server has no archive endpoint "
            "(removed in Unleash 7.0)",
        )
    if isinstance(archive, e.Forbidden):
        return Availability(key, False, "The token may not read archived features")
    return Availability(key, False, f"Could not be checked: {archive}")


def _dashboard(key: str, facts: _Facts) -> Availability:
    dashboard = facts.outcomes.dashboard
    if isinstance(dashboard, PersonalDashboardProjectDetails) or (
        isinstance(dashboard, e.NotFound) and "path you were looking for" not in dashboard.message
    ):
        return Availability(key, True)
    if isinstance(dashboard, e.ServerError | e.Forbidden) and facts.token_kind == "admin":
        return Availability(key, False, NEEDS_PAT)
    if isinstance(dashboard, e.NotFound):
        return Availability(key, False, "This server has no personal dashboard endpoint")
    return Availability(key, False, f"Could not be checked: {dashboard}")


def _metrics(key: str, facts: _Facts) -> Availability:
    if facts.token_kind == "client":
        return Availability(key, True, note="sent with this client token")
    metrics = facts.outcomes.metrics
    if metrics is None:
        return Availability(key, True, note="sent with the connection's client token")
    if isinstance(metrics, e.WrongTokenType):
        return Availability(
            key,
            False,
            "The connection's client token is refused on the metrics endpoint: it is not a "
            "client (backend) token",
        )
    if isinstance(metrics, e.Unauthorized):
        return Availability(key, False, "The connection's client token is not valid on this server")
    return Availability(key, False, f"Could not be checked: {metrics}")


# roles (issue 36): custom roles, where the server has the roles API
NEEDS_ENTERPRISE_ROLES = (
    "Custom roles need Unleash Enterprise: this server has no roles endpoint (its built-in root "
    "roles are still listed)"
)


def _roles(key: str, facts: _Facts) -> Availability:
    roles = facts.outcomes.roles
    if isinstance(roles, RoleList):
        return Availability(key, True)
    if isinstance(roles, e.NotFound):
        return Availability(key, False, NEEDS_ENTERPRISE_ROLES)
    if isinstance(roles, e.Forbidden):
        return Availability(key, False, "The token may not read roles")
    return Availability(key, False, f"Could not be checked: {roles}")


# ---------------------------------------------------------------------------- project access

NEEDS_PRO = (
    "Project access needs Unleash Pro or Enterprise: this server has no project access "
    "endpoint (open source)"
)


def _project_access(key: str, facts: _Facts) -> Availability:
    """The route answers (or says the project is not found, or refuses this token: it exists),
    or it is not there (open source: the 404 of an unknown path)."""
    found = facts.outcomes.project_access
    if isinstance(found, ProjectAccess):
        return Availability(key, True)
    if isinstance(found, e.NotFound):
        if "path you were looking for" in found.message:
            return Availability(key, False, NEEDS_PRO)
        return Availability(key, True)
    if isinstance(found, e.Forbidden):
        return Availability(
            key, True, note="only in the projects where the token's user may manage access"
        )
    return Availability(key, False, f"Could not be checked: {found}")


#: how each probe answer is read
_READERS = {
    Probe.GROUPS: _groups,
    Probe.ARCHIVE: _archive,
    Probe.DASHBOARD: _dashboard,
    Probe.METRICS: _metrics,
    Probe.ROLES: _roles,
}
_READERS[Probe.PROJECT_ACCESS] = _project_access

# ---------------------------------------------------------------------------- service accounts

NEEDS_ENTERPRISE_SERVICE_ACCOUNTS = (
    "Service accounts need Unleash Enterprise: this server has no service account endpoint"
)


def _service_accounts(key: str, facts: _Facts) -> Availability:
    """A list: there. A 404 of an unknown path ("The path you were looking for ... is not
    available.", what open-source Unleash answers): Enterprise's, not here."""
    answer = facts.outcomes.service_accounts
    if isinstance(answer, ServiceAccounts):
        return Availability(key, True)
    if isinstance(answer, e.NotFound):
        if "path you were looking for" in answer.message or not answer.message:
            return Availability(key, False, NEEDS_ENTERPRISE_SERVICE_ACCOUNTS)
        return Availability(key, False, f"This server has no service accounts: {answer}")
    if isinstance(answer, e.Forbidden):
        return Availability(key, False, "The token may not read service accounts")
    if answer is None:
        return Availability(key, False, "Could not be checked: not probed")
    return Availability(key, False, f"Could not be checked: {answer}")


_READERS[Probe.SERVICE_ACCOUNTS] = _service_accounts

# ---------------------------------------------------------------------------- banners (issue 38)

NEEDS_ENTERPRISE_BANNERS = (
    "Banners need Unleash Enterprise 5.7 or later: this server has no banners endpoint"
)


def _banners(key: str, facts: _Facts) -> Availability:
    """A list: there. The 404 of an unknown path (open source): Enterprise's, not here."""
    answer = facts.outcomes.banners
    if isinstance(answer, Banners):
        return Availability(key, True)
    if isinstance(answer, e.NotFound):
        return Availability(key, False, NEEDS_ENTERPRISE_BANNERS)
    if isinstance(answer, e.Forbidden):
        return Availability(key, False, "The token may not read banners")
    if answer is None:
        return Availability(key, False, "Could not be checked: not probed")
    return Availability(key, False, f"Could not be checked: {answer}")


_READERS[Probe.BANNERS] = _banners

# ---------------------------------------------------------------------- login history (issue 38)

NEEDS_ENTERPRISE_LOGINS = (
    "Login history needs Unleash Enterprise 4.22 or later: this server is open-source Unleash, "
    "which keeps no login history"
)


def _logins(key: str, facts: _Facts) -> Availability:
    """Login history (Enterprise 4.22+) is read by no request of the probe's own (every login
    of 14 days, at each connection): the sandbox has it, and so does a server that `ui-config`
    says is Enterprise or that answers the banners' list (Enterprise's route; 5.7+, and
    flagdesk is proven from 5.12). The banners' 404 of a path that is not there: open source."""
    answer = facts.outcomes.banners
    if isinstance(answer, Banners) or facts.edition == "Enterprise":
        return Availability(key, True)
    if isinstance(answer, e.NotFound):
        return Availability(key, False, NEEDS_ENTERPRISE_LOGINS)
    if answer is None:
        return Availability(key, False, "Could not be checked: not probed")
    return Availability(key, False, f"Could not be checked: {answer}")


_READERS[Probe.LOGINS] = _logins


def _server_of(ui: UiConfig) -> tuple[ServerKind, str, str]:
    current = ui.versionInfo.current if ui.versionInfo else {}
    if ui.name == "flagdesk sandbox" or "sandbox" in current:
        return "sandbox", ui.version, "sandbox"
    extra = ui.model_extra or {}
    environment = extra.get("environment")
    edition = environment if isinstance(environment, str) else ""
    if current.get("enterprise"):
        edition = edition if edition and edition != "Open Source" else "Enterprise"
    return "unleash", ui.version, edition
