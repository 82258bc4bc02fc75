"""Creating, deleting and changing the expiry of API tokens (`api_tokens.create`,
`api_tokens.delete`, `api_tokens.expire`), and undoing a creation or an expiry: the one path
`flagdesk tokens create|delete|expire` and the API tokens window (`app.viewmodels.api_tokens`)
take.

A token's secret is the credential itself, so flagdesk keeps it out of everything it writes:
the journal records a token's name, type, projects, environment and the secret's last four
characters (`secret_tail`, `…3f9a`); a deletion's snapshot holds the same for each token (and
when it was created, expires, was last seen), never the secret; the request is shown and
journaled with `…<last 4>` in place of the secret in its path (`WriteRequest.shown_path`), and
the client has the log hide the secret it sends (`app.logs.register_secret`). A created token's
secret is in the answer alone, which the caller shows once; the journal's `done` line keeps its
last four as the entry's `after` (`Step.after`).

1. `plan_create(body, journal, project=None)`: one `POST` (the project's path with a project).
   `type_refusal(caps, type)` says first why a release cannot make that type (`backend` before
   Unleash 7.0: 400).
2. `plan_delete(tokens, journal)`: one `DELETE` a token, each naming it by the `secret` its list
   item holds (Unleash: the secret; the sandbox: its masked handle, `sandbox.store.api_tokens`),
   a snapshot first; `confirm_text` asks for their number when there are several.
3. `plan_expire(token, when, journal)`: one `PUT {expiresAt}`, the previous expiry in the
   journal's `before`; undone by putting that back (`plan_undo_expire`), which cannot be done
   when there was none (the API takes a date, never "no expiry").
4. `plan_undo_create(entry, tokens now, journal)`: a creation is undone by deleting the token
   it made, found in the list by its name, type, environment and last four characters. A
   deletion cannot be undone: the secret is gone with it (a new token is another secret, which
   every program holding the old one would need).

What it relies on of the server: `DELETE` answers 200 for a token it does not know (every
release), so a token is read from the list before and named by what the list says; `POST`
answers 201 with the whole secret (every release).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from app.actions.journal import Entry, Journal
from app.actions.runner import PlanBase, Step, count_to_type
from app.actions.snapshots import wire_time, write_whole
from app.api.client import (
    WriteRequest,
    create_api_token_request,
    delete_api_token_request,
    expire_api_token_request,
    secret_tail,
)
from app.api.models import ApiToken, CreateApiToken
from app.changes import Changes, Resource
from app.registry import (
    CREATE_API_TOKEN,
    DELETE_API_TOKEN,
    EXPIRE_API_TOKEN,
    Action,
    version_tuple,
)
from app.text import plural

if TYPE_CHECKING:
    from app.api.capabilities import Capabilities
    from app.api.client import Answer

__all__ = [
    "ApiTokenCreation",
    "ApiTokenDeletion",
    "ApiTokenExpiry",
    "after_creation",
    "created_secret",
    "last_seen",
    "plan_create",
    "plan_delete",
    "plan_expire",
    "plan_undo_create",
    "plan_undo_expire",
    "scope_text",
    "token_facts",
    "type_refusal",
]

#: the tokens a confirmation names before "and N more"
NAMED = 5


def scope_text(token: ApiToken) -> str:
    """`default, web` or `all projects`, then the environment: `default / development`."""
    projects = token.scope
    where = "all projects" if projects in ([], ["*"]) else ", ".join(projects)
    return f"{where} / {token.environment or '*'}"


def token_facts(token: ApiToken) -> dict[str, Any]:
    """What flagdesk records of a token (journal, snapshot, `--json` of a deletion): never its
    secret, only its last four characters."""
    return {
        "name": token.name,
        "type": token.type,
        "projects": token.scope,
        "environment": token.environment,
        "secret": secret_tail(token.secret or ""),
        "createdAt": wire_time(token.createdAt) or None,
        "expiresAt": wire_time(token.expiresAt) or None,
        "seenAt": wire_time(token.seenAt) or None,
    }


def type_refusal(caps: Capabilities, kind: str) -> str:
    """Why the server cannot make a token of `kind` ("" when it can): `backend` came with
    Unleash 7.0 (5.12 and 6.10 answer 400: their schema has client and frontend)."""
    if kind.lower() != "backend" or caps.server_kind != "unleash":
        return ""
    version = version_tuple(caps.server_version)
    if version is not None and version < (7, 0):
        return (
            f"Unleash {caps.server_version} has no backend tokens (they came with 7.0): "
            "use --type client, the same token under its older name"
        )
    return ""


def after_creation(answer: Answer) -> dict[str, Any]:
    """What the journal keeps of a creation's answer (`Step.after`): the last four characters
    of the token's secret, which its undo finds it by, never the secret."""
    token = ApiToken.model_validate_json(answer.response.content)
    return {"secret": secret_tail(token.secret or "")}


