"""The comparison engine: `compare(source, target, ...)` finds every difference between two
snapshots (or two environments of one), as a `Comparison`. Pure computation: no I/O, no Qt.

**Matching.** Objects are matched by natural keys, never numeric ids: a flag by name, a project
by id, an environment, segment, context field, tag type, strategy definition, group or role by
name, a user by email, project access by project and role, an API token by name and type.
`map_project` and `map_env` rename the SOURCE's keys to the target's ({"production": "staging"}),
and when given they also choose what is compared: only the source's mapped projects
(environments) against the target's they map to. So one snapshot against itself with
`map_env={"production": "staging"}` is production's differences from staging; to compare
everything with one environment renamed, map each one. What names a project or environment the
maps leave out is left out with it: a flag's environment, a project's environment, a role's
permission for that environment, an API token of that environment; flags, segments and
project access of a project left out.

**Strategies.** A flag's strategies in an environment are matched by content, not id: first
pairs with the same (name, title, sortOrder), then what is left by name, in order; the rest is
only on one side. A pair's fields are compared one by one (`parameters.rollout`, `constraints`,
`segments` by name, `variants`, `title`, `disabled`). When the pairs come in a different order
on each side, that is a difference of its own (`strategy order`); sort orders that differ but
keep the order (0, 1 against 1, 2) are none.

**Differences.** Each `Difference` has its kind, the object (`web-shop/checkout-v2`), the path
inside it (`production`, `strategy flexibleRollout #1`, `parameters.rollout`), its change
(`only in source`, `only in target`, `changed`, `order changed`) and the values: `old` the
target's, `new` the source's (what a promotion from source to target would write). A `#n` is
the strategy's place in its environment, counted from 1 (the source's, or the target's for a
strategy only the target has). Lists whose order means nothing (tags, segments of a strategy,
constraint values, members) are compared as sets; a set of named things (tags, dependencies,
legal values, a project's environments, a group's members, a role's permissions, project access
users and groups) differs item by item.

**The result.** `Comparison` holds the differences in a stable order (kinds in `KINDS` order,
objects by key, then as found), the counts by kind and change, a tree by kind then object,
`same`, and renders as JSON (`to_json`), Markdown (a table per kind, `to_markdown`) and plain
text for terminals (`text_lines`); values are shown short (`short`): long JSON collapsed.

Speed: 10,000 flags x 3 environments x 2 strategies compare in about half a second on the
2-core CI machine under load (`tests/app/test_compare.py` prints it): objects are turned into
plain dicts once, equal ones are passed over by a dict comparison, and the garbage collector is
paused meanwhile (`app.startup.paused_gc`, counted with the other pauses; with it, 3 s)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from fnmatch import fnmatchcase
from types import MappingProxyType
from typing import Any, NamedTuple

from app.snapshot.model import (
    Constraint,
    Flag,
    Snapshot,
    StrategyVariant,
)
from app.startup import paused_gc

__all__ = [
    "KINDS",
    "Change",
    "Comparison",
    "Difference",
    "Kind",
    "compare",
    "exactly",
    "field_differences",
    "pair_strategies",
    "short",
]


class Kind(NamedTuple):
    """A kind of object compared: its key (`--kinds`), the word before an object's key, and the
    title of its section."""

    key: str
    word: str
    title: str


#: every kind, in the order comparisons show them
KINDS = (
    Kind("projects", "project", "Projects"),
    Kind("environments", "environment", "Environments"),
    Kind("flags", "flag", "Flags"),
    Kind("segments", "segment", "Segments"),
    Kind("context-fields", "context field", "Context fields"),
    Kind("tag-types", "tag type", "Tag types"),
    Kind("strategies", "strategy definition", "Custom strategies"),
    Kind("users", "user", "Users"),
    Kind("groups", "group", "Groups"),
    Kind("roles", "role", "Roles"),
    Kind("project-access", "project access", "Project access"),
    Kind("api-tokens", "API token", "API tokens"),
)
KIND_KEYS = tuple(kind.key for kind in KINDS)
#: a `map_env` that names no environment: only what belongs to none is compared (a flag's own
#: fields, not its environments). No server has an environment of no name.
NO_ENVIRONMENT: Mapping[str, str] = MappingProxyType({"": ""})
_KIND = {kind.key: kind for kind in KINDS}
_KIND_ORDER = {kind.key: index for index, kind in enumerate(KINDS)}


class Change(StrEnum):
    """What a difference is."""

    ONLY_IN_SOURCE = "only in source"
    ONLY_IN_TARGET = "only in target"
    CHANGED = "changed"
    ORDER = "order changed"


CHANGES = tuple(Change)

#: what joins the steps of a difference's key: a single right-pointing angle quotation mark
STEP = " \u203a "


@dataclass(frozen=True, slots=True)
class Difference:
    """One difference: the kind, the object's key as shown, the path inside it (empty for the
    whole object), the change, and the values: `old` the target's, `new` the source's (JSON
    values; None where that side has nothing)."""

    kind: str
    object: str
    path: tuple[str, ...]
    change: Change
    old: Any = None
    new: Any = None

    @property
    def key(self) -> str:
        """The kind's word, the object and the path, joined by `STEP`: `flag web-shop/checkout-v2
        STEP production STEP strategy flexibleRollout #1 STEP parameters.rollout`."""
        return STEP.join((f"{_KIND[self.kind].word} {self.object}", *self.path))

    @property
    def where(self) -> str:
        """The path inside the object, joined by `STEP`."""
        return STEP.join(self.path)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "object": self.object,
            "path": list(self.path),
            "key": self.key,
            "change": str(self.change),
            "old": self.old,
            "new": self.new,
        }


