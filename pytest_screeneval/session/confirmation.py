"""Confirm before accusing: the session's noise probe and its re-scoring budget.

One :class:`Confirmer` per session, composed into it. An item about to fail on a difference asks
it to confirm: the first time, it measures the scorer's noise by re-scoring distinct originals
this process scored (``probe_size``: 3% of the planned calls, at least 5 texts, never over 5%;
none in a run too small for that). A scorer whose re-scores of at least 5 texts all came back
identical is exact: the difference stands as it is. Otherwise the two texts farthest apart are
re-scored and only their fresh answers decide (``confirm``): a permutation test at the run's
family-wise level over its fairness items. Every extra call counts against
``screeneval_confirm_budget``; when it is spent, the items left say so instead of accusing on
one noisy answer.

Re-scores are stored like every score: the next free repeat index of their (case, variant), so
the store, the controller of an ``-n`` run and the audit report all see the same evidence.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import TYPE_CHECKING, Any, Protocol

from pytest_screeneval.evidence.noise import NoiseEstimate, estimate_noise
from pytest_screeneval.evidence.permutation import shift_permutation_p, smallest_p
from pytest_screeneval.evidence.verdicts import ConfirmationNote
from pytest_screeneval.golden.model import ORIGINAL, sha256_text
from pytest_screeneval.scoring.results import JobResult, ScoringJob
from pytest_screeneval.scoring.runner import run_jobs

if TYPE_CHECKING:
    from pytest_screeneval.golden.model import Case, Rubric
    from pytest_screeneval.scoring.protocol import Scorer
    from pytest_screeneval.settings.options import Settings

__all__ = ["CONFIRM_REPEATS", "Confirmer", "Outcome", "Side"]

CONFIRM_REPEATS = 3  # re-scores of an original that confirm a movement or a crossing
PROBE_MIN_TEXTS = 5  # fewer re-scored texts measure no noise (and never call a scorer exact)
PROBE_SHARE = 0.03  # of the planned calls: under 5% of the calls a run really makes
PROBE_MOST = 0.05  # of the planned calls: the probe never costs more
ITEM_ERROR = 0.05  # the chance of any false fairness item failure in a run (family-wise)
FRESH_FIRST_LOOK = 3  # fresh answers of each side before a difference may be pursued
FRESH_MOST = 12  # fresh answers of each side at most


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
        self.fairness_items = 0  # the run's counterfactual and perturbation items
        self.share = 1.0  # of the run this process scores (1 / workers under -n)
        self.extra_calls = 0
        self.probe_calls = 0
        self.probed_texts: set[tuple[str, str]] = set()  # (case, variant) re-scored
        self._noise: tuple[tuple[int, int], NoiseEstimate] | None = None

    def plan(self, calls: int, *, share: float = 1.0, fairness_items: int = 0) -> None:
        """The calls the selection plans before any confirmation (sets the probe and budget);
        ``share``: of the run this process scores (1 / workers under -n); ``fairness_items``:
        the run's fairness items (the family of its item error rate)."""
        self.planned_calls = calls
        self.share = share
        self.fairness_items = fairness_items

    # ------------------------------------------------------------ figures

    @property
    def budget(self) -> int:
        """Calls confirmation may spend: the setting, else twice the planned calls (3× in all)."""
        configured = self.settings.confirm_budget
        if configured is not None:
            return int(configured * self.share)
        return max(2 * int(self.planned_calls * self.share), 2 * PROBE_MIN_TEXTS)

    def observations(
        self, case_id: str, variant_key: str, criterion: str | None = None
    ) -> list[float]:
        """Overall scores (or, with ``criterion``, that criterion's levels) of every answer for
        one text, first answer first."""
        found: list[tuple[int, float]] = []
        for (case, variant, repeat), result in self.scores.results.items():
            if case != case_id or variant != variant_key:
                continue
            if criterion is None:
                value = self.scores.overall_of(result)
            else:
                score = result.by_criterion.get(criterion)
                value = None if score is None else float(score.score)
            if value is not None:
                found.append((repeat, value))
        return [value for _repeat, value in sorted(found)]

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

    def probe(self, *, spread: bool = False, on_demand: bool = False) -> int:
        """Measure the noise: re-score distinct texts this process has scored, once each, up to
        ``probe_size`` texts in all: originals first, then counterfactual variants. An item that
        asks early, when few originals are scored (an -n worker gets its cases a few at a
        time), still re-scores distinct texts (its case's variants), and a later item tops the
        probe up: one text re-scored five times says little of the next.

        ``spread``: an item asks mid-run, so first wait for enough of the originals queued
        next (at the end of a run everything that will be scored already is, or was stopped).
        ``on_demand``: a difference is about to be confirmed, so a run too small for the planned
        probe still re-scores ``PROBE_MIN_TEXTS`` texts: fewer calls than confirming each of
        its differences on fresh answers when the scorer turns out deterministic.
        """
        wanted = self.probe_size() or (PROBE_MIN_TEXTS if on_demand else 0)
        if not wanted or len(self.probed_texts) >= wanted:
            return 0  # too small a run to probe (the noise is not measured), or probed
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
        if spread:
            originals += self._settle_more(originals, wanted)
        texts: dict[tuple[str, str], str] = {
            (c, ORIGINAL): self.cases[c].input_text for c in dict.fromkeys(originals)
        }
        for (case_id, variant, repeat), result in sorted(self.scores.results.items()):
            if repeat == 0 and "=" in variant and result.job.text and not result.cached:
                texts.setdefault((case_id, variant), result.job.text)
        fresh = [key for key in texts if key not in self.probed_texts]
        need = wanted - len(self.probed_texts)
        if not fresh:
            return 0
        # spread evenly over the originals at hand, then over the variants
        origin = [k for k in fresh if k[1] == ORIGINAL]
        step = max(1, len(origin) // need)
        picked = origin[::step][:need]
        picked += [k for k in fresh if k[1] != ORIGINAL][: need - len(picked)]
        calls = self.rescore([(c, Side("probe", v, texts[(c, v)])) for c, v in picked])
        self.probed_texts.update(picked)
        self.probe_calls += calls
        self.extra_calls += calls
        return calls

    def probe_size(self) -> int:
        """Texts the probe re-scores: 3% of this process's planned calls, at least
        ``PROBE_MIN_TEXTS``, never over 5% of them; 0 when 5% is fewer than that (the noise is
        then "not measured", and every item about to fail on a difference confirms)."""
        planned = self.planned_calls * self.share
        most = math.floor(PROBE_MOST * planned)
        if most < PROBE_MIN_TEXTS:
            return 0
        return min(most, max(PROBE_MIN_TEXTS, math.floor(PROBE_SHARE * planned)))

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
        """Whether this scorer's differences are exact (probing first): see ``trusts_exact``."""
        self.probe(spread=True)
        return self.trusts_exact()

    # ------------------------------------------------------------ confirming

    def trusts_exact(self) -> bool:
        """Whether this scorer's differences are exact: every re-score of at least
        ``PROBE_MIN_TEXTS`` texts came back identical (fewer is no evidence: a noisy scorer
        can answer five texts alike by chance)."""
        noise = self.noise()
        return noise.measured and noise.deterministic and noise.texts >= PROBE_MIN_TEXTS

    def family(self) -> int:
        """The fairness items the run judges: the family its error rate is controlled over."""
        return max(1, self.fairness_items)

    def item_alpha(self, tests: int = 1) -> float:
        """The level of one of an item's ``tests`` (its criteria, say): the run's family-wise
        error over its fairness items, and over the item's own tests (Bonferroni)."""
        return ITEM_ERROR / self.family() / max(1, tests)

    def fresh_answers_needed(self, tests: int = 1) -> int:
        """Fresh answers a side needs so the permutation test can reach the item's level with
        room to spare (its smallest p-value at most a fifth of the level)."""
        alpha = self.item_alpha(tests)
        n = FRESH_FIRST_LOOK
        while smallest_p(n, n) > alpha / 5 and n < FRESH_MOST:
            n += 1
        return max(n, FRESH_FIRST_LOOK)

    def confirm(
        self,
        case: Case,
        sides: Sequence[Side],
        limit: float,
        noun: str,
        sides_noun: str,
        *,
        criterion: str | None = None,
        tests: int = 1,
    ) -> Outcome:
        """Confirm that the largest first-answer difference between ``sides`` exceeds ``limit``.

        The two sides whose first answers are farthest apart are re-scored, and only their
        fresh answers (never the first ones, which picked them) are compared: first
        ``FRESH_FIRST_LOOK`` of each, which stops as unstable when their gap is within the
        limit; then up to ``fresh_answers_needed`` of each, and a permutation test at the
        run's family-wise level (``ITEM_ERROR`` over the fairness items, and over the item's
        ``tests``) decides. The difference is in overall points, or with ``criterion`` in that
        criterion's levels.
        """
        calls = self.probe(spread=True, on_demand=True)
        unit = "points" if criterion is None else "level(s)"
        firsts = {
            side.label: obs[0]
            for side in sides
            if (obs := self.observations(case.id, side.variant_key, criterion))
        }
        by_label = {side.label: side for side in sides}
        high = max(firsts, key=lambda k: firsts[k])
        low = min((k for k in firsts if k != high), key=lambda k: firsts[k])
        first_seen = firsts[high] - firsts[low]
        if self.trusts_exact():
            noise = self.noise()
            line = (
                f"{noun} {first_seen:.1f} {unit}; the scorer measured no noise, so the "
                f"difference is exact ({noise.texts} texts re-scored, every answer identical)"
            )
            return Outcome("confirmed", line, calls)
        pair = (by_label[high], by_label[low])
        needed = self.fresh_answers_needed(tests)
        for look, wanted in enumerate((FRESH_FIRST_LOOK, needed)):
            requests = [
                (case.id, side)
                for side in pair
                for _ in range(max(0, wanted - len(self._fresh(case.id, side))))
            ]
            if requests and self.extra_calls + len(requests) > self.budget:
                line = (
                    f"{noun} {first_seen:.1f} {unit}, not confirmed: the confirmation budget "
                    f"({self.budget} calls) is spent; raise screeneval_confirm_budget to judge it"
                )
                return Outcome("unconfirmed", line, calls)
            made = self.rescore(requests)
            self.extra_calls += made
            calls += made
            fresh_high = self._fresh(case.id, pair[0], criterion)
            fresh_low = self._fresh(case.id, pair[1], criterion)
            gap = fmean(fresh_high) - fmean(fresh_low)
            head = (
                f"{noun} {first_seen:.1f} {unit} on the first answers ({high} vs {low}); "
                f"{len(fresh_high)} fresh answers of each {sides_noun}"
            )
            if gap <= limit + 1e-9:
                return Outcome(
                    "unstable",
                    f"{head}: mean {noun} {gap:.1f}, within the limit {limit:g} (not confirmed)",
                    calls,
                )
            if look == 1:
                p = shift_permutation_p(fresh_high, fresh_low, limit)
                alpha = self.item_alpha(tests)
                status = "confirmed" if p <= alpha else "unstable"
                how = "confirmed" if status == "confirmed" else "not confirmed"
                line = (
                    f"{head}: mean {noun} {gap:.1f}, {how} by a permutation test "
                    f"(p = {p:.2g}, level {alpha:.2g}: {ITEM_ERROR:g} family-wise over "
                    f"{self.family()} fairness items"
                    + (f" and {tests} criteria)" if tests > 1 else ")")
                )
                return Outcome(status, line, calls)
        raise AssertionError("unreachable")  # pragma: no cover

    def _fresh(self, case_id: str, side: Side, criterion: str | None = None) -> list[float]:
        """A text's answers after its first one: evidence that did not pick the item."""
        return self.observations(case_id, side.variant_key, criterion)[1:]
