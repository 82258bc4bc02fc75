"""The one registry of what flagdesk can do on a connection: its tools (one sidebar entry and one
window each) and each tool's actions, with what every one of them needs (token kind, the Admin
root role, a client token, server kind, a version range, and which answer of the capability
probe decides). Declared here once; the sidebar (`ui.main_window`), the windows
(`ui.tool_page.WINDOWS`), the capability report (`app.api.capabilities.capabilities_of`),
`flagdesk check` and the connections dialog read it.

Standard library only, and little work at import: the main window's frame reads it before the
client, pydantic and keyring are loaded (`bench/gui_startup.py`). So the records are
`NamedTuple`s: frozen slotted dataclasses made importing it cost about 12 ms more (their class
creation, and importing `dataclasses`); as it is, it takes about 4 ms with PySide6 loaded (the
catalogue and operations modules it replaced took 2.5 ms)."""

from __future__ import annotations

import re
from enum import Enum
from typing import Literal, NamedTuple

ServerKind = Literal["sandbox", "unleash", "unknown"]
TokenKind = Literal["admin", "personal", "client"]

TOKEN_LABELS: dict[str, str] = {
    "admin": "admin API token",
    "personal": "personal access token",
    "client": "client token",
}
#: the tokens of the admin API: an admin API token, or a personal access token (acting as its user)
ADMIN_SIDE: frozenset[TokenKind] = frozenset({"admin", "personal"})
ANY_TOKEN: frozenset[TokenKind] = frozenset({"admin", "personal", "client"})


class Probe(Enum):
    """The probe's answer that decides whether a tool or action works here, beyond what the
    token and version say (how each answer is read: `app.api.capabilities`)."""

    #: `GET /api/admin/groups`: groups exist (Unleash Enterprise, the sandbox) or not
    GROUPS = "groups"
    #: `GET /api/admin/archive/features/:p`: the spec's endpoint, or the search API fallback
    ARCHIVE = "archive"
    #: `GET /api/admin/personal-dashboard/default`: answers this token
    DASHBOARD = "dashboard"
    #: `POST /api/client/metrics/bulk` with no metrics: takes the client token
    METRICS = "metrics"
    #: `GET /api/admin/roles`: custom roles exist (Unleash Enterprise, the sandbox) or not
    ROLES = "roles"
    #: `GET /api/admin/service-account`: service accounts exist (Unleash Enterprise, the sandbox)
    SERVICE_ACCOUNTS = "service_accounts"
    #: `GET /api/admin/projects/<a project id>/access`: project access exists (Unleash Pro and
    #: Enterprise, the sandbox) or not (open source: the route is not there, 404)
    PROJECT_ACCESS = "project_access"
    #: `GET /api/admin/banners`: banners exist (Unleash Enterprise 5.7+, the sandbox) or not
    #: (open source: the route is not there, 404)
    BANNERS = "banners"
    #: login history (Unleash Enterprise 4.22+, the sandbox; open source: 404). No request of
    #: its own: `GET /api/admin/logins` answers every login of 14 days, megabytes on a busy
    #: Enterprise server at each connection; the banners' answer (an Enterprise route) and the
    #: edition `ui-config` names decide (`app.api.capabilities`)
    LOGINS = "logins"


def version_tuple(text: str) -> tuple[int, ...] | None:
    """`"8.2.0"` -> `(8, 2, 0)`; the leading numbers of `"6.3.0-beta.1"`; None for no number."""
    found = re.match(r"\s*v?(\d+(?:\.\d+)*)", text)
    return tuple(int(n) for n in found.group(1).split(".")) if found else None


