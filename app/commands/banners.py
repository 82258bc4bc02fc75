"""`flagdesk banners list|create|edit|delete`: the banners every user of the server's UI sees
(Unleash Enterprise 5.7+ and the sandbox), through the plans and journal of
`app.actions.instance`. No Qt; the client and the actions are imported by the running
command."""

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
    need_terminal,
    print_table,
    run_job,
)
from app.text import plural

if TYPE_CHECKING:
    from app.api.client import AdminClient
    from app.api.models import Banner, CreateBanner

DESCRIPTION = """\
Banners: messages every user of the server's UI sees (Unleash Enterprise 5.7 and later, the
sandbox; open-source Unleash has none: the command says so, with exit status 4, and sends
nothing). GET, POST /api/admin/banners, PUT and DELETE /api/admin/banners/ID.

  flagdesk banners list [--json]
  flagdesk banners create --message TEXT [--variant info|warning|error|success] [--off]
                          [--sticky] [--link URL] [--link-text T] [--dry-run] [--yes] [--json]
  flagdesk banners edit ID [--message TEXT] [--variant V] [--on | --off] [--sticky | --not-sticky]
                          [--link URL] [--link-text T] [--dry-run] [--yes] [--json]
  flagdesk banners delete ID [--dry-run] [--yes] [--json]

The message is Markdown. `edit` sends the whole banner (the server replaces it): what is not
given is kept as it is. Changing banners needs an Admin's token.

The journal records each change before it is sent and the answer after (an edit and a deletion
write the banner to a snapshot first); `flagdesk journal undo ENTRY` deletes a banner made,
puts an edited one back, and creates a deleted one again (under a new id). On a terminal a
change asks first; without one it changes nothing unless --yes is given. --dry-run prints the
exact request and sends nothing.

exit status:
  0  listed, created, changed, deleted (or, with --dry-run, printed)
  1  the server refused (its message is printed), or the answer was no
  2  bad usage: no such banner, a message that is empty, no terminal to ask and no --yes
  3  the server was unreachable
  4  the token was refused, or the server has no banners
"""

VARIANTS = ("info", "warning", "error", "success")
#: each change's verb, and what "nothing was ..." says
VERBS = {"create": ("create", "created"), "edit": ("change", "changed"),
         "delete": ("delete", "deleted")}  # fmt: skip


