"""Creating and deleting the connected user's personal access tokens (`personal_tokens.create`,
`personal_tokens.delete`): the one path `flagdesk pats` and its window
(`app.viewmodels.personal_tokens`) take.

A personal access token (PAT) is its user's: Unleash lists, creates and deletes the tokens of
the user behind the token sent, and refuses an admin API token ("PATs require an authenticated
user.", 403; a DELETE sent with one is a 500 of its database). So both actions need a personal
access token (`app.registry`), which `runner.require` checks before anything is planned: with an
admin API token nothing is ever sent.

- `plan_create`: the description (Unleash keeps one token of each description per user: 409)
  and the expiry, which must be in the future (400: refused here first). The answer holds the
  token's secret, the only time the server shows it: `Created.of` reads it for the caller to
  show once. The journal records the description and the expiry before, and after (`after`)
  the new token's id and its secret's last four characters (`secret_end`): never the secret.
  The secret is registered with the log's redaction (`app.logs.register_secret`) as soon as it
  is read, so no line of the log can hold it either.
- `plan_delete`: one or more of the user's tokens as just listed, one request each (Unleash has
  no bulk deletion). An id that is not the user's is a 200 that does nothing on Unleash 8 and a
  404 on 5 to 7: the tokens are read first, so only listed ones are sent. A deleted token stops
  working at its next request: if the connection uses it, it stops too (the confirmation says
  so: which token a connection uses cannot be told, the list holds no secrets).

Undo: a creation is undone by deleting the token it made (its id, from the journal's `after`);
a deletion cannot be undone (a new token would have a new secret: whoever used the old one
needs the new one anyway).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, ClassVar

from app.actions.journal import Journal
from app.actions.runner import Done, PlanBase, Step
from app.api.client import Answer, WriteRequest, create_pat_request, delete_pat_request
from app.api.models import (
    CreatedPersonalAccessToken,
    CreatePersonalAccessToken,
    PersonalAccessToken,
)
from app.changes import Changes, Resource
from app.registry import CREATE_PAT, DELETE_PAT
from app.text import plural

if TYPE_CHECKING:
    from app.api.client import AdminClient

__all__ = [
    "CreatePatPlan",
    "Created",
    "DeletePatsPlan",
    "NotFound",
    "after_creation",
    "find_tokens",
    "pat_json",
    "pat_label",
    "plan_create",
    "plan_delete",
    "secret_end",
]

#: how many of a secret's last characters the journal and the list may name
SECRET_END = 4


def secret_end(secret: str) -> str:
    """The last four characters of `secret`: what may be written of it (the journal, a line
    that names which token was made)."""
    return secret[-SECRET_END:]


def pat_label(pat: PersonalAccessToken) -> str:
    """ "“ci deploy” (id 12)"."""
    return f"“{pat.description}” (id {pat.id})"


def _time(value: datetime | None) -> str | None:
    if value is None:
        return None
    return value.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def pat_json(pat: PersonalAccessToken) -> dict[str, Any]:
    """A token as `--json` lists it: the wire's fields, never a secret."""
    return {
        "id": pat.id,
        "description": pat.description,
        "expiresAt": _time(pat.expiresAt),
        "userId": pat.userId,
        "createdAt": _time(pat.createdAt),
        "seenAt": _time(pat.seenAt),
    }


@dataclass(frozen=True)
class _Plan(PlanBase):
    journal: Journal

    snapshot: ClassVar[None] = None

    @property
    def connection(self) -> str:
        return self.journal.actor.connection

    @property
    def owner(self) -> str:
        """Whose tokens these are: the user the connection's token acts as."""
        return self.journal.actor.user or "the connection's user"

    @property
    def where(self) -> str:
        return f"{self.server} (connection “{self.connection}”)"


# ---------------------------------------------------------------------------- create


def after_creation(answer: Answer) -> dict[str, Any]:
    """What the journal keeps of a creation's answer: the token's id and its secret's last four
    characters (never the secret)."""
    made = CreatedPersonalAccessToken.model_validate_json(answer.response.content)
    return {"id": made.id, "secretEnd": secret_end(made.secret)}


@dataclass(frozen=True)
class CreatePatPlan(_Plan):
    body: CreatePersonalAccessToken
    request: WriteRequest

    action = CREATE_PAT
    nothing = "Nothing was created."

    @property
    def announced(self) -> tuple[Changes, ...]:
        return (Changes.of(Resource.PERSONAL_TOKENS),)

    def steps(self) -> tuple[Step, ...]:
        before = {"description": self.body.description, "expiresAt": _time(self.body.expiresAt)}
        # never retried: a second try could make a second token nobody has the secret of
        return (Step(self.request, [self.body.description], before, attempts=1,
                     after=after_creation),)  # fmt: skip

    @property
    def question(self) -> str:
        return f"Create the personal access token “{self.body.description}”?"

    def lines(self) -> list[str]:
        return [
            f"A personal access token “{self.body.description}” of {self.owner} will be "
            f"created on {self.where}, expiring {_time(self.body.expiresAt)}.",
            "It can do whatever its user can. Its secret is shown once, now: keep it where "
            "secrets are kept. The journal records its description and the secret's last four "
            "characters, never the secret.",
            "It can be undone by deleting the token.",
        ]


