"""`ContextUsageModel`: the context usage viewer's view-model. It asks the server which strategies
use a context field (`AdminClient.context_strategies`) and groups them project > feature >
strategy for the tree, with counts, a filter, the text Ctrl+C copies and a CSV export.

An unknown field is no error: the server answers it with an empty list (the spec says so), so the
empty state names the field and says whether the server knows it.

Changing fields (the actions `context_fields.create`, `.edit`, `.delete`, through
`app.actions.context_fields`): `new_field()` and `edit_field()` (which reads the field first)
open a `FieldForm`; `plan_form(draft)` checks what was typed and fixes the plan the confirmation
shows (or puts the problem in `form.error`, the draft untouched); `delete_field()` reads the
field and its usage, shows the usage, and either says why it cannot be deleted (`outcome_error`:
strategies use it, so nothing is sent) or offers its plan (`plan_ready`); `undo()` plans putting
back the last edited or deleted field from its snapshot. `carry_out(plan)`, once confirmed, does
it (snapshot, journal, request), says how it went in `outcome` / `outcome_error` (shown on this
connection only, `ActionViewModel`; a refused form keeps its draft and shows the server's words
in `form.error`), offers Undo (`last_change`), tells
the other windows (`Changes` of the field) and loads the fields and the usage again.
`action_reason(action)` says why an action's button is disabled ("" when it can be used).
QtCore only.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from PySide6.QtCore import QObject, Signal

# FieldPlan is re-exported: the window shows a plan, and reaches the actions only through here
from app.actions.context_fields import (
    FieldChanged,
    FieldInUse,
    plan_create,
    plan_delete,
    plan_edit,
    plan_undo,
    read_snapshot,
    spread,
    usage_summary,
)
from app.actions.context_fields import FieldPlan as FieldPlan
from app.actions.journal import Journal
from app.actions.runner import journal_of
from app.api.errors import ClientError, Conflict, NotFound
from app.api.models import (
    ContextField,
    ContextFieldStrategy,
    CreateContextField,
    LegalValueBody,
    UpdateContextField,
)
from app.changes import Resource
from app.registry import CREATE_CONTEXT_FIELD, DELETE_CONTEXT_FIELD, EDIT_CONTEXT_FIELD, Action
from app.text import count_text, plural
from app.viewmodels.choices import ChoicesModel, context_field_choices
from app.viewmodels.session import Session
from app.viewmodels.table import MISSING, Column, filter_terms, write_csv_file
from app.viewmodels.tools import ActionViewModel

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


@dataclass
class FieldForm:
    """The create or edit form's draft: what was typed stays here whatever the server says."""

    #: the field as read before editing (None: a new field)
    before: ContextField | None = None
    name: str = ""
    description: str = ""
    stickiness: bool = False
    #: (value, description) rows
    legal_values: list[tuple[str, str]] = field(default_factory=list)
    #: why the last Save was refused ("" when it was not)
    error: str = ""

    @property
    def creating(self) -> bool:
        return self.before is None

    @classmethod
    def of(cls, before: ContextField) -> FieldForm:
        return cls(before, before.name, before.description or "", bool(before.stickiness),
                   [(v.value, v.description or "") for v in before.legalValues])  # fmt: skip


_FORM_WORDS = {"name": "Name", "description": "Description", "legalValues": "Legal value",
               "value": "value", "stickiness": "Stickiness"}  # fmt: skip


def form_problem(exc: ValidationError) -> str:
    """A refused draft in the form's words: "Name: must be URL friendly…"."""
    out = []
    for err in exc.errors():
        where = []
        for part in err.get("loc", ()):
            where.append(f"{part + 1}" if isinstance(part, int) else _FORM_WORDS.get(part, part))
        said = str(err.get("msg", "")).removeprefix("Value error, ")
        out.append(f"{' '.join(where) or 'The form'}: {said}")
    return "; ".join(out)


