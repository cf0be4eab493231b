"""Krippendorff's alpha against the published worked example, hand-checked cases, and its
invariances. Raters here are invented."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_screeneval.evidence.reliability import (
    RaterAgreement,
    krippendorff_alpha,
    rater_agreement,
)

LEVELS = ("nominal", "ordinal", "interval")

# Krippendorff, K. (2011). "Computing Krippendorff's Alpha-Reliability", section on interval
# (and nominal/ordinal) data with missing values: 4 observers A-D × 12 units, "." = missing.
# Paper: https://repository.upenn.edu/asc_papers/43 (copy seen at
# https://studylib.net/doc/5840696/reliability-data-reliability-data-observed-difference-a).
# The same matrix is the "C" data of R's irr::kripp.alpha example
# (https://search.r-project.org/CRAN/refmans/irr/html/kripp.alpha.html). Published results:
# nominal α = 0.743, ordinal α = 0.815, interval α = 0.849, from n = 40 pairable values
# (unit 12 has a single value and does not pair).
_ = None
PUBLISHED = {
    "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, _, _, _],
    "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, _, 3],
    "C": [_, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, _],
    "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, _],
}
PUBLISHED_UNITS = [
    {rater: row[u] for rater, row in PUBLISHED.items() if row[u] is not None} for u in range(12)
]


@pytest.mark.parametrize(
    ("level", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)]
)
def test_published_worked_example(level: str, published: float) -> None:
    alpha = krippendorff_alpha(PUBLISHED_UNITS, level)  # type: ignore[arg-type]
    assert alpha is not None
    assert round(alpha, 3) == published


def test_published_example_as_columns_with_missing_values_as_none_or_nan() -> None:
    columns = [
        [row[u] if row[u] is not None else math.nan for row in PUBLISHED.values()]
        for u in range(12)
    ]
    for level in LEVELS:
        assert krippendorff_alpha(columns, level) == pytest.approx(  # type: ignore[arg-type]
            krippendorff_alpha(PUBLISHED_UNITS, level)  # type: ignore[arg-type]
        )


def test_rater_agreement_on_the_published_example() -> None:
    result = rater_agreement(
        {f"unit-{u + 1}": ratings for u, ratings in enumerate(PUBLISHED_UNITS)}
    )
    assert isinstance(result, RaterAgreement)
    assert result.alpha_ordinal is not None and round(result.alpha_ordinal, 3) == 0.815
    assert result.alpha_interval is not None and round(result.alpha_interval, 3) == 0.849
    assert (result.n_units, result.n_pairable) == (11, 40)
    # Pairs per unit (same / all), counted by hand: 3/3, 3/6, 6/6, 6/6, 6/6, 0/6, 6/6, 3/6,
    # 6/6, 3/3, 1/1 → 43 of 55.
    assert result.exact_pairwise_share == pytest.approx(43 / 55)


def test_hand_checked_two_raters_three_units() -> None:
    # Units (1,1), (2,2), (1,2). Coincidences: o11 = 2, o22 = 2, o12 = o21 = 1; n1 = n2 = 3,
    # n = 6. Nominal: D_o ∝ o12 + o21 = 2, D_e ∝ 2·n1·n2 = 18 → α = 1 − 5·2/18 = 4/9.
    # With two values the interval (δ² = 1) and ordinal (δ² = 3²) metrics only rescale both
    # disagreements, so all three levels give 4/9.
    data = [{"Rae": 1, "Jo": 1}, {"Rae": 2, "Jo": 2}, {"Rae": 1, "Jo": 2}]
    for level in LEVELS:
        assert krippendorff_alpha(data, level) == pytest.approx(4 / 9)  # type: ignore[arg-type]


def test_hand_checked_metrics_differ() -> None:
    # Units (1,3), (2,2): o13 = o31 = 1, o22 = 2; n1 = 1, n2 = 2, n3 = 1, n = 4.
    # Nominal: observed 2, expected Σ_{c≠k} n_c n_k = 16 − (1 + 4 + 1) = 10 → 1 − 3·2/10 = 0.4.
    # Interval: observed 2·(3−1)² = 8; expected 2·(1·2·1 + 1·1·4 + 2·1·1) = 16 → 1 − 3·8/16.
    # Ordinal: δ²(1,3) = (1 + 2 + 1 − (1 + 1)/2)² = 9, δ²(1,2) = δ²(2,3) = (3 − 3/2)² = 2.25;
    # observed 2·9 = 18, expected 2·(2·2.25 + 1·9 + 2·2.25) = 36 → 1 − 3·18/36 = −0.5.
    data = [[1, 3], [2, 2]]
    assert krippendorff_alpha(data, "nominal") == pytest.approx(0.4)
    assert krippendorff_alpha(data, "interval") == pytest.approx(-0.5)
    assert krippendorff_alpha(data, "ordinal") == pytest.approx(-0.5)


def test_undefined_alpha_is_none() -> None:
    for level in LEVELS:
        assert krippendorff_alpha([], level) is None  # type: ignore[arg-type]
        # Nobody rated the same unit twice: nothing pairs.
        assert krippendorff_alpha([{"Rae": 3}, {"Jo": 4}], level) is None  # type: ignore[arg-type]
        # Everybody gave the same value: no variation, alpha would be 0/0.
        assert krippendorff_alpha([[4, 4], [4, 4, None]], level) is None  # type: ignore[arg-type]
    empty = rater_agreement({"cc-001": {"Rae": 3}})
    assert empty == RaterAgreement(None, None, 0, 0, None)


def test_unknown_level_is_refused() -> None:
    with pytest.raises(ValueError, match="nominal, ordinal, interval"):
        krippendorff_alpha(PUBLISHED_UNITS, "ratio")  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------

RATERS = ["Rae", "Jo", "Ines", "Milo"]
FAST = settings(max_examples=50, deadline=None)

reliability_data = st.lists(
    st.fixed_dictionaries({}, optional={r: st.integers(1, 5) for r in RATERS}),
    min_size=1,
    max_size=10,
)


def same(a: float | None, b: float | None) -> bool:
    return (a is None and b is None) or (
        a is not None and b is not None and math.isclose(a, b, abs_tol=1e-9)
    )


@FAST
@given(reliability_data, st.permutations(RATERS), st.randoms(use_true_random=False))
def test_renaming_raters_and_reordering_units_leaves_alpha_unchanged(
    data: list[dict[str, int]], renamed: list[str], rng: random.Random
) -> None:
    rename = dict(zip(RATERS, renamed, strict=True))
    permuted = [{rename[r]: v for r, v in unit.items()} for unit in data]
    rng.shuffle(permuted)
    for level in LEVELS:
        assert same(krippendorff_alpha(data, level), krippendorff_alpha(permuted, level))  # type: ignore[arg-type]


@FAST
@given(
    st.lists(
        st.tuples(st.integers(1, 5), st.lists(st.sampled_from(RATERS), min_size=2, unique=True)),
        min_size=2,
        max_size=10,
    ).filter(lambda units: len({value for value, _ in units}) >= 2)
)
def test_perfect_agreement_is_one(units: list[tuple[int, list[str]]]) -> None:
    data = [dict.fromkeys(raters, value) for value, raters in units]
    for level in LEVELS:
        assert krippendorff_alpha(data, level) == 1.0  # type: ignore[arg-type]


@FAST
@given(reliability_data)
def test_alpha_is_at_most_one_and_none_only_when_undefined(data: list[dict[str, int]]) -> None:
    pairable = [list(unit.values()) for unit in data if len(unit) >= 2]
    varied = len({v for unit in pairable for v in unit}) >= 2
    for level in LEVELS:
        alpha = krippendorff_alpha(data, level)  # type: ignore[arg-type]
        assert (alpha is None) == (not varied)
        assert alpha is None or alpha <= 1.0 + 1e-12


@FAST
@given(reliability_data, st.permutations([1, 2, 3, 4, 5]))
def test_each_metric_ignores_what_its_level_does_not_measure(
    data: list[dict[str, int]], relabel: list[int]
) -> None:
    def mapped(f: object) -> list[dict[str, float]]:
        return [{r: f(v) for r, v in unit.items()} for unit in data]  # type: ignore[operator]

    # Nominal: values are only labels, any relabelling keeps alpha.
    assert same(
        krippendorff_alpha(data, "nominal"),
        krippendorff_alpha(mapped(lambda v: relabel[v - 1]), "nominal"),
    )
    # Ordinal: only the order counts, any increasing map keeps alpha.
    assert same(
        krippendorff_alpha(data, "ordinal"), krippendorff_alpha(mapped(lambda v: v**3), "ordinal")
    )
    # Interval: a change of unit and origin keeps alpha.
    assert same(
        krippendorff_alpha(data, "interval"),
        krippendorff_alpha(mapped(lambda v: 20 * v - 7), "interval"),
    )
