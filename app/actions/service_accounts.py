"""Service accounts (Unleash Enterprise) and their tokens: creating, editing (name, root role) and
deleting an account, creating and deleting its tokens (`service_accounts.create`, `.edit`,
`.delete`, `.create_token`, `.delete_token`): the one path `flagdesk service-accounts` (and a
window, later) takes.

What this relies on of Unleash (../shared/reference/unleash-enterprise-admin-api.md section 1):
the list `GET /api/admin/service-account` is the only read of an account (there is no GET of
one), each account with its tokens (no secrets); a username is unique (409); an update takes the
name and the root role only; a deletion takes the account's tokens with it; a token is a
personal access token owned by the account, its secret in the creation's answer only. Open
source has none of these routes (404): the capability probe says "needs Unleash Enterprise"
and `runner.require` stops a plan before anything is sent.

- `plan_create`: name, username, root role id. The journal keeps them, and the new account's
  id after (`after`). Undone by deleting the account (by that id).
- `plan_edit`: the name and/or root role; the journal keeps the body sent and the account as it
  was (`before.account`), so an edit in doubt can be checked and undone (the previous name and
  root role put back).
- `plan_delete`: a snapshot of the account (its tokens' descriptions and expiries, never a
  secret) first. Undone by creating it again from the snapshot: a new id, and none of its
  tokens (their secrets are gone with them), which the undo's confirmation says.
- `plan_create_token`: the description and the expiry (in the future). The answer holds the
  secret, the only time it is shown: `CreatedToken.of` reads it for the caller to show once and
  registers it with the log's redaction; the journal keeps the token's id and the secret's last
  four characters (`secret_end`), never the secret. Undone by deleting the token.
- `plan_delete_tokens`: tokens of one account as just listed, one request each. Never undone:
  a new token would have a new secret.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from app.actions.journal import Journal
from app.actions.personal_tokens import secret_end
from app.actions.runner import Done, PlanBase, Step
from app.actions.snapshots import wire_time, write_whole
from app.api.client import (
    Answer,
    WriteRequest,
    create_service_account_request,
    create_service_account_token_request,
    delete_service_account_request,
    delete_service_account_token_request,
    update_service_account_request,
)
from app.api.models import (
    CreatedPersonalAccessToken,
    CreatePersonalAccessToken,
    CreateServiceAccount,
    PersonalAccessToken,
    ServiceAccount,
    UpdateServiceAccount,
)
from app.changes import Changes, Resource
from app.registry import (
    CREATE_SERVICE_ACCOUNT,
    CREATE_SERVICE_ACCOUNT_TOKEN,
    DELETE_SERVICE_ACCOUNT,
    DELETE_SERVICE_ACCOUNT_TOKEN,
    EDIT_SERVICE_ACCOUNT,
)
from app.text import plural

if TYPE_CHECKING:
    from app.api.client import AdminClient

__all__ = [
    "CreateAccountPlan",
    "CreateTokenPlan",
    "CreatedToken",
    "DeleteAccountPlan",
    "DeleteTokensPlan",
    "EditAccountPlan",
    "NotFound",
    "account_json",
    "account_label",
    "find_account",
    "find_tokens",
    "plan_create",
    "plan_create_token",
    "plan_delete",
    "plan_delete_tokens",
    "plan_edit",
    "plan_recreate",
    "read_snapshot",
    "token_json",
]


class NotFound(ValueError):
    """Words that name no service account (or token), or more than one; `str()` says which."""


def account_label(account: ServiceAccount) -> str:
    """ "“deployer” (id 12)": an account by its username."""
    return f"“{account.username or account.name or ''}” (id {account.id})"


def _token_label(token: PersonalAccessToken) -> str:
    return f"“{token.description}” (id {token.id})"


def _time(value: datetime | None) -> str | None:
    return wire_time(value) if value is not None else None


def token_json(token: PersonalAccessToken) -> dict[str, Any]:
    """A token as `--json` and the snapshot list it: the wire's fields, never a secret."""
    return {"id": token.id, "description": token.description,
            "expiresAt": _time(token.expiresAt), "createdAt": _time(token.createdAt),
            "seenAt": _time(token.seenAt)}  # fmt: skip


def account_json(account: ServiceAccount) -> dict[str, Any]:
    """An account as `--json` and the snapshot hold it: its fields and its tokens (no
    secrets)."""
    return {"id": account.id, "name": account.name, "username": account.username,
            "rootRole": account.rootRole, "createdAt": _time(account.createdAt),
            "tokens": [token_json(t) for t in account.tokens]}  # fmt: skip


