"""The runner: the one way flagdesk changes a server, from a window or the command line alike.

An action module (`app.actions.groups`, `.users`, ...) plans a change: a `Plan` fixes, before
anything is confirmed, the server and connection, the action of `app.registry`, the snapshot of
what is there now, the exact requests (`Step`s: `WriteRequest`s of `app.api.client`, what
`--dry-run` prints and the confirmation describes) and what the change touches (`announced`,
as `Changes`). `carry_out(client, plan)` then does, in this order and nowhere else:

1. the capability check, once: the plan's action can be used with this server and token, and the
   client is connected to the server the plan names (else `Unsupported`, `NotStarted`);
2. the plan's own last look (`Plan.refusal`: the last Admin is never deleted or demoted), which
   the person was already told of when planning: this catches what changed since;
3. the snapshot, written whole and fsync'ed on a worker thread;
4. for each step: the journal's `sent` line, exactly the planned request, the journal completed
   with the answer (`done`, `failed`, or `in doubt` when the error says the server may have made
   the change: `ClientError.in_doubt`);
5. the "data changed" notice (`announce(changes)` for each of `plan.announced`) once anything
   was sent, also when an answer was an error or never came: every window showing that data
   reads it again.

It returns `Done` with the answers (a module reads their bodies with `client.read_answer`), or
raises: `NotStarted` (nothing sent: no snapshot or journal could be written; `Refused`), the
client's error (the journal has it), `PartlyDone` when a later step of several fails.

A window's view-model calls it through `SessionViewModel.run_plan`, a command directly, so the
two cannot differ; `tests/app/test_one_runner.py` fails when anything else calls a method of the
client that writes.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from app.actions.journal import Actor, Journal
from app.api import errors as e
from app.text import plural

if TYPE_CHECKING:
    from app.api.capabilities import Capabilities
    from app.api.client import AdminClient, Answer, WriteRequest
    from app.changes import Changes
    from app.registry import Action

__all__ = [
    "MAX_WAIT",
    "Done",
    "NotStarted",
    "PartlyDone",
    "Plan",
    "PlanBase",
    "Refused",
    "Step",
    "Stopped",
    "carry_out",
    "count_to_type",
    "journal_of",
    "require",
    "typed_confirms",
]

log = logging.getLogger("flagdesk.actions")

#: the longest `Retry-After` a step that waits out the server's limit waits (Unleash: a minute)
MAX_WAIT = 120.0


class NotStarted(e.ClientError):
    """The action stopped before its request: nothing was sent (the snapshot or the journal
    could not be written, a refusal, the connection changed). `str()` says what and that
    nothing changed."""

    never_sent = True


class Refused(NotStarted):
    """The plan's last look refused it (`Plan.refusal`: the last Admin): nothing was sent."""


@dataclass(frozen=True)
class Step:
    """One request of a plan, with its journal entry."""

    request: WriteRequest
    #: what the entry names (user ids, flag names, a group's id...)
    ids: Sequence[Any]
    #: what was there before, for the journal (the snapshot's name, the values an undo restores)
    before: Mapping[str, Any] | None = None
    #: the journal records the body sent too: what the thing becomes (an edit), which is how an
    #: edit left in doubt is checked
    with_body: bool = False
    #: how many tries (None: the client's policy, which retries only what was never sent)
    attempts: int | None = None
    #: a 429 is waited out here as `Retry-After` says, second by second through `on_wait`
    #: (creating users: Unleash allows 20 a minute), instead of being the answer
    wait_out_limit: bool = False
    #: what the journal keeps of a successful answer, as the entry's `after` (a creation: the
    #: id of what was made; never a secret); None for nothing. A body it cannot read keeps
    #: nothing: the answer stays the answer
    after: Callable[[Answer], Any] | None = None


class Plan(Protocol):
    """What `carry_out` needs of a plan (`PlanBase` gives the defaults)."""

    @property
    def journal(self) -> Journal:
        """The journal of the connection the plan was made for (its actor names the server)."""
        ...

    @property
    def action(self) -> Action: ...

    @property
    def nothing(self) -> str:
        """What a stop before the first request means: "Nothing was deleted."."""
        ...

    @property
    def snapshot(self) -> Path | None: ...

    @property
    def announced(self) -> tuple[Changes, ...]:
        """What the plan changes, for the windows showing it."""
        ...

    def steps(self) -> Sequence[Step]: ...

    @property
    def question(self) -> str:
        """The confirmation's question: "Delete group “Ops”?"."""
        ...

    def lines(self) -> list[str]:
        """Everything the confirmation says, one sentence a line."""
        ...

    def write_snapshot(self) -> object:
        """Write the snapshot at `snapshot` (called on a worker thread when there is one)."""
        ...

    async def refusal(self, client: AdminClient) -> str:
        """Why the plan must not go ahead now ("" when it may), asked of the server just
        before the first request."""
        ...

    def partly(self, steps: int) -> str:
        """What the first `steps` steps did, when a later one failed: "2 of 5 flags were
        deleted for good"."""
        ...


