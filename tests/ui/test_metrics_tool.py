"""The metrics tool (`MetricsTool` over `MetricsToolModel`) against real sandboxes over HTTP:
the samples' formats, counts and problems (offline too), a bad file's problems with file,
line, column and JSON path, paste and drop, cancelling a read, an upload whose stored counts
equal the file's, Cancel then Resume with exact totals, Cancel or a new connection while the
batch is split (nothing sent, no ledger left), an application item too large for any body
counted as left out, a connection without a client token (asked for, then used), an upload
that cannot start (its error, then Retry), invalid items that cannot be saved (nothing sent), a
batch this server accepted before (sent again only once confirmed), and a new connection that
leaves no result of the previous server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QAbstractScrollArea,
    QApplication,
    QLabel,
    QWidget,
)

import app.metrics.batch_upload as batch_upload
from app import resources
from app.api.models import CreateFeature
from app.connection import ConnectionSpec
from app.metrics import Batch, load
from app.metrics.batch_upload import DROPPED_RISK
from app.metrics.upload import Progress
from app.profiles import Profile, ProfileStore
from app.viewmodels.metrics import (
    CONTENT,
    EMPTY,
    MetricsToolModel,
)
from app.viewmodels.metrics_inputs import SourceRow
from app.viewmodels.session import FAILED, READY, Session
from sandbox.process import SandboxProcess
from tests.conftest import MemoryKeyring, known_flags
from tests.metrics.test_upload import file_rows as upload_file_rows
from tests.metrics.test_upload import stored_rows
from ui.metrics_tool import APPLICATION_ROWS, MetricsTool
from ui.states import StatePanel
from ui.tool_page import ToolPage

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = resources.samples()
GENERATE = SAMPLES / "generate.py"

Key = tuple[str, str, str, int | None]


@pytest.fixture(autouse=True)
def _uploads_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Ledgers in this test's folder, never the user's data folder."""
    data = tmp_path / "data"
    monkeypatch.setenv("FLAGDESK_DATA_DIR", str(data))
    return data


@pytest.fixture
def empty_sandbox(tmp_path: Path) -> Iterator[SandboxProcess]:
    """A sandbox with no data of its own: what it stores is what the test sent."""
    with SandboxProcess(tmp_path / "empty.sqlite3", "--empty") as sb:
        yield sb


@pytest.fixture
def offline(qloop: Any, tmp_path: Path) -> Session:
    """A session that never connected."""
    return Session(ProfileStore(tmp_path / "offline-config"), health_interval=0)


def open_tool(qtbot: Any, session: Session) -> MetricsTool:
    tool = MetricsTool(session)
    qtbot.addWidget(tool)
    tool.resize(1000, 700)
    tool.show()
    qtbot.waitUntil(lambda: not tool.model.busy, timeout=10_000)
    return tool


def wait_loaded(qtbot: Any, model: MetricsToolModel, timeout: int = 60_000) -> None:
    qtbot.waitUntil(lambda: not model.loading and not model.busy, timeout=timeout)


def wait_uploaded(qtbot: Any, model: MetricsToolModel, timeout: int = 120_000) -> None:
    qtbot.waitUntil(
        lambda: not model.uploading and (model.report is not None or bool(model.upload_error)),
        timeout=timeout,
    )


def upload_then_cancel(qtbot: Any, tool: MetricsTool, after: int) -> None:
    """Upload in bodies of 2 KiB, one at a time, and click Cancel once `after` were answered."""

    def cancel(progress: Progress) -> None:
        if progress.requests_done >= after:
            tool.cancel_button.click()

    tool.model.upload_progress.connect(cancel)
    tool.max_body_spin.setValue(2_048)
    tool.concurrency_spin.setValue(1)
    tool.upload_button.click()
    wait_uploaded(qtbot, tool.model)
    tool.model.upload_progress.disconnect(cancel)


def generate(path: Path, metrics: int, *extra: str) -> Path:
    subprocess.run(
        [sys.executable, str(GENERATE), "--metrics", str(metrics), "--out", str(path), *extra],
        check=True,
    )
    return path


def resume_and_check_stored(
    qtbot: Any, tool: MetricsTool, session: Session, arun: Any, sandbox: SandboxProcess,
    batch: Path, metrics: int,
) -> None:  # fmt: skip
    """Resume the unfinished upload the window offers (for `sandbox`): it completes with
    `metrics` accepted and none in doubt, the server then holds exactly the rows of `batch`,
    and nothing is left unfinished."""
    model = tool.model
    assert sandbox.url in tool.unfinished_combo.currentText()
    assert tool.resume_button.isEnabled(), tool.resume_reason.text()
    tool.resume_button.click()
    wait_uploaded(qtbot, model)
    report = model.report
    assert report is not None and report.complete, model.report_lines()
    assert report.accepted.metrics == metrics and report.in_doubt == 0
    expected = file_rows(batch)
    client = arun(session.client())
    assert arun(stored_rows(client, {k[0] for k in expected}), timeout=60_000) == expected
    qtbot.waitUntil(lambda: model.unfinished == [])


def file_rows(path: Path) -> dict[Key, tuple[int, int, int]]:
    """The file's sums per feature, application, environment and window, read by the core."""
    batch = load([path])
    assert not batch.errors
    return upload_file_rows(batch)


def know(sb: SandboxProcess, *paths: Path) -> None:
    """The flags of the files at `paths`, made on `sb`: it stores no metrics of a flag it does
    not know, as Unleash."""
    known_flags(sb, {key[0] for path in paths for key in file_rows(path)})


def rows_by_file(tool: MetricsTool) -> dict[str, SourceRow]:
    return {row.name: row for row in tool.source_rows()}


def unnamed_controls(tool: MetricsTool) -> list[str]:
    """Tab by tab, every control that takes focus and lacks an objectName or a name for
    screen readers (its accessible name, its own text, or its buddy label's text); the same
    rule as tests/ui/test_shell.py, on every tab rather than the first."""
    problems = []
    for tab in range(tool.tabs.count()):
        tool.tabs.setCurrentIndex(tab)
        for widget in [tool, *tool.findChildren(QWidget)]:
            if widget.focusPolicy() == Qt.FocusPolicy.NoFocus or not widget.isVisibleTo(tool):
                continue
            if isinstance(widget, QAbstractScrollArea) and not isinstance(
                widget, QAbstractItemView
            ):
                continue
            name = widget.objectName()
            text = getattr(widget, "text", None)
            buddies = [b for b in tool.findChildren(QLabel) if b.buddy() is widget and b.text()]
            said = widget.accessibleName() or (callable(text) and str(text()).strip()) or buddies
            if not name or name.startswith("qt_") or not said:
                problems.append(f"tab {tab}: {type(widget).__name__} {name!r}")
    return problems


