"""Promoting configuration from one snapshot (a server, a file, an environment) to a live
server (`compare.promote`): the plan, its two stages through the runner, and its undo. The one
path `flagdesk promote` and the Compare window's "Promote…" share.

**The plan** (`plan_promote`) is exactly the requests, one line each, in dependency order:

1. stage 1, what flags need: context fields (created, or replaced whole with their legal
   values), tag types, segments, custom strategy definitions, and environments a target
   project lacks (`POST /api/admin/projects/:p/environments`);
2. stage 2, the flags: created (type, description, impression data) or their metadata put
   (`PUT`, every field: Unleash 8.2 sets what is left out to its default, stale included); then
   each flag's tags, its dependencies (after every flag exists), and per environment its
   strategies (added, updated by the TARGET's strategy id, deleted; then their sort order when
   it differs or a strategy was added), its variants, and last whether it is on (after its
   strategies are there);
3. still stage 2, after the flags: with `--delete-extra`, the segments, tag types, context
   fields and strategy definitions only the target has, each only when nothing uses it then.

**In batches** (`Batching`, `batching_of`): where the target's token may import
(`compare.import`: a user's token with the Admin root role; Unleash refuses an admin API
token's import on every release), stage 2 sends the flags' configuration per environment as
imports (`POST /api/admin/features-batch/import`), one a target project and environment (split
where a body would pass `BATCH_BODY_LIMIT`), each in one transaction: an environment of a flag
goes in one when the one-by-one plan would send anything there but emptying its variants, and
every environment with anything of a flag the target lacks. What an import does (measured on
8.2, `sandbox.store.batch_import`) decides what its body holds: the flag's metadata (the
source's: it is overwritten), its tags after (the import puts them in place of the flag's: the
target's own kept unless `delete_extra`), and in that environment its strategies after (the
source's with their sort order, which the import keeps, and the target's own kept in the same
way: it deletes the others), enabled state and variants (written when there are some, for any
flag). A strategy names its segments by name (the target maps them to its own), so an import
does not depend on stage 1's segment ids. After the imports, request by request: the flags'
parents and an environment's variants emptied (an import leaves them; a flag it creates is
stale as the body says, measured); a flag with no environment in an import goes one by one as
above. The plan says how (`PromotePlan.how`), and with an admin API token why not. Before it
is shown, `validated` asks the target's validation of each import (a read): its errors stop
the promote with the server's words (`ImportRefused`), but those about what stage 1 brings;
its warnings are shown.

A strategy names its segments by id. A segment stage 1 creates has none yet, so stage 2 is
planned again once stage 1 is done, from the target's segments read again (name -> id):
`PromotePlan.second_stage(ids)`, which must say word for word what was shown (only the ids
differ); until then a line says `segment “Beta testers” (created in stage 1)`.

Strategies are paired by content as the comparison pairs them (`app.snapshot.compare`: name,
title and sort order, then name), so a promote done twice sends nothing the second time.

**What is not promoted** is left out of the plan, each with why (`LeftOut`): people and access
(users, groups, roles, project access, API tokens: "not configuration"), a kind one side did
not read, a project the target lacks (flagdesk does not create projects), an environment the
target lacks, a flag in another project on the target, a strategy whose custom definition the
target lacks and the selection does not bring, a project's name or description, environment
variants where Unleash 8.2 refuses them (a flag without any: "use strategy variants").

**Only in the target** is not acted on unless `delete_extra`: a promote adds and changes, it
does not delete what the target has of its own. With it: strategies deleted, flags archived,
tags and dependencies removed, segments, tag types, context fields and strategy definitions
deleted when unused.

**Applying** (`PromoteStage`, a `runner.Plan`): each stage is carried out by the runner; the
first writes one snapshot FILE (`app.snapshot.files.save`) of the target as it was (its
configuration: people and access are not kept) into the journal's folder, whose name every
entry's `before` holds with the promote's id, the stage, and the object it changes. Never a
secret: flag configuration holds none, and a snapshot refuses one.

**Undo** (`plan_undo_promote`): the same planner, from the snapshot taken before (source) to
the server now (target), restricted to what the promote touched (an import's entry names its
flags in `before["flags"]`) and to the environments it wrote to (a change made since in
another environment of a flag it touched stays), in batches where the connection may import,
with `delete_extra` on: a flag the promote created is archived, a strategy, segment, tag type
or context field it created deleted, what it changed put back field by field (strategies by
content). A flag the promote archived is not brought back by it (`flagdesk archive revive`);
a project environment it added is removed again."""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from app.actions.journal import Entry, Journal, State
from app.actions.runner import PlanBase, Step
from app.api import client as c
from app.api import models as m
from app.api.capabilities import Capabilities
from app.api.wire import BATCH_BODY_LIMIT
from app.changes import Changes, Resource
from app.registry import IMPORT, PROMOTE, Action
from app.snapshot import model as s
from app.snapshot.compare import (
    NO_ENVIRONMENT,
    Change,
    Comparison,
    compare,
    exactly,
    pair_strategies,
)
from app.text import plural

__all__ = [
    "BUILT_IN_STRATEGIES",
    "PEOPLE_KINDS",
    "Batching",
    "ImportRefused",
    "LeftOut",
    "Planned",
    "PromotePlan",
    "PromoteStage",
    "Selection",
    "StageTwoRefused",
    "apply_promote",
    "batching_for",
    "batching_of",
    "plan_promote",
    "plan_undo_promote",
    "segment_ids_of",
    "touched_by",
    "validated",
]

#: the strategies every Unleash has (never a custom definition)
BUILT_IN_STRATEGIES = frozenset(
    {
        "default",
        "userWithId",
        "applicationHostname",
        "gradualRolloutRandom",
        "gradualRolloutSessionId",
        "gradualRolloutUserId",
        "remoteAddress",
        "flexibleRollout",
    }
)
#: the kinds a promote never writes
PEOPLE_KINDS = ("users", "groups", "roles", "project-access", "api-tokens")
NOT_CONFIGURATION = "not promoted: people and access are not configuration"
#: what the journal's snapshot leaves out (a promote never touches them)
_PEOPLE_LISTS = ("users", "groups", "roles", "projectAccess", "apiTokens")


@dataclass(frozen=True)
class Selection:
    """What is promoted: the comparison's filters (kinds, projects, tags, names; None: all)
    and whether what only the target has is deleted (`--delete-extra`)."""

    kinds: tuple[str, ...] | None = None
    projects: tuple[str, ...] | None = None
    tags: tuple[str, ...] | None = None
    names: tuple[str, ...] | None = None
    delete_extra: bool = False


@dataclass(frozen=True)
class Planned:
    """One request of the plan: the request, what its line says after the method and path,
    and what it changes (the comparison's kind and object key, the environment)."""

    request: c.WriteRequest
    says: str
    kind: str
    object: str
    environment: str | None = None
    #: the id the answer gives, kept in the journal's `after` (a segment's, a strategy's)
    keeps_id: bool = False
    #: an import's flags (its journal entry's `before` names them, for the undo)
    flags: tuple[str, ...] = ()
    #: an import's body as a model (what validate is asked about)
    query: m.ImportQuery | None = field(default=None, compare=False, repr=False)

    @property
    def line(self) -> str:
        return f"{self.request.method} {self.request.public_path}  {self.says}"


@dataclass(frozen=True)
class LeftOut:
    """Something of the selection that is not promoted, and why."""

    kind: str
    object: str
    why: str

    @property
    def line(self) -> str:
        what = f"{self.kind} {self.object}" if self.object else self.kind
        return f"{what}: {self.why}"


def _answer_id(answer: c.Answer) -> Any:
    return {"id": json.loads(answer.response.content)["id"]}


