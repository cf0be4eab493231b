"""The fairness gate builders, fuzzed (a bootstrap each example, so here and not in tests/unit):
a counterfactual or perturbation gate's value is the estimate its verdict rests on, whatever the
answers and the noise (``support.gate_fuzz.assert_consistent``)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.gate_fuzz import answers, assert_consistent, noise_estimates

from pytest_screeneval.evidence.fairness_gates import counterfactual_gate, perturbation_gate
from pytest_screeneval.evidence.fairness_summary import CounterfactualCase, PerturbationCase
from pytest_screeneval.evidence.noise import NoiseEstimate


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
