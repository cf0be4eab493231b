"""Agreement, movement, slices, self-consistency and decisions, from plain score tables.

Pure module. A *score table* maps ``(case_id, criterion)`` to the score of the original text,
first repeat (``None`` where the scorer failed). The same functions serve the plugin's summary
and ``screeneval diff`` between any two stored runs.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from pytest_screeneval.golden.model import Case, Rubric

__all__ = [
    "CriterionAgreement",
    "Crossing",
    "Movement",
    "ScoreTable",
    "SelfConsistency",
    "SliceAgreement",
    "clustered_interval",
    "compared_items",
    "criterion_agreement",
    "crossings",
    "effective_items",
    "is_within",
    "movements",
    "overall_by_case",
    "self_consistency",
    "slice_agreement",
    "wilson_interval",
]

ScoreTable = Mapping[tuple[str, str], int | None]


def wilson_interval(successes: float, n: float, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval for a proportion, as percentages (0–100). ``n`` may be an
    effective sample size (``clustered_interval``), so both may be fractional."""
    if n <= 0:
        return 0.0, 100.0
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(max(0.0, p * (1 - p)) / n + z * z / (4 * n * n)) / denominator
    # at 0 or n successes the bound is exactly 0 or 100; floating point would leave it a hair off
    low = 0.0 if successes <= 0 else max(0.0, 100 * (centre - half))
    high = 100.0 if successes >= n else min(100.0, 100 * (centre + half))
    return low, high


def effective_items(per_case: Sequence[tuple[int, int]]) -> float:
    """How many independent items a share over ``per_case`` (hits, items) counts as.

    The items of one case share its resume, so they are not independent: a scorer that misreads
    a resume misses several of its criteria at once. The share's variance is estimated with the
    case as the unit (the cluster-robust, CR1 variance of a ratio estimator), and the effective
    number of items is the one a simple random sample would need for that variance:
    ``n / design effect``, kept between the number of cases (every item of a case alike) and
    the number of items (items independent). When every item is a hit, or every one a miss, the
    data cannot show how alike a case's items are, so each case counts once.
    """
    cases = [(hits, items) for hits, items in per_case if items > 0]
    k = len(cases)
    n = sum(items for _, items in cases)
    if k == 0:
        return 0.0
    p = sum(hits for hits, _ in cases) / n
    if k == 1 or p in (0.0, 1.0):
        return float(k)
    clustered = k / (k - 1) * sum((hits - p * items) ** 2 for hits, items in cases) / (n * n)
    independent = p * (1 - p) / n
    if clustered <= 0:
        return float(n)
    return min(float(n), max(float(k), n * independent / clustered))


