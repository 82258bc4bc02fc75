"""`CompareModel`: the Compare window (issue 37, slice 5). Two sides are picked, each this
connection, another saved connection (read through a client made from its profile, as
`flagdesk diff PROFILE` does) or a snapshot file, whole or one environment each; Compare reads
both at once, with progress (which side, which list) and Stop, then `compare()` runs on a
worker thread and its differences fill `tree` (`DiffTree`: kind, object, difference). A filter
(kinds, project, tag, name) or an environment changed compares the snapshots already read
again, on a worker thread too: no request. Copy gives the differences as text lines, Export
writes them as JSON or Markdown (0600, whole or nothing).

Two files need no server: the window is of use with no connection, or one whose token cannot
read a snapshot (an Admin's is needed); then only "this connection" is refused, saying why.
So the phase is not the shared rule: it never waits for the connection nor is unavailable.

`SnapshotSaver`: the main window's File > Save snapshot…: the connected server read (off the
GUI thread, with progress) and written to a file.

QtCore only: no QtWidgets below `app/`.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Coroutine, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from PySide6.QtCore import (
    QAbstractItemModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)

from app.snapshot.compare import (
    KINDS,
    Change,
    Comparison,
    Difference,
    compare,
    exactly,
    short,
)
from app.snapshot.files import SnapshotFileError, default_name, load, save, write_private
from app.snapshot.model import Snapshot
from app.text import plural
from app.viewmodels.session import Session, sandbox_name
from app.viewmodels.tools import ActionViewModel, LoadPhase, SessionViewModel

if TYPE_CHECKING:
    from app.actions.journal import Journal
    from app.actions.promote import PromotePlan

Which = Literal["source", "target"]
SideKind = Literal["connection", "profile", "sandbox", "file"]
SIDES: tuple[Which, Which] = ("source", "target")
#: how the error of a comparison the person stopped begins
STOPPED = "The read was stopped"
#: the kinds' titles by key, in the comparisons' order
KIND_TITLES = {kind.key: kind.title for kind in KINDS}
KIND_WORDS = {kind.key: kind.word for kind in KINDS}

#: each change's mark: said in text, never by colour alone
MARKS = {
    Change.ONLY_IN_SOURCE: "+ only in source",
    Change.ONLY_IN_TARGET: "- only in target",
    Change.CHANGED: "≠ changed",
    Change.ORDER: "⇅ order changed",
}


@dataclass(frozen=True)
class Side:
    """One side as picked: this connection, a saved connection (its profile's name), another
    local sandbox this session runs (its number) or a snapshot file (its path)."""

    kind: SideKind
    name: str = ""

    def label(self, connection: str) -> str:
        if self.kind == "connection":
            return f"this connection ({connection})"
        if self.kind == "profile":
            return f"saved connection {self.name}"
        if self.kind == "sandbox":
            return sandbox_name(int(self.name))
        return Path(self.name).name


class SideError(Exception):
    """A side that could not be read: which, what it is, and why."""

    def __init__(self, which: Which, label: str, why: str) -> None:
        self.which = which
        self.label = label
        self.why = why
        super().__init__(f"The {which} ({label}) could not be read: {why}")


@dataclass(frozen=True)
class Filters:
    """What is compared: kinds (None: all), one project, one tag (`type:value`), a name glob
    ("" for none)."""

    kinds: frozenset[str] | None = None
    project: str = ""
    tag: str = ""
    name: str = ""


# ------------------------------------------------------------------------------ the tree

#: the tree's columns
COLUMNS = ("Difference", "Change", "Target", "Source")
#: a kind's or object's number of differences (int); None on a difference
COUNT_ROLE = Qt.ItemDataRole.UserRole + 1
#: the kind's key of any row
KIND_ROLE = Qt.ItemDataRole.UserRole + 2
#: a difference's change (`Change`'s text), and an object's that is only on one side (the whole
#: object); None on a kind or another object
CHANGE_ROLE = Qt.ItemDataRole.UserRole + 3
#: the row's level: "kind", "object" or "difference"
LEVEL_ROLE = Qt.ItemDataRole.UserRole + 4
#: the object's key (`web-shop/checkout-v2`) of an object's row or a difference's; None on a kind
OBJECT_ROLE = Qt.ItemDataRole.UserRole + 5


class _Node:
    __slots__ = ("change", "children", "count", "difference", "kind", "level", "parent", "row",
                 "texts")  # fmt: skip

    def __init__(
        self,
        parent: _Node | None,
        row: int,
        level: str,
        kind: str,
        texts: tuple[str, str, str, str],
        *,
        count: int | None = None,
        change: Change | None = None,
        difference: Difference | None = None,
    ) -> None:
        self.parent = parent
        self.row = row
        self.level = level
        self.kind = kind
        self.texts = texts
        self.count = count
        self.change = change
        self.difference = difference
        self.children: list[_Node] = []


def _change_counts(differences: Iterable[Difference]) -> str:
    counted: dict[Change, int] = {}
    for d in differences:
        counted[d.change] = counted.get(d.change, 0) + 1
    return ", ".join(f"{counted[c]:,} {c}" for c in Change if c in counted)


#: a kind's objects counted: the plural of its word where it is not the word and "s"
PLURALS = {"strategy definition": "strategy definitions", "project access": "project access "
           "entries"}  # fmt: skip


def build_nodes(comparison: Comparison) -> list[_Node]:
    """The tree's rows: a kind (its differences counted, in how many objects, by change), its
    objects (their differences counted, by change), their differences. A kind's and an
    object's text is one line, shown across the columns. Pure Python: built on a worker
    thread."""
    kinds: list[_Node] = []
    for kind, objects in comparison.tree.items():
        total = sum(len(ds) for ds in objects.values())
        all_differences = [d for ds in objects.values() for d in ds]
        word = KIND_WORDS[kind]
        text = (f"{KIND_TITLES[kind]}: {plural(total, 'difference')} in "
                f"{plural(len(objects), word, PLURALS.get(word))} "
                f"({_change_counts(all_differences)})")  # fmt: skip
        kind_node = _Node(None, len(kinds), "kind", kind, (text, "", "", ""), count=total)
        kinds.append(kind_node)
        for name, differences in objects.items():
            # the object's row is marked as only on one side when the object is, not a part
            whole = differences[0] if len(differences) == 1 and not differences[0].path else None
            said = (str(differences[0].change) if len(differences) == 1
                    else _change_counts(differences))  # fmt: skip
            obj = _Node(kind_node, len(kind_node.children), "object", kind,
                        (f"{name}: {plural(len(differences), 'difference')} ({said})", "", "",
                         ""), count=len(differences),
                        change=None if whole is None else whole.change)  # fmt: skip
            kind_node.children.append(obj)
            for d in differences:
                old = short(d.old, d.change is Change.ONLY_IN_SOURCE)
                new = short(d.new, d.change is Change.ONLY_IN_TARGET)
                leaf = _Node(obj, len(obj.children), "difference", kind,
                             (d.where or "(the whole object)", MARKS[d.change], old, new),
                             change=d.change, difference=d)  # fmt: skip
                obj.children.append(leaf)
    return kinds


def _lower(title: str) -> str:
    """A kind's title inside a sentence: "Tag types" -> "tag types", "API tokens" kept."""
    return title if title[:2].isupper() else title[:1].lower() + title[1:]


def pretty(value: Any, absent: bool) -> str:
    """A value in full, as indented JSON; what says that this side has nothing."""
    if absent:
        return "(nothing: this side does not have it)"
    return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True)


