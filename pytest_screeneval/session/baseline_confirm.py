"""Confirm a difference with the baseline before an item fails on it.

One part of :class:`~pytest_screeneval.session.core.ScreenevalSession`, beside the
:class:`~pytest_screeneval.session.confirmation.Confirmer` it spends through. A criterion item
about to fail on a movement, or a decision item on a crossing, has the original text re-scored
(concurrently, as its next repeats, counted against ``screeneval_confirm_budget``) and fails
only when the difference holds against both runs' noise (``evidence.movement``). A scorer that
measured no noise makes no call more and keeps the plain verdict.

A movement is judged on fresh answers only (the first answer picked the item, so counting it
would favour the finding): first ``CONFIRM_REPEATS`` of them; when those leave the movement
undecided but beyond the tolerance, up to ``CONFIRM_MOST``. Two looks, each at 1 − 0.05/2
(Bonferroni), so the movement confirmed is false with probability at most 5%.

What each movement concluded is kept per (case, criterion) for the moved-share gate, and sent
from an xdist worker to the controller with the rest of its output.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from pytest_screeneval.evidence.movement import (
    LevelCheck,
    confirm_crossing,
    confirm_movement,
    level_sd,
)
from pytest_screeneval.evidence.noise import NoiseEstimate
from pytest_screeneval.golden.model import DECISION, ORIGINAL
from pytest_screeneval.session.confirmation import CONFIRM_REPEATS, Outcome, Side

CONFIRM_MOST = 15  # fresh answers a movement's second look may have
LOOKS = 2
LOOK_CONFIDENCE = 1 - 0.05 / LOOKS

if TYPE_CHECKING:
    from pytest_screeneval.evidence.metrics import Movement
    from pytest_screeneval.golden.model import Case, Rubric
    from pytest_screeneval.session.confirmation import Confirmer
    from pytest_screeneval.session.run import Baseline

__all__ = ["BaselineConfirmation"]


class BaselineConfirmation:
    def __init__(self, rubric: Rubric, baseline: Baseline, confirmer: Confirmer) -> None:
        self.rubric = rubric
        self.baseline = baseline
        self.confirmer = confirmer
        # (case, criterion) -> "confirmed" | "unstable" | "unconfirmed", for the moved-share gate
        self.movements: dict[tuple[str, str], str] = {}

    # ------------------------------------------------------------ answers

    def answers(self, case_id: str) -> list[Mapping[str, int]]:
        """Every usable answer of this run for the case's original text, first answer first."""
        found = [
            (repeat, {name: score.score for name, score in result.by_criterion.items()})
            for (case, variant, repeat), result in self.confirmer.scores.results.items()
            if case == case_id and variant == ORIGINAL and not result.cached
        ]
        return [levels for _repeat, levels in sorted(found, key=lambda pair: pair[0])]

    def _overall(self, answers: Iterable[Mapping[str, int]]) -> list[float]:
        names = set(self.rubric.criterion_names)
        return [self.rubric.overall(a) for a in answers if names <= set(a)]

    def _baseline_noise(self, current: NoiseEstimate) -> NoiseEstimate:
        """The baseline run's own noise when it measured any, else this run's."""
        noise = self.baseline.noise
        return noise if noise is not None and noise.measured else current

    def _rescored(self, case: Case, fresh: int = CONFIRM_REPEATS) -> tuple[int, bool]:
        """Probe, then re-score the original up to 1 + ``fresh`` answers unless the scorer
        measured no noise on at least five texts (fewer alike is no evidence: an -n worker with
        two cases could see them alike by chance). Returns the calls made and whether the
        budget refused them."""
        calls = self.confirmer.probe(spread=True, on_demand=True)
        if self.confirmer.trusts_exact():
            return calls, False
        wanted = max(0, fresh + 1 - len(self.answers(case.id)))
        if not wanted:
            return calls, False
        if self.confirmer.extra_calls + wanted > self.confirmer.budget:
            return calls, True
        side = Side("original", ORIGINAL, case.input_text)
        made = self.confirmer.rescore([(case.id, side)] * wanted)
        self.confirmer.extra_calls += made
        return calls + made, False

    def _spent(self, head: str, calls: int) -> Outcome:
        line = (
            f"{head}, not confirmed: the confirmation budget ({self.confirmer.budget} calls) is "
            "spent; raise screeneval_confirm_budget to judge it"
        )
        return Outcome("unconfirmed", line, calls)

    # ------------------------------------------------------------ items

    def movement(
        self, case: Case, criterion: str, tolerance: float, before_first: int, after_first: int
    ) -> Outcome:
        """Confirm the criterion's movement against the baseline beyond ``tolerance``."""
        before = [
            a[criterion] for a in self.baseline.originals.get(case.id, ()) if criterion in a
        ] or [before_first]
        calls = 0
        outcome: Outcome | None = None
        for fresh in (CONFIRM_REPEATS, CONFIRM_MOST):
            made, spent = self._rescored(case, fresh)
            calls += made
            if spent:
                outcome = self._spent(f"moved {before_first} → {after_first}", calls)
                break
            answers = [a[criterion] for a in self.answers(case.id) if criterion in a]
            # fresh answers only; none when the scorer measured no noise (the first is exact)
            now = answers[1:] or answers[:1] or [after_first]
            check = replace(
                self._movement_check(criterion, now, before, tolerance, LOOK_CONFIDENCE),
                before=before_first,
                after=after_first,  # the first answers, which the item is about
            )
            outcome = self._outcome(check, calls)
            beyond = abs(check.interval.estimate) > tolerance + 1e-9
            if check.exact or check.confirmed or not beyond:
                break
        assert outcome is not None
        self.movements[(case.id, criterion)] = outcome.status
        return outcome

    def _outcome(self, check: LevelCheck, calls: int) -> Outcome:
        status = "confirmed" if check.exact or check.confirmed else "unstable"
        return Outcome(status, check.describe(fresh=True), calls)

    def _movement_check(
        self,
        criterion: str,
        now: list[int],
        before: list[int],
        tolerance: float,
        confidence: float = 0.95,
        noise: NoiseEstimate | None = None,
    ) -> LevelCheck:
        noise = noise or self.confirmer.noise()
        exact_now = self.confirmer.trusts_exact()
        sd = 0.0 if exact_now else level_sd(noise, criterion)
        baseline_noise = self._baseline_noise(noise)
        baseline_sd = 0.0 if baseline_noise.deterministic else level_sd(baseline_noise, criterion)
        return confirm_movement(
            now,
            before,
            noise_sd=sd,
            baseline_sd=baseline_sd,
            tolerance=tolerance,
            confidence=confidence,
        )

    def crossing(self, case: Case, before_first: float, after_first: float) -> Outcome:
        """Confirm that the case's decision flipped against the baseline."""
        calls, spent = self._rescored(case)
        now = self._overall(self.answers(case.id)) or [after_first]
        before = self._overall(self.baseline.originals.get(case.id, ())) or [before_first]
        if spent:
            decide = self.rubric.decision
            outcome = self._spent(f"crossed {decide(before[0])} → {decide(now[0])}", calls)
        else:
            outcome = self._judge_crossing(now, before, calls)
        self.movements[(case.id, DECISION)] = outcome.status  # for unreviewed-crossings
        return outcome

    def _judge_crossing(self, now: list[float], before: list[float], calls: int) -> Outcome:
        noise = self.confirmer.noise()
        exact_now = self.confirmer.trusts_exact()
        baseline_noise = self._baseline_noise(noise)
        check = confirm_crossing(
            now,
            before,
            advance_at=self.rubric.advance_at,
            noise_sd=0.0 if exact_now else noise.overall_sd,
            df=noise.df or None,
            baseline_sd=baseline_noise.overall_sd,
            baseline_df=baseline_noise.df or None,
        )
        status = "confirmed" if check.exact or check.confirmed else "unstable"
        return Outcome(status, check.describe(), calls)

    def crossing_statuses(self, case_ids: Iterable[str]) -> list[str]:
        """What each case's decision item concluded of its crossing (``confirmed`` when none
        judged it: counted as before)."""
        return [self.movements.get((case_id, DECISION), "confirmed") for case_id in case_ids]

    # ------------------------------------------------------------ the summary

    def statuses(self, moved: Iterable[Movement]) -> Counter[str]:
        """What each unreviewed movement concluded: its item's confirmation, else (within the
        item's tolerance, or its item did not run) a judgement against no tolerance on the
        answers at hand, with no call: ``confirmed`` or ``not re-scored``."""
        counts: Counter[str] = Counter()
        noise = self.confirmer.noise()
        for m in moved:
            status = self.movements.get((m.case_id, m.criterion))
            if status is None:
                now = [a[m.criterion] for a in self.answers(m.case_id) if m.criterion in a]
                before = [
                    a[m.criterion]
                    for a in self.baseline.originals.get(m.case_id, ())
                    if m.criterion in a
                ]
                status = "not re-scored"
                if now and before:
                    judged = self._movement_check(m.criterion, now, before, 0.0, noise=noise)
                    status = "confirmed" if judged.exact or judged.confirmed else status
            counts[status] += 1
        return counts

    def output(self) -> tuple[tuple[str, str, str], ...]:
        return tuple((case, criterion, s) for (case, criterion), s in self.movements.items())

    def merge(self, rows: Iterable[tuple[str, str, str]]) -> None:
        for case, criterion, status in rows:
            self.movements[(case, criterion)] = status
