"""Client metrics: bulk batches in, and a flag's usage out."""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from app.api import models as m
from sandbox.store.core import HOUR_MS, Core, to_dt


def time_to_ms(value: datetime | int | None, default: int) -> int:
    if value is None:
        return default
    if isinstance(value, int):
        return value
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return int(value.timestamp() * 1000)


#: the largest sum a stored yes or no count holds (Unleash: a BIGINT column; SQLite's INTEGER is
#: the same 64 bits). A metric whose sum would pass it is not stored: Unleash answers 202 and
#: its flush then fails, losing the metric.
MAX_STORED_COUNT = 2**63 - 1
#: the largest sum of a variant's count (Unleash: an INTEGER column, 32 bits): the same
MAX_STORED_VARIANT = 2**31 - 1
#: Unleash's column widths (feature and application names VARCHAR(255), environment
#: VARCHAR(100)): a longer name is answered 202 and lost the same way
FEATURE_LIMIT, APP_LIMIT, ENVIRONMENT_LIMIT = 255, 255, 100
#: the hours a metric may fall in to be stored: those a date-time can show (years 1 to 9999).
#: Unleash takes years up to 275760 and shows them as "+275760-09-13T00:00:00.000Z", which no
#: RFC 3339 reader (flagdesk's included) can read; it loses those before year 1 like the rest.
FIRST_WINDOW = int(datetime(1, 1, 1, tzinfo=UTC).timestamp() * 1000)
LAST_WINDOW = int(datetime(9999, 12, 31, 23, tzinfo=UTC).timestamp() * 1000)

#: (feature, app, environment, window start)
Key = tuple[str, str, str, int]


