"""`ServiceAccountsModel`: the server's service accounts (Unleash Enterprise; `GET
/api/admin/service-account`, each account with its tokens, never their secrets) in one table,
and the tokens of the account chosen (`current`) in a second; creating, editing (name, root role)
and deleting an account, creating and deleting its tokens, each through its plan of
`app.actions.service_accounts` and the runner (journal, snapshot, capability check). On open
source the tool is unavailable with the capability's reason ("Service accounts need Unleash
Enterprise: …") and nothing is sent.

The root roles a form offers (`role_choices`) are the server's: every root role of `GET
/api/admin/roles` (custom root roles included, `app.actions.roles.read_roles`), else those the
users' list names (`rootRoles`), else Unleash's built-in three.

A token's secret is in the creation's answer only: `create_token` emits `secret_created` with a
`NewSecret`, kept by no one here (the window's `SecretDialog` shows it once, masked, with Copy).
It offers no "Use for this connection": a service account's token is for the machine that acts
as the account, and as the profile's token it would replace the person's own and make the
connection act as the account (with its root role: no longer an Admin's, the window would lose
the page it was made on).

QtCore only: no QtWidgets below `app/`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from operator import attrgetter
from typing import Any

from PySide6.QtCore import QObject, Signal

from app.actions.personal_tokens import secret_end
from app.actions.runner import count_to_type, journal_of, typed_confirms

# the plans are re-exported: the window shows them, and reaches the actions only through here
from app.actions.service_accounts import CreateAccountPlan as CreateAccountPlan
from app.actions.service_accounts import (
    CreatedToken,
    account_label,
    plan_create,
    plan_create_token,
    plan_delete,
    plan_delete_tokens,
    plan_edit,
)
from app.actions.service_accounts import CreateTokenPlan as CreateTokenPlan
from app.actions.service_accounts import DeleteAccountPlan as DeleteAccountPlan
from app.actions.service_accounts import DeleteTokensPlan as DeleteTokensPlan
from app.actions.service_accounts import EditAccountPlan as EditAccountPlan
from app.api.errors import ClientError
from app.api.models import PersonalAccessToken, Role, ServiceAccount
from app.changes import Resource
from app.registry import (
    CREATE_SERVICE_ACCOUNT,
    CREATE_SERVICE_ACCOUNT_TOKEN,
    DELETE_SERVICE_ACCOUNT,
    DELETE_SERVICE_ACCOUNT_TOKEN,
    EDIT_SERVICE_ACCOUNT,
    Action,
)
from app.text import count_text, plural
from app.viewmodels.session import Session
from app.viewmodels.table import Column, TableModel, prepare_rows
from app.viewmodels.token_secrets import NewSecret
from app.viewmodels.tools import ActionViewModel

#: Unleash's built-in root roles, when the server lists none
BUILT_IN_ROLES = {1: "Admin", 2: "Editor", 3: "Viewer"}
#: the root role a new account's form starts with (Unleash's page starts with Viewer)
DEFAULT_ROLE = "Viewer"
#: the expiry a new token's form starts with, in days from today
DEFAULT_DAYS = 90
BUSY = "Another change is under way."


@dataclass(slots=True)
class AccountRow:
    """One service account as the table shows it (its tokens counted, never a secret)."""

    account: ServiceAccount = field(repr=False)
    id: int
    username: str
    name: str
    role: str
    createdAt: datetime | None
    tokens: int
    #: the latest `seenAt` of its tokens (Unleash leaves the account's own `seenAt` null)
    lastUsed: datetime | None


def _last_used(account: ServiceAccount) -> datetime | None:
    seen = [t.seenAt for t in account.tokens if t.seenAt is not None]
    return max(seen) if seen else None


def role_text(roles: dict[int, str], role: int | None) -> str:
    if role is None:
        return ""
    return roles.get(role, f"role {role}")


def account_rows(accounts: list[ServiceAccount], roles: dict[int, str]) -> list[AccountRow]:
    return [AccountRow(a, a.id, a.username or "", a.name or "", role_text(roles, a.rootRole),
                       a.createdAt, len(a.tokens), _last_used(a)) for a in accounts]  # fmt: skip


#: a time's column, in average characters (its digits are wider): "2026-12-07 03:50" and air
#: (a column of "—" only, fitted to its first rows, elided the times that came later)
TIME_WIDTH = 24

ACCOUNT_COLUMNS: list[Column[AccountRow]] = [
    # widths bounded, not fitted to the first rows (a list of one short username, as the demo
    # starts, elided every longer one made afterwards)
    Column("Username", attrgetter("username"), width=26,
           tooltip=lambda r: r.username if len(r.username) > 24 else None),
    Column("Name", attrgetter("name"), tooltip=lambda r: r.name if len(r.name) > 40 else None),
    Column("Root role", attrgetter("role"), width=22,
           tooltip=lambda r: r.role if len(r.role) > 20 else None),
    Column("Created", attrgetter("createdAt"), width=TIME_WIDTH),
    Column("Tokens", attrgetter("tokens"), numeric=True),
    Column("Last token use", attrgetter("lastUsed"), width=TIME_WIDTH,
           tooltip=lambda r: ("No token yet" if not r.tokens else
                              "None of its tokens used yet, as far as the server says")
           if r.lastUsed is None else None),
    Column("Id", attrgetter("id"), numeric=True, shown=False),
]  # fmt: skip
#: the column that takes the width left
NAME_COLUMN = 1


@dataclass(slots=True)
class TokenRow:
    """One token of the chosen account (no secret: the list has none)."""

    token: PersonalAccessToken = field(repr=False)
    id: int
    description: str
    createdAt: datetime | None
    expiresAt: datetime | None
    seenAt: datetime | None


def token_rows(tokens: list[PersonalAccessToken]) -> list[TokenRow]:
    return [TokenRow(t, t.id, t.description, t.createdAt, t.expiresAt, t.seenAt) for t in tokens]


TOKEN_COLUMNS: list[Column[TokenRow]] = [
    Column("Description", attrgetter("description")),
    Column("Created", attrgetter("createdAt"), width=TIME_WIDTH),
    Column("Expires", attrgetter("expiresAt"), width=TIME_WIDTH),
    Column("Last seen", attrgetter("seenAt"), width=TIME_WIDTH,
           tooltip=lambda r: "Not used yet, as far as the server says" if r.seenAt is None
           else None),
    Column("Id", attrgetter("id"), numeric=True, shown=False),
]  # fmt: skip
DESCRIPTION_COLUMN = 0


def accounts_count_text(shown: int, total: int) -> str:
    return count_text(shown, total, "service account")


def tokens_count_text(shown: int, total: int) -> str:
    return count_text(shown, total, "token")


@dataclass(frozen=True)
class TypedTokenDeletion(DeleteTokensPlan):
    """`DeleteTokensPlan` as the window confirms it: several tokens' number typed first (as
    `flagdesk service-accounts tokens delete` asks on a terminal)."""

    @property
    def confirm_text(self) -> str | None:
        return count_to_type(len(self.tokens))

    def lines(self) -> list[str]:
        lines = super().lines()
        if self.confirm_text is not None:
            lines.append(f"Type {self.confirm_text} to delete them.")
        return lines

    def confirmed_by(self, typed: str) -> bool:
        return typed_confirms(self.confirm_text, typed)


class ServiceAccountsModel(ActionViewModel):
    #: the accounts were loaded (or emptied)
    rows_loaded = Signal()
    #: the chosen account changed (or its tokens did): `current`, `tokens`
    current_changed = Signal()
    #: a token was created: its `NewSecret` (show it once; keep it nowhere)
    secret_created = Signal(object)

    shows = frozenset({Resource.SERVICE_ACCOUNTS})

    def __init__(self, session: Session, parent: QObject | None = None) -> None:
        super().__init__("service_accounts", session, parent)
        self.accounts: TableModel[AccountRow] = TableModel(ACCOUNT_COLUMNS, self)
        self.tokens: TableModel[TokenRow] = TableModel(TOKEN_COLUMNS, self)
        #: the server's root roles, id -> name, in the order offered
        self.roles: dict[int, str] = {}
        #: the account whose tokens are shown (as last loaded), and its id, kept over reloads
        self.current: ServiceAccount | None = None
        self.current_id: int | None = None
        self.selected_tokens: list[TokenRow] = []
        self._load_task: asyncio.Task[None] | None = None
        session.state_changed.connect(self.actions_changed)

    def is_empty(self) -> bool:
        return self.accounts.total_count == 0

    @property
    def empty_text(self) -> str:
        return "This server has no service accounts. Create one with Create account…"

    # ------------------------------------------------------------------ loading

    def load(self) -> None:
        if self._load_task is not None and not self._load_task.done():
            return
        self.set_status("Loading service accounts…")
        self._load_task = self.run(self._load())

    async def _load(self) -> None:
        client = await self.session.client()
        listed = await client.service_accounts()
        roles = await self._read_roles(listed.rootRoles)
        sort = self.accounts.sort_state
        prepared = await asyncio.to_thread(
            prepare_rows, ACCOUNT_COLUMNS, account_rows(listed.serviceAccounts, roles),
            [sort[0]] if sort else [],
        )  # fmt: skip
        self.roles = roles
        self.accounts.set_prepared(prepared)
        self.loaded = True
        self.rows_loaded.emit()
        self._show_current()
        self.phase_changed.emit()
        self.actions_changed.emit()

    async def _read_roles(self, held: list[Role]) -> dict[int, str]:
        """The root roles a form offers: the server's list of roles (custom root roles too),
        else the users' list's, else the built-in ones; with those the accounts hold."""
        from app.actions.roles import is_custom, is_root, read_roles

        client = await self.session.client()
        found: list[Role] = []
        try:
            # the built-in ones first, then the custom ones, each in the server's order
            found = sorted((r for r in (await read_roles(client)).roles if is_root(r)),
                           key=is_custom)  # fmt: skip
        except ClientError:
            try:
                found = list((await client.list_users()).rootRoles)
            except ClientError:
                found = []
        roles = {r.id: r.name for r in found} or dict(BUILT_IN_ROLES)
        for role in held:
            roles.setdefault(role.id, role.name)
        return roles

    @property
    def role_choices(self) -> list[tuple[int, str]]:
        """(id, name) of each root role: the built-in ones, then the custom ones."""
        return list((self.roles or BUILT_IN_ROLES).items())

    def choose(self, account_id: int | None) -> None:
        """Show the tokens of the account `account_id` (None: none chosen)."""
        if account_id == self.current_id:
            return
        self.current_id = account_id
        self._show_current()

    def _show_current(self) -> None:
        rows = self.accounts.all_rows
        found = next((r.account for r in rows if r.id == self.current_id), None)
        if found is None:
            self.current_id = None
        self.current = found
        self.selected_tokens = []
        self.tokens.set_rows(token_rows(found.tokens) if found is not None else [])
        self.current_changed.emit()
        self.actions_changed.emit()

    def select_tokens(self, rows: list[TokenRow]) -> None:
        self.selected_tokens = rows
        self.actions_changed.emit()

    def _reason(self, action: Action, *, needs_account: bool = False) -> str:
        reason = self.action_reason(action)
        if reason:
            return reason
        if self.acting:
            return BUSY
        if needs_account and self.current is None:
            return "Select a service account first."
        return ""

    # ------------------------------------------------------------------ accounts

    @property
    def create_reason(self) -> str:
        return self._reason(CREATE_SERVICE_ACCOUNT)

    @property
    def edit_reason(self) -> str:
        return self._reason(EDIT_SERVICE_ACCOUNT, needs_account=True)

    @property
    def delete_reason(self) -> str:
        return self._reason(DELETE_SERVICE_ACCOUNT, needs_account=True)

    def plan_create(self, username: str, name: str, role: int) -> CreateAccountPlan:
        """The confirmation's plan of the account the form describes; `ValueError` saying
        what is wrong with the form, or why it cannot be created now."""
        caps = self.session.capabilities
        if self.create_reason or caps is None:
            raise ValueError(self.create_reason or "Not connected.")
        taken = [r for r in self.accounts.all_rows if r.username == username.strip()]
        if taken:
            raise ValueError(f"The service account {account_label(taken[0].account)} has the "
                             "username already.")  # fmt: skip
        try:
            return plan_create(name.strip(), username.strip(), role,
                               journal_of(self.session.name, caps), self.roles)  # fmt: skip
        except ValueError as exc:
            raise ValueError(_sentence(exc)) from None

    def plan_edit(self, name: str, role: int) -> EditAccountPlan:
        """The plan to give the chosen account `name` and the root role `role` (only what
        differs is sent); `ValueError` saying why not."""
        caps = self.session.capabilities
        account = self.current
        if self.edit_reason or caps is None or account is None:
            raise ValueError(self.edit_reason or "Not connected.")
        new_name = name.strip() if name.strip() != (account.name or "") else None
        new_role = role if role != account.rootRole else None
        if new_name is None and new_role is None:
            if not name.strip():
                raise ValueError("A service account needs a name.")
            raise ValueError("Nothing differs: change the name or the root role first.")
        try:
            return plan_edit(account, new_name, new_role, journal_of(self.session.name, caps),
                             self.roles)  # fmt: skip
        except ValueError as exc:
            raise ValueError(_sentence(exc)) from None

    def plan_delete(self) -> DeleteAccountPlan | None:
        """The plan to delete the chosen account and its tokens (its snapshot first); None
        when Delete account… cannot be used now."""
        caps = self.session.capabilities
        if self.delete_reason or caps is None or self.current is None:
            return None
        try:
            return plan_delete(self.current, journal_of(self.session.name, caps), self.roles)
        except (OSError, ValueError) as exc:
            self._set_outcome_error(f"Nothing was deleted: {exc}")
            return None

    def create(self, plan: CreateAccountPlan) -> asyncio.Task[None] | None:
        if not self._may_start(plan.server, "created"):
            return None
        return self._start(self._create(plan), f"Creating service account “{plan.body.username}”…")

    async def _create(self, plan: CreateAccountPlan) -> None:
        try:
            done = await self.run_plan(plan, after_sent=self.load)
            client = await self.session.client()
            made = await client.read_answer(done.answer, ServiceAccount)
        except ClientError as exc:
            self._failed(exc)
        else:
            # the new account chosen: shown once the list is read again (or now, if it was)
            self.current_id = made.id
            if any(r.id == made.id for r in self.accounts.all_rows):
                self._show_current()
            self._set_outcome(f"Created the service account {account_label(made)}, "
                              f"{role_text(self.roles, made.rootRole)}.")  # fmt: skip
        finally:
            self._finish()

    def edit(self, plan: EditAccountPlan) -> asyncio.Task[None] | None:
        if not self._may_start(plan.server, "changed"):
            return None
        return self._start(
            self._edit(plan), f"Saving the service account {account_label(plan.account)}…"
        )

    async def _edit(self, plan: EditAccountPlan) -> None:
        try:
            await self.run_plan(plan, after_sent=self.load)
        except ClientError as exc:
            self._failed(exc)
        else:
            self._set_outcome(f"Changed the service account {account_label(plan.account)}: "
                              + "; ".join(plan.changes()) + ".")  # fmt: skip
        finally:
            self._finish()

    def delete(self, plan: DeleteAccountPlan) -> asyncio.Task[None] | None:
        if not self._may_start(plan.server, "deleted"):
            return None
        return self._start(
            self._delete(plan), f"Deleting the service account {account_label(plan.account)}…"
        )

    async def _delete(self, plan: DeleteAccountPlan) -> None:
        try:
            await self.run_plan(plan, after_sent=self.load)
        except ClientError as exc:
            self._failed(exc)
        else:
            count = len(plan.account.tokens)
            tokens = f" and its {plural(count, 'token')}" if count else ""
            self._set_outcome(f"Deleted the service account {account_label(plan.account)}"
                              f"{tokens}. Snapshot: {plan.snapshot}")  # fmt: skip
        finally:
            self._finish()

    # ------------------------------------------------------------------ tokens

    @property
    def create_token_reason(self) -> str:
        return self._reason(CREATE_SERVICE_ACCOUNT_TOKEN, needs_account=True)

    @property
    def delete_tokens_reason(self) -> str:
        reason = self._reason(DELETE_SERVICE_ACCOUNT_TOKEN, needs_account=True)
        if reason:
            return reason
        return "" if self.selected_tokens else "Select the tokens to delete."

    def plan_create_token(self, description: str, expires: date) -> CreateTokenPlan:
        """The plan of a token of the chosen account expiring as `expires` begins (UTC);
        `ValueError` saying what is wrong with the form."""
        caps = self.session.capabilities
        account = self.current
        if self.create_token_reason or caps is None or account is None:
            raise ValueError(self.create_token_reason or "Not connected.")
        when = datetime(expires.year, expires.month, expires.day, tzinfo=UTC)
        try:
            return plan_create_token(account, description.strip(), when,
                                     journal_of(self.session.name, caps))  # fmt: skip
        except ValueError as exc:
            raise ValueError(_sentence(exc)) from None

    def create_token(self, plan: CreateTokenPlan) -> asyncio.Task[None] | None:
        if not self._may_start(plan.server, "created"):
            return None
        return self._start(
            self._create_token(plan), f"Creating the token “{plan.body.description}”…"
        )

    async def _create_token(self, plan: CreateTokenPlan) -> None:
        try:
            done = await self.run_plan(plan, after_sent=self.load)
            made = await CreatedToken.of(await self.session.client(), done)  # registers it
        except ClientError as exc:
            self._failed(exc)
        else:
            token = made.token
            label = (f"token “{token.description}” of the service account "
                     f"{account_label(plan.account)}")  # fmt: skip
            end = secret_end(token.secret)
            self._set_outcome(f"Created the {label}, its secret ending …{end}.")
            if not self.closed:
                self.secret_created.emit(
                    NewSecret(
                        token.secret, label, "admin", "",
                        "Give it to the program that acts as this account (a CI job, a "
                        "script): it can do what the account's root role can.",
                        (self.session.name, self.session.url),
                    )
                )  # fmt: skip
        finally:
            self._finish()

    def plan_delete_tokens(self) -> TypedTokenDeletion | None:
        """The plan to delete the selected tokens of the chosen account; None when Delete
        tokens… cannot be used now."""
        caps = self.session.capabilities
        if self.delete_tokens_reason or caps is None or self.current is None:
            return None
        base = plan_delete_tokens(self.current, [r.token for r in self.selected_tokens],
                                  journal_of(self.session.name, caps))  # fmt: skip
        return TypedTokenDeletion(base.journal, base.account, base.tokens, base.requests)

    def delete_tokens(self, plan: DeleteTokensPlan) -> asyncio.Task[None] | None:
        if not self._may_start(plan.server, "deleted"):
            return None
        return self._start(
            self._delete_tokens(plan), f"Deleting {plural(len(plan.tokens), 'token')}…"
        )

    async def _delete_tokens(self, plan: DeleteTokensPlan) -> None:
        try:
            await self.run_plan(plan, after_sent=self.load)
        except ClientError as exc:  # PartlyDone too: which were deleted, which not
            self._failed(exc)
        else:
            names = ", ".join(f"“{t.description}”" for t in plan.tokens[:5])
            more = f" and {len(plan.tokens) - 5:,} more" if len(plan.tokens) > 5 else ""
            self._set_outcome(f"Deleted {plural(len(plan.tokens), 'token')} of the service "
                              f"account {account_label(plan.account)}: {names}{more}.")  # fmt: skip
            self.selected_tokens = []
        finally:
            self._finish()

    # ------------------------------------------------------------------ common

    def _start(self, job: Coroutine[Any, Any, None], status: str) -> asyncio.Task[None]:
        """`job` as the action under way, then `status` said: the window shows it as the
        action's (it shows a status while `acting` only)."""
        task = self.run(job, busy=False)
        self._action_task = task
        self.set_status(status)
        self.actions_changed.emit()
        return task

    def _failed(self, exc: Exception) -> None:
        self._set_outcome_error(str(exc))
        self.report_error(self.outcome_error)

    def reset(self) -> None:
        """A new connection: the old one's accounts, roles, choice and selection go (an
        outcome stays with its own connection: `ActionViewModel`)."""
        self._load_task = None
        self.loaded = False
        self.roles = {}
        self.current_id = None
        self.accounts.clear()
        self.rows_loaded.emit()
        self._show_current()

    def close(self) -> None:
        if not self.closed:
            self.session.state_changed.disconnect(self.actions_changed)
        super().close()


def _sentence(exc: Exception) -> str:
    """An action's refusal ("a service account needs a name") as the form says it."""
    text = str(exc)
    return f"{text[:1].upper()}{text[1:]}" + ("" if text.endswith(".") else ".")