# ---------------------------------------------------------------------------- offline


def test_the_samples_load_offline_with_formats_counts_and_problems(
    qtbot: Any, offline: Session
) -> None:
    """Not connected: every sample is read and checked, its format and counts shown; Upload
    is disabled and says why."""
    tool = open_tool(qtbot, offline)
    model = tool.model
    assert tool.files_states.state == StatePanel.EMPTY
    assert "Add files" in tool.files_states.empty_label.text()
    assert "NDJSON" in tool.files_states.empty_label.text()
    samples = sorted(p for p in SAMPLES.iterdir() if p.suffix in (".json", ".ndjson"))
    assert len(samples) == 7
    tool.add_files([str(p) for p in samples])
    wait_loaded(qtbot, model)
    assert model.phase == CONTENT
    assert tool.files_states.state == StatePanel.CONTENT
    rows = rows_by_file(tool)
    assert {name: row.format for name, row in rows.items()} == {
        "array.json": "JSON array",
        "broken.json": "bulk payload",
        "bulk.json": "bulk payload",
        "invalid.json": "bulk payload",
        "invalid.ndjson": "NDJSON",
        "metrics.ndjson": "NDJSON",
        "sdk.json": "SDK payload",
    }
    for path in samples:  # the counts are the core's, file by file
        batch = load([path])
        source = batch.sources[0]
        row = rows[path.name]
        assert (row.metrics, row.applications, row.invalid) == (
            source.metrics,
            source.applications,
            source.invalid,
        ), path.name
    assert (rows["bulk.json"].metrics, rows["bulk.json"].applications) == (5, 2)
    assert (rows["sdk.json"].metrics, rows["broken.json"].invalid) == (3, 1)
    assert model.metric_count == sum(load([p]).metric_count for p in samples) == 24
    assert tool.tabs.tabText(0) == "Files (7)"
    # the preview adds every file together
    preview = model.preview
    assert preview is not None
    assert preview.totals.total.metrics == 24
    assert sum(r.yes for r in model.rows.all_rows) == preview.totals.total.yes
    assert tool.figure_labels["Metrics"].text() == "24"
    assert sum(b.yes for b in tool.feature_chart.bars) == preview.totals.total.yes
    assert sum(b.no for b in tool.window_chart.bars) == preview.totals.total.no
    assert len(tool.feature_chart.bars) == 8 and tool.feature_chart.bars[-1].label.endswith(
        "others"
    )
    tool.tabs.setCurrentIndex(1)
    assert not tool.grab().isNull()  # the charts paint
    # problems of every file, errors first
    problems = model.problems.all_rows
    assert problems[0].severity == "error"
    assert [p.severity for p in problems] == sorted(p.severity for p in problems)
    broken = [p for p in problems if p.file.endswith("broken.json")]
    assert [(p.severity, p.line, p.column) for p in broken] == [("error", 5, 146)]
    assert "JSON syntax error" in broken[0].message
    assert tool.tabs.tabText(2) == f"Problems ({len(problems)})"
    assert "checked against the server's flags once connected" in tool.checks_label.text()
    # offline: nothing can be sent, and the window says so
    assert not tool.upload_button.isEnabled()
    assert "Not connected" in model.upload_reason
    assert "read and checked" in model.upload_reason
    assert tool.upload_reason.text() == model.upload_reason
    assert unnamed_controls(tool) == []
    # Remove one file, then Clear
    tool.sources.view.selectRow(tool.model.sources.row_of(lambda r: r.name == "bulk.json"))
    assert tool.remove_button.isEnabled()
    tool.remove_button.click()
    qtbot.waitUntil(lambda: "bulk.json" not in rows_by_file(tool))
    assert model.metric_count == 19
    tool.clear_button.click()
    qtbot.waitUntil(lambda: model.phase == EMPTY)
    assert tool.files_states.state == StatePanel.EMPTY


def test_the_preview_lists_the_application_items(
    qtbot: Any, offline: Session, tmp_path: Path
) -> None:
    """The application items of every input, as sent, in a table fitted to its rows; a batch
    of metric items only has none, and the preview says so."""
    tool = open_tool(qtbot, offline)
    model = tool.model
    tool.add_files([str(SAMPLES / n) for n in ("bulk.json", "sdk.json", "metrics.ndjson")])
    wait_loaded(qtbot, model)
    tool.tabs.setCurrentIndex(1)
    table = model.applications
    assert [c.title for c in table.columns] == [
        "Application", "Environment", "Instance", "Started (UTC)", "Interval (s)",
        "SDK version", "Strategies", "Connect via", "File",
    ]  # fmt: skip
    java, node = "unleash-client-java:9.2.0", "unleash-client-node:6.1.0"
    shown = sorted(table.row_texts(r) for r in range(table.shown_count))
    assert shown == [
        ["checkout-service", "development", "checkout-service-2b41", "2026-11-20T08:12:00Z",
         "15", java, "—", "unleash-edge (edge-pod-bghzv5)", "bulk.json"],
        ["checkout-service", "development", "checkout-service-2b41", "2026-11-20T11:00:00Z",
         "3600", java, "—", "—", "sdk.json"],
        ["web-frontend", "development", "web-frontend-7f9c", "2026-11-20T08:12:00Z",
         "15", node, "default, flexibleRollout", "—", "bulk.json"],
    ]  # fmt: skip
    web = table.row_of(lambda a: a.app == "web-frontend")
    tip = table.data(table.index(web, 8), Qt.ItemDataRole.ToolTipRole)
    assert tip == f"{SAMPLES / 'bulk.json'}:3 applications[0]"
    assert table.data(table.index(web, 6), Qt.ItemDataRole.ToolTipRole) == (
        "2 strategies:\ndefault\nflexibleRollout"
    )
    assert tool.applications.isVisible() and not tool.no_applications_label.isVisible()
    assert tool.applications.count_label.text() == "3 application items"
    # as high as its rows: each on screen, no vertical scrolling, and no room for more
    view = tool.applications.view
    qtbot.waitUntil(lambda: view.verticalScrollBar().maximum() == 0)
    bottom = view.visualRect(table.index(table.shown_count - 1, 0)).bottom()
    assert bottom < view.viewport().height() <= bottom + view.verticalHeader().defaultSectionSize()
    assert tool.rows.view.height() > view.height()  # the metric rows keep the room
    # the filter works on its cells, and the table keeps its height meanwhile
    height = view.height()
    tool.applications.filter_edit.setText("edge-pod")
    assert table.shown_count == 1 and table.rows[0].connect_via == (
        ("unleash-edge", "edge-pod-bghzv5"),
    )
    qtbot.wait(50)
    assert view.height() == height
    tool.applications.filter_edit.clear()
    assert unnamed_controls(tool) == []
    # many items: the table stays that high, and scrolls
    apps = [
        {"appName": f"app-{n}", "environment": "development", "instanceId": f"i-{n}",
         "interval": 15, "started": 1795162320000}
        for n in range(APPLICATION_ROWS + 3)
    ]  # fmt: skip
    many = tmp_path / "many.json"
    many.write_text(json.dumps({"applications": apps, "metrics": []}))
    tool.add_files([str(many)])
    wait_loaded(qtbot, model)
    tool.tabs.setCurrentIndex(1)
    assert table.total_count == 3 + APPLICATION_ROWS + 3
    qtbot.waitUntil(lambda: view.verticalScrollBar().maximum() > 0)
    rows_seen = view.viewport().height() // view.verticalHeader().defaultSectionSize()
    assert rows_seen == APPLICATION_ROWS
    model.remove([i for i in model.inputs if i.name == str(many)])
    # metric items only: the table gives way to one line
    model.remove([i for i in model.inputs if not i.name.endswith(".ndjson")])
    qtbot.waitUntil(lambda: table.total_count == 0)
    tool.tabs.setCurrentIndex(1)
    assert model.metric_count == 5
    assert not tool.applications.isVisible()
    assert tool.no_applications_label.isVisible()
    assert tool.no_applications_label.text() == (
        "No application items in this batch (metrics items only)"
    )
    assert unnamed_controls(tool) == []