@dataclass(frozen=True)
class PromoteStage(PlanBase):
    """One stage of a promote, as the runner carries it out (a `runner.Plan`)."""

    journal: Journal
    planned: tuple[Planned, ...]
    stage: int
    promote: str
    #: the journal's snapshot of the target before (written by the first stage only)
    snapshot_path: Path
    before_target: s.Snapshot | None
    undoes: str = ""
    #: more for the confirmation (an undo: what cannot come back)
    notes: tuple[str, ...] = ()
    #: what the target's validation of the stage's imports warns of (an undo's)
    warnings: tuple[str, ...] = ()

    nothing = "Nothing was promoted."

    @property
    def action(self) -> Action:
        return PROMOTE

    @property
    def snapshot(self) -> Path | None:
        return self.snapshot_path if self.before_target is not None else None

    def write_snapshot(self) -> object:
        from app.actions.journal import private_folder
        from app.snapshot.files import SnapshotFileError, save

        assert self.before_target is not None
        private_folder(self.snapshot_path.parent)
        try:
            save(kept_of(self.before_target), self.snapshot_path)
        except SnapshotFileError as exc:  # the runner's NotStarted: nothing sent
            raise OSError(str(exc)) from None
        return None

    @property
    def announced(self) -> tuple[Changes, ...]:
        return (
            Changes.of(Resource.FEATURES),
            Changes.of(Resource.CONTEXT_FIELDS),
            Changes.of(Resource.PROJECTS),
        )

    def steps(self) -> tuple[Step, ...]:
        out = []
        for p in self.planned:
            before: dict[str, Any] = {
                "snapshot": self.snapshot_path.name,
                "promote": self.promote,
                "stage": self.stage,
                "kind": p.kind,
                "object": p.object,
            }
            if p.environment is not None:
                before["environment"] = p.environment
            if p.flags:
                before["flags"] = list(p.flags)
            if self.undoes:
                before["undoes"] = self.undoes
            out.append(
                Step(
                    p.request,
                    [p.kind, p.object],
                    before,
                    with_body=True,
                    after=_answer_id if p.keeps_id else None,
                )
            )
        return tuple(out)

    async def refusal(self, client: c.AdminClient) -> str:
        """An import with a token that may not import (the runner checks the stage's action,
        `compare.promote`; its imports need `compare.import` too)."""
        if not any(p.query is not None for p in self.planned):
            return ""
        availability = (await client.capabilities()).action(IMPORT)
        if availability.available:
            return ""
        return f"This stage sends imports, which this connection cannot: {availability.reason}."

    @property
    def question(self) -> str:
        verb = "Undo the promote" if self.undoes else "Promote"
        return f"{verb}: send {plural(len(self.planned), 'request')} to {self.server}?"

    def lines(self) -> list[str]:
        out = [p.line for p in self.planned]
        if self.snapshot is not None:
            out.append(
                f"A snapshot of the target's configuration is written first to {self.snapshot}."
            )
        if self.warnings:
            out.append("The target's validation warns:")
            out.extend(f"  {w}" for w in self.warnings)
        if self.notes:
            out.append("Not put back:" if self.undoes else "Left out:")
            out.extend(f"  {note}" for note in self.notes)
        return out

    def partly(self, steps: int) -> str:
        return (
            f"{steps:,} of {plural(len(self.planned), 'request')} of stage {self.stage} "
            "went through"
        )


def kept_of(snapshot: s.Snapshot) -> s.Snapshot:
    """The target's snapshot as the journal keeps it: its configuration (people and access
    left out, said in `unread`)."""
    unread = dict(snapshot.unread)
    for name in _PEOPLE_LISTS:
        unread[name] = "not kept: a promote does not change people and access"
    return snapshot.model_copy(update={name: [] for name in _PEOPLE_LISTS} | {"unread": unread})


@dataclass(frozen=True)
class PromotePlan:
    """A promote, fixed before it is confirmed: stage 1, stage 2 as it will be sent (its
    segment ids provisional while `pending` names segments stage 1 creates), what is left out
    and why, and how many differences only the target has and stay."""

    first: tuple[Planned, ...]
    second: tuple[Planned, ...]
    left_out: tuple[LeftOut, ...]
    kept_extra: int
    pending: frozenset[str]
    delete_extra: bool
    promote: str
    _second: Callable[[Mapping[str, int]], tuple[Planned, ...]] = field(repr=False, compare=False)
    #: how the flags go: in imports, or request by request and why (`Batching`)
    how: str = ""
    #: what the target's validation of the imports warns of (`validated`)
    warnings: tuple[str, ...] = ()
    #: what stage 1 creates or changes, (kind, name): validate's errors about them are expected
    stage_one: frozenset[tuple[str, str]] = frozenset()

    @property
    def nothing_to_do(self) -> bool:
        return not self.first and not self.second

    @property
    def count(self) -> int:
        return len(self.first) + len(self.second)

    @property
    def stages(self) -> int:
        return (1 if self.first else 0) + (1 if self.second else 0)

    def question(self, source: str, where: str) -> str:
        """The confirmation's question: what goes where, how many requests in how many stages."""
        stages = plural(self.stages, "stage")
        return f"Promote {source} to {where}: {plural(self.count, 'request')} in {stages}?"

    def second_stage(self, segment_ids: Mapping[str, int]) -> tuple[Planned, ...]:
        """Stage 2 planned again with the target's segments as read after stage 1. `ValueError`
        when it would say anything other than what was shown (only ids may differ), or a
        segment stage 1 was to create is still missing."""
        missing = sorted(self.pending - set(segment_ids))
        if missing:
            raise ValueError(
                f"the target has no segment {', '.join(missing)} after stage 1: "
                "stage 2 was not sent"
            )
        again = self._second(segment_ids)
        shown = [p.line for p in self.second]
        if [p.line for p in again] != shown:
            raise ValueError(
                "the target changed during stage 1: stage 2 would differ from the "
                "plan shown, and was not sent (compare again)"
            )
        return again

    def lines(self) -> list[str]:
        """The whole plan, as shown: both stages, what is left out and why."""
        out: list[str] = []
        if self.first:
            out.append(f"Stage 1, what the flags need ({plural(len(self.first), 'request')}):")
            out.extend(f"  {p.line}" for p in self.first)
        if self.second:
            again = (
                " (planned again after stage 1, with the new segments' ids)" if self.pending else ""
            )
            out.append(f"Stage 2, the flags ({plural(len(self.second), 'request')}){again}:")
            out.extend(f"  {p.line}" for p in self.second)
        if self.how and not self.nothing_to_do:
            out.append(self.how)
        if self.warnings:
            out.append(f"The target's validation warns ({len(self.warnings):,}):")
            out.extend(f"  {w}" for w in self.warnings)
        if self.left_out:
            out.append(f"Left out ({len(self.left_out):,}):")
            out.extend(f"  {x.line}" for x in self.left_out)
        if self.kept_extra and not self.delete_extra:
            out.append(
                f"{plural(self.kept_extra, 'difference')} only in the target stay: a "
                "promote adds and changes, it does not delete the target's own "
                "(--delete-extra does)."
            )
        return out

    def to_json(self) -> dict[str, Any]:
        def one(p: Planned) -> dict[str, Any]:
            r = p.request
            return {
                "method": r.method,
                "path": r.public_path,
                "says": p.says,
                "kind": p.kind,
                "object": p.object,
                "environment": p.environment,
                **({"flags": list(p.flags)} if p.flags else {}),
                "body": json.loads(r.body) if r.body else None,
            }

        return {
            "stages": [[one(p) for p in self.first], [one(p) for p in self.second]],
            "pendingSegments": sorted(self.pending),
            "leftOut": [{"kind": x.kind, "object": x.object, "why": x.why} for x in self.left_out],
            "keptOnlyInTarget": 0 if self.delete_extra else self.kept_extra,
            "deleteExtra": self.delete_extra,
            "how": self.how,
            "warnings": list(self.warnings),
        }


# ------------------------------------------------------------------------------ describing


def _q(text: str) -> str:
    return f"“{text}”"


def _strategy_words(x: s.FlagStrategy, pending: frozenset[str]) -> str:
    """`flexibleRollout “Everyone” (rollout 25; 1 constraint; segment “Beta testers”)`."""
    head = x.name + (f" {_q(x.title)}" if x.title else "")
    parts = []
    if "rollout" in x.parameters:
        parts.append(f"rollout {x.parameters['rollout']}")
    others = sorted(k for k in x.parameters if k not in ("rollout", "groupId", "stickiness"))
    parts.extend(f"{k} {x.parameters[k]}" for k in others)
    if x.constraints:
        parts.append(plural(len(x.constraints), "constraint"))
    for name in sorted(x.segments):
        parts.append(f"segment {_q(name)}" + (" (created in stage 1)" if name in pending else ""))
    if x.variants:
        parts.append(plural(len(x.variants), "variant"))
    if x.disabled:
        parts.append("disabled")
    return head + (f" ({'; '.join(parts)})" if parts else "")


