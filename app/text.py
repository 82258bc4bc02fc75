"""Words for numbers, the same in every window and command (no Qt).

`plural(3, "flag")` is "3 flags"; `count_text(2, 5, "file")` is a table's count line, "2 of 5
files" while a filter hides some and "5 files" when it hides none. One spelling of each, so two
windows never count the same things in two ways.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

__all__ = ["count_text", "counted", "noun_for", "plural"]


def noun_for(n: int, noun: str, plural: str | None = None) -> str:
    """The noun alone, singular for exactly one: ("flag", "flags"); `plural` when "+s" is
    wrong ("strategy", "strategies")."""
    return noun if n == 1 else (plural or noun + "s")


def plural(n: int, noun: str, plural: str | None = None) -> str:
    """'1 flag', '2 flags', '12,000 strategies' (with `plural="strategies"`)."""
    return f"{n:,} {noun_for(n, noun, plural)}"


def count_text(shown: int, total: int, noun: str = "row", plural_noun: str | None = None) -> str:
    """A list's count line: '37 users', or '3 of 37 users' while a filter hides some.

    The noun agrees with the total ('0 of 1 user'); `plural_noun` as for `plural`."""
    if shown == total:
        return plural(total, noun, plural_noun)
    return f"{shown:,} of {plural(total, noun, plural_noun)}"


def counted(noun: str, plural_noun: str | None = None) -> Callable[[int, int], str]:
    """`count_text` for one noun, as a table's `count_text` callback takes it."""

    def text(shown: int, total: int) -> str:
        return count_text(shown, total, noun, plural_noun)

    return text


def first_named(names: Sequence[str], total: int, most: int = 5) -> list[str]:
    """The first `most` of `names` and, when there are more of the `total`, "and N more": how a
    confirmation names what it changes."""
    shown = list(names[:most])
    if total > most:
        shown.append(f"and {total - most:,} more")
    return shown
