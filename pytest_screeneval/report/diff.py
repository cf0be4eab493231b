"""``screeneval diff BASE CAND``: the movement and agreement tables between any two stored runs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_screeneval.evidence.metrics import (
    ScoreTable,
    criterion_agreement,
    crossings,
    movements,
    slice_agreement,
)
from pytest_screeneval.report.terminal import agreement_table, movement_table, slice_table, table

if TYPE_CHECKING:
    from pytest_screeneval.golden.model import Case, Rubric
    from pytest_screeneval.store.database import RunRecord, ScoreRow

__all__ = ["diff_lines", "score_table"]


def score_table(rows: Sequence[ScoreRow]) -> dict[tuple[str, str], int | None]:
    """The original text's first-repeat score per (case, criterion) of a run's rows."""
    return {
        (row.case_id, row.criterion): row.score
        for row in rows
        if row.variant_key == "" and row.repeat_index == 0
    }


def diff_lines(
    base: RunRecord,
    cand: RunRecord,
    base_table: ScoreTable,
    cand_table: ScoreTable,
    cases: Sequence[Case],
    rubric: Rubric,
    tolerance: float,
    slice_min_n: int = 5,
) -> list[str]:
    shared = {key: value for key, value in cand_table.items() if key in base_table}
    shared_ids = {case_id for case_id, _ in shared}
    selected = [case for case in cases if case.id in shared_ids]
    lines = [
        f"base run {base.run_id}: {base.scorer} · model {base.model_id} · prompt "
        f"{base.prompt_sha[:12]} · rubric {base.rubric_sha[:12]} · {base.status}",
        f"cand run {cand.run_id}: {cand.scorer} · model {cand.model_id} · prompt "
        f"{cand.prompt_sha[:12]} · rubric {cand.rubric_sha[:12]} · {cand.status}",
        f"compared: {len(shared_ids)} cases, {len(shared)} (case, criterion) items scored by both",
        "",
        "Agreement by criterion (worst first; change = cand exact % − base exact %)",
    ]
    agreement = criterion_agreement(
        selected, rubric, shared, tolerance, {k: base_table[k] for k in shared}
    )
    lines += agreement_table(agreement)
    lines += ["", "Agreement by slice, cand (worst first)"]
    lines += slice_table(slice_agreement(selected, shared, tolerance), min_n=slice_min_n)
    moved = movements(shared, base_table)
    lines += ["", f"Movements: {len(moved)} of {len(shared)} items"]
    if moved:
        lines += movement_table(moved)
    flips = crossings(rubric, shared, base_table)
    lines += ["", f"Crossings (decision flips): {len(flips)}"]
    if flips:
        lines += table(
            ["case", "before", "after"],
            [
                [
                    c.case_id,
                    f"{c.before_overall:.1f} {c.before}",
                    f"{c.after_overall:.1f} {c.after}",
                ]
                for c in flips
            ],
        )
    return lines