#: how much of a value a tooltip shows
TOOLTIP_CHARS = 1500


def _cut(text: str) -> str:
    return text if len(text) <= TOOLTIP_CHARS else text[: TOOLTIP_CHARS - 1] + "…"


Index = QModelIndex | QPersistentModelIndex


class DiffTree(QAbstractItemModel):
    """The comparison's differences as a tree: kind → object → difference, the counts in the
    first column, the change marked in words, values short (`short`), in full in a tooltip."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._kinds: list[_Node] = []

    def set_nodes(self, kinds: list[_Node]) -> None:
        self.beginResetModel()
        self._kinds = kinds
        self.endResetModel()

    def clear(self) -> None:
        self.set_nodes([])

    def node(self, index: Index) -> _Node | None:
        if not index.isValid():
            return None
        found = index.internalPointer()
        return found if isinstance(found, _Node) else None

    def index(self, row: int, column: int, parent: Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        siblings = self._children(parent)
        if not (0 <= row < len(siblings) and 0 <= column < len(COLUMNS)):
            return QModelIndex()
        return self.createIndex(row, column, siblings[row])

    def _children(self, parent: Index) -> list[_Node]:
        node = self.node(parent)
        return self._kinds if node is None else node.children

    def parent(self, index: Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # noqa: B008
        node = self.node(index)
        if node is None or node.parent is None:
            return QModelIndex()
        return self.createIndex(node.parent.row, 0, node.parent)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        if parent.isValid() and parent.column() != 0:
            return 0
        return len(self._children(parent))

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return len(COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if (orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole
                and 0 <= section < len(COLUMNS)):  # fmt: skip
            return COLUMNS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        node = self.node(index)
        if node is None:
            return None
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return node.texts[column]
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(node, column)
        if role == COUNT_ROLE:
            return node.count
        if role == KIND_ROLE:
            return node.kind
        if role == CHANGE_ROLE:
            return None if node.change is None else str(node.change)
        if role == LEVEL_ROLE:
            return node.level
        if role == OBJECT_ROLE:
            first = node.difference or (node.children[0].difference if node.level == "object"
                                        and node.children else None)  # fmt: skip
            return None if first is None else first.object
        return None

    def _tooltip(self, node: _Node, column: int) -> str | None:
        d = node.difference
        if d is None:
            return node.texts[0] if column == 0 else None
        if column == 2:
            return _cut(pretty(d.old, d.change is Change.ONLY_IN_SOURCE))
        if column == 3:
            return _cut(pretty(d.new, d.change is Change.ONLY_IN_TARGET))
        return d.key

    def differences(self, indexes: Iterable[Index]) -> list[Difference]:
        """The differences under `indexes` (a kind's, an object's, or one), each once, in the
        tree's order."""
        chosen: set[int] = set()
        for index in indexes:
            node = self.node(index)
            if node is not None:
                chosen.add(id(node))
        found: list[Difference] = []
        for kind in self._kinds:
            for obj in kind.children:
                for leaf in obj.children:
                    if {id(kind), id(obj), id(leaf)} & chosen and leaf.difference is not None:
                        found.append(leaf.difference)
        return found


