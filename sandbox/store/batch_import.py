"""The batch import (`POST /api/admin/features-batch/validate` and `/import`, open source since
Unleash 4.22): an export's data into one project and environment, as Unleash's
export-import service does it (read in its source, 5.12.8 to 8.2; measured on the four releases:
the reference's §3, tests/compat/test_batch_import.py).

Validate (read-only) answers `{errors, warnings, permissions}`, each item `{message,
affectedItems}`, in Unleash's words and order: errors for strategy types the target lacks
(one name per strategy), context fields whose legal values the target's same-named field does
not all hold, flags that are another project's, flags named twice, segments the target has no
segment of that name for, parents of dependencies neither imported nor on the target; warnings
for custom strategy types used, archived flags (left out) and flags of the project that will be
overwritten. `permissions` is empty: a caller who may import may do all of it.

Import checks the same (after leaving archived flags out and mapping segment ids to the
target's by name) and refuses the first failing check with a 400 `BadDataError` ("Request
validation failed: your request body or params contain invalid data: " and the words, or,
where there are details, "... Refer to the `details` list for more information."): strategies
(a detail "x is not supported." each), context fields (likewise), flags of other projects
("These features exist already in other projects: ..."), segments ("Unsupported segments:
..."), dependencies ("The following dependent features are missing: ..."). Then, in one
transaction (a failure leaves nothing): each flag created (`feature-created`), or its metadata
(description, type, stale, impression data) overwritten (`feature-metadata-updated`), what the
data leaves out set to its default (no description, `release`, not stale, no impression data:
measured on 8.2; 5.12 keeps a description left out); the environment's variants of each flag
that has some in the data (any flag: the import does not ask whether it has environment
variants already, measured on 8.2; an empty list leaves them); the tag types the target lacks
(`tag-type-created`); every tag of the imported flags removed (no event) and the data's added
(measured on 8.2, and in the source of 5.12 to 8.2); the context fields the target lacks
(`context-field-created`); every imported flag's strategies in the environment deleted (no
event, as Unleash; a flag with none in the data is left with none there) and the data's
created again with new ids (`feature-strategy-add`), in the data's order, each with the data's
`sortOrder`, 0 without one (measured on 8.2); each flag turned on or off as the data says (on
with no enabled strategy adds a gradual rollout, as on/off does); dependencies added (those of
a flag the data gives none are kept); one `features-imported` event. An environment the server
lacks is a 404 "Could not find <flag> in <env>", one the project lacks 404 "Could not find
environment <env> for feature: <flag>", an unknown project 404 "Active project with id x does
not exist" ("Project with id x does not exist" on 5.x).

Who may import (the admin API token may not: the route refuses it) is the route's."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from typing import Any

from app.api import models as m
from sandbox.store.core import Principal, Refusal, not_found, to_wire_time
from sandbox.store.flag_config import (
    DEFAULT_ROLLOUT,
    FlagConfig,
    _variant_json,
    fix_variant_weights,
)
from sandbox.store.users import bad_data, bad_data_details

UNSUPPORTED_STRATEGIES = "We detected the following custom strategy that needs to be created first:"
UNMATCHED_FIELDS = (
    "We detected the following context fields that do not have matching legal values with "
    "the imported ones:"
)
DUPLICATES = "We detected the following features are duplicate in your import data:"
MISSING_SEGMENTS = "We detected the following segments that need to be created first:"
MISSING_DEPENDENCIES = "We detected the following dependencies that need to be created first:"
CUSTOM_STRATEGIES = (
    "The following strategy types will be used in import. Please make sure the strategy type "
    "parameters are configured as in source environment:"
)
ARCHIVED = (
    "The following features will not be imported as they are currently archived. To import "
    "them, please unarchive them first:"
)
OVERWRITTEN = "The following features already exist in this project and will be overwritten:"


def _bad_data(message: str, details: list[str] | None = None) -> Refusal:
    """Unleash's BadDataError: its message after "Request validation failed: ...", or with
    `details`, each of them in its `details` (the message then points there)."""
    return bad_data_details(*details) if details else bad_data(message)


def _item(message: str, affected: list[str]) -> dict[str, Any]:
    return {"message": message, "affectedItems": affected}


class BatchImport(FlagConfig):
    # ------------------------------------------------------------------ what the checks find

    def _names_where(self, sql: str, names: list[str], *args: Any) -> list[Any]:
        out: list[Any] = []
        for start in range(0, len(names), 500):
            part = names[start : start + 500]
            marks = ",".join("?" * len(part))
            out += self.conn.execute(sql.format(names=marks), (*args, *part)).fetchall()
        return out

    def _archived(self, data: m.ImportData) -> list[str]:
        names = [f.name for f in data.features]
        return [r[0] for r in self._names_where(
            "SELECT name FROM features WHERE archived_at IS NOT NULL AND name IN ({names})",
            names)]  # fmt: skip

    @staticmethod
    def _without(data: m.ImportData, archived: list[str]) -> m.ImportData:
        """Unleash's `removeArchivedFeatures`: the archived flags and what is theirs left out."""
        if not archived:
            return data
        gone = set(archived)
        tags = [t for t in data.featureTags or [] if t.featureName not in gone]
        used = {t.tagType for t in tags}
        return data.model_copy(update={
            "features": [f for f in data.features if f.name not in gone],
            "featureEnvironments": [e for e in data.featureEnvironments or []
                                    if e.featureName and e.featureName not in gone],
            "featureStrategies": [s for s in data.featureStrategies
                                  if s.featureName and s.featureName not in gone],
            "featureTags": tags,
            "tagTypes": [t for t in data.tagTypes if t.name in used],
        })  # fmt: skip

    def _strategy_types(self) -> dict[str, bool]:
        """Each strategy type the server has -> whether it is a custom one."""
        return {r[0]: not r[1] for r in self.conn.execute(
            "SELECT name, built_in FROM strategy_definitions")}  # fmt: skip

    def _unsupported_strategies(self, data: m.ImportData) -> list[str]:
        known = self._strategy_types()
        return [s.name for s in data.featureStrategies if s.name not in known]

    def _custom_strategies(self, data: m.ImportData) -> list[str]:
        known = self._strategy_types()
        used = dict.fromkeys(s.name for s in data.featureStrategies)
        return [name for name in used if known.get(name)]

    def _unmatched_fields(self, data: m.ImportData) -> list[str]:
        """Unleash's `isValidField`: an existing field must hold each imported legal value."""
        out = []
        for field in data.contextFields or []:
            row = self.conn.execute(
                "SELECT legal_values FROM context_fields WHERE name = ?", (field.name,)
            ).fetchone()
            if row is None:
                continue
            held = {v["value"] for v in json.loads(row[0])}
            if any(v.value not in held for v in field.legalValues or []):
                out.append(field.name)
        return out

    def _other_projects(self, data: m.ImportData, project: str) -> list[str]:
        names = [f.name for f in data.features]
        return [f"{r[0]} (in project {r[1]})" for r in self._names_where(
            "SELECT name, project FROM features WHERE project <> ? AND name IN ({names})",
            names, project)]  # fmt: skip

    def _in_project_now(self, data: m.ImportData, project: str) -> list[str]:
        names = [f.name for f in data.features]
        return [r[0] for r in self._names_where(
            "SELECT name FROM features WHERE project = ? AND archived_at IS NULL"
            " AND name IN ({names})", names, project)]  # fmt: skip

    @staticmethod
    def _duplicates(data: m.ImportData) -> list[str]:
        counts = Counter(f.name for f in data.features)
        return [name for name, n in counts.items() if n > 1]

    def _segment_ids(self, project: str) -> dict[str, int]:
        """The segments an import may use, by name: global ones and the project's."""
        found: dict[str, int] = {}
        for r in self.conn.execute(
            "SELECT id, name, project FROM segments ORDER BY id DESC"
        ):  # fmt: skip
            if r[2] is None or r[2] == project:
                found[r[1]] = r[0]
        return found

    def _missing_segments(self, data: m.ImportData, project: str) -> list[str]:
        have = self._segment_ids(project)
        return [s.name for s in data.segments or [] if s.name not in have]

    def _missing_parents(self, data: m.ImportData) -> list[str]:
        imported = {f.name for f in data.features}
        wanted = [d.feature for entry in data.dependencies or [] for d in entry.dependencies
                  if d.feature not in imported]  # fmt: skip
        if not wanted:
            return []
        there = {r[0] for r in self._names_where(
            "SELECT name FROM features WHERE name IN ({names})", wanted)}  # fmt: skip
        return [name for name in wanted if name not in there]

    # ------------------------------------------------------------------ validate

    def validate_import(self, query: m.ImportQuery) -> m.ImportValidation:
        """`POST /api/admin/features-batch/validate`: what the module's text says; reads only."""
        data, project = query.data, query.project
        errors: list[dict[str, Any]] = []
        warnings: list[dict[str, Any]] = []
        if found := self._unsupported_strategies(data):
            errors.append(_item(UNSUPPORTED_STRATEGIES, found))
        if found := self._unmatched_fields(data):
            errors.append(_item(UNMATCHED_FIELDS, found))
        if found := self._other_projects(data, project):
            errors.append(_item(
                "You cannot import a features that already exist in other projects. You "
                f"already have the following features defined outside of project {project}:",
                found))  # fmt: skip
        if found := self._duplicates(data):
            errors.append(_item(DUPLICATES, found))
        if found := self._missing_segments(data, project):
            errors.append(_item(MISSING_SEGMENTS, found))
        if found := self._missing_parents(data):
            errors.append(_item(MISSING_DEPENDENCIES, found))
        if found := self._custom_strategies(data):
            warnings.append(_item(CUSTOM_STRATEGIES, found))
        if found := self._archived(data):
            warnings.append(_item(ARCHIVED, found))
        if found := self._in_project_now(data, project):
            warnings.append(_item(OVERWRITTEN, found))
        return m.ImportValidation.model_validate(
            {"errors": errors, "warnings": warnings, "permissions": []}
        )

    # ------------------------------------------------------------------ import

    def _verify(self, data: m.ImportData, project: str) -> None:
        if found := self._unsupported_strategies(data):
            details = [f"{name} is not supported." for name in found]
            raise _bad_data(
                "Some of the strategies you are trying to import are not supported.", details
            )
        if found := self._unmatched_fields(data):
            details = [f"{name} is not supported." for name in found]
            raise _bad_data(
                "Some of the context fields you are trying to import are not supported.", details
            )
        if found := self._other_projects(data, project):
            raise _bad_data(f"These features exist already in other projects: {', '.join(found)}")
        if found := self._missing_segments(data, project):
            raise _bad_data(f"Unsupported segments: {', '.join(found)}")
        if found := self._missing_parents(data):
            raise _bad_data(f"The following dependent features are missing: {', '.join(found)}")

    def import_features(
        self,
        query: m.ImportQuery,
        by: Principal,
        *,
        project_word: str = "Active project",
        keeps_description: bool = False,
    ) -> None:
        """`POST /api/admin/features-batch/import`: what the module's text says.
        `project_word` begins the unknown project's message ("Project" on 5.x);
        `keeps_description`: a flag's description the data leaves out is kept (5.x)."""
        project, env = query.project, query.environment
        data = self._without(query.data, self._archived(query.data))
        self._verify(data, project)
        if self.conn.execute("SELECT 1 FROM projects WHERE id = ?", (project,)).fetchone() is None:
            raise not_found(f"{project_word} with id {project} does not exist")
        first = data.features[0].name if data.features else ""
        if (
            self.conn.execute("SELECT 1 FROM environments WHERE name = ?", (env,)).fetchone()
            is None
        ):
            raise not_found(f"Could not find {first} in {env}")
        in_project = self.conn.execute(
            "SELECT 1 FROM project_environments WHERE project = ? AND environment = ?",
            (project, env),
        ).fetchone()
        if in_project is None and data.features:
            raise not_found(f"Could not find environment {env} for feature: {first}")
        segment_ids = self._segment_ids(project)
        by_old_id = {s.id: segment_ids.get(s.name) for s in data.segments or []}
        with self.tx() as c:
            self._write_flags(c, data, project, by, keeps_description)
            for e in data.featureEnvironments or []:
                if e.variants and e.featureName:
                    self._write_variants(c, project, e.featureName, env, e.variants, by)
            self._write_tag_types(c, data, by)
            self._delete_tags(c, [f.name for f in data.features])
            for tag in data.featureTags or []:
                self._write_tag(c, project, tag, by)
            self._write_fields(c, data, by)
            names = [f.name for f in data.features]
            self._delete_strategies(c, names, env)
            for s in data.featureStrategies:
                if not s.featureName:
                    continue
                segments = [i for i in (by_old_id.get(old) for old in s.segments) if i is not None]
                strategy = m.CreateFeatureStrategy.model_validate({
                    **s.model_dump(exclude={"featureName", "id", "segments"}),
                    "segments": segments, "sortOrder": s.sortOrder or 0})  # fmt: skip
                self._insert_strategy(c, project, s.featureName, env, strategy, by)
            for e in data.featureEnvironments or []:
                self._write_enabled(c, project, e.name, env, e.enabled, by)
            self._write_dependencies(c, data, project, by)
            self._event(c, "features-imported", by, project=project, environment=env,
                        summary=f"**{by.user_name}** imported {len(data.features)} flags into "
                        f"project **{project}**, *{env}*")  # fmt: skip

    def _write_flags(
        self,
        c: sqlite3.Connection,
        data: m.ImportData,
        project: str,
        by: Principal,
        keeps_description: bool,
    ) -> None:
        existing = set(self._in_project_now(data, project))
        for f in data.features:
            if f.name in existing:
                before = c.execute("SELECT * FROM features WHERE name = ?", (f.name,)).fetchone()
                kept = keeps_description and "description" not in f.model_fields_set
                fields = {
                    "description": before["description"] if kept else f.description or None,
                    "type": f.type or "release",
                    "stale": bool(f.stale), "impressionData": bool(f.impressionData),
                }  # fmt: skip
                self._write_metadata(c, before, fields, by)
                continue
            made = self.clock()
            c.execute(
                "INSERT INTO features(name, project, type, description, impression_data, stale,"
                " created_at) VALUES(?, ?, ?, ?, ?, ?, ?)",
                (f.name, project, f.type or "release", f.description,
                 int(bool(f.impressionData)), int(bool(f.stale)), made),
            )  # fmt: skip
            c.execute(
                "INSERT INTO feature_environments(feature, environment, enabled)"
                " SELECT ?, environment, 0 FROM project_environments WHERE project = ?",
                (f.name, project),
            )
            # data: the flag as a flag made by hand logs it (`Features.create_feature`)
            logged = {"name": f.name, "description": f.description, "type": f.type or "release",
                    "project": project, "stale": bool(f.stale), "createdAt": to_wire_time(made),
                    "impressionData": bool(f.impressionData), "archived": False}  # fmt: skip
            self._event(c, "feature-created", by, project=project, feature=f.name, data=logged,
                        summary=f"**{by.user_name}** created feature flag "
                        f"[`{f.name}`](/projects/{project}/features/{f.name}) "
                        f"in project **{project}**")  # fmt: skip

    def _write_variants(
        self,
        c: sqlite3.Connection,
        project: str,
        feature: str,
        env: str,
        variants: list[m.VariantBody],
        by: Principal,
    ) -> None:
        row = self._flag_environment(feature, env)
        if row is None:
            raise not_found(f"Could not find {feature} in {env}")
        fixed = fix_variant_weights([_variant_json(v) for v in variants])
        c.execute(
            "UPDATE feature_environments SET variants = ? WHERE feature = ? AND environment = ?",
            (json.dumps(fixed), feature, env),
        )
        self._event(c, "feature-environment-variants-updated", by, project=project,
                    feature=feature, environment=env,
                    pre_data={"variants": json.loads(row["variants"])}, data={"variants": fixed},
                    summary=f"**{by.user_name}** updated the variants of `{feature}` "
                    f"in *{env}*")  # fmt: skip

    def _write_tag_types(self, c: sqlite3.Connection, data: m.ImportData, by: Principal) -> None:
        seen: set[str] = set()
        for t in data.tagTypes:
            if (
                t.name in seen
                or c.execute("SELECT 1 FROM tag_types WHERE name = ?", (t.name,)).fetchone()
            ):
                continue
            seen.add(t.name)
            c.execute(
                "INSERT INTO tag_types(name, description, icon, color) VALUES(?, ?, ?, ?)",
                (t.name, t.description or "", t.icon, t.color),
            )
            self._event(c, "tag-type-created", by, data=t.model_dump(exclude_none=True),
                        summary=f"**{by.user_name}** created tag type **{t.name}**")  # fmt: skip

    def _write_tag(
        self, c: sqlite3.Connection, project: str, tag: m.ImportTag, by: Principal
    ) -> None:
        """A tag added (made first where it is new), as `POST /api/admin/features/:f/tags`."""
        kind, value, feature = tag.tagType, tag.tagValue, tag.featureName
        if not c.execute(
            "SELECT 1 FROM tags WHERE type = ? AND value = ?", (kind, value)
        ).fetchone():
            c.execute("INSERT INTO tags(type, value, created_at) VALUES(?, ?, ?)",
                      (kind, value, self.clock()))  # fmt: skip
            self._event(c, "tag-created", by, data={"type": kind, "value": value},
                        summary=f"**{by.user_name}** created tag **{kind}:{value}**")  # fmt: skip
        c.execute(
            "INSERT OR IGNORE INTO feature_tags(feature, tag_type, tag_value, created_at,"
            " created_by_user_id) VALUES(?, ?, ?, ?, ?)",
            (feature, kind, value, self.clock(), by.user_id),
        )
        said = f"**{by.user_name}** tagged `{feature}` with **{kind}:{value}**"
        self._event(c, "feature-tagged", by, project=project, feature=feature,
                    data={"type": kind, "value": value}, summary=said)  # fmt: skip

    def _write_fields(self, c: sqlite3.Connection, data: m.ImportData, by: Principal) -> None:
        for f in data.contextFields or []:
            if c.execute("SELECT 1 FROM context_fields WHERE name = ?", (f.name,)).fetchone():
                continue
            values = [v.model_dump(exclude_none=True) for v in f.legalValues or []]
            c.execute(
                "INSERT INTO context_fields(name, description, stickiness, sort_order,"
                " legal_values, created_at) VALUES(?, ?, ?, ?, ?, ?)",
                (f.name, f.description, int(bool(f.stickiness)), f.sortOrder or 0,
                 json.dumps(values), self.clock()),
            )  # fmt: skip
            said = f"**{by.user_name}** created context field **{f.name}**"
            logged = {"name": f.name, "description": f.description,
                    "stickiness": bool(f.stickiness), "legalValues": values}  # fmt: skip
            self._event(c, "context-field-created", by, summary=said, data=logged)

    @staticmethod
    def _delete_tags(c: sqlite3.Connection, names: list[str]) -> None:
        """Unleash's `deleteTagsForFeatures`: every tag of the imported flags goes (no event),
        before the data's are added."""
        for start in range(0, len(names), 500):
            part = names[start : start + 500]
            marks = ",".join("?" * len(part))
            c.execute(f"DELETE FROM feature_tags WHERE feature IN ({marks})", part)

    @staticmethod
    def _delete_strategies(c: sqlite3.Connection, names: list[str], env: str) -> None:
        """Unleash's `deleteStrategiesForFeatures`: no event."""
        for start in range(0, len(names), 500):
            part = names[start : start + 500]
            marks = ",".join("?" * len(part))
            ids = f"SELECT id FROM strategies WHERE environment = ? AND feature IN ({marks})"
            for table in ("strategy_segments", "strategy_context_fields"):
                c.execute(f"DELETE FROM {table} WHERE strategy_id IN ({ids})", (env, *part))
            c.execute(
                f"DELETE FROM strategies WHERE environment = ? AND feature IN ({marks})",
                (env, *part),
            )

    def _write_enabled(
        self,
        c: sqlite3.Connection,
        project: str,
        feature: str,
        env: str,
        enabled: bool,
        by: Principal,
    ) -> None:
        if self._flag_environment(feature, env) is None:
            raise not_found(f"Could not find {feature} in {env}")
        if enabled and all(r["disabled"] for r in self._strategy_rows(project, feature, env)):
            default = m.CreateFeatureStrategy(
                name="flexibleRollout",
                parameters={"rollout": DEFAULT_ROLLOUT, "stickiness": "default",
                            "groupId": feature},
            )  # fmt: skip
            self._insert_strategy(c, project, feature, env, default, by)
        self._set_enabled(c, project, feature, env, enabled, by)

    def _write_dependencies(
        self, c: sqlite3.Connection, data: m.ImportData, project: str, by: Principal
    ) -> None:
        for entry in data.dependencies or []:
            for d in entry.dependencies:
                enabled = d.enabled is not False
                variants = d.variants if enabled else None
                c.execute(
                    "INSERT INTO feature_dependencies(parent, child, enabled, variants)"
                    " VALUES(?, ?, ?, ?) ON CONFLICT(parent, child) DO UPDATE SET"
                    " enabled = excluded.enabled, variants = excluded.variants",
                    (d.feature, entry.feature, int(enabled),
                     None if variants is None else json.dumps(variants)),
                )  # fmt: skip
                shown: dict[str, object] = {"feature": d.feature, "enabled": enabled}
                if d.variants is not None:
                    shown["variants"] = d.variants
                self._event(c, "feature-dependency-added", by, project=project,
                            feature=entry.feature, data=shown,
                            summary=f"**{by.user_name}** made `{entry.feature}` depend on "
                            f"`{d.feature}`")  # fmt: skip
