"""The noise section of the terminal summary: what the scorer's own noise is, the
level the verdicts were judged at, what confirmation cost, and the items it left unstable."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_screeneval.session.summary import RunSummary

__all__ = ["noise_lines"]

LISTED = 10


def noise_lines(summary: RunSummary) -> list[str]:
    noise: dict[str, Any] = getattr(summary, "noise", None) or {}
    confirmation: dict[str, Any] = getattr(summary, "confirmation", None) or {}
    if not noise:
        return []
    lines = ["", f"Noise of the scorer (re-scored answers): {noise['described']}"]
    rows = [c for c in noise.get("criteria", []) if c["compared"]]
    if rows:
        width = max(len("criterion"), *(len(c["criterion"]) for c in rows))
        lines.append(f"  {'criterion':<{width}}  re-scores  changed %  mean |Δ|")
        for c in rows:
            lines.append(
                f"  {c['criterion']:<{width}}  {c['compared']:>9}  "
                f"{100 * c['changed_share']:>9.1f}  {c['mean_abs_delta']:>8.2f}"
            )
    lines.append(f"verdicts judged at {confirmation.get('judged_at', '95% confidence')}")
    lines.append(
        f"confirmation cost {confirmation.get('extra_calls', 0)} extra scorer calls "
        f"(budget {confirmation.get('budget', '-')})"
    )
    for outcome, title in (
        ("unstable", "within the noise: a difference that did not hold when re-scored"),
        ("unconfirmed", "not confirmed: the confirmation budget was spent"),
    ):
        items = confirmation.get(outcome) or []
        if not items:
            continue
        lines.append(f"{outcome} items ({title}; not findings): {len(items)}")
        for item in items[:LISTED]:
            lines.append(f"  {item['item']}: {item['detail']}")
        if len(items) > LISTED:
            lines.append(f"  ... and {len(items) - LISTED} more (all in --screeneval-json)")
    inconclusive = confirmation.get("inconclusive_gates") or []
    if inconclusive:
        policy = confirmation.get("inconclusive", "warn")
        effect = "fails the session" if policy == "fail" else "a warning (screeneval_inconclusive)"
        lines.append(f"inconclusive gates: {', '.join(inconclusive)} ({effect})")
    return lines
