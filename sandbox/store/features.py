"""Flags: a project's flags, creating and archiving one, adding a strategy."""

from __future__ import annotations

import json
import sqlite3
import uuid

from app.api import models as m
from sandbox.store.core import DAY_MS, Principal, Refusal, not_found, to_dt
from sandbox.store.projects import Projects

#: days after creation at which a feature of each type counts as stale (None: never)
STALE_AFTER_DAYS: dict[str, int | None] = {
    "release": 40,
    "experiment": 40,
    "operational": 7,
    "kill-switch": None,
    "permission": None,
}


def stale_at(feature_type: str, created_at: int, now: int) -> bool:
    """Whether a flag of this type made at `created_at` counts as stale at `now`."""
    days = STALE_AFTER_DAYS.get(feature_type)
    return days is not None and now - created_at > days * DAY_MS


class Features(Projects):
    def _feature_row(self, project: str, name: str) -> sqlite3.Row:
        row = self.conn.execute(
            "SELECT * FROM features WHERE name = ? AND project = ?", (name, project)
        ).fetchone()
        if row is None:
            raise not_found(f"Could not find feature {name} in project {project}")
        return row  # type: ignore[no-any-return]

    def is_stale(self, feature_type: str, created_at: int) -> bool:
        return stale_at(feature_type, created_at, self.clock())

    def _feature(self, row: sqlite3.Row) -> m.Feature:
        return m.Feature(
            name=row["name"],
            type=row["type"],
            description=row["description"],
            project=row["project"],
            impressionData=bool(row["impression_data"]),
            createdAt=to_dt(row["created_at"]),
            archivedAt=to_dt(row["archived_at"]),
            stale=self.is_stale(row["type"], row["created_at"]),
        )

    def project_features(self, project: str) -> m.FeatureList:
        """A project's flags, not the archived ones, by name."""
        self._project_row(project)
        rows = self.conn.execute(
            "SELECT * FROM features WHERE project = ? AND archived_at IS NULL ORDER BY name",
            (project,),
        ).fetchall()
        return m.FeatureList(version=1, features=[self._feature(r) for r in rows])

    def create_feature(self, project: str, req: m.CreateFeature, by: Principal) -> m.Feature:
        self._project_row(project)
        now = self.clock()
        with self.tx() as c:
            if c.execute("SELECT 1 FROM features WHERE name = ?", (req.name,)).fetchone():
                raise Refusal(409, "NameExistsError", f"A flag named {req.name!r} already exists")
            c.execute(
                "INSERT INTO features(name, project, type, description, impression_data,"
                " created_at) VALUES(?, ?, ?, ?, ?, ?)",
                (req.name, project, req.type, req.description, int(req.impressionData), now),
            )
            c.execute(
                "INSERT INTO feature_environments(feature, environment, enabled)"
                " SELECT ?, name, 0 FROM environments",
                (req.name,),
            )
            self._event(c, "feature-created", by, project=project, feature=req.name,
                        summary=f"**{by.user_name}** created feature flag "
                        f"[`{req.name}`](/projects/{project}/features/{req.name}) "
                        f"in project **{project}**")  # fmt: skip
        return self._feature(self._feature_row(project, req.name))

    def archive_feature(self, project: str, name: str, by: Principal) -> None:
        row = self._feature_row(project, name)
        if row["archived_at"] is not None:
            return
        with self.tx() as c:
            c.execute("UPDATE features SET archived_at = ? WHERE name = ?", (self.clock(), name))
            self._event(c, "feature-archived", by, project=project, feature=name,
                        summary=f"**{by.user_name}** archived feature flag `{name}` "
                        f"in project **{project}**")  # fmt: skip

    def add_strategy(
        self,
        project: str,
        feature: str,
        environment: str,
        req: m.CreateFeatureStrategy,
        by: Principal,
    ) -> m.FeatureStrategy:
        self._feature_row(project, feature)
        env = self.conn.execute(
            "SELECT 1 FROM environments WHERE name = ?", (environment,)
        ).fetchone()
        if env is None:
            raise not_found(f"Could not find environment {environment}")
        strategy_id = str(uuid.uuid4())
        constraints = [c.model_dump() for c in req.constraints]
        with self.tx() as c:
            c.execute(
                "INSERT INTO strategies(id, feature, project, environment, name, title, disabled,"
                " parameters, constraints, created_at) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (strategy_id, feature, project, environment, req.name, req.title,
                 int(req.disabled), json.dumps(req.parameters), json.dumps(constraints),
                 self.clock()),
            )  # fmt: skip
            c.executemany(
                "INSERT OR IGNORE INTO strategy_context_fields(strategy_id, context_name)"
                " VALUES(?, ?)",
                [(strategy_id, k.contextName) for k in req.constraints],
            )
            self._event(c, "feature-strategy-add", by, project=project, feature=feature,
                        environment=environment,
                        summary=f"**{by.user_name}** added strategy **{req.name}** to "
                        f"`{feature}` in *{environment}*")  # fmt: skip
        return m.FeatureStrategy(
            id=strategy_id,
            name=req.name,
            featureName=feature,
            environment=environment,
            constraints=constraints,
            parameters=dict(req.parameters),
        )