class Versions(NamedTuple):
    """The versions of one kind of server that have it: from `minimum` on, before `below`.
    `what` names the server's feature in the reason ("the personal dashboard needs Unleash 6.3
    or later; this server is 5.12.8")."""

    server: ServerKind
    minimum: tuple[int, ...] | None = None
    below: tuple[int, ...] | None = None
    what: str = ""

    def admits(self, server: ServerKind, version: str) -> bool:
        """False only when `server` is this kind and its version is known and out of range."""
        found = version_tuple(version)
        if server != self.server or found is None:
            return True
        if self.minimum is not None and found < self.minimum:
            return False
        return not (self.below is not None and found >= self.below)

    def describe(self) -> str:
        name = {"unleash": "Unleash", "sandbox": "the flagdesk sandbox"}.get(self.server, "")
        low = ".".join(map(str, self.minimum)) if self.minimum else ""
        high = ".".join(map(str, self.below)) if self.below else ""
        if low and high:
            return f"{name} {low} or later, before {high}"
        return f"{name} {low} or later" if low else f"{name} before {high}"

    def reason(self, title: str, version: str) -> str:
        """Why a server of `version` cannot: "<what> needs <range>; this server is <version>"."""
        what = self.what or title
        return f"{what[:1].upper()}{what[1:]} needs {self.describe()}; this server is {version}"


class Needs(NamedTuple):
    """What a tool or an action needs of the connection; checked in this order."""

    #: the kinds of token that can do it
    tokens: frozenset[TokenKind] = ADMIN_SIDE
    #: the token (its user, for a personal access token) holds the Admin root role
    admin_role: bool = False
    #: the connection has a client token (or is one)
    client_token: bool = False
    #: the server kinds that have it (None: any)
    servers: frozenset[ServerKind] | None = None
    #: version ranges, per server kind
    versions: tuple[Versions, ...] = ()
    #: the probe's answer that decides (None: the checks above are enough)
    probe: Probe | None = None
    #: how it works differently on some versions, where it works: (versions, what differs),
    #: shown in the README's version table (`version_table`)
    differences: tuple[tuple[Versions, str], ...] = ()


class Action(NamedTuple):
    """Something a tool's window does to the server (the reads are the tool itself)."""

    #: "<what>.<verb>", the key of `Capabilities.actions` and of `flagdesk check --json`
    key: str
    title: str
    #: the request(s) it makes, as the spec writes them
    endpoint: str
    needs: Needs = Needs()


class Tool(NamedTuple):
    """One sidebar entry and one window: what it reads, and the actions it offers."""

    #: the capability key, also the stem of the page's object names (see `camel`)
    key: str
    title: str
    #: the sidebar group it is listed under (one of `GROUPS`)
    group: str
    description: str
    #: the icon's file stem in app/resources/icons/
    icon: str
    needs: Needs = Needs()
    actions: tuple[Action, ...] = ()


def camel(key: str) -> str:
    """A tool key as the stem of object names: "inactive_users" -> "inactiveUsers"."""
    head, *rest = key.split("_")
    return head + "".join(part.title() for part in rest)


_ADMIN = Needs(admin_role=True)
_GROUPS = Needs(admin_role=True, probe=Probe.GROUPS)

# ---------------------------------------------------------------------------- actions

CREATE_GROUP = Action("groups.create", "Create group", "POST /api/admin/groups", _GROUPS)
EDIT_GROUP = Action("groups.edit", "Edit group", "PUT /api/admin/groups/:id", _GROUPS)
DELETE_GROUP = Action("groups.delete", "Delete group", "DELETE /api/admin/groups/:id", _GROUPS)

EDIT_USER = Action("users.edit", "Edit user", "PUT /api/admin/user-admin/:id", _ADMIN)
CREATE_USER = Action(
    "users.create", "Create user", "POST /api/admin/user-admin",
    Needs(admin_role=True, differences=(
        (Versions("unleash", minimum=(5, 6)), "20 users a minute, then 429"),)),
)  # fmt: skip
DELETE_USER = Action("users.delete", "Delete user", "DELETE /api/admin/user-admin/:id", _ADMIN)
RESET_PASSWORD = Action(
    "users.reset_password",
    "Reset password",
    "POST /api/admin/user-admin/reset-password",
    _ADMIN,
)
DELETE_INACTIVE_USERS = Action(
    "inactive_users.delete",
    "Delete inactive users",
    "POST /api/admin/user-admin/inactive/delete",
    _ADMIN,
)

