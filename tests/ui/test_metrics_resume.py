"""The metrics window after a crash, and bodies in doubt: every body counted exactly once.

- The window is killed (SIGKILL, a child process) in the middle of an upload: the window
  started next lists the unfinished upload, whose ledger on disk holds every body the server
  may have counted, and resumes it with a click; the totals are the file's exactly.
- Uploading the same files again while their upload is unfinished sends nothing and offers
  to resume that upload.
- A body in doubt that no check can decide is sent only after a confirmation naming the risk.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from app.api.client import AdminClient
from app.api.models import CreateFeature
from app.metrics.ledger import LEDGER_NAME, Ledger, State
from app.metrics.reconcile import BASELINE_NAME
from app.viewmodels.session import Session
from sandbox.process import SandboxProcess
from tests.metrics.test_kills import answer_lost_on_disk
from tests.metrics.test_upload import stored_rows
from tests.ui.test_metrics_tool import (  # noqa: F401 (fixtures)
    _uploads_here,
    empty_sandbox,
    file_rows,
    generate,
    know,
    open_tool,
    resume_and_check_stored,
    upload_then_cancel,
    wait_loaded,
    wait_uploaded,
)

ROOT = Path(__file__).resolve().parents[2]


def with_flags(sb: SandboxProcess, batch: Path) -> Path:
    """Create the batch's flags on the sandbox: metrics of flags a server does not know are not
    compared with its totals (Unleash drops them)."""
    names = {key[0] for key in file_rows(batch)}

    async def create() -> None:
        async with AdminClient(sb.url, sb.admin_token) as client:
            known = await client.feature_names()
            for name in sorted(names - known):
                await client.create_feature("default", CreateFeature(name=name))

    with ThreadPoolExecutor(1) as pool:  # the test's qasync loop is marked running here
        pool.submit(asyncio.run, create()).result()
    return batch


CHILD = """
import asyncio, os, signal, sys
from pathlib import Path
sys.path.insert(0, {root!r})
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from PySide6.QtWidgets import QApplication
import qasync
from app.connection import ConnectionSpec
from app.profiles import ProfileStore
from app.viewmodels.session import READY, Session
from ui.metrics_tool import MetricsTool

app = QApplication([])
loop = qasync.QEventLoop(app)
asyncio.set_event_loop(loop)

def killed_at(progress):
    if progress.requests_done >= {kill_at}:
        os.kill(os.getpid(), signal.SIGKILL)  # no handler, no flush: as a crash

async def drive():
    session = Session(ProfileStore(Path({config!r})), health_interval=0)
    session.open_spec(ConnectionSpec(url={url!r}, token={admin!r}, client_token={client!r},
                                     label="test sandbox"))
    tool = MetricsTool(session)
    tool.show()
    while session.state != READY:
        await asyncio.sleep(0.02)
    model = tool.model
    tool.add_files([{path!r}])
    await asyncio.sleep(0.1)
    while model.loading or model.preview is None:
        await asyncio.sleep(0.02)
    model.upload_progress.connect(killed_at)
    tool.max_body_spin.setValue(2_048)
    tool.concurrency_spin.setValue(4)
    tool.upload_button.click()
    await asyncio.sleep(60)
    sys.exit(3)  # never killed

with loop:
    loop.run_until_complete(drive())
