"""`BannersModel`: the server's banners (Unleash Enterprise 5.7+ and the sandbox; `GET
/api/admin/banners`) as a table, the one selected, and creating, editing (switching on or off
included) and deleting one through the plans `flagdesk banners` makes
(`app.actions.instance.plan_banner_create`, `plan_banner_edit`, `plan_banner_delete`) and the one
runner (`run_plan`: capability check, snapshot, journal, "data changed" notice). On open source
the tool is unavailable with the capability's reason ("Banners need Unleash Enterprise: …") and
nothing is sent.

The form is a `BannerForm`; `plan_save` turns it into a plan or raises `FormError` naming the
field that is wrong (an empty message, a field over the server's length, a link that is no URL,
path or "dialog", a dialog without its text), before anything is sent, so the form stays open
with what was typed. An edit starts from the banner as the server gave it (`banner_body`), so
what the form does not show (its icon) is kept.

QtCore only: no QtWidgets below `app/`.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from datetime import datetime
from operator import attrgetter
from typing import Any

from PySide6.QtCore import QObject, Signal

from app.actions.instance import DIALOG as DIALOG  # the window offers it
from app.actions.instance import BannerPlan as BannerPlan  # the window shows plans
from app.actions.instance import (
    banner_body,
    label,
    link_problem,
    plan_banner_create,
    plan_banner_delete,
    plan_banner_edit,
)
from app.actions.runner import journal_of
from app.api import errors as e
from app.api.models import Banner, CreateBanner
from app.changes import Resource
from app.registry import CREATE_BANNER, DELETE_BANNER, EDIT_BANNER
from app.text import count_text
from app.viewmodels.base import FormError as FormError  # the window catches it
from app.viewmodels.session import Session
from app.viewmodels.table import Column, TableModel, prepare_rows
from app.viewmodels.tools import ActionViewModel

#: how a banner looks, as Unleash's form offers them (the first is the server's default)
VARIANTS = ("info", "warning", "error", "success")
BUSY = "Another change is under way."
#: the form's fields, as `CreateBanner` names them, and how the form labels them ("" is the
#: form as a whole)
FIELDS = {"message": "Message", "variant": "Variant", "link": "Link", "linkText": "Link text",
          "dialogTitle": "Dialog title", "dialog": "Dialog text", "": ""}  # fmt: skip
#: each text field's longest, as the server takes it (`CreateBanner`)
LIMITS = {"message": 10_000, "variant": 100, "link": 2048, "linkText": 255,
          "dialogTitle": 255, "dialog": 10_000}  # fmt: skip

_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_MARKS = re.compile(r"(\*\*|__|\*|_|`|~~)")
_HEADING = re.compile(r"^\s{0,3}(#{1,6}\s+|>\s*|[-+*]\s+|\d+[.)]\s+)")


def plain_first_line(message: str) -> str:
    """The message's first line with something in it, its Markdown marks taken off:
    "**Upgrade** on [Friday](/x)" -> "Upgrade on Friday"."""
    for line in message.splitlines():
        text = _MARKS.sub("", _LINK.sub(r"\1", _HEADING.sub("", line))).strip()
        if text:
            return text
    return ""


@dataclass(slots=True)
class BannerRow:
    """One banner as the table shows it."""

    banner: Banner = field(repr=False)
    id: int
    message: str
    on: str
    variant: str
    sticky: bool
    link: str
    createdAt: datetime | None


def banner_rows(banners: list[Banner]) -> list[BannerRow]:
    return [BannerRow(b, b.id, plain_first_line(b.message), "on" if b.enabled else "off",
                      b.variant or VARIANTS[0], bool(b.sticky), b.link or "", b.createdAt)
            for b in banners]  # fmt: skip


BANNER_COLUMNS: list[Column[BannerRow]] = [
    Column("Message", attrgetter("message"),
           tooltip=lambda r: r.banner.message if r.banner.message.strip() != r.message
           or len(r.message) > 60 else None),
    Column("On/Off", attrgetter("on"), width=8,
           tooltip=lambda r: "Shown to every user of the server's UI" if r.on == "on"
           else "Not shown"),
    Column("Variant", attrgetter("variant"), width=10),
    Column("Sticky", attrgetter("sticky"), width=8,
           tooltip=lambda r: "Stays on top as the page scrolls" if r.sticky else None),
    Column("Link", attrgetter("link"), width=28,
           tooltip=lambda r: r.link if len(r.link) > 26 else None),
    Column("Created", attrgetter("createdAt"), width=20,
           sort_key=lambda r: (r.createdAt is None,
                               r.createdAt.timestamp() if r.createdAt else 0.0, r.id)),
    Column("Id", attrgetter("id"), numeric=True, shown=False),
]  # fmt: skip
#: the column that takes the width left
MESSAGE_COLUMN = 0
#: the column the list is sorted by when nothing is remembered: the server's order, oldest first
CREATED_COLUMN = 5


def banners_count_text(shown: int, total: int) -> str:
    return count_text(shown, total, "banner")


# ---------------------------------------------------------------------------- the form


@dataclass(frozen=True)
class BannerForm:
    """What the editor holds, as typed."""

    message: str = ""
    variant: str = VARIANTS[0]
    enabled: bool = True
    sticky: bool = False
    link: str = ""
    linkText: str = ""
    dialogTitle: str = ""
    dialog: str = ""

    @classmethod
    def of(cls, banner: Banner | None) -> BannerForm:
        """The form a banner opens with (a new one's: on, info, no link)."""
        if banner is None:
            return cls()
        return cls(banner.message, banner.variant or VARIANTS[0], banner.enabled is not False,
                   bool(banner.sticky), banner.link or "", banner.linkText or "",
                   banner.dialogTitle or "", banner.dialog or "")  # fmt: skip


def _nothing_as_none(text: str) -> str | None:
    return text if text.strip() else None


def form_body(form: BannerForm, banner: Banner | None) -> CreateBanner:
    """The body the form makes (an edit's on the banner as it is: its icon kept); `FormError`
    naming the field the server would refuse."""
    from pydantic import ValidationError

    if not form.message.strip():
        raise FormError("message", "The banner needs a message.")
    link = form.link.strip()
    texts = {"message": form.message, "variant": form.variant, "link": link,
             "linkText": form.linkText.strip(), "dialogTitle": form.dialogTitle.strip(),
             "dialog": form.dialog}  # fmt: skip
    for name, text in texts.items():  # in the form's order: the first wrong field is said
        if len(text) > LIMITS[name]:
            raise FormError(name, f"{FIELDS[name]}: {len(text):,} characters, over the "
                                  f"{LIMITS[name]:,} the server takes.")  # fmt: skip
        if name == "link" and link_problem(link):
            raise FormError("link", link_problem(link))
    if link == DIALOG and not form.dialog.strip():
        raise FormError("dialog", "A link to a dialog needs the dialog's text.")
    given: dict[str, Any] = {}
    if banner is not None:
        given = banner_body(banner).model_dump(exclude_none=True)
    # an info banner stays one without a variant when it had none (nothing to change)
    same_variant = banner is not None and banner.variant is None and form.variant == VARIANTS[0]
    given.update(message=form.message, enabled=form.enabled, sticky=form.sticky,
                 variant=None if same_variant else form.variant, link=_nothing_as_none(link),
                 linkText=_nothing_as_none(texts["linkText"]) if link else None,
                 dialogTitle=_nothing_as_none(texts["dialogTitle"]) if link == DIALOG else None,
                 dialog=_nothing_as_none(form.dialog) if link == DIALOG else None)  # fmt: skip
    try:
        return CreateBanner.model_validate({k: v for k, v in given.items() if v is not None})
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = str(problem["loc"][0]) if problem["loc"] else ""
        name = where if where in FIELDS else ""
        said = str(problem["msg"]).removeprefix("Value error, ")
        raise FormError(name, f"{FIELDS[name]}: {said}." if name else f"{said}.") from None


def _sentence(text: str) -> str:
    text = text.strip()
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "?", "!")) else f"{text}."


