"""Checking a change in doubt against the server: did it happen?

An entry is in doubt when its request went out and no answer said what came of it (the process
died, the connection broke, a gateway answered 502 or 504). The server knows: `check_entry`
reads what the action would have changed and gives a `Verdict`; `settle` appends it to the
journal as the entry's outcome, with the time of the check, so the History says what is known
and how it became known. An action without a way to check (`CHECKS` has none for it) stays in
doubt, and the History says to look on the server.

- `inactive_users.delete`: one read of the users' list (not one request per user: a deletion can
  hold 10,000): every id gone is done; none gone is failed (nothing changed); some gone is a
  failed request that changed part (Unleash stops at the first id it cannot delete, keeping the
  deletions before it), and the verdict names the ones still there. `users.delete` the same.
- `users.create`: one read of the users' list: a user with the email (or username) the entry
  names is there (done) or not (failed).
- the edits (`users.edit`, `groups.edit`, `context_fields.edit`): the entry holds the body sent
  (`request.body`) and what the thing held before (`before`); one read of the user, group or
  field: the server's state equal to the body sent is done; equal to the state before is failed
  (not applied); anything else stays in doubt, saying it was changed by someone else since
  (compare it with the snapshot). An edit journaled without its body (by an older flagdesk)
  cannot be checked.
- `users.reset_password` cannot be told from what the server holds: it stays in doubt.
- the archived flags' revive, delete and archive (one flag or a project's batch): one read of
  the project's archive and one of its live flags (the project is in the entry's `before`):
  revived is live and not archived, deleted is in neither, archived is in the archive; all,
  none or some, as above.
- `context_fields.create` / `.delete`: one read of the field: there (created) or gone (deleted)
  is done, the other way round failed.
- `groups.delete`: the group's id is no longer listed; `groups.create` (a deleted group
  recreated by Undo): a group with the entry's name is listed.
- `api_tokens.delete`: one read of the token list: a token of the entry's name whose secret
  ends with the entry's last four is still there (failed) or not (done); `api_tokens.create`:
  a token of the entry's name, type and environment created since the entry is listed (done:
  its secret was never shown) or not (failed); `api_tokens.expire`: the token's expiry now is
  the one sent (done), the one before (failed), or another (in doubt).
- `personal_tokens.create` / `.delete`: one read of the connection's user's tokens: one with
  the entry's description there (created: done, though its secret was never shown, which the
  verdict says) or not; the ids gone (deleted) or not. The tokens are the connection's user's:
  checked with the token of the user who made the change.
- `roles.create`: a role of the entry's name is listed (done) or not (failed); `roles.delete`:
  the role's id is gone (done) or still there (failed); `roles.edit`: the role now, compared
  with the body sent and the body before (as the other edits).
- `service_accounts.*`: one read of the service accounts' list: a created account's username
  is there or not; a deleted one's id gone or not; an edit's name and root role compared as
  the other edits; a token created: one of the entry's description on the account (done,
  its secret never shown) or not; tokens deleted: their ids gone from the account or not.
- `project_access.grant`, `.set_roles`, `.revoke`: one read of the project's access: each user
  and group the entry names holds what the change gave it (a grant: the roles it added; a
  change or revocation: exactly the roles sent, none for a revocation) (done), or still what it
  held before (failed); anything else stays in doubt (changed since).
- `compare.promote`: a creation (a flag, segment, context field, tag type) is there or not, a
  flag archived gone or not; its other requests stay in doubt (compare the server with the
  promote's snapshot, named in the verdict).
- `instance.maintenance`: one read of the switch: as sent (done), as before (failed);
  `instance.cors`: the origins `ui-config` lists now compared with the list sent and the one
  before, as the edits; `banners.create`: a banner of the entry's message is listed (done) or
  not; `banners.delete`: its id gone or not; `banners.edit`: the banner now compared with the
  body sent and the body before (issue 38).
- `metrics.upload` is not checked here: its bodies in doubt are checked against the server's
  totals by resuming the upload (its ledger knows each body), which the verdict says, naming
  the ledger's folder; the entry stays in doubt (`can_check` is false).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from app.actions.context_fields import body_of
from app.actions.groups import request_of
from app.actions.journal import Entry, Journal, Pending, State
from app.api.errors import NotFound
from app.registry import (
    ACTIONS_BY_KEY,
    ARCHIVE_FEATURES,
    CREATE_API_TOKEN,
    CREATE_BANNER,
    CREATE_CONTEXT_FIELD,
    CREATE_GROUP,
    CREATE_PAT,
    CREATE_ROLE,
    CREATE_SERVICE_ACCOUNT,
    CREATE_SERVICE_ACCOUNT_TOKEN,
    CREATE_USER,
    DELETE_API_TOKEN,
    DELETE_BANNER,
    DELETE_CONTEXT_FIELD,
    DELETE_FEATURE,
    DELETE_FEATURES,
    DELETE_GROUP,
    DELETE_INACTIVE_USERS,
    DELETE_PAT,
    DELETE_ROLE,
    DELETE_SERVICE_ACCOUNT,
    DELETE_SERVICE_ACCOUNT_TOKEN,
    DELETE_USER,
    EDIT_BANNER,
    EDIT_CONTEXT_FIELD,
    EDIT_GROUP,
    EDIT_ROLE,
    EDIT_SERVICE_ACCOUNT,
    EDIT_USER,
    EXPIRE_API_TOKEN,
    PROMOTE,
    REVIVE_FEATURE,
    REVIVE_FEATURES,
    SET_CORS,
    SWITCH_MAINTENANCE,
    UPLOAD_METRICS,
)
from app.text import plural

if TYPE_CHECKING:
    from app.api.client import AdminClient
    from app.api.models import ContextField

__all__ = ["CHECKS", "Verdict", "can_check", "check_entry", "settle"]

#: the ids a verdict names before "and N more"
NAMED = 5


@dataclass(frozen=True)
class Verdict:
    """What the server says of an entry in doubt: `DONE` (the change is there), `FAILED` (it
    is not, or only in part), or `IN_DOUBT` (the check could not tell)."""

    state: State
    message: str


def _names_text(names: Sequence[object]) -> str:
    shown = ", ".join(str(n) for n in names[:NAMED])
    return shown + (f" and {len(names) - NAMED} more" if len(names) > NAMED else "")


def _verdict(
    wanted: Sequence[object], changed: AbstractSet[object], noun: str, done: str, left: str
) -> Verdict:
    """The verdict of a change to `wanted` of which the server shows `changed` done: all of
    them done, none of them (failed: nothing changed), or some (failed, partly, naming the
    ones left)."""
    still = [w for w in wanted if w not in changed]
    if not still:
        return Verdict(State.DONE, f"every one of the {plural(len(wanted), noun)} is {done}")
    if len(still) == len(wanted):
        return Verdict(State.FAILED, f"no {noun} was {done}: {_names_text(still)} {left}")
    return Verdict(
        State.FAILED,
        f"partly: {len(wanted) - len(still)} of {plural(len(wanted), noun)} {done}; "
        f"{left}: {_names_text(still)}",
    )


async def _users_gone(client: AdminClient, entry: Entry) -> Verdict:
    wanted: list[object] = [i for i in entry.ids if isinstance(i, int)]
    present = {user.id for user in (await client.list_users()).users}
    return _verdict(wanted, set(wanted) - present, "user", "deleted", "still there")


async def _user_made(client: AdminClient, entry: Entry) -> Verdict:
    wanted = {i for i in entry.ids if isinstance(i, str)}
    users = (await client.list_users()).users
    if any(u.email in wanted or u.username in wanted for u in users):
        return Verdict(State.DONE, f"the user {', '.join(sorted(wanted))} is there")
    return Verdict(State.FAILED, f"no user {', '.join(sorted(wanted))} on the server")


async def _flags(client: AdminClient, entry: Entry) -> tuple[list[object], set[str], set[str]]:
    """The entry's flags, and its project's archived and live flags as the server has them."""
    before = entry.before if isinstance(entry.before, dict) else {}
    project = str(before.get("project") or "default")
    archived = {f.name for f in (await client.archived_features(project)).features}
    live = {f.name for f in (await client.project_features(project)).features}
    return [n for n in entry.ids if isinstance(n, str)], archived, live


async def _flags_revived(client: AdminClient, entry: Entry) -> Verdict:
    wanted, archived, live = await _flags(client, entry)
    return _verdict(wanted, live - archived, "flag", "revived", "still archived")


async def _flags_deleted(client: AdminClient, entry: Entry) -> Verdict:
    wanted, archived, live = await _flags(client, entry)
    return _verdict(wanted, set(wanted) - archived - live, "flag", "deleted", "still archived")


async def _flags_archived(client: AdminClient, entry: Entry) -> Verdict:
    wanted, archived, _live = await _flags(client, entry)
    return _verdict(wanted, archived, "flag", "archived", "still live")


async def _field_now(client: AdminClient, entry: Entry) -> tuple[str, ContextField | None]:
    name = str(entry.ids[0]) if entry.ids else ""
    try:
        return name, await client.get_context_field(name)
    except NotFound:
        return name, None


async def _field_created(client: AdminClient, entry: Entry) -> Verdict:
    name, field = await _field_now(client, entry)
    if field is None:
        return Verdict(State.FAILED, f"no context field “{name}” on the server")
    return Verdict(State.DONE, f"the context field “{name}” exists")


async def _field_deleted(client: AdminClient, entry: Entry) -> Verdict:
    name, field = await _field_now(client, entry)
    if field is None:
        return Verdict(State.DONE, f"the context field “{name}” is gone")
    return Verdict(State.FAILED, f"the context field “{name}” is still there")


def _edit_verdict(what: str, now: object, sent: object, before: object) -> Verdict:
    """The verdict of an edit of `what` whose server state is `now` (None: gone), given the
    state the body `sent` makes and the state `before` it (each in the same comparable form)."""
    if now is None:
        return Verdict(State.IN_DOUBT, f"{what} is no longer on the server: deleted since?")
    if now == sent:
        return Verdict(State.DONE, f"{what} is as the change left it")
    if before is not None and now == before:
        return Verdict(State.FAILED, f"not applied: {what} is as it was before the change")
    return Verdict(
        State.IN_DOUBT,
        f"{what} is neither as the change would have left it nor as it was before: changed "
        "by someone else since. Compare it with the snapshot",
    )


def _sent(entry: Entry) -> dict[str, Any]:
    body = (entry.request or {}).get("body")
    return body if isinstance(body, dict) else {}


def _before(entry: Entry) -> dict[str, Any]:
    return entry.before if isinstance(entry.before, dict) else {}


def _field_state(body: dict[str, Any] | None) -> object:
    """A context field's body in a form to compare: legal values by value, unordered; not the
    sort order, which Unleash 8.2's `PUT` sets to 0 whatever is sent (an edit that took would
    otherwise look changed by someone else)."""
    if body is None:
        return None
    values = sorted((str(v.get("value")), v.get("description") or None)
                    for v in body.get("legalValues") or [])  # fmt: skip
    return (body.get("description") or None, bool(body.get("stickiness")), values)


async def _field_edited(client: AdminClient, entry: Entry) -> Verdict:
    name, field = await _field_now(client, entry)
    now = body_of(field).model_dump(mode="json", exclude_none=True) if field else None
    before = _before(entry).get("body")
    return _edit_verdict(f"the context field “{name}”", _field_state(now),
                         _field_state(_sent(entry)),
                         _field_state(before if isinstance(before, dict) else None))  # fmt: skip


def _group_state(body: dict[str, Any] | None) -> object:
    """A group's body (`CreateGroup` as JSON) in a form to compare: members by id, unordered."""
    if body is None:
        return None
    members = sorted(int((m.get("user") or {}).get("id", -1)) for m in body.get("users") or [])
    return (body.get("name"), body.get("description") or None,
            sorted(body.get("mappingsSSO") or []), body.get("rootRole"), members)  # fmt: skip