def _role(roles: Mapping[int, str], role: int | None) -> str:
    if role is None:
        return "no root role"
    name = roles.get(role)
    return f"{name} (role {role})" if name else f"role {role}"


def find_account(asked: str, accounts: Sequence[ServiceAccount], server: str) -> ServiceAccount:
    """The account `asked` names: its username (exactly) or its id. `NotFound` saying so."""
    by_name = [a for a in accounts if a.username == asked]
    by_id = [a for a in accounts if str(a.id) == asked.strip()]
    if by_name and by_id and by_name[0].id != by_id[0].id:
        raise NotFound(f"“{asked}” is the username of {account_label(by_name[0])} and the id of "
                       f"{account_label(by_id[0])}: name it by the other")  # fmt: skip
    found = by_name or by_id
    if not found:
        raise NotFound(f"no service account on {server} has the username or id “{asked}”")
    return found[0]


def find_tokens(asked: Sequence[str], account: ServiceAccount) -> list[PersonalAccessToken]:
    """The tokens of `account` that `asked` names, each by description (exactly) or id, in
    the order asked, once each; `NotFound` naming every word that names none."""
    found: dict[int, PersonalAccessToken] = {}
    missing: list[str] = []
    for word in asked:
        named = [t for t in account.tokens if t.description == word]
        numbered = [t for t in account.tokens if str(t.id) == word.strip()]
        if named and numbered and named[0].id != numbered[0].id:
            raise NotFound(f"“{word}” is the description of token {named[0].id} and the id of "
                           f"{_token_label(numbered[0])}: name it by the other")  # fmt: skip
        hits = named or numbered
        if not hits:
            missing.append(word)
        else:
            found.setdefault(hits[0].id, hits[0])
    if missing:
        names = ", ".join(f"“{w}”" for w in missing)
        raise NotFound(f"the service account {account_label(account)} has no token described "
                       f"or numbered {names}")  # fmt: skip
    return list(found.values())


@dataclass(frozen=True)
class _Plan(PlanBase):
    journal: Journal

    @property
    def connection(self) -> str:
        return self.journal.actor.connection

    @property
    def where(self) -> str:
        return f"{self.server} (connection “{self.connection}”)"


# ---------------------------------------------------------------------------- create


def _after_account(answer: Answer) -> dict[str, Any]:
    """What the journal keeps of a creation's answer: the new account's id."""
    return {"id": ServiceAccount.model_validate_json(answer.response.content).id}


@dataclass(frozen=True)
class CreateAccountPlan(_Plan):
    body: CreateServiceAccount
    request: WriteRequest
    roles: Mapping[int, str] = field(default_factory=dict)
    #: the deletion this creation undoes (its journal entry), and the deleted account's tokens
    undoes: str = ""
    lost_tokens: int = 0

    action = CREATE_SERVICE_ACCOUNT
    nothing = "Nothing was created."
    snapshot = None

    @property
    def announced(self) -> tuple[Changes, ...]:
        return (Changes.of(Resource.SERVICE_ACCOUNTS),)

    def steps(self) -> tuple[Step, ...]:
        before: dict[str, Any] = {"name": self.body.name, "username": self.body.username,
                                  "rootRole": self.body.rootRole}  # fmt: skip
        if self.undoes:
            before["undoes"] = self.undoes
        return (Step(self.request, [self.body.username], before, after=_after_account),)

    @property
    def question(self) -> str:
        if self.undoes:
            return f"Undo the deletion of the service account “{self.body.username}”?"
        return f"Create the service account “{self.body.username}”?"

    def lines(self) -> list[str]:
        b = self.body
        first = (f"The service account “{b.username}” (name “{b.name}”, root role "
                 f"{_role(self.roles, b.rootRole)}) will be created on {self.where}.")  # fmt: skip
        if self.undoes:
            return [
                first,
                "It gets a new id: whatever named the old id must name the new one.",
                f"Its {plural(self.lost_tokens, 'token')} cannot come back: a deleted token's "
                "secret is gone with it. Create new tokens for it (flagdesk service-accounts "
                "tokens create) and give their secrets to whatever used the old ones.",
            ]
        return [first, "It has no tokens yet. It can be undone by deleting the account."]


