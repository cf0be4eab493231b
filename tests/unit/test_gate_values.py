"""The baseline and count gate builders, fuzzed: a gate's value is the estimate its verdict rests
on, whatever the answers and the noise (``support.gate_fuzz.assert_consistent``); the fairness
gates, a bootstrap each example, are fuzzed in tests/slow/test_fairness_gate_fuzz.py."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from support.gate_fuzz import assert_consistent, noise_estimates

from pytest_screeneval.evidence.baseline_gates import (
    agreement_drop_gate,
    crossings_gate,
    moved_share_gate,
)
from pytest_screeneval.evidence.gate_result import at_least, at_most
from pytest_screeneval.evidence.metrics import CriterionAgreement
from pytest_screeneval.evidence.noise import NoiseEstimate


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