async def _group_edited(client: AdminClient, entry: Entry) -> Verdict:
    group_id = next((i for i in entry.ids if isinstance(i, int)), -1)
    try:
        group = await client.get_group(group_id)
    except NotFound:
        now = None
    else:
        now = request_of(group).model_dump(mode="json")
    before = _before(entry).get("body")
    name = _before(entry).get("name") or group_id
    return _edit_verdict(f"the group “{name}”", _group_state(now), _group_state(_sent(entry)),
                         _group_state(before if isinstance(before, dict) else None))  # fmt: skip


async def _user_edited(client: AdminClient, entry: Entry) -> Verdict:
    user_id = next((i for i in entry.ids if isinstance(i, int)), -1)
    sent = _sent(entry)
    before = _before(entry).get("user")
    try:
        user = await client.get_user(user_id)
    except NotFound:
        now = None
    else:
        now = {name: getattr(user, name, None) for name in sent}

    def state(values: dict[str, Any] | None) -> object:
        if values is None:
            return None
        return {name: (str(values.get(name) or "").casefold() if name == "email"
                       else values.get(name)) for name in sent}  # fmt: skip

    return _edit_verdict(f"user {user_id}", state(now), state(sent),
                         state(before if isinstance(before, dict) else None))  # fmt: skip


