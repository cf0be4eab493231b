"""Noise against the baseline : a movement or a crossing fails an item only
once re-scoring confirmed it; agreement drop and moved share are judged against the noise.

End to end on the noisy project of ``test_noise_plugin`` (16 cases, the keyword scorer plus
seeded level flips, ``examples/noisy_scorer.py``), each judged run also under ``-n 2``. Baselines
run in one process: the example scorer seeds each answer by its count of calls for the text in
its process, so under ``-n`` the controller's noise probe re-draws the workers' first answers
and measures no noise. The assertions
are about verdicts whose error rates are negligible at these sizes, so they do not depend on
which worker scores which case.
"""

from __future__ import annotations

import json
import re

import pytest
from test_noise_plugin import CASES, ROOT, write_noisy_project

from pytest_screeneval.session.confirmation import CONFIRM_REPEATS, PROBE_MIN_TEXTS

BASELINE_ITEMS = "not counterfactual and not perturbation"
ACCEPT = ("--screeneval-accept", "--screeneval-accepted-by", "Ada Quill")

# the noisy scorer, and with SCREENEVAL_TEST_TWEAK set a "prompt change": skills one level lower
CONFTEST = f"""
import os
import sys
from dataclasses import replace

sys.path.insert(0, {str(ROOT)!r})

from examples.noisy_scorer import make_scorer


class Tweaked:
    def __init__(self, inner):
        self.inner = inner
        self.identity = replace(inner.identity, name="noisy-tweaked", prompt_sha="1" * 64)

    def score(self, text, rubric):
        return [
            replace(s, score=max(rubric.scale.min, s.score - 1)) if s.criterion == "skills" else s
            for s in self.inner.score(text, rubric)
        ]


def pytest_screeneval_scorer(config, rubric):
    scorer = make_scorer(rubric)
    return Tweaked(scorer) if os.environ.get("SCREENEVAL_TEST_TWEAK") else scorer
"""


@pytest.fixture(params=[pytest.param((), id="no-xdist"), pytest.param(("-n", "2"), id="n2")])
def dist(request: pytest.FixtureRequest) -> tuple[str, ...]:
    return tuple(request.param)


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    write_noisy_project(pytester)
    pytester.makeconftest(CONFTEST)
    for name in ("FLIP", "SHIFT", "SEED", "BIAS_NAMES"):
        monkeypatch.delenv(f"SCREENEVAL_NOISE_{name}", raising=False)
    monkeypatch.delenv("SCREENEVAL_TEST_TWEAK", raising=False)
    return pytester


def _run(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    *args: str,
    budget: int = 400,
    **noise: str,
) -> tuple[pytest.RunResult, dict[str, object]]:
    for name, value in noise.items():
        env = "SCREENEVAL_TEST_TWEAK" if name == "tweak" else f"SCREENEVAL_NOISE_{name.upper()}"
        monkeypatch.setenv(env, value)
    # one file per run: a run that wrote none must not be read as the one before
    summary = pytester.path / f"summary-{len(list(pytester.path.glob('summary-*.json')))}.json"
    # criterion and decision items only: the fairness items have tests of their own
    # and a budget that does not run out (16 calls plan a budget of 32), unless a test says
    # each run in a process of its own: two runs in one process can meet a store lock the
    # first one's engine still holds (see the perturbation run-to-run test)
    result = pytester.runpytest_subprocess(
        "--screeneval",
        *args,
        "-k",
        BASELINE_ITEMS,
        "-o",
        f"screeneval_confirm_budget={budget}",
        f"--screeneval-json={summary}",
    )
    assert summary.exists(), result.stdout.str() + result.stderr.str()
    return result, json.loads(summary.read_text(encoding="utf-8"))


def _gates(document: dict[str, object]) -> dict[str, dict[str, object]]:
    return {g["name"]: g for g in document["gates"]}  # type: ignore[attr-defined,index]


def test_a_rerun_of_the_same_noisy_scorer_accuses_no_movement_or_crossing(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, dist: tuple[str, ...]
) -> None:
    first, _ = _run(project, monkeypatch, *ACCEPT, flip="0.2", seed="11")
    assert first.ret == 0, first.stdout.str()
    result, document = _run(project, monkeypatch, *dist, flip="0.2", seed="12")
    output = result.stdout.str()
    # nothing changed but the draws: no item fails, though first answers moved and crossed
    assert result.parseoutcomes().get("failed", 0) == 0, output
    assert document["movements"], "a 20% flip rate moves some first answers"  # type: ignore[index]
    unstable = document["confirmation"]["unstable"]  # type: ignore[index]
    moved_items = [u for u in unstable if "moved " in u["detail"]]
    assert moved_items and all("; not confirmed by " in u["detail"] for u in moved_items)
    gates = _gates(document)
    assert gates["moved-share"]["status"] != "FAIL", gates["moved-share"]
    assert "within the noise" in str(gates["moved-share"]["detail"])
    # a crossing of the first answers that its decision item did not confirm is no finding
    assert gates["unreviewed-crossings"]["status"] != "FAIL", gates["unreviewed-crossings"]
    drops = {n: g for n, g in gates.items() if n.startswith("agreement-drop")}
    assert drops and all(g["status"] != "FAIL" for g in drops.values()), drops
    assert all("paired over 16 cases" in str(g["detail"]) for g in drops.values()), drops
    assert document["confirmation"]["movements"].get("confirmed", 0) == 0  # type: ignore[index]


