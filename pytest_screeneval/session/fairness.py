"""The fairness items of a session: counterfactual gaps and perturbation shifts (DESIGN §7).

One part of :class:`~pytest_screeneval.session.core.ScreenevalSession`: each item reads the
scores (a perturbation scores its texts through ``score_text``), and records what it measured
for the summary and the gates.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from pytest_screeneval.evidence.verdicts import Verdict
from pytest_screeneval.golden.model import sha256_text
from pytest_screeneval.probes.counterfactual import case_variants, variant_key

if TYPE_CHECKING:
    from pytest_screeneval.golden.model import Case, Variants
    from pytest_screeneval.scoring.runner import JobResult
    from pytest_screeneval.session.scores import Scores
    from pytest_screeneval.settings.options import Settings

__all__ = ["Fairness"]

ORIGINAL = ""


class Fairness:
    """Counterfactual and perturbation verdicts, and their per-attribute / per-kind summaries."""

    def __init__(
        self,
        settings: Settings,
        cases: Mapping[str, Case],
        variants: Variants,
        scores: Scores,
        score_text: Callable[[Case, str, str], JobResult],
    ) -> None:
        self.settings = settings
        self.cases = cases
        self.variants = variants
        self.scores = scores
        self.score_text = score_text
        self.counterfactual_gaps: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
        self.perturbation_shifts: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)

    def overall_of(self, result: JobResult) -> float | None:
        return self.scores.overall_of(result)

    def merge(self, output: Mapping[str, object]) -> None:
        """Add what a worker measured (its ``worker_output``)."""
        for attribute, by_case in dict(output["counterfactual"]).items():  # type: ignore[call-overload]
            self.counterfactual_gaps[attribute].update(by_case)
        for kind, by_case in dict(output["perturbation"]).items():  # type: ignore[call-overload]
            self.perturbation_shifts[kind].update(by_case)

    def output(self) -> dict[str, object]:
        return {
            "counterfactual": {a: dict(v) for a, v in self.counterfactual_gaps.items()},
            "perturbation": {k: dict(v) for k, v in self.perturbation_shifts.items()},
        }

    def counterfactual_verdict(self, case_id: str, attribute: str) -> Verdict:
        """Score gap across the attribute's values; records the gap for the session's summary."""
        case = self.cases[case_id]
        values = case_variants(case, self.variants).get(attribute, [])
        overall: dict[str, float] = {}
        per_criterion: dict[str, dict[str, int]] = defaultdict(dict)
        problems = []
        for value, _variant in values:
            key = variant_key(attribute, value.value)
            shown = "none" if value.value is None else value.value
            result = self.scores.results.get((case_id, key, 0))
            if result is None or self.overall_of(result) is None:
                reason = (
                    "not scored"
                    if result is None
                    else (result.error_for("*") or "; ".join(sorted(set(result.errors.values()))))
                )
                problems.append(f"{shown}: {reason}")
                continue
            overall[shown] = self.overall_of(result)  # type: ignore[assignment]
            for criterion, score in result.by_criterion.items():
                per_criterion[criterion][shown] = score.score
        lines = [
            f"{case_id} · counterfactual[{attribute}] (max gap {self.settings.max_gap:g} points)"
        ]
        for shown, points in sorted(overall.items(), key=lambda kv: -kv[1]):
            lines.append(f"  {points:6.1f}  {shown}")
        reasons = [f"scorer error on a variant: {p}" for p in problems]
        if len(overall) >= 2:
            high = max(overall, key=lambda k: overall[k])
            low = min((k for k in overall if k != high), key=lambda k: overall[k])
            gap = overall[high] - overall[low]
            crit_gaps = {
                c: float(max(v.values()) - min(v.values()))
                for c, v in per_criterion.items()
                if len(v) >= 2
            }
            self.counterfactual_gaps[attribute][case_id] = {
                "gap": gap,
                "values": (high, low),
                "per_criterion": crit_gaps,
            }
            lines.append(f"  gap    {gap:.1f} points ({high} vs {low})")
            moved = ", ".join(f"{c} {g:g}" for c, g in sorted(crit_gaps.items()) if g)
            if moved:
                lines.append(f"  per criterion: {moved}")
            if gap > self.settings.max_gap + 1e-9:
                reasons.append(
                    f"the overall score moves {gap:.1f} points across {attribute} "
                    f"values, above the limit {self.settings.max_gap:g}"
                )
        for reason in reasons:
            lines.append(f"  FAILED     {reason}")
        gap_property = ("gap", "none")
        if case_id in self.counterfactual_gaps.get(attribute, {}):
            gap_property = (
                "gap",
                f"{float(self.counterfactual_gaps[attribute][case_id]['gap']):.1f}",
            )
        return Verdict(not reasons, tuple(reasons), (), "\n".join(lines), (gap_property,))

    def perturbation_verdict(self, case_id: str, kind: str) -> Verdict:
        """Hypothesis draws perturbations of the case text; a failure shrinks to the smallest."""
        from hypothesis import HealthCheck, given
        from hypothesis import settings as hypothesis_settings

        from pytest_screeneval.probes.perturb import describe, perturbations

        case = self.cases[case_id]
        base = self.scores.results.get((case_id, ORIGINAL, 0))
        base_overall = self.overall_of(base) if base else None
        limit = self.settings.max_perturbation_shift
        header = f"{case_id} · perturbation[{kind}] (max shift {limit:g} points)"
        if base_overall is None:
            reason = "the original text has no usable overall score"
            return Verdict(False, (reason,), (), f"{header}\n  FAILED     {reason}")
        worst = [0.0]

        @hypothesis_settings(
            max_examples=max(1, self.settings.perturbation_examples),
            derandomize=True,
            database=None,
            deadline=None,
            print_blob=False,
            suppress_health_check=list(HealthCheck),
        )
        @given(perturbations(kind, case.input_text))
        def check(perturbation: object) -> None:
            text = perturbation.apply(case.input_text)  # type: ignore[attr-defined]
            result = self.score_text(case, f"perturb:{kind}:{sha256_text(text)[:12]}", text)
            overall = self.overall_of(result)
            if overall is None:
                failure = result.error_for("*") or "; ".join(sorted(set(result.errors.values())))
                raise _PerturbationFailure(
                    f"the scorer failed on the perturbed text: {failure}",
                    describe(perturbation, case.input_text),
                )
            shift = abs(overall - base_overall)
            worst[0] = max(worst[0], shift)
            if shift > limit + 1e-9:
                raise _PerturbationFailure(
                    f"the overall score moved {base_overall:.1f} → {overall:.1f} "
                    f"({shift:.1f} points, limit {limit:g})",
                    describe(perturbation, case.input_text),
                )

        try:
            check()
        except _PerturbationFailure as failure:
            self.perturbation_shifts[kind][case_id] = {"shift": max(worst[0], 0.0)}
            block = "\n".join(
                [
                    header,
                    f"  FAILED     {failure.reason}",
                    "  smallest perturbation found:",
                    failure.diff,
                ]
            )
            return Verdict(False, (failure.reason,), (), block, (("shift", f"{worst[0]:.1f}"),))
        self.perturbation_shifts[kind][case_id] = {"shift": worst[0]}
        return Verdict(
            True,
            (),
            (),
            f"{header}\n  worst shift {worst[0]:.1f} points",
            (("shift", f"{worst[0]:.1f}"),),
        )

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


class _PerturbationFailure(AssertionError):
    def __init__(self, reason: str, diff: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.diff = diff
