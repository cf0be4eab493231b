"""The fairness items of a session: counterfactual gaps and perturbation shifts.

One part of :class:`~pytest_screeneval.session.core.ScreenevalSession`: each item reads the
scores (a perturbation scores its texts through ``score_text``), and records what it measured
for the summary and the gates.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from pytest_screeneval.evidence.verdicts import Verdict
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
    ) -> None:
        self.settings = settings
        self.cases = cases
        self.variants = variants
        self.scores = scores
        self.score_text = score_text
        self.confirmer = confirmer
        self.counterfactual_gaps: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
        self.perturbation_shifts: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
        # (case, kind) -> the texts drawn ahead for it (the session fills it as it queues them)
        self.drawn: dict[tuple[str, str], list[str]] = {}

    def overall_of(self, result: JobResult) -> float | None:
        return self.scores.overall_of(result)

    def merge(
        self,
        counterfactual: Mapping[str, Mapping[str, Mapping[str, object]]],
        perturbation: Mapping[str, Mapping[str, Mapping[str, object]]],
    ) -> None:
        """Add what a worker measured (its ``WorkerOutput``)."""
        for attribute, by_case in counterfactual.items():
            self.counterfactual_gaps[attribute].update((c, dict(r)) for c, r in by_case.items())
        for kind, by_case in perturbation.items():
            self.perturbation_shifts[kind].update((c, dict(r)) for c, r in by_case.items())

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
        lines = [f"{case_id} · counterfactual[{attribute}] (max gap {limit:g} points)"]
        for shown, points in sorted(overall.items(), key=lambda kv: -kv[1]):
            lines.append(f"  {points:6.1f}  {shown}")
        reasons = [f"scorer error on a variant: {p}" for p in problems]
        notes: list[str] = []
        properties: list[tuple[str, str]] = [("gap", "none")]
        if len(overall) >= 2:
            high = max(overall, key=lambda k: overall[k])
            low = min((k for k in overall if k != high), key=lambda k: overall[k])
            gap = overall[high] - overall[low]
            crit_gaps = {
                c: float(max(v.values()) - min(v.values()))
                for c, v in per_criterion.items()
                if len(v) >= 2
            }
            lines.append(f"  gap    {gap:.1f} points ({high} vs {low})")
            moved = ", ".join(f"{c} {g:g}" for c, g in sorted(crit_gaps.items()) if g)
            if moved:
                lines.append(f"  per criterion: {moved}")
            properties = [("gap", f"{gap:.1f}")]
            status = "passed"
            if gap > limit + 1e-9:
                outcome = self.confirmer.confirm(
                    case, list(sides.values()), limit, "gap", "variant"
                )
                properties.extend(outcome.properties())
                status = outcome.status
                if outcome.confirmed:
                    lines.append(f"  confirmed  {outcome.line}")
                    reasons.append(
                        f"the overall score moves {gap:.1f} points across {attribute} "
                        f"values, above the limit {limit:g}"
                    )
                else:
                    notes.append(f"{outcome.status}, not a finding: {outcome.line}")
            self.counterfactual_gaps[attribute][case_id] = {
                "gap": gap,
                "values": (high, low),
                "per_criterion": crit_gaps,
                "observations": {
                    shown: self.confirmer.observations(case_id, side.variant_key)
                    for shown, side in sides.items()
                },
                "outcome": status,
            }
        for reason in reasons:
            lines.append(f"  FAILED     {reason}")
        return Verdict(
            not reasons, tuple(reasons), tuple(notes), "\n".join(lines), tuple(properties)
        )

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
        header = f"{case_id} · perturbation[{kind}] (max shift {limit:g} points)"
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
                f"the overall score moved {base_overall:.1f} → {example.overall:.1f} "
                f"({example.shift:.1f} points, limit {limit:g})",
                diff,
                outcome,
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

        notes: list[str] = []
        properties: list[tuple[str, str]] = []
        try:
            if exact:
                if not judged_ahead():
                    search(fail_on_first, shrink=True)
            else:
                if not judged_ahead():
                    search(record_only, shrink=False)
                worst = max(seen.values(), key=lambda e: e.shift, default=None)
                if worst is not None and worst.shift > limit + 1e-9:
                    outcome = confirm(worst)
                    if outcome.confirmed:
                        search(fail_if_confirmed, shrink=True)
                        raise failure(worst, outcome)  # the search did not meet it again
                    properties.extend(outcome.properties())
                    notes.append(f"{outcome.status}, not a finding: {outcome.line}")
        except _PerturbationFailure as failed:
            shift = max((e.shift for e in seen.values()), default=0.0)
            self.perturbation_shifts[kind][case_id] = self._shift_record(case_id, seen, "failed")
            lines = [header, f"  FAILED     {failed.reason}"]
            if failed.outcome is not None:
                lines.append(f"  confirmed  {failed.outcome.line}")
                properties.extend(failed.outcome.properties())
            elif exact and seen:
                noise = self.confirmer.noise()
                lines.append(
                    f"  confirmed  the scorer measured no noise ({noise.texts} texts re-scored, "
                    "every answer identical), so the shift is exact"
                )
                properties.append(("outcome", "confirmed"))
            lines += ["  smallest perturbation found:", failed.diff]
            properties.append(("shift", f"{shift:.1f}"))
            return Verdict(False, (failed.reason,), (), "\n".join(lines), tuple(properties))
        status = properties[0][1] if properties else "passed"
        self.perturbation_shifts[kind][case_id] = self._shift_record(case_id, seen, status)
        shift = float(self.perturbation_shifts[kind][case_id]["shift"])
        properties.append(("shift", f"{shift:.1f}"))
        return Verdict(
            True,
            (),
            tuple(notes),
            f"{header}\n  worst shift {shift:.1f} points",
            tuple(properties),
        )

    def _shift_record(
        self, case_id: str, seen: Mapping[str, _Example], outcome: str
    ) -> dict[str, Any]:
        """What the perturbation gate needs of one case: every example's first answer, and all
        answers of the original and of the worst example."""
        worst = max(seen.values(), key=lambda e: e.shift, default=None)
        answers = self.confirmer.observations(case_id, worst.side.variant_key) if worst else []
        return {
            "shift": worst.shift if worst else 0.0,
            "original": self.confirmer.observations(case_id, ORIGINAL),
            "examples": [e.overall for e in seen.values()],
            "worst": answers or ([worst.overall] if worst else []),
            "outcome": outcome,
        }

    def counterfactual_summary(self) -> dict[str, dict[str, Any]]:
        summary: dict[str, dict[str, Any]] = {}
        for attribute, by_case in sorted(self.counterfactual_gaps.items()):
            gaps = [float(v["gap"]) for v in by_case.values()]
            worst_case, worst = max(sorted(by_case.items()), key=lambda kv: float(kv[1]["gap"]))
            per_criterion: dict[str, float] = {}
            for row in by_case.values():
                for criterion, gap in dict(row["per_criterion"]).items():
                    per_criterion[criterion] = max(per_criterion.get(criterion, 0.0), float(gap))
            summary[attribute] = {
                "mean_gap": sum(gaps) / len(gaps),
                "worst_gap": float(worst["gap"]),
                "worst_case": worst_case,
                "worst_values": list(worst["values"]),
                "per_criterion": per_criterion,
                "n_cases": len(gaps),
            }
        return summary

    def perturbation_summary(self) -> dict[str, dict[str, Any]]:
        summary: dict[str, dict[str, Any]] = {}
        for kind, by_case in sorted(self.perturbation_shifts.items()):
            worst_case, worst = max(sorted(by_case.items()), key=lambda kv: float(kv[1]["shift"]))
            summary[kind] = {
                "worst_shift": float(worst["shift"]),
                "mean_shift": sum(float(v["shift"]) for v in by_case.values()) / len(by_case),
                "worst_case": worst_case,
                "n_cases": len(by_case),
            }
        return summary


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