def plan_create(name: str, username: str, root_role: int, journal: Journal,
                roles: Mapping[int, str] | None = None) -> CreateAccountPlan:  # fmt: skip
    """The plan to create an account; `ValueError` saying why for an empty name or username
    (the server would refuse them) or a name with control characters."""
    if not username.strip():
        raise ValueError("a service account needs a username")
    if not name.strip():
        raise ValueError("a service account needs a name")
    try:
        body = CreateServiceAccount(name=name, username=username, rootRole=root_role)
    except ValueError as exc:
        raise ValueError(_invalid(exc)) from None
    return CreateAccountPlan(journal, body, create_service_account_request(body), dict(roles or {}))


def _invalid(exc: ValueError) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        return "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in errors())
    return str(exc)


# ---------------------------------------------------------------------------- edit


@dataclass(frozen=True)
class EditAccountPlan(_Plan):
    account: ServiceAccount
    body: UpdateServiceAccount
    request: WriteRequest
    roles: Mapping[int, str] = field(default_factory=dict)
    #: this edit undoes an earlier one
    undo: bool = False

    action = EDIT_SERVICE_ACCOUNT
    nothing = "Nothing was changed."
    snapshot = None

    @property
    def announced(self) -> tuple[Changes, ...]:
        return (Changes.of(Resource.SERVICE_ACCOUNTS, self.account.id),)

    def steps(self) -> tuple[Step, ...]:
        a = self.account
        before: dict[str, Any] = {"username": a.username,
                                  "account": {"name": a.name, "rootRole": a.rootRole}}  # fmt: skip
        if self.undo:
            before["undo"] = True
        return (Step(self.request, [a.id], before, with_body=True),)

    def changes(self) -> list[str]:
        a, b = self.account, self.body
        out = []
        if b.name is not None and b.name != a.name:
            out.append(f"name “{a.name}” → “{b.name}”")
        if b.rootRole is not None and b.rootRole != a.rootRole:
            out.append(f"root role {_role(self.roles, a.rootRole)} → "
                       f"{_role(self.roles, b.rootRole)}")  # fmt: skip
        return out

    @property
    def question(self) -> str:
        verb = "Put back" if self.undo else "Save the changes to"
        return f"{verb} the service account {account_label(self.account)}?"

    def lines(self) -> list[str]:
        changes = self.changes() or ["nothing differs from the account as read"]
        return [
            f"The service account {account_label(self.account)} will change on {self.where}: "
            + "; ".join(changes) + ".",
            "Its tokens act with its root role from their next request."
            if self.body.rootRole is not None else "Its tokens stay as they are.",
            "It can be undone (the name and root role before put back)." if not self.undo
            else "This puts back what the account was before the change undone.",
        ]  # fmt: skip


def plan_edit(account: ServiceAccount, name: str | None, root_role: int | None,
              journal: Journal, roles: Mapping[int, str] | None = None,
              *, undo: bool = False) -> EditAccountPlan:  # fmt: skip
    """The plan to change `account`'s name and/or root role (those not None). `ValueError`
    when neither is given or the name is empty or not one line."""
    if name is None and root_role is None:
        raise ValueError("give a new name or a new root role (or both)")
    if name is not None and not name.strip():
        raise ValueError("a service account needs a name")
    fields: dict[str, Any] = {}
    if name is not None:
        fields["name"] = name
    if root_role is not None:
        fields["rootRole"] = root_role
    try:
        body = UpdateServiceAccount(**fields)
    except ValueError as exc:
        raise ValueError(_invalid(exc)) from None
    return EditAccountPlan(journal, account, body,
                           update_service_account_request(account.id, body),
                           dict(roles or {}), undo)  # fmt: skip


# ---------------------------------------------------------------------------- delete


def read_snapshot(path: Path) -> ServiceAccount:
    """The account a deletion's snapshot holds."""
    return ServiceAccount.model_validate(json.loads(path.read_text(encoding="utf-8")))