def clustered_interval(per_case: Sequence[tuple[int, int]], z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson interval of a share over items that come in cases, each given as
    (hits, items): the share itself is over items, its uncertainty over cases
    (``effective_items``)."""
    hits = sum(h for h, _ in per_case)
    items = sum(i for _, i in per_case)
    if items == 0:
        return 0.0, 100.0
    n_eff = effective_items(per_case)
    return wilson_interval(n_eff * hits / items, n_eff, z)


def is_within(case: Case, criterion: str, score: int, tolerance: float) -> bool:
    """Whether a score agrees with people: inside the raters' range when contested, else within
    ``tolerance`` of the expected score."""
    if case.is_contested(criterion):
        low, high = case.rater_range(criterion)  # type: ignore[misc]
        return low <= score <= high
    return abs(score - case.expected_score(criterion)) <= tolerance + 1e-9


@dataclass(frozen=True)
class CriterionAgreement:
    criterion: str
    cases: int  # uncontested items with a score
    exact: int
    within: int
    mae: float
    contested: int  # contested items, counted apart
    contested_within_range: int
    errors: int
    baseline_exact_pct: float | None = None

    @property
    def exact_pct(self) -> float:
        return 100.0 * self.exact / self.cases if self.cases else 0.0

    @property
    def within_pct(self) -> float:
        return 100.0 * self.within / self.cases if self.cases else 0.0

    @property
    def change(self) -> float | None:
        if self.baseline_exact_pct is None:
            return None
        return self.exact_pct - self.baseline_exact_pct


def _agreement_counts(
    cases: Sequence[Case], criterion: str, scores: ScoreTable, tolerance: float
) -> tuple[int, int, int, float, int, int, int]:
    n = exact = within = contested = contested_in = errors = 0
    abs_error = 0.0
    for case in cases:
        score = scores.get((case.id, criterion))
        if (case.id, criterion) not in scores:
            continue
        if score is None:
            errors += 1
            continue
        if case.is_contested(criterion):
            contested += 1
            contested_in += is_within(case, criterion, score, tolerance)
            continue
        expected = case.expected_score(criterion)
        n += 1
        exact += score == expected
        within += abs(score - expected) <= tolerance + 1e-9
        abs_error += abs(score - expected)
    return n, exact, within, (abs_error / n if n else 0.0), contested, contested_in, errors


def criterion_agreement(
    cases: Sequence[Case],
    rubric: Rubric,
    scores: ScoreTable,
    tolerance: float,
    baseline: ScoreTable | None = None,
) -> list[CriterionAgreement]:
    """Per criterion: exact and within-tolerance agreement and MAE, worst exact agreement first."""
    rows = []
    for criterion in rubric.criterion_names:
        n, exact, within, mae, contested, contested_in, errors = _agreement_counts(
            cases, criterion, scores, tolerance
        )
        baseline_pct = None
        if baseline is not None:
            selected = [c for c in cases if (c.id, criterion) in scores]
            bn, bexact, *_ = _agreement_counts(selected, criterion, baseline, tolerance)
            baseline_pct = 100.0 * bexact / bn if bn else None
        rows.append(
            CriterionAgreement(
                criterion, n, exact, within, mae, contested, contested_in, errors, baseline_pct
            )
        )
    return sorted(rows, key=lambda row: (row.exact_pct, row.criterion))


@dataclass(frozen=True)
class SliceAgreement:
    slice: str
    cases: int
    items: int
    within: int
    ci_low: float
    ci_high: float

    @property
    def pct(self) -> float:
        return 100.0 * self.within / self.items if self.items else 0.0


def slice_agreement(
    cases: Sequence[Case], scores: ScoreTable, tolerance: float
) -> list[SliceAgreement]:
    """Per slice: share of (case, criterion) items within tolerance (or the raters' range when
    contested), with a 95% interval clustered by case (``clustered_interval``); worst first. A
    failed score counts as a miss."""
    per_case: dict[str, dict[str, list[int]]] = defaultdict(dict)  # slice -> case -> [hits, n]
    by_id = {case.id: case for case in cases}
    for (case_id, criterion), score in scores.items():
        case = by_id.get(case_id)
        if case is None:
            continue
        hit = score is not None and is_within(case, criterion, score, tolerance)
        for name in case.all_slices:
            counts = per_case[name].setdefault(case_id, [0, 0])
            counts[0] += hit
            counts[1] += 1
    rows = []
    for name, of_cases in per_case.items():
        pairs = [(hits, items) for hits, items in of_cases.values()]
        rows.append(
            SliceAgreement(
                name,
                len(of_cases),
                sum(items for _, items in pairs),
                sum(hits for hits, _ in pairs),
                *clustered_interval(pairs),
            )
        )
    return sorted(rows, key=lambda row: (row.pct, row.slice))


@dataclass(frozen=True)
class Movement:
    case_id: str
    criterion: str
    before: int
    after: int

    @property
    def delta(self) -> int:
        return self.after - self.before


def movements(current: ScoreTable, baseline: ScoreTable) -> list[Movement]:
    """Every item whose score differs from the baseline's, biggest first."""
    moved = [
        Movement(case_id, criterion, before, after)
        for (case_id, criterion), after in current.items()
        if after is not None
        and (before := baseline.get((case_id, criterion))) is not None
        and before != after
    ]
    return sorted(moved, key=lambda m: (-abs(m.delta), m.case_id, m.criterion))


def compared_items(current: ScoreTable, baseline: ScoreTable) -> int:
    return sum(
        1 for key, after in current.items() if after is not None and baseline.get(key) is not None
    )


def overall_by_case(rubric: Rubric, scores: ScoreTable) -> dict[str, float]:
    """Overall score (0–100) per case that has a usable score on every criterion."""
    per_case: dict[str, dict[str, int]] = defaultdict(dict)
    for (case_id, criterion), score in scores.items():
        if score is not None:
            per_case[case_id][criterion] = score
    return {
        case_id: rubric.overall(by_criterion)
        for case_id, by_criterion in per_case.items()
        if all(name in by_criterion for name in rubric.criterion_names)
    }


@dataclass(frozen=True)
class Crossing:
    case_id: str
    before_overall: float
    after_overall: float
    before: str
    after: str


def crossings(rubric: Rubric, current: ScoreTable, baseline: ScoreTable) -> list[Crossing]:
    """Cases whose decision (advance/hold) flips against the baseline."""
    now = overall_by_case(rubric, current)
    then = overall_by_case(rubric, baseline)
    flips = []
    for case_id, after in sorted(now.items()):
        if case_id not in then:
            continue
        before = then[case_id]
        if rubric.decision(before) != rubric.decision(after):
            flips.append(
                Crossing(case_id, before, after, rubric.decision(before), rubric.decision(after))
            )
    return flips


@dataclass(frozen=True)
class SelfConsistency:
    repeats: int
    items: int
    disagreeing: int
    examples: tuple[tuple[str, str, tuple[int, ...]], ...]

    @property
    def pct(self) -> float:
        return 100.0 * self.disagreeing / self.items if self.items else 0.0


def self_consistency(
    repeated: Mapping[tuple[str, str], Iterable[int | None]], repeats: int
) -> SelfConsistency:
    """Share of items whose usable scores are not all equal across the repeats."""
    items = disagreeing = 0
    examples: list[tuple[str, str, tuple[int, ...]]] = []
    for (case_id, criterion), values in sorted(repeated.items()):
        usable = tuple(v for v in values if v is not None)
        if len(usable) < 2:
            continue
        items += 1
        if len(set(usable)) > 1:
            disagreeing += 1
            if len(examples) < 10:
                examples.append((case_id, criterion, usable))
    return SelfConsistency(repeats, items, disagreeing, tuple(examples))
