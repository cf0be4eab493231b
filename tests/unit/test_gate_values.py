"""Every gate builder, fuzzed: a gate's value is the estimate its verdict rests on, so a PASS
never shows a value beyond its limit and a FAIL never one within it, whatever the answers and
the noise; the value lies inside its interval when it has one."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_screeneval.evidence.baseline_gates import (
    agreement_drop_gate,
    crossings_gate,
    moved_share_gate,
)
from pytest_screeneval.evidence.fairness_gates import counterfactual_gate, perturbation_gate
from pytest_screeneval.evidence.fairness_summary import CounterfactualCase, PerturbationCase
from pytest_screeneval.evidence.gate_result import FAIL, PASS, GateResult, at_least, at_most
from pytest_screeneval.evidence.metrics import CriterionAgreement
from pytest_screeneval.evidence.noise import CriterionNoise, NoiseEstimate

_EPS = 1e-6

overall = st.sampled_from([0.0, 25.0, 31.0, 50.0, 56.0, 62.5, 75.0, 100.0])
answers = st.lists(overall, min_size=1, max_size=4).map(tuple)


@st.composite
def noise_estimates(draw: st.DrawFn) -> NoiseEstimate | None:
    if draw(st.booleans()):
        return None
    sd = draw(st.sampled_from([0.0, 0.5, 4.0, 9.0]))
    df = draw(st.integers(min_value=0, max_value=60))
    changed = draw(st.integers(min_value=0, max_value=10))
    criterion = CriterionNoise("skills", 10, changed if sd else 0, 0.1, sd / 20, df)
    return NoiseEstimate(draw(st.integers(0, 30)), df + 10, sd, df, (criterion,))


def assert_consistent(gate: GateResult) -> None:
    direction, _, bound = gate.limit.partition(" ")
    limit = float(bound)
    if gate.value is None:
        assert gate.status not in (PASS, FAIL) or gate.name == "unreviewed-crossings", gate
        return
    within = gate.value <= limit + _EPS if direction == "<=" else gate.value >= limit - _EPS
    if gate.status == PASS:
        assert within, gate
    if gate.status == FAIL:
        assert not within, gate
    if gate.interval is not None:
        low, high = gate.interval
        assert low - _EPS <= gate.value <= high + _EPS, gate


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cases=st.lists(
        st.dictionaries(st.sampled_from("ABCD"), answers, min_size=1, max_size=4),
        min_size=1,
        max_size=14,
    ),
    noise=noise_estimates(),
    limit=st.sampled_from([0.0, 3.0, 5.0, 12.5]),
    confidence=st.sampled_from([0.95, 0.9875]),
)
def test_counterfactual_gate_values_match_their_verdicts(
    cases: list[dict[str, tuple[float, ...]]],
    noise: NoiseEstimate | None,
    limit: float,
    confidence: float,
) -> None:
    found = [CounterfactualCase(f"c{i:02d}", by) for i, by in enumerate(cases)]
    assert_consistent(counterfactual_gate("name", found, noise, limit, confidence))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cases=st.lists(
        st.tuples(answers, st.lists(answers, min_size=1, max_size=4)), min_size=1, max_size=14
    ),
    noise=noise_estimates(),
    limit=st.sampled_from([0.0, 5.0, 12.5]),
    examples=st.integers(min_value=1, max_value=10),
)
def test_perturbation_gate_values_match_their_verdicts(
    cases: list[tuple[tuple[float, ...], list[tuple[float, ...]]]],
    noise: NoiseEstimate | None,
    limit: float,
    examples: int,
) -> None:
    found = [
        PerturbationCase(f"c{i:02d}", original, {f"e{j}": xs for j, xs in enumerate(shifted)})
        for i, (original, shifted) in enumerate(cases)
    ]
    assert_consistent(perturbation_gate("reformat", found, noise, limit, examples))


@settings(max_examples=200, deadline=None)
@given(
    n=st.integers(min_value=0, max_value=40),
    exact_now=st.integers(min_value=0, max_value=40),
    exact_before=st.integers(min_value=0, max_value=40),
    noise=noise_estimates(),
    baseline_noise=noise_estimates(),
    has_baseline=st.booleans(),
    limit=st.sampled_from([0.0, 5.0, 20.0]),
)
def test_agreement_drop_values_match_their_verdicts(
    n: int,
    exact_now: int,
    exact_before: int,
    noise: NoiseEstimate | None,
    baseline_noise: NoiseEstimate | None,
    has_baseline: bool,
    limit: float,
) -> None:
    now, before = min(exact_now, n), min(exact_before, n)
    row = CriterionAgreement(
        "skills", n, now, n, 0.0, 0, 0, 0, 100.0 * before / n if n and has_baseline else None
    )
    gate = agreement_drop_gate(
        row, limit, has_baseline=has_baseline, noise=noise, baseline_noise=baseline_noise
    )
    assert_consistent(gate)


@settings(max_examples=200, deadline=None)
@given(
    moved=st.integers(min_value=0, max_value=40),
    compared=st.integers(min_value=0, max_value=40),
    statuses=st.dictionaries(
        st.sampled_from(["confirmed", "unstable", "unconfirmed", "not re-scored"]),
        st.integers(min_value=0, max_value=10),
    ),
    share=st.floats(min_value=0, max_value=0.5),
    limit=st.sampled_from([0.0, 10.0, 50.0]),
    crossings=st.lists(st.sampled_from(["confirmed", "unstable", "unconfirmed"]), max_size=5),
)
def test_share_and_count_gates_match_their_verdicts(
    moved: int,
    compared: int,
    statuses: dict[str, int],
    share: float,
    limit: float,
    crossings: list[str],
) -> None:
    moved = min(moved, compared)
    assert_consistent(
        moved_share_gate(
            moved, compared, limit, has_baseline=True, statuses=statuses, noise_share=share
        )
    )
    assert_consistent(
        crossings_gate(len(crossings), len(crossings), has_baseline=True, statuses=crossings)
    )
    assert_consistent(at_most("x", float(moved), limit, compared))
    assert_consistent(at_least("y", float(moved), limit, compared))