def created_secret(entry: Entry) -> str:
    """The last four characters of the secret a `done` creation's entry kept ("" none)."""
    after = entry.after if isinstance(entry.after, dict) else {}
    return str(after.get("secret") or "")


@dataclass(frozen=True)
class ApiTokenCreation(PlanBase):
    """Creating one API token (a `runner.Plan`)."""

    body: CreateApiToken
    journal: Journal
    request: WriteRequest
    #: the project whose path it is created under (None: `/api/admin/api-tokens`)
    project: str | None = None

    nothing = "No token was created."
    snapshot: Path | None = None

    @property
    def action(self) -> Action:
        return CREATE_API_TOKEN

    @property
    def announced(self) -> tuple[Changes, ...]:
        return (Changes.of(Resource.API_TOKENS),)

    @property
    def projects(self) -> list[str]:
        return [self.project] if self.project else list(self.body.projects or ["*"])

    def steps(self) -> tuple[Step, ...]:
        before = {
            "name": self.body.tokenName,
            "type": self.body.type.lower(),
            "projects": self.projects,
            "environment": self.body.environment,
            "expiresAt": wire_time(self.body.expiresAt) or None,
        }
        return (
            Step(self.request, [self.body.tokenName], before, with_body=True,
                 after=after_creation),
        )  # fmt: skip

    @property
    def question(self) -> str:
        return f"Create API token “{self.body.tokenName}”?"

    def lines(self) -> list[str]:
        b = self.body
        where = "all projects" if self.projects == ["*"] else ", ".join(self.projects)
        expires = f", expiring {wire_time(b.expiresAt)}" if b.expiresAt else ", with no expiry"
        environment = b.environment or "the server's default"
        return [
            f"A {b.type.lower()} token “{b.tokenName}” will be created on {self.server} "
            f"(connection “{self.journal.actor.connection}”) for {where}, environment "
            f"{environment}{expires}.",
            "Its secret is shown once, now; flagdesk keeps only its last four characters.",
            "Deleting it is the way back (flagdesk journal undo ENTRY).",
        ]


def plan_create(
    body: CreateApiToken, journal: Journal, project: str | None = None
) -> ApiTokenCreation:
    """The plan to create the token `body` describes (under `project`'s path when given)."""
    return ApiTokenCreation(body, journal, create_api_token_request(body, project), project)


@dataclass(frozen=True)
class ApiTokenDeletion(PlanBase):
    """Deleting one or more API tokens, one request each (a `runner.Plan`)."""

    tokens: tuple[ApiToken, ...]
    journal: Journal
    snapshot: Path | None
    #: this plan undoes a creation (the entry's id)
    undoes: str = ""

    nothing = "No token was deleted."

    @property
    def action(self) -> Action:
        return DELETE_API_TOKEN

    @property
    def announced(self) -> tuple[Changes, ...]:
        return (Changes.of(Resource.API_TOKENS),)

    @property
    def confirm_text(self) -> str | None:
        return count_to_type(len(self.tokens))

    @property
    def requests(self) -> list[WriteRequest]:
        return [delete_api_token_request(t.secret or "") for t in self.tokens]

    def steps(self) -> tuple[Step, ...]:
        steps = []
        for token, request in zip(self.tokens, self.requests, strict=True):
            before: dict[str, Any] = token_facts(token)
            if self.snapshot is not None:
                before = {"snapshot": self.snapshot.name, **before}
            if self.undoes:
                before["undoes"] = self.undoes
            steps.append(Step(request, [secret_tail(token.secret or "")], before))
        return tuple(steps)

    def write_snapshot(self) -> object:
        assert self.snapshot is not None

        def fill(f: TextIO) -> int:
            json.dump({"tokens": [token_facts(t) for t in self.tokens]}, f,
                      ensure_ascii=False, indent=2)  # fmt: skip
            return len(self.tokens)

        return write_whole(self.snapshot, fill)

    def partly(self, steps: int) -> str:
        return f"{steps:,} of {plural(len(self.tokens), 'token')} were deleted"

    @property
    def question(self) -> str:
        if len(self.tokens) == 1:
            return f"Delete API token “{self.tokens[0].name}”?"
        return f"Delete {len(self.tokens):,} API tokens?"

    def lines(self) -> list[str]:
        shown = [f"“{t.name}” ({t.type}, {scope_text(t)}, {secret_tail(t.secret or '')}, "
                 f"{last_seen(t)})" for t in self.tokens[:NAMED]]  # fmt: skip
        if len(self.tokens) > NAMED:
            shown.append(f"and {len(self.tokens) - NAMED:,} more")
        where = f"on {self.server} (connection “{self.journal.actor.connection}”)"
        return [
            f"{plural(len(self.tokens), 'API token')} will be deleted {where}: "
            + "; ".join(shown)
            + ".",
            "Every program using one of them loses access once the server notices "
            "(Unleash: within about a minute).",
            f"A snapshot of the tokens (no secrets) is written first to {self.snapshot}.",
            "This cannot be undone: a deleted token's secret is gone; a new token has another.",
        ]


