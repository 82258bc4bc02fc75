"""Segments (open source since Unleash 5): the list, one segment, creating, replacing and
deleting one (never while a strategy uses it), which strategies use one, and setting a
strategy's segments, as Unleash 8.2 does. Which strategy uses which segment is
`strategy_segments` (shared with the strategies' configuration, which writes a strategy
body's `segments` into it); only the strategies that still exist count.

Events carry the `preData` and `data` Unleash records with them (`Core._event`, kept in
`event_data`), here and in the tags', dependencies' and strategy definitions' areas."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from app.api import models as m
from sandbox.store.core import Core, Principal, Refusal, bad_request, not_found, to_dt

#: Unleash's default limits (`UNLEASH_STRATEGY_SEGMENTS_LIMIT`, `UNLEASH_SEGMENT_VALUES_LIMIT`)
STRATEGY_SEGMENTS_LIMIT = 5
SEGMENT_VALUES_LIMIT = 1000

#: the strategies that use a segment (`ss.segment_id`), only those that still exist, with
#: their flag
_USING = (
    "strategy_segments ss JOIN strategies s ON s.id = ss.strategy_id"
    " JOIN features f ON f.name = s.feature"
)


class Segments(Core):
    def _segment_rows(self, where: str = "", args: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        return self.conn.execute(
            "SELECT sg.*,"
            " (SELECT count(DISTINCT s.feature) FROM "
            + _USING
            + "   WHERE ss.segment_id = sg.id AND f.archived_at IS NULL) AS used_in_features,"
            " (SELECT count(DISTINCT s.project) FROM "
            + _USING
            + "   WHERE ss.segment_id = sg.id AND f.archived_at IS NULL) AS used_in_projects"
            f" FROM segments sg {where} ORDER BY sg.name, sg.id",
            args,
        ).fetchall()

    @staticmethod
    def _segment(row: sqlite3.Row, *, counted: bool = False) -> m.Segment:
        """A segment; `counted`: with how many flags and projects use it (the list's, as 8.2:
        one segment alone comes without)."""
        segment = m.Segment(
            id=row["id"],
            name=row["name"],
            description=row["description"],
            constraints=json.loads(row["constraints"]),
            createdBy=row["created_by"],
            createdAt=to_dt(row["created_at"]),
        )
        if row["project"] is not None:
            segment.project = row["project"]
        if counted:
            segment.usedInFeatures = row["used_in_features"]
            segment.usedInProjects = row["used_in_projects"]
        return segment

    def list_segments(self) -> m.Segments:
        """`GET /api/admin/segments`: every segment by name, with how many flags (not archived)
        and projects use it."""
        return m.Segments(segments=[self._segment(r, counted=True) for r in self._segment_rows()])

    def get_segment(self, segment_id: int) -> m.Segment:
        """`GET /api/admin/segments/:id`: 404 'No segment exists with ID "N"' (8.2's words,
        measured)."""
        rows = self._segment_rows("WHERE sg.id = ?", (segment_id,))
        if not rows:
            raise not_found(_no_segment(segment_id))
        return self._segment(rows[0])

    def validate_segment_name(self, name: str) -> None:
        """`POST /api/admin/segments/validate`: 409 `NameExistsError` "Segment name already
        exists" for a name taken (400 for an empty one, as Unleash)."""
        if not name:
            raise Refusal(400, "BadDataError", "Segment name cannot be empty")
        if self.conn.execute("SELECT 1 FROM segments WHERE name = ?", (name,)).fetchone():
            raise Refusal(409, "NameExistsError", "Segment name already exists")

    def _check_segment_body(self, req: m.UpsertSegment) -> None:
        values = sum(len(c.values) for c in req.constraints)
        if values > SEGMENT_VALUES_LIMIT:
            raise Refusal(
                400,
                "BadDataError",
                f"Segments may not have more than {SEGMENT_VALUES_LIMIT} values",
            )
        if (
            req.project is not None
            and self.conn.execute("SELECT 1 FROM projects WHERE id = ?", (req.project,)).fetchone()
            is None
        ):
            raise bad_request(f'Project "{req.project}" does not exist', "project")

    def create_segment(self, req: m.UpsertSegment, by: Principal) -> m.Segment:
        """`POST /api/admin/segments` (201): 409 for a name taken, 400 past Unleash's 1,000
        constraint values; a `segment-created` event with the segment as its `data`."""
        self._check_segment_body(req)
        self.validate_segment_name(req.name)
        with self.tx() as c:
            cursor = c.execute(
                "INSERT INTO segments(name, description, project, constraints, created_by,"
                " created_at) VALUES(?, ?, ?, ?, ?, ?)",
                (
                    req.name,
                    req.description,
                    req.project,
                    _constraints(req),
                    by.user_name,
                    self.clock(),
                ),
            )
            segment_id = int(cursor.lastrowid or 0)
            created = self._segment(self._segment_rows("WHERE sg.id = ?", (segment_id,))[0])
            self._event(
                c,
                "segment-created",
                by,
                project=req.project,
                data=_payload(created),
                summary=_said(by, "created", req.name),
            )
        return created

    def update_segment(self, segment_id: int, req: m.UpsertSegment, by: Principal) -> None:
        """`PUT /api/admin/segments/:id` (204): the segment replaced by the body; 404 for an
        unknown id, 409 for another segment's name, 400 for a project
        other than the one every strategy using it is in; a `segment-updated` event with
        `preData` and `data`."""
        self._check_segment_body(req)
        rows = self._segment_rows("WHERE sg.id = ?", (segment_id,))
        if not rows:
            raise not_found(_no_segment(segment_id))
        before = self._segment(rows[0])
        if before.name != req.name:
            self.validate_segment_name(req.name)
        used_in = [
            r[0]
            for r in self.conn.execute(
                "SELECT DISTINCT s.project FROM " + _USING + " WHERE ss.segment_id = ?"
                " ORDER BY s.project",
                (segment_id,),
            )
        ]
        if req.project and (len(used_in) > 1 or (used_in and used_in != [req.project])):
            raise Refusal(
                400,
                "BadDataError",
                "Invalid project. Segment is being used by "
                f"strategies in other projects: {', '.join(used_in)}",
            )
        with self.tx() as c:
            c.execute(
                "UPDATE segments SET name = ?, description = ?, project = ?, constraints = ?"
                " WHERE id = ?",
                (req.name, req.description, req.project, _constraints(req), segment_id),
            )
            after = self._segment(self._segment_rows("WHERE sg.id = ?", (segment_id,))[0])
            self._event(
                c,
                "segment-updated",
                by,
                project=req.project,
                pre_data=_payload(before),
                data=_payload(after),
                summary=_said(by, "updated", req.name),
            )

    def segment_strategies(self, segment_id: int) -> m.SegmentStrategies:
        """`GET /api/admin/segments/:id/strategies`: the strategies using it (archived flags'
        too, as Unleash lists them); 404 for an unknown segment."""
        self.get_segment(segment_id)
        rows = self.conn.execute(
            "SELECT s.id, s.feature, s.project, s.environment, s.name FROM "
            + _USING
            + " WHERE ss.segment_id = ?"
            " ORDER BY s.project, s.feature, s.environment, s.sort_order, s.created_at",
            (segment_id,),
        ).fetchall()
        return m.SegmentStrategies(
            strategies=[
                m.SegmentStrategy(
                    id=r[0], featureName=r[1], projectId=r[2], environment=r[3], strategyName=r[4]
                )
                for r in rows
            ],
            changeRequestStrategies=[],
        )

    def delete_segment(self, segment_id: int, by: Principal) -> None:
        """`DELETE /api/admin/segments/:id` (204): 404 for an unknown id (8.2, measured); 409
        while a strategy uses it (Unleash 8.2 answers that 409 with no body; the sandbox's
        `ConflictError` names the strategies); else gone, with a `segment-deleted` event whose
        `preData` is the segment."""
        rows = self._segment_rows("WHERE sg.id = ?", (segment_id,))
        if not rows:
            raise not_found(_no_segment(segment_id))
        using = self.segment_strategies(segment_id).strategies
        if using:
            where = ", ".join(f"{s.featureName} in {s.environment}" for s in using[:5])
            more = f" and {len(using) - 5} more" if len(using) > 5 else ""
            raise Refusal(
                409,
                "ConflictError",
                f"Segment {segment_id} ({rows[0]['name']}) is "
                f"in use by {len(using)} strateg{'y' if len(using) == 1 else 'ies'}: "
                f"{where}{more}. Remove it from them first.",
            )
        before = self._segment(rows[0])
        with self.tx() as c:
            c.execute("DELETE FROM strategy_segments WHERE segment_id = ?", (segment_id,))
            c.execute("DELETE FROM segments WHERE id = ?", (segment_id,))
            self._event(
                c,
                "segment-deleted",
                by,
                project=before.project,
                pre_data=_payload(before),
                summary=_said(by, "deleted", before.name),
            )

    def strategy_segments(self, strategy_id: str) -> m.Segments:
        """`GET /api/admin/segments/strategies/:strategyId`: the segments a strategy uses (none
        for an unknown strategy, as Unleash)."""
        rows = self._segment_rows(
            "WHERE sg.id IN (SELECT segment_id FROM strategy_segments WHERE strategy_id = ?)",
            (strategy_id,),
        )
        return m.Segments(segments=[self._segment(r) for r in rows])

    def set_strategy_segments(
        self, req: m.UpdateFeatureStrategySegments, by: Principal
    ) -> m.FeatureStrategySegments:
        """`POST /api/admin/segments/strategies` (201): the strategy's segments from now on are
        `segmentIds` (at most 5, Unleash's limit: 400 past it). Where Unleash's foreign keys
        refuse an unknown segment or strategy (its 500), the sandbox answers 400 naming it.
        Like Unleash 8.2 (measured), `projectId` and `environmentId` are not held against the
        strategy's own. No event: Unleash records none."""
        if len(req.segmentIds) > STRATEGY_SEGMENTS_LIMIT:
            raise Refusal(
                400,
                "BadDataError",
                f"Strategies may not have more than {STRATEGY_SEGMENTS_LIMIT} segments",
            )
        if (
            self.conn.execute("SELECT 1 FROM strategies WHERE id = ?", (req.strategyId,)).fetchone()
            is None
        ):
            raise bad_request(f"No strategy with id {req.strategyId}", "strategyId")
        wanted = list(dict.fromkeys(req.segmentIds))
        known = {
            r[0]
            for r in self.conn.execute(
                f"SELECT id FROM segments WHERE id IN ({','.join('?' * len(wanted))})", wanted
            )
        }
        unknown = [i for i in wanted if i not in known]
        if unknown:
            raise bad_request(f"No segment with id {', '.join(map(str, unknown))}", "segmentIds")
        with self.tx() as c:
            c.execute("DELETE FROM strategy_segments WHERE strategy_id = ?", (req.strategyId,))
            c.executemany(
                "INSERT INTO strategy_segments(strategy_id, segment_id) VALUES(?, ?)",
                [(req.strategyId, i) for i in wanted],
            )
        return m.FeatureStrategySegments(**req.model_dump())


def _no_segment(segment_id: int) -> str:
    return f'No segment exists with ID "{segment_id}"'


def _constraints(req: m.UpsertSegment) -> str:
    return json.dumps([c.model_dump(exclude_none=True) for c in req.constraints])


def _payload(segment: m.Segment) -> dict[str, Any]:
    """A segment as an event's `data`/`preData`: its fields, not how many use it."""
    return segment.model_dump(
        mode="json", exclude={"usedInFeatures", "usedInProjects"}, exclude_none=True
    )


def _said(by: Principal, done: str, name: str) -> str:
    return f"**{by.user_name}** {done} segment **{name}**"