@dataclass(frozen=True)
class DeleteAccountPlan(_Plan):
    account: ServiceAccount
    request: WriteRequest
    snapshot: Path
    roles: Mapping[int, str] = field(default_factory=dict)
    #: the creation this deletion undoes (its journal entry), "" when it is not an undo
    undoes: str = ""

    action = DELETE_SERVICE_ACCOUNT
    nothing = "Nothing was deleted."

    @property
    def announced(self) -> tuple[Changes, ...]:
        return (Changes.of(Resource.SERVICE_ACCOUNTS, self.account.id),)

    def steps(self) -> tuple[Step, ...]:
        a = self.account
        before: dict[str, Any] = {"snapshot": self.snapshot.name, "username": a.username,
                                  "name": a.name, "rootRole": a.rootRole,
                                  "tokens": len(a.tokens)}  # fmt: skip
        if self.undoes:
            before["undoes"] = self.undoes
        return (Step(self.request, [a.id], before),)

    def write_snapshot(self) -> object:
        def fill(f: TextIO) -> int:
            f.write(json.dumps(account_json(self.account), indent=2, ensure_ascii=False))
            return 1

        return write_whole(self.snapshot, fill)

    @property
    def question(self) -> str:
        if self.undoes:
            return f"Undo the creation of the service account {account_label(self.account)}?"
        return f"Delete the service account {account_label(self.account)}?"

    def lines(self) -> list[str]:
        a = self.account
        tokens = plural(len(a.tokens), "token")
        lines = [
            f"The service account {account_label(a)} (root role {_role(self.roles, a.rootRole)}"
            f", {tokens}) will be deleted on {self.where}.",
            _tokens_going(a.tokens),
            f"A snapshot of it (no secrets) is written first to {self.snapshot}.",
        ]
        if not self.undoes:
            lines.append("Undo creates it again with a new id, without its tokens (their "
                         "secrets cannot come back).")  # fmt: skip
        return lines


#: how many of an account's tokens a deletion's confirmation names (the rest counted)
NAMED_TOKENS = 10


def _tokens_going(tokens: Sequence[PersonalAccessToken]) -> str:
    """The confirmation's line naming the tokens a deletion takes with the account."""
    if not tokens:
        return "It has no tokens."
    names = ", ".join(_token_label(t) for t in tokens[:NAMED_TOKENS])
    more = f" and {len(tokens) - NAMED_TOKENS:,} more" if len(tokens) > NAMED_TOKENS else ""
    if len(tokens) == 1:
        said = f"Its token {names} goes with it"
    else:
        said = f"Its {plural(len(tokens), 'token')} go with it: {names}{more}"
    return (f"{said}. Whatever uses {'it' if len(tokens) == 1 else 'them'} is refused from its "
            "next request, and a deleted token's secret cannot come back.")  # fmt: skip


def plan_delete(
    account: ServiceAccount,
    journal: Journal,
    roles: Mapping[int, str] | None = None,
    undoes: str = "",
) -> DeleteAccountPlan:
    """The plan to delete `account` (as just listed), its snapshot first."""
    return DeleteAccountPlan(journal, account, delete_service_account_request(account.id),
                             journal.new_file(DELETE_SERVICE_ACCOUNT.key, ".json"),
                             dict(roles or {}), undoes)  # fmt: skip


def plan_recreate(account: ServiceAccount, journal: Journal, undoes: str,
                  roles: Mapping[int, str] | None = None) -> CreateAccountPlan:  # fmt: skip
    """The plan to create a deleted account again from its snapshot (undoing the deletion
    `undoes`): its name, username and root role; a new id, none of its tokens."""
    if account.rootRole is None:
        raise ValueError("the snapshot holds no root role")
    plan = plan_create(account.name or account.username or "", account.username or "",
                       account.rootRole, journal, roles)  # fmt: skip
    return CreateAccountPlan(journal, plan.body, plan.request, plan.roles, undoes,
                             len(account.tokens))  # fmt: skip


# ---------------------------------------------------------------------------- tokens


def _after_token(answer: Answer) -> dict[str, Any]:
    """What the journal keeps of a token's creation: its id and its secret's last four
    characters (never the secret)."""
    made = CreatedPersonalAccessToken.model_validate_json(answer.response.content)
    return {"id": made.id, "secretEnd": secret_end(made.secret)}


@dataclass(frozen=True)
class CreateTokenPlan(_Plan):
    account: ServiceAccount
    body: CreatePersonalAccessToken
    request: WriteRequest

    action = CREATE_SERVICE_ACCOUNT_TOKEN
    nothing = "Nothing was created."
    snapshot = None

    @property
    def announced(self) -> tuple[Changes, ...]:
        return (Changes.of(Resource.SERVICE_ACCOUNTS, self.account.id),)

    def steps(self) -> tuple[Step, ...]:
        before = {"account": self.account.id, "username": self.account.username,
                  "description": self.body.description,
                  "expiresAt": _time(self.body.expiresAt)}  # fmt: skip
        # never retried: a second try could make a second token nobody has the secret of
        return (Step(self.request, [self.body.description], before, attempts=1,
                     after=_after_token),)  # fmt: skip

    @property
    def question(self) -> str:
        return (f"Create the token “{self.body.description}” of the service account "
                f"{account_label(self.account)}?")  # fmt: skip

    def lines(self) -> list[str]:
        return [
            f"A token “{self.body.description}” of the service account "
            f"{account_label(self.account)} will be created on {self.where}, expiring "
            f"{_time(self.body.expiresAt)}.",
            "It can do whatever the account's root role can. Its secret is shown once, now: "
            "keep it where secrets are kept. The journal records its description and the "
            "secret's last four characters, never the secret.",
            "It can be undone by deleting the token.",
        ]


