"""What stands in the way of accepting a run as the baseline (DESIGN §7).

A run is refused while it has a failed gate or a crossing nobody reviewed, unless forced with a
note. Both ``--screeneval-accept`` and ``screeneval accept`` ask here, reading the verdict the run
recorded when it finished (the verdict is part of the run's chained record, so it cannot be
edited quietly afterwards).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .store import RunRecord, Store

__all__ = ["acceptance_blockers", "verdict_document"]


def verdict_document(gates: Sequence[object], crossings: Sequence[object]) -> dict[str, object]:
    """The verdict a run records at its finish: every gate and every crossing."""
    return {
        "gates": [gate.as_dict() for gate in gates],  # type: ignore[attr-defined]
        "crossings": [
            {"case_id": c.case_id, "before": c.before, "after": c.after}  # type: ignore[attr-defined]
            for c in crossings
        ],
    }


def acceptance_blockers(store: Store, run: RunRecord) -> list[str]:
    """Failed gates and unreviewed crossings of the run, as short phrases; empty when none."""
    if run.verdict is None:
        return [f"run {run.run_id} recorded no gate verdict"]
    blockers = [
        f"failed gate {gate['name']}" for gate in run.verdict["gates"] if gate["status"] == "FAIL"
    ]
    if run.baseline_run_id is not None:
        for crossing in run.verdict["crossings"]:
            review = store.find_review(
                case_id=crossing["case_id"],
                target="decision",
                baseline_run_id=run.baseline_run_id,
                before=crossing["before"],
                after=crossing["after"],
            )
            if review is None:
                blockers.append(
                    f"unreviewed crossing {crossing['case_id']} "
                    f"({crossing['before']} → {crossing['after']})"
                )
    return blockers
