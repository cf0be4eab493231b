"""Scoring and selection rates by group, with impact ratios, in the style of NYC Local Law 144.

The bias-audit rule of New York City's Department of Consumer and Worker Protection (6 RCNY
§5-300, §5-301) asks, per category of sex, of race/ethnicity and of their intersection: how many
candidates, the *selection rate* (share selected; here: share whose overall score reaches the
advance threshold), the *scoring rate* (share scoring above the median of the full sample) and
the *impact ratio* (a category's rate over the highest category's rate). A category under 2% of
the data may be left out of the impact ratios, and is then still shown with its count and rates;
candidates of unknown category are counted and reported, never guessed.

The screener never decides about a candidate; these rates describe what it scored, for the
people who do decide. Pure module: no pytest, no I/O.

Ratios are computed as exact fractions (:class:`fractions.Fraction`) and compared with the
threshold exactly: 4/6 against 5/6 is exactly 4/5, which 29 CFR 1607.4(D) does not flag, while
float division gives 0.7999999999999999 and would. The float kept for display is the nearest
float to the exact ratio, so a float comparison downstream agrees too.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from pytest_screeneval.evidence.significance import Comparison, compare, flag_text

__all__ = [
    "IMPACT_THRESHOLD",
    "INTERSECTION",
    "MIN_SHARE",
    "RACE",
    "SEX",
    "TIE_RULE",
    "UNKNOWN",
    "UNKNOWN_LABELS",
    "Breakdown",
    "Candidate",
    "CategoryCounts",
    "CategoryRate",
    "GroupRates",
    "breakdown",
    "breakdown_from_counts",
    "exact",
    "group_rates",
]

SEX = "sex"
RACE = "race"
UNKNOWN = "unknown"
# A ratio under four fifths is the usual mark of adverse impact (29 CFR 1607.4(D)).
IMPACT_THRESHOLD = 0.8
# 6 RCNY §5-301(d): a category under 2% of the data may be excluded from the impact ratios.
MIN_SHARE = 0.02
TIE_RULE = (
    "A candidate scores above the median only with a score strictly greater than it; "
    "a score equal to the median does not count as above."
)
INTERSECTION = " × "
# Labels that mean "not known"; compared case-insensitively.
UNKNOWN_LABELS = frozenset({"", UNKNOWN, "none", "n/a", "not disclosed", "prefer not to say"})


@dataclass(frozen=True)
class Candidate:
    """One scored candidate (a case, or a variant of one): overall score and category labels."""

    id: str
    overall: float
    labels: Mapping[str, str] = field(default_factory=dict)

    def label(self, dimension: str) -> str | None:
        """The category on ``dimension`` (``sex × race`` joins two), or None when unknown."""
        if INTERSECTION in dimension:
            parts = [self.label(part) for part in dimension.split(INTERSECTION)]
            if any(part is None for part in parts):
                return None
            return INTERSECTION.join(parts)  # type: ignore[arg-type]
        value = self.labels.get(dimension)
        if value is None or str(value).strip().lower() in UNKNOWN_LABELS:
            return None
        return str(value).strip()


@dataclass(frozen=True)
class CategoryRate:
    """One category's counts, rates and impact ratios (None when excluded or undefined)."""

    category: str
    n: int
    share: float  # of the full sample, 0–1
    scored_above: int  # strictly above the full sample's median
    selected: int  # overall at or above the advance threshold
    scoring_impact_ratio: float | None
    selection_impact_ratio: float | None
    excluded: str | None = None  # why it is left out of the impact ratios
    # the same ratios as exact fractions: what is compared with the threshold
    scoring_impact_exact: Fraction | None = None
    selection_impact_exact: Fraction | None = None
    # the tests of its rate against the reference category's (None for the reference itself,
    # an excluded category, or when there is no ratio)
    scoring_test: Comparison | None = None
    selection_test: Comparison | None = None

    @property
    def scoring_rate(self) -> float:
        return self.scored_above / self.n if self.n else 0.0

    @property
    def selection_rate(self) -> float:
        return self.selected / self.n if self.n else 0.0

    def below(self, threshold: float = IMPACT_THRESHOLD) -> tuple[str, ...]:
        """Which of its impact ratios ('scoring', 'selection') are under ``threshold``."""
        limit = exact(threshold)
        marked = []
        for name, ratio, exact_ratio in (
            ("scoring", self.scoring_impact_ratio, self.scoring_impact_exact),
            ("selection", self.selection_impact_ratio, self.selection_impact_exact),
        ):
            value = exact_ratio if exact_ratio is not None else ratio
            if value is not None and Fraction(value) < limit:
                marked.append(name)
        return tuple(marked)

    def flag(self, kind: str, threshold: float = IMPACT_THRESHOLD) -> str:
        """The words beside its ``kind`` ('scoring' or 'selection') ratio: 'below 0.8,
        significant (p = …)', 'below 0.8, not significant at n = …', or ''."""
        test = self.scoring_test if kind == "scoring" else self.selection_test
        return flag_text(kind in self.below(threshold), threshold, test)


