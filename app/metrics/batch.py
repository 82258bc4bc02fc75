"""A batch of metrics: what was read from files or the clipboard, what is wrong with it, what it
adds up to, and the request bodies it splits into.

A batch holds no model per item: each valid item is kept as the compact bytes it will be sent as
(in `split.Segment`s, grouped by application), and the preview's sums are added up while the
items are read, so a GUI can show a million metrics without walking them again.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from app.api.wire import BULK_METRICS_BODY_LIMIT
from app.metrics.split import Body, Segment, Unsendable, pack

Severity = Literal["error", "warning"]
Format = Literal["bulk", "array", "ndjson", "sdk"]

HOUR_MS = 3_600_000
#: unknown features and other environments named one by one in `check()`, per file
CHECK_LISTED = 50


class Cancelled(Exception):
    """`load()` was cancelled through its `cancel` event; nothing of the batch is kept."""


@dataclass(frozen=True, slots=True)
class InputProblem:
    """Something wrong with the input: an error leaves an item (or a whole file) out of the
    upload; a warning is about what a server accepts and then drops, or would refuse."""

    severity: Severity
    #: the path as given, or "<clipboard>"
    file: str
    #: 1-based; for syntax errors and items whose line is known
    line: int | None
    #: 1-based, in characters
    column: int | None
    #: JSON path within the file, like "metrics[12].yes" or "[3].timestamp"
    path: str | None
    #: what is wrong, a sentence
    message: str

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        parts = [where]
        if self.path:
            parts.append(self.path)
        parts.append(self.message)
        return ": ".join(parts)


@dataclass(frozen=True, slots=True)
class Source:
    """One file (or the clipboard) of a batch, in the format it was found to be in."""

    file: str
    format: Format
    #: valid metric items read from it
    metrics: int
    #: valid application items read from it
    applications: int
    #: items (or the whole document) left out because invalid
    invalid: int = 0
    #: bytes read
    size: int = 0
    #: valid metric items with yes and no both 0, which Unleash answers 202 to and drops
    zero: int = 0


@dataclass(frozen=True, slots=True)
class Count:
    """Sums over some metric items."""

    metrics: int = 0
    yes: int = 0
    no: int = 0
    #: the sum of all variant counts
    variants: int = 0


def window_text(window: int | None) -> str:
    """A window start (milliseconds since the epoch) as RFC 3339 in UTC, like
    "2026-11-21T10:00:00Z"; "" for a metric without timestamp (the server then uses the time it
    receives the body)."""
    if window is None:
        return ""
    try:
        moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=window)
    except OverflowError:
        return f"{window} ms"
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


@dataclass(frozen=True, slots=True)
class Row:
    """One row of the preview table: the sums of one feature, application, environment and
    one-hour window."""

    feature: str
    app: str
    environment: str
    #: start of the one-hour window in milliseconds since the epoch (floored to the hour);
    #: None for metrics without timestamp
    window: int | None
    metrics: int
    yes: int
    no: int
    variants: int

    @property
    def window_text(self) -> str:
        return window_text(self.window)


@dataclass(frozen=True, slots=True)
class Totals:
    """The preview's aggregates, made from sums gathered while loading (no item is read again).

    `windows` and `feature_windows` give the chart of yes/no per hour window and per feature
    and window; keys None stand for metrics without timestamp."""

    #: sorted by feature, app, environment, window
    rows: list[Row]
    total: Count
    features: dict[str, Count]
    applications: dict[str, Count]
    environments: dict[str, Count]
    windows: dict[int | None, Count]
    feature_windows: dict[tuple[str, int | None], Count]
    #: per variant name, the sum of its counts
    variants: dict[str, int]
    #: distinct application items (registrations) that will be sent
    application_items: int


@dataclass(frozen=True, slots=True)
class ApplicationItem:
    """One distinct application item (registration) of a batch, as it will be sent: what the
    preview lists beside the metrics, read back from the stored bytes (already validated)."""

    app: str
    environment: str
    instance_id: str
    sdk_version: str | None
    #: milliseconds since the epoch, whether the item gave an integer or a date-time string
    #: (a string without offset is taken as UTC, as for metric timestamps); None when absent
    started: int | None
    #: seconds
    interval: float | None
    strategies: tuple[str, ...]
    #: (appName, instanceId) of each proxy or Edge the SDK connects through
    connect_via: tuple[tuple[str, str], ...]
    #: the path as given, or "<clipboard>"
    file: str
    line: int | None
    #: JSON path within the file, like "applications[1]"; "" for an SDK payload's one item
    path: str

    @property
    def started_text(self) -> str:
        """`started` as RFC 3339 in UTC, like the preview's hour windows; "" when absent."""
        return window_text(self.started)