REVIVE_FEATURE = Action(
    "archived_features.revive", "Revive a flag", "POST /api/admin/archive/revive/:name"
)
DELETE_FEATURE = Action(
    "archived_features.delete", "Delete a flag for good", "DELETE /api/admin/archive/:name"
)
#: the project bulk endpoints came with Unleash 4.22 (Unleash's history; not measured below 5.12)
_BULK = Versions("unleash", minimum=(4, 22), what="the project bulk endpoints")
REVIVE_FEATURES = Action(
    "archived_features.revive_bulk",
    "Revive flags (bulk)",
    "POST /api/admin/projects/:projectId/revive",
    Needs(versions=(_BULK,)),
)
DELETE_FEATURES = Action(
    "archived_features.delete_bulk",
    "Delete flags for good (bulk)",
    "POST /api/admin/projects/:projectId/delete",
    Needs(versions=(_BULK,)),
)
#: the undo of a revive: the revived flags back into the archive
ARCHIVE_FEATURES = Action(
    "archived_features.archive",
    "Archive flags again (undo a revive)",
    "POST /api/admin/projects/:projectId/archive",
    Needs(versions=(_BULK,)),
)

CREATE_CONTEXT_FIELD = Action(
    "context_fields.create", "Create context field", "POST /api/admin/context"
)
EDIT_CONTEXT_FIELD = Action(
    "context_fields.edit", "Edit context field", "PUT /api/admin/context/:name"
)
DELETE_CONTEXT_FIELD = Action(
    "context_fields.delete", "Delete context field", "DELETE /api/admin/context/:name",
    Needs(differences=(
        (Versions("unleash", below=(7, 0)), "the server deletes a field in use (flagdesk refuses "
         "first)"),
        (Versions("unleash", minimum=(7, 0)), "409 for a field in use"),
    )),
)  # fmt: skip

#: an upload of metrics batches (`app.metrics.batch_upload`): journaled as one entry an upload
#: or resume, naming its ledger's folder, so the History lists it with the changes; it needs what
#: its tool needs (a client token on the bulk metrics endpoint), whatever the main token's kind
UPLOAD_METRICS = Action(
    "metrics.upload",
    "Upload metrics",
    "POST /api/client/metrics/bulk",
    Needs(tokens=ANY_TOKEN, client_token=True, probe=Probe.METRICS),
)

# ---------------------------------------------------------------------------- API tokens

#: an Admin's token, admin API token or personal access token alike (8.2 lists them to either;
#: Unleash gives the token permissions to no other built-in root role by default)
_API_TOKENS = Needs(admin_role=True)
CREATE_API_TOKEN = Action(
    "api_tokens.create", "Create API token", "POST /api/admin/api-tokens",
    Needs(admin_role=True, differences=(
        (Versions("unleash", below=(7, 0)), "client and frontend types (no backend)"),)),
)  # fmt: skip
DELETE_API_TOKEN = Action(
    "api_tokens.delete", "Delete API token", "DELETE /api/admin/api-tokens/:token", _API_TOKENS
)
EXPIRE_API_TOKEN = Action(
    "api_tokens.expire",
    "Change API token expiry",
    "PUT /api/admin/api-tokens/:token",
    _API_TOKENS,
)

API_TOKENS = Tool(
    "api_tokens", "API tokens", "Access",
    "List, create and revoke the server's API tokens (client, frontend, backend).",
    "tokens", _API_TOKENS, (CREATE_API_TOKEN, DELETE_API_TOKEN, EXPIRE_API_TOKEN),
)  # fmt: skip

# ---------------------------------------------------------------------------- personal tokens

#: what only a personal access token can do: act on the user behind it (an admin API token is
#: no user's; Unleash answers it 403 "PATs require an authenticated user.")
_PERSONAL = Needs(tokens=frozenset({"personal"}))

CREATE_PAT = Action(
    "personal_tokens.create", "Create personal access token", "POST /api/admin/user/tokens",
    _PERSONAL,
)  # fmt: skip
DELETE_PAT = Action(
    "personal_tokens.delete", "Delete personal access token",
    "DELETE /api/admin/user/tokens/:id", _PERSONAL,
)  # fmt: skip
#: the connected user's personal access tokens (`flagdesk pats`, the window `ui.personal_tokens`)
PERSONAL_TOKENS = Tool(
    "personal_tokens", "Personal access tokens", "Access",
    "Your personal access tokens: list, create (the secret shown once) and delete.", "key",
    _PERSONAL, (CREATE_PAT, DELETE_PAT),
)  # fmt: skip

# ---------------------------------------------------------------------------- service accounts

