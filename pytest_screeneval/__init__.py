"""pytest-screeneval: regression tests, fairness checks and an audit trail for AI screeners."""

from __future__ import annotations

from pytest_screeneval.errors import GoldenSetError, ScreenevalError, StoreError
from pytest_screeneval.evidence.gate_status import GateStatus
from pytest_screeneval.evidence.gates import GateResult
from pytest_screeneval.golden.model import (
    ORIGINAL,
    Case,
    Criterion,
    Expectation,
    GoldenSet,
    ItemKind,
    Rubric,
    Scale,
    VariantKey,
)
from pytest_screeneval.probes.counterfactual import CounterfactualError, with_attribute
from pytest_screeneval.scoring.protocol import (
    CriterionScore,
    ScoreOutcome,
    Scorer,
    ScorerError,
    ScorerIdentity,
    ScorerUnavailable,
)
from pytest_screeneval.session.summary import RunSummary
from pytest_screeneval.version import __version__

__all__ = [
    "ORIGINAL",
    "Case",
    "CounterfactualError",
    "Criterion",
    "CriterionScore",
    "Expectation",
    "GateResult",
    "GateStatus",
    "GoldenSet",
    "GoldenSetError",
    "ItemKind",
    "Rubric",
    "RunSummary",
    "Scale",
    "ScoreOutcome",
    "Scorer",
    "ScorerError",
    "ScorerIdentity",
    "ScorerUnavailable",
    "ScreenevalError",
    "StoreError",
    "VariantKey",
    "__version__",
    "with_attribute",
]