@dataclass(frozen=True)
class Comparison:
    """The differences of a source from a target, and what was compared (`kinds`). `source`
    and `target` are the two sides' names as shown (a file, `file:production`)."""

    differences: tuple[Difference, ...]
    kinds: tuple[str, ...] = KIND_KEYS
    source: str = "source"
    target: str = "target"
    #: the kinds asked for but not compared, each with why (a side did not read them: the
    #: server has none, or the token may not read them)
    not_compared: tuple[tuple[str, str], ...] = ()
    _tree: dict[str, dict[str, tuple[Difference, ...]]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @property
    def same(self) -> bool:
        return not self.differences

    @property
    def counts(self) -> dict[str, dict[str, int]]:
        """{kind: {change: how many}} for each kind compared (0 included), changes in `Change`
        order."""
        counted = Counter((d.kind, d.change) for d in self.differences)
        return {k: {str(c): counted[k, c] for c in CHANGES} for k in self.kinds}

    @property
    def tree(self) -> dict[str, dict[str, tuple[Difference, ...]]]:
        """{kind: {object: its differences}}, kinds and objects in the comparison's order; only
        kinds with differences."""
        if not self._tree and self.differences:
            tree: dict[str, dict[str, list[Difference]]] = {}
            for difference in self.differences:
                tree.setdefault(difference.kind, {}).setdefault(difference.object, []).append(
                    difference
                )
            built = {k: {o: tuple(ds) for o, ds in objs.items()} for k, objs in tree.items()}
            object.__setattr__(self, "_tree", built)
        return self._tree

    def summary(self) -> list[str]:
        """One line per kind with differences: `flags: 2 changed, 1 only in source`."""
        lines = []
        for kind, counts in self.counts.items():
            parts = [f"{n:,} {change}" for change, n in counts.items() if n]
            if parts:
                lines.append(f"{kind}: {', '.join(parts)}")
        return lines

    def to_json(self) -> dict[str, Any]:
        """The comparison as JSON: sides, same, counts, total, the differences in order."""
        return {
            "source": self.source,
            "target": self.target,
            "same": self.same,
            "kinds": list(self.kinds),
            "total": len(self.differences),
            "notCompared": dict(self.not_compared),
            "counts": self.counts,
            "differences": [d.to_json() for d in self.differences],
        }

    def to_markdown(self) -> str:
        """A heading, the summary, and a table per kind with differences."""
        lines = [
            f"# Comparison of {_md(self.source)} (source) with {_md(self.target)} (target)",
            "",
        ]
        lines.extend(f"{_md(_KIND[k].title)} not compared: {_md(why)}.  " for k, why in
                     self.not_compared)  # fmt: skip
        if self.same:
            lines.append(f"No differences in {', '.join(self.kinds)}.")
            return "\n".join(lines) + "\n"
        lines.append(
            f"{len(self.differences):,} differences; values are the target's → the source's."
        )
        lines.append("")
        lines.extend(f"- {line}" for line in self.summary())
        for kind, objects in self.tree.items():
            lines += ["", f"## {_KIND[kind].title}", ""]
            lines.append("| object | where | change | target | source |")
            lines.append("|---|---|---|---|---|")
            for name, differences in objects.items():
                for d in differences:
                    old = short(d.old, d.change is Change.ONLY_IN_SOURCE)
                    new = short(d.new, d.change is Change.ONLY_IN_TARGET)
                    cells = (name, d.where, str(d.change), old, new)
                    lines.append("| " + " | ".join(_md(cell) for cell in cells) + " |")
        return "\n".join(lines) + "\n"

    def text_lines(self) -> list[str]:
        """The plain text a terminal shows: the summary, then the differences by kind and
        object, a change's values as `target → source`."""
        head = f"{self.source} (source) against {self.target} (target): "
        skipped = [f"  {_KIND[k].title} not compared: {why}" for k, why in self.not_compared]
        if self.same:
            return [head + f"the same ({', '.join(self.kinds)})", *skipped]
        lines = [head + f"{len(self.differences):,} differences", *skipped]
        lines.extend(f"  {line}" for line in self.summary())
        for kind, objects in self.tree.items():
            lines += ["", f"{_KIND[kind].title} (values: target → source)"]
            for name, differences in objects.items():
                lines.append(f"  {name}")
                for d in differences:
                    where = d.where or "(the whole object)"
                    if d.change is Change.ONLY_IN_SOURCE:
                        lines.append(f"    {where}: only in source: {short(d.new)}")
                    elif d.change is Change.ONLY_IN_TARGET:
                        lines.append(f"    {where}: only in target: {short(d.old)}")
                    else:
                        lines.append(f"    {where}: {short(d.old)} → {short(d.new)}")
        return lines


#: how long a value is shown before it is cut (with …)
SHORT = 60


def short(value: Any, absent: bool = False) -> str:
    """`value` short and readable: text as it is (`""` when empty), true/false, numbers, a
    list or object as compact JSON cut to `SHORT` characters with `…`; "" when `absent` (that
    side has nothing), `—` for null."""
    if absent:
        return ""
    if value is None:
        return "—"
    if isinstance(value, str):
        text = value if value else '""'
    else:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    text = " ".join(text.split()) if "\n" in text or "\r" in text else text
    return text if len(text) <= SHORT else text[: SHORT - 1] + "…"


#: the control characters (C0, DEL, C1) as escapes a person reads (`\x1b`), as the commands
#: print them (`app.commands.output.visible`): a name in a Markdown file someone `cat`s must not
#: drive the terminal
_CONTROLS = {code: f"\\x{code:02x}" for code in (*range(0x20), *range(0x7F, 0xA0))}


def _md(text: str) -> str:
    """A table cell: `|` and `\\` escaped, control characters (line breaks too) as escapes."""
    return text.replace("\\", "\\\\").replace("|", "\\|").translate(_CONTROLS)


# ------------------------------------------------------------------------ the comparable form


class Keyed(dict[str, Any]):
    """Named things compared item by item: {key: fields}; `label` goes before a key in a
    path ("tag", "member"; none for a flag's environments: the name alone)."""

    __slots__ = ("label",)

    def __init__(self, label: str, items: Iterable[tuple[str, Any]]) -> None:
        super().__init__(items)
        self.label = label

    def step(self, key: str) -> str:
        return f"{self.label} {key}" if self.label else key


class Strategy(NamedTuple):
    """A strategy in comparable form: what pairs it, and its fields."""

    name: str
    title: str
    sort: int
    fields: dict[str, Any]

    def label(self, place: int) -> str:
        title = f" “{self.title}”" if self.title else ""
        return f"strategy {self.name}{title} #{place}"

    def short_label(self) -> str:
        return f"{self.name} “{self.title}”" if self.title else self.name


class Strategies(tuple[Strategy, ...]):
    """A flag's strategies in one environment, by sort order."""

    __slots__ = ()


def _text(value: str | None) -> str | None:
    """A free text as compared: empty and none are the same (Unleash answers either, by
    release and by how the thing was made)."""
    return value or None


def _constraints(constraints: Sequence[Constraint]) -> list[dict[str, Any]]:
    """Constraints as a set (their order means nothing, nor that of their values), in a stable
    order."""
    if not constraints:
        return []
    if len(constraints) > 1:
        constraints = sorted(constraints, key=lambda c: (
            c.contextName, c.operator, sorted(c.values), c.value or "", c.caseInsensitive,
            c.inverted))  # fmt: skip
    found = []
    for c in constraints:
        item: dict[str, Any] = {"contextName": c.contextName, "operator": c.operator}
        if c.values:
            item["values"] = sorted(c.values)
        if c.value is not None:
            item["value"] = c.value
        if c.caseInsensitive:
            item["caseInsensitive"] = True
        if c.inverted:
            item["inverted"] = True
        found.append(item)
    return found


def _variants(variants: Sequence[StrategyVariant]) -> list[dict[str, Any]]:
    if not variants:
        return []
    return sorted(
        (v.model_dump(mode="json", exclude_defaults=True) for v in variants),
        key=lambda v: str(v.get("name")),
    )


class _Names:
    """How one side's project ids or environment names are compared: the source's renamed
    by the map, and both sides limited to what the map names (when there is one)."""

    def __init__(self, mapping: Mapping[str, str], source: bool) -> None:
        self.mapping = dict(mapping) if source else {v: v for v in mapping.values()}
        self.limited = bool(mapping)

    def __call__(self, name: str) -> str | None:
        """`name` as compared, or None when the maps leave it out."""
        if not self.limited:
            return name
        return self.mapping.get(name)

    def rename(self, name: str) -> str:
        """`name` as compared, kept as it is when the maps leave it out (a name in a list)."""
        return self.mapping.get(name, name)


class _Side:
    """One side's objects, in comparable form, by kind: {key: (display, projects, tags,
    fields)}."""

    def __init__(self, snapshot: Snapshot, projects: _Names, envs: _Names) -> None:
        self.snapshot = snapshot
        self.project = projects
        self.env = envs

    def objects(self, kind: str) -> dict[str, _Object]:
        readers: dict[str, Callable[[], Iterator[tuple[str, _Object]]]] = {
            "projects": self._projects,
            "environments": self._environments,
            "flags": self._flags,
            "segments": self._segments,
            "context-fields": self._context_fields,
            "tag-types": self._tag_types,
            "strategies": self._strategies,
            "users": self._users,
            "groups": self._groups,
            "roles": self._roles,
            "project-access": self._project_access,
            "api-tokens": self._api_tokens,
        }
        return dict(readers[kind]())

    def _projects(self) -> Iterator[tuple[str, _Object]]:
        for p in self.snapshot.projects:
            key = self.project(p.id)
            if key is None:
                continue
            envs = Keyed("environment", ((e, {}) for e in map(self.env, p.environments) if e))
            fields = {"name": p.name, "description": _text(p.description), "environments": envs}
            yield key, _Object(key, frozenset({key}), frozenset(), fields)

    def _environments(self) -> Iterator[tuple[str, _Object]]:
        for e in self.snapshot.environments:
            key = self.env(e.name)
            if key is not None:
                fields = {"type": e.type, "enabled": e.enabled, "sortOrder": e.sortOrder}
                yield key, _Object(key, frozenset(), frozenset(), fields)

    def _flags(self) -> Iterator[tuple[str, _Object]]:
        for flag in self.snapshot.flags:
            project = self.project(flag.project)
            if project is not None:
                yield flag.name, _Object(f"{project}/{flag.name}", frozenset({project}),
                                         frozenset(map(str, flag.tags)),
                                         self._flag(flag, project))  # fmt: skip

    def _flag(self, flag: Flag, project: str) -> dict[str, Any]:
        environments = []
        for environment in flag.environments:
            name = self.env(environment.name)
            if name is None:
                continue
            ordered = sorted(environment.strategies, key=lambda s: s.sortOrder)
            strategies = Strategies([
                Strategy(s.name, s.title or "", s.sortOrder, {
                    "title": s.title or "",
                    "disabled": s.disabled,
                    "parameters": s.parameters,  # read, never changed: no copy
                    "constraints": _constraints(s.constraints) if s.constraints else [],
                    "segments": s.segments if len(s.segments) < 2 else sorted(s.segments),
                    "variants": _variants(s.variants) if s.variants else [],
                })
                for s in ordered
            ])  # fmt: skip
            environments.append((name, {
                "enabled": environment.enabled,
                "strategies": strategies,
                "variants": _variants(environment.variants),
            }))  # fmt: skip
        return {
            "project": project,
            "type": flag.type,
            "description": _text(flag.description),
            "impressionData": flag.impressionData,
            "stale": flag.stale,
            "tags": Keyed("tag", ((str(t), {}) for t in flag.tags)),
            "dependencies": Keyed("dependency", (
                (d.feature, {"enabled": d.enabled, "variants": sorted(d.variants)})
                for d in flag.dependencies
            )),
            "environments": Keyed("", environments),
        }  # fmt: skip

    def _segments(self) -> Iterator[tuple[str, _Object]]:
        for s in self.snapshot.segments:
            project = None if s.project is None else self.project(s.project)
            if s.project is not None and project is None:
                continue
            fields = {"description": _text(s.description), "project": project,
                      "constraints": _constraints(s.constraints)}  # fmt: skip
            yield s.name, _Object(s.name, frozenset({project} if project else ()), frozenset(),
                                  fields)  # fmt: skip

    def _context_fields(self) -> Iterator[tuple[str, _Object]]:
        for c in self.snapshot.contextFields:
            legal = Keyed("legal value", ((v.value, {"description": _text(v.description)})
                                          for v in c.legalValues))  # fmt: skip
            fields = {
                "description": _text(c.description),
                "stickiness": c.stickiness,
                "legalValues": legal,
            }
            yield c.name, _Object(c.name, frozenset(), frozenset(), fields)

    def _tag_types(self) -> Iterator[tuple[str, _Object]]:
        for t in self.snapshot.tagTypes:
            fields = {"description": _text(t.description), "icon": _text(t.icon)}
            yield t.name, _Object(t.name, frozenset(), frozenset(), fields)

    def _strategies(self) -> Iterator[tuple[str, _Object]]:
        for s in self.snapshot.strategies:
            fields = {"description": _text(s.description), "deprecated": s.deprecated,
                      "parameters": [p.model_dump(mode="json") for p in s.parameters]}  # fmt: skip
            yield s.name, _Object(s.name, frozenset(), frozenset(), fields)

    def _users(self) -> Iterator[tuple[str, _Object]]:
        for u in self.snapshot.users:
            fields = {"name": _text(u.name), "rootRole": u.rootRole}
            yield u.email, _Object(u.email, frozenset(), frozenset(), fields)

    def _groups(self) -> Iterator[tuple[str, _Object]]:
        for g in self.snapshot.groups:
            fields = {"description": _text(g.description), "rootRole": g.rootRole,
                      "users": Keyed("member", ((email, {}) for email in g.users))}  # fmt: skip
            yield g.name, _Object(g.name, frozenset(), frozenset(), fields)

    def _roles(self) -> Iterator[tuple[str, _Object]]:
        for r in self.snapshot.roles:
            permissions = []
            for p in r.permissions:
                environment = None if p.environment is None else self.env(p.environment)
                if p.environment is None:
                    permissions.append(p.name)
                elif environment is not None:  # an environment the maps leave out: left out
                    permissions.append(f"{p.name}@{environment}")
            held = Keyed("permission", ((p, {}) for p in permissions))
            fields = {"type": r.type, "description": _text(r.description), "permissions": held}
            yield r.name, _Object(r.name, frozenset(), frozenset(), fields)

    def _project_access(self) -> Iterator[tuple[str, _Object]]:
        for a in self.snapshot.projectAccess:
            project = self.project(a.project)
            if project is None:
                continue
            key = f"{project}{STEP}{a.role}"
            fields = {"users": Keyed("user", ((e, {}) for e in a.users)),
                      "groups": Keyed("group", ((g, {}) for g in a.groups))}  # fmt: skip
            yield key, _Object(key, frozenset({project}), frozenset(), fields)

    def _api_tokens(self) -> Iterator[tuple[str, _Object]]:
        for t in self.snapshot.apiTokens:
            key = f"{t.tokenName} ({t.type})"
            projects = sorted(self.project.rename(p) for p in t.projects)
            environment = None if t.environment is None else self.env(t.environment)
            if t.environment is not None and environment is None:
                continue  # a token of an environment the maps leave out
            expires = None if t.expiresAt is None else t.expiresAt.isoformat()
            fields = {"projects": projects, "environment": environment, "expiresAt": expires}
            yield key, _Object(key, frozenset(projects), frozenset(), fields)


class _Object(NamedTuple):
    display: str
    projects: frozenset[str]
    tags: frozenset[str]
    fields: dict[str, Any]


#: the kinds that belong to a project (what `projects` filters)
PROJECT_KINDS = frozenset({"projects", "flags", "segments", "project-access", "api-tokens"})


def compare(
    source: Snapshot,
    target: Snapshot,
    *,
    kinds: Iterable[str] | None = None,
    projects: Iterable[str] | None = None,
    tags: Iterable[str] | None = None,
    names: Iterable[str] | None = None,
    map_project: Mapping[str, str] | None = None,
    map_env: Mapping[str, str] | None = None,
) -> Comparison:
    """The differences of `source` from `target`.

    `kinds`: the kinds compared (`KINDS`' keys; all by default). `projects`: only what belongs
    to these projects (as the target names them) among the kinds that belong to one (projects,
    flags, segments, project access, API tokens); the others are compared whole. `tags`
    (`type:value`): only the flags with one of them on either side. `names`: glob patterns
    (`checkout-*`), only the objects whose key matches one. `map_project`, `map_env`: the
    source's project ids and environment names renamed to the target's; given, only what they
    name is compared (see the module's docstring)."""
    chosen = tuple(KIND_KEYS if kinds is None else sorted(set(kinds), key=_kind_order))
    project_filter = None if projects is None else frozenset(projects)
    tag_filter = None if tags is None else frozenset(tags)
    patterns = None if names is None else tuple(names)
    projects_map, envs_map = map_project or {}, map_env or {}
    sides = (
        _Side(source, _Names(projects_map, True), _Names(envs_map, True)),
        _Side(target, _Names(projects_map, False), _Names(envs_map, False)),
    )

    def wanted(kind: str, key: str, obj: _Object) -> bool:
        if (
            project_filter is not None
            and kind in PROJECT_KINDS
            and not obj.projects & project_filter
        ):
            return False
        if tag_filter is not None and kind == "flags" and not obj.tags & tag_filter:
            return False
        return patterns is None or any(
            fnmatchcase(key, p) or fnmatchcase(obj.display, p) for p in patterns
        )

    skipped = tuple(_not_compared(kind, source, target) for kind in chosen)
    not_compared = tuple((kind, why) for kind, why in zip(chosen, skipped, strict=True) if why)
    chosen = tuple(kind for kind, why in zip(chosen, skipped, strict=True) if not why)
    with paused_gc():
        found = _differences(chosen, sides, wanted)
    return Comparison(tuple(found), chosen, not_compared=not_compared)


def exactly(name: str) -> str:
    """`name` as a `names` pattern matching only itself."""
    return "".join(f"[{ch}]" if ch in "*?[]" else ch for ch in name)


def list_of(kind: str) -> str:
    """The snapshot's list a kind is (`context-fields` -> `contextFields`)."""
    first, *rest = kind.split("-")
    return first + "".join(word.capitalize() for word in rest)


def _not_compared(kind: str, source: Snapshot, target: Snapshot) -> str:
    """Why `kind` is not compared ("" when it is): a side did not read it."""
    field = list_of(kind)
    why = [f"the {side} did not read them ({snapshot.unread[field]})"
           for side, snapshot in (("source", source), ("target", target))
           if field in snapshot.unread]  # fmt: skip
    return "; ".join(why)


def _differences(
    chosen: tuple[str, ...], sides: tuple[_Side, _Side], wanted: Callable[[str, str, _Object], bool]
) -> list[Difference]:
    found: list[Difference] = []
    for kind in chosen:
        in_source = sides[0].objects(kind)
        in_target = sides[1].objects(kind)
        for key in sorted(in_source.keys() | in_target.keys()):
            new, old = in_source.get(key), in_target.get(key)
            if not ((new and wanted(kind, key, new)) or (old and wanted(kind, key, old))):
                continue
            if old is None:
                assert new is not None
                found.append(Difference(kind, new.display, (), Change.ONLY_IN_SOURCE, None,
                                        _plain(new.fields)))  # fmt: skip
            elif new is None:
                found.append(Difference(kind, old.display, (), Change.ONLY_IN_TARGET,
                                        _plain(old.fields), None))  # fmt: skip
            elif new.fields != old.fields:
                emit = _emitter(found, kind, new.display)
                _diff_fields(new.fields, old.fields, (), emit)
        _let_go(in_source)
        _let_go(in_target)
    return found


def _let_go(objects: dict[str, _Object]) -> None:
    """A kind's objects dropped one at a time: 10,000 flags' fields freed in one go (the dict
    rebound to the next kind's) is one deallocation in C of a million objects, which holds
    the GIL for tens of milliseconds, so the window's thread waited on the comparison's worker
    (py-spy: 66 ms); freed an object at a time, the worker gives the GIL back between two."""
    while objects:
        objects.popitem()


def _kind_order(kind: str) -> int:
    if kind not in _KIND_ORDER:
        raise ValueError(f"no kind {kind!r}: choose among {', '.join(KIND_KEYS)}")
    return _KIND_ORDER[kind]


Emit = Callable[[tuple[str, ...], Change, Any, Any], None]


def _emitter(found: list[Difference], kind: str, display: str) -> Emit:
    def emit(path: tuple[str, ...], change: Change, old: Any, new: Any) -> None:
        found.append(Difference(kind, display, path, change, old, new))

    return emit


def _plain(value: Any) -> Any:
    """A comparable value back as plain JSON (what a difference shows), its empty fields (null,
    "", [], {}) left out: a named thing with nothing more becomes its name."""
    if isinstance(value, Keyed):
        items = {k: _plain(v) for k, v in sorted(value.items())}
        return list(items) if not any(items.values()) else items
    if isinstance(value, Strategies):
        return [{"name": s.name, **_plain(s.fields), "sortOrder": s.sort} for s in value]
    if isinstance(value, dict):
        return {k: plain for k, v in value.items() if not _empty(plain := _plain(v))}
    return value


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, str | list | dict) and not value)


