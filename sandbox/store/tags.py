"""Tag types, tags and a flag's tags, as Unleash 8.2 answers them (measured on the 8.2 peer):
Unleash ships the `simple` tag type (migration 13 -> 14 makes it); deleting a tag type takes
its tags and their use on flags with it; tagging a flag makes the tag when it is new."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from app.api import models as m
from sandbox.store.core import Core, Principal, Refusal, not_found


class TagsStore(Core):
    # ------------------------------------------------------------------ tag types

    @staticmethod
    def _tag_type(row: sqlite3.Row) -> m.TagType:
        return m.TagType(
            name=row["name"], description=row["description"], icon=row["icon"], color=row["color"]
        )

    def list_tag_types(self) -> m.TagTypes:
        """`GET /api/admin/tag-types`: every tag type, by name."""
        rows = self.conn.execute("SELECT * FROM tag_types ORDER BY name").fetchall()
        return m.TagTypes(version=1, tagTypes=[self._tag_type(r) for r in rows])

    def _tag_type_row(self, name: str) -> sqlite3.Row:
        row = self.conn.execute("SELECT * FROM tag_types WHERE name = ?", (name,)).fetchone()
        if row is None:
            raise not_found("Could not find tag-type")
        return row  # type: ignore[no-any-return]

    def get_tag_type(self, name: str) -> m.TagTypeWithVersion:
        """`GET /api/admin/tag-types/:name`: `{version, tagType}` (what 8.2 sends, where its
        document says a bare tag type); 404 "Could not find tag-type"."""
        return m.TagTypeWithVersion(version=1, tagType=self._tag_type(self._tag_type_row(name)))

    def validate_tag_type(self, req: m.TagTypeBody) -> None:
        """409 `NameExistsError` for a name taken (`POST /api/admin/tag-types/validate` and
        before creating one)."""
        if self.conn.execute("SELECT 1 FROM tag_types WHERE name = ?", (req.name,)).fetchone():
            raise Refusal(
                409, "NameExistsError", f"There already exists a tag-type with the name {req.name}"
            )

    def create_tag_type(self, req: m.TagTypeBody, by: Principal) -> m.TagType:
        """`POST /api/admin/tag-types` (201, the body as stored: only what was sent): 409 for a
        name taken; a `tag-type-created` event with it as `data`."""
        self.validate_tag_type(req)
        data = req.model_dump(exclude_unset=True)
        with self.tx() as c:
            c.execute(
                "INSERT INTO tag_types(name, description, icon, color) VALUES(?, ?, ?, ?)",
                (req.name, req.description or "", req.icon, req.color),
            )
            self._event(
                c,
                "tag-type-created",
                by,
                data=data,
                summary=f"**{by.user_name}** created tag type **{req.name}**",
            )
        return m.TagType(**data)

    def update_tag_type(self, name: str, req: m.UpdateTagType, by: Principal) -> None:
        """`PUT /api/admin/tag-types/:name` (200): the fields sent replace the stored ones (an
        unknown name changes nothing and answers 200, as 8.2); a `tag-type-updated` event."""
        data = {"name": name, **req.model_dump(exclude_unset=True)}
        with self.tx() as c:
            c.execute(
                "UPDATE tag_types SET description = coalesce(?, description),"
                " icon = coalesce(?, icon), color = coalesce(?, color) WHERE name = ?",
                (req.description, req.icon, req.color, name),
            )
            self._event(
                c,
                "tag-type-updated",
                by,
                data=data,
                summary=f"**{by.user_name}** updated tag type **{name}**",
            )

    def delete_tag_type(self, name: str, by: Principal) -> None:
        """`DELETE /api/admin/tag-types/:name` (200): 404 for an unknown one; its tags and
        their use on flags go with it; a `tag-type-deleted` event with it as `preData`."""
        before = self._tag_type(self._tag_type_row(name)).model_dump()
        with self.tx() as c:
            c.execute("DELETE FROM tag_types WHERE name = ?", (name,))
            self._event(
                c,
                "tag-type-deleted",
                by,
                pre_data=before,
                summary=f"**{by.user_name}** deleted tag type **{name}**",
            )

    # ------------------------------------------------------------------ tags

    def list_tags(self, tag_type: str | None = None) -> m.Tags:
        """`GET /api/admin/tags` and `/tags/:type` (none for an unknown type), by type and
        value."""
        where, args = ("WHERE type = ?", (tag_type,)) if tag_type is not None else ("", ())
        rows = self.conn.execute(
            f"SELECT type, value FROM tags {where} ORDER BY type, value", args
        ).fetchall()
        return m.Tags(version=1, tags=[m.TagItem(type=r[0], value=r[1]) for r in rows])

    def get_tag(self, tag_type: str, value: str) -> m.TagWithVersion:
        """`GET /api/admin/tags/:type/:value`: 404 "No tag with type: [t] and value [v]"."""
        if (
            self.conn.execute(
                "SELECT 1 FROM tags WHERE type = ? AND value = ?", (tag_type, value)
            ).fetchone()
            is None
        ):
            raise not_found(f"No tag with type: [{tag_type}] and value [{value}]")
        return m.TagWithVersion(version=1, tag=m.TagItem(type=tag_type, value=value))

    def create_tag(self, req: m.CreateTag, by: Principal) -> m.TagWithVersion:
        """`POST /api/admin/tags` (201): the value trimmed; 409 for a tag that exists (with
        Unleash's own words, "A tag of [object Object] already exists"); 400 for an unknown
        type (Unleash: a 500 from its foreign key); a `tag-created` event."""
        value = req.value.strip()
        if (
            self.conn.execute(
                "SELECT 1 FROM tags WHERE type = ? AND value = ?", (req.type, value)
            ).fetchone()
            is not None
        ):
            raise Refusal(409, "NameExistsError", "A tag of [object Object] already exists")
        with self.tx() as c:
            self._make_tag(c, req.type, value, by)
        return m.TagWithVersion(version=1, tag=m.TagItem(type=req.type, value=value))

    def _make_tag(self, c: sqlite3.Connection, tag_type: str, value: str, by: Principal) -> None:
        if c.execute("SELECT 1 FROM tag_types WHERE name = ?", (tag_type,)).fetchone() is None:
            raise Refusal(400, "BadDataError", f"Tag type '{tag_type}' does not exist")
        c.execute(
            "INSERT INTO tags(type, value, created_at) VALUES(?, ?, ?)",
            (tag_type, value, self.clock()),
        )
        self._event(
            c,
            "tag-created",
            by,
            data={"type": tag_type, "value": value},
            summary=f"**{by.user_name}** created tag **{tag_type}:{value}**",
        )

    def delete_tag(self, tag_type: str, value: str, by: Principal) -> None:
        """`DELETE /api/admin/tags/:type/:value` (200 whether it was there or not, as Unleash),
        off every flag it was on; a `tag-deleted` event."""
        with self.tx() as c:
            c.execute("DELETE FROM tags WHERE type = ? AND value = ?", (tag_type, value))
            self._event(
                c,
                "tag-deleted",
                by,
                data={"type": tag_type, "value": value},
                summary=f"**{by.user_name}** deleted tag **{tag_type}:{value}**",
            )

    # ------------------------------------------------------------------ a flag's tags

    def _flag_project(self, name: str, missing: str) -> str:
        row = self.conn.execute("SELECT project FROM features WHERE name = ?", (name,)).fetchone()
        if row is None:
            raise not_found(missing)
        return str(row[0])

    def feature_tags(self, feature: str) -> m.Tags:
        """`GET /api/admin/features/:name/tags`: the flag's tags (with their type's colour), by
        type and value; 404 "Could not find feature with name x"."""
        self._flag_project(feature, f"Could not find feature with name {feature}")
        return m.Tags(version=1, tags=self._tags_of(feature))

    def _tags_of(self, feature: str) -> list[m.TagItem]:
        rows = self.conn.execute(
            "SELECT ft.tag_type, ft.tag_value, tt.color FROM feature_tags ft"
            " LEFT JOIN tag_types tt ON tt.name = ft.tag_type WHERE ft.feature = ?"
            " ORDER BY ft.tag_type, ft.tag_value",
            (feature,),
        ).fetchall()
        return [m.TagItem(type=r[0], value=r[1], color=r[2]) for r in rows]

    def tag_feature(self, feature: str, tag: m.TagBody, by: Principal) -> m.TagItem:
        """`POST /api/admin/features/:name/tags` (201, the tag): the tag made when it is new
        (400 "Tag type 'x' does not exist"), the flag tagged (again: no harm); 404 "No feature
        flag found"; a `feature-tagged` event with the tag as `data`."""
        project = self._flag_project(feature, "No feature flag found")
        with self.tx() as c:
            self._tag(c, feature, project, tag, by)
        return m.TagItem(type=tag.type, value=tag.value)

    def _tag(
        self, c: sqlite3.Connection, feature: str, project: str, tag: m.TagBody, by: Principal
    ) -> None:
        if (
            c.execute(
                "SELECT 1 FROM tags WHERE type = ? AND value = ?", (tag.type, tag.value)
            ).fetchone()
            is None
        ):
            self._make_tag(c, tag.type, tag.value, by)
        c.execute(
            "INSERT OR IGNORE INTO feature_tags(feature, tag_type, tag_value, created_at,"
            " created_by_user_id) VALUES(?, ?, ?, ?, ?)",
            (feature, tag.type, tag.value, self.clock(), by.user_id),
        )
        self._event(
            c,
            "feature-tagged",
            by,
            project=project,
            feature=feature,
            data={"type": tag.type, "value": tag.value},
            summary=f"**{by.user_name}** tagged `{feature}` with **{tag.type}:{tag.value}**",
        )

    def _untag(
        self, c: sqlite3.Connection, feature: str, project: str, tag: m.TagBody, by: Principal
    ) -> None:
        c.execute(
            "DELETE FROM feature_tags WHERE feature = ? AND tag_type = ? AND tag_value = ?",
            (feature, tag.type, tag.value),
        )
        self._event(
            c,
            "feature-untagged",
            by,
            project=project,
            feature=feature,
            pre_data={"type": tag.type, "value": tag.value},
            summary=f"**{by.user_name}** removed the tag **{tag.type}:{tag.value}**"
            f" from `{feature}`",
        )

    def update_feature_tags(
        self,
        feature: str,
        added: Sequence[m.TagBody],
        removed: Sequence[m.TagBody],
        by: Principal,
    ) -> m.Tags:
        """`PUT /api/admin/features/:name/tags` `{addedTags, removedTags}`: the added first,
        then the removed, an event each; the flag's tags after; 404 "No feature flag found"."""
        project = self._flag_project(feature, "No feature flag found")
        with self.tx() as c:
            for tag in added:
                self._tag(c, feature, project, tag, by)
            for tag in removed:
                self._untag(c, feature, project, tag, by)
        return m.Tags(version=1, tags=self._tags_of(feature))

    def untag_feature(self, feature: str, tag_type: str, value: str, by: Principal) -> None:
        """`DELETE /api/admin/features/:name/tags/:type/:value` (200, whether the flag had it or
        not, with a `feature-untagged` event all the same, as 8.2); 404 "No feature flag
        found"."""
        project = self._flag_project(feature, "No feature flag found")
        with self.tx() as c:
            self._untag(
                c, feature, project, m.TagBody.model_construct(type=tag_type, value=value), by
            )
