"""The terminal summary printed after pytest's own."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_screeneval.evidence.gate_status import GateStatus

if TYPE_CHECKING:
    from pytest_screeneval.evidence.gates import GateResult
    from pytest_screeneval.evidence.metrics import CriterionAgreement, Movement, SliceAgreement
    from pytest_screeneval.session.core import ScreenevalSession
    from pytest_screeneval.session.summary import RunSummary

__all__ = [
    "agreement_table",
    "gate_lines",
    "movement_lines",
    "movement_table",
    "render",
    "selected_agreement",
    "slice_lines",
    "slice_table",
    "table",
]

MOVEMENTS_SHOWN = 10
# small slices collapsed into one line are named up to this many
SMALL_SLICES_NAMED = 8


def table(
    headers: Sequence[str], rows: Sequence[Sequence[object]], indent: str = "  "
) -> list[str]:
    """Left-aligned first column, right-aligned numbers; plain text, no colours."""
    cells = [[str(h) for h in headers]] + [[_cell(v) for v in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    numeric = [all(_is_number(row[i]) for row in rows) and i > 0 for i in range(len(headers))]
    lines = []
    for row in cells:
        parts = [
            cell.rjust(width) if is_numeric else cell.ljust(width)
            for cell, width, is_numeric in zip(row, widths, numeric, strict=True)
        ]
        lines.append(indent + "  ".join(parts).rstrip())
    return lines


def _is_number(value: object) -> bool:
    return (
        value is None
        or isinstance(value, int | float)
        or (isinstance(value, str) and value.lstrip("+-").replace(".", "", 1).isdigit())
    )


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.1f}"
    return str(value)


def _versus(values: object) -> str:
    """The values a gap is between, "a vs b" (the summary keeps them as a JSON list)."""
    if isinstance(values, list | tuple):
        return " vs ".join(str(value) for value in values)
    return _cell(values)


def _alpha(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _signed(value: float | None) -> str:
    return "-" if value is None else f"{value:+.1f}"


def agreement_table(rows: Sequence[CriterionAgreement]) -> list[str]:
    """Per criterion, worst first: cases, exact, %, within %, MAE, change, contested."""
    return table(
        ["criterion", "cases", "exact", "%", "within %", "MAE", "change", "contested in range"],
        [
            [
                r.criterion,
                r.cases,
                r.exact,
                r.exact_pct,
                r.within_pct,
                f"{r.mae:.2f}",
                _signed(r.change),
                f"{r.contested_within_range}/{r.contested}",
            ]
            for r in rows
        ],
    )


def slice_table(rows: Sequence[SliceAgreement], min_n: int) -> list[str]:
    """Per slice, worst first, with the Wilson interval and whether the gate counts it."""
    return table(
        ["slice", "cases", "items", "within %", "95% CI", "gated"],
        [
            [
                s.slice,
                s.cases,
                s.items,
                s.pct,
                f"{s.ci_low:.0f}–{s.ci_high:.0f}",
                "yes" if s.cases >= min_n else "no",
            ]
            for s in rows
        ],
    )


def movement_table(moved: Sequence[Movement]) -> list[str]:
    return table(
        ["case", "criterion", "before", "after", "delta"],
        [[m.case_id, m.criterion, m.before, m.after, f"{m.delta:+d}"] for m in moved],
    )


def identity_lines(summary: RunSummary) -> list[str]:
    ident = summary.identity
    lines = [
        f"run {summary.run_id} ({summary.status}) · scorer {ident['name']} · model "
        f"{ident['model_id']}"
        + (f" (served: {', '.join(summary.served_models)})" if summary.served_models else "")
        + f" · prompt {str(ident['prompt_sha'])[:12]} · rubric {str(ident['rubric_sha'])[:12]} · "
        f"temperature {ident['temperature']}"
    ]
    base = summary.baseline
    if base is None:
        lines.append("baseline: none accepted yet (accept a run with --screeneval-accept)")
    else:
        acc = base.accepted
        who = f", accepted by {acc.accepted_by} on {acc.accepted_at[:10]}" if acc else ""
        note = f' ("{acc.note}")' if acc and acc.note else ""
        lines.append(
            f"baseline: run {base.run_id} · {base.scorer} · model {base.model_id}{who}{note}"
        )
    return lines


def gate_lines(gates: Sequence[GateResult]) -> list[str]:
    """The gate table and its one-line tally, whatever status strings the gates carry."""
    lines = table(
        ["gate", "value", "limit", "n", "status", "detail"],
        [[g.name, g.value, g.limit, g.n, g.status, g.detail] for g in gates],
    )
    failed = [g.name for g in gates if g.failed]
    # N/A (nothing to judge) is not a finding; INCONCLUSIVE and any other status are counted
    others = Counter(
        g.status
        for g in gates
        if not g.failed and g.status not in (GateStatus.PASS, GateStatus.NOT_APPLICABLE)
    )
    tally = f"gates: {len(failed)} failed" + (f" ({', '.join(failed)})" if failed else "")
    for status, count in sorted(others.items()):
        tally += f", {count} {status}"
    return [*lines, tally]


def selected_agreement(rows: Sequence[CriterionAgreement]) -> list[CriterionAgreement]:
    """The criteria this run scored: with ``-k`` picking some, the others have no cases and
    would otherwise sort first as the worst at 0.0%."""
    return [r for r in rows if r.cases > 0]


def slice_lines(rows: Sequence[SliceAgreement], min_n: int, verbose: bool) -> list[str]:
    """Gated slices in a table; the small ones in one line unless ``verbose`` (pytest -v)."""
    shown = list(rows) if verbose else [s for s in rows if s.cases >= min_n]
    small = [s for s in rows if s.cases < min_n]
    if verbose:
        title = f"Agreement by slice (worst first; slices under n={min_n} shown, not gated)"
    else:
        title = f"Agreement by slice (worst first; n >= {min_n}, gated)"
    lines = ["", title]
    if shown:
        lines += slice_table(shown, min_n)
    if small and not verbose:
        names = ", ".join(s.slice for s in small[:SMALL_SLICES_NAMED])
        more = (
            f" and {len(small) - SMALL_SLICES_NAMED} more"
            if len(small) > SMALL_SLICES_NAMED
            else ""
        )
        lines.append(
            f"  {len(small)} slices under n={min_n} not gated and not shown "
            f"({names}{more}); -v shows them"
        )
    return lines


def movement_lines(summary: RunSummary) -> list[str]:
    """Movements against the baseline, then the crossings and how to review them."""
    if summary.baseline is None:
        return []
    lines = ["", f"Movements against run {summary.baseline.run_id}: {len(summary.movements)}"]
    if summary.movements:
        lines += movement_table(summary.movements[:MOVEMENTS_SHOWN])
        if len(summary.movements) > MOVEMENTS_SHOWN:
            lines.append(f"  ... and {len(summary.movements) - MOVEMENTS_SHOWN} more")
    lines.append(f"Crossings (decision flips): {len(summary.crossings)}")
    if summary.crossings:
        lines += table(
            ["case", "before", "after", "reviewed by"],
            [
                [
                    c.case_id,
                    f"{c.before_overall:.1f} {c.before}",
                    f"{c.after_overall:.1f} {c.after}",
                    summary.reviewed_crossings.get(c.case_id, "NOT REVIEWED"),
                ]
                for c in summary.crossings
            ],
        )
        if any(c.case_id not in summary.reviewed_crossings for c in summary.crossings):
            lines.append(
                f"  review one: screeneval review {summary.run_id} CASE --by NAME --note TEXT"
            )
    return lines


def render(
    summary: RunSummary, session: ScreenevalSession | None = None, *, verbose: bool = False
) -> list[str]:
    """The summary, verdict first: gates, then movements and crossings, then the detail."""
    lines = ["", "=" * 30 + " screeneval " + "=" * 30]
    lines += identity_lines(summary)
    sel = summary.selection
    kinds = ", ".join(f"{n} {k}" for k, n in sorted(sel.items()) if k not in ("cases", "of_cases"))
    lines.append(f"selection: {sel['cases']} of {sel['of_cases']} cases; items: {kinds}")
    calls = summary.calls
    lines.append(
        f"scorer calls: {calls['scored']} scored, {calls['reused']} reused, "
        f"{calls['deduplicated']} identical texts shared; {calls['needed_retries']} needed "
        f"retries ({calls['attempts']} attempts); tokens {calls['prompt_tokens']} prompt + "
        f"{calls['completion_tokens']} completion; {summary.errors} scorer errors; "
        f"{summary.duration_s:.1f} s"
    )
    from pytest_screeneval.report.noise import pacing_line

    paced = pacing_line(getattr(summary, "pacing", None) or {})
    if paced:
        lines.append(paced)
    judged = getattr(summary, "rationale_judge", None) or {}
    if judged:
        lines.append(
            f"rationale judge: {judged['judge']} (scope {judged['scope']}): "
            f"{judged['asked']} verdicts asked, {judged['reused']} reused from the store, "
            f"{judged['failed']} failed"
        )
        if judged.get("not_stored"):
            lines.append(
                f"rationale judge: {judged['not_stored']} verdicts could not be stored and are "
                f"not in the audit record; they still decided their items "
                f"({judged['store_error']})"
            )
    for warning in summary.warnings:
        lines.append(f"warning: {warning}")

    lines += ["", "Gates"]
    lines += gate_lines(summary.gates)
    if summary.accepted:
        acc = summary.accepted
        forced = " (forced)" if acc.get("forced") else ""
        lines.append(
            f"accepted: run {summary.run_id} is the new baseline{forced}, accepted by "
            f"{acc['accepted_by']} at {acc['accepted_at']}"
        )
    if session is not None and session.acceptance_error:
        lines.append(f"not accepted: {session.acceptance_error}")
    lines += movement_lines(summary)

    agreement = selected_agreement(summary.agreement)
    unselected = len(summary.agreement) - len(agreement)
    lines += [
        "",
        "Agreement by criterion (worst first; contested items counted apart"
        + (
            f"; {unselected} {'criterion' if unselected == 1 else 'criteria'} not selected"
            if unselected
            else ""
        )
        + ")",
    ]
    lines += agreement_table(agreement)
    lines += slice_lines(summary.slices, summary.slice_min_n, verbose)
    lines += _detail_lines(summary)
    return lines


def _detail_lines(summary: RunSummary) -> list[str]:
    """Rater agreement, counterfactual gaps, perturbation shifts, self-consistency, noise."""
    lines: list[str] = []
    if any(r.n_units for r in summary.rater_agreement.values()):
        lines += [
            "",
            "Rater agreement on the golden set (Krippendorff's alpha; contested = 2+ apart)",
        ]
        lines += table(
            ["criterion", "cases rated", "alpha ordinal", "alpha interval", "pairs equal %"],
            [
                [
                    name,
                    r.n_units,
                    _alpha(r.alpha_ordinal),
                    _alpha(r.alpha_interval),
                    None if r.exact_pairwise_share is None else 100 * r.exact_pairwise_share,
                ]
                for name, r in sorted(summary.rater_agreement.items())
            ],
        )
    if summary.counterfactual:
        lines += ["", "Counterfactual gaps (overall points)"]
        lines += table(
            ["attribute", "cases", "mean", "worst", "worst case", "values"],
            [
                [
                    a,
                    v["n_cases"],
                    v["mean_gap"],
                    v["worst_gap"],
                    v["worst_case"],
                    _versus(v["worst_values"]),
                ]
                for a, v in summary.counterfactual.items()
            ],
        )
    if summary.perturbation:
        lines += ["", "Perturbation shifts (overall points)"]
        lines += table(
            ["kind", "cases", "mean", "worst", "worst case"],
            [
                [k, v["n_cases"], v["mean_shift"], v["worst_shift"], v["worst_case"]]
                for k, v in summary.perturbation.items()
            ],
        )
    if summary.consistency is not None:
        c = summary.consistency
        lines += [
            "",
            f"Self-consistency over {c.repeats} repeats: {c.disagreeing} of {c.items} "
            f"items differ ({c.pct:.1f}%)",
        ]
        for case_id, criterion, values in c.examples[:5]:
            lines.append(f"  {case_id} · {criterion}: {', '.join(map(str, values))}")
    from pytest_screeneval.report.noise import noise_lines

    lines += noise_lines(summary)
    return lines
