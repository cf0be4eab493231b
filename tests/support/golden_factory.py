"""Small synthetic golden sets and score rows for the store and CLI tests.

Every person, rater and employer here is invented.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from pytest_screeneval.golden.model import (
    Case,
    Criterion,
    Expectation,
    GapPlacement,
    GoldenSet,
    Rubric,
    Scale,
    VariantAttribute,
    Variants,
    VariantValue,
)
from pytest_screeneval.scoring.protocol import ScorerIdentity
from pytest_screeneval.store.database import ScoreRow

__all__ = [
    "CRITERIA",
    "make_case",
    "make_golden",
    "make_identity",
    "make_rows",
    "make_rubric",
    "make_variants",
]

CRITERIA = ("experience", "skills", "communication")


def make_rubric(rubric_id: str = "support-engineer", advance_at: float = 60.0) -> Rubric:
    return Rubric(
        id=rubric_id,
        version="3",
        scale=Scale(1, 5),
        advance_at=advance_at,
        criteria=(
            Criterion("experience", "Years of relevant support work.", 2.0, {5: ("senior",)}),
            Criterion("skills", "Tools and troubleshooting.", 1.0, {3: ("linux", "sql")}),
            Criterion("communication", "Clear writing with customers.", 1.0, {}),
        ),
    )


def make_variants() -> Variants:
    return Variants(
        {
            "name": VariantAttribute(
                "name",
                "replace",
                (
                    VariantValue("Ilona Varga", {"sex": "female"}),
                    VariantValue("Tomasz Brenner", {"sex": "male"}),
                ),
            ),
            "career_gap": VariantAttribute(
                "career_gap",
                "insert",
                (VariantValue(None), VariantValue("2019-2021: career break (family care)")),
            ),
        }
    )


def make_case(
    case_id: str,
    *,
    label: str = "career-changer",
    text: str | None = None,
    scores: Mapping[str, int] | None = None,
    set_by: str = "Rater Quill",
    set_at: str = "2024-03-01",
    ratings: Mapping[str, Mapping[str, int]] | None = None,
    rubric_id: str = "support-engineer",
    **extra: object,
) -> Case:
    job_line = "Support engineer at Brightwater Logistics, 2020-2024."
    text = text or f"Ilona Varga ({case_id})\n{job_line}\nSkills: linux, sql, ticket triage.\n"
    # attributes name text that is really in input_text, as the loader demands
    attributes: dict[str, object] = {}
    if "Ilona Varga" in text:
        attributes["name"] = "Ilona Varga"
    if job_line in text:
        attributes["career_gap"] = GapPlacement(None, job_line)
    scores = scores or {"experience": 4, "skills": 3, "communication": 4}
    return Case(
        id=case_id,
        label=label,
        rubric=rubric_id,
        input_text=text,
        expected={c: Expectation(c, s, set_by, set_at) for c, s in scores.items()},
        slices=("synthetic",),
        ratings=dict(ratings or {}),
        attributes=attributes,  # type: ignore[arg-type]
        demographics={"sex": "female"},
        source="written by hand for the store tests",
        **extra,  # type: ignore[arg-type]
    )


def make_golden(cases: Sequence[Case] | None = None, rubric: Rubric | None = None) -> GoldenSet:
    if cases is None:
        cases = [
            make_case("cc-001"),
            make_case(
                "cc-002",
                text="Tomasz Brenner\nFormer teacher, now help-desk analyst.\nSkills: sql.\n",
                ratings={"communication": {"rater-ab": 4, "rater-kt": 2}},
            ),
            make_case(
                "gap-001",
                label="career-gap",
                text="Noor Haddad\nSenior support lead at Kestrel Freight.\nSkills: linux.\n",
                xfail={"skills": "the keyword scorer cannot read tool lists"},
            ),
        ]
    return GoldenSet(rubric=rubric or make_rubric(), variants=make_variants(), cases=tuple(cases))


def make_identity(**changes: object) -> ScorerIdentity:
    identity = ScorerIdentity(
        name="keyword",
        model_id="keyword-v1",
        prompt_sha="p" * 64,
        rubric_sha="r" * 64,
        temperature=0.0,
    )
    return dataclasses.replace(identity, **changes)  # type: ignore[arg-type]


def make_rows(
    run_id: int,
    case_ids: Sequence[str],
    *,
    score: int = 3,
    variant_key: str = "",
    repeats: int = 1,
    criteria: Sequence[str] = CRITERIA,
) -> list[ScoreRow]:
    return [
        ScoreRow(
            run_id=run_id,
            case_id=case_id,
            variant_key=variant_key,
            repeat_index=repeat,
            criterion=criterion,
            score=score,
            rationale=f"The {criterion} criterion scores {score}; the resume says so.",
            evidence=("Support engineer at Brightwater Logistics",),
            confidence=0.75,
            latency_ms=12.5,
            attempts=1,
            error=None,
            input_sha256="a" * 64,
            prompt_tokens=100,
            completion_tokens=20,
        )
        for case_id in case_ids
        for repeat in range(repeats)
        for criterion in criteria
    ]
