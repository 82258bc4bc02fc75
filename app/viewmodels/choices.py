"""`ChoicesModel`: what a picker offers (the server's projects, its context fields), loaded for
the current connection. A picker also takes a typed value, so a failure to list is a note under
the picker, not a dead end. QtCore only."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal

from app.api.client import AdminClient
from app.viewmodels.session import Session
from app.viewmodels.tools import SessionViewModel


@dataclass(frozen=True)
class Choice:
    #: what is sent to the server (a project id, a context field's name)
    value: str
    #: what the list shows
    label: str
    #: a second line / tooltip (the description)
    detail: str = ""


Fetch = Callable[[AdminClient], Awaitable[list[Choice]]]


class ChoicesModel(SessionViewModel):
    changed = Signal()

    def __init__(
        self, session: Session, fetch: Fetch, noun: str, parent: QObject | None = None
    ) -> None:
        super().__init__(session, parent)
        self._fetch = fetch
        #: "projects", "context fields": for the texts
        self.noun = noun
        self.choices: list[Choice] = []
        #: `choices` are the current connection's (listed since it was made)
        self.loaded = False
        self._task: asyncio.Task[list[Choice] | None] | None = None

    def load(self) -> None:
        if self.session.ready and not self.closed:
            self._task = self.run(self._load())

    async def _load(self) -> list[Choice]:
        client = await self.session.client()
        try:
            choices = await self._fetch(client)
        finally:
            # also on failure: the picker says why the list is empty (but not once closed: a
            # closed window's QObject may already be deleted when the cancellation lands here)
            if not self.closed:
                self.changed.emit()
        self.choices = choices
        self.loaded = True
        if not self.closed:
            self.changed.emit()
        return choices

    async def listed(self) -> list[Choice] | None:
        """The current connection's choices, once listed (loading them if nobody is); None when
        the server did not list them (`error` says why)."""
        if self._task is None:
            self.load()
        task = self._task
        if task is None:
            return None
        # shielded: the caller being cancelled (another project picked) must not stop the list
        await asyncio.shield(task)
        return self.choices if self.loaded else None

    def on_connection_changed(self) -> None:
        self.choices = []
        self.loaded = False
        self._task = None
        self.changed.emit()
        self.load()

    def find(self, text: str) -> Choice | None:
        """The choice whose value or label is `text` (any case)."""
        folded = text.strip().casefold()
        for choice in self.choices:
            if folded in (choice.value.casefold(), choice.label.casefold()):
                return choice
        return None


#: the project every Unleash server starts with
DEFAULT_PROJECT = "default"


def revalidated(asked: str, choices: list[Choice] | None, server: str) -> tuple[str, str]:
    """A project id typed on another connection, checked against this server's projects:
    (the project to show, a note saying what was done instead, "" when nothing was).

    Shown as asked when the server lists it, or when its list is unknown or empty (nothing
    better to offer; the server's answer will say). Otherwise its `default` project, else its
    first, is shown in its place, and the note says so."""
    if not asked or not choices or any(c.value == asked for c in choices):
        return asked, ""
    instead = next((c for c in choices if c.value == DEFAULT_PROJECT), choices[0])
    return instead.value, (
        f"{server} has no project “{asked}” (it was chosen on the previous connection): "
        f"showing {instead.label} instead."
    )


async def _projects(client: AdminClient) -> list[Choice]:
    projects = (await client.list_projects()).projects
    return sorted(
        (Choice(p.id, p.name if p.name == p.id else f"{p.name} ({p.id})", p.description or "")
         for p in projects),
        key=lambda c: c.label.casefold(),
    )  # fmt: skip


async def _context_fields(client: AdminClient) -> list[Choice]:
    fields = await client.list_context_fields()
    return sorted(
        (Choice(f.name, f.name, f.description or "") for f in fields),
        key=lambda c: c.label.casefold(),
    )


def project_choices(session: Session, parent: QObject | None = None) -> ChoicesModel:
    return ChoicesModel(session, _projects, "projects", parent)


def context_field_choices(session: Session, parent: QObject | None = None) -> ChoicesModel:
    return ChoicesModel(session, _context_fields, "context fields", parent)