def difference_line(d: Difference) -> str:
    """One difference as a line of text: its key, change and values (target → source)."""
    if d.change is Change.ONLY_IN_SOURCE:
        return f"{d.key}: only in source: {short(d.new)}"
    if d.change is Change.ONLY_IN_TARGET:
        return f"{d.key}: only in target: {short(d.old)}"
    return f"{d.key}: {d.change}: {short(d.old)} → {short(d.new)}"


@dataclass(frozen=True)
class Details:
    """One difference in full: its key and change, and both values as indented JSON."""

    heading: str
    target: str
    source: str


@dataclass(frozen=True)
class Proposal:
    """A promote planned, to be confirmed: the plan (`app.actions.promote.PromotePlan`), what
    it was planned from (the target as read then, its segments' ids), the journal and the
    server and connection it is for."""

    plan: PromotePlan
    source: str
    target: Snapshot
    segment_ids: dict[str, int]
    journal: Journal
    server: str
    connection: str
    #: the target's environment promoted to ("": every one)
    environment: str = ""

    @property
    def destination(self) -> str:
        """The target in words: `production of http://… (connection “Demo sandbox”)`."""
        of = f"{self.environment} of " if self.environment else ""
        return f"{of}{self.server} (connection “{self.connection}”)"

    @property
    def question(self) -> str:
        return self.plan.question(self.source, self.destination)

    def lines(self) -> list[str]:
        return [
            *self.plan.lines(),
            f"A snapshot of the target's configuration is written first to "
            f"{self.journal.folder}; each request is journaled, and Undo promote (here, or "
            "in the History window) takes the whole promote back.",
        ]


@dataclass(frozen=True)
class Promoted:
    """A promote carried out from this window: where, its id (its journal entries name it),
    and how it was said."""

    server: str
    connection: str
    promote: str
    said: str


# ------------------------------------------------------------------------------ the window


