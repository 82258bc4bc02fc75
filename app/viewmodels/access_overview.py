"""`AccessOverviewModel`: who can do what where, for the whole server at once. The window reads
who there is when it opens (`app.api.access.read_directory`: the users with their root roles,
the groups with their members and projects, the projects, and the access overview where the
server has one); then a user picked answers with every project in which they hold a role and
why (`user_access`), a project picked with everyone who can change it and why
(`project_access`), after reading the projects' access the question needs and the window has
not read yet (`needed_for_user`: the user's projects where the server has the access overview,
else every project; `needed_for_project`: that one), with progress and a way to stop a long
read. What is read stays until the window reads again (F5, a change made elsewhere). The
answers are computed on a worker thread.

Unleash's own pages answer this one project at a time; on open source (no project roles) the
answer comes from the root roles alone, and `note` says so.

QtCore only: no QtWidgets below `app/`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, Literal

from PySide6.QtCore import QObject, Signal

from app.api.access import (
    AccessData,
    Holding,
    NoSuchPerson,
    Person,
    find_person,
    needed_for_project,
    needed_for_user,
    project_access,
    read_directory,
    read_projects,
    user_access,
)
from app.changes import Resource
from app.text import count_text, plural
from app.viewmodels.session import Session
from app.viewmodels.table import Column, TableModel, prepare_rows
from app.viewmodels.tools import ToolViewModel

Mode = Literal["user", "project"]
#: how the error of a read the person stopped begins
STOPPED = "The read was stopped"


@dataclass(slots=True)
class WhereRow:
    """One project in which the user picked holds roles."""

    holding: Holding = field(repr=False)
    project: str
    name: str
    roles: str
    why: str


@dataclass(slots=True)
class WhoRow:
    """One person who can change the project picked."""

    holding: Holding = field(repr=False)
    name: str
    handle: str
    account: str
    root_role: str
    roles: str
    why: str


def _why(holding: Holding) -> str:
    return "; ".join(r.text for r in holding.reasons)


WHERE_COLUMNS: list[Column[WhereRow]] = [
    Column("Project", attrgetter("project"), tooltip=lambda r: r.name if r.name != r.project
           else None, width=24),
    Column("Roles", attrgetter("roles"), width=18),
    Column("Why", attrgetter("why"), tooltip=lambda r: r.why.replace("; ", "\n")),
]  # fmt: skip
WHO_COLUMNS: list[Column[WhoRow]] = [
    Column("Name", attrgetter("name"), width=18),
    Column("Email / username", attrgetter("handle"), width=28),
    Column("Account", attrgetter("account"), width=10),
    Column("Root role", attrgetter("root_role"), width=11),
    Column("Roles", attrgetter("roles"), width=18),
    Column("Why", attrgetter("why"), tooltip=lambda r: r.why.replace("; ", "\n")),
]
WHY_COLUMN = 2


def where_rows(holdings: list[Holding], names: dict[str, str]) -> list[WhereRow]:
    return [WhereRow(h, h.project, names.get(h.project, h.project), ", ".join(h.roles), _why(h))
            for h in holdings]  # fmt: skip


def who_rows(holdings: list[Holding]) -> list[WhoRow]:
    return [
        WhoRow(h, h.person.name or h.person.username or h.person.email or f"user {h.person.id}",
               h.person.email or h.person.username, h.person.account_type,
               h.person.root_role or "none", ", ".join(h.roles), _why(h))
        for h in holdings
    ]  # fmt: skip


@dataclass(frozen=True)
class PersonChoice:
    """A user or service account the search offers: what is sent back is its id."""

    id: int
    label: str


class AccessOverviewModel(ToolViewModel):
    #: the server's read goes on: (projects read, projects in all)
    progress = Signal(int, int)
    #: the answer shown changed (a user or project picked, a new read)
    answer_changed = Signal()

    shows = frozenset({Resource.PROJECTS, Resource.USERS, Resource.GROUPS})

    def __init__(self, session: Session, parent: QObject | None = None) -> None:
        super().__init__("access_overview", session, parent)
        self.where_table: TableModel[WhereRow] = TableModel(WHERE_COLUMNS, self)
        self.who_table: TableModel[WhoRow] = TableModel(WHO_COLUMNS, self)
        self.data: AccessData | None = None
        #: how long the last read took, in seconds
        self.read_seconds = 0.0
        #: the projects read so far and in all, while reading
        self.read_count = (0, 0)
        self.mode: Mode = "user"
        #: the user (their id, as text) or project asked for ("" for none)
        self.asked = ""
        #: the answer's first line ("Maria <maria@…> holds roles in 3 of 500 projects"), or
        #: why there is none
        self.summary = ""
        #: the groups holding roles in the project picked, one line ("" in user mode)
        self.groups_text = ""
        #: what the answer could not evaluate (custom root roles), or ""
        self.unread_text = ""
        #: the busy task: reading who there is and answering, or a question's reads
        self._read_task: asyncio.Task[None] | None = None
        #: an answer needing no read
        self._answer_task: asyncio.Task[None] | None = None
        #: the person asked the read under way to stop (`cancel`)
        self._stopping = False

    # ------------------------------------------------------------------ state

    @property
    def note(self) -> str:
        """Said when the answer comes from root roles alone (open source), else ""."""
        return self.data.note + "." if self.data is not None and self.data.note else ""

    @property
    def reading(self) -> bool:
        """Reading from the server: who there is, or the projects' access a question needs
        (Stop ends it)."""
        return self._read_task is not None and not self._read_task.done()

    @property
    def answering(self) -> bool:
        """A question is being answered (its reads, or its answer computed)."""
        task = self._answer_task
        return self.reading or (task is not None and not task.done())

    def people(self) -> list[PersonChoice]:
        """Everyone the search offers, by name."""
        if self.data is None:
            return []
        people = sorted(self.data.people, key=lambda p: (p.label.casefold(), p.id))
        return [PersonChoice(p.id, _person_text(p)) for p in people]

    def projects(self) -> list[tuple[str, str]]:
        """(id, label) of every project, by label."""
        if self.data is None:
            return []
        return sorted(((p.id, p.name if p.name == p.id else f"{p.name} ({p.id})")
                       for p in self.data.projects), key=lambda c: c[1].casefold())  # fmt: skip

    @property
    def loading_text(self) -> str:
        return self.status or "Reading the server's users, groups and projects…"

    @property
    def failed_title(self) -> str:
        if self.error.startswith(STOPPED):
            return "Reading stopped"
        return "Could not read who can do what where"

    # ------------------------------------------------------------------ reading

    def load(self) -> None:
        if self.reading or self.closed:
            return
        self.set_status("Reading the server's users, groups and projects…")
        self._start_read(self._load())

    def _start_read(self, coro: Coroutine[Any, Any, None]) -> None:
        self.read_count = (0, 0)
        self._stopping = False
        task = self._read_task = self.run(coro)
        task.add_done_callback(self._on_read_done)

    def _on_progress(self, done: int, total: int) -> None:
        self.read_count = (done, total)
        if self.closed:
            return
        self.set_status(f"Reading each project's access: {done:,} of {plural(total, 'project')}…")
        self.progress.emit(done, total)

    async def _load(self) -> None:
        started = time.perf_counter()
        try:
            client = await self.session.client()
            data = await read_directory(client)
            self.read_seconds = time.perf_counter() - started
            self.data = data
            self.loaded = True
            if not self.closed:
                self.answer_changed.emit()  # the search offers who there is
            await self._answer()
        except asyncio.CancelledError:
            self._say_stopped()  # now, before the busy state ends: no flash of the old answer
            raise
        self.phase_changed.emit()

    async def _read(self, projects: list[str], asked: str = "") -> None:
        """Read the access of `projects` into the data (a question's reads), with progress;
        meanwhile the window says what it reads for (`asked`), and shows no earlier answer."""
        if not projects or self.data is None:
            return
        if asked:
            self.where_table.clear()
            self.who_table.clear()
            self.groups_text = self.unread_text = ""
            self.summary = f"Reading the access of {plural(len(projects), 'project')} for {asked}…"
            if not self.closed:
                self.answer_changed.emit()
        client = await self.session.client()
        await read_projects(client, self.data, projects, on_progress=self._on_progress)

    def _on_read_done(self, task: asyncio.Task[None]) -> None:
        """A read stopped by the person (`cancel`) is a failure saying so, with Retry; one
        cancelled otherwise (another question, a new connection, the window closing) says
        nothing."""
        if task.cancelled():
            self._say_stopped()

    def _say_stopped(self) -> None:
        if self._stopping and not self.closed:
            self._stopping = False
            done, total = self.read_count
            where = f"after {done:,} of {plural(total, 'project')}" if total else "at its start"
            self.set_error(f"{STOPPED} {where}: nothing is shown. Retry reads the "
                           "server again.")  # fmt: skip

    def cancel(self) -> None:
        """Stop the read under way (the window's Stop)."""
        if self.reading and self._read_task is not None:
            self._stopping = True
            self._read_task.cancel()

    def reset(self) -> None:
        self._read_task = None
        self.data = None
        self.loaded = False
        self.summary = self.groups_text = self.unread_text = ""
        self.where_table.clear()
        self.who_table.clear()
        self.answer_changed.emit()

    # ------------------------------------------------------------------ answering

    def show_user(self, asked: str) -> asyncio.Task[None] | None:
        """Every project the user `asked` (an id, email or username) holds roles in, and why."""
        return self._ask("user", asked.strip())

    def show_project(self, project: str) -> asyncio.Task[None] | None:
        """Everyone who can change `project`, and why."""
        return self._ask("project", project.strip())

    def _ask(self, mode: Mode, asked: str) -> asyncio.Task[None] | None:
        self.mode, self.asked = mode, asked
        if self.data is None or self.closed:
            # not read yet: the read under way answers what is asked by its end
            self.answer_changed.emit()
            return None
        if self._answer_task is not None and not self._answer_task.done():
            self._answer_task.cancel()
        if self.reading and self._read_task is not None:
            self._read_task.cancel()  # the question changed: its reads are not wanted
        if self._needs_reading():
            self._start_read(self._answer())
            self._answer_task = self._read_task
        else:
            self._answer_task = self.run(self._answer(), busy=False)
        return self._answer_task

    def _needs_reading(self) -> bool:
        """Whether the question asked needs projects' access not read yet."""
        data, asked = self.data, self.asked
        if data is None or not asked:
            return False
        if self.mode == "project":
            return bool(needed_for_project(data, asked))
        try:
            return bool(needed_for_user(data, _find(data, asked)))
        except NoSuchPerson:
            return not data.knows_everyone  # perhaps a service account only a project lists

    async def _answer(self) -> None:
        data, asked, mode = self.data, self.asked, self.mode
        self.summary = self.groups_text = self.unread_text = ""
        if data is None:
            return
        total = len(data.projects)
        if not asked:
            self.where_table.clear()
            self.who_table.clear()
            users = plural(len(data.people), "user")
            self.summary = (f"Read {users}, {plural(len(data.groups), 'group')} and "
                            f"{plural(total, 'project')} in {self.read_seconds:.2f} s. Pick a "
                            "user or a project.")  # fmt: skip
        elif mode == "user":
            try:
                person = await self._person(data, asked)
            except NoSuchPerson as exc:
                self.where_table.clear()
                self.summary = f"{str(exc)[:1].upper()}{str(exc)[1:]} on {self.session.name}."
            else:
                await self._read(needed_for_user(data, person), _person_text(person))
                answer = await asyncio.to_thread(user_access, data, person)
                names = {p.id: p.name for p in data.projects}
                prepared = await asyncio.to_thread(
                    prepare_rows, WHERE_COLUMNS, where_rows(answer.holdings, names), []
                )
                self.where_table.set_prepared(prepared)
                held = len(answer.holdings)
                self.summary = (f"{_person_text(person)} ({person.account_type}, root role "
                                f"{person.root_role or 'none'}) holds roles in {held:,} of "
                                f"{plural(total, 'project')}.")  # fmt: skip
                if answer.unread:
                    self.unread_text = ("Not evaluated (custom root roles, whose permissions "
                                        f"are not read): {', '.join(answer.unread)}.")  # fmt: skip
        else:
            await self._read(needed_for_project(data, asked), f"project “{asked}”")
            try:
                found = await asyncio.to_thread(project_access, data, asked)
            except KeyError:
                self.who_table.clear()
                self.summary = f"No project “{asked}” on {self.session.name}."
            else:
                people = await asyncio.to_thread(
                    prepare_rows, WHO_COLUMNS, who_rows(found.holdings), []
                )
                self.who_table.set_prepared(people)
                label = found.project.name if found.project.name == asked else (
                    f"{found.project.name} ({asked})")  # fmt: skip
                self.summary = f"{plural(len(found.holdings), 'user')} can change {label}."
                if found.groups:
                    self.groups_text = "Groups holding roles here: " + "; ".join(
                        f"{name} ({', '.join(roles)}; {plural(count, 'member')})"
                        for name, roles, count in found.groups
                    )
        if not self.closed:
            self.answer_changed.emit()

    async def _person(self, data: AccessData, asked: str) -> Person:
        """The person `asked` names; where nobody is found yet, every project's access is read
        first (a service account that only a project's access lists, on a server that lists
        none)."""
        try:
            return _find(data, asked)
        except NoSuchPerson:
            if data.knows_everyone:
                raise
        await self._read([p.id for p in data.projects], f"“{asked}”")
        return _find(data, asked)

    def close(self) -> None:
        self.data = None
        super().close()


def _person_text(person: Person) -> str:
    return person.label


def _find(data: AccessData, asked: str) -> Person:
    """The person `asked` names: an id, email or username (`find_person`), or a label the
    search offered."""
    folded = asked.casefold()
    for person in data.people:
        if person.label.casefold() == folded:
            return person
    return find_person(data, asked)


def where_count_text(shown: int, total: int) -> str:
    return count_text(shown, total, "project")


def who_count_text(shown: int, total: int) -> str:
    return count_text(shown, total, "user")
