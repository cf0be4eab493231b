"""What stands in the way of accepting a run as the baseline.

A run is refused while it has a failed gate, a crossing nobody reviewed, scorer errors, or is
partial (stopped before every selected item ran and was stored), unless forced with a note; the
store then accepts it only while the baseline it was judged against is still the current one
(compare-and-swap, never overridden by forcing). Both ``--screeneval-accept`` and
``screeneval accept`` ask here, reading the verdict the run recorded when it finished (the
verdict is part of the run's chained record, so it cannot be edited quietly afterwards).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from pytest_screeneval.boundary.documents import safe_string
from pytest_screeneval.errors import ScreenevalError
from pytest_screeneval.evidence.gate_status import GateStatus

if TYPE_CHECKING:
    from pytest_screeneval.evidence.gates import GateResult
    from pytest_screeneval.evidence.metrics import Crossing
    from pytest_screeneval.store.database import Acceptance, RunRecord, Store

AcceptCheck = Callable[["Store", "RunRecord"], Sequence[str]]

__all__ = ["AcceptCheck", "accept_run", "acceptance_blockers", "verdict_document"]


def verdict_document(
    gates: Sequence[GateResult],
    crossings: Sequence[Crossing],
    missing: str | None = None,
    items: Mapping[str, object] | None = None,
) -> dict[str, object]:
    """The verdict a run records at its finish: every gate and every crossing, for a partial
    run what is missing, and the items' outcomes (counts, the failed fairness items)."""
    document: dict[str, object] = {
        "gates": [gate.as_dict() for gate in gates],
        "crossings": [
            {"case_id": c.case_id, "before": c.before, "after": c.after} for c in crossings
        ],
    }
    if missing:
        document["missing"] = missing
    if items is not None:
        document["items"] = dict(items)
    return document


def acceptance_blockers(store: Store, run: RunRecord) -> list[str]:
    """Partial status, scorer errors, failed gates and unreviewed crossings of the run, as short
    phrases; empty when none."""
    blockers: list[str] = []
    if run.status == "partial":
        missing = (run.verdict or {}).get("missing")
        blockers.append(f"run {run.run_id} is partial" + (f" ({missing})" if missing else ""))
    errors = store.scorer_errors(run.run_id)
    if errors:
        blockers.append(f"{errors} scorer error(s)")
    if run.verdict is None:
        return [*blockers, f"run {run.run_id} recorded no gate verdict"]
    blockers += [
        f"failed gate {gate['name']}"
        for gate in run.verdict["gates"]
        if gate["status"] == GateStatus.FAIL
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


def accept_run(
    store: Store,
    run_id: int,
    *,
    by: str,
    note: str,
    force: bool = False,
    check: AcceptCheck | None = None,
    how_to_force: str = "force it with --force and a --note saying why",
) -> tuple[Acceptance, tuple[str, ...]]:
    """Accept a run as the baseline after ``check`` found nothing blocking it, or forced.

    Returns the acceptance and the blockers that were overridden (empty unless forced).
    """
    run = store.get_run(run_id)
    if run.status == "interrupted":
        raise ScreenevalError(f"run {run_id} was interrupted and can never become a baseline.")
    blockers = tuple(check(store, run)) if check is not None else ()
    if blockers and not force:
        raise ScreenevalError(
            f"Run {run_id} was not accepted: {'; '.join(blockers)}; review or fix them, "
            f"or {how_to_force}."
        )
    if blockers and not note.strip():
        raise ScreenevalError(f"Forcing the acceptance of run {run_id} needs a note saying why.")
    # typed by a person, kept in the chain: no control character, no secret (a pasted URL)
    acceptance = store.accept(
        run_id, by=safe_string(by), note=safe_string(note), forced=bool(blockers)
    )
    return acceptance, blockers
