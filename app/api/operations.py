"""The seven operations of the spec and the kinds of token, by key: the words every layer uses
(capabilities, the sidebar, `flagdesk check`). No imports, so the window can name its tools
before the client is loaded."""

from __future__ import annotations

#: The operations flagdesk offers, by key, with the title the GUI and `flagdesk check` show.
OPERATIONS: dict[str, str] = {
    "groups": "Groups",
    "users": "Users",
    "inactive_users": "Inactive users",
    "project_dashboard": "Project dashboard",
    "archived_features": "Archived features",
    "context_usage": "Context usage",
    "metrics_upload": "Metrics upload",
}

TOKEN_LABELS: dict[str, str] = {
    "admin": "admin API token",
    "personal": "personal access token",
    "client": "client token",
}