async def _group_gone(client: AdminClient, entry: Entry) -> Verdict:
    wanted: list[object] = [i for i in entry.ids if isinstance(i, int)]
    present = {group.id for group in (await client.list_groups()).groups}
    return _verdict(wanted, set(wanted) - present, "group", "deleted", "still there")


async def _group_made(client: AdminClient, entry: Entry) -> Verdict:
    before = entry.before if isinstance(entry.before, dict) else {}
    name = str(before.get("name") or "")
    present = {group.name for group in (await client.list_groups()).groups}
    return _verdict([name], present, "group", "created", "not there")


async def _api_token_gone(client: AdminClient, entry: Entry) -> Verdict:
    """A token of the entry's name whose secret ends as the entry says is listed, or not."""
    from app.api.client import secret_tail

    before = _before(entry)
    name, tail = before.get("name"), before.get("secret")
    listed = (await client.api_tokens()).tokens
    if any(t.name == name and secret_tail(t.secret or "") == tail for t in listed):
        return Verdict(State.FAILED, f"API token “{name}” ({tail}) is still there")
    return Verdict(State.DONE, f"API token “{name}” ({tail}) is gone")


async def _api_token_made(client: AdminClient, entry: Entry) -> Verdict:
    """A token of the entry's name, type and environment created since the entry began is
    listed (done), or none is (failed). Its secret is not known: the answer never came."""
    before = _before(entry)
    since = entry.time.timestamp() - 60  # the server's clock may run a little behind
    made = [
        t for t in (await client.api_tokens()).tokens
        if t.name == before.get("name") and t.type == before.get("type")
        and before.get("environment") in (None, t.environment)
        and t.createdAt is not None and t.createdAt.timestamp() >= since
    ]  # fmt: skip
    if made:
        return Verdict(State.DONE, f"API token “{before.get('name')}” was created "
                       "(its secret was never shown: delete it and create another)")  # fmt: skip
    return Verdict(State.FAILED, f"no API token “{before.get('name')}” was created")


