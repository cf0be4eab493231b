"""Languages a rationale says the candidate speaks: each must be one the resume names.

"Fluent in French, Spanish and Italian" against a resume that gives "French and Spanish
(conversational)" claims Italian. A language name is a nationality's word too ("Italian"), which
grounding otherwise leaves alone as no claim (see ``name_forms``); said after a cue of speaking
("fluent in", "speaks", "bilingual in", "conversational"), it is a skill the resume must give.
The language names are the protected lexicon's ``languages`` fragment and a few more, so the
checks agree on them. A negated or hypothetical mention ("no German") is no claim, and "native"
is no cue: a native speaker is the candidate's origin, the protected flag's business.
"""

from __future__ import annotations

import re
from functools import cache

from pytest_screeneval.evidence.rationale.claim_context import Context
from pytest_screeneval.evidence.rationale.protected import builtin_fragment

__all__ = ["unsupported_languages"]

_MORE = (
    "welsh|irish|gaelic|scots\\s+gaelic|cornish|norwegian|swedish|danish|finnish|czech|slovak"
    "|hungarian|lithuanian|latvian|estonian|bulgarian|serbian|croatian|albanian|somali|tamil"
    "|gujarati|malay|indonesian|thai|amharic|tigrinya|kurdish|pashto|dari|nepali|sinhala"
    "|catalan|basque|galician|british\\s+sign\\s+language|bsl|makaton|latin"
)


_CUE = re.compile(r"fluen|speak|spok|conversational|bilingual|trilingual|proficien|knowledge", re.I)


@cache
def _speaking() -> re.Pattern[str]:
    language = f"(?:{builtin_fragment('languages')}|{_MORE})"
    return re.compile(
        r"\b(?:fluent|fluency|fluently|speaks?|speaking|spoken|conversational|bilingual"
        r"|trilingual|proficient|proficiency|working\s+knowledge)\s+(?:in\s+|of\s+)?"
        rf"({language}(?:(?:\s*,\s*|\s+and\s+|\s+or\s+|\s*/\s*){language})*)\b",
        re.IGNORECASE,
    )


@cache
def _language() -> re.Pattern[str]:
    return re.compile(rf"\b(?:{builtin_fragment('languages')}|{_MORE})\b", re.IGNORECASE)


def unsupported_languages(context: Context) -> list[str]:
    """One problem for each language said to be spoken that the resume never names."""
    text, resume = context.text, context.facts.folded
    problems: list[str] = []
    if not _CUE.search(text):
        return problems  # most rationales say nothing of speaking: one cheap search
    for match in _speaking().finditer(text):
        if context.negated.touches(*match.span()) or context.quoted.touches(*match.span()):
            continue
        for language in _language().finditer(match.group(1)):
            said = re.sub(r"\s+", " ", language.group(0).lower())
            if not re.search(rf"\b{re.escape(said)}\b", resume):
                problems.append(f"language not in the resume: {language.group(0)!r}")
    return problems
