"""The run's noise in its summary: the measured noise, the items confirmation left unstable,
and what confirming cost. The gates themselves are judged against the noise where they are
built (``evidence.gates``), in one pass; this only fills the summary's ``noise`` and
``confirmation``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_screeneval.evidence.gate_result import INCONCLUSIVE
from pytest_screeneval.golden.model import ORIGINAL

if TYPE_CHECKING:
    from pytest_screeneval.session.confirmation import Confirmer
    from pytest_screeneval.session.summary import RunSummary
    from pytest_screeneval.settings.options import Settings

__all__ = ["ItemOutcome", "extra_calls", "record_noise"]

ItemOutcome = tuple[str, str, str]  # node id, outcome, one line


def extra_calls(confirmer: Confirmer, repeat: int) -> int:
    """Calls spent beyond the plan: every answer past the run's own repeats (probe, confirming)."""
    return sum(
        1
        for (_case, variant, index), result in confirmer.scores.results.items()
        if not result.cached and index >= (repeat if variant == ORIGINAL else 1)
    )


def record_noise(
    summary: RunSummary,
    *,
    confirmer: Confirmer,
    settings: Settings,
    outcomes: Sequence[ItemOutcome],
    movements: dict[str, int] | None = None,
) -> None:
    noise = confirmer.noise()
    summary.noise = noise.as_dict() | {"described": noise.describe()}
    by_outcome: dict[str, list[dict[str, str]]] = {
        "confirmed": [],
        "unstable": [],
        "unconfirmed": [],
    }
    for nodeid, outcome, line in sorted(outcomes):
        by_outcome.setdefault(outcome, []).append({"item": nodeid, "detail": line})
    summary.confirmation = {
        "extra_calls": extra_calls(confirmer, settings.repeat),
        "budget": confirmer.budget,
        "judged_at": (
            "95% confidence, two-sided, Bonferroni-corrected over the value pairs (and cases) "
            f"compared, against the measured noise ({noise.describe()})"
        ),
        "movements": dict(sorted((movements or {}).items())),
        "inconclusive": settings.inconclusive,
        "inconclusive_gates": [g.name for g in summary.gates if g.status == INCONCLUSIVE],
        **by_outcome,
    }
