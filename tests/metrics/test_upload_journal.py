"""Each metrics upload, and each resume of one, is one entry in the journal of the connection it
uploads through (`app.metrics.journaling`, through `BatchUpload`), so the History and `flagdesk
journal list` show it with the changes: `flagdesk metrics upload` as a subprocess against the
sandbox, ending with every body accepted (done), with the server unreachable (failed: nothing
reached it) and then resumed (done, a second entry), with a body in doubt (in doubt), and
cancelled with Ctrl+C (its entry completed, saying what was sent and what is left to resume).
The entry names the upload's ledger folder and its counts, and no token."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.actions.journal import JOURNAL_NAME, Entry, State, journal_folder, read_journal
from app.metrics import load
from app.metrics.ledger import LEDGER_NAME
from sandbox.process import SandboxProcess
from tests.conftest import known_flags
from tests.faults import closed_port
from tests.metrics.test_cli_metrics import flagdesk, metric, summary, write_ndjson
from tests.metrics.test_kills import answer_lost_on_disk
from tests.metrics.test_upload import file_rows, generate

REQUEST = {"method": "POST", "path": "/api/client/metrics/bulk"}


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxProcess]:
    with SandboxProcess(tmp_path_factory.mktemp("journal") / "db.sqlite3", "--empty") as sb:
        yield sb


def entries(connection: str, data: Path) -> list[Entry]:
    return read_journal(journal_folder(connection, data) / JOURNAL_NAME)


def batch(sb: SandboxProcess, path: Path, tag: str, count: int) -> Path:
    """`count` metrics of flags `sb` knows, one flag each."""
    names = [f"{tag}-{i}" for i in range(count)]
    known_flags(sb, names)
    return write_ndjson(path, [metric(name) for name in names])


def test_an_upload_is_one_done_entry_naming_its_ledger(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    path = batch(sandbox, tmp_path / "m.ndjson", "journal-done", 40)
    client_only = {"FLAGDESK_CLIENT_TOKEN": sandbox.client_token}
    result = flagdesk("upload", path, "--url", sandbox.url, "--max-body", "1024", "--json",
                      env=client_only, data=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.stderr
    out = summary(result)
    bodies = out["bodies"]
    assert bodies > 1
    (entry,) = entries(sandbox.url, tmp_path)
    assert (entry.action, entry.state, entry.status) == ("metrics.upload", State.DONE, None)
    assert (entry.connection, entry.server, entry.token) == (sandbox.url, sandbox.url, "client")
    assert entry.request == REQUEST and entry.ids == []
    assert entry.before == {"ledger": out["folder"], "bodies": bodies, "metrics": 40,
                            "pending": bodies, "resume": False}  # fmt: skip
    assert entry.message == (
        f"{bodies} accepted, 0 rejected, 0 in doubt, 0 left for resume, of {bodies} bodies "
        f"(40 metrics). Ledger: {out['folder']}"
    )
    journal = (journal_folder(sandbox.url, tmp_path) / JOURNAL_NAME).read_text()
    assert sandbox.client_token not in journal and sandbox.admin_token not in journal


def test_an_unreachable_upload_is_failed_and_its_resume_is_an_entry_of_its_own(
    tmp_path: Path,
) -> None:
    port = closed_port()
    url = f"http://127.0.0.1:{port}"
    path = generate(tmp_path / "m.ndjson", 300, "--seed", "3")
    folder = tmp_path / "upload-1"
    env = {"FLAGDESK_CLIENT_TOKEN": "default:development." + "cd" * 16}
    down = flagdesk("upload", path, "--url", url, "--attempts", "1", "--folder", folder,
                    "--max-body", "4096", "--json", env=env, data=tmp_path)  # fmt: skip
    assert down.returncode == 3, down.stderr
    bodies = summary(down)["bodies"]
    assert bodies > 1
    (failed,) = entries(url, tmp_path)
    assert failed.state is State.FAILED and failed.before["ledger"] == str(folder)
    assert failed.message.startswith("Nothing reached the server: ")
    assert failed.message.endswith(
        f"0 accepted, 0 rejected, 0 in doubt, {bodies} left for resume, of {bodies} bodies "
        f"(300 metrics). Ledger: {folder}"
    )

    with SandboxProcess(tmp_path / "db.sqlite3", "--empty", "--port", str(port),
                        client_token=env["FLAGDESK_CLIENT_TOKEN"]) as sb:  # fmt: skip
        known_flags(sb, (key[0] for key in file_rows(load([path]))))
        resumed = flagdesk("upload", "--resume", folder, "--json", env=env, data=tmp_path)
        assert resumed.returncode == 0, resumed.stderr
    first, second = entries(url, tmp_path)
    assert first.id == failed.id and first.state is State.FAILED
    assert second.state is State.DONE and second.action == "metrics.upload"
    assert second.before == {"ledger": str(folder), "bodies": bodies, "metrics": 300,
                             "pending": bodies, "resume": True}  # fmt: skip
    assert second.message.startswith(f"{bodies} accepted, 0 rejected")


def test_a_resume_that_leaves_a_body_in_doubt_is_in_doubt(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    """A body whose answer was lost (the ledger says `sent`), resumed without an admin token:
    the server's totals cannot be read, the body stays in doubt, and so does the entry."""
    path = batch(sandbox, tmp_path / "m.ndjson", "journal-doubt", 3)
    folder = tmp_path / "uploads" / "doubt"
    client_only = {"FLAGDESK_CLIENT_TOKEN": sandbox.client_token}
    done = flagdesk("upload", path, "--url", sandbox.url, "--folder", folder, env=client_only,
                    data=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    answer_lost_on_disk(folder, 0)
    left = flagdesk("upload", "--resume", folder, "--json", env=client_only, data=tmp_path)
    assert left.returncode == 7, left.stderr
    first, second = entries(sandbox.url, tmp_path)
    assert first.state is State.DONE
    assert second.state is State.IN_DOUBT and second.before["resume"] is True
    assert second.message.startswith("0 accepted, 0 rejected, 1 in doubt, 0 left for resume, ")
    assert second.message.endswith(f"Ledger: {folder}")


def test_ctrl_c_completes_the_entry_with_what_was_sent_and_what_is_left(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    path = generate(tmp_path / "m.ndjson", 4_000, "--seed", "8")
    known_flags(sandbox, (key[0] for key in file_rows(load([path]))))
    folder = tmp_path / "up"
    env = {**os.environ, "FLAGDESK_CLIENT_TOKEN": sandbox.client_token,
           "FLAGDESK_DATA_DIR": str(tmp_path)}  # fmt: skip
    env.pop("FLAGDESK_TOKEN", None)
    child = subprocess.Popen(
        [sys.executable, "-m", "app", "metrics", "upload", str(path), "--url", sandbox.url,
         "--folder", str(folder), "--concurrency", "1", "--max-body", "1024", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    ledger = folder / LEDGER_NAME
    deadline = time.monotonic() + 60
    while not ledger.exists() or ledger.read_bytes().count(b'"e":"accepted"') < 3:
        assert child.poll() is None, child.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.005)
    child.send_signal(signal.SIGINT)
    stdout, stderr = child.communicate(timeout=60)
    assert child.returncode == 130, stderr
    out = summary(subprocess.CompletedProcess(child.args, 130, stdout, stderr))
    accepted, left = out["accepted"]["bodies"], out["pending"]["bodies"]
    assert accepted >= 3 and left > 0
    (entry,) = entries(sandbox.url, tmp_path)
    assert entry.state is State.FAILED  # partly: the rest is left for resume
    assert entry.message == (
        f"Cancelled: {accepted} accepted, 0 rejected, 0 in doubt, {left} left for resume, of "
        f"{out['bodies']} bodies (4,000 metrics). Ledger: {folder}"
    )