def test_a_bad_file_shows_each_problem_with_file_line_column_and_path(
    qtbot: Any, offline: Session, tmp_path: Path
) -> None:
    tool = open_tool(qtbot, offline)
    model = tool.model
    tool.add_files([str(SAMPLES / "invalid.ndjson")])
    wait_loaded(qtbot, model)
    table = model.problems
    found = {(p.line, p.column, p.path, p.severity) for p in table.all_rows}
    assert (2, 84, "[1]", "error") in found  # a syntax error: line and column
    assert (3, None, "[2].featureName", "error") in found  # a schema error: its JSON path
    assert (9, None, "[8].variants.blue", "error") in found
    assert (7, None, "[6]", "warning") in found  # yes and no both 0
    syntax = next(p for p in table.all_rows if p.line == 2)
    assert str(syntax).startswith(f"{SAMPLES / 'invalid.ndjson'}:2:84: [1]: JSON syntax error")
    # the cells as shown: the file's name, line, column, path, message
    row = table.row_of(lambda p: p.line == 2)
    assert table.row_texts(row)[:5] == ["error", "invalid.ndjson", "2", "84", "[1]"]
    # filter, and copy what is shown
    tool.tabs.setCurrentIndex(2)
    tool.problems.filter_edit.setText("variants")
    assert table.shown_count == 1
    tool.problems.view.selectRow(0)
    assert tool.problems.view.copy_selection() == 1
    copied = QGuiApplication.clipboard().text()
    assert copied.startswith("error\tinvalid.ndjson\t9\t—\t[8].variants.blue\t")
    # the invalid items saved to a file of their own, one per line with their problems
    assert tool.save_invalid_button.isEnabled()
    out = tmp_path / "left-out.ndjson"
    task = model.save_invalid(out)
    qtbot.waitUntil(task.done)
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == model.invalid_count == 8
    assert {r["line"] for r in records} == {2, 3, 4, 5, 8, 9, 10, 12}
    assert str(out) in tool.notice_label.text()


def test_paste_and_drop_add_inputs(qtbot: Any, offline: Session) -> None:
    tool = open_tool(qtbot, offline)
    model = tool.model
    QGuiApplication.clipboard().setText((SAMPLES / "metrics.ndjson").read_text())
    tool.activateWindow()
    qtbot.waitUntil(tool.isActiveWindow)
    tool.sources.view.setFocus()
    qtbot.keyClick(tool.sources.view, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    wait_loaded(qtbot, model)
    rows = rows_by_file(tool)
    assert list(rows) == ["<clipboard>"]
    assert (rows["<clipboard>"].format, rows["<clipboard>"].metrics) == ("NDJSON", 5)
    # a drop of two files adds both (and a file already listed is not read twice)
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(SAMPLES / n)) for n in ("sdk.json", "array.json")])
    at, how = QPoint(20, 20), Qt.DropAction.CopyAction
    left, none = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    enter = QDragEnterEvent(at, how, mime, left, none)
    QApplication.sendEvent(tool, enter)
    assert enter.isAccepted()
    QApplication.sendEvent(tool, QDropEvent(QPointF(at), how, mime, left, none))
    wait_loaded(qtbot, model)
    assert set(rows_by_file(tool)) == {"<clipboard>", "sdk.json", "array.json"}
    assert model.metric_count == 5 + 3 + 4
    assert model.add_files([SAMPLES / "sdk.json"]) is None
    assert "listed already" in model.notice
    # F5 reads every input again, the paste included
    tool.refresh()
    wait_loaded(qtbot, model)
    assert set(rows_by_file(tool)) == {"<clipboard>", "sdk.json", "array.json"}
    assert model.metric_count == 12


def test_reading_a_large_file_shows_bytes_and_can_be_cancelled(
    qtbot: Any, offline: Session, tmp_path: Path
) -> None:
    big = generate(tmp_path / "big.ndjson", 150_000, "--seed", "5")
    tool = open_tool(qtbot, offline)
    model = tool.model
    seen: list[tuple[int, int]] = []

    def on_progress(done: int, total: int) -> None:
        seen.append((done, total))
        model.cancel_load()

    model.load_progress.connect(on_progress)
    tool.add_files([str(big)])
    assert tool.files_states.state == StatePanel.LOADING
    assert tool.load_cancel_button.isVisible()
    assert not tool.add_button.isEnabled()
    wait_loaded(qtbot, model)
    assert seen and seen[0][1] == big.stat().st_size and seen[0][0] < seen[0][1]
    assert model.inputs == [] and model.phase == EMPTY
    assert "cancelled" in model.notice
    assert tool.add_button.isEnabled()


