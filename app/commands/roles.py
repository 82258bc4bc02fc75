"""`flagdesk roles list|show|permissions|create|edit|delete`: a server's roles and their
permissions, and its custom roles created, changed and deleted through the plans and journal of
`app.actions.roles`. No Qt, and light to import: the client and the actions are imported by the
running command."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from app.commands.connection import (
    EXIT_OK,
    EXIT_USAGE,
    UsageError,
    add_connection_arguments,
    client_from_args,
)
from app.commands.output import (
    EXIT_REFUSED,
    Output,
    add_action,
    add_change_options,
    confirmed,
    dry_run,
    echo,
    need_terminal,
    print_table,
    run_job,
)
from app.text import plural

if TYPE_CHECKING:
    from app.actions.roles import RoleChanged, RolePlan
    from app.api.client import AdminClient
    from app.api.models import AdminPermissions, Role, RolePermission, RoleWithPermissions

DESCRIPTION = """\
A server's roles: the built-in root roles (Admin, Editor, Viewer) and project roles (Owner,
Member), and on Unleash Enterprise (and the sandbox) custom root and project roles with the
permissions they hold (GET /api/admin/roles, /api/admin/roles/ID, /api/admin/permissions).

  flagdesk roles list [--json]
  flagdesk roles show ROLE [--json]
  flagdesk roles permissions [--json]
  flagdesk roles create --name N --type root|project [--description D]
                        [--permission P ...] [--dry-run] [--yes] [--json]
  flagdesk roles edit ROLE [--name N] [--description D] [--type root|project]
                      [--permission P ... | --no-permissions]
                      [--add-permission P ...] [--remove-permission P ...]
                      [--dry-run] [--yes] [--json]
  flagdesk roles delete ROLE [--dry-run] [--yes] [--json]

