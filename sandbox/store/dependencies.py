"""Dependencies between flags, as Unleash 8.2 keeps them (measured on the 8.2 peer): a child
flag depends on parents of its own project, one level only (a parent has no parent, a child is
no parent), on the parent being enabled (or, `enabled: false`, disabled) and, where given, on
its variants."""

from __future__ import annotations

import json

from app.api import models as m
from sandbox.store.core import Core, Principal, Refusal, not_found


def _refused(message: str) -> Refusal:
    return Refusal(403, "InvalidOperationError", message)


class Dependencies(Core):
    def _project_of(self, name: str) -> tuple[str, bool] | None:
        """The flag's project and whether it is archived (None: no such flag)."""
        row = self.conn.execute(
            "SELECT project, archived_at IS NOT NULL FROM features WHERE name = ?", (name,)
        ).fetchone()
        return None if row is None else (str(row[0]), bool(row[1]))

    def add_dependency(
        self, project: str, child: str, req: m.CreateDependentFeature, by: Principal
    ) -> None:
        """`POST /api/admin/projects/:p/features/:child/dependencies` (200, no body; adding it
        again replaces it). 8.2's checks, in its order: 404 when the child (or an existing
        parent) is not in the project; 403 `InvalidOperationError` for a flag on itself, a
        child that is a parent, a parent that has a parent, a parent that is not there or is
        archived ("No active feature x exists"). `enabled: false` keeps no variants. A
        `feature-dependency-added` event with `{feature, enabled[, variants]}`."""
        parent = req.feature
        at_child, at_parent = self._project_of(child), self._project_of(parent)
        if (
            at_child is None
            or at_child[0] != project
            or (at_parent is not None and at_parent[0] != project)
        ):
            raise not_found(
                "Cannot add the dependency. Both the parent and the child feature "
                f'must belong to project "{project}".'
            )
        if child == parent:
            raise _refused("A feature flag cannot depend on itself.")
        if self.conn.execute(
            "SELECT 1 FROM feature_dependencies WHERE parent = ?", (child,)
        ).fetchone():
            raise _refused(
                "Transitive dependency detected. Cannot add a dependency to the "
                "feature that other features depend on."
            )
        if self.conn.execute(
            "SELECT 1 FROM feature_dependencies WHERE child = ?", (parent,)
        ).fetchone():
            raise _refused(
                "Transitive dependency detected. Cannot add a dependency to the "
                "feature that has parent dependency."
            )
        if at_parent is None or at_parent[1]:
            raise _refused(f"No active feature {parent} exists")
        enabled = req.enabled is not False
        variants = req.variants if enabled else None
        data: dict[str, object] = {"feature": parent, "enabled": enabled}
        if req.variants is not None:
            data["variants"] = req.variants
        with self.tx() as c:
            c.execute(
                "INSERT INTO feature_dependencies(parent, child, enabled, variants)"
                " VALUES(?, ?, ?, ?) ON CONFLICT(parent, child) DO UPDATE SET"
                " enabled = excluded.enabled, variants = excluded.variants",
                (parent, child, int(enabled), None if variants is None else json.dumps(variants)),
            )
            self._event(
                c,
                "feature-dependency-added",
                by,
                project=project,
                feature=child,
                data=data,
                summary=f"**{by.user_name}** made `{child}` depend on `{parent}`",
            )

    def delete_dependency(self, project: str, child: str, parent: str, by: Principal) -> None:
        """`DELETE .../features/:child/dependencies/:parent` (200): 404 when there is no such
        dependency in the project; a `feature-dependency-removed` event `{feature}`."""
        found = self.conn.execute(
            "SELECT 1 FROM feature_dependencies d JOIN features f ON f.name = d.child"
            " WHERE d.child = ? AND d.parent = ? AND f.project = ?",
            (child, parent, project),
        ).fetchone()
        if found is None:
            raise not_found(
                f'No dependency on "{parent}" for feature "{child}" in project "{project}".'
            )
        with self.tx() as c:
            c.execute(
                "DELETE FROM feature_dependencies WHERE child = ? AND parent = ?", (child, parent)
            )
            self._event(
                c,
                "feature-dependency-removed",
                by,
                project=project,
                feature=child,
                data={"feature": parent},
                summary=f"**{by.user_name}** removed the dependency of `{child}` on `{parent}`",
            )

    def delete_dependencies(self, project: str, child: str, by: Principal) -> None:
        """`DELETE .../features/:child/dependencies` (200): every parent gone; 404 when the flag
        has none in the project; a `feature-dependencies-removed` event."""
        found = self.conn.execute(
            "SELECT 1 FROM feature_dependencies d JOIN features f ON f.name = d.child"
            " WHERE d.child = ? AND f.project = ?",
            (child, project),
        ).fetchone()
        if found is None:
            raise not_found(
                f'Feature "{child}" has no dependencies to remove in project "{project}".'
            )
        with self.tx() as c:
            c.execute("DELETE FROM feature_dependencies WHERE child = ?", (child,))
            self._event(
                c,
                "feature-dependencies-removed",
                by,
                project=project,
                feature=child,
                summary=f"**{by.user_name}** removed every dependency of `{child}`",
            )

    def dependencies_exist(self) -> bool:
        """`GET /api/admin/projects/:p/dependencies`: whether any flag depends on another,
        in any project (8.2 asks its whole table, whatever the project)."""
        return (
            self.conn.execute("SELECT 1 FROM feature_dependencies LIMIT 1").fetchone() is not None
        )

    def parent_options(self, child: str) -> list[str]:
        """`GET /api/admin/projects/:p/features/:child/parents`: the flags `child` could depend
        on: its project's flags that are not archived, not itself and not children themselves,
        by name (none for an unknown flag)."""
        at = self._project_of(child)
        if at is None:
            return []
        rows = self.conn.execute(
            "SELECT name FROM features WHERE project = ? AND archived_at IS NULL AND name != ?"
            " AND name NOT IN (SELECT child FROM feature_dependencies) ORDER BY name",
            (at[0], child),
        )
        return [r[0] for r in rows]

    def dependencies_of(self, child: str) -> list[m.DependentFeature]:
        """A flag's parents as `GET /api/admin/projects/:p/features/:name` sends them in its
        `dependencies` (`{feature, enabled, variants}`, by parent), for the flag's own answer."""
        rows = self.conn.execute(
            "SELECT parent, enabled, variants FROM feature_dependencies WHERE child = ?"
            " ORDER BY parent",
            (child,),
        ).fetchall()
        return [
            m.DependentFeature(
                feature=r[0],
                enabled=bool(r[1]),
                variants=json.loads(r[2]) if r[2] is not None else [],
            )
            for r in rows
        ]

    def children_of(self, parent: str) -> list[str]:
        """The flags that depend on `parent`, by name (the flag's `children`)."""
        rows = self.conn.execute(
            "SELECT child FROM feature_dependencies WHERE parent = ? ORDER BY child", (parent,)
        )
        return [r[0] for r in rows]
