"""Context fields: the list with what uses each, the strategies that use one, and creating,
replacing and deleting them (with their legal values) as Unleash 8.2 does."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from app.api import models as m
from sandbox.store.core import Core, Principal, Refusal, not_found, to_dt, to_wire_time

#: The strategies and the context fields their constraints name (`scf.context_name`), of flags
#: that are not archived: what Unleash counts as a context field's use (`list_context_fields`
#: counts it through `scf.feature`, which names the strategy's flag: migration 19).
LIVE_CONSTRAINED_STRATEGIES = (
    "strategy_context_fields scf JOIN strategies s ON s.id = scf.strategy_id"
    " JOIN features f ON f.name = s.feature AND f.archived_at IS NULL"
)
#: the same, archived flags' strategies included (what Unleash before 7.0 lists as the usage)
CONSTRAINED_STRATEGIES = (
    "strategy_context_fields scf JOIN strategies s ON s.id = scf.strategy_id"
    " JOIN features f ON f.name = s.feature"
)


class Context(Core):
    def list_context_fields(self, name: str | None = None) -> list[m.ContextField]:
        """The context fields (or the one named `name`); what uses them counts only flags that
        are not archived, as Unleash 8.2 counts (and as `context_strategies` lists)."""
        args = (name,) if name is not None else ()
        named = "WHERE cf.name = ?" if name is not None else ""
        rows = self.conn.execute(
            f"SELECT * FROM context_fields cf {named} ORDER BY cf.sort_order, cf.name", args
        ).fetchall()
        named = "WHERE context_name = ?" if name is not None else ""
        used = {
            r[0]: (r[1], r[2])
            for r in self.conn.execute(
                "SELECT u.context_name, count(*), count(DISTINCT f.project) FROM"
                f" (SELECT DISTINCT context_name, feature FROM strategy_context_fields {named}) u"
                " JOIN features f ON f.name = u.feature AND f.archived_at IS NULL"
                " GROUP BY u.context_name",
                args,
            )
        }
        return [
            m.ContextField(
                name=r["name"],
                description=r["description"],
                stickiness=bool(r["stickiness"]),
                sortOrder=r["sort_order"],
                createdAt=to_dt(r["created_at"]),
                legalValues=[m.LegalValue(**v) for v in json.loads(r["legal_values"])],
                usedInFeatures=features,
                usedInProjects=projects,
            )
            for r in rows
            for features, projects in [used.get(r["name"], (0, 0))]
        ]

    def context_strategies(self, field: str, *, archived: bool = False) -> m.ContextFieldStrategies:
        """The strategies with a constraint on `field`, of flags that are not archived (Unleash
        7.0 and later leave archived flags out; `archived=True`: theirs too, as before 7.0); an
        unknown field has none."""
        rows = self.conn.execute(
            "SELECT s.id, s.feature, s.project, s.environment, s.name FROM "
            + (CONSTRAINED_STRATEGIES if archived else LIVE_CONSTRAINED_STRATEGIES)
            + " WHERE scf.context_name = ?"
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

    def get_context_field(self, name: str) -> m.ContextField:
        """`GET /api/admin/context/:name`: 404 "Could not find context field" when unknown."""
        found = self.list_context_fields(name)
        if not found:
            raise not_found("Could not find context field")
        return found[0]

    def _field_row(self, name: str) -> sqlite3.Row:
        row = self.conn.execute("SELECT * FROM context_fields WHERE name = ?", (name,)).fetchone()
        if row is None:
            raise not_found(f"Could not find context field with name {name}")
        return row  # type: ignore[no-any-return]

    def create_context_field(
        self, req: m.CreateContextField, by: Principal, *, unsorted: int = 0
    ) -> m.ContextField:
        """`POST /api/admin/context`: 409 `NameExistsError` for a name taken (Unleash checks it
        before the rest of the body), a `context-field-created` event. `unsorted`: the sort
        order of a body without one (5.12: 10)."""
        if self.conn.execute("SELECT 1 FROM context_fields WHERE name = ?",
                             (req.name,)).fetchone() is not None:  # fmt: skip
            raise Refusal(409, "NameExistsError", "A context field with that name already exist")
        now = self.clock()
        with self.tx() as c:
            c.execute(
                "INSERT INTO context_fields(name, description, stickiness, sort_order,"
                " legal_values, created_at) VALUES(?, ?, ?, ?, ?, ?)",
                (req.name, *_columns(req, unsorted), now),
            )
            data = req.model_dump(mode="json", exclude_unset=True, exclude={"sortOrder"})
            data.setdefault("stickiness", False)  # the body as Unleash 8.2 logs it
            self._event(c, "context-field-created", by, summary=_said(by, "created", req.name),
                        at=now, data=data)  # fmt: skip
        return self.get_context_field(req.name)

    def update_context_field(
        self, name: str, req: m.UpdateContextField, by: Principal, *, keep_sort_order: bool = False
    ) -> None:
        """`PUT /api/admin/context/:name`, as Unleash 8.2 stores it (measured on the 8.2 peer):
        the field replaced by the body, except a description left out, which is kept (legal
        values left out are emptied, stickiness false); the sort order set to 0 whatever the
        body says (6.10, 7.6 and 8.2 strip it from the body), or with `keep_sort_order` left as
        it is (5.12); 404 for an unknown field, a `context-field-updated` event."""
        before = _logged(self._field_row(name))
        description, stickiness, _, legal_values = _columns(req)
        with self.tx() as c:
            c.execute(
                "UPDATE context_fields SET description = coalesce(?, description),"
                " stickiness = ?, sort_order = CASE WHEN ? THEN sort_order ELSE 0 END,"
                " legal_values = ? WHERE name = ?",
                (description, stickiness, int(keep_sort_order), legal_values, name),
            )
            # data: the body as sent (its sort order stripped), as Unleash 8.2 logs it
            data = req.model_dump(mode="json", exclude_unset=True, exclude={"sortOrder"})
            self._updated(c, name, by, before, {"name": name, **data})

    def _updated(
        self, c: sqlite3.Connection, name: str, by: Principal, before: Any, after: Any
    ) -> None:
        self._event(c, "context-field-updated", by, summary=_said(by, "updated", name),
                    pre_data=before, data=after)  # fmt: skip

    def put_legal_value(self, name: str, value: m.LegalValueBody, by: Principal) -> None:
        """`POST /api/admin/context/:name/legal-values`: adds the value, or replaces the one with
        the same `value` (its description), in place."""
        values = json.loads(self._field_row(name)["legal_values"])
        entry = value.model_dump(exclude_none=True)
        at = next((i for i, v in enumerate(values) if v.get("value") == value.value), None)
        if at is None:
            values.append(entry)
        else:
            values[at] = entry
        self._set_legal_values(name, values, by)

    def delete_legal_value(self, name: str, value: str, by: Principal) -> None:
        """`DELETE /api/admin/context/:name/legal-values/:value`: 200 whether the value was
        there or not (as Unleash), 404 for an unknown field."""
        values = json.loads(self._field_row(name)["legal_values"])
        self._set_legal_values(name, [v for v in values if v.get("value") != value], by)

    def _set_legal_values(self, name: str, values: list[dict[str, str]], by: Principal) -> None:
        before = _logged(self._field_row(name))
        with self.tx() as c:
            c.execute("UPDATE context_fields SET legal_values = ? WHERE name = ?",
                      (json.dumps(values), name))  # fmt: skip
            self._updated(c, name, by, before, {**before, "legalValues": values})

    def delete_context_field(self, name: str, by: Principal, *, in_use: bool = True) -> None:
        """`DELETE /api/admin/context/:name`: 404 for an unknown field; 409 `ConflictError`
        while a strategy of a flag that is not archived uses it (Unleash 7+; `in_use=False`:
        deleted all the same, as before 7.0); else gone, with a `context-field-deleted`
        event."""
        self._field_row(name)
        if in_use and self.context_strategies(name).strategies:
            raise Refusal(
                409,
                "ConflictError",
                "This context field is in use by existing flags. To delete it, first remove "
                "its usage from all flags.",
            )
        row = self._field_row(name)
        before = {"name": name, "createdAt": to_wire_time(row["created_at"]),
                  "sortOrder": row["sort_order"], **_logged(row)}  # fmt: skip
        with self.tx() as c:
            c.execute("DELETE FROM context_fields WHERE name = ?", (name,))
            self._event(c, "context-field-deleted", by, summary=_said(by, "deleted", name),
                        pre_data=before)  # fmt: skip


def _logged(row: sqlite3.Row) -> dict[str, Any]:
    """A field as Unleash 8.2 logs it before a change (an update's `preData`)."""
    return {
        "name": row["name"],
        "stickiness": bool(row["stickiness"]),
        "description": row["description"],
        "legalValues": json.loads(row["legal_values"]),
    }


def _said(by: Principal, done: str, name: str) -> str:
    """An event's summary: "**admin** created context field **plan**"."""
    return f"**{by.user_name}** {done} context field **{name}**"


def _columns(req: m.UpdateContextField, unsorted: int = 0) -> tuple[str | None, int, int, str]:
    """description, stickiness, sort_order and legal_values as Unleash 8.2 stores a body: what
    it leaves out is emptied (the sort order `unsorted`)."""
    values = [v.model_dump(exclude_none=True) for v in req.legalValues or []]
    sort_order = unsorted if req.sortOrder is None else req.sortOrder
    return req.description, int(bool(req.stickiness)), sort_order, json.dumps(values)