# ---------------------------------------------------------------------------- uploads


def test_feature_names_are_checked_against_the_servers_flags(
    qtbot: Any, connect: Callable[..., Session], demo_sandbox: SandboxProcess, tmp_path: Path
) -> None:
    """Connected, the window reads the server's flag names once and warns about metrics of a
    name it has no flag of (Unleash would store nothing for them)."""
    path = tmp_path / "names.ndjson"
    items = [
        {"featureName": name, "appName": "web", "environment": "development", "yes": 1, "no": 1}
        for name in ("profile-beta", "no-such-flag-anywhere")
    ]
    path.write_text("".join(json.dumps(item) + "\n" for item in items))
    session = connect(demo_sandbox, client_token=demo_sandbox.client_token)
    tool = open_tool(qtbot, session)
    model = tool.model
    tool.add_files([str(path)])
    wait_loaded(qtbot, model)
    qtbot.waitUntil(lambda: model.known_features is not None, timeout=20_000)
    assert "profile-beta" in model.known_features
    unknown = [p.message for p in model.problems.all_rows if "not known" in p.message]
    assert len(unknown) == 1 and "no-such-flag-anywhere" in unknown[0], unknown
    assert "checked against the server's" in tool.checks_label.text()


def test_an_upload_stores_exactly_the_files_counts(
    qtbot: Any, connect: Callable[..., Session], empty_sandbox: SandboxProcess,
    arun: Any, tmp_path: Path,
) -> None:  # fmt: skip
    batch = generate(tmp_path / "batch.ndjson", 3_000, "--seed", "11")
    bulk = generate(tmp_path / "batch.json", 500, "--seed", "12", "--format", "bulk")
    know(empty_sandbox, batch, bulk)
    session = connect(empty_sandbox)
    tool = open_tool(qtbot, session)
    model = tool.model
    tool.add_files([str(batch), str(bulk)])
    wait_loaded(qtbot, model)
    assert tool.upload_button.isEnabled(), model.upload_reason
    assert "the connection's client token" in tool.server_label.text()
    assert "'development'" in tool.checks_label.text()  # the client token's environment
    tool.max_body_spin.setValue(20_000)
    tool.upload_button.click()
    assert model.uploading and tool.cancel_button.isEnabled()
    wait_uploaded(qtbot, model)
    report = model.report
    assert report is not None and report.complete, model.report_lines()
    assert report.accepted.metrics == 3_500 and report.rejected.bodies == 0
    assert report.accepted.bodies > 20  # split by the body limit chosen
    assert tool.progress_bar.value() == tool.progress_bar.maximum() == report.accepted.bodies
    assert "3,500 of 3,500 metrics" in tool.progress_label.text()
    assert "Accepted:" in tool.report_label.text() and tool.open_folder_button.isVisible()
    assert report.ledger.parent.parent == tmp_path / "data" / "uploads"
    expected: dict[Key, list[int]] = {}
    for path in (batch, bulk):
        for key, counts in file_rows(path).items():
            into = expected.setdefault(key, [0, 0, 0])
            for i in range(3):
                into[i] += counts[i]
    client = arun(session.client())
    stored = arun(stored_rows(client, {k[0] for k in expected}), timeout=60_000)
    assert stored == {k: tuple(v) for k, v in expected.items()}
    assert model.unfinished == []


def test_cancel_mid_upload_then_resume_completes_with_exact_totals(
    qtbot: Any, connect: Callable[..., Session], empty_sandbox: SandboxProcess,
    arun: Any, tmp_path: Path,
) -> None:  # fmt: skip
    batch = generate(tmp_path / "batch.ndjson", 2_000, "--seed", "21")
    know(empty_sandbox, batch)
    session = connect(empty_sandbox)
    tool = open_tool(qtbot, session)
    model = tool.model
    tool.add_files([str(batch)])
    wait_loaded(qtbot, model)

    upload_then_cancel(qtbot, tool, after=5)
    first = model.report
    assert first is not None and not first.complete and first.stopped == "cancelled"
    assert first.accepted.bodies >= 5 and first.pending.bodies > 0 and first.in_doubt == 0
    assert "Resume sends exactly the bodies still pending." in model.report_lines()
    # the unfinished upload is offered for Resume
    qtbot.waitUntil(lambda: len(model.unfinished) == 1)
    unfinished = model.unfinished[0]
    assert unfinished.folder == first.ledger.parent
    assert unfinished.pending.bodies == first.pending.bodies
    resume_and_check_stored(qtbot, tool, session, arun, empty_sandbox, batch, metrics=2_000)
    assert not tool.unfinished_combo.isEnabled()


def hold_the_split(monkeypatch: pytest.MonkeyPatch) -> tuple[threading.Event, threading.Event]:
    """Make the split stop after its first body until `release` is set (a long split of a large
    batch); `splitting` is set once it stopped there."""
    real = batch_upload.chain_bodies
    splitting, release = threading.Event(), threading.Event()

    def held(batches: Any, max_body: int) -> Iterator[Any]:
        bodies = real(batches, max_body)
        yield next(bodies)
        splitting.set()
        release.wait(60)
        yield from bodies

    monkeypatch.setattr(batch_upload, "chain_bodies", held)
    return splitting, release


def ledgers_under(data: Path) -> list[Path]:
    return sorted(data.glob("uploads/*/ledger.jsonl"))


