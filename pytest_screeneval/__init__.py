"""pytest-screeneval: regression tests, fairness checks and an audit trail for AI screeners."""

from __future__ import annotations

from pytest_screeneval.errors import GoldenSetError, ScreenevalError, StoreError
from pytest_screeneval.golden.model import Case, Criterion, Expectation, GoldenSet, Rubric, Scale
from pytest_screeneval.probes.counterfactual import CounterfactualError, with_attribute
from pytest_screeneval.scoring.protocol import (
    CriterionScore,
    ScoreOutcome,
    Scorer,
    ScorerError,
    ScorerIdentity,
)

__version__ = "0.1.0"

__all__ = [
    "Case",
    "CounterfactualError",
    "Criterion",
    "CriterionScore",
    "Expectation",
    "GoldenSet",
    "GoldenSetError",
    "Rubric",
    "Scale",
    "ScoreOutcome",
    "Scorer",
    "ScorerError",
    "ScorerIdentity",
    "ScreenevalError",
    "StoreError",
    "__version__",
    "with_attribute",
]
