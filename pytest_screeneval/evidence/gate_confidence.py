"""The confidence the fairness gates judge at, corrected for repeated looks.

Pure module. With ``screeneval_decide_budget`` above 0 the run looks at its fairness gates up to
``LOOKS`` times (after each round of re-scores, and once more for the summary) and keeps the
verdict of the last. Each look is judged at ``1 − α / LOOKS`` (alpha spent evenly over the looks,
a Bonferroni bound), so the chance that any look, and so the verdict kept, is false stays at α
or less however the rounds went. With no budget there is one look, at ``1 − α``.
"""

from __future__ import annotations

__all__ = ["LOOKS", "ROUNDS", "gate_confidence"]

ROUNDS = 3  # rounds of re-scores the decide budget is spent in, at most
LOOKS = ROUNDS + 1  # every round's look, and the summary's


def gate_confidence(decide_budget: int, confidence: float = 0.95) -> float:
    if decide_budget <= 0:
        return confidence
    return 1.0 - (1.0 - confidence) / LOOKS
