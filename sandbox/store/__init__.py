"""What the sandbox knows and does, on SQLite, with no HTTP in sight: one module per area of
the API (tokens, users, groups, projects, features, archive, context, metrics, personal
access tokens, roles, service accounts, the instance's settings, the event log, login
history) over one shared
connection (`core.Core`), and `Store`, all of them together. Each area subclasses what it builds
on (groups and tokens on users, features on projects).

Every public method is one thing the API can ask; each returns a wire model from
`app.api.models` (built with only the fields the server means to send, so that
`model_dump(exclude_unset=True)` is the response body) or raises `Refusal`.
"""

from __future__ import annotations

import sqlite3
import uuid
from pathlib import Path

from sandbox.store.api_tokens import ApiTokens
from sandbox.store.archive import ARCHIVED_FEATURES_QUERY, Archive
from sandbox.store.batch_import import BatchImport
from sandbox.store.context import Context
from sandbox.store.core import (
    ADMIN_ROLE,
    ADMIN_USER_ID,
    BUILTIN_ROLES,
    CHUNK_ITEMS,
    DAY_MS,
    EDITOR_ROLE,
    HOUR_MS,
    INSTANCE_ID,
    MEMBER_ROLE,
    OWNER_ROLE,
    VIEWER_ROLE,
    Principal,
    Refusal,
    avatar_url,
    to_wire_time,
)
from sandbox.store.custom_strategies import CustomStrategies
from sandbox.store.dependencies import Dependencies
from sandbox.store.events import Events
from sandbox.store.export import Export
from sandbox.store.features import Features
from sandbox.store.flag_config import FlagConfig
from sandbox.store.groups import Groups
from sandbox.store.instance import Instance
from sandbox.store.logins import Logins
from sandbox.store.metrics import Metrics
from sandbox.store.personal_tokens import PersonalTokens
from sandbox.store.project_access import ProjectAccessStore
from sandbox.store.roles import Roles, seed_built_in_permissions
from sandbox.store.segments import Segments
from sandbox.store.service_accounts import ServiceAccounts
from sandbox.store.tags import TagsStore
from sandbox.store.tokens import Tokens
from sandbox.store.users import INACTIVE_USERS_QUERY

__all__ = [
    "ADMIN_ROLE", "ADMIN_USER_ID", "ARCHIVED_FEATURES_QUERY", "CHUNK_ITEMS", "DAY_MS",
    "EDITOR_ROLE", "HOUR_MS", "INACTIVE_USERS_QUERY", "MEMBER_ROLE", "OWNER_ROLE", "VIEWER_ROLE",
    "Principal", "Refusal", "Store", "avatar_url", "to_wire_time",
]  # fmt: skip


# project access first: it builds on the groups
class Store(
    ProjectAccessStore,
    ApiTokens,
    Tokens,
    Groups,
    BatchImport,  # the batch import (issue 37): builds on the flags, context fields, tags
    Export,  # the batch export (issue 37): builds on the flags' configuration
    FlagConfig,  # flag configuration (issue 37 slice 1): builds on the flags
    Features,
    Archive,
    Context,
    Metrics,
    PersonalTokens,
    Roles,
    ServiceAccounts,
    # flag extras (issue 37, slice 2)
    Segments,
    TagsStore,
    Dependencies,
    CustomStrategies,
    Instance,  # instance settings (issue 38): statistics, maintenance, CORS, banners
    Events,  # the event log's reads (issue 38)
    Logins,  # login history (issue 38; Enterprise's)
):
    """Every area of the sandbox over one SQLite connection."""

    def reader(self) -> Store | None:
        """A Store on a read-only connection of its own to the same database file, for reading
        a large answer on a worker thread while this Store's connection stays with the event
        loop (WAL lets readers run beside the writer). The caller closes its `conn`. None when
        the database lives in memory, where no second connection can reach it."""
        path = next((row[2] for row in self.conn.execute("PRAGMA database_list")
                     if row[1] == "main"), "")  # fmt: skip
        if not path:
            return None
        conn = sqlite3.connect(
            Path(path).as_uri() + "?mode=ro", uri=True, isolation_level=None,
            check_same_thread=False, timeout=30,
        )  # fmt: skip
        # room for the pages of one 100,000-item answer (allocated only as they are read); the
        # file mapped, so that this new connection reads its pages without copying them (the
        # archive of 100,000 flags: 10-20% less time)
        conn.execute("PRAGMA cache_size = -65536")
        conn.execute("PRAGMA mmap_size = 1073741824")
        return Store(conn, inactive_days=self.inactive_days, clock=self.clock)

    def initialise(self) -> None:
        """What a fresh Unleash has, and so every sandbox, `--empty` ones included: the
        built-in roles, the `development` and `production` environments, the `default`
        project, the built-in admin user and context fields. Only what is missing is added, so
        it also completes a database made before one of these was (a `default` project is
        never deleted: Unleash refuses to)."""
        now = self.clock()
        with self.tx() as c:
            c.executemany(
                "INSERT OR IGNORE INTO roles(id, name, type, description) VALUES(?, ?, ?, ?)",
                BUILTIN_ROLES,
            )
            c.executemany(
                "INSERT OR IGNORE INTO environments(name, type, sort_order) VALUES(?, ?, ?)",
                [("development", "development", 1), ("production", "production", 2)],
            )
            c.execute(
                "INSERT OR IGNORE INTO projects(id, name, description, created_at)"
                " VALUES('default', 'Default', 'Default project', ?)",
                (now,),
            )
            c.execute(
                "INSERT OR IGNORE INTO users(id, name, username, email, root_role, created_at,"
                " seen_at) VALUES(?, 'Admin', 'admin', NULL, ?, ?, ?)",
                (ADMIN_USER_ID, ADMIN_ROLE, now, now),
            )
            c.execute(
                "INSERT OR IGNORE INTO context_fields(name, description, stickiness, sort_order,"
                " created_at) VALUES (?, ?, 0, ?, ?), (?, ?, 0, ?, ?), (?, ?, 0, ?, ?)",
                (
                    "appName", "Allows you to constrain on application name", 2, now,
                    "environment", "Allows you to constrain on environment", 0, now,
                    "userId", "Allows you to constrain on userId", 1, now,
                ),
            )  # fmt: skip
            seed_built_in_permissions(c)  # roles (issue 36): the built-in roles' permissions
            if self.setting("initialised_at") is None:
                self.set_setting("initialised_at", str(now))
            if self.instance_id() is None:  # as Unleash, once, when its database is made
                self.set_setting(INSTANCE_ID, str(uuid.uuid4()))
        # flag extras (issue 37, slice 2): Unleash's built-in strategy definitions
        self.seed_built_in_strategies()
