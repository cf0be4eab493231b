"""A "prompt change" to the reference scorer: it no longer credits leadership at the top level.

Run it against an accepted baseline of the keyword scorer to see what a small change to a scorer
does to the suite: the moved items fail with before/after, the leadership agreement-drop gate
fails, and cases near the advance threshold cross::

    pytest --screeneval -o screeneval_scorer=examples.tweaked_scorer:make_scorer
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from pytest_screeneval import CriterionScore, Rubric
from pytest_screeneval.golden.model import sha256_text
from pytest_screeneval.scoring.keyword import KeywordScorer

TWEAKED_CRITERION = "leadership"


class TweakedScorer:
    """The keyword scorer whose top two leadership levels collapse into one level lower."""

    def __init__(self, rubric: Rubric) -> None:
        self.reference = KeywordScorer(rubric)
        self.identity = replace(
            self.reference.identity,
            name="keyword-tweaked",
            model_id="keyword-v1-tweaked",
            prompt_sha=sha256_text(KeywordScorer.PROMPT + " / leadership capped"),
        )

    def score(self, text: str, rubric: Rubric) -> Sequence[CriterionScore]:
        top = rubric.scale.max
        return [
            rescored(s, s.score - 1)
            if s.criterion == TWEAKED_CRITERION and s.score >= top - 1
            else s
            for s in self.reference.score(text, rubric)
        ]


def rescored(answer: CriterionScore, level: int) -> CriterionScore:
    """The answer at another level, its rationale saying the level it now gives."""
    said = f"scores {answer.score} of"
    rationale = answer.rationale.replace(said, f"scores {level} of", 1)
    return replace(answer, score=level, rationale=rationale)


def make_scorer(rubric: Rubric) -> TweakedScorer:
    return TweakedScorer(rubric)


__all__ = ["TweakedScorer", "make_scorer", "rescored"]