class Metrics(Core):
    def ingest_bulk(
        self,
        batch: m.BulkMetricsItems,
        environment: str | None = None,
        *,
        drop_unknown_flags: bool = True,
    ) -> int:
        """Store a validated bulk batch in one transaction; returns the number of metric items
        stored. Its items are plain dicts (`m.BulkMetricsItems`): a field the body left out is
        absent, and gets the model's default here.

        What Unleash 8.2 answers 202 to and then drops is not stored either: metrics for
        another `environment` than the one given (the client token's, see
        `app.api.wire.accepted_environment`; None keeps every one), metrics whose yes and no
        are both 0 (their variants too), metrics of flags the server does not know (no live
        or archived flag of that name: Unleash's `filterExistingToggleNames` puts them in its
        "unknown flags" report and stores none of their counts, not even once the flag is
        created; 7 on, see `Played.drops_unknown_flag_metrics`), names longer than Unleash's
        columns, hours no date-time can show, and a metric whose sums would pass what the
        columns hold (`MAX_STORED_COUNT`, `MAX_STORED_VARIANT`): so whatever is stored can be
        read back.

        Counts are summed per feature, application, environment and one-hour window before they
        touch the database, so a body of 500 items for 20 features is 20 row upserts.
        """
        now = self.clock()
        counts: dict[Key, list[int]] = {}
        variants: dict[Key, dict[str, int]] = {}
        windows: dict[datetime | int | None, int] = {}  # bodies repeat a few timestamps
        metrics: list[dict[str, Any]] = batch["metrics"]
        for metric in metrics:
            yes, no = metric.get("yes", 0), metric.get("no", 0)
            if yes == 0 and no == 0:
                continue
            if environment is not None and metric["environment"] != environment:
                continue
            if (
                len(metric["featureName"]) > FEATURE_LIMIT
                or len(metric["appName"]) > APP_LIMIT
                or len(metric["environment"]) > ENVIRONMENT_LIMIT
            ):
                continue
            stamp = metric.get("timestamp")
            window = windows.get(stamp)
            if window is None:
                ts = time_to_ms(stamp, now)
                window = windows[stamp] = ts - ts % HOUR_MS
            if not FIRST_WINDOW <= window <= LAST_WINDOW:
                continue
            key = (metric["featureName"], metric["appName"], metric["environment"], window)
            slot = counts.get(key)
            if slot is None:
                counts[key] = [yes, no]
            else:
                slot[0] += yes
                slot[1] += no
            if metric.get("variants"):
                mine = variants.setdefault(key, {})
                for variant, n in metric["variants"].items():
                    mine[variant] = mine.get(variant, 0) + n
        with self.tx() as c:
            if batch["applications"]:
                self._upsert_applications(c, batch["applications"], now)
            if drop_unknown_flags:
                self._drop_unknown_flags(c, counts, variants)
            self._drop_overflowing(c, counts, variants)
            c.executemany(
                "INSERT INTO client_metrics(feature, app_name, environment, window_start, yes, no,"
                " updated_at) VALUES(?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT(feature, app_name, environment, window_start) DO UPDATE SET"
                " yes = yes + excluded.yes, no = no + excluded.no,"
                " updated_at = excluded.updated_at",
                [(*k, v[0], v[1], now) for k, v in counts.items()],
            )
            if variants:
                c.executemany(
                    "INSERT INTO client_metric_variants(feature, app_name, environment,"
                    " window_start, variant, count) VALUES(?, ?, ?, ?, ?, ?)"
                    " ON CONFLICT(feature, app_name, environment, window_start, variant)"
                    " DO UPDATE SET count = count + excluded.count",
                    [(*k, name, n) for k, named in variants.items() for name, n in named.items()],
                )
        return len(counts)

    def _drop_unknown_flags(
        self,
        c: sqlite3.Connection,
        counts: dict[Key, list[int]],
        variants: dict[Key, dict[str, int]],
    ) -> None:
        """Leave out of `counts` and `variants` each key whose flag the server does not know
        (none in `features`, live or archived, as Unleash's flag-name list holds both)."""
        names = sorted({k[0] for k in counts})
        known: set[str] = set()
        for i in range(0, len(names), 500):
            part = names[i : i + 500]
            known.update(
                r[0]
                for r in c.execute(
                    f"SELECT name FROM features WHERE name IN ({','.join('?' * len(part))})", part
                )
            )
        if len(known) == len(names):
            return
        for key in [k for k in counts if k[0] not in known]:
            del counts[key]
            variants.pop(key, None)

    def _drop_overflowing(
        self,
        c: sqlite3.Connection,
        counts: dict[Key, list[int]],
        variants: dict[Key, dict[str, int]],
    ) -> None:
        """Leave out of `counts` and `variants` each key whose stored sums would pass
        `MAX_STORED_COUNT` or `MAX_STORED_VARIANT` with this batch's added (the stored sums
        read in the caller's write transaction)."""
        if not counts:
            return
        stored: dict[Key, tuple[int, int]] = {}
        stored_variants: dict[tuple[str, str, str, int, str], int] = {}
        keys = list(counts)
        for i in range(0, len(keys), 200):
            part = keys[i : i + 200]
            where = " OR ".join(
                ["(feature = ? AND app_name = ? AND environment = ? AND window_start = ?)"]
                * len(part)
            )
            flat = [x for k in part for x in k]
            for r in c.execute(
                f"SELECT feature, app_name, environment, window_start, yes, no FROM client_metrics"
                f" WHERE {where}",
                flat,
            ):
                stored[(r[0], r[1], r[2], r[3])] = (r[4], r[5])
            if any(k in variants for k in part):
                for r in c.execute(
                    "SELECT feature, app_name, environment, window_start, variant, count"
                    f" FROM client_metric_variants WHERE {where}",
                    flat,
                ):
                    stored_variants[(r[0], r[1], r[2], r[3], r[4])] = r[5]
        for key in keys:
            yes, no = stored.get(key, (0, 0))
            slot = counts[key]
            over = yes + slot[0] > MAX_STORED_COUNT or no + slot[1] > MAX_STORED_COUNT
            over = over or any(
                stored_variants.get((*key, name), 0) + n > MAX_STORED_VARIANT
                for name, n in variants.get(key, {}).items()
            )
            if over:
                del counts[key]
                variants.pop(key, None)

    def _upsert_applications(
        self, c: sqlite3.Connection, apps: Sequence[dict[str, Any]], now: int
    ) -> None:
        """`apps`: `m.BulkApplicationItem`s (plain dicts; a field left out is absent)."""
        c.executemany(
            "INSERT INTO client_applications(app_name, created_at, last_seen) VALUES(?, ?, ?)"
            " ON CONFLICT(app_name) DO UPDATE SET last_seen = excluded.last_seen",
            [(a["appName"], now, now) for a in apps],
        )
        c.executemany(
            "INSERT INTO client_instances(app_name, instance_id, environment, sdk_version,"
            " strategies, interval_s, started, connect_via, last_seen)"
            " VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT(app_name, environment, instance_id) DO UPDATE SET"
            " sdk_version = excluded.sdk_version, strategies = excluded.strategies,"
            " interval_s = excluded.interval_s, started = excluded.started,"
            " connect_via = excluded.connect_via, last_seen = excluded.last_seen",
            [
                (
                    a["appName"], a["instanceId"], a["environment"], a.get("sdkVersion"),
                    json.dumps(a.get("strategies", [])), a.get("interval"),
                    time_to_ms(a.get("started"), now),
                    json.dumps([v.model_dump() for v in a.get("connectVia", [])]), now,
                )
                for a in apps
            ],
        )  # fmt: skip

    def _windows(self, feature: str, since: int, until: int = LAST_WINDOW) -> list[m.MetricsWindow]:
        rows = self.conn.execute(
            "SELECT * FROM client_metrics WHERE feature = ? AND window_start BETWEEN ? AND ?"
            " ORDER BY window_start, app_name, environment",
            (feature, since, until),
        ).fetchall()
        found: dict[tuple[str, str, int], dict[str, int]] = {}
        for v in self.conn.execute(
            "SELECT * FROM client_metric_variants WHERE feature = ?"
            " AND window_start BETWEEN ? AND ?",
            (feature, since, until),
        ):
            found.setdefault((v["app_name"], v["environment"], v["window_start"]), {})[
                v["variant"]
            ] = v["count"]
        return [
            m.MetricsWindow(
                featureName=r["feature"],
                appName=r["app_name"],
                environment=r["environment"],
                timestamp=to_dt(r["window_start"]),
                yes=r["yes"],
                no=r["no"],
                variants=found.get((r["app_name"], r["environment"], r["window_start"]), {}),
            )
            for r in rows
        ]

    def feature_usage(self, feature: str) -> m.FeatureUsage:
        now = self.clock()
        apps = [
            r[0]
            for r in self.conn.execute(
                "SELECT DISTINCT app_name FROM client_metrics WHERE feature = ? ORDER BY 1",
                (feature,),
            )
        ]
        return m.FeatureUsage(
            version=1,
            maturity="stable",
            featureName=feature,
            lastHourUsage=self._windows(feature, now - now % HOUR_MS - HOUR_MS),
            seenApplications=apps,
        )

    def feature_metrics_raw(self, feature: str, hours_back: float) -> m.FeatureMetricsRaw:
        """The stored windows of the last `hours_back` hours (1 to 48, see
        `sandbox.routes.metrics.hours_back`), as Unleash 8.2 reads them: its answer has one
        entry per hour of the last ceil(hours_back), the current one included (hours with
        nothing stored are there with zero counts on Unleash, left out here), and only rows
        of at most `hours_back` hours ago are read into them (a window of a later hour, or of
        an hour begun before that, is not shown)."""
        now = self.clock()
        hour = now - now % HOUR_MS
        since = max(hour - (math.ceil(hours_back) - 1) * HOUR_MS, now - int(hours_back * HOUR_MS))
        return m.FeatureMetricsRaw(
            version=1, maturity="stable", data=self._windows(feature, since, hour)
        )