def _diff_fields(
    new: dict[str, Any], old: dict[str, Any], path: tuple[str, ...], emit: Emit
) -> None:
    for name, source_value in new.items():
        target_value = old.get(name)
        if source_value == target_value:
            continue
        if isinstance(source_value, Keyed) and isinstance(target_value, Keyed):
            _diff_keyed(source_value, target_value, path, emit)
        elif isinstance(source_value, Strategies) and isinstance(target_value, Strategies):
            _diff_strategies(source_value, target_value, path, emit)
        elif isinstance(source_value, dict) and isinstance(
            target_value, dict
        ):  # parameters: one by one
            for sub in sorted(source_value.keys() | target_value.keys()):
                if source_value.get(sub) != target_value.get(sub):
                    emit(
                        (*path, f"{name}.{sub}"),
                        Change.CHANGED,
                        target_value.get(sub),
                        source_value.get(sub),
                    )
        else:
            emit((*path, name), Change.CHANGED, _plain(target_value), _plain(source_value))


def field_differences(
    old: Any, new: Any, *, kind: str = "flags", object: str = ""
) -> list[Difference]:
    """Two plain JSON values (an event's `preData` and `data`) compared field by field as a
    comparison compares an object's fields (`_diff_fields`: an object's parameters one by one,
    `parameters.rollout`; other values whole), in `new`'s order, then the fields only `old`
    has. A field only `new` has is `ONLY_IN_SOURCE` (added), only `old`'s `ONLY_IN_TARGET`
    (removed); a value that is not an object on both sides is one difference of the whole
    (path `()`). `kind` and `object` name what the differences are of (`Difference.key`)."""
    found: list[Difference] = []
    emit = _emitter(found, kind, object)
    if not (isinstance(old, dict) and isinstance(new, dict)):
        if old != new:
            change = (Change.ONLY_IN_SOURCE if old is None else
                      Change.ONLY_IN_TARGET if new is None else Change.CHANGED)  # fmt: skip
            emit((), change, old, new)
        return found
    for name in new:
        if name not in old:
            emit((name,), Change.ONLY_IN_SOURCE, None, new[name])
        else:
            _diff_fields({name: new[name]}, {name: old[name]}, (), emit)
    for name in old:
        if name not in new:
            emit((name,), Change.ONLY_IN_TARGET, old[name], None)
    return found