"""


def test_the_window_killed_mid_upload_offers_the_resume_at_its_next_start(
    qtbot: Any, connect: Callable[..., Session], empty_sandbox: SandboxProcess,  # noqa: F811
    arun: Any, tmp_path: Path, _uploads_here: Path,  # noqa: F811
) -> None:  # fmt: skip
    batch = with_flags(empty_sandbox, generate(tmp_path / "batch.ndjson", 3_000, "--seed", "31"))
    script = textwrap.dedent(CHILD).format(
        root=str(ROOT), config=str(tmp_path / "child-config"), url=empty_sandbox.url,
        admin=empty_sandbox.admin_token, client=empty_sandbox.client_token, path=str(batch),
        kill_at=8,
    )  # fmt: skip
    env = {**os.environ, "FLAGDESK_DATA_DIR": str(_uploads_here)}
    child = subprocess.run([sys.executable, "-c", script], env=env, timeout=120,
                           capture_output=True, text=True)  # fmt: skip
    assert child.returncode == -signal.SIGKILL, child.stderr
    (journal,) = sorted(_uploads_here.glob(f"uploads/*/{LEDGER_NAME}"))
    killed = Ledger.open(journal, write=False)  # the ledger the crash left, read back
    accepted = [e for e in killed.entries if e.state is State.ACCEPTED]
    # some answers were recorded before the kill (not all 8 counted: the ledger's lines for the
    # last answers may not be written yet, which the resume's check then decides)
    assert accepted and killed.unfinished()
    assert (journal.parent / BASELINE_NAME).exists()

    session = connect(empty_sandbox)
    tool = open_tool(qtbot, session)
    model = tool.model
    qtbot.waitUntil(lambda: len(model.unfinished) == 1)  # offered at once, nothing clicked
    assert model.unfinished[0].folder == journal.parent
    assert model.unfinished[0].pending.bodies == len(killed.unfinished())
    resume_and_check_stored(qtbot, tool, session, arun, empty_sandbox, batch, metrics=3_000)


def test_uploading_files_whose_upload_is_unfinished_offers_to_resume_it(
    qtbot: Any, connect: Callable[..., Session], empty_sandbox: SandboxProcess,  # noqa: F811
    arun: Any, tmp_path: Path,
) -> None:  # fmt: skip
    batch = with_flags(empty_sandbox, generate(tmp_path / "batch.ndjson", 2_000, "--seed", "32"))
    session = connect(empty_sandbox)
    tool = open_tool(qtbot, session)
    model = tool.model
    tool.add_files([str(batch)])
    wait_loaded(qtbot, model)

    upload_then_cancel(qtbot, tool, after=3)
    first = model.report
    assert first is not None and not first.complete
    qtbot.waitUntil(lambda: len(model.unfinished) == 1)

    tool.upload_button.click()  # the same files again
    qtbot.waitUntil(lambda: not model.uploading and bool(model.again_question), timeout=30_000)
    qtbot.waitUntil(lambda: model.resume_offer is not None)
    assert model.report is None  # nothing was sent
    assert "stopped unfinished" in model.again_question
    assert "an upload of this batch is unfinished" in tool.report_label.text()
    assert tool.resume_offer_button.isVisible() and tool.again_button.isVisible()
    tool.resume_offer_button.click()
    wait_uploaded(qtbot, model)
    second = model.report
    assert second is not None and second.complete and second.ledger == first.ledger
    expected = file_rows(batch)
    client = arun(session.client())
    assert arun(stored_rows(client, {k[0] for k in expected}), timeout=60_000) == expected


def test_a_body_in_doubt_is_sent_anyway_only_once_the_risk_is_confirmed(
    qtbot: Any, connect: Callable[..., Session], empty_sandbox: SandboxProcess,  # noqa: F811
    arun: Any, tmp_path: Path,
) -> None:  # fmt: skip
    """No baseline (as without an admin token), a body left `sent` after the server stored it:
    Resume leaves it in doubt and says why; "Send in doubt anyway…" asks first, naming the risk,
    and the server then counts it twice, as it said it might."""
    batch = generate(tmp_path / "batch.ndjson", 200, "--seed", "33")
    know(empty_sandbox, batch)
    session = connect(empty_sandbox)
    tool = open_tool(qtbot, session)
    model = tool.model
    tool.add_files([str(batch)])
    wait_loaded(qtbot, model)
    tool.upload_button.click()
    wait_uploaded(qtbot, model)
    done = model.report
    assert done is not None and done.complete and done.accepted.bodies == 1
    folder = done.ledger.parent
    answer_lost_on_disk(folder, 0)
    (folder / BASELINE_NAME).unlink()
    model.refresh_unfinished()
    qtbot.waitUntil(lambda: len(model.unfinished) == 1)
    tool.resume_button.click()
    wait_uploaded(qtbot, model)
    left = model.report
    assert left is not None and left.in_doubt == 1 and left.requests == 0
    assert "no baseline" in left.doubt_reason
    assert tool.resend_button.isVisible()
    assert "count it twice" in model.resend_question
    tool.resend_button.click()
    box = tool.resend_flow.box
    assert box is not None and "count it twice" in box.text()
    box.cancel_button.click()  # Cancel: nothing sent
    qtbot.waitUntil(lambda: tool.resend_flow.box is None)
    assert not model.uploading and model.report is left
    tool.resend_button.click()
    box = tool.resend_flow.box
    assert box is not None
    box.action_button.click()
    wait_uploaded(qtbot, model)
    sent = model.report
    assert sent is not None and sent.complete and sent.resent_in_doubt == 1
    assert any("may have counted it twice" in line for line in model.report_lines())
    expected = file_rows(batch)
    client = arun(session.client())
    twice = {k: (2 * y, 2 * n, 2 * v) for k, (y, n, v) in expected.items()}
    assert arun(stored_rows(client, {k[0] for k in expected}), timeout=60_000) == twice
