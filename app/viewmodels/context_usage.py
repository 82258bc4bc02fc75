"""`ContextUsageModel`: the context usage viewer's view-model. It asks the server which strategies
use a context field (`AdminClient.context_strategies`) and groups them project > feature >
strategy for the tree, with counts, a filter, the text Ctrl+C copies and a CSV export.

An unknown field is no error: the server answers it with an empty list (the spec says so), so the
empty state names the field and says whether the server knows it. QtCore only.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from app.actions.context_fields import spread, usage_summary
from app.api.models import ContextFieldStrategy
from app.changes import Resource
from app.text import count_text, plural
from app.viewmodels.choices import ChoicesModel, context_field_choices
from app.viewmodels.session import Session
from app.viewmodels.table import MISSING, Column, filter_terms, write_csv_file
from app.viewmodels.tools import ToolViewModel

#: the window's states
IDLE, LOADING, ERROR, EMPTY, CONTENT = "idle", "loading", "error", "empty", "content"


def project_of(strategy: ContextFieldStrategy) -> str:
    return strategy.projectId or MISSING


def feature_of(strategy: ContextFieldStrategy) -> str:
    return strategy.featureName or MISSING


def leaf_text(strategy: ContextFieldStrategy) -> str:
    """A strategy's line in the tree: "production · flexibleRollout"."""
    return f"{strategy.environment or MISSING} · {strategy.strategyName or MISSING}"


#: one line per strategy in the CSV export
EXPORT_COLUMNS: list[Column[ContextFieldStrategy]] = [
    Column("Project", lambda s: s.projectId),
    Column("Feature", lambda s: s.featureName),
    Column("Environment", lambda s: s.environment),
    Column("Strategy name", lambda s: s.strategyName),
    Column("Strategy id", lambda s: s.id),
]


@dataclass(frozen=True)
class FeatureStrategies:
    """One feature's strategies that use the field."""

    project: str
    feature: str
    strategies: list[ContextFieldStrategy]


@dataclass(frozen=True)
class ProjectUsage:
    """One project's features that use the field."""

    project: str
    features: list[FeatureStrategies]

    @property
    def strategy_count(self) -> int:
        return sum(len(f.strategies) for f in self.features)

    @property
    def summary(self) -> str:
        """ "8 strategies in 5 features"."""
        strategies = plural(self.strategy_count, "strategy", "strategies")
        return f"{strategies} in {plural(len(self.features), 'feature')}"


def group_strategies(strategies: list[ContextFieldStrategy]) -> list[ProjectUsage]:
    """Projects, then their features, each in alphabetical order (any case); a feature's
    strategies stay in the server's order."""
    by_project: dict[str, dict[str, list[ContextFieldStrategy]]] = {}
    for strategy in strategies:
        features = by_project.setdefault(project_of(strategy), {})
        features.setdefault(feature_of(strategy), []).append(strategy)
    return [
        ProjectUsage(
            project,
            [
                FeatureStrategies(project, feature, features[feature])
                for feature in sorted(features, key=str.casefold)
            ],
        )
        for project, features in sorted(by_project.items(), key=lambda kv: kv[0].casefold())
    ]


#: "12 strategies in 7 features across 3 projects" (the words `flagdesk context usage` and a
#: refused deletion use too)
summary = usage_summary


def tsv(strategies: list[ContextFieldStrategy]) -> str:
    """What Ctrl+C copies: "project\\tfeature\\tenvironment\\tstrategy" lines."""
    lines = [
        "\t".join(
            (project_of(s), feature_of(s), s.environment or MISSING, s.strategyName or MISSING)
        )
        for s in strategies
    ]
    return "".join(f"{line}\n" for line in lines)


def _haystack(strategy: ContextFieldStrategy) -> str:
    parts = (strategy.projectId, strategy.featureName, strategy.environment,
             strategy.strategyName, strategy.id)  # fmt: skip
    return "\x1f".join(p or "" for p in parts).casefold()


