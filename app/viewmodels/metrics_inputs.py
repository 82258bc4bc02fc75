"""The metrics tool's inputs and the tables that list them: `Input` (one file or one paste, read
into a batch of its own), the sources table (`SourceRow`, `source_rows`, `SOURCE_COLUMNS`, with
the formats' names, `FORMAT_LABELS`, sizes as a person reads them, `megabytes`, and the empty
table's text, `EMPTY_TEXT`) and the problems table (`PROBLEM_COLUMNS`).

Why it reads the way it does:

- One batch per input, not one for all: adding a file reads only that file (not the 100 MB read
  before it again), and Remove drops one batch (`MetricsToolModel` in `metrics` reads them).
- An input that gave nothing to the batch (unreadable, empty, or a broken document) is still a
  row of the sources table, its format empty, so the person sees what became of every input.
- A file is shown by its name without its folder (`short_name`, the tooltip has the path), here
  and in the preview's applications table (`metrics_preview`), which imports it from here.

Plain data and columns, no Qt object: the model's `TableModel`s show them.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from app.metrics import Batch, InputProblem
from app.text import plural
from app.viewmodels.table import Column

FORMAT_LABELS = {
    "bulk": "bulk payload",
    "array": "JSON array",
    "ndjson": "NDJSON",
    "sdk": "SDK payload",
}
FORMAT_HELP = {
    "bulk": "A bulk payload: {applications, metrics}, as POST /api/client/metrics/bulk takes it",
    "array": "A JSON array of metric items",
    "ndjson": "NDJSON: one metric item a line",
    "sdk": "An SDK's client-metrics payload (appName, bucket.toggles), converted to metric items",
}
FORMATS_TEXT = (
    "Formats: a bulk payload {applications, metrics}, a JSON array of metric items, NDJSON "
    "(one metric item a line), or an SDK's client-metrics payload {appName, bucket: {toggles}}."
)
EMPTY_TEXT = (
    "Add metrics files with Add files… or by dropping them here, or paste a batch with "
    "Ctrl+V. Nothing is sent until you press Upload. " + FORMATS_TEXT
)


def megabytes(n: int) -> str:
    """Bytes as a person reads them: "512 bytes", "84 kB", "12.3 MB"."""
    if n < 1000:
        return plural(n, "byte")
    if n < 1_000_000:
        return f"{n / 1000:.0f} kB"
    return f"{n / 1_000_000:.1f} MB"


@dataclass(eq=False)
class Input:
    """One file or one paste, read into a batch of its own."""

    #: the path as given, or "<clipboard>", "<clipboard 2>"...
    name: str
    batch: Batch
    path: Path | None = None
    #: the pasted text (kept so F5 can read it again)
    text: str | None = None

    @property
    def pasted(self) -> bool:
        return self.path is None


@dataclass(frozen=True, slots=True)
class SourceRow:
    """A row of the sources table: one input, in the format it was found to be in."""

    input: Input
    file: str
    #: FORMAT_LABELS' label; None when the input could not be read as any format
    format: str | None
    format_help: str
    metrics: int
    applications: int
    invalid: int
    size: int
    errors: int
    warnings: int

    @property
    def name(self) -> str:
        """The file's name without its folder (the table's cell; the tooltip has the path)."""
        return self.file if self.input.pasted else os.path.basename(self.file) or self.file


def source_rows(inputs: Sequence[Input]) -> list[SourceRow]:
    rows = []
    for item in inputs:
        batch = item.batch
        errors = sum(1 for p in batch.problems if p.severity == "error")
        warnings = len(batch.problems) - errors
        if batch.sources:
            for s in batch.sources:
                row = SourceRow(item, s.file, FORMAT_LABELS.get(s.format, s.format),
                                FORMAT_HELP.get(s.format, ""), s.metrics, s.applications,
                                s.invalid, s.size, errors, warnings)  # fmt: skip
                rows.append(row)
        else:  # unreadable, empty, or a broken document: nothing of it is in the batch
            size = item.path.stat().st_size if item.path and item.path.is_file() else 0
            if item.text is not None:
                size = len(item.text.encode("utf-8"))
            row = SourceRow(item, item.name, None, "Not read: see its problems", 0, 0,
                            batch.invalid_count, size, errors, warnings)  # fmt: skip
            rows.append(row)
    return rows


def _file_tooltip(row: SourceRow) -> str:
    what = "Pasted from the clipboard" if row.input.pasted else row.file
    if row.errors or row.warnings:
        what += f"\n{plural(row.errors, 'error')}, {plural(row.warnings, 'warning')}"
    return what


SOURCE_COLUMNS: list[Column[SourceRow]] = [
    Column("File", lambda r: r.name, tooltip=_file_tooltip, width=34),
    Column("Format", lambda r: r.format, tooltip=lambda r: r.format_help),
    Column("Metrics", lambda r: r.metrics, numeric=True),
    Column("Applications", lambda r: r.applications, numeric=True,
           tooltip=lambda r: "Application items (registrations) read from it"),
    Column("Invalid", lambda r: r.invalid, numeric=True,
           tooltip=lambda r: "Items left out of the upload: see Problems"),
    Column("Size", lambda r: megabytes(r.size), numeric=True, sort_key=lambda r: r.size),
]  # fmt: skip


def short_name(file: str) -> str:
    """A file's name without its folder ("<clipboard>" as it is)."""
    return file if file.startswith("<") else os.path.basename(file) or file


def _short_file(p: InputProblem) -> str:
    return short_name(p.file)


PROBLEM_COLUMNS: list[Column[InputProblem]] = [
    Column("Severity", lambda p: p.severity, width=12),
    Column("File", _short_file, tooltip=lambda p: p.file, width=17),
    Column("Line", lambda p: p.line, numeric=True, width=6),
    Column("Column", lambda p: p.column, numeric=True, width=9),
    Column("JSON path", lambda p: p.path, width=27),
    Column("Message", lambda p: p.message, tooltip=lambda p: str(p)),
]
