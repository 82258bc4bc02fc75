"""`app.metrics.reconcile.decide` without a server: each body in doubt decided from the totals,
including bodies in doubt that share keys (several requests in flight at once), and what
cannot be decided said so rather than guessed. And the ledger's records of the decisions."""

from __future__ import annotations

import json
from pathlib import Path

from app.metrics.ledger import Entry, Ledger, State
from app.metrics.reconcile import (
    HAS,
    LACKS,
    ONCE,
    TWICE,
    UNDECIDED,
    Baseline,
    Counts2,
    Key,
    decide,
)

HOUR = 1_795_658_400_000
A: Key = ("flag-a", "app", "development", HOUR)
B: Key = ("flag-b", "app", "development", HOUR)


def body(*metrics: tuple[str, int, int]) -> bytes:
    return json.dumps({"applications": [], "metrics": [
        {"featureName": f, "appName": "app", "environment": "development",
         "timestamp": HOUR + 5, "yes": y, "no": n} for f, y, n in metrics
    ]}).encode()  # fmt: skip


def entry(index: int, state: State = State.SENT, doubt: int = 1) -> Entry:
    return Entry(index, 0, 0, 1, 0, "", state=state, doubt=doubt)


def baseline(**totals: Counts2) -> Baseline:
    keys = {"a": A, "b": B}
    return Baseline(0.0, "development", set(), {keys[k]: v for k, v in totals.items()}, HOUR)


def verdicts(base: Baseline, now: dict[Key, Counts2], entries: list[Entry],
             bodies: dict[int, bytes]) -> dict[int, str]:  # fmt: skip
    return {v.index: v.outcome for v in decide(base, now, entries, bodies.__getitem__)}


def test_one_body_in_doubt_counted_or_not() -> None:
    base = baseline(a=(10, 10))
    bodies = {0: body(("flag-a", 5, 1)), 1: body(("flag-a", 2, 2))}
    entries = [entry(0, State.ACCEPTED, 0), entry(1)]
    assert verdicts(base, {A: (17, 13)}, entries, bodies) == {1: HAS}
    assert verdicts(base, {A: (15, 11)}, entries, bodies) == {1: LACKS}
    # another client wrote the same flag, application and hour meanwhile: it cannot tell
    (v,) = decide(base, {A: (16, 11)}, entries, bodies.__getitem__)
    assert v.outcome == UNDECIDED and "moved for another reason" in v.why


def test_bodies_in_doubt_sharing_keys_are_decided_together() -> None:
    """Three requests in flight at once, all for flag-a: their different counts tell which the
    server holds."""
    base = baseline(a=(0, 0), b=(0, 0))
    bodies = {0: body(("flag-a", 1, 0)), 1: body(("flag-a", 2, 0)), 2: body(("flag-a", 4, 0))}
    entries = [entry(0), entry(1), entry(2)]
    assert verdicts(base, {A: (5, 0)}, entries, bodies) == {0: HAS, 1: LACKS, 2: HAS}
    assert verdicts(base, {A: (0, 0)}, entries, bodies) == {0: LACKS, 1: LACKS, 2: LACKS}


def test_bodies_whose_counts_explain_the_totals_alike_are_undecided_and_named() -> None:
    """Two bodies in doubt with the same counts for the same key, and the totals grew by one of
    them: either may be the one counted; the third, of another key, is decided."""
    base = baseline(a=(0, 0), b=(0, 0))
    bodies = {0: body(("flag-a", 3, 1)), 1: body(("flag-a", 3, 1)), 2: body(("flag-b", 1, 1))}
    entries = [entry(0), entry(1), entry(2)]
    found = {v.index: v for v in decide(base, {A: (3, 1), B: (1, 1)}, entries, bodies.__getitem__)}
    assert found[2].outcome == HAS
    assert found[0].outcome == found[1].outcome == UNDECIDED
    assert "bodies in doubt (1)" in found[0].why and "(0)" in found[1].why


def test_a_body_sent_again_as_asked_may_be_found_counted_twice() -> None:
    base = baseline(a=(0, 0))
    bodies = {0: body(("flag-a", 2, 1))}
    assert verdicts(base, {A: (4, 2)}, [entry(0, State.ACCEPTED, 1)], bodies) == {0: TWICE}
    assert verdicts(base, {A: (2, 1)}, [entry(0, State.ACCEPTED, 1)], bodies) == {0: ONCE}


def test_metrics_that_cannot_be_compared_leave_the_body_undecided() -> None:
    """Another environment (Unleash drops it) and a flag not in the baseline (unknown to the
    server) give nothing to compare."""
    base = baseline(a=(0, 0))
    other = json.dumps({"applications": [], "metrics": [
        {"featureName": "flag-a", "appName": "app", "environment": "production",
         "timestamp": HOUR, "yes": 1, "no": 1},
        {"featureName": "unknown", "appName": "app", "environment": "development",
         "timestamp": HOUR, "yes": 1, "no": 1},
    ]}).encode()  # fmt: skip
    (v,) = decide(base, {A: (0, 0)}, [entry(0)], {0: other}.__getitem__)
    assert v.outcome == UNDECIDED and "none of its metrics can be compared" in v.why


def test_the_ledger_keeps_each_decision(tmp_path: Path) -> None:
    from tests.metrics.test_upload import make_bodies

    bodies = make_bodies(3, "decisions", per_body=2)
    with Ledger.create(bodies, folder=tmp_path / "up") as ledger:
        for index in range(3):
            ledger.mark_sent(index)
            ledger.mark_lost(index, "connection lost")
        ledger.mark_checked(0, HAS)
        ledger.mark_checked(1, LACKS)
        ledger.mark_resend(2)
        ledger.sync()
    again = Ledger.open(tmp_path / "up", write=False)
    first, second, third = again.entries
    assert first.state is State.ACCEPTED and first.doubt == 0 and first.checked == HAS
    assert second.state is State.PENDING and second.doubt == 0 and second.checked == LACKS
    assert third.state is State.PENDING and third.doubt == 1 and third.resent_in_doubt
    assert [e.index for e in again.sendable()] == [1, 2] and again.in_doubt() == []


def test_keys_the_raw_read_no_longer_reaches_are_left_out() -> None:
    """Unleash 8.2 reads 48 hours back at most: a key older than that is not compared (its
    totals would read 0 and look moved)."""
    base = baseline(a=(1, 1), b=(2, 2))
    assert base.readable(HOUR + 46 * 3_600_000).totals == base.totals
    later = base.readable(HOUR + 47 * 3_600_000)
    assert later.totals == {} and later.since > HOUR