async def _api_token_expiry(client: AdminClient, entry: Entry) -> Verdict:
    """The token's expiry now: the one sent (done), the one before (failed), else in doubt."""
    from app.api.client import secret_tail

    before, sent = _before(entry), _sent(entry) or {}
    name, tail = before.get("name"), before.get("secret")
    found = [t for t in (await client.api_tokens()).tokens
             if t.name == name and secret_tail(t.secret or "") == tail]  # fmt: skip
    if not found:
        return Verdict(State.IN_DOUBT, f"API token “{name}” ({tail}) is gone from the server")
    now = found[0].expiresAt
    wanted = sent.get("expiresAt")
    if now is not None and wanted and now == datetime.fromisoformat(str(wanted)):
        return Verdict(State.DONE, f"API token “{name}” expires as sent")
    previous = before.get("expiresAt")
    if (now is None and not previous) or (
        now is not None and previous and now == datetime.fromisoformat(str(previous))
    ):
        return Verdict(State.FAILED, f"API token “{name}” expires as before (not applied)")
    return Verdict(State.IN_DOUBT, f"API token “{name}” expires otherwise: changed since")


async def _pat_made(client: AdminClient, entry: Entry) -> Verdict:
    description = str(entry.ids[0]) if entry.ids else ""
    tokens = (await client.personal_tokens()).pats
    made = [t for t in tokens if t.description == description]
    if not made:
        return Verdict(State.FAILED, f"no personal access token “{description}” of this user")
    return Verdict(
        State.DONE,
        f"the personal access token “{description}” exists (id {made[0].id}), but its secret "
        "was never shown: delete it and create another",
    )


