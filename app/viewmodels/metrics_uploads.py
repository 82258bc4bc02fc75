"""What the metrics tool shows of uploads beside the model's state: the unfinished uploads
(`Unfinished`, `find_unfinished`), the progress line (`progress_text`) and the end report's
rejections table (`REJECTION_COLUMNS`).

Why it reads the way it does:

- An upload whose ledger still holds bodies without an outcome (stopped, cancelled, or cut short
  by a crash) is listed from the ledgers in the uploads folder, so Resume can send exactly those
  bodies, also when the window is started after a crash. Reading the ledgers blocks: the model
  runs `find_unfinished` on a worker thread.
- The window's hooks into a running upload (`_WindowHooks`) stay with the model, in `metrics`:
  they set its state, and naming the model from here would make an import cycle.

Plain data and columns, no Qt object.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from app.metrics.ledger import Counts, ledgers_in
from app.metrics.upload import Progress, Rejection
from app.text import plural
from app.viewmodels.table import Column


def rejection_details(r: Rejection) -> str | None:
    return "\n".join(r.details) if r.details else None


REJECTION_COLUMNS: list[Column[Rejection]] = [
    Column("Body", lambda r: r.body, numeric=True),
    Column("Status", lambda r: r.status, numeric=True),
    Column("Metrics", lambda r: r.metrics, numeric=True),
    Column("Server's message", lambda r: r.message, tooltip=rejection_details),
]


@dataclass(frozen=True, slots=True)
class Unfinished:
    """An upload whose ledger still holds bodies without an outcome."""

    folder: Path
    server: str
    created: datetime | None
    pending: Counts
    total: Counts
    in_doubt: int

    @property
    def label(self) -> str:
        when = self.created.astimezone().strftime("%Y-%m-%d %H:%M") if self.created else "?"
        return (
            f"{when} · {self.server or 'unknown server'} · "
            f"{self.pending.bodies:,} of {plural(self.total.bodies, 'body', 'bodies')} "
            f"pending ({plural(self.pending.metrics, 'metric')})"
            + (f", {self.in_doubt:,} in doubt (checked first)" if self.in_doubt else "")
        )


def find_unfinished(folder: Path | None = None) -> list[Unfinished]:
    """The uploads under `folder` (default `uploads_dir()`) with bodies still pending, newest
    first. Folders that hold no readable ledger are passed over. Blocking: worker thread."""
    found = []
    for ledger in ledgers_in(folder):
        unfinished = ledger.unfinished()
        if not unfinished:
            continue
        found.append(
            Unfinished(
                folder=ledger.folder,
                server=ledger.server,
                created=ledger.created,
                pending=Counts(len(unfinished), sum(e.metrics for e in unfinished)),
                total=ledger.total,
                in_doubt=len(ledger.in_doubt()),
            )
        )
    return found


def progress_text(p: Progress) -> str:
    """The progress line: "12 of 40 requests · 6,000 of 20,000 metrics · 0.5 of 2.0 MB",
    and the retries."""
    text = (
        f"{p.requests_done:,} of {p.requests_total:,} requests · "
        f"{p.metrics_done:,} of {p.metrics_total:,} metrics · "
        f"{p.bytes_done / 1e6:.1f} of {p.bytes_total / 1e6:.1f} MB"
    )
    if p.retries:
        text += f" · {plural(p.retries, 'retry', 'retries')}"
    return text
