"""The metrics tool's preview of its inputs together (`Preview`, made by `make_preview`): the
totals, the rows table (`ROW_COLUMNS`), the application items (`APPLICATION_COLUMNS`,
`application_rows`) and the chart's bars (`Bar`, `feature_bars`, `window_bars`).

Why it reads the way it does:

- `make_preview` runs on a worker thread (the model makes small previews at once), so it makes
  no Qt object: it adds the inputs' sums together (`merge_totals`) and prepares the tables' rows,
  sorted by the columns the tables are sorted by (`prepare_rows`), for the model to show.
- The chart stays readable however large the batch: the `TOP_FEATURES` features by volume, then
  one bar for the others; past `MAX_WINDOW_BARS` hour windows, consecutive windows share a bar.
- The application items are listed once per input holding them, as each input's are sent in its
  own bodies (`application_rows`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from app.metrics import ApplicationItem, Batch, Count, Row, Totals, merge_totals, window_text
from app.text import plural
from app.viewmodels.metrics_inputs import short_name
from app.viewmodels.table import Column, PreparedRows, prepare_rows

#: features drawn one by one in the chart; the rest are one "others" bar
TOP_FEATURES = 8
#: hour windows drawn one by one; more are drawn in groups of consecutive windows
MAX_WINDOW_BARS = 72


ROW_COLUMNS: list[Column[Row]] = [
    Column("Feature", lambda r: r.feature, width=26),
    Column("Application", lambda r: r.app),
    Column("Environment", lambda r: r.environment),
    Column("Hour window (UTC)", lambda r: r.window_text or None,
           tooltip=lambda r: None if r.window is not None
           else "No timestamp: the server counts these at the time it receives them",
           sort_key=lambda r: (r.window is None, r.window or 0)),
    Column("Yes", lambda r: r.yes, numeric=True),
    Column("No", lambda r: r.no, numeric=True),
    Column("Variants", lambda r: r.variants, numeric=True,
           tooltip=lambda r: "The sum of the variant counts"),
]  # fmt: skip


#: the preview's text when no input holds an application item
NO_APPLICATIONS_TEXT = "No application items in this batch (metrics items only)"


def _seconds(value: float | None) -> float | int | None:
    """An interval as written: 15, not 15.0."""
    if value is None:
        return None
    return int(value) if float(value).is_integer() else value


def _via_text(item: ApplicationItem) -> str | None:
    return ", ".join(f"{app} ({instance})" for app, instance in item.connect_via) or None


def _application_source(item: ApplicationItem) -> str:
    where = item.file + (f":{item.line}" if item.line is not None else "")
    return f"{where} {item.path}" if item.path else where


def _strategies_tip(item: ApplicationItem) -> str | None:
    if not item.strategies:
        return "No strategies listed"
    return f"{plural(len(item.strategies), 'strategy', 'strategies')}:\n" + "\n".join(
        item.strategies
    )


#: what the narrow window shows first (the table scrolls): who registers, when and how often
APPLICATION_COLUMNS: list[Column[ApplicationItem]] = [
    Column("Application", lambda a: a.app, tooltip=_application_source),
    Column("Environment", lambda a: a.environment),
    Column("Instance", lambda a: a.instance_id, tooltip=lambda a: a.instance_id),
    Column("Started (UTC)", lambda a: a.started_text or None,
           tooltip=lambda a: None if a.started is not None
           else "No started time: Unleash 8.2 refuses a body holding this item",
           sort_key=lambda a: (a.started is None, a.started or 0)),
    Column("Interval (s)", lambda a: _seconds(a.interval), numeric=True,
           sort_key=lambda a: (a.interval is None, a.interval or 0)),
    Column("SDK version", lambda a: a.sdk_version, tooltip=lambda a: a.sdk_version),
    Column("Strategies", lambda a: ", ".join(a.strategies) or None,
           tooltip=_strategies_tip),
    Column("Connect via", _via_text, tooltip=_via_text),
    Column("File", lambda a: short_name(a.file), tooltip=_application_source),
]  # fmt: skip


def application_rows(batches: Sequence[Batch]) -> list[ApplicationItem]:
    """The application items of every input, one after the other: each input's are sent in
    its own bodies, so an item found in two files is listed (and sent) once per file."""
    return [item for batch in batches for item in batch.application_items()]


@dataclass(frozen=True, slots=True)
class Bar:
    """One bar of the chart: yes and no stacked."""

    label: str
    yes: int
    no: int
    tooltip: str = ""
    #: a second line under the label (the date under an hour), "" for none
    sublabel: str = ""
    #: the bar of every feature past the top ones
    others: bool = False

    @property
    def total(self) -> int:
        return self.yes + self.no


def _bar_tip(title: str, count: Count) -> str:
    return f"{title}\n{count.yes:,} yes, {count.no:,} no ({plural(count.metrics, 'metric item')})"


def feature_bars(totals: Totals, top: int = TOP_FEATURES) -> list[Bar]:
    """The `top` features by volume (yes + no), then one bar for all the others."""
    ranked = sorted(totals.features.items(), key=lambda kv: (-(kv[1].yes + kv[1].no), kv[0]))
    shown = ranked if len(ranked) <= top else ranked[: top - 1]
    bars = [Bar(name, c.yes, c.no, _bar_tip(name, c)) for name, c in shown]
    rest = ranked[len(shown) :]
    if rest:
        yes = sum(c.yes for _, c in rest)
        no = sum(c.no for _, c in rest)
        metrics = sum(c.metrics for _, c in rest)
        tip = _bar_tip(f"{len(rest):,} other features", Count(metrics, yes, no))
        bars.append(Bar(f"{len(rest):,} others", yes, no, tip, others=True))
    return bars


def _hour_label(window: int | None) -> tuple[str, str]:
    """("09:00", "2026-11-20") for a window start; ("none", "no time") without one."""
    if window is None:
        return "none", "no time"
    text = window_text(window)  # 2026-11-20T09:00:00Z
    if "T" not in text:
        return text, ""
    day, _, clock = text.partition("T")
    return clock[:5], day


def window_bars(totals: Totals, most: int = MAX_WINDOW_BARS) -> list[Bar]:
    """One bar per hour window, in time order (metrics without timestamp last); past `most`
    windows, consecutive windows are drawn together so the bars stay readable."""
    items = list(totals.windows.items())
    timed = [(w, c) for w, c in items if w is not None]
    untimed = [c for w, c in items if w is None]
    group = max(1, -(-len(timed) // most))
    bars: list[Bar] = []
    for start in range(0, len(timed), group):
        chunk = timed[start : start + group]
        first = chunk[0][0]
        yes = sum(c.yes for _, c in chunk)
        no = sum(c.no for _, c in chunk)
        metrics = sum(c.metrics for _, c in chunk)
        clock, day = _hour_label(first)
        title = f"Hour window {window_text(first)}"
        if len(chunk) > 1:
            title = f"{len(chunk)} hour windows from {window_text(first)}"
        bars.append(Bar(clock, yes, no, _bar_tip(title, Count(metrics, yes, no)), day))
    for c in untimed:
        bars.append(Bar("none", c.yes, c.no, _bar_tip("Metrics without timestamp", c), "no time"))
    return bars


@dataclass(frozen=True)
class Preview:
    """What the preview shows of the inputs together; made on a worker thread."""

    totals: Totals
    rows: PreparedRows[Row]
    features: list[Bar]
    windows: list[Bar]
    #: the application items of every input (`application_rows`)
    applications: PreparedRows[ApplicationItem]

    @property
    def figures(self) -> list[tuple[str, int, str]]:
        """(title, value, explanation) for the totals line."""
        t = self.totals
        return [
            ("Metrics", t.total.metrics, "Valid metric items"),
            ("Yes", t.total.yes, "The sum of the yes counts"),
            ("No", t.total.no, "The sum of the no counts"),
            ("Variants", t.total.variants, "The sum of the variant counts"),
            ("Applications", len(t.applications), "Applications (appName) the metrics name"),
            ("Features", len(t.features), "Features the metrics name"),
            ("Hour windows", len(t.windows), "One-hour windows the metrics fall in"),
        ]


def make_preview(
    batches: Sequence[Batch],
    sort_columns: Iterable[int] = (),
    application_sort_columns: Iterable[int] = (),
) -> Preview:
    """No Qt: runs on a worker thread. `sort_columns` and `application_sort_columns`: the
    columns the rows and the applications tables are sorted by (their keys made here)."""
    totals = merge_totals([b.totals() for b in batches]) if batches else merge_totals([])
    return Preview(
        totals,
        prepare_rows(ROW_COLUMNS, totals.rows, sort_columns),
        feature_bars(totals),
        window_bars(totals),
        prepare_rows(APPLICATION_COLUMNS, application_rows(batches), application_sort_columns),
    )
