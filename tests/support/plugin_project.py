"""A small golden-set project for pytester runs of the plugin, with a scriptable scorer.

The scorer reads ``scores.json`` in the project on every call, so a test can change what it answers
between two runs (a moved score, a refusal, garbage). Every person and employer is invented.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from pytest_screeneval.golden.model import (
    Case,
    Criterion,
    Expectation,
    GapPlacement,
    Rubric,
    Scale,
    VariantAttribute,
    Variants,
    VariantValue,
)
from pytest_screeneval.golden.write import dump_case, dump_rubric, dump_variants

CRITERIA = ("skills", "experience", "communication")

RUBRIC = Rubric(
    id="data-analyst",
    version="1",
    scale=Scale(1, 5),
    advance_at=50.0,
    criteria=(
        Criterion(
            "skills",
            "SQL and Python for analysis.",
            1.0,
            {5: ("dbt",), 4: ("python",), 3: ("sql",)},
        ),
        Criterion(
            "experience", "Years of analytics work.", 1.0, {5: ("lead analyst",), 3: ("analyst",)}
        ),
        Criterion(
            "communication",
            "Explains findings to non-specialists.",
            1.0,
            {4: ("presented",), 3: ("reports",)},
        ),
    ),
)

VARIANTS = Variants(
    {
        "name": VariantAttribute(
            "name",
            "replace",
            (
                VariantValue("Mirela Dobos", {"sex": "female", "race": "white"}),
                VariantValue("Kwame Asante", {"sex": "male", "race": "black"}),
            ),
        ),
        "gap": VariantAttribute(
            "gap",
            "insert",
            (VariantValue(None), VariantValue("2020 - 2022  Career break (parental leave)")),
        ),
    }
)

# case id -> (slice, scores per criterion); the resume text names its own id on a "Ref:" line
CASES: dict[str, tuple[str, dict[str, int]]] = {
    "al-001": ("alpha", {"skills": 4, "experience": 3, "communication": 3}),
    "al-002": ("alpha", {"skills": 3, "experience": 3, "communication": 4}),
    "al-003": ("alpha", {"skills": 5, "experience": 5, "communication": 4}),
    "al-004": ("alpha", {"skills": 2, "experience": 2, "communication": 2}),
    "al-005": ("alpha", {"skills": 4, "experience": 4, "communication": 3}),
    "be-001": ("beta", {"skills": 3, "experience": 3, "communication": 3}),
    "be-002": ("beta", {"skills": 1, "experience": 2, "communication": 2}),
}


def resume(case_id: str, name: str = "Mirela Dobos") -> str:
    return (
        f"{name}\n"
        f"Ref: {case_id}\n"
        "Analyst at Harbourline Foods, March 2019 - June 2024\n"
        "- Built weekly sales reports in SQL and Python for 14 regional managers\n"
        "- Presented churn findings to the board\n"
        "Education: B.Sc. Statistics, Northmere University\n"
    )


def make_case(case_id: str, **changes: Any) -> Case:
    slice_name, scores = CASES[case_id]
    text = resume(case_id)
    fields: dict[str, Any] = dict(
        id=case_id,
        label=slice_name,
        rubric=RUBRIC.id,
        input_text=text,
        expected={c: Expectation(c, s, "rater-ql", "2026-10-01") for c, s in scores.items()},
        slices=("synthetic",),
        attributes={
            "name": "Mirela Dobos",
            "gap": GapPlacement(None, "Analyst at Harbourline Foods, March 2019 - June 2024"),
        },
        demographics={"sex": "female", "race": "white"},
        source="tests/support/plugin_project.py",
    )
    fields.update(changes)
    return Case(**fields)


CONFTEST = '''
import json
import pathlib
import re
import time

from pytest_screeneval import CriterionScore, ScorerError, ScorerIdentity
from pytest_screeneval.scoring.keyword import fold_ocr

HERE = pathlib.Path(__file__).parent


class TableScorer:
    """Answers what scores.json says for the case named on the resume's Ref: line."""

    def __init__(self, rubric):
        self.identity = ScorerIdentity(
            name="table", model_id="table-v1", prompt_sha="0" * 64,
            rubric_sha=rubric.sha, temperature=0.0,
        )
        self.calls = 0

    def score(self, text, rubric):
        self.calls += 1
        (HERE / "calls.log").open("a").write("call\\n")
        table = json.loads((HERE / "scores.json").read_text())
        # OCR-noise perturbations may touch the Ref line: fold look-alikes before the lookup
        found = re.search(r"Ref: (\\S+)", text).group(1)
        case_id = {fold_ocr(c): c for c in table["cases"]}.get(fold_ocr(found), found)
        entry = table["cases"].get(case_id, {})
        if "format_penalty" in table and "\u2022" in text:
            entry = {c: max(1, s - table["format_penalty"]) for c, s in entry.items()}
        if "Career break" in text and "gap_penalty" in table:
            entry = {c: max(1, s - table["gap_penalty"]) for c, s in entry.items()}
        trade = table.get("trade")  # a bias that trades one criterion for another
        if trade and trade["name"] in text:
            entry = dict(entry)
            entry[trade["down"]] = max(1, entry.get(trade["down"], 3) - 1)
            entry[trade["up"]] = min(5, entry.get(trade["up"], 3) + 1)
        behaviour = table.get("behaviour", {}).get(case_id)
        # seconds each call sleeps, per case or "*" for all: a slow or a hanging scorer
        pause = table.get("sleep", {})
        time.sleep(pause.get(case_id, pause.get("*", 0)))
        if behaviour == "raise":
            raise RuntimeError("the scoring service crashed")
        if behaviour == "refuse":
            raise ScorerError("the model refused: I cannot assess this candidate", raw="{}")
        if behaviour == "interrupt":
            raise KeyboardInterrupt
        if behaviour == "off-scale":
            quote = "\\"Presented churn findings to the board\\""
            return [CriterionScore(c, 9 if c == "skills" else 3,
                                   f"The {c} criterion scores well as the resume says {quote}.")
                    for c in rubric.criterion_names]
        if behaviour == "unknown-criterion":
            return [CriterionScore("charisma", 3, "The charisma criterion scores 3 here.")]
        answers = []
        for criterion in rubric.criterion_names:
            score = entry.get(criterion, 3)
            rationale = table.get("rationales", {}).get(case_id, {}).get(
                criterion,
                f"The {criterion} criterion scores {score} because the resume says "
                "\\"Built weekly sales reports in SQL and Python\\".",
            )
            confidence = table.get("confidence", {}).get(case_id)
            answers.append(CriterionScore(criterion, score, rationale, confidence=confidence))
        if behaviour == "repeat-drift":
            drift_file = HERE / "drift.count"
            count = int(drift_file.read_text()) if drift_file.exists() else 0
            drift_file.write_text(str(count + 1))
            if count % 2:
                answers[0] = CriterionScore(answers[0].criterion, 1, answers[0].rationale)
        return answers