# ------------------------------------------------------------------------------ comparable


def _constraints(items: Sequence[s.Constraint]) -> list[str]:
    return sorted(
        json.dumps({**x.model_dump(mode="json"), "values": sorted(x.values)}, sort_keys=True)
        for x in items
    )


def _strategy_content(x: s.FlagStrategy) -> tuple[Any, ...]:
    return (
        x.title or "",
        x.disabled,
        dict(x.parameters),
        _constraints(x.constraints),
        sorted(x.segments),
        sorted(json.dumps(v.model_dump(mode="json"), sort_keys=True) for v in x.variants),
    )


def _variants(items: Sequence[s.Variant]) -> list[str]:
    return sorted(json.dumps(v.model_dump(mode="json"), sort_keys=True) for v in items)


def _pairs(new: Sequence[s.FlagStrategy], old: Sequence[s.FlagStrategy]) -> list[tuple[int, int]]:
    """As `app.snapshot.compare` pairs strategies (`pair_strategies`)."""
    return pair_strategies([(x.name, x.title or "", x.sortOrder) for x in new],
                           [(x.name, x.title or "", x.sortOrder) for x in old])  # fmt: skip


# ------------------------------------------------------------------------------ the planner


def _flag_name(shown: str) -> str:
    """A flag's name from the comparison's object (`project/name`)."""
    return shown.rpartition("/")[2]


class _Invalid(Exception):
    """A body the request's model refuses: left out with why."""


@dataclass(frozen=True)
class Batching:
    """How a promote sends its flags: in imports, one a target project and environment
    (`imports`), or request by request; `how` says which, and why not in imports.
    `strategies`: the strategy types the target has (built-in and custom): an import refuses
    any other (8.2 has no `userWithId`, which 5.12 still lists, deprecated), so a flag with
    one in an environment goes request by request."""

    imports: bool
    how: str
    strategies: frozenset[str] = frozenset()


async def batching_for(client: c.AdminClient) -> Batching:
    """`batching_of` the connection's capabilities and strategy types (read only where its
    token may import)."""
    caps = await client.capabilities()
    if not caps.action(IMPORT).available:
        return batching_of(caps)
    names = frozenset(d.name for d in (await client.strategy_definitions()).strategies)
    return batching_of(caps, names)


def batching_of(caps: Capabilities, strategies: Iterable[str] = ()) -> Batching:
    """How a promote to the connection of `caps` sends its flags: in imports where its token
    may import (`compare.import`: a user's token with the Admin root role; Unleash refuses an
    admin API token's import), else request by request, saying why. `strategies`: the
    target's strategy types (`Batching.strategies`)."""
    availability = caps.action(IMPORT)
    if availability.available:
        return Batching(True, IN_IMPORTS, frozenset(strategies))
    why = availability.reason.rstrip(".")
    if caps.token_kind == "admin":
        why = (
            "Unleash refuses an import sent with an admin API token (“You can't use an admin "
            "token to import features”): a personal access token or a service account's "
            "token of an Admin may import"
        )
    return Batching(
        False,
        f"How: the flags go request by request, not in imports (POST "
        f"/api/admin/features-batch/import): {why}.",
    )


#: what a plan of imports says of them
IN_IMPORTS = (
    "How: the flags' configuration per environment goes in imports, one a target project and "
    "environment (POST /api/admin/features-batch/import: each in one transaction, the "
    "target's validation asked first); the rest request by request (a flag using a strategy "
    "type the target does not list too: an import refuses it)."
)


@dataclass(frozen=True)
class _Part:
    """One flag in one environment's import: what the body holds of it."""

    name: str
    created: bool
    environment: str
    feature: dict[str, Any]
    strategies: list[s.FlagStrategy]
    enabled: bool
    variants: list[s.Variant]
    tags: list[dict[str, str]]

    def query(self, project: str) -> dict[str, Any]:
        return _import_body([self], project, self.environment)


def _import_body(parts: Sequence[_Part], project: str, where: str) -> dict[str, Any]:
    """importTogglesSchema of `parts`: a strategy's segments by name (`data.segments`, whose
    ids the target maps to its own segments of those names)."""
    segments: dict[str, int] = {}
    strategies = []
    for part in parts:
        for x in part.strategies:
            ids = [segments.setdefault(g, len(segments) + 1) for g in sorted(x.segments)]
            strategies.append({
                "name": x.name, "featureName": part.name, "title": x.title or "",
                "disabled": x.disabled, "parameters": dict(x.parameters),
                "constraints": [k.model_dump(mode="json", exclude_none=True)
                                for k in x.constraints],
                "variants": [v.model_dump(mode="json", exclude_none=True) for v in x.variants],
                "segments": ids, "sortOrder": x.sortOrder,
            })  # fmt: skip
    tag_types = sorted({t["tagType"] for part in parts for t in part.tags})
    return {
        "project": project,
        "environment": where,
        "data": {
            "features": [p.feature for p in parts],
            "featureStrategies": strategies,
            "featureEnvironments": [
                {"name": p.name, "featureName": p.name, "environment": where,
                 "enabled": p.enabled,
                 "variants": [v.model_dump(mode="json", exclude_none=True) for v in p.variants]}
                for p in parts
            ],
            "featureTags": [t for p in parts for t in p.tags],
            "tagTypes": [{"name": t} for t in tag_types],
            "contextFields": [],
            "segments": [{"id": i, "name": g} for g, i in segments.items()],
        },
    }  # fmt: skip


def _packed(parts: Sequence[_Part], project: str) -> list[list[_Part]]:
    """`parts` (one environment's) in imports within `BATCH_BODY_LIMIT`, in their order."""
    room = BATCH_BODY_LIMIT - 4096  # the body's envelope, and JSON's spacing differing
    out: list[list[_Part]] = [[]]
    used = 0
    for part in parts:
        size = len(json.dumps(part.query(project), separators=(",", ":")))
        if out[-1] and used + size > room:
            out.append([])
            used = 0
        out[-1].append(part)
        used += size
    return [chunk for chunk in out if chunk]


def _valid(model: type[Any], data: Any) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(x) for x in first["loc"]) or "the body"
        raise _Invalid(f"not a valid request ({where}: {first['msg']})") from None


