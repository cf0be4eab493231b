"""The offline reference scorer: deterministic, rubric-driven, no network, no key.

For each criterion it scores the highest level of the rubric whose keywords appear in the text
(the scale's minimum when none do), and writes a one-sentence rationale that names the criterion
and quotes what it matched. Matching is on whole words, case-insensitive, and folds the usual OCR
confusions (``1``/``l``, ``0``/``o``, ``rn``/``m``, ``|``/``l``, ``I``/``l``, ``5``/``S``) and
ligature glyphs (NFKC: "ﬁ" is "fi") on both sides, so text extracted from a scanned or
two-column PDF is read the way a person would.

It is a reference, not a model of judgement: it cannot tell an expired certification from a
current one, and the bundled golden set marks those items xfail with that reason.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache

from pytest_screeneval.golden.model import Criterion, Rubric, sha256_text
from pytest_screeneval.scoring.protocol import CriterionScore, ScorerIdentity

__all__ = ["KeywordScorer", "fold_ocr", "make_scorer"]

# Applied after lower-casing, to the text and the keywords alike, so a fold never breaks a match:
# each pair is a confusion OCR makes (rn/m, 0/O, 1/l, |/l, I/l, 5/S).
_OCR_FOLDS = (("rn", "m"), ("0", "o"), ("1", "l"), ("|", "l"), ("i", "l"), ("5", "s"))
_NON_WORD = re.compile(r"[^a-z0-9+#./]+")


def fold_ocr(text: str) -> str:
    """Lower-case, fold ligatures and OCR look-alikes, and collapse everything but word
    characters to spaces."""
    folded = unicodedata.normalize("NFKC", text).lower()
    for seen, meant in _OCR_FOLDS:
        folded = folded.replace(seen, meant)
    return " " + _NON_WORD.sub(" ", folded).strip() + " "


@lru_cache(maxsize=4096)
def _folded_keyword(keyword: str) -> str:
    return fold_ocr(keyword)


class KeywordScorer:
    """Scores each criterion by the highest rubric level whose keywords the text contains."""

    PROMPT = "keyword-scorer/v1: highest level with a whole-word keyword match, OCR folded"

    def __init__(self, rubric: Rubric, name: str = "keyword") -> None:
        self.identity = ScorerIdentity(
            name=name,
            model_id=f"{name}-v1",
            prompt_sha=sha256_text(self.PROMPT),
            rubric_sha=rubric.sha,
            temperature=0.0,
        )

    def score(self, text: str, rubric: Rubric) -> Sequence[CriterionScore]:
        folded = fold_ocr(text)
        return [
            self._score_criterion(criterion, text, folded, rubric) for criterion in rubric.criteria
        ]

    def _score_criterion(
        self, criterion: Criterion, text: str, folded: str, rubric: Rubric
    ) -> CriterionScore:
        label = criterion.name.replace("_", " ")
        for level in sorted(criterion.keywords, reverse=True):
            matched = [kw for kw in criterion.keywords[level] if _folded_keyword(kw) in folded]
            if matched:
                quotes = _quotes(text, matched)
                shown = " and ".join(f'"{q}"' for q in (quotes or matched)[:2])
                rationale = (
                    f"The {label} criterion scores {level} of {rubric.scale.max} because the "
                    f"resume mentions {shown}."
                )
                return CriterionScore(criterion.name, level, rationale, evidence=tuple(quotes[:2]))
        rationale = (
            f"The {label} criterion scores {rubric.scale.min} of {rubric.scale.max} because the "
            "resume mentions none of the rubric's keywords for it."
        )
        return CriterionScore(criterion.name, rubric.scale.min, rationale)


def _quotes(text: str, keywords: Sequence[str]) -> list[str]:
    """The keywords as they are written in the text (exact spans), where found verbatim."""
    quotes: list[str] = []
    lowered = text.lower()
    for keyword in keywords:
        start = lowered.find(keyword.lower())
        if start >= 0:
            quotes.append(text[start : start + len(keyword)])
    return quotes


def make_scorer(rubric: Rubric) -> KeywordScorer:
    """Factory used by ``screeneval_scorer = keyword`` (the embedded default)."""
    return KeywordScorer(rubric)