class CompareModel(ActionViewModel):
    #: a side's read goes on: (which side, what it says)
    progress = Signal(str, str)
    #: the comparison shown changed (read, filtered, cleared)
    result_changed = Signal()
    #: what the pickers offer changed (a side read, a file opened, the sides swapped)
    choices_changed = Signal()
    #: an export was written: where (a sentence for the status bar)
    exported = Signal(str)
    #: a promote was planned (`Proposal`): confirm it, then `promote(proposal)`
    promote_planned = Signal(object)
    #: the undo of the last promote was planned (a runner plan): confirm it, then `undo(plan)`
    undo_planned = Signal(object)
    #: a promote or its undo goes on: `action_progress` says how far
    action_progress_changed = Signal()

    def __init__(self, session: Session, parent: QObject | None = None) -> None:
        super().__init__("compare", session, parent)
        self.tree = DiffTree(self)
        self.sides: dict[Which, Side | None] = {"source": None, "target": None}
        #: the environment compared on each side ("": all)
        self.environments: dict[Which, str] = {"source": "", "target": ""}
        self.filters = Filters()
        #: the snapshot files opened, offered on both sides
        self.files: list[str] = []
        #: what was read for each side: the side as picked, and its snapshot
        self.read: dict[Which, tuple[Side, Snapshot]] = {}
        self.comparison: Comparison | None = None
        #: each side's progress as said ("" when done or not reading)
        self.side_progress: dict[Which, str] = {"source": "", "target": ""}
        #: how long the last read and comparison took, in seconds
        self.seconds = 0.0
        self._read_task: asyncio.Task[None] | None = None
        self._compare_task: asyncio.Task[None] | None = None
        self._stopping = False
        self._reading = False
        #: the last promote done here (its server and connection, its id, what it said), for
        #: Undo promote
        self.promoted: Promoted | None = None
        #: a promote's or undo's progress as said ("" when none goes on)
        self.action_progress = ""
        #: (done, total) of the stage under way, for a progress bar ((0, 0): not known)
        self.action_steps = (0, 0)
        #: a promote or undo is sending (Stop asks it to stop between two requests)
        self._sending = False
        self._stop_requested = False

    # ------------------------------------------------------------------ state

    @property
    def reading(self) -> bool:
        """Both sides are being read (Stop ends it); the comparison after is part of it."""
        return self._reading

    @property
    def phase(self) -> LoadPhase:
        """Not the shared rule: two files compare with no connection, so it never waits for
        one nor is unavailable. Reading is loading; nothing compared yet, or no difference, is
        empty (each saying so)."""
        if self.reading:
            return LoadPhase.LOADING
        if self.error:
            return LoadPhase.FAILED
        if self.comparison is None or self.comparison.same:
            return LoadPhase.EMPTY
        return LoadPhase.READY

    @property
    def connection_reason(self) -> str:
        """Why this connection cannot be a side ("" when it can)."""
        if self.available:
            return ""
        return self.unavailable_reason or "Not connected."

    @property
    def loading_text(self) -> str:
        parts = [f"{which.capitalize()}: {text}" for which in SIDES
                 if (text := self.side_progress[which])]  # fmt: skip
        return "; ".join(parts) or self.status or "Reading both sides…"

    @property
    def failed_title(self) -> str:
        if self.error.startswith(STOPPED):
            return "Comparing stopped"
        for which in SIDES:
            if self.error.startswith(f"The {which} ("):
                return f"Could not read the {which}"
        return "Could not compare"

    @property
    def empty_title(self) -> str:
        return "Nothing compared yet" if self.comparison is None else "Same"

    @property
    def empty_text(self) -> str:
        c = self.comparison
        if c is None:
            return ("Choose a source and a target (this connection, a saved connection or a "
                    "snapshot file), whole or one environment each, then Compare.")  # fmt: skip
        kinds = ", ".join(_lower(KIND_TITLES[k]) for k in c.kinds) or "nothing"
        return f"{c.source} and {c.target} do not differ in {kinds}{self._filtered_text()}."

    def _filtered_text(self) -> str:
        f = self.filters
        said = [f"project {f.project}" if f.project else "", f"tag {f.tag}" if f.tag else "",
                f"names matching {f.name}" if f.name else ""]  # fmt: skip
        said = [s for s in said if s]
        return f" (only {', '.join(said)})" if said else ""

    @property
    def summary(self) -> str:
        """The comparison's first line: the sides and how many differences."""
        c = self.comparison
        if c is None:
            return ""
        head = f"{c.source} (source) against {c.target} (target)"
        if c.same:
            return ""  # the empty state says it, naming what was compared
        counts = "; ".join(f"{KIND_TITLES[line.split(':')[0]]}: {line.split(': ', 1)[1]}"
                           for line in c.summary())  # fmt: skip
        return (f"{head}: {plural(len(c.differences), 'difference')} ({counts}). Values: the "
                "target's, then the source's.")  # fmt: skip

    @property
    def not_compared_text(self) -> str:
        """The kinds not compared and why, one line ("" when every kind asked was)."""
        c = self.comparison
        if c is None or not c.not_compared:
            return ""
        return "Not compared: " + "; ".join(f"{KIND_TITLES[k]} ({why})"
                                            for k, why in c.not_compared) + "."  # fmt: skip

    def side_choices(self) -> list[tuple[Side, str]]:
        """What a side can be, with its label: this connection, each saved connection and each
        local sandbox running (not the one open: that is this connection), each snapshot file
        opened."""
        choices = [(Side("connection"), self.side_label(Side("connection")))]
        try:
            profiles = [p.name for p in self.session.store.profiles()]
        except Exception:
            profiles = []
        choices += [(Side("profile", n), self.side_label(Side("profile", n)))
                    for n in profiles if n != self.session.name]  # fmt: skip
        choices += [(Side("sandbox", str(n)), name) for n, name in self.session.running_sandboxes()
                    if n != self.session.sandbox_number]  # fmt: skip
        choices += [(Side("file", f), f"file {Path(f).name}") for f in self.files]
        return choices

    def side_label(self, side: Side) -> str:
        return side.label(self.session.name)

    def environment_choices(self, which: Which) -> list[str]:
        """The environments of the side as read ([] before it is read)."""
        got = self.read.get(which)
        if got is None or got[0] != self.sides[which]:
            return []
        return [e.name for e in got[1].environments]

    def project_choices(self) -> list[str]:
        found = {p.id for _, snap in self.read.values() for p in snap.projects}
        return sorted(found)

    def tag_choices(self) -> list[str]:
        found = {f"{t.type}:{t.value}" for _, snap in self.read.values() for fl in snap.flags
                 for t in fl.tags}  # fmt: skip
        return sorted(found)

    # ------------------------------------------------------------------ picking

    def set_side(self, which: Which, side: Side | None) -> None:
        if side is not None and side.kind == "file" and side.name not in self.files:
            self.files.append(side.name)
        if self.sides[which] != side:
            self.sides[which] = side
            self.environments[which] = ""
            self.choices_changed.emit()

    def open_file(self, which: Which, path: str) -> Side:
        """A snapshot file picked for `which` (offered on both sides from then on)."""
        side = Side("file", str(Path(path)))
        self.set_side(which, side)
        self.choices_changed.emit()
        return side

    def set_environment(self, which: Which, environment: str) -> None:
        if self.environments[which] != environment:
            self.environments[which] = environment
            self._recompare()

    def set_filters(self, filters: Filters) -> None:
        if filters != self.filters:
            self.filters = filters
            self._recompare()

    def swap(self) -> None:
        """The source becomes the target and the other way round; what was read is compared
        again the other way, with no request."""
        s, t = self.sides["source"], self.sides["target"]
        self.sides = {"source": t, "target": s}
        self.environments = {"source": self.environments["target"],
                             "target": self.environments["source"]}  # fmt: skip
        self.read = {("target" if w == "source" else "source"): got
                     for w, got in self.read.items()}  # fmt: skip
        self.choices_changed.emit()
        self._recompare()

    # ------------------------------------------------------------------ comparing

    def start(self) -> None:
        """Nothing is read until Compare: the window opens with its pickers."""
        self._started = True
        if self.sides["source"] is None and self.available:
            self.sides["source"] = Side("connection")

    def refresh(self) -> None:
        """F5, Retry: read both sides again and compare them (when both are picked)."""
        if not self.closed:
            self.load()

    def load(self) -> None:
        """Compare: read both sides (concurrently, off the GUI thread), then compare."""
        source, target = self.sides["source"], self.sides["target"]
        if self.closed or source is None or target is None:
            return
        if self._read_task is not None and not self._read_task.done():
            self._read_task.cancel()
        if self._compare_task is not None and not self._compare_task.done():
            self._compare_task.cancel()
        self._stopping = False
        self.side_progress = {"source": "starting…", "target": "starting…"}
        self.set_status("Reading both sides…")
        self._reading = True
        task = self._read_task = self.run(self._load(source, target))
        task.add_done_callback(self._on_read_done)

    async def _load(self, source: Side, target: Side) -> None:
        try:
            await self._read_and_compare(source, target)
        finally:
            if self._read_task is asyncio.current_task():
                self._reading = False  # before the busy state ends, which shows the phase

    async def _read_and_compare(self, source: Side, target: Side) -> None:
        started = time.perf_counter()
        try:
            snapshots = await self._read_both(source, target)
        except asyncio.CancelledError:
            self._say_stopped()  # now, before the busy state ends: no flash of the old result
            raise
        except SideError as failed:
            self.comparison = None
            self.tree.clear()
            self.set_error(str(failed))
            self.result_changed.emit()
            return
        theirs, ours = snapshots
        self.read = {"source": (source, theirs), "target": (target, ours)}
        self.choices_changed.emit()
        await self._compare()
        self.seconds = time.perf_counter() - started

    async def _read_both(self, source: Side, target: Side) -> tuple[Snapshot, Snapshot]:
        """Both sides at once; the first that fails stops the other (its `SideError`)."""
        failed: list[BaseException] = []
        try:
            async with asyncio.TaskGroup() as group:
                theirs = group.create_task(self._read_side("source", source))
                ours = group.create_task(self._read_side("target", target))
        except* SideError as group_failed:
            failed.extend(group_failed.exceptions)  # raised below: in here it is grouped again
        if failed:
            raise failed[0]
        return theirs.result(), ours.result()

    async def _read_side(self, which: Which, side: Side) -> Snapshot:
        label = self.side_label(side)
        try:
            if side.kind == "file":
                self._say(which, f"loading {Path(side.name).name}…")
                snapshot = await asyncio.to_thread(load, side.name)
            elif side.kind == "connection":
                reason = self.connection_reason
                if reason:
                    raise SideError(which, label, reason)
                client = await self.session.client()
                snapshot = await self._read_live(which, client)
            elif side.kind == "sandbox":
                spec = await self.session.sandbox_spec(int(side.name))
                async with spec.client() as client:
                    snapshot = await self._read_live(which, client)
            else:
                snapshot = await self._read_profile(which, side.name)
        except SideError:
            raise
        except SnapshotFileError as exc:
            raise SideError(which, label, str(exc)) from None
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a refusal, an unreachable server, a missing token
            raise SideError(which, label, str(exc) or type(exc).__name__) from None
        self._say(which, "read")
        return snapshot

    async def _read_live(self, which: Which, client: Any) -> Snapshot:
        from app.snapshot.read import read_snapshot

        done: list[str] = []

        def said(name: str) -> None:
            done.append(name)
            self._say(which, f"read {', '.join(done)}…")

        self._say(which, "reading the server…")
        return await read_snapshot(client, progress=said)

    async def _read_profile(self, which: Which, name: str) -> Snapshot:
        """The saved connection `name`'s server, read through a client of its own (its token
        from the keyring, off the GUI thread), as `flagdesk diff PROFILE` does."""
        from app.api.sending import check_token
        from app.connection import spec_of

        store = self.session.store
        profile = store.get(name)
        spec = await asyncio.to_thread(spec_of, profile, store)
        check_token(spec.token, f"The token of profile {name!r}")
        async with spec.client() as client:
            return await self._read_live(which, client)

    def _say(self, which: Which, text: str) -> None:
        self.side_progress[which] = text
        if not self.closed:
            self.progress.emit(which, text)
            self.phase_changed.emit()  # the loading text says it

    def _on_read_done(self, task: asyncio.Task[None]) -> None:
        self.side_progress = {"source": "", "target": ""}
        if task is self._read_task:
            self._reading = False  # also when cancelled before it began
        if task.cancelled():
            self._say_stopped()

    def _say_stopped(self) -> None:
        if self._stopping and not self.closed:
            self._stopping = False
            self.set_error(f"{STOPPED}: nothing is compared. Retry reads both sides again.")

    def cancel(self) -> None:
        """Stop the read under way, or the promote or undo between two of its requests (the
        window's Stop)."""
        if self.reading and self._read_task is not None and not self._read_task.done():
            self._stopping = True
            self._read_task.cancel()
        elif self._sending:
            if not self._stop_requested:  # after the request under way: none is cut off
                self._stop_requested = True
                self._set_progress("Stopping after the request under way…")
        elif self._action_task is not None and not self._action_task.done():
            self._action_task.cancel()  # planning: only reads

    def _recompare(self) -> None:
        """A filter or an environment changed: compare what was read again (no request)."""
        if self.closed or len(self.read) < 2 or self.reading:
            return
        if self._compare_task is not None and not self._compare_task.done():
            self._compare_task.cancel()
        self._compare_task = self.run(self._compare(), busy=False)

    def _env_map(self) -> dict[str, str]:
        s, t = self.environments["source"], self.environments["target"]
        if not (s or t):
            return {}
        given = s or t
        return {s or given: t or given}

    async def _compare(self) -> None:
        theirs, ours = self.read["source"][1], self.read["target"][1]
        env_map = self._env_map()
        for which, snapshot, names in (("source", theirs, env_map.keys()),
                                       ("target", ours, env_map.values())):  # fmt: skip
            known = [e.name for e in snapshot.environments]
            for name in names:
                if name not in known:
                    self.comparison = None
                    self.tree.clear()
                    self.set_error(f"The {which} has no environment {name!r} (it has "
                                   f"{', '.join(known) or 'none'}): choose another.")  # fmt: skip
                    self.result_changed.emit()
                    self.phase_changed.emit()
                    return
        f = self.filters
        kinds = None if f.kinds is None else sorted(f.kinds)
        labels = {w: self._side_text(w) for w in SIDES}

        def work() -> tuple[Comparison, list[_Node]]:
            found = compare(theirs, ours, kinds=kinds,
                            projects=[f.project] if f.project else None,
                            tags=[f.tag] if f.tag else None,
                            names=[f.name] if f.name else None, map_env=env_map)  # fmt: skip
            found = replace(found, source=labels["source"], target=labels["target"])
            return found, build_nodes(found)

        comparison, nodes = await asyncio.to_thread(work)
        self.set_error("")
        self.comparison = comparison
        self.tree.set_nodes(nodes)
        if not self.closed:
            self.result_changed.emit()
            self.phase_changed.emit()

    def _side_words(self, which: Which) -> str:
        """A side as read, in words: `staging of this connection`, `saved connection eu`."""
        side, env = self.read[which][0], self.environments[which]
        named = "this connection" if side.kind == "connection" else self.side_label(side)
        return f"{env} of {named}" if env else named

    def _side_text(self, which: Which) -> str:
        side = self.read[which][0]
        env = self.environments[which]
        return self.side_label(side) + (f":{env}" if env else "")

    def reset(self) -> None:
        """A new connection: what was read from the old one goes (files and saved
        connections stay, compared again on Compare)."""
        self._read_task = None
        self._reading = False
        if any(side.kind == "connection" for side, _ in self.read.values()):
            self.read = {}
            self.comparison = None
            self.tree.clear()
            self.result_changed.emit()

    def on_connection_changed(self) -> None:
        self.reset()
        if self.sides["source"] is None and self.available:
            self.sides["source"] = Side("connection")
        self.choices_changed.emit()

    # ------------------------------------------------------------------ promoting

    @property
    def promote_reason(self) -> str:
        """Why Promote… cannot be used now, and what would help ("" when it can)."""
        from app.registry import PROMOTE

        if self.reading or self.acting:
            return "Wait for the read or the promote under way."
        c = self.comparison
        if c is None or len(self.read) < 2:
            return "Compare first: a promote is planned from a comparison."
        if self.read["target"][0].kind != "connection":
            return ("A promote writes to this connection: make it the target (Swap, or "
                    "choose “this connection” as the target).")  # fmt: skip
        reason = self.action_reason(PROMOTE)
        if reason:
            return reason
        if c.same:
            return "Nothing to promote: the sides do not differ."
        return ""

    def plan_promote(self, indexes: Sequence[Index] = ()) -> asyncio.Task[None] | None:
        """Plan the promote of what the comparison shows (or of the objects under `indexes`)
        to this connection: the target is read again first (the plan is made from what it
        holds now, as `flagdesk promote` does, and the tree shows it), then `promote_planned`
        gives the `Proposal` to confirm; the outcome says why when there is none."""
        if self.promote_reason:
            return None
        chosen = self.tree.differences(indexes) if indexes else []
        self.clear_outcome()
        return self._act(self._plan_promote(chosen))

    async def _plan_promote(self, chosen: list[Difference]) -> None:
        from app.api.errors import ClientError

        try:
            proposal = await self._proposal(chosen)
        except ClientError as exc:
            self._set_outcome_error(f"Nothing was promoted: the target could not be read: {exc}")
        else:
            if proposal is not None and not self.closed:
                self.promote_planned.emit(proposal)
        finally:
            self._end_planning()

    async def _proposal(self, chosen: list[Difference]) -> Proposal | None:
        from app.actions.promote import (
            ImportRefused,
            Selection,
            batching_for,
            plan_promote,
            segment_ids_of,
            validated,
        )
        from app.actions.runner import journal_of
        from app.snapshot.read import read_snapshot

        source_side, theirs = self.read["source"]
        target_side = self.read["target"][0]
        self._set_progress("Planning the promote: reading the target again…")
        client = await self.session.client()
        caps = await client.capabilities()
        ours, segment_ids, batching = await asyncio.gather(
            read_snapshot(client), segment_ids_of(client), batching_for(client)
        )
        self.read = {"source": (source_side, theirs), "target": (target_side, ours)}
        await self._compare()  # the tree shows the target as the plan is made from it
        comparison = self.comparison
        if comparison is None:
            return None  # an environment the target no longer has: the error says so
        f, env_map = self.filters, self._env_map()
        if chosen:  # the objects selected, as they are compared now
            comparison = await asyncio.to_thread(
                compare, theirs, ours, kinds=sorted({d.kind for d in chosen}),
                names=sorted({exactly(d.object) for d in chosen}), map_env=env_map,
                projects=[f.project] if f.project else None, tags=[f.tag] if f.tag else None,
            )  # fmt: skip
        plan = await asyncio.to_thread(
            plan_promote, theirs, ours, comparison, Selection(), map_env=env_map,
            segment_ids=segment_ids, batching=batching,
        )  # fmt: skip
        try:
            plan = await validated(client, plan)  # the target's validation of its imports
        except ImportRefused as exc:
            self._set_outcome_error(f"Nothing was promoted: {exc}.")
            return None
        if plan.nothing_to_do:
            why = "; ".join(x.line for x in plan.left_out[:3])
            self._set_outcome_error(
                "Nothing to promote: nothing of what is shown can be sent"
                + (f" ({why}{'; …' if len(plan.left_out) > 3 else ''})." if why else ".")
            )
            return None
        return Proposal(plan, self._side_words("source"), ours, segment_ids,
                        journal_of(self.session.name, caps), caps.base_url, self.session.name,
                        self.environments["target"])  # fmt: skip

    def promote(self, proposal: Proposal) -> asyncio.Task[None] | None:
        """Carry out a confirmed promote through the runner (both stages, journaled request by
        request, a snapshot of the target first), with progress; Stop ends it between two
        requests. Both sides are compared again after."""
        if not self._may_start(proposal.server, "promoted"):
            return None
        return self._act(self._promote(proposal))

    async def _promote(self, proposal: Proposal) -> None:
        from app.actions.promote import StageTwoRefused, apply_promote
        from app.actions.runner import PartlyDone, Stopped
        from app.api.errors import ClientError
        from app.registry import PROMOTE

        plan, journal = proposal.plan, proposal.journal
        entries: list[str] = []
        sent = False

        def announce(changes: Any) -> None:
            nonlocal sent
            sent = True
            self.notify(changes)

        def step(stage: int, done: int, total: int) -> None:
            self.action_steps = (done, total)
            self._set_progress(f"Promoting, stage {stage} of {plan.stages}: {done:,} of "
                               f"{plural(total, 'request')}…")  # fmt: skip

        promoted = Promoted(proposal.server, proposal.connection, plan.promote,
                            f"the promote of {proposal.source}")  # fmt: skip
        requests = plural(plan.count, "request")
        try:
            self._start_sending()
            step(1 if plan.first else 2, 0, len(plan.first or plan.second))
            client = await self.session.client()
            await apply_promote(client, plan, journal, journal.new_file(PROMOTE.key, ".json"),
                                proposal.target, proposal.segment_ids, entries,
                                announce=announce, on_step=step,
                                stop=lambda: self._stop_requested)  # fmt: skip
        except Stopped as stopped:
            self.promoted = promoted if sent else None
            back = " Undo promote takes it back." if sent else ""
            self._set_outcome_error(f"Promote stopped: {stopped}; what went through is "
                                    f"journaled.{back}")  # fmt: skip
        except (StageTwoRefused, PartlyDone, ClientError) as exc:
            self.promoted = promoted if sent else None
            back = " Undo promote takes back what went through." if sent else ""
            self._set_outcome_error(f"The promote did not finish: {exc}.{back}")
            self.report_error(self.outcome_error)
        else:
            self.promoted = promoted
            self._set_outcome(
                f"Promoted {proposal.source} to {proposal.destination}: {requests}, journaled "
                f"(entries {entries[0]} to {entries[-1]}). Undo promote takes it back."
            )
        finally:
            self._end_action(sent)

    def _end_planning(self) -> None:
        """A promote's or undo's planning ended (a plan given to confirm, or why not said)."""
        self._set_progress("")
        self._action_task = None
        if not self.closed:
            self.actions_changed.emit()

    def _start_sending(self) -> None:
        self._sending, self._stop_requested = True, False

    def _end_action(self, sent: bool) -> None:
        self._sending = self._stop_requested = False
        self.action_steps = (0, 0)
        self._set_progress("")
        self._finish()
        if sent and not self.closed:
            self.load()  # compare again: what is left to promote, if anything

    @property
    def undo_reason(self) -> str:
        """Why Undo promote cannot be used now ("" when it can)."""
        from app.registry import PROMOTE

        done = self.promoted
        if done is None:
            return "No promote was done from this window."
        if (done.connection, done.server) != (self.session.name, self.session.url):
            return f"The last promote was done on {done.server}: connect to it to undo it."
        if self.reading or self.acting:
            return "Wait for the read or the promote under way."
        return self.action_reason(PROMOTE)

    def plan_undo(self) -> asyncio.Task[None] | None:
        """Plan the undo of the last promote (from its snapshot, against the server now):
        `undo_planned` gives the plan to confirm, or the outcome says why there is none."""
        done = self.promoted
        if done is None or self.undo_reason:
            return None
        self.clear_outcome()
        return self._act(self._plan_undo(done))

    async def _plan_undo(self, done: Promoted) -> None:
        from app.actions.promote import touched_by
        from app.actions.runner import journal_of
        from app.actions.undo import CannotUndo, plan_undo
        from app.api.errors import ClientError

        try:
            self._set_progress(f"Planning the undo of {done.said}: reading the target…")
            client = await self.session.client()
            journal = journal_of(self.session.name, await client.capabilities())
            entries = touched_by(await asyncio.to_thread(journal.entries), done.promote)
            if not entries:
                raise CannotUndo("the journal holds none of its requests")
            plan = await plan_undo(client, journal, entries[0])
        except (ClientError, CannotUndo) as exc:
            self._set_outcome_error(f"Not undone: {exc}")
        else:
            self.undo_planned.emit(plan)
        finally:
            self._end_planning()

    def undo(self, plan: Any) -> asyncio.Task[None] | None:
        """Carry out a confirmed undo of the last promote through the runner, with progress;
        both sides are compared again after."""
        if not self._may_start(plan.server, "undone"):
            return None
        return self._act(self._undo(plan))

    async def _undo(self, plan: Any) -> None:
        from app.actions.runner import Stopped
        from app.api.errors import ClientError

        done = self.promoted
        said = done.said if done is not None else "the promote"
        sent = False

        def sent_one() -> None:
            nonlocal sent
            sent = True

        def step(count: int, total: int) -> None:
            self.action_steps = (count, total)
            self._set_progress(f"Undoing {said}: {count:,} of {plural(total, 'request')}…")

        try:
            self._start_sending()
            step(0, len(plan.planned))
            result = await self.run_plan(plan, after_sent=sent_one, on_step=step,
                                         stop=lambda: self._stop_requested)  # fmt: skip
        except Stopped as stopped:
            self._set_outcome_error(f"Undo stopped: {stopped}; what went through is journaled.")
        except ClientError as exc:
            self._set_outcome_error(f"Not undone: {exc}")
            self.report_error(self.outcome_error)
        else:
            self.promoted = None
            self._set_outcome(f"Undone: {said}, {plural(len(result.entries), 'request')} "
                              f"(journaled, entries {result.entries[0]} to "
                              f"{result.entries[-1]}).")  # fmt: skip
        finally:
            self._end_action(sent)

    def _act(self, job: Coroutine[Any, Any, None]) -> asyncio.Task[None | None]:
        """`job` as the action under way (one at a time): the buttons are told."""
        task = self._action_task = self.run(job, busy=False)
        self.actions_changed.emit()
        return task

    def _set_progress(self, text: str) -> None:
        self.action_progress = text
        self.set_status(text)
        if not self.closed:
            self.action_progress_changed.emit()

    # ------------------------------------------------------------------ what it gives

    def details(self, index: Index) -> Details | None:
        """The difference at `index` in full (None for a kind's or object's row)."""
        node = self.tree.node(index)
        d = None if node is None else node.difference
        if d is None:
            return None
        return Details(f"{d.key}: {MARKS[d.change]}", pretty(d.old, d.change is
                       Change.ONLY_IN_SOURCE), pretty(d.new, d.change is
                       Change.ONLY_IN_TARGET))  # fmt: skip

    def copy_text(self, indexes: Sequence[Index] = ()) -> str:
        """The differences under `indexes` as text lines; all of them (as the terminal shows
        them) when none is given."""
        if self.comparison is None:
            return ""
        if not indexes:
            return "\n".join(self.comparison.text_lines()) + "\n"
        return "".join(difference_line(d) + "\n" for d in self.tree.differences(indexes))

    def export(self, path: str, kind: Literal["json", "markdown"]) -> asyncio.Task[None] | None:
        """Write the comparison shown to `path` as JSON or Markdown (0600, whole or nothing),
        off the GUI thread; where it went, or why not, in the status bar."""
        comparison = self.comparison
        if comparison is None or self.closed:
            return None

        async def write() -> None:
            def text() -> str:
                if kind == "json":
                    return json.dumps(comparison.to_json(), indent=2, ensure_ascii=False) + "\n"
                return comparison.to_markdown()

            try:
                await asyncio.to_thread(lambda: write_private(Path(path), text()))
            except SnapshotFileError as exc:
                self.report_error(f"The comparison was not exported: {exc}")
                return
            self.exported.emit(f"Comparison written to {path}")

        return self.run(write(), busy=False)

    def close(self) -> None:
        self.read = {}
        self.comparison = None
        super().close()


