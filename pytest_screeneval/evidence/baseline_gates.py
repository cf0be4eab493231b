"""The gates against the baseline judged against the scorer's noise: agreement drop, moved share.

Pure module. The golden set is fixed: each interval says how sure the run is of the value *on
these cases*, given the noise of the scorer's answers (this run's, and the baseline run's as
that run measured it, else this run's). With no measured noise every interval has zero width and
each gate keeps exactly the verdict of comparing its value with the limit. Three-way verdicts
as the fairness gates: FAIL when the evidence puts the value beyond the limit, PASS when within,
INCONCLUSIVE otherwise, with what would decide it.

**agreement-drop[criterion]**, paired over the n cases: dᵢ = agreeᵢ(baseline) − agreeᵢ(now),
agree = the first answer equals the expected level (today's exact agreement);
drop = 100·mean(dᵢ) (the exact-agreement percentages' difference). An agree indicator A of a
noisy answer has Var(A) ≤ r/2, with r the criterion's level-change share (re-scores that came
back at another level): two independent answers disagree on A with probability 2·Var(A), and
only when they differ in level. So

    SE = 100·√(n·(r_now + r_base)/2) / n,   drop ± t(1 − α/2, df)·SE

(df: the criterion's noise df; r_base = r_now when the baseline measured no noise).

**moved-share**: an unreviewed movement counts as moved when its item confirmed it against the
noise (``evidence.movement``); one left unconfirmed (the budget was spent) or never re-scored
(within the item's tolerance) is undecided; one left unstable (within the noise) does not count
as long as there are no more of them than the noise itself produces. Pure noise makes an item's
first answer differ from the baseline's with probability about r̄ = (r_now + r_base)/2, so over
n compared items it makes E = n·r̄ differences (r̄: the mean over criteria), at most
E + z·√E (z = 1.96, a Poisson bound). More unstable items than that means real movements
hide among them. With c confirmed, u undecided, v unstable:

    FAIL when 100·c/n > limit;  PASS when 100·(c + u)/n ≤ limit and v ≤ E + z·√E;
    else INCONCLUSIVE.

**unreviewed-crossings** (at most 0): a decision crossing nobody reviewed counts when its item
confirmed it (``evidence.movement``: both runs' intervals on their own side of advance_at); one
left unstable (within the noise) or unconfirmed (the budget was spent) is undecided. FAIL with
any confirmed; PASS with none at all; INCONCLUSIVE when only undecided ones remain.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from pytest_screeneval.evidence.gate_result import (
    FAIL,
    INCONCLUSIVE,
    NOT_APPLICABLE,
    PASS,
    GateResult,
    at_most,
)
from pytest_screeneval.evidence.intervals import two_sided_quantile
from pytest_screeneval.evidence.metrics import CriterionAgreement
from pytest_screeneval.evidence.noise import NoiseEstimate

__all__ = [
    "agreement_drop_gate",
    "change_share",
    "crossings_gate",
    "moved_share_gate",
    "noise_differences",
]

_EPS = 1e-9


def change_share(noise: NoiseEstimate, criterion: str) -> tuple[float, int]:
    """The criterion's level-change share and the df of its noise (0, 0 when not measured)."""
    found = next((c for c in noise.criteria if c.criterion == criterion), None)
    return (found.changed_share, found.df) if found is not None else (0.0, 0)


def _decide(estimate: float, half: float, limit: float, n: int) -> str:
    distance = abs(estimate - limit)
    if distance <= _EPS:
        return "the drop sits on the limit: more cases narrow the interval but cannot move it"
    factor = (half / distance) ** 2
    return (
        f"about {factor:.1f}× the evidence: {math.ceil(n * factor)} cases at this noise, "
        "or a steadier scorer"
    )


def agreement_drop_gate(
    row: CriterionAgreement,
    limit: float,
    *,
    has_baseline: bool,
    noise: NoiseEstimate | None = None,
    baseline_noise: NoiseEstimate | None = None,
    confidence: float = 0.95,
) -> GateResult:
    """``agreement-drop[criterion]``: the drop in exact agreement against the baseline, with
    the noise's interval when the scorer measured any (module docstring)."""
    name = f"agreement-drop[{row.criterion}]"
    if not has_baseline:
        return at_most(name, None, limit, row.cases, "no baseline to compare with")
    plain_detail = f"exact {row.exact_pct:.1f}% vs baseline {row.baseline_exact_pct or 0:.1f}%"
    drop = None if row.change is None else max(0.0, -row.change)
    plain = at_most(name, drop, limit, row.cases, plain_detail)
    if noise is None or plain.status not in (PASS, FAIL) or row.baseline_exact_pct is None:
        return plain
    r_now, df = change_share(noise, row.criterion)
    r_base = r_now
    if baseline_noise is not None and baseline_noise.measured:
        r_base, _ = change_share(baseline_noise, row.criterion)
    n = row.cases
    standard_error = 100.0 * math.sqrt(n * (r_now + r_base) / 2.0) / n
    if standard_error <= 0:
        return plain
    signed = row.baseline_exact_pct - row.exact_pct
    half = two_sided_quantile(confidence, df or None) * standard_error
    low, high = signed - half, signed + half
    status = FAIL if low > limit + _EPS else PASS if high <= limit + _EPS else INCONCLUSIVE
    detail = (
        f"{plain_detail}; paired over {n} cases: drop {signed:.1f}, {confidence * 100:g}% CI "
        f"{low:.1f}–{high:.1f} (level changes in {100 * r_now:.0f}% of re-scores now, "
        f"{100 * r_base:.0f}% at the baseline)"
    )
    if status == INCONCLUSIVE:
        detail += f"; to decide: {_decide(signed, half, limit, n)}"
    # the value is the drop its interval is around: a rise is a negative drop
    return GateResult(name, signed, plain.limit, n, status, detail, (low, high))


