"""`CleanupModel`: the clean-up report (`app.api.cleanup.cleanup_report`, issue 36) as a window's
state: the kinds of finding with their counts (`kinds`, in `KINDS` order), the parts this server
or token cannot give (`unavailable`, one line each), and the chosen kind's findings as a table
(`table`: name, id, detail, why, since), sorted, filtered, copied and exported by `TableModel`.
`days` ("not seen or not used for N days or more") is a setting: `set_days(n)` reads the report
again. The report is read by the client's async job on the event loop (network only) and its
rows are made on a worker thread (`prepare_rows`), so the GUI thread never waits on either.

Acting on findings: the selected findings of the chosen kind are removed through the action of
the tool each comes from, planned by that tool's own action module (`app.actions.api_tokens`,
`.personal_tokens`, `.groups`, `.inactive_users`, `.service_accounts`, `.roles`) and carried
out by `run_plan` (the one runner: capability check, snapshot, journal), so a deletion from here
is journaled, checked and undone like one from that tool's window or command.
`plan_act()` reads what a plan needs off the GUI thread (a role as the server has it and who
holds it now) and hands the plan over by `plan_ready`; `act(plan)` carries it out once
confirmed. Those actions whose module plans many at once (API tokens, personal access tokens,
inactive users) are one plan of one request each; the others (groups, service accounts, roles)
one plan per item, carried out one after another. Either way `progress_changed` reports each
request before it is sent and `cancel_act()` stops before the next one: what was done stays
done (and journaled), the rest is not sent, and the outcome says which. The report is read
again afterwards.

`open_requested`: "Open" shows the tool a finding belongs to (`Kind.tool`) with the item, where
that tool has a window (`open_reason` says why not).

QtCore only: no QtWidgets below `app/`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from PySide6.QtCore import QObject, Signal

from app.actions.roles import RoleInUse
from app.actions.runner import Plan, Step, count_to_type, journal_of, typed_confirms
from app.api.cleanup import DEFAULT_DAYS, KINDS_BY_KEY, Finding, Kind, Report, Unavailable
from app.api.errors import ClientError
from app.changes import Resource
from app.registry import ACTIONS_BY_KEY, TOOLS_BY_KEY, Action
from app.startup import paused_gc
from app.text import count_text, plural
from app.viewmodels.session import Session
from app.viewmodels.table import Column, TableModel, prepare_rows
from app.viewmodels.tools import ActionViewModel

if TYPE_CHECKING:
    from app.actions.journal import Journal
    from app.api.client import AdminClient

#: the most days the setting takes (about 27 years: more means "ever")
MAX_DAYS = 10_000
#: how many findings a confirmation names before "and N more"
NAMED = 8
#: what each action does to a finding, in the window's words: (verb, noun, nouns)
WORDS: dict[str, tuple[str, str, str]] = {
    "api_tokens.delete": ("Revoke", "API token", "API tokens"),
    "personal_tokens.delete": ("Delete", "personal access token", "personal access tokens"),
    "groups.delete": ("Delete", "group", "groups"),
    "inactive_users.delete": ("Delete", "user", "users"),
    "service_accounts.delete": ("Delete", "service account", "service accounts"),
    "roles.delete": ("Delete", "role", "roles"),
}


@dataclass(slots=True)
class FindingRow:
    """One finding as the table shows it; built off the GUI thread, never changed."""

    finding: Finding = field(repr=False)
    name: str
    id: str
    detail: str
    why: str
    since: datetime | None


def finding_rows(findings: Sequence[Finding]) -> list[FindingRow]:
    return [FindingRow(f, f.name, f.id, f.detail, f.why, f.since) for f in findings]


FINDING_COLUMNS: list[Column[FindingRow]] = [
    Column("Name", attrgetter("name"), width=26,
           tooltip=lambda r: r.name if len(r.name) > 26 else None),
    Column("ID", attrgetter("id"),
           tooltip=lambda r: "The secret's last four characters: never more"
           if r.id.startswith("…") else None),
    Column("Detail", attrgetter("detail"), width=18,
           tooltip=lambda r: r.detail if len(r.detail) > 18 else None),
    Column("Why", attrgetter("why"), tooltip=lambda r: r.why),
    # the time "Why" names: hidden at first (the header's menu shows it), sorted by when shown
    Column("Since", attrgetter("since"), shown=False,
           tooltip=lambda r: "When what “Why” says began (last seen, expired, created)"),
]  # fmt: skip
#: the column that takes the width left: why each was found
WHY_COLUMN = 3


@dataclass(frozen=True, slots=True)
class KindRow:
    """A kind of finding the report looked for here, with how many it found."""

    kind: Kind
    count: int

    @property
    def key(self) -> str:
        return self.kind.key

    @property
    def text(self) -> str:
        return f"{self.kind.title} ({self.count:,})"


def findings_count_text(shown: int, total: int) -> str:
    return count_text(shown, total, "finding")


class ActProgress:
    """How far an action on several findings is, and whether the person asked to stop: read
    before each request (on the GUI thread, between two requests)."""

    def __init__(self, total: int, report: Any) -> None:
        self.total = total
        self.sent = 0
        self.cancelled = False
        self._report = report

    def before(self) -> bool:
        """The next request is about to be sent: False when it must not be."""
        if self.cancelled:
            return False
        if self._report is not None:
            self._report(self.sent, self.total)
        self.sent += 1
        return True


class _StoppingSteps(Sequence[Step]):
    """A plan's steps that stop where `progress` says as the runner goes through them (one
    after another: a step not given is a request not sent)."""

    def __init__(self, steps: Sequence[Step], progress: ActProgress) -> None:
        self._steps = steps
        self._progress = progress

    def __len__(self) -> int:
        return len(self._steps)

    @overload
    def __getitem__(self, index: int) -> Step: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Step]: ...
    def __getitem__(self, index: int | slice) -> Step | Sequence[Step]:
        return self._steps[index]

    def __iter__(self) -> Iterator[Step]:
        for step in self._steps:
            if not self._progress.before():
                return
            yield step


class _Stopping:
    """A tool's own plan, unchanged but for its steps, which stop where `progress` says (a
    `runner.Plan` by delegation: the journal, snapshot and confirmation are the plan's)."""

    def __init__(self, plan: Plan, progress: ActProgress) -> None:
        self._plan = plan
        self._progress = progress

    def __getattr__(self, name: str) -> Any:
        return getattr(self._plan, name)

    def steps(self) -> _StoppingSteps:
        return _StoppingSteps(self._plan.steps(), self._progress)


