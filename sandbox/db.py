"""The sandbox's SQLite database: connection settings and the versioned schema.

The schema version lives in `PRAGMA user_version`; `MIGRATIONS[n]` takes a database from
version n to n + 1, inside one transaction, so a database is always at a whole version.
Times are stored as integer milliseconds since the epoch (UTC).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import stat
import time
from pathlib import Path


def _json_time(column: str) -> str:
    """(migrations 5 -> 6, 6 -> 7) `json_time` in SQL: integer milliseconds as the API's quoted
    RFC 3339 text, or `null`."""
    return (
        f"CASE WHEN {column} IS NULL THEN 'null' ELSE"
        f" '\"' || strftime('%Y-%m-%dT%H:%M:%S', {column} / 1000, 'unixepoch')"
        f" || printf('.%03dZ\"', {column} % 1000) END"
    )


def _json_bool(column: str) -> str:
    return f"CASE WHEN {column} THEN 'true' ELSE 'false' END"


#: (migration 5 -> 6) the latest metrics write of `{pair}`'s flag and environment
_LAST_SEEN = (
    "(SELECT max(cm.updated_at) FROM client_metrics cm"
    " WHERE cm.feature = {pair}.feature AND cm.environment = {pair}.environment)"
)

#: (migration 5 -> 6) the row of `features` being written as an `ArchivedFeature`'s JSON up to
#: its `stale` value, which depends on the time of the answer
_ARCHIVED_HEAD = (
    """'{"name":' || json_quote(name) || ',"type":' || json_quote(type)"""
    """ || ',"description":' || json_quote(description) || ',"project":' || json_quote(project)"""
    """ || ',"stale":'"""
)

#: (migration 5 -> 6) the `features` row's JSON after `stale`: its environments (those in
#: `environments`, in their sort order), each seen last at its pair's latest metrics write, the
#: flag at the latest of these
_FLAG_ENVIRONMENTS = (
    "FROM feature_environments fe JOIN environments e ON e.name = fe.environment"
    " WHERE fe.feature = features.name"
)
_ARCHIVED_TAIL = (
    """',"impressionData":' || """
    + _json_bool("impression_data")
    + """ || ',"createdAt":' || """
    + _json_time("created_at")
    + """ || ',"archivedAt":' || """
    + _json_time("archived_at")
    + """ || ',"lastSeenAt":' || (SELECT """
    + _json_time("max(fe.last_seen_at)")
    + f" {_FLAG_ENVIRONMENTS})"
    + """ || ',"environments":[' || coalesce((SELECT group_concat(item, ',') FROM"""
    + """ (SELECT '{"name":' || json_quote(fe.environment) || ',"lastSeenAt":' || """
    + _json_time("fe.last_seen_at")
    + """ || ',"enabled":' || """
    + _json_bool("fe.enabled")
    + f" || '}}' AS item {_FLAG_ENVIRONMENTS} ORDER BY e.sort_order, e.name)), '')"
    + " || ']}'"
)


def _tails_in(environments: str) -> str:
    """(migration 5 -> 6) The statement that writes again the JSON after `stale` of every
    archived flag in the environments `environments` (a condition on their name) selects."""
    return (
        f"UPDATE features SET archived_tail = {_ARCHIVED_TAIL} WHERE name IN"
        f" (SELECT feature FROM feature_environments WHERE {environments})"
        " AND archived_at IS NOT NULL;"
    )


#: (migration 6 -> 7) the row of `users` being written as an `InactiveUser`'s JSON
_INACTIVE_JSON = (
    """'{"id":' || id || ',"name":' || json_quote(name) || ',"email":' || json_quote(email)"""
    """ || ',"username":' || json_quote(username) || ',"seenAt":' || """
    + _json_time("seen_at")
    + """ || ',"createdAt":' || """
    + _json_time("created_at")
    + """ || ',"patSeenAt":' || """
    + _json_time("pat_seen_at")
    + " || '}'"
)

#: (migration 10 -> 11) when a personal access token made without an expiry expires:
#: 2099-01-01T00:00:00Z, as the 8.2 peer's own
PAT_DEFAULT_EXPIRY = 4_070_908_800_000

#: (migration 12 -> 13) a strategy's segments by id: the statement the segments slice runs too
STRATEGY_SEGMENTS = "CREATE TABLE IF NOT EXISTS strategy_segments (strategy_id TEXT NOT NULL, segment_id INTEGER NOT NULL, PRIMARY KEY (strategy_id, segment_id));"  # noqa: E501
#: (migration 13 -> 14, and the strategies' configuration's) which strategy uses which
#: segment, in the very words both migrations make it with
STRATEGY_SEGMENTS_TABLE = (
    "CREATE TABLE IF NOT EXISTS strategy_segments (strategy_id TEXT NOT NULL,"
    " segment_id INTEGER NOT NULL, PRIMARY KEY (strategy_id, segment_id));"
)

MIGRATIONS: list[str] = [
    # 0 -> 1: the first schema
    """
    CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);

    CREATE TABLE roles (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        type TEXT NOT NULL,              -- root, root-custom (was custom-root), project, custom
        description TEXT
    );

    CREATE TABLE users (
        id INTEGER PRIMARY KEY,
        name TEXT,
        username TEXT UNIQUE,
        email TEXT UNIQUE,
        image_url TEXT,
        root_role INTEGER REFERENCES roles(id),
        seen_at INTEGER,                 -- last login
        pat_seen_at INTEGER,             -- last use of a personal access token
        created_at INTEGER NOT NULL,
        login_attempts INTEGER NOT NULL DEFAULT 0,
        email_sent INTEGER NOT NULL DEFAULT 0,
        account_type TEXT NOT NULL DEFAULT 'User',
        scim_id TEXT
    );

    CREATE TABLE tokens (
        secret TEXT PRIMARY KEY,
        kind TEXT NOT NULL,              -- admin, client, personal
        user_id INTEGER REFERENCES users(id),
        environment TEXT,
        created_at INTEGER NOT NULL
    );

    CREATE TABLE groups_ (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        description TEXT,
        mappings_sso TEXT NOT NULL DEFAULT '[]',   -- JSON array of strings
        root_role INTEGER REFERENCES roles(id),
        created_by TEXT,
        created_at INTEGER NOT NULL,
        scim_id TEXT
    );

    CREATE TABLE group_users (
        group_id INTEGER NOT NULL REFERENCES groups_(id),
        user_id INTEGER NOT NULL REFERENCES users(id),
        joined_at INTEGER NOT NULL,
        created_by TEXT,
        PRIMARY KEY (group_id, user_id)
    );

    CREATE TABLE projects (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        description TEXT,
        created_at INTEGER NOT NULL
    );

    -- project roles held by users or by groups (exactly one of user_id, group_id is set)
    CREATE TABLE project_roles (
        project TEXT NOT NULL REFERENCES projects(id),
        role_id INTEGER NOT NULL REFERENCES roles(id),
        user_id INTEGER REFERENCES users(id),
        group_id INTEGER REFERENCES groups_(id),
        created_at INTEGER NOT NULL
    );
    CREATE INDEX project_roles_project ON project_roles(project);

    CREATE TABLE environments (name TEXT PRIMARY KEY, type TEXT NOT NULL, sort_order INTEGER);

    CREATE TABLE features (
        name TEXT PRIMARY KEY,
        project TEXT NOT NULL REFERENCES projects(id),
        type TEXT NOT NULL,
        description TEXT,
        impression_data INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL,
        archived_at INTEGER
    );
    CREATE INDEX features_project ON features(project, archived_at);

    CREATE TABLE feature_environments (
        feature TEXT NOT NULL REFERENCES features(name),
        environment TEXT NOT NULL REFERENCES environments(name),
        enabled INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (feature, environment)
    );

    CREATE TABLE context_fields (
        name TEXT PRIMARY KEY,
        description TEXT,
        stickiness INTEGER NOT NULL DEFAULT 0,
        sort_order INTEGER NOT NULL DEFAULT 10,
        legal_values TEXT NOT NULL DEFAULT '[]',   -- JSON array of {value, description}
        created_at INTEGER NOT NULL
    );

    CREATE TABLE strategies (
        id TEXT PRIMARY KEY,
        feature TEXT NOT NULL REFERENCES features(name),
        project TEXT NOT NULL,
        environment TEXT NOT NULL,
        name TEXT NOT NULL,
        title TEXT,
        disabled INTEGER NOT NULL DEFAULT 0,
        parameters TEXT NOT NULL DEFAULT '{}',
        constraints TEXT NOT NULL DEFAULT '[]',
        sort_order INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL
    );
    -- which context fields a strategy's constraints use, for endpoint 5
    CREATE TABLE strategy_context_fields (
        strategy_id TEXT NOT NULL REFERENCES strategies(id),
        context_name TEXT NOT NULL,
        PRIMARY KEY (context_name, strategy_id)
    );

    CREATE TABLE events (
        id INTEGER PRIMARY KEY,
        type TEXT NOT NULL,
        project TEXT,
        feature TEXT,
        environment TEXT,
        created_by TEXT NOT NULL,
        created_by_user_id INTEGER,
        created_at INTEGER NOT NULL,
        summary TEXT
    );
    CREATE INDEX events_project ON events(project, id);

    CREATE TABLE client_applications (
        app_name TEXT PRIMARY KEY,
        created_at INTEGER NOT NULL,
        last_seen INTEGER NOT NULL
    );
    CREATE TABLE client_instances (
        app_name TEXT NOT NULL,
        instance_id TEXT NOT NULL,
        environment TEXT NOT NULL,
        sdk_version TEXT,
        strategies TEXT NOT NULL DEFAULT '[]',
        interval_s REAL,
        started INTEGER,
        connect_via TEXT NOT NULL DEFAULT '[]',
        last_seen INTEGER NOT NULL,
        PRIMARY KEY (app_name, environment, instance_id)
    );

    -- usage counts summed per feature, application, environment and one-hour window;
    -- feature names the server does not know are kept too (the "unknown flags")
    CREATE TABLE client_metrics (
        feature TEXT NOT NULL,
        app_name TEXT NOT NULL,
        environment TEXT NOT NULL,
        window_start INTEGER NOT NULL,
        yes INTEGER NOT NULL,
        no INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (feature, app_name, environment, window_start)
    ) WITHOUT ROWID;
    CREATE TABLE client_metric_variants (
        feature TEXT NOT NULL,
        app_name TEXT NOT NULL,
        environment TEXT NOT NULL,
        window_start INTEGER NOT NULL,
        variant TEXT NOT NULL,
        count INTEGER NOT NULL,
        PRIMARY KEY (feature, app_name, environment, window_start, variant)
    ) WITHOUT ROWID;
    """,
    # 1 -> 2: indexes in the order of the two answers that run to 100,000 items, so that they
    # stream their first items at once instead of sorting every row first
    """
    CREATE INDEX features_archived ON features(project, archived_at DESC, name)
        WHERE archived_at IS NOT NULL;
    CREATE INDEX users_last_login ON users(coalesce(seen_at, created_at))
        WHERE account_type = 'User';
    """,
    # 2 -> 3: a project's first flag (its onboarding status, in every project list) without
    # sorting all its flags: 0.2 s per list with 100,000 flags, which held every other request
    """
    CREATE INDEX features_first ON features(project, created_at, name);
    """,
    # 3 -> 4: the indexes of the two large answers hold every column those answers read, so a
    # row is read from the index alone, never looked up in its table: inactive users from
    # 0.26 s to 0.15 s of SQL on 100,000, archived flags (with their environments) from 0.69 s
    # to 0.39 s
    """
    DROP INDEX features_archived;
    CREATE INDEX features_archived ON features(
        project, archived_at DESC, name, type, description, created_at, impression_data
    ) WHERE archived_at IS NOT NULL;
    CREATE INDEX feature_environments_enabled
        ON feature_environments(feature, environment, enabled);
    DROP INDEX users_last_login;
    CREATE INDEX users_last_login ON users(
        coalesce(seen_at, created_at), id, name, email, username, seen_at, created_at, pat_seen_at
    ) WHERE account_type = 'User';
    """,
    # 4 -> 5: a group's id is never given again once the group is deleted (Unleash's ids come
    # from a sequence): a journal's entries name groups by id, and a deleted group recreated by
    # Undo must not take the id of the one it replaces. `group_sequence` holds the highest id
    # ever given; the store inserts above it, the trigger keeps it up for any other insert.
    """
    CREATE TABLE group_sequence (last INTEGER NOT NULL);
    INSERT INTO group_sequence SELECT coalesce(max(id), 0) FROM groups_;
    CREATE TRIGGER groups_sequence AFTER INSERT ON groups_ BEGIN
        UPDATE group_sequence SET last = max(last, NEW.id);
    END;
    """,
    # 5 -> 6: the archive reads each flag's JSON whole from the index it is listed by, but for
    # `stale`, which depends on the time of the answer, so listing 100,000 archived flags looks
    # nothing up per flag (a correlated subquery per flag over its environments, with a max()
    # over its metrics per environment, was 0.4-0.6 s of the answer's 0.7 s of SQL, and a dict
    # per flag for `to_json` 0.3 s more). `features.archived_head` and `archived_tail` are an
    # `ArchivedFeature` as `pydantic_core.to_json` writes it, before and after `stale`;
    # `feature_environments.last_seen_at` is the latest `client_metrics.updated_at` of the pair,
    # raised by each metrics write (a write that lowers or removes one recomputes it). Triggers
    # keep them whoever writes: a change to the flag, to its environments, to their sightings,
    # or to the environments themselves (their sort order) writes the flag's JSON again. Only
    # an archived flag's: a flag gets its JSON as it is archived, so metrics of live flags (the
    # ingestion benchmark's hundreds of thousands a second) write no JSON.
    f"""
    ALTER TABLE feature_environments ADD COLUMN last_seen_at INTEGER;
    UPDATE feature_environments SET last_seen_at = {_LAST_SEEN.format(pair="feature_environments")};
    ALTER TABLE features ADD COLUMN archived_head TEXT;
    ALTER TABLE features ADD COLUMN archived_tail TEXT;
    UPDATE features SET archived_head = {_ARCHIVED_HEAD}, archived_tail = {_ARCHIVED_TAIL}
    WHERE archived_at IS NOT NULL;
    DROP INDEX features_archived;
    CREATE INDEX features_archived ON features(
        project, archived_at DESC, name, type, created_at, archived_head, archived_tail
    ) WHERE archived_at IS NOT NULL;
    DROP INDEX feature_environments_enabled;

    CREATE TRIGGER feature_added AFTER INSERT ON features WHEN NEW.archived_at IS NOT NULL BEGIN
        UPDATE features SET archived_head = {_ARCHIVED_HEAD}, archived_tail = {_ARCHIVED_TAIL}
        WHERE name = NEW.name;
    END;
    CREATE TRIGGER feature_changed AFTER UPDATE
    OF name, project, type, description, impression_data, created_at, archived_at ON features
    WHEN NEW.archived_at IS NOT NULL BEGIN
        UPDATE features SET archived_head = {_ARCHIVED_HEAD}, archived_tail = {_ARCHIVED_TAIL}
        WHERE name = NEW.name;
    END;

    CREATE TRIGGER feature_environment_added AFTER INSERT ON feature_environments BEGIN
        UPDATE feature_environments SET last_seen_at = {_LAST_SEEN.format(pair="NEW")}
        WHERE feature = NEW.feature AND environment = NEW.environment
          AND EXISTS (SELECT 1 FROM client_metrics cm
                      WHERE cm.feature = NEW.feature AND cm.environment = NEW.environment);
        UPDATE features SET archived_tail = {_ARCHIVED_TAIL}
        WHERE name = NEW.feature AND archived_at IS NOT NULL;
    END;
    CREATE TRIGGER feature_environment_changed AFTER UPDATE ON feature_environments BEGIN
        UPDATE features SET archived_tail = {_ARCHIVED_TAIL}
        WHERE name IN (OLD.feature, NEW.feature) AND archived_at IS NOT NULL;
    END;
    CREATE TRIGGER feature_environment_removed AFTER DELETE ON feature_environments BEGIN
        UPDATE features SET archived_tail = {_ARCHIVED_TAIL}
        WHERE name = OLD.feature AND archived_at IS NOT NULL;
    END;

    CREATE TRIGGER environment_added AFTER INSERT ON environments BEGIN
        {_tails_in("environment = NEW.name")}
    END;
    CREATE TRIGGER environment_changed AFTER UPDATE ON environments BEGIN
        {_tails_in("environment IN (OLD.name, NEW.name)")}
    END;
    CREATE TRIGGER environment_removed AFTER DELETE ON environments BEGIN
        {_tails_in("environment = OLD.name")}
    END;

    CREATE TRIGGER client_metric_added AFTER INSERT ON client_metrics BEGIN
        UPDATE feature_environments SET last_seen_at = NEW.updated_at
        WHERE feature = NEW.feature AND environment = NEW.environment
          AND (last_seen_at IS NULL OR last_seen_at < NEW.updated_at);
    END;
    CREATE TRIGGER client_metric_raised AFTER UPDATE ON client_metrics
    WHEN NEW.updated_at >= OLD.updated_at
     AND NEW.feature = OLD.feature AND NEW.environment = OLD.environment BEGIN
        UPDATE feature_environments SET last_seen_at = NEW.updated_at
        WHERE feature = NEW.feature AND environment = NEW.environment
          AND (last_seen_at IS NULL OR last_seen_at < NEW.updated_at);
    END;
    CREATE TRIGGER client_metric_lowered AFTER UPDATE ON client_metrics
    WHEN NOT (NEW.updated_at >= OLD.updated_at
              AND NEW.feature = OLD.feature AND NEW.environment = OLD.environment) BEGIN
        UPDATE feature_environments
        SET last_seen_at = {_LAST_SEEN.format(pair="feature_environments")}
        WHERE (feature = OLD.feature AND environment = OLD.environment)
           OR (feature = NEW.feature AND environment = NEW.environment);
    END;
    CREATE TRIGGER client_metric_removed AFTER DELETE ON client_metrics BEGIN
        UPDATE feature_environments SET last_seen_at = {_LAST_SEEN.format(pair="OLD")}
        WHERE feature = OLD.feature AND environment = OLD.environment;
    END;
    """,
    # 6 -> 7: the inactive users' answer reads each user's JSON whole from the index it is
    # listed by (`users.inactive_json`, an `InactiveUser` as `pydantic_core.to_json` writes it,
    # rewritten by a trigger whenever the user changes): 100,000 users without a dict each for
    # `to_json` (0.2 s), nor the SQL that would write their JSON as they are read (0.1 s).
    f"""
    ALTER TABLE users ADD COLUMN inactive_json TEXT;
    UPDATE users SET inactive_json = {_INACTIVE_JSON};
    DROP INDEX users_last_login;
    CREATE INDEX users_last_login ON users(
        coalesce(seen_at, created_at), id, seen_at, created_at, pat_seen_at, inactive_json
    ) WHERE account_type = 'User';
    CREATE TRIGGER user_added AFTER INSERT ON users BEGIN
        UPDATE users SET inactive_json = {_INACTIVE_JSON} WHERE id = NEW.id;
    END;
    CREATE TRIGGER user_changed
    AFTER UPDATE OF id, name, email, username, seen_at, created_at, pat_seen_at ON users BEGIN
        UPDATE users SET inactive_json = {_INACTIVE_JSON} WHERE id = NEW.id;
    END;
    """,
    # 7 -> 8: an admin API token is no user's, as on Unleash (it was user 1's, and deleting or
    # demoting that user locked it out of every Admin route): it holds the Admin root role
    # itself and its changes are logged as "admin", creator id -42 (`sandbox.store.core`)
    """
    UPDATE tokens SET user_id = NULL WHERE kind = 'admin';
    """,
    # 8 -> 9: tokens are stored as hashes (`token_hash`), never in clear: the database was
    # readable by others (0644) and a token read from it was as good as the one printed. The
    # clear ones are hashed in place, so a token printed once (and saved in a profile) still
    # connects; `migrate` overwrites their freed bytes and empties the write-ahead log
    """
    ALTER TABLE tokens RENAME COLUMN secret TO secret_hash;
    UPDATE tokens SET secret_hash = token_hash(secret_hash);
    """,
    # 9 -> 10: API tokens (`sandbox.store.api_tokens`): a token's name, type, projects, expiry
    # and last use, and its `handle`, the masked secret the list shows and PUT and DELETE take
    # (`<project>:<env>.…<last 8>`; the hash alone cannot give the secret back). `served` marks
    # the admin and client tokens `flagdesk serve` keeps (`ensure_token` replaces those alone).
    # A token stored before this has no known last characters: its handle ends with its
    # hash's, after `…#`.
    """
    ALTER TABLE tokens ADD COLUMN served INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE tokens ADD COLUMN name TEXT;
    ALTER TABLE tokens ADD COLUMN api_type TEXT;
    ALTER TABLE tokens ADD COLUMN projects TEXT;
    ALTER TABLE tokens ADD COLUMN handle TEXT;
    ALTER TABLE tokens ADD COLUMN expires_at INTEGER;
    ALTER TABLE tokens ADD COLUMN seen_at INTEGER;
    UPDATE tokens SET served = 1, name = kind, api_type = kind,
        projects = CASE kind WHEN 'admin' THEN '["*"]' ELSE '["default"]' END,
        handle = CASE kind WHEN 'admin' THEN '*:*'
                           ELSE 'default:' || coalesce(environment, 'development') END
            || '.…#' || substr(secret_hash, -8)
    WHERE kind IN ('admin', 'client');
    CREATE UNIQUE INDEX tokens_handle ON tokens(handle);
    """,
    # 10 -> 11: personal access tokens as Unleash keeps them (`sandbox.store.personal_tokens`):
    # an id that is never given again (a journal names a token by it), a description, an
    # expiry and when it was last used, beside the token's hash in `tokens` (which still says
    # whose it is; the row here goes with it). The personal tokens made before get a
    # description of their own and expire in 2099, as the 8.2 peer's.
    f"""
    CREATE TABLE personal_access_tokens (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        secret_hash TEXT NOT NULL UNIQUE REFERENCES tokens(secret_hash) ON DELETE CASCADE,
        description TEXT NOT NULL,
        expires_at INTEGER NOT NULL,
        seen_at INTEGER
    );
    INSERT INTO personal_access_tokens(secret_hash, description, expires_at)
    SELECT secret_hash, 'Personal access token ' || rowid, {PAT_DEFAULT_EXPIRY}
    FROM tokens WHERE kind = 'personal' ORDER BY rowid;
    """,
    # 11 -> 12: roles with their permissions (`sandbox.store.roles`): a custom root role's type
    # is `root-custom`, as Unleash sends it (the sandbox stored `custom-root`, the spec's
    # dashboard enum's word); each role's permissions by name, with an environment for an
    # environment permission of a project role (`''`: none); a role's id never given again
    # once it is deleted (`role_sequence`, kept up by a trigger as `group_sequence` is). The
    # built-in roles' permissions are `Store.initialise`'s, like the roles themselves.
    """
    UPDATE roles SET type = 'root-custom' WHERE type = 'custom-root';
    CREATE TABLE role_permissions (
        role_id INTEGER NOT NULL REFERENCES roles(id) ON DELETE CASCADE,
        permission TEXT NOT NULL,
        environment TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (role_id, permission, environment)
    );
    CREATE TABLE role_sequence (last INTEGER NOT NULL);
    INSERT INTO role_sequence SELECT coalesce(max(id), 0) FROM roles;
    CREATE TRIGGER roles_sequence AFTER INSERT ON roles BEGIN
        UPDATE role_sequence SET last = max(last, NEW.id);
    END;
    """,
    # 12 -> 13 (flag configuration, issue 37 slice 1): which environments each project has
    # (`project_environments`; a new project gets every environment, as Unleash gives it the
    # enabled ones, by trigger whoever inserts it), a flag's own stale mark (NULL: never set,
    # the age rule decides), the variants of a flag in an environment and of a strategy (JSON
    # arrays), a strategy's segments by id (the table the segments slice makes too), and the
    # `preData`/`data` Unleash records with an event (`event_data`, one row per such event)
    f"""
    CREATE TABLE project_environments (
        project TEXT NOT NULL,
        environment TEXT NOT NULL,
        PRIMARY KEY (project, environment)
    );
    INSERT INTO project_environments(project, environment)
    SELECT p.id, e.name FROM projects p, environments e;
    CREATE TRIGGER project_environments_added AFTER INSERT ON projects BEGIN
        INSERT OR IGNORE INTO project_environments(project, environment)
        SELECT NEW.id, name FROM environments;
    END;
    CREATE TRIGGER project_environments_removed AFTER DELETE ON projects BEGIN
        DELETE FROM project_environments WHERE project = OLD.id;
    END;
    ALTER TABLE features ADD COLUMN stale INTEGER;
    ALTER TABLE feature_environments ADD COLUMN variants TEXT NOT NULL DEFAULT '[]';
    ALTER TABLE strategies ADD COLUMN variants TEXT NOT NULL DEFAULT '[]';
    CREATE INDEX strategies_feature_environment ON strategies(feature, environment, sort_order);
    {STRATEGY_SEGMENTS}
    CREATE TABLE event_data (
        event_id INTEGER PRIMARY KEY REFERENCES events(id) ON DELETE CASCADE,
        pre_data TEXT,
        data TEXT
    );
    """,
    # flag extras (issue 37, slice 2): 13 -> 14: segments (`sandbox.store.segments`; an id
    # never given again, AUTOINCREMENT), which strategies use which (`strategy_segments`,
    # shared with the strategies' configuration, which may have made it already), tag types
    # (Unleash ships `simple`), tags and a flag's tags, dependencies between flags, and strategy
    # definitions (the built-in ones as Unleash 8.2 lists them, not editable). An event's
    # `preData` and `data` go to `event_data` (13). Flags' rows go with their flag (ON DELETE
    # CASCADE), a tag type's tags with it.
    f"""
    CREATE TABLE segments (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        name TEXT NOT NULL,
        description TEXT,
        project TEXT,
        constraints TEXT NOT NULL DEFAULT '[]',
        created_by TEXT,
        created_at INTEGER NOT NULL
    );
    {STRATEGY_SEGMENTS_TABLE}
    CREATE INDEX strategy_segments_segment ON strategy_segments(segment_id);
    CREATE TABLE tag_types (
        name TEXT PRIMARY KEY,
        description TEXT NOT NULL DEFAULT '',
        icon TEXT,
        color TEXT
    );
    INSERT INTO tag_types(name, description, icon, color)
        VALUES('simple', 'Used to simplify filtering of features', '#', '#FFFFFF');
    CREATE TABLE tags (
        type TEXT NOT NULL REFERENCES tag_types(name) ON DELETE CASCADE,
        value TEXT NOT NULL,
        created_at INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (type, value)
    );
    CREATE TABLE feature_tags (
        feature TEXT NOT NULL REFERENCES features(name) ON DELETE CASCADE,
        tag_type TEXT NOT NULL,
        tag_value TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        created_by_user_id INTEGER,
        PRIMARY KEY (feature, tag_type, tag_value),
        FOREIGN KEY (tag_type, tag_value) REFERENCES tags(type, value) ON DELETE CASCADE
    );
    CREATE INDEX feature_tags_tag ON feature_tags(tag_type, tag_value);
    CREATE TABLE feature_dependencies (
        parent TEXT NOT NULL REFERENCES features(name) ON DELETE CASCADE,
        child TEXT NOT NULL REFERENCES features(name) ON DELETE CASCADE,
        enabled INTEGER NOT NULL DEFAULT 1,
        variants TEXT,
        PRIMARY KEY (parent, child)
    );
    CREATE INDEX feature_dependencies_child ON feature_dependencies(child);
    CREATE TABLE strategy_definitions (
        name TEXT PRIMARY KEY,
        title TEXT,
        display_name TEXT,
        description TEXT,
        parameters TEXT NOT NULL DEFAULT '[]',
        built_in INTEGER NOT NULL DEFAULT 0,
        deprecated INTEGER NOT NULL DEFAULT 0,
        sort_order INTEGER NOT NULL DEFAULT 9999,
        created_at INTEGER NOT NULL DEFAULT 0
    );
    """,
    # 14 -> 15: the projects each API token is for, one row each with what a count needs of
    # the token (kept by triggers from `tokens`, whose `projects` is the JSON list the API
    # answers with): a project's environments count its tokens from this table's rows alone,
    # where matching the JSON text read every token (10,000 in the scale set: 4.7 ms a project)
    """
    CREATE TABLE token_projects (
        project TEXT NOT NULL,
        token TEXT NOT NULL REFERENCES tokens(secret_hash) ON DELETE CASCADE,
        environment TEXT,
        api_type TEXT,
        served INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (project, token)
    ) WITHOUT ROWID;
    CREATE INDEX token_projects_token ON token_projects(token);
    INSERT OR IGNORE INTO token_projects(project, token, environment, api_type, served)
        SELECT j.value, t.secret_hash, t.environment, t.api_type, t.served
        FROM tokens t, json_each(t.projects) j
        WHERE json_valid(t.projects) AND json_type(t.projects) = 'array';
    CREATE TRIGGER token_projects_made AFTER INSERT ON tokens
    WHEN json_valid(NEW.projects) AND json_type(NEW.projects) = 'array'
    BEGIN
        INSERT OR IGNORE INTO token_projects(project, token, environment, api_type, served)
            SELECT value, NEW.secret_hash, NEW.environment, NEW.api_type, NEW.served
            FROM json_each(NEW.projects);
    END;
    CREATE TRIGGER token_projects_changed
    AFTER UPDATE OF projects, secret_hash, environment, api_type, served ON tokens
    BEGIN
        DELETE FROM token_projects WHERE token = OLD.secret_hash;
        INSERT OR IGNORE INTO token_projects(project, token, environment, api_type, served)
            SELECT value, NEW.secret_hash, NEW.environment, NEW.api_type, NEW.served
            FROM json_each(NEW.projects)
            WHERE json_valid(NEW.projects) AND json_type(NEW.projects) = 'array';
    END;
    """,
    # 15 -> 16 (instance settings, issue 38): Unleash Enterprise's banners
    # (`sandbox.store.instance`), each the JSON of its fields (createBannerSchema's) beside an
    # id never given again and when it was made. Maintenance mode and the CORS origins are
    # `settings` rows under Unleash's keys: no table of their own.
    """
    CREATE TABLE banners (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        body TEXT NOT NULL,
        created_at INTEGER NOT NULL
    );
    """,
    # 16 -> 17 (the event log, issue 38): what the event search filters on, each with the id
    # (newest first), so that a page of 100,000 events is read through an index whatever the
    # filter (`sandbox.store.events`)
    """
    CREATE INDEX events_type ON events(type, id);
    CREATE INDEX events_feature ON events(feature, id);
    CREATE INDEX events_environment ON events(environment, id);
    CREATE INDEX events_created_by ON events(created_by_user_id, id);
    CREATE INDEX events_created_at ON events(created_at);
    """,
    # 17 -> 18 (login history, issue 38): Unleash Enterprise's login events
    # (`sandbox.store.logins`): who tried to log in (or out) when, how, from where, and why it
    # failed; kept 14 days, as Enterprise keeps them
    """
    CREATE TABLE login_events (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        username TEXT NOT NULL,
        auth_type TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        successful INTEGER NOT NULL,
        ip TEXT,
        failure_reason TEXT,
        type TEXT NOT NULL DEFAULT 'login'
    );
    CREATE INDEX login_events_created_at ON login_events(created_at);
    """,
    # 18 -> 19 (comparing at scale, issue 37): the flag a constrained strategy is of, beside the
    # context field (`feature`, filled by a trigger as the row is made: a strategy never
    # changes flags), so a context field's use is counted through an index (the scale set's
    # 30,000 constrained strategies: 190 -> 17 ms, each looked up by its id before); and a
    # group's projects through an index (the scale set's groups read the project roles whole,
    # 200 times)
    """
    ALTER TABLE strategy_context_fields ADD COLUMN feature TEXT;
    UPDATE strategy_context_fields
        SET feature = (SELECT s.feature FROM strategies s WHERE s.id = strategy_id);
    CREATE INDEX strategy_context_fields_feature ON strategy_context_fields(context_name, feature);
    CREATE TRIGGER strategy_context_fields_feature AFTER INSERT ON strategy_context_fields
    WHEN NEW.feature IS NULL
    BEGIN
        UPDATE strategy_context_fields
            SET feature = (SELECT s.feature FROM strategies s WHERE s.id = NEW.strategy_id)
            WHERE context_name = NEW.context_name AND strategy_id = NEW.strategy_id;
    END;
    CREATE INDEX project_roles_group ON project_roles(group_id, project);
    """,
]

#: the first version whose tokens are hashes (`migrate` wipes the clear ones on its way there)
HASHED_TOKENS = 9

SCHEMA_VERSION = len(MIGRATIONS)


def now_ms() -> int:
    return int(time.time() * 1000)


def token_hash(secret: str) -> str:
    """What the database keeps of a token: its SHA-256, named as such. A token is a random
    secret of 192 bits (or one given with `--admin-token`), looked up on every request: a fast
    hash, not a password's slow one; the database alone no longer lets anyone in."""
    return "sha256:" + hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


#: the files SQLite keeps beside a database: its write-ahead log, the log's index, the rollback
#: journal. SQLite makes them with the database's own permissions.
COMPANIONS = ("-wal", "-shm", "-journal")


def make_private(path: Path) -> None:
    """The database at `path` and the files beside it are the user's alone (0600), made so when
    they are missing; a folder made for it is 0700. Nothing on Windows, where a user's data
    folder is theirs already."""
    if os.name != "posix":
        path.parent.mkdir(parents=True, exist_ok=True)
        return
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
    for file in (path, *(path.with_name(path.name + s) for s in COMPANIONS)):
        with contextlib.suppress(FileNotFoundError):
            if stat.S_IMODE(file.stat().st_mode) != 0o600:
                file.chmod(0o600)


def connect(path: Path | str) -> sqlite3.Connection:
    """Open (creating if needed, `make_private`) and migrate the database at `path` (":memory:"
    for tests).

    WAL lets readers run beside the single writer; synchronous=NORMAL in WAL mode keeps every
    committed transaction across a process crash (only a power loss can cost the last commits).
    """
    if str(path) != ":memory:":
        make_private(Path(path))
    conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False, timeout=30)
    conn.create_function("token_hash", 1, token_hash, deterministic=True)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA busy_timeout=30000")
    migrate(conn)
    return conn


def has_token(conn: sqlite3.Connection, kind: str) -> bool:
    """Whether a token of `kind` ("admin" or "client") is stored (as its hash)."""
    return (
        conn.execute(
            "SELECT 1 FROM tokens WHERE kind = ? AND served = 1 LIMIT 1", (kind,)
        ).fetchone()
        is not None
    )


def schema_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(conn: sqlite3.Connection) -> None:
    version = schema_version(conn)
    if version > SCHEMA_VERSION:
        raise RuntimeError(
            f"the sandbox database is at schema version {version}, newer than this flagdesk "
            f"({SCHEMA_VERSION}); use a newer flagdesk or another --db"
        )
    # (a new database, at 0, has no token to wipe)
    wiping = 0 < version < HASHED_TOKENS <= SCHEMA_VERSION
    if wiping:  # the clear tokens' bytes are overwritten as they are replaced, not just freed
        conn.execute("PRAGMA secure_delete = ON")
    while version < SCHEMA_VERSION:
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in _split_sql(MIGRATIONS[version]):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {version + 1}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        version += 1
    if wiping:
        conn.execute("PRAGMA secure_delete = OFF")
        # the pages as they were (clear tokens included) may still sit in the database file
        # until the log is copied back over them, and in the log itself: copy it, empty it
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def _split_sql(script: str) -> list[str]:
    """Split a migration script into statements (executescript would commit on its own)."""
    statements: list[str] = []
    buffer = ""
    for line in script.splitlines(keepends=True):
        stripped = line.split("--", 1)[0]
        buffer += stripped
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        statements.append(buffer.strip())
    return statements
