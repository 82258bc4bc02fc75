"""The Compare window (`CompareView` over `CompareModel`, issue 37 slice 5): two snapshot files
compared with no connection at all (the tree's kinds and counts are `compare()`'s), two
environments of one file, the filters compared again with no read, a side that cannot be read
(which, and why), Copy and Export; against sandboxes over HTTP: the connection against a file
saved from it (File > Save snapshot…) before a change made over HTTP, a saved connection's
server as a side, the played open-source release whose groups are not compared and said so,
and Stop."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import qasync
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMenu

from app.profiles import Profile, ProfileStore
from app.snapshot.compare import STEP, Change, compare
from app.snapshot.files import load
from app.viewmodels.avatars import AvatarCache
from app.viewmodels.compare import (
    CHANGE_ROLE,
    COUNT_ROLE,
    KIND_ROLE,
    OBJECT_ROLE,
    STOPPED,
    Filters,
    Side,
)
from app.viewmodels.session import Session
from app.viewmodels.tools import LoadPhase
from sandbox.process import SandboxProcess
from tests.app.snapshot_examples import environment, flag, shop, snapshot
from ui.compare import CompareView
from ui.states import StatePanel


@pytest.fixture
def unconnected(
    qtbot: Any, qloop: qasync.QEventLoop, arun: Callable[..., Any], tmp_path: Path
) -> Iterator[Session]:
    """A session that has opened nothing (no server at all)."""
    session = Session(ProfileStore(tmp_path / "config-none"))
    session.avatars = AvatarCache(transport=httpx.MockTransport(lambda _: httpx.Response(404)))
    yield session
    arun(session.aclose())


def write(path: Path, document: dict[str, Any]) -> str:
    path.write_text(json.dumps(document), encoding="utf-8")
    return str(path)


def changed_shop() -> dict[str, Any]:
    """The shop with a rollout changed, a flag only here and a segment gone."""
    document = shop()
    staging = environment(flag(document, "checkout-v2"), "staging")
    staging["strategies"][0]["parameters"]["rollout"] = "50"
    document["flags"].append({"name": "night-mode", "project": "default", "type": "release",
                              "tags": [{"type": "simple", "value": "ui"}]})  # fmt: skip
    document["segments"] = document["segments"][1:]
    return document


def open_view(qtbot: Any, session: Session) -> CompareView:
    view = CompareView(session)
    qtbot.addWidget(view)
    view.resize(1100, 700)
    view.show()
    return view


def compared(qtbot: Any, view: CompareView, source: Side, target: Side) -> None:
    """Both sides picked and compared, to the result shown."""
    view.pick_side("source", source)
    view.pick_side("target", target)
    assert view.compare_button.isEnabled()
    view.compare_button.click()
    m = view.model
    qtbot.waitUntil(lambda: not m.busy and not m.tasks and m.phase is not LoadPhase.LOADING,
                    timeout=60_000)  # fmt: skip


def settled(qtbot: Any, view: CompareView) -> None:
    qtbot.waitUntil(lambda: not view.model.tasks, timeout=20_000)


def tree_counts(view: CompareView) -> dict[str, dict[str, int]]:
    """{kind: {object row's text: its count}} as the tree shows them, with each kind's total
    under ""."""
    tree = view.model.tree
    found: dict[str, dict[str, int]] = {}
    for row in range(tree.rowCount()):
        kind = tree.index(row, 0)
        objects = {"": kind.data(COUNT_ROLE)}
        for child in range(tree.rowCount(kind)):
            obj = tree.index(child, 0, kind)
            objects[str(obj.data(OBJECT_ROLE))] = obj.data(COUNT_ROLE)
            assert str(obj.data()).startswith(f"{obj.data(OBJECT_ROLE)}: ")
            assert tree.rowCount(obj) == obj.data(COUNT_ROLE)
        found[str(kind.data(KIND_ROLE))] = objects
    return found


def expected_counts(comparison: Any) -> dict[str, dict[str, int]]:
    return {kind: {"": sum(len(ds) for ds in objects.values()),
                   **{name: len(ds) for name, ds in objects.items()}}
            for kind, objects in comparison.tree.items()}  # fmt: skip


def leaf(view: CompareView, kind: str, obj: str, where: str) -> QModelIndex:
    tree = view.model.tree
    for row in range(tree.rowCount()):
        k = tree.index(row, 0)
        if k.data(KIND_ROLE) != kind:
            continue
        for child in range(tree.rowCount(k)):
            o = tree.index(child, 0, k)
            if o.data(OBJECT_ROLE) != obj:
                continue
            for n in range(tree.rowCount(o)):
                d = tree.index(n, 0, o)
                if d.data() == where:
                    return d
    raise AssertionError(f"no {kind} {obj} {where} in the tree")


# ---------------------------------------------------------------------------- files, offline


def test_two_files_compare_with_no_server_as_compare_does(
    qtbot: Any, unconnected: Session, tmp_path: Path
) -> None:
    old = write(tmp_path / "old.json", shop())
    new = write(tmp_path / "new.json", changed_shop())
    view = open_view(qtbot, unconnected)
    m = view.model
    # no connection: nothing waits for one, the window asks for two sides
    assert m.phase is LoadPhase.EMPTY
    assert view.states.state == StatePanel.EMPTY
    assert view.states.empty_title.text() == "Nothing compared yet"
    assert not view.compare_button.isEnabled()
    assert view.side_combos["source"].itemText(0) == "Choose…"
    assert "this connection" in view.side_combos["source"].itemText(1)

    compared(qtbot, view, Side("file", new), Side("file", old))
    assert m.phase is LoadPhase.READY and view.states.state == StatePanel.CONTENT
    assert view.side_combos["source"].currentText() == "file new.json"
    assert view.side_combos["target"].currentText() == "file old.json"
    expected = compare(snapshot(changed_shop()), snapshot(shop()))
    assert not expected.same
    assert m.comparison is not None
    assert m.comparison.differences == expected.differences
    assert tree_counts(view) == expected_counts(expected)
    assert set(tree_counts(view)) == {"flags", "segments"}
    # a few differences: all open; the kinds' and objects' lines span the columns, the fields'
    # do not
    tree, root = view.model.tree, QModelIndex()
    for k in range(tree.rowCount()):
        kind = tree.index(k, 0)
        assert view.tree.isFirstColumnSpanned(k, root) and view.tree.isExpanded(kind)
        for o in range(tree.rowCount(kind)):
            thing = tree.index(o, 0, kind)
            assert view.tree.isFirstColumnSpanned(o, kind) and view.tree.isExpanded(thing)
            assert not view.tree.isFirstColumnSpanned(0, thing)
    assert "new.json (source) against old.json (target)" in view.summary_label.text()
    assert not view.not_compared_label.isVisible()

    # only in source: said in words (and coloured), the whole flag's JSON in the details
    whole = leaf(view, "flags", "default/night-mode", "(the whole object)")
    assert whole.data(CHANGE_ROLE) == Change.ONLY_IN_SOURCE
    assert whole.siblingAtColumn(1).data() == "+ only in source"
    assert whole.siblingAtColumn(2).data() == ""
    view.tree.setCurrentIndex(whole)
    assert view.details_heading.text().startswith("flag default/night-mode: + only in source")
    source_value = json.loads(view.value_edits["source"].toPlainText())
    assert source_value["type"] == "release"
    assert "nothing" in view.value_edits["target"].toPlainText()
    gone = leaf(view, "segments", "beta-users", "(the whole object)")
    assert gone.siblingAtColumn(1).data() == "- only in target"
    where = STEP.join(("staging", "strategy flexibleRollout #1", "parameters.rollout"))
    rollout = leaf(view, "flags", "web-shop/checkout-v2", where)
    assert (rollout.siblingAtColumn(2).data(), rollout.siblingAtColumn(3).data()) == ("100", "50")
    assert rollout.siblingAtColumn(3).data(Qt.ItemDataRole.ToolTipRole) == '"50"'

    # Copy: the selected difference as a line; with none selected, all of them as text
    view.tree.selectionModel().clearSelection()
    view.copy_button.click()
    assert QGuiApplication.clipboard().text().splitlines() == m.comparison.text_lines()
    assert m.comparison.text_lines()[0].startswith("new.json (source) against old.json")
    view.tree.selectionModel().select(
        rollout, view.tree.selectionModel().SelectionFlag.ClearAndSelect
        | view.tree.selectionModel().SelectionFlag.Rows,
    )  # fmt: skip
    QGuiApplication.clipboard().clear()
    view.tree.setFocus()
    qtbot.keyClick(view.tree, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)  # as Copy
    assert QGuiApplication.clipboard().text() == (
        STEP.join(
            (
                "flag web-shop/checkout-v2",
                "staging",
                "strategy flexibleRollout #1",
                "parameters.rollout",
            )
        )
        + ": changed: 100 → 50\n"
    )

    # Export: JSON and Markdown, private, whole
    view.export(str(tmp_path / "out.json"))
    view.export(str(tmp_path / "out.md"))
    settled(qtbot, view)
    written = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert written == json.loads(json.dumps(m.comparison.to_json()))
    assert written["source"] == "new.json" and written["total"] == len(expected.differences)
    assert (tmp_path / "out.md").read_text(encoding="utf-8") == m.comparison.to_markdown()
    for name in ("out.json", "out.md"):
        assert os.stat(tmp_path / name).st_mode & 0o777 == 0o600

    # Swap: compared the other way with no read; a file is the same against itself
    before = m.read
    view.swap_button.click()
    settled(qtbot, view)
    assert m.comparison is not None
    assert m.comparison.source == "old.json"
    assert tree_counts(view) == expected_counts(compare(snapshot(shop()),
                                                        snapshot(changed_shop())))  # fmt: skip
    assert m.read["source"] is before["target"]
    compared(qtbot, view, Side("file", old), Side("file", old))
    assert m.phase is LoadPhase.EMPTY and view.states.empty_title.text() == "Same"
    assert "old.json and old.json do not differ in projects, environments, flags" in (
        view.states.empty_label.text())  # fmt: skip


def test_two_environments_of_one_file_and_the_filters(
    qtbot: Any, unconnected: Session, tmp_path: Path
) -> None:
    path = write(tmp_path / "shop.json", shop())
    view = open_view(qtbot, unconnected)
    m = view.model
    compared(qtbot, view, Side("file", path), Side("file", path))
    assert view.states.empty_title.text() == "Same"
    envs = view.env_combos["source"]
    assert [envs.itemText(i) for i in range(envs.count())] == [
        "All environments", "development", "staging", "production"]  # fmt: skip

    # production (source) against staging (target): no new read
    read = dict(m.read)
    envs.setCurrentIndex(envs.findData("production"))
    envs.activated.emit(envs.currentIndex())
    view.env_combos["target"].setCurrentIndex(view.env_combos["target"].findData("staging"))
    view.env_combos["target"].activated.emit(view.env_combos["target"].currentIndex())
    settled(qtbot, view)
    expected = compare(snapshot(), snapshot(), map_env={"production": "staging"})
    assert m.comparison is not None and m.comparison.differences == expected.differences
    assert m.read == read  # the snapshots already read
    assert m.phase is LoadPhase.READY
    assert tree_counts(view) == expected_counts(expected)
    assert "shop.json:production (source) against shop.json:staging" in view.summary_label.text()
    # named as the target names it: production's value on the right (the source's)
    enabled = leaf(view, "flags", "web-shop/checkout-v2", STEP.join(("staging", "enabled")))
    assert (enabled.siblingAtColumn(2).data(), enabled.siblingAtColumn(3).data()) == (
        "true", "false")  # fmt: skip

    # the filters: compared again over what was read
    view.set_filters(Filters(kinds=frozenset({"segments"})))
    settled(qtbot, view)
    assert m.comparison is not None and m.comparison.kinds == ("segments",)
    assert view.kinds_button.text() == "1 of 12 kinds"
    assert m.phase is LoadPhase.EMPTY  # segments have no environments
    view.set_filters(Filters(name="nothing-*"))
    settled(qtbot, view)
    assert view.states.empty_title.text() == "Same"
    assert "(only names matching nothing-*)" in view.states.empty_label.text()
    view.set_filters(Filters(project="web-shop", tag="simple:beta", name="web-shop/checkout*"))
    settled(qtbot, view)
    expected = compare(snapshot(), snapshot(), map_env={"production": "staging"},
                       projects=["web-shop"], tags=["simple:beta"],
                       names=["web-shop/checkout*"])  # fmt: skip
    assert m.comparison.differences == expected.differences and not expected.same
    assert view.project_combo.currentData() == "web-shop"
    assert view.tag_combo.currentData() == "simple:beta"
    # typing a name filters too (after a short pause); Ctrl+F goes there
    assert view.focus_filter() and view.name_edit.hasFocus()
    view.name_edit.setText("nothing-*")
    qtbot.waitUntil(lambda: m.filters.name == "nothing-*", timeout=5_000)
    settled(qtbot, view)
    assert m.phase is LoadPhase.EMPTY
    assert m.read == read


def test_a_side_that_cannot_be_read_says_which_and_why_and_retry_reads_again(
    qtbot: Any, unconnected: Session, tmp_path: Path
) -> None:
    good = write(tmp_path / "good.json", shop())
    bad = tmp_path / "notes.json"
    bad.write_text('{"hello": "world"}', encoding="utf-8")
    view = open_view(qtbot, unconnected)
    m = view.model
    compared(qtbot, view, Side("file", good), Side("file", str(bad)))
    assert m.phase is LoadPhase.FAILED and view.states.state == StatePanel.ERROR
    assert view.states.error_title.text() == "Could not read the target"
    text = view.states.error_label.text()
    assert text.startswith("The target (notes.json) could not be read: ")
    assert str(bad) in text and "$.schemaVersion" in text and "flagdesk snapshot" in text
    assert view.states.retry_button.isVisible()

    write(bad, changed_shop())
    view.states.retry_button.click()
    qtbot.waitUntil(lambda: not m.tasks and m.phase is LoadPhase.READY, timeout=20_000)
    assert not m.error

    # this connection with no connection: refused, saying why
    compared(qtbot, view, Side("connection"), Side("file", good))
    assert view.states.error_title.text() == "Could not read the source"
    assert view.states.error_label.text().startswith(
        "The source (this connection (")  # fmt: skip
    assert "Not connected" in view.states.error_label.text()


# ---------------------------------------------------------------------------- servers


def test_the_connection_against_a_snapshot_saved_before_a_change(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, tmp_path: Path
) -> None:
    """File > Save snapshot… writes the server's snapshot (0600, loadable); a segment added and
    a context field changed over HTTP afterwards are what the comparison of the connection
    against that file shows."""
    from ui.main_window import MainWindow

    session = connect(sandbox)
    window = MainWindow(session)
    qtbot.addWidget(window)
    window.show()
    assert window.save_snapshot_action.isEnabled()
    file_menu = window.findChild(QMenu, "fileMenu")
    assert file_menu is not None and window.save_snapshot_action in file_menu.actions()
    saved = tmp_path / "before.json"
    name = window.snapshot_saver.default_name()
    assert name.startswith("flagdesk-snapshot-test-sandbox-") and name.endswith(".json")
    with qtbot.waitSignal(window.snapshot_saver.saved, timeout=30_000):
        window.save_snapshot(str(saved))
    assert f"written to {saved}" in window.statusBar().currentMessage()
    assert os.stat(saved).st_mode & 0o777 == 0o600
    before = load(saved)
    assert before.segments

    with sandbox.admin() as http:
        made = http.post("/api/admin/segments", json={
            "name": "compare-new", "constraints": [
                {"contextName": "region", "operator": "IN", "values": ["eu"]}]})  # fmt: skip
        assert made.status_code in (200, 201), made.text

    view = open_view(qtbot, session)
    m = view.model
    assert m.sides["source"] == Side("connection")
    compared(qtbot, view, Side("connection"), Side("file", str(saved)))
    assert m.phase is LoadPhase.READY, m.error
    new = leaf(view, "segments", "compare-new", "(the whole object)")
    assert new.siblingAtColumn(1).data() == "+ only in source"
    assert m.comparison is not None
    assert {(d.kind, d.object) for d in m.comparison.differences} == {
        ("segments", "compare-new")}  # fmt: skip
    window.close()


def test_a_saved_connection_as_a_side_and_the_open_source_release_groups_not_compared(
    qtbot: Any, connect: Callable[..., Session], demo_sandbox: SandboxProcess, tmp_path: Path
) -> None:
    """The played open-source release (no groups nor project access) is this
    connection; the demo sandbox a saved connection: those kinds are not compared, and said."""
    with SandboxProcess(tmp_path / "oss.sqlite3", "--demo", "--as-version", "8.2") as oss:
        session = connect(oss, label="oss")
        session.store.save(Profile(name="demo", url=demo_sandbox.url, token_store="file"),
                           token=demo_sandbox.admin_token)  # fmt: skip
        view = open_view(qtbot, session)
        m = view.model
        labels = [view.side_combos["target"].itemText(i)
                  for i in range(view.side_combos["target"].count())]  # fmt: skip
        assert "saved connection demo" in labels
        compared(qtbot, view, Side("connection"), Side("profile", "demo"))
        assert m.comparison is not None, m.error
        not_compared = dict(m.comparison.not_compared)
        assert {"groups", "project-access"} <= set(not_compared)
        assert "the source did not read them" in not_compared["groups"]
        assert view.not_compared_label.isVisible()
        said = view.not_compared_label.text()
        assert said.startswith("Not compared: ") and "Groups (the source did not read them" in said
        assert "groups" not in m.comparison.kinds
        assert "saved connection demo (target)" in m.summary
        # Stop: nothing compared, said, Retry reads again
        view.compare_button.click()
        assert view.progress_row.isVisible()
        view.stop_button.click()
        qtbot.waitUntil(lambda: not m.tasks and m.phase is LoadPhase.FAILED, timeout=20_000)
        assert view.states.error_title.text() == "Comparing stopped"
        assert view.states.error_label.text().startswith(STOPPED)
        assert not view.progress_row.isVisible()
        view.states.retry_button.click()
        qtbot.waitUntil(lambda: not m.tasks and m.comparison is not None and not m.error,
                        timeout=60_000)  # fmt: skip


def test_a_profile_without_its_token_says_so(
    qtbot: Any, unconnected: Session, tmp_path: Path
) -> None:
    unconnected.store.save(Profile(name="gone", url="http://127.0.0.1:9", token_store="file"))
    good = write(tmp_path / "good.json", shop())
    view = open_view(qtbot, unconnected)
    compared(qtbot, view, Side("profile", "gone"), Side("file", good))
    assert view.states.error_title.text() == "Could not read the source"
    assert view.states.error_label.text().startswith(
        "The source (saved connection gone) could not be read: ")  # fmt: skip


def test_ten_thousand_flags_that_all_differ_keep_the_window_answering(
    qtbot: Any, unconnected: Session, tmp_path: Path
) -> None:
    """10,000 flags, each with its rollout changed in three environments (30,000 differences):
    comparing and building the tree run off the GUI thread, which never stops for long while a
    filter compares everything again and the tree shows it (a timer's ticks are measured
    meanwhile). Loading the files is not measured: `json.loads` and pydantic's validation hold
    the interpreter's lock for a second or two on files this size, on any thread."""
    import time
    from itertools import pairwise

    from PySide6.QtCore import QTimer

    from app.snapshot.files import dump
    from tests.app.test_compare import big

    source = write(tmp_path / "a.json", dump(big(lambda n: "50")))
    target = write(tmp_path / "b.json", dump(big(lambda n: "60")))
    view = open_view(qtbot, unconnected)
    view.set_filters(Filters(name="flag-0000*"))
    compared(qtbot, view, Side("file", source), Side("file", target))
    m = view.model
    assert m.comparison is not None and len(m.comparison.differences) == 30

    ticks: list[float] = []
    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    timer.start()
    qtbot.wait(30)
    started = time.perf_counter()
    view.set_filters(Filters())
    qtbot.waitUntil(lambda: m.comparison is not None and len(m.comparison.differences) == 30_000,
                    timeout=60_000)  # fmt: skip
    took = time.perf_counter() - started
    qtbot.wait(50)
    timer.stop()
    longest = max(b - a for a, b in pairwise(ticks))
    print(f"\n30,000 differences compared and shown in {took:.2f} s; the GUI thread's "
          f"longest pause {longest:.3f} s")  # fmt: skip
    assert view.model.tree.rowCount() == 1  # flags
    assert longest < 0.5
    # past 300 differences the kinds open, not the objects; every object's line spans the
    # columns all the same (spanned as its kind opens)
    tree, root = view.model.tree, QModelIndex()
    flags = tree.index(0, 0)
    assert view.tree.isExpanded(flags) and view.tree.isFirstColumnSpanned(0, root)
    assert tree.rowCount(flags) == 10_000
    assert not view.tree.isExpanded(tree.index(0, 0, flags))
    assert all(view.tree.isFirstColumnSpanned(row, flags) for row in (0, 5_000, 9_999))


# ------------------------------------------------------------------------------ promote


def test_promote_staging_to_production_in_the_window_and_its_undo(
    qtbot: Any, connect: Callable[..., Session], arun: Callable[..., Any], sandbox: SandboxProcess
) -> None:
    """This connection's staging promoted to its production (environment to environment):
    the plan is shown in full before anything is sent and Cancel sends nothing; confirmed, it
    goes through the runner (journaled), both sides are compared again and no difference is
    left; Undo promote, confirmed, puts production back as it was (read back over HTTP)."""
    from app.snapshot.read import read_snapshot

    session = connect(sandbox)

    async def production() -> Any:
        client = await session.client()
        return await read_snapshot(client)

    before = arun(production(), timeout=30_000)
    view = open_view(qtbot, session)
    m = view.model
    assert not view.promote_button.isEnabled()
    assert view.promote_button.toolTip().startswith("Compare first")
    assert not view.undo_button.isEnabled()
    compared(qtbot, view, Side("connection"), Side("connection"))
    m.set_environment("source", "staging")
    m.set_environment("target", "production")
    settled(qtbot, view)
    assert m.comparison is not None and not m.comparison.same, m.error
    shown = len(m.comparison.differences)
    assert view.promote_button.isEnabled(), view.promote_button.toolTip()

    # planned: the plan in full, Cancel (the default) sends nothing
    view.promote_button.click()
    qtbot.waitUntil(lambda: view.confirmation() is not None, timeout=30_000)
    box = view.confirmation()
    assert box is not None
    question = box.question.text()
    assert question.startswith(f"Promote staging of this connection to production of "
                               f"{sandbox.url} (connection “test sandbox”): ")  # fmt: skip
    assert question.endswith(" requests in 1 stage?") or question.endswith(" stages?")
    plan_text = box.details.toPlainText()
    assert "Stage " in plan_text and "/environments/production/" in plan_text
    assert box.cancel_button.isDefault()
    box.cancel_button.click()
    qtbot.waitUntil(lambda: view.confirmation() is None)
    assert m.promoted is None and not m.acting
    assert arun(production(), timeout=30_000).flags == before.flags

    # confirmed: promoted, compared again, nothing left
    view.promote_button.click()
    qtbot.waitUntil(lambda: view.confirmation() is not None, timeout=30_000)
    box = view.confirmation()
    assert box is not None
    requests = box.plan.plan.count
    box.action_button.click()
    qtbot.waitUntil(lambda: m.outcome.startswith("Promoted ") and not m.tasks and not m.reading,
                    timeout=60_000)  # fmt: skip
    assert f"{requests:,} request" in m.outcome and "journaled" in m.outcome
    assert view.outcome_label.isVisible() and view.outcome_label.text() == m.outcome
    # what is left is what the plan said it leaves out, and why
    assert m.comparison is not None
    left = {(d.kind, d.object) for d in m.comparison.differences}
    said = {(x.kind, x.object) for x in box.plan.plan.left_out}
    assert left and left <= said, (left - said, said)
    assert len(m.comparison.differences) < shown
    after = arun(production(), timeout=30_000)
    assert after.flags != before.flags
    assert view.undo_button.isEnabled(), view.undo_button.toolTip()

    # undone: production as it was
    view.undo_button.click()
    qtbot.waitUntil(lambda: view.confirmation() is not None, timeout=30_000)
    box = view.confirmation()
    assert box is not None and box.question.text().startswith("Undo the promote")
    box.action_button.click()
    qtbot.waitUntil(lambda: m.outcome.startswith("Undone: ") and not m.tasks and not m.reading,
                    timeout=60_000)  # fmt: skip
    assert m.promoted is None and not view.undo_button.isEnabled()
    again = arun(production(), timeout=30_000)
    back = compare(before, again)
    assert back.same, [d.key for d in back.differences][:5]
    assert m.comparison is not None and len(m.comparison.differences) == shown


def test_promote_needs_this_connection_as_the_target(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, tmp_path: Path
) -> None:
    """A file as the target: Promote says why it cannot (a promote writes to this
    connection); swapped, it can."""
    session = connect(sandbox)
    other = write(tmp_path / "shop.json", shop())
    view = open_view(qtbot, session)
    compared(qtbot, view, Side("connection"), Side("file", other))
    assert view.model.comparison is not None and not view.model.comparison.same
    assert not view.promote_button.isEnabled()
    assert view.promote_button.toolTip().startswith("A promote writes to this connection")
    view.swap_button.click()
    settled(qtbot, view)
    assert view.promote_button.isEnabled(), view.promote_button.toolTip()


def test_stop_ends_a_promote_between_two_requests_and_undo_takes_back_what_went_through(
    qtbot: Any, connect: Callable[..., Session], arun: Callable[..., Any], sandbox: SandboxProcess
) -> None:
    """Stop once the first request is answered: nothing more is sent (the journal holds what
    went through), the outcome says so, and Undo promote puts production back."""
    from app.actions.promote import touched_by
    from app.actions.runner import journal_of
    from app.snapshot.read import read_snapshot

    session = connect(sandbox)

    async def production() -> Any:
        return await read_snapshot(await session.client())

    before = arun(production(), timeout=30_000)
    view = open_view(qtbot, session)
    m = view.model
    compared(qtbot, view, Side("connection"), Side("connection"))
    m.set_environment("source", "staging")
    m.set_environment("target", "production")
    settled(qtbot, view)
    view.promote_button.click()
    qtbot.waitUntil(lambda: view.confirmation() is not None, timeout=30_000)
    box = view.confirmation()
    assert box is not None
    proposal = box.plan
    assert proposal.plan.count > 3

    def stop_after_one() -> None:
        if m.action_steps[0] == 1 and view.stop_button.isVisible():
            view.stop_button.click()

    m.action_progress_changed.connect(stop_after_one)
    box.action_button.click()
    qtbot.waitUntil(lambda: m.outcome_error.startswith("Promote stopped") and not m.tasks
                    and not m.reading, timeout=60_000)  # fmt: skip
    m.action_progress_changed.disconnect(stop_after_one)
    assert "Undo promote takes it back" in m.outcome_error
    caps = session.capabilities
    assert caps is not None
    entries = touched_by(journal_of(session.name, caps).entries(), proposal.plan.promote)
    assert len(entries) == 1  # the one answered before Stop; nothing after
    assert not view.progress_row.isVisible()
    assert view.undo_button.isEnabled(), view.undo_button.toolTip()
    view.undo_button.click()
    qtbot.waitUntil(lambda: view.confirmation() is not None, timeout=30_000)
    box = view.confirmation()
    assert box is not None
    box.action_button.click()
    qtbot.waitUntil(lambda: m.outcome.startswith("Undone: ") and not m.tasks and not m.reading,
                    timeout=60_000)  # fmt: skip
    back = compare(before, arun(production(), timeout=30_000))
    assert back.same, [d.key for d in back.differences][:5]


def test_a_long_progress_line_does_not_widen_the_window(qtbot: Any, unconnected: Session) -> None:
    """What both sides have read so far is one long line: it wraps, and the window's least
    width stays what it was (it widened the main window to 1,800 pixels)."""
    view = open_view(qtbot, unconnected)
    narrow = view.minimumSizeHint().width()
    view.progress_row.show()
    view.progress_label.setText("Source: read " + ", ".join(f"list {i}" for i in range(60)))
    qtbot.wait(20)  # the layout's request is an event
    assert view.minimumSizeHint().width() == narrow < 1100