def noise_differences(noise: NoiseEstimate, baseline_noise: NoiseEstimate | None) -> float:
    """r̄: the chance that pure noise makes an item's first answer differ from the baseline's."""
    shares = []
    for c in noise.criteria:
        r_base = c.changed_share
        if baseline_noise is not None and baseline_noise.measured:
            r_base, _ = change_share(baseline_noise, c.criterion)
        shares.append((c.changed_share + r_base) / 2.0)
    return sum(shares) / len(shares) if shares else 0.0


def moved_share_gate(
    moved: int,
    compared: int,
    limit: float,
    *,
    has_baseline: bool,
    reviewed: int = 0,
    statuses: Mapping[str, int] | None = None,
    noise_share: float = 0.0,
    z: float = 1.96,
) -> GateResult:
    """``moved-share``: unreviewed moved items of the compared ones, counting only confirmed
    movements when items were confirmed against the noise (module docstring).

    ``statuses``: how many unreviewed movements were ``confirmed``, ``unstable``,
    ``unconfirmed`` (budget spent) or ``not re-scored`` (within the item's tolerance); with none
    but confirmed ones the plain share stands. ``noise_share``: r̄.
    """
    name = "moved-share"
    if not has_baseline:
        return at_most(name, None, limit, compared, "no baseline to compare with")
    share = 100.0 * moved / compared if compared else None
    plain = at_most(
        name,
        share,
        limit,
        compared,
        f"{moved} of {compared} items moved unreviewed"
        + (f" ({reviewed} reviewed, not counted)" if reviewed else ""),
    )
    statuses = statuses or {}
    unstable = statuses.get("unstable", 0)
    spent = statuses.get("unconfirmed", 0)
    within_tolerance = statuses.get("not re-scored", 0)
    undecided = spent + within_tolerance
    if plain.status not in (PASS, FAIL) or not plain.n or not (unstable or undecided):
        return plain
    confirmed = statuses.get("confirmed", 0)
    n = plain.n
    value = 100.0 * confirmed / n
    expected = n * noise_share
    explained = expected + z * math.sqrt(expected)
    if value > limit + _EPS:
        status = FAIL
    elif 100.0 * (confirmed + undecided) / n <= limit + _EPS and unstable <= explained + _EPS:
        status = PASS
    else:
        status = INCONCLUSIVE
    parts = [
        f"{confirmed} of {n} items moved unreviewed beyond the noise; {unstable} moved within "
        f"the noise (not counted; noise alone makes about {expected:.1f}, at most "
        f"{explained:.1f}); {undecided} undecided"
        + (f" ({reviewed} reviewed, not counted)" if reviewed else "")
    ]
    if status == INCONCLUSIVE:
        ways = []
        if spent:
            ways.append(f"raise screeneval_confirm_budget ({spent} left unconfirmed)")
        if within_tolerance:
            ways.append(
                f"lower screeneval_movement_tolerance so that items re-score the "
                f"{within_tolerance} within it"
            )
        if unstable > explained + _EPS:
            ways.append(
                "review the unstable movements (more than the noise explains: real ones hide "
                "among them) or give the baseline more answers (--screeneval-repeat)"
            )
        parts.append(f"to decide: {' or '.join(ways)}")
    return GateResult(name, value, plain.limit, n, status, "; ".join(parts))


def crossings_gate(
    unreviewed: int,
    crossings: int,
    *,
    has_baseline: bool,
    statuses: Sequence[str] | None = None,
) -> GateResult:
    """``unreviewed-crossings`` (at most 0), judged on what each unreviewed crossing's item
    concluded (``confirmed``, ``unstable`` or ``unconfirmed``) when given; a crossing no item
    judged counts. Its n counts events, so a run with none passes."""
    name = "unreviewed-crossings"
    if not has_baseline:
        return GateResult(
            name, None, "<= 0", crossings, NOT_APPLICABLE, "no baseline to compare with"
        )
    detail = f"{crossings} crossing(s) in all"
    if statuses is None or not crossings:
        status = PASS if unreviewed == 0 else FAIL
        return GateResult(name, float(unreviewed), "<= 0", crossings, status, detail)
    confirmed = sum(1 for status in statuses if status not in ("unstable", "unconfirmed"))
    undecided = len(statuses) - confirmed
    status = FAIL if confirmed else (INCONCLUSIVE if undecided else PASS)
    if undecided:
        detail = (
            f"{detail}; {confirmed} confirmed, {undecided} within the scorer's noise or not "
            "confirmed: to decide, review them (screeneval review RUN CASE) or re-run with "
            "--screeneval-repeat"
        )
    return GateResult(name, float(confirmed), "<= 0", crossings, status, detail)