class _Planner:
    def __init__(
        self,
        source: s.Snapshot,
        target: s.Snapshot,
        comparison: Comparison,
        selection: Selection,
        map_project: Mapping[str, str],
        map_env: Mapping[str, str],
        segment_ids: Mapping[str, int],
        undo: bool,
        batch: Batching | None = None,
    ) -> None:
        self.source, self.target = source, target
        self.batch = batch is not None and batch.imports
        #: the strategy types an import may hold: the target's, and the custom ones stage 1
        #: creates (`created_definitions`, added as they are planned)
        self.importable = set(batch.strategies) if batch is not None else set()
        self.comparison = comparison
        self.delete_extra = selection.delete_extra
        self.map_project, self.map_env = dict(map_project), dict(map_env)
        self.segment_ids = dict(segment_ids)
        self.undo = undo
        self.left_out: list[LeftOut] = []
        self.kept_extra = 0
        self.tree = comparison.tree
        self.target_projects = {p.id: p for p in target.projects}
        self.target_envs = {e.name for e in target.environments}
        self.created_segments: set[str] = set()
        self.created_definitions: set[str] = set()
        self.added_project_envs: set[tuple[str, str]] = set()
        self.last_variants = False

    # -------------------------------------------------------------- names

    def project(self, name: str) -> str | None:
        if not self.map_project:
            return name
        return self.map_project.get(name)

    def env(self, name: str) -> str | None:
        if not self.map_env:
            return name
        return self.map_env.get(name)

    def leave(self, kind: str, obj: str, why: str) -> None:
        self.left_out.append(LeftOut(kind, obj, why))

    def extra(self, differences: Iterable[Any]) -> None:
        self.kept_extra += sum(1 for d in differences if d.change is Change.ONLY_IN_TARGET)

    # -------------------------------------------------------------- stage 1

    def first(self) -> list[Planned]:
        for kind, why in self.comparison.not_compared:
            self.leave(kind, "", f"not compared: {why}")
        for kind in PEOPLE_KINDS:
            differing = list(self.tree.get(kind, {}))
            if differing:
                shown = ", ".join(differing[:3]) + (", …" if len(differing) > 3 else "")
                self.leave(kind, f"({len(differing):,}: {shown})", NOT_CONFIGURATION)
        self.needed = self._needed()
        for obj, ds in self.tree.get("environments", {}).items():
            if any(d.change is not Change.ONLY_IN_TARGET for d in ds):
                self.leave(
                    "environments",
                    obj,
                    "an environment is not created or changed by "
                    "a promote: do it on the target first",
                )
        out: list[Planned] = []
        out += self._context_fields()
        out += self._tag_types()
        out += self._segments()
        out += self._definitions()
        out += self._projects()
        return out

    def _objects(self, kind: str) -> Iterable[tuple[str, Change | None]]:
        """Each object of `kind` with differences: (key, its whole change, or None when it
        is on both sides and changed); then what the flags need that the selection leaves
        out and the target lacks (`_needed`), as only in the source."""
        for obj, ds in self.tree.get(kind, {}).items():
            whole = [d.change for d in ds if not d.path]
            yield obj, (whole[0] if whole else None)
        for obj in sorted(self.needed.get(kind, ())):
            yield obj, Change.ONLY_IN_SOURCE

    def _needed(self) -> dict[str, set[str]]:
        """The segments, context fields and tag types the promoted flags use that the target
        lacks, the source has, and the selection leaves out (a global segment is no project's:
        `--project` leaves it out): created in stage 1 all the same, said so."""
        promoted = {_flag_name(x) for x in self.tree.get("flags", {})}
        have = {
            "segments": {g.name for g in self.target.segments},
            "context-fields": {f.name for f in self.target.contextFields},
            "tag-types": {t.name for t in self.target.tagTypes},
        }
        segments = {g.name: g for g in self.source.segments}
        source = {
            "segments": set(segments),
            "context-fields": {f.name for f in self.source.contextFields},
            "tag-types": {t.name for t in self.source.tagTypes},
        }
        unread = {kind for kind, _why in self.comparison.not_compared}
        wanted: dict[str, set[str]] = {
            "segments": set(),
            "context-fields": set(),
            "tag-types": set(),
        }
        for f in self.source.flags:
            if f.name not in promoted:
                continue
            wanted["tag-types"].update(t.type for t in f.tags)
            for e in f.environments:
                if self.env(e.name) is None:
                    continue
                for x in e.strategies:
                    wanted["segments"].update(x.segments)
                    wanted["context-fields"].update(k.contextName for k in x.constraints)
        for name in wanted["segments"] & source["segments"]:
            wanted["context-fields"].update(k.contextName for k in segments[name].constraints)
        needed: dict[str, set[str]] = {}
        for kind, names in wanted.items():
            if kind in unread:
                continue
            listed = set(self.tree.get(kind, {}))
            needed[kind] = {
                n for n in names if n in source[kind] and n not in have[kind] and n not in listed
            }
        return needed

    def _why(self, kind: str, obj: str) -> str:
        return " (needed by the flags promoted)" if obj in self.needed.get(kind, ()) else ""

    def _in_use(self) -> tuple[set[str], set[str], set[str], set[str]]:
        """What the target uses once promoted: (context fields, segments, tag types, strategy
        names), from the source's flags promoted and the target's flags kept."""
        fields: set[str] = set()
        segments: set[str] = set()
        tags: set[str] = set()
        names: set[str] = set()
        promoted = {_flag_name(x) for x in self.tree.get("flags", {})}
        in_source = {f.name for f in self.source.flags}
        # a flag archived keeps its strategies (and Unleash counts their segments as used),
        # except one an undo archives: the promote made it, its strategies are deleted first
        flags = [
            f
            for f in self.target.flags
            if not (self.delete_extra and f.name in promoted)
            or (f.name not in in_source and not self.undo)
        ]
        flags += [f for f in self.source.flags if f.name in promoted]
        for f in flags:
            tags.update(t.type for t in f.tags)
            for e in f.environments:
                for x in e.strategies:
                    names.add(x.name)
                    segments.update(x.segments)
                    fields.update(k.contextName for k in x.constraints)
        # a segment this plan deletes (only in the target, unused) uses no field any more
        going = {
            obj
            for obj, whole in self._objects("segments")
            if self.delete_extra and whole is Change.ONLY_IN_TARGET and obj not in segments
        }
        for g in self.target.segments:
            if g.name not in going:
                fields.update(k.contextName for k in g.constraints)
        for g in self.source.segments:
            fields.update(k.contextName for k in g.constraints)
        for f in self.target.flags:
            for v in f.environments:
                for var in v.variants:
                    fields.update(o.contextName for o in var.overrides)
        return fields, segments, tags, names

    def deletions(self) -> list[Planned]:
        """With `delete_extra`: what only the target has and nothing uses, after the flags."""
        if not self.delete_extra:
            return []
        fields, segments, tags, names = self._in_use()
        out: list[Planned] = []
        kinds = (
            ("segments", segments),
            ("tag-types", tags),
            ("context-fields", fields),
            ("strategies", names),
        )
        for kind, used in kinds:
            for obj, whole in self._objects(kind):
                if whole is not Change.ONLY_IN_TARGET:
                    continue
                if obj in used:
                    self.leave(kind, obj, "only in the target, and in use there: not deleted")
                    continue
                if kind == "segments":
                    if obj not in self.segment_ids:
                        self.leave(kind, obj, "the target's segment id is not known: not deleted")
                        continue
                    request = c.delete_segment_request(self.segment_ids[obj])
                elif kind == "tag-types":
                    request = c.delete_tag_type_request(obj)
                elif kind == "context-fields":
                    request = c.delete_context_field_request(obj)
                else:
                    request = c.delete_strategy_definition_request(obj)
                word = {
                    "segments": "segment",
                    "tag-types": "tag type",
                    "context-fields": "context field",
                    "strategies": "strategy",
                }[kind]
                out.append(
                    Planned(request, f"{word} {_q(obj)} (only in the target, unused)", kind, obj)
                )
        return out

    def _context_fields(self) -> list[Planned]:
        out = []
        source = {x.name: x for x in self.source.contextFields}
        for obj, whole in self._objects("context-fields"):
            if whole is Change.ONLY_IN_TARGET:
                continue  # deleted after the flags, with --delete-extra
            x = source[obj]
            body = {
                "description": x.description or "",
                "stickiness": x.stickiness,
                "sortOrder": 0,
                "legalValues": [
                    v.model_dump(mode="json", exclude_none=True) for v in x.legalValues
                ],
            }
            says = f"context field {_q(obj)} ({plural(len(x.legalValues), 'legal value')})"
            says += self._why("context-fields", obj)
            try:
                if whole is Change.ONLY_IN_SOURCE:
                    draft = _valid(m.CreateContextField, {"name": obj, **body})
                    out.append(
                        Planned(c.create_context_field_request(draft), says, "context-fields", obj)
                    )
                else:
                    update = _valid(m.UpdateContextField, body)
                    out.append(
                        Planned(
                            c.update_context_field_request(obj, update), says, "context-fields", obj
                        )
                    )
            except _Invalid as why:
                self.leave("context-fields", obj, str(why))
        return out

    def _tag_types(self) -> list[Planned]:
        out = []
        source = {x.name: x for x in self.source.tagTypes}
        for obj, whole in self._objects("tag-types"):
            if whole is Change.ONLY_IN_TARGET:
                continue
            x = source[obj]
            body = {"description": x.description, "icon": x.icon}
            try:
                if whole is Change.ONLY_IN_SOURCE:
                    request = c.create_tag_type_request(
                        _valid(m.TagTypeBody, {"name": obj, **body})
                    )
                else:
                    request = c.update_tag_type_request(obj, _valid(m.UpdateTagType, body))
            except _Invalid as why:
                self.leave("tag-types", obj, str(why))
                continue
            says = f"tag type {_q(obj)}{self._why('tag-types', obj)}"
            out.append(Planned(request, says, "tag-types", obj))
        return out

    def _segments(self) -> list[Planned]:
        out = []
        source = {x.name: x for x in self.source.segments}
        for obj, whole in self._objects("segments"):
            if whole is Change.ONLY_IN_TARGET:
                continue
            x = source[obj]
            project = None if x.project is None else self.project(x.project)
            if project is not None and project not in self.target_projects:
                self.leave(
                    "segments",
                    obj,
                    f"the target has no project {project!r}: flagdesk does not create projects",
                )
                continue
            body = {
                "name": obj,
                "description": x.description,
                "project": project,
                "constraints": [
                    k.model_dump(mode="json", exclude_none=True) for k in x.constraints
                ],
            }
            try:
                upsert = _valid(m.UpsertSegment, body)
            except _Invalid as why:
                self.leave("segments", obj, str(why))
                continue
            says = f"segment {_q(obj)} ({plural(len(x.constraints), 'constraint')})"
            says += self._why("segments", obj)
            if whole is Change.ONLY_IN_SOURCE:
                self.created_segments.add(obj)
                out.append(
                    Planned(c.create_segment_request(upsert), says, "segments", obj, keeps_id=True)
                )
            elif obj in self.segment_ids:
                out.append(
                    Planned(
                        c.update_segment_request(self.segment_ids[obj], upsert),
                        says,
                        "segments",
                        obj,
                    )
                )
            else:
                self.leave("segments", obj, "the target's segment id is not known")
        return out

    def _definitions(self) -> list[Planned]:
        out = []
        source = {x.name: x for x in self.source.strategies}
        target = {x.name: x for x in self.target.strategies}
        for obj, whole in self._objects("strategies"):
            if whole is Change.ONLY_IN_TARGET:
                continue
            x = source[obj]
            parameters = [p.model_dump(mode="json", exclude_none=True) for p in x.parameters]
            body = {"description": x.description, "parameters": parameters}
            says = f"strategy {_q(obj)} ({plural(len(parameters), 'parameter')})"
            try:
                if whole is Change.ONLY_IN_SOURCE:
                    draft = _valid(m.CreateStrategy, {"name": obj, **body})
                    out.append(
                        Planned(
                            c.create_strategy_definition_request(draft), says, "strategies", obj
                        )
                    )
                    self.created_definitions.add(obj)
                    was = False
                else:
                    old = target[obj]
                    if (old.description or None, [p.model_dump() for p in old.parameters]) != (
                        x.description or None,
                        [p.model_dump() for p in x.parameters],
                    ):
                        update = _valid(m.UpdateStrategy, body)
                        out.append(
                            Planned(
                                c.update_strategy_definition_request(obj, update),
                                says,
                                "strategies",
                                obj,
                            )
                        )
                    was = old.deprecated
            except _Invalid as why:
                self.leave("strategies", obj, str(why))
                continue
            if x.deprecated != was:
                word = "deprecated" if x.deprecated else "in use again (reactivated)"
                out.append(
                    Planned(
                        c.strategy_deprecation_request(obj, x.deprecated),
                        f"strategy {_q(obj)} {word}",
                        "strategies",
                        obj,
                    )
                )
        return out

    def _projects(self) -> list[Planned]:
        out = []
        for obj, ds in self.tree.get("projects", {}).items():
            for d in ds:
                if not d.path:
                    if d.change is Change.ONLY_IN_SOURCE:
                        self.leave(
                            "projects",
                            obj,
                            "the target has no such project: flagdesk "
                            "does not create projects (create it on the target first)",
                        )
                    continue
                step = d.path[0]
                if step.startswith("environment "):
                    name = step.removeprefix("environment ")
                    if d.change is Change.ONLY_IN_SOURCE:
                        if name not in self.target_envs:
                            self.leave(
                                "projects",
                                obj,
                                f"the target has no environment "
                                f"{name!r}: create it on the target first",
                            )
                            continue
                        self.added_project_envs.add((obj, name))
                        out.append(
                            Planned(
                                c.add_project_environment_request(obj, name),
                                f"environment {_q(name)} added to project {_q(obj)}",
                                "projects",
                                obj,
                                name,
                            )
                        )
                    elif self.undo:
                        out.append(
                            Planned(
                                c.remove_project_environment_request(obj, name),
                                f"environment {_q(name)} removed from project {_q(obj)}",
                                "projects",
                                obj,
                                name,
                            )
                        )
                    else:
                        self.kept_extra += 1
                elif d.change is not Change.ONLY_IN_TARGET:
                    self.leave(
                        "projects",
                        obj,
                        f"{step}: a project's name and description are not promoted",
                    )
        return out

    # -------------------------------------------------------------- stage 2

    def flags(self, segment_ids: Mapping[str, int], pending: frozenset[str]) -> list[Planned]:
        """Stage 2 with these segment ids (`pending`: created in stage 1, shown so)."""
        flags = self.tree.get("flags", {})
        source = {f.name: f for f in self.source.flags}
        target = {f.name: f for f in self.target.flags}
        known = (
            BUILT_IN_STRATEGIES
            | {d.name for d in self.target.strategies}
            | self.created_definitions
        )
        heads: list[Planned] = []
        bodies: list[Planned] = []
        archive: list[Planned] = []
        parts: dict[str, list[_Part]] = {}
        after: list[Planned] = []
        for shown in flags:
            name = _flag_name(shown)
            new, old = source.get(name), target.get(name)
            if new is None:
                assert old is not None
                if self.delete_extra:
                    if self.undo:  # made by the promote: its segments must be free to go
                        archive += [
                            Planned(
                                c.delete_flag_strategy_request(old.project, name, e.name, x.id),
                                f"{_strategy_words(x, frozenset())} deleted (the flag goes)",
                                "flags",
                                name,
                                e.name,
                            )
                            for e in old.environments
                            for x in e.strategies
                            if x.segments and x.id
                        ]
                    archive.append(
                        Planned(
                            c.archive_flag_request(old.project, name),
                            f"flag {_q(name)} archived (only in the target)",
                            "flags",
                            name,
                        )
                    )
                else:
                    self.kept_extra += 1
                continue
            project = self.project(new.project)
            assert project is not None
            if project not in self.target_projects:
                self.leave(
                    "flags",
                    f"{project}/{name}",
                    f"the target has no project {project!r}: flagdesk does not create projects",
                )
                continue
            if old is not None and old.project != project:
                self.leave(
                    "flags",
                    f"{project}/{name}",
                    f"the target's flag is in project "
                    f"{old.project!r}: a promote does not move flags",
                )
                continue
            try:
                batched = (
                    self._batched(new, old, project, segment_ids, pending, known)
                    if self.batch
                    else None
                )
                if batched is not None:
                    parts[project] = parts.get(project, []) + batched[0]
                    after += batched[1]
                    continue
                heads += self._flag_head(new, old, project)
                bodies += self._flag_body(new, old, project, segment_ids, pending, known)
            except _Invalid as why:
                self.leave("flags", f"{project}/{name}", str(why))
        imports = [p for project, chosen in parts.items() for p in self.imports(chosen, project)]
        return heads + imports + after + bodies + archive

    def _flag_head(self, new: s.Flag, old: s.Flag | None, project: str) -> list[Planned]:
        out = []
        name = new.name
        if old is None:
            draft = _valid(
                m.CreateFeature,
                {
                    "name": name,
                    "type": new.type,
                    "description": new.description,
                    "impressionData": new.impressionData,
                },
            )
            out.append(
                Planned(
                    c.create_flag_request(project, draft),
                    f"flag {_q(name)} ({new.type})",
                    "flags",
                    name,
                )
            )
            if not new.stale:
                return out
        changed = []
        if old is not None:
            for key in ("type", "description", "impressionData", "stale"):
                a, b = getattr(old, key), getattr(new, key)
                if key == "description":
                    a, b = a or None, b or None
                if a != b:
                    changed.append(f"{key} {json.dumps(a)} → {json.dumps(b)}")
        elif new.stale:
            changed.append("stale")
        if changed:
            body = _valid(
                m.UpdateFeature,
                {
                    "description": new.description or "",
                    "type": new.type,
                    "stale": new.stale,
                    "impressionData": new.impressionData,
                },
            )
            out.append(
                Planned(
                    c.update_flag_request(project, name, body),
                    f"flag {_q(name)}: {', '.join(changed)}",
                    "flags",
                    name,
                )
            )
        return out

    def _dependencies(self, new: s.Flag, old: s.Flag | None, project: str) -> list[Planned]:
        """The flag's parents added (or changed), and with `delete_extra` removed."""
        out: list[Planned] = []
        name = new.name
        had_deps = {d.feature: d for d in (old.dependencies if old else [])}
        for d in new.dependencies:
            if had_deps.get(d.feature) == d:
                continue
            body = _valid(
                m.CreateDependentFeature,
                {"feature": d.feature, "enabled": d.enabled, "variants": d.variants or None},
            )
            state = "enabled" if d.enabled else "disabled"
            out.append(
                Planned(
                    c.add_dependency_request(project, name, body),
                    f"depends on {_q(d.feature)} ({state})",
                    "flags",
                    name,
                )
            )
        for parent in sorted(had_deps.keys() - {d.feature for d in new.dependencies}):
            if self.delete_extra:
                out.append(
                    Planned(
                        c.delete_dependency_request(project, name, parent),
                        f"no longer depends on {_q(parent)}",
                        "flags",
                        name,
                    )
                )
            else:
                self.kept_extra += 1
        return out

    def _flag_body(
        self,
        new: s.Flag,
        old: s.Flag | None,
        project: str,
        segment_ids: Mapping[str, int],
        pending: frozenset[str],
        known: frozenset[str] | set[str],
    ) -> list[Planned]:
        out: list[Planned] = []
        name = new.name
        # tags
        had = {str(t): t for t in (old.tags if old else [])}
        wanted = {str(t): t for t in new.tags}
        added = [wanted[k] for k in sorted(wanted.keys() - had.keys())]
        removed = [had[k] for k in sorted(had.keys() - wanted.keys())]
        if not self.delete_extra:
            self.kept_extra += len(removed)
            removed = []
        if added or removed:
            body = _valid(
                m.UpdateTags,
                {
                    "addedTags": [{"type": t.type, "value": t.value} for t in added],
                    "removedTags": [{"type": t.type, "value": t.value} for t in removed],
                },
            )
            words = [f"+{t}" for t in added] + [f"-{t}" for t in removed]
            out.append(
                Planned(c.flag_tags_request(name, body), f"tags {' '.join(words)}", "flags", name)
            )
        out += self._dependencies(new, old, project)
        # environments
        target_envs = {e.name: e for e in (old.environments if old else [])}
        has_variants = any(e.variants for e in (old.environments if old else []))
        # the environments whose variants this plan empties: emptying the flag's last ones
        # leaves it with none, after which Unleash 8.2 takes no environment variants (nor an
        # undo's): done only with --delete-extra
        emptied = {
            w
            for e in new.environments
            if (w := self.env(e.name)) is not None
            and not e.variants
            and target_envs.get(w)
            and target_envs[w].variants
        }
        keeps = {e.name for e in (old.environments if old else []) if e.variants} - emptied
        self.last_variants = bool(emptied) and not keeps and not self.delete_extra
        for e, where in self._environments_of(new, project):
            there = target_envs.get(where) or s.FlagEnvironment(name=where)
            planned = self._environment(
                project, name, where, e, there, segment_ids, pending, known, has_variants
            )
            has_variants = has_variants or any(p.says.startswith("variants") for p in planned)
            out += planned
        return out

    def _environments_of(
        self, new: s.Flag, project: str
    ) -> Iterator[tuple[s.FlagEnvironment, str]]:
        """The source flag's environments that are promoted, each with the target's name for
        it: one the maps leave out is skipped; one the target, or its project (as it is, or
        with the environments this plan adds to it), lacks is left out and said why."""
        in_project = set(self.target_projects[project].environments) | {
            e for p, e in self.added_project_envs if p == project
        }
        for e in new.environments:
            where = self.env(e.name)
            if where is None:
                continue
            if where not in self.target_envs:
                self.leave("flags", f"{project}/{new.name}",
                           f"the target has no environment {where!r}")  # fmt: skip
            elif where not in in_project:
                self.leave("flags", f"{project}/{new.name}",
                           f"the target's project {project!r} does not have environment "
                           f"{where!r}")  # fmt: skip
            else:
                yield e, where

    def _batched(
        self,
        new: s.Flag,
        old: s.Flag | None,
        project: str,
        segment_ids: Mapping[str, int],
        pending: frozenset[str],
        known: frozenset[str] | set[str],
    ) -> tuple[list[_Part], list[Planned]] | None:
        """The flag's parts of the imports (one for each environment where it changes, or, for
        a flag the target lacks, has anything), and the requests that go after the imports
        (its parents; emptying an environment's variants, which an import leaves as they
        are); None when no environment of it goes in an import (its requests are then the
        one-by-one plan's: `_flag_head`, `_flag_body`). Decided per environment by what the
        one-by-one plan would send there (`_environment`): any request but emptying the
        variants puts the environment in an import. What an import does to a flag it holds
        (measured on 8.2): its metadata, tags and, in that environment, strategies (with their
        sort order) are the body's, the enabled state too, and its variants when the body has
        some; so the body holds the source's metadata, the tags wanted after (the target's own
        kept unless `delete_extra`), the strategies wanted after (the target's own kept in
        the same way)."""
        name = new.name
        mark, kept = len(self.left_out), self.kept_extra
        target_envs = {e.name: e for e in (old.environments if old else [])}
        emptied = {
            w
            for e in new.environments
            if (w := self.env(e.name)) is not None
            and not e.variants
            and target_envs.get(w)
            and target_envs[w].variants
        }
        keeps = {e.name for e in (old.environments if old else []) if e.variants} - emptied
        self.last_variants = bool(emptied) and not keeps and not self.delete_extra
        # the tags after: the import puts the body's in place of the flag's
        wanted = {str(t): t for t in new.tags}
        own = [t for k, t in sorted((str(t), t) for t in (old.tags if old else []))
               if k not in wanted]  # fmt: skip
        if not self.delete_extra:
            self.kept_extra += len(own)
            wanted.update((str(t), t) for t in own)
        tags = [{"featureName": name, "tagType": t.type, "tagValue": t.value}
                for _k, t in sorted(wanted.items())]  # fmt: skip
        # a description left out is kept by 5.12's import (emptied by 8.2's): "" empties it
        feature = {"name": name, "type": new.type, "description": new.description or "",
                   "impressionData": new.impressionData, "stale": new.stale,
                   "project": project}  # fmt: skip
        parts: list[_Part] = []
        after: list[Planned] = []
        for e, where in self._environments_of(new, project):
            there = target_envs.get(where) or s.FlagEnvironment(name=where)
            planned = self._environment(
                project, name, where, e, there, segment_ids, pending, known, True
            )
            emptying = [p for p in planned if p.says == "variants: none"]
            sent = [p for p in planned if p.says != "variants: none"]
            fresh = old is None and (e.strategies or e.enabled or e.variants)
            if not sent and not fresh:
                after += emptying
                continue
            strategies = [x for x in e.strategies if x.name in known]
            types = {x.name for x in [*strategies, *there.strategies]}
            if types - self.importable - self.created_definitions:
                del self.left_out[mark:]  # an import would be refused: one by one
                self.kept_extra = kept
                return None
            if not self.delete_extra:  # the target's own strategies stay: sent again
                pairs = _pairs(sorted(e.strategies, key=lambda x: x.sortOrder),
                               sorted(there.strategies, key=lambda x: x.sortOrder))  # fmt: skip
                taken = {j for _i, j in pairs}
                strategies += [x for j, x in enumerate(sorted(
                    there.strategies, key=lambda x: x.sortOrder)) if j not in taken]  # fmt: skip
            part = _Part(name, old is None, where, feature, strategies, e.enabled,
                         e.variants, tags)  # fmt: skip
            _valid(m.ImportQuery, part.query(project))  # one flag's body: refused, it is left out
            parts.append(part)
            after += emptying
        if not parts:  # the one-by-one plan sends this flag's requests
            del self.left_out[mark:]
            self.kept_extra = kept
            return None
        return parts, self._dependencies(new, old, project) + after

    def imports(self, parts: Sequence[_Part], project: str) -> list[Planned]:
        """The imports of `parts` (one project's), one a target environment, each within
        `BATCH_BODY_LIMIT` (split where it would not be)."""
        by_env: dict[str, list[_Part]] = {}
        for part in parts:
            by_env.setdefault(part.environment, []).append(part)
        out: list[Planned] = []
        for where, chosen in by_env.items():
            for chunk in _packed(chosen, project):
                query = m.ImportQuery.model_validate(_import_body(chunk, project, where))
                created = sum(1 for p in chunk if p.created)
                strategies = plural(sum(len(p.strategies) for p in chunk), "strategy", "strategies")
                says = (f"import into {_q(project)}, {where}: {plural(len(chunk), 'flag')}"
                        f" ({created:,} created), {strategies}")  # fmt: skip
                out.append(Planned(c.import_request(query), says, "flags", project, where,
                                   flags=tuple(p.name for p in chunk), query=query))  # fmt: skip
        return out

    def _environment(
        self,
        project: str,
        name: str,
        where: str,
        new: s.FlagEnvironment,
        old: s.FlagEnvironment,
        segment_ids: Mapping[str, int],
        pending: frozenset[str],
        known: frozenset[str] | set[str],
        has_variants: bool,
    ) -> list[Planned]:
        out: list[Planned] = []
        label = f"{project}/{name}"
        ours = sorted(new.strategies, key=lambda x: x.sortOrder)
        theirs = sorted(old.strategies, key=lambda x: x.sortOrder)
        pairs = _pairs(ours, theirs)
        paired = dict(pairs)
        added = False

        def body_of(x: s.FlagStrategy) -> dict[str, Any]:
            ids = []
            for g in sorted(x.segments):
                if g in segment_ids:
                    ids.append(segment_ids[g])
                elif g in pending:
                    ids.append(0)  # provisional: stage 2 is planned again with its id
                else:
                    raise _Invalid(
                        f"{where}: strategy {x.name}: the target has no segment "
                        f"{g!r} and the selection does not bring it"
                    )
            return {
                "name": x.name,
                "title": x.title or "",
                "disabled": x.disabled,
                "parameters": dict(x.parameters),
                "constraints": [
                    k.model_dump(mode="json", exclude_none=True) for k in x.constraints
                ],
                "variants": [v.model_dump(mode="json", exclude_none=True) for v in x.variants],
                "segments": ids,
            }

        for i, x in enumerate(ours):
            if x.name not in known:
                self.leave(
                    "flags",
                    label,
                    f"{where}: strategy {x.name!r}: the target has no "
                    "such custom strategy and the selection does not bring its "
                    "definition (add --kinds strategies)",
                )
                continue
            if i in paired:
                was = theirs[paired[i]]
                if _strategy_content(x) == _strategy_content(was):
                    continue
                if not was.id:
                    raise _Invalid(f"{where}: the target's strategy has no id in its snapshot")
                update = _valid(m.UpdateFeatureStrategy, body_of(x))
                out.append(
                    Planned(
                        c.update_flag_strategy_request(project, name, where, was.id, update),
                        f"{_strategy_words(x, pending)} (was {_strategy_words(was, frozenset())})",
                        "flags",
                        name,
                        where,
                    )
                )
            else:
                create = _valid(m.CreateFeatureStrategy, {**body_of(x), "sortOrder": x.sortOrder})
                out.append(
                    Planned(
                        c.add_flag_strategy_request(project, name, where, create),
                        _strategy_words(x, pending),
                        "flags",
                        name,
                        where,
                        keeps_id=True,
                    )
                )
                added = True
        taken = set(paired.values())
        for j, was in enumerate(theirs):
            if j in taken:
                continue
            if not self.delete_extra:
                self.kept_extra += 1
                continue
            if not was.id:
                raise _Invalid(f"{where}: the target's strategy has no id in its snapshot")
            out.append(
                Planned(
                    c.delete_flag_strategy_request(project, name, where, was.id),
                    f"{_strategy_words(was, frozenset())} deleted (only in the target)",
                    "flags",
                    name,
                    where,
                )
            )
        by_target = [i for i, _j in sorted(pairs, key=lambda pair: pair[1])]
        by_source = [i for i, _j in pairs]
        moved = [(ours[i], theirs[j]) for i, j in pairs if ours[i].sortOrder != theirs[j].sortOrder]
        if moved and (added or by_target != by_source):
            orders = [
                m.StrategySortOrder(id=was.id or "", sortOrder=x.sortOrder) for x, was in moved
            ]
            out.append(
                Planned(
                    c.strategy_order_request(project, name, where, orders),
                    "strategy order: "
                    + ", ".join(x.name + (f" {_q(x.title)}" if x.title else "") for x in ours),
                    "flags",
                    name,
                    where,
                )
            )
        if _variants(new.variants) != _variants(old.variants):
            if not has_variants:
                self.leave(
                    "flags",
                    label,
                    f"{where}: variants: Unleash 8.2 takes an "
                    "environment's variants only for a flag that has some already (use "
                    "strategy variants)",
                )
            elif not new.variants and self.last_variants:
                self.leave(
                    "flags",
                    label,
                    f"{where}: variants: not emptied: they are the "
                    "flag's last environment variants, and Unleash 8.2 takes none for "
                    "a flag without any, so they could not be put back (--delete-extra "
                    "empties them)",
                )
            else:  # emptied too: a changed list, not the target's own thing
                bodies = [
                    _valid(m.VariantBody, v.model_dump(mode="json", exclude_none=True))
                    for v in new.variants
                ]
                names = ", ".join(v.name for v in new.variants) or "none"
                out.append(
                    Planned(
                        c.flag_variants_request(project, name, where, bodies),
                        f"variants: {names}",
                        "flags",
                        name,
                        where,
                    )
                )
        if new.enabled != old.enabled:
            out.append(
                Planned(
                    c.flag_switch_request(project, name, where, new.enabled),
                    f"{_q(name)} {'on' if new.enabled else 'off'} in {where}",
                    "flags",
                    name,
                    where,
                )
            )
        return out


