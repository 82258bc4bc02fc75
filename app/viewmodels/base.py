"""`ViewModel`: what every window's view-model shares.

- `busy` / `error` state with change signals, so a window can show "loading" and "failed" states
  without knowing anything about HTTP.
- `run(coro)` starts a coroutine as an asyncio task on the running (qasync) loop and keeps a
  reference to it until it ends: a task referenced only by the loop can be garbage-collected
  mid-flight. `close()` cancels whatever is still running.
- A `ClientError` ends the task quietly with its text in `error`. Anything else is a bug: it also
  lands in `error`, and goes to `sys.excepthook` too (the app's hook shows it in a dialog).

QtCore only: no QtWidgets below `app/`.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Coroutine
from typing import Any, TypeVar

from PySide6.QtCore import QObject, Qt, Signal

from app.api.errors import ClientError

T = TypeVar("T")


class FormError(ValueError):
    """What a view-model refuses in a window's form, and the field it is about (a name the
    view-model's form uses; "" for the form as a whole): the window says it under the field."""

    def __init__(self, field_name: str, text: str) -> None:
        super().__init__(text)
        self.field = field_name


class ViewModel(QObject):
    busy_changed = Signal(bool)
    error_changed = Signal(str)
    #: a short line saying what is going on ("Loading…"), empty when idle
    status_changed = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._busy_tasks = 0
        self._error = ""
        self._status = ""
        self._closed = False

    # ------------------------------------------------------------------ state

    @property
    def busy(self) -> bool:
        return self._busy_tasks > 0

    @property
    def error(self) -> str:
        """The last failure's text, empty when the last busy task succeeded."""
        return self._error

    @property
    def status(self) -> str:
        return self._status

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def tasks(self) -> frozenset[asyncio.Task[Any]]:
        """Tasks still running (for tests and for the window's close handling)."""
        return frozenset(t for t in self._tasks if not t.done())

    def set_error(self, text: str) -> None:
        if text != self._error:
            self._error = text
            if not self._closed:
                self.error_changed.emit(text)

    def set_status(self, text: str) -> None:
        if text != self._status:
            self._status = text
            if not self._closed:
                self.status_changed.emit(text)

    # ------------------------------------------------------------------ tasks

    def run(self, coro: Coroutine[Any, Any, T], *, busy: bool = True) -> asyncio.Task[T | None]:
        """Run `coro` as a tracked task on the running event loop. A busy task clears `error`
        when it starts and marks the model busy until it ends."""
        if self._closed:
            coro.close()
            raise RuntimeError(f"{type(self).__name__} is closed")
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            coro.close()
            raise
        if busy:
            self.set_error("")
            self._busy_tasks += 1
            if self._busy_tasks == 1:
                self.busy_changed.emit(True)
        ended = [False]  # set once the busy bookkeeping is done, by whichever comes first
        task = loop.create_task(self._guard(coro, busy, ended))
        self._tasks.add(task)
        # a task cancelled before its first step never runs `_guard`'s `finally`: the done
        # callback covers that case (and discards the reference in every case)
        task.add_done_callback(lambda t: self._finished(t, coro, busy, ended))
        return task

    async def _guard(self, coro: Coroutine[Any, Any, T], busy: bool, ended: list[bool]) -> T | None:
        try:
            return await coro
        except ClientError as exc:
            self.set_error(str(exc))
        except Exception as exc:
            self.set_error(f"Unexpected error: {type(exc).__name__}: {exc}")
            sys.excepthook(type(exc), exc, exc.__traceback__)
        finally:
            self._end(busy, ended)
        return None

    def _finished(
        self, task: asyncio.Task[Any], coro: Coroutine[Any, Any, Any], busy: bool, ended: list[bool]
    ) -> None:
        self._tasks.discard(task)
        coro.close()  # no "never awaited" warning if it never started; no-op if it ran
        self._end(busy, ended)

    def _end(self, busy: bool, ended: list[bool]) -> None:
        if ended[0]:
            return
        ended[0] = True
        if busy:
            self._busy_tasks -= 1
            if self._busy_tasks == 0:
                self.set_status("")
                if not self._closed:
                    self.busy_changed.emit(False)

    def cancel_tasks(self) -> None:
        """Cancel every running task (the model stays usable)."""
        for task in list(self._tasks):
            task.cancel()

    def close(self) -> None:
        """Cancel every running task; no signal is emitted afterwards. Its tables let go of
        their rows (`TableModel.release`): its window is going."""
        from app.viewmodels.table import TableModel

        self._closed = True
        self.cancel_tasks()
        for table in self.findChildren(
            TableModel, options=Qt.FindChildOption.FindDirectChildrenOnly
        ):
            table.release()
