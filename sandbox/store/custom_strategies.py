"""Strategy definitions (`/api/admin/strategies`): the four built-in ones as Unleash 8.2 lists
them (measured on the 8.2 peer: `flexibleRollout`, `default`, `remoteAddress`,
`applicationHostname`, in their sort order, not editable but deprecable) and custom ones, made,
replaced, deprecated, reactivated and deleted as 8.2 does."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from app.api import models as m
from sandbox.store.core import Core, Principal, Refusal, not_found

_ROLLOUT_PARAMETERS = [
    {"name": "rollout", "type": "percentage", "description": "", "required": False},
    {
        "name": "stickiness",
        "type": "string",
        "description": "Used define stickiness. Possible "
        "values: default, userId, sessionId, random",
        "required": True,
    },
    {
        "name": "groupId",
        "type": "string",
        "description": "Used to define a activation groups, "
        "which allows you to correlate across feature toggles.",
        "required": True,
    },
]

#: name, display name, description, parameters: Unleash 8.2's built-in strategies, in its order
BUILT_IN_STRATEGIES: list[tuple[str, str, str, list[dict[str, Any]]]] = [
    (
        "flexibleRollout",
        "Gradual rollout",
        "Roll out to a percentage of your userbase, and "
        "ensure that the experience is the same for the user on each visit.",
        _ROLLOUT_PARAMETERS,
    ),
    (
        "default",
        "Standard",
        "This strategy turns on / off for your entire userbase. Prefer "
        'using "Gradual rollout" strategy (100%=on, 0%=off).',
        [],
    ),
    (
        "remoteAddress",
        "IPs",
        "Enable the feature for a specific set of IP addresses.",
        [
            {
                "name": "IPs",
                "type": "list",
                "description": "List of IPs to enable the feature toggle for.",
                "required": True,
            }
        ],
    ),
    (
        "applicationHostname",
        "Hosts",
        "Enable the feature for a specific set of hostnames.",
        [
            {
                "name": "hostNames",
                "type": "list",
                "description": "List of hostnames to enable the feature toggle for.",
                "required": False,
            }
        ],
    ),
]

_NO_STRATEGY = "No strategy found"


class CustomStrategies(Core):
    def seed_built_in_strategies(self) -> None:
        """The built-in strategies, where missing (`Store.initialise`, every sandbox)."""
        if not _has_table(self.conn, "strategy_definitions"):
            return  # a database at a schema before them (tests make such)
        with self.tx() as c:
            c.executemany(
                "INSERT OR IGNORE INTO strategy_definitions(name, display_name, description,"
                " parameters, built_in, sort_order) VALUES(?, ?, ?, ?, 1, ?)",
                [
                    (name, shown, text, json.dumps(params), order)
                    for order, (name, shown, text, params) in enumerate(BUILT_IN_STRATEGIES)
                ],
            )

    @staticmethod
    def _definition(row: sqlite3.Row) -> m.StrategyDefinition:
        return m.StrategyDefinition(
            displayName=row["display_name"],
            name=row["name"],
            editable=not row["built_in"],
            description=row["description"],
            parameters=json.loads(row["parameters"]),
            deprecated=bool(row["deprecated"]),
            title=row["title"],
        )

    def list_strategy_definitions(self) -> m.StrategyDefinitions:
        """`GET /api/admin/strategies`: by sort order (the built-in ones first), then name."""
        rows = self.conn.execute(
            "SELECT * FROM strategy_definitions ORDER BY sort_order, name"
        ).fetchall()
        return m.StrategyDefinitions(version=1, strategies=[self._definition(r) for r in rows])

    def _definition_row(self, name: str, missing: str = _NO_STRATEGY) -> sqlite3.Row:
        row = self.conn.execute(
            "SELECT * FROM strategy_definitions WHERE name = ?", (name,)
        ).fetchone()
        if row is None:
            raise not_found(missing)
        return row  # type: ignore[no-any-return]

    def get_strategy_definition(self, name: str) -> m.StrategyDefinition:
        """`GET /api/admin/strategies/:name`: 404 "No strategy found"."""
        return self._definition(self._definition_row(name))

    def create_strategy_definition(
        self, req: m.CreateStrategy, by: Principal
    ) -> m.StrategyDefinition:
        """`POST /api/admin/strategies` (201): 409 "Strategy with name x already exist!"; never
        deprecated at first; a `strategy-created` event with what was stored."""
        if self.conn.execute(
            "SELECT 1 FROM strategy_definitions WHERE name = ?", (req.name,)
        ).fetchone():
            raise Refusal(409, "NameExistsError", f"Strategy with name {req.name} already exist!")
        data = {
            **req.model_dump(exclude_unset=True, mode="json"),
            "editable": True,
            "deprecated": False,
        }
        with self.tx() as c:
            c.execute(
                "INSERT INTO strategy_definitions(name, title, description, parameters,"
                " created_at) VALUES(?, ?, ?, ?, ?)",
                (req.name, req.title, req.description, _parameters(req.parameters), self.clock()),
            )
            self._event(
                c, "strategy-created", by, data=data, summary=_said(by, "created", req.name)
            )
        return self.get_strategy_definition(req.name)

    def _editable(self, name: str) -> sqlite3.Row:
        """The custom strategy `name`: 404 "No strategy found"; a built-in one is refused with
        Unleash's words, "Cannot edit strategy x" (8.2 answers them as a 500 `UnknownError`;
        the sandbox, a 400 `BadDataError`)."""
        row = self._definition_row(name)
        if row["built_in"]:
            raise Refusal(400, "BadDataError", f"Cannot edit strategy {name}")
        return row

    def update_strategy_definition(self, name: str, req: m.UpdateStrategy, by: Principal) -> None:
        """`PUT /api/admin/strategies/:name` (200): the parameters replaced, the description
        and title where sent (kept otherwise, as 8.2); a `strategy-updated` event."""
        self._editable(name)
        data = {"name": name, **req.model_dump(exclude_unset=True, mode="json")}
        with self.tx() as c:
            c.execute(
                "UPDATE strategy_definitions SET parameters = ?,"
                " description = CASE WHEN ? THEN ? ELSE description END,"
                " title = CASE WHEN ? THEN ? ELSE title END WHERE name = ?",
                (
                    _parameters(req.parameters),
                    "description" in req.model_fields_set,
                    req.description,
                    "title" in req.model_fields_set,
                    req.title,
                    name,
                ),
            )
            self._event(c, "strategy-updated", by, data=data, summary=_said(by, "updated", name))

    def delete_strategy_definition(self, name: str, by: Principal) -> None:
        """`DELETE /api/admin/strategies/:name` (200): 404 "No strategy found", a built-in one
        refused; a `strategy-deleted` event `{name}`."""
        self._editable(name)
        with self.tx() as c:
            c.execute("DELETE FROM strategy_definitions WHERE name = ?", (name,))
            self._event(
                c, "strategy-deleted", by, data={"name": name}, summary=_said(by, "deleted", name)
            )

    def deprecate_strategy(self, name: str, by: Principal, *, deprecated: bool = True) -> None:
        """`POST /api/admin/strategies/:name/deprecate` and `/reactivate` (200): built-in ones
        too; 404 ("Could not find strategy with name x" for deprecate, "No strategy found" for
        reactivate, as 8.2); a `strategy-deprecated` or `strategy-reactivated` event."""
        self._definition_row(
            name, f"Could not find strategy with name {name}" if deprecated else _NO_STRATEGY
        )
        with self.tx() as c:
            c.execute(
                "UPDATE strategy_definitions SET deprecated = ? WHERE name = ?",
                (int(deprecated), name),
            )
            done = "deprecated" if deprecated else "reactivated"
            self._event(
                c, f"strategy-{done}", by, data={"name": name}, summary=_said(by, done, name)
            )


def _has_table(c: sqlite3.Connection, name: str) -> bool:
    return c.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone() is not None


def _parameters(parameters: list[m.StrategyParameterBody]) -> str:
    return json.dumps([p.model_dump(exclude_unset=True) for p in parameters])


def _said(by: Principal, done: str, name: str) -> str:
    return f"**{by.user_name}** {done} strategy **{name}**"
