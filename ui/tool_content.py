"""`ToolContent`, the base of a tool's own window: the part of a `ToolPage` below its title.

A module of its own so that the windows (`ui.groups`, ...) import it without importing
`ui.tool_page`, which imports them (lazily, `ui.tool_page.WINDOWS`): no import cycle.

The skeleton every tool shares lives here once: `model`, the tool's `ToolViewModel`; F5
(`refresh`) and closing (`close_content`) go to it; `start_model()`, at the end of a window's
`__init__`, shows the model's `phase` on the window's `states` (a `StatePanel`) now and whenever
it changes, makes Retry load again, and starts the model."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget

from app.viewmodels.session import Session
from app.viewmodels.tools import LoadPhase, ToolViewModel

if TYPE_CHECKING:
    from ui.states import StatePanel


class ToolContent(QWidget):
    """The base of a tool's own window: the part of a `ToolPage` below its title.

    A subclass makes its view-model (`self.model = ...`, its type named in the class body:
    `model: UserEditorModel`) or is given one, builds its widgets, puts what the model loads
    in a `StatePanel` named `self.states`, and ends its `__init__` with `self.start_model()`.
    It overrides `on_model_phase_changed` to show more than the panel (calling super), and
    `refresh`, `close_content` or `open_item` where it does more than the model does."""

    #: show another tool with an item in it: ("users", user id), ("project_dashboard", "default")
    open_requested = Signal(str, object)
    #: what the window shows now ("Web shop (web-shop)"), for a window of its own's title
    title_changed = Signal(str)
    #: the window is of use where the tool is not available (the metrics tool reads and checks
    #: files with no connection): the page still says why, but leaves the window enabled
    usable_when_unavailable = False

    #: the tool's view-model
    model: ToolViewModel
    #: where the model's `phase` is shown (`show_phase`); None: the window shows it itself
    states: StatePanel | None = None

    def __init__(
        self,
        session: Session,
        parent: QWidget | None = None,
        *,
        model: ToolViewModel | None = None,
    ) -> None:
        super().__init__(parent)
        self.session = session
        if model is not None:
            self.model = model

    def start_model(self) -> None:
        """The window is built: show the model's phase (now, and on `phase_changed`), let
        Retry load again, and start the model (it loads when the tool can be used)."""
        if self.states is not None:
            self.states.retry_requested.connect(self.refresh)
        self.model.phase_changed.connect(self.on_model_phase_changed)
        self.on_model_phase_changed()
        self.model.start()

    def on_model_phase_changed(self) -> None:
        """Show the model's phase on `states`. Override to show more (calling super)."""
        if self.states is not None:
            self.show_phase()

    def show_phase(self) -> LoadPhase:
        """Show the model's phase on `states`, with the model's texts for it, and return it:
        waiting and loading as the loading page, unavailable and empty as the empty page (a
        title and what it means), failed as the error page with Retry, ready as the content."""
        states, m = self.states, self.model
        assert states is not None, "show_phase needs a StatePanel in self.states"
        phase = m.phase
        if phase is LoadPhase.WAITING:
            states.show_loading(m.waiting_text)
        elif phase is LoadPhase.UNAVAILABLE:
            states.show_empty(m.unavailable_title, m.unavailable_reason)
        elif phase is LoadPhase.LOADING:
            states.show_loading(m.loading_text)
        elif phase is LoadPhase.FAILED:
            states.show_error(m.failed_title, m.failed_text)
        elif phase is LoadPhase.EMPTY:
            states.show_empty(m.empty_title, m.empty_text)
        else:
            states.show_content()
        return phase

    def refresh(self) -> None:
        """F5, Retry: load again."""
        self.model.refresh()

    def open_item(self, item: Any) -> None:
        """Show `item` (what another tool's `open_requested` carried)."""

    def close_content(self) -> None:
        """The page is closing: close the view-model (cancelling its tasks)."""
        self.model.close()

    def unsaved_changes(self) -> str:
        """What closing the window now would lose, in a sentence ("" when nothing, the
        default): the main window and a tool's window of its own ask before they close."""
        return ""

    def focus_filter(self) -> bool:
        """Ctrl+F: focus this window's own filter box (one that is not a `DataTable`'s) and
        return True; False (the default) lets the page look for a `DataTable`."""
        return False
