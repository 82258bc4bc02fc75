"""Resume after a crash, on either side.

- The sandbox is killed (SIGKILL) in the middle of an upload and restarted on the same
  database; Resume checks the bodies in doubt (in flight when the server died) against the
  server's totals and sends exactly the bodies the server lacks: every body is stored exactly
  once.
- The uploading process, on a slow disk, is killed (SIGKILL) in the middle of an upload;
  Resume from the ledger on disk finishes the job with the same guarantee: every body the
  server may have counted has its `sent` line on disk (a request starts only once it is), so
  it is checked, never sent again blindly.
"""

from __future__ import annotations

import asyncio
import secrets
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from app.api.client import AdminClient, RetryPolicy
from app.metrics.batch_upload import record_baseline, run_checked
from app.metrics.ledger import Ledger, State
from app.metrics.upload import UNREACHABLE, Progress, Report, Upload
from sandbox.process import SandboxProcess
from tests.conftest import known_flags
from tests.metrics.test_upload import assert_stored_exactly, make_bodies, rows_of

ROOT = Path(__file__).resolve().parents[2]
QUICK = RetryPolicy(attempts=3, base_delay=0.01, max_delay=0.05)


def sandbox_on(db: Path, admin: str, client: str) -> SandboxProcess:
    return SandboxProcess(db, "--empty", admin_token=admin, client_token=client).start()


def test_sandbox_killed_mid_upload_then_resume_counts_each_answered_body_once(
    tmp_path: Path,
) -> None:
    db = tmp_path / "db.sqlite3"
    admin = "*:*." + secrets.token_hex(16)
    client_token = "default:development." + secrets.token_hex(16)
    bodies = make_bodies(60, "killed", per_body=150)
    folder = tmp_path / "up"
    first_sb = sandbox_on(db, admin, client_token)
    known_flags(first_sb, (f for b in bodies for f in b.features))
    second_sb: SandboxProcess | None = None

    async def main() -> tuple[Report, Report, set[int], set[int], dict[int, int]]:
        nonlocal second_sb
        async with AdminClient(first_sb.url, admin, client_token=client_token) as client:
            upload = await Upload.start(client, bodies, folder=folder, retry=QUICK)
            await record_baseline(client, folder, rows_of(bodies), admin_token=admin,
                                  client_token=None, known_features=None)  # fmt: skip

            def kill_midway(p: Progress) -> None:
                if p.accepted >= 15 and first_sb.running:
                    first_sb.kill()  # no shutdown handler runs

            first = await upload.run(progress=kill_midway)
            answered = {e.index for e in upload.ledger.entries if e.state is State.ACCEPTED}
            doubtful = {e.index for e in upload.ledger.entries if e.in_doubt}
            upload.close()
        second_sb = sandbox_on(db, admin, client_token)
        async with AdminClient(second_sb.url, admin, client_token=client_token) as client:
            resumed = await Upload.resume(client, folder, retry=QUICK)
            second, _ = await run_checked(resumed, settle=0.3)
            counted = await assert_stored_exactly(client, bodies, resumed.ledger)
            resumed.close()
        return first, second, answered, doubtful, counted

    try:
        first, second, answered, doubtful, counted = asyncio.run(main())
    finally:
        first_sb.stop()
        if second_sb is not None:
            second_sb.stop()
    assert first.stopped == UNREACHABLE and "gave up after 3 attempts" in first.error
    assert 15 <= first.accepted.bodies < 60 and first.pending.bodies == 60 - len(answered)
    assert second.complete and second.accepted.bodies == 60 and second.stopped == ""
    # exactly the bodies the server lacks, once each
    assert second.requests == first.pending.bodies - second.found
    assert not answered & doubtful
    assert second.found + second.missing == len(doubtful) and second.in_doubt == 0
    assert set(counted.values()) == {1}  # nothing lost, nothing counted twice


CHILD = """
import asyncio, os, signal, sys, time
sys.path.insert(0, {root!r})
import app.metrics.ledger as ledger_module
from app.api.client import AdminClient
from app.metrics.upload import Upload

class SlowDisk:
    # a slow disk (0.1 s an fsync): requests that did not wait for their `sent` line would
    # be far ahead of the journal when the SIGKILL lands, counted by the server without a
    # trace in the ledger
    def __getattr__(self, name):
        return getattr(os, name)

    @staticmethod
    def fsync(fd):
        time.sleep(0.1)
        os.fsync(fd)

def killed_midway(p):
    if p.accepted >= {kill_at}:
        os.kill(os.getpid(), signal.SIGKILL)  # no handler, no flush: as `kill -9` does

async def main():
    ledger_module.os = SlowDisk()
    async with AdminClient({url!r}, "", client_token={token!r}) as client:
        upload = await Upload.resume(client, {folder!r}, concurrency=4)
        await upload.run(progress=killed_midway)
        upload.close()

asyncio.run(main())
"""


def test_uploader_killed_mid_upload_then_resume_finishes_exactly(tmp_path: Path) -> None:
    """The uploader kills itself (SIGKILL) as its 20th 202 arrives, while its journal is
    behind (a slow disk); the ledger on disk still holds every body the server may have
    counted, as accepted or in doubt, and Resume finishes the job."""
    bodies = make_bodies(80, "uploader-killed", per_body=60)
    folder = tmp_path / "up"
    with SandboxProcess(tmp_path / "db.sqlite3", "--empty") as sb:
        known_flags(sb, (f for b in bodies for f in b.features))
        Ledger.create(bodies, folder=folder, server=sb.url).close()

        async def baseline() -> None:
            async with AdminClient(sb.url, sb.admin_token) as c:
                await record_baseline(c, folder, rows_of(bodies), admin_token=sb.admin_token,
                                      client_token=None, known_features=None)  # fmt: skip

        asyncio.run(baseline())
        script = textwrap.dedent(CHILD).format(
            root=str(ROOT), url=sb.url, token=sb.client_token, folder=str(folder), kill_at=20
        )
        child = subprocess.run([sys.executable, "-c", script], timeout=120)
        assert child.returncode == -signal.SIGKILL

        killed = Ledger.open(folder, write=False)
        answered = {e.index for e in killed.entries if e.state is State.ACCEPTED}
        doubtful = {e.index for e in killed.entries if e.in_doubt}

        async def resume() -> tuple[Report, dict[int, int]]:
            async with AdminClient(sb.url, sb.admin_token, client_token=sb.client_token) as c:
                upload = await Upload.resume(c, folder)
                report, _ = await run_checked(upload, settle=0.3)
                counted = await assert_stored_exactly(c, bodies, upload.ledger)
                upload.close()
                return report, counted

        report, counted = asyncio.run(resume())
    assert report.complete and report.accepted.bodies == 80
    assert report.requests == 80 - len(answered) - report.found
    assert report.found + report.missing == len(doubtful)
    assert set(counted.values()) == {1}
    assert 16 <= len(answered) < 80  # at most one 202 per worker had not reached the disk
