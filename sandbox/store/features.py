"""Flags: a project's flags, creating and archiving one; reviving archived flags and deleting
them for good, one by name or a project's many at once, as Unleash 8.2 does. A flag's
configuration per environment (strategies, variants, on and off) is `sandbox.store.flag_config`."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from app.api import models as m
from sandbox.store.core import DAY_MS, Principal, Refusal, not_found, to_dt, to_wire_time
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
            stale=self.stale_of(row),
        )

    def stale_of(self, row: sqlite3.Row) -> bool:
        """A flag's `stale`: the mark set on it (`PATCH`, `POST .../stale`) once one is, else
        the age rule of its type."""
        if row["stale"] is not None:
            return bool(row["stale"])
        return self.is_stale(row["type"], row["created_at"])

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
                " SELECT ?, environment, 0 FROM project_environments WHERE project = ?",
                (req.name, project),
            )
            # data: the flag as Unleash 8.2 logs it (preData none)
            data = {
                "name": req.name,
                "description": req.description,
                "type": req.type,
                "project": project,
                "stale": False,
                "createdAt": to_wire_time(now),
                "impressionData": bool(req.impressionData),
                "archived": False,
            }
            self._event(c, "feature-created", by, project=project, feature=req.name, data=data,
                        summary=f"**{by.user_name}** created feature flag "
                        f"[`{req.name}`](/projects/{project}/features/{req.name}) "
                        f"in project **{project}**")  # fmt: skip
        return self._feature(self._feature_row(project, req.name))

    def archive_feature(self, project: str, name: str, by: Principal) -> None:
        row = self._feature_row(project, name)
        if row["archived_at"] is not None:
            return
        with self.tx() as c:
            self._archive(c, project, [name], by)

    def _archive(
        self, c: sqlite3.Connection, project: str, names: Sequence[str], by: Principal
    ) -> None:
        now = self.clock()
        for name in names:
            c.execute("UPDATE features SET archived_at = ? WHERE name = ?", (now, name))
            self._event(c, "feature-archived", by, project=project, feature=name,
                        summary=f"**{by.user_name}** archived feature flag `{name}` "
                        f"in project **{project}**")  # fmt: skip

    # ------------------------------------------------------------------ the archive's actions

    def _named(self, names: Sequence[str]) -> list[sqlite3.Row]:
        """The flags of these names that exist (each once; unknown names are left out)."""
        unique = list(dict.fromkeys(names))
        rows: list[sqlite3.Row] = []
        for start in range(0, len(unique), 500):
            part = unique[start : start + 500]
            marks = ",".join("?" * len(part))
            rows += self.conn.execute(
                f"SELECT * FROM features WHERE name IN ({marks})", part
            ).fetchall()
        return rows

    def _in_project(self, names: Sequence[str], project: str) -> list[sqlite3.Row]:
        """The existing flags of `names`; 403 `InvalidOperationError` when one belongs to
        another project, with Unleash's message (its `validateFeaturesContext`; 403 measured on
        5.12, 6.10, 7.6 and 8.2, tests/compat/test_archive_actions.py). Unknown names are
        ignored."""
        rows = self._named(names)
        others = list(dict.fromkeys(r["project"] for r in rows if r["project"] != project))
        if others:
            message = (
                "The operation could not be completed. The features exist, but the provided "
                f'project ids ("{",".join(others)}") does not match the project provided in '
                f'request URL ("{project}").'
            )
            raise Refusal(403, "InvalidOperationError", message, [{"message": message}])
        return rows

    def _revive(self, c: sqlite3.Connection, rows: Sequence[sqlite3.Row], by: Principal) -> None:
        """Out of the archive, every environment off (as Unleash turns them off), an event each."""
        for row in rows:
            name, project = row["name"], row["project"]
            c.execute("UPDATE features SET archived_at = NULL WHERE name = ?", (name,))
            c.execute("UPDATE feature_environments SET enabled = 0 WHERE feature = ?", (name,))
            self._event(c, "feature-revived", by, project=project, feature=name,
                        summary=f"**{by.user_name}** revived feature flag `{name}` "
                        f"in project **{project}**")  # fmt: skip

    def _delete(self, c: sqlite3.Connection, rows: Sequence[sqlite3.Row], by: Principal) -> None:
        """Gone for good with their strategies and environments, an event each."""
        for row in rows:
            name, project = row["name"], row["project"]
            # the flag as it was, as Unleash's `feature-deleted` event keeps it (`preData`)
            was = self._feature(row).model_dump(mode="json", exclude_none=True)
            c.execute("DELETE FROM strategy_context_fields WHERE strategy_id IN"
                      " (SELECT id FROM strategies WHERE feature = ?)", (name,))  # fmt: skip
            c.execute("DELETE FROM strategy_segments WHERE strategy_id IN"
                      " (SELECT id FROM strategies WHERE feature = ?)", (name,))  # fmt: skip
            for table in ("strategies", "feature_environments"):
                c.execute(f"DELETE FROM {table} WHERE feature = ?", (name,))
            c.execute("DELETE FROM features WHERE name = ?", (name,))
            self._event(c, "feature-deleted", by, project=project, feature=name,
                        summary=f"**{by.user_name}** deleted feature flag `{name}` "
                        f"in project **{project}**", pre_data=was)  # fmt: skip

    def revive_feature(self, name: str, by: Principal) -> None:
        """`POST /api/admin/archive/revive/:name`: 404 "No feature flag found" for an unknown
        name (Unleash 8.2's words; 8.1 named the flag). Like Unleash 8.2, a flag that is not
        archived is "revived" all the same: its environments are turned off and an event
        recorded (flagdesk only revives archived flags it has just listed)."""
        rows = self._named([name])
        if not rows:
            raise not_found("No feature flag found")
        with self.tx() as c:
            self._revive(c, rows, by)

    def has_feature(self, name: str) -> bool:
        """Whether a flag of that name exists, live or archived."""
        return bool(self._named([name]))

    def delete_feature(self, name: str, by: Principal) -> None:
        """`DELETE /api/admin/archive/:name`: deletes the flag if it is archived; an unknown
        flag or one that is not archived is left as it is, and the answer is 200 all the same
        (as Unleash 8.2)."""
        rows = [r for r in self._named([name]) if r["archived_at"] is not None]
        if rows:
            with self.tx() as c:
                self._delete(c, rows, by)

    def revive_features(
        self, project: str, names: Sequence[str], by: Principal, *, check_project: bool = True
    ) -> None:
        """`POST /api/admin/projects/:p/revive` `{features}`: 404 for an unknown project (not
        checked without `check_project`, as Unleash 5.12), 403 when a flag named belongs to
        another project (nothing revived); unknown names and flags that are not archived are
        skipped."""
        known = self.conn.execute("SELECT 1 FROM projects WHERE id = ?", (project,)).fetchone()
        if check_project and known is None:
            raise not_found(f"Active project with id {project} does not exist")
        rows = [r for r in self._in_project(names, project) if r["archived_at"] is not None]
        with self.tx() as c:
            self._revive(c, rows, by)

    def delete_features(self, project: str, names: Sequence[str], by: Principal) -> None:
        """`POST /api/admin/projects/:p/delete` `{features}`: 403 when a flag named belongs to
        another project (nothing deleted); unknown names and flags that are not archived are
        skipped (an unknown project, then, deletes nothing and answers 200, as Unleash)."""
        rows = [r for r in self._in_project(names, project) if r["archived_at"] is not None]
        with self.tx() as c:
            self._delete(c, rows, by)

    def archive_features(self, project: str, names: Sequence[str], by: Principal) -> None:
        """`POST /api/admin/projects/:p/archive` `{features}` (202): 403 when a flag named
        belongs to another project; unknown and archived ones are skipped."""
        rows = [r for r in self._in_project(names, project) if r["archived_at"] is None]
        with self.tx() as c:
            self._archive(c, project, [r["name"] for r in rows], by)
