"""Confirm a movement or a crossing against the baseline before failing on it.

Pure module. The baseline is a stored run: its answers cannot be re-scored, only the current
run's can. Each side's noise is its own run's measurement when that run measured any (the
baseline's probe re-scores are stored with it), else the current run's.

**Movement** of one criterion (levels). With ``x`` the current answers of the original text
(first, the run's repeats, the probe's and the confirmation's re-scores), ``y`` every answer
of the baseline run, ``s``/``s_b`` the level noise of each run:

    D = x̄ − ȳ,   σ_D = √(s²/n + s_b²/m),   D ± k·σ_D,   k = 1/√(1 − confidence)

confirmed when the interval lies entirely beyond the tolerance: ``|D| − k·σ_D > tolerance``.
``k`` is Chebyshev's (√20 ≈ 4.47 at 95%), not Student's t: a criterion's noise is one discrete
level moving ±1 now and then, the law for which Chebyshev's bound is attained. A normal interval
would put a one-level fluke of a scorer with SD 0.3 levels at 3.3 SD (0.1%) when it happens to
one answer in ten; with a one-answer baseline it would confirm about every such fluke.
The level noise ``s`` of a criterion is the larger of its own pooled SD and the SD pooled over
all criteria: a criterion's own estimate rests on a few re-scores and comes out zero by chance
(five re-scores of a criterion changing one time in ten see no change 59% of the time).

**Crossing** (overall points, Student's t as the other overall-score checks). Each side's mean
gets its interval, ``x̄ ± t(1 − α/2, df)·s/√n``; the crossing is confirmed when the current
interval lies entirely on the new side of ``advance_at`` and the baseline's entirely on the old
side (advance: ``≥ advance_at``). A false confirmation needs one interval to miss on one side,
so its rate is at most α/2.

No measured noise on either side gives zero-width intervals: exactly the plain comparison.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import fmean

from pytest_screeneval.evidence.intervals import Interval, two_sided_quantile
from pytest_screeneval.evidence.noise import NoiseEstimate

__all__ = [
    "CrossingCheck",
    "LevelCheck",
    "chebyshev_multiplier",
    "confirm_crossing",
    "confirm_movement",
    "level_sd",
    "mean_interval",
]

_EPS = 1e-9


def chebyshev_multiplier(confidence: float) -> float:
    """k with P(|X − μ| ≥ k·σ) ≤ 1 − confidence for any law of finite variance."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"a confidence needs 0 < confidence < 1, got {confidence}")
    return 1.0 / math.sqrt(1.0 - confidence)


def level_sd(noise: NoiseEstimate, criterion: str) -> float:
    """A criterion's level noise: its own pooled SD, at least the SD pooled over criteria."""
    own = next((c for c in noise.criteria if c.criterion == criterion), None)
    df = sum(c.df for c in noise.criteria)
    pooled = math.sqrt(sum(c.df * c.sd**2 for c in noise.criteria) / df) if df else 0.0
    return max(own.sd if own is not None else 0.0, pooled)


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


@dataclass(frozen=True)
class LevelCheck:
    """A criterion's movement against the baseline, judged against both runs' level noise."""

    before: int  # the baseline's first answer
    after: int  # this run's first answer
    now: int  # answers of this run
    baseline: int  # answers of the baseline run
    baseline_mean: float
    interval: Interval  # of mean(now) − mean(baseline), in levels
    tolerance: float
    noise_sd: float
    baseline_sd: float

    @property
    def exact(self) -> bool:
        return self.interval.half_width <= 0.0

    @property
    def confirmed(self) -> bool:
        return self.interval.magnitude_low > self.tolerance + _EPS

    def describe(self, *, fresh: bool = False) -> str:
        """One line for the item's block; ``fresh``: ``now`` holds only answers after the first
        (the first picked the item), so they are counted as fresh answers, not re-scores."""
        head = f"moved {self.before} → {self.after}"
        if self.exact:
            return f"{head}; the scorer measured no noise, so the movement is exact"
        how = "confirmed" if self.confirmed else "not confirmed"
        mean_now = self.baseline_mean + self.interval.estimate
        noise = f"noise SD {self.noise_sd:.1f} levels"
        if abs(self.baseline_sd - self.noise_sd) > _EPS:
            noise += f", the baseline's {self.baseline_sd:.1f}"
        return (
            f"{head}; {how} by "
            f"{_plural(self.now, 'fresh answer') if fresh else _plural(self.now - 1, 're-score')}"
            f": mean {mean_now:.1f} against "
            f"the baseline's {self.baseline_mean:.1f} ({_plural(self.baseline, 'answer')}), "
            f"difference {self.interval.shown()} ({noise}; Chebyshev)"
        )


