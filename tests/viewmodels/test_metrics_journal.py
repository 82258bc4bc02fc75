"""The metrics window's uploads in the journal, through its view-model (`MetricsToolModel`, no
widget) against a sandbox over HTTP: an upload is one entry in the connection's journal naming
its ledger's folder, `done`; a cancelled one is completed with what was sent and what is left
to resume, and its resume is an entry of its own; the History's model (`HistoryModel`), open
meanwhile, reads it again and lists it: "Upload metrics", its bodies and metrics, its outcome."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QObject

from app.actions.journal import JOURNAL_NAME, Entry, State, journal_folder, read_journal
from app.metrics import load
from app.metrics.upload import Progress
from app.viewmodels.history import HistoryModel
from app.viewmodels.metrics import MetricsToolModel
from app.viewmodels.session import Session
from app.viewmodels.table import releasing
from sandbox.process import SandboxProcess
from tests.conftest import known_flags
from tests.metrics.test_upload import file_rows, generate

LABEL = "journal sandbox"


@pytest.fixture(autouse=True)
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Ledgers and journals in this test's folder."""
    folder = tmp_path / "data"
    monkeypatch.setenv("FLAGDESK_DATA_DIR", str(folder))
    return folder


@pytest.fixture
def empty_sandbox(tmp_path: Path) -> Iterator[SandboxProcess]:
    with SandboxProcess(tmp_path / "empty.sqlite3", "--empty") as sb:
        yield sb


@pytest.fixture
def models(qtbot: Any) -> Iterator[list[QObject]]:
    """The view-models a test makes, closed and deleted at its end, and the collection their
    deletion asks for (`collect_when_released`) run then, not in a later test's middle."""
    made: list[QObject] = []
    yield made
    gone: list[bool] = []
    for model in made:
        model.destroyed.connect(lambda *_: gone.append(True))
        model.close()  # type: ignore[attr-defined]
        model.deleteLater()
    count = len(made)
    made.clear()
    qtbot.waitUntil(lambda: len(gone) == count, timeout=10_000)
    qtbot.waitUntil(lambda: not releasing(), timeout=10_000)
    qtbot.wait(20)


def entries(data: Path) -> list[Entry]:
    return read_journal(journal_folder(LABEL, data) / JOURNAL_NAME)


def loaded(
    qtbot: Any, session: Session, sb: SandboxProcess, path: Path, models: list[QObject]
) -> MetricsToolModel:
    known_flags(sb, (key[0] for key in file_rows(load([path]))))
    model = MetricsToolModel(session)
    models.append(model)
    model.start()
    model.add_files([str(path)])
    qtbot.waitUntil(lambda: not model.loading and not model.busy, timeout=60_000)
    assert not model.upload_reason, model.upload_reason
    return model


def wait_uploaded(qtbot: Any, model: MetricsToolModel) -> None:
    qtbot.waitUntil(
        lambda: not model.uploading and (model.report is not None or bool(model.upload_error)),
        timeout=120_000,
    )


def test_an_upload_is_one_entry_the_history_lists(
    qtbot: Any,
    connect: Callable[..., Session],
    empty_sandbox: SandboxProcess,
    tmp_path: Path,
    data: Path,
    models: list[QObject],
) -> None:
    path = generate(tmp_path / "batch.ndjson", 600, "--seed", "4")
    session = connect(empty_sandbox, label=LABEL)
    history = HistoryModel(session)
    models.append(history)
    history.refresh()
    qtbot.waitUntil(lambda: not history.tasks, timeout=10_000)
    assert history.entries == []
    model = loaded(qtbot, session, empty_sandbox, path, models)
    assert model.upload(max_body=4_096) is not None
    wait_uploaded(qtbot, model)
    report = model.report
    assert report is not None and report.complete, model.report_lines()
    bodies = report.accepted.bodies
    assert bodies > 1

    (entry,) = entries(data)
    assert (entry.action, entry.state, entry.token) == ("metrics.upload", State.DONE, "client")
    assert (entry.connection, entry.server) == (LABEL, empty_sandbox.url)
    assert entry.before == {"ledger": str(report.ledger.parent), "bodies": bodies,
                            "metrics": 600, "pending": bodies, "resume": False}  # fmt: skip
    assert entry.message.endswith(f"Ledger: {report.ledger.parent}")
    # the History, open meanwhile, was told and read the journal again
    qtbot.waitUntil(lambda: len(history.entries) == 1, timeout=10_000)
    table = history.table
    assert [table.text(0, c) for c in range(4)][1:] == [
        "Upload metrics",
        f"{bodies} bodies (600 metrics)",
        "done",
    ]
    assert table.text(0, 4) == "client"
    assert str(report.ledger.parent) in table.text(0, 6)
    assert history.in_doubt == [] and history.checkable == []


def test_a_cancelled_upload_completes_its_entry_and_its_resume_is_another(
    qtbot: Any,
    connect: Callable[..., Session],
    empty_sandbox: SandboxProcess,
    tmp_path: Path,
    data: Path,
    models: list[QObject],
) -> None:
    path = generate(tmp_path / "batch.ndjson", 2_000, "--seed", "5")
    session = connect(empty_sandbox, label=LABEL)
    model = loaded(qtbot, session, empty_sandbox, path, models)

    def cancel(progress: Progress) -> None:
        if progress.requests_done >= 3:
            model.cancel_upload()

    model.upload_progress.connect(cancel)
    assert model.upload(max_body=2_048, concurrency=1) is not None
    wait_uploaded(qtbot, model)
    model.upload_progress.disconnect(cancel)
    first = model.report
    assert first is not None and first.stopped == "cancelled" and first.pending.bodies > 0
    (entry,) = entries(data)
    assert entry.state is State.FAILED
    assert entry.message == (
        f"Cancelled: {first.accepted.bodies} accepted, 0 rejected, 0 in doubt, "
        f"{first.pending.bodies} left for resume, of {first.total.bodies} bodies "
        f"(2,000 metrics). Ledger: {first.ledger.parent}"
    )

    qtbot.waitUntil(lambda: len(model.unfinished) == 1, timeout=10_000)
    assert model.resume(model.unfinished[0]) is not None
    wait_uploaded(qtbot, model)
    assert model.report is not None and model.report.complete
    cancelled, resumed = entries(data)
    assert cancelled.id == entry.id and cancelled.state is State.FAILED
    assert resumed.state is State.DONE and resumed.before["resume"] is True
    assert resumed.before["pending"] == first.pending.bodies
    assert resumed.before["ledger"] == str(first.ledger.parent)