async def _pats_gone(client: AdminClient, entry: Entry) -> Verdict:
    wanted: list[object] = [i for i in entry.ids if isinstance(i, int)]
    present = {t.id for t in (await client.personal_tokens()).pats}
    return _verdict(wanted, set(wanted) - present, "personal access token", "deleted",
                    "still there")  # fmt: skip


#: how each action that can be checked is checked
CHECKS: dict[str, Callable[[AdminClient, Entry], Awaitable[Verdict]]] = {
    DELETE_INACTIVE_USERS.key: _users_gone,
    DELETE_USER.key: _users_gone,
    CREATE_USER.key: _user_made,
    REVIVE_FEATURE.key: _flags_revived,
    REVIVE_FEATURES.key: _flags_revived,
    DELETE_FEATURE.key: _flags_deleted,
    DELETE_FEATURES.key: _flags_deleted,
    ARCHIVE_FEATURES.key: _flags_archived,
    CREATE_CONTEXT_FIELD.key: _field_created,
    DELETE_CONTEXT_FIELD.key: _field_deleted,
    EDIT_CONTEXT_FIELD.key: _field_edited,
    DELETE_GROUP.key: _group_gone,
    CREATE_GROUP.key: _group_made,
    EDIT_GROUP.key: _group_edited,
    EDIT_USER.key: _user_edited,
    CREATE_API_TOKEN.key: _api_token_made,
    DELETE_API_TOKEN.key: _api_token_gone,
    EXPIRE_API_TOKEN.key: _api_token_expiry,
    CREATE_PAT.key: _pat_made,
    DELETE_PAT.key: _pats_gone,
}

# project access: grants, changes of roles, revocations


async def _project_access_checked(client: AdminClient, entry: Entry) -> Verdict:
    from app.actions.project_access import Subject, roles_held
    from app.registry import GRANT_PROJECT_ACCESS

    before = _before(entry)
    project = str(before.get("project") or "")
    subjects = [s for s in before.get("subjects") or [] if isinstance(s, dict)]
    try:
        access = await client.project_access(project)
    except NotFound:
        return Verdict(State.IN_DOUBT, f"the project “{project}” is no longer on the server")
    done = failed = 0
    for data in subjects:
        subject = Subject(data.get("kind", "user"), int(data.get("id", -1)), "")
        now = set(roles_held(access, subject))
        was, to = set(data.get("roles") or []), set(data.get("to") or [])
        if entry.action == GRANT_PROJECT_ACCESS.key:
            added = set(data.get("added") or [])
            done += added <= now
            failed += not (added & now) and not added <= now
        else:
            done += now == to
            failed += now == was and now != to
    if subjects and done == len(subjects):
        return Verdict(State.DONE, f"the roles in “{project}” are as the change left them")
    if subjects and failed == len(subjects):
        return Verdict(State.FAILED, f"not applied: the roles in “{project}” are as before")
    return Verdict(State.IN_DOUBT, f"the roles in “{project}” are neither as the change left "
                   "them nor as before: changed since. Compare with the snapshot")  # fmt: skip


def _project_access_checks() -> dict[str, Callable[[AdminClient, Entry], Awaitable[Verdict]]]:
    from app.registry import GRANT_PROJECT_ACCESS, REVOKE_PROJECT_ACCESS, SET_PROJECT_ROLES

    return {a.key: _project_access_checked
            for a in (GRANT_PROJECT_ACCESS, SET_PROJECT_ROLES, REVOKE_PROJECT_ACCESS)}  # fmt: skip