def plan_create_token(
    account: ServiceAccount,
    description: str,
    expires: datetime,
    journal: Journal,
    now: datetime | None = None,
) -> CreateTokenPlan:
    """The plan to create a token of `account`; `ValueError` saying why for an empty
    description, one the account's tokens have already, or an expiry not in the future."""
    if not description.strip():
        raise ValueError("a token needs a description")
    if any(t.description == description for t in account.tokens):
        raise ValueError(f"the service account {account_label(account)} has a token described "
                         f"“{description}” already")  # fmt: skip
    if expires.tzinfo is None:
        raise ValueError("the expiry needs a time zone")
    if expires <= (now or datetime.now(UTC)):
        raise ValueError(f"the expiry {_time(expires)} is not in the future")
    try:
        body = CreatePersonalAccessToken(description=description, expiresAt=expires)
    except ValueError as exc:
        raise ValueError(_invalid(exc)) from None
    return CreateTokenPlan(journal, account, body,
                           create_service_account_token_request(account.id, body))  # fmt: skip


@dataclass(frozen=True)
class CreatedToken:
    """A token made: the server's answer, its secret included (show it once; keep it nowhere)."""

    plan: CreateTokenPlan
    token: CreatedPersonalAccessToken
    status: int
    entry: str

    @classmethod
    async def of(cls, client: AdminClient, done: Done) -> CreatedToken:
        """What `runner.carry_out` did with a `CreateTokenPlan`; the secret is registered with
        the log's redaction at once."""
        from app import logs

        token = await client.read_answer(done.answer, CreatedPersonalAccessToken)
        logs.register_secret(token.secret)
        return cls(done.plan, token, done.status, done.entry)


@dataclass(frozen=True)
class DeleteTokensPlan(_Plan):
    account: ServiceAccount
    tokens: tuple[PersonalAccessToken, ...]
    requests: tuple[WriteRequest, ...]
    #: the journal entry this deletion undoes (a token's creation), "" when it is not an undo
    undoes: str = ""

    action = DELETE_SERVICE_ACCOUNT_TOKEN
    nothing = "Nothing was deleted."
    snapshot = None

    @property
    def announced(self) -> tuple[Changes, ...]:
        return (Changes.of(Resource.SERVICE_ACCOUNTS, self.account.id),)

    def steps(self) -> tuple[Step, ...]:
        steps = []
        for token, request in zip(self.tokens, self.requests, strict=True):
            before: dict[str, Any] = {"account": self.account.id,
                                      "username": self.account.username,
                                      "description": token.description,
                                      "expiresAt": _time(token.expiresAt),
                                      "seenAt": _time(token.seenAt)}  # fmt: skip
            if self.undoes:
                before["undoes"] = self.undoes
            steps.append(Step(request, [token.id], before))
        return tuple(steps)

    @property
    def question(self) -> str:
        whose = f"of the service account {account_label(self.account)}"
        if self.undoes:
            return f"Undo the creation of the token {_token_label(self.tokens[0])} {whose}?"
        if len(self.tokens) == 1:
            return f"Delete the token {_token_label(self.tokens[0])} {whose}?"
        return f"Delete {plural(len(self.tokens), 'token')} {whose}?"

    def lines(self) -> list[str]:
        names = ", ".join(_token_label(t) for t in self.tokens)
        count = plural(len(self.tokens), "token")
        return [
            f"{count[:1].upper()}{count[1:]} of the service account "
            f"{account_label(self.account)} will be deleted on {self.where}: {names}.",
            "Whatever uses them is refused from its next request.",
            "A deleted token cannot be brought back: this cannot be undone.",
        ]

    def partly(self, steps: int) -> str:
        return f"{steps:,} of {plural(len(self.tokens), 'token')} were deleted"


def plan_delete_tokens(account: ServiceAccount, tokens: Sequence[PersonalAccessToken],
                       journal: Journal, undoes: str = "") -> DeleteTokensPlan:  # fmt: skip
    """The plan to delete `tokens` of `account` (as just listed), one request each."""
    if not tokens:
        raise ValueError("no token to delete")
    chosen = tuple(tokens)
    requests = tuple(delete_service_account_token_request(account.id, t.id) for t in chosen)
    return DeleteTokensPlan(journal, account, chosen, requests, undoes)
