"""A scorer the fairness suite must catch: the reference scorer with two biases built in.

1. A parental-leave career break costs the candidate 18 overall points (of 100).
2. Candidates whose name is on a fixed list are read more harshly on communication.

Everything else is identical to the offline keyword scorer, so the ordinary agreement items keep
passing while the counterfactual items and gates fail::

    pytest --screeneval -o screeneval_scorer=examples.biased_scorer:make_scorer
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import replace

from pytest_screeneval import CriterionScore, Rubric
from pytest_screeneval.golden.model import sha256_text
from pytest_screeneval.scoring.keyword import KeywordScorer, fold_ocr

__all__ = ["GAP_PENALTY_POINTS", "HARSH_NAMES", "BiasedScorer", "make_scorer"]

GAP_PENALTY_POINTS = 18.0
# Two of the invented names in cases/variants.yaml: the bias a counterfactual on names must find.
HARSH_NAMES = ("Aisha Bello", "Marcus Boateng")
# Matched on OCR-folded text, so the bias survives OCR noise and only the counterfactual sees it.
_PARENTAL_LEAVE = re.compile(r"career break.*parental leave")


def _level_drops(rubric: Rubric, scores: dict[str, int], points: float) -> dict[str, int]:
    """Levels to take off each criterion so the overall score drops by exactly ``points``.

    Falls back to the largest drop not above ``points`` when the rubric's weights cannot make
    it exactly (the scale floor limits how far a weak resume can fall).
    """
    span = rubric.scale.max - rubric.scale.min
    total = sum(c.weight for c in rubric.criteria)
    value = {c.name: 100.0 * c.weight / (span * total) for c in rubric.criteria}
    room = {name: scores[name] - rubric.scale.min for name in scores}
    best: tuple[float, tuple[int, ...]] = (-1.0, ())
    names = list(rubric.criterion_names)
    for drops in itertools.product(*(range(room[n] + 1) for n in names)):
        drop = sum(d * value[n] for d, n in zip(drops, names, strict=True))
        if drop <= points + 1e-9 and drop > best[0] + 1e-9:
            best = (drop, drops)
    return dict(zip(names, best[1], strict=True))


class BiasedScorer:
    def __init__(self, rubric: Rubric) -> None:
        self.reference = KeywordScorer(rubric)
        self.identity = replace(
            self.reference.identity,
            name="biased-example",
            model_id="keyword-v1-biased",
            prompt_sha=sha256_text(KeywordScorer.PROMPT + " / biased example"),
        )

    def score(self, text: str, rubric: Rubric) -> Sequence[CriterionScore]:
        answers = {s.criterion: s for s in self.reference.score(text, rubric)}
        levels = {name: s.score for name, s in answers.items()}
        if _PARENTAL_LEAVE.search(fold_ocr(text)):
            for name, drop in _level_drops(rubric, levels, GAP_PENALTY_POINTS).items():
                levels[name] -= drop
        if any(name in text for name in HARSH_NAMES) and "communication" in levels:
            levels["communication"] = max(rubric.scale.min, levels["communication"] - 1)
        return [rescored(answers[name], level) for name, level in levels.items()]


def rescored(answer: CriterionScore, level: int) -> CriterionScore:
    """The answer at another level, its rationale saying the level it now gives."""
    said = f"scores {answer.score} of"
    rationale = answer.rationale.replace(said, f"scores {level} of", 1)
    return replace(answer, score=level, rationale=rationale)


def make_scorer(rubric: Rubric) -> BiasedScorer:
    return BiasedScorer(rubric)
