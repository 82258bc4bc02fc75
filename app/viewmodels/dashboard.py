"""`ProjectDashboardModel`: one project's personal dashboard (`GET
/api/admin/personal-dashboard/:projectId`): its onboarding status, its owners, the roles the
token's user holds in it and its latest events, ready for a window to show. QtCore only.

Each window has a model of its own, so several dashboards (one per project) can be open side by
side on one session. A failure is explained rather than shown raw: a token that cannot read the
dashboard (401, 403, or the 500 Unleash answers an admin API token with) gets the steps to make a
personal access token; an unknown project says so by name.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime

from PySide6.QtCore import QObject, Signal

from app.api import errors as e
from app.api.capabilities import NEEDS_PAT
from app.api.models import (
    GroupOwner,
    OnboardingStatusFirstFlag,
    PersonalDashboardProjectDetails,
    SystemOwner,
    UserOwner,
)
from app.changes import Resource
from app.text import plural
from app.viewmodels.choices import ChoicesModel, project_choices, revalidated
from app.viewmodels.session import Session
from app.viewmodels.tools import ToolViewModel, tool_available

#: how to get a token that can read the dashboard (Unleash's menus, then flagdesk's)
PAT_STEPS = (
    "To create a personal access token, open the Unleash web interface and go to Profile > "
    "Personal API tokens > New token. Then, in flagdesk, open File > Connections (Ctrl+K), edit "
    "this connection's profile and paste the new token in place of the old one."
)
NEEDS_PAT_TITLE = "The dashboard needs a personal access token"

SYSTEM_OWNER_NAME = "System (no owner set)"
SYSTEM_OWNER_DETAIL = "No user or group holds the Owner role in this project"

#: the onboarding statuses flagdesk knows: (badge text, what it means, tone)
ONBOARDING: dict[str, tuple[str, str, str]] = {
    "onboarding-started": (
        "Onboarding started",
        "No feature flag has been created in this project yet.",
        "neutral",
    ),
    "first-flag-created": (
        "First flag created",
        "A first flag exists; no SDK has reported using this project's flags yet.",
        "progress",
    ),
    "sdk-connected": (
        "SDK connected",
        "An SDK has connected and is reading this project's flags.",
        "progress",
    ),
    "onboarded": ("Onboarded", "Applications use this project's flags.", "done"),
}

#: what each role type means, for a badge's tooltip
ROLE_TYPES: dict[str, str] = {
    "project": "a role in this project",
    "custom": "a custom role in this project",
    "root": "the user's root role on the whole server",
    "custom-root": "a custom root role on the whole server",
    # Unleash's own word for a custom root role (the spec's enum says custom-root)
    "root-custom": "a custom root role on the whole server",
}


@dataclass(frozen=True)
class Onboarding:
    status: str
    #: the badge's text ("First flag created: checkout-v2")
    text: str
    #: what the status means
    detail: str
    #: "neutral", "progress", "done": the badge's colour
    tone: str


@dataclass(frozen=True)
class OwnerItem:
    #: "user", "group" or "system"
    kind: str
    name: str
    #: a second line: the email of a user, "Group" for a group, what the system owner means
    detail: str
    image_url: str | None = None


@dataclass(frozen=True)
class RoleItem:
    name: str
    type: str

    @property
    def text(self) -> str:
        """ "Owner · project", "Admin · root"."""
        return f"{self.name} · {self.type}" if self.type else self.name

    @property
    def meaning(self) -> str:
        return ROLE_TYPES.get(self.type, f"a role of type {self.type!r}")


@dataclass(frozen=True)
class EventItem:
    id: int
    author: str
    image_url: str
    #: markdown, as the server sent it (never trusted: the window renders it safely)
    summary: str
    created_at: datetime | None

    @property
    def local_time(self) -> str:
        """ "2026-11-21 14:03" in the local time zone ("" when the server did not say)."""
        return local_time(self.created_at) if self.created_at is not None else ""

    def relative_time(self, now: datetime | None = None) -> str:
        """ "3 hours ago" ("" when the server did not say)."""
        if self.created_at is None:
            return ""
        return relative_time(self.created_at, now or datetime.now(UTC))


def local_time(when: datetime) -> str:
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone().strftime("%Y-%m-%d %H:%M")


def relative_time(when: datetime, now: datetime) -> str:
    """ "just now", "1 minute ago", "3 hours ago", "2 days ago", "5 months ago", "in 2 hours"."""
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    seconds = (now - when).total_seconds()
    ahead, seconds = seconds < 0, abs(seconds)
    if seconds < 45:
        return "just now"
    for size, unit in ((365 * 86400, "year"), (30 * 86400, "month"), (86400, "day"),
                       (3600, "hour"), (60, "minute")):  # fmt: skip
        if seconds >= size * 0.95 or unit == "minute":
            count = max(1, round(seconds / size))
            words = plural(count, unit)
            return f"in {words}" if ahead else f"{words} ago"
    raise AssertionError("unreachable")


def onboarding_of(details: PersonalDashboardProjectDetails) -> Onboarding:
    status = details.onboardingStatus
    text, detail, tone = ONBOARDING.get(
        status.status,
        (status.status, "A status this version of flagdesk does not know.", "neutral"),
    )
    if isinstance(status, OnboardingStatusFirstFlag):
        text = f"{text}: {status.feature}"
        detail = (
            f"The first flag, {status.feature}, exists; no SDK has reported using this "
            "project's flags yet."
        )
    return Onboarding(status.status, text, detail, tone)


def owners_of(details: PersonalDashboardProjectDetails) -> list[OwnerItem]:
    owners: list[OwnerItem] = []
    for owner in details.owners:
        if isinstance(owner, UserOwner):
            owners.append(
                OwnerItem("user", owner.name or owner.email or "?", owner.email or "",
                          owner.imageUrl)
            )  # fmt: skip
        elif isinstance(owner, GroupOwner):
            owners.append(OwnerItem("group", owner.name, "Group"))
        elif isinstance(owner, SystemOwner):
            owners.append(OwnerItem("system", SYSTEM_OWNER_NAME, SYSTEM_OWNER_DETAIL))
    return owners


def explain(
    error: e.ClientError, project: str, token_kind: str | None, user_name: str | None = None
) -> tuple[str, str, bool]:
    """A failure to read `project`'s dashboard as (title, text, whether a personal access token
    is what is needed), in words a person can act on."""
    if isinstance(error, e.Unauthorized):
        return (
            NEEDS_PAT_TITLE,
            "The server did not accept the connection's token: it may have expired or been "
            f"deleted.\n\n{PAT_STEPS}",
            True,
        )
    if isinstance(error, e.Forbidden):
        if token_kind == "personal":
            who = user_name or "the token's user"
            return (
                f"No access to the dashboard of {project}",
                f"The server says {who} may not read this project's dashboard. Ask a project "
                "owner or an admin for access, or use a personal access token of a user who "
                f"has it.\n\n{PAT_STEPS}",
                True,
            )
        return (
            NEEDS_PAT_TITLE,
            "The connection's token may not read the dashboard: it shows a project as the user "
            f"behind a personal access token sees it.\n\n{PAT_STEPS}",
            True,
        )
    if isinstance(error, e.ServerError) and token_kind == "admin":
        return (
            NEEDS_PAT_TITLE,
            "The dashboard shows a project as the user behind the token sees it, and an admin "
            "API token has no user behind it (Unleash answers it with a server error).\n\n"
            f"{PAT_STEPS}",
            True,
        )
    if isinstance(error, e.NotFound):
        if "path you were looking for" in error.message:
            return (
                "This server has no project dashboard",
                "It does not know the personal dashboard endpoint (it came with Unleash 6.3).",
                False,
            )
        return (
            f"No project {project} on this server",
            "Check the project id, or pick a project from the list.",
            False,
        )
    if isinstance(error, e.Unsupported):
        return ("The dashboard is not available on this connection", str(error), False)
    return (f"Could not load the dashboard of {project}", str(error), False)


class ProjectDashboardModel(ToolViewModel):
    """One window's dashboard: the project asked for, and what the server said about it."""

    #: the project to show changed (the typed or picked id)
    project_changed = Signal(str)
    #: the dashboard (or the lack of one) changed
    changed = Signal()

    shows = frozenset({Resource.PROJECTS, Resource.USERS, Resource.GROUPS})

    def __init__(self, session: Session, parent: QObject | None = None) -> None:
        super().__init__("project_dashboard", session, parent)
        #: the server's projects, for the picker
        self.choices: ChoicesModel = project_choices(session, self)
        self.choices.changed.connect(self._on_choices_changed)
        #: the project asked for ("" until one is chosen)
        self.project = ""
        #: the project the data below belongs to ("" when there is none)
        self.loaded_project = ""
        self.details: PersonalDashboardProjectDetails | None = None
        self.onboarding: Onboarding | None = None
        self.owners: list[OwnerItem] = []
        self.roles: list[RoleItem] = []
        self.events: list[EventItem] = []
        #: the error page's title and text (`error` holds both, for the status bar)
        self.error_title = ""
        self.error_detail = ""
        #: the last failure is one a personal access token would fix
        self.needs_personal_token = False
        #: what was done on a new connection with the project chosen on the previous one
        #: ("" when it is shown as asked)
        self.notice = ""
        self._load_task: asyncio.Task[None] | None = None
        #: the check of a project chosen on the previous connection (see `_revalidate`)
        self._checking: asyncio.Task[None] | None = None

    # ------------------------------------------------------------------ what is shown

    @property
    def has_data(self) -> bool:
        return self.details is not None and self.loaded_project == self.project

    @property
    def project_label(self) -> str:
        """The project's name as the server's list has it ("Web shop (web-shop)"), else its id."""
        choice = self.choices.find(self.project) if self.project else None
        return choice.label if choice is not None else self.project

    @property
    def project_name(self) -> str:
        """The project's name alone ("Web shop"), else its id."""
        choice = self.choices.find(self.project) if self.project else None
        if choice is None:
            return self.project
        suffix = f" ({choice.value})"
        return choice.label.removesuffix(suffix) if choice.label.endswith(suffix) else choice.label

    @property
    def project_detail(self) -> str:
        """The project's description, as the server's list has it."""
        choice = self.choices.find(self.project) if self.project else None
        return choice.detail if choice is not None else ""

    @property
    def roles_heading(self) -> str:
        caps = self.session.capabilities
        if caps is not None and caps.token_kind == "personal" and caps.user_name:
            return f"Roles of {caps.user_name}"
        return "Your roles"

    @property
    def no_roles_text(self) -> str:
        caps = self.session.capabilities
        if caps is not None and caps.token_kind == "personal" and caps.user_name:
            return f"None: {caps.user_name} holds no role in this project."
        return "None: you hold no role in this project."

    @property
    def access_available(self) -> bool:
        """The owners' link to the project's access can lead somewhere: the connection has
        project access (Unleash Pro and Enterprise, the sandbox; issue 36)."""
        return tool_available(self.session, "project_access")

    # ------------------------------------------------------------------ the window's state

    def is_loaded(self) -> bool:
        """The project asked for is shown (when none is, there is nothing to load)."""
        return not self.project or self.has_data

    def is_empty(self) -> bool:
        """No project asked for yet: the empty state asks for one."""
        return not self.project

    @property
    def waiting_text(self) -> str:
        return self.session.message or "Connecting…"

    @property
    def _reason(self) -> str:
        caps = self.session.capabilities
        return caps.operation(self.tool.key).reason if caps is not None else ""

    @property
    def unavailable_title(self) -> str:
        """Why the dashboard cannot be read on this connection, the title: no connection, or
        one whose token cannot read it."""
        if not self.session.ready:
            return "Not connected"
        if self._reason == NEEDS_PAT:
            return NEEDS_PAT_TITLE
        return "Not available on this connection"

    @property
    def unavailable_reason(self) -> str:
        if not self.session.ready:
            return self.session.message or "Choose a connection (Ctrl+K)."
        reason = self._reason
        return PAT_STEPS if reason == NEEDS_PAT else reason  # the page's banner says why

    @property
    def loading_text(self) -> str:
        return self.status or f"Loading the dashboard of {self.project}…"

    @property
    def failed_title(self) -> str:
        """The failure explained (`explain`), or, for one not from the server (no connection
        any more, say), a plain title."""
        return self.error_title or "Could not load the dashboard"

    @property
    def failed_text(self) -> str:
        return self.error_detail if self.error_title else self.error

    @property
    def empty_title(self) -> str:
        return "Choose a project"

    @property
    def empty_text(self) -> str:
        return (
            "Pick one of the server's projects above, or type a project id and press Enter, "
            "to see its owners, your roles in it and its latest events."
        )

    # ------------------------------------------------------------------ what is shown

    @property
    def no_events_text(self) -> str:
        return f"No events in {self.project_name} yet"

    @property
    def no_events_detail(self) -> str:
        return "Changes to the project and its flags will be listed here as they happen."

    # ------------------------------------------------------------------ actions

    def start(self) -> None:
        if self.session.ready:
            self.choices.load()
        super().start()

    def refresh(self) -> None:
        """F5, Retry: the project list and the dashboard again."""
        if self.closed:
            return
        if self.session.ready:
            self.choices.load()
        super().refresh()

    def show_project(self, project: str) -> None:
        """Show `project`'s dashboard (load it, also when it is already shown)."""
        project = project.strip()
        if not project or self.closed:
            return
        self._stop_checking()
        if project != self.project:
            self.project = project
            self.project_changed.emit(project)
        self.error_title = self.error_detail = ""
        self.needs_personal_token = False
        self.notice = ""
        self.set_error("")
        self.changed.emit()
        if self.available:
            self.load()

    def on_connection_changed(self) -> None:
        """A project id belongs to the server it was chosen on: on the new one it is checked
        against the server's projects before anything is asked about it (see `revalidated`)."""
        asked = self.project
        self.reset()
        if not (self._started and self.available):
            return
        if asked:
            self._load_task = self._checking = self.run(self._revalidate(asked))
            self.changed.emit()
        else:
            self.load()

    def _stop_checking(self) -> None:
        """Another project was chosen: what the check would pick does not matter any more."""
        if self._checking is not None:
            self._checking.cancel()
            self._checking = None

    async def _revalidate(self, asked: str) -> None:
        self.set_status("Checking the project on this server…")
        listed = await self.choices.listed()
        project, self.notice = revalidated(asked, listed, self.session.name)
        if project != self.project:
            self.project = project
            self.project_changed.emit(project)
        self.changed.emit()
        await self._load(project)

    def load(self) -> None:
        if not self.project or self.closed:
            self.changed.emit()
            return
        if self._checking is not None and not self._checking.done():
            return  # F5 while the project is checked on a new server: the check loads it
        if self._load_task is not None and not self._load_task.done():
            self._load_task.cancel()  # an older project's answer is not wanted any more
        self._load_task = self.run(self._load(self.project))
        self.changed.emit()

    def reset(self) -> None:
        self.loaded_project = ""
        self.details = None
        self.onboarding = None
        self.owners, self.roles, self.events = [], [], []
        self.error_title = self.error_detail = ""
        self.needs_personal_token = False
        self.notice = ""
        self.changed.emit()

    async def _load(self, project: str) -> None:
        self.error_title = self.error_detail = ""
        self.set_status(f"Loading the dashboard of {self.project_label}…")
        client = await self.session.client()
        try:
            details = await client.personal_dashboard(project)
        except e.ClientError as exc:
            if project != self.project:
                return
            caps = self.session.capabilities
            title, text, needs_pat = explain(
                exc,
                project,
                caps.token_kind if caps is not None else None,
                caps.user_name if caps is not None else None,
            )
            self.error_title, self.error_detail = title, text
            self.needs_personal_token = needs_pat
            self.loaded_project = ""
            self.details = None
            # `error` (whose first line the status bar shows) is the title, then the explanation
            raise e.ClientError(f"{title}\n\n{text}") from exc
        if project != self.project:
            return
        self._show(project, details)

    def _show(self, project: str, details: PersonalDashboardProjectDetails) -> None:
        self.loaded_project = project
        self.details = details
        self.onboarding = onboarding_of(details)
        self.owners = owners_of(details)
        self.roles = [RoleItem(r.name, r.type) for r in details.roles]
        self.events = [
            EventItem(ev.id, ev.createdBy, ev.createdByImageUrl, ev.summary or "", ev.createdAt)
            for ev in details.latestEvents
        ]
        self.error_title = self.error_detail = ""
        self.needs_personal_token = False
        self.changed.emit()

    def _on_choices_changed(self) -> None:
        if not self.closed:
            self.changed.emit()  # the project's name may be known now

    def close(self) -> None:
        if not self.closed:
            self.choices.close()
        super().close()