def plan_promote(
    source: s.Snapshot,
    target: s.Snapshot,
    comparison: Comparison,
    selection: Selection,
    journal: Journal | None = None,
    *,
    map_project: Mapping[str, str] | None = None,
    map_env: Mapping[str, str] | None = None,
    segment_ids: Mapping[str, int] | None = None,
    undo: bool = False,
    batching: Batching | None = None,
) -> PromotePlan:
    """The promote of `comparison`'s differences (the comparison of `source` with `target`,
    made with `selection`'s filters and these maps) to the target, whose segments' ids are
    `segment_ids` (name -> id, as read from it). `journal` is not written: the stages are
    (`stage`). With `batching` that says so (`batching_of` the target's capabilities), the
    flags go in imports (ask `validated` before showing the plan). See the module's text for
    what is planned and left out."""
    del journal  # the stages name it: a plan is the same whichever journal takes it
    planner = _Planner(
        source,
        target,
        comparison,
        selection,
        map_project or {},
        map_env or {},
        segment_ids or {},
        undo,
        batching,
    )
    first = planner.first()
    pending = frozenset(planner.created_segments)
    known = dict(segment_ids or {})
    second = planner.flags(known, pending)
    second += planner.deletions()
    left_out, kept = tuple(planner.left_out), planner.kept_extra

    def again(ids: Mapping[str, int]) -> tuple[Planned, ...]:
        fresh = _Planner(
            source, target, comparison, selection, map_project or {}, map_env or {}, ids, undo,
            batching,
        )  # fmt: skip
        fresh.first()
        return tuple(fresh.flags(ids, pending) + fresh.deletions())

    return PromotePlan(
        tuple(first),
        tuple(second),
        left_out,
        kept,
        pending,
        selection.delete_extra,
        secrets.token_hex(6),
        again,
        how="" if batching is None else batching.how,
        stage_one=frozenset((p.kind, p.object) for p in first),
    )