def _fields(parser: argparse.ArgumentParser, *, required: bool) -> None:
    parser.add_argument("--message", required=required, metavar="TEXT",
                        help="what the banner says (Markdown)")  # fmt: skip
    parser.add_argument("--variant", choices=VARIANTS, help="how it looks (default info)")
    parser.add_argument("--link", metavar="URL", help="a link after the message (or `dialog`)")
    parser.add_argument("--link-text", metavar="T", help="the link's text (default More info)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="what", metavar="WHAT", required=True)
    listing = add_action(sub, "list", "list the banners", DESCRIPTION)
    create = add_action(sub, "create", "create a banner", DESCRIPTION)
    _fields(create, required=True)
    create.add_argument("--off", action="store_true", help="made switched off")
    create.add_argument("--sticky", action="store_true", help="stays on top as the page scrolls")
    add_change_options(create, "create")
    edit = add_action(sub, "edit", "change a banner", DESCRIPTION)
    edit.add_argument("banner", metavar="ID", help="the banner's id (`list` shows them)")
    _fields(edit, required=False)
    switch = edit.add_mutually_exclusive_group()
    switch.add_argument("--on", dest="enabled", action="store_const", const=True,
                        help="switch it on")  # fmt: skip
    switch.add_argument("--off", dest="enabled", action="store_const", const=False,
                        help="switch it off")  # fmt: skip
    sticky = edit.add_mutually_exclusive_group()
    sticky.add_argument("--sticky", dest="sticky", action="store_const", const=True)
    sticky.add_argument("--not-sticky", dest="sticky", action="store_const", const=False)
    add_change_options(edit, "change")
    delete = add_action(sub, "delete", "delete a banner", DESCRIPTION)
    delete.add_argument("banner", metavar="ID", help="the banner's id")
    add_change_options(delete, "delete")
    for each in (listing, create, edit, delete):
        add_connection_arguments(each)
        each.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    out = Output("flagdesk banners", args.what, args.json)
    try:
        if args.what != "list":
            verb, done = VERBS[args.what]
            need_terminal(args, "the banner's change", done, verb)
        client, connection = client_from_args(args)
    except UsageError as exc:
        return out.fail(EXIT_USAGE, str(exc))
    if args.what == "list":
        return run_job(out, _list(client, out))
    return run_job(out, _change(args, client, connection, out))


async def _list(client: AdminClient, out: Output) -> int:
    from app.actions.instance import banner_json
    from app.registry import BANNERS

    async with client:
        caps = await client.capabilities()
        available = caps.operation(BANNERS)
        if not available.available:
            from app.api.errors import Unsupported

            raise Unsupported(available.title, available.reason)
        banners = (await client.banners()).banners
    out.update(server=client.base_url, count=len(banners),
               banners=[banner_json(b) for b in banners])  # fmt: skip
    if not out.as_json:
        print_table(("ID", "ON", "VARIANT", "STICKY", "MESSAGE"),
                    [(str(b.id), "yes" if b.enabled else "no", b.variant or "info",
                      "yes" if b.sticky else "no", (b.message.splitlines() or [""])[0])
                     for b in banners])  # fmt: skip
    out.say(f"{plural(len(banners), 'banner')} on {client.base_url}")
    return out.done(EXIT_OK)


#: the options that set a banner's fields
_OPTIONS = {"message": "--message", "variant": "--variant", "link": "--link",
            "linkText": "--link-text", "enabled": "--on/--off", "sticky": "--sticky"}  # fmt: skip


def _body(args: argparse.Namespace, banner: Banner | None) -> CreateBanner:
    """The banner the options make (an edit: on the banner as it is); `UsageError` for one the
    server would refuse, naming the option (or the banner's field, as the server holds it)."""
    from pydantic import ValidationError

    from app.actions.instance import banner_fields, link_problem
    from app.api.models import CreateBanner

    given: dict[str, Any] = {} if banner is None else banner_fields(banner)
    for option, field in (("message", "message"), ("variant", "variant"), ("link", "link"),
                          ("link_text", "linkText")):  # fmt: skip
        value = getattr(args, option, None)
        if value is not None:
            given[field] = value
    if args.what == "create":
        given["enabled"] = not args.off
        given["sticky"] = bool(args.sticky)
    else:
        if args.enabled is not None:
            given["enabled"] = args.enabled
        if args.sticky is not None:
            given["sticky"] = args.sticky
    problem = link_problem(str(given.get("link") or ""))
    if problem:
        where = "--link" if getattr(args, "link", None) is not None else "the banner's link"
        raise UsageError(f"{where}: {problem} Nothing was sent")
    try:
        return CreateBanner.model_validate(given)
    except ValidationError as exc:
        said = "; ".join(_where(e["loc"], args) + f": {e['msg']}" for e in exc.errors())
        raise UsageError(f"not a banner the server takes ({said}). Nothing was sent") from None


def _where(loc: tuple[Any, ...], args: argparse.Namespace) -> str:
    """The option that set a field, or the field as the banner holds it (an edit keeps what
    no option changes)."""
    field = str(loc[0]) if loc else ""
    option = _OPTIONS.get(field)
    attribute = {"linkText": "link_text"}.get(field, field)
    if option and getattr(args, attribute, None) is not None:
        return option
    return (
        f"the banner's {field or 'body'} (as the server holds it)"
        if args.what == "edit"
        else (option or field)
    )


async def _change(args: argparse.Namespace, client: AdminClient, connection: str,
                  out: Output) -> int:  # fmt: skip
    from app.actions.instance import (
        banner_json,
        find_banner,
        plan_banner_create,
        plan_banner_delete,
        plan_banner_edit,
    )
    from app.actions.runner import carry_out, journal_of, require
    from app.registry import CREATE_BANNER, DELETE_BANNER, EDIT_BANNER

    action = {"create": CREATE_BANNER, "edit": EDIT_BANNER, "delete": DELETE_BANNER}[args.what]
    async with client:
        caps = await client.capabilities()
        require(caps, action)
        journal = journal_of(connection, caps)
        if args.what == "create":
            plan = plan_banner_create(_body(args, None), journal)
        else:
            listed = (await client.banners()).banners
            try:
                banner = find_banner(args.banner, listed, client.base_url)
                if args.what == "edit":
                    plan = plan_banner_edit(banner, _body(args, banner), journal)
                else:
                    plan = plan_banner_delete(banner, journal)
            except ValueError as exc:
                raise UsageError(f"{exc}. Nothing was sent") from None
        out.update(server=plan.server, connection=connection)
        if args.dry_run:
            return dry_run(out, [plan.request], plan.server, "1 banner")
        if not args.yes and not confirmed(plan.lines(), plan.question):
            return out.fail(EXIT_REFUSED, f"not confirmed: nothing was {VERBS[args.what][1]}")
        done = await carry_out(client, plan)
        shown = None
        if args.what != "delete":
            from app.api.models import Banner

            shown = await client.read_answer(done.answer, Banner)
    out.update(status=done.status, journal=str(done.journal), entry=done.entry)
    if shown is not None:
        out.update(id=shown.id, banner=banner_json(shown))
        out.say(f"{'Created' if args.what == 'create' else 'Changed'} the banner {shown.id} on "
                f"{plan.server}.")  # fmt: skip
    else:
        out.say(f"Deleted the banner {args.banner} on {plan.server}.")
    return out.done(EXIT_OK)