#: service accounts are Unleash Enterprise's (404 on open source): an Admin's, as Unleash's page
#: and every action of it need ADMIN
_SERVICE_ACCOUNTS = Needs(admin_role=True, probe=Probe.SERVICE_ACCOUNTS)
CREATE_SERVICE_ACCOUNT = Action(
    "service_accounts.create", "Create service account", "POST /api/admin/service-account",
    _SERVICE_ACCOUNTS,
)  # fmt: skip
EDIT_SERVICE_ACCOUNT = Action(
    "service_accounts.edit", "Edit service account", "PUT /api/admin/service-account/:id",
    _SERVICE_ACCOUNTS,
)  # fmt: skip
DELETE_SERVICE_ACCOUNT = Action(
    "service_accounts.delete", "Delete service account",
    "DELETE /api/admin/service-account/:id", _SERVICE_ACCOUNTS,
)  # fmt: skip
CREATE_SERVICE_ACCOUNT_TOKEN = Action(
    "service_accounts.create_token", "Create service account token",
    "POST /api/admin/service-account/:id/token", _SERVICE_ACCOUNTS,
)  # fmt: skip
DELETE_SERVICE_ACCOUNT_TOKEN = Action(
    "service_accounts.delete_token", "Delete service account token",
    "DELETE /api/admin/service-account/:id/token/:tokenId", _SERVICE_ACCOUNTS,
)  # fmt: skip
#: service accounts and their tokens (`flagdesk service-accounts`, the window
#: `ui.service_accounts`)
SERVICE_ACCOUNTS = Tool(
    "service_accounts", "Service accounts", "Access",
    "Accounts for machines (Unleash Enterprise): list, create, edit and delete them, and their "
    "tokens (the secret shown once).", "robot",
    _SERVICE_ACCOUNTS,
    (CREATE_SERVICE_ACCOUNT, EDIT_SERVICE_ACCOUNT, DELETE_SERVICE_ACCOUNT,
     CREATE_SERVICE_ACCOUNT_TOKEN, DELETE_SERVICE_ACCOUNT_TOKEN),
)  # fmt: skip

# ---------------------------------------------------------------------------- roles (issue 36)

#: custom roles: an Admin's, where the server has the roles API (Unleash Enterprise, the sandbox)
_ROLES = Needs(admin_role=True, probe=Probe.ROLES)
CREATE_ROLE = Action("roles.create", "Create role", "POST /api/admin/roles", _ROLES)
EDIT_ROLE = Action("roles.edit", "Edit role", "PUT /api/admin/roles/:id", _ROLES)
DELETE_ROLE = Action("roles.delete", "Delete role", "DELETE /api/admin/roles/:id", _ROLES)
#: the server's roles with their permissions (`flagdesk roles`, the window `ui.roles`): listed
#: on every server (open-source Unleash lists its built-in root roles with its users), changed
#: where custom roles are (Enterprise)
ROLES = Tool(
    "roles", "Roles", "Access",
    "The server's root and project roles with their permissions; create, edit and delete "
    "custom roles (Unleash Enterprise).", "roles",
    Needs(), (CREATE_ROLE, EDIT_ROLE, DELETE_ROLE),
)  # fmt: skip

# ---------------------------------------------------------------------------- clean-up report

#: the clean-up report (issue 36): `flagdesk cleanup report` and its window (`ui.cleanup`), read
#: only; each finding acts through the action of the tool it comes from (`api_tokens.delete`,
#: `groups.delete`, ...), so it has no action of its own. It lists API tokens, so it needs an
#: Admin's token (an admin API token or an Admin's personal access token); each of its parts
#: says where it is not available (`app.api.cleanup`)
CLEANUP = Tool(
    "cleanup", "Clean-up report", "Access",
    "Tokens unused or expired, empty groups, inactive users, idle service accounts, custom "
    "roles nobody holds: what can go, and why; delete it here or open its tool.", "cleanup",
    _ADMIN,
)  # fmt: skip

# ---------------------------------------------------------------------------- project access

