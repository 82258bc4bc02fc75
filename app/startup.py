"""What flagdesk does only to start sooner and to keep large tables smooth, in one place.

Each measure, with what it was measured to save when it came (alternated runs on this project's
two-core machines; the commit that brought it says how) and where it acts:

- `start_without_collector` / `start_made`: the window's start (`app.cli.run_gui` to the last
  page built, `ui.main_window`) and the sandbox child's imports (`sandbox.__main__`) run with the
  cyclic collector off, and what they made is frozen after: about 130 collections, a tenth of
  the CPU before the window's first data; about 10% of the child's boot.
- `quiet_libraries`: pydantic looks for no plugins (its own PYDANTIC_DISABLE_PLUGINS setting; it
  read the entry points of every installed distribution as the first model was built): 60-85 ms
  of the first data. Passed on to the sandbox child through the environment.
- `SWITCH_INTERVAL`: a thread running Python lets the GUI thread have the interpreter every
  0.2 ms, not 5: during a bulk action the event loop waited 36-62 ms a turn at 1 ms, 11-23 ms
  at 0.2 ms (`bench/actions.py`).
- `paused_gc` / `collect_frozen`: no collection while 100,000 items are built (half of such a
  load, in stalls of up to 140 ms); what was frozen is collected once its window closes.
- `warm_up`: while the embedded sandbox boots, the session takes the first requests' steps on
  the otherwise idle GUI thread (`app.api.client.warm_up_steps`: the HTTP stack's asyncio
  side, 30-50 ms, then the first answers' validators), and, while the overview's requests are
  on their way, builds the validators of their answers still unbuilt (`Session`).
- `early_sandbox`: the embedded sandbox is launched as soon as the window's frame is shown,
  before the session's imports (`sandbox.process.EarlySandbox`), so it boots on the other core
  while the rest loads: most of the wait for the first data is the child's boot.

Not switched, being how the code is laid out rather than extra steps: the window built in three
steps (frame, overview, the other pages after the first data), modules that import heavy
libraries inside the functions that need them, the sandbox child's own entry (`python -m
sandbox`, without every command's imports), the answers' validators built on first use
(pydantic's `defer_build`), and the bundle without PyInstaller's start-up hooks for PySide6 and
multiprocessing (packaging/bundle/flagdesk.spec).

`FLAGDESK_STARTUP_MEASURES=off` in the environment turns every switched measure off, in the
window and in its sandbox child alike: for a profile, a test run or a comparison without them
(`bench/gui_startup.py --plain`). Standard library only: every layer may use it.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

#: the environment variable whose value "off" turns the measures off
SWITCH = "FLAGDESK_STARTUP_MEASURES"
#: how often (seconds) a thread running Python must let another have the interpreter (CPython's
#: default is 5 ms)
SWITCH_INTERVAL = 0.0002


def measures_on() -> bool:
    """Whether the measures of this module apply (the switch is not "off")."""
    return os.environ.get(SWITCH, "").strip().lower() != "off"


def quiet_libraries() -> None:
    """pydantic looks for no plugins in this process and its children (flagdesk has none)."""
    if measures_on():
        os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")


def tune_interpreter() -> None:
    """The GUI thread gets the interpreter back within `SWITCH_INTERVAL` of a worker's Python."""
    if measures_on():
        sys.setswitchinterval(SWITCH_INTERVAL)


def start_without_collector() -> None:
    """The cyclic collector off until `start_made`: a start makes objects by the hundred
    thousand that live as long as the process."""
    if measures_on():
        gc.disable()


def start_made() -> None:
    """The start is over: what it made is moved out of the collector's sight, and the
    collector is on again (also when the start ended early: a window closed before its pages
    were built)."""
    if measures_on() and not gc.isenabled():
        gc.freeze()
        gc.enable()


def early_sandbox() -> bool:
    """Whether the window launches its embedded sandbox as soon as its frame is shown."""
    return measures_on()


def warm_up() -> bool:
    """Whether the session readies the first requests while it waits (see the module)."""
    return measures_on()


async def run_while(steps: tuple[Callable[[], object], ...], done: Callable[[], bool]) -> None:
    """Run `steps` a turn of the event loop each, until they are all run or `done()` says the
    wait they fill is over; nothing when the measures are off."""
    import asyncio

    if not warm_up():
        return
    for step in steps:
        if done():
            return
        step()
        await asyncio.sleep(0)


_pauses = 0
_was_enabled = False
#: whether a pause has frozen what was alive (`collect_frozen` has something to look at)
_froze = False


@contextmanager
def paused_gc() -> Iterator[None]:
    """No cyclic garbage collection while a large answer is built, nor of what it built.

    Building 100,000 items allocates enough container objects to trigger several full
    collections, each of which walks every object of the process (Qt's wrappers included): half
    of the time of a 100,000-item load, in stalls of up to 140 ms. The items hold no reference
    cycles, so reference counting frees them anyway. When the last pause ends, everything alive
    is moved out of the collector's sight (`gc.freeze()`): otherwise the first collections
    after it walk the hundreds of thousands of objects made meanwhile, and stall the window
    just after it shows the rows (a full collection then took 0.13-0.15 s). What was frozen is
    still freed by reference counting; only reference cycles that were already garbage stay:
    40 objects per load of 100,000 archived flags, measured. Nested and concurrent pauses are
    counted; collection resumes when the last ends, if it was on when the first began. With
    the measures off, nothing is paused."""
    global _pauses, _was_enabled, _froze
    if not measures_on():
        yield
        return
    if _pauses == 0:
        _was_enabled = gc.isenabled()
        gc.disable()
    _pauses += 1
    try:
        yield
    finally:
        _pauses -= 1
        if _pauses == 0:
            gc.freeze()
            _froze = True
            if _was_enabled:
                gc.enable()


def collect_frozen() -> None:
    """Collect what the pauses froze and has since become garbage: a window closed after its
    rows were frozen. Freezing keeps the collector away from everything alive at the time, a
    window's widgets and view-model too; those hold reference cycles (a confirmation flow's
    callback that names its window, say), which only the collector frees, so without this a
    closed window of 100,000 rows stayed in memory for good (`bench/ui_tables.py`: 688 MB
    after opening each table three times). Called once a window is gone (when a tool's
    view-model closes); what is still alive is frozen again. Nothing while a load is under way
    (it freezes what it built when it ends) or when nothing was frozen."""
    global _froze
    if _pauses or not _froze:
        return
    gc.unfreeze()
    gc.collect()
    gc.freeze()
