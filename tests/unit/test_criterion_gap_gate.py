"""The per-criterion counterfactual gate: a bias that trades one criterion for another.

Pure: the gate reads each case's levels per value and the scorer's measured noise. A trading
bias leaves the overall gap at zero; this gate finds it, names the criterion, and stays quiet on
a scorer that is fair per criterion, deterministic or noisy (seeded).
"""

from __future__ import annotations

import random

import pytest

from pytest_screeneval.evidence.fairness_gates import (
    counterfactual_criterion_gate,
    counterfactual_gate,
)
from pytest_screeneval.evidence.fairness_summary import CounterfactualCase
from pytest_screeneval.evidence.gate_result import FAIL, PASS
from pytest_screeneval.evidence.noise import CriterionNoise, NoiseEstimate
from pytest_screeneval.golden.model import Criterion, Rubric, Scale

RUBRIC = Rubric(
    "r",
    "1",
    Scale(1, 5),
    50.0,
    (Criterion("cloud", "", 1.0), Criterion("leadership", "", 1.0), Criterion("sql", "", 1.0)),
)
CRITERIA = RUBRIC.criterion_names
VALUES = ("Aisha Bello", "Daniela Ortega")


def case(case_id: str, levels: dict[str, list[dict[str, int]]]) -> CounterfactualCase:
    """levels: value → each answer's criterion → level."""
    return CounterfactualCase(
        case_id,
        {v: tuple(RUBRIC.overall(a) for a in answers) for v, answers in levels.items()},
        {v: answers[0] for v, answers in levels.items()},
        {v: {c: tuple(a[c] for a in answers) for c in CRITERIA} for v, answers in levels.items()},
    )


def trading_cases(
    n: int, trade: bool, rng: random.Random | None = None
) -> list[CounterfactualCase]:
    """``n`` cases; with ``trade`` the second name loses a cloud level and gains a leadership one.
    With ``rng``, each answer (three per value) flips a level up or down 10% of the time."""
    cases = []
    for i in range(n):
        base = {"cloud": 2 + i % 3, "leadership": 2 + (i + 1) % 3, "sql": 3}
        levels: dict[str, list[dict[str, int]]] = {}
        for value in VALUES:
            answers = []
            for _ in range(3 if rng else 1):
                answer = dict(base)
                if trade and value == VALUES[1]:
                    answer["cloud"] -= 1
                    answer["leadership"] += 1
                if rng:
                    for c in CRITERIA:
                        if rng.random() < 0.1:
                            answer[c] = min(5, max(1, answer[c] + rng.choice((-1, 1))))
                answers.append(answer)
            levels[value] = answers
        cases.append(case(f"c{i:02d}", levels))
    return cases


def noise_of(sd: float) -> NoiseEstimate:
    return NoiseEstimate(
        texts=40,
        observations=120,
        overall_sd=sd * 100 / 12,
        df=80,
        criteria=tuple(CriterionNoise(c, 80, 8 if sd else 0, sd, sd, 80) for c in CRITERIA),
    )


def test_a_deterministic_trade_passes_the_overall_gap_and_fails_per_criterion() -> None:
    cases = trading_cases(10, trade=True)
    assert counterfactual_gate("name", cases, noise_of(0.0), 3.0).status == PASS
    gate = counterfactual_criterion_gate("name", cases, CRITERIA, noise_of(0.0), 0.5)
    assert gate.status == FAIL
    assert gate.value == pytest.approx(1.0)
    assert gate.detail.startswith("cloud: ")  # the criterion is named (cloud before leadership)
    assert gate.name == "counterfactual-criterion-gap[name]"


def test_a_scorer_fair_per_criterion_passes() -> None:
    gate = counterfactual_criterion_gate(
        "name", trading_cases(10, trade=False), CRITERIA, noise_of(0.0), 0.5
    )
    assert gate.status == PASS and gate.value == 0.0


@pytest.mark.parametrize("seed", range(20))
def test_a_noisy_fair_scorer_never_fails_and_a_noisy_trade_is_found(seed: int) -> None:
    rng = random.Random(seed)
    noise = noise_of(0.35)
    fair = counterfactual_criterion_gate(
        "name", trading_cases(30, trade=False, rng=rng), CRITERIA, noise, 0.5
    )
    assert fair.status != FAIL, fair.detail
    traded = counterfactual_criterion_gate(
        "name", trading_cases(30, trade=True, rng=rng), CRITERIA, noise, 0.5
    )
    assert traded.status == FAIL, traded.detail
    assert traded.detail.split(":")[0] in ("cloud", "leadership")
