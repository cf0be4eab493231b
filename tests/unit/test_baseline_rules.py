"""The pure baseline rules against hand-computed values: a movement and a crossing confirmed
against the noise (``evidence.movement``), the agreement-drop and moved-share gates judged
against it (``evidence.baseline_gates``), and the item verdicts that use them."""

from __future__ import annotations

import math

import pytest
from support.plugin_project import RUBRIC, make_case

from pytest_screeneval.evidence.baseline_gates import (
    agreement_drop_gate,
    crossings_gate,
    moved_share_gate,
    noise_differences,
)
from pytest_screeneval.evidence.gates import GateResult
from pytest_screeneval.evidence.intervals import t_quantile
from pytest_screeneval.evidence.metrics import CriterionAgreement
from pytest_screeneval.evidence.movement import (
    chebyshev_multiplier,
    confirm_crossing,
    confirm_movement,
    level_sd,
    mean_interval,
)
from pytest_screeneval.evidence.noise import CriterionNoise, NoiseEstimate
from pytest_screeneval.evidence.verdicts import (
    BaselineInfo,
    ConfirmationNote,
    CriterionEvidence,
    Tolerances,
    criterion_verdict,
    decision_verdict,
)


def _noise(*criteria: CriterionNoise, overall_sd: float = 5.0, df: int = 10) -> NoiseEstimate:
    return NoiseEstimate(5, 10, overall_sd, df, tuple(criteria))


def test_chebyshev_multiplier_is_one_over_root_alpha() -> None:
    assert chebyshev_multiplier(0.95) == pytest.approx(math.sqrt(20))
    assert chebyshev_multiplier(0.75) == pytest.approx(2.0)


def test_level_sd_is_at_least_the_sd_pooled_over_criteria() -> None:
    noise = _noise(
        CriterionNoise("skills", 4, 0, 0.0, 0.0, 4),
        CriterionNoise("experience", 6, 3, 0.5, 0.6, 6),
    )
    pooled = math.sqrt((4 * 0.0 + 6 * 0.36) / 10)  # 0.4648
    assert level_sd(noise, "skills") == pytest.approx(pooled)
    assert level_sd(noise, "experience") == pytest.approx(0.6)
    assert level_sd(_noise(), "skills") == 0.0


def test_a_movement_is_confirmed_when_its_chebyshev_interval_clears_the_tolerance() -> None:
    # 4 answers now (mean 4.0), a deterministic baseline at 3: half = √20 · 0.3 / 2 = 0.6708
    check = confirm_movement([4, 4, 4, 4], [3], noise_sd=0.3, baseline_sd=0.0, tolerance=0)
    assert check.interval.estimate == pytest.approx(1.0)
    assert check.interval.low == pytest.approx(1 - math.sqrt(20) * 0.15)
    assert check.interval.high == pytest.approx(1 + math.sqrt(20) * 0.15)
    assert check.confirmed and not check.exact
    assert check.describe() == (
        "moved 3 → 4; confirmed by 3 re-scores: mean 4.0 against the baseline's 3.0 (1 answer), "
        "difference 95% CI 0.3–1.7 (noise SD 0.3 levels, the baseline's 0.0; Chebyshev)"
    )


def test_a_one_answer_noisy_baseline_cannot_confirm_a_one_level_fluke() -> None:
    # both sides SD 0.3: half = √20 · √(0.09/4 + 0.09/1) = 1.5000; a t interval would confirm it
    check = confirm_movement([4, 4, 4, 4], [3], noise_sd=0.3, baseline_sd=0.3, tolerance=0)
    assert check.interval.half_width == pytest.approx(math.sqrt(20) * math.sqrt(0.1125))
    assert not check.confirmed
    assert "not confirmed by 3 re-scores" in check.describe()
    # a two-level move against the same noise holds: 2 − 1.5 > 0
    assert confirm_movement([5] * 4, [3], noise_sd=0.3, baseline_sd=0.3, tolerance=0).confirmed
    # but not beyond a tolerance of 1: 2 − 1.5 < 1
    assert not confirm_movement([5] * 4, [3], noise_sd=0.3, baseline_sd=0.3, tolerance=1).confirmed