@dataclass(frozen=True)
class CleanupPlan:
    """Acting on findings of one kind: the plans of the tool they come from (one for all, or
    one each), fixed before it is confirmed. For a `TypedConfirmation`: `question`, `lines()`,
    `confirm_text` (their number, for several), `confirmed_by`."""

    kind: Kind
    action: Action
    findings: tuple[Finding, ...]
    plans: tuple[Plan, ...]
    server: str

    @property
    def verb(self) -> str:
        return WORDS[self.action.key][0]

    @property
    def noun(self) -> str:
        words = WORDS[self.action.key]
        return words[1] if len(self.findings) == 1 else words[2]

    @property
    def requests(self) -> int:
        return sum(len(p.steps()) for p in self.plans)

    @property
    def question(self) -> str:
        if len(self.plans) == 1:
            return self.plans[0].question
        return f"{self.verb} {plural(len(self.findings), WORDS[self.action.key][1])}?"

    @property
    def confirm_text(self) -> str | None:
        return count_to_type(len(self.findings))

    def confirmed_by(self, typed: str) -> bool:
        return typed_confirms(self.confirm_text, typed)

    def lines(self) -> list[str]:
        if len(self.plans) == 1:
            lines = self.plans[0].lines()
        else:
            named = [f"“{f.name}” ({f.why})" for f in self.findings[:NAMED]]
            more = len(self.findings) - len(named)
            lines = [
                f"The clean-up report found these {self.noun} on {self.server}: "
                + "; ".join(named) + (f"; and {more:,} more." if more else "."),
                f"Each goes as its own tool deletes it ({self.action.title}): one after another, "
                "each with a snapshot and a journal entry first (the History can undo it).",
                f"Stop ends it before the next {WORDS[self.action.key][1]}.",
            ]  # fmt: skip
        typed = self.confirm_text
        if typed is not None and not any("type" in t.lower() and typed in t for t in lines):
            lines.append(f"To confirm, type their number: {typed}")
        return lines