def _diff_keyed(new: Keyed, old: Keyed, path: tuple[str, ...], emit: Emit) -> None:
    for key in sorted(new.keys() | old.keys()):
        step = (*path, new.step(key))
        if key not in old:
            emit(step, Change.ONLY_IN_SOURCE, None, _plain(new[key]) or key)
        elif key not in new:
            emit(step, Change.ONLY_IN_TARGET, _plain(old[key]) or key, None)
        elif new[key] != old[key]:
            _diff_fields(new[key], old[key], step, emit)


def _pairs(new: Strategies, old: Strategies) -> list[tuple[int, int]]:
    return pair_strategies([(x.name, x.title, x.sort) for x in new],
                           [(x.name, x.title, x.sort) for x in old])  # fmt: skip


#: what pairs a strategy of one side with one of the other: its name, title ("" for none) and
#: sort order
StrategyKey = tuple[str, str, int]


def pair_strategies(
    new: Sequence[StrategyKey], old: Sequence[StrategyKey]
) -> list[tuple[int, int]]:
    """A flag's strategies in one environment paired, (source place, target place): by (name,
    title, sort order), then what is left by name, each in order. The comparison and the
    promote planner (`app.actions.promote`) pair alike, so a promote done twice sends nothing
    the second time."""
    pairs: list[tuple[int, int]] = []
    free_new = set(range(len(new)))
    free_old = set(range(len(old)))
    matches: tuple[Callable[[StrategyKey], Any], ...] = (lambda k: k, lambda k: k[0])
    for match in matches:
        waiting: dict[Any, list[int]] = {}
        for j in sorted(free_old):
            waiting.setdefault(match(old[j]), []).append(j)
        for i in sorted(free_new):
            candidates = waiting.get(match(new[i]))
            if candidates:
                j = candidates.pop(0)
                pairs.append((i, j))
                free_new.discard(i)
                free_old.discard(j)
    return sorted(pairs)


def _diff_strategies(new: Strategies, old: Strategies, path: tuple[str, ...], emit: Emit) -> None:
    pairs = _pairs(new, old)
    paired = dict(pairs)
    taken = set(paired.values())
    for i, strategy in enumerate(new):
        step = (*path, strategy.label(i + 1))
        if i in paired:
            counterpart = old[paired[i]]
            if strategy.fields != counterpart.fields:
                _diff_fields(strategy.fields, counterpart.fields, step, emit)
        else:
            emit(step, Change.ONLY_IN_SOURCE, None, _plain(Strategies((strategy,)))[0])
    for j, strategy in enumerate(old):
        if j not in taken:
            emit((*path, strategy.label(j + 1)), Change.ONLY_IN_TARGET,
                 _plain(Strategies((strategy,)))[0], None)  # fmt: skip
    by_target = [i for i, _j in sorted(pairs, key=lambda pair: pair[1])]
    by_source = [i for i, _j in pairs]
    if by_target != by_source:
        emit((*path, "strategy order"), Change.ORDER,
             [new[i].short_label() for i in by_target],
             [new[i].short_label() for i in by_source])  # fmt: skip