def test_the_window_refuses_a_batch_sent_before_split_and_spelt_otherwise(
    qtbot: Any, connect: Callable[..., Session], empty_sandbox: SandboxProcess,
    arun: Any, tmp_path: Path,
) -> None:  # fmt: skip
    """Issue 35, item 1, in the window: the batch the command line sent to `localhost` in
    bodies of 2 KiB, reordered into another file, is the same batch to the same server (its
    instance id) for the window's Upload: nothing is sent, and the question names that upload
    and why its server is this one."""
    batch = generate(tmp_path / "batch.ndjson", 300, "--seed", "35")
    know(empty_sandbox, batch)
    port = empty_sandbox.url.rsplit(":", 1)[1]
    sent = subprocess.run(
        [sys.executable, "-m", "app", "metrics", "upload", str(batch), "--url",
         f"http://localhost:{port}/", "--max-body", "2048", "--json"],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "FLAGDESK_TOKEN": empty_sandbox.admin_token,
             "FLAGDESK_CLIENT_TOKEN": empty_sandbox.client_token},
    )  # fmt: skip
    assert sent.returncode == 0, sent.stderr
    folder = json.loads(sent.stdout)["folder"]
    lines = batch.read_text().splitlines()
    reordered = tmp_path / "reordered.json"
    reordered.write_text("[" + ",".join(reversed(lines)) + "]")
    expected = file_rows(batch)
    session = connect(empty_sandbox)
    tool = open_tool(qtbot, session)
    model = tool.model
    tool.add_files([str(reordered)])
    wait_loaded(qtbot, model)
    tool.upload_button.click()
    qtbot.waitUntil(lambda: not model.uploading and bool(model.again_question), timeout=60_000)
    assert model.report is None and model.upload_error == ""
    assert folder in model.again_question and "accepted already" in model.again_question
    assert f"the same server as {empty_sandbox.url}, by its instance id" in model.again_question
    assert tool.again_button.isVisible()
    client = arun(session.client())
    assert arun(stored_rows(client, {k[0] for k in expected}), timeout=60_000) == expected
    assert [p.parent for p in ledgers_under(tmp_path / "data")] == [Path(folder)]


@pytest.mark.parametrize("how", ["cancel", "new connection"])
def test_cancel_or_a_new_connection_while_splitting_sends_nothing(
    qtbot: Any, connect: Callable[..., Session], empty_sandbox: SandboxProcess,
    arun: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str,
) -> None:  # fmt: skip
    """Before the first request there is no upload to cancel yet: Cancel (or a new
    connection) during the split must still stop it. The half-written ledger is removed."""
    batch = generate(tmp_path / "batch.ndjson", 1_000, "--seed", "31")
    session = connect(empty_sandbox)
    tool = open_tool(qtbot, session)
    model = tool.model
    tool.add_files([str(batch)])
    wait_loaded(qtbot, model)
    splitting, release = hold_the_split(monkeypatch)
    tool.max_body_spin.setValue(2_048)
    tool.upload_button.click()
    qtbot.waitUntil(splitting.is_set, timeout=30_000)
    assert model.uploading and tool.cancel_button.isEnabled()
    if how == "cancel":
        tool.cancel_button.click()
    else:
        session.retry()  # the window's connection changes: what it did is cancelled
    release.set()
    qtbot.waitUntil(lambda: not model.uploading, timeout=60_000)
    assert model.report is None and model.upload_error == ""
    assert model.notice == "The upload was cancelled while it was split: nothing was sent."
    assert ledgers_under(tmp_path / "data") == []
    expected = file_rows(batch)
    qtbot.waitUntil(lambda: session.state == READY, timeout=30_000)
    client = arun(session.client())
    assert arun(stored_rows(client, {k[0] for k in expected}), timeout=60_000) == {}


