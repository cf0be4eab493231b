"""The noise section of the terminal summary: what the scorer's own noise is, the level the
verdicts were judged at, what confirmation cost, and the items it left unstable; beside it, what
the provider served (its system fingerprints, flagged when they changed), the first thing to
check when the noise or the scores move. Also the line on the run's concurrency and its waits on
rate limits."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_screeneval.session.summary import RunSummary

__all__ = ["noise_lines", "pacing_line", "served_lines"]

LISTED = 10


def noise_lines(summary: RunSummary) -> list[str]:
    noise: dict[str, Any] = getattr(summary, "noise", None) or {}
    confirmation: dict[str, Any] = getattr(summary, "confirmation", None) or {}
    if not noise:
        return served_lines(summary)
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
    if confirmation.get("items_error"):
        lines.append(str(confirmation["items_error"]))
    lines.append(
        f"confirmation cost {confirmation.get('extra_calls', 0)} extra scorer calls "
        f"(budget {confirmation.get('budget', '-')})"
    )
    if confirmation.get("decide_budget"):
        lines.append(
            f"decide budget: {confirmation.get('decide_calls', 0)} of "
            f"{confirmation['decide_budget']} calls spent in "
            f"{confirmation.get('decide_rounds', 0)} round(s) where a fairness gate was "
            "INCONCLUSIVE"
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
    return lines + served_lines(summary)


def served_lines(summary: RunSummary) -> list[str]:
    """The system fingerprints the answers carried, and a flag for each change."""
    served: dict[str, Any] = getattr(summary, "served_backend", None) or {}
    if not served or not (served.get("fingerprints") or served.get("flags")):
        return []
    lines = [f"served by (system fingerprint): {served['described']}"]
    lines += [f"  FLAG {flag}" for flag in served.get("flags") or []]
    return lines


def pacing_line(pacing: dict[str, Any]) -> str | None:
    """How the concurrency moved and how long the run waited on rate limits."""
    if not pacing:
        return None
    mode = "adaptive" if pacing["adaptive"] else "fixed"
    text = f"concurrency: {mode}, at most {pacing['ceiling']}"
    if pacing["lowest"] < pacing["ceiling"]:
        text += (
            f", lowered to {pacing['lowest']} ({pacing['decreases']} times), "
            f"{pacing['final']} at the end"
        )
    said = []
    if pacing["rate_limited"]:
        said.append(f"{pacing['rate_limited']} calls answered 429 and sent again")
    if pacing["header_waits"]:
        said.append(f"{pacing['header_waits']} holds on the rate-limit headers")
    if not said:
        return f"{text}; rate limits: none met"
    return f"{text}; rate limits: {', '.join(said)}; waited {pacing['waited_s']:.1f} s on them"