CHECKS.update(_project_access_checks())

#: the actions whose check needs the body sent in the entry (`request.body`)
NEEDS_BODY = frozenset({EDIT_CONTEXT_FIELD.key, EDIT_GROUP.key, EDIT_USER.key,
                        EXPIRE_API_TOKEN.key})  # fmt: skip

# ---------------------------------------------------------------------------- service accounts


async def _accounts_now(client: AdminClient) -> dict[int, Any]:
    return {a.id: a for a in (await client.service_accounts()).serviceAccounts}


async def _account_made(client: AdminClient, entry: Entry) -> Verdict:
    username = str(entry.ids[0]) if entry.ids else ""
    present = {a.username for a in (await _accounts_now(client)).values()}
    return _verdict([username], present, "service account", "created", "not there")


async def _account_gone(client: AdminClient, entry: Entry) -> Verdict:
    wanted: list[object] = [i for i in entry.ids if isinstance(i, int)]
    present = set(await _accounts_now(client))
    return _verdict(wanted, set(wanted) - present, "service account", "deleted", "still there")


async def _account_edited(client: AdminClient, entry: Entry) -> Verdict:
    account_id = next((i for i in entry.ids if isinstance(i, int)), -1)
    sent = _sent(entry)
    before = _before(entry).get("account")
    account = (await _accounts_now(client)).get(account_id)

    def state(values: dict[str, Any] | None) -> object:
        return None if values is None else {name: values.get(name) for name in sent}

    now = None if account is None else {"name": account.name, "rootRole": account.rootRole}
    name = _before(entry).get("username") or account_id
    return _edit_verdict(f"the service account “{name}”", state(now), state(sent),
                         state(before if isinstance(before, dict) else None))  # fmt: skip


async def _account_tokens(client: AdminClient, entry: Entry) -> tuple[str, list[Any] | None]:
    """The entry's account's username and its tokens now (None: the account is gone)."""
    before = _before(entry)
    account_id = before.get("account")
    accounts = await _accounts_now(client)
    account = accounts.get(account_id) if isinstance(account_id, int) else None
    return str(before.get("username") or ""), None if account is None else list(account.tokens)


async def _account_token_made(client: AdminClient, entry: Entry) -> Verdict:
    description = str(entry.ids[0]) if entry.ids else ""
    username, tokens = await _account_tokens(client, entry)
    made = [t for t in tokens or [] if t.description == description]
    if not made:
        gone = " (the account is gone)" if tokens is None else ""
        return Verdict(State.FAILED, f"no token “{description}” of the service account "
                       f"“{username}”{gone}")  # fmt: skip
    return Verdict(State.DONE, f"the token “{description}” of the service account “{username}” "
                   f"exists (id {made[0].id}), but its secret was never shown: delete it and "
                   "create another")  # fmt: skip


async def _account_tokens_gone(client: AdminClient, entry: Entry) -> Verdict:
    wanted: list[object] = [i for i in entry.ids if isinstance(i, int)]
    _username, tokens = await _account_tokens(client, entry)
    present = {t.id for t in tokens or []}
    return _verdict(wanted, set(wanted) - present, "token", "deleted", "still there")


CHECKS.update({
    CREATE_SERVICE_ACCOUNT.key: _account_made,
    DELETE_SERVICE_ACCOUNT.key: _account_gone,
    EDIT_SERVICE_ACCOUNT.key: _account_edited,
    CREATE_SERVICE_ACCOUNT_TOKEN.key: _account_token_made,
    DELETE_SERVICE_ACCOUNT_TOKEN.key: _account_tokens_gone,
})  # fmt: skip
NEEDS_BODY = NEEDS_BODY | {EDIT_SERVICE_ACCOUNT.key}


def can_check(entry: Entry) -> bool:
    return (
        entry.in_doubt
        and entry.action in CHECKS
        and (entry.action not in NEEDS_BODY or bool(_sent(entry)))
    )


