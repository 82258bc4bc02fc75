"""`PersonalTokensModel`: the connected user's personal access tokens (`GET
/api/admin/user/tokens`), creating one and deleting some (`app.actions.personal_tokens`, through
the runner). Only a personal access token has a user: with an admin API token the tool is
unavailable with the registry's reason ("This needs a personal access token: …"), and nothing is
sent.

The list never holds a secret (the server shows it once, in the answer to a creation). `create`
emits `secret_created` with a `NewSecret`, kept by no one here; `use_secret(new)` puts it into
the connection's profile as its token and reconnects, so the connection acts as that token from
then on.

QtCore only: no QtWidgets below `app/`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from operator import attrgetter

from PySide6.QtCore import QObject, Signal

from app.actions.personal_tokens import Created, plan_create, plan_delete, secret_end

# the plans are re-exported: the window shows them, and reaches the actions only through here
from app.actions.personal_tokens import CreatePatPlan as CreatePatPlan
from app.actions.personal_tokens import DeletePatsPlan as DeletePatsPlan
from app.actions.runner import journal_of
from app.api.errors import ClientError
from app.api.models import PersonalAccessToken
from app.changes import Resource
from app.registry import CREATE_PAT, DELETE_PAT
from app.text import count_text, plural
from app.viewmodels.session import Session
from app.viewmodels.table import Column, TableModel, prepare_rows
from app.viewmodels.token_secrets import NewSecret, ProfileSecrets
from app.viewmodels.tools import ActionViewModel

USE_FOR_CONNECTION = "Use for this connection"
#: the expiry the creation form starts with, in days from today
DEFAULT_DAYS = 30


@dataclass(slots=True)
class PatRow:
    """One personal access token as the table shows it (no secret: the list has none)."""

    token: PersonalAccessToken = field(repr=False)
    id: int
    description: str
    expiresAt: datetime | None
    createdAt: datetime | None
    seenAt: datetime | None


def pat_rows(tokens: list[PersonalAccessToken]) -> list[PatRow]:
    return [PatRow(t, t.id, t.description, t.expiresAt, t.createdAt, t.seenAt) for t in tokens]


PAT_COLUMNS: list[Column[PatRow]] = [
    Column("Description", attrgetter("description")),
    Column("Id", attrgetter("id"), numeric=True, shown=False),
    Column("Expires", attrgetter("expiresAt")),
    Column("Created", attrgetter("createdAt")),
    Column("Last used", attrgetter("seenAt"),
           tooltip=lambda r: "Not used yet, as far as the server says" if r.seenAt is None
           else None),
]  # fmt: skip
DESCRIPTION_COLUMN = 0


def pats_count_text(shown: int, total: int) -> str:
    return count_text(shown, total, "personal access token")


class PersonalTokensModel(ActionViewModel):
    rows_loaded = Signal()
    #: a creation made a token: its `NewSecret` (show it once; keep it nowhere)
    secret_created = Signal(object)
    use_finished = Signal(str)

    shows = frozenset({Resource.PERSONAL_TOKENS})

    def __init__(self, session: Session, parent: QObject | None = None) -> None:
        super().__init__("personal_tokens", session, parent)
        self.table: TableModel[PatRow] = TableModel(PAT_COLUMNS, self)
        self.selected: list[PatRow] = []
        self._load_task: asyncio.Task[None] | None = None
        self.profile = ProfileSecrets(session)
        session.state_changed.connect(self.actions_changed)

    def is_empty(self) -> bool:
        return self.table.total_count == 0

    @property
    def empty_text(self) -> str:
        return "This user has no personal access tokens. Create one with Create token…"

    @property
    def owner(self) -> str:
        caps = self.session.capabilities
        return (caps.user_name if caps is not None else None) or "the connection's user"

    def load(self) -> None:
        if self._load_task is not None and not self._load_task.done():
            return
        self.set_status("Loading personal access tokens…")
        self._load_task = self.run(self._load())

    async def _load(self) -> None:
        client = await self.session.client()
        tokens = (await client.personal_tokens()).pats
        sort = self.table.sort_state
        prepared = await asyncio.to_thread(
            prepare_rows, PAT_COLUMNS, pat_rows(tokens), [sort[0]] if sort else []
        )
        self.table.set_prepared(prepared)
        self.loaded = True
        self.rows_loaded.emit()
        self.phase_changed.emit()
        self.actions_changed.emit()

    def select(self, rows: list[PatRow]) -> None:
        self.selected = rows
        self.actions_changed.emit()

    # ------------------------------------------------------------------ creating

    @property
    def create_reason(self) -> str:
        reason = self.action_reason(CREATE_PAT)
        if reason:
            return reason
        return "Another change is under way." if self.acting else ""

    def plan_create(self, description: str, expires: date) -> CreatePatPlan:
        """The confirmation's plan; `ValueError` saying what is wrong with the form."""
        caps = self.session.capabilities
        if self.create_reason or caps is None:
            raise ValueError(self.create_reason or "Not connected.")
        when = datetime(expires.year, expires.month, expires.day, tzinfo=UTC)
        try:
            return plan_create(description.strip(), when, journal_of(self.session.name, caps))
        except ValueError as exc:
            text = str(exc)
            raise ValueError(f"{text[:1].upper()}{text[1:]}.") from None

    def create(self, plan: CreatePatPlan) -> asyncio.Task[None] | None:
        if not self._may_start(plan.server, "created"):
            return None
        self._action_task = self.run(self._create(plan), busy=False)
        self.set_status(f"Creating personal access token “{plan.body.description}”…")
        self.actions_changed.emit()
        return self._action_task

    async def _create(self, plan: CreatePatPlan) -> None:
        try:
            done = await self.run_plan(plan, after_sent=self.load)
            made = await Created.of(await self.session.client(), done)  # registers the secret
        except ClientError as exc:
            self._set_outcome_error(str(exc))
            self.report_error(self.outcome_error)
        else:
            token = made.token
            label = f"personal access token “{token.description}” of {self.owner}"
            self._set_outcome(f"Created the {label} (…{secret_end(token.secret)}).")
            if not self.closed:
                self.secret_created.emit(
                    NewSecret(
                        token.secret,
                        label,
                        "admin",
                        USE_FOR_CONNECTION,
                        self.profile.reason(),
                        (self.session.name, self.session.url),
                    )
                )
        finally:
            self._finish()

    def use_secret(self, new: NewSecret) -> asyncio.Task[None] | None:
        """Put `new`'s secret into the connection's profile as its token, then reconnect with
        it; `use_finished` says how it went."""
        return self.profile.use(self, new, self.use_finished)

    # ------------------------------------------------------------------ deleting

    @property
    def delete_reason(self) -> str:
        reason = self.action_reason(DELETE_PAT)
        if reason:
            return reason
        if self.acting:
            return "Another change is under way."
        if not self.selected:
            return "Select the tokens to delete."
        return ""

    def plan_delete(self) -> DeletePatsPlan | None:
        caps = self.session.capabilities
        if self.delete_reason or caps is None:
            return None
        return plan_delete([r.token for r in self.selected], journal_of(self.session.name, caps))

    def delete(self, plan: DeletePatsPlan) -> asyncio.Task[None] | None:
        if not self._may_start(plan.server, "deleted"):
            return None
        self._action_task = self.run(self._delete(plan), busy=False)
        self.set_status(f"Deleting {plural(len(plan.tokens), 'personal access token')}…")
        self.actions_changed.emit()
        return self._action_task

    async def _delete(self, plan: DeletePatsPlan) -> None:
        try:
            await self.run_plan(plan, after_sent=self.load)
        except ClientError as exc:
            self._set_outcome_error(str(exc))
            self.report_error(self.outcome_error)
        else:
            names = ", ".join(f"“{t.description}”" for t in plan.tokens)
            self._set_outcome(
                f"Deleted {plural(len(plan.tokens), 'personal access token')}: {names}."
            )
            self.selected = []
        finally:
            self._finish()

    # ------------------------------------------------------------------ common

    def reset(self) -> None:
        self._load_task = None
        self.loaded = False
        self.selected = []
        self.table.clear()
        self.rows_loaded.emit()
        self.actions_changed.emit()

    def close(self) -> None:
        if not self.closed:
            self.session.state_changed.disconnect(self.actions_changed)
        super().close()
