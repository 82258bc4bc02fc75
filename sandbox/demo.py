"""Deterministic demo data: the same people, groups, projects, flags and counts every time.

Times are placed relative to the moment the data is loaded, so "inactive for 200 days" stays true
of the same people whenever a demo database is made. Nothing here is random at run time: the
generator is seeded.

Two sets for scale: `--scale N` (`load_scale`: N inactive users and N archived flags, for the
benchmarks) and `--scale` alone (`load_access_scale`: the credentials and access set of issue
36, with its clean-up cases counted: 500 projects, 2,000 users (100 inactive) in 200 groups (20
empty), 2,069 project roles, 10,000 API tokens (1,000 never seen, 1,000 not seen for more than
30 days, 1,000 expired), 208 personal access tokens (of admin's 8: 3 expired, 2 never used, 1
not used for 45 days), 12 service accounts (4 in use, 4 with no token used for 30 days, 4 with
no token) and 8 custom roles (4 held by nobody), 10,000 flags (issue 37) and 100,000 events
(issue 38); its docstring has the details, `ACCESS_SCALE_PLANTERS` the hook for what other
slices plant with it).
"""

from __future__ import annotations

import json
import random
import sqlite3
import unicodedata
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sandbox.db import token_hash
from sandbox.store import (
    ADMIN_ROLE,
    ADMIN_USER_ID,
    DAY_MS,
    EDITOR_ROLE,
    HOUR_MS,
    MEMBER_ROLE,
    OWNER_ROLE,
    VIEWER_ROLE,
    Store,
    avatar_url,
)
from sandbox.store.tokens import masked

FIRST = [
    "Amara", "Bjorn", "Chiara", "Dmitri", "Elena", "Farid", "Greta", "Hiroshi", "Ingrid", "Jonas",
    "Keiko", "Lars", "Maya", "Nikolai", "Olga", "Pedro", "Quentin", "Rosa", "Sven", "Tariq",
    "Uma", "Viktor", "Wanjiru", "Xavier", "Yara", "Zoltan", "Aisha", "Bruno", "Carmen", "Diego",
    "Esther", "Felix", "Gabriela", "Hugo", "Isabel", "Jamal", "Katarina", "Leon", "Mei", "Noah",
    "Oskar", "Priya", "Ravi", "Sofia",
]  # fmt: skip
LAST = [
    "Okafor", "Lindqvist", "Rossi", "Volkov", "García", "Haddad", "Schmidt", "Tanaka", "Berg",
    "Müller", "Sato", "Andersen", "Patel", "Ivanov", "Kowalska", "Alves", "Dubois", "Moreno",
    "Nilsson", "Rahman", "Iyer", "Novak", "Kamau", "Lefèvre", "Cohen", "Horváth", "Bello",
    "Ferreira", "Ortiz", "Santos", "Abebe", "Wagner", "Costa", "Laurent", "Romero", "Diallo",
    "Jovanović", "Weber", "Chen", "Fischer", "Eriksson", "Nair", "Kumar", "Mendes",
]  # fmt: skip

PROJECTS = [
    ("default", "Default", "The project every server starts with"),
    ("web-shop", "Web shop", "Storefront, cart and checkout of the online shop"),
    ("payments", "Payments", "Payment providers, fraud checks and refunds"),
    ("mobile-app", "Mobile app", "The iOS and Android apps (onboarding just started)"),
]

AREAS = ["checkout", "search", "cart", "profile", "billing", "onboarding", "recommendations",
         "notifications", "invoices", "wishlist", "reviews", "shipping", "refunds", "coupons",
         "loyalty"]  # fmt: skip
THINGS = ["redesign", "v2", "fast-path", "beta", "ab-test", "kill-switch", "rollout", "cache",
          "limits", "banner"]  # fmt: skip
TYPE_FOR_THING = {
    "redesign": "release", "v2": "release", "fast-path": "operational", "beta": "experiment",
    "ab-test": "experiment", "kill-switch": "kill-switch", "rollout": "release",
    "cache": "operational", "limits": "permission", "banner": "release",
}  # fmt: skip
APPS = ["web-frontend", "checkout-service", "search-api", "mobile-ios", "mobile-android"]


def ascii_name(name: str) -> str:
    """ "Jonas.Müller" -> "jonas.muller": usernames and email addresses stay plain ASCII."""
    return unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()


def load_demo(store: Store) -> None:
    """Fill an initialised, empty sandbox with the demo data."""
    rng = random.Random(20261121)
    now = store.clock()
    with store.tx() as c:
        user_ids = _people(c, rng, now)
        group_ids = _groups(c, user_ids, now)
        _projects(c, rng, now, user_ids, group_ids)
        features = _features(c, rng, now)
        _context_and_strategies(c, rng, now, features)
        _metrics(c, rng, now, features)
        _events(c, rng, now, user_ids, features)
        _flag_configuration(c, now, features)  # flag configuration (issue 37 slice 1)
        _flag_extras(c, now, features)  # flag extras (issue 37, slice 2)
        _logins(c, now)  # login history (issue 38; Enterprise's)


