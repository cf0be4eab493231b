"""The scorer's own noise, measured from texts it scored more than once.

Pure module. Input: for each re-scored text, its answers (criterion → level), first answer first.
Output, per criterion: the share of re-scores whose level differs from the first answer and their
mean |Δ| in levels; on the overall score: the pooled within-text standard deviation

    s² = Σᵢ Σⱼ (xᵢⱼ − x̄ᵢ)² / Σᵢ (nᵢ − 1)

with Σᵢ (nᵢ − 1) degrees of freedom. A deterministic scorer measures exactly zero.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean

from pytest_screeneval.golden.model import Rubric

__all__ = ["CriterionNoise", "NoiseEstimate", "estimate_noise", "pooled_sd"]


@dataclass(frozen=True)
class CriterionNoise:
    criterion: str
    compared: int  # re-scores compared with their text's first answer
    changed: int  # of those, how many came back at another level
    mean_abs_delta: float  # mean |Δ| in levels over the compared re-scores
    sd: float  # pooled within-text standard deviation, in levels
    df: int = 0  # degrees of freedom of sd

    @property
    def changed_share(self) -> float:
        return self.changed / self.compared if self.compared else 0.0

    def as_dict(self) -> dict[str, object]:
        return {
            "criterion": self.criterion,
            "compared": self.compared,
            "changed": self.changed,
            "changed_share": self.changed_share,
            "mean_abs_delta": self.mean_abs_delta,
            "sd": self.sd,
            "df": self.df,
        }


@dataclass(frozen=True)
class NoiseEstimate:
    texts: int  # texts scored at least twice
    observations: int  # answers of those texts, all repeats together
    overall_sd: float  # pooled within-text SD of the overall score, in points
    df: int  # degrees of freedom of overall_sd
    criteria: tuple[CriterionNoise, ...]

    @property
    def deterministic(self) -> bool:
        """True when every re-score came back exactly as the first answer."""
        return self.overall_sd == 0.0 and all(c.changed == 0 for c in self.criteria)

    @property
    def measured(self) -> bool:
        return self.df > 0

    def describe(self) -> str:
        if not self.measured:
            return "not measured (no text was scored twice)"
        if self.deterministic:
            return f"none: {self.texts} texts re-scored, every answer identical"
        worst = max(self.criteria, key=lambda c: (c.changed_share, c.criterion))
        return (
            f"overall SD {self.overall_sd:.1f} points from {self.texts} re-scored texts; "
            f"most changed criterion {worst.criterion} "
            f"({100 * worst.changed_share:.0f}% of re-scores, mean |Δ| {worst.mean_abs_delta:.2f})"
        )

    def as_dict(self) -> dict[str, object]:
        return {
            "texts": self.texts,
            "observations": self.observations,
            "overall_sd": self.overall_sd,
            "df": self.df,
            "deterministic": self.deterministic,
            "criteria": [c.as_dict() for c in self.criteria],
        }


def pooled_sd(groups: Sequence[Sequence[float]]) -> tuple[float, int]:
    """Pooled within-group standard deviation and its degrees of freedom (groups of one add 0)."""
    squares = 0.0
    df = 0
    for group in groups:
        if len(group) < 2:
            continue
        mean = fmean(group)
        squares += sum((x - mean) ** 2 for x in group)
        df += len(group) - 1
    return (math.sqrt(squares / df) if df else 0.0), df


def estimate_noise(
    samples: Mapping[str, Sequence[Mapping[str, int]]], rubric: Rubric
) -> NoiseEstimate:
    """Noise of the scorer from texts answered more than once; answers missing a criterion are
    left out of that criterion (and of the overall score)."""
    repeated = {key: answers for key, answers in samples.items() if len(answers) >= 2}
    criteria: list[CriterionNoise] = []
    for name in rubric.criterion_names:
        compared = changed = 0
        total_delta = 0.0
        groups: list[list[float]] = []
        for answers in repeated.values():
            levels = [a[name] for a in answers if name in a]
            if len(levels) < 2:
                continue
            groups.append([float(level) for level in levels])
            for level in levels[1:]:
                compared += 1
                changed += level != levels[0]
                total_delta += abs(level - levels[0])
        sd, df = pooled_sd(groups)
        criteria.append(
            CriterionNoise(
                name, compared, changed, total_delta / compared if compared else 0.0, sd, df
            )
        )
    names = set(rubric.criterion_names)
    overall_groups = [
        [rubric.overall(a) for a in answers if names <= set(a)] for answers in repeated.values()
    ]
    overall_sd, df = pooled_sd(overall_groups)
    return NoiseEstimate(
        texts=sum(1 for g in overall_groups if len(g) >= 2),
        observations=sum(len(g) for g in overall_groups if len(g) >= 2),
        overall_sd=overall_sd,
        df=df,
        criteria=tuple(criteria),
    )
