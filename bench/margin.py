"""The margin every benchmark meets its goals with (issue 14, section 7): 20%, so that the
structure added since and the actions that follow have room, and a machine of the same kind that
runs a little slower still meets the goal.

A goal stays what its issue said (`goal` in each benchmark's JSON); beside it each benchmark
reports `margin_goal` (the same figures with the margin taken off) and `met_with_margin`, so the
margin is checked by the program, not by eye:

- a figure that must stay under its goal (seconds, milliseconds, megabytes, a ratio to a bare
  baseline) must stay under 80% of it: 1.5 s -> 1.2 s, 1.5x a bare window -> 1.2x;
- a figure that must reach its goal (metrics per second, a ratio of throughputs) must reach 120%
  of it: 200,000 metrics/s -> 240,000.

Imported by the benchmarks as `margin` (each runs as a script, with `bench/` first on the path).
"""

from __future__ import annotations

from collections.abc import Mapping

MARGIN = 0.2


def at_most(goal: float) -> float:
    """The margin goal of a figure that must stay at or under `goal`."""
    return round(goal * (1 - MARGIN), 6)


def at_least(goal: float) -> float:
    """The margin goal of a figure that must reach `goal`."""
    return round(goal * (1 + MARGIN), 6)


def margin_goals(goals: Mapping[str, float]) -> dict[str, float]:
    """`at_most` of each goal named `..._max`, `at_least` of each named `..._min`."""
    out: dict[str, float] = {}
    for name, goal in goals.items():
        if name.endswith("_max"):
            out[name] = at_most(goal)
        elif name.endswith("_min"):
            out[name] = at_least(goal)
        else:
            raise ValueError(f"a goal's name ends in _max or _min: {name}")
    return out


def meets(figures: Mapping[str, float], goals: Mapping[str, float]) -> bool:
    """Every figure within its goal: `figures[name]` for each `name` of `goals`."""
    return all(
        figures[name] <= goal if name.endswith("_max") else figures[name] >= goal
        for name, goal in goals.items()
    )