async def check_entry(client: AdminClient, entry: Entry) -> Verdict:
    """What the server holds of `entry`'s change (read only: nothing is sent again). Raises the
    client's error when the server cannot be read."""
    check = CHECKS.get(entry.action)
    if check is not None and entry.action in NEEDS_BODY and not _sent(entry):
        return Verdict(
            State.IN_DOUBT,
            "the journal does not hold the body this edit sent (an older flagdesk wrote it): "
            "look on the server whether it happened",
        )
    if entry.action == UPLOAD_METRICS.key:
        ledger = _before(entry).get("ledger") or "its ledger's folder"
        return Verdict(
            State.IN_DOUBT,
            "an upload's bodies in doubt are checked against the server's totals when it is "
            f"resumed: resume the upload of {ledger} (Resume on the Metrics page, or flagdesk "
            "metrics upload --resume FOLDER)",
        )
    if check is None:
        action = ACTIONS_BY_KEY.get(entry.action)
        title = action.title if action is not None else entry.action
        return Verdict(
            State.IN_DOUBT,
            f"flagdesk cannot check {title!r} by itself: look on the server whether it happened",
        )
    return await check(client, entry)


async def settle(journal: Journal, entry: Entry, verdict: Verdict) -> None:
    """Append `verdict` as `entry`'s outcome (nothing is appended while it stays in doubt)."""
    if verdict.state is State.IN_DOUBT:
        return
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    message = f"checked against the server on {when}: {verdict.message}"
    pending = Pending(journal, entry.id)
    if verdict.state is State.DONE:
        await pending.done(entry.status, message)
    else:
        await pending.failed(entry.status, message)


# ---------------------------------------------------------------------------- roles (issue 36)


async def _role_now(client: AdminClient, entry: Entry) -> Any:
    role_id = next((i for i in entry.ids if isinstance(i, int)), -1)
    try:
        return await client.get_role(role_id)
    except NotFound:
        return None


async def _role_made(client: AdminClient, entry: Entry) -> Verdict:
    name = str(_before(entry).get("name") or (entry.ids[0] if entry.ids else ""))
    present = {role.name for role in (await client.roles()).roles}
    return _verdict([name], present, "role", "created", "not there")


async def _role_gone(client: AdminClient, entry: Entry) -> Verdict:
    name = _before(entry).get("name")
    if await _role_now(client, entry) is None:
        return Verdict(State.DONE, f"the role “{name}” is gone")
    return Verdict(State.FAILED, f"the role “{name}” is still there")


async def _role_edited(client: AdminClient, entry: Entry) -> Verdict:
    from app.actions.roles import body_of, role_state

    role = await _role_now(client, entry)
    now = body_of(role).model_dump(mode="json", exclude_none=True) if role else None
    before = _before(entry).get("body")
    return _edit_verdict(f"the role “{_before(entry).get('name')}”", role_state(now),
                         role_state(_sent(entry)),
                         role_state(before if isinstance(before, dict) else None))  # fmt: skip


CHECKS[CREATE_ROLE.key] = _role_made
CHECKS[DELETE_ROLE.key] = _role_gone
CHECKS[EDIT_ROLE.key] = _role_edited
NEEDS_BODY = NEEDS_BODY | {EDIT_ROLE.key}


# ---------------------------------------------------------------------------- promote (issue 37)


