"""Metrics batches: load and validate (`read`), preview (`Batch.totals`), split into request
bodies (`split`), upload with a ledger (`upload`, `ledger`), know a batch and a server again
(`identity`). No Qt here."""

from app.metrics.batch import (
    ApplicationItem,
    Batch,
    Cancelled,
    Count,
    Format,
    InputProblem,
    Row,
    Source,
    Totals,
    merge_totals,
    token_environment,
    window_text,
)
from app.metrics.read import load, load_text
from app.metrics.split import Body

__all__ = [
    "ApplicationItem",
    "Batch",
    "Body",
    "Cancelled",
    "Count",
    "Format",
    "InputProblem",
    "Row",
    "Source",
    "Totals",
    "load",
    "load_text",
    "merge_totals",
    "token_environment",
    "window_text",
]