@dataclass(frozen=True)
class Breakdown:
    """The categories of one dimension (sex, race, sex × race), and who is of unknown category."""

    dimension: str
    categories: tuple[CategoryRate, ...]
    unknown: int  # candidates without a known category: excluded from the ratios, reported
    total: int  # the full sample the shares and the median refer to
    note: str = ""  # why no ratio could be computed, when so
    # the category each ratio is taken against: the included category with the highest rate
    scoring_reference: str | None = None
    selection_reference: str | None = None

    def category(self, name: str) -> CategoryRate:
        for rate in self.categories:
            if rate.category == name:
                return rate
        raise KeyError(name)


@dataclass(frozen=True)
class GroupRates:
    """Every breakdown of one sample of candidates, with the figures they rest on."""

    total: int
    median: float | None
    advance_at: float
    min_share: float
    threshold: float
    breakdowns: tuple[Breakdown, ...]
    tie_rule: str = TIE_RULE

    def breakdown(self, dimension: str) -> Breakdown:
        for item in self.breakdowns:
            if item.dimension == dimension:
                return item
        raise KeyError(dimension)


def exact(value: float | Fraction) -> Fraction:
    """A threshold as the fraction it was written as: 0.8 is 4/5, not the float nearest it."""
    return value if isinstance(value, Fraction) else Fraction(repr(float(value)))


def _ratios(rates: Mapping[str, Fraction], included: Iterable[str]) -> dict[str, Fraction] | None:
    """Each included category's rate over the highest included rate, exactly; None when that
    is 0."""
    included = list(included)
    highest = max((rates[name] for name in included), default=Fraction(0))
    if highest <= 0:
        return None
    return {name: rates[name] / highest for name in included}


def _float(value: Fraction | None) -> float | None:
    return None if value is None else float(value)


@dataclass(frozen=True)
class CategoryCounts:
    """What the rates of one category rest on: how many, how many above the median, how many
    selected."""

    n: int
    above: int
    selected: int


def _reference(rates: Mapping[str, Fraction], included: Sequence[str]) -> str | None:
    """The included category with the highest rate (the first by name on a tie); None when
    that rate is 0, as then no ratio is defined."""
    best: str | None = None
    for name in included:  # sorted by name: a later category wins only with a higher rate
        if best is None or rates[name] > rates[best]:
            best = name
    return best if best is not None and rates[best] > 0 else None


