"""The archive: a project's archived flags, streamed in chunks from one snapshot."""

from __future__ import annotations

import json
from collections.abc import Generator
from contextlib import closing
from typing import Any

from sandbox.store.core import CHUNK_ITEMS, Core, WireTimes, json_chunks
from sandbox.store.features import stale_at

#: `Store.archived_features`, in the `features_archived` index's order, each flag with its
#: environments as a JSON array of [name, enabled, last seen] (by primary key, per flag).
#: Parameter: the project.
ARCHIVED_FEATURES_QUERY = (
    "SELECT name, type, description, created_at, archived_at, impression_data,"
    " (SELECT json_group_array(json_array(fe.environment, fe.enabled,"
    "   (SELECT max(cm.updated_at) FROM client_metrics cm"
    "    WHERE cm.feature = fe.feature AND cm.environment = fe.environment)))"
    "  FROM feature_environments fe WHERE fe.feature = f.name)"
    " FROM features f WHERE project = ? AND archived_at IS NOT NULL"
    " ORDER BY archived_at DESC, name"
)


class Archive(Core):
    def archived_features(self, project: str) -> Generator[bytes, None, None]:
        """The `ArchivedFeatures` body, compact JSON in chunks of CHUNK_ITEMS flags, read in one
        snapshot. An index holds a project's archived flags newest first, so the first chunk
        is read without sorting them all first (see ARCHIVED_FEATURES_QUERY). Each flag's
        environments come with it as a small JSON array; most flags share a few such arrays,
        so each distinct one is made into wire values once per chunk (measured on 100,000
        flags: 0.7 s in all, against 0.8 s with a query per chunk for the chunk's
        environments, and 1.65 s for the whole body at once before).

        An unknown project has no archived flags: `{"version":1,"features":[]}`, as Unleash."""
        now = self.clock()
        wire = WireTimes()
        with (
            self.snapshot() as c,
            closing(c.execute(ARCHIVED_FEATURES_QUERY, (project,))) as flags,
        ):
            # the answer lists a flag's environments in the environments' order
            rank = {
                name: i
                for i, (name,) in enumerate(
                    c.execute("SELECT name FROM environments ORDER BY sort_order, name")
                )
            }

            def environments(found: str) -> tuple[list[dict[str, Any]], str | None]:
                """A flag's environments as wire values, and when it was last seen in any."""
                entries = sorted((e for e in json.loads(found) if e[0] in rank),
                                 key=lambda e: rank[e[0]])  # fmt: skip
                latest = max((e[2] for e in entries if e[2] is not None), default=None)
                return [
                    {"name": env, "lastSeenAt": wire[seen], "enabled": bool(enabled)}
                    for env, enabled, seen in entries
                ], wire[latest]

            def page_of(rows: list[Any]) -> list[dict[str, Any]]:
                shared: dict[str, tuple[list[dict[str, Any]], str | None]] = {}
                items = []
                for name, type_, description, created, archived, impression, found in rows:
                    envs = shared.get(found)
                    if envs is None:
                        envs = shared[found] = environments(found)
                    items.append(
                        {
                            "name": name,
                            "type": type_,
                            "description": description,
                            "project": project,
                            "stale": stale_at(type_, created, now),
                            "impressionData": bool(impression),
                            "createdAt": wire[created],
                            "archivedAt": wire[archived],
                            "lastSeenAt": envs[1],
                            "environments": envs[0],
                        }
                    )
                return items

            pages = map(page_of, iter(lambda: flags.fetchmany(CHUNK_ITEMS), []))
            yield from json_chunks("features", pages)
