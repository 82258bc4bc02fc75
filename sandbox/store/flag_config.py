"""A flag's configuration per environment, as Unleash 8.2 keeps and answers it (issue 37, slice
1): the environments and which of them each project has; a flag's full configuration (its
environments, each with its enabled state, strategies and variants); its metadata (`PUT`,
`PATCH`, stale marks); per flag and environment: on and off, strategies (their title,
parameters, constraints, segments by id, variants, disabled, order) and the flag's variants.

What Unleash checks, it checks here with its words (its `feature-toggle-service.ts`,
`environment-service.ts`, the variants and project-environments controllers): a flag of
another project is "There's no feature named ..." (404); a strategy is looked up by id alone,
and one of another flag or project is refused (403); a new strategy in an environment the
project lacks is "You have not added the current environment to the project" (400); turning a
flag on where it has no enabled strategy adds a gradual rollout at 100% first; a strategy
updated or deleted so that none is left enabled turns the environment off; variants get
their weights spread as Unleash spreads them (`fix_variant_weights`), and a flag's variants
per environment are refused (403) to a flag that has none yet anywhere, as 8.2 does without
its `enableLegacyVariants` flag. Every change records Unleash's event with the project, flag
and environment, and its `preData`/`data` where Unleash records them (`event_data`).

A strategy's segment ids must be segments' (Unleash's 404 `No segment exists with ID "7"`);
strategy types are not checked against definitions (neither does Unleash 8.2).
"""

from __future__ import annotations

import copy
import json
import sqlite3
import uuid
from collections.abc import Sequence
from typing import Any

import msgspec

from app.api import models as m
from sandbox.store.core import Principal, Refusal, bad_request, not_found, to_dt, to_wire_time
from sandbox.store.dependencies import Dependencies
from sandbox.store.features import Features
from sandbox.store.users import bad_data

#: the strategy Unleash adds when a flag is turned on where it has no enabled strategy
#: (`getDefaultStrategy`): a gradual rollout to everyone
DEFAULT_ROLLOUT = "100"


class PatchFailed(Exception):
    """A JSON Patch operation that cannot be applied (RFC 6902), with why."""


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchFailed(f"the path {path!r} does not start with '/'")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _parent(doc: Any, parts: list[str], path: str) -> tuple[Any, str]:
    node = doc
    for part in parts[:-1]:
        node = _child(node, part, path)
    return node, parts[-1]


def _child(node: Any, part: str, path: str) -> Any:
    if isinstance(node, dict):
        if part not in node:
            raise PatchFailed(f"nothing at {path}")
        return node[part]
    if isinstance(node, list):
        return node[_index(node, part, path, adding=False)]
    raise PatchFailed(f"nothing at {path}")


def _index(node: list[Any], part: str, path: str, *, adding: bool) -> int:
    if adding and part == "-":
        return len(node)
    if not part.isdigit() or (len(part) > 1 and part.startswith("0")):
        raise PatchFailed(f"{part!r} of {path} is no array index")
    index = int(part)
    if index > len(node) or (index == len(node) and not adding):
        raise PatchFailed(f"the index {index} of {path} is out of bounds")
    return index


def _get(doc: Any, path: str) -> Any:
    node = doc
    for part in _pointer(path):
        node = _child(node, part, path)
    return node


def _remove(doc: Any, path: str) -> tuple[Any, Any]:
    parts = _pointer(path)
    if not parts:
        raise PatchFailed("the whole document cannot be removed")
    parent, last = _parent(doc, parts, path)
    if isinstance(parent, dict):
        return doc, parent.pop(last, None)
    if isinstance(parent, list):
        if last.isdigit() and int(last) >= len(parent):
            return doc, None
        return doc, parent.pop(_index(parent, last, path, adding=False))
    raise PatchFailed(f"nothing at {path}")


def _add(doc: Any, path: str, value: Any, *, replace: bool = False) -> Any:
    parts = _pointer(path)
    if not parts:
        return value
    parent, last = _parent(doc, parts, path)
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        index = _index(parent, last, path, adding=not replace)
        if replace:
            parent[index] = value
        else:
            parent.insert(index, value)
    else:
        raise PatchFailed(f"nothing at {path}")
    return doc


def apply_patch(document: Any, operations: Sequence[m.Patch]) -> Any:
    """`document` (not changed) with the JSON Patch `operations` applied in order: add,
    remove, replace, move, copy and test, on objects and arrays (`/0`, `/-`). As Unleash's
    fast-json-patch (which does not validate) does it, removing a member or an item that is
    not there does nothing and replacing a member that is not there adds it; a path through
    nothing, an index past the end (but to add there) or a failed test is `PatchFailed`."""
    doc = copy.deepcopy(document)
    for op in operations:
        value = copy.deepcopy(op.value)
        if op.op == "add":
            doc = _add(doc, op.path, value)
        elif op.op == "replace":
            doc = _add(doc, op.path, value, replace=True)
        elif op.op == "remove":
            doc, _ = _remove(doc, op.path)
        elif op.op == "test":
            if _get(doc, op.path) != value:
                raise PatchFailed(f"the test of {op.path} failed")
        else:  # move, copy
            if op.from_ is None:
                raise PatchFailed(f"{op.op} needs a 'from'")
            if op.op == "move":
                doc, moved = _remove(doc, op.from_)
            else:
                moved = copy.deepcopy(_get(doc, op.from_))
            doc = _add(doc, op.path, moved)
    return doc


