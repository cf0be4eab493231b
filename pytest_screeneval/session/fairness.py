"""The fairness items of a session: counterfactual gaps and perturbation shifts.

One part of :class:`~pytest_screeneval.session.core.ScreenevalSession`: each item reads the
scores (a perturbation scores its texts through ``score_text``, its search driven from here) and
asks the pure rules (``evidence.fairness_rules``) for its verdict. Which items ran, and what
each concluded, is kept for the summary; the figures themselves are computed once, at the end,
from every answer (``evidence.fairness_summary``), as the audit report computes them from the
stored rows.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from pytest_screeneval.evidence.fairness_rules import (
    counterfactual_verdict,
    over_limit,
    perturbation_failed,
    perturbation_header,
    perturbation_passed,
    shift_reason,
)
from pytest_screeneval.evidence.fairness_summary import FairnessCases, collect
from pytest_screeneval.evidence.verdicts import ConfirmationNote, Verdict
from pytest_screeneval.golden.model import ORIGINAL, sha256_text
from pytest_screeneval.probes.counterfactual import case_variants, variant_key
from pytest_screeneval.session.confirmation import Confirmer, Outcome, Side

if TYPE_CHECKING:
    from pytest_screeneval.golden.model import Case, Variants
    from pytest_screeneval.probes.perturb import Perturbation
    from pytest_screeneval.scoring.results import JobResult
    from pytest_screeneval.session.scores import Scores
    from pytest_screeneval.settings.options import Settings

__all__ = ["Fairness"]


class Fairness:
    """Counterfactual and perturbation verdicts, and their per-attribute / per-kind summaries."""

    def __init__(
        self,
        settings: Settings,
        cases: Mapping[str, Case],
        variants: Variants,
        scores: Scores,
        score_text: Callable[[Case, str, str], JobResult],
        confirmer: Confirmer,
        drawn: Mapping[tuple[str, str], list[str]],
    ) -> None:
        self.settings = settings
        self.cases = cases
        self.variants = variants
        self.scores = scores
        self.score_text = score_text
        self.confirmer = confirmer
        # (item kind, attribute or perturbation kind, case) -> what the item concluded
        self.outcomes: dict[tuple[str, str, str], str] = {}
        # (case, kind) -> the texts drawn ahead for it (session.examples fills it as it queues)
        self.drawn = drawn

    def overall_of(self, result: JobResult) -> float | None:
        return self.scores.overall_of(result)

    def merge(self, outcomes: Iterable[tuple[str, str, str, str]]) -> None:
        """Add what a worker's fairness items concluded (its ``WorkerOutput``)."""
        for kind, target, case_id, outcome in outcomes:
            self.outcomes[(kind, target, case_id)] = outcome

    def output(self) -> tuple[tuple[str, str, str, str], ...]:
        """What this process's fairness items concluded, for the controller of an -n run."""
        return tuple((*key, outcome) for key, outcome in sorted(self.outcomes.items()))

    def fairness_cases(self) -> FairnessCases:
        """Every answer of the items that ran, grouped for the gap and shift summary."""
        answers: dict[tuple[str, str], list[tuple[int, dict[str, int]]]] = defaultdict(list)
        for (case_id, key, repeat), result in self.scores.results.items():
            levels = {name: score.score for name, score in result.by_criterion.items()}
            answers[(case_id, key)].append((repeat, levels))
        order = {
            attribute: [variant_key(attribute, v.value).split("=", 1)[1] for v in spec.values]
            for attribute, spec in self.variants.attributes.items()
        }
        return collect(
            {key: [levels for _r, levels in sorted(rows)] for key, rows in answers.items()},
            self.scores.rubric,
            order,
            lambda kind, target, case_id: (kind, target, case_id) in self.outcomes,
        )

    def counterfactual_verdict(self, case_id: str, attribute: str) -> Verdict:
        """Score gap across the attribute's values; a gap above the limit fails only once it is
        confirmed against the scorer's noise. Records what it measured."""
        case = self.cases[case_id]
        values = case_variants(case, self.variants).get(attribute, [])
        overall: dict[str, float] = {}
        sides: dict[str, Side] = {}
        per_criterion: dict[str, dict[str, int]] = defaultdict(dict)
        problems = []
        for value, variant in values:
            key = variant_key(attribute, value.value)
            shown = "none" if value.value is None else value.value
            result = self.scores.results.get((case_id, key, 0))
            points = None if result is None else self.overall_of(result)
            if result is None or points is None:
                reason = (
                    "not scored"
                    if result is None
                    else (result.error_for("*") or "; ".join(sorted(set(result.errors.values()))))
                )
                problems.append(f"{shown}: {reason}")
                continue
            overall[shown] = points
            sides[shown] = Side(shown, key, variant.input_text)
            for criterion, score in result.by_criterion.items():
                per_criterion[criterion][shown] = score.score
        limit = self.settings.max_gap
        confirmed: list[Outcome] = []

        def confirm() -> ConfirmationNote:
            confirmed.append(
                self.confirmer.confirm(case, list(sides.values()), limit, "gap", "variant")
            )
            return confirmed[-1].note()

        def confirm_criterion(criterion: str) -> ConfirmationNote | None:
            confirmer = self.confirmer
            confirmer.probe(spread=True, on_demand=True)
            noise = confirmer.noise()
            if not confirmer.trusts_exact() and noise.measured and not noise.deterministic:
                return None  # noisy: the per-criterion gate judges it across cases
            outcome = confirmer.confirm(
                case,
                list(sides.values()),
                self.settings.max_criterion_gap,
                f"{criterion} gap",
                "variant",
                criterion=criterion,
                tests=len(self.scores.rubric.criteria),
            )
            return outcome.note()

        verdict = counterfactual_verdict(
            case_id,
            attribute,
            overall,
            per_criterion,
            problems,
            limit,
            confirm,
            criterion_limit=self.settings.max_criterion_gap,
            confirm_criterion=confirm_criterion,
        )
        if len(overall) >= 2:
            status = confirmed[-1].status if confirmed else "passed"
            self.outcomes[("counterfactual", attribute, case_id)] = status
        return verdict

    def perturbation_verdict(self, case_id: str, kind: str) -> Verdict:
        """Hypothesis draws perturbations of the case text; a failure shrinks to the smallest,
        and is shown only once re-scoring confirmed it.

        Hypothesis is never fed a nondeterministic test function, so its flakiness detection
        can neither mask nor fake a result: each text is scored once through ``score_text``
        (cached by text) and judged on that recorded answer. With noise measured, the search
        runs without shrinking; its worst shift is confirmed by re-scoring; only a confirmed
        one is shrunk, by a test function that fails on a *confirmed* shift, each text's
        confirmation memoised so that a repeated call answers alike.
        """
        from pytest_screeneval.probes.draw import search as run_search
        from pytest_screeneval.probes.perturb import describe

        case = self.cases[case_id]
        base = self.scores.results.get((case_id, ORIGINAL, 0))
        base_overall = self.overall_of(base) if base else None
        limit = self.settings.max_perturbation_shift
        header = perturbation_header(case_id, kind, limit)
        if base_overall is None:
            reason = "the original text has no usable overall score"
            return Verdict(False, (reason,), (), f"{header}\n  FAILED     {reason}")
        original = Side("original", ORIGINAL, case.input_text)
        exact = self.confirmer.exact()
        seen: dict[str, _Example] = {}  # text sha -> its first answer
        outcomes: dict[str, Outcome] = {}

        def first(perturbation: Perturbation) -> _Example:
            text = perturbation.apply(case.input_text)
            sha = sha256_text(text)
            if sha in seen:
                if seen[sha].perturbation is None:  # judged ahead: now its edit is known
                    seen[sha] = replace(seen[sha], perturbation=perturbation)
                return seen[sha]
            side = Side("perturbed", f"perturb:{kind}:{sha[:12]}", text)
            result = self.score_text(case, side.variant_key, text)
            overall = self.overall_of(result)
            if overall is None:
                failure = result.error_for("*") or "; ".join(sorted(set(result.errors.values())))
                raise _PerturbationFailure(
                    f"the scorer failed on the perturbed text: {failure}",
                    describe(perturbation, case.input_text),
                )
            seen[sha] = _Example(abs(overall - base_overall), overall, perturbation, side)
            return seen[sha]

        def failure(example: _Example, outcome: Outcome | None) -> _PerturbationFailure:
            diff = (
                describe(example.perturbation, case.input_text)
                if example.perturbation is not None
                else f"  the drawn example {example.side.variant_key}"
            )
            return _PerturbationFailure(
                shift_reason(base_overall, example.overall, limit), diff, outcome
            )

        def judged_ahead() -> bool:
            """Judge the examples drawn ahead from their answers, without running Hypothesis
            again: they are the very texts this search generates, in its order (same seed,
            same settings: probes/draw.py). True when that decides the search: every example
            has an answer and, for an exact scorer, none fails (a failure is searched again,
            to shrink it). Hypothesis in the session's thread holds the GIL that scoring needs.
            """
            texts = self.drawn.get((case_id, kind))
            if texts is None:
                return False
            ahead: dict[str, _Example] = {}
            for text in texts:
                sha = sha256_text(text)
                if sha in ahead:
                    continue
                side = Side("perturbed", f"perturb:{kind}:{sha[:12]}", text)
                overall = self.overall_of(self.score_text(case, side.variant_key, text))
                if overall is None:
                    return False  # the search meets it and says how the scorer failed
                ahead[sha] = _Example(abs(overall - base_overall), overall, None, side)
            if exact and any(e.shift > limit + 1e-9 for e in ahead.values()):
                return False
            seen.update(ahead)
            return True

        def confirm(example: _Example) -> Outcome:
            sha = sha256_text(example.side.text)
            if sha not in outcomes:
                outcomes[sha] = self.confirmer.confirm(
                    case, [original, example.side], limit, "shift", "text"
                )
            return outcomes[sha]

        def record_only(perturbation: Perturbation) -> None:
            first(perturbation)

        def fail_on_first(perturbation: Perturbation) -> None:
            example = first(perturbation)
            if example.shift > limit + 1e-9:
                raise failure(example, None)

        def fail_if_confirmed(perturbation: Perturbation) -> None:
            example = first(perturbation)
            if example.shift > limit + 1e-9 and confirm(example).confirmed:
                raise failure(example, confirm(example))

        def search(judge: Callable[[Perturbation], None], shrink: bool) -> None:
            # seeded by case and kind: the session drew these examples up front (probes/draw.py)
            # and queued them with every other text, so this search finds them answered
            run_search(
                case_id,
                kind,
                case.input_text,
                self.settings.perturbation_examples,
                judge,
                shrink=shrink,
            )

        noted: Outcome | None = None
        try:
            if exact:
                if not judged_ahead():
                    search(fail_on_first, shrink=True)
            else:
                if not judged_ahead():
                    search(record_only, shrink=False)
                worst = max(seen.values(), key=lambda e: e.shift, default=None)
                if worst is not None and over_limit(worst.shift, limit):
                    outcome = confirm(worst)
                    if outcome.confirmed:
                        search(fail_if_confirmed, shrink=True)
                        raise failure(worst, outcome)  # the search did not meet it again
                    noted = outcome
        except _PerturbationFailure as failed:
            shift = max((e.shift for e in seen.values()), default=0.0)
            self.outcomes[("perturbation", kind, case_id)] = "failed"
            exact_line = ""
            if failed.outcome is None and exact and seen:
                noise = self.confirmer.noise()
                exact_line = (
                    f"the scorer measured no noise ({noise.texts} texts re-scored, "
                    "every answer identical), so the shift is exact"
                )
            return perturbation_failed(
                header,
                failed.reason,
                failed.diff,
                shift,
                failed.outcome.note() if failed.outcome is not None else None,
                exact_line,
            )
        self.outcomes[("perturbation", kind, case_id)] = noted.status if noted else "passed"
        shift = max((e.shift for e in seen.values()), default=0.0)
        return perturbation_passed(header, shift, noted.note() if noted else None)


@dataclass(frozen=True)
class _Example:
    """A perturbation's first recorded answer."""

    shift: float
    overall: float
    perturbation: Perturbation | None  # None: judged from the texts drawn ahead
    side: Side


class _PerturbationFailure(AssertionError):
    def __init__(self, reason: str, diff: str, outcome: Outcome | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.diff = diff
        self.outcome = outcome
