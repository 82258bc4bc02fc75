"""What a server and a token can do, decided once per connection from the answers of a probe
(`app.api.probe` sends it; `capabilities_of` here decides, with no I/O).

Windows and commands read this to enable, disable or explain a tool; they never guess from a
version number. The probe is a handful of small requests sent concurrently:

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
  accepted there (a 202 that stores nothing).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from app.api import errors as e
from app.api.models import (
    ArchivedFeatures,
    CurrentUser,
    GroupList,
    PersonalDashboardProjectDetails,
    UiConfig,
)
from app.api.operations import OPERATIONS, TOKEN_LABELS

ServerKind = Literal["sandbox", "unleash", "unknown"]
TokenKind = Literal["admin", "personal", "client"]

NEEDS_PAT = (
    "The dashboard needs a personal access token: it shows the projects of the user behind the "
    "token, and an admin API token has no user. Create one in the Unleash web interface under "
    "your profile > Personal API tokens, and use it for this connection"
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
    """Whether one operation works here; if not, `reason` says why and what would make it work.
    `note` is a remark for when it works ("through the search API")."""

    key: str
    available: bool
    reason: str = ""
    note: str = ""

    @property
    def title(self) -> str:
        return OPERATIONS.get(self.key, self.key)

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
    operations: dict[str, Availability] = field(default_factory=dict)

    def operation(self, key: str) -> Availability:
        if key not in OPERATIONS:
            raise KeyError(key)
        return self.operations.get(key) or Availability(key, False, "not probed")

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


def capabilities_of(outcomes: ProbeOutcomes) -> Capabilities:
    """What the server and token can do, decided from the probe's answers alone."""
    if outcomes.ui is None:
        return _client_token_capabilities(outcomes.base_url)
    server_kind, version, edition = _server_of(outcomes.ui)
    user_r, groups_r, archive_r = outcomes.user, outcomes.groups, outcomes.archive
    dashboard_r, metrics_r = outcomes.dashboard, outcomes.metrics

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

    ops: dict[str, Availability] = {}

    if isinstance(groups_r, GroupList):
        ops["groups"] = Availability("groups", True)
    elif isinstance(groups_r, e.NotFound):
        ops["groups"] = Availability("groups", False, NEEDS_ENTERPRISE)
    elif isinstance(groups_r, e.Forbidden):
        ops["groups"] = Availability("groups", False, "The token may not read user groups")
    else:
        ops["groups"] = Availability("groups", False, f"Could not be checked: {groups_r}")

    for key in ("users", "inactive_users"):
        ops[key] = (
            Availability(key, True) if is_admin else Availability(key, False, NEEDS_ADMIN_ROLE)
        )

    archive_endpoint = True
    if isinstance(archive_r, ArchivedFeatures):
        ops["archived_features"] = Availability("archived_features", True)
    elif isinstance(archive_r, e.NotFound):
        archive_endpoint = False
        ops["archived_features"] = Availability(
            "archived_features",
            True,
            note="through the feature search API: this server has no archive endpoint "
            "(removed in Unleash 7.0)",
        )
    elif isinstance(archive_r, e.Forbidden):
        ops["archived_features"] = Availability(
            "archived_features", False, "The token may not read archived features"
        )
    else:
        ops["archived_features"] = Availability(
            "archived_features", False, f"Could not be checked: {archive_r}"
        )

    if isinstance(dashboard_r, PersonalDashboardProjectDetails) or (
        isinstance(dashboard_r, e.NotFound)
        and "path you were looking for" not in dashboard_r.message
    ):
        ops["project_dashboard"] = Availability("project_dashboard", True)
    elif isinstance(dashboard_r, e.ServerError | e.Forbidden) and token_kind == "admin":
        ops["project_dashboard"] = Availability("project_dashboard", False, NEEDS_PAT)
    elif isinstance(dashboard_r, e.NotFound):
        ops["project_dashboard"] = Availability(
            "project_dashboard", False, "This server has no personal dashboard endpoint"
        )
    else:
        ops["project_dashboard"] = Availability(
            "project_dashboard", False, f"Could not be checked: {dashboard_r}"
        )

    ops["context_usage"] = Availability("context_usage", True)

    if not outcomes.has_client_token:
        ops["metrics_upload"] = Availability("metrics_upload", False, NEEDS_CLIENT_TOKEN)
    elif metrics_r is None:
        ops["metrics_upload"] = Availability(
            "metrics_upload", True, note="sent with the connection's client token"
        )
    elif isinstance(metrics_r, e.WrongTokenType):
        ops["metrics_upload"] = Availability(
            "metrics_upload",
            False,
            "The connection's client token is refused on the metrics endpoint: it is not a "
            "client (backend) token",
        )
    elif isinstance(metrics_r, e.Unauthorized):
        ops["metrics_upload"] = Availability(
            "metrics_upload", False, "The connection's client token is not valid on this server"
        )
    else:
        ops["metrics_upload"] = Availability(
            "metrics_upload", False, f"Could not be checked: {metrics_r}"
        )

    return Capabilities(
        base_url=outcomes.base_url,
        server_kind=server_kind,
        server_version=version,
        edition=edition,
        token_kind=token_kind,
        user_name=user_name,
        is_admin=is_admin,
        archive_endpoint=archive_endpoint,
        operations=ops,
    )


def _client_token_capabilities(base_url: str) -> Capabilities:
    """The admin API refused the token's type and the metrics endpoint took it: a client
    token."""
    ops = {key: Availability(key, False, NEEDS_ADMIN_SIDE) for key in OPERATIONS}
    ops["metrics_upload"] = Availability("metrics_upload", True, note="sent with this client token")
    return Capabilities(
        base_url=base_url,
        server_kind="unknown",
        server_version="",
        edition="",
        token_kind="client",
        user_name=None,
        is_admin=False,
        archive_endpoint=False,
        operations=ops,
    )


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
