"""`Changes`: what an operation changed on the server, so every window showing it can refresh.

Anki's `OpChanges` is the model: whoever changes something (a window saving a group, a user
edited; the actions of the next stage) says what it changed, as a resource and the ids touched,
and the session passes it to every open view-model. Each decides from it whether it shows that
resource and reloads. Windows never call each other. No Qt: a command-line action can return one
too.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

__all__ = ["Changes", "Resource"]


class Resource(enum.Enum):
    """The kinds of things on a server that a window shows and an operation can change."""

    USERS = "users"
    GROUPS = "groups"
    PROJECTS = "projects"
    FEATURES = "features"
    ARCHIVED_FEATURES = "archived features"
    CONTEXT_FIELDS = "context fields"
    #: client metrics (an upload); no window lists them, but each upload is journaled: the
    #: History reads its journal again
    METRICS = "metrics"
    #: API tokens (`flagdesk tokens`, the API tokens window)
    API_TOKENS = "API tokens"
    #: the connected user's personal access tokens (`flagdesk pats` and their window)
    PERSONAL_TOKENS = "personal access tokens"
    #: roles and their permissions (`flagdesk roles`, issue 36; no window lists them yet)
    ROLES = "roles"
    #: service accounts and their tokens (`flagdesk service-accounts`; no window lists them yet)
    SERVICE_ACCOUNTS = "service accounts"
    #: the instance's settings: maintenance mode, the CORS origins (issue 38; `flagdesk
    #: maintenance`, `flagdesk cors`), and what the statistics count
    SETTINGS = "instance settings"
    #: banners (Unleash Enterprise; `flagdesk banners`, issue 38)
    BANNERS = "banners"


@dataclass(frozen=True)
class Changes:
    """`resource` changed on the current connection: the items with `ids` (none: which ones is
    not known, so all of them may have)."""

    resource: Resource
    ids: frozenset[int | str] = field(default_factory=frozenset)

    @classmethod
    def of(cls, resource: Resource, *ids: int | str) -> Changes:
        return cls(resource, frozenset(ids))

    def touches(self, resource: Resource, item_id: int | str | None = None) -> bool:
        """Whether these changes may concern `resource` (and the item `item_id` of it)."""
        if resource is not self.resource:
            return False
        return item_id is None or not self.ids or item_id in self.ids
