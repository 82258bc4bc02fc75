"""Reconciling the bodies in doubt of an upload with the server's totals. No Qt here.

A body is *in doubt* when a request for it may have reached the server and no answer came back
(the process was killed, the connection was lost, a gateway answered 502 or 504): the server
may have counted it, or not. It is never sent again blindly. Instead:

1. **The baseline.** Before an upload's first request, `read_baseline` reads the server's stored
   totals (yes and no) for every key the batch touches, a key being (flag, application,
   environment, hour window), with the raw metrics read
   (`GET /api/admin/client-metrics/features/:name/raw`, one request per flag; it needs an admin
   API token or a personal access token besides the client token). `Baseline.write` puts them in
   the upload's folder (`baseline.json`, fsynced) before anything is sent.
2. **The check.** When bodies are in doubt (at the end of a run, or when an upload is resumed)
   `reconcile` waits until the server has stored what it received (`settle_seconds`: Unleash
   aggregates metrics in memory and writes them every few seconds, measured on 8.2 at 2 to
   4.5 s after the 202; the sandbox commits before it answers), reads the totals again, and
   decides per body: for each key, what the server gained since the baseline, less what the
   bodies answered 202 brought, is what the bodies in doubt brought. A body the server holds
   (totals = baseline + accepted + that body) is marked accepted and not sent again; one it
   lacks (= baseline + accepted) is pending and sent again.
3. **What cannot be decided stays in doubt**, with why: no baseline (no admin token, or a
   ledger from an older flagdesk), the raw read refused, keys that moved for another reason (an
   SDK writing the same flag, application and hour meanwhile: no choice of the bodies in doubt
   explains the totals), bodies in doubt sharing keys whose counts explain the totals in more
   than one way (named), totals still moving after the wait. Those are sent again only when
   the person says so (`--resend-in-doubt`, or the window's confirmation naming the risk).

Bodies in doubt sharing keys (several requests in flight at once) are decided together: every
assignment of "counted or not" (or how many times, for a body sent again after an earlier
attempt got no answer) to the bodies of a group sharing keys is tried, and a body is decided
only when every assignment that explains the totals agrees on it.

Only keys the server stores are compared: flags it knows, the client token's environment
(Unleash drops the others); a key older than the raw read reaches (48 hours on Unleash 8.2) is
left out. Metrics without a timestamp are counted by the server in the hour it receives them:
their flag, application and environment are compared over every hour read.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.api.errors import ClientError

if TYPE_CHECKING:
    from app.api.client import AdminClient
    from app.metrics.batch import Row
    from app.metrics.ledger import Entry, Ledger

BASELINE_NAME = "baseline.json"
HOUR_MS = 3_600_000
#: the most hours the raw read goes back on Unleash 8.2 (a larger hoursBack reads 24)
RAW_HOURS_MAX = 48
#: how long after its last request a server has stored what it received: Unleash 8.2 showed
#: posted metrics in the raw read 2.0 to 4.5 s after the 202 (measured on the peer; its
#: metrics are aggregated in memory and flushed on an interval), so twice its 5 s
UNLEASH_SETTLE = 10.0
#: the sandbox commits before it answers 202; a request still in its socket's buffer when the
#: uploader died is read within milliseconds
SANDBOX_SETTLE = 0.3
#: raw reads at a time
READS_AT_ONCE = 8
#: assignments tried per group of bodies in doubt sharing keys; more: undecidable
MAX_ASSIGNMENTS = 4096

#: (flag, application, environment, hour window start in ms, or None: every hour read)
Key = tuple[str, str, str, int | None]
Counts2 = tuple[int, int]

#: what a check decided about a body
HAS = "has"  # the server holds it: marked accepted, not sent again
LACKS = "lacks"  # the server does not: pending, sent again
TWICE = "twice"  # accepted, and an attempt before it was counted too
ONCE = "once"  # accepted, and the attempts before it were not counted
UNDECIDED = "undecided"


class NoBaseline(Exception):
    """The totals cannot be read; `str()` says why."""


@dataclass
class Baseline:
    """The server's totals for a batch's keys before its first request."""

    #: when it was read (seconds since the epoch)
    read_at: float
    #: the client token's environment the keys were restricted to (None: not restricted)
    environment: str | None
    #: (flag, application, environment) whose metrics are compared over every hour read
    folded: set[tuple[str, str, str]]
    totals: dict[Key, Counts2]
    #: the oldest hour window read (ms)
    since: int

    @property
    def features(self) -> set[str]:
        return {k[0] for k in self.totals}

    def to_json(self) -> dict[str, Any]:
        return {
            "read_at": self.read_at,
            "environment": self.environment,
            "since": self.since,
            "folded": sorted(list(f) for f in self.folded),
            "totals": [[*k, *v] for k, v in self.totals.items()],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Baseline:
        return cls(
            read_at=float(data["read_at"]),
            environment=data.get("environment"),
            since=int(data["since"]),
            folded={(str(a), str(b), str(c)) for a, b, c in data.get("folded", [])},
            totals={
                (str(f), str(a), str(e), None if h is None else int(h)): (int(y), int(n))
                for f, a, e, h, y, n in data["totals"]
            },
        )

    def write(self, folder: Path) -> Path:
        """Into `folder/baseline.json`, written whole and fsynced. Blocking."""
        path = folder / BASELINE_NAME
        tmp = folder / (BASELINE_NAME + ".tmp")
        with open(tmp, "w", encoding="utf-8") as out:
            json.dump(self.to_json(), out, separators=(",", ":"))
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
        return path

    @classmethod
    def read(cls, folder: Path) -> Baseline | None:
        """The baseline in `folder`, None when there is none (or it is damaged). Blocking."""
        try:
            return cls.from_json(json.loads((folder / BASELINE_NAME).read_text("utf-8")))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def readable(self, now_ms: int | None = None) -> Baseline:
        """Without the keys the raw read no longer reaches (older than `RAW_HOURS_MAX` hours,
        and, once the hours read no longer cover `since`, the keys summed over every hour)."""
        now_ms = int(time.time() * 1000) if now_ms is None else now_ms
        oldest = now_ms - now_ms % HOUR_MS - (RAW_HOURS_MAX - 2) * HOUR_MS
        whole = self.since >= oldest
        totals = {
            k: v
            for k, v in self.totals.items()
            if (k[3] is None and whole) or (k[3] is not None and k[3] >= oldest)
        }
        return Baseline(
            self.read_at,
            self.environment,
            self.folded,
            totals,
            max(self.since, oldest) if not whole else self.since,
        )

    def key_of(self, feature: str, app: str, environment: str, window: int | None) -> Key | None:
        """The key a metric counts under, None when it is not compared."""
        if self.environment is not None and environment != self.environment:
            return None
        if (feature, app, environment) in self.folded:
            key: Key = (feature, app, environment, None)
        elif window is None or window < self.since:
            return None
        else:
            key = (feature, app, environment, window)
        return key if key in self.totals else None


def hours_back(since: int, now_ms: int | None = None) -> int:
    """The raw read's `hoursBack` that covers the hour `since`, with an hour to spare: Unleash
    8.2 counts it back from the moment of the read (at 04:02, hoursBack=1 gave nothing, 2 the
    hours 03:00 and 04:00), reads 1 to 48 hours, and 24 for any other value (0, 49, "abc")."""
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    now_hour = now_ms - now_ms % HOUR_MS
    return max(2, min(RAW_HOURS_MAX, (now_hour - since) // HOUR_MS + 2))


async def read_totals(
    client: AdminClient, features: Iterable[str], since: int, folded: set[tuple[str, str, str]]
) -> dict[Key, Counts2]:
    """The stored totals of `features` from the hour `since` on, by key (raise `NoBaseline`)."""
    back = hours_back(since)
    gate = asyncio.Semaphore(READS_AT_ONCE)
    totals: dict[Key, Counts2] = {}

    async def one(feature: str) -> None:
        async with gate:
            raw = await client.feature_metrics_raw(feature, back)
        for w in raw.data:
            app = w.appName or ""
            stamp = int(w.timestamp.timestamp() * 1000)
            hour: int | None = stamp - stamp % HOUR_MS
            if (feature, app, w.environment) in folded:
                hour = None
            elif hour is not None and hour < since:
                continue
            key = (feature, app, w.environment, hour)
            yes, no = totals.get(key, (0, 0))
            totals[key] = (yes + w.yes, no + w.no)

    try:
        await asyncio.gather(*(one(f) for f in sorted(set(features))))
    except ClientError as exc:
        raise NoBaseline(f"the server's totals cannot be read ({exc})") from None
    return totals


async def read_baseline(
    client: AdminClient,
    rows: Iterable[Row],
    *,
    admin_token: str,
    environment: str | None,
    known_features: set[str] | None,
) -> Baseline:
    """The totals before an upload, for the keys of `rows` (a batch's preview rows) that the
    server stores: flags it knows (all when `known_features` is None), `environment` (the client
    token's; None: any). Raises `NoBaseline` without an admin token (`admin_token`: the one
    `client` reads with) or when the read fails."""
    if not admin_token or _is_client_token(admin_token):
        raise NoBaseline(
            "no admin API token or personal access token on the connection to read the "
            "server's totals with"
        )
    now = int(time.time() * 1000)
    oldest = now - now % HOUR_MS - (RAW_HOURS_MAX - 2) * HOUR_MS
    keys: set[Key] = set()
    folded: set[tuple[str, str, str]] = set()
    for row in rows:
        if known_features is not None and row.feature not in known_features:
            continue
        if environment is not None and row.environment != environment:
            continue
        if row.window is None:
            folded.add((row.feature, row.app, row.environment))
        elif row.window >= oldest:
            keys.add((row.feature, row.app, row.environment, row.window))
    keys = {k for k in keys if k[:3] not in folded} | {(*f, None) for f in folded}
    since = min((k[3] for k in keys if k[3] is not None), default=now - now % HOUR_MS)
    since = min(since, now - now % HOUR_MS)
    read_at = time.time()
    totals = await read_totals(client, {k[0] for k in keys}, since, folded)
    return Baseline(
        read_at=read_at,
        environment=environment,
        folded=folded,
        totals={k: totals.get(k, (0, 0)) for k in keys},
        since=since,
    )


def _is_client_token(token: str) -> bool:
    from app.metrics.batch import token_environment

    return token_environment(token) not in (None, "*")


def contributions(data: bytes, baseline: Baseline) -> dict[Key, Counts2]:
    """What a body adds to each compared key."""
    body = json.loads(data)
    found: dict[Key, Counts2] = {}
    for item in body.get("metrics", []):
        stamp = item.get("timestamp")
        window = None if stamp is None else _hour(stamp)
        key = baseline.key_of(
            str(item.get("featureName", "")),
            str(item.get("appName", "")),
            str(item.get("environment", "")),
            window,
        )
        if key is None:
            continue
        yes, no = found.get(key, (0, 0))
        found[key] = (yes + int(item.get("yes", 0)), no + int(item.get("no", 0)))
    return {k: v for k, v in found.items() if v != (0, 0)}


def _hour(stamp: Any) -> int | None:
    if isinstance(stamp, int):
        ms = stamp
    else:
        try:
            moment = datetime.fromisoformat(str(stamp))
        except ValueError:
            return None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        ms = int(moment.timestamp() * 1000)
    return ms - ms % HOUR_MS


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the check decided about one body in doubt."""

    index: int
    outcome: str
    #: why it could not be decided ("" when it was)
    why: str = ""


@dataclass
class Reconciliation:
    """The check of an upload's bodies in doubt."""

    verdicts: list[Verdict] = field(default_factory=list)
    #: why nothing could be checked ("" when the totals were read)
    error: str = ""

    def of(self, outcome: str) -> list[Verdict]:
        return [v for v in self.verdicts if v.outcome == outcome]

    @property
    def undecided_text(self) -> str:
        """Why the bodies left in doubt were not decided, one clause per reason."""
        if self.error:
            return self.error
        reasons: dict[str, list[int]] = {}
        for v in self.of(UNDECIDED):
            reasons.setdefault(v.why, []).append(v.index)
        return "; ".join(f"{_bodies(indexes)}: {why}" for why, indexes in sorted(reasons.items()))


def _bodies(indexes: Sequence[int]) -> str:
    shown = ", ".join(str(i) for i in indexes[:10])
    more = f" and {len(indexes) - 10} more" if len(indexes) > 10 else ""
    return f"body {shown}" if len(indexes) == 1 else f"bodies {shown}{more}"


def decide(
    baseline: Baseline,
    now: Mapping[Key, Counts2],
    entries: Sequence[Entry],
    body: Callable[[int], bytes],
) -> list[Verdict]:
    """Decide each body in doubt of `entries` (see the module). `now`: the totals read after
    the wait; `body(index)`: a body's exact bytes. Pure but for reading the bodies."""
    from app.metrics.ledger import State

    doubtful = [e for e in entries if e.doubt > 0]
    if not doubtful:
        return []
    parts = {e.index: contributions(body(e.index), baseline) for e in doubtful}
    watched = {k for c in parts.values() for k in c}
    residual: dict[Key, list[int]] = {}
    for k in watched:
        gained = now.get(k, (0, 0))
        base = baseline.totals.get(k, (0, 0))
        residual[k] = [gained[0] - base[0], gained[1] - base[1]]
    for entry in entries:  # what the bodies answered 202 brought
        if entry.state is not State.ACCEPTED:
            continue
        part = parts.get(entry.index)
        if part is None:
            part = {k: v for k, v in contributions(body(entry.index), baseline).items()
                    if k in watched}  # fmt: skip
        for k, (yes, no) in part.items():
            if k in residual:
                residual[k][0] -= yes
                residual[k][1] -= no
    verdicts: list[Verdict] = []
    for group in _groups(doubtful, parts):
        verdicts += _decide_group(group, parts, residual)
    return sorted(verdicts, key=lambda v: v.index)


def _groups(
    doubtful: Sequence[Entry], parts: Mapping[int, dict[Key, Counts2]]
) -> list[list[Entry]]:
    """The bodies in doubt, in groups that share keys (union-find over the keys)."""
    owner: dict[Key, int] = {}
    parent = {e.index: e.index for e in doubtful}

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for e in doubtful:
        for k in parts[e.index]:
            if k in owner:
                parent[root(e.index)] = root(owner[k])
            else:
                owner[k] = e.index
    groups: dict[int, list[Entry]] = {}
    for e in doubtful:
        groups.setdefault(root(e.index), []).append(e)
    return list(groups.values())


def _decide_group(
    group: Sequence[Entry],
    parts: Mapping[int, dict[Key, Counts2]],
    residual: Mapping[Key, list[int]],
) -> list[Verdict]:
    from app.metrics.ledger import State

    silent = [e for e in group if not parts[e.index]]
    if silent:  # nothing of it can be compared: alone in its group
        why = (
            "none of its metrics can be compared with the server's totals (flags it does not "
            "know, another environment, older than the raw read reaches, or all zero)"
        )
        return [Verdict(e.index, UNDECIDED, why) for e in group]
    ranges = [range(e.doubt + 1) for e in group]
    combos = 1
    for r in ranges:
        combos *= len(r)
    names = ", ".join(str(e.index) for e in group)
    if combos > MAX_ASSIGNMENTS:
        why = f"too many bodies in doubt share their keys (bodies {names})"
        return [Verdict(e.index, UNDECIDED, why) for e in group]
    keys = {k for e in group for k in parts[e.index]}
    fits: list[tuple[int, ...]] = []
    for choice in itertools.product(*ranges):
        if all(_explains(residual[k], k, choice, group, parts) for k in keys):
            fits.append(choice)
    if not fits:
        why = (
            "the server's totals for its flags, applications and hours moved for another "
            "reason (another client writing them meanwhile?): it cannot tell"
        )
        return [Verdict(e.index, UNDECIDED, why) for e in group]
    verdicts = []
    for n, e in enumerate(group):
        values = {choice[n] for choice in fits}
        if len(values) > 1:
            others = ", ".join(str(o.index) for o in group if o is not e)
            why = (
                f"it shares its keys with bodies in doubt ({others}) whose counts explain the "
                "totals as well: it cannot tell which of them the server counted"
            )
            verdicts.append(Verdict(e.index, UNDECIDED, why))
            continue
        (value,) = values
        if e.state is State.ACCEPTED:
            verdicts.append(Verdict(e.index, TWICE if value else ONCE))
        else:
            verdicts.append(Verdict(e.index, HAS if value else LACKS))
    return verdicts


def _explains(
    residual: Sequence[int],
    key: Key,
    choice: Sequence[int],
    group: Sequence[Entry],
    parts: Mapping[int, dict[Key, Counts2]],
) -> bool:
    """The counts `choice` gives the bodies of `group` add up to `residual` for `key`."""
    yes = no = 0
    for times, entry in zip(choice, group, strict=True):
        part = parts[entry.index].get(key, (0, 0))
        yes += times * part[0]
        no += times * part[1]
    return residual[0] == yes and residual[1] == no


async def settled_totals(
    client: AdminClient,
    baseline: Baseline,
    keys: set[Key],
    *,
    wait: float,
    status: Callable[[str], None],
    cancelled: Callable[[], bool] = lambda: False,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> dict[Key, Counts2]:
    """The totals of `keys` once the server has stored what it received: after `wait` seconds
    (counted down through `status`), read until two reads a second apart agree (at most five
    reads). Raises `NoBaseline` when they cannot be read or keep moving."""
    deadline = time.monotonic() + wait
    while (left := deadline - time.monotonic()) > 0:
        if cancelled():
            raise NoBaseline("the check was cancelled")
        status(
            f"Waiting {left:.0f} s for the server to store the metrics it received before "
            "checking the bodies in doubt…"
        )
        await sleep(min(1.0, left))
    status("Reading the server's totals to check the bodies in doubt…")
    features = {k[0] for k in keys}
    last = await read_totals(client, features, baseline.since, baseline.folded)
    if wait <= SANDBOX_SETTLE:
        return last
    for _ in range(4):
        await sleep(1.0)
        again = await read_totals(client, features, baseline.since, baseline.folded)
        if all(again.get(k) == last.get(k) for k in keys):
            return again
        last = again
    raise NoBaseline("the server's totals for these keys kept moving while they were read")


def settle_seconds(server_kind: str) -> float:
    return SANDBOX_SETTLE if server_kind == "sandbox" else UNLEASH_SETTLE


async def reconcile(
    client: AdminClient,
    ledger: Ledger,
    *,
    wait: float,
    status: Callable[[str], None],
    cancelled: Callable[[], bool] = lambda: False,
) -> Reconciliation:
    """Check the bodies in doubt of `ledger` against the server (see the module) and record
    each decision in it. Blocking parts run on worker threads."""
    doubtful = [e for e in ledger.entries if e.doubt > 0]
    if not doubtful:
        return Reconciliation()
    baseline = await asyncio.to_thread(Baseline.read, ledger.folder)
    if baseline is not None:
        baseline = baseline.readable()
    if baseline is None:
        return _undecided(doubtful, "no baseline of the server's totals was recorded before "
                          "this upload started (no admin API token or personal access token "
                          "on the connection, or an older flagdesk made it)")  # fmt: skip
    try:
        parts = await asyncio.to_thread(
            lambda: {e.index: contributions(ledger.body(e.index), baseline) for e in doubtful}
        )
        keys = {k for p in parts.values() for k in p}
        if keys:  # can the totals be read at all (an admin token)? Then wait for them
            await read_totals(client, {min(keys)[0]}, baseline.since, baseline.folded)
        now = await settled_totals(
            client, baseline, keys, wait=wait, status=status, cancelled=cancelled
        )
    except NoBaseline as exc:
        return _undecided(doubtful, str(exc))
    verdicts = await asyncio.to_thread(decide, baseline, now, ledger.entries, ledger.body)
    for v in verdicts:
        with contextlib.suppress(KeyError):
            ledger.mark_checked(v.index, v.outcome)
    return Reconciliation(verdicts)


def _undecided(doubtful: Sequence[Entry], why: str) -> Reconciliation:
    return Reconciliation([Verdict(e.index, UNDECIDED, why) for e in doubtful], error=why)