def _people(c: sqlite3.Connection, rng: random.Random, now: int) -> list[int]:
    """44 people: 12 inactive (8 by an old login, 4 who never logged in since they were
    created), one kept active only by personal-token use, one managed by SCIM; plus a service
    account that is never listed as inactive."""
    rows: list[tuple[Any, ...]] = []
    for i, (first, last) in enumerate(zip(FIRST, LAST, strict=True)):
        username = ascii_name(f"{first}.{last}")
        email = f"{username}@example.com"
        role = ADMIN_ROLE if i < 3 else EDITOR_ROLE if i < 20 else VIEWER_ROLE
        created = now - (400 + rng.randrange(400)) * DAY_MS
        seen: int | None = now - rng.randrange(1, 60) * DAY_MS - rng.randrange(DAY_MS)
        pat_seen = None
        scim = None
        if 30 <= i < 38:  # inactive by last login
            seen = now - (185 + 40 * (i - 30)) * DAY_MS
        elif 38 <= i < 42:  # never logged in since created
            seen = None
            created = now - (190 + 30 * (i - 38)) * DAY_MS
        elif i == 42:  # old login, but uses a personal access token every week
            seen = now - 420 * DAY_MS
            pat_seen = now - 3 * DAY_MS
        elif i == 43:
            scim = f"scim-{uuid.UUID(int=rng.getrandbits(128))}"
        rows.append(
            (i + 2, f"{first} {last}", username, email, avatar_url(email, username), role, seen,
             pat_seen, created, rng.choice([0, 0, 0, 1, 3]), 1, "User", scim)
        )  # fmt: skip
    rows.append(
        (len(rows) + 2, "CI deploy bot", "ci-deploy-bot", None, None, VIEWER_ROLE,
         now - 500 * DAY_MS, None, now - 700 * DAY_MS, 0, 0, "Service Account", None)
    )  # fmt: skip
    c.executemany(
        "INSERT INTO users(id, name, username, email, image_url, root_role, seen_at, pat_seen_at,"
        " created_at, login_attempts, email_sent, account_type, scim_id)"
        " VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    return [r[0] for r in rows if r[11] == "User"]


def _groups(c: sqlite3.Connection, user_ids: list[int], now: int) -> list[int]:
    groups = [
        ("Platform team", "Runs the servers and the deployment pipeline",
         ["okta-platform", "platform-oncall"], EDITOR_ROLE, user_ids[0:6]),
        ("Checkout squad", "Owns cart, checkout and payments in the web shop",
         ["okta-checkout"], None, user_ids[4:12]),
        ("Support", "Customer support: reads flags to answer tickets",
         ["okta-support", "zendesk-agents"], VIEWER_ROLE, user_ids[20:27]),
    ]  # fmt: skip
    ids = []
    for gid, (name, description, sso, role, members) in enumerate(groups, start=1):
        created = now - (300 - 40 * gid) * DAY_MS
        c.execute(
            "INSERT INTO groups_(id, name, description, mappings_sso, root_role, created_by,"
            " created_at) VALUES(?, ?, ?, ?, ?, 'admin', ?)",
            (gid, name, description, json.dumps(sso), role, created),
        )
        c.executemany(
            "INSERT INTO group_users(group_id, user_id, joined_at, created_by)"
            " VALUES(?, ?, ?, 'admin')",
            [(gid, uid, created + k * DAY_MS) for k, uid in enumerate(members)],
        )
        ids.append(gid)
    return ids


def _projects(
    c: sqlite3.Connection,
    rng: random.Random,
    now: int,
    user_ids: list[int],
    group_ids: list[int],
) -> None:
    for k, (pid, name, description) in enumerate(PROJECTS):
        c.execute(
            # `default` is there already (every server has it): the demo gives it its story
            "INSERT INTO projects(id, name, description, created_at) VALUES(?, ?, ?, ?)"
            " ON CONFLICT(id) DO UPDATE SET name = excluded.name,"
            " description = excluded.description, created_at = excluded.created_at",
            (pid, name, description, now - (500 - 100 * k) * DAY_MS),
        )
    roles = [
        ("web-shop", OWNER_ROLE, user_ids[4], None),
        ("web-shop", OWNER_ROLE, user_ids[5], None),
        ("web-shop", OWNER_ROLE, None, group_ids[1]),
        ("web-shop", MEMBER_ROLE, user_ids[8], None),
        ("web-shop", MEMBER_ROLE, None, group_ids[0]),
        ("web-shop", MEMBER_ROLE, ADMIN_USER_ID, None),
        ("payments", OWNER_ROLE, user_ids[10], None),
        ("payments", MEMBER_ROLE, None, group_ids[1]),
    ]
    c.executemany(
        "INSERT INTO project_roles(project, role_id, user_id, group_id, created_at)"
        " VALUES(?, ?, ?, ?, ?)",
        [(p, r, u, g, now - 90 * DAY_MS) for p, r, u, g in roles],
    )


def _features(c: sqlite3.Connection, rng: random.Random, now: int) -> list[tuple[str, str, bool]]:
    """About 60 flags of every type over three projects (mobile-app has none yet); 15 archived.
    Returns (name, project, archived) for each."""
    pairs = [(a, t) for a in AREAS for t in THINGS]
    rng.shuffle(pairs)
    projects = ["web-shop"] * 30 + ["default"] * 18 + ["payments"] * 12
    out = []
    for i, (area, thing) in enumerate(pairs[:60]):
        name = f"{area}-{thing}"
        project = projects[i]
        ftype = TYPE_FOR_THING[thing]
        created = now - rng.randrange(2, 300) * DAY_MS
        archived = i % 4 == 0  # 15 of 60
        archived_at = created + rng.randrange(1, max(2, (now - created) // DAY_MS)) * DAY_MS
        c.execute(
            "INSERT INTO features(name, project, type, description, impression_data, created_at,"
            " archived_at) VALUES(?, ?, ?, ?, ?, ?, ?)",
            (name, project, ftype, f"{thing.replace('-', ' ').capitalize()} for {area}",
             int(rng.random() < 0.3), created,
             archived_at if archived else None),
        )  # fmt: skip
        c.executemany(
            "INSERT INTO feature_environments(feature, environment, enabled) VALUES(?, ?, ?)",
            [(name, "development", int(rng.random() < 0.8)),
             (name, "production", int(rng.random() < 0.5))],
        )  # fmt: skip
        out.append((name, project, archived))
    return out


def _context_and_strategies(
    c: sqlite3.Connection, rng: random.Random, now: int, features: list[tuple[str, str, bool]]
) -> None:
    c.execute(
        "INSERT INTO context_fields(name, description, stickiness, sort_order, legal_values,"
        " created_at) VALUES('region', 'Where the customer is served from', 1, 5, ?, ?)",
        (json.dumps([{"value": v, "description": d} for v, d in
                     [("eu-west", "Ireland"), ("eu-central", "Frankfurt"),
                      ("us-east", "Virginia"), ("ap-south", "Mumbai")]]),
         now - 200 * DAY_MS),
    )  # fmt: skip
    c.execute(
        "INSERT INTO context_fields(name, description, stickiness, sort_order, created_at)"
        " VALUES('tenantId', 'Customer account (not used by any strategy yet)', 0, 6, ?)",
        (now - 100 * DAY_MS,),
    )
    constraint_kinds = [
        ("userId", "IN", ["1001", "1002", "1003"]),
        ("appName", "IN", ["web-frontend", "mobile-ios"]),
        ("region", "IN", ["eu-west", "eu-central"]),
        ("region", "NOT_IN", ["ap-south"]),
    ]
    for i, (name, project, _archived) in enumerate(features):
        for env in ("development", "production"):
            constraints = []
            if i % 3 == 0:
                constraints.append(constraint_kinds[(i // 3) % len(constraint_kinds)])
            if i % 7 == 0 and env == "production":
                constraints.append(constraint_kinds[2])
            if i % 12 == 6:  # flags in use: the userId ones above are all archived
                constraints.append(constraint_kinds[0])
            sid = str(uuid.UUID(int=rng.getrandbits(128)))
            payload = [
                {"contextName": n, "operator": o, "values": v, "inverted": False,
                 "caseInsensitive": False}
                for n, o, v in constraints
            ]  # fmt: skip
            c.execute(
                "INSERT INTO strategies(id, feature, project, environment, name, parameters,"
                " constraints, created_at) VALUES(?, ?, ?, ?, 'flexibleRollout', ?, ?, ?)",
                (sid, name, project, env,
                 json.dumps({"rollout": str(rng.choice([10, 25, 50, 100])),
                             "stickiness": "default", "groupId": name}),
                 json.dumps(payload), now - rng.randrange(1, 100) * DAY_MS),
            )  # fmt: skip
            c.executemany(
                "INSERT OR IGNORE INTO strategy_context_fields(strategy_id, context_name)"
                " VALUES(?, ?)",
                [(sid, n) for n, _, _ in constraints],
            )


def _metrics(
    c: sqlite3.Connection, rng: random.Random, now: int, features: list[tuple[str, str, bool]]
) -> None:
    """Usage for web-shop and default flags over the last 48 hours, and a last sighting for
    most archived flags; payments has none (its onboarding is at "first flag created")."""
    hour = now - now % HOUR_MS
    c.executemany(
        "INSERT INTO client_applications(app_name, created_at, last_seen) VALUES(?, ?, ?)",
        [(a, now - 200 * DAY_MS, now - HOUR_MS) for a in APPS],
    )
    c.executemany(
        "INSERT INTO client_instances(app_name, instance_id, environment, sdk_version,"
        " strategies, interval_s, started, last_seen) VALUES(?, ?, ?, ?, ?, 15, ?, ?)",
        [(a, f"{a}-{k}", env, "unleash-client-node:6.4.0", '["flexibleRollout"]',
          now - 3 * DAY_MS, now - HOUR_MS)
         for a in APPS for k in range(2) for env in ("development", "production")],
    )  # fmt: skip
    rows = []
    variant_rows = []
    for i, (name, project, archived) in enumerate(features):
        if project == "payments":
            continue
        hours = [rng.randrange(400, 2000)] if archived else range(48)
        if archived and i % 8 == 0:
            continue  # some archived flags were never seen
        for h in hours:
            window = hour - h * HOUR_MS
            for app in rng.sample(APPS, 2):
                for env in ("development", "production"):
                    yes = rng.randrange(0, 500)
                    no = rng.randrange(0, 500)
                    rows.append((name, app, env, window, yes, no, window + HOUR_MS - 1))
                    if i % 5 == 0:
                        split = rng.randrange(0, yes + 1)
                        variant_rows.append((name, app, env, window, "blue", split))
                        variant_rows.append((name, app, env, window, "green", yes - split))
    c.executemany(
        "INSERT INTO client_metrics(feature, app_name, environment, window_start, yes, no,"
        " updated_at) VALUES(?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    c.executemany(
        "INSERT INTO client_metric_variants(feature, app_name, environment, window_start,"
        " variant, count) VALUES(?, ?, ?, ?, ?, ?)",
        variant_rows,
    )


def _events(
    c: sqlite3.Connection,
    rng: random.Random,
    now: int,
    user_ids: list[int],
    features: list[tuple[str, str, bool]],
) -> None:
    people = {
        r[0]: (r[1], r[2]) for r in c.execute("SELECT id, username, name FROM users").fetchall()
    }
    events: list[tuple[Any, ...]] = []
    for name, project, archived in features:
        if project == "mobile-app":
            continue
        actor = rng.choice(user_ids[:20])
        username = people[actor][0]
        created = c.execute("SELECT created_at FROM features WHERE name = ?", (name,)).fetchone()[0]
        events.append((created, "feature-created", project, name, None, username, actor,
                       f"**{username}** created feature flag "
                       f"[`{name}`](/projects/{project}/features/{name}) in project "
                       f"**{project}**"))  # fmt: skip
        for env in ("development", "production"):
            if rng.random() < 0.6:
                at = created + rng.randrange(1, 48) * HOUR_MS
                actor = rng.choice(user_ids[:20])
                username = people[actor][0]
                events.append((at, "feature-environment-enabled", project, name, env, username,
                               actor, f"**{username}** enabled "
                               f"[`{name}`](/projects/{project}/features/{name}) in "
                               f"*{env}*"))  # fmt: skip
        if archived:
            at = c.execute("SELECT archived_at FROM features WHERE name = ?", (name,)).fetchone()[0]
            events.append((at, "feature-archived", project, name, None, username, actor,
                           f"**{username}** archived feature flag `{name}` in project "
                           f"**{project}** _(it can be revived from the archive)_"))  # fmt: skip
    events.sort()
    c.executemany(
        "INSERT INTO events(created_at, type, project, feature, environment, created_by,"
        " created_by_user_id, summary) VALUES(?, ?, ?, ?, ?, ?, ?, ?)",
        events,
    )


#: the demo's login history: how many days of it are planted (the sandbox keeps 14, as
#: Enterprise: the older ones go on the first read) and the addresses logins come from
LOGIN_DAYS = 28
OFFICE_IPS = ("203.0.113.10", "203.0.113.11", "203.0.113.24")
#: a burst of failed logins from one address, trying names nobody has
GUESSED_NAMES = ("admin", "root", "administrator", "test", "unleash@example.com")
GUESSER_IP = "192.0.2.66"


def _logins(c: sqlite3.Connection, now: int) -> None:
    """Four weeks of logins (`LOGIN_DAYS`): each person seen in that time logs in every day or
    two, from the office or from home, the last success at their `seen_at`;
    most through the company's OpenID Connect provider, the Admins with a password; now and
    then a wrong password first, a logout, an SSO provider misconfigured for an afternoon, and
    one night a burst of guessed names from one address. Its own seeded generator, so the rest
    of the demo stays as it was."""
    if c.execute("SELECT 1 FROM sqlite_master WHERE name = 'login_events'").fetchone() is None:
        return  # a database at a schema before login history (tests make such)
    rng = random.Random(38)
    since = now - LOGIN_DAYS * DAY_MS
    people = c.execute(
        "SELECT username, email, root_role, seen_at FROM users WHERE account_type = 'User'"
        " AND seen_at >= ? ORDER BY id", (since,),
    ).fetchall()  # fmt: skip
    rows: list[tuple[Any, ...]] = []
    for username, email, root_role, seen_at in people:
        name = email or username
        auth = "password" if root_role == ADMIN_ROLE else "open-id-connect"
        home = f"198.51.100.{rng.randrange(2, 250)}"
        at = int(seen_at)
        while at >= since:
            ip = rng.choice(OFFICE_IPS) if rng.random() < 0.7 else home
            if rng.random() < 0.08:  # a wrong password first
                rows.append((name, "password", at - rng.randrange(20, 120) * 1000, 0, ip,
                             "Wrong password, try again.", "login"))  # fmt: skip
                auth_now = "password"
            else:
                auth_now = auth
            rows.append((name, auth_now, at, 1, ip, None, "login"))
            if rng.random() < 0.15:
                rows.append((name, auth_now, at + rng.randrange(1, 9) * HOUR_MS, 1, ip, None,
                             "logout"))  # fmt: skip
            at -= (
                rng.randrange(1, 3) * DAY_MS
                + rng.randrange(-150, 151) * 60_000
                + rng.randrange(60_000)
            )
    # the OpenID Connect provider misconfigured one afternoon nine days ago
    broken = now - 9 * DAY_MS - 3 * HOUR_MS
    for k in range(4):
        rows.append(("Incorrectly configured provider", "open-id-connect",
                     broken + k * 7 * 60_000, 0, OFFICE_IPS[k % 3],
                     "Issuer mismatch: the provider's discovery document names another issuer",
                     "login"))  # fmt: skip
    # a burst of guessed names, one night five days ago
    night = now - 5 * DAY_MS - 20 * HOUR_MS
    for k in range(12):
        rows.append((GUESSED_NAMES[k % len(GUESSED_NAMES)], "password", night + k * 9_000, 0,
                     GUESSER_IP, "No user found", "login"))  # fmt: skip
    rows = [r for r in rows if since <= r[2] <= now]
    rows.sort(key=lambda r: r[2])
    c.executemany(
        "INSERT INTO login_events(username, auth_type, created_at, successful, ip,"
        " failure_reason, type) VALUES(?, ?, ?, ?, ?, ?, ?)",
        rows,
    )


def load_scale(store: Store, n: int, project: str = "default") -> None:
    """`--scale N`: N more users, every one inactive (no login in the inactive period, a fifth
    of them never logged in), and N more archived flags: for benchmarks and large tables."""
    if n <= 0:
        return
    rng = random.Random(n)
    now = store.clock()
    with store.tx() as c:
        c.execute(
            "INSERT OR IGNORE INTO projects(id, name, description, created_at) VALUES(?, ?, ?, ?)",
            (project, project.capitalize(), "", now),
        )
        start = int(c.execute("SELECT coalesce(max(id), 0) FROM users").fetchone()[0]) + 1
        users = []
        idle = store.inactive_days
        for k in range(n):
            first, last = FIRST[k % len(FIRST)], LAST[(k // len(FIRST)) % len(LAST)]
            username = ascii_name(f"{first}.{last}.{k}")
            seen = None if k % 5 == 4 else now - rng.randrange(idle + 1, idle + 600) * DAY_MS
            users.append(
                (start + k, f"{first} {last}", username, f"{username}@scale.example.com",
                 VIEWER_ROLE, seen, now - rng.randrange(idle + 620, idle + 1200) * DAY_MS)
            )  # fmt: skip
        c.executemany(
            "INSERT INTO users(id, name, username, email, root_role, seen_at, created_at)"
            " VALUES(?, ?, ?, ?, ?, ?, ?)",
            users,
        )
        # each flag's environments first (their flag is checked at the commit), so that the
        # trigger that writes a flag's JSON for the archive (sandbox/db.py) runs once a flag,
        # when it is inserted, not again for each of its environments
        c.execute("PRAGMA defer_foreign_keys = ON")
        base = int(c.execute("SELECT count(*) FROM features").fetchone()[0])
        features = []
        types = list(TYPE_FOR_THING.values())
        for k in range(n):
            created = now - rng.randrange(1, 700) * DAY_MS
            features.append(
                (f"scale-{base + k:07d}", project, types[k % len(types)],
                 f"Archived flag {k} made by --scale", created,
                 created + rng.randrange(0, 30) * DAY_MS)
            )  # fmt: skip
        c.executemany(
            "INSERT INTO feature_environments(feature, environment, enabled) VALUES(?, ?, 0)",
            [(f[0], env) for f in features for env in ("development", "production")],
        )
        c.executemany(
            "INSERT INTO features(name, project, type, description, created_at, archived_at)"
            " VALUES(?, ?, ?, ?, ?, ?)",
            features,
        )


# ---------------------------------------------------------------------------- `--scale` alone:
# the credentials and access set (issue 36), what `flagdesk cleanup report` is proven against

#: how many of each `load_access_scale` plants (see its docstring for the clean-up cases)
ACCESS_PROJECTS = 500
ACCESS_USERS = 2_000
ACCESS_GROUPS = 200
ACCESS_TOKENS = 10_000
#: the planted API tokens' clean-up cases: every tenth token of each (`_token_case`)
TOKENS_NEVER_SEEN = 1_000
TOKENS_NOT_SEEN = 1_000  # last seen 31 to 400 days (and 6 hours) ago
TOKENS_EXPIRED = 1_000
#: the rest are in use: last seen (k // 10) % 30 days and 6 hours ago (`tokens_not_seen_for`)
TOKENS_IN_USE = ACCESS_TOKENS - TOKENS_NEVER_SEEN - TOKENS_NOT_SEEN - TOKENS_EXPIRED
EMPTY_GROUPS = 20  # every tenth group
INACTIVE_PLANTED_USERS = 100  # every twentieth user; a fifth of them never logged in
NEVER_LOGGED_IN = 20
#: the personal access tokens of user 1 (`admin`), by case: what the report sees with a
#: personal access token of admin's (`--days 30`)
ADMIN_PATS_EXPIRED = 3
ADMIN_PATS_NEVER_USED = 2
ADMIN_PATS_NOT_USED = 1  # last used 45 days ago
ADMIN_PATS_IN_USE = 2
#: the planted users' personal access tokens (one each for every tenth user), some expired
USER_PATS = 200
USER_PATS_EXPIRED = 50
#: a database whose `settings` holds this key has the set already: it is planted once
ACCESS_SCALE_KEY = "access_scale"


@dataclass
class AccessScale:
    """What `load_access_scale` planted, handed to each of `ACCESS_SCALE_PLANTERS` inside the
    same transaction `c` (to plant what refers to these users, groups and projects)."""

    c: sqlite3.Connection
    rng: random.Random
    now: int
    inactive_days: int
    projects: list[str]
    user_ids: list[int]
    group_ids: list[int]


#: the hook for what other slices plant with the set (service accounts and their tokens,
#: custom roles: issue 36): a function taking the `AccessScale`, appended here by the module
#: that builds its tables, run in order inside the set's one transaction, after the rest. Each
#: states its own counts in its docstring, and `flagdesk cleanup report` gets a reader for them
#: (`app.api.cleanup.READERS`).
ACCESS_SCALE_PLANTERS: list[Callable[[AccessScale], None]] = []


def tokens_not_seen_for(days: int) -> int:
    """How many planted API tokens `flagdesk cleanup report --days DAYS` lists as not seen for
    that long (expired and never-seen ones are listed as such, not here): of the 1,000 last
    seen 31 to 400 days (and 6 hours) ago and of the tokens in use (last seen d days and 6
    hours ago, d = (k // 10) % 30), those whose days are DAYS or more."""
    stale = sum(1 for k in range(1, ACCESS_TOKENS, 10) if _stale_days(k) >= days)
    in_use = sum(1 for k in range(ACCESS_TOKENS) if _token_case(k) == "in use"
                 and (k // 10) % 30 >= days)  # fmt: skip
    return stale + in_use


def _stale_days(k: int) -> int:
    return 31 + (k // 10) % 370


def _token_case(k: int) -> str:
    return {0: "never seen", 1: "not seen", 2: "expired"}.get(k % 10, "in use")


def load_access_scale(store: Store) -> bool:
    """`--scale` alone: the credentials and access set, planted in one transaction (about a
    second; `flagdesk serve --scale` answers /health in a few). Once per database: False, and
    nothing planted, when it is there already. Exactly:

    - **500 projects** `scale-project-001` to `-500`;
    - **2,000 users** `scale.user.0000` to `.1999` (Viewers, every tenth an Editor, every
      200th an Admin): 1,900 logged in within the last 30 days, **100 inactive** (every
      twentieth, `k % 20 == 19`: no login for more than the inactive period, 20 of them,
      `k % 100 == 99`, never logged in);
    - **200 groups** `Scale group 001` to `200`, **20 of them empty** (every tenth), the others
      with 1 to 25 members (some with a root role);
    - **2,069 project roles**: every project has an Owner user, 0 to 5 Member users (1,748
      roles of users in all), every second one a group as Member, every seventh a group as
      Owner (321 roles of groups);
    - **10,000 API tokens** `scale-token-00000` to `-09999` of every type (client, frontend,
      backend), for one project, two projects or all (`*`), in development or production. By
      `k % 10`: 0 **never seen** (1,000, created 1 to 400 days ago), 1 **not seen for more
      than 30 days** (1,000, last seen 31 to 400 days ago), 2 **expired** (1,000, 1 to 200
      days ago), 3 expiring in 1 to 365 days and 4 to 9 never expiring, both in use (last seen
      (k // 10) % 30 days and 6 hours ago: 7,000; `tokens_not_seen_for(days)` counts those a
      shorter `--days` adds);
    - **personal access tokens**: 8 of user 1 (`admin`): 3 **expired**, 2 **never used**, 1
      **not used for 45 days**, 2 in use; and one of each of 200 planted active users (every
      tenth, `k % 10 == 1`), 50 of them expired.

    What `flagdesk cleanup report` (30 days) finds on a new `flagdesk serve --scale` database,
    besides what the demo data holds (12 inactive users; `--empty` has none): 1,000 expired
    tokens; 1,001 never seen (the 1,000, and the `client` token `flagdesk serve` keeps until a
    client uses it); 1,000 not seen for 30 days; 20 empty groups; 100 inactive users; the
    service accounts and custom roles below; and with
    a personal access token of admin's, admin's 3 expired, 2 never used and 1 not used. The
    planted tokens' secrets are random and kept as hashes alone: nobody can use them.

    Service accounts and custom roles are planted by the functions in `ACCESS_SCALE_PLANTERS`,
    in the same transaction (`_plant_service_accounts`, `_plant_custom_roles`):

    - **12 service accounts** `scale-sa-01` to `-12`: 4 **in use** (their newest token used 1,
      5, 10 and 20 days ago), 4 **stale** (their newest token used 45, 90 and 180 days ago;
      one whose 2 tokens were never used), 4 **with no token**;
    - **8 custom roles**: `Scale root role 1` to `4` (`root-custom`: 1 and 2 the root roles of
      `scale-sa-01` and `-02`, 3 and 4 **held by nobody**) and `Scale project role 1` to `4`
      (`custom`: 1 held by a service account in `scale-project-001`, 2 by a group in
      `scale-project-002`, 3 and 4 **held in no project**).

    The report (30 days) finds 9 service accounts (the 4 with no token, the 4 stale and the
    demo's `ci-deploy-bot`, which has none; `service_accounts_unused_for(days)` counts them for
    other days) and 4 custom roles: 3,146 findings with an admin API token.

    The flags of the comparison (`_plant_flags`: 10,000) and the event log (`_plant_events`:
    **100,000 events** over them, 5 minutes apart) are planted by the hook too."""
    if (
        store.conn.execute("SELECT 1 FROM settings WHERE key = ?", (ACCESS_SCALE_KEY,)).fetchone()
        is not None
    ):
        return False
    rng = random.Random(20261207)
    now = store.clock()
    with store.tx() as c:
        projects = _scale_projects(c, now)
        user_ids = _scale_users(c, now, store.inactive_days)
        group_ids = _scale_groups(c, now, user_ids)
        _scale_project_roles(c, now, projects, user_ids, group_ids)
        _scale_api_tokens(c, rng, now, projects)
        _scale_personal_tokens(c, rng, now, user_ids)
        scale = AccessScale(c, rng, now, store.inactive_days, projects, user_ids, group_ids)
        for plant in ACCESS_SCALE_PLANTERS:
            plant(scale)
        c.execute("INSERT INTO settings(key, value) VALUES(?, ?)", (ACCESS_SCALE_KEY, str(now)))
    return True


def _scale_projects(c: sqlite3.Connection, now: int) -> list[str]:
    projects = [f"scale-project-{i:03d}" for i in range(1, ACCESS_PROJECTS + 1)]
    c.executemany(
        "INSERT INTO projects(id, name, description, created_at) VALUES(?, ?, ?, ?)",
        [(p, f"Scale project {i:03d}", "Planted by --scale (the access set)",
          now - (30 + i) * DAY_MS) for i, p in enumerate(projects, start=1)],
    )  # fmt: skip
    return projects


def _scale_users(c: sqlite3.Connection, now: int, inactive_days: int) -> list[int]:
    start = int(c.execute("SELECT coalesce(max(id), 0) FROM users").fetchone()[0]) + 1
    rows = []
    for k in range(ACCESS_USERS):
        username = f"scale.user.{k:04d}"
        role = ADMIN_ROLE if k % 200 == 0 else EDITOR_ROLE if k % 10 == 0 else VIEWER_ROLE
        created = now - (400 + k % 300) * DAY_MS
        seen: int | None = now - (k % 30) * DAY_MS - HOUR_MS
        if k % 100 == 99:  # inactive: never logged in since made
            seen = None
            created = now - (inactive_days + 10 + k % 50) * DAY_MS
        elif k % 20 == 19:  # inactive: an old login
            seen = now - (inactive_days + 1 + k % 300) * DAY_MS
        rows.append((start + k, f"Scale User {k:04d}", username,
                     f"{username}@access.example.com", role, seen, created))  # fmt: skip
    c.executemany(
        "INSERT INTO users(id, name, username, email, root_role, seen_at, created_at)"
        " VALUES(?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    return [r[0] for r in rows]


def _scale_groups(c: sqlite3.Connection, now: int, user_ids: list[int]) -> list[int]:
    start = int(c.execute("SELECT coalesce(max(id), 0) FROM groups_").fetchone()[0]) + 1
    groups = []
    members = []
    for g in range(1, ACCESS_GROUPS + 1):
        gid = start + g - 1
        role = VIEWER_ROLE if g % 4 == 1 else EDITOR_ROLE if g % 4 == 2 else None
        created = now - (20 + g) * DAY_MS
        groups.append((gid, f"Scale group {g:03d}", f"Planted by --scale: group {g}", role,
                       created))  # fmt: skip
        if g % 10 == 0:
            continue  # an empty group: a clean-up case
        size = 1 + (g * 7) % 25
        members += [(gid, user_ids[(g * 37 + j * 53) % ACCESS_USERS], created + j * HOUR_MS)
                    for j in range(size)]  # fmt: skip
    c.executemany(
        "INSERT INTO groups_(id, name, description, root_role, created_by, created_at)"
        " VALUES(?, ?, ?, ?, 'admin', ?)",
        groups,
    )
    c.executemany(
        "INSERT INTO group_users(group_id, user_id, joined_at, created_by)"
        " VALUES(?, ?, ?, 'admin')",
        members,
    )
    return [g[0] for g in groups]


def _scale_project_roles(
    c: sqlite3.Connection,
    now: int,
    projects: list[str],
    user_ids: list[int],
    group_ids: list[int],
) -> None:
    rows: list[tuple[str, int, int | None, int | None, int]] = []
    for i, project in enumerate(projects, start=1):
        at = now - (10 + i % 20) * DAY_MS
        rows.append((project, OWNER_ROLE, user_ids[(i * 11) % ACCESS_USERS], None, at))
        rows += [(project, MEMBER_ROLE, user_ids[(i * 17 + j * 101) % ACCESS_USERS], None, at)
                 for j in range(i % 6)]  # fmt: skip
        if i % 2 == 0:
            rows.append((project, MEMBER_ROLE, None, group_ids[(i * 3) % ACCESS_GROUPS], at))
        if i % 7 == 0:
            rows.append((project, OWNER_ROLE, None, group_ids[(i * 5) % ACCESS_GROUPS], at))
    c.executemany(
        "INSERT INTO project_roles(project, role_id, user_id, group_id, created_at)"
        " VALUES(?, ?, ?, ?, ?)",
        rows,
    )


def _scale_api_tokens(
    c: sqlite3.Connection, rng: random.Random, now: int, projects: list[str]
) -> None:
    rows = []
    for k in range(ACCESS_TOKENS):
        kind = ("client", "frontend", "backend")[k % 3]
        environment = ("development", "production")[(k // 3) % 2]
        shape = k % 7
        if shape == 0:
            scope = ["*"]
        elif shape == 1:
            scope = [projects[k % ACCESS_PROJECTS], projects[(k + 250) % ACCESS_PROJECTS]]
        else:
            scope = [projects[(k * 13) % ACCESS_PROJECTS]]
        head = (scope[0] if len(scope) == 1 else "[]") + ":" + environment
        # random (kept as a hash only), ending in its own 8 characters: the handles are unique
        secret = f"{head}.{rng.getrandbits(192):048x}5ca1{k:04x}"
        case = _token_case(k)
        q = k // 10
        expires: int | None = None
        if case == "never seen":
            created = now - (1 + k % 400) * DAY_MS
            seen: int | None = None
        elif case == "not seen":
            seen = now - _stale_days(k) * DAY_MS - 6 * HOUR_MS
            created = seen - (5 + k % 100) * DAY_MS
        elif case == "expired":
            expires = now - (1 + q % 200) * DAY_MS - HOUR_MS
            seen = expires - 2 * DAY_MS
            created = expires - 90 * DAY_MS
        else:
            seen = now - (q % 30) * DAY_MS - 6 * HOUR_MS
            created = seen - (10 + k % 300) * DAY_MS
            if k % 10 == 3:
                expires = now + (1 + k % 365) * DAY_MS
        rows.append((token_hash(secret), "frontend" if kind == "frontend" else "client",
                     environment, created, f"scale-token-{k:05d}", kind, json.dumps(scope),
                     masked(secret), expires, seen))  # fmt: skip
    c.executemany(
        "INSERT INTO tokens(secret_hash, kind, user_id, environment, created_at, served, name,"
        " api_type, projects, handle, expires_at, seen_at)"
        " VALUES(?, ?, NULL, ?, ?, 0, ?, ?, ?, ?, ?, ?)",
        rows,
    )


def _scale_personal_tokens(
    c: sqlite3.Connection, rng: random.Random, now: int, user_ids: list[int]
) -> None:
    # (description, user, created, expires, last used)
    pats: list[tuple[str, int, int, int, int | None]] = []
    admin_cases = (
        [("expired", now - d * DAY_MS, now - (d + 5) * DAY_MS) for d in (1, 10, 100)]
        + [("never used", now + 200 * DAY_MS, None)] * ADMIN_PATS_NEVER_USED
        + [("not used", now + 300 * DAY_MS, now - 45 * DAY_MS)]
        + [("in use", now + 365 * DAY_MS, now - DAY_MS)] * ADMIN_PATS_IN_USE
    )
    for n, (case, expires, used) in enumerate(admin_cases, start=1):
        pats.append((f"scale-pat-admin-{n} ({case})", ADMIN_USER_ID, now - 400 * DAY_MS,
                     expires, used))  # fmt: skip
    for k in range(1, ACCESS_USERS, 10):
        expired = (k // 10) % 4 == 0
        expires = now - (1 + k % 90) * DAY_MS if expired else now + (30 + k % 300) * DAY_MS
        used = now - (k % 30) * DAY_MS - HOUR_MS
        pats.append((f"scale-pat-{k:04d}", user_ids[k], now - 500 * DAY_MS,
                     expires, min(used, expires)))  # fmt: skip
    for description, user_id, created, expires, used in pats:
        secret = "user:" + f"{rng.getrandbits(224):056x}"
        hashed = token_hash(secret)
        c.execute(
            "INSERT INTO tokens(secret_hash, kind, user_id, created_at)"
            " VALUES(?, 'personal', ?, ?)",
            (hashed, user_id, created),
        )
        c.execute(
            "INSERT INTO personal_access_tokens(secret_hash, description, expires_at, seen_at)"
            " VALUES(?, ?, ?, ?)",
            (hashed, description, expires, used),
        )
        if used is not None:
            c.execute(
                "UPDATE users SET pat_seen_at = ? WHERE id = ? AND coalesce(pat_seen_at, 0) < ?",
                (used, user_id, used),
            )


# ---- service accounts and custom roles in the access set (issue 36): what the clean-up
# report's last two parts find (`app.api.cleanup`: service accounts with no token used for
# `days`, custom roles nobody holds)

#: the planted service accounts `scale-sa-01` to `-12`, by case (`_plant_service_accounts`)
SERVICE_ACCOUNTS_IN_USE = 4  # a token used 1, 5, 10 and 20 days ago (and older ones beside)
SERVICE_ACCOUNTS_STALE = 4  # tokens last used 45, 90 and 180 days ago; one's tokens never used
SERVICE_ACCOUNTS_NO_TOKENS = 4
SCALE_SERVICE_ACCOUNTS = (SERVICE_ACCOUNTS_IN_USE + SERVICE_ACCOUNTS_STALE
                          + SERVICE_ACCOUNTS_NO_TOKENS)  # fmt: skip
#: the days ago the in-use accounts' newest token was used, and the stale ones' (None: never)
_SA_IN_USE_DAYS = (1, 5, 10, 20)
_SA_STALE_DAYS: tuple[int | None, ...] = (45, 90, 180, None)
#: the demo's service account (`ci-deploy-bot`) has no token: a finding too
DEMO_SERVICE_ACCOUNTS_NO_TOKENS = 1
#: the planted custom roles `Scale root role 1..4` and `Scale project role 1..4`, by case
CUSTOM_ROOT_ROLES_HELD = 2  # the root role of an in-use service account each
CUSTOM_ROOT_ROLES_UNUSED = 2
CUSTOM_PROJECT_ROLES_HELD = 2  # one held by a service account, one by a group, in a project
CUSTOM_PROJECT_ROLES_UNUSED = 2
CUSTOM_ROLES_UNUSED = CUSTOM_ROOT_ROLES_UNUSED + CUSTOM_PROJECT_ROLES_UNUSED


def service_accounts_unused_for(days: int) -> int:
    """How many service accounts `flagdesk cleanup report --days DAYS` lists on a new
    `flagdesk serve --scale` database: those with no token (the planted 4 and the demo's
    `ci-deploy-bot`), the one whose tokens were never used, and those whose newest token was
    used DAYS or more days (and a few hours) ago."""
    used = [d for d in (*_SA_IN_USE_DAYS, *_SA_STALE_DAYS) if d is not None]
    return (SERVICE_ACCOUNTS_NO_TOKENS + DEMO_SERVICE_ACCOUNTS_NO_TOKENS + 1
            + sum(1 for d in used if d >= days))  # fmt: skip


def _plant_service_accounts(scale: AccessScale) -> None:
    """12 service accounts `scale-sa-01` to `-12` (root role Viewer), created 300 days ago:
    01-04 in use (their newest token used 1, 5, 10, 20 days and an hour ago, beside a token
    unused for 200 days), 05-08 stale (two tokens each, the newest used 45, 90, 180 days and an
    hour ago; 08's never used), 09-12 with no token. Their tokens' secrets are random, kept as
    hashes alone."""
    c, now = scale.c, scale.now
    start = int(c.execute("SELECT coalesce(max(id), 0) FROM users").fetchone()[0]) + 1
    created = now - 300 * DAY_MS
    accounts = [(start + n, f"Scale service account {n + 1:02d}", f"scale-sa-{n + 1:02d}",
                 VIEWER_ROLE, created) for n in range(SCALE_SERVICE_ACCOUNTS)]  # fmt: skip
    c.executemany(
        "INSERT INTO users(id, name, username, root_role, created_at, account_type)"
        " VALUES(?, ?, ?, ?, ?, 'Service Account')",
        accounts,
    )
    newest = [*_SA_IN_USE_DAYS, *_SA_STALE_DAYS]
    for n, days in enumerate(newest):
        account = accounts[n][0]
        older: int | None = None if days is None else 200
        for k, ago in enumerate((days, older)):
            secret = "user:" + f"{scale.rng.getrandbits(224):056x}"
            hashed = token_hash(secret)
            seen = None if ago is None else now - ago * DAY_MS - HOUR_MS
            c.execute(
                "INSERT INTO tokens(secret_hash, kind, user_id, created_at)"
                " VALUES(?, 'personal', ?, ?)",
                (hashed, account, created + k * DAY_MS),
            )
            c.execute(
                "INSERT INTO personal_access_tokens(secret_hash, description, expires_at,"
                " seen_at) VALUES(?, ?, ?, ?)",
                (hashed, f"scale-sa-{n + 1:02d} token {k + 1}", now + 365 * DAY_MS, seen),
            )


def _plant_custom_roles(scale: AccessScale) -> None:
    """8 custom roles: `Scale root role 1` to `4` (`root-custom`; 1 and 2 the root roles of
    `scale-sa-01` and `-02`, 3 and 4 held by nobody) and `Scale project role 1` to `4`
    (`custom`; 1 held by `scale-sa-03` in `scale-project-001`, 2 by `Scale group 001` in
    `scale-project-002`, 3 and 4 held nowhere). Each with a permission or two."""
    c = scale.c
    start = int(c.execute("SELECT coalesce(max(id), 0) FROM roles").fetchone()[0]) + 1
    held = CUSTOM_ROOT_ROLES_HELD
    roots = [(start + n, f"Scale root role {n + 1}", "root-custom",
              "Planted by --scale: " + ("held" if n < held else "held by nobody"))
             for n in range(CUSTOM_ROOT_ROLES_HELD + CUSTOM_ROOT_ROLES_UNUSED)]  # fmt: skip
    first = start + len(roots)
    held = CUSTOM_PROJECT_ROLES_HELD
    count = CUSTOM_PROJECT_ROLES_HELD + CUSTOM_PROJECT_ROLES_UNUSED
    projects = [(first + n, f"Scale project role {n + 1}", "custom",
                 "Planted by --scale: " + ("held" if n < held else "held nowhere"))
                for n in range(count)]  # fmt: skip
    c.executemany("INSERT INTO roles(id, name, type, description) VALUES(?, ?, ?, ?)",
                  roots + projects)  # fmt: skip
    c.executemany(
        "INSERT INTO role_permissions(role_id, permission, environment) VALUES(?, ?, ?)",
        [(r[0], p, "") for r in roots for p in ("CREATE_PROJECT", "UPDATE_APPLICATION")]
        + [(r[0], "UPDATE_FEATURE", "") for r in projects]
        + [(r[0], "UPDATE_FEATURE_STRATEGY", "production") for r in projects],
    )
    sa = dict(c.execute("SELECT username, id FROM users WHERE username LIKE 'scale-sa-%'"))
    for n, role in enumerate(roots[:CUSTOM_ROOT_ROLES_HELD]):
        c.execute(
            "UPDATE users SET root_role = ? WHERE id = ?", (role[0], sa[f"scale-sa-{n + 1:02d}"])
        )
    at = scale.now - 5 * DAY_MS
    c.execute(
        "INSERT INTO project_roles(project, role_id, user_id, group_id, created_at)"
        " VALUES(?, ?, ?, NULL, ?)",
        (scale.projects[0], projects[0][0], sa["scale-sa-03"], at),
    )
    c.execute(
        "INSERT INTO project_roles(project, role_id, user_id, group_id, created_at)"
        " VALUES(?, ?, NULL, ?, ?)",
        (scale.projects[1], projects[1][0], scale.group_ids[0], at),
    )


ACCESS_SCALE_PLANTERS += [_plant_service_accounts, _plant_custom_roles]


# --------------------------------------------------------------------------- flag configuration
# (issue 37, slice 1): a third environment, `staging`, and environments that differ as an
# administrator meets them. Its own generator, after everything else, so the rest of the demo
# is what it was.

#: the demo's environments in their order, with their types
DEMO_ENVIRONMENTS = (("development", "development"), ("staging", "test"),
                     ("production", "production"))  # fmt: skip


def gradual_in_stages(i: int) -> bool:
    """The flags (by their place in the demo's list) rolled out to everyone in staging and to
    a quarter in production."""
    return i % 6 == 2


def has_strategy_variants(i: int) -> bool:
    """The flags whose staging and production strategies have variants (different ones)."""
    return i % 5 == 3


def has_flag_variants(i: int) -> bool:
    """The flags with variants of their own in production, and in no other environment."""
    return i % 8 == 5


def _flag_configuration(
    c: sqlite3.Connection, now: int, features: list[tuple[str, str, bool]]
) -> None:
    """`staging` (type `test`, between development and production) in every project, each flag
    in it as in development (on or off, the same rollout) but: gradual rollouts at 100% in
    staging and 25% in production (`gradual_in_stages`), strategy variants in staging and
    production that differ (`has_strategy_variants`), flag variants in production alone
    (`has_flag_variants`); the production-only constraints and the flags on in development and
    off in production are the demo's own. Staging's strategies have no constraints, so the
    context fields' usage is what it was. The archived flags were archived before staging came
    (their archive entries are as they were)."""
    from sandbox.store.roles import seed_built_in_permissions

    if c.execute("SELECT 1 FROM sqlite_master WHERE name = 'project_environments'").fetchone() \
            is None:  # fmt: skip
        return  # a database at a schema before flag configuration (tests make such)
    rng = random.Random(37)
    for order, (env, kind) in enumerate(DEMO_ENVIRONMENTS, start=1):
        c.execute(
            "INSERT INTO environments(name, type, sort_order) VALUES(?, ?, ?)"
            " ON CONFLICT(name) DO UPDATE SET sort_order = excluded.sort_order",
            (env, kind, order),
        )
    c.execute(
        "INSERT OR IGNORE INTO project_environments(project, environment)"
        " SELECT id, 'staging' FROM projects"
    )
    seed_built_in_permissions(c)  # Owner and Member hold their environment permissions there
    variants = {
        "staging": [{"name": "control", "weight": 500, "weightType": "variable",
                     "stickiness": "default"},
                    {"name": "treatment", "weight": 500, "weightType": "variable",
                     "stickiness": "default", "payload": {"type": "string", "value": "new"}}],
        "production": [{"name": "control", "weight": 1000, "weightType": "variable",
                        "stickiness": "default"}],
    }  # fmt: skip
    for i, (name, project, archived) in enumerate(features):
        if archived:  # archived before staging came: the archive shows what it showed
            continue
        dev = c.execute(
            "SELECT fe.enabled, s.parameters FROM feature_environments fe"
            " JOIN strategies s ON s.feature = fe.feature AND s.environment = fe.environment"
            " WHERE fe.feature = ? AND fe.environment = 'development'",
            (name,),
        ).fetchone()
        parameters = json.loads(dev["parameters"])
        if gradual_in_stages(i):
            parameters["rollout"] = "100"
            production = json.loads(c.execute(
                "SELECT parameters FROM strategies WHERE feature = ?"
                " AND environment = 'production'", (name,)).fetchone()[0])  # fmt: skip
            production["rollout"] = "25"
            c.execute(
                "UPDATE strategies SET parameters = ? WHERE feature = ?"
                " AND environment = 'production'",
                (json.dumps(production), name),
            )
        c.execute(
            "INSERT INTO feature_environments(feature, environment, enabled) VALUES(?, ?, ?)",
            (name, "staging", dev["enabled"]),
        )
        c.execute(
            "INSERT INTO strategies(id, feature, project, environment, name, title, parameters,"
            " constraints, variants, created_at)"
            " VALUES(?, ?, ?, 'staging', 'flexibleRollout', ?, ?, '[]', ?, ?)",
            (str(uuid.UUID(int=rng.getrandbits(128))), name, project,
             "Everyone in staging" if gradual_in_stages(i) else None, json.dumps(parameters),
             json.dumps(variants["staging"] if has_strategy_variants(i) else []),
             now - rng.randrange(1, 60) * DAY_MS),
        )  # fmt: skip
        if has_strategy_variants(i):
            c.execute(
                "UPDATE strategies SET variants = ? WHERE feature = ?"
                " AND environment = 'production'",
                (json.dumps(variants["production"]), name),
            )
        if has_flag_variants(i):
            flag_variants = [
                {"name": "blue", "weight": 700, "weightType": "variable", "stickiness": "userId",
                 "overrides": []},
                {"name": "green", "weight": 300, "weightType": "fix", "stickiness": "userId",
                 "payload": {"type": "json", "value": '{"color": "green"}'}, "overrides": []},
            ]  # fmt: skip
            c.execute(
                "UPDATE feature_environments SET variants = ? WHERE feature = ?"
                " AND environment = 'production'",
                (json.dumps(flag_variants), name),
            )


# ------------------------------------------------------------- flag extras (issue 37, slice 2)

#: the demo's segments: name, description, project (None: every project), constraints
DEMO_SEGMENTS: list[tuple[str, str, str | None, list[tuple[str, str, list[str]]]]] = [
    ("Beta testers", "Customers who asked to try what is new", None,
     [("userId", "IN", ["1001", "1002", "1003", "1004"])]),
    ("EU customers", "Served from the EU regions", None,
     [("region", "IN", ["eu-west", "eu-central"])]),
    ("Internal staff", "Our own apps (not used by any strategy yet)", "web-shop",
     [("appName", "IN", ["web-frontend"]), ("userId", "STR_ENDS_WITH", ["@example.com"])]),
]  # fmt: skip
#: tag types beside `simple`: name, description, colour
DEMO_TAG_TYPES = [
    ("team", "The team that owns the flag", "#1E88E5"),
    ("ticket", "The ticket the flag's work is tracked in", "#F4511E"),
]
#: the custom strategy definition: name, title, description, parameters
DEMO_STRATEGY = (
    "byTenant", "By tenant", "On for the tenants listed",
    [{"name": "tenants", "type": "list", "description": "Tenant ids, comma separated",
      "required": True}],
)  # fmt: skip


def _flag_extras(c: sqlite3.Connection, now: int, features: list[tuple[str, str, bool]]) -> None:
    """Segments (two used by strategies: "Beta testers" in production only, "EU customers" in
    development only; "Internal staff" by none), the tag types `team` and `ticket` with tags on
    flags, three dependencies (in each project, its second live flag on its first; the one in
    payments on the parent being off) and the custom strategy `byTenant`. No randomness: the
    same flags every time. Nothing in a database at a schema before them (tests make such)."""
    if c.execute("SELECT 1 FROM sqlite_master WHERE name = 'segments'").fetchone() is None:
        return
    live: dict[str, list[str]] = {}
    for name, project, archived in features:
        if not archived:
            live.setdefault(project, []).append(name)
    for i, (segment, text, only_in, constraints) in enumerate(DEMO_SEGMENTS):
        c.execute(
            "INSERT INTO segments(name, description, project, constraints, created_by,"
            " created_at) VALUES(?, ?, ?, ?, 'admin', ?)",
            (segment, text, only_in,
             json.dumps([{"contextName": n, "operator": o, "values": v, "inverted": False,
                          "caseInsensitive": False} for n, o, v in constraints]),
             now - (30 - i) * DAY_MS),
        )  # fmt: skip
    segment_ids = {r[0]: r[1] for r in c.execute("SELECT name, id FROM segments")}

    def strategy_of(flag: str, environment: str) -> str:
        row = c.execute(
            "SELECT id FROM strategies WHERE feature = ? AND environment = ?"
            " ORDER BY created_at LIMIT 1",
            (flag, environment),
        ).fetchone()
        return str(row[0])

    web_shop, default, payments = live["web-shop"], live["default"], live["payments"]
    c.executemany(
        "INSERT INTO strategy_segments(strategy_id, segment_id) VALUES(?, ?)",
        [(strategy_of(web_shop[2], "production"), segment_ids["Beta testers"]),
         (strategy_of(default[2], "production"), segment_ids["Beta testers"]),
         (strategy_of(web_shop[3], "development"), segment_ids["EU customers"])],
    )  # fmt: skip
    c.executemany("INSERT INTO tag_types(name, description, color) VALUES(?, ?, ?)",
                  DEMO_TAG_TYPES)  # fmt: skip
    tagged = [
        (web_shop[0], "team", "storefront"),
        (web_shop[1], "team", "storefront"),
        (web_shop[2], "team", "growth"),
        (default[0], "team", "platform"),
        (payments[0], "team", "payments"),
        (payments[1], "team", "payments"),
        (web_shop[0], "ticket", "SHOP-142"),
        (payments[0], "ticket", "PAY-77"),
        (web_shop[1], "simple", "ui"),
        (default[1], "simple", "experiment"),
    ]
    c.executemany("INSERT OR IGNORE INTO tags(type, value, created_at) VALUES(?, ?, ?)",
                  [(t, v, now - 20 * DAY_MS) for _, t, v in tagged])  # fmt: skip
    c.executemany(
        "INSERT INTO feature_tags(feature, tag_type, tag_value, created_at, created_by_user_id)"
        " VALUES(?, ?, ?, ?, 1)",
        [(f, t, v, now - 20 * DAY_MS) for f, t, v in tagged],
    )
    c.executemany(
        "INSERT INTO feature_dependencies(parent, child, enabled, variants) VALUES(?, ?, ?, ?)",
        [(web_shop[0], web_shop[1], 1, None), (default[0], default[1], 1, '["blue"]'),
         (payments[0], payments[1], 0, None)],
    )  # fmt: skip
    name, title, text, parameters = DEMO_STRATEGY
    c.execute(
        "INSERT INTO strategy_definitions(name, title, description, parameters, created_at)"
        " VALUES(?, ?, ?, ?, ?)",
        (name, title, text, json.dumps(parameters), now - 40 * DAY_MS),
    )


# ------------------------------------------------ `--scale` alone: the flags set (issue 37)

#: how many flags `--scale` plants, over how many of its projects (500 a project)
SCALE_FLAGS = 10_000
SCALE_FLAG_PROJECTS = 20
#: the environments they are configured in (staging made where the database has none)
SCALE_ENVIRONMENTS = ("development", "staging", "production")


def scale_flag(k: int) -> tuple[str, str]:
    """The `k`th planted flag's name and project (`scale-flag-00000` in `scale-project-001`)."""
    return (
        f"scale-flag-{k:05d}",
        f"scale-project-{k // (SCALE_FLAGS // SCALE_FLAG_PROJECTS) + 1:03d}",
    )


def _plant_flags(scale: AccessScale) -> None:
    """**10,000 flags** `scale-flag-00000` to `-09999`, 500 in each of `scale-project-001` to
    `-020`, of every type, each in development, staging and production with **two strategies**
    there: a gradual rollout (100% in development and staging, `k % 100`% in production) and a
    remote address list (a few addresses) with a `region` constraint (the context field planted
    where the database has none): strategy types every release from 5.12 to 8.2 has, so that
    an import takes them (8.2 has no `userWithId`); on in development and staging,
    on in production for every second flag. What the comparison and promotion benchmarks
    (bench/promote.py) read, compare and copy between two sandboxes. Deterministic: the ids
    come from the set's generator."""
    c, rng, now = scale.c, scale.rng, scale.now
    c.execute(
        "INSERT OR IGNORE INTO environments(name, type, sort_order) VALUES('staging', 'test', 2)"
    )
    c.execute("UPDATE environments SET sort_order = 3 WHERE name = 'production'")
    projects = [f"scale-project-{p:03d}" for p in range(1, SCALE_FLAG_PROJECTS + 1)]
    c.executemany(
        "INSERT OR IGNORE INTO project_environments(project, environment) VALUES(?, ?)",
        [(p, env) for p in projects for env in SCALE_ENVIRONMENTS],
    )
    c.execute(
        "INSERT OR IGNORE INTO context_fields(name, description, stickiness, sort_order,"
        " legal_values, created_at) VALUES('region', 'Where the customer is served from', 1, 5,"
        " ?, ?)",
        (json.dumps([{"value": "eu"}, {"value": "us"}]), now),
    )
    types = list(TYPE_FOR_THING.values())
    flags: list[tuple[Any, ...]] = []
    places: list[tuple[Any, ...]] = []
    strategies: list[tuple[Any, ...]] = []
    for k in range(SCALE_FLAGS):
        name, project = scale_flag(k)
        flags.append((name, project, types[k % len(types)], f"Planted flag {k} (--scale)",
                      now - (k % 700) * DAY_MS))  # fmt: skip
        for order, env in enumerate(SCALE_ENVIRONMENTS):
            places.append((name, env, int(env != "production" or k % 2 == 0)))
            rollout = str(k % 100) if env == "production" else "100"
            strategies.append((
                str(uuid.UUID(int=rng.getrandbits(128))), name, project, env,
                "flexibleRollout", None,
                json.dumps({"rollout": rollout, "stickiness": "default", "groupId": name}),
                "[]", 0, now - order * DAY_MS,
            ))  # fmt: skip
            strategies.append((
                str(uuid.UUID(int=rng.getrandbits(128))), name, project, env, "remoteAddress",
                "Testers", json.dumps({"IPs": ",".join(f"10.{k // 256 % 256}.{k % 256}.{i}"
                                                       for i in (1, 2, 3))}),
                json.dumps([{"contextName": "region", "operator": "IN", "values": ["eu", "us"],
                             "caseInsensitive": False, "inverted": False}]),
                1, now - order * DAY_MS,
            ))  # fmt: skip
    c.execute("PRAGMA defer_foreign_keys = ON")
    c.executemany(
        "INSERT INTO feature_environments(feature, environment, enabled) VALUES(?, ?, ?)", places
    )
    c.executemany(
        "INSERT INTO features(name, project, type, description, created_at) VALUES(?, ?, ?, ?, ?)",
        flags,
    )
    c.executemany(
        "INSERT INTO strategies(id, feature, project, environment, name, title, parameters,"
        " constraints, sort_order, created_at) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        strategies,
    )
    c.executemany(
        "INSERT OR IGNORE INTO strategy_context_fields(strategy_id, context_name) VALUES(?, ?)",
        [(s[0], "region") for s in strategies if s[4] == "remoteAddress"],
    )


ACCESS_SCALE_PLANTERS.append(_plant_flags)

#: the event log's scale (issue 38): how many events `_plant_events` plants, and how far apart
SCALE_EVENTS = 100_000
SCALE_EVENT_STEP_MS = 5 * 60 * 1000
#: what the planted events do, in turn: (type, in an environment, logs `preData`, logs `data`)
SCALE_EVENT_KINDS: tuple[tuple[str, bool, bool, bool], ...] = (
    ("feature-created", False, False, True),
    ("feature-strategy-add", True, False, True),
    ("feature-environment-enabled", True, False, False),
    ("feature-strategy-update", True, True, True),
    ("feature-updated", False, True, True),
    ("feature-environment-disabled", True, False, False),
    ("feature-strategy-remove", True, True, False),
    ("feature-environment-enabled", True, False, False),
)


def scale_event_user(k: int, user_ids: list[int]) -> int:
    """Who made the `k`th planted event: the admin API token (-42) for every tenth, else one
    of the first 100 planted users."""
    return -42 if k % 10 == 0 else user_ids[k % 100]


def _plant_events(scale: AccessScale) -> None:
    """**100,000 events** (issue 38's event log at scale): over the 10,000 planted flags
    (`scale-flag-<k % 10000>`, in their projects), 5 minutes apart, the newest now and the
    oldest about 347 days ago, ids in time order; of the types of `SCALE_EVENT_KINDS` in turn
    (12,500 each, `feature-environment-enabled` 25,000), those in an environment in
    development, staging or production by turns; made by the admin API token (every tenth,
    "admin", -42) or one of the first 100 planted users (`scale_event_user`); with `preData`
    and `data` as the kind logs them (small objects: the flag, the strategy). Two
    `executemany`s in the set's transaction."""
    c, now, user_ids = scale.c, scale.now, scale.user_ids
    names = {
        r[0]: r[1]
        for r in c.execute(
            "SELECT id, username FROM users WHERE id IN (%s)" % ",".join("?" * 100),  # noqa: UP031
            user_ids[:100],
        )
    }
    names[-42] = "admin"
    start = int(c.execute("SELECT coalesce(max(id), 0) FROM events").fetchone()[0]) + 1
    events: list[tuple[Any, ...]] = []
    data: list[tuple[Any, ...]] = []
    for k in range(SCALE_EVENTS):
        kind, in_env, pre, post = SCALE_EVENT_KINDS[k % len(SCALE_EVENT_KINDS)]
        name, project = scale_flag(k % SCALE_FLAGS)
        env = SCALE_ENVIRONMENTS[k // len(SCALE_EVENT_KINDS) % 3] if in_env else None
        by = scale_event_user(k, user_ids)
        at = now - (SCALE_EVENTS - 1 - k) * SCALE_EVENT_STEP_MS
        events.append((start + k, at, kind, project, name, env, names[by], by,
                       f"**{names[by]}** triggered **{kind}** on `{name}`"))  # fmt: skip
        if pre or post:
            thing: dict[str, Any] = (
                {"name": "flexibleRollout", "id": f"s-{k}", "parameters": {"rollout": "50"}}
                if env else {"name": name, "project": project, "description": f"flag {k}"}
            )  # fmt: skip
            after = {**thing, "parameters": {"rollout": "100"}} if env else {
                **thing, "description": f"flag {k}, changed"}  # fmt: skip
            data.append((start + k, json.dumps(thing) if pre else None,
                         json.dumps(after if pre else thing) if post else None))  # fmt: skip
    c.executemany(
        "INSERT INTO events(id, created_at, type, project, feature, environment, created_by,"
        " created_by_user_id, summary) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)",
        events,
    )
    c.executemany("INSERT INTO event_data(event_id, pre_data, data) VALUES(?, ?, ?)", data)


ACCESS_SCALE_PLANTERS.append(_plant_events)