def _started_ms(value: object) -> int | None:
    """An application item's `started` (an integer, or the date-time string pydantic wrote)
    in milliseconds since the epoch."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    delta = moment - datetime(1970, 1, 1, tzinfo=UTC)
    return delta // timedelta(milliseconds=1)


def _application_item(data: bytes, file: str, line: int | None, path: str) -> ApplicationItem:
    item = json.loads(data)
    via = tuple(
        (str(v.get("appName", "")), str(v.get("instanceId", "")))
        for v in item.get("connectVia") or ()
    )
    interval = item.get("interval")
    return ApplicationItem(
        app=item["appName"],
        environment=item["environment"],
        instance_id=item["instanceId"],
        sdk_version=item.get("sdkVersion"),
        started=_started_ms(item.get("started")),
        interval=interval if isinstance(interval, int | float) else None,
        strategies=tuple(item.get("strategies") or ()),
        connect_via=via,
        file=file,
        line=line,
        path=path,
    )


def _window_key(window: int | None) -> tuple[bool, int]:
    return (window is None, window or 0)


class Batch:
    """The result of `load()` / `load_text()` of one or more sources."""

    def __init__(self) -> None:
        self.sources: list[Source] = []
        self._problems: list[InputProblem] = []
        self._split_problems: list[InputProblem] = []
        self.metric_count = 0
        self.invalid_count = 0
        #: the sums of the CRC-32 of each valid metric item's bytes and of its square: with the
        #: totals, the batch's key (`app.metrics.identity.batch_key`)
        self.crc_sum = 0
        self.crc_squares = 0
        #: the environment SDK payloads that name none were read for (`load(environment=)`)
        self.sdk_environment = "default"
        #: metric items the last `bodies()` call left out because too large for any body
        self.unsendable = 0
        #: application items the last `bodies()` call left out because too large for any body
        self.unsendable_applications = 0
        # appName -> segments of compact metric bytes, in order of first appearance
        self._groups: dict[str, list[Segment]] = {}
        # appName -> distinct application items as (bytes, file, line, path)
        self._applications: dict[str, list[tuple[bytes, str, int | None, str]]] = {}
        # (feature, app, environment, window) -> [metrics, yes, no, variants]
        self._sums: dict[tuple[str, str, str, int | None], list[int]] = {}
        self._variants: dict[str, int] = {}
        # per source: environment -> metrics, feature -> metrics (for check())
        self._environments: list[dict[str, int]] = []
        self._features: list[dict[str, int]] = []
        # invalid items as JSON-ready records, in file order
        self._invalid: list[dict[str, Any]] = []
        self._unsendable: list[Unsendable] = []
        self._totals: Totals | None = None

    def add_problem(self, problem: InputProblem) -> None:
        """A problem of a file as a whole (it cannot be read, it is empty), in file order."""
        self._problems.append(problem)

    def add_source(
        self,
        source: Source,
        *,
        problems: Sequence[InputProblem],
        invalid: Sequence[dict[str, Any]],
        segments: Mapping[str, Segment],
        applications: Sequence[tuple[str, bytes, int | None, str]],
        sums: Mapping[tuple[str, str, str, int | None], Sequence[int]],
        variants: Mapping[str, int],
        crc: tuple[int, int],
    ) -> None:
        """What one file (or paste) adds, once it is read (`sourcefile.File.finish`): its
        problems and invalid items, its metric segments per application, its distinct
        application items (those of earlier files kept once), its sums per feature,
        application, environment and hour, its variants, and its CRC sums of the batch's key
        (`app.metrics.identity`). The totals are made again when next asked for."""
        self._problems.extend(problems)
        self._invalid.extend(invalid)
        for app, segment in segments.items():
            self._groups.setdefault(app, []).append(segment)
        seen = {data for items in self._applications.values() for data, *_ in items}
        for app, data, line, path in applications:
            if data not in seen:
                seen.add(data)
                self._applications.setdefault(app, []).append((data, source.file, line, path))
        environments: dict[str, int] = {}
        features: dict[str, int] = {}
        for key, slot in sums.items():
            total = self._sums.get(key)
            if total is None:
                self._sums[key] = list(slot)
            else:
                for i in range(4):
                    total[i] += slot[i]
            environments[key[2]] = environments.get(key[2], 0) + slot[0]
            features[key[0]] = features.get(key[0], 0) + slot[0]
        for variant, n in variants.items():
            self._variants[variant] = self._variants.get(variant, 0) + n
        self._environments.append(environments)
        self._features.append(features)
        self.metric_count += source.metrics
        self.crc_sum += crc[0]
        self.crc_squares += crc[1]
        self.invalid_count += len(invalid)
        self.sources.append(source)
        self._totals = None

    @property
    def problems(self) -> list[InputProblem]:
        """Errors and warnings of loading, in file order, then those of the last `bodies()`."""
        return self._problems + self._split_problems

    @property
    def errors(self) -> list[InputProblem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[InputProblem]:
        return [p for p in self.problems if p.severity == "warning"]

    @property
    def application_count(self) -> int:
        """Distinct application items."""
        return sum(len(items) for items in self._applications.values())

    def application_items(self) -> list[ApplicationItem]:
        """The distinct application items, grouped by application in order of first
        appearance, each with the file, line and JSON path it came from. Parsed from the stored
        bytes on every call: run it where a batch of many items may take a moment."""
        return [
            _application_item(data, file, line, path)
            for items in self._applications.values()
            for data, file, line, path in items
        ]

    # ------------------------------------------------------------------ bodies

    def iter_bodies(self, max_body: int = BULK_METRICS_BODY_LIMIT) -> Iterator[Body]:
        """`bodies()` one at a time, so that a caller writing them to disk never holds them all.
        The problems about items too large for any body are set when the iterator ends."""
        unsendable: list[Unsendable] = []
        self._split_problems = []
        yield from pack(self._groups, self._applications, max_body, unsendable)
        self._unsendable = unsendable
        self.unsendable = sum(1 for u in unsendable if u.kind == "metric")
        self.unsendable_applications = len(unsendable) - self.unsendable
        self._split_problems = [
            InputProblem(
                "error",
                u.file,
                u.line,
                None,
                u.path,
                f"this {u.kind} item cannot be sent: a body holding only this item takes "
                f"{u.needed:,} bytes, over the body limit of {max_body:,} bytes",
            )
            for u in unsendable
        ]

    def bodies(self, max_body: int = BULK_METRICS_BODY_LIMIT) -> list[Body]:
        """The request bodies, each at most `max_body` bytes and valid on its own: together they
        hold every valid metric exactly once (except items too large for any body, which get an
        error problem and count in `unsendable`) and every distinct application item (except
        those too large for any body: `unsendable_applications`)."""
        return list(self.iter_bodies(max_body))

    # ------------------------------------------------------------------ invalid items

    @property
    def left_out(self) -> int:
        """Items not sent: invalid ones, and (after `bodies()`) metric and application items
        too large for any body. What `write_invalid` writes, one record each."""
        return self.invalid_count + self.unsendable + self.unsendable_applications

    def write_invalid(self, path: Path) -> int:
        """Save the items left out (invalid, or too large for the last `bodies()`) to `path`,
        one JSON object a line: {"file", "line", "column", "problems": [{"path", "message"}],
        "raw"}, where "raw" is the item's text as it was (null for a broken document too large
        to copy: its file is named). Returns the number of items written."""
        records = list(self._invalid)
        for u in self._unsendable:
            message = next(
                (p.message for p in self._split_problems if p.path == u.path and p.file == u.file),
                "too large for any body",
            )
            records.append(
                {
                    "file": u.file,
                    "line": u.line,
                    "column": None,
                    "problems": [{"path": u.path, "message": message}],
                    "raw": u.data.decode("utf-8", "replace"),
                }
            )
        # backslashreplace: a lone surrogate left in a raw text (an SDK payload's, say) is
        # written as its JSON escape, "\ud800", and the line stays JSON
        with open(path, "w", encoding="utf-8", errors="backslashreplace") as out:
            for record in records:
                out.write(json.dumps(record, ensure_ascii=False))
                out.write("\n")
        return len(records)

    # ------------------------------------------------------------------ preview

    def totals(self) -> Totals:
        """The preview's aggregates (made once, then cached)."""
        if self._totals is None:
            self._totals = self._make_totals()
        return self._totals

    def _make_totals(self) -> Totals:
        return totals_of(self._sums, self._variants, self.application_count)

    # ------------------------------------------------------------------ server checks

    def check(
        self, *, token_environment: str | None, known_features: set[str] | None
    ) -> list[InputProblem]:
        """Warnings that depend on the server: metrics for another environment than the client
        token's (`token_environment`, see `token_environment()`; None or "*" skips the check),
        and features the server does not know (`known_features`; None skips the check). Real
        Unleash answers 202 to both and then drops them."""
        out: list[InputProblem] = []
        for source, envs, feats in zip(
            self.sources, self._environments, self._features, strict=True
        ):
            if token_environment and token_environment != "*":
                for env, n in sorted(envs.items()):
                    if env != token_environment:
                        out.append(
                            InputProblem(
                                "warning",
                                source.file,
                                None,
                                None,
                                None,
                                f"{_metrics(n)} for environment {env!r}, but the client token "
                                f"is for {token_environment!r}: Unleash answers 202 and drops "
                                "them",
                            )
                        )
            if known_features is not None:
                unknown = sorted(f for f in feats if f not in known_features)
                for name in unknown[:CHECK_LISTED]:
                    out.append(
                        InputProblem(
                            "warning",
                            source.file,
                            None,
                            None,
                            None,
                            f"feature {name!r} ({_metrics(feats[name])}) is not known to the "
                            "server: Unleash answers 202 and does not store its counts",
                        )
                    )
                if len(unknown) > CHECK_LISTED:
                    rest = len(unknown) - CHECK_LISTED
                    out.append(
                        InputProblem(
                            "warning",
                            source.file,
                            None,
                            None,
                            None,
                            f"{rest:,} more features are not known to the server",
                        )
                    )
        return out


