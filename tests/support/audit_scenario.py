"""A store holding a small synthetic golden set and three runs: an acceptance chain, movements,
a reviewed movement, a crossing, counterfactual variants and perturbations.

Shared by the audit-report tests and the browser test. Every person here is invented.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from pytest_screeneval.golden.model import Case, Rubric
from pytest_screeneval.probes.counterfactual import variant_key
from pytest_screeneval.store.database import ScoreRow, Store
from support.golden_factory import make_case, make_golden, make_identity, make_rubric

__all__ = ["CASE_SCORES", "DEMOGRAPHICS", "Scenario", "build_scenario", "overall_of"]

Scores = Mapping[str, int]  # criterion → score (experience, skills, communication)

# expected scores are golden_factory's default: experience 4, skills 3, communication 4
DEMOGRAPHICS = {
    "cc-001": {"sex": "female", "race": "asian", "age": "40 and over"},
    "cc-002": {"sex": "male", "race": "white", "age": "under 40"},
    "cc-003": {"sex": "female", "race": "black"},
    "gap-001": {"sex": "female", "race": "white", "age": "under 40"},
    "gap-002": {"sex": "male", "race": "black", "age": "40 and over"},
    "gap-003": {"sex": "male", "race": "unknown"},
    "ret-001": {"sex": "female", "race": "hispanic"},
    "ret-002": {},
}
# run → case → criterion scores (original text)
CASE_SCORES: dict[str, dict[str, tuple[int, int, int]]] = {
    "first": {
        "cc-001": (4, 3, 4),
        "cc-002": (3, 3, 3),
        "cc-003": (4, 3, 4),
        "gap-001": (4, 4, 4),
        "gap-002": (2, 2, 3),
        "gap-003": (5, 4, 4),
        "ret-001": (3, 3, 3),
        "ret-002": (4, 3, 4),
    },
    "second": {
        "cc-001": (4, 3, 4),
        "cc-002": (3, 3, 4),
        "cc-003": (4, 3, 4),
        "gap-001": (4, 4, 4),
        "gap-002": (2, 2, 3),
        "gap-003": (5, 4, 4),
        "ret-001": (3, 3, 3),
        "ret-002": (4, 3, 4),
    },
    "third": {
        "cc-001": (4, 3, 4),
        "cc-002": (3, 3, 2),  # communication moved 4 → 2 (reviewed below)
        "cc-003": (3, 2, 4),  # moved twice, and its decision crosses advance → hold
        "gap-001": (4, 4, 4),
        "gap-002": (2, 2, 3),
        "gap-003": (5, 4, 4),
        "ret-001": (4, 4, 3),
        "ret-002": (4, 3, 4),
    },
}
# third run's name variants: case → (score of the female-named, of the male-named variant)
NAME_VARIANTS = {"cc-001": ((4, 3, 4), (4, 4, 4)), "gap-001": ((4, 4, 4), (5, 4, 4))}
GAP_VARIANTS = {"cc-001": ((4, 3, 4), (3, 3, 4))}  # no gap line, then with the gap line
PERTURBED = {  # kind → [(case, scores)]
    "reformat": [("cc-001", (4, 3, 4)), ("gap-001", (4, 3, 4))],
    "ocr-noise": [("cc-001", (3, 3, 4))],
}
CRITERIA = ("experience", "skills", "communication")


def overall_of(rubric: Rubric, scores: tuple[int, int, int]) -> float:
    """Overall 0–100, written out here apart from Rubric.overall: weights 2, 1, 1 on 1..5."""
    weights = (2.0, 1.0, 1.0)
    return 100 * sum(w * (s - 1) / 4 for w, s in zip(weights, scores, strict=True)) / 4


def _row(run_id: int, case_id: str, key: str, criterion: str, score: int | None) -> ScoreRow:
    return ScoreRow(
        run_id=run_id,
        case_id=case_id,
        variant_key=key,
        repeat_index=0,
        criterion=criterion,
        score=score,
        rationale=f"The {criterion} evidence in the resume supports {score}.",
        evidence=(),
        confidence=0.7,
        latency_ms=5.0,
        attempts=1,
        error=None if score is not None else "the scorer refused",
        input_sha256="0" * 64,
    )


def _rows(run_id: int, case_id: str, key: str, scores: tuple[int, int, int]) -> list[ScoreRow]:
    return [_row(run_id, case_id, key, c, s) for c, s in zip(CRITERIA, scores, strict=True)]


@dataclass(frozen=True)
class Scenario:
    store: Store
    rubric: Rubric
    cases: dict[str, Case]
    runs: dict[str, int]  # "first", "second", "third" → run id


def _cases() -> list[Case]:
    cases = [
        make_case(
            "cc-001",
            set_by="Rater Quill",
            set_at="2024-03-01",
            ratings={"communication": {"rater-ab": 4, "rater-kt": 4, "rater-mo": 3}},
        ),
        make_case(
            "cc-002",
            text="Tomasz Brenner\nFormer teacher, now help-desk analyst.\n",
            set_by="Rater Quill",
            set_at="2024-03-04",
            ratings={"communication": {"rater-ab": 4, "rater-kt": 2}},
        ),
        make_case("cc-003", set_by="Rater Ferro", set_at="2024-04-10"),
        make_case("gap-001", label="career-gap", set_by="Rater Ferro", set_at="2024-04-11"),
        make_case(
            "gap-002",
            label="career-gap",
            set_by="Rater Ferro",
            set_at="2024-04-12",
            scores={"experience": 2, "skills": 2, "communication": 3},
        ),
        make_case("gap-003", label="career-gap", set_by="Rater Quill", set_at="2024-05-02"),
        make_case("ret-001", label="returner", set_by="Rater Ferro", set_at="2024-02-20"),
        make_case("ret-002", label="returner", set_by="Rater Ferro", set_at="2024-02-21"),
    ]
    return [
        replace(
            c,
            demographics=DEMOGRAPHICS[c.id],
            source="synthetic; written by hand" if c.label != "returner" else "generator v2",
        )
        for c in cases
    ]


def build_scenario(url: str) -> Scenario:
    """Three complete runs; the first two accepted (the second forced), the third not."""
    store = Store.open(url)
    rubric = make_rubric()
    golden = make_golden(_cases(), rubric)
    store.sync_golden_set(golden, now="2024-06-01T09:00:00+00:00")
    store.retire_case("ret-002", by="Curator Vale", at="2024-09-30T12:00:00+00:00")
    runs: dict[str, int] = {}
    baseline: int | None = None
    for name, by_case in CASE_SCORES.items():
        run_id = store.start_run(
            identity=make_identity(model_id=f"keyword-{name}"),
            rubric_id=rubric.id,
            golden_sha=golden.sha,
            plugin_version="0.1.0",
            vcs_commit="c0ffee" + name,
            notes=f"the {name} run",
            baseline_run_id=baseline,
            config={"max_gap": 2.0, "python": "3.11"},
        )
        rows = [r for case_id, s in by_case.items() for r in _rows(run_id, case_id, "", s)]
        if name == "third":
            rows += _variant_rows(run_id)
        store.write_scores(rows)
        store.finish_run(run_id, status="complete", served_model=f"keyword-{name}-served")
        runs[name] = run_id
        if name == "first":
            store.accept(run_id, by="Avery Lindqvist", note="first baseline")
        elif name == "second":
            store.accept(run_id, by="Bo Marchetti", note="tone fix; forced", forced=True)
        baseline = run_id
    store.add_review(
        run_id=runs["third"],
        case_id="cc-002",
        target="communication",
        baseline_run_id=runs["second"],
        before="4",
        after="2",
        by="Cleo Ashdown",
        note="the rationale is right: the resume shows no customer writing",
    )
    return Scenario(store, rubric, {c.id: c for c in golden.cases}, runs)


def _variant_rows(run_id: int) -> list[ScoreRow]:
    rows: list[ScoreRow] = []
    for case_id, (female, male) in NAME_VARIANTS.items():
        rows += _rows(run_id, case_id, variant_key("name", "Ilona Varga"), female)
        rows += _rows(run_id, case_id, variant_key("name", "Tomasz Brenner"), male)
    gap_line = "2019-2021: career break (family care)"
    for case_id, (without, with_gap) in GAP_VARIANTS.items():
        rows += _rows(run_id, case_id, variant_key("career_gap", None), without)
        rows += _rows(run_id, case_id, variant_key("career_gap", gap_line), with_gap)
    for kind, items in PERTURBED.items():
        for i, (case_id, scores) in enumerate(items):
            rows += _rows(run_id, case_id, f"perturb:{kind}:{i:012x}", scores)
    return rows