def test_a_real_change_is_caught_and_confirmed_against_the_noise(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, dist: tuple[str, ...]
) -> None:
    # a deterministic baseline (no flips), then the same scorer noisy and one level lower on skills
    first, _ = _run(project, monkeypatch, *ACCEPT, flip="0", seed="3")
    assert first.ret == 0, first.stdout.str()
    result, document = _run(project, monkeypatch, *dist, flip="0.15", seed="4", tweak="1")
    output = result.stdout.str()
    assert result.ret == 1
    assert "confirmed  moved " in output, output
    # on fresh answers only: the first, which picked the item, is not counted
    assert re.search(r"; confirmed by \d+ fresh answers: mean ", output), output
    assert "Chebyshev" in output
    confirmed = document["confirmation"]["confirmed"]  # type: ignore[index]
    skills = [c for c in confirmed if c["item"].endswith("::skills")]
    assert len(skills) >= 4, confirmed
    if not dist:
        # in one process the run is reproducible: the flips of the other criteria stay unstable
        others = [c for c in confirmed if c["item"].endswith(("::experience", "::communication"))]
        assert not others, others
    gates = _gates(document)
    assert gates["moved-share"]["status"] == "FAIL", gates["moved-share"]
    assert gates["agreement-drop[skills]"]["status"] == "FAIL", gates["agreement-drop[skills]"]
    for name in ("agreement-drop[experience]", "agreement-drop[communication]"):
        assert gates[name]["status"] != "FAIL", gates[name]


def test_a_spent_budget_leaves_movements_unconfirmed_and_the_share_undecided(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, dist: tuple[str, ...]
) -> None:
    first, _ = _run(project, monkeypatch, *ACCEPT, flip="0", seed="3")
    assert first.ret == 0, first.stdout.str()
    result, document = _run(project, monkeypatch, *dist, budget=8, flip="0.3", seed="4", tweak="1")
    confirmation = document["confirmation"]  # type: ignore[index]
    unconfirmed = confirmation["unconfirmed"]
    assert unconfirmed and all("budget" in u["detail"] for u in unconfirmed), confirmation
    # an unconfirmed movement fails nothing (an item may still fail on its distance to the
    # expected score: the other reasons are not confirmed)
    blocks = result.stdout.str().split("___ ")  # one failure block after each header
    moved = [b for b in blocks if "  FAILED     moved " in b]
    assert all("  confirmed  moved " in b for b in moved), moved
    gates = _gates(document)
    assert gates["moved-share"]["status"] == "INCONCLUSIVE", gates["moved-share"]
    assert "raise screeneval_confirm_budget" in str(gates["moved-share"]["detail"])


def test_a_change_against_a_noisy_baseline_is_left_to_the_gates(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, dist: tuple[str, ...]
) -> None:
    # one noisy answer at the baseline cannot tell a one-level change from a fluke, item by item;
    # the gates, over 16 cases, still see it
    first, _ = _run(project, monkeypatch, *ACCEPT, flip="0.1", seed="21")
    assert first.ret == 0, first.stdout.str()
    result, document = _run(project, monkeypatch, *dist, flip="0.1", seed="22", tweak="1")
    gates = _gates(document)
    assert gates["agreement-drop[skills]"]["status"] == "FAIL", gates["agreement-drop[skills]"]
    assert gates["moved-share"]["status"] != "PASS", gates["moved-share"]
    assert result.ret == 1


def test_a_deterministic_change_fails_as_before_with_no_call_more(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, dist: tuple[str, ...]
) -> None:
    first, _ = _run(project, monkeypatch, *ACCEPT, flip="0")
    assert first.ret == 0, first.stdout.str()
    result, document = _run(project, monkeypatch, *dist, flip="0", tweak="1")
    output = result.stdout.str()
    moved = [m for m in document["movements"] if m["criterion"] == "skills"]  # type: ignore[attr-defined,index]
    # every moved skills item fails, exactly: no re-score beyond the noise probe
    failed = result.parseoutcomes()["failed"]
    assert failed >= len(moved) == CASES, output
    assert "the scorer measured no noise, so the movement is exact" in output
    assert "re-scores: mean" not in output
    gates = _gates(document)
    assert gates["moved-share"]["status"] == "FAIL"
    assert gates["moved-share"]["value"] == pytest.approx(100.0 * CASES / (3 * CASES))
    assert "paired over" not in str(gates["agreement-drop[skills]"]["detail"])
    assert gates["agreement-drop[skills]"]["status"] == "FAIL"
    extra = document["confirmation"]["extra_calls"]  # type: ignore[index]
    if not dist:
        assert extra <= PROBE_MIN_TEXTS  # the probe, five texts, and no call more
    else:
        # a worker holds too few texts when its first item asks: it confirms on fresh answers
        # until five texts have come back alike (never trusting one or two alike), so at most
        # CONFIRM_REPEATS re-scores of each of five texts a worker
        assert extra <= 2 * CONFIRM_REPEATS * PROBE_MIN_TEXTS


def test_the_movement_statuses_reach_the_controller(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # under -n 2 the moved-share gate counts what the workers' items concluded, as without
    _run(project, monkeypatch, *ACCEPT, flip="0", seed="3")
    _, alone = _run(project, monkeypatch, flip="0.1", seed="4", tweak="1")
    _, split = _run(project, monkeypatch, "-n", "2", flip="0.1", seed="4", tweak="1")
    for document in (alone, split):
        counts = document["confirmation"]["movements"]  # type: ignore[index]
        moved = len(document["movements"])  # type: ignore[arg-type]
        assert sum(counts.values()) == moved and counts.get("confirmed", 0) > 0, counts