#: (feature, application, environment, window) -> [metrics, yes, no, variants]
Sums = dict[tuple[str, str, str, int | None], list[int]]


def totals_of(sums: Sums, variants: dict[str, int], application_items: int) -> Totals:
    """The preview's aggregates from the sums per feature, application, environment and
    window."""
    rows = [
        Row(f, a, e, w, s[0], s[1], s[2], s[3])
        for (f, a, e, w), s in sorted(
            sums.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2], _window_key(kv[0][3]))
        )
    ]
    features: dict[str, list[int]] = {}
    apps: dict[str, list[int]] = {}
    envs: dict[str, list[int]] = {}
    windows: dict[int | None, list[int]] = {}
    feature_windows: dict[tuple[str, int | None], list[int]] = {}
    total = [0, 0, 0, 0]
    for row in rows:
        counts = (row.metrics, row.yes, row.no, row.variants)
        for table, key in ((features, row.feature), (apps, row.app), (envs, row.environment)):
            _add(table.setdefault(key, [0, 0, 0, 0]), counts)
        _add(windows.setdefault(row.window, [0, 0, 0, 0]), counts)
        _add(feature_windows.setdefault((row.feature, row.window), [0, 0, 0, 0]), counts)
        _add(total, counts)
    return Totals(
        rows=rows,
        total=Count(*total),
        features={k: Count(*v) for k, v in features.items()},
        applications={k: Count(*v) for k, v in apps.items()},
        environments={k: Count(*v) for k, v in envs.items()},
        windows={
            k: Count(*v) for k, v in sorted(windows.items(), key=lambda kv: _window_key(kv[0]))
        },
        feature_windows={
            k: Count(*v)
            for k, v in sorted(
                feature_windows.items(), key=lambda kv: (kv[0][0], _window_key(kv[0][1]))
            )
        },
        variants=dict(sorted(variants.items())),
        application_items=application_items,
    )