async def _promote_checked(client: AdminClient, entry: Entry) -> Verdict:
    """A promote's request in doubt: a creation (a flag, segment, context field, tag type) is
    there or not, a flag archived is gone or not; any other request stays in doubt, and the
    verdict says how to look (the promote's snapshot against the server)."""
    before = _before(entry)
    kind, name = str(before.get("kind") or ""), str(before.get("object") or "")
    request = entry.request or {}
    method, path = str(request.get("method") or ""), str(request.get("path") or "")
    body = request.get("body") if isinstance(request.get("body"), dict) else {}
    parts = path.split("/")
    if kind == "flags" and len(parts) >= 6 and parts[3] == "projects" and parts[5] == "features":
        project = parts[4]
        if (method == "POST" and len(parts) == 6) or (method == "DELETE" and len(parts) == 7):
            try:
                await client.feature(project, name)
                there = True
            except NotFound:
                there = False
            if method == "POST":
                return Verdict(
                    State.DONE if there else State.FAILED,
                    f"the flag “{name}” is {'there' if there else 'not there'}",
                )
            return Verdict(
                State.FAILED if there else State.DONE,
                f"the flag “{name}” is {'still live' if there else 'archived'}",
            )
    if method in ("POST", "DELETE") and kind in ("segments", "context-fields", "tag-types"):
        wanted = str((body or {}).get("name") or name)
        if kind == "segments":
            names = {g.name for g in (await client.segments()).segments}
        elif kind == "context-fields":
            names = {f.name for f in await client.list_context_fields()}
        else:
            names = {t.name for t in (await client.tag_types()).tagTypes}
        made = method == "POST"
        done = (wanted in names) == made
        return Verdict(
            State.DONE if done else State.FAILED,
            f"“{wanted}” is {'there' if wanted in names else 'not there'}",
        )
    snapshot = before.get("snapshot") or "its snapshot"
    return Verdict(
        State.IN_DOUBT,
        f"flagdesk cannot tell this request of a promote by itself: "
        f"compare the server with the promote's snapshot ({snapshot}, in the "
        "journal's folder: flagdesk diff SNAPSHOT PROFILE)",
    )


CHECKS[PROMOTE.key] = _promote_checked


# ---------------------------------------------------------------------------- instance (issue 38)


async def _maintenance_switched(client: AdminClient, entry: Entry) -> Verdict:
    sent = _sent(entry).get("enabled")
    now = (await client.maintenance()).enabled
    state = "on" if now else "off"
    if now is sent:
        return Verdict(State.DONE, f"maintenance mode is {state}, as the switch left it")
    if _before(entry).get("enabled") is now:
        return Verdict(State.FAILED, f"not applied: maintenance mode is {state}, as before")
    return Verdict(State.IN_DOUBT, f"maintenance mode is {state}")


async def _cors_set(client: AdminClient, entry: Entry) -> Verdict:
    now = (await client.ui_config()).frontendApiOrigins
    sent = _sent(entry)
    settings = sent.get("frontendSettings")  # 5.x's route
    origins = settings.get("frontendApiOrigins") if isinstance(settings, dict) else None
    sent_origins = sent.get("frontendApiOrigins", origins)
    return _edit_verdict("the CORS origins", now, sent_origins, _before(entry).get("origins"))


async def _banners_now(client: AdminClient) -> dict[int, Any]:
    return {b.id: b for b in (await client.banners()).banners}


async def _banner_made(client: AdminClient, entry: Entry) -> Verdict:
    message = str(_before(entry).get("message") or "")
    present = {b.message for b in (await _banners_now(client)).values()}
    return _verdict([message], present, "banner", "created", "not there")


async def _banner_gone(client: AdminClient, entry: Entry) -> Verdict:
    banner_id = next((i for i in entry.ids if isinstance(i, int)), -1)
    if banner_id in await _banners_now(client):
        return Verdict(State.FAILED, f"the banner {banner_id} is still there")
    return Verdict(State.DONE, f"the banner {banner_id} is gone")


async def _banner_edited(client: AdminClient, entry: Entry) -> Verdict:
    from app.actions.instance import banner_body

    banner_id = next((i for i in entry.ids if isinstance(i, int)), -1)
    banner = (await _banners_now(client)).get(banner_id)
    now = banner_body(banner).model_dump(mode="json") if banner is not None else None
    return _edit_verdict(f"the banner {banner_id}", now, _sent(entry) or None,
                         _before(entry).get("body"))  # fmt: skip


CHECKS[SWITCH_MAINTENANCE.key] = _maintenance_switched
CHECKS[SET_CORS.key] = _cors_set
CHECKS[CREATE_BANNER.key] = _banner_made
CHECKS[DELETE_BANNER.key] = _banner_gone
CHECKS[EDIT_BANNER.key] = _banner_edited
NEEDS_BODY = NEEDS_BODY | {SWITCH_MAINTENANCE.key, SET_CORS.key, EDIT_BANNER.key}