def stage(
    plan: PromotePlan,
    number: int,
    journal: Journal,
    snapshot_path: Path,
    target: s.Snapshot | None,
    planned: Sequence[Planned] | None = None,
    undoes: str = "",
) -> PromoteStage:
    """Stage `number` of `plan` as the runner carries it out; the one that writes the
    snapshot is given `target` (the target as read before)."""
    chosen = planned if planned is not None else (plan.first if number == 1 else plan.second)
    return PromoteStage(
        journal, tuple(chosen), number, plan.promote, snapshot_path, target, undoes=undoes
    )


class StageTwoRefused(Exception):
    """Stage 1 went through; stage 2 was not sent (the target changed meanwhile, or a segment
    stage 1 was to create is missing): why, and stage 1's journal entries."""

    def __init__(self, why: str, entries: Sequence[str]) -> None:
        super().__init__(f"stage 1 was done ({plural(len(entries), 'request')}, journaled); {why}")
        self.entries = tuple(entries)


#: validate's errors about what a promote's stage 1 brings before its imports are sent (the
#: kind of the stage 1 requests that bring each affected item)
_STAGE_ONE_ERRORS = {
    "We detected the following segments that need to be created first:": "segments",
    "We detected the following custom strategy that needs to be created first:": "strategies",
    "We detected the following context fields that do not have matching legal values with "
    "the imported ones:": "context-fields",
}


