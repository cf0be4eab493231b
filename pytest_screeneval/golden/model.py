"""The golden set's model: rubric, cases, expectations, variants, as frozen dataclasses.

Pure module: no pytest, no database, no YAML.
"""

from __future__ import annotations

import hashlib
import json
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final, TypeAlias

__all__ = [
    "ORIGINAL",
    "AttributeValue",
    "Case",
    "Criterion",
    "Expectation",
    "GapPlacement",
    "GoldenSet",
    "ItemKind",
    "Rubric",
    "Scale",
    "VariantAttribute",
    "VariantKey",
    "VariantValue",
    "Variants",
    "canonical_json",
    "sha256_text",
]

RUBRIC_FILE = "rubric.yaml"
VARIANTS_FILE = "variants.yaml"
ALL_CRITERIA = "all"
DECISION = "decision"

VariantKey: TypeAlias = str
"""Which text of a case an answer is for: ``ORIGINAL`` (its own text), ``attribute=value`` (a
counterfactual variant) or ``perturb:kind:sha12`` (a perturbation example)."""

ORIGINAL: Final[VariantKey] = ""


class ItemKind(StrEnum):
    """What one generated item of a case judges; the value is the text stored and shown."""

    CRITERION = "criterion"
    DECISION = "decision"
    COUNTERFACTUAL = "counterfactual"
    PERTURBATION = "perturbation"


def sha256_text(text: str) -> str:
    """The sha256 of a text's UTF-8 bytes, as hex: how inputs are frozen."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# made once: json.dumps with options builds an encoder on every call (same output)
_CANONICAL = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
)


def canonical_json(value: Any) -> str:
    """A stable JSON rendering (sorted keys, no spaces) used for every sha of structured data."""
    return _CANONICAL.encode(value)


# --------------------------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scale:
    min: int
    max: int

    def contains(self, score: float) -> bool:
        return self.min <= score <= self.max


@dataclass(frozen=True)
class Criterion:
    name: str
    description: str
    weight: float = 1.0
    # level -> keywords; read by the offline keyword scorer only
    keywords: Mapping[int, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class Rubric:
    id: str
    version: str
    scale: Scale
    advance_at: float
    criteria: tuple[Criterion, ...]

    @property
    def criterion_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.criteria)

    def criterion(self, name: str) -> Criterion:
        for criterion in self.criteria:
            if criterion.name == name:
                return criterion
        raise KeyError(name)

    def overall(self, scores: Mapping[str, float]) -> float:
        """Overall score 0–100: the weighted mean of each criterion's place on the scale."""
        span = self.scale.max - self.scale.min
        total_weight = sum(c.weight for c in self.criteria)
        weighted = sum(c.weight * (scores[c.name] - self.scale.min) / span for c in self.criteria)
        return 100.0 * weighted / total_weight

    def decision(self, overall: float) -> str:
        return "advance" if overall >= self.advance_at else "hold"

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "version": self.version,
            "scale": {"min": self.scale.min, "max": self.scale.max},
            "advance_at": self.advance_at,
            "criteria": [
                {
                    "name": c.name,
                    "description": c.description,
                    "weight": c.weight,
                    "keywords": {int(k): list(v) for k, v in sorted(c.keywords.items())},
                }
                for c in self.criteria
            ],
        }

    @property
    def sha(self) -> str:
        """sha256 of the canonical rubric: changes whenever a scorer could see a difference."""
        return sha256_text(canonical_json(self.as_dict()))


@dataclass(frozen=True)
class Expectation:
    """A person's expected score for one criterion, and who decided it when."""

    criterion: str
    score: int
    set_by: str
    set_at: str  # ISO date or datetime, as written


@dataclass(frozen=True)
class GapPlacement:
    """An insert-type attribute (a career-gap line): its current value and where the line goes."""

    value: str | None
    after: str


AttributeValue = str | GapPlacement


@dataclass(frozen=True)
class Case:
    id: str
    label: str
    rubric: str
    input_text: str
    expected: Mapping[str, Expectation]
    slices: tuple[str, ...] = ()
    ratings: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    attributes: Mapping[str, AttributeValue] = field(default_factory=dict)
    demographics: Mapping[str, str] = field(default_factory=dict)
    xfail: Mapping[str, str] = field(default_factory=dict)
    retired_at: str | None = None
    source: str = ""
    path: str = ""  # where it was loaded from (relative), for messages and node ids

    @property
    def input_sha256(self) -> str:
        return sha256_text(self.input_text)

    @property
    def all_slices(self) -> tuple[str, ...]:
        """The main slice (label) first, then the extra slice tags, without repeats."""
        return tuple(dict.fromkeys((self.label, *self.slices)))

    def expected_score(self, criterion: str) -> float:
        """The median of the raters where there are ratings, else the recorded expectation."""
        rated = self.ratings.get(criterion)
        if rated:
            return float(statistics.median(rated.values()))
        return float(self.expected[criterion].score)

    def rater_range(self, criterion: str) -> tuple[int, int] | None:
        rated = self.ratings.get(criterion)
        if not rated:
            return None
        return min(rated.values()), max(rated.values())

    def is_contested(self, criterion: str) -> bool:
        """Raters disagree by 2 or more points on this criterion."""
        spread = self.rater_range(criterion)
        return spread is not None and spread[1] - spread[0] >= 2

    def xfail_reason(self, criterion: str) -> str | None:
        return self.xfail.get(criterion) or self.xfail.get(ALL_CRITERIA)


@dataclass(frozen=True)
class VariantValue:
    value: str | None
    groups: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class VariantAttribute:
    name: str
    kind: str  # "replace" (a name, a college) or "insert" (a career-gap line)
    values: tuple[VariantValue, ...]


@dataclass(frozen=True)
class Variants:
    attributes: Mapping[str, VariantAttribute] = field(default_factory=dict)


@dataclass(frozen=True)
class GoldenSet:
    rubric: Rubric
    variants: Variants
    cases: tuple[Case, ...]
    root: str = ""

    @property
    def active_cases(self) -> tuple[Case, ...]:
        return tuple(c for c in self.cases if c.retired_at is None)

    @property
    def sha(self) -> str:
        """sha256 over the rubric and every active case's frozen text and expectations."""
        payload = {
            "rubric": self.rubric.sha,
            "cases": [
                {
                    "id": c.id,
                    "input": c.input_sha256,
                    "expected": {k: v.score for k, v in sorted(c.expected.items())},
                    "ratings": {k: dict(sorted(v.items())) for k, v in sorted(c.ratings.items())},
                }
                for c in sorted(self.active_cases, key=lambda c: c.id)
            ],
        }
        return sha256_text(canonical_json(payload))
