"""`Session`: the current connection, shared by every window and view-model.

It opens the embedded sandbox or a saved profile, probes what the server and token can do, and
switches connection without a restart: view-models listen to `connection_changed`, cancel what
they were doing and load again. It also gathers what the status bar shows: requests in flight and
the last error, which belongs to whoever reported it (a view-model, or the session itself for a
connection that failed) and to the connection it was made on. It passes `Changes` (what an
operation changed) from the view-model that made them to every other. QtCore only.

The embedded sandbox is the `SandboxProcess` that `ui.main_window.run` gives it
(`sandbox.process.embedded_sandbox`: with `session_tokens`, so two flagdesks on one database keep
working, and `exit_with_parent`, so a crashed GUI leaves no server behind). More local sandboxes
("Local sandbox 2", 3, …: `start_another_sandbox`, one click in File > Connections) come from
`more_sandboxes` (`sandbox.process.local_sandbox`: a database of its own each, kept between
runs) and run until the session ends: a second server to compare with and promote to, with no
Unleash at hand. A target is a profile's name, a spec, a local sandbox's number (2 and up), or
None for the embedded sandbox. While ready it
checks `/health` every 20 s (`HEALTH_INTERVAL`): a server that goes away turns the session to
failed at once, and the first answer after that reconnects. The requests in flight come from
`AdminClient.on_activity`; `avatars` is the shared `AvatarCache`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QObject, Signal

from app import startup
from app.api.errors import ClientError, ServerUnreachable
from app.changes import Changes, Resource
from app.connection import Connection, ConnectionSpec, MissingToken

if TYPE_CHECKING:  # imported when first used, so the window shows before they load
    from app.api.capabilities import Capabilities
    from app.api.client import AdminClient
    from app.profiles import ProfileStore, TokenStore
    from app.viewmodels.avatars import AvatarCache

log = logging.getLogger("flagdesk.session")

SANDBOX_NAME = "Local sandbox"
SANDBOX_SOURCE = "Local sandbox with demo data"
SANDBOX_HELP = (
    "flagdesk started its own server with demo data, so everything can be tried safely. "
    "To work on a real Unleash, add a connection under File > Connections (Ctrl+K)."
)

#: the states of a session
IDLE, CONNECTING, READY, FAILED = "idle", "connecting", "ready", "failed"

#: a ready connection is checked this often, so a server that goes away is noticed without a
#: click (and one that comes back is reconnected)
HEALTH_INTERVAL = 20.0

#: the longest a new connection's probe waits for the windows' first requests to be answered
#: (see `Session._connect`): a slow server's answers do not hold the capabilities back longer
PROBE_WAIT_S = 1.0
#: the turns of the event loop a window's request takes to leave once its view-model is told
#: the connection is open (its task, then the client's: 2 for the overview)
REQUESTS_LEAVE_WITHIN_TURNS = 4


class EmbeddedSandbox(Protocol):
    """What the session needs of the embedded sandbox's child process: a
    `sandbox.process.SandboxProcess`, made by the factory the GUI's entry point gives the session
    (`ui.main_window.run`; tests give their own). The view-models do not import the sandbox."""

    url: str
    admin_token: str
    client_token: str

    @property
    def launched(self) -> bool: ...

    @property
    def running(self) -> bool: ...

    def launch(self) -> None: ...

    def start(self) -> object: ...

    def stop(self) -> None: ...


#: makes the embedded sandbox (not started yet); None: this session has none
SandboxFactory = Callable[[], EmbeddedSandbox]
#: makes local sandbox number n (2 and up; not started yet)
MoreSandboxes = Callable[[int], EmbeddedSandbox]
#: what a session opens: a profile's name, a spec, a local sandbox's number (2 and up), or None
#: for the embedded sandbox
Target = str | ConnectionSpec | int | None


def sandbox_name(number: int) -> str:
    """What local sandbox `number` is called: "Local sandbox" (the embedded one, 1), then
    "Local sandbox 2", 3, …"""
    return SANDBOX_NAME if number == 1 else f"{SANDBOX_NAME} {number}"


class Session(QObject):
    #: a different connection is current (or the same one was opened again)
    connection_changed = Signal()
    #: a new connection's client exists and its probe is about to start: what reads nothing
    #: the probe finds (`opened_client`) may ask now, beside the probe rather than after it
    #: (the probe waits a turn of the loop, so that those requests leave with its first)
    connection_opened = Signal()
    #: `state`, `message` or `capabilities` changed
    state_changed = Signal()
    #: requests in flight
    activity_changed = Signal(int)
    #: the last error, for the status bar ("" when cleared)
    error_reported = Signal(str)
    #: something changed on the server: (`Changes`, the view-model that changed it or None)
    data_changed = Signal(object, object)

    def __init__(
        self,
        store: ProfileStore | None = None,
        *,
        sandbox_factory: SandboxFactory | None = None,
        more_sandboxes: MoreSandboxes | None = None,
        health_interval: float = HEALTH_INTERVAL,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._store = store
        #: seconds between two health checks of a ready connection (0: none)
        self.health_interval = health_interval
        self._watch: asyncio.Task[None] | None = None
        self._sandbox_factory = sandbox_factory
        self._sandbox: EmbeddedSandbox | None = None
        self._more_sandboxes = more_sandboxes
        #: the local sandboxes after the first, by number (2 and up), once made
        self._more: dict[int, EmbeddedSandbox] = {}
        self.connection: Connection | None = None
        self.state = IDLE
        #: what is going on, or why it failed
        self.message = ""
        self.last_error = ""
        #: who reported `last_error`: a view-model, or None (the session: the connection)
        self.error_owner: object | None = None
        self._task: asyncio.Task[None] | None = None
        self._retired: set[asyncio.Task[None]] = set()
        #: set when the connection's last request in flight is answered (`_answered`)
        self._idle: asyncio.Event | None = None
        #: what to open again on Retry: None for the sandbox, else a profile name or a spec
        self._target: Target = None
        self._closed = False
        #: (issue 38) maintenance mode as last read, and the connection it was read on
        self._maintenance: bool | None = None
        self._maintenance_of: Connection | None = None
        self._maintenance_reads: set[asyncio.Future[None]] = set()
        self._avatars: AvatarCache | None = None
        #: where tokens go when there is no OS keyring, as the person chose the first time it
        #: was asked (asked once per run; None: not asked yet)
        self.no_keyring_choice: TokenStore | None = None

    # ------------------------------------------------------------------ what is current

    @property
    def store(self) -> ProfileStore:
        """The saved profiles (opened on first use: keyring and pydantic load after the window
        is shown)."""
        if self._store is None:
            from app.profiles import ProfileStore

            self._store = ProfileStore()
        return self._store

    @property
    def avatars(self) -> AvatarCache:
        """People's pictures, shared by every window (kept across connections: by URL)."""
        if self._avatars is None:
            from app.viewmodels.avatars import AvatarCache

            self._avatars = AvatarCache(parent=self)
        self._avatars.base_url = self.url
        return self._avatars

    @avatars.setter
    def avatars(self, cache: AvatarCache) -> None:
        """Use `cache` for pictures (screenshots and tests answer them without the network)."""
        self._avatars = cache

    @property
    def name(self) -> str:
        if self.connection is not None:
            return self.connection.name
        if isinstance(self._target, str):
            return self._target
        if isinstance(self._target, ConnectionSpec):
            return self._target.label or self._target.url
        return sandbox_name(self._target or 1)

    @property
    def is_sandbox(self) -> bool:
        """Whether a local sandbox is what is open (the embedded one or another)."""
        return self._target is None or isinstance(self._target, int)

    @property
    def sandbox_number(self) -> int:
        """The open local sandbox's number (1: the embedded one); 0 when a server is open."""
        if self._target is None:
            return 1
        return self._target if isinstance(self._target, int) else 0

    @property
    def capabilities(self) -> Capabilities | None:
        return self.connection.capabilities if self.connection is not None else None

    # ------------------------------------------------------------------ maintenance (issue 38)

    @property
    def maintenance(self) -> bool | None:
        """Whether the connected server is in maintenance mode (it refuses every change): as
        last read (`record_maintenance`, after a switch or its undo), else as the probe found it;
        None when not known."""
        if self.connection is None:
            return None
        if self._maintenance_of is self.connection:
            return self._maintenance
        caps = self.capabilities
        return None if caps is None else caps.maintenance

    def record_maintenance(self, enabled: bool | None) -> None:
        """The connected server's maintenance mode as just read; `state_changed` tells every
        window (their actions are refused meanwhile: `ToolViewModel.action_reason`)."""
        # only a change that matters to the windows is told: from "not known" to off is none
        changed = bool(enabled) != bool(self.maintenance)
        self._maintenance_of, self._maintenance = self.connection, enabled
        if changed and not self._closed:
            self.state_changed.emit()

    async def _read_maintenance(self) -> None:
        connection = self.connection
        if connection is None:
            return
        try:
            enabled = (await connection.client.maintenance()).enabled
        except ClientError as exc:
            log.info("could not read maintenance mode: %s", exc)
            return
        if connection is self.connection:
            self.record_maintenance(enabled)

    @property
    def ready(self) -> bool:
        return self.state == READY and self.connection is not None

    @property
    def url(self) -> str:
        if self.connection is not None:
            return self.connection.spec.url
        if isinstance(self._target, ConnectionSpec):
            return self._target.url
        return ""

    async def client(self) -> AdminClient:
        """The current connection's client; `ClientError` saying why when there is none."""
        if self.connection is None or self.state != READY:
            raise ClientError(self.message or "Not connected.")
        return self.connection.client

    async def opened_client(self) -> AdminClient:
        """The client of the connection being probed (from `connection_opened`) or ready: for
        reads that need nothing the probe finds, such as the overview's, which then go out
        with the probe's own and come back a round trip sooner than after it. `ClientError`
        saying why when there is none, or its probe failed."""
        if self.connection is None or self.state not in (CONNECTING, READY):
            raise ClientError(self.message or "Not connected.")
        return self.connection.client

    # ------------------------------------------------------------------ opening

    def open_sandbox(self, number: int = 1) -> asyncio.Task[None]:
        """Connect to local sandbox `number` (1: the embedded one), starting it first if it is
        not running."""
        return self._open(None if number == 1 else number)

    @property
    def can_start_more(self) -> bool:
        """Whether this session can start local sandboxes after the first."""
        return self._more_sandboxes is not None and not self._closed

    def start_another_sandbox(self) -> asyncio.Task[None]:
        """Start the next local sandbox (2, then 3, …: the lowest number not running; its data
        kept from an earlier run) and connect to it: one step to a second server."""
        if self._more_sandboxes is None:
            raise RuntimeError("this session starts no more local sandboxes")
        number = 2
        while number in self._more and self._more[number].running:
            number += 1
        return self.open_sandbox(number)

    def running_sandboxes(self) -> list[tuple[int, str]]:
        """The local sandboxes running now, as (number, name), the embedded one first."""
        running = [(1, SANDBOX_NAME)] if self._sandbox is not None and self._sandbox.running else []
        return running + [(n, sandbox_name(n)) for n, box in sorted(self._more.items())
                          if box.running]  # fmt: skip

    async def sandbox_spec(self, number: int) -> ConnectionSpec:
        """How to reach local sandbox `number` with its admin token (started when it is not
        running): for reading it beside the open connection (the Compare window)."""
        sandbox = await self._start_sandbox(number)
        return ConnectionSpec(
            url=sandbox.url,
            token=sandbox.admin_token,
            client_token=sandbox.client_token,
            label=sandbox_name(number),
        )

    def open_profile(self, name: str) -> asyncio.Task[None]:
        """Connect with a saved profile; it becomes the one reopened on the next start."""
        return self._open(name)

    def open_spec(self, spec: ConnectionSpec) -> asyncio.Task[None]:
        """Connect with an unsaved spec (tests, `--url`)."""
        return self._open(spec)

    def open_last(self) -> asyncio.Task[None]:
        """What the last run used: a profile, or the sandbox when there is none (first start)."""
        last = self._last_profile()
        return self.open_sandbox() if last is None else self.open_profile(last)

    def prelaunch(self) -> None:
        """When `open_last()` will open the embedded sandbox, start its process now: it boots
        (a few tenths of a second) while the window loads the rest of itself."""
        if self._last_profile() is not None or self._sandbox_factory is None:
            return
        if self._sandbox is None:
            self._sandbox = self._sandbox_factory()
        if not self._sandbox.launched:
            try:
                self._sandbox.launch()
            except OSError as exc:  # open_sandbox() tries again and reports it
                log.warning("could not launch the sandbox early: %s", exc)

    def _last_profile(self) -> str | None:
        """The profile to reopen, or None for the sandbox (none saved, or it is gone)."""
        from app.profiles import ProfileError

        try:
            last = self.store.last
            if last is not None:
                self.store.get(last)
            return last
        except ProfileError as exc:
            log.warning("cannot reopen the last profile: %s", exc)
            return None

    def retry(self) -> asyncio.Task[None]:
        """Open the current target again (after a failure, or to probe anew)."""
        return self._open(self._target)

    def _open(self, target: Target) -> asyncio.Task[None]:
        if self._closed:
            raise RuntimeError("the session is closed")
        if self._task is not None and not self._task.done():
            self._task.cancel()
            self._retired.add(self._task)
            self._task.add_done_callback(self._retired.discard)
        loop = asyncio.get_running_loop()
        self._stop_watching()
        self._target = target
        old, self.connection = self.connection, None
        # an error belongs to the connection it was made on: it leaves with it
        self.report_error("")
        # at once, not when the task first runs: the window says what is going on immediately
        self._set_state(CONNECTING, self._connecting_text(target))
        self.connection_changed.emit()
        self._task = loop.create_task(self._connect(target, old))
        return self._task

    async def _connect(self, target: Target, old: Connection | None = None) -> None:
        from app.profiles import ProfileError

        if old is not None:
            await old.aclose()
        try:
            connection = await self._make(target)
        except asyncio.CancelledError:
            raise
        except (ClientError, ProfileError, MissingToken, ValueError) as exc:
            # ValueError: a client that cannot be made (a stored token that cannot be a header
            # value, a CA bundle that cannot be read): its message says which
            self._fail(str(exc))
            # no connection came of it: the windows that showed "Connecting…" say why instead
            # (the overview asks for its client, and is told this reason with its Retry)
            self.connection_changed.emit()
            return
        connection.client.on_activity = self._on_activity
        self.connection = connection
        if not self._closed:
            self.connection_opened.emit()
        try:
            # a turn of the loop: the requests the windows sent on that signal (the overview's)
            # leave; the probe's nine follow once they are answered. Sent beside them, they held
            # the overview's answers (the embedded sandbox answers one at a time, and the window
            # opened a connection for each): its first data came 0.03 s later in the bundle
            # (bench/gui_startup.py --bundle, alternated with the probe 0.1 s later)
            await asyncio.sleep(0)
            await self._answered(connection, PROBE_WAIT_S)
            await connection.probe()
        except asyncio.CancelledError:
            await connection.aclose()
            self.connection = None
            raise
        except ClientError as exc:
            # keep the connection: Retry probes it again, and windows show the reason
            self._fail(str(exc))
            self.connection_changed.emit()
            return
        if isinstance(target, str):
            with contextlib.suppress(ProfileError):
                self.store.set_last(target)
        elif target is None or isinstance(target, int):
            # a local sandbox: the next start opens the embedded one
            with contextlib.suppress(ProfileError):
                self.store.set_last(None)
        self.report_error("")
        self._set_state(READY, "")
        self.connection_changed.emit()
        self._start_watching(connection)

    # ------------------------------------------------------------------ health

    def _start_watching(self, connection: Connection) -> None:
        self._stop_watching()
        if self.health_interval > 0 and not self._closed:
            loop = asyncio.get_running_loop()
            self._watch = loop.create_task(self._watch_health(connection))

    def _stop_watching(self) -> None:
        if self._watch is not None and not self._watch.done():
            self._watch.cancel()
            self._retired.add(self._watch)
            self._watch.add_done_callback(self._retired.discard)
        self._watch = None

    async def _watch_health(self, connection: Connection) -> None:
        """Check the server every `health_interval` seconds. When it stops answering, say so
        (the windows show it at once); when it answers again, reconnect, so the windows load
        again without anyone clicking anything."""
        lost = False
        while True:
            await asyncio.sleep(self.health_interval)
            if self.connection is not connection:
                return
            try:
                await connection.client.health()
            except asyncio.CancelledError:
                raise
            except ServerUnreachable as exc:
                if not lost:
                    lost = True
                    log.warning("lost the connection to %s: %s", connection.spec.url, exc)
                    self._fail(
                        f"{exc} flagdesk checks again every {self.health_interval:g} s; "
                        "Reconnect (Ctrl+R) to try now."
                    )
                continue
            except ClientError as exc:  # it answers, oddly: not a lost connection
                log.info("health check of %s: %s", connection.spec.url, exc)
                continue
            if lost:
                log.info("%s answers again: reconnecting", connection.spec.url)
                self.retry()
                return

    async def _make(self, target: Target) -> Connection:
        if target is None or isinstance(target, int):
            spec = await self.sandbox_spec(target or 1)
            return Connection(spec.label, spec, is_sandbox=True)
        if isinstance(target, ConnectionSpec):
            return Connection(target.label or target.url, target)
        from app.connection import spec_of

        profile = self.store.get(target)
        # the keyring may block (a Secret Service unlock prompt): off the GUI thread
        spec = await asyncio.to_thread(spec_of, profile, self.store)
        from app.api.sending import check_token  # the command line's check and words

        check_token(spec.token, f"The token of profile {profile.name!r}")
        check_token(spec.client_token, f"The client token of profile {profile.name!r}")
        return Connection(profile.name, spec)

    def _sandbox_of(self, number: int) -> EmbeddedSandbox:
        """Local sandbox `number`, made (not started) the first time it is asked for."""
        made = self._sandbox if number == 1 else self._more.get(number)
        if made is not None:
            return made
        if number == 1:
            if self._sandbox_factory is None:
                raise ClientError("This window has no local sandbox: add a connection instead.")
            made = self._sandbox = self._sandbox_factory()
        else:
            if self._more_sandboxes is None:
                raise ClientError(f"This window starts no {sandbox_name(number)}.")
            made = self._more[number] = self._more_sandboxes(number)
        return made

    async def _start_sandbox(self, number: int = 1) -> EmbeddedSandbox:
        sandbox = self._sandbox_of(number)
        if sandbox.running:
            return sandbox
        try:
            # start() waits for /health: off the GUI thread, the window stays responsive
            started = asyncio.get_running_loop().run_in_executor(None, sandbox.start)
            try:
                if not sandbox.running:
                    await self._warm_up(started)
            except BaseException:  # cancelled meanwhile: the wait's outcome is not wanted
                started.cancel()
                raise
            await started
        except RuntimeError as exc:
            await asyncio.to_thread(sandbox.stop)
            lines = str(exc).strip().splitlines()
            detail = f" ({lines[-1]})" if lines else ""
            name = "The local sandbox" if number == 1 else sandbox_name(number)
            raise ClientError(f"{name} did not start{detail}.") from None
        return sandbox

    @staticmethod
    async def _warm_up(booting: asyncio.Future[Any]) -> None:
        """While the sandbox boots, do what the connection's first requests would do on their
        way (`app.api.client.warm_up_steps`): the GUI thread is otherwise idle then, and the
        window's first data comes that much sooner. A step a turn of the event loop, so the
        window keeps answering; stops when the sandbox is up (app.startup)."""
        from app.api.client import warm_up_steps

        await startup.run_while(warm_up_steps(), booting.done)

    def _connecting_text(self, target: Target) -> str:
        if target is None or isinstance(target, int):
            number = target or 1
            made = self._sandbox if number == 1 else self._more.get(number)
            name = "the local sandbox" if number == 1 else sandbox_name(number)
            return f"Connecting to {name}…" if made and made.running else f"Starting {name}…"
        if isinstance(target, ConnectionSpec):
            return f"Connecting to {target.url}…"
        return f"Connecting to {target}…"

    # ------------------------------------------------------------------ state

    def _set_state(self, state: str, message: str) -> None:
        self.state, self.message = state, message
        if not self._closed:
            self.state_changed.emit()

    def _fail(self, message: str) -> None:
        self._set_state(FAILED, message)
        self.report_error(message)

    def report_error(self, text: str, owner: object | None = None) -> None:
        """Make `text` the status bar's last error, reported by `owner` (a view-model; None for
        the session itself). "" clears it, whoever reported it."""
        self.error_owner = owner if text else None
        if text != self.last_error:
            self.last_error = text
            if not self._closed:
                self.error_reported.emit(text)

    def withdraw_error(self, owner: object) -> None:
        """Clear the last error if `owner` reported it (its window loaded fine, or closed)."""
        if self.last_error and self.error_owner is owner:
            self.report_error("")

    def notify(self, changes: Changes, source: object | None = None) -> None:
        """Tell every view-model that `changes` happened on the server (`source`, the one that
        made them, already shows them)."""
        if not self._closed:
            self.data_changed.emit(changes, source)
        if changes.touches(Resource.SETTINGS, "maintenance") and not self._closed:
            # (issue 38) switched, or its undo from the History: read what it is now
            self._maintenance_reads.add(task := asyncio.ensure_future(self._read_maintenance()))
            task.add_done_callback(self._maintenance_reads.discard)

    def _on_activity(self, in_flight: int) -> None:
        if in_flight == 0 and self._idle is not None:
            self._idle.set()
        if not self._closed:
            self.activity_changed.emit(in_flight)

    async def _answered(self, connection: Connection, limit: float) -> None:
        """Return once the requests the windows sent on `connection_opened` are answered (none
        in flight), or after `limit` seconds; at once when none were sent. A request leaves a
        few turns of the loop after the signal (the view-model's task, then the client's)."""
        for _turn in range(REQUESTS_LEAVE_WITHIN_TURNS):
            if connection.client.in_flight:
                break
            await asyncio.sleep(0)
        else:
            return
        self._idle = idle = asyncio.Event()
        try:
            await self._prepare_reading(idle)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(idle.wait(), limit)
        finally:
            if self._idle is idle:
                self._idle = None

    @staticmethod
    async def _prepare_reading(answered: asyncio.Event) -> None:
        """While the windows' first requests are on their way, build what reading the answers
        takes and is not built yet: the validators of the overview's answers (its first data),
        which a window whose sandbox was up before it had built none of (the warm-up stops
        when the sandbox answers). A step a turn of the loop; none once all is answered
        (app.startup)."""
        from app.api.client import OVERVIEW_ANSWERS, validators_to_build

        await startup.run_while(validators_to_build(OVERVIEW_ANSWERS), answered.is_set)

    # ------------------------------------------------------------------ the end

    async def aclose(self) -> None:
        """Close the connection and stop the embedded sandbox."""
        self._closed = True
        tasks: list[Any] = [t for t in (self._task, self._watch, *self._retired) if t is not None]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        if self.connection is not None:
            await self.connection.aclose()
            self.connection = None
        if self._avatars is not None:
            await self._avatars.aclose()
        self.stop_sandbox()

    def stop_sandbox(self) -> None:
        """Stop every local sandbox this session started."""
        for sandbox in (self._sandbox, *self._more.values()):
            if sandbox is not None:
                sandbox.stop()