def field_of(error: Exception) -> str:
    """The form's field a server's refusal (400) is about, by what its message names, or ""."""
    if isinstance(error, e.ApiError) and error.status == 400:
        said = f"{error.message} {' '.join(str(d) for d in error.details)}"
        for name in ("linkText", "dialogTitle", "dialog", "link", "message", "variant"):
            if name in said:
                return name
    return ""


class BannersModel(ActionViewModel):
    #: the rows were loaded (or emptied)
    rows_loaded = Signal()
    #: the banner selected changed (or was read again)
    current_changed = Signal()
    #: a save (a creation, an edit) ended well
    save_finished = Signal()
    #: a save failed: (the form's field it is about, or "", the text)
    save_failed = Signal(str, str)

    shows = frozenset({Resource.BANNERS})

    def __init__(self, session: Session, parent: QObject | None = None) -> None:
        super().__init__("banners", session, parent)
        self.table: TableModel[BannerRow] = TableModel(BANNER_COLUMNS, self)
        self.selected: list[BannerRow] = []
        self._load_task: asyncio.Task[None] | None = None
        session.state_changed.connect(self.actions_changed)

    def is_empty(self) -> bool:
        return self.table.total_count == 0

    @property
    def empty_text(self) -> str:
        return ("No message is shown to the server's users. New banner… makes one (Unleash "
                "Enterprise shows it at the top of every page of its UI).")  # fmt: skip

    def load(self) -> None:
        if self._load_task is not None and not self._load_task.done():
            return
        self.set_status("Loading banners…")
        self._load_task = self.run(self._load())

    async def _load(self) -> None:
        client = await self.session.client()
        banners = (await client.banners()).banners
        sort = self.table.sort_state
        prepared = await asyncio.to_thread(
            prepare_rows, BANNER_COLUMNS, banner_rows(banners), [sort[0]] if sort else []
        )
        self.table.set_prepared(prepared)
        self.loaded = True
        kept = {s.id for s in self.selected}
        self.selected = [r for r in self.table.all_rows if r.id in kept]
        self.rows_loaded.emit()
        self.phase_changed.emit()
        self.actions_changed.emit()
        self.current_changed.emit()

    def select(self, rows: list[BannerRow]) -> None:
        """The rows selected in the window (what Edit…, Switch and Delete… act on)."""
        self.selected = rows
        self.actions_changed.emit()
        self.current_changed.emit()

    @property
    def current(self) -> BannerRow | None:
        return self.selected[0] if len(self.selected) == 1 else None

    @property
    def current_text(self) -> str:
        """A line over the selected banner's message."""
        row = self.current
        if row is None:
            return ("Select a banner to see its message." if not self.selected
                    else f"{len(self.selected)} banners selected.")  # fmt: skip
        shown = ("shown to every user of the server's UI" if row.on == "on"
                 else "off: shown to no one")  # fmt: skip
        sticky = ", sticky" if row.sticky else ""
        banner = row.banner
        link = ""
        if banner.link == DIALOG:
            link = (
                f" Its link “{banner.linkText or 'More info'}” opens a dialog"
                f"{f' “{banner.dialogTitle}”' if banner.dialogTitle else ''}."
            )
        elif banner.link:
            link = f" Its link “{banner.linkText or 'More info'}” goes to {banner.link}."
        return f"Banner {row.id} ({row.variant}{sticky}), {shown}.{link} The message:"

    # ------------------------------------------------------------------ reasons

    def _reason(self, action: Any) -> str:
        reason = self.action_reason(action)
        if reason:
            return reason
        return BUSY if self.acting else ""

    def _one(self, verb: str) -> str:
        if not self.selected:
            return f"Select the banner to {verb}."
        if len(self.selected) > 1:
            return f"Select one banner to {verb}."
        return ""

    def _sendable(self) -> str:
        """Why the selected banner cannot be sent back as it is ("" when it can): a server may
        hold texts its own form refuses (control characters), and an edit sends them all."""
        row = self.current
        if row is None:
            return ""
        try:
            banner_body(row.banner)
        except ValueError:
            return (f"The banner {label(row.banner)} holds control characters the server's form "
                    "refuses: it cannot be sent back as it is (it can be deleted).")  # fmt: skip
        return ""

    @property
    def create_reason(self) -> str:
        """Why New banner… cannot be used now ("" when it can)."""
        return self._reason(CREATE_BANNER)

    @property
    def edit_reason(self) -> str:
        return self._reason(EDIT_BANNER) or self._one("edit") or self._sendable()

    @property
    def switch_reason(self) -> str:
        return self._reason(EDIT_BANNER) or self._one("switch on or off") or self._sendable()

    @property
    def switch_text(self) -> str:
        """The switch's words: "Switch &off" for a banner that is on, else "Switch &on"."""
        row = self.current
        return "Switch o&ff" if row is not None and row.on == "on" else "Switch &on"

    @property
    def delete_reason(self) -> str:
        return self._reason(DELETE_BANNER) or self._one("delete")

    # ------------------------------------------------------------------ planning

    def _journal(self, reason: str) -> Any:
        caps = self.session.capabilities
        if reason or caps is None:
            raise FormError("", reason or "Not connected.")
        return journal_of(self.session.name, caps)

    def form_banner(self) -> Banner | None:
        """The banner Edit… opens (the selected one), None when it cannot."""
        row = self.current
        return row.banner if row is not None and not self.edit_reason else None

    def plan_save(self, banner: Banner | None, form: BannerForm) -> BannerPlan:
        """The confirmation's plan for the form: a new banner (`banner` None) or `banner`
        replaced. `FormError` naming the field that is wrong, or saying why it cannot be saved
        now (nothing is sent)."""
        reason = self.create_reason if banner is None else self._reason(EDIT_BANNER)
        journal = self._journal(reason)
        body = form_body(form, banner)
        if banner is None:
            return plan_banner_create(body, journal)
        try:
            return plan_banner_edit(banner, body, journal)
        except ValueError as exc:
            raise FormError("", _sentence(str(exc))) from None

    def plan_switch(self) -> BannerPlan | None:
        """The selected banner switched on or off (the whole banner sent, as an edit); None
        while `switch_reason` says why not."""
        row = self.current
        if self.switch_reason or row is None:
            return None
        caps = self.session.capabilities
        assert caps is not None
        body = banner_body(row.banner).model_copy(update={"enabled": row.on != "on"})
        return plan_banner_edit(row.banner, body, journal_of(self.session.name, caps))

    def plan_delete(self) -> BannerPlan | None:
        """The selected banner's deletion; None while `delete_reason` says why not."""
        row = self.current
        if self.delete_reason or row is None:
            return None
        caps = self.session.capabilities
        assert caps is not None
        return plan_banner_delete(row.banner, journal_of(self.session.name, caps))

    # ------------------------------------------------------------------ carrying out

    def save(self, plan: BannerPlan) -> asyncio.Task[None] | None:
        """Carry out a confirmed creation, edit or switch; None when another action is under
        way or the connection changed since the plan was made (`save_failed` says so)."""
        if not self._may_start(plan.server, "saved"):
            self.save_failed.emit("", self.outcome_error or BUSY)
            return None
        self._action_task = self.run(self._save(plan), busy=False)
        what = "Creating the banner" if plan.before is None else f"Saving {label(plan.before)}"
        self.set_status(f"{what}…")
        self.actions_changed.emit()
        return self._action_task

    async def _save(self, plan: BannerPlan) -> None:
        try:
            done = await self.run_plan(plan, after_sent=self.load)
            client = await self.session.client()
            shown = await client.read_answer(done.answer, Banner)
        except e.ClientError as exc:
            self._set_outcome_error(str(exc))
            self.report_error(self.outcome_error)
            if not self.closed:
                where = field_of(exc)
                said = exc.message if where and isinstance(exc, e.ApiError) else ""
                self.save_failed.emit(where, _sentence(said) if said else str(exc))
        else:
            if plan.before is None:
                text = f"Created the banner {label(shown)}"
            elif (
                plan.after is not None
                and plan.before.enabled is not plan.after.enabled
                and (
                    banner_body(plan.before).model_copy(update={"enabled": plan.after.enabled})
                    == plan.after
                )
            ):
                text = f"Switched {'on' if plan.after.enabled else 'off'} the banner {label(shown)}"
            else:
                text = f"Saved the banner {label(shown)}"
            self._set_outcome(f"{text} on {plan.server}.")
            if not self.closed:
                self.save_finished.emit()
        finally:
            self._finish()

    def delete(self, plan: BannerPlan) -> asyncio.Task[None] | None:
        """Carry out a confirmed deletion."""
        if not self._may_start(plan.server, "deleted"):
            return None
        assert plan.before is not None
        self._action_task = self.run(self._delete(plan), busy=False)
        self.set_status(f"Deleting the banner {label(plan.before)}…")
        self.actions_changed.emit()
        return self._action_task

    async def _delete(self, plan: BannerPlan) -> None:
        assert plan.before is not None
        try:
            await self.run_plan(plan, after_sent=self.load)
        except e.ClientError as exc:
            self._set_outcome_error(str(exc))
            self.report_error(self.outcome_error)
        else:
            self._set_outcome(f"Deleted the banner {label(plan.before)} on {plan.server}. "
                              f"Snapshot: {plan.snapshot}")  # fmt: skip
            self.selected = []
        finally:
            self._finish()

    # ------------------------------------------------------------------ common

    def _finish(self) -> None:
        super()._finish()
        if not self.closed:
            self.current_changed.emit()

    def reset(self) -> None:
        """A new connection: the old one's rows and selection go."""
        self._load_task = None
        self.loaded = False
        self.selected = []
        self.table.clear()
        self.rows_loaded.emit()
        self.actions_changed.emit()
        self.current_changed.emit()

    def close(self) -> None:
        if not self.closed:
            self.session.state_changed.disconnect(self.actions_changed)
        super().close()