def plan_create(description: str, expires: datetime, journal: Journal,
                now: datetime | None = None) -> CreatePatPlan:  # fmt: skip
    """The plan to create a token described `description` expiring at `expires` (aware);
    `ValueError` saying why for an empty description or an expiry not in the future (the
    server would refuse both)."""
    if not description.strip():
        raise ValueError("a personal access token needs a description")
    if expires.tzinfo is None:
        raise ValueError("the expiry needs a time zone")
    if expires <= (now or datetime.now(UTC)):
        raise ValueError(f"the expiry {_time(expires)} is not in the future")
    body = CreatePersonalAccessToken(description=description, expiresAt=expires)
    return CreatePatPlan(journal, body, create_pat_request(body))


@dataclass(frozen=True)
class Created:
    """A token made: the server's answer, its secret included (show it once; keep it nowhere)."""

    plan: CreatePatPlan
    token: CreatedPersonalAccessToken
    status: int
    entry: str

    @classmethod
    async def of(cls, client: AdminClient, done: Done) -> Created:
        """What `runner.carry_out` did with a `CreatePatPlan`. The secret is registered with the
        log's redaction at once."""
        from app import logs

        token = await client.read_answer(done.answer, CreatedPersonalAccessToken)
        logs.register_secret(token.secret)
        return cls(done.plan, token, done.status, done.entry)


# ---------------------------------------------------------------------------- delete


class NotFound(ValueError):
    """Words that name none of the user's tokens, or more than one; `str()` says which."""


def find_tokens(asked: Sequence[str], tokens: Sequence[PersonalAccessToken],
                server: str) -> list[PersonalAccessToken]:  # fmt: skip
    """The tokens `asked` names, each by its description (exactly) or its id, in the order
    asked, once each. `NotFound` naming every word that names none, or a word that is one
    token's description and another's id."""
    by_description = {t.description: t for t in tokens}
    by_id = {str(t.id): t for t in tokens}
    found: dict[int, PersonalAccessToken] = {}
    missing: list[str] = []
    for word in asked:
        named = by_description.get(word)
        numbered = by_id.get(word.strip())
        if named is not None and numbered is not None and named.id != numbered.id:
            raise NotFound(f"“{word}” is the description of token {named.id} and the id of "
                           f"{pat_label(numbered)}: name it by the other")  # fmt: skip
        token = named or numbered
        if token is None:
            missing.append(word)
        else:
            found.setdefault(token.id, token)
    if missing:
        names = ", ".join(f"“{w}”" for w in missing)
        raise NotFound(f"no personal access token of this user on {server} is described or "
                       f"numbered {names}")  # fmt: skip
    return list(found.values())


@dataclass(frozen=True)
class DeletePatsPlan(_Plan):
    tokens: tuple[PersonalAccessToken, ...]
    requests: tuple[WriteRequest, ...]
    #: the journal entry this deletion undoes (a creation), "" when it is not an undo
    undoes: str = ""

    action = DELETE_PAT
    nothing = "Nothing was deleted."

    @property
    def announced(self) -> tuple[Changes, ...]:
        return (Changes.of(Resource.PERSONAL_TOKENS, *(t.id for t in self.tokens)),)

    def steps(self) -> tuple[Step, ...]:
        steps = []
        for token, request in zip(self.tokens, self.requests, strict=True):
            before: dict[str, Any] = {"description": token.description,
                                      "expiresAt": _time(token.expiresAt),
                                      "seenAt": _time(token.seenAt)}  # fmt: skip
            if self.undoes:
                before["undoes"] = self.undoes
            steps.append(Step(request, [token.id], before))
        return tuple(steps)

    @property
    def question(self) -> str:
        if self.undoes:
            return f"Undo the creation of the personal access token {pat_label(self.tokens[0])}?"
        if len(self.tokens) == 1:
            return f"Delete the personal access token {pat_label(self.tokens[0])}?"
        return f"Delete {plural(len(self.tokens), 'personal access token')}?"

    def lines(self) -> list[str]:
        names = ", ".join(pat_label(t) for t in self.tokens)
        count = plural(len(self.tokens), "personal access token")
        return [
            f"{count[:1].upper()}{count[1:]} of {self.owner} will be deleted on {self.where}: "
            f"{names}.",
            "Whatever uses them is refused from its next request, this connection too if its "
            "token is one of them.",
            "A deleted token cannot be brought back: this cannot be undone.",
        ]

    def partly(self, steps: int) -> str:
        return f"{steps:,} of {plural(len(self.tokens), 'personal access token')} were deleted"


def plan_delete(tokens: Sequence[PersonalAccessToken], journal: Journal,
                undoes: str = "") -> DeletePatsPlan:  # fmt: skip
    """The plan to delete `tokens` (as just listed), one request each. `ValueError` for none."""
    if not tokens:
        raise ValueError("no personal access token to delete")
    chosen = tuple(tokens)
    return DeletePatsPlan(journal, chosen, tuple(delete_pat_request(t.id) for t in chosen),
                          undoes)  # fmt: skip
