"""Noise-aware evidence: every interval and statistic against hand-computed values."""

from __future__ import annotations

import itertools
import math
from statistics import fmean

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_screeneval.evidence.fairness_gates import counterfactual_gate, perturbation_gate
from pytest_screeneval.evidence.fairness_summary import CounterfactualCase, PerturbationCase
from pytest_screeneval.evidence.gate_result import FAIL, INCONCLUSIVE, PASS
from pytest_screeneval.evidence.intervals import (
    Interval,
    difference_interval,
    t_quantile,
    two_sided_quantile,
)
from pytest_screeneval.evidence.noise import NoiseEstimate, estimate_noise, pooled_sd
from pytest_screeneval.evidence.paired import (
    judge_limit,
    paired_estimates,
    worst_case_interval,
)
from pytest_screeneval.golden.model import Criterion, Rubric, Scale

TWO = Rubric("r", "1", Scale(1, 5), 50.0, (Criterion("a", ""), Criterion("b", "")))


@pytest.mark.parametrize(
    ("p", "df", "expected"),
    [
        # textbook t tables
        (0.975, 1, 12.7062),
        (0.975, 2, 4.3027),
        (0.975, 5, 2.5706),
        (0.975, 10, 2.2281),
        (0.995, 4, 4.6041),
        (0.05, 7, -1.8946),
        (0.975, None, 1.9600),
    ],
)
def test_t_quantile_matches_the_tables(p: float, df: int | None, expected: float) -> None:
    assert t_quantile(p, df) == pytest.approx(expected, abs=5e-4)


def test_bonferroni_splits_alpha_over_the_comparisons() -> None:
    # 3 comparisons at 95%: each two-sided at 1 - 0.05/3, so the 1 - 0.05/6 quantile
    assert two_sided_quantile(0.95, None, 3) == pytest.approx(2.3940, abs=5e-4)
    assert two_sided_quantile(0.95, 10, 1) == pytest.approx(2.2281, abs=5e-4)


def test_pooled_sd_is_within_group() -> None:
    # [1, 3]: mean 2, squares 2; [2, 2, 5]: mean 3, squares 6; [7]: adds nothing. sqrt(8 / 3)
    sd, df = pooled_sd([[1, 3], [2, 2, 5], [7]])
    assert df == 3
    assert sd == pytest.approx(math.sqrt(8 / 3))


def test_noise_estimate_per_criterion_and_overall() -> None:
    samples = {
        "t1": [{"a": 3, "b": 3}, {"a": 4, "b": 3}, {"a": 3, "b": 3}],  # overall 50, 62.5, 50
        "t2": [{"a": 2, "b": 2}, {"a": 2, "b": 2}],  # overall 25, 25
        "t3": [{"a": 5, "b": 5}],  # scored once: not part of the estimate
    }
    noise = estimate_noise(samples, TWO)
    a, b = noise.criteria
    assert (a.compared, a.changed) == (3, 1)
    assert a.mean_abs_delta == pytest.approx(1 / 3)
    assert a.sd == pytest.approx(math.sqrt((2 / 3) / 3))
    assert (b.compared, b.changed, b.sd) == (3, 0, 0.0)
    assert noise.texts == 2 and noise.observations == 5 and noise.df == 3
    # t1 squares: 2 * (50 - 54.1667)^2 + (62.5 - 54.1667)^2 = 104.1667
    assert noise.overall_sd == pytest.approx(math.sqrt(104.1666667 / 3))
    assert not noise.deterministic


def test_a_deterministic_scorer_measures_zero() -> None:
    same = [{"a": 4, "b": 2}] * 3
    noise = estimate_noise({"t1": same, "t2": same[:2]}, TWO)
    assert noise.deterministic and noise.overall_sd == 0.0 and noise.df == 3
    assert "identical" in noise.describe()
    assert not estimate_noise({"t1": same[:1]}, TWO).measured


def test_difference_interval_uses_the_noise_sd() -> None:
    # mean 11 - mean 5 = 6; SE = 2 * sqrt(1/2 + 1/2) = 2; t(0.975, 10) = 2.2281
    interval = difference_interval([10, 12], [4, 6], noise_sd=2.0, df=10)
    assert interval.estimate == 6.0
    assert interval.low == pytest.approx(6 - 2 * 2.22814, abs=1e-4)
    assert interval.high == pytest.approx(6 + 2 * 2.22814, abs=1e-4)
    exact = difference_interval([10], [4], noise_sd=0.0, df=0)
    assert (exact.low, exact.high) == (6.0, 6.0)


