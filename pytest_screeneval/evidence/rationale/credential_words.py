"""Credentials a rationale names in plain words: "a signal maintenance testing licence", "a
diploma in orthodontics", "a chartered environmentalist", "a certified safety assessor", "the
guild's concert tuning exam".

The grounding lexicon knows named credentials (CISSP, ACCA); a generic "certificate" or
"licence" it grounds by any credential of the resume. But a credential described in words is a
particular one: most of the words that describe it must be words of the resume's credential
lines (its
QUALIFICATIONS, CERTIFICATIONS or EDUCATION section, or a line that names a licence,
certificate, diploma or chartered status), so "a rigging certificate" is no claim that "rigging"
among the skills bears out, while "the BASIS crop protection certificate" is one that "BASIS
Certificate in Crop Protection" does. A word is matched without its inflection ("testing" and
"tested" are one), and a short form the resume spells out is its own ("DET"). "Chartered" or
"certified" said in lower case is a status the resume must give, with most of the words after
it, or (when chartered) by its short form ("CEng").

Not claims: a credential in a negated or hypothetical clause ("no drone licence", "would need an
IV sedation certificate"), in quotes, or in a protected reference.
"""

from __future__ import annotations

import re
from functools import lru_cache

from pytest_screeneval.evidence.rationale.claim_context import Context
from pytest_screeneval.evidence.rationale.resume_facts import lookup_key, spelled_out

__all__ = ["credential_words", "unsupported_credentials"]

_NOUN = (
    r"(?:licen[cs]es?|certificates?|certification|diplomas?|accreditation|qualification"
    r"|exams?|examinations?)"
    # a noun of the work after it makes it a describing word: "the MEDDIC qualification
    # framework", "the exam board", "certificate management"
    r"(?![\s-]+(?:framework|process|criteria|stages?|rates?|results?|boards?|questions?|papers?"
    r"|season|periods?|calls?|method\w*|models?|management|renewals?|keys?|costs?|fees?)\b)"
)
# "a pyrotechnics licence", "the BASIS crop protection certificate", "a diploma in orthodontics"
_DESCRIBED = re.compile(
    r"\b(?:a|an|the|her|his|their)\s+((?:[\w'-]+\s+){1,4}?)" + _NOUN + r"\b"
    r"|\b(?:a|an)\s+" + _NOUN + r"\s+(?:in|of)\s+((?:[a-z][\w'-]*)(?:\s+[a-z][\w'-]*){0,2})",
    re.IGNORECASE,
)
# "a chartered environmentalist", "a certified safety assessor": a status in lower case
_CHARTERED = re.compile(r"\b(?:a|an)\s+((?:chartered|certified)(?:\s+[a-z][\w-]*){1,3})")
# the resume's lines that give credentials, and the headings of its credential sections
_MAYBE = re.compile(r"licen|certif|diploma|accredit|chartered|qualification|exam", re.IGNORECASE)
_CREDENTIAL_LINE = re.compile(
    r"licen[cs]|certif|diploma|accredit|chartered|registered|qualified|member|fellow|award",
    re.IGNORECASE,
)
_CREDENTIAL_HEADING = re.compile(
    r"qualif|certif|licen[cs]|education|training|accredit|membership|registration", re.IGNORECASE
)
_HEADING = re.compile(r"^[^\S\n]*[A-Z][A-Z &/()-]{3,}[^\S\n]*$")
_WORD = re.compile(r"[A-Za-z][\w'-]*")
# describing words that tell no credential apart ("a full UK driving licence", "a valid
# certificate"), and words that end the name ("holds ... and a CSCS card")
_GENERIC = frozenset(
    "a an the her his their its this that full valid current clean relevant recognised"  # noqa: SIM905
    " recognized formal professional uk national new basic also and or of in for with as"
    " such any one two three level own first second right good strong solid appropriate"
    " necessary required relevant key core main final entrance".split()
)
_STOP = frozenset("with as through from at by for and or in on to which who".split())  # noqa: SIM905
_ENDINGS = ("ing", "ed", "es", "s")  # inflections: "testing" and "tested" are one word
_MIN_STEM = 4


@lru_cache(maxsize=512)
def credential_words(resume: str) -> frozenset[str]:
    """The words of the resume's credential lines, in lookup form without inflections."""
    words: set[str] = set()
    in_section = False
    for line in resume.splitlines():
        if _HEADING.match(line):
            in_section = bool(_CREDENTIAL_HEADING.search(line))
            continue
        if in_section or _CREDENTIAL_LINE.search(line):
            words.update(_key(word) for word in _WORD.findall(line))
    return frozenset(words)


def _short_chartered(resume: str, title: str) -> bool:
    """Whether the resume gives a chartered status by its short form: "CEng" for a chartered
    engineer, "CEnv" for a chartered environmentalist."""
    return re.search(rf"\bC{re.escape(title[:3].capitalize())}\b", resume) is not None


def _key(word: str) -> str:
    key = lookup_key(word)
    for ending in _ENDINGS:
        if key.endswith(ending) and len(key) - len(ending) >= _MIN_STEM:
            return key[: -len(ending)]
    return key


def unsupported_credentials(context: Context) -> list[str]:
    """One problem for each credential described in words that the resume's credential lines do
    not describe."""
    text = context.text
    if not _MAYBE.search(text):
        return []
    held = credential_words(context.facts.text)
    problems: list[str] = []
    for match in (*_DESCRIBED.finditer(text), *_CHARTERED.finditer(text)):
        start, end = match.span()
        if not context.said_plainly(start, end):
            continue
        described = next(group for group in match.groups() if group is not None)
        words: list[str] = []
        for word in _WORD.findall(described):
            if word.lower() in _STOP:
                break
            words.append(word)
        chartered = match.re is _CHARTERED
        if chartered and len(words) > 1 and _short_chartered(context.facts.text, words[1]):
            continue  # "a chartered engineer" for "CEng", "a chartered scientist" for "CSci"
        if chartered and _key(words[0]) not in held:
            problems.append(f"credential not in the resume: {match.group(0).strip()!r}")
            continue
        said = [w for w in words[1:] if w.lower() not in _GENERIC] if chartered else words
        said = [w for w in said if w.lower() not in _GENERIC]
        # a short form the resume spells out ("the DET diploma") is one of its credentials
        missing = [w for w in said if _key(w) not in held and not spelled_out(context.facts, w)]
        # most of the describing words new: another credential ("a signal maintenance testing
        # licence"); one new word beside the resume's own is a description of it ("the Level 5
        # DET teaching diploma")
        if said and 2 * len(missing) > len(said):
            problems.append(f"credential not in the resume: {match.group(0).strip()!r}")
    return problems