def pytest_screeneval_scorer(config, rubric):
    return TableScorer(rubric)
'''


def write_project(pytester: pytest.Pytester, cases: list[Case] | None = None) -> Path:
    root = pytester.path
    cases_dir = root / "cases"
    cases_dir.mkdir(exist_ok=True)
    (cases_dir / "rubric.yaml").write_text(dump_rubric(RUBRIC), encoding="utf-8")
    (cases_dir / "variants.yaml").write_text(dump_variants(VARIANTS), encoding="utf-8")
    for case in cases if cases is not None else [make_case(c) for c in CASES]:
        folder = cases_dir / case.label
        folder.mkdir(exist_ok=True)
        (folder / f"{case.id}.yaml").write_text(dump_case(case), encoding="utf-8")
    pytester.makeconftest(CONFTEST)
    pytester.makeini(
        "[pytest]\n"
        f"screeneval_db = sqlite:///{(root / 'store.db').as_posix()}\n"
        "screeneval_perturbation_examples = 0\n"
    )
    set_scores(pytester, {c: s for c, (_, s) in CASES.items()})
    return root


def set_scores(pytester: pytest.Pytester, cases: dict[str, dict[str, int]], **extra: Any) -> None:
    table = {"cases": cases, **extra}
    (pytester.path / "scores.json").write_text(json.dumps(table), encoding="utf-8")


def expected_scores() -> dict[str, dict[str, int]]:
    return {c: dict(s) for c, (_, s) in CASES.items()}


def scorer_calls(pytester: pytest.Pytester) -> int:
    log = pytester.path / "calls.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def extra_calls(output: str) -> int:
    """The extra calls the run spent on noise (its probe re-scores a sample of the original
    texts every run; confirmations re-score more), as its summary states them."""
    found = re.search(r"confirmation cost (\d+) extra scorer calls", output)
    assert found, "the summary states no confirmation cost"
    return int(found.group(1))