class ImportRefused(Exception):
    """The target's validation of an import of the plan has errors: nothing was sent. Each
    of `errors` is one of the server's messages, with what it names and the import's project
    and environment."""

    def __init__(self, errors: Sequence[str]) -> None:
        super().__init__(
            "the target's validation refuses the promote's imports, nothing was sent: "
            + "; ".join(errors)
        )
        self.errors = tuple(errors)


def _item(item: m.ImportValidationItem) -> str:
    shown = ", ".join(item.affectedItems[:5]) + (", …" if len(item.affectedItems) > 5 else "")
    return f"{item.message} {shown}" if shown else item.message


async def validated(client: c.AdminClient, plan: PromotePlan) -> PromotePlan:
    """`plan` with what the target's validation of each of its imports warns of (`warnings`),
    asked before the plan is shown (`POST /api/admin/features-batch/validate`: a read, nothing
    changes). `ImportRefused`, with the server's messages, for its errors and missing
    permissions, but for those about what stage 1 brings first (the segments and custom
    strategies it creates, the context fields whose legal values it changes)."""
    warnings: list[str] = []
    errors: list[str] = []
    for p in plan.first + plan.second:
        if p.query is None:
            continue
        answer = await client.validate_import(p.query)
        where = f"import into {_q(p.object)}, {p.environment}"
        for item in answer.errors + answer.permissions:
            kind = _STAGE_ONE_ERRORS.get(item.message)
            if kind and all((kind, x) in plan.stage_one for x in item.affectedItems):
                continue
            errors.append(f"{where}: {_item(item)}")
        warnings += [f"{where}: {_item(item)}" for item in answer.warnings]
    if errors:
        raise ImportRefused(errors)
    return replace(plan, warnings=tuple(warnings))