#: who holds which role in a project (Unleash Pro and Enterprise): granting, changing and
#: revoking need the Admin root role or the project's Owner role, which the server checks
_PROJECT_ACCESS = Needs(probe=Probe.PROJECT_ACCESS)
GRANT_PROJECT_ACCESS = Action(
    "project_access.grant", "Grant project access", "POST /api/admin/projects/:p/access",
    _PROJECT_ACCESS,
)  # fmt: skip
SET_PROJECT_ROLES = Action(
    "project_access.set_roles", "Change project roles",
    "PUT /api/admin/projects/:p/users/:id/roles (or groups/:id/roles)", _PROJECT_ACCESS,
)  # fmt: skip
REVOKE_PROJECT_ACCESS = Action(
    "project_access.revoke", "Revoke project access",
    "DELETE /api/admin/projects/:p/users/:id/roles (or groups/:id/roles)", _PROJECT_ACCESS,
)  # fmt: skip
#: who holds which role in a project (`flagdesk access grant|set|revoke`, the window
#: `ui.project_access`)
PROJECT_ACCESS = Tool(
    "project_access", "Project access", "Access",
    "Who holds which role in a project (users, service accounts, groups): grant, change and "
    "revoke.", "access",
    _PROJECT_ACCESS, (GRANT_PROJECT_ACCESS, SET_PROJECT_ROLES, REVOKE_PROJECT_ACCESS),
)  # fmt: skip
#: who can do what where (`flagdesk access show`, the window `ui.access_overview`): who there
#: is read (`app.api.access.read_directory`: the users' list, so an Admin's token), then one
#: user's projects or one project's people, reading the projects' access each needs; on open
#: source from the root roles alone
ACCESS_OVERVIEW = Tool(
    "access_overview", "Who can do what where", "Access",
    "For one user, every project with the roles held and why; for one project, everyone who "
    "can change it.", "who_can",
    _ADMIN,
)  # fmt: skip

# ---------------------------------------------------------------------------- compare

#: promote (issue 37, slice 6): what a comparison shows, carried over to a live server
#: (`app.actions.promote`, `flagdesk promote`, the Compare window's Promote)
PROMOTE = Action(
    "compare.promote",
    "Promote configuration",
    "POST/PUT/DELETE /api/admin/projects/:p/features/..., /api/admin/segments, "
    "/api/admin/context, /api/admin/tag-types, /api/admin/strategies",
    # an Admin's token: a promote writes flags, segments, context fields, tag types and
    # strategy definitions, each open source's since before 5.12
    Needs(admin_role=True),
)

#: promote in batches (issue 37): a promote's flags sent as one import per target project and
#: environment (`POST /api/admin/features-batch/validate`, then `/import`; open source since
#: Unleash 4.22). Unleash refuses an import sent with an admin API token (400 on every release:
#: "use either a personal access token ... or a service account"), so it needs a user's token
#: with the Admin root role; without one a promote sends its requests one by one
#: (`app.actions.promote`).
IMPORT = Action(
    "compare.import",
    "Promote in batches (import)",
    "POST /api/admin/features-batch/validate, /api/admin/features-batch/import",
    Needs(tokens=frozenset({"personal"}), admin_role=True),
)

# issue 37, slice 5: the Compare window. Reading a live server's snapshot reads its users, API
# tokens and project access: an Admin's token, as `flagdesk snapshot` needs. The tool's needs
# are this connection's; its window is of use without them (two snapshot files, or a saved
# connection, compare with no server: `ui.compare.CompareView.usable_when_unavailable`), and
# says then why this connection cannot be a side.
COMPARE = Tool(
    "compare", "Compare", "Configuration",
    "The differences between two configurations: this server, a saved connection or a "
    "snapshot file, whole or one environment each.", "compare",
    _ADMIN, (PROMOTE, IMPORT),
)  # fmt: skip

# ---------------------------------------------------------------------------- login history

#: login history (issue 38; Unleash Enterprise 4.22+, the sandbox; open source: 404): who logged
#: in when, from where, and why a login failed, the last 14 days (`flagdesk logins`, the window
#: `ui.logins`). Read only; Unleash lets an Admin read it (or a role with `READ_LOGS`)
LOGINS = Tool(
    "logins", "Login history", "People",
    "Who logged in or out when, how and from where, and why a login failed (Unleash "
    "Enterprise: the last 14 days).", "logins",
    Needs(admin_role=True, probe=Probe.LOGINS),
)  # fmt: skip

