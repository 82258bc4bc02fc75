"""Context fields: the list with what uses each, and the strategies that use one."""

from __future__ import annotations

import json

from app.api import models as m
from sandbox.store.core import Core, to_dt

#: The strategies and the context fields their constraints name (`scf.context_name`), of flags
#: that are not archived: what Unleash counts as a context field's use.
LIVE_CONSTRAINED_STRATEGIES = (
    "strategy_context_fields scf JOIN strategies s ON s.id = scf.strategy_id"
    " JOIN features f ON f.name = s.feature AND f.archived_at IS NULL"
)


class Context(Core):
    def list_context_fields(self) -> list[m.ContextField]:
        """The context fields; what uses them counts only flags that are not archived, as
        Unleash 8.2 counts (and as `context_strategies` lists)."""
        rows = self.conn.execute(
            "SELECT cf.*,"
            " (SELECT count(DISTINCT s.feature) FROM " + LIVE_CONSTRAINED_STRATEGIES +
            "   WHERE scf.context_name = cf.name) AS used_in_features,"
            " (SELECT count(DISTINCT s.project) FROM " + LIVE_CONSTRAINED_STRATEGIES +
            "   WHERE scf.context_name = cf.name) AS used_in_projects"
            " FROM context_fields cf ORDER BY cf.sort_order, cf.name"
        ).fetchall()  # fmt: skip
        return [
            m.ContextField(
                name=r["name"],
                description=r["description"],
                stickiness=bool(r["stickiness"]),
                sortOrder=r["sort_order"],
                createdAt=to_dt(r["created_at"]),
                legalValues=[m.LegalValue(**v) for v in json.loads(r["legal_values"])],
                usedInFeatures=r["used_in_features"],
                usedInProjects=r["used_in_projects"],
            )
            for r in rows
        ]

    def context_strategies(self, field: str) -> m.ContextFieldStrategies:
        """The strategies with a constraint on `field`, of flags that are not archived (Unleash
        8.2 leaves archived flags out); an unknown field has none."""
        rows = self.conn.execute(
            "SELECT s.id, s.feature, s.project, s.environment, s.name FROM "
            + LIVE_CONSTRAINED_STRATEGIES + " WHERE scf.context_name = ?"
            " ORDER BY s.project, s.feature, s.environment, s.sort_order, s.created_at",
            (field,),
        )  # fmt: skip
        return m.ContextFieldStrategies(
            strategies=[
                m.ContextFieldStrategy(
                    id=r[0], featureName=r[1], projectId=r[2], environment=r[3], strategyName=r[4]
                )
                for r in rows
            ]
        )
