"""The instance's own record and settings (issue 38): its statistics, maintenance mode, the
frontend API's CORS origins, and banners (Unleash Enterprise 5.7+; `sandbox.app` serves them only
when the sandbox plays no open-source release).

Maintenance mode and the CORS origins are settings, kept as Unleash keeps them: JSON under
Unleash's keys (`maintenance.mode`, `unleash.frontend`) in `settings`. Changing one logs what
Unleash's setting service logs: `setting-created` with `data` `{id, ...value}` the first time
(no such row yet), `setting-updated` with `preData` the value before (without `id`) and `data`
`{id, ...value}` after. While maintenance is on, `sandbox.routes.endpoint` refuses every admin
write but the maintenance switch itself (`in_maintenance`, read on each such request).

The statistics are computed on each request from the sandbox's data (a new flag counts at once,
as on Unleash 8.2); `sum` is Unleash's SHA-256 of the instance id and seven of the counts."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from typing import Any

from app.api import models as m
from app.api.wire import invalid_origins
from sandbox.store.core import DAY_MS, Core, Principal, not_found, to_dt
from sandbox.store.users import bad_data

#: Unleash's setting keys
MAINTENANCE_KEY = "maintenance.mode"
FRONTEND_KEY = "unleash.frontend"
#: the origins before any is set (Unleash's default `UNLEASH_FRONTEND_API_ORIGINS`)
DEFAULT_ORIGINS = ["*"]

#: what `sandbox.routes.endpoint` answers an admin write while maintenance is on (503,
#: `{message}` alone on every release: Unleash's maintenance middleware)
MAINTENANCE_MESSAGE = "Unleash is currently in maintenance mode."


def _months_back(now_ms: int, count: int) -> list[str]:
    """`YYYY-MM` of this month and the `count - 1` before it, newest first."""
    year, month = time.gmtime(now_ms / 1000)[:2]
    months = []
    for _ in range(count):
        months.append(f"{year:04d}-{month:02d}")
        year, month = (year, month - 1) if month > 1 else (year - 1, 12)
    return months


def _banner(row: sqlite3.Row) -> m.Banner:
    body = json.loads(row["body"])
    return m.Banner.model_validate({"id": row["id"], **body, "createdAt": to_dt(row["created_at"])})


def _banner_data(banner: m.Banner) -> dict[str, Any]:
    """A banner as its events carry it."""
    data: dict[str, Any] = banner.model_dump(mode="json")
    return data


class Instance(Core):
    # ------------------------------------------------------------------ settings

    def _stored_setting(self, key: str) -> dict[str, Any] | None:
        text = self.setting(key)
        if text is None:
            return None
        value = json.loads(text)
        return value if isinstance(value, dict) else None

    def _change_setting(
        self, c: sqlite3.Connection, key: str, value: dict[str, Any], by: Principal, what: str
    ) -> None:
        """The setting `key` becomes `value`, with the event Unleash's setting service logs."""
        before = self._stored_setting(key)
        self.set_setting(key, json.dumps(value))
        data = {"id": key, **value}
        verb = "created" if before is None else "updated"
        said = f"**{by.user_name}** {verb} setting **{key}** ({what})"
        self._event(c, f"setting-{verb}", by, pre_data=before, data=data, summary=said)

    def in_maintenance(self) -> bool:
        """Whether maintenance mode is on."""
        value = self._stored_setting(MAINTENANCE_KEY)
        return bool(value and value.get("enabled") is True)

    def maintenance(self) -> m.Maintenance:
        """`GET /api/admin/maintenance`: `{enabled}` (false until it is set)."""
        return m.Maintenance(enabled=self.in_maintenance())

    def set_maintenance(self, enabled: bool, by: Principal) -> None:
        """`POST /api/admin/maintenance` (204), logged as Unleash logs it (module docstring), a
        change to the same state too."""
        with self.tx() as c:
            self._change_setting(c, MAINTENANCE_KEY, {"enabled": enabled}, by,
                                 "maintenance mode " + ("on" if enabled else "off"))  # fmt: skip

    def frontend_origins(self) -> list[str]:
        """The frontend API's CORS origins (`ui-config`'s `frontendApiOrigins`)."""
        value = self._stored_setting(FRONTEND_KEY)
        origins = None if value is None else value.get("frontendApiOrigins")
        return list(origins) if isinstance(origins, list) else list(DEFAULT_ORIGINS)

    def set_frontend_origins(self, origins: list[str] | None, by: Principal) -> None:
        """`POST /api/admin/ui-config/cors` and 5.x's `POST /api/admin/ui-config`
        `{frontendSettings}` (204): without the list 404 NotFoundError "The requested resource
        could not be found" (Unleash's controller); an origin that is not one 400 BadDataError
        "…invalid data: Invalid origin: <it>" (`app.api.wire.invalid_origins`; measured); `[]`
        is taken. The other frontend settings are kept."""
        if origins is None:
            raise not_found("The requested resource could not be found")
        problem = invalid_origins(origins)
        if problem is not None:
            raise bad_data(problem)
        with self.tx() as c:
            settings = self._stored_setting(FRONTEND_KEY) or {}
            self._change_setting(c, FRONTEND_KEY, {**settings, "frontendApiOrigins": origins},
                                 by, "CORS origins")  # fmt: skip

    # ------------------------------------------------------------------ statistics

    def _count(self, sql: str, args: tuple[Any, ...] = ()) -> int:
        row = self.conn.execute(sql, args).fetchone()
        return int(row[0] or 0) if row is not None else 0

    def statistics(self, fields: tuple[str, ...] | None = None, *,
                   tokens_by_type: bool = True) -> m.InstanceStatistics:  # fmt: skip
        """`GET /api/admin/instance-admin/statistics`, computed now from the sandbox's data:
        `fields` those a played release sends (all, unplayed), `tokens_by_type` False for 5.x's
        `apiTokens: {}`. What the sandbox has none of (SSO, Edge, release plans) is 0 or false;
        the password login is on."""
        now = self.clock()
        with self.snapshot():
            stats = self._statistics(now, tokens_by_type)
        chosen = stats if fields is None else {k: v for k, v in stats.items() if k in fields}
        return m.InstanceStatistics.model_validate(chosen)

    def _statistics(self, now: int, tokens_by_type: bool) -> dict[str, Any]:
        count = self._count
        users = count("SELECT count(*) FROM users WHERE account_type = 'User'")
        flags = count("SELECT count(*) FROM features WHERE archived_at IS NULL")
        projects = count("SELECT count(*) FROM projects")
        roles = count("SELECT count(*) FROM roles")
        groups = count("SELECT count(*) FROM groups_")
        environments = count("SELECT count(*) FROM environments")
        segments = count("SELECT count(*) FROM segments")
        instance_id = self.instance_id() or ""
        tokens: dict[str, int] = {}
        if tokens_by_type:  # the API tokens listed (`sandbox.store.api_tokens`), by type
            types = [str(run["api_type"] or "") for run in self.run_token_rows.values()]
            types += [str(r[0] or "") for r in self.conn.execute(
                "SELECT api_type FROM tokens WHERE handle IS NOT NULL AND kind != 'personal'"
            )]  # fmt: skip
            for kind in types:
                tokens[kind] = tokens.get(kind, 0) + 1

        def seen_within(days: int) -> int:
            return count(
                "SELECT count(*) FROM users WHERE account_type = 'User'"
                " AND max(coalesce(seen_at, 0), coalesce(pat_seen_at, 0)) >= ?",
                (now - days * DAY_MS,),
            )

        def apps_within(days: int | None) -> int:
            if days is None:
                return count("SELECT count(*) FROM client_applications")
            return count("SELECT count(*) FROM client_applications WHERE last_seen >= ?",
                         (now - days * DAY_MS,))  # fmt: skip

        def production_changes(days: int) -> int:
            return count(
                "SELECT count(*) FROM events e JOIN environments v ON v.name = e.environment"
                " WHERE v.type = 'production' AND e.created_at >= ?",
                (now - days * DAY_MS,),
            )

        day_start = now - now % DAY_MS
        previous_day = (day_start - DAY_MS, day_start)
        sum_text = f"{instance_id}{users}{flags}{projects}{roles}{groups}{environments}{segments}"
        return {
            "timestamp": to_dt(now),
            "instanceId": instance_id,
            "versionOSS": "",  # the route fills in the release played, or the sandbox's version
            "versionEnterprise": "",
            "users": users,
            "serviceAccounts": count(
                "SELECT count(*) FROM users WHERE account_type = 'Service Account'"
            ),
            "apiTokens": tokens,
            "activeUsers": {f"last{d}": seen_within(d) for d in (7, 30, 60, 90)},
            # Unleash counts the users created through it in the last 30 days, deleted ones
            # too, the admin its migration made not (0 on a fresh 8.2 with `users: 1`)
            "licensedUsers": count(
                "SELECT count(*) FROM events WHERE type = 'user-created' AND created_at >= ?",
                (now - 30 * DAY_MS,),
            ),
            "featureToggles": flags,
            "archivedFeatureToggles": count(
                "SELECT count(*) FROM features WHERE archived_at IS NOT NULL"
            ),
            "projects": projects,
            "contextFields": count("SELECT count(*) FROM context_fields"),
            "roles": roles,
            "customRootRoles": count("SELECT count(*) FROM roles WHERE type = 'root-custom'"),
            "customRootRolesInUse": count(
                "SELECT count(*) FROM roles r WHERE r.type = 'root-custom' AND"
                " (EXISTS (SELECT 1 FROM users u WHERE u.root_role = r.id) OR"
                "  EXISTS (SELECT 1 FROM groups_ g WHERE g.root_role = r.id))"
            ),
            "groups": groups,
            "environments": environments,
            "segments": segments,
            "strategies": count("SELECT count(*) FROM strategy_definitions WHERE deprecated = 0"),
            "SAMLenabled": False,
            "OIDCenabled": False,
            "passwordAuthEnabled": True,
            "SCIMenabled": False,
            "clientApps": [
                {"range": "7d", "count": apps_within(7)},
                {"range": "30d", "count": apps_within(30)},
                {"range": "allTime", "count": apps_within(None)},
            ],
            "featureExports": count("SELECT count(*) FROM events WHERE type = 'features-exported'"),
            "featureImports": count("SELECT count(*) FROM events WHERE type = 'features-imported'"),
            "productionChanges": {f"last{d}": production_changes(d) for d in (30, 60, 90)},
            "previousDayMetricsBucketsCount": {
                "enabledCount": count(
                    "SELECT count(*) FROM client_metrics WHERE window_start >= ?"
                    " AND window_start < ?",
                    previous_day,
                ),
                "variantCount": count(
                    "SELECT count(*) FROM client_metric_variants WHERE window_start >= ?"
                    " AND window_start < ?",
                    previous_day,
                ),
            },
            "maxEnvironmentStrategies": count(
                "SELECT max(n) FROM (SELECT count(*) AS n FROM strategies s"
                " JOIN features f ON f.name = s.feature WHERE f.archived_at IS NULL"
                " GROUP BY s.feature, s.environment)"
            ),
            "maxConstraintValues": count(
                "SELECT max(json_array_length(c.value, '$.values')) FROM strategies s"
                " JOIN features f ON f.name = s.feature, json_each(s.constraints) c"
                " WHERE f.archived_at IS NULL AND json_valid(s.constraints)"
            ),
            "maxConstraints": count(
                "SELECT max(json_array_length(s.constraints)) FROM strategies s"
                " JOIN features f ON f.name = s.feature"
                " WHERE f.archived_at IS NULL AND json_valid(s.constraints)"
            ),
            "releaseTemplates": 0,
            "releasePlans": 0,
            "edgeInstanceUsage": {month: 0 for month in _months_back(now, 12)},
            "readOnlyUsers": count(
                "SELECT count(*) FROM users WHERE account_type = 'User' AND root_role = 3"
            ),
            "sum": hashlib.sha256(sum_text.encode()).hexdigest(),
        }

    # ------------------------------------------------------------------ banners (Enterprise)

    def list_banners(self) -> m.Banners:
        """`GET /api/admin/banners`: every banner, oldest first."""
        rows = self.conn.execute("SELECT * FROM banners ORDER BY id").fetchall()
        return m.Banners(banners=[_banner(r) for r in rows])

    def _banner_row(self, banner_id: int) -> sqlite3.Row:
        row = self.conn.execute("SELECT * FROM banners WHERE id = ?", (banner_id,)).fetchone()
        if row is None:
            raise not_found(f"Could not find banner with id {banner_id}")
        return row  # type: ignore[no-any-return]

    @staticmethod
    def _banner_body(req: m.CreateBanner) -> str:
        body = req.model_dump(mode="json")
        body["variant"] = body["variant"] or "info"
        return json.dumps(body)

    def create_banner(self, req: m.CreateBanner, by: Principal) -> m.Banner:
        """`POST /api/admin/banners` (201, with its location): a `banner-created` event with the
        banner as its `data`. An id is never given again (AUTOINCREMENT)."""
        with self.tx() as c:
            cursor = c.execute("INSERT INTO banners(body, created_at) VALUES(?, ?)",
                               (self._banner_body(req), self.clock()))  # fmt: skip
            made = _banner(self._banner_row(int(cursor.lastrowid or 0)))
            said = f"**{by.user_name}** created banner **{made.message}**"
            self._event(c, "banner-created", by, data=_banner_data(made), summary=said)
        return made

    def update_banner(self, banner_id: int, req: m.CreateBanner, by: Principal) -> m.Banner:
        """`PUT /api/admin/banners/:id` (200, the banner): replaced whole by the body; 404 for
        an unknown id; `banner-updated` with `preData` and `data`."""
        return self._replace_banner(banner_id, by, lambda _: self._banner_body(req))

    def switch_banner(self, banner_id: int, enabled: bool, by: Principal) -> m.Banner:
        """`POST /api/admin/banners/:id/on` and `/off` (200, the banner): `banner-updated`."""

        def switched(row: sqlite3.Row) -> str:
            return json.dumps({**json.loads(row["body"]), "enabled": enabled})

        return self._replace_banner(banner_id, by, switched)

    def _replace_banner(self, banner_id: int, by: Principal, body: Any) -> m.Banner:
        with self.tx() as c:
            row = self._banner_row(banner_id)
            before = _banner(row)
            c.execute("UPDATE banners SET body = ? WHERE id = ?", (body(row), banner_id))
            after = _banner(self._banner_row(banner_id))
            said = f"**{by.user_name}** updated banner **{before.message}**"
            self._event(c, "banner-updated", by, pre_data=_banner_data(before),
                        data=_banner_data(after), summary=said)  # fmt: skip
        return after

    def delete_banner(self, banner_id: int, by: Principal) -> None:
        """`DELETE /api/admin/banners/:id` (200, no body): 404 for an unknown id;
        `banner-deleted` with the banner as its `preData`."""
        with self.tx() as c:
            before = _banner(self._banner_row(banner_id))
            c.execute("DELETE FROM banners WHERE id = ?", (banner_id,))
            said = f"**{by.user_name}** deleted banner **{before.message}**"
            self._event(c, "banner-deleted", by, pre_data=_banner_data(before), summary=said)