class CleanupModel(ActionViewModel):
    #: a report was read (or dropped): `kinds`, `unavailable` and the table changed
    report_loaded = Signal()
    #: whether Delete… or Open can be used changed
    actions_changed = Signal()
    #: `plan_act()` made its plan: the `CleanupPlan` to confirm
    plan_ready = Signal(object)
    #: an action moved on: (requests sent so far, all of them)
    progress_changed = Signal(int, int)
    #: an action ended: `outcome` or `outcome_error` says how
    action_finished = Signal()
    #: "Open": (tool key, item) to show in that tool's window
    open_requested = Signal(str, object)

    shows = frozenset({Resource.API_TOKENS, Resource.PERSONAL_TOKENS, Resource.GROUPS,
                       Resource.USERS, Resource.SERVICE_ACCOUNTS, Resource.ROLES})  # fmt: skip

    def __init__(self, session: Session, parent: QObject | None = None) -> None:
        super().__init__("cleanup", session, parent)
        self.table: TableModel[FindingRow] = TableModel(FINDING_COLUMNS, self)
        self.days = DEFAULT_DAYS
        self.report: Report | None = None
        self.kinds: list[KindRow] = []
        self.unavailable: list[Unavailable] = []
        #: the kind whose findings the table shows ("" before a report)
        self.kind = ""
        self.selected: list[FindingRow] = []
        self._load_task: asyncio.Task[None] | None = None
        self._action_task: asyncio.Task[None] | None = None
        self._progress: ActProgress | None = None
        self._planning = False
        self._verb, self._act_noun = "Delete", "finding"
        session.state_changed.connect(self.actions_changed)

    def is_empty(self) -> bool:
        return self.report is not None and not self.report.findings

    @property
    def empty_title(self) -> str:
        return "Nothing to clean up"

    @property
    def empty_text(self) -> str:
        looked = "; ".join(_lower(row.kind.title) for row in self.kinds) or "nothing"
        text = (f"Nothing on this server can probably go. The report looked for {looked} (“not "
                f"seen lately”: {plural(self.days, 'day')} or more) and found none.")  # fmt: skip
        if self.unavailable:
            parts = "; ".join(f"{u.what}: {u.reason}" for u in self.unavailable)
            text += f" Not available here: {parts}."
        return text

    @property
    def loading_text(self) -> str:
        return "Reading the clean-up report…"

    @property
    def failed_title(self) -> str:
        return "Could not read the clean-up report"

    # ------------------------------------------------------------------ the report

    def set_days(self, days: int) -> None:
        """ "Not seen or not used for `days` days or more": read the report again with it.
        `ValueError` outside 0 to `MAX_DAYS`."""
        if not 0 <= days <= MAX_DAYS:
            raise ValueError(f"days: {days} is not between 0 and {MAX_DAYS:,}")
        if days == self.days:
            return
        self.days = days
        if self.session.ready:
            self.refresh()

    def load(self) -> None:
        if self._load_task is not None and not self._load_task.done():
            return
        self.set_status("Reading the clean-up report…")
        self._load_task = self.run(self._load())

    async def _load(self) -> None:
        from app.api.cleanup import cleanup_report

        client = await self.session.client()
        days = self.days
        report = await cleanup_report(client, days=days)
        if self.days != days:  # changed while this was read: read it again with the new days
            self._load_task = None
            self.load()
            return
        self.report = report
        self.unavailable = list(report.unavailable)
        counts = report.counts()
        self.kinds = [KindRow(KINDS_BY_KEY[key], n) for key, n in counts.items()]
        keys = [row.key for row in self.kinds]
        if self.kind not in keys:
            # the first kind with findings, else the first
            self.kind = next((r.key for r in self.kinds if r.count), keys[0] if keys else "")
        await self._show_kind()
        self.loaded = True
        self.set_status("")
        self.report_loaded.emit()
        self.phase_changed.emit()
        self.actions_changed.emit()

    async def _show_kind(self) -> None:
        found = self.report.of_kind(self.kind) if self.report is not None else []
        sort = self.table.sort_state
        with paused_gc():
            prepared = await asyncio.to_thread(
                prepare_rows, FINDING_COLUMNS, finding_rows(found), [sort[0]] if sort else []
            )
        self.table.set_prepared(prepared)
        self.selected = []

    def choose_kind(self, key: str) -> asyncio.Task[None] | None:
        """Show the findings of the kind `key` (a key of `kinds`)."""
        if key == self.kind or key not in {row.key for row in self.kinds}:
            return None
        self.kind = key
        self.actions_changed.emit()

        async def show() -> None:
            await self._show_kind()
            self.actions_changed.emit()

        return self.run(show(), busy=False)

    @property
    def current_kind(self) -> Kind | None:
        return KINDS_BY_KEY.get(self.kind)

    def select(self, rows: list[FindingRow]) -> None:
        """The rows selected in the window (what the action and Open act on)."""
        self.selected = rows
        self.actions_changed.emit()

    @property
    def acting(self) -> bool:
        busy = self._action_task is not None and not self._action_task.done()
        return busy or self._planning

    @property
    def act_in_progress(self) -> bool:
        """An action is sending its requests (Stop can end it)."""
        return self._progress is not None

    @property
    def act_title(self) -> str:
        """The action button's words for the chosen kind: "Revoke…", "Delete…"."""
        kind = self.current_kind
        if kind is None or kind.action not in WORDS:
            return "Delete…"
        return f"{WORDS[kind.action][0]}…"

    # ------------------------------------------------------------------ acting

    @property
    def act_reason(self) -> str:
        """Why the chosen kind's action cannot be used now ("" when it can)."""
        kind = self.current_kind
        if kind is None or kind.action is None:
            return "These findings have no action: open their tool and look."
        reason = self.action_reason(ACTIONS_BY_KEY[kind.action])
        if reason:
            return reason
        if self.acting:
            return "Another change is under way."
        if not self.selected:
            return "Select the findings to act on (Ctrl+A selects all those shown)."
        return ""

    def plan_act(self) -> asyncio.Task[None] | None:
        """Make the plan for the selected findings, reading what it needs (a role and who
        holds it) off the GUI thread; `plan_ready` hands it over, or `outcome_error` says why
        there is none. None when the action cannot be used now."""
        caps = self.session.capabilities
        kind = self.current_kind
        if self.act_reason or caps is None or kind is None or kind.action is None:
            return None
        findings = tuple(row.finding for row in self.selected)
        action = ACTIONS_BY_KEY[kind.action]
        journal = journal_of(self.session.name, caps)
        self._planning = True
        self.clear_outcome()
        self.actions_changed.emit()

        async def make() -> None:
            try:
                client = await self.session.client()
                plans = await _plans_for(client, kind, findings, journal)
            except (ClientError, OSError, ValueError, RoleInUse) as exc:
                self._set_outcome_error(f"Nothing was changed: {_said(exc)}")
                self.report_error(self.outcome_error)
                return
            finally:
                self._planning = False
                self.actions_changed.emit()
            if not self.closed:
                self.plan_ready.emit(CleanupPlan(kind, action, findings, plans, caps.base_url))

        return self.run(make(), busy=False)

    def act(self, plan: CleanupPlan) -> asyncio.Task[None] | None:
        """Carry out a confirmed plan, reporting each request (`progress_changed`) before it is
        sent; `cancel_act()` stops it between two requests. None when another action is under
        way or the connection changed since the plan was made (`outcome_error` says so)."""
        caps = self.session.capabilities
        if self.acting or self.closed:
            return None
        if caps is None or plan.server != caps.base_url:
            self._set_outcome_error(
                "Nothing was changed: the connection changed after the confirmation (it named "
                f"{plan.server})."
            )
            self.action_finished.emit()
            return None
        self.clear_outcome()
        progress = ActProgress(plan.requests, self._report_progress)
        self._progress = progress
        self._verb, self._act_noun = plan.verb, WORDS[plan.action.key][1]
        self._action_task = self.run(self._act(plan, progress), busy=False)
        self.set_status(f"{_ing(plan.verb)} {plural(len(plan.findings), plan.noun)}…")
        self.actions_changed.emit()
        return self._action_task

    def _report_progress(self, number: int, total: int) -> None:
        if not self.closed and self._progress is not None:
            self.set_status(f"{_ing(self._verb)} {self._act_noun} {number + 1:,} of {total:,}…")
            self.progress_changed.emit(number, total)

    def cancel_act(self) -> None:
        """Stop before the next request (the one under way is let finish)."""
        if self._progress is not None:
            self._progress.cancelled = True

    async def _act(self, plan: CleanupPlan, progress: ActProgress) -> None:
        from app.actions.runner import PartlyDone

        done = 0
        snapshots: list[str] = []
        try:
            for sub in plan.plans:
                if progress.cancelled:
                    break
                result = await self.run_plan(_Stopping(sub, progress))
                done += len(result.answers)
                if sub.snapshot is not None and result.answers:
                    snapshots.append(str(sub.snapshot))
        except (PartlyDone, ClientError) as exc:
            did = f" ({done:,} of {plural(plan.requests, 'request')} went through before)"
            self._set_outcome_error(f"{exc}{did if done else ''}")
            self.report_error(self.outcome_error)
        else:
            total = plan.requests
            where = ""
            if len(snapshots) == 1:
                where = f" Snapshot: {snapshots[0]}"
            elif snapshots:  # one a plan, side by side in the journal's folder
                folder = Path(snapshots[0]).parent
                where = f" Snapshots: {len(snapshots):,} files in {folder}"
            past = {"Revoke": "Revoked", "Delete": "Deleted"}[plan.verb]
            if done < total:
                self._set_outcome(f"Stopped: {done:,} of {total:,} {plan.noun} "
                                  f"{past.lower()}, the other {total - done:,} not sent."
                                  f"{where}")  # fmt: skip
            else:
                named = "; ".join(f"“{f.name}”" for f in plan.findings[:3])
                more = f" and {len(plan.findings) - 3:,} more" if len(plan.findings) > 3 else ""
                self._set_outcome(f"{past} {plural(len(plan.findings), WORDS[plan.action.key][1])}"
                                  f": {named}{more}.{where}")  # fmt: skip
            self.selected = []
        finally:
            self._progress = None
            self._action_task = None
            self.set_status("")
            if not self.closed:
                self.action_finished.emit()
                self.actions_changed.emit()
                self.refresh()  # the report again: what went is no longer a finding

    # ------------------------------------------------------------------ open

    @property
    def open_reason(self) -> str:
        """Why Open cannot be used now ("" when it can)."""
        kind = self.current_kind
        if kind is None:
            return "Nothing to open."
        tool = TOOLS_BY_KEY.get(kind.tool)
        if tool is None:
            return (f"{kind.title} belong to a tool with no window yet: use its command "
                    f"(flagdesk {kind.tool.replace('_', '-')}).")  # fmt: skip
        if len(self.selected) != 1:
            return f"Select one finding to open it in {tool.title}."
        return ""

    def open_selected(self) -> None:
        """Show the selected finding in the tool it belongs to (by its id, or an API token by
        its name: its id here is its secret's last four characters)."""
        kind = self.current_kind
        if self.open_reason or kind is None:
            return
        finding = self.selected[0].finding
        item = int(finding.id) if finding.id.isdigit() else finding.name
        self.open_requested.emit(kind.tool, item)

    # ------------------------------------------------------------------ common

    def reset(self) -> None:
        """A new connection: the old one's report, selection and kinds go (an outcome stays
        with its own connection: `ActionViewModel`)."""
        self._load_task = None
        self.loaded = False
        self.report = None
        self.kinds = []
        self.unavailable = []
        self.kind = ""
        self.selected = []
        self.table.clear()
        self.report_loaded.emit()
        self.actions_changed.emit()

    def close(self) -> None:
        if not self.closed:
            self.session.state_changed.disconnect(self.actions_changed)
        super().close()