def confirm_movement(
    now: Sequence[int],
    before: Sequence[int],
    *,
    noise_sd: float,
    baseline_sd: float,
    tolerance: float,
    confidence: float = 0.95,
) -> LevelCheck:
    """Judge mean(now) − mean(before) against the tolerance (see the module docstring).

    ``now`` and ``before``: levels, first answer first; both need at least one.
    """
    if not now or not before:
        raise ValueError("a movement needs at least one answer on each side")
    estimate = fmean(now) - fmean(before)
    half = chebyshev_multiplier(confidence) * math.sqrt(
        noise_sd**2 / len(now) + baseline_sd**2 / len(before)
    )
    return LevelCheck(
        before[0],
        now[0],
        len(now),
        len(before),
        fmean(before),
        Interval(estimate, estimate - half, estimate + half, confidence),
        tolerance,
        noise_sd,
        baseline_sd,
    )


def mean_interval(
    values: Sequence[float], sd: float, df: float | None, confidence: float = 0.95
) -> Interval:
    """The mean of ``values`` with its t interval for noise ``sd`` (``df`` degrees of freedom)."""
    if not values:
        raise ValueError("a mean needs at least one value")
    mean = fmean(values)
    if sd <= 0:
        return Interval(mean, mean, mean, confidence)
    half = two_sided_quantile(confidence, df) * sd / math.sqrt(len(values))
    return Interval(mean, mean - half, mean + half, confidence)


@dataclass(frozen=True)
class CrossingCheck:
    """A decision flip against the baseline, each side's mean overall score with its interval."""

    before: str  # the baseline's decision (its first answer)
    after: str  # this run's decision (its first answer)
    advance_at: float
    now: Interval
    baseline: Interval
    answers: int
    baseline_answers: int
    noise_sd: float

    def _on_side(self, interval: Interval, decision: str) -> bool:
        # the rubric's own comparison, so that zero-width intervals give its decision exactly
        if decision == "advance":
            return interval.low >= self.advance_at
        return interval.high < self.advance_at

    @property
    def exact(self) -> bool:
        return self.now.half_width <= 0.0 and self.baseline.half_width <= 0.0

    @property
    def confirmed(self) -> bool:
        return self._on_side(self.now, self.after) and self._on_side(self.baseline, self.before)

    def describe(self) -> str:
        head = f"crossed {self.before} → {self.after}"
        if self.exact:
            return f"{head}; the scorer measured no noise, so the crossing is exact"
        how = "confirmed" if self.confirmed else "not confirmed"
        return (
            f"{head}; {how} by {_plural(self.answers - 1, 're-score')}: mean overall "
            f"{self.now.estimate:.1f}, {self.now.shown()}, against the baseline's "
            f"{self.baseline.estimate:.1f} ({_plural(self.baseline_answers, 'answer')}), "
            f"{self.baseline.shown()} (advance at {self.advance_at:g}; "
            f"noise SD {self.noise_sd:.1f} points)"
        )


def confirm_crossing(
    now: Sequence[float],
    before: Sequence[float],
    *,
    advance_at: float,
    noise_sd: float,
    df: float | None,
    baseline_sd: float,
    baseline_df: float | None,
    confidence: float = 0.95,
) -> CrossingCheck:
    """Judge a decision flip (see the module docstring); overall scores, first answer first."""
    if not now or not before:
        raise ValueError("a crossing needs at least one answer on each side")

    def decision(overall: float) -> str:
        return "advance" if overall >= advance_at else "hold"

    return CrossingCheck(
        decision(before[0]),
        decision(now[0]),
        advance_at,
        mean_interval(now, noise_sd, df, confidence),
        mean_interval(before, baseline_sd, baseline_df, confidence),
        len(now),
        len(before),
        noise_sd,
    )