def test_paired_estimate_across_cases() -> None:
    per_case = {
        "c1": {"A": [60.0], "B": [50.0]},
        "c2": {"A": [70.0, 70.0], "B": [60.0, 62.0]},
    }
    [estimate] = paired_estimates(per_case, noise_sd=2.0, df=None)
    # d = 10 and 9: mean 9.5; SE = 2 * sqrt(2 + 1) / 2; one pair, q = 1.96
    half = 1.959964 * 2.0 * math.sqrt(3.0) / 2.0
    assert (estimate.high, estimate.low, estimate.cases) == ("A", "B", 2)
    assert estimate.interval.estimate == pytest.approx(9.5)
    assert estimate.interval.low == pytest.approx(9.5 - half, abs=1e-4)
    assert estimate.interval.high == pytest.approx(9.5 + half, abs=1e-4)


def test_paired_estimates_correct_for_the_number_of_pairs() -> None:
    per_case = {f"c{i}": {"A": [50.0], "B": [50.0], "C": [50.0]} for i in range(4)}
    estimates = paired_estimates(per_case, noise_sd=4.0, df=None)
    assert len(estimates) == 3
    # 3 pairs: q = 2.394; SE = 4 * sqrt(4 * 2) / 4
    assert estimates[0].interval.half_width == pytest.approx(2.3940 * math.sqrt(8.0), abs=1e-3)


def _estimates(mean: float, half: float, cases: int = 10) -> list[object]:
    [estimate] = paired_estimates(
        {f"c{i}": {"A": [mean], "B": [0.0]} for i in range(cases)},
        noise_sd=half / 1.959964 / math.sqrt(2.0 / cases) if half else 0.0,
        df=None,
    )
    return [estimate]


def test_judge_limit_three_ways() -> None:
    assert judge_limit(_estimates(10.0, 2.0), 3.0).status == FAIL  # type: ignore[arg-type]
    assert judge_limit(_estimates(1.0, 1.5), 3.0).status == PASS  # type: ignore[arg-type]
    call = judge_limit(_estimates(2.0, 2.0), 3.0)  # type: ignore[arg-type]
    assert call.status == INCONCLUSIVE
    # the half width must shrink from 2 to 1: (2 / 1)^2 = 4 times the evidence, 40 cases
    assert "4.0×" in call.to_decide and "40 cases" in call.to_decide


def test_a_worst_case_beyond_the_limit_fails_and_one_within_passes() -> None:
    per_case = {"c1": {"A": [60.0], "B": [50.0]}, "c2": {"A": [50.0], "B": [50.0]}}
    worst, where = worst_case_interval(per_case, noise_sd=0.0, df=0)  # type: ignore[misc]
    assert (worst.estimate, worst.low, worst.high) == (10.0, 10.0, 10.0)
    assert where == "c1 (A vs B)"
    assert judge_limit(paired_estimates(per_case, noise_sd=0.0, df=0), 3.0, worst).status == FAIL
    calm = {"c1": {"A": [52.0], "B": [50.0]}, "c2": {"A": [50.0], "B": [47.0]}}
    worst, _ = worst_case_interval(calm, noise_sd=0.0, df=0)  # type: ignore[misc]
    assert judge_limit(paired_estimates(calm, noise_sd=0.0, df=0), 3.0, worst).status == PASS


_levels = st.integers(min_value=1, max_value=5)


@settings(deadline=None)
@given(
    truth=st.floats(min_value=0, max_value=100),
    limit=st.floats(min_value=0.5, max_value=20),
    noise_sd=st.floats(min_value=0, max_value=30),
    df=st.one_of(st.none(), st.integers(min_value=1, max_value=200)),
    offsets=st.lists(
        st.lists(st.floats(min_value=-1, max_value=1), min_size=1, max_size=5),
        min_size=2,
        max_size=8,
    ),
)
def test_noise_that_cannot_reach_the_limit_never_fails_a_fairness_item(
    truth: float,
    limit: float,
    noise_sd: float,
    df: int | None,
    offsets: list[list[float]],
) -> None:
    """Unbiased sides (same true score) whose answers stray at most limit/2 from it: whatever
    the answers, the re-scores and the noise estimate, neither the item nor the gate fails."""
    reach = limit / 2.0
    observations = {f"v{i}": [truth + reach * o for o in side] for i, side in enumerate(offsets)}
    # confirmation stops as unstable when the fresh answers' gap is within the limit, before
    # any test; here it always is, for any two sides
    for high, low in itertools.permutations(observations.values(), 2):
        assert fmean(high) - fmean(low) <= limit + 1e-9
    per_case = {"c1": observations, "c2": dict(reversed(list(observations.items())))}
    found = worst_case_interval(per_case, noise_sd=noise_sd, df=df)
    assert found is not None
    estimates = paired_estimates(per_case, noise_sd=noise_sd, df=df)
    assert judge_limit(estimates, limit, found[0], found[1]).status != FAIL


