"""The tools of the sidebar, and `ToolModel`, what a tool's page knows about itself: whether the
current connection can serve it and, if not, why and what would make it work.

`ToolViewModel` is the skeleton every tool's own view-model shares: it loads once the tool can be
used (and again on F5, Retry, a new connection, a change made elsewhere), and says which of its
window's states to show (`phase`, a `LoadPhase`) with the texts of each; `phase_changed` says
when that may have changed. `ActionViewModel` adds what the last action on the server did.
QtCore only."""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from PySide6.QtCore import QObject, Signal

from app.changes import Changes, Resource
from app.registry import SWITCH_MAINTENANCE, TOOLS_BY_KEY, Action, Tool
from app.viewmodels.base import ViewModel
from app.viewmodels.session import CONNECTING, FAILED, IDLE, READY, Session
from app.viewmodels.table import collect_when_released

#: why every change but the switch itself waits while the server is in maintenance (issue 38)
IN_MAINTENANCE = (
    "The server is in maintenance mode: it refuses every change until it is switched off "
    "(the Overview's Maintenance mode)."
)

if TYPE_CHECKING:
    from app.actions.runner import Done, Plan


def tool_available(session: Session, key: str) -> bool:
    """Whether the session's connection is ready and can serve the tool `key`."""
    caps = session.capabilities
    return caps is not None and session.ready and caps.operation(key).available


