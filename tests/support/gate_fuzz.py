"""Hypothesis strategies and the one consistency check shared by the gate fuzzers
(tests/unit/test_gate_values.py, tests/slow/test_fairness_gate_fuzz.py): a gate's value is the
estimate its verdict rests on, so a PASS never shows a value beyond its limit and a FAIL never
one within it; the value lies inside its interval when it has one."""

from __future__ import annotations

from hypothesis import strategies as st

from pytest_screeneval.evidence.gate_result import FAIL, PASS, GateResult
from pytest_screeneval.evidence.noise import CriterionNoise, NoiseEstimate

__all__ = ["answers", "assert_consistent", "noise_estimates"]

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