def _lower(title: str) -> str:
    """ "Groups with no members" -> "groups with no members"; "API tokens …" stays."""
    first = title.split(" ", 1)[0]
    return title if first.isupper() else title[:1].lower() + title[1:]


def _ing(verb: str) -> str:
    return {"Revoke": "Revoking", "Delete": "Deleting"}.get(verb, verb)


def _said(exc: BaseException) -> str:
    text = str(exc)
    return text[:1].upper() + text[1:] if text else type(exc).__name__


async def _plans_for(client: AdminClient, kind: Kind, findings: Sequence[Finding],
                     journal: Journal) -> tuple[Plan, ...]:  # fmt: skip
    """The plans of the tool `kind` belongs to that remove `findings`: its own action module's,
    as its window and command make them."""
    from app.actions import api_tokens, groups, inactive_users, personal_tokens, roles
    from app.actions import service_accounts as accounts

    subjects = [f.subject for f in findings]
    action = kind.action
    if action == "api_tokens.delete":
        return (api_tokens.plan_delete(subjects, journal),)  # type: ignore[arg-type]
    if action == "personal_tokens.delete":
        return (personal_tokens.plan_delete(subjects, journal),)  # type: ignore[arg-type]
    if action == "inactive_users.delete":
        return (inactive_users.plan_deletion(subjects, journal),)  # type: ignore[arg-type]
    if action == "groups.delete":
        return tuple(groups.plan_delete(g, journal) for g in subjects)  # type: ignore[arg-type]
    if action == "service_accounts.delete":
        names = {r.id: r.name for r in (await client.service_accounts()).rootRoles}
        return tuple(accounts.plan_delete(a, journal, names)  # type: ignore[arg-type]
                     for a in subjects)  # fmt: skip
    if action == "roles.delete":
        plans = []
        for finding in findings:
            role = await client.get_role(int(finding.id))
            # who holds it now: a role taken since the report is refused here, naming them
            plans.append(roles.plan_delete(role, await roles.read_holders(client, role), journal))
        return tuple(plans)
    raise ValueError(f"the clean-up report has no plan for {action!r}")
