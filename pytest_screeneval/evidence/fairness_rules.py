"""The counterfactual and perturbation item rules: when such an item passes or fails.

Pure module. The session gathers the first answers (and runs the perturbation search); the rules
and the readable blocks are here:

* **(case, counterfactual[attribute])** fails when the first answers' overall gap across the
  attribute's values exceeds the limit *and* confirmation on fresh answers holds it (a scorer
  with no measured noise: the gap is exact); a variant the scorer failed on fails the item.
  A criterion whose first levels differ across the values by more than the per-criterion limit
  fails the item too when confirmation holds it (exact for a scorer that measured no noise, fresh
  answers where the noise is not yet known); for a scorer measured noisy, the item notes it and
  the paired ``counterfactual-criterion-gap`` gate judges it across cases.
* **(case, perturbation[kind])** fails when a perturbation moves the overall score by more than
  the limit and confirmation holds it; the block shows the smallest failing perturbation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from pytest_screeneval.evidence.fairness_summary import spread
from pytest_screeneval.evidence.verdicts import ConfirmationNote, Verdict

__all__ = [
    "counterfactual_verdict",
    "over_limit",
    "perturbation_failed",
    "perturbation_header",
    "perturbation_passed",
    "shift_reason",
]

_EPS = 1e-9


def over_limit(difference: float, limit: float) -> bool:
    return difference > limit + _EPS


def counterfactual_verdict(
    case_id: str,
    attribute: str,
    overall: Mapping[str, float],
    per_criterion: Mapping[str, Mapping[str, int]],
    problems: Sequence[str],
    limit: float,
    confirm: Callable[[], ConfirmationNote],
    criterion_limit: float | None = None,
    confirm_criterion: Callable[[str], ConfirmationNote | None] = lambda _criterion: None,
) -> Verdict:
    """The item's verdict from each value's first overall score (in ``variants.yaml`` order);
    ``confirm`` is asked only when the first answers' gap is over the limit.
    ``confirm_criterion(criterion)`` is asked only for a per-criterion gap over
    ``criterion_limit``; ``None`` means the scorer is noisy and the gate judges that
    criterion across cases."""
    lines = [f"{case_id} · counterfactual[{attribute}] (max gap {limit:g} points)"]
    for shown, points in sorted(overall.items(), key=lambda kv: -kv[1]):
        lines.append(f"  {points:6.1f}  {shown}")
    reasons = [f"scorer error on a variant: {p}" for p in problems]
    notes: list[str] = []
    properties: list[tuple[str, str]] = [("gap", "none")]
    if len(overall) >= 2:
        gap, high, low = spread(overall)
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
        if over_limit(gap, limit):
            outcome = confirm()
            properties.extend(outcome.properties)
            if outcome.confirmed:
                lines.append(f"  confirmed  {outcome.line}")
                reasons.append(
                    f"the overall score moves {gap:.1f} points across {attribute} "
                    f"values, above the limit {limit:g}"
                )
            else:
                notes.append(f"{outcome.status}, not a finding: {outcome.line}")
        if criterion_limit is not None:
            for criterion, levels in sorted(per_criterion.items()):
                if len(levels) < 2:
                    continue
                width, top, bottom = spread(dict(levels))
                if not over_limit(width, criterion_limit):
                    continue
                said = (
                    f"{criterion} moves {width:g} level(s) across {attribute} values "
                    f"({top} vs {bottom}), above the per-criterion limit {criterion_limit:g}"
                )
                checked = confirm_criterion(criterion)
                if checked is None:
                    notes.append(
                        f"{said}: judged across cases by "
                        f"counterfactual-criterion-gap[{attribute}], the scorer being noisy"
                    )
                elif checked.confirmed:
                    lines.append(f"  confirmed  {checked.line}")
                    reasons.append(said)
                else:
                    notes.append(f"{checked.status}, not a finding: {checked.line}")
    for reason in reasons:
        lines.append(f"  FAILED     {reason}")
    return Verdict(not reasons, tuple(reasons), tuple(notes), "\n".join(lines), tuple(properties))


def perturbation_header(case_id: str, kind: str, limit: float) -> str:
    return f"{case_id} · perturbation[{kind}] (max shift {limit:g} points)"


def shift_reason(before: float, after: float, limit: float) -> str:
    return (
        f"the overall score moved {before:.1f} → {after:.1f} "
        f"({abs(after - before):.1f} points, limit {limit:g})"
    )


def perturbation_failed(
    header: str,
    reason: str,
    diff: str,
    shift: float,
    confirmation: ConfirmationNote | None,
    exact_line: str = "",
) -> Verdict:
    """A failed perturbation item: how it was confirmed, then the smallest perturbation found.
    ``exact_line``: for a scorer that measured no noise, why the shift needs no confirming."""
    lines = [header, f"  FAILED     {reason}"]
    properties: list[tuple[str, str]] = []
    if confirmation is not None:
        lines.append(f"  confirmed  {confirmation.line}")
        properties.extend(confirmation.properties)
    elif exact_line:
        lines.append(f"  confirmed  {exact_line}")
        properties.append(("outcome", "confirmed"))
    if diff:
        lines += ["  smallest perturbation found:", diff]
    properties.append(("shift", f"{shift:.1f}"))
    return Verdict(False, (reason,), (), "\n".join(lines), tuple(properties))


def perturbation_passed(
    header: str, shift: float, confirmation: ConfirmationNote | None
) -> Verdict:
    """A passed perturbation item; a shift over the limit that did not hold is noted."""
    notes: list[str] = []
    properties: list[tuple[str, str]] = []
    if confirmation is not None:
        properties.extend(confirmation.properties)
        notes.append(f"{confirmation.status}, not a finding: {confirmation.line}")
    properties.append(("shift", f"{shift:.1f}"))
    return Verdict(
        True, (), tuple(notes), f"{header}\n  worst shift {shift:.1f} points", tuple(properties)
    )