def test_interval_magnitudes() -> None:
    assert Interval(2.0, -1.0, 5.0, 0.95).magnitude_low == 0.0
    assert Interval(-4.0, -6.0, -2.0, 0.95).magnitude_low == 2.0
    assert Interval(-4.0, -6.0, -2.0, 0.95).magnitude_high == 6.0


def _noise(sd: float, df: int = 100) -> NoiseEstimate:
    return NoiseEstimate(texts=10, observations=df + 10, overall_sd=sd, df=df, criteria=())


def _cf(case_id: str, **answers: list[float]) -> CounterfactualCase:
    return CounterfactualCase(case_id, {v: tuple(xs) for v, xs in answers.items()})


def test_counterfactual_gate_without_noise_compares_the_worst_gap_with_the_limit() -> None:
    cases = [_cf("c1", A=[54.0], B=[50.0]), _cf("c2", A=[50.0], B=[50.0])]
    failed = counterfactual_gate("name", cases, _noise(0.0), 3.0)
    assert failed.status == FAIL
    assert failed.value == 4.0 and failed.interval == (4.0, 4.0)
    assert failed.worst_case == "c1 (A vs B): 4.0"
    assert counterfactual_gate("name", cases, _noise(0.0), 4.0).status == PASS


def test_counterfactual_gate_with_noise_uses_the_spread_across_cases() -> None:
    # 8 cases (fewer than the bootstrap needs): the paired gaps 4, 0, 8, 4, 4, 0, 8, 4 give
    # mean 4 and SD 3.02; Student's t with 7 df: 4 ± 2.365 · 3.02 / √8 spans the limit 3
    diffs = [4.0, 0.0, 8.0, 4.0, 4.0, 0.0, 8.0, 4.0]
    cases = [_cf(f"c{i}", A=[50.0 + d], B=[50.0]) for i, d in enumerate(diffs)]
    gate = counterfactual_gate("name", cases, _noise(4.0), 3.0)
    sd = math.sqrt(sum((d - 4.0) ** 2 for d in diffs) / 7)
    half = t_quantile(0.975, 7) * sd / math.sqrt(8)
    assert gate.status == INCONCLUSIVE and "to decide" in gate.detail
    assert gate.value == pytest.approx(4.0)
    assert gate.interval == pytest.approx((4.0 - half, 4.0 + half))
    # the worst single case is named apart, labelled as such: it is not the gate's value
    assert gate.worst_case == "c2 (A vs B): 8.0" and "worst single case c2" in gate.detail
    # a 10-point systematic gap clears the limit, a calm attribute stays within it
    biased = [_cf(f"c{i}", A=[56.0 + d], B=[50.0]) for i, d in enumerate(diffs)]
    assert counterfactual_gate("name", biased, _noise(4.0), 3.0).status == FAIL
    calm = [_cf(f"c{i}", A=[50.0 + d / 8], B=[50.0]) for i, d in enumerate(diffs)]
    passed = counterfactual_gate("name", calm, _noise(1.0), 3.0)
    assert passed.status == PASS and passed.value is not None and passed.value <= 3.0


def test_a_text_s_center_is_its_median_answer() -> None:
    # one jump among three answers does not move the median: the gap is 0, not 8.3
    cases = [_cf(f"c{i}", A=[50.0, 75.0, 50.0], B=[50.0, 50.0, 50.0]) for i in range(12)]
    gate = counterfactual_gate("name", cases, _noise(8.0), 3.0)
    assert gate.status == PASS and gate.value == 0.0


def test_perturbation_gate_counts_the_examples_in_the_worst_case_family() -> None:
    cases = [
        PerturbationCase("c1", (50.0,), {"e1": (41.0,), "e2": (50.0,)}),
        PerturbationCase("c2", (60.0,), {"e3": (60.0,), "e4": (60.0,)}),
    ]
    failed = perturbation_gate("ocr-noise", cases, _noise(0.0), 5.0, 10)
    assert failed.status == FAIL and failed.value == 9.0
    assert perturbation_gate("ocr-noise", cases, _noise(0.0), 9.0, 10).status == PASS
    # with noise measured, one case's shift is its item's to confirm, not the gate's to fail on
    assert perturbation_gate("ocr-noise", cases, _noise(3.0), 5.0, 10).status != FAIL
