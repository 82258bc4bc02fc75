"""The tools of the sidebar, in order, with their group, purpose and icon. No Qt and nothing
heavy: the main window names its tools before the rest of the program is loaded."""

from __future__ import annotations

from typing import NamedTuple

from app.api.operations import OPERATIONS


def camel(key: str) -> str:
    """A tool key as the stem of object names: "inactive_users" -> "inactiveUsers"."""
    head, *rest = key.split("_")
    return head + "".join(part.title() for part in rest)


class Tool(NamedTuple):
    #: the capability key (`app.api.capabilities.OPERATIONS`), also the page's objectName stem
    key: str
    group: str
    description: str
    #: the icon's file stem in resources/icons/
    icon: str

    @property
    def title(self) -> str:
        return OPERATIONS[self.key]


#: The tools in sidebar order; Ctrl+1 to Ctrl+7 follow this order.
TOOLS: tuple[Tool, ...] = (
    Tool("groups", "People", "Create user groups: members, SSO group mappings and a root role.",
         "groups"),
    Tool("users", "People", "Find a user and change their name, email or root role.", "users"),
    Tool("inactive_users", "People", "Users with no login in 180 days, to review and export.",
         "inactive"),
    Tool("project_dashboard", "Projects",
         "A project's owners, your roles, the latest events and its onboarding status.",
         "dashboard"),
    Tool("archived_features", "Projects", "Browse a project's archived feature flags.",
         "archive"),
    Tool("context_usage", "Configuration", "Which strategies use a context field, and where.",
         "context"),
    Tool("metrics_upload", "Metrics",
         "Validate JSON batches of client usage metrics and upload them.", "metrics"),
)  # fmt: skip
GROUPS: tuple[str, ...] = ("People", "Projects", "Configuration", "Metrics")
TOOLS_BY_KEY = {tool.key: tool for tool in TOOLS}
