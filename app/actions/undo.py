"""Undoing a journal's entry: the plan that takes a change back, made from what the entry and its
snapshot hold and what the server holds now, for the History's Undo and `flagdesk journal undo
ENTRY` alike. The plan is confirmed, then carried out by the runner like any change (journaled,
with `before.undo` or `before.undoes` naming it as an undo).

What can be undone, once done:

- `groups.edit`: the group put back as it was (`before.body`), on the group as it is now;
- `groups.delete`: the group created again from its snapshot (a new id, the same members);
- `users.edit`: the changed fields' previous values (`before.user`) put back;
- `context_fields.edit`: the field as its snapshot holds it put back (`PUT`, the whole field);
- `context_fields.delete`: the field created again from its snapshot;
- `archived_features.revive` / `.revive_bulk`: the flags archived again;
- `api_tokens.create`: the token it made deleted (found in the list by its name, type and the
  last four characters of its secret, which the entry's `after` kept);
- `api_tokens.expire`: the previous expiry put back (not when it had none: the API takes a
  date, never "no expiry");
- `personal_tokens.create`: the token deleted (its id, from the entry's `after`), when the
  connection's user still has it;
- `roles.create`: the role it made deleted (its id, from the entry's `after`), while no one
  holds it; `roles.edit`: the role put back as its snapshot holds it (name, description, type,
  permissions); `roles.delete`: the role created again from its snapshot, with the same
  permissions, under a new id (the confirmation says so).
- `service_accounts.create`: the account deleted (its id, from the entry's `after`);
  `service_accounts.edit`: its name and root role before put back; `service_accounts.delete`:
  the account created again from its snapshot, with a new id and without its tokens (their
  secrets are gone: the confirmation says so); `service_accounts.create_token`: the token
  deleted. A deleted service account token cannot be brought back.
- `project_access.grant`: each user's and group's roles set to those held now less the ones
  the grant added; `.set_roles`: the previous roles set again; `.revoke`: the previous roles
  granted again (`app.actions.project_access.plan_undo_of`, from the project's access now).
- `instance.maintenance`: the other switch, while the server is still as the entry left it;
  `instance.cors`: the origins before set again (`before.origins`); `banners.create`: the
  banner deleted (its id, from the entry's `after`); `banners.edit`: the banner put back as its
  snapshot holds it; `banners.delete`: created again from its snapshot, under a new id (issue
  38, `app.actions.instance`).

What cannot: a deletion of users or of flags for good (the API brings neither back: the snapshot
is what is left), a deletion of API tokens or personal access tokens (the secret is gone with
it, and a new token has a new one), a reset link, a creation other than a token's (deleting
what was created is the way back: the refusal says how), and an entry that did not end `done`
(in doubt: check it first).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from app.actions import (
    api_tokens,
    archived_features,
    context_fields,
    groups,
    personal_tokens,
    roles,
    service_accounts,
    users,
)
from app.actions.journal import Entry, Journal, State
from app.api.errors import ClientError, NotFound
from app.api.models import ArchivedFeatures, CreateGroup, Request, UpdateUser
from app.api.wire import json_path
from app.registry import (
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
    RESET_PASSWORD,
    REVIVE_FEATURE,
    REVIVE_FEATURES,
    SET_CORS,
    SWITCH_MAINTENANCE,
)

if TYPE_CHECKING:
    from app.actions.runner import Plan
    from app.api.client import AdminClient

__all__ = ["UNDOABLE", "CannotUndo", "find_entry", "plan_undo", "why_not"]

#: the actions an entry of which can be undone
UNDOABLE = frozenset({EDIT_GROUP.key, DELETE_GROUP.key, EDIT_USER.key, EDIT_CONTEXT_FIELD.key,
                      DELETE_CONTEXT_FIELD.key, REVIVE_FEATURE.key,
                      REVIVE_FEATURES.key, CREATE_API_TOKEN.key,
                      EXPIRE_API_TOKEN.key, CREATE_PAT.key})  # fmt: skip

# project access: every change of it can be undone
UNDOABLE |= frozenset({"project_access.grant", "project_access.set_roles",
                       "project_access.revoke"})  # fmt: skip

#: why the others cannot
_NEVER = {
    DELETE_INACTIVE_USERS.key: "a deleted user cannot be brought back (the snapshot is what is "
    "left of them)",
    DELETE_USER.key: "a deleted user cannot be brought back (the snapshot is what is left of them)",
    DELETE_FEATURE.key: "a flag deleted for good cannot be brought back",
    DELETE_FEATURES.key: "a flag deleted for good cannot be brought back",
    RESET_PASSWORD.key: "a reset link cannot be taken back; making another one ends it",
    CREATE_USER.key: "a creation is undone by deleting what was created: flagdesk users delete ID",
    CREATE_GROUP.key: "a creation is undone by deleting what was created: flagdesk groups "
    "delete ID",
    CREATE_CONTEXT_FIELD.key: "a creation is undone by deleting what was created: flagdesk "
    "context delete NAME",
    DELETE_API_TOKEN.key: "a deleted API token cannot be brought back: its secret is gone with "
    "it (create a new token, whose secret is another, with flagdesk tokens create)",
    DELETE_PAT.key: "a deleted personal access token cannot be brought back: a new one has a "
    "new secret, which whoever used the old one needs anyway (flagdesk pats create)",
}

# service accounts: what can be undone, and why a token's deletion cannot
SERVICE_ACCOUNT_UNDO = frozenset(
    {
        CREATE_SERVICE_ACCOUNT.key,
        EDIT_SERVICE_ACCOUNT.key,
        DELETE_SERVICE_ACCOUNT.key,
        CREATE_SERVICE_ACCOUNT_TOKEN.key,
    }
)
UNDOABLE = UNDOABLE | SERVICE_ACCOUNT_UNDO
_NEVER[DELETE_SERVICE_ACCOUNT_TOKEN.key] = (
    "a deleted service account token cannot be brought back: a new one has a new secret, which "
    "whoever used the old one needs anyway (flagdesk service-accounts tokens create)"
)


class CannotUndo(ValueError):
    """The entry has no undo, or not now; `str()` says why."""


def why_not(entry: Entry) -> str:
    """Why `entry` cannot be undone ("" when it can be planned)."""
    if entry.state is not State.DONE:
        if entry.in_doubt:
            return "it is in doubt: check it against the server first"
        return "it did not change anything (it failed)"
    before = entry.before if isinstance(entry.before, dict) else {}
    if before.get("undo") or before.get("undoes"):
        return "it is itself an undo: make the change again instead"
    if entry.action in _NEVER:
        return _NEVER[entry.action]
    if entry.action not in UNDOABLE:
        return f"flagdesk has no undo for {entry.action}"
    return ""


def find_entry(entries: list[Entry], asked: str) -> Entry:
    """The entry whose id is `asked` or starts with it (at least 4 characters); `CannotUndo`
    when none or several match."""
    asked = asked.strip()
    exact = [e for e in entries if e.id == asked]
    if exact:
        return exact[0]
    found = [e for e in entries if len(asked) >= 4 and e.id.startswith(asked)]
    if len(found) == 1:
        return found[0]
    if found:
        raise CannotUndo(f"{len(found)} entries start with {asked!r}: give more of the id")
    raise CannotUndo(f"no entry {asked!r} in this connection's journal")


def _snapshot(journal: Journal, entry: Entry) -> Path:
    name = (entry.before or {}).get("snapshot")
    if not name:
        raise CannotUndo("the entry names no snapshot to undo from")
    path = journal.folder / str(name)
    if not path.is_file():
        raise CannotUndo(f"its snapshot {path} is missing")
    return path


_R = TypeVar("_R", bound=Request)


def _put_back(model: type[_R], data: Any, entry: Entry) -> _R:
    """What `entry` would put back, as the request `model`; `CannotUndo` when the model refuses
    it (a name with control characters, as a server of someone else's may hold one, or a
    journal changed by hand)."""
    try:
        return model.model_validate(data)
    except ValueError as exc:  # pydantic's ValidationError
        errors = getattr(exc, "errors", None)
        said = (
            "; ".join(f"{json_path(e['loc']) or 'the body'}: {e['msg']}" for e in errors())
            if callable(errors)
            else str(exc)
        )
        raise CannotUndo(
            f"Entry {entry.id} cannot be undone: what it would put back is not a valid "
            f"request ({said})."
        ) from None


async def plan_undo(client: AdminClient, journal: Journal, entry: Entry) -> Plan:
    """The plan that undoes `entry` of `journal` (its server is the client's), made from the
    entry, its snapshot and the server's state now. `CannotUndo` saying why when there is none
    (`why_not`), or when the server's state makes it unsafe (a deleted thing that exists again,
    an edited one that is gone)."""
    reason = why_not(entry)
    if reason:
        raise CannotUndo(f"Entry {entry.id} cannot be undone: {reason}.")
    if entry.server != client.base_url:
        raise CannotUndo(f"Entry {entry.id} was made on {entry.server}, not {client.base_url}.")
    before: dict[str, Any] = entry.before
    action = entry.action
    if action == EDIT_GROUP.key:
        group = await _get(client.get_group(int(entry.ids[0])), f"group {entry.ids[0]}")
        body = _put_back(CreateGroup, before["body"], entry)
        return groups.plan_edit(group, body, journal, await _roles(client), undo=True)
    if action == DELETE_GROUP.key:
        path = _snapshot(journal, entry)
        group = await asyncio.to_thread(groups.read_snapshot, path)
        if any(g.name == group.name for g in (await client.list_groups()).groups):
            raise CannotUndo(f"a group named “{group.name}” exists again: it is not recreated")
        return groups.plan_recreate(group, journal, await _roles(client))
    if action == EDIT_USER.key:
        user = await _get(client.get_user(int(entry.ids[0])), f"user {entry.ids[0]}")
        roles = {r.id: r.name for r in (await client.list_users()).rootRoles}
        admins = (await client.admin_count()).people
        values = _put_back(UpdateUser, before["user"], entry)
        return replace(users.plan_edit(user, values, roles, journal, admins), undo=True)
    if action in (EDIT_CONTEXT_FIELD.key, DELETE_CONTEXT_FIELD.key):
        field = await context_fields.read_snapshot(_snapshot(journal, entry))
        try:
            current = await client.get_context_field(field.name)
        except NotFound:
            current = None
        try:
            return context_fields.plan_undo_of(action, field, current, entry.id, journal)
        except ValueError as exc:
            raise CannotUndo(str(exc)) from None
    if action in (CREATE_API_TOKEN.key, EXPIRE_API_TOKEN.key):
        undo = (
            api_tokens.plan_undo_create
            if action == CREATE_API_TOKEN.key
            else api_tokens.plan_undo_expire
        )
        try:
            return undo(entry, (await client.api_tokens()).tokens, journal)
        except ValueError as exc:
            raise CannotUndo(f"Entry {entry.id} cannot be undone: {exc}.") from None
    if action == CREATE_PAT.key:
        return await _unmake_pat(client, journal, entry)
    if action in _ROLE_ACTIONS:  # roles (issue 36)
        return await _undo_role(client, journal, entry)
    if action in SERVICE_ACCOUNT_UNDO:
        return await _undo_service_account(client, journal, entry)
    if action.startswith("project_access."):
        return await _undo_project_access(client, journal, entry)
    if action == PROMOTE.key:  # promote (issue 37, slice 6)
        return await _undo_promote(client, journal, entry)
    if action in _INSTANCE_ACTIONS:  # instance settings (issue 38)
        return await _undo_instance(client, journal, entry)
    # a revive: the flags as the snapshot holds them, archived again
    path = _snapshot(journal, entry)
    data = json.loads(await asyncio.to_thread(path.read_text, encoding="utf-8"))
    wanted = {str(name) for name in entry.ids}
    held = ArchivedFeatures.model_validate({"version": 1, "features": data["features"]})
    features = [f for f in held.features if f.name in wanted]
    return archived_features.plan_archive(features, str(before["project"]), journal)


async def _unmake_pat(client: AdminClient, journal: Journal, entry: Entry) -> Plan:
    """The plan that deletes the personal access token `entry` made: by its id (the entry's
    `after`), else by its description, among the connection's user's tokens now."""
    after = entry.after if isinstance(entry.after, dict) else {}
    made = after.get("id")
    description = str(entry.ids[0]) if entry.ids else ""
    tokens = (await client.personal_tokens()).pats
    if isinstance(made, int) and not isinstance(made, bool):
        found = [t for t in tokens if t.id == made]
    else:
        found = [t for t in tokens if t.description == description]
    if not found:
        raise CannotUndo(
            f"the personal access token “{description}” is not among this connection's user's "
            "tokens: deleted already, or made by another user"
        )
    return personal_tokens.plan_delete(found, journal, undoes=entry.id)


async def _undo_project_access(client: AdminClient, journal: Journal, entry: Entry) -> Plan:
    """The plan that undoes a grant, change of roles or revocation, from the project's access
    now (`app.actions.project_access.plan_undo_of`)."""
    from app.actions import project_access

    before: dict[str, Any] = entry.before if isinstance(entry.before, dict) else {}
    project = str(before.get("project") or "")
    access = await _get(client.project_access(project), f"project “{project}”")
    try:
        return project_access.plan_undo_of(entry, access, journal)
    except ValueError as exc:
        raise CannotUndo(f"Entry {entry.id} cannot be undone: {exc}.") from None


async def _get(read: Any, what: str) -> Any:
    try:
        return await read
    except NotFound:
        raise CannotUndo(f"the {what} is gone from the server: nothing to put back") from None


async def _roles(client: AdminClient) -> dict[int, str]:
    try:
        return {r.id: r.name for r in (await client.list_users()).rootRoles}
    except ClientError:  # a token that may not list users: the roles are named by id
        return {}


# ---------------------------------------------------------------------------- roles (issue 36)

_ROLE_ACTIONS = frozenset({CREATE_ROLE.key, EDIT_ROLE.key, DELETE_ROLE.key})
UNDOABLE = UNDOABLE | _ROLE_ACTIONS


async def _undo_role(client: AdminClient, journal: Journal, entry: Entry) -> Plan:
    """A creation: the role it made deleted (by its id, from the entry's `after`); an edit: the
    role put back as the snapshot holds it; a deletion: the role created again from it."""
    try:
        if entry.action == CREATE_ROLE.key:
            after = entry.after if isinstance(entry.after, dict) else {}
            made = after.get("id")
            if not isinstance(made, int) or isinstance(made, bool):
                raise CannotUndo("the entry does not say which role was made (no id)")
            role = await _get(client.get_role(made), f"role {made}")
            holders = await roles.read_holders(client, role)
            return roles.plan_delete(role, holders, journal, undoes=entry.id)
        previous = await roles.read_snapshot(_snapshot(journal, entry))
        if entry.action == EDIT_ROLE.key:
            current = await _get(client.get_role(previous.id), f"role “{previous.name}”")
            return roles.plan_edit(current, roles.body_of(previous), journal, undoes=entry.id)
        if any(r.name == previous.name for r in (await client.roles()).roles):
            raise CannotUndo(f"a role named “{previous.name}” exists again: it is not recreated")
        return roles.plan_recreate(previous, journal, entry.id)
    except (ValueError, roles.RoleInUse) as exc:
        if isinstance(exc, CannotUndo):
            raise
        raise CannotUndo(f"Entry {entry.id} cannot be undone: {exc}") from None


# ---------------------------------------------------------------------------- service accounts


async def _undo_service_account(client: AdminClient, journal: Journal, entry: Entry) -> Plan:
    """The plan that undoes a service account's change (see the module's text), from the
    accounts as the server lists them now."""
    action, before = entry.action, _before_of(entry)
    accounts = (await client.service_accounts()).serviceAccounts
    roles = await _roles(client)
    if action == DELETE_SERVICE_ACCOUNT.key:
        held = await asyncio.to_thread(service_accounts.read_snapshot, _snapshot(journal, entry))
        if any(a.username == held.username for a in accounts):
            raise CannotUndo(f"a service account “{held.username}” exists again: it is not "
                             "recreated")  # fmt: skip
        try:
            return service_accounts.plan_recreate(held, journal, entry.id, roles)
        except ValueError as exc:
            raise CannotUndo(f"Entry {entry.id} cannot be undone: {exc}.") from None
    after = entry.after if isinstance(entry.after, dict) else {}
    if action == CREATE_SERVICE_ACCOUNT.key:
        made, username = after.get("id"), str(entry.ids[0]) if entry.ids else ""
        found = [a for a in accounts if a.id == made] if isinstance(made, int) else \
            [a for a in accounts if a.username == username]  # fmt: skip
        if not found:
            raise CannotUndo(f"the service account “{username}” is gone from the server: "
                             "nothing to delete")  # fmt: skip
        return service_accounts.plan_delete(found[0], journal, roles, undoes=entry.id)
    account_id = before.get("account") if action == CREATE_SERVICE_ACCOUNT_TOKEN.key else (
        entry.ids[0] if entry.ids else None)  # fmt: skip
    account = next((a for a in accounts if a.id == account_id), None)
    if account is None:
        raise CannotUndo(f"the service account {before.get('username') or account_id} is gone "
                         "from the server: nothing to put back")  # fmt: skip
    if action == EDIT_SERVICE_ACCOUNT.key:
        was = before.get("account") or {}
        try:
            return service_accounts.plan_edit(account, was.get("name"), was.get("rootRole"),
                                              journal, roles, undo=True)  # fmt: skip
        except ValueError as exc:
            raise CannotUndo(f"Entry {entry.id} cannot be undone: {exc}.") from None
    # a token's creation: the token deleted, by its id (else its description)
    made, description = after.get("id"), str(entry.ids[0]) if entry.ids else ""
    if isinstance(made, int):
        tokens = [t for t in account.tokens if t.id == made]
    else:
        tokens = [t for t in account.tokens if t.description == description]
    if not tokens:
        raise CannotUndo(f"the token “{description}” is no longer a token of the service "
                         f"account “{account.username}”: deleted already")  # fmt: skip
    return service_accounts.plan_delete_tokens(account, tokens, journal, undoes=entry.id)


def _before_of(entry: Entry) -> dict[str, Any]:
    return entry.before if isinstance(entry.before, dict) else {}


# ---------------------------------------------------------------------------- promote (issue 37)

UNDOABLE = UNDOABLE | {PROMOTE.key}


async def _undo_promote(client: AdminClient, journal: Journal, entry: Entry) -> Plan:
    """The whole promote `entry` is one request of, undone as one (`app.actions.promote.
    plan_undo_promote`): from its snapshot of the target before, against the server now."""
    from app.actions import promote
    from app.snapshot.files import SnapshotFileError, load
    from app.snapshot.read import read_snapshot

    promote_id = str(_before_of(entry).get("promote") or "")
    if not promote_id:
        raise CannotUndo(f"Entry {entry.id} names no promote to undo.")
    entries = promote.touched_by(await asyncio.to_thread(journal.entries), promote_id)
    try:
        before = await asyncio.to_thread(load, _snapshot(journal, entry))
    except SnapshotFileError as exc:
        raise CannotUndo(f"Entry {entry.id} cannot be undone: {exc}") from None
    now = await read_snapshot(client)
    ids = {g.name: g.id for g in (await client.segments()).segments}
    batching = await promote.batching_for(client)
    try:
        plan, cannot = promote.plan_undo_promote(before, now, entries, ids, batching)
    except ValueError as exc:
        raise CannotUndo(f"Entry {entry.id} cannot be undone: {exc}.") from None
    try:
        plan = await promote.validated(client, plan)
    except promote.ImportRefused as exc:
        raise CannotUndo(f"Entry {entry.id} cannot be undone: {exc}.") from None
    if plan.pending and any("(created in stage 1)" in p.says for p in plan.second):
        raise CannotUndo(
            f"Entry {entry.id} cannot be undone in one go: a segment the promote deleted is "
            "used by a strategy it deleted too. Create the segment again first (its "
            "definition is in the snapshot " + str(_snapshot(journal, entry)) + ")."
        )
    if plan.nothing_to_do:
        why = "; ".join(x.line for x in cannot)
        raise CannotUndo(
            f"Entry {entry.id} cannot be undone: the server already holds what the promote's "
            f"snapshot does for everything it changed{': ' + why if why else ''}."
        )
    return promote.PromoteStage(
        journal,
        plan.first + plan.second,
        1,
        plan.promote,
        journal.new_file(PROMOTE.key, ".json"),
        now,
        undoes=entry.id,
        notes=tuple(x.line for x in plan.left_out),
        warnings=plan.warnings,
    )


# ---------------------------------------------------------------------------- instance (issue 38)

_INSTANCE_ACTIONS = frozenset({SWITCH_MAINTENANCE.key, SET_CORS.key, CREATE_BANNER.key,
                               EDIT_BANNER.key, DELETE_BANNER.key})  # fmt: skip
UNDOABLE = UNDOABLE | _INSTANCE_ACTIONS


async def _undo_instance(client: AdminClient, journal: Journal, entry: Entry) -> Plan:
    """Maintenance mode switched back; the CORS origins before set again; a banner made
    deleted, an edited one put back from its snapshot, a deleted one created again from it."""
    from app.actions import instance
    from app.api.client import unleash_release

    before = _before_of(entry)
    if entry.action == SWITCH_MAINTENANCE.key:
        sent = (entry.request or {}).get("body")
        enabled = sent.get("enabled") if isinstance(sent, dict) else None
        if not isinstance(enabled, bool):
            raise CannotUndo(f"Entry {entry.id} names no switch to undo.")
        now = (await client.maintenance()).enabled
        if now is not enabled:
            state = "on" if now else "off"
            raise CannotUndo(f"maintenance mode is {state} already: nothing to undo")
        return instance.plan_maintenance(not enabled, now, journal, undoes=entry.id)
    if entry.action == SET_CORS.key:
        was = before.get("origins")
        if not isinstance(was, list) or not all(isinstance(o, str) for o in was):
            raise CannotUndo(f"Entry {entry.id} does not say which origins there were before.")
        caps = await client.capabilities()
        try:
            return instance.plan_cors(was, await instance.origins_now(client), journal,
                                      release=unleash_release(caps), undoes=entry.id)  # fmt: skip
        except ValueError as exc:
            raise CannotUndo(f"Entry {entry.id} cannot be undone: {exc}.") from None
    banners = (await client.banners()).banners
    if entry.action == CREATE_BANNER.key:
        after = entry.after if isinstance(entry.after, dict) else {}
        made = [b for b in banners if b.id == after.get("id")]
        if not made:
            raise CannotUndo("the banner it made is no longer on the server: deleted already")
        return instance.plan_banner_delete(made[0], journal, undoes=entry.id)
    try:
        previous = await asyncio.to_thread(instance.read_banner_snapshot, _snapshot(journal, entry))
        if entry.action == EDIT_BANNER.key:
            current = [b for b in banners if b.id == previous.id]
            if not current:
                raise CannotUndo(f"the banner {previous.id} is gone from the server: nothing "
                                 "to put back")  # fmt: skip
            body = instance.banner_body(previous)
            return instance.plan_banner_edit(current[0], body, journal, undoes=entry.id)
        return instance.plan_banner_create(instance.banner_body(previous), journal,
                                           undoes=entry.id)  # fmt: skip
    except ValueError as exc:
        raise CannotUndo(f"Entry {entry.id} cannot be undone: {exc}.") from None
