"""The run's noise in its summary: the measured noise, the items confirmation left unstable,
and what confirming cost. The gates themselves are judged against the noise where they are
built (``evidence.gates``), in one pass; this only fills the summary's ``noise`` and
``confirmation``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_screeneval.evidence.gate_confidence import LOOKS, gate_confidence
from pytest_screeneval.evidence.gate_result import INCONCLUSIVE
from pytest_screeneval.golden.model import ORIGINAL
from pytest_screeneval.session.confirmation import ITEM_ERROR

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
    decided: tuple[int, int] = (0, 0),
) -> None:
    noise = confirmer.noise()
    confidence = gate_confidence(settings.decide_budget)
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
        "decide_budget": settings.decide_budget,
        "decide_calls": decided[0],
        "decide_rounds": decided[1],
        "items_error": (
            f"fairness items: at most {ITEM_ERROR:g} chance of any false failure in the run "
            f"(family-wise, Bonferroni over {confirmer.family()} counterfactual and "
            "perturbation items), each confirmed on fresh answers only by a permutation test"
        ),
        "judged_at": (
            f"gates: {100 * confidence:g}% simultaneous intervals over the value pairs "
            "(seeded case bootstrap on each text's median answer"
            + (
                f"; {1 - confidence:.3g} per look over {LOOKS} looks"
                if settings.decide_budget
                else ""
            )
            + f"), against the measured noise ({noise.describe()})"
        ),
        "movements": dict(sorted((movements or {}).items())),
        "inconclusive": settings.inconclusive,
        "inconclusive_gates": [g.name for g in summary.gates if g.status == INCONCLUSIVE],
        **by_outcome,
    }
