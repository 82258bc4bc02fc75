"""`ApiTokensModel`: the server's API tokens (`GET /api/admin/api-tokens`) as a table sorted,
filtered, copied and exported by `TableModel`, creating one and deleting (revoking) some
(`app.actions.api_tokens`, through the runner: journal, snapshot, capability check).

The rows are `TokenRow`s built, with the filter's texts and the sorted column's keys, on a worker
thread (`prepare_rows`), so 10,000 tokens reach the GUI thread as one swap. A row never holds a
secret that works: only its last four characters (`secret`), and the list item the server gave
(`token`), whose `secret` names the token in the DELETE (Unleash lists secrets in clear; the
sandbox a masked handle): it is never shown.

Creating (`api_tokens.create`): `type_choices` are what this server takes (`backend` from
Unleash 7.0: `app.actions.api_tokens.type_refusal`); `plan_create(...)` checks the form
(`ValueError` saying what is wrong) and gives the confirmation's plan; `create(plan)` carries it
out and emits `secret_created` with a `NewSecret`, the one holder of the secret, kept by no one
here; `use_secret(new)` puts it into the profile as the client token the metrics uploads use.

Deleting (`api_tokens.delete`): `plan_delete()` of the selected rows, `delete(plan)` once
confirmed. The runner sends one DELETE a token; `DeletionProgress` reports each before it is
sent (`progress_changed`) and `cancel_delete()` stops before the next one: what was deleted
stays deleted (and journaled), the rest is not sent, and the outcome says which.

QtCore only: no QtWidgets below `app/`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from operator import attrgetter
from typing import overload

from PySide6.QtCore import QObject, Signal

# ApiTokenCreation and ApiTokenDeletion are re-exported: the window shows plans, and reaches the
# actions only through here
from app.actions.api_tokens import ApiTokenCreation as ApiTokenCreation
from app.actions.api_tokens import ApiTokenDeletion as ApiTokenDeletion
from app.actions.api_tokens import last_seen, plan_create, plan_delete, scope_text, type_refusal
from app.actions.runner import Step, journal_of, typed_confirms
from app.api.client import secret_tail
from app.api.errors import ClientError
from app.api.models import ApiToken
from app.changes import Resource
from app.registry import CREATE_API_TOKEN, DELETE_API_TOKEN
from app.startup import paused_gc
from app.text import count_text, plural
from app.viewmodels.session import Session
from app.viewmodels.table import Column, TableModel, prepare_rows
from app.viewmodels.token_secrets import NewSecret, ProfileSecrets
from app.viewmodels.tools import ActionViewModel

#: the types a token can be created as, in the order offered (`backend` only from Unleash 7.0)
TYPES = ("client", "frontend", "backend")
#: what a token's environment is unless chosen (as `flagdesk tokens create`)
DEFAULT_ENVIRONMENT = "development"
USE_FOR_METRICS = "Use for this connection's metrics uploads"


@dataclass(slots=True)
class TokenRow:
    """One API token as the table shows it; built off the GUI thread, never changed."""

    token: ApiToken = field(repr=False)
    name: str
    type: str
    projects: str
    environment: str
    #: the secret's last four characters, `…3f9a`
    secret: str
    createdAt: datetime | None
    expiresAt: datetime | None
    seenAt: datetime | None


def token_row(token: ApiToken) -> TokenRow:
    projects = token.scope
    where = "all projects" if projects in ([], ["*"]) else ", ".join(projects)
    return TokenRow(token, token.name, token.type, where, token.environment or "*",
                    secret_tail(token.secret or ""), token.createdAt, token.expiresAt,
                    token.seenAt)  # fmt: skip


def token_rows(tokens: list[ApiToken]) -> list[TokenRow]:
    return [token_row(t) for t in tokens]


TOKEN_COLUMNS: list[Column[TokenRow]] = [
    Column("Name", attrgetter("name")),
    Column("Type", attrgetter("type")),
    Column("Projects", attrgetter("projects"), width=18,
           tooltip=lambda r: r.projects if "," in r.projects else None),
    Column("Environment", attrgetter("environment")),
    Column("Secret", attrgetter("secret"),
           tooltip=lambda r: "The secret's last four characters: the whole secret was shown "
           "once, when the token was created"),
    Column("Created", attrgetter("createdAt"), shown=False),
    Column("Expires", attrgetter("expiresAt"),
           tooltip=lambda r: "Never expires" if r.expiresAt is None else None),
    Column("Last seen", attrgetter("seenAt"),
           tooltip=lambda r: "The server has not said it saw this token (Unleash writes it "
           "about once a minute)" if r.seenAt is None else None),
]  # fmt: skip
#: the column that takes the width left. The creation time starts hidden (the header's menu
#: shows it), so the names keep room at the default window size
NAME_COLUMN = 0


def tokens_count_text(shown: int, total: int) -> str:
    return count_text(shown, total, "API token")


class DeletionProgress:
    """How far a deletion is, and whether the person asked to stop: read by the plan's steps
    before each request (on the GUI thread, between two requests)."""

    def __init__(self, total: int, report: object) -> None:
        self.total = total
        self.sent = 0
        self.cancelled = False
        self._report = report

    def before(self, number: int) -> bool:
        """Step `number` (0-based) is about to be sent: False when it must not be."""
        if self.cancelled:
            return False
        self.sent = number
        if callable(self._report):
            self._report(number, self.total)
        return True


class StoppingSteps(Sequence[Step]):
    """A plan's steps that stop where `progress` says when the runner goes through them: it
    sends them one after another, so a step not given is a request not sent."""

    def __init__(self, steps: Sequence[Step], progress: DeletionProgress | None) -> None:
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
        for number, step in enumerate(self._steps):
            if self._progress is not None and not self._progress.before(number):
                return
            yield step


@dataclass(frozen=True)
class StoppableDeletion(ApiTokenDeletion):
    """`ApiTokenDeletion` whose steps stop where `progress` says (cancelled)."""

    progress: DeletionProgress | None = field(default=None, compare=False)

    def steps(self) -> StoppingSteps:  # type: ignore[override]
        return StoppingSteps(super().steps(), self.progress)

    def confirmed_by(self, typed: str) -> bool:
        """The confirmation's text typed is right (their number, for several tokens)."""
        return typed_confirms(self.confirm_text, typed)