# ------------------------------------------------------------------ the event log (issue 38)

#: the event log (`flagdesk events`, the window `ui.events`; `app.api.events`): every change
#: made on the server, read by any admin-API token (Unleash: permission NONE on the search);
#: filtered by the server's search from Unleash 6.0, on 5.x read through its search by body and
#: filtered by flagdesk
EVENTS = Tool(
    "events", "Event log", "Configuration",
    "Every change made on the server, by anyone, newest first: filter by type, who, project, "
    "flag, environment and time; export as CSV or JSON.", "events",
    Needs(differences=(
        (Versions("unleash", below=(6, 0)), "no event search: filtered by flagdesk"),)),
)  # fmt: skip

# ---------------------------------------------------------------------- banners (issue 38)

#: banners (Unleash Enterprise 5.7+; open source has no route, 404): read by anyone signed in,
#: changed by an Admin (Unleash: `ADMIN` or `UPDATE_INSTANCE_BANNERS`)
_BANNERS = Needs(admin_role=True, probe=Probe.BANNERS)
CREATE_BANNER = Action("banners.create", "Create banner", "POST /api/admin/banners", _BANNERS)
EDIT_BANNER = Action(
    "banners.edit", "Edit banner", "PUT /api/admin/banners/:id (on, off: POST …/:id/on|off)",
    _BANNERS,
)  # fmt: skip
DELETE_BANNER = Action("banners.delete", "Delete banner", "DELETE /api/admin/banners/:id",
                       _BANNERS)  # fmt: skip
BANNERS = Tool(
    "banners", "Banners", "Configuration",
    "The messages every user of the server's UI sees (Unleash Enterprise): list, create, edit, "
    "switch on or off and delete them.", "banners",
    Needs(probe=Probe.BANNERS), (CREATE_BANNER, EDIT_BANNER, DELETE_BANNER),
)  # fmt: skip


# ---------------------------------------------------------------------------- tools


class Tools(NamedTuple):
    """The tools by name, in sidebar order (Ctrl+1 to Ctrl+9 follow it): `TOOL.groups`."""

    groups: Tool
    users: Tool
    inactive_users: Tool
    project_dashboard: Tool
    archived_features: Tool
    context_usage: Tool
    metrics_upload: Tool
    # issue 36: the windows of the API tokens and the personal access tokens
    api_tokens: Tool
    personal_tokens: Tool
    # issue 36: the service accounts' window
    service_accounts: Tool
    # issue 36: the roles' window
    roles: Tool
    # issue 36: the windows of project access and of who can do what where
    project_access: Tool
    access_overview: Tool
    # issue 36: the clean-up report's window
    cleanup: Tool
    # issue 37, slice 5: the Compare window
    compare: Tool
    # issue 38: the login history's window
    logins: Tool
    # issue 38: the event log's window
    events: Tool
    # issue 38: the banners' window
    banners: Tool


