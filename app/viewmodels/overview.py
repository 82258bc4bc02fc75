"""`OverviewModel`: the main window's view-model. It connects to one server, then loads what the
overview shows: the server's name and version, the number of users and the projects.

The connection comes from a `connect` coroutine function rather than a ready client, so that the
embedded sandbox can be started (which takes a second) while the window is already up, and so
that Retry can try to connect again when that failed. Whoever supplies `connect` owns the client
it returns and closes it; the model never does.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from PySide6.QtCore import QObject, Signal

from app.api.client import AdminClient
from app.api.errors import ApiError
from app.api.models import Project, ProjectList, UiConfig, UserList
from app.viewmodels.base import ViewModel
from app.viewmodels.table import Column, TableModel

Connect = Callable[[], Awaitable[AdminClient]]
log = logging.getLogger("flagdesk.overview")

ONBOARDING_TEXT = {
    "onboarding-started": "Onboarding started",
    "first-flag-created": "First flag created",
    "sdk-connected": "SDK connected",
    "onboarded": "Onboarded",
}


def onboarding_text(project: Project) -> str | None:
    if project.onboardingStatus is None:
        return None
    status = project.onboardingStatus.status
    return ONBOARDING_TEXT.get(status, status)


def onboarding_tooltip(project: Project) -> str | None:
    feature = getattr(project.onboardingStatus, "feature", None)
    return f"First flag: {feature}" if feature else None


PROJECT_COLUMNS: list[Column[Project]] = [
    Column("Name", lambda p: p.name, tooltip=lambda p: p.description or None),
    Column("ID", lambda p: p.id),
    Column("Flags", lambda p: p.featureCount, numeric=True),
    Column("Members", lambda p: p.memberCount, numeric=True),
    Column("Onboarding", onboarding_text, tooltip=onboarding_tooltip),
]


class OverviewModel(ViewModel):
    #: server info, user count or projects changed
    changed = Signal()
    #: a load finished successfully
    loaded = Signal()

    def __init__(
        self,
        connect: Connect,
        *,
        source: str,
        connect_text: str = "Connecting…",
        reconnect: Callable[[], object] | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._connect = connect
        #: what Retry calls when there is no client yet (the session opens its target again)
        self._reconnect = reconnect
        self._connect_text = connect_text
        self._client: AdminClient | None = None
        self._load_task: asyncio.Task[None] | None = None
        self.source = source
        self.url = ""
        self.server_name = ""
        self.server_version = ""
        #: None until loaded, or when the token may not list users
        self.user_count: int | None = None
        self.users_note = ""
        self.projects: TableModel[Project] = TableModel(PROJECT_COLUMNS, self)

    @property
    def has_data(self) -> bool:
        """Something was loaded at least once."""
        return bool(self.server_version)

    def load(self) -> asyncio.Task[None]:
        """Connect if need be, then (re)load everything. A second call while a load is running
        returns the running task instead of starting another."""
        if self._load_task is not None and not self._load_task.done():
            return self._load_task
        self._load_task = self.run(self._load())
        self.set_status(self._connect_text if self._client is None else "Loading…")
        return self._load_task

    def retry(self) -> None:
        if self._client is None and self._reconnect is not None:
            self._reconnect()
        else:
            self.load()

    def reset(self, source: str, status: str = "", url: str = "") -> None:
        """Forget what was loaded (a new connection is coming); show `status` meanwhile."""
        self.cancel_tasks()
        self._load_task = None
        self._client = None
        self.source = source
        self.server_name = self.server_version = self.users_note = ""
        self.url = url
        self.user_count = None
        self.projects.set_rows([])
        self.set_error("")
        self.set_status(status)
        self.changed.emit()

    async def _load(self) -> None:
        if self._client is None:
            self.set_status(self._connect_text)
            self._client = await self._connect()
            self.url = self._client.base_url
            self.changed.emit()
        client = self._client
        self.set_status("Loading…")
        ui, projects, users = await _all(
            client.ui_config(), client.list_projects(), client.list_users()
        )
        self.server_name = ui.name or "Unleash"
        self.server_version = ui.version
        if isinstance(users, UserList):
            self.user_count, self.users_note = len(users.users), ""
        else:  # listing users needs the Admin root role; the rest of the overview does not
            self.user_count, self.users_note = None, f"not available ({users.message})"
        self.projects.set_rows(projects.projects)
        self.changed.emit()
        self.loaded.emit()
        # (bench/gui_startup.py --bundle reads this line's time: the first data shown)
        log.info("overview loaded from %s: %s %s, %d projects", self.url, self.server_name,
                 self.server_version, len(projects.projects))  # fmt: skip


async def _all(
    ui: Awaitable[UiConfig], projects: Awaitable[ProjectList], users: Awaitable[UserList]
) -> tuple[UiConfig, ProjectList, UserList | ApiError]:
    """The three requests at once. The first error is raised once all three ended (so none is
    left running), except a 403 on the users, which is returned in place of the list."""
    results = await asyncio.gather(ui, projects, users, return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException) and not _is_forbidden(result, results[2]):
            raise result
    r_ui, r_projects, r_users = results
    assert isinstance(r_ui, UiConfig) and isinstance(r_projects, ProjectList)
    assert isinstance(r_users, UserList | ApiError)
    return r_ui, r_projects, r_users


def _is_forbidden(result: BaseException, users_result: object) -> bool:
    return result is users_result and isinstance(result, ApiError) and result.status == 403