async def segment_ids_of(client: c.AdminClient) -> dict[str, int]:
    """The target's segments, name -> id (what stage 2's strategies name them by)."""
    return {g.name: g.id for g in (await client.segments()).segments}


async def apply_promote(
    client: c.AdminClient,
    plan: PromotePlan,
    journal: Journal,
    snapshot_path: Path,
    target: s.Snapshot,
    segment_ids: Mapping[str, int],
    entries: list[str],
    *,
    announce: Callable[[Changes], object] | None = None,
    on_step: Callable[[int, int, int], object] | None = None,
    stop: Callable[[], bool] | None = None,
) -> None:
    """Carry out `plan`'s stages through the runner (`flagdesk promote` and the Compare
    window alike): stage 1, then stage 2 planned again with the target's segments as they are
    then (`StageTwoRefused` when it would differ from the plan shown). The first stage sent
    writes `target` (as read before) to `snapshot_path`. Each entry journaled is appended to
    `entries` as it is known, so a caller keeps them when a stage stops part way (the runner's
    `PartlyDone`, the runner's `Stopped` when `stop()` says so between two requests).
    `on_step(stage, done, total)` as each request is answered."""
    from app.actions.runner import carry_out

    def progress(number: int) -> Callable[[int, int], object] | None:
        if on_step is None:
            return None
        return lambda done, total: on_step(number, done, total)

    if plan.first:
        done = await carry_out(client, stage(plan, 1, journal, snapshot_path, target),
                               announce=announce, on_step=progress(1), stop=stop)  # fmt: skip
        entries += done.entries
    if plan.second:
        ids = await segment_ids_of(client) if plan.pending else segment_ids
        try:
            second = plan.second_stage(ids)
        except ValueError as exc:
            raise StageTwoRefused(str(exc), entries) from None
        writes = None if plan.first else target
        done = await carry_out(client, stage(plan, 2, journal, snapshot_path, writes, second),
                               announce=announce, on_step=progress(2), stop=stop)  # fmt: skip
        entries += done.entries


# ------------------------------------------------------------------------------ undo


def touched_by(entries: Sequence[Entry], promote: str) -> list[Entry]:
    """The entries of the promote `promote`, in the journal's order."""
    return [
        e
        for e in entries
        if isinstance(e.before, dict)
        and e.before.get("promote") == promote
        and not e.before.get("undoes")
    ]


def plan_undo_promote(
    before: s.Snapshot,
    now: s.Snapshot,
    entries: Sequence[Entry],
    segment_ids: Mapping[str, int],
    batching: Batching | None = None,
) -> tuple[PromotePlan, list[LeftOut]]:
    """The plan that puts back what the promote of `entries` (all of it, any state) changed:
    `before` is its snapshot of the target, `now` the server as read now, `segment_ids` its
    segments now. Returns the plan and what cannot come back. `ValueError` when one of its
    entries is in doubt (check it first)."""
    doubtful = [e.id for e in entries if e.state is State.IN_DOUBT]
    if doubtful:
        raise ValueError(
            f"entry {doubtful[0]} of this promote is in doubt: check it first "
            "(flagdesk journal list shows it)"
        )
    done = [e for e in entries if e.state is State.DONE]
    kinds = sorted({str(e.before["kind"]) for e in done})
    cannot: list[LeftOut] = []
    archived = set()
    for e in done:
        request = e.request or {}
        if (
            e.before["kind"] == "flags"
            and request.get("method") == "DELETE"
            and str(request.get("path", "")).endswith(f"/features/{e.before['object']}")
        ):
            archived.add(str(e.before["object"]))
    for name in sorted(archived):
        cannot.append(
            LeftOut(
                "flags",
                name,
                "archived by the promote: an undo does not revive "
                f"it (flagdesk archive revive {name})",
            )
        )
    # an import's entry names its flags (`flags`); any other, the object it changes
    names = sorted(
        {str(x) for e in done for x in (e.before.get("flags") or [e.before["object"]])} - archived
    )
    # only the environments the promote wrote to are compared: a change made since in another
    # one (a flag's development, when the promote set its production and its description) is
    # not the promote's to take back; a promote that wrote to none compares a flag's own fields
    envs = sorted({str(e.before["environment"]) for e in done if e.before.get("environment")})
    map_env = {x: x for x in envs} if envs else NO_ENVIRONMENT
    selection = Selection(
        kinds=tuple(kinds), names=tuple(exactly(n) for n in names), delete_extra=True
    )
    if not names:
        comparison = Comparison((), ())
    else:
        comparison = compare(before, now, kinds=kinds, names=selection.names, map_env=map_env)
    plan = plan_promote(
        before, now, comparison, selection, map_env=map_env, segment_ids=segment_ids, undo=True,
        batching=batching,
    )  # fmt: skip
    return replace(plan, left_out=plan.left_out + tuple(cannot)), cannot
