"""Confirm before accusing: the session's noise probe and its re-scoring budget.

One :class:`Confirmer` per session, composed into it. An item about to fail on a difference asks
it to confirm: the first time, it measures the scorer's noise by re-scoring a sample of the
originals this process scored (at most ``max(5 texts, 5% of the planned calls)``); with no noise
measured the difference is exact and costs nothing more; otherwise each text involved is
re-scored ``CONFIRM_REPEATS`` times and the difference must hold against the measured noise
(``evidence.confirm``). Every extra call counts against ``screeneval_confirm_budget``; when it is
spent, the items left say so instead of accusing on one noisy answer.

Re-scores are stored like every score: the next free repeat index of their (case, variant), so
the store, the controller of an ``-n`` run and the audit report all see the same evidence.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from pytest_screeneval.evidence.confirm import Confirmation, confirm_spread
from pytest_screeneval.evidence.noise import NoiseEstimate, estimate_noise
from pytest_screeneval.evidence.verdicts import ConfirmationNote
from pytest_screeneval.golden.model import ORIGINAL, sha256_text
from pytest_screeneval.scoring.results import JobResult, ScoringJob
from pytest_screeneval.scoring.runner import run_jobs

if TYPE_CHECKING:
    from pytest_screeneval.golden.model import Case, Rubric
    from pytest_screeneval.scoring.protocol import Scorer
    from pytest_screeneval.settings.options import Settings

__all__ = ["CONFIRM_REPEATS", "Confirmer", "Outcome", "Side"]

CONFIRM_REPEATS = 3
PROBE_MIN_TEXTS = 5
PROBE_SHARE = 0.03  # of the planned calls: under 5% of the calls a run really makes


@dataclass(frozen=True)
class Side:
    """One text of a difference: a counterfactual value, the original or a perturbation."""

    label: str
    variant_key: str
    text: str


@dataclass(frozen=True)
class Outcome:
    """What confirmation concluded for one difference that was about to fail an item."""

    status: str  # "confirmed" | "unstable" | "unconfirmed"
    line: str  # one line for the item's block
    calls: int  # extra scorer calls this confirmation (and a probe it triggered) cost
    confirmation: Confirmation | None = None

    @property
    def confirmed(self) -> bool:
        return self.status == "confirmed"

    def properties(self) -> tuple[tuple[str, str], ...]:
        return (
            ("outcome", self.status),
            ("confirmation", self.line),
            ("confirm_calls", str(self.calls)),
        )

    def note(self) -> ConfirmationNote:
        """The outcome as the pure item rules take it."""
        return ConfirmationNote(self.status, self.line, self.properties())


class _Scores(Protocol):
    """What the confirmer reads and scores through (the session's scores part)."""

    results: dict[tuple[str, str, int], JobResult]
    scorer: Scorer | None
    calls: int
    run: Any

    def overall_of(self, result: JobResult) -> float | None: ...


class Confirmer:
    def __init__(
        self,
        settings: Settings,
        rubric: Rubric,
        scores: _Scores,
        cases: Mapping[str, Case],
        score_texts: Callable[[list[ScoringJob]], list[JobResult]] | None = None,
    ) -> None:
        self.settings = settings
        self.rubric = rubric
        self.scores = scores
        self.cases = cases
        self.score_texts = score_texts
        self.planned_calls = 0  # the calls the selection plans (texts × repeats + examples)
        self.share = 1.0  # of the run this process scores (1 / workers under -n)
        self.extra_calls = 0
        self.probe_calls = 0
        self.probed = False
        self._noise: tuple[tuple[int, int], NoiseEstimate] | None = None

    def plan(self, calls: int, *, share: float = 1.0) -> None:
        """The calls the selection plans before any confirmation (sets the probe and budget);
        ``share``: of the run this process scores (1 / workers under -n)."""
        self.planned_calls = calls
        self.share = share

    # ------------------------------------------------------------ figures

    @property
    def budget(self) -> int:
        """Calls confirmation may spend: the setting, else twice the planned calls (3× in all)."""
        configured = self.settings.confirm_budget
        if configured is not None:
            return int(configured * self.share)
        return max(2 * int(self.planned_calls * self.share), 2 * PROBE_MIN_TEXTS)

    def observations(self, case_id: str, variant_key: str) -> list[float]:
        """Overall scores of every answer for one text, first answer first."""
        found = []
        for (case, variant, repeat), result in self.scores.results.items():
            if case == case_id and variant == variant_key:
                overall = self.scores.overall_of(result)
                if overall is not None:
                    found.append((repeat, overall))
        return [overall for _repeat, overall in sorted(found)]

    def noise(self) -> NoiseEstimate:
        """The noise measured so far from every text answered more than once."""
        # Every item asks. Answers are added, never replaced, and only a text's second answer
        # (a repeat) changes the estimate: the count of repeats tells when to compute again.
        results = self.scores.results
        key = (id(results), sum(1 for _case, _variant, repeat in results if repeat))
        if self._noise is not None and self._noise[0] == key:
            return self._noise[1]
        estimate = self._estimate_noise()
        self._noise = (key, estimate)
        return estimate

    def _estimate_noise(self) -> NoiseEstimate:
        samples: dict[str, list[tuple[int, dict[str, int]]]] = defaultdict(list)
        for (case, variant, repeat), result in self.scores.results.items():
            if result.cached or not result.by_criterion:
                continue
            levels = {name: score.score for name, score in result.by_criterion.items()}
            samples[f"{case}\x00{variant}"].append((repeat, levels))
        ordered = {key: [levels for _r, levels in sorted(rows)] for key, rows in samples.items()}
        return estimate_noise(ordered, self.rubric)

    # ------------------------------------------------------------ scoring

    def _next_repeat(self, case_id: str, variant_key: str) -> int:
        next_repeat = getattr(self.scores, "next_repeat", None)
        if callable(next_repeat):  # the scores part also knows the repeats still in flight
            return int(next_repeat(case_id, variant_key))
        used = [r for (c, v, r) in self.scores.results if c == case_id and v == variant_key]
        return max(used, default=-1) + 1

    def rescore(self, requests: Sequence[tuple[str, Side]]) -> int:
        """Score each (case id, side) once more, as its next repeat; returns the calls made."""
        jobs = []
        taken: dict[tuple[str, str], int] = {}
        for case_id, side in requests:
            key = (case_id, side.variant_key)
            repeat = taken.get(key, self._next_repeat(case_id, side.variant_key))
            taken[key] = repeat + 1
            jobs.append(
                ScoringJob(case_id, side.variant_key, repeat, side.text, sha256_text(side.text))
            )
        if not jobs:
            return 0
        score_texts = self.score_texts or getattr(self.scores, "score_texts", None)
        if callable(score_texts):  # the session's runner: concurrent, stored, counted
            return len(score_texts(jobs))
        scores = self.scores
        assert scores.scorer is not None
        results = run_jobs(
            scores.scorer,
            self.rubric,
            jobs,
            concurrency=self.settings.concurrency,
            timeout=self.settings.timeout,
            adaptive=self.settings.adaptive,
        )
        for result in results:
            scores.calls += 1
            job = result.job
            scores.results[(job.case_id, job.variant_key, job.repeat_index)] = result
            scores.run.queue(result)
        scores.run.flush()
        return len(results)

    def probe(self, *, spread: bool = False) -> int:
        """Measure the noise once per process: re-score originals this process has scored.

        ``spread``: an item asks mid-run, so first wait for enough of the originals queued
        next (at the end of a run everything that will be scored already is, or was stopped).
        """
        if self.probed:
            return 0
        self.probed = True
        # the originals this process scored (an -n controller: every worker's, from the store)
        originals = sorted(
            {
                case_id
                for (case_id, variant, repeat), result in self.scores.results.items()
                if variant == ORIGINAL
                and repeat == 0
                and not result.cached
                and case_id in self.cases
            }
        )
        wanted = max(PROBE_MIN_TEXTS, math.floor(PROBE_SHARE * self.planned_calls * self.share))
        if spread:
            originals += self._settle_more(originals, wanted)
        if not originals:
            return 0
        texts = {case_id: self.cases[case_id].input_text for case_id in originals}
        # spread over the originals, evenly, round after round when there are fewer of them
        step = max(1, len(originals) // wanted) if wanted < len(originals) else 1
        picked = [originals[(i * step) % len(originals)] for i in range(wanted)]
        calls = self.rescore([(c, Side("original", ORIGINAL, texts[c])) for c in picked])
        self.probe_calls += calls
        self.extra_calls += calls
        return calls

    def _settle_more(self, originals: Sequence[str], wanted: int) -> list[str]:
        """Wait for the originals queued next in this process, so that the probe spreads over
        ``wanted`` texts: probed at an item of the run's first case, it would otherwise re-score
        that one text over and over, and one text that happens to come back alike five times
        would pass a noisy scorer for a deterministic one."""
        planned = getattr(self.scores, "planned_calls", None)
        settle = getattr(self.scores, "settle", None)
        if not callable(planned) or not callable(settle):
            return []
        have = set(originals)
        queued = [
            job.case_id
            for job in planned()
            if job.variant_key == ORIGINAL
            and job.repeat_index == 0
            and job.case_id in self.cases
            and job.case_id not in have
        ]
        more = list(dict.fromkeys(queued))[: max(0, wanted - len(have))]
        for case_id in more:
            settle(case_id)
        return [c for c in more if (c, ORIGINAL, 0) in self.scores.results]

    def exact(self) -> bool:
        """Whether this scorer measured no noise (probing first): its differences are exact."""
        self.probe(spread=True)
        noise = self.noise()
        return noise.measured and noise.deterministic

    # ------------------------------------------------------------ confirming

    def confirm(
        self,
        case: Case,
        sides: Sequence[Side],
        limit: float,
        noun: str,
        sides_noun: str,
        family: int = 1,
    ) -> Outcome:
        """Confirm that the largest difference between ``sides`` exceeds ``limit``."""
        calls = self.probe(spread=True)
        noise = self.noise()
        if not (noise.measured and noise.deterministic):  # no evidence of no noise: re-score
            wanted: list[tuple[str, Side]] = []
            for side in sides:
                have = len(self.observations(case.id, side.variant_key))
                wanted.extend((case.id, side) for _ in range(max(0, CONFIRM_REPEATS + 1 - have)))
            if wanted and self.extra_calls + len(wanted) > self.budget:
                seen = self._judge(case, sides, limit, noise, family)
                line = (
                    f"{noun} {seen.first_seen:.1f} points, not confirmed: the confirmation budget "
                    f"({self.budget} calls) is spent; raise screeneval_confirm_budget to judge it"
                )
                return Outcome("unconfirmed", line, calls, seen)
            made = self.rescore(wanted)
            self.extra_calls += made
            calls += made
            noise = self.noise()
        judged = self._judge(case, sides, limit, noise, family)
        status = "confirmed" if judged.confirmed else "unstable"
        return Outcome(status, judged.describe(noun, sides_noun), calls, judged)

    def _judge(
        self, case: Case, sides: Sequence[Side], limit: float, noise: NoiseEstimate, family: int
    ) -> Confirmation:
        observations: Mapping[str, list[float]] = {
            side.label: self.observations(case.id, side.variant_key) for side in sides
        }
        return confirm_spread(
            observations,
            noise_sd=noise.overall_sd,
            df=noise.df or None,
            limit=limit,
            family=family,
        )