def breakdown(
    dimension: str,
    candidates: Sequence[Candidate],
    *,
    median: float,
    advance_at: float,
    min_share: float = MIN_SHARE,
) -> Breakdown:
    """Counts, rates and impact ratios per category of ``dimension`` over ``candidates``.

    ``median`` is the full sample's median overall score (the scoring rate counts scores strictly
    above it); ``advance_at`` the overall score a candidate is selected at. A category holding
    less than ``min_share`` of the full sample is shown but left out of the impact ratios.
    """
    counts: dict[str, list[int]] = {}
    unknown = 0
    for candidate in candidates:
        category = candidate.label(dimension)
        if category is None:
            unknown += 1
            continue
        cell = counts.setdefault(category, [0, 0, 0])
        cell[0] += 1
        cell[1] += candidate.overall > median
        cell[2] += candidate.overall >= advance_at
    return breakdown_from_counts(
        dimension,
        {name: CategoryCounts(*cell) for name, cell in counts.items()},
        unknown=unknown,
        total=len(candidates),
        min_share=min_share,
    )


def breakdown_from_counts(
    dimension: str,
    counts: Mapping[str, CategoryCounts],
    *,
    unknown: int,
    total: int,
    min_share: float = MIN_SHARE,
) -> Breakdown:
    """The breakdown of ``dimension`` from each known category's counts, with the significance
    of each ratio against the reference category (the included one with the highest rate)."""
    names = sorted(counts)
    shares = {n: counts[n].n / total for n in names}
    included = [n for n in names if shares[n] >= min_share]
    scoring_rates = {n: Fraction(counts[n].above, counts[n].n) for n in names}
    selection_rates = {n: Fraction(counts[n].selected, counts[n].n) for n in names}
    scoring = _ratios(scoring_rates, included)
    selection = _ratios(selection_rates, included)
    scoring_ref = _reference(scoring_rates, included)
    selection_ref = _reference(selection_rates, included)
    notes = []
    if names and not included:
        notes.append(f"every category is under {min_share:.0%} of the data")
    elif included and scoring is None:
        notes.append("no included category scores above the median, so no scoring ratio")
    if included and selection is None:
        notes.append("no included category has anyone selected, so no selection ratio")

    def test(name: str, reference: str | None, kind: str) -> Comparison | None:
        if reference is None or name == reference or name not in included:
            return None
        mine, theirs = counts[name], counts[reference]
        if kind == "scoring":
            return compare(reference, mine.above, mine.n, theirs.above, theirs.n)
        return compare(reference, mine.selected, mine.n, theirs.selected, theirs.n)

    rates = tuple(
        CategoryRate(
            category=n,
            n=counts[n].n,
            share=shares[n],
            scored_above=counts[n].above,
            selected=counts[n].selected,
            scoring_impact_ratio=_float(scoring.get(n)) if scoring else None,
            selection_impact_ratio=_float(selection.get(n)) if selection else None,
            excluded=None
            if n in included
            else f"under {min_share:.0%} of the data ({counts[n].n} of {total})",
            scoring_impact_exact=scoring.get(n) if scoring else None,
            selection_impact_exact=selection.get(n) if selection else None,
            scoring_test=test(n, scoring_ref, "scoring"),
            selection_test=test(n, selection_ref, "selection"),
        )
        for n in names
    )
    return Breakdown(
        dimension,
        rates,
        unknown,
        total,
        "; ".join(notes),
        scoring_reference=scoring_ref,
        selection_reference=selection_ref,
    )


def group_rates(
    candidates: Sequence[Candidate],
    advance_at: float,
    *,
    dimensions: Sequence[str] = (SEX, RACE),
    min_share: float = MIN_SHARE,
    threshold: float = IMPACT_THRESHOLD,
) -> GroupRates:
    """Rates by each of ``dimensions`` and by the intersection of the first two.

    The median is taken over every candidate, whatever their categories (the rule's "full
    sample"). With no candidate at all, every breakdown is empty and the median is None.
    """
    median = statistics.median(c.overall for c in candidates) if candidates else None
    wanted = list(dimensions)
    if len(wanted) >= 2:
        wanted.append(INTERSECTION.join(wanted[:2]))
    breakdowns = tuple(
        breakdown(
            dimension,
            candidates,
            median=median if median is not None else 0.0,
            advance_at=advance_at,
            min_share=min_share,
        )
        for dimension in wanted
    )
    return GroupRates(len(candidates), median, advance_at, min_share, threshold, breakdowns)
