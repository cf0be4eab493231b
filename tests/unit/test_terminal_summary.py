"""The terminal summary, on the renderer alone: the verdict first, small slices folded unless
verbose, unselected criteria left out, the real run id in the review hint, and whatever
status strings the gates carry (PASS, FAIL, N/A, INCONCLUSIVE) counted in the tally."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from pytest_screeneval.evidence.gates import GateResult
from pytest_screeneval.evidence.metrics import (
    CriterionAgreement,
    Crossing,
    Movement,
    SliceAgreement,
)
from pytest_screeneval.report.terminal import render
from pytest_screeneval.session.summary import RunSummary


def make_summary(**changes: Any) -> RunSummary:
    baseline = SimpleNamespace(run_id=3, scorer="keyword", model_id="kw-1", accepted=None)
    values: dict[str, Any] = dict(
        run_id=7,
        status="complete",
        identity={
            "name": "keyword",
            "model_id": "kw-1",
            "prompt_sha": "p" * 64,
            "rubric_sha": "r" * 64,
            "temperature": 0.0,
        },
        served_models=(),
        baseline=cast(Any, baseline),
        selection={"cases": 12, "of_cases": 12, "criterion": 36},
        agreement=[
            CriterionAgreement("skills", 0, 0, 0, 0.0, 0, 0, 0),
            CriterionAgreement("communication", 12, 9, 11, 0.3, 1, 1, 0),
        ],
        slices=[
            SliceAgreement("tiny-one", 1, 3, 0, 0.0, 70.0),
            SliceAgreement("synthetic", 12, 36, 30, 68.0, 92.0),
            SliceAgreement("tiny-two", 2, 6, 3, 18.0, 82.0),
        ],
        movements=[Movement("be-001", "skills", 3, 2)],
        crossings=[Crossing("be-001", 50.0, 25.0, "advance", "hold")],
        reviewed_crossings={},
        counterfactual={},
        perturbation={},
        consistency=None,
        gates=[
            GateResult("agreement", 83.0, ">= 80", 12, "PASS"),
            GateResult("unreviewed-crossings", 1.0, "<= 0", 1, "FAIL"),
            GateResult("name-gap", 4.0, "<= 5", 12, "INCONCLUSIVE", "within the noise"),
            GateResult("self-disagreement", None, "<= 5", 0, "N/A"),
        ],
        calls={
            "scored": 12,
            "reused": 0,
            "deduplicated": 0,
            "needed_retries": 0,
            "attempts": 12,
            "prompt_tokens": 0,
            "completion_tokens": 0,
        },
        errors=0,
        duration_s=1.0,
        slice_min_n=5,
    )
    values.update(changes)
    return RunSummary(**values)


def position(lines: list[str], prefix: str) -> int:
    return next(i for i, line in enumerate(lines) if line.startswith(prefix))


def test_the_verdict_comes_first() -> None:
    lines = render(make_summary())
    assert (
        position(lines, "Gates")
        < position(lines, "Movements against run 3")
        < position(lines, "Crossings (decision flips): 1")
        < position(lines, "Agreement by criterion")
        < position(lines, "Agreement by slice")
    )


def test_the_tally_counts_every_status() -> None:
    lines = render(make_summary())
    tally = lines[position(lines, "gates: ")]
    assert tally == "gates: 1 failed (unreviewed-crossings), 1 INCONCLUSIVE"
    assert any("INCONCLUSIVE" in line and "name-gap" in line for line in lines)


def test_small_slices_fold_into_one_line_unless_verbose() -> None:
    lines = render(make_summary())
    assert "  2 slices under n=5 not gated and not shown (tiny-one, tiny-two); -v shows them" in (
        lines
    )
    assert not any(line.startswith("  tiny-one") for line in lines)
    verbose = render(make_summary(), verbose=True)
    assert any(line.startswith("  tiny-one") for line in verbose)
    assert not any("not gated and not shown" in line for line in verbose)


def test_unselected_criteria_are_left_out() -> None:
    lines = render(make_summary())
    start = position(lines, "Agreement by criterion")
    assert "1 criterion not selected" in lines[start]
    assert lines[start + 2].split()[0] == "communication"
    assert not any(line.split()[:1] == ["skills"] for line in lines[start:])


def test_the_review_hint_names_the_run() -> None:
    lines = render(make_summary())
    assert "  review one: screeneval review 7 CASE --by NAME --note TEXT" in lines
    reviewed = render(make_summary(reviewed_crossings={"be-001": "Bo Lindqvist"}))
    assert not any("review one:" in line for line in reviewed)