TOOL = Tools(
    groups=Tool(
        "groups", "Groups", "People",
        "Create, open, edit and delete user groups: members, SSO group mappings and a root "
        "role.", "groups",
        Needs(probe=Probe.GROUPS),
        (CREATE_GROUP, EDIT_GROUP, DELETE_GROUP),
    ),
    users=Tool(
        "users", "Users", "People",
        "Find a user and change their name, email or root role.", "users",
        _ADMIN,
        (EDIT_USER, CREATE_USER, DELETE_USER, RESET_PASSWORD),
    ),
    inactive_users=Tool(
        "inactive_users", "Inactive users", "People",
        "Users with no login in 180 days, to review and export.", "inactive",
        # the API came with Unleash 5.10, and stayed in the open-source edition when the page
        # went Enterprise-only in 5.11 (measured: 5.12.8 answers it)
        Needs(admin_role=True, versions=(
            Versions("unleash", minimum=(5, 10), what="the inactive users API"),)),
        (DELETE_INACTIVE_USERS,),
    ),
    project_dashboard=Tool(
        "project_dashboard", "Project dashboard", "Projects",
        "A project's owners, your roles, the latest events and its onboarding status.",
        "dashboard",
        # the personal dashboard API came with Unleash 6.3 (measured: 5.12.8 has no route,
        # 6.10.1 answers a personal access token)
        Needs(versions=(Versions("unleash", minimum=(6, 3), what="the personal dashboard"),),
              probe=Probe.DASHBOARD),
    ),
    archived_features=Tool(
        "archived_features", "Archived features", "Projects",
        "Browse a project's archived feature flags.", "archive",
        # the archive endpoint went in Unleash 7.0; the search API filters archived flags from
        # 6.4 (`archived=IS:true`), from 8.0.1 preferably `lifecycle=IS:archived`
        Needs(probe=Probe.ARCHIVE, differences=(
            (Versions("unleash", minimum=(7, 0)), "through the search API"),)),
        (REVIVE_FEATURE, DELETE_FEATURE, REVIVE_FEATURES, DELETE_FEATURES, ARCHIVE_FEATURES),
    ),
    context_usage=Tool(
        "context_usage", "Context usage", "Configuration",
        "Which strategies use a context field, and where.", "context",
        # `GET /api/admin/context/:name/strategies` came with Unleash 5.2
        Needs(versions=(Versions("unleash", minimum=(5, 2), what="the context field usage API"),)),
        (CREATE_CONTEXT_FIELD, EDIT_CONTEXT_FIELD, DELETE_CONTEXT_FIELD),
    ),
    metrics_upload=Tool(
        "metrics_upload", "Metrics upload", "Metrics",
        "Validate JSON batches of client usage metrics and upload them.", "metrics",
        # `POST /api/client/metrics/bulk` came with Unleash 5.9
        # (measured: before 8.0 it takes an admin API token as well; flagdesk sends the client
        # token on every version)
        Needs(tokens=ANY_TOKEN, client_token=True, probe=Probe.METRICS, versions=(
            Versions("unleash", minimum=(5, 9), what="the bulk metrics endpoint"),)),
        (UPLOAD_METRICS,),
    ),
    # issue 36: the windows of the API tokens and the personal access tokens
    api_tokens=API_TOKENS,
    personal_tokens=PERSONAL_TOKENS,
    # issue 36: the service accounts' window
    service_accounts=SERVICE_ACCOUNTS,
    # issue 36: the roles' window
    roles=ROLES,
    # issue 36: the windows of project access and of who can do what where
    project_access=PROJECT_ACCESS,
    access_overview=ACCESS_OVERVIEW,
    # issue 36: the clean-up report's window
    cleanup=CLEANUP,
    # issue 37, slice 5: the Compare window
    compare=COMPARE,
    # issue 38: the login history's window
    logins=LOGINS,
    # issue 38: the event log's window
    events=EVENTS,
    # issue 38: the banners' window
    banners=BANNERS,
)  # fmt: skip

# ---------------------------------------------------------------------------- headless tools

#: the tools a command has but no window yet: in the capability report, `flagdesk check`, the
#: journal and the version table (`EVERY_TOOL`), their actions the registry's like any other
#: (capabilities, journal, check, undo), never in the sidebar (`TOOLS`, `TOOLS_BY_KEY`: the
#: tools with a window). Every tool of issue 36 was here until its window came.
HEADLESS_TOOLS: tuple[Tool, ...] = ()

# ------------------------------------------------------ instance settings (issue 38, headless)

#: maintenance mode (`POST /api/admin/maintenance`, every release alike): an Admin's (Unleash:
#: `ADMIN`); its undo is the other switch
SWITCH_MAINTENANCE = Action(
    "instance.maintenance", "Switch maintenance mode", "POST /api/admin/maintenance", _ADMIN
)
#: the frontend API's CORS origins: an Admin's; the route is `…/ui-config/cors` from 6.0, 5.x
#: sets them through `POST /api/admin/ui-config {frontendSettings}` (measured: 404 each way
#: round); its undo sets the list before
SET_CORS = Action(
    "instance.cors", "Set CORS origins",
    "POST /api/admin/ui-config/cors (5.x: POST /api/admin/ui-config)",
    Needs(admin_role=True, differences=(
        (Versions("unleash", below=(6, 0)), "through POST /api/admin/ui-config"),)),
)  # fmt: skip
#: the instance's statistics, maintenance mode and CORS origins (`flagdesk stats`,
#: `flagdesk maintenance`, `flagdesk cors`): the statistics are any admin-API caller's
#: (Unleash: permission NONE), the changes an Admin's
INSTANCE = Tool(
    "instance", "Instance", "Configuration",
    "The instance's statistics (users, flags, projects, tokens and the rest), maintenance mode "
    "and the frontend API's CORS origins.", "instance",
    Needs(), (SWITCH_MAINTENANCE, SET_CORS),
)  # fmt: skip