def test_a_movement_without_noise_is_exact_and_judged_on_its_means() -> None:
    check = confirm_movement([4, 4], [3, 3], noise_sd=0.0, baseline_sd=0.0, tolerance=0)
    assert check.exact and check.confirmed
    assert check.describe() == "moved 3 → 4; the scorer measured no noise, so the movement is exact"
    # downwards too, and never beyond a tolerance it does not clear
    assert confirm_movement([2], [3], noise_sd=0.0, baseline_sd=0.0, tolerance=0).confirmed
    assert not confirm_movement([2], [3], noise_sd=0.0, baseline_sd=0.0, tolerance=1).confirmed


def test_mean_interval_is_a_t_interval() -> None:
    interval = mean_interval([50.0, 60.0, 55.0, 55.0], sd=4.0, df=10)
    half = t_quantile(0.975, 10) * 4.0 / 2.0  # 2.2281 · 2 = 4.4562
    assert interval.estimate == pytest.approx(55.0)
    assert (interval.low, interval.high) == pytest.approx((55.0 - half, 55.0 + half))
    assert mean_interval([41.0], sd=0.0, df=None).half_width == 0.0


def test_a_crossing_needs_both_sides_clear_of_the_threshold() -> None:
    # now 58.3 ± t(10)·4/2 = 53.9–62.8 (advance); baseline one answer 41.7 exact (hold)
    confirmed = confirm_crossing(
        [58.3, 58.3, 58.3, 58.3],
        [41.7],
        advance_at=50,
        noise_sd=4.0,
        df=10,
        baseline_sd=0.0,
        baseline_df=None,
    )
    assert (confirmed.before, confirmed.after) == ("hold", "advance")
    assert confirmed.confirmed
    assert "confirmed by 3 re-scores: mean overall 58.3, 95% CI 53.8–62.8" in confirmed.describe()
    # the same answers against a noisy one-answer baseline: 41.7 ± 2.228·4 reaches 50.6
    unstable = confirm_crossing(
        [58.3] * 4, [41.7], advance_at=50, noise_sd=4.0, df=10, baseline_sd=4.0, baseline_df=10
    )
    assert not unstable.confirmed
    # a current mean whose interval reaches the threshold: 52 − 4.456 < 50
    near = confirm_crossing(
        [52.0] * 4, [41.7], advance_at=50, noise_sd=4.0, df=10, baseline_sd=0.0, baseline_df=None
    )
    assert not near.confirmed


def test_a_crossing_without_noise_is_the_rubrics_decision() -> None:
    exact = confirm_crossing(
        [50.0], [49.9], advance_at=50, noise_sd=0.0, df=None, baseline_sd=0.0, baseline_df=None
    )
    assert exact.exact and exact.confirmed
    assert (
        exact.describe()
        == "crossed hold → advance; the scorer measured no noise, so the crossing is exact"
    )


def _agreement(exact_now: int, exact_before: int, n: int = 16) -> CriterionAgreement:
    before = 100.0 * exact_before / n if n else None
    return CriterionAgreement("skills", n, exact_now, n, 0.0, 0, 0, 0, before)


def _drop(
    row: CriterionAgreement, noise: NoiseEstimate | None, baseline: NoiseEstimate | None
) -> GateResult:
    return agreement_drop_gate(row, 5.0, has_baseline=True, noise=noise, baseline_noise=baseline)


