"""The archive: a project's archived flags, streamed in chunks from one snapshot."""

from __future__ import annotations

from collections.abc import Generator
from contextlib import closing

from sandbox.store.core import CHUNK_ITEMS, DAY_MS, Core, json_text_chunks
from sandbox.store.features import STALE_AFTER_DAYS

#: `stale_at` in SQL, for the row's `type` and `created_at` at `:now`
_STALE = (
    "CASE type "
    + " ".join(
        f"WHEN '{type_}' THEN :now - created_at > {days * DAY_MS}"
        for type_, days in STALE_AFTER_DAYS.items()
        if days is not None
    )
    + " ELSE 0 END"
)

#: `Store.archived_features`, in the `features_archived` index's order and read from that index
#: alone: each flag's JSON as `features.archived_head` and `archived_tail` hold it, with its
#: `stale` between (see migration 5 -> 6 in sandbox/db.py), as UTF-8 bytes (read as text, it
#: would be decoded and encoded again). Parameters: `:project`, `:now` (ms).
ARCHIVED_FEATURES_QUERY = (
    f"SELECT CAST(archived_head || CASE WHEN {_STALE} THEN 'true' ELSE 'false' END"
    " || archived_tail AS BLOB) FROM features WHERE project = :project AND archived_at IS NOT NULL"
    " ORDER BY archived_at DESC, name"
)


class Archive(Core):
    def archived_features(self, project: str) -> Generator[bytes, None, None]:
        """The `ArchivedFeatures` body, compact JSON in chunks of CHUNK_ITEMS flags, read in one
        snapshot. An index holds a project's archived flags newest first, each with its JSON,
        so the first chunk is read without sorting them all first, nothing is looked up per
        flag, and the answer is those JSON texts joined (see ARCHIVED_FEATURES_QUERY).
        Measured on 100,000 flags: 0.2 s for the body, against 1.0-1.3 s with a subquery per
        flag for its environments and a dict per flag for `to_json`.

        An unknown project has no archived flags: `{"version":1,"features":[]}`, as Unleash."""
        query = {"project": project, "now": self.clock()}
        with self.snapshot() as c, closing(c.execute(ARCHIVED_FEATURES_QUERY, query)) as flags:
            pages = (
                [item for (item,) in page]
                for page in iter(lambda: flags.fetchmany(CHUNK_ITEMS), [])
            )
            yield from json_text_chunks("features", pages)