def fix_variant_weights(variants: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Unleash's `fixVariantWeights`: the "variable" variants share what the "fix" ones leave of
    1000 (the first ones one more each for the remainder), sorted by name; 400 without a
    variable variant or when the fixed ones pass 1000."""
    if not variants:
        return []
    variable = [dict(v) for v in variants if v.get("weightType") == "variable"]
    fixed = [dict(v) for v in variants if v.get("weightType") == "fix"]
    if not variable:
        raise bad_data('There must be at least one "variable" variant')
    fixed_total = sum(int(v["weight"]) for v in fixed)
    if fixed_total > 1000:
        raise bad_data("The traffic distribution total must equal 100%")
    share, remainder = divmod(1000 - fixed_total, len(variable))
    for v in variable:
        v["weight"] = share + (1 if remainder > 0 else 0)
        remainder -= 1 if remainder > 0 else 0
    return sorted(variable + fixed, key=lambda v: str(v["name"]))


def _unique_names(variants: Sequence[m.VariantBody | m.CreateStrategyVariant], where: str) -> None:
    names = [v.name for v in variants]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise bad_request(f"{where}: the variant name {twice[0]!r} is used more than once", where)


def _variant_json(v: m.VariantBody | m.CreateStrategyVariant) -> dict[str, Any]:
    return v.model_dump(exclude_none=True)


_decode = msgspec.json.decode
#: a project's API tokens that its environments count (`projectApiTokenCount`), by environment
_PROJECT_TOKENS = (
    "SELECT environment, count(*) FROM token_projects WHERE project = ? AND served = 0"
    " AND api_type IN ('client', 'frontend', 'backend') GROUP BY environment"
)


def stored(text: str) -> Any:
    """A JSON column's value, an empty list without the parser: most strategies' constraints
    and variants, and most flags' variants in an environment, are `[]` (a batch export of
    10,000 flags decoded 70,000 columns, 0.36 s of its 0.85 s). msgspec decodes the others, a
    small document in a third of the standard library's time (the same values: the columns
    hold what the sandbox wrote as JSON)."""
    return [] if text == "[]" else _decode(text)


class FlagConfig(Features, Dependencies):
    # ------------------------------------------------------------------ shared pieces

    def _flag_of_project(self, project: str, name: str) -> sqlite3.Row:
        """The flag, or Unleash's 404 (`validateFeatureBelongsToProject`) when no flag of that
        name is in that project (naming the project it is in, when it is in another)."""
        row = self.conn.execute("SELECT * FROM features WHERE name = ?", (name,)).fetchone()
        if row is None or row["project"] != project:
            there = (
                "."
                if row is None
                else (f', but there\'s a feature with that name in project "{row["project"]}"')
            )
            raise not_found(f'There\'s no feature named "{name}" in project "{project}"{there}')
        return row  # type: ignore[no-any-return]

    def _flag_environment(self, feature: str, environment: str) -> sqlite3.Row | None:
        return self.conn.execute(  # type: ignore[no-any-return]
            "SELECT * FROM feature_environments WHERE feature = ? AND environment = ?",
            (feature, environment),
        ).fetchone()

    @staticmethod
    def _segments_exist(c: sqlite3.Connection, ids: Sequence[int]) -> None:
        """Unleash's 404 (`segment-store`) for the first segment id no segment has."""
        for segment_id in ids:
            if c.execute("SELECT 1 FROM segments WHERE id = ?", (segment_id,)).fetchone() is None:
                raise not_found(f'No segment exists with ID "{segment_id}"')

    def _segments_of(self, ids: Sequence[str]) -> dict[str, list[int]]:
        found: dict[str, list[int]] = {i: [] for i in ids}
        for start in range(0, len(ids), 500):
            part = list(ids[start : start + 500])
            marks = ",".join("?" * len(part))
            for r in self.conn.execute(
                f"SELECT strategy_id, segment_id FROM strategy_segments"
                f" WHERE strategy_id IN ({marks}) ORDER BY segment_id", part
            ):  # fmt: skip
                found[r[0]].append(r[1])
        return found

    def _strategy_rows(self, project: str, feature: str, environment: str) -> list[sqlite3.Row]:
        return self.conn.execute(
            "SELECT * FROM strategies WHERE project = ? AND feature = ? AND environment = ?"
            " ORDER BY sort_order, created_at, id",
            (project, feature, environment),
        ).fetchall()

    @staticmethod
    def _public(row: sqlite3.Row, segments: list[int]) -> dict[str, Any]:
        """A strategy as Unleash writes it (`featureStrategyToPublic`): in answers and events."""
        return {
            "id": row["id"], "name": row["name"], "title": row["title"],
            "disabled": bool(row["disabled"]), "constraints": stored(row["constraints"]),
            "parameters": _decode(row["parameters"]), "variants": stored(row["variants"]),
            "sortOrder": row["sort_order"], "segments": segments,
        }  # fmt: skip

    def _strategy(self, row: sqlite3.Row) -> dict[str, Any]:
        return self._public(row, self._segments_of([row["id"]])[row["id"]])

    def _metadata(self, row: sqlite3.Row) -> dict[str, Any]:
        """A flag's metadata as Unleash records it in `feature-metadata-updated`."""
        return {
            "name": row["name"], "description": row["description"], "type": row["type"],
            "project": row["project"], "stale": self.stale_of(row),
            "impressionData": bool(row["impression_data"]),
            "createdAt": to_wire_time(row["created_at"]), "archived": False,
        }  # fmt: skip

    def _metadata_answer(self, row: sqlite3.Row) -> m.Feature:
        return m.Feature(
            name=row["name"], type=row["type"], description=row["description"],
            project=row["project"], stale=self.stale_of(row),
            impressionData=bool(row["impression_data"]), createdAt=to_dt(row["created_at"]),
            archived=row["archived_at"] is not None, archivedAt=to_dt(row["archived_at"]),
        )  # fmt: skip

    # ------------------------------------------------------------------ environments

    def _environment(self, row: sqlite3.Row) -> m.Environment:
        counts = self.conn.execute(
            "SELECT (SELECT count(*) FROM project_environments WHERE environment = :e),"
            " (SELECT count(*) FROM tokens WHERE environment = :e AND served = 0"
            "   AND api_type IN ('client', 'frontend', 'backend')),"
            " (SELECT count(*) FROM feature_environments fe JOIN features f"
            "   ON f.name = fe.feature WHERE fe.environment = :e AND fe.enabled = 1"
            "   AND f.archived_at IS NULL)",
            {"e": row["name"]},
        ).fetchone()
        return m.Environment(
            name=row["name"], type=row["type"], enabled=True, protected=False,
            sortOrder=row["sort_order"] or 0, projectCount=counts[0], apiTokenCount=counts[1],
            enabledToggleCount=counts[2],
        )  # fmt: skip

    def environments(self) -> m.Environments:
        """`GET /api/admin/environments`: every environment, in their sort order."""
        rows = self.conn.execute("SELECT * FROM environments ORDER BY sort_order, name").fetchall()
        return m.Environments(version=1, environments=[self._environment(r) for r in rows])

    def environment(self, name: str) -> m.Environment:
        """`GET /api/admin/environments/:name`; 404 with Unleash's words."""
        row = self.conn.execute("SELECT * FROM environments WHERE name = ?", (name,)).fetchone()
        if row is None:
            raise not_found(f"Could not find environment with name: {name}")
        return self._environment(row)

    def project_environments(self, project: str) -> m.EnvironmentsProject:
        """`GET /api/admin/environments/project/:projectId`: every environment, `visible` where
        the project has it (Unleash answers an unknown project so too: none visible)."""
        has = {
            r[0]
            for r in self.conn.execute(
                "SELECT environment FROM project_environments WHERE project = ?", (project,)
            )
        }
        # one grouped count each, the tokens through `token_projects` (migration 15)
        enabled = dict(self.conn.execute(
            "SELECT fe.environment, count(*) FROM feature_environments fe JOIN features f"
            " ON f.name = fe.feature WHERE fe.enabled = 1 AND f.project = ?"
            " AND f.archived_at IS NULL GROUP BY fe.environment",
            (project,),
        ).fetchall())  # fmt: skip
        tokens = self._tokens_of_every_project().copy()
        for environment, count in self.conn.execute(_PROJECT_TOKENS, (project,)):
            if project != "*":  # no project is named so; counted once if one were
                tokens[environment] = tokens.get(environment, 0) + count
        out = [
            m.EnvironmentProject(
                name=r["name"], type=r["type"], enabled=True, protected=False,
                sortOrder=r["sort_order"] or 0, projectApiTokenCount=tokens.get(r["name"], 0),
                projectEnabledToggleCount=enabled.get(r["name"], 0), visible=r["name"] in has,
            )
            for r in self.conn.execute("SELECT * FROM environments ORDER BY sort_order, name")
        ]  # fmt: skip
        return m.EnvironmentsProject(version=1, environments=out)

    def _tokens_of_every_project(self) -> dict[str | None, int]:
        """The API tokens of every project (`*`) that a project's environments count, by
        environment, counted again only when the database has changed since: the scale set
        has 1,430 of them, 0.7 ms to count, on each of its 500 projects' answers."""
        changed = (
            self.conn.execute("PRAGMA data_version").fetchone()[0],
            self.conn.total_changes,
        )  # others' commits, and this connection's
        if self._every_project_tokens is None or self._every_project_tokens[0] != changed:
            counts = dict(self.conn.execute(_PROJECT_TOKENS, ("*",)).fetchall())
            self._every_project_tokens = (changed, counts)
        return self._every_project_tokens[1]

    def add_project_environment(self, project: str, environment: str, by: Principal) -> None:
        """`POST /api/admin/projects/:p/environments`: the project gets the environment, and
        each of its flags (archived ones too) a place in it, off; 404 "No project found", 400
        for an unknown environment, 409 when the project has it (8.2's words, measured)."""
        if self.conn.execute("SELECT 1 FROM projects WHERE id = ?", (project,)).fetchone() is None:
            raise not_found("No project found")
        known = self.conn.execute("SELECT 1 FROM environments WHERE name = ?", (environment,))
        if known.fetchone() is None:
            raise bad_data(f"Environment {environment} does not exist")
        with self.tx() as c:
            if c.execute("SELECT 1 FROM project_environments WHERE project = ? AND environment = ?",
                         (project, environment)).fetchone():  # fmt: skip
                raise Refusal(
                    409,
                    "NameExistsError",
                    f"{project} already has the environment {environment} enabled",
                )
            c.execute("INSERT INTO project_environments(project, environment) VALUES(?, ?)",
                      (project, environment))  # fmt: skip
            c.execute(
                "INSERT OR IGNORE INTO feature_environments(feature, environment, enabled)"
                " SELECT name, ?, 0 FROM features WHERE project = ?",
                (environment, project),
            )
            self._event(c, "project-environment-added", by, project=project,
                               environment=environment,
                               summary=f"**{by.user_name}** added environment *{environment}* "
                               f"to project **{project}**")  # fmt: skip

    def remove_project_environment(self, project: str, environment: str, by: Principal) -> None:
        """`DELETE /api/admin/projects/:p/environments/:env`: gone from the project with every
        flag's configuration in it (strategies, their segments, enabled state, variants), as
        Unleash's `forceRemoveEnvironmentFromProject`; 200 and an event even when the project
        did not have it (Unleash checks nothing)."""
        with self.tx() as c:
            gone = "SELECT id FROM strategies WHERE project = ? AND environment = ?"
            for table in ("strategy_segments", "strategy_context_fields"):
                c.execute(f"DELETE FROM {table} WHERE strategy_id IN ({gone})",
                          (project, environment))  # fmt: skip
            c.execute("DELETE FROM strategies WHERE project = ? AND environment = ?",
                      (project, environment))  # fmt: skip
            c.execute(
                "DELETE FROM feature_environments WHERE environment = ?"
                " AND feature IN (SELECT name FROM features WHERE project = ?)",
                (environment, project),
            )
            c.execute("DELETE FROM project_environments WHERE project = ? AND environment = ?",
                      (project, environment))  # fmt: skip
            self._event(c, "project-environment-removed", by, project=project,
                               environment=environment,
                               summary=f"**{by.user_name}** removed environment *{environment}* "
                               f"from project **{project}**")  # fmt: skip

    # ------------------------------------------------------------------ a flag's configuration

    def _environment_of(
        self, row: sqlite3.Row, flag: sqlite3.Row, with_variants: bool
    ) -> m.FeatureEnvironment:
        """One environment of a flag's configuration, with the fields 8.2 sends (measured)."""
        strategies = [
            self._strategy(s)
            for s in self._strategy_rows(flag["project"], flag["name"], row["environment"])
        ]
        env = m.FeatureEnvironment(
            name=row["environment"], lastSeenAt=to_dt(row["last_seen_at"]),
            enabled=bool(row["enabled"]), type=row["type"], sortOrder=row["sort_order"] or 0,
            strategies=[m.FeatureStrategy.model_validate(s) for s in strategies],
        )  # fmt: skip
        if with_variants:
            env.variants = [m.Variant.model_validate(v) for v in json.loads(row["variants"])]
        return env

    def feature_configuration(
        self, project: str, name: str, *, with_variants: bool = True
    ) -> m.Feature:
        """`GET /api/admin/projects/:p/features/:name` (featureSchema): the flag with each of
        its environments (in their sort order): enabled, strategies in their order, and with
        `?variantEnvironments=true` (`with_variants`) its variants there; the fields 8.2 sends
        (measured), but its creator, collaborators, links and lifecycle. An archived flag is
        404, as Unleash reads only live ones here."""
        flag = self._flag_of_project(project, name)
        if flag["archived_at"] is not None:
            raise not_found(f"Could not find feature flag with name {name}")
        rows = self.conn.execute(
            "SELECT fe.*, e.type, e.sort_order FROM feature_environments fe"
            " JOIN environments e ON e.name = fe.environment WHERE fe.feature = ?"
            " ORDER BY e.sort_order, e.name",
            (name,),
        ).fetchall()
        answer = self._metadata_answer(flag)
        answer.environments = [self._environment_of(r, flag, with_variants) for r in rows]
        answer.dependencies = [d.model_dump(exclude_none=True) for d in self.dependencies_of(name)]
        answer.children = self.children_of(name)
        return answer

    def feature_environment(
        self, project: str, name: str, environment: str
    ) -> m.FeatureEnvironment:
        """`GET .../features/:name/environments/:env` (Unleash's `getEnvironmentInfo`)."""
        flag = self._flag_of_project(project, name)
        row = self._flag_environment(name, environment)
        if row is None:
            raise not_found(f"Could not find {name} in {environment}")
        strategies = []
        for s in self._strategy_rows(project, name, environment):
            public = self._strategy(s)
            public["featureName"] = name
            del public["segments"]  # (8.2 sends them not here: measured)
            strategies.append(m.FeatureStrategy.model_validate(public))
        return m.FeatureEnvironment(
            name=flag["name"],
            environment=environment,
            enabled=bool(row["enabled"]),
            strategies=strategies,
        )

    # ------------------------------------------------------------------ metadata

    def _write_metadata(
        self, c: sqlite3.Connection, before: sqlite3.Row, fields: dict[str, Any], by: Principal
    ) -> sqlite3.Row:
        name, project = before["name"], before["project"]
        c.execute(
            "UPDATE features SET description = ?, type = ?, impression_data = ?, stale = ?"
            " WHERE name = ?",
            (fields["description"], fields["type"], int(bool(fields["impressionData"])),
             int(bool(fields["stale"])), name),
        )  # fmt: skip
        after = c.execute("SELECT * FROM features WHERE name = ?", (name,)).fetchone()
        self._event(c, "feature-metadata-updated", by, project=project, feature=name,
                           pre_data=self._metadata(before), data=self._metadata(after),
                           summary=f"**{by.user_name}** updated the metadata of `{name}` "
                           f"in project **{project}**")  # fmt: skip
        return after  # type: ignore[no-any-return]

    def update_feature(
        self, project: str, name: str, req: m.UpdateFeature, by: Principal
    ) -> m.Feature:
        """`PUT /api/admin/projects/:p/features/:name`: what is left out is Unleash's default
        (type `release`, not stale, no impression data, no description: measured on 8.2); no
        stale event (only `PATCH` and `POST .../stale` record one)."""
        if req.name is not None and req.name != name:
            raise bad_data("Cannot change name of feature flag")
        before = self._flag_of_project(project, name)
        fields = {
            "description": req.description,
            "type": req.type or "release", "stale": bool(req.stale),
            "impressionData": bool(req.impressionData),
        }  # fmt: skip
        with self.tx() as c:
            after = self._write_metadata(c, before, fields, by)
        return self._metadata_answer(after)

    def patch_feature(
        self, project: str, name: str, ops: Sequence[m.Patch], by: Principal
    ) -> m.Feature:
        """`PATCH /api/admin/projects/:p/features/:name`: JSON Patch of the metadata; a
        change of `stale` records `feature-stale-on`/`-off` too; variants are refused (403)."""
        if any("/variants" in op.path for op in ops):
            raise Refusal(
                403,
                "OperationDeniedError",
                "Changing variants is done via PATCH "
                "operation to /api/admin/projects/:project/features/:feature/variants",
            )
        before = self._flag_of_project(project, name)
        doc = self._metadata(before)
        try:
            patched = apply_patch(doc, ops)
        except PatchFailed as exc:
            raise bad_data(f"Could not apply provided patch: {exc}") from None
        if not isinstance(patched, dict) or patched.get("name", name) != name:
            raise bad_data("Cannot change name of feature flag")
        checked = _check_metadata(patched)
        with self.tx() as c:
            after = self._write_metadata(c, before, checked, by)
            if bool(checked["stale"]) != doc["stale"]:
                self._stale_event(c, name, project, bool(checked["stale"]), by)
        return self._metadata_answer(after)

    def _stale_event(
        self, c: sqlite3.Connection, name: str, project: str, stale: bool, by: Principal
    ) -> None:
        word = "stale" if stale else "no longer stale"
        self._event(c, "feature-stale-on" if stale else "feature-stale-off", by,
                           project=project, feature=name,
                           summary=f"**{by.user_name}** marked `{name}` as {word}")  # fmt: skip

    def stale_features(
        self, project: str, names: Sequence[str], stale: bool, by: Principal
    ) -> None:
        """`POST /api/admin/projects/:p/stale` `{features, stale}` (202): 403 when a flag named
        is another project's; those already so are left (no event), unknown names skipped."""
        rows = self._in_project(names, project)
        with self.tx() as c:
            for r in rows:
                row = c.execute("SELECT * FROM features WHERE name = ?", (r["name"],)).fetchone()
                if self.stale_of(row) == stale:
                    continue
                c.execute("UPDATE features SET stale = ? WHERE name = ?", (int(stale), r["name"]))
                self._stale_event(c, r["name"], project, stale, by)

    # ------------------------------------------------------------------ on and off

    def _set_enabled(
        self,
        c: sqlite3.Connection,
        project: str,
        name: str,
        environment: str,
        enabled: bool,
        by: Principal,
    ) -> None:
        changed = c.execute(
            "UPDATE feature_environments SET enabled = ? WHERE feature = ? AND environment = ?"
            " AND enabled = ?",
            (int(enabled), name, environment, int(not enabled)),
        ).rowcount
        if changed:
            word = "enabled" if enabled else "disabled"
            self._event(c, f"feature-environment-{word}", by, project=project,
                               feature=name, environment=environment,
                               summary=f"**{by.user_name}** {word} "
                               f"[`{name}`](/projects/{project}/features/{name}) in "
                               f"*{environment}*")  # fmt: skip

    def set_enabled(
        self, project: str, name: str, environment: str, enabled: bool, by: Principal
    ) -> None:
        """`POST .../environments/:env/on|off`: an event only when it changes; turned on with
        no enabled strategy, it gets a gradual rollout at 100% first, as Unleash gives it."""
        flag = self._flag_of_project(project, name)
        if self._flag_environment(name, environment) is None:
            raise not_found(f"Could not find environment {environment} for feature: {name}")
        if flag["archived_at"] is not None:
            raise Refusal(
                400, "ArchivedFeatureError", "Cannot perform this operation on archived features"
            )
        with self.tx() as c:
            if enabled:
                rows = self._strategy_rows(project, name, environment)
                if all(r["disabled"] for r in rows):
                    default = m.CreateFeatureStrategy(
                        name="flexibleRollout",
                        parameters={
                            "rollout": DEFAULT_ROLLOUT,
                            "stickiness": "default",
                            "groupId": name,
                        },
                    )
                    self._insert_strategy(c, project, name, environment, default, by)
            self._set_enabled(c, project, name, environment, enabled, by)

    def _disable_without_enabled_strategies(
        self, c: sqlite3.Connection, project: str, name: str, environment: str, by: Principal
    ) -> None:
        """Unleash's `optionallyDisableFeature`: off where no strategy is left enabled."""
        if all(r["disabled"] for r in self._strategy_rows(project, name, environment)):
            self._set_enabled(c, project, name, environment, False, by)

    # ------------------------------------------------------------------ strategies

    def _parameters(self, name: str | None, feature: str, given: dict[str, str] | None
                    ) -> dict[str, str]:  # fmt: skip
        """Unleash's `parametersWithDefaults`: a gradual rollout's rollout (100), stickiness
        (the project's default: `default`) and group id (the flag's name)."""
        params = dict(given or {})
        if name == "flexibleRollout":
            params["rollout"] = params.get("rollout", DEFAULT_ROLLOUT)
            params["stickiness"] = params.get("stickiness") or "default"
            params["groupId"] = params.get("groupId") or feature
        return params

    def _insert_strategy(
        self,
        c: sqlite3.Connection,
        project: str,
        feature: str,
        environment: str,
        req: m.CreateFeatureStrategy,
        by: Principal,
    ) -> str:
        _unique_names(req.variants, "variants")
        variants = fix_variant_weights([_variant_json(v) for v in req.variants])
        constraints = [k.model_dump() for k in req.constraints]
        if req.sortOrder is not None:
            sort_order = req.sortOrder
        else:
            top = c.execute(
                "SELECT max(sort_order) FROM strategies WHERE feature = ? AND environment = ?",
                (feature, environment),
            ).fetchone()[0]
            sort_order = 0 if top is None else top + 1
        strategy_id = str(uuid.uuid4())
        c.execute(
            "INSERT INTO strategies(id, feature, project, environment, name, title, disabled,"
            " parameters, constraints, variants, sort_order, created_at)"
            " VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (strategy_id, feature, project, environment, req.name, req.title,
             int(req.disabled), json.dumps(self._parameters(req.name, feature, req.parameters)),
             json.dumps(constraints), json.dumps(variants), sort_order, self.clock()),
        )  # fmt: skip
        c.executemany(
            "INSERT OR IGNORE INTO strategy_context_fields(strategy_id, context_name) VALUES(?, ?)",
            [(strategy_id, k.contextName) for k in req.constraints],
        )
        self._segments_exist(c, req.segments)
        c.executemany(
            "INSERT OR IGNORE INTO strategy_segments(strategy_id, segment_id) VALUES(?, ?)",
            [(strategy_id, s) for s in req.segments],
        )
        row = c.execute("SELECT * FROM strategies WHERE id = ?", (strategy_id,)).fetchone()
        self._event(c, "feature-strategy-add", by, project=project, feature=feature,
                           environment=environment, data=self._strategy(row),
                           summary=f"**{by.user_name}** added strategy **{req.name}** to "
                           f"`{feature}` in *{environment}*")  # fmt: skip
        return strategy_id

    def add_strategy(
        self,
        project: str,
        feature: str,
        environment: str,
        req: m.CreateFeatureStrategy,
        by: Principal,
    ) -> m.FeatureStrategy:
        """`POST .../environments/:env/strategies` (createFeatureStrategySchema): 404 for a
        flag not in the project, 400 where the project lacks the environment (Unleash's
        foreign key), variants' weights spread, the next sort order unless one is given."""
        self._flag_of_project(project, feature)
        has = self.conn.execute(
            "SELECT 1 FROM project_environments WHERE project = ? AND environment = ?",
            (project, environment),
        ).fetchone()
        if has is None or self._flag_environment(feature, environment) is None:
            raise bad_data("You have not added the current environment to the project")
        with self.tx() as c:
            strategy_id = self._insert_strategy(c, project, feature, environment, req, by)
        return self.feature_strategy(project, feature, environment, strategy_id)

    def feature_strategies(
        self, project: str, feature: str, environment: str
    ) -> list[m.FeatureStrategy]:
        """`GET .../environments/:env/strategies`: in their order; 404 where the flag has no
        such environment (Unleash's words)."""
        if self._flag_environment(feature, environment) is None:
            raise not_found(f"Feature {feature} does not have environment {environment}")
        return [m.FeatureStrategy.model_validate(self._strategy(r))
                for r in self._strategy_rows(project, feature, environment)]  # fmt: skip

    def _strategy_row(self, strategy_id: str, message: str) -> sqlite3.Row:
        row = self.conn.execute("SELECT * FROM strategies WHERE id = ?", (strategy_id,)).fetchone()
        if row is None:
            raise not_found(message)
        return row  # type: ignore[no-any-return]

    def strategy_belongs(self, project: str, feature: str, strategy_id: str) -> bool:
        """Unleash's `strategyBelongsToFeatureAndProject` (its GET and PATCH answer 403 with
        no body when not); an unknown id is 404 "Could not find strategy with id: ..."."""
        row = self._strategy_row(strategy_id, f"Could not find strategy with id: {strategy_id}")
        return bool(row["project"] == project and row["feature"] == feature)

    def feature_strategy(
        self, project: str, feature: str, environment: str, strategy_id: str
    ) -> m.FeatureStrategy:
        """One strategy by id (Unleash's `getStrategy`: the environment in the path is not
        checked)."""
        row = self._strategy_row(strategy_id, f"Could not find strategy with id: {strategy_id}")
        return m.FeatureStrategy.model_validate(self._strategy(row))

    def _owned_strategy(self, project: str, feature: str, strategy_id: str) -> sqlite3.Row:
        row = self._strategy_row(strategy_id, f"Could not find strategy with id={strategy_id}")
        if row["project"] != project:
            raise Refusal(
                403,
                "InvalidOperationError",
                "You can not change the projectId for an activation strategy.",
            )
        if row["feature"] != feature:
            raise Refusal(
                403,
                "InvalidOperationError",
                "You can not change the featureName for an activation strategy.",
            )
        return row

    def update_strategy(
        self,
        project: str,
        feature: str,
        environment: str,
        strategy_id: str,
        req: m.UpdateFeatureStrategy,
        by: Principal,
    ) -> m.FeatureStrategy:
        """`PUT .../strategies/:id` (updateFeatureStrategySchema) as Unleash's
        `mapStrategyUpdate` writes it: the name, title and disabled kept when left out (or
        null), the parameters, constraints and variants what is sent (none when left out; a
        gradual rollout's parameters with their defaults), the segments replaced when a list is
        sent, the sort order never (set-sort-order does that); an update that leaves no
        strategy enabled turns the environment off."""
        before = self._owned_strategy(project, feature, strategy_id)
        pre = self._strategy(before)
        sets: dict[str, Any] = {
            "parameters": json.dumps(self._parameters(req.name, feature, req.parameters))
        }
        if req.name is not None:
            sets["name"] = req.name
        if req.title is not None:
            sets["title"] = req.title
        if req.disabled is not None:
            sets["disabled"] = int(req.disabled)
        constraints = req.constraints or []
        sets["constraints"] = json.dumps([k.model_dump() for k in constraints])
        _unique_names(req.variants or [], "variants")
        sets["variants"] = json.dumps(
            fix_variant_weights([_variant_json(v) for v in req.variants or []])
        )
        env = before["environment"]
        with self.tx() as c:
            assignments = ", ".join(f"{k} = ?" for k in sets)
            c.execute(f"UPDATE strategies SET {assignments} WHERE id = ?",
                      (*sets.values(), strategy_id))  # fmt: skip
            c.execute("DELETE FROM strategy_context_fields WHERE strategy_id = ?", (strategy_id,))
            c.executemany(
                "INSERT OR IGNORE INTO strategy_context_fields(strategy_id, context_name)"
                " VALUES(?, ?)",
                [(strategy_id, k.contextName) for k in constraints],
            )
            if req.segments is not None:
                self._segments_exist(c, req.segments)
                c.execute("DELETE FROM strategy_segments WHERE strategy_id = ?", (strategy_id,))
                c.executemany(
                    "INSERT OR IGNORE INTO strategy_segments(strategy_id, segment_id) VALUES(?, ?)",
                    [(strategy_id, s) for s in req.segments],
                )
            after = c.execute("SELECT * FROM strategies WHERE id = ?", (strategy_id,)).fetchone()
            data = self._strategy(after)
            self._event(c, "feature-strategy-update", by, project=project,
                               feature=feature, environment=environment, pre_data=pre, data=data,
                               summary=f"**{by.user_name}** updated strategy "
                               f"**{after['name']}** of `{feature}` in *{env}*")  # fmt: skip
            self._disable_without_enabled_strategies(c, project, feature, env, by)
        return m.FeatureStrategy.model_validate(data)

    def patch_strategy(
        self,
        project: str,
        feature: str,
        environment: str,
        strategy_id: str,
        ops: Sequence[m.Patch],
        by: Principal,
    ) -> m.FeatureStrategy:
        """`PATCH .../strategies/:id`: JSON Patch of the strategy as it is answered, then an
        update with the result (400 when the result is no strategy)."""
        row = self._owned_strategy(project, feature, strategy_id)
        try:
            patched = apply_patch(self._strategy(row), ops)
        except PatchFailed as exc:
            raise bad_data(f"Could not apply provided patch: {exc}") from None
        try:
            req = m.UpdateFeatureStrategy.model_validate(patched)
        except Exception as exc:  # pydantic's ValidationError: what is wrong, where
            raise bad_request(f"The patched strategy is invalid: {exc}") from None
        return self.update_strategy(project, feature, environment, strategy_id, req, by)

    def delete_strategy(
        self, project: str, feature: str, environment: str, strategy_id: str, by: Principal
    ) -> None:
        """`DELETE .../strategies/:id`: 404 for an unknown id (8.2, measured); its segments'
        rows go with it; with no strategy left enabled the environment is off."""
        row = self._owned_strategy(project, feature, strategy_id)
        pre = self._strategy(row)
        with self.tx() as c:
            for table in ("strategy_segments", "strategy_context_fields"):
                c.execute(f"DELETE FROM {table} WHERE strategy_id = ?", (strategy_id,))
            c.execute("DELETE FROM strategies WHERE id = ?", (strategy_id,))
            self._disable_without_enabled_strategies(c, project, feature, environment, by)
            self._event(c, "feature-strategy-remove", by, project=project,
                               feature=feature, environment=environment, pre_data=pre,
                               summary=f"**{by.user_name}** removed strategy **{row['name']}** "
                               f"from `{feature}` in *{environment}*")  # fmt: skip

    def set_strategy_order(
        self,
        project: str,
        feature: str,
        environment: str,
        orders: Sequence[m.StrategySortOrder],
        by: Principal,
    ) -> None:
        """`POST .../strategies/set-sort-order`: every id must be one of the environment's
        strategies (else 400, Unleash's words); `strategy-order-changed` with the order before
        and after."""
        before = [s.id for s in self.feature_strategies(project, feature, environment)]
        if any(o.id not in before for o in orders):
            raise bad_data("trying to change strategies for environment via update sortOrder")
        with self.tx() as c:
            c.executemany("UPDATE strategies SET sort_order = ? WHERE id = ?",
                          [(o.sortOrder, o.id) for o in orders])  # fmt: skip
            after = [r["id"] for r in self._strategy_rows(project, feature, environment)]
            self._event(c, "strategy-order-changed", by, project=project,
                               feature=feature, environment=environment,
                               pre_data={"strategyIds": before}, data={"strategyIds": after},
                               summary=f"**{by.user_name}** reordered the strategies of "
                               f"`{feature}` in *{environment}*")  # fmt: skip

    # ------------------------------------------------------------------ variants

    def feature_variants(self, project: str, feature: str, environment: str) -> m.FeatureVariants:
        """`GET .../environments/:env/variants`: 404 for a flag not in the project or an
        environment it lacks (8.2's words, measured)."""
        self._flag_of_project(project, feature)
        row = self._flag_environment(feature, environment)
        if row is None:
            raise not_found(f"Could not find {feature} in {environment}")
        variants = json.loads(row["variants"])
        return m.FeatureVariants(
            version=1, variants=[m.Variant.model_validate(v) for v in variants]
        )

    def _variants_place(
        self, project: str, feature: str, environment: str, legacy_only: bool
    ) -> list[Any]:
        """The variants before a write: with `legacy_only` (8.2, and every release from 6.x),
        403 for a flag with none in any environment ("Environment variants deprecated"); then
        404 for a flag not in the project or an environment it lacks (where Unleash would
        write regardless)."""
        legacy = self.conn.execute(
            "SELECT 1 FROM feature_environments WHERE feature = ? AND variants <> '[]'", (feature,)
        ).fetchone()
        if legacy is None and legacy_only:
            raise Refusal(
                403,
                "InvalidOperationError",
                f"Environment variants deprecated for feature: {feature}. "
                "Use strategy variants instead.",
            )
        self._flag_of_project(project, feature)
        row = self._flag_environment(feature, environment)
        if row is None:
            raise not_found(f"Could not find {feature} in {environment}")
        return json.loads(row["variants"])  # type: ignore[no-any-return]

    def _save_variants(
        self,
        project: str,
        feature: str,
        environment: str,
        old: list[Any],
        new: Sequence[m.VariantBody],
        by: Principal,
    ) -> m.FeatureVariants:
        _unique_names(new, "variants")
        fixed = fix_variant_weights([_variant_json(v) for v in new])
        with self.tx() as c:
            c.execute(
                "UPDATE feature_environments SET variants = ? WHERE feature = ?"
                " AND environment = ?",
                (json.dumps(fixed), feature, environment),
            )
            self._event(c, "feature-environment-variants-updated", by, project=project,
                               feature=feature, environment=environment,
                               pre_data={"variants": old}, data={"variants": fixed},
                               summary=f"**{by.user_name}** updated the variants of `{feature}` "
                               f"in *{environment}*")  # fmt: skip
        return m.FeatureVariants(version=1, variants=[m.Variant.model_validate(v) for v in fixed])

    def put_variants(
        self,
        project: str,
        feature: str,
        environment: str,
        variants: Sequence[m.VariantBody],
        by: Principal,
        *,
        legacy_only: bool = True,
    ) -> m.FeatureVariants:
        """`PUT .../environments/:env/variants`: the environment's variants from now on."""
        old = self._variants_place(project, feature, environment, legacy_only)
        return self._save_variants(project, feature, environment, old, variants, by)

    def patch_variants(
        self,
        project: str,
        feature: str,
        environment: str,
        ops: Sequence[m.Patch],
        by: Principal,
        *,
        legacy_only: bool = True,
    ) -> m.FeatureVariants:
        """`PATCH .../environments/:env/variants`: JSON Patch of the list (what Unleash's
        console sends: add, replace and remove at `/n`); 400 "Could not apply provided patch"
        when it cannot be applied or the result is no list of variants."""
        old = self._variants_place(project, feature, environment, legacy_only)
        try:
            patched = apply_patch(old, ops)
        except PatchFailed as exc:
            raise bad_data(f"Could not apply provided patch: {exc}") from None
        try:
            new = m.VariantsBody.model_validate(patched).root
        except Exception as exc:  # pydantic's ValidationError: what is wrong, where
            raise bad_data(f"Could not apply provided patch: {exc}") from None
        return self._save_variants(project, feature, environment, old, new, by)


def _check_metadata(doc: dict[str, Any]) -> dict[str, Any]:
    """A patched flag's metadata as Unleash's `featureMetadataSchema` takes it (400 naming the
    field otherwise)."""
    try:
        checked = m.UpdateFeature.model_validate(doc)
    except Exception as exc:  # pydantic's ValidationError: what is wrong, where
        raise bad_request(f"The patched flag is invalid: {exc}") from None
    return {
        "description": checked.description, "type": checked.type or "release",
        "stale": bool(checked.stale), "impressionData": bool(checked.impressionData),
    }  # fmt: skip
