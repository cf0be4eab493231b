"""Confirm before accusing, end to end: a noisy scorer on a small golden set.

The scorer is ``examples/noisy_scorer.py`` (the keyword scorer plus seeded level flips and an
optional name bias). Each test also runs under ``-n 2``. Assertions are about verdicts whose
error rates are negligible at these sizes (a false FAIL needs a 95% interval, Bonferroni-corrected,
to clear the limit on pure noise), so the tests do not depend on which worker scores which case.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.plugin_project import RUBRIC, VARIANTS

from pytest_screeneval.golden.model import Case, Expectation, GapPlacement
from pytest_screeneval.golden.write import dump_case, dump_rubric, dump_variants
from pytest_screeneval.scoring.keyword import KeywordScorer

ROOT = Path(__file__).resolve().parents[2]
CASES = 16
SKILLS = ("dbt", "python", "sql")
EXPERIENCE = ("Lead analyst", "Analyst", "Clerk")
COMMUNICATION = ("Presented churn findings to the board", "Wrote monthly reports", "Kept notes")

CONFTEST = f"""
import sys

sys.path.insert(0, {str(ROOT)!r})

from examples.noisy_scorer import make_scorer


def pytest_screeneval_scorer(config, rubric):
    return make_scorer(rubric)
"""


def _resume(i: int) -> str:
    return (
        "Mirela Dobos\n"
        f"Ref: nz-{i:03d}\n"
        f"{EXPERIENCE[i % 3]} at Harbourline Foods, March 2019 - June 2024\n"
        f"- Built weekly sales dashboards with {SKILLS[(i // 3) % 3]}\n"
        f"- {COMMUNICATION[(i // 2) % 3]}\n"
    )


def write_noisy_project(pytester: pytest.Pytester) -> None:
    cases_dir = pytester.path / "cases"
    cases_dir.mkdir()
    (cases_dir / "rubric.yaml").write_text(dump_rubric(RUBRIC), encoding="utf-8")
    (cases_dir / "variants.yaml").write_text(dump_variants(VARIANTS), encoding="utf-8")
    keyword = KeywordScorer(RUBRIC)
    for i in range(CASES):
        text = _resume(i)
        answer = {s.criterion: s.score for s in keyword.score(text, RUBRIC)}
        case = Case(
            id=f"nz-{i:03d}",
            label="noise",
            rubric=RUBRIC.id,
            input_text=text,
            expected={c: Expectation(c, s, "rater-nz", "2026-10-01") for c, s in answer.items()},
            slices=("synthetic",),
            attributes={
                "name": "Mirela Dobos",
                "gap": GapPlacement(None, text.splitlines()[2]),
            },
            demographics={"sex": "female", "race": "white"},
            source="tests/plugin/test_noise_plugin.py",
        )
        folder = cases_dir / case.label
        folder.mkdir(exist_ok=True)
        (folder / f"{case.id}.yaml").write_text(dump_case(case), encoding="utf-8")
    pytester.makeconftest(CONFTEST)
    pytester.makeini(
        "[pytest]\n"
        f"screeneval_db = sqlite:///{(pytester.path / 'store.db').as_posix()}\n"
        "screeneval_perturbation_examples = 3\n"
    )


@pytest.fixture(params=[pytest.param((), id="no-xdist"), pytest.param(("-n", "2"), id="n2")])
def dist(request: pytest.FixtureRequest) -> tuple[str, ...]:
    return tuple(request.param)


def _run(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    dist: tuple[str, ...],
    **noise: str,
) -> tuple[pytest.RunResult, dict[str, object]]:
    write_noisy_project(pytester)
    for name in ("FLIP", "SHIFT", "SEED", "BIAS_NAMES"):
        monkeypatch.delenv(f"SCREENEVAL_NOISE_{name}", raising=False)
    for name, value in noise.items():
        monkeypatch.setenv(f"SCREENEVAL_NOISE_{name.upper()}", value)
    summary = pytester.path / "summary.json"
    result = pytester.runpytest("--screeneval", *dist, f"--screeneval-json={summary}")
    return result, json.loads(summary.read_text(encoding="utf-8"))


def _gates(document: dict[str, object]) -> dict[str, str]:
    return {g["name"]: g["status"] for g in document["gates"]}  # type: ignore[attr-defined,index]


def test_a_noisy_unbiased_scorer_fails_no_fairness_item_or_gate(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, dist: tuple[str, ...]
) -> None:
    result, document = _run(pytester, monkeypatch, dist, flip="0.1", seed="3")
    output = result.stdout.str()
    gates = _gates(document)
    fairness = {n: s for n, s in gates.items() if n.startswith(("counterfactual", "perturbation"))}
    assert fairness and "FAIL" not in fairness.values(), fairness
    assert result.ret == 0, output  # INCONCLUSIVE warns by default
    assert result.parseoutcomes().get("failed", 0) == 0
    # the noise is measured and shown, and the differences it made are listed, not hidden
    noise = document["noise"]
    assert noise["overall_sd"] > 0 and not noise["deterministic"]  # type: ignore[index]
    confirmation = document["confirmation"]
    unstable = confirmation["unstable"]  # type: ignore[index]
    assert unstable, "a 10% flip rate moves some gap above 3 points on its first answer"
    assert confirmation["extra_calls"] > 0  # type: ignore[index]
    assert "Noise of the scorer (re-scored answers): overall SD" in output
    assert "unstable items (within the noise" in output
    # judged on fresh answers only: the first answers picked the item, they never confirm it
    assert "fresh answers of each variant" in output
    assert "family-wise" in output and "fairness items" in output


def test_a_noisy_name_biased_scorer_fails_the_name_gate_with_a_confirmed_gap(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, dist: tuple[str, ...]
) -> None:
    # Kwame Asante is read one level lower on skills and experience: 16.7 overall points
    result, document = _run(
        pytester, monkeypatch, dist, flip="0.1", seed="5", bias_names="Kwame Asante"
    )
    gates = _gates(document)
    assert gates["counterfactual-gap[name]"] == "FAIL", gates
    assert gates["counterfactual-gap[gap]"] != "FAIL", gates
    assert result.ret == 1
    output = result.stdout.str()
    assert "counterfactual?name?" in output or "counterfactual[name]" in output
    # a failed item says how it was confirmed, with its interval
    assert "confirmed  gap " in output and "confirmed by a permutation test" in output
    assert "fresh answers of each variant" in output
    confirmed = document["confirmation"]["confirmed"]  # type: ignore[index]
    assert confirmed and all("counterfactual[name]" in c["item"] for c in confirmed)


def test_a_deterministic_scorer_is_judged_exactly_for_the_price_of_the_probe(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, dist: tuple[str, ...]
) -> None:
    # no flips, the name bias alone: every gap is exact, so it fails as before, unconfirmed
    result, document = _run(pytester, monkeypatch, dist, flip="0", bias_names="Kwame Asante")
    gates = _gates(document)
    assert gates["counterfactual-gap[name]"] == "FAIL"
    assert gates["counterfactual-gap[gap]"] == "PASS"
    assert result.parseoutcomes()["failed"] == CASES  # every case's name item, nothing else
    assert "the scorer measured no noise, so the difference is exact" in result.stdout.str()
    assert document["noise"]["deterministic"]  # type: ignore[index]
    calls = document["calls"]["scored"]  # type: ignore[index]
    extra = document["confirmation"]["extra_calls"]  # type: ignore[index]
    if not dist:
        assert extra <= max(5, 0.05 * (calls - extra))  # the probe alone
    else:
        # under -n each worker probes what it has scored; a worker that reaches an item before
        # it has re-scored 5 texts identically is not yet sure its scorer is exact, so it
        # confirms that item on fresh answers (at most one item's two texts, 12 answers each)
        assert extra <= 0.05 * (calls - extra) + 2 * (2 * 12)