class ContextUsageModel(ToolViewModel):
    """The strategies that use one context field. `show_field(name)` loads them; `state` says
    what the window shows and `changed` says when it may have changed (rows, filter, state)."""

    changed = Signal()

    shows = frozenset({Resource.CONTEXT_FIELDS, Resource.FEATURES})

    def __init__(self, session: Session, parent: QObject | None = None) -> None:
        super().__init__("context_usage", session, parent)
        #: the server's context fields, for the picker
        self.fields: ChoicesModel = context_field_choices(session, self)
        #: the field asked for (typed or picked); "" until one is
        self.field = ""
        #: the field whose strategies are held (None: nothing loaded)
        self.loaded_field: str | None = None
        #: every strategy the server returned, in its order
        self.strategies: list[ContextFieldStrategy] = []
        self._haystacks: list[str] = []
        #: the strategies the filter lets through, and their groups
        self.shown: list[ContextFieldStrategy] = []
        self.groups: list[ProjectUsage] = []
        self.filter_text = ""
        self._task: asyncio.Task[None] | None = None
        self.busy_changed.connect(self._emit_changed)
        self.error_changed.connect(self._emit_changed)
        self.fields.changed.connect(self._emit_changed)
        self.fields.busy_changed.connect(self._emit_changed)

    def _emit_changed(self, *_: object) -> None:
        if not self.closed:
            self.changed.emit()

    # ------------------------------------------------------------------ state and texts

    @property
    def state(self) -> str:
        if not self.field:
            return IDLE
        if self.busy:
            return LOADING
        if self.error:
            return ERROR
        if self.loaded_field != self.field:
            return IDLE  # nothing loaded yet, or not for this one
        return CONTENT if self.strategies else EMPTY

    @property
    def count_text(self) -> str:
        """ "12 strategies in 7 features across 3 projects", and with a filter how many of all
        are shown."""
        if len(self.shown) == len(self.strategies):
            return summary(self.strategies)
        shown = len(self.shown)
        of_all = count_text(shown, len(self.strategies), "strategy", "strategies")
        return f"{of_all}, in {spread(self.shown)}" if shown else of_all

    @property
    def loading_text(self) -> str:
        return f"Looking for the strategies that use the context field “{self.field}”…"

    @property
    def error_title(self) -> str:
        return f"Could not load the strategies that use the context field “{self.field}”"

    @property
    def field_known(self) -> bool | None:
        """Whether the server lists the field asked for (None: its fields are not known)."""
        if self.fields.busy or self.fields.error or not self.session.ready:
            return None
        return any(choice.value == self.field for choice in self.fields.choices)

    @property
    def empty_title(self) -> str:
        if self.state == IDLE:
            return "Choose a context field"
        return f"No strategy uses the context field “{self.field}”"

    @property
    def empty_text(self) -> str:
        if self.state == IDLE:
            return (
                "Pick one of the server's context fields above, or type a name, to see which "
                "strategies use it, in which flags and projects."
            )
        if self.field_known is False:
            like = self.fields.find(self.field)
            hint = f" Did you mean “{like.value}”?" if like is not None else ""
            return (
                f"The server lists no context field named “{self.field}”, so no strategy can "
                f"use it.{hint}"
            )
        return "No constraint of any strategy, in any project or environment, refers to it."

    # ------------------------------------------------------------------ actions

    def start(self) -> None:
        if self.available:
            self.fields.load()
        super().start()

    def refresh(self) -> None:
        """F5, Retry: the context fields and the strategies again."""
        if self.available and not self.closed:
            self.fields.load()
        super().refresh()

    def show_field(self, field: str) -> None:
        """List the strategies that use the context field named `field`."""
        field = field.strip()
        if not field or self.closed:
            return
        if field == self.field and self.state in (LOADING, CONTENT, EMPTY):
            return  # shown already (F5 loads again); an editable combo box also says
            # "activated" when it loses the focus with the text of an item in it
        self.field = field
        if self.available:
            self.load()
        else:
            self._emit_changed()

    def load(self) -> None:
        if not self.field:
            self._emit_changed()
            return
        if self._task is not None and not self._task.done():
            self._task.cancel()  # a field asked for before this one
        self._task = self.run(self._load(self.field))
        self.set_status(self.loading_text)
        self._emit_changed()

    async def _load(self, field: str) -> None:
        client = await self.session.client()
        result = await client.context_strategies(field)
        self.strategies = list(result.strategies)
        self._haystacks = [_haystack(s) for s in self.strategies]
        self.loaded_field = field
        self._apply_filter()

    def set_filter(self, text: str) -> None:
        """Show the strategies whose project, feature, environment, name or id hold every word
        of `text` (any case)."""
        if filter_terms(text) == filter_terms(self.filter_text):
            self.filter_text = text
            return
        self.filter_text = text
        self._apply_filter()
        self._emit_changed()

    def _apply_filter(self) -> None:
        terms = filter_terms(self.filter_text)
        self.shown = [
            s
            for s, hay in zip(self.strategies, self._haystacks, strict=True)
            if all(t in hay for t in terms)
        ]
        self.groups = group_strategies(self.shown)

    async def export_csv(self, path: str | Path) -> int:
        """Write the strategies shown (one line each) as CSV to `path` on a worker thread;
        return the number written."""
        return await asyncio.to_thread(write_csv_file, path, EXPORT_COLUMNS, list(self.shown))

    def close(self) -> None:
        if not self.closed:
            self.fields.close()
        super().close()

    def reset(self) -> None:
        """A new connection: forget the strategies of the old one (the field asked for stays)."""
        self._task = None
        self.loaded_field = None
        self.strategies, self._haystacks = [], []
        self._apply_filter()
        self._emit_changed()
