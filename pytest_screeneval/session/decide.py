"""The decide budget: re-scores spent where a fairness gate is INCONCLUSIVE, until it decides.

One part of :class:`~pytest_screeneval.session.core.ScreenevalSession`, run once at the end,
before the summary. ``screeneval_decide_budget`` (extra calls, default 0) is spent in at most
``ROUNDS`` rounds. Each round evaluates the counterfactual and perturbation gates with the same
builders the summary uses and, for each gate still INCONCLUSIVE, brings the texts that weigh
most on its interval up to that round's number of answers, ``ROUND_ANSWERS`` (the gates compare
medians of answers: three make a median that one jump cannot move, and each later round adds two
more, so a gate still undecided after three answers a text narrows further instead of stopping):

* a counterfactual gate: its cases' variant texts, the answer farthest from its case's other
  values first (an outlying answer is the one a re-score is most likely to correct);
* a perturbation gate: the originals first (one original weighs as much as all of a case's
  examples together, and it is shared by every kind), then the examples farthest from theirs.

Repeated looks are corrected by splitting the error (``evidence.gate_confidence``): with a
budget, every look, and the summary's own, is judged at ``1 − α / LOOKS``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from statistics import fmean
from typing import TYPE_CHECKING

from pytest_screeneval.evidence.bootstrap import center
from pytest_screeneval.evidence.fairness_gates import counterfactual_gate, perturbation_gate
from pytest_screeneval.evidence.fairness_summary import (
    ORIGINAL,
    FairnessCases,
    gap_summary,
    shift_summary,
)
from pytest_screeneval.evidence.gate_confidence import ROUNDS, gate_confidence
from pytest_screeneval.evidence.gate_result import INCONCLUSIVE, GateResult
from pytest_screeneval.session.confirmation import Side

if TYPE_CHECKING:
    from pytest_screeneval.session.confirmation import Confirmer
    from pytest_screeneval.settings.options import Settings

__all__ = ["CENTER_ANSWERS", "ROUND_ANSWERS", "Decider"]

CENTER_ANSWERS = 3
ROUND_ANSWERS = tuple(CENTER_ANSWERS + 2 * look for look in range(ROUNDS))  # 3, 5, 7


class Decider:
    def __init__(
        self,
        settings: Settings,
        confirmer: Confirmer,
        fairness_cases: Callable[[], FairnessCases],
        text_of: Callable[[str, str], str | None],
    ) -> None:
        self.settings = settings
        self.confirmer = confirmer
        self.fairness_cases = fairness_cases
        self.text_of = text_of  # (case id, variant key) -> the text scored under that key
        self.spent = 0
        self.rounds = 0

    @property
    def budget(self) -> int:
        return int(self.settings.decide_budget * self.confirmer.share)

    def gates(self, found: FairnessCases) -> list[GateResult]:
        s = self.settings
        noise = self.confirmer.noise()
        confidence = gate_confidence(s.decide_budget)
        gates = [
            counterfactual_gate(a, found.counterfactual[a], noise, s.max_gap, confidence)
            for a in gap_summary(found.counterfactual)
        ]
        gates += [
            perturbation_gate(
                k,
                found.perturbation[k],
                noise,
                s.max_perturbation_shift,
                s.perturbation_examples,
                confidence,
            )
            for k in shift_summary(found.perturbation)
        ]
        return gates

    def run(self) -> None:
        """Spend the budget, round by round, on the gates still INCONCLUSIVE."""
        for _round in range(ROUNDS):
            left = self.budget - self.spent
            if left <= 0:
                return
            found = self.fairness_cases()
            undecided = [g for g in self.gates(found) if g.status == INCONCLUSIVE]
            if not undecided:
                return
            wanted = self._wanted(found, undecided, ROUND_ANSWERS[_round])
            if not wanted:
                return
            # this round's share of the budget: what is left, over the rounds left
            share = max(1, left // (ROUNDS - _round))
            requests: list[tuple[str, Side]] = []
            for case_id, key, missing in wanted:
                text = self.text_of(case_id, key)
                if text is None:
                    continue
                take = min(missing, share - len(requests))
                requests += [(case_id, Side("decide", key, text))] * take
                if len(requests) >= share:
                    break
            made = self.confirmer.rescore(requests)
            self.spent += made
            self.confirmer.extra_calls += made
            self.rounds += 1
            if not made:
                return

    def _wanted(
        self, found: FairnessCases, undecided: Sequence[GateResult], answers: int
    ) -> list[tuple[str, str, int]]:
        """(case, variant key, answers missing to reach ``answers``) in the order re-scores
        shrink the undecided gates' intervals most (module docstring); each text at most once."""
        ranked: list[tuple[int, float, str, str, int]] = []
        for gate in undecided:
            family, _, target = gate.name.partition("[")
            target = target.rstrip("]")
            if family == "counterfactual-gap":
                for case in found.counterfactual.get(target, ()):
                    centers = {v: center(xs) for v, xs in case.answers.items() if xs}
                    if len(centers) < 2:
                        continue
                    middle = fmean(centers.values())
                    for label, xs in case.answers.items():
                        missing = answers - len(xs)
                        if missing > 0:
                            key = f"{target}={label}"
                            ranked.append(
                                (1, -abs(centers[label] - middle), case.case_id, key, missing)
                            )
            else:
                for shifted in found.perturbation.get(target, ()):
                    if not shifted.original:
                        continue
                    missing = answers - len(shifted.original)
                    if missing > 0:
                        ranked.append((0, 0.0, shifted.case_id, ORIGINAL, missing))
                    base = center(shifted.original)
                    for key, xs in shifted.examples.items():
                        missing = answers - len(xs)
                        if missing > 0:
                            ranked.append(
                                (2, -abs(center(xs) - base), shifted.case_id, key, missing)
                            )
        seen: set[tuple[str, str]] = set()
        wanted = []
        for _tier, _weight, case_id, key, missing in sorted(ranked):
            if (case_id, key) not in seen:
                seen.add((case_id, key))
                wanted.append((case_id, key, missing))
        return wanted