class ApiTokensModel(ActionViewModel):
    #: the rows were loaded (or emptied)
    rows_loaded = Signal()
    #: a creation made a token: its `NewSecret` (show it once; keep it nowhere)
    secret_created = Signal(object)
    #: a deletion moved on: (tokens sent so far, all of them)
    progress_changed = Signal(int, int)
    #: "Use for …" said how it went (the text)
    use_finished = Signal(str)

    shows = frozenset({Resource.API_TOKENS})

    def __init__(self, session: Session, parent: QObject | None = None) -> None:
        super().__init__("api_tokens", session, parent)
        self.table: TableModel[TokenRow] = TableModel(TOKEN_COLUMNS, self)
        self.selected: list[TokenRow] = []
        #: the server's project ids, for the creation form ([] when it did not list them)
        self.projects: list[str] = []
        #: the connection's own token as the list shows it ("" when the list does not hold it)
        self.own_secret = ""
        self._load_task: asyncio.Task[None] | None = None
        self._progress: DeletionProgress | None = None
        self.profile = ProfileSecrets(session)
        session.state_changed.connect(self.actions_changed)

    def is_empty(self) -> bool:
        return self.table.total_count == 0

    # "API" keeps its capitals (the defaults lower the tool's title)
    @property
    def empty_title(self) -> str:
        return "No API tokens"

    @property
    def failed_title(self) -> str:
        return "Could not load the API tokens"

    @property
    def empty_text(self) -> str:
        return "This server has no API tokens. Create one with Create token…"

    def load(self) -> None:
        if self._load_task is not None and not self._load_task.done():
            return
        self.set_status("Loading API tokens…")
        self._load_task = self.run(self._load())

    async def _load(self) -> None:
        client = await self.session.client()
        tokens = (await client.api_tokens()).tokens
        self.own_secret = next(
            (t.secret for t in tokens if t.secret and client.is_own_token(t.secret)), ""
        )
        sort = self.table.sort_state
        with paused_gc():
            prepared = await asyncio.to_thread(
                prepare_rows, TOKEN_COLUMNS, token_rows(tokens), [sort[0]] if sort else []
            )
        self.table.set_prepared(prepared)
        try:
            self.projects = sorted(p.id for p in (await client.list_projects()).projects)
        except ClientError:
            self.projects = []  # the form then takes project ids typed
        self.loaded = True
        self.rows_loaded.emit()
        self.phase_changed.emit()
        self.actions_changed.emit()

    def select(self, rows: list[TokenRow]) -> None:
        """The rows selected in the window (what Delete… deletes)."""
        self.selected = rows
        self.actions_changed.emit()

    @property
    def deleting(self) -> bool:
        return self.acting and self._progress is not None

    # ------------------------------------------------------------------ creating

    @property
    def create_reason(self) -> str:
        """Why Create token… cannot be used now ("" when it can)."""
        reason = self.action_reason(CREATE_API_TOKEN)
        if reason:
            return reason
        return "Another change is under way." if self.acting else ""

    @property
    def type_choices(self) -> list[str]:
        """The types this server creates (`backend` from Unleash 7.0)."""
        caps = self.session.capabilities
        if caps is None:
            return list(TYPES)
        return [t for t in TYPES if not type_refusal(caps, t)]

    def plan_create(self, name: str, kind: str, projects: list[str], environment: str,
                    expires: date | None) -> ApiTokenCreation:  # fmt: skip
        """The confirmation's plan for the token the form describes. `ValueError` saying what
        is wrong with the form, or why it cannot be created now."""
        from pydantic import ValidationError

        from app.api.models import CreateApiToken

        caps = self.session.capabilities
        if self.create_reason or caps is None:
            raise ValueError(self.create_reason or "Not connected.")
        if not name.strip():
            raise ValueError("The token needs a name.")
        refusal = type_refusal(caps, kind)
        if refusal:
            raise ValueError(refusal.replace("use --type client", "choose client"))
        when = None
        if expires is not None:
            when = datetime(expires.year, expires.month, expires.day, tzinfo=UTC)
            if when <= datetime.now(UTC):
                raise ValueError(f"The expiry {expires.isoformat()} is not in the future.")
        try:
            body = CreateApiToken(tokenName=name.strip(), type=kind,
                                  environment=environment.strip() or DEFAULT_ENVIRONMENT,
                                  projects=[p.strip() for p in projects if p.strip()] or None,
                                  expiresAt=when)  # fmt: skip
        except ValidationError as exc:
            said = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            raise ValueError(f"The token cannot be made so: {said}") from None
        return plan_create(body, journal_of(self.session.name, caps))

    def create(self, plan: ApiTokenCreation) -> asyncio.Task[None] | None:
        """Carry out a confirmed creation; None when another action is under way or the
        connection changed since the plan was made (`outcome_error` says so)."""
        if not self._may_start(plan.server, "created"):
            return None
        self._action_task = self.run(self._create(plan), busy=False)
        self.set_status(f"Creating API token “{plan.body.tokenName}”…")
        self.actions_changed.emit()
        return self._action_task

    async def _create(self, plan: ApiTokenCreation) -> None:
        from app import logs

        try:
            done = await self.run_plan(plan, after_sent=self.load)
            client = await self.session.client()
            token = await client.read_answer(done.answer, ApiToken)
        except ClientError as exc:
            self._set_outcome_error(str(exc))
            self.report_error(self.outcome_error)
        else:
            secret = token.secret or ""
            logs.register_secret(secret)  # whatever logs it from now on shows ***
            label = f"{token.type} token “{token.name}” for {scope_text(token)}"
            self._set_outcome(f"Created the {label} ({secret_tail(secret)}).")
            if not self.closed:
                made_on = (self.session.name, self.session.url)
                self.secret_created.emit(NewSecret(secret, label, "client", USE_FOR_METRICS,
                                                   self._use_reason(token), made_on))  # fmt: skip
        finally:
            self._finish()

    def _use_reason(self, token: ApiToken) -> str:
        if token.type.lower() not in ("client", "backend"):
            return (
                f"A {token.type} token cannot upload metrics: the metrics endpoint takes a "
                "client (backend) token."
            )
        return self.profile.reason()

    def use_secret(self, new: NewSecret) -> asyncio.Task[None] | None:
        """Put `new`'s secret into the connection's profile as its client token (the metrics
        uploads'), then reconnect; `use_finished` says how it went."""
        return self.profile.use(self, new, self.use_finished)

    # ------------------------------------------------------------------ deleting

    @property
    def delete_reason(self) -> str:
        """Why Delete… cannot be used now ("" when it can)."""
        reason = self.action_reason(DELETE_API_TOKEN)
        if reason:
            return reason
        if self.acting:
            return "Another change is under way."
        if not self.selected:
            return "Select the tokens to delete (Ctrl+A selects all those shown)."
        own = next((r for r in self.selected if self.own_secret
                    and r.token.secret == self.own_secret), None)  # fmt: skip
        if own is not None:
            return (f"“{own.token.name}” is the token this connection uses: deleting it would "
                    "lock flagdesk out of the server. Connect with another token to delete "
                    "it.")  # fmt: skip
        return ""

    def plan_delete(self) -> StoppableDeletion | None:
        """What deleting the selected tokens will do; None when Delete… cannot be used now."""
        caps = self.session.capabilities
        if self.delete_reason or caps is None:
            return None
        try:
            base = plan_delete([row.token for row in self.selected],
                               journal_of(self.session.name, caps))  # fmt: skip
        except (OSError, ValueError) as exc:
            self._set_outcome_error(f"Nothing was deleted: {exc}")
            return None
        return StoppableDeletion(base.tokens, base.journal, base.snapshot)

    def delete(self, plan: StoppableDeletion) -> asyncio.Task[None] | None:
        """Carry out a confirmed deletion, reporting each token (`progress_changed`) before its
        request; `cancel_delete()` stops it between two requests."""
        if not self._may_start(plan.server, "deleted"):
            return None
        progress = DeletionProgress(len(plan.tokens), self._report_progress)
        self._progress = progress
        running = StoppableDeletion(plan.tokens, plan.journal, plan.snapshot, plan.undoes,
                                    progress)  # fmt: skip
        self._action_task = self.run(self._delete(running, progress), busy=False)
        self.set_status(f"Deleting {plural(len(plan.tokens), 'API token')}…")
        self.actions_changed.emit()
        return self._action_task

    def _report_progress(self, number: int, total: int) -> None:
        if not self.closed:
            self.set_status(f"Deleting API token {number + 1:,} of {total:,}…")
            self.progress_changed.emit(number, total)

    def cancel_delete(self) -> None:
        """Stop the deletion before its next request (the one under way is let finish)."""
        if self._progress is not None:
            self._progress.cancelled = True

    async def _delete(self, plan: StoppableDeletion, progress: DeletionProgress) -> None:
        from app.actions.runner import PartlyDone

        total = len(plan.tokens)
        try:
            done = await self.run_plan(plan, after_sent=self.load)
        except PartlyDone as exc:
            self._set_outcome_error(str(exc))
            self.report_error(self.outcome_error)
        except ClientError as exc:
            self._set_outcome_error(str(exc))
            self.report_error(self.outcome_error)
        else:
            deleted = len(done.answers)
            if deleted < total:
                self._set_outcome(
                    f"Stopped: {deleted:,} of {plural(total, 'API token')} deleted, the other "
                    f"{total - deleted:,} not sent. Snapshot: {plan.snapshot}"
                )
            else:
                named = "; ".join(f"“{t.name}” ({last_seen(t)})" for t in plan.tokens[:3])
                more = f" and {total - 3:,} more" if total > 3 else ""
                self._set_outcome(
                    f"Deleted {plural(total, 'API token')}: {named}{more}. Snapshot: "
                    f"{plan.snapshot}"
                )
            self.selected = []
        finally:
            self._progress = None
            self._finish()

    # ------------------------------------------------------------------ common

    def reset(self) -> None:
        """A new connection: the old one's rows, selection and projects go (an outcome stays
        with its own connection: `ActionViewModel`)."""
        self._load_task = None
        self.loaded = False
        self.selected = []
        self.projects = []
        self.own_secret = ""
        self.table.clear()
        self.rows_loaded.emit()
        self.actions_changed.emit()

    def close(self) -> None:
        if not self.closed:
            self.session.state_changed.disconnect(self.actions_changed)
        super().close()
