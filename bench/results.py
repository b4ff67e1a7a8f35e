"""Result rows, targets and the small timing helpers every benchmark part shares."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

REPO = Path(__file__).resolve().parent.parent
"""The repository root (the working directory of every child process)."""


@dataclass(frozen=True, slots=True)
class Target:
    """What "met" means for a row: ours/anchor at most ``limit``, or ours at most ``limit``."""

    kind: Literal["ratio", "absolute"]
    limit: float
    text: str

    def met(self, anchor: float | None, ours: float | None) -> bool | None:
        if ours is None:
            return None
        if self.kind == "absolute":
            return ours <= self.limit
        if anchor is None or anchor <= 0:
            return None
        return ours / anchor <= self.limit


def faster(times: float) -> Target:
    """At least ``times``x faster than the anchor."""
    return Target("ratio", 1.0 / times, f"≥ {times:g}x faster (ratio ≤ {1.0 / times:.2f})")


def at_most(fraction: float) -> Target:
    """At most ``fraction`` of the anchor's time."""
    return Target("ratio", fraction, f"≤ {fraction:g}x anchor")


def under(limit: float, unit: str) -> Target:
    """An absolute ceiling, in the row's unit."""
    return Target("absolute", limit, f"< {limit:g} {unit}")


@dataclass(frozen=True, slots=True)
class Row:
    """One measured quantity, anchor and ours in the same unit (lower is better)."""

    section: str
    name: str
    unit: str
    anchor: float | None
    ours: float | None
    target: Target | None = None
    note: str = ""
    spread: dict[str, list[float]] = field(default_factory=dict)
    """The raw samples per side, kept for the JSON dump."""

    @property
    def ratio(self) -> float | None:
        if self.anchor is None or self.ours is None or self.anchor <= 0:
            return None
        return self.ours / self.anchor

    @property
    def met(self) -> bool | None:
        return None if self.target is None else self.target.met(self.anchor, self.ours)

    def as_json(self) -> dict[str, object]:
        data = asdict(self)
        data["ratio"], data["met"] = self.ratio, self.met
        return data


@dataclass(frozen=True, slots=True)
class Skipped:
    """A part that did not run, and why (shown in the report)."""

    section: str
    reason: str


def best_of(fn: Callable[[], object], repeats: int) -> tuple[float, list[float]]:
    """The fastest of ``repeats`` timed calls of ``fn`` (seconds), and every sample."""
    samples: list[float] = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return min(samples), samples


def interleaved(
    fns: Sequence[Callable[[], object]], repeats: int
) -> list[tuple[float, list[float]]]:
    """:func:`best_of` for several functions, taking their samples in turn.

    Alternating spreads a change in machine load (other processes on a shared box) over
    every side instead of penalising whichever ran during it.
    """
    samples: list[list[float]] = [[] for _ in fns]
    for _ in range(repeats):
        for fn, into in zip(fns, samples, strict=True):
            start = time.perf_counter()
            fn()
            into.append(time.perf_counter() - start)
    return [(min(s), s) for s in samples]


def median(samples: Sequence[float]) -> float:
    return statistics.median(samples)