def merge_totals(parts: Sequence[Totals]) -> Totals:
    """The totals of several batches as one: rows of the same feature, application,
    environment and window are added together."""
    if len(parts) == 1:
        return parts[0]
    sums: Sums = {}
    variants: dict[str, int] = {}
    for part in parts:
        for r in part.rows:
            _add(sums.setdefault((r.feature, r.app, r.environment, r.window), [0, 0, 0, 0]),
                 (r.metrics, r.yes, r.no, r.variants))  # fmt: skip
        for name, n in part.variants.items():
            variants[name] = variants.get(name, 0) + n
    return totals_of(sums, variants, sum(part.application_items for part in parts))


def _add(into: list[int], sums: tuple[int, int, int, int]) -> None:
    into[0] += sums[0]
    into[1] += sums[1]
    into[2] += sums[2]
    into[3] += sums[3]


def _metrics(n: int) -> str:
    return f"{n:,} metric" + ("s" if n != 1 else "")


def token_environment(token: str) -> str | None:
    """The environment of a client token (`project:environment.secret`, `*:environment.secret`,
    `[]:environment.secret`), or None when the token does not say (a personal token, say)."""
    head = token.strip().removeprefix("Bearer ").split(".", 1)
    if len(head) != 2 or ":" not in head[0]:
        return None
    environment = head[0].rsplit(":", 1)[1]
    return environment or None


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
    "token_environment",
    "window_text",
]
