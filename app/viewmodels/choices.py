"""`ChoicesModel`: what a picker offers (the server's projects, its context fields), loaded for
the current connection. A picker also takes a typed value, so a failure to list is a note under
the picker, not a dead end. QtCore only."""

from __future__ import annotations

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

    def load(self) -> None:
        if self.session.ready and not self.closed:
            self.run(self._load())

    async def _load(self) -> None:
        client = await self.session.client()
        try:
            choices = await self._fetch(client)
        finally:
            # also on failure: the picker says why the list is empty (but not once closed: a
            # closed window's QObject may already be deleted when the cancellation lands here)
            if not self.closed:
                self.changed.emit()
        self.choices = choices
        if not self.closed:
            self.changed.emit()

    def on_connection_changed(self) -> None:
        self.choices = []
        self.changed.emit()
        self.load()

    def find(self, text: str) -> Choice | None:
        """The choice whose value or label is `text` (any case)."""
        folded = text.strip().casefold()
        for choice in self.choices:
            if folded in (choice.value.casefold(), choice.label.casefold()):
                return choice
        return None


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
