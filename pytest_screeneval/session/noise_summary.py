"""The run's noise in its summary: the measured noise, the gates judged against it, the items
confirmation left unstable, and what confirming cost.

One step after :func:`~pytest_screeneval.session.summary.summarize`: it replaces the fairness
gates (counterfactual gap, perturbation shift) and the gates against the baseline (agreement
drop, moved share) by their noise-aware versions and fills the summary's ``noise`` and
``confirmation``. Self-disagreement stays a gate of its own.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pytest_screeneval.evidence.baseline_gates import (
    agreement_drop_gate,
    crossings_gate,
    moved_share_gate,
    noise_differences,
)
from pytest_screeneval.evidence.gates import GateResult
from pytest_screeneval.evidence.noise_gates import counterfactual_gate, perturbation_gate
from pytest_screeneval.evidence.paired import INCONCLUSIVE
from pytest_screeneval.golden.model import ORIGINAL

if TYPE_CHECKING:
    from pytest_screeneval.session.baseline_confirm import BaselineConfirmation
    from pytest_screeneval.session.confirmation import Confirmer
    from pytest_screeneval.session.summary import RunSummary
    from pytest_screeneval.settings.options import Settings

__all__ = ["ItemOutcome", "extra_calls", "judge_against_noise"]

ItemOutcome = tuple[str, str, str]  # node id, outcome, one line


def extra_calls(confirmer: Confirmer, repeat: int) -> int:
    """Calls spent beyond the plan: every answer past the run's own repeats (probe, confirming)."""
    return sum(
        1
        for (_case, variant, index), result in confirmer.scores.results.items()
        if not result.cached and index >= (repeat if variant == ORIGINAL else 1)
    )


def _kept_detail(gate: GateResult) -> str:
    """What the plain gate said that the noise-aware one must keep (scorer errors left out)."""
    parts = [p for p in gate.detail.split("; ") if "scorer error" in p]
    return "; ".join(parts)


def judge_against_noise(
    summary: RunSummary,
    *,
    counterfactual_rows: Mapping[str, Mapping[str, Mapping[str, Any]]],
    perturbation_rows: Mapping[str, Mapping[str, Mapping[str, Any]]],
    confirmer: Confirmer,
    settings: Settings,
    outcomes: Sequence[ItemOutcome],
    against_baseline: BaselineConfirmation | None = None,
) -> None:
    noise = confirmer.noise()
    rows = {row.criterion: row for row in summary.agreement}
    moved: Counter[str] = Counter()
    reviewed = 0
    if against_baseline is not None:
        baseline = against_baseline.baseline
        unreviewed = [
            m
            for m in summary.movements
            if baseline.review(m.case_id, m.criterion, str(m.before), str(m.after)) is None
        ]
        reviewed = len(summary.movements) - len(unreviewed)
        moved = against_baseline.statuses(unreviewed)
    gates: list[GateResult] = []
    for gate in summary.gates:
        name, _, rest = gate.name.partition("[")
        target = rest.rstrip("]")
        judged = gate
        if name == "agreement-drop" and target in rows and against_baseline is not None:
            judged = agreement_drop_gate(gate, rows[target], noise, against_baseline.baseline.noise)
        elif name == "moved-share" and against_baseline is not None:
            share = noise_differences(noise, against_baseline.baseline.noise)
            judged = moved_share_gate(gate, moved, reviewed, share)
        elif name == "unreviewed-crossings" and against_baseline is not None and summary.crossings:
            crossed = [
                c.case_id for c in summary.crossings if c.case_id not in summary.reviewed_crossings
            ]
            judged = crossings_gate(gate, against_baseline.crossing_statuses(crossed))
        elif name == "counterfactual-gap" and counterfactual_rows.get(target):
            judged = counterfactual_gate(
                target, counterfactual_rows[target], noise, settings.max_gap
            )
        elif name == "perturbation-shift" and perturbation_rows.get(target):
            judged = perturbation_gate(
                target,
                perturbation_rows[target],
                noise,
                settings.max_perturbation_shift,
                settings.perturbation_examples,
            )
        fairness = name in ("counterfactual-gap", "perturbation-shift")
        if fairness and judged is not gate and (kept := _kept_detail(gate)):
            judged = GateResult(
                judged.name,
                judged.value,
                judged.limit,
                judged.n,
                judged.status,
                f"{judged.detail}; {kept}",
            )
        gates.append(judged)
    summary.gates = gates
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
        "movements": dict(sorted(moved.items())),
        "inconclusive": settings.inconclusive,
        "inconclusive_gates": [g.name for g in gates if g.status == INCONCLUSIVE],
        **by_outcome,
    }