def test_cancel_while_the_invalid_items_are_saved_keeps_the_ledger_for_resume(
    qtbot: Any, connect: Callable[..., Session], empty_sandbox: SandboxProcess,
    arun: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """Cancel once the ledger is complete (here while the invalid items are written): nothing
    is sent, and the ledger is closed and offered for Resume, which sends it all."""
    good = generate(tmp_path / "batch.ndjson", 500, "--seed", "32")
    know(empty_sandbox, good)
    path = tmp_path / "with-invalid.ndjson"
    path.write_text(good.read_text() + "not json\n")
    session = connect(empty_sandbox)
    tool = open_tool(qtbot, session)
    model = tool.model
    tool.add_files([str(path)])
    wait_loaded(qtbot, model)
    real = batch_upload.write_invalid
    writing, release = threading.Event(), threading.Event()

    def held(batches: Any, target: Path) -> int:
        writing.set()
        release.wait(60)
        return real(batches, target)

    monkeypatch.setattr(batch_upload, "write_invalid", held)
    tool.upload_button.click()
    qtbot.waitUntil(writing.is_set, timeout=30_000)
    tool.cancel_button.click()
    release.set()
    qtbot.waitUntil(lambda: not model.uploading, timeout=60_000)
    assert model.report is None
    (ledger,) = ledgers_under(tmp_path / "data")
    assert model.notice == (
        "The upload was cancelled before anything was sent; its ledger is kept in "
        f"{ledger.parent} for Resume."
    )
    expected = file_rows(good)
    client = arun(session.client())
    assert arun(stored_rows(client, {k[0] for k in expected}), timeout=60_000) == {}
    qtbot.waitUntil(lambda: len(model.unfinished) == 1)
    assert model.unfinished[0].pending.metrics == 500
    tool.resume_button.click()
    wait_uploaded(qtbot, model)
    assert model.report is not None and model.report.complete
    assert arun(stored_rows(client, {k[0] for k in expected}), timeout=60_000) == expected


def test_invalid_items_that_cannot_be_saved_stop_the_upload_before_anything_is_sent(
    qtbot: Any, connect: Callable[..., Session], empty_sandbox: SandboxProcess,
    arun: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """As on the command line: when the items left out cannot be saved (a full disk, say),
    nothing is sent (a person would not know which items were left out); the ledger is kept
    for Resume, which sends the valid items anyway. The window used to upload regardless."""
    good = generate(tmp_path / "batch.ndjson", 200, "--seed", "33")
    path = tmp_path / "with-invalid.ndjson"
    path.write_text(good.read_text() + "not json\n")
    session = connect(empty_sandbox)
    tool = open_tool(qtbot, session)
    model = tool.model
    tool.add_files([str(path)])
    wait_loaded(qtbot, model)

    def full_disk(self: Any, target: Path) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Batch, "write_invalid", full_disk)
    tool.upload_button.click()
    wait_uploaded(qtbot, model)
    assert model.report is None
    assert "could not be saved" in model.upload_error and "nothing was sent" in model.upload_error
    assert "No space left on device" in tool.report_label.text()
    expected = file_rows(good)
    client = arun(session.client())
    assert arun(stored_rows(client, {k[0] for k in expected}), timeout=60_000) == {}
    qtbot.waitUntil(lambda: len(model.unfinished) == 1)
    assert model.unfinished[0].pending.metrics == 200


def test_a_batch_this_server_accepted_is_sent_again_only_once_confirmed(
    qtbot: Any, connect: Callable[..., Session], empty_sandbox: SandboxProcess,
    arun: Any, tmp_path: Path,
) -> None:  # fmt: skip
    """Upload on a finished batch used to send it again, silently (the server counted it
    twice). Now nothing is sent; the window names the earlier upload (when, and its folder)
    and Upload again sends it once confirmed."""
    batch = generate(tmp_path / "batch.ndjson", 300, "--seed", "34")
    know(empty_sandbox, batch)
    session = connect(empty_sandbox)
    tool = open_tool(qtbot, session)
    model = tool.model
    tool.add_files([str(batch)])
    wait_loaded(qtbot, model)
    tool.upload_button.click()
    wait_uploaded(qtbot, model)
    first = model.report
    assert first is not None and first.complete
    assert not tool.again_button.isVisible()
    expected = file_rows(batch)
    client = arun(session.client())
    features = {k[0] for k in expected}
    tool.upload_button.click()
    qtbot.waitUntil(lambda: not model.uploading and bool(model.again_question), timeout=60_000)
    assert model.report is None and model.upload_error == ""
    folder = str(first.ledger.parent)
    assert folder in model.again_question and empty_sandbox.url in model.again_question
    assert model.earlier[0].folder == first.ledger.parent and model.earlier[0].bodies >= 1
    assert model.earlier[0].when in model.again_question  # when it was uploaded
    assert tool.again_button.isVisible() and tool.tabs.currentIndex() == 3
    assert "Nothing was sent" in tool.report_label.text()
    assert folder in tool.report_label.text()
    assert arun(stored_rows(client, features), timeout=60_000) == expected  # counted once
    assert ledgers_under(tmp_path / "data") == [first.ledger]  # no second ledger left
    tool.again_button.click()  # the confirmation
    wait_uploaded(qtbot, model)
    assert model.report is not None and model.report.complete
    assert model.again_question == "" and not tool.again_button.isVisible()
    doubled = {k: tuple(2 * n for n in v) for k, v in expected.items()}
    assert arun(stored_rows(client, features), timeout=60_000) == doubled


def test_a_new_connection_leaves_no_result_of_the_previous_server(
    qtbot: Any, connect: Callable[..., Session], empty_sandbox: SandboxProcess,
    demo_sandbox: SandboxProcess, tmp_path: Path,
) -> None:  # fmt: skip
    """After a switch to another server, the Upload tab showed the previous server's result
    ("every body was accepted") under the new server's URL: results belong to a connection."""
    batch = generate(tmp_path / "batch.ndjson", 300, "--seed", "35")
    session = connect(empty_sandbox)
    tool = open_tool(qtbot, session)
    model = tool.model
    tool.add_files([str(batch)])
    wait_loaded(qtbot, model)
    tool.upload_button.click()
    wait_uploaded(qtbot, model)
    assert model.report is not None and model.report.complete
    assert "every body was accepted" in tool.report_label.text()
    demo = ConnectionSpec(demo_sandbox.url, demo_sandbox.admin_token,
                          client_token=demo_sandbox.client_token, label="demo")  # fmt: skip
    session.open_spec(demo)
    qtbot.waitUntil(lambda: session.state == READY and session.url == demo_sandbox.url,
                    timeout=30_000)  # fmt: skip
    assert model.report is None and model.progress is None and model.upload_error == ""
    assert model.rejections.total_count == 0
    assert not tool.report_label.isVisible() and tool.report_label.text() == ""
    assert not tool.open_folder_button.isVisible()
    assert tool.progress_label.text() == ""
    assert demo_sandbox.url in tool.server_label.text()
    assert model.inputs and model.metric_count == 300  # the files are not the server's: kept
    assert tool.upload_button.isEnabled(), model.upload_reason


def test_an_application_too_large_for_any_body_counts_as_left_out(
    qtbot: Any, connect: Callable[..., Session], empty_sandbox: SandboxProcess,
    tmp_path: Path,
) -> None:  # fmt: skip
    application = {"appName": "web", "environment": "development", "instanceId": "i",
                   "started": 1_700_000_000_000, "interval": 10,
                   "sdkVersion": "x" * 3_000}  # fmt: skip
    item = {"featureName": "ui-bigapp", "appName": "web", "environment": "development",
            "yes": 1, "no": 1}  # fmt: skip
    path = tmp_path / "bigapp.json"
    path.write_text(json.dumps({"applications": [application], "metrics": [item]}))
    session = connect(empty_sandbox)
    tool = open_tool(qtbot, session)
    model = tool.model
    tool.add_files([str(path)])
    wait_loaded(qtbot, model)
    tool.max_body_spin.setValue(2_048)
    tool.upload_button.click()
    wait_uploaded(qtbot, model)
    report = model.report
    assert report is not None and report.complete and report.accepted.metrics == 1
    assert model.invalid_left_out == 1 and model.invalid_file is not None
    assert f"Invalid items left out: 1, saved in {model.invalid_file}." in model.report_lines()
    (record,) = model.invalid_file.read_text().splitlines()
    assert json.loads(record)["problems"][0]["path"] == "applications[0]"


def test_without_a_client_token_the_window_asks_for_one(
    qtbot: Any, qloop: Any, empty_sandbox: SandboxProcess, arun: Any, tmp_path: Path
) -> None:
    session = Session(ProfileStore(tmp_path / "config"), health_interval=0)
    session.open_spec(ConnectionSpec(empty_sandbox.url, empty_sandbox.admin_token,
                                     label="no client token"))  # fmt: skip
    qtbot.waitUntil(lambda: session.state in (READY, FAILED), timeout=30_000)
    assert session.state == READY, session.message
    try:
        batch = generate(tmp_path / "batch.ndjson", 300, "--seed", "31")
        know(empty_sandbox, batch)
        tool = open_tool(qtbot, session)
        model = tool.model
        tool.add_files([str(batch)])
        wait_loaded(qtbot, model)
        tool.tabs.setCurrentIndex(3)
        assert model.needs_token and tool.token_box.isVisible()
        assert (
            "admin API tokens and personal access tokens are refused on this endpoint by real "
            "servers" in tool.token_reason.text()
        )
        assert "This connection has no client token." in tool.token_reason.text()
        assert not tool.upload_button.isEnabled()
        assert model.upload_reason == "Type a client token above to upload."
        assert tool.token_edit.echoMode() == tool.token_edit.EchoMode.Password
        assert "Environments are not checked" in tool.checks_label.text()
        # a token that cannot be a header value: refused by kind, never sent nor shown
        token = empty_sandbox.client_token
        tool.token_edit.setText(f"{token[:12]}é{token[12:]}")
        assert not tool.upload_button.isEnabled()
        assert model.upload_reason.startswith(
            "The client token typed holds a character outside ASCII at position 13"
        ), model.upload_reason
        assert token[12:] not in model.upload_reason
        # the admin token is refused, and the report says why
        tool.token_edit.setText(empty_sandbox.admin_token)
        assert tool.upload_button.isEnabled()
        tool.upload_button.click()
        wait_uploaded(qtbot, model)
        assert model.report is not None and model.report.stopped == "unauthorised"
        assert "refused on this endpoint by real servers" in tool.report_label.text()
        # a client token, typed: used for this server, in memory only
        tool.token_edit.clear()
        qtbot.keyClicks(tool.token_edit, empty_sandbox.client_token)
        assert model.typed_token == empty_sandbox.client_token
        assert "'development'" in tool.checks_label.text()
        assert "typed here" in tool.server_label.text()
        tool.upload_button.click()
        wait_uploaded(qtbot, model)
        report = model.report
        assert report is not None and report.complete and report.accepted.metrics == 300
        expected = file_rows(batch)
        client = arun(session.client())
        assert arun(stored_rows(client, {k[0] for k in expected}), timeout=60_000) == expected
        assert unnamed_controls(tool) == []  # with the token box and a report shown
        kept = [p for p in (tmp_path / "config").rglob("*") if p.is_file()]
        assert not any(empty_sandbox.client_token in p.read_text() for p in kept)  # memory only
        tool.close_content()
    finally:
        arun(session.aclose())


def test_a_typed_client_token_saved_in_the_profile_is_the_connections_from_then_on(
    qtbot: Any, qloop: Any, empty_sandbox: SandboxProcess, arun: Any, tmp_path: Path,
    memory_keyring: MemoryKeyring,
) -> None:  # fmt: skip
    store = ProfileStore(tmp_path / "config")
    store.save(Profile(name="Staging", url=empty_sandbox.url), token=empty_sandbox.admin_token)
    session = Session(store, health_interval=0)
    session.open_profile("Staging")
    qtbot.waitUntil(lambda: session.state in (READY, FAILED), timeout=30_000)
    assert session.state == READY, session.message
    try:
        tool = open_tool(qtbot, session)
        model = tool.model
        tool.tabs.setCurrentIndex(3)
        assert model.needs_token and model.profile_name == "Staging"
        assert tool.save_token_button.isVisible() and not tool.save_token_button.isEnabled()
        tool.token_edit.setText(empty_sandbox.client_token)
        assert tool.save_token_button.isEnabled()
        tool.save_token_button.click()
        qtbot.waitUntil(lambda: session.state == READY and not model.needs_token, timeout=30_000)
        assert memory_keyring.passwords[("flagdesk", "Staging/client")] == (
            empty_sandbox.client_token
        )
        assert store.get("Staging").has_client_token
        assert model.connection_token == empty_sandbox.client_token
        assert not tool.token_box.isVisible()
        assert "the connection's client token" in tool.server_label.text()
        tool.close_content()
    finally:
        arun(session.aclose())


def test_an_upload_that_cannot_start_shows_why_and_retry_sends_it(
    qtbot: Any, connect: Callable[..., Session], empty_sandbox: SandboxProcess,
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the data folder should be\n")
    monkeypatch.setenv("FLAGDESK_DATA_DIR", str(blocker))
    session = connect(empty_sandbox)
    tool = open_tool(qtbot, session)
    model = tool.model
    tool.add_files([str(SAMPLES / "bulk.json")])
    wait_loaded(qtbot, model)
    tool.upload_button.click()
    wait_uploaded(qtbot, model)
    assert model.report is None
    assert str(blocker) in model.upload_error
    assert "could not start" in tool.report_label.text()
    assert tool.retry_button.isVisible() and tool.tabs.currentIndex() == 3
    monkeypatch.setenv("FLAGDESK_DATA_DIR", str(tmp_path / "data"))
    tool.retry_button.click()
    wait_uploaded(qtbot, model)
    assert model.upload_error == "" and not tool.retry_button.isVisible()
    assert model.report is not None and model.report.complete
    assert model.report.accepted.metrics == 5


# ---------------------------------------------------------------------------- in its page


def test_in_its_page_the_tool_reads_files_while_not_connected(
    qtbot: Any, offline: Session, tool_page: Callable[..., ToolPage]
) -> None:
    page = tool_page("metrics_upload", offline)
    assert page.banner.isVisible()  # the page says why uploads cannot be made
    tool = page.tool_content
    assert isinstance(tool, MetricsTool)
    assert tool.add_button.isEnabled()


def test_metrics_the_server_would_drop_are_sent_only_once_confirmed(
    qtbot: Any, connect: Callable[..., Session], empty_sandbox: SandboxProcess,
    arun: Any, tmp_path: Path,
) -> None:  # fmt: skip
    """Finding 4 of issue 16 in the window: an SDK payload without an environment is read for
    the client token's (development, where Unleash counts the SDK's own post), and a batch
    with metrics the server would answer 202 to and drop is not sent until confirmed."""
    hour = time.strftime("%Y-%m-%dT%H", time.gmtime())
    sdk = {"appName": "sdk-app", "instanceId": "i-1",
           "bucket": {"start": f"{hour}:00:01.123456789+00:00",
                      "stop": f"{hour}:00:31.123456789+00:00",
                      "toggles": {"win-sdk": {"yes": 248, "no": 252}}}}  # fmt: skip
    (tmp_path / "sdk.json").write_text(json.dumps(sdk))
    now = int(time.time() * 1000)
    other = {"featureName": "win-other", "appName": "a", "environment": "production",
             "timestamp": now, "yes": 1, "no": 1}  # fmt: skip
    (tmp_path / "other.ndjson").write_text(json.dumps(other) + "\n")
    known_flags(empty_sandbox, ["win-sdk", "win-other"])
    session = connect(empty_sandbox)
    tool = open_tool(qtbot, session)
    model = tool.model
    client = arun(session.client())
    tool.add_files([str(tmp_path / "sdk.json")])
    wait_loaded(qtbot, model)
    assert [r.environment for r in model.batches[0].totals().rows] == ["development"]
    tool.upload_button.click()
    wait_uploaded(qtbot, model)
    assert model.report is not None and model.report.complete and not model.again_question
    rows = arun(stored_rows(client, {"win-sdk"}), timeout=60_000)
    assert [(k[2], v[:2]) for k, v in rows.items()] == [("development", (248, 252))]
    tool.model.clear()
    tool.add_files([str(tmp_path / "other.ndjson")])
    wait_loaded(qtbot, model)
    tool.upload_button.click()
    qtbot.waitUntil(lambda: bool(model.again_question), timeout=30_000)
    assert "1 metric for 'production'" in model.again_question
    assert "kept only for 'development'" in model.again_question
    assert DROPPED_RISK in model.again_question  # what Upload again means, said before it
    assert model.report is None and tool.again_button.isVisible()
    shown = tool.report_label.text()
    assert "would drop some of these metrics" in shown and "uploaded before" not in shown
    tool.again_button.click()  # the confirmation
    wait_uploaded(qtbot, model)
    assert model.report is not None and model.report.accepted.metrics == 1
    assert model.again_question == ""
    assert arun(stored_rows(client, {"win-other"}), timeout=60_000) == {}  # dropped, as Unleash


def test_the_environment_of_sdk_payloads_and_sending_dropped_metrics_are_set_in_the_window(
    qtbot: Any, connect: Callable[..., Session], empty_sandbox: SandboxProcess,
    arun: Any, tmp_path: Path,
) -> None:  # fmt: skip
    """As `flagdesk metrics upload --environment NAME` and `--send-dropped`: the environment
    field reads SDK payloads that name none for the environment typed there (empty: the client
    token's), and "Send metrics the server would drop" sends such a batch once a confirmation
    naming the risk is accepted (Cancel sends nothing); without it, nothing is sent."""
    hour = time.strftime("%Y-%m-%dT%H", time.gmtime())
    sdk = {"appName": "sdk-app", "instanceId": "i-1",
           "bucket": {"start": f"{hour}:00:01+00:00", "stop": f"{hour}:00:31+00:00",
                      "toggles": {"win-env": {"yes": 248, "no": 252}}}}  # fmt: skip
    (tmp_path / "sdk.json").write_text(json.dumps(sdk))
    known_flags(empty_sandbox, ["win-env"])
    session = connect(empty_sandbox)
    tool = open_tool(qtbot, session)
    model = tool.model
    client = arun(session.client())
    tool.add_files([str(tmp_path / "sdk.json")])
    wait_loaded(qtbot, model)

    def environments() -> list[str]:
        return [r.environment for r in model.batches[0].totals().rows]

    assert environments() == ["development"]  # the client token's
    assert tool.environment_combo.isEnabled() and "development" in [
        tool.environment_combo.itemText(i) for i in range(tool.environment_combo.count())
    ]
    tool.environment_combo.setEditText("production")  # read again for production
    qtbot.waitUntil(lambda: not model.loading and environments() == ["production"])
    assert "'production'" in model.dropped_question and "not count them" in model.dropped_question
    # not checked: nothing is sent, the window says what would be dropped
    tool.upload_button.click()
    qtbot.waitUntil(lambda: bool(model.again_question), timeout=30_000)
    assert "1 metric for 'production'" in model.again_question and model.report is None
    # checked: asked first, naming the risk; Cancel sends nothing
    tool.send_dropped_check.setChecked(True)
    tool.upload_button.click()
    box = tool.dropped_flow.box
    assert box is not None and "not count them" in box.text() and "'production'" in box.text()
    box.cancel_button.click()
    qtbot.waitUntil(lambda: tool.dropped_flow.box is None)
    assert not model.uploading and model.report is None
    tool.upload_button.click()
    box = tool.dropped_flow.box
    assert box is not None
    box.action_button.click()
    wait_uploaded(qtbot, model)
    assert model.report is not None and model.report.accepted.metrics == 1
    assert arun(stored_rows(client, {"win-env"}), timeout=60_000) == {}  # dropped, as Unleash
    # emptied: the client token's environment again, where the server counts them
    tool.send_dropped_check.setChecked(False)
    tool.environment_combo.setEditText("")
    qtbot.waitUntil(lambda: not model.loading and environments() == ["development"])
    assert model.dropped_question == ""
    tool.upload_button.click()
    wait_uploaded(qtbot, model)
    assert model.report is not None and model.report.complete, model.report_lines()
    rows = arun(stored_rows(client, {"win-env"}), timeout=60_000)
    assert [(k[2], v[:2]) for k, v in rows.items()] == [("development", (248, 252))]
    assert unnamed_controls(tool) == []


def test_f5_reads_the_servers_flag_names_again(
    qtbot: Any, connect: Callable[..., Session], sandbox: SandboxProcess, tmp_path: Path,
    tool_page: Callable[..., ToolPage], arun: Callable[..., Any],
) -> None:  # fmt: skip
    """The flag names the warnings are checked against were read once per connection: a flag
    made on the server meanwhile stayed "not known" after F5. F5 reads them again."""
    path = tmp_path / "names.ndjson"
    items = [
        {"featureName": name, "appName": "web", "environment": "development", "yes": 1, "no": 1}
        for name in ("profile-beta", "made-meanwhile")
    ]
    path.write_text("".join(json.dumps(item) + "\n" for item in items))
    session = connect(sandbox, client_token=sandbox.client_token)
    page = tool_page("metrics_upload", session)
    tool = page.tool_content
    assert isinstance(tool, MetricsTool)
    model = tool.model
    tool.add_files([str(path)])
    wait_loaded(qtbot, model)
    qtbot.waitUntil(lambda: model.known_features is not None, timeout=20_000)

    def unknown() -> list[str]:
        return [p.message for p in model.problems.all_rows if "not known" in p.message]

    assert len(unknown()) == 1 and "made-meanwhile" in unknown()[0]
    count = len(model.known_features or ())
    client = arun(session.client())
    arun(client.create_feature("default", CreateFeature(name="made-meanwhile")))

    page.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is page)
    tool.setFocus()
    qtbot.keyClick(page, Qt.Key.Key_F5)
    qtbot.waitUntil(lambda: "made-meanwhile" in (model.known_features or ()), timeout=20_000)
    wait_loaded(qtbot, model)
    assert unknown() == []
    assert len(model.known_features or ()) == count + 1
    assert f"checked against the server's {count + 1:,} flags" in tool.checks_label.text()
