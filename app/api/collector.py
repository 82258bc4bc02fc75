"""The cyclic garbage collector's pauses while a large answer is built (`paused_gc`), and the
collection of what they froze once a window is gone (`collect_frozen`). Standard library only:
the window's first data, whose table model uses them, does not wait for the streaming reader's
imports (`app.api.streaming`, msgspec's with it)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

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
    counted; collection resumes when the last ends, if it was on when the first began."""
    global _pauses, _was_enabled, _froze
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