# ------------------------------------------------------------------------------ save snapshot


class SnapshotSaver(SessionViewModel):
    """File > Save snapshot…: the connected server read into a snapshot (off the GUI thread,
    with progress in `status`) and written to a file (0600, whole or nothing)."""

    #: written: the sentence for the status bar
    saved = Signal(str)

    def default_name(self) -> str:
        return default_name(self.session.name, datetime.now(UTC))

    @property
    def saving(self) -> bool:
        return self.busy

    def save(self, path: str) -> asyncio.Task[None] | None:
        if self.closed or self.busy:
            return None
        return self.run(self._save(Path(path)))

    async def _save(self, path: Path) -> None:
        from app.snapshot.read import read_snapshot

        caps = self.session.capabilities
        if not self.session.ready or caps is None:
            self.set_error(f"No snapshot was saved: not connected ({self.session.message}).")
            return
        availability = caps.operation("compare")
        if not availability.available:
            self.set_error(f"No snapshot was saved: {availability.reason}")
            return
        client = await self.session.client()
        done: list[str] = []

        def said(name: str) -> None:
            done.append(name)
            self.set_status(f"Reading {self.session.name} for its snapshot: read "
                            f"{', '.join(done)}…")  # fmt: skip

        self.set_status(f"Reading {self.session.name} for its snapshot…")
        snapshot = await read_snapshot(client, progress=said)
        try:
            await asyncio.to_thread(save, snapshot, path)
        except SnapshotFileError as exc:
            self.set_error(f"No snapshot was saved: {exc}")
            return
        unread = f" (not read: {', '.join(snapshot.unread)})" if snapshot.unread else ""
        self.saved.emit(f"Snapshot of {self.session.name} written to {path}{unread}")
