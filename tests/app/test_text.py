from __future__ import annotations

from app.text import count_text, counted, noun_for, plural


def test_plural() -> None:
    assert plural(1, "flag") == "1 flag"
    assert plural(0, "flag") == "0 flags"
    assert plural(12_000, "strategy", "strategies") == "12,000 strategies"
    assert plural(1, "strategy", "strategies") == "1 strategy"
    assert noun_for(2, "body", "bodies") == "bodies"
    assert noun_for(1, "body", "bodies") == "body"


def test_count_text() -> None:
    assert count_text(5, 5) == "5 rows"
    assert count_text(1, 1) == "1 row"
    assert count_text(2, 5, "file") == "2 of 5 files"
    assert count_text(0, 1, "user") == "0 of 1 user"
    assert count_text(3, 37_000, "archived flag") == "3 of 37,000 archived flags"
    assert counted("rejected body", "rejected bodies")(1, 2) == "1 of 2 rejected bodies"