HEADLESS_TOOLS += (INSTANCE,)


#: the probe answers that say a server is Unleash Enterprise (the version table's "Enterprise")
ENTERPRISE_PROBES = frozenset(
    {Probe.GROUPS, Probe.ROLES, Probe.SERVICE_ACCOUNTS, Probe.BANNERS, Probe.LOGINS}
)


TOOLS: tuple[Tool, ...] = tuple(TOOL)
#: the tools with a window, then those without one yet
EVERY_TOOL: tuple[Tool, ...] = TOOLS + HEADLESS_TOOLS
#: the sidebar's groups, in order
GROUPS: tuple[str, ...] = ("People", "Projects", "Configuration", "Metrics", "Access")
TOOLS_BY_KEY: dict[str, Tool] = {tool.key: tool for tool in TOOLS}
ACTIONS: tuple[Action, ...] = tuple(action for tool in EVERY_TOOL for action in tool.actions)
ACTIONS_BY_KEY: dict[str, Action] = {action.key: action for action in ACTIONS}
#: the tool each action belongs to
TOOL_OF: dict[str, Tool] = {action.key: tool for tool in EVERY_TOOL for action in tool.actions}
#: tool key -> title, the words `flagdesk check` and the capability report show
OPERATIONS: dict[str, str] = {tool.key: tool.title for tool in EVERY_TOOL}

# ---------------------------------------------------------------------------- version table

#: the Unleash releases flagdesk is proven against (`.ci/run`, tests/compat): the latest of each
#: major version still in use
PROVEN_RELEASES: tuple[str, ...] = ("5.12.8", "6.10.1", "7.6.5", "8.2.0")


def version_cell(needs: tuple[Needs, ...], release: str) -> str:
    """What the version table says of a tool or action (`needs`: its tool's, then its own) on
    open-source Unleash `release`: "yes", "yes; <difference>", "no: needs <versions>", or
    "Enterprise" (groups and custom roles, which open-source Unleash does not have)."""
    for need in needs:
        for versions in need.versions:
            if not versions.admits("unleash", release):
                return f"no: needs {versions.describe()}"
    if any(need.probe in ENTERPRISE_PROBES for need in needs):
        return "Enterprise"
    if any(need.probe is Probe.PROJECT_ACCESS for need in needs):  # project access
        return "Pro/Enterprise"
    notes = [text for versions, text in needs[-1].differences  # its own, not its tool's
             if versions.admits("unleash", release)]  # fmt: skip
    return "; ".join(["yes", *notes]) if notes else "yes"


def version_rows() -> list[tuple[str, dict[str, str]]]:
    """(tool or action key, {release: cell}) for every tool and, under it, its actions."""
    rows: list[tuple[str, dict[str, str]]] = []
    for tool in EVERY_TOOL:
        rows.append((tool.key, {r: version_cell((tool.needs,), r) for r in PROVEN_RELEASES}))
        for action in tool.actions:
            needs = (tool.needs, action.needs)
            rows.append((action.key, {r: version_cell(needs, r) for r in PROVEN_RELEASES}))
    return rows


def version_table() -> str:
    """The README's table: every tool and action by Unleash version, from the needs above."""
    head = "| tool / action | " + " | ".join(f"Unleash {r}" for r in PROVEN_RELEASES) + " |"
    lines = [head, "|---" * (len(PROVEN_RELEASES) + 1) + "|"]
    for key, cells in version_rows():
        name = f"`{key}`" if "." not in key else f"&nbsp;&nbsp;`{key}`"
        lines.append(f"| {name} | " + " | ".join(cells[r] for r in PROVEN_RELEASES) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # `python -m app.registry --markdown`: the README's version table
    import sys

    if sys.argv[1:] != ["--markdown"]:
        sys.exit("usage: python -m app.registry --markdown")
    sys.stdout.write(version_table())