class PlanBase:
    """The defaults of a `Plan`: the server its journal names, no snapshot to write, nothing
    refused."""

    @property
    def server(self) -> str:
        """The base URL of the server the plan was made for (its journal's actor's)."""
        return self.journal.actor.server  # type: ignore[attr-defined, no-any-return]

    def write_snapshot(self) -> object:
        return None

    async def refusal(self, client: AdminClient) -> str:
        return ""

    def partly(self, steps: int) -> str:
        count = len(self.steps())  # type: ignore[attr-defined]
        return f"{steps:,} of {plural(count, 'request')} went through"


@dataclass(frozen=True)
class Done:
    """A plan the server answered with success, every step of it."""

    plan: Any
    answers: tuple[Answer, ...]
    #: the journal's file and the entries' ids in it, one per step
    journal: Path
    entries: tuple[str, ...]
    #: the seconds spent waiting out the server's limit
    waited: float = 0.0

    @property
    def statuses(self) -> tuple[int, ...]:
        return tuple(answer.status for answer in self.answers)

    @property
    def status(self) -> int:
        return self.answers[0].status

    @property
    def entry(self) -> str:
        return self.entries[0]

    @property
    def answer(self) -> Answer:
        return self.answers[0]


class PartlyDone(e.ClientError):
    """A plan of several steps that stopped at one: `done` steps had their answers, `error` is
    the client's error of the one that failed."""

    def __init__(self, plan: Plan, done: int, error: e.ClientError) -> None:
        super().__init__(f"{plan.partly(done)}; then: {error}")
        self.plan = plan
        self.done = done
        self.error = error

    @property
    def in_doubt(self) -> bool:
        return self.error.in_doubt


class Stopped(Exception):
    """The person stopped a plan between two of its steps (`carry_out`'s `stop`): `done`
    steps went through and are journaled; nothing more was sent, and no step is in doubt."""

    def __init__(self, plan: Plan, done: int) -> None:
        super().__init__(f"{plan.partly(done)}; nothing more was sent")
        self.plan = plan
        self.done = done


def count_to_type(count: int) -> str | None:
    """What a person types to confirm deleting `count` users at once (the inactive users', or
    `flagdesk users delete` of many ids): their number when more than one; None (asked yes or
    no) for one."""
    return f"{count}" if count > 1 else None


def typed_confirms(expected: str | None, typed: str) -> bool:
    """Whether `typed` confirms where `expected` is asked to be typed (always, when nothing
    is: `expected` None). Spaces around it do not count."""
    return expected is None or typed.strip() == expected


def require(caps: Capabilities, action: Action) -> None:
    """`Unsupported`, saying why, when the capabilities rule `action` out (a command asks this
    before planning, so that `--dry-run` says it too; `carry_out` asks it again)."""
    availability = caps.action(action)
    if not availability.available:
        raise e.Unsupported(availability.title, availability.reason)


def journal_of(connection: str, caps: Capabilities) -> Journal:
    """The journal of the connection named `connection`, its entries made as the token the
    capabilities describe (its kind, and the user a personal access token acts as)."""
    return Journal(Actor(connection, caps.base_url, caps.token_kind, caps.user_name))