ROLE is a role's name (names are unique) or its id, as `list` shows them. A permission P is
its name (`roles permissions` lists the server's: CREATE_FEATURE, UPDATE_PROJECT, ...); an
environment permission of a project role names its environment after a colon:
--permission CREATE_FEATURE --permission UPDATE_FEATURE_ENVIRONMENT:development. A root role
holds root (and project) permissions, never an environment's. `edit` sends the whole role:
--permission again and again gives the whole new list, --add-permission and
--remove-permission change the present one, --no-permissions takes them all away.

Open-source Unleash has no custom roles (its roles API answers 404): `list` shows its built-in
root roles (from its users' list) and says so; `create`, `edit` and `delete` say that custom
roles need Unleash Enterprise (exit status 4) and send nothing. Built-in roles cannot be
changed or deleted. A role someone holds is not deleted: `delete` names who holds it (the users
and groups whose root role it is, or the projects where it is held) and sends nothing.

The journal records each change before it is sent and the answer after; an edit and a deletion
write the role with its permissions to a snapshot first. `flagdesk journal undo ENTRY` deletes
a role `create` made, puts an edited role back, or creates a deleted role again with the same
permissions (under a new id: the server never gives an id again). On a terminal a change asks
first; without a terminal it changes nothing unless --yes is given. --dry-run prints the exact
requests and sends nothing.

exit status:
  0  listed, shown, created, changed, deleted (or, with --dry-run, printed)
  1  the server refused (its message is printed: a name taken, say), the role is in use, or
     the answer was no
  2  bad usage: no such role, a permission or environment the server does not have, nothing to
     change, no terminal to ask and no --yes
  3  the server was unreachable
  4  the token was refused, lacks the Admin root role, or the server has no custom roles
"""

TYPES = ("root", "project")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="what", metavar="WHAT", required=True)
    listing = add_action(sub, "list", "list the server's roles", DESCRIPTION)
    show = add_action(sub, "show", "show a role with its permissions", DESCRIPTION)
    show.add_argument("role", metavar="ROLE", help="the role's name or id")
    catalogue = add_action(sub, "permissions", "list the permissions a role can hold",
                           DESCRIPTION)  # fmt: skip
    create = add_action(sub, "create", "create a custom role", DESCRIPTION)
    create.add_argument("--name", required=True, metavar="N", help="the role's name (unique)")
    create.add_argument("--type", required=True, choices=TYPES,
                        help="a root role (held across the server) or a project role (held "
                        "in projects)")  # fmt: skip
    create.add_argument("--description", default="", metavar="D", help="what the role is for")
    create.add_argument("--permission", action="append", default=[], metavar="P",
                        help="a permission the role holds (NAME, or NAME:ENVIRONMENT for an "
                        "environment permission of a project role); again for more")  # fmt: skip
    add_change_options(create, "create")
    edit = add_action(sub, "edit", "change a custom role", DESCRIPTION)
    edit.add_argument("role", metavar="ROLE", help="the role's name or id")
    edit.add_argument("--name", metavar="N", help="its new name")
    edit.add_argument("--description", metavar="D", help="its new description")
    edit.add_argument("--type", choices=TYPES, help="its new type")
    edit.add_argument("--permission", action="append", default=None, metavar="P",
                      help="the whole new list of permissions, one each time")  # fmt: skip
    edit.add_argument("--no-permissions", action="store_true",
                      help="take every permission away")  # fmt: skip
    edit.add_argument("--add-permission", action="append", default=[], metavar="P",
                      help="a permission to add")  # fmt: skip
    edit.add_argument("--remove-permission", action="append", default=[], metavar="P",
                      help="a permission to take away")  # fmt: skip
    add_change_options(edit, "change")
    delete = add_action(sub, "delete", "delete a custom role no one holds", DESCRIPTION)
    delete.add_argument("role", metavar="ROLE", help="the role's name or id")
    add_change_options(delete, "delete")
    for each in (listing, show, catalogue, create, edit, delete):
        add_connection_arguments(each)
        each.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    out = Output("flagdesk roles", args.what, args.json)
    try:
        if args.what in ("create", "edit", "delete"):
            verbs = {"create": ("the new role", "created", "create"),
                     "edit": ("the change", "changed", "change"),
                     "delete": ("the deletion", "deleted", "delete")}  # fmt: skip
            need_terminal(args, *verbs[args.what])
        if args.what == "edit" and args.permission is not None and args.no_permissions:
            raise UsageError("--permission and --no-permissions: give one or the other")
        client, connection = client_from_args(args)
    except UsageError as exc:
        return out.fail(EXIT_USAGE, str(exc))
    if args.what == "list":
        return run_job(out, _list(client, out))
    if args.what == "show":
        return run_job(out, _show(args, client, out))
    if args.what == "permissions":
        return run_job(out, _catalogue(client, out))
    return run_job(out, _change(args, client, connection, out))


def _type_label(role: Role) -> str:
    from app.actions.roles import kind_of

    return kind_of(role).removesuffix(" role")


async def _list(client: AdminClient, out: Output) -> int:
    from app.actions.roles import read_roles, role_json

    async with client:
        listing = await read_roles(client)
    roles = listing.roles
    out.update(server=client.base_url, count=len(roles), customRoles=listing.custom,
               roles=[role_json(r) for r in roles])  # fmt: skip
    if listing.note:
        out.update(note=listing.note)
    if not out.as_json:
        print_table(("ID", "NAME", "TYPE", "DESCRIPTION"),
                    [(str(r.id), r.name, _type_label(r), r.description or "")
                     for r in roles])  # fmt: skip
    out.say(f"{plural(len(roles), 'role')} on {client.base_url}"
            + (f" ({listing.note})" if listing.note else ""))  # fmt: skip
    return out.done(EXIT_OK)


async def _find(client: AdminClient, word: str) -> tuple[Role, bool]:
    """The role `word` names, and whether the server has the roles API."""
    from app.actions.roles import find_role, read_roles

    listing = await read_roles(client)
    try:
        return find_role(word, listing.roles, client.base_url), listing.custom
    except ValueError as exc:
        raise UsageError(str(exc)) from None


async def _show(args: argparse.Namespace, client: AdminClient, out: Output) -> int:
    from app.actions.roles import permission_text, role_json

    async with client:
        role, custom = await _find(client, args.role)
        full: Role = await client.get_role(role.id) if custom else role
    out.update(server=client.base_url, role=role_json(full))
    if not out.as_json:
        echo(f"{full.name} (id {full.id}): {_type_label(full)} role")
        if full.description:
            echo(full.description)
        held = getattr(full, "permissions", None)
        if held is None:
            echo("Its permissions cannot be read here: the server has no roles API (custom "
                 "roles and the permission catalogue need Unleash Enterprise).")  # fmt: skip
        elif held:
            print_table(("PERMISSION", "TYPE"),
                        [(permission_text(p.name, p.environment), p.type or "")
                         for p in held])  # fmt: skip
        else:
            echo("It holds no permissions.")
    return out.done(EXIT_OK)


async def _catalogue(client: AdminClient, out: Output) -> int:
    async with client:
        catalogue = await _permissions(client)
    groups = catalogue.permissions
    environments = [env.name for env in groups.environments]
    of_environments = groups.environments[0].permissions if groups.environments else []
    rows = [(p.name, "root", p.displayName or "") for p in groups.root]
    rows += [(p.name, "project", p.displayName or "") for p in groups.project]
    rows += [(f"{p.name}:ENVIRONMENT", "environment", p.displayName or "")
             for p in of_environments]  # fmt: skip
    listed = [{"name": n, "type": t, "displayName": d} for n, t, d in rows]
    out.update(server=client.base_url, environments=environments, permissions=listed)
    if not out.as_json:
        print_table(("PERMISSION", "TYPE", "WHAT IT ALLOWS"), rows)
    out.say(f"{plural(len(rows), 'permission')} on {client.base_url}; environments: "
            f"{', '.join(environments) or 'none'}")  # fmt: skip
    return out.done(EXIT_OK)


async def _permissions(client: AdminClient) -> AdminPermissions:
    """The server's catalogue; on a server without it (open-source Unleash: 404) `Unsupported`
    saying that custom roles need Unleash Enterprise."""
    from app.api.capabilities import NEEDS_ENTERPRISE_ROLES
    from app.api.errors import NotFound, Unsupported

    try:
        return await client.permissions()
    except NotFound:
        raise Unsupported("Role permissions", NEEDS_ENTERPRISE_ROLES) from None


def _parsed(words: list[str], catalogue: AdminPermissions, kind: str) -> list[RolePermission]:
    from app.actions.roles import parse_permissions

    try:
        return parse_permissions(words, catalogue, kind)
    except ValueError as exc:
        raise UsageError(f"{exc}. Nothing was sent") from None


async def _plan(args: argparse.Namespace, client: AdminClient, connection: str,
                out: Output) -> RolePlan:  # fmt: skip
    """The plan `args` ask for, after the capability check (`Unsupported` on a server without
    custom roles, before anything is read)."""
    from app.actions.roles import Holders, RoleInUse, plan_create, plan_delete, read_holders
    from app.actions.runner import journal_of, require
    from app.registry import CREATE_ROLE, DELETE_ROLE, EDIT_ROLE

    caps = await client.capabilities()
    action = {"create": CREATE_ROLE, "edit": EDIT_ROLE, "delete": DELETE_ROLE}[args.what]
    require(caps, action)
    journal = journal_of(connection, caps)
    out.update(server=client.base_url, connection=connection)
    if args.what == "create":
        catalogue = await _permissions(client)
        permissions = _parsed(args.permission, catalogue, "root-custom" if args.type == "root"
                              else "custom")  # fmt: skip
        try:
            return plan_create(args.name, args.type, args.description, permissions, journal)
        except ValueError as exc:
            raise UsageError(f"{exc}. Nothing was sent") from None
    role, _ = await _find(client, args.role)
    before = await client.get_role(role.id)
    if args.what == "edit":
        return _edit_plan(args, before, await _permissions(client), journal)
    holders = await read_holders(client, before) if before.type not in ("root", "project") \
        else Holders()  # fmt: skip
    try:
        return plan_delete(before, holders, journal)
    except RoleInUse as exc:
        out.update(role=before.id, heldBy=_holders_json(holders))
        raise _InUse(str(exc)) from None
    except ValueError as exc:
        raise UsageError(f"{exc}. Nothing was sent") from None


def _edit_plan(args: argparse.Namespace, before: RoleWithPermissions,
               catalogue: AdminPermissions, journal: Any) -> RolePlan:  # fmt: skip
    from app.actions.roles import body_of, permission_text, plan_edit, wire_type
    from app.api.models import CreateRole

    now = body_of(before)
    kind = wire_type(args.type) if args.type else (now.type or "custom")
    if args.no_permissions:
        permissions: list[RolePermission] = []
    elif args.permission is not None:
        permissions = _parsed(args.permission, catalogue, kind)
    else:
        kept = [permission_text(p.name, p.environment) for p in now.permissions or []]
        if kind == "root-custom":  # a root role keeps no environment
            kept = [word.partition(":")[0] for word in kept]
        permissions = _parsed(kept, catalogue, kind) if kept else []
    added = _parsed(args.add_permission, catalogue, kind)
    removed = {permission_text(p.name, p.environment)
               for p in _parsed(args.remove_permission, catalogue, kind)}  # fmt: skip
    held = {permission_text(p.name, p.environment) for p in permissions}
    missing = sorted(removed - held)
    if missing:
        raise UsageError(f"--remove-permission {', '.join(missing)}: the role “{before.name}” "
                         "does not hold it. Nothing was sent")  # fmt: skip
    permissions = [p for p in permissions + added
                   if permission_text(p.name, p.environment) not in removed]  # fmt: skip
    unique = list({permission_text(p.name, p.environment): p for p in permissions}.values())
    try:
        after = CreateRole(
            name=args.name if args.name is not None else now.name,
            description=args.description if args.description is not None else now.description,
            type=kind, permissions=unique,
        )  # fmt: skip
        return plan_edit(before, after, journal)
    except ValueError as exc:  # pydantic's ValidationError too (a name with control characters)
        raise UsageError(f"{exc}. Nothing was sent") from None


class _InUse(Exception):
    """The role is held: nothing was sent (exit status 1)."""


def _holders_json(holders: Any) -> dict[str, Any]:
    return {"users": list(holders.users), "groups": list(holders.groups),
            "serviceAccounts": list(holders.service_accounts),
            "projects": [p.model_dump(mode="json") for p in holders.projects]}  # fmt: skip


async def _change(args: argparse.Namespace, client: AdminClient, connection: str,
                  out: Output) -> int:  # fmt: skip
    from app.actions.roles import RoleChanged, role_json
    from app.actions.runner import carry_out

    async with client:
        try:
            plan = await _plan(args, client, connection, out)
        except _InUse as exc:
            return out.fail(EXIT_REFUSED, str(exc))
        noun = {"create": "1 new role", "edit": "1 role changed", "delete": "1 role deleted"}
        if args.dry_run:
            return dry_run(out, [plan.request], plan.server, noun[args.what])
        if not args.yes and not confirmed(plan.lines(), plan.question):
            return out.fail(EXIT_REFUSED, "not confirmed: nothing was sent")
        changed: RoleChanged = await RoleChanged.of(client, await carry_out(client, plan))
    out.update(status=changed.status, journal=str(changed.journal), entry=changed.entry)
    if changed.role is not None:
        out.update(role=role_json(changed.role))
    out.say(_said(changed))
    return out.done(EXIT_OK)


def _said(changed: RoleChanged) -> str:
    plan = changed.plan
    if changed.role is not None and plan.before is None:
        return f"Created the role “{changed.role.name}” (id {changed.role.id}) on {plan.server}."
    if changed.role is not None:
        return f"Changed the role “{changed.role.name}” (id {changed.role.id}) on {plan.server}."
    assert plan.before is not None
    return f"Deleted the role “{plan.before.name}” (id {plan.before.id}) on {plan.server}."