def test_agreement_drop_interval_from_the_level_change_share() -> None:
    # drop 100·(15 − 12)/16 = 18.75; r = 0.2 both runs: SE = 100·√(16·0.2)/16 = 11.18
    noise = _noise(CriterionNoise("skills", 20, 4, 0.2, 0.45, 20))
    gate = _drop(_agreement(12, 15), noise, None)
    se = 100 * math.sqrt(16 * 0.2) / 16
    half = t_quantile(0.975, 20) * se  # 2.086 · 11.18 = 23.32
    assert gate.status == "INCONCLUSIVE"
    assert f"drop 18.8, 95% CI {18.75 - half:.1f}–{18.75 + half:.1f}" in gate.detail
    factor = (half / (18.75 - 5)) ** 2
    assert f"about {factor:.1f}× the evidence: {math.ceil(16 * factor)} cases" in gate.detail
    # a deterministic baseline halves the variance: SE = 100·√(16·0.1)/16 = 7.906
    half_base = t_quantile(0.975, 20) * 100 * math.sqrt(16 * 0.1) / 16
    deterministic_before = _noise(CriterionNoise("skills", 20, 0, 0.0, 0.0, 20))
    gate = _drop(_agreement(12, 15), noise, deterministic_before)
    assert f"95% CI {18.75 - half_base:.1f}–{18.75 + half_base:.1f}" in gate.detail


def test_agreement_drop_fails_or_passes_when_the_interval_is_clear() -> None:
    noise = _noise(CriterionNoise("skills", 50, 1, 0.02, 0.14, 50))
    # SE = 100·√(0.02/16) = 3.536, half = 2.009·3.536 = 7.10
    failing = _drop(_agreement(8, 16), noise, None)
    assert failing.status == "FAIL" and failing.value == 50.0
    passing = _drop(_agreement(16, 15), noise, None)
    assert passing.status == "PASS"  # drop −6.25 + 7.10 ≤ 5


def test_agreement_drop_without_noise_is_the_plain_gate() -> None:
    deterministic = _noise(CriterionNoise("skills", 20, 0, 0.0, 0.0, 20))
    plain = _drop(_agreement(12, 15), None, None)
    assert (plain.status, plain.value, plain.interval) == ("FAIL", 18.75, None)
    assert _drop(_agreement(12, 15), deterministic, None) == plain
    empty = _drop(_agreement(0, 0, n=0), deterministic, None)
    assert (empty.status, empty.value) == ("N/A", None)
    no_baseline = agreement_drop_gate(_agreement(12, 15), 5.0, has_baseline=False)
    assert (no_baseline.status, no_baseline.detail) == ("N/A", "no baseline to compare with")


def _share(statuses: dict[str, int], reviewed: int = 0, noise_share: float = 0.0) -> GateResult:
    # 8 of 40 items moved unreviewed: the plain share 20% is over the limit 10%
    return moved_share_gate(
        8,
        40,
        10.0,
        has_baseline=True,
        reviewed=reviewed,
        statuses=statuses,
        noise_share=noise_share,
    )


def test_moved_share_counts_confirmed_movements() -> None:
    gate = _share({"confirmed": 5, "unstable": 3}, 0, 0.1)
    assert gate.status == "FAIL" and gate.value == pytest.approx(12.5)  # 5/40 > 10%
    # E = 40·0.1 = 4, at most 4 + 1.96·2 = 7.92 unstable explained
    assert "noise alone makes about 4.0, at most 7.9" in gate.detail
    gate = _share({"confirmed": 2, "unstable": 6}, 0, 0.1)
    assert gate.status == "PASS" and gate.value == pytest.approx(5.0)


def test_moved_share_is_inconclusive_on_undecided_or_unexplained_movements() -> None:
    spent = _share({"confirmed": 2, "unconfirmed": 3}, 0, 0.0)
    assert spent.status == "INCONCLUSIVE"  # 2/40 ≤ 10% < (2 + 3)/40
    assert "raise screeneval_confirm_budget (3 left unconfirmed)" in spent.detail
    within = _share({"confirmed": 2, "not re-scored": 1}, 0, 0.0)
    assert within.status == "PASS"  # 3/40 = 7.5% ≤ 10%
    # 12 unstable where the noise explains at most 7.92: real movements hide among them
    hidden = _share({"unstable": 12}, 2, 0.1)
    assert hidden.status == "INCONCLUSIVE"
    assert "review the unstable movements" in hidden.detail
    assert "(2 reviewed, not counted)" in hidden.detail