class SessionViewModel(ViewModel):
    """A view-model bound to the session: on a new connection it cancels what it was doing and
    calls `on_connection_changed()`; its errors also reach the status bar, and leave it when
    they are over (the error cleared, the window closed, a new connection) unless another has
    come since. When another view-model changes one of the resources this one `shows`,
    `on_changes()` is called (by default nothing: `ToolViewModel` reloads)."""

    #: what this view-model shows from the server: `Changes` to these reach `on_changes`
    shows: ClassVar[frozenset[Resource]] = frozenset()

    def __init__(self, session: Session, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session = session
        session.connection_changed.connect(self._on_session_connection_changed)
        session.data_changed.connect(self._on_session_data_changed)
        self.error_changed.connect(self._on_error)

    def _on_session_connection_changed(self) -> None:
        if self.closed:
            return
        self.cancel_tasks()
        self.set_error("")
        self.on_connection_changed()

    def on_connection_changed(self) -> None:
        """Override: reload for the new connection."""

    def action_reason(self, action: Action) -> str:
        """Why `action` cannot be done on this connection, and what would help ("" when it
        can): not connected yet, what the registry's needs say of the server and token, or the
        server's maintenance mode (`Session.maintenance`: every change but the switch)."""
        caps = self.session.capabilities
        if not self.session.ready or caps is None:
            return self.session.message or "Not connected."
        availability = caps.action(action)
        if not availability.available:
            return availability.reason
        if self.session.maintenance and action is not SWITCH_MAINTENANCE:
            return IN_MAINTENANCE
        return ""

    def _on_session_data_changed(self, changes: Changes, source: object) -> None:
        if self.closed or source is self or changes.resource not in self.shows:
            return
        self.on_changes(changes)

    def on_changes(self, changes: Changes) -> None:
        """Override: another view-model changed something this one shows."""

    def notify(self, changes: Changes) -> None:
        """Say that this view-model changed `changes` on the server (every other one showing
        them refreshes)."""
        if not self.closed:
            self.session.notify(changes, self)

    async def run_plan(
        self,
        plan: Plan,
        *,
        after_sent: Callable[[], object] | None = None,
        on_wait: Callable[[float], object] | None = None,
        on_step: Callable[[int, int], object] | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> Done:
        """Carry out a confirmed `plan` through the one runner (`app.actions.runner.carry_out`)
        with the session's client: the other view-models showing what it changes are told
        (`notify`), and `after_sent` (this one's reload) is called once a request went out,
        whatever came of it; `on_step(done, total)` after each request answered, and `stop()`
        asked before each (true: the runner's `Stopped`). Raises what the runner raises."""
        from app.actions.runner import carry_out

        client = await self.session.client()
        sent = False

        def announce(changes: Changes) -> None:
            nonlocal sent
            sent = True
            self.notify(changes)

        try:
            return await carry_out(
                client, plan, announce=announce, on_wait=on_wait, on_step=on_step, stop=stop
            )
        finally:
            if sent and after_sent is not None and not self.closed:
                after_sent()

    def report_error(self, text: str) -> None:
        """Put `text` in the status bar as this view-model's error (without making it `error`:
        a failed save, say, while the window's content stays)."""
        if not self.closed and text:
            self.session.report_error(text, self)

    def _on_error(self, text: str) -> None:
        if self.closed:
            return
        if text:
            self.session.report_error(text, self)
        else:
            self.session.withdraw_error(self)

    def close(self) -> None:
        if not self.closed:
            self.session.connection_changed.disconnect(self._on_session_connection_changed)
            self.session.data_changed.disconnect(self._on_session_data_changed)
            self.session.withdraw_error(self)
        super().close()


class ToolModel(SessionViewModel):
    """One tool's page: its availability on the current connection."""

    availability_changed = Signal()

    def __init__(self, tool: Tool, session: Session, parent: QObject | None = None) -> None:
        super().__init__(session, parent)
        self.tool = tool
        session.state_changed.connect(self.availability_changed)

    @property
    def available(self) -> bool:
        return tool_available(self.session, self.tool.key)

    @property
    def reason(self) -> str:
        """Why the tool cannot be used here, and what would make it work ("" when it can)."""
        if self.session.state == CONNECTING:
            return self.session.message or "Connecting…"
        if self.session.state == FAILED:
            return f"Not connected: {self.session.message}"
        caps = self.session.capabilities
        if caps is None:
            return "Not connected."
        availability = caps.operation(self.tool.key)
        return "" if availability.available else availability.reason

    @property
    def note(self) -> str:
        caps = self.session.capabilities
        return caps.operation(self.tool.key).note if caps is not None else ""

    def on_connection_changed(self) -> None:
        self.availability_changed.emit()

    def close(self) -> None:
        if not self.closed:
            self.session.state_changed.disconnect(self.availability_changed)
        super().close()


def _collect_soon(*_: object) -> None:
    collect_when_released()


class LoadPhase(enum.Enum):
    """Which of its states a tool's window shows (`ToolViewModel.phase`)."""

    #: the connection is not ready yet (none opened, or one opening)
    WAITING = "waiting"
    #: no connection (it failed), or one that cannot serve this tool: see `unavailable_reason`
    UNAVAILABLE = "unavailable"
    #: what the window shows is being loaded
    LOADING = "loading"
    #: the last load failed: the error and Retry
    FAILED = "failed"
    #: loaded, and there is nothing (or nothing asked for yet)
    EMPTY = "empty"
    #: loaded, with something to show (a refresh may be running: see `busy`)
    READY = "ready"


class ToolViewModel(SessionViewModel):
    """The base of a tool's own view-model (the group editor's, the archive browser's...).

    It loads what the tool needs once the tool can be used on the connection (`start()`, then on
    every new connection), forgets it when the connection goes (`reset()`), and `refresh()` (F5,
    Retry) loads again. Subclasses override `load()` (start tasks with `run`) and `reset()`.

    `phase` says which state the window shows: waiting for the connection, unavailable (and
    why), loading, failed (and Retry), empty, or ready. The connection's part is decided here;
    a subclass says what it holds: it sets `loaded` (True once its load succeeded, False in
    `reset()`) or overrides `is_loaded()` when that follows from other state, and overrides
    `is_empty()`. `phase_changed` is emitted here when the session's state, `busy` or `error`
    change and after a new connection's reset; a subclass emits it itself only when `loaded` or
    what `is_empty()` reads changes outside a busy task (a busy task's end emits it).

    The texts of each state (`waiting_text`, `unavailable_title`, `unavailable_reason`,
    `loading_text`, `failed_title`, `failed_text`, `empty_title`, `empty_text`) have defaults
    made from the tool's title ("Could not load the users", "No users"); a subclass overrides
    those its window words otherwise. `ui.tool_content.ToolContent.show_phase` shows them.
    """

    #: which state the window shows may have changed (see `phase`)
    phase_changed = Signal()

    def __init__(self, tool_key: str, session: Session, parent: QObject | None = None) -> None:
        super().__init__(session, parent)
        self.tool = TOOLS_BY_KEY[tool_key]
        self._started = False
        #: what the window shows was loaded on this connection (see `is_loaded`)
        self.loaded = False
        # once its window is deleted (and this with it), what the window held is freed: see
        # `collect_frozen` (a function, not a method: nothing here may keep it alive)
        self.destroyed.connect(_collect_soon)
        self.busy_changed.connect(self._phase_may_change)
        self.error_changed.connect(self._phase_may_change)
        session.state_changed.connect(self._phase_may_change)

    @property
    def available(self) -> bool:
        return tool_available(self.session, self.tool.key)

    # ------------------------------------------------------------------ the window's state

    @property
    def phase(self) -> LoadPhase:
        """Which state the window shows: the connection's (waiting, unavailable) first, then
        the load's (failed, loading), then what was loaded (empty, ready)."""
        state = self.session.state
        if state in (IDLE, CONNECTING):
            return LoadPhase.WAITING
        if state != READY or not self.available:
            return LoadPhase.UNAVAILABLE
        if self.error and not self.busy:
            return LoadPhase.FAILED
        if not self.is_loaded():
            return LoadPhase.LOADING
        return LoadPhase.EMPTY if self.is_empty() else LoadPhase.READY

    def is_loaded(self) -> bool:
        """Override when "loaded" follows from other state (`loaded` by default)."""
        return self.loaded

    def is_empty(self) -> bool:
        """Override: what was loaded holds nothing to show (False by default)."""
        return False

    def _phase_may_change(self, *_: object) -> None:
        if not self.closed:
            self.phase_changed.emit()

    @property
    def _noun(self) -> str:
        return self.tool.title.lower()

    @property
    def waiting_text(self) -> str:
        """`LoadPhase.WAITING`'s loading text."""
        return "Waiting for the connection…"

    @property
    def unavailable_title(self) -> str:
        """`LoadPhase.UNAVAILABLE`'s title."""
        return "Not available"

    @property
    def unavailable_reason(self) -> str:
        """Why the tool cannot be used now, and what would make it work (the text of
        `LoadPhase.UNAVAILABLE`)."""
        session = self.session
        if session.state == FAILED:
            return f"Not connected: {session.message}" if session.message else "Not connected."
        caps = session.capabilities
        return caps.operation(self.tool.key).reason if caps is not None else "Not connected."

    @property
    def loading_text(self) -> str:
        """`LoadPhase.LOADING`'s text: the status ("Loading users… 10,000 so far"), else
        "Loading <the tool's title>…"."""
        return self.status or f"Loading {self._noun}…"

    @property
    def failed_title(self) -> str:
        """`LoadPhase.FAILED`'s title (its text is `failed_text`, with Retry)."""
        return f"Could not load the {self._noun}"

    @property
    def failed_text(self) -> str:
        return self.error

    @property
    def empty_title(self) -> str:
        """`LoadPhase.EMPTY`'s title (its text, `empty_text`, says what empty means)."""
        return f"No {self._noun}"

    @property
    def empty_text(self) -> str:
        return ""

    # ------------------------------------------------------------------ loading

    def start(self) -> None:
        """Begin: the window is built and bound. Loads at once when the tool can be used."""
        self._started = True
        if self.available:
            self.load()

    def refresh(self) -> None:
        """Load again (F5, Retry); nothing when the tool cannot be used here."""
        if self.available and not self.closed:
            self.load()

    def _on_session_connection_changed(self) -> None:
        super()._on_session_connection_changed()
        self._phase_may_change()  # what came from the old connection is gone (`reset`)

    def on_connection_changed(self) -> None:
        self.reset()
        if self._started and self.available:
            self.load()

    def on_changes(self, changes: Changes) -> None:
        """What this window shows changed elsewhere: load it again."""
        if self._started:
            self.refresh()

    def load(self) -> None:
        """Override: fetch what the window shows (with `self.run(...)`)."""

    def reset(self) -> None:
        """Override: forget what came from the previous connection."""

    def close(self) -> None:
        if not self.closed:
            self.session.state_changed.disconnect(self._phase_may_change)
        super().close()


@dataclass(frozen=True)
class Outcome:
    """What an action did, or why it failed (`error`), and the connection it was done on: its
    name and URL as the session gave them then."""

    text: str
    error: bool
    connection: str
    server: str


class ActionViewModel(ToolViewModel):
    """The base of a tool's view-model whose actions change the server (the inactive users',
    the archive's, the context fields'). What its last action did is an `Outcome` that belongs
    to the connection it was done on: `outcome` and `outcome_error` give its text only while
    that connection is current, so it never shows on another server's window, and shows again
    when its connection comes back; the next action replaces it (`clear_outcome` as it starts,
    then `_set_outcome` or `_set_outcome_error`). `outcome_changed` says when what they give
    may have changed: an outcome set or cleared, a new connection."""

    outcome_changed = Signal()
    #: what the action buttons offer may have changed (an action started or ended, a selection)
    actions_changed = Signal()
    #: an action ended: done, failed, refused or stopped
    action_finished = Signal()

    def __init__(self, tool_key: str, session: Session, parent: QObject | None = None) -> None:
        super().__init__(tool_key, session, parent)
        self._outcome: Outcome | None = None
        #: the action under way (one at a time), if any
        self._action_task: asyncio.Task[None] | None = None

    @property
    def acting(self) -> bool:
        """An action of this window is under way."""
        return self._action_task is not None and not self._action_task.done()

    def _may_start(self, server: str, past: str) -> bool:
        """Whether a confirmed plan for `server` may be carried out now: not while another
        action is under way, nor once closed; refused, the outcome saying so ("Nothing was
        <past>: ..."), when the connection changed after the confirmation named `server`. The
        last outcome goes when it may start."""
        caps = self.session.capabilities
        if self.acting or self.closed:
            return False
        if caps is None or server != caps.base_url:
            self._set_outcome_error(
                f"Nothing was {past}: the connection changed after the confirmation (it named "
                f"{server})."
            )
            self.action_finished.emit()
            return False
        self.clear_outcome()
        return True

    def _finish(self) -> None:
        """An action ended: none is under way, the status line is cleared, and the window told
        (`action_finished`, `actions_changed`) unless it was closed meanwhile."""
        self._action_task = None
        self.set_status("")
        if not self.closed:
            self.action_finished.emit()
            self.actions_changed.emit()

    @property
    def current_outcome(self) -> Outcome | None:
        """The last action's outcome while its connection is current, else None."""
        kept = self._outcome
        if kept is None or (kept.connection, kept.server) != (self.session.name, self.session.url):
            return None
        return kept

    @property
    def outcome(self) -> str:
        """How the last action on this connection went ("" when it failed, or none was done)."""
        kept = self.current_outcome
        return kept.text if kept is not None and not kept.error else ""

    @property
    def outcome_error(self) -> str:
        """Why the last action on this connection failed, or was refused ("" when it did not)."""
        kept = self.current_outcome
        return kept.text if kept is not None and kept.error else ""

    def _set_outcome(self, text: str) -> None:
        self._keep_outcome(text, error=False)

    def _set_outcome_error(self, text: str) -> None:
        self._keep_outcome(text, error=True)

    def clear_outcome(self) -> None:
        """The user moved on (a new action starts): what the last one did goes."""
        self._keep_outcome("", error=False)

    def _keep_outcome(self, text: str, *, error: bool) -> None:
        session = self.session
        self._outcome = Outcome(text, error, session.name, session.url) if text else None
        if not self.closed:
            self.outcome_changed.emit()

    def _on_session_connection_changed(self) -> None:
        super()._on_session_connection_changed()
        if not self.closed:
            self.outcome_changed.emit()  # the outcome is shown on its own connection only
