"""The contexts that make a protected term about the work, not the candidate, compiled from the
lexicon's fragments (``data/protected_terms.yaml``) for
:mod:`pytest_screeneval.evidence.rationale.protected`.

- ``domain_after``: a product, audience or work noun a few describing words after the term, a list
  allowed ("marriage-counselling app", "asylum, family reunion and visa appeals").
- ``domain_before``: the people of the work before it, described ("patients, many of them elderly
  and living with diabetes", "many of her pupils live with autism"), or the work's range ("a
  caseload that runs from divorce to ...").
- ``work_after``: "the age of the legacy codebase", "married the payroll and pension systems".
- ``thing_before``: a thing of the work right before it ("TLS 1.0 disabled").
- ``antecedent``: the people of the work a later "their" points back at.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["WorkContext", "work_context"]


@dataclass(frozen=True)
class WorkContext:
    """The compiled contexts (see the module docstring)."""

    domain_after: re.Pattern[str]
    domain_before: re.Pattern[str]
    work_after: re.Pattern[str]
    thing_before: re.Pattern[str]
    antecedent: re.Pattern[str]


def work_context(fragments: Mapping[str, str]) -> WorkContext:
    """The contexts, the lexicon's fragments filled in."""
    not_modifier = fragments["not_a_modifier"]
    domain_after = re.compile(
        # up to four describing words, a list allowed: "asylum, family reunion and visa appeals"
        rf"(?:'s|')?(?:,?[- ](?!(?:{not_modifier})\b)[a-z/']+(?:\s+(?:and|or)\b)?){{0,4}}"
        rf"[- ](?:{fragments['domain_nouns']}|{fragments['work_nouns']})\b",
        re.IGNORECASE,
    )
    domain_before = re.compile(
        # "a caseload that runs from divorce to ...", "her work covers asylum and ...": the work
        r"\b(?:caseloads?|practice|work|cases|matters|portfolio)\s+(?:that\s+|which\s+)?"
        r"(?:runs?|ranges?|covers?|spans?|includes?)\s+(?:from\s+)?(?:[\w-]+\s+){0,2}$|"
        rf"(?:(?<!\bher\s)(?<!\bhis\s)(?<!\btheir\s)(?<!\bown\s)\b(?:{fragments['audience']})"
        # "her pupils", "many of his parents": the people of the work even with a possessive
        rf"|\b(?:{fragments['work_people']}))(?:'s|')?"
        rf"(?:\s+(?:at|in|on|from)\s+(?:the\s+)?[\w'-]+(?:\s+[\w'-]+)?)?"
        # "patients and carers, most of them elderly": the people of the work, described
        rf"(?:(?:\s+and\s+[a-z]+)?,?\s+(?:many|most|some|all|half|several|few|mostly|largely|mainly|often)\s+"
        rf"(?:of\s+(?:them|whom)\s+)?(?:(?:are|were|being)\s+)?(?:[\w-]+\s+(?:and\s+)?){{0,2}}?|\s+)"
        rf"(?:(?:are\s+(?:\w+\s+)?)?(?:(?:live|lives|living|diagnosed|presenting)\s+)?(?:with|who\s+(?:have|has|are|were))\s+(?:an?\s+)?(?:[\w-]+\s+){{0,3}}"
        rf"|(?:are|were|is)\s+(?:often|mostly|largely|mainly|usually)?\s*"
        rf"|(?:of|in|at)\s+(?:every|all|any|different|various|mixed|similar)\s+)?$",
        re.IGNORECASE,
    )
    # "the age of the legacy codebase"; a term used as a verb on a thing: "married the payroll
    # and pension systems", "divorced the subsidiary ledgers from the group close"
    work_after = re.compile(
        rf"\s+(?:of\s+(?:the|a|an|its|our|this|that|these|those)?\s*"
        rf"|(?:the|its|our|two|both|legacy|old|unused|outdated|deprecated|insecure|weak|all)"
        rf"\s+)(?:[\w'-]+\s+){{0,3}}?(?:{fragments['work_nouns']})\b",
        re.IGNORECASE,
    )
    # a term said of a thing of the work named right before it, a version number allowed:
    # "TLS 1.0 disabled", "the nightly batches disabled", "the old jobs retired"
    thing_before = re.compile(
        rf"\b(?:{fragments['work_nouns']})(?:\s+v?\d+(?:\.\d+)*)?\s+"
        rf"(?:(?:was|were|is|are|been|be|got|get|gets|now|all|then)\s+)?$",
        re.IGNORECASE,
    )
    # "parents ... their children": "their" points back at people of the work, not the candidate
    antecedent = re.compile(
        rf"\b(?:{fragments['audience']}|{fragments['work_people']}|parents|carers|customers)\b",
        re.I,
    )
    return WorkContext(domain_after, domain_before, work_after, thing_before, antecedent)
