"""The gate verdict a run recorded at its finish, and whether its acceptance still stands: worded
once for every place a stored run is shown (``screeneval runs``, ``show``, ``report``).

The verdict is read, never recomputed: it is what the run decided with its own settings, and it
is part of the run's chained record. Gate statuses are shown as they were stored (PASS, FAIL,
N/A, INCONCLUSIVE, or any a later version adds).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pytest_screeneval.evidence.gate_status import GateStatus

if TYPE_CHECKING:
    from pytest_screeneval.store.values import RunRecord

__all__ = [
    "FAIL",
    "acceptance_phrase",
    "failed_gates",
    "gate_status_cell",
    "replacements",
    "verdict_document",
    "verdict_summary",
]

FAIL = GateStatus.FAIL
PASS = GateStatus.PASS


def _gates(verdict: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    gates = (verdict or {}).get("gates") or []
    return [g for g in gates if isinstance(g, Mapping)]


def failed_gates(verdict: Mapping[str, Any] | None) -> list[str]:
    return [str(g.get("name")) for g in _gates(verdict) if g.get("status") == FAIL]


def verdict_summary(verdict: Mapping[str, Any] | None) -> str:
    """``2 gates failed (a, b); 1 INCONCLUSIVE`` / ``all 9 gates passed`` / ``no gate verdict``."""
    if verdict is None:
        return "no gate verdict recorded"
    gates = _gates(verdict)
    failed = failed_gates(verdict)
    others = Counter(str(g.get("status")) for g in gates if g.get("status") not in (FAIL, PASS))
    if failed:
        words = f"{len(failed)} of {len(gates)} gates failed ({', '.join(failed)})"
    else:
        words = f"no gate failed ({len(gates)} gates)"
    for status, count in sorted(others.items()):
        words += f"; {count} {status}"
    return words


def gate_status_cell(verdict: Mapping[str, Any] | None) -> str:
    """A short cell for the runs table: ``FAIL 2``, ``PASS``, ``INCONCLUSIVE 1``, or ``-``."""
    if verdict is None:
        return "-"
    if not _gates(verdict):
        return "none"
    failed = len(failed_gates(verdict))
    if failed:
        return f"{FAIL} {failed}"
    others = Counter(
        str(g.get("status")) for g in _gates(verdict) if g.get("status") not in (FAIL, PASS)
    )
    others.pop(GateStatus.NOT_APPLICABLE, None)  # a gate with nothing to judge is not a finding
    if others:
        status, count = sorted(others.items())[0]
        return f"{status} {count}"
    if not any(g.get("status") == PASS for g in _gates(verdict)):
        # every gate had nothing to judge (every call failed, say): that is no pass
        return "N/A"
    return PASS


def replacements(runs: Sequence[RunRecord]) -> dict[int, int]:
    """Baseline run id → the run whose acceptance replaced it."""
    replaced: dict[int, int] = {}
    for run in runs:
        previous = run.accepted.previous_baseline_run_id if run.accepted else None
        if previous is not None:
            replaced[previous] = run.run_id
    return replaced


def acceptance_phrase(run: RunRecord, replaced: Mapping[int, int]) -> str:
    """Who accepted the run, unless a later acceptance replaced it as the baseline."""
    if run.accepted is None:
        return "-"
    if run.run_id in replaced:
        return f"was baseline, replaced by run {replaced[run.run_id]}"
    return run.accepted.accepted_by


def verdict_document(run: RunRecord) -> dict[str, Any]:
    """The stored verdict as the audit document carries it."""
    verdict = run.verdict
    return {
        "recorded": verdict is not None,
        "summary": verdict_summary(verdict),
        "failed": failed_gates(verdict),
        "gates": [dict(g) for g in _gates(verdict)],
        "crossings": list((verdict or {}).get("crossings") or []),
        "missing": (verdict or {}).get("missing"),
    }