async def carry_out(
    client: AdminClient,
    plan: Plan,
    *,
    announce: Callable[[Changes], object] | None = None,
    on_wait: Callable[[float], object] | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    on_step: Callable[[int, int], object] | None = None,
    stop: Callable[[], bool] | None = None,
) -> Done:
    """Carry out `plan` (see the module's text). `announce` is given each of `plan.announced` once
    a request was sent; `on_wait(seconds left)` is called each second a step waits out the
    server's limit; `on_step(done, total)` after each step answered (a promote's progress).
    `stop()` is asked before each step: true, the plan ends there (`Stopped`), with no step
    begun and so none in doubt, where cancelling the task may cut one off mid-request."""
    caps = await client.capabilities()
    require(caps, plan.action)
    journal = plan.journal
    if caps.base_url != journal.actor.server:
        raise NotStarted(
            f"The connection changed after the plan was made: it named {journal.actor.server}, "
            f"the connection is to {caps.base_url}. {plan.nothing}"
        )
    refusal = await plan.refusal(client)
    if refusal:
        raise Refused(f"{refusal} {plan.nothing}")
    if plan.snapshot is not None:
        await _write_snapshot(plan, plan.snapshot)
    runner = _Run(client, journal, plan, on_wait, sleep, on_step, stop)
    try:
        await runner.all_steps()
    finally:
        if runner.sent and announce is not None:
            for changes in plan.announced:
                announce(changes)
    return Done(plan, tuple(runner.answers), journal.path, tuple(runner.entries), runner.waited)


async def _write_snapshot(plan: Plan, path: Path) -> None:
    try:
        await asyncio.to_thread(plan.write_snapshot)
    except OSError as exc:
        raise NotStarted(
            f"Could not write the snapshot {path}: {exc.strerror or exc}. {plan.nothing}"
        ) from None


@dataclass
class _Run:
    client: AdminClient
    journal: Journal
    plan: Plan
    on_wait: Callable[[float], object] | None
    sleep: Callable[[float], Awaitable[None]]
    on_step: Callable[[int, int], object] | None = None
    stop: Callable[[], bool] | None = None
    answers: list[Answer] = field(default_factory=list)
    entries: list[str] = field(default_factory=list)
    waited: float = 0.0
    #: a request went out (the server may have changed something)
    sent: bool = False

    async def all_steps(self) -> None:
        steps = self.plan.steps()
        for done, step in enumerate(steps):
            if self.stop is not None and self.stop():
                raise Stopped(self.plan, done)
            try:
                await self.one(step, first=not done)
            except e.ClientError as exc:
                if done:
                    raise PartlyDone(self.plan, done, exc) from exc
                raise
            if self.on_step is not None:
                self.on_step(done + 1, len(steps))

    async def one(self, step: Step, *, first: bool) -> None:
        request = step.request
        try:
            pending = await self.journal.begin(
                self.plan.action.key,
                step.ids,
                before=dict(step.before) if step.before is not None else None,
                request=request.describe_with_body() if step.with_body else request.describe(),
            )
        except OSError as exc:
            nothing = f" {self.plan.nothing}" if first else ""
            raise NotStarted(
                f"Could not write the journal {self.journal.path}: {exc.strerror or exc}.{nothing}"
            ) from None
        self.entries.append(pending.entry)
        try:
            answer = await self.send(step)
        except e.ClientError as exc:
            self.sent = self.sent or not exc.never_sent
            status = exc.status if isinstance(exc, e.ApiError) else None
            record = pending.in_doubt if exc.in_doubt else pending.failed
            await _complete(record(status, str(exc)))
            raise
        except BaseException:
            # cancelled while waiting: the entry stays `sent`, which the reader calls in doubt
            self.sent = True
            raise
        self.sent = True
        await _complete(pending.done(answer.status, after=_after(step, answer)))
        self.answers.append(answer)

    async def send(self, step: Step) -> Answer:
        while True:
            try:
                return await self.client.send_write(step.request, attempts=step.attempts)
            except e.RateLimited as exc:
                wait = exc.retry_after if exc.retry_after is not None else 1.0
                if not step.wait_out_limit or wait > MAX_WAIT:
                    raise
                await self.wait(wait)

    async def wait(self, seconds: float) -> None:
        self.waited += seconds
        left = seconds
        while left > 0:
            if self.on_wait is not None:
                self.on_wait(left)
            step = min(1.0, left)
            await self.sleep(step)
            left -= step


def _after(step: Step, answer: Answer) -> Any:
    """What `step` keeps of `answer` for the journal (None: nothing, or a body it cannot read)."""
    if step.after is None:
        return None
    try:
        return step.after(answer)
    except (ValueError, KeyError, TypeError) as exc:
        log.warning("could not read what the answer made for the journal: %s", type(exc).__name__)
        return None


async def _complete(record: Awaitable[None]) -> None:
    """The answer is known; a journal that cannot take it leaves the entry in doubt, which is
    what the reader then shows: logged, never in place of the answer."""
    try:
        await record
    except OSError as exc:
        log.warning("could not complete a journal entry: %s", exc)
