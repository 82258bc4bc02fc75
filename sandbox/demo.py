"""Deterministic demo data: the same people, groups, projects, flags and counts every time.

Times are placed relative to the moment the data is loaded, so "inactive for 200 days" stays true
of the same people whenever a demo database is made. Nothing here is random at run time: the
generator is seeded.
"""

from __future__ import annotations

import json
import random
import sqlite3
import unicodedata
import uuid
from typing import Any

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