class ContextUsageModel(ActionViewModel):
    """The strategies that use one context field. `show_field(name)` loads them; `state` says
    what the window shows and `changed` says when it may have changed (rows, filter, state)."""

    changed = Signal()
    #: which actions can be used changed (the field, the connection, a change under way)
    actions_changed = Signal()
    #: `form` was opened (new or edit)
    form_opened = Signal()
    #: `form.error` changed (a refused Save), or the form was closed (`form` is None)
    form_changed = Signal()
    #: `plan` is ready for its confirmation (a deletion or an undo)
    plan_ready = Signal(object)
    #: a change ended, or was refused before anything was sent: `outcome`/`outcome_error`
    change_finished = Signal()

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
        #: the create or edit form open (None: none)
        self.form: FieldForm | None = None
        self._change_task: asyncio.Task[None] | None = None
        #: the last change, while it can be undone
        self.last_change: FieldChanged | None = None
        self.busy_changed.connect(self._emit_changed)
        session.state_changed.connect(self.actions_changed)
        self.fields.changed.connect(self.actions_changed)
        self.error_changed.connect(self._emit_changed)
        self.fields.changed.connect(self._emit_changed)
        self.fields.busy_changed.connect(self._emit_changed)

    def _emit_changed(self, *_: object) -> None:
        if not self.closed:
            self.changed.emit()
            self.actions_changed.emit()  # they follow the field shown

    # ------------------------------------------------------------------ state and texts

    @property
    def state(self) -> str:
        """What the strategies part shows once the connection serves the tool (the shared
        `phase` says what comes first: waiting for the connection, or why it cannot be used)."""
        if not self.field:
            return IDLE
        if self.busy:
            return LOADING
        if self.error:
            return ERROR
        if self.loaded_field != self.field:
            return IDLE  # nothing loaded yet, or not for this one
        return CONTENT if self.strategies else EMPTY

    def is_loaded(self) -> bool:
        return self.state != LOADING

    def is_empty(self) -> bool:
        """Nothing asked for yet (`IDLE`: "Choose a context field"), or no strategy uses it."""
        return self.state in (IDLE, EMPTY)

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
    def failed_title(self) -> str:
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

    # ------------------------------------------------------------------ changing fields

    @property
    def changing(self) -> bool:
        return self._change_task is not None and not self._change_task.done()

    def action_reason(self, action: Action) -> str:
        """Why `action` cannot be used now, and what would help ("" when it can)."""
        blocked = super().action_reason(action)
        if blocked:
            return blocked
        if self.changing:
            return "A change is under way."
        if action is not CREATE_CONTEXT_FIELD and self.field_known is not True:
            return "Pick one of the server's context fields first."
        return ""

    def _start(self, job: Coroutine[Any, Any, None], status: str) -> asyncio.Task[None] | None:
        if self.changing or self.closed:
            job.close()
            return None
        self.clear_outcome()
        self.set_status(status)
        self._change_task = self.run(job, busy=False)
        self.actions_changed.emit()
        return self._change_task

    def _journal(self) -> Journal:
        caps = self.session.capabilities
        assert caps is not None
        return journal_of(self.session.name, caps)

    def new_field(self) -> None:
        """Open an empty form for a new field."""
        if self.action_reason(CREATE_CONTEXT_FIELD) or self.form is not None:
            return
        self.form = FieldForm()
        self.form_opened.emit()

    def edit_field(self) -> asyncio.Task[None] | None:
        """Read the chosen field, then open the form on it."""
        if self.action_reason(EDIT_CONTEXT_FIELD) or self.form is not None:
            return None
        return self._start(self._edit(self.field), f"Reading the context field “{self.field}”…")

    async def _edit(self, name: str) -> None:
        try:
            client = await self.session.client()
            self.form = FieldForm.of(await client.get_context_field(name))
        except ClientError as exc:
            self._refused(str(exc))
        else:
            self.form_opened.emit()
        finally:
            self._ended()

    def close_form(self) -> None:
        """The form was cancelled: nothing was sent."""
        self.form = None
        self.form_changed.emit()

    def plan_form(self, draft: FieldForm) -> FieldPlan | None:
        """Take what the form holds (`draft`) and make its plan; None, with the problem in
        `form.error` (what was typed is kept), when the draft is refused."""
        if self.form is None or self.session.capabilities is None:
            return None
        draft.before, draft.error = self.form.before, ""
        self.form = draft
        values = [(v.strip(), d.strip()) for v, d in draft.legal_values if v.strip() or d.strip()]
        try:
            legal = [LegalValueBody(value=v, description=d or None) for v, d in values]
            body = {"description": draft.description.strip() or None,
                    "stickiness": draft.stickiness, "legalValues": legal}  # fmt: skip
            if draft.before is None:
                plan = plan_create(CreateContextField(name=draft.name.strip(), **body),
                                   self._journal())  # fmt: skip
            else:
                after = UpdateContextField(sortOrder=draft.before.sortOrder or 0, **body)
                plan = plan_edit(draft.before, after, self._journal())
        except ValidationError as exc:
            draft.error = form_problem(exc)
        except ValueError as exc:
            draft.error = str(exc)[:1].upper() + str(exc)[1:] + "."
        else:
            return plan
        self.form_changed.emit()
        return None

    def delete_field(self) -> asyncio.Task[None] | None:
        """Read the chosen field and its usage (shown in the tree); then offer its plan, or say
        why it cannot be deleted (strategies use it: nothing is sent)."""
        if self.action_reason(DELETE_CONTEXT_FIELD):
            return None
        name = self.field
        return self._start(self._delete(name), f"Reading the context field “{name}” and its usage…")

    async def _delete(self, name: str) -> None:
        try:
            client = await self.session.client()
            field_now = await client.get_context_field(name)
            usage = (await client.context_strategies(name)).strategies
            self._show(name, list(usage))
            plan = plan_delete(field_now, usage, self._journal())
        except (ClientError, FieldInUse) as exc:
            self._refused(str(exc))
        else:
            self.plan_ready.emit(plan)
        finally:
            self._ended()

    def _show(self, name: str, usage: list[ContextFieldStrategy]) -> None:
        """Show `usage` as the field's strategies (just read)."""
        self.field = self.loaded_field = name
        self.strategies = usage
        self._haystacks = [_haystack(s) for s in usage]
        self._apply_filter()
        self._emit_changed()

    def undo(self) -> asyncio.Task[None] | None:
        """Plan the undo of `last_change` (the snapshot read back, the field as it is now)."""
        done = self.last_change
        if done is None or done.plan.snapshot is None or self.session.capabilities is None:
            return None
        return self._start(self._undo(done, done.plan.snapshot), "Preparing the undo…")

    async def _undo(self, done: FieldChanged, snapshot: Path) -> None:
        try:
            previous = await read_snapshot(snapshot)
            client = await self.session.client()
            try:
                current: ContextField | None = await client.get_context_field(done.plan.name)
            except NotFound:
                current = None
            plan = plan_undo(done, previous, current, self._journal())
        except (ClientError, OSError, ValueError) as exc:
            self._refused(f"Cannot undo: {exc}")
        else:
            self.plan_ready.emit(plan)
        finally:
            self._ended()

    def carry_out(self, plan: FieldPlan) -> asyncio.Task[None] | None:
        """Carry out a confirmed `plan`; None when a change is under way, or when the
        connection has changed since the plan was made (`outcome_error` says so)."""
        caps = self.session.capabilities
        if self.changing or self.closed:
            return None
        if caps is None or plan.server != caps.base_url or plan.connection != self.session.name:
            self._refused(f"Not changed: the connection changed after the confirmation (it "
                          f"named {plan.server}).")  # fmt: skip
            return None
        return self._start(self._carry_out(plan), f"{plan.question.removesuffix('?')}…")

    async def _carry_out(self, plan: FieldPlan) -> None:
        def read_again() -> None:
            self.fields.load()
            if self.field:
                self.load()

        try:
            done = FieldChanged.of(await self.run_plan(plan, after_sent=read_again))
        except ClientError as exc:
            said = str(exc)
            if isinstance(exc, Conflict) and plan.action is CREATE_CONTEXT_FIELD:
                said = f"A context field named “{plan.name}” already exists ({exc.message})."
            if self.form is not None and not plan.undoes:
                self.form.error = said  # the form stays open with what was typed
                self.form_changed.emit()
            self._set_outcome_error(said)
            self.report_error(said)
        else:
            self.last_change = done if done.undoable else None
            what = {"create": "Created", "change": "Saved", "delete": "Deleted"}[plan.verb]
            did = f"{what} the context field “{plan.name}”."
            if plan.undoes:
                did = f"Undone: the context field “{plan.name}” is back."
            if plan.snapshot is not None:
                did += f" Snapshot: {plan.snapshot}"
            self._set_outcome(did)
            if self.form is not None and not plan.undoes:
                self.form = None
                self.form_changed.emit()
        finally:
            self._ended()

    def _refused(self, message: str) -> None:
        self._set_outcome_error(message)
        if not self.closed:
            self.change_finished.emit()

    def _ended(self) -> None:
        self._change_task = None
        self.set_status("")
        if not self.closed:
            self.change_finished.emit()
            self.actions_changed.emit()

    def close(self) -> None:
        if not self.closed:
            self.fields.close()
            self.session.state_changed.disconnect(self.actions_changed)
        super().close()

    def reset(self) -> None:
        """A new connection: forget the strategies of the old one (the field asked for stays),
        the form and what could be undone (the last change's outcome stays with its own
        connection)."""
        self.form, self.last_change = None, None
        self._change_task = None
        self._task = None
        self.loaded_field = None
        self.strategies, self._haystacks = [], []
        self._apply_filter()
        self._emit_changed()