def test_moved_share_with_every_movement_confirmed_is_the_plain_gate() -> None:
    plain = _share({})
    assert (plain.status, plain.value) == ("FAIL", 20.0)
    assert _share({"confirmed": 8}) == plain


def test_noise_differences_average_both_runs_change_shares() -> None:
    now = _noise(
        CriterionNoise("skills", 10, 2, 0.2, 0.4, 10),
        CriterionNoise("experience", 10, 4, 0.4, 0.6, 10),
    )
    before = _noise(
        CriterionNoise("skills", 10, 0, 0.0, 0.0, 10),
        CriterionNoise("experience", 10, 0, 0.0, 0.0, 10),
    )
    assert noise_differences(now, None) == pytest.approx(0.3)  # (0.2 + 0.4) / 2
    assert noise_differences(now, before) == pytest.approx(0.15)  # (0.1 + 0.2) / 2


BASELINE = BaselineInfo(1, "Ada Quill", "2026-11-01T00:00:00")
TOLERANCES = Tolerances(1, 0, 0.8, False)


def _criterion(confirmation: ConfirmationNote | None) -> tuple[bool, str, tuple[str, ...]]:
    case = make_case("al-001")  # skills expected 4
    evidence = CriterionEvidence(4, "", None, None, ())
    verdict = criterion_verdict(
        case, "skills", evidence, TOLERANCES, BASELINE, 3, None, confirmation
    )
    return verdict.passed, verdict.block, verdict.notes


def test_the_criterion_verdict_fails_on_a_movement_only_once_confirmed() -> None:
    passed, block, _ = _criterion(None)
    assert not passed and "confirmed" not in block  # as before: nothing was asked to confirm
    note = ConfirmationNote("confirmed", "moved 3 → 4; confirmed by …", (("outcome", "confirmed"),))
    passed, block, _ = _criterion(note)
    assert not passed
    assert "  confirmed  moved 3 → 4; confirmed by …\n  FAILED     moved 3 → 4" in block
    unstable = ConfirmationNote("unstable", "moved 3 → 4; not confirmed by …")
    passed, _, notes = _criterion(unstable)
    assert passed and notes == ("unstable, not a finding: moved 3 → 4; not confirmed by …",)


def test_the_decision_verdict_fails_on_a_crossing_only_once_confirmed() -> None:
    case = make_case("al-001")
    unstable = ConfirmationNote("unconfirmed", "crossed hold → advance, not confirmed: budget")
    verdict = decision_verdict(case, RUBRIC, 58.3, [], BASELINE, 41.7, None, 2, unstable)
    assert verdict.passed and verdict.notes[0].startswith("unconfirmed, not a finding")
    confirmed = ConfirmationNote("confirmed", "crossed hold → advance; confirmed by …")
    verdict = decision_verdict(case, RUBRIC, 58.3, [], BASELINE, 41.7, None, 2, confirmed)
    assert not verdict.passed and "  confirmed  crossed hold → advance" in verdict.block


def _crossings(statuses: list[str]) -> GateResult:
    n = len(statuses)
    return crossings_gate(n, n, has_baseline=True, statuses=statuses)


def test_only_a_confirmed_crossing_fails_the_crossings_gate() -> None:
    # a deterministic scorer confirms every crossing: the plain verdict, value and all
    assert (_crossings(["confirmed", "confirmed"]).status, _crossings(["confirmed"]).value) == (
        "FAIL",
        1.0,
    )
    mixed = _crossings(["confirmed", "unstable", "unconfirmed"])
    assert (mixed.status, mixed.value) == ("FAIL", 1.0)
    assert "1 confirmed, 2 within the scorer's noise or not confirmed" in mixed.detail
    undecided = _crossings(["unstable", "unconfirmed"])
    assert (undecided.status, undecided.value) == ("INCONCLUSIVE", 0.0)
    assert "screeneval review" in undecided.detail
    assert _crossings([]).status == "PASS"
