"""Confirm before accusing: does a per-item difference hold against the scorer's noise?

Pure module. An item about to fail on a difference (a counterfactual gap, a perturbation shift, a
movement) has its texts re-scored; the observations of each text ("side") then go here. Every
pair of sides gets the interval of its difference of means (see ``difference_interval``), at
``confidence`` Bonferroni-corrected over the pairs compared (and over ``family`` items when the
caller judges several at once). The difference is **confirmed** when the worst pair's interval lies
entirely beyond the limit:

    |x̄ₐ − x̄_b| − q · s · √(1/nₐ + 1/n_b) > limit,   q = t(1 − α / (2·pairs·family), df)

with ``s`` the measured noise SD (``df`` degrees of freedom). With no measured noise the
interval has zero width and the first difference stands, exactly as a deterministic check.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pytest_screeneval.evidence.intervals import Interval, difference_interval

__all__ = ["Confirmation", "confirm_spread"]

_EPS = 1e-9


@dataclass(frozen=True)
class Confirmation:
    """The verdict on one difference, oriented so that ``high_side`` scored higher."""

    first_seen: float  # the spread of the first answers, which made the item about to fail
    high_side: str
    low_side: str
    interval: Interval  # of mean(high_side) − mean(low_side)
    observations: int  # fewest observations on either side of the worst pair
    limit: float
    noise_sd: float

    @property
    def confirmed(self) -> bool:
        return self.interval.magnitude_low > self.limit + _EPS

    @property
    def within_limit(self) -> bool:
        """The interval shows the difference is at most the limit (pure noise)."""
        return self.interval.magnitude_high <= self.limit + _EPS

    @property
    def exact(self) -> bool:
        return self.noise_sd <= 0.0

    def describe(self, noun: str, sides: str) -> str:
        """One line for the item's block, e.g. ``gap 11.0 points; confirmed by 3 re-scores…``."""
        head = f"{noun} {self.first_seen:.1f} points"
        if self.exact:
            return f"{head}; the scorer measured no noise, so the difference is exact"
        repeats = self.observations - 1
        how = "confirmed" if self.confirmed else "not confirmed"
        return (
            f"{head}; {how} by {repeats} re-score{'s' if repeats != 1 else ''} of each {sides}: "
            f"mean {noun} {self.interval.estimate:.1f}, {self.interval.shown()} "
            f"({self.high_side} vs {self.low_side}; noise SD {self.noise_sd:.1f})"
        )

    def as_dict(self) -> dict[str, object]:
        return {
            "first_seen": self.first_seen,
            "mean": self.interval.estimate,
            "ci_low": self.interval.low,
            "ci_high": self.interval.high,
            "confidence": self.interval.confidence,
            "observations": self.observations,
            "sides": [self.high_side, self.low_side],
            "confirmed": self.confirmed,
            "noise_sd": self.noise_sd,
        }


def confirm_spread(
    observations: Mapping[str, Sequence[float]],
    *,
    noise_sd: float,
    df: float | None,
    limit: float,
    confidence: float = 0.95,
    family: int = 1,
) -> Confirmation:
    """Judge the largest difference between any two sides against the limit and the noise.

    ``observations``: side → overall scores, first answer first. Needs two sides with scores.
    """
    sides = [side for side, values in observations.items() if values]
    if len(sides) < 2:
        raise ValueError("a difference needs two sides with at least one observation each")
    firsts = {side: observations[side][0] for side in sides}
    first_seen = max(firsts.values()) - min(firsts.values())
    pairs = list(itertools.combinations(sorted(sides), 2))
    best: tuple[tuple[float, float], Confirmation] | None = None
    for a, b in pairs:
        interval = difference_interval(
            observations[a],
            observations[b],
            noise_sd,
            df,
            confidence,
            comparisons=len(pairs) * max(1, family),
        )
        high, low = (a, b) if interval.estimate >= 0 else (b, a)
        if interval.estimate < 0:
            interval = Interval(-interval.estimate, -interval.high, -interval.low, confidence)
        candidate = Confirmation(
            first_seen,
            high,
            low,
            interval,
            min(len(observations[a]), len(observations[b])),
            limit,
            noise_sd,
        )
        rank = (interval.magnitude_low, interval.estimate)
        if best is None or rank > best[0]:
            best = (rank, candidate)
    assert best is not None
    return best[1]
