"""Client metrics: bulk batches in, and a flag's usage out."""

from __future__ import annotations

import json
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


class Metrics(Core):
    def ingest_bulk(self, batch: m.BulkMetricsItems) -> int:
        """Store a validated bulk batch in one transaction; returns the number of metric items.
        Its items are plain dicts (`m.BulkMetricsItems`): a field the body left out is absent,
        and gets the model's default here.

        Counts are summed per feature, application, environment and one-hour window before they
        touch the database, so a body of 500 items for 20 features is 20 row upserts.
        """
        now = self.clock()
        counts: dict[tuple[str, str, str, int], list[int]] = {}
        variants: dict[tuple[str, str, str, int, str], int] = {}
        windows: dict[datetime | int | None, int] = {}  # bodies repeat a few timestamps
        metrics: list[dict[str, Any]] = batch["metrics"]
        for metric in metrics:
            stamp = metric.get("timestamp")
            window = windows.get(stamp)
            if window is None:
                ts = time_to_ms(stamp, now)
                window = windows[stamp] = ts - ts % HOUR_MS
            key = (metric["featureName"], metric["appName"], metric["environment"], window)
            yes, no = metric.get("yes", 0), metric.get("no", 0)
            slot = counts.get(key)
            if slot is None:
                counts[key] = [yes, no]
            else:
                slot[0] += yes
                slot[1] += no
            for variant, n in metric.get("variants", {}).items():
                vkey = (*key, variant)
                variants[vkey] = variants.get(vkey, 0) + n
        with self.tx() as c:
            if batch["applications"]:
                self._upsert_applications(c, batch["applications"], now)
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
                    [(*k, v) for k, v in variants.items()],
                )
        return len(metrics)

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

    def _windows(self, feature: str, since: int) -> list[m.MetricsWindow]:
        rows = self.conn.execute(
            "SELECT * FROM client_metrics WHERE feature = ? AND window_start >= ?"
            " ORDER BY window_start, app_name, environment",
            (feature, since),
        ).fetchall()
        found: dict[tuple[str, str, int], dict[str, int]] = {}
        for v in self.conn.execute(
            "SELECT * FROM client_metric_variants WHERE feature = ? AND window_start >= ?",
            (feature, since),
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

    def feature_metrics_raw(self, feature: str, hours_back: int) -> m.FeatureMetricsRaw:
        now = self.clock()
        since = now - now % HOUR_MS - hours_back * HOUR_MS
        return m.FeatureMetricsRaw(version=1, maturity="stable", data=self._windows(feature, since))