def last_seen(token: ApiToken) -> str:
    """`last seen 2026-12-01 10:02 UTC` or `never seen` (as far as the server says)."""
    if token.seenAt is None:
        return "never seen"
    return f"last seen {token.seenAt.strftime('%Y-%m-%d %H:%M %Z').strip()}"


def plan_delete(
    tokens: Sequence[ApiToken], journal: Journal, *, undoes: str = ""
) -> ApiTokenDeletion:
    """The plan to delete `tokens` (as the list read them, each with its `secret`)."""
    missing = [t.name for t in tokens if not t.secret]
    if missing:
        raise ValueError(f"the server listed no secret for {', '.join(missing)}: cannot name it")
    return ApiTokenDeletion(
        tuple(tokens), journal, journal.new_file(DELETE_API_TOKEN.key, ".json"), undoes
    )


def plan_undo_create(
    entry: Entry, tokens: Sequence[ApiToken], journal: Journal
) -> ApiTokenDeletion:
    """The deletion that undoes the creation `entry` made: the token listed now with its name,
    type, environment and the last four characters the entry kept (`after`). `ValueError` saying why
    when it is not exactly one."""
    before = entry.before if isinstance(entry.before, dict) else {}
    tail = created_secret(entry)
    if not tail:
        raise ValueError("the entry does not say which secret was created")
    found = [
        t for t in tokens
        if t.name == before.get("name") and t.type == before.get("type")
        and secret_tail(t.secret or "") == tail
        and (before.get("environment") in (None, t.environment))
    ]  # fmt: skip
    if not found:
        raise ValueError(f"the token “{before.get('name')}” ({tail}) is gone from the server")
    if len(found) > 1:
        raise ValueError(f"{len(found)} tokens named “{before.get('name')}” end with {tail}: "
                         "delete the right one with flagdesk tokens delete")  # fmt: skip
    return plan_delete(found, journal, undoes=entry.id)


@dataclass(frozen=True)
class ApiTokenExpiry(PlanBase):
    """Changing one API token's expiry (a `runner.Plan`)."""

    token: ApiToken
    expires: datetime
    journal: Journal
    #: this plan undoes an earlier change (the entry's id)
    undoes: str = ""

    nothing = "No expiry was changed."
    snapshot: Path | None = None

    @property
    def action(self) -> Action:
        return EXPIRE_API_TOKEN

    @property
    def announced(self) -> tuple[Changes, ...]:
        return (Changes.of(Resource.API_TOKENS),)

    @property
    def request(self) -> WriteRequest:
        return expire_api_token_request(self.token.secret or "", self.expires)

    def steps(self) -> tuple[Step, ...]:
        before = token_facts(self.token)  # its `expiresAt`: what an undo puts back
        if self.undoes:
            before["undoes"] = self.undoes
        return (Step(self.request, [secret_tail(self.token.secret or "")], before,
                     with_body=True),)  # fmt: skip

    @property
    def question(self) -> str:
        return f"Change the expiry of API token “{self.token.name}”?"

    def lines(self) -> list[str]:
        t = self.token
        now = wire_time(t.expiresAt) or "never"
        return [
            f"API token “{t.name}” ({t.type}, {scope_text(t)}, {secret_tail(t.secret or '')}) on "
            f"{self.server} will expire at {wire_time(self.expires)} (now: {now}).",
            "A date in the past ends it (Unleash 8.2 refuses it at once; earlier releases "
            "after their next token refresh).",
            "Undo puts the previous expiry back"
            + (" (it had none: the API cannot take an expiry away)." if t.expiresAt is None
               else "."),
        ]  # fmt: skip


def plan_expire(
    token: ApiToken, expires: datetime, journal: Journal, *, undoes: str = ""
) -> ApiTokenExpiry:
    """The plan to make `token` (as the list read it, with its `secret`) expire at `expires`."""
    if not token.secret:
        raise ValueError(f"the server listed no secret for {token.name}: cannot name it")
    return ApiTokenExpiry(token, expires, journal, undoes)


def plan_undo_expire(entry: Entry, tokens: Sequence[ApiToken], journal: Journal) -> ApiTokenExpiry:
    """The expiry change that puts back what `entry` changed: the token listed now with the
    entry's name and last four, its previous expiry. `ValueError` saying why when it had none
    or the token is gone."""
    before = entry.before if isinstance(entry.before, dict) else {}
    previous = before.get("expiresAt")
    if not previous:
        raise ValueError("the token had no expiry before, and the API cannot take one away")
    found = [t for t in tokens if t.name == before.get("name")
             and secret_tail(t.secret or "") == before.get("secret")]  # fmt: skip
    if len(found) != 1:
        raise ValueError(
            f"the token “{before.get('name')}” ({before.get('secret')}) is "
            + ("gone from the server" if not found else "not the only one so")
        )
    return plan_expire(found[0], datetime.fromisoformat(previous), journal, undoes=entry.id)
