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

__all__ = ["GROUP_NOUNS", "WorkContext", "about_a_group", "group_descriptors", "work_context"]


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
    # a list's next item may open with an article: "the masculine and the feminine ranges"
    join = r"(?:\s+(?:and|or)\b(?:\s+(?:the|a|an)\b)?)?"
    domain_after = re.compile(
        # up to four describing words, a list allowed: "asylum, family reunion and visa appeals";
        # a person after the noun makes it a describing word ("a female line manager")
        rf"(?:'s|')?{join}(?:,?[- ](?!(?:{not_modifier})\b)[a-z/']+{join}){{0,4}}"
        rf"[- ](?:{fragments['domain_nouns']}|{fragments['work_nouns']})\b"
        rf"(?![- ](?:{fragments['people']})\b)",
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


# --------------------------------------------------------------------------------------------
# The people of the work: one rule for every term of every category
# --------------------------------------------------------------------------------------------
#
# A protected term refers to the candidate only when it is said of the candidate or their kin.
# When it modifies or denotes a group of people the candidate works with or for ("older people",
# "trans and non-binary patients", "Muslim carers", "the disabled women in the refuge", "her
# residents") or is said of such a group ("many of her clients are autistic", "eighteen
# families, seven of them Muslim"), it describes the work. Kept as the candidate's: kin after the
# candidate's possessive ("his Muslim parents"), the candidate as the subject ("she has two
# children", "one of the few women on the team"), and the candidate named through the group
# ("... and so is she", "one of them herself"). A faith, a place of worship or a topic that is the
# object of a work verb ("taught Sikhism", "visits to the gurdwara", "partnerships with the
# mosque") or the subject of a qualification ("level two in immigration and asylum") is the work.

# plural nouns for the people a candidate works with or for (the candidate is one person)
_GROUP = (
    r"(?:people|persons|folks|clients|residents|members|families|households|pupils|students"
    r"|youths|young\s+people|adults|children|kids|teenagers|teens|babies|infants|survivors"
    r"|women|men|girls|boys|users|learners|patients|tenants|parishioners|congregations|carers"
    r"|parents|mothers|fathers|couples|jobseekers|claimants|refugees|seekers|migrants"
    r"|pensioners|veterans|volunteers|callers|visitors|customers|travell?ers|trainees|attendees"
    r"|participants|offenders|victims|widows|widowers|converts|worshippers|believers|groups"
    r"|communities|service\s+users|speakers|gypsies|muslims|christians|jews|hindus|sikhs|buddhists)"
)
GROUP_NOUNS = _GROUP  # for places.py: "families came from Syria"
# singular nouns that name a group, or a person of the work used as a modifier ("carer
# recruitment", "patient panel")
_COLLECTIVE = r"(?:community|congregation|group|cohort|population|caseload|diaspora)"
_OF_WORK = (
    r"(?:carer|client|patient|tenant|resident|pupil|student|user|learner|member|survivor"
    r"|refugee|youth|women's|men's|girls'|boys')"
)
# kin: after the candidate's possessive these are the candidate's family, not a caseload
_KIN = (
    r"(?:parents|children|kids|sons|daughters|babies|grandchildren|grandparents|siblings"
    r"|brothers|sisters|relatives|twins|in-laws)"
)
_STOP = (
    r"(?:the|a|an|her|his|their|its|to|in|for|with|she|he|they|it|is|was|were|are|has|have|had"
    r"|may|might|will|would|should|could|can|which|who|that|this|these|so|because|as|but|our"
    r"|we|us|you|your|him|them|me|like|herself|himself|themselves|own|of|at|on|from|by|than"
    r"|where|when|while|if|whether|not|must|though|although|however|yet|despite|whereas)"
)
_WORD = rf"(?!{_STOP}\b)[\w+'’-]+"
_MODIFIED = re.compile(
    # the term, up to three more describing words (a list allowed), maybe "... for/of the",
    # then the group: "trans and non-binary young people", "asylum status questions of refugee
    # families", "same-sex and single-parent foster carers", "a Somali women's group"
    rf"\+?(?:'s|'|’s)?(?:(?:\s*,|\s+(?:and|or|&))?[\s/-]+{_WORD}){{0,3}}?"
    rf"(?:\s+(?:of|for|among)\s+(?:the\s+|their\s+|our\s+)?(?:{_WORD}\s+){{0,2}}?|[\s/-]+)"
    rf"(?:{_GROUP}|{_COLLECTIVE}|{_OF_WORK}\s+{_WORD})\b",
    re.IGNORECASE,
)
_DENOTES = re.compile(rf"(?:^|.*[\s-]){_GROUP}$", re.IGNORECASE)
_QUANTITY = (
    # "more than half of them", "nearly all of whom": a share said with a bound
    r"(?:(?:more\s+than|over|under|fewer\s+than|less\s+than|about|around|nearly|almost"
    r"|roughly|just\s+over|just\s+under)\s+)?"
    r"(?:most|many|some|all|several|half|few|none|each|both|a\s+lot|lots|a\s+third|a\s+quarter"
    r"|two\s+thirds|\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
)
_FILL = r"(?:(?!(?:she|he|her|his|herself|himself|i|my)\b)[\w'-]+(?:,|\s+(?:and|or))?\s+)"
_SAID_OF = re.compile(
    # the term said of a group in its own clause: "many of her clients are autistic", "the
    # Somali women she supports are mostly Muslim", "clients fleeing religious persecution",
    # "families, seven of them Muslim", "her young people live with depression", "members
    # approaching retirement"
    rf"(?:\b{_GROUP}(?:'s|')?(?:\s+(?:she|he|they)\s+[a-z]+(?:\s+(?:with|for|to|on))?"
    rf"|\s+(?:in|at|on|from|of)\s+(?:the\s+|her\s+|his\s+|this\s+)?[\w'-]+(?:\s+[\w'-]+)?)?"
    rf",?\s+(?:(?:are|were|is|being|remain|become)\s+|(?:live|lives|living)\s+with\s+"
    rf"|(?:who|that)\s+(?!(?:she|he)\b)[a-z]+\s+|(?:fleeing|escaping|facing|with|from|approaching|nearing|reaching)\s+"
    rf"|{_QUANTITY}\s+of\s+(?:them|whom)\s+(?:(?:are|were|being|is)\s+)?)"
    # "families, seven of them Muslim", "tutors at the Leaton centre, four of them Deaf"
    rf"|\b[a-z]{{3,}}s(?:\s+(?:in|at|on|from)\s+(?:the\s+)?[\w'-]+(?:\s+[\w'-]+)?)?,\s+"
    rf"{_QUANTITY}\s+of\s+(?:them|whom)\s+(?:(?:are|were|being|is)\s+)?)"
    rf"(?:(?:mostly|mainly|largely|often|all|both|usually|predominantly|also|either|of|every"
    rf"|a|an|the|among)\s+)*{_FILL}{{0,3}}$",
    re.IGNORECASE,
)
_WORK_OBJECT = re.compile(
    # a faith, a place of worship or a topic as the object of the work: "taught Sikhism and
    # Islam", "visits to the gurdwara", "partnerships with the mosque and the synagogue", "a
    # level two in immigration and asylum"
    r"\b(?:taught|teach(?:es|ing)?|cover(?:s|ed|ing)?|plann?(?:ed|ing|s)?|deliver(?:s|ed|ing)?"
    r"|(?:visits?|trips?|outings?)\s+to|(?:partnerships?|partnered|links?|liais(?:es|ed|ing))"
    r"\s+with|work(?:s|ed|ing)?\s+with|guide\s+with"
    r"|(?:level\s+\w+|degree|diploma|certificate|qualification|accreditation|course|training)"
    r"\s+in)\s+(?:(?:the|a|local|its|their)\s+)*(?:[\w'-]+(?:,|\s+(?:and|or|&))?\s+){0,4}$"
    # a profession or a body named after the people it serves: "a teacher of the deaf", "the
    # school for the blind", "care of the elderly"
    r"|\b(?:teachers?|schools?|societ(?:y|ies)|centres?|centers?|colleges?|institutes?"
    r"|associations?|charit(?:y|ies)|clubs?|missions?|homes?|services?|care|ministry|trusts?"
    r"|leagues?|councils?|unions?)\s+(?:of|for)\s+the\s+$",
    re.IGNORECASE,
)
# a named subject, or the term modifying a unit or a noun of the work (a service with no
# service noun): "Religious Studies", "mosque and synagogue partnerships", "the maternity team",
# "breastfeeding support", "Sikh temple visits"
_SUBJECT = re.compile(
    rf"\+?(?:(?:\s*,|\s+(?:and|or|&))?[\s/-]+{_WORD}){{0,3}}?[\s/-]+(?:studies|partnerships?"
    r"|partners|links|visits|trips|outings|liaison|curriculum|syllabus|lessons?|teams?|units?"
    r"|wards?|support|pathways?|programmes?|programs?|projects?|networks?|hubs?|centres?"
    r"|centers?|champions?|leads?|guidance|training|awareness|provision|screening|sessions?"
    r"|rotas?|drop-ins?|helplines?|forums?"
    # a subject taught or studied: "Deaf culture and fingerspelling", "Jewish history"
    r"|cultures?(?![- ]fit)|histor(?:y|ies)|arts|literature|poetry)\b",
    re.IGNORECASE,
)
_TOPIC = re.compile(r"(?:cultures?|histor(?:y|ies)|arts|literature|poetry)$", re.IGNORECASE)
# a culture one is of, in or from is the candidate's own: "steeped in Sikh culture"
_IMMERSED = re.compile(r"\b(?:of|in|from|into|within)\s+(?:the\s+|a\s+|an\s+)?$", re.I)
# the candidate's own need or use of it: "her disability support", "she needs disability support"
_TEAM = re.compile(
    r"(?:teams?|units?|wards?|pathways?|programmes?|programs?|projects?|networks?|hubs?|centres?"
    r"|centers?|curriculum|syllabus|lessons?|partnerships?|partners|studies)$",
    re.IGNORECASE,
)
_OWN_NEED = re.compile(
    r"\b(?:(?:her|his|my)\s+own|(?:she|he|they)\s+(?:will\s+|would\s+|may\s+)?(?:needs?"
    r"|requires?|gets?|receives?|uses?|is\s+on|was\s+on|asked\s+for))\s+(?:(?:a|an|the|some"
    r"|extra|more)\s+)?$",
    re.IGNORECASE,
)
_OWN_USE = re.compile(
    r"\b(?:(?:her|his|my)\s+(?:own\s+)?|(?:she|he|they)\s+(?:will\s+|would\s+|may\s+)?"
    r"(?:needs?|requires?|gets?|receives?|uses?|has|had|is\s+on|was\s+on|asked\s+for)\s+"
    r"(?:(?:a|an|the|some|extra|more)\s+)?)$",
    re.IGNORECASE,
)
_CANDIDATE_IS = re.compile(
    # the candidate is the subject: "she has two children", "she is one of the few women"
    r"(?:\b(?:she|he|they|candidate|applicant)\s+(?:is|was|are|were|'s|has|have|had|being"
    r"|became|becomes|remains|raises|raised|raising)\s+(?:also\s+|still\s+|herself\s+"
    r"|himself\s+)?(?:one\s+of\s+|among\s+|part\s+of\s+)?|\bas\s+(?:one\s+of|among)\s+)"
    r"(?:(?:the|a|an|\d+|two|three|four|five|several|few|many|only|young|grown|small|adult)\s+)*$",
    re.IGNORECASE,
)
_POSSESSIVE = re.compile(
    r"\b(?:her|his|their|my)\s+(?:own\s+)?(?:(?:two|three|four|young|grown|adult|little"
    r"|elderly|older|ageing|aging|late)\s+)*$",
    re.IGNORECASE,
)
_OWNER = re.compile(r"(?:her|his|their|my)\s", re.IGNORECASE)
_COMPOSITION = re.compile(r"\b(?:all|mostly|only|entirely|exclusively)\s+$|^(?:all|mostly)\s", re.I)
_OWN_AFTER = re.compile(r"\s+of\s+(?:her|his|their)\s+own\b", re.IGNORECASE)
# the candidate named through the group: "... and so is she", "one of them herself"
_THROUGH_GROUP = re.compile(
    r"\b(?:(?:and|as)\s+so\s+(?:is|was|are|does|did)\s+(?:she|he|they)"
    r"|so\s+(?:is|was)\s+(?:she|he)\b|as\s+(?:is|was)\s+(?:she|he)\b"
    r"|one\s+of\s+them\s+(?:her|him|them)sel(?:f|ves)|(?:she|he)\s+(?:is|was|'s)\s+one\s+of\s+them"
    r"|(?:she|he)\s+(?:is|was)\s+too\b|(?:her|him)self\s+included|including\s+(?:her|him)self"
    r"|the\s+same\s+\w+\s+as\s+(?:her|him)\b"
    r"|\b(?:women|men|people|mothers|fathers|parents|girls|boys)\s+like\s+(?:her|him)(?:self)?\b)",
    re.IGNORECASE,
)
_SENTENCE_EDGE = re.compile(r"[.;!?\n]")
_CLAUSE_EDGE = re.compile(r"[.;:!?\n]|\s[-–]\s|,\s+(?:but|so|and|which|though|although)\b")
_WINDOW = 90


def about_a_group(text: str, start: int, end: int) -> bool | None:
    """Whether the term at ``text[start:end]`` is about a group of the work (True), about the
    candidate named through that group (False: "... and so is she") or their own use of a
    service ("she needs disability support"), or neither (None)."""
    left = text[max(0, start - _WINDOW) : start]
    if _SUBJECT.match(text, end) and _OWN_NEED.search(left):
        return False
    group = _group_of_the_work(text, left, start, end)
    if not group:
        return None
    sentence_start = max((m.end() for m in _SENTENCE_EDGE.finditer(left)), default=0)
    after = text[end : end + _WINDOW]
    edge = _SENTENCE_EDGE.search(after)
    sentence = left[sentence_start:] + text[start:end] + (after[: edge.start()] if edge else after)
    return _THROUGH_GROUP.search(sentence) is None


def _group_of_the_work(text: str, left: str, start: int, end: int) -> bool:
    if _OWNER.match(text, start) and not text[start:end].lower().startswith("their"):
        return False  # "her wife", "his partner": the candidate's own
    clause = left[max((m.end() for m in _CLAUSE_EDGE.finditer(left)), default=0) :]
    if _SAID_OF.search(clause) or _WORK_OBJECT.search(clause):
        return True
    unit = _SUBJECT.match(text, end)
    if unit and _TOPIC.search(unit.group(0)) and _IMMERSED.search(clause):
        unit = None
    if unit and (_TEAM.search(unit.group(0)) or not _OWN_USE.search(clause)):
        return True  # "her maternity team" is the work, "her disability support" her own
    modified = _MODIFIED.match(text, end)
    phrase = text[start : modified.end()] if modified else text[start:end]
    if not modified and not _DENOTES.match(phrase):
        return False
    if not modified and (_COMPOSITION.search(clause) or _COMPOSITION.match(phrase + " ")):
        return False  # "the directors, who are all men": the sex of those around the candidate
    if _CANDIDATE_IS.search(clause) or _OWN_AFTER.match(text, modified.end() if modified else end):
        return False
    kin = re.search(rf"\b{_KIN}$", phrase, re.IGNORECASE) is not None
    owner = _POSSESSIVE.search(clause) or _OWNER.match(phrase)
    if kin and owner:
        # "their babies" after people of the work ("young mothers and their babies") is theirs
        return owner.group(0).lower().lstrip().startswith("their") and bool(
            re.search(rf"\b{_GROUP}\b", clause, re.IGNORECASE)
        )
    # kin with no owner named, kept at home or had by the candidate ("with two small children
    # at home she ...", "she has three kids"): hers, not a group; the term's own rules decide
    hers = kin and not owner and (_AT_HOME.match(text, end) or _CANDIDATE_HAS.search(clause))
    return not hers


_AT_HOME = re.compile(r"\s+(?:[\w-]+\s+){0,2}?(?:at|back)\s+home\b", re.IGNORECASE)
_CANDIDATE_HAS = re.compile(
    r"\b(?:she|he|they)\s+(?:has|have|had|is\s+raising|raises)\s+(?:got\s+)?(?:[\w-]+\s+){0,3}$"
    # the parents who raised the candidate: "raised by Deaf parents", "born to Sikh parents"
    r"|\b(?:raised|brought\s+up|born|adopted)\s+(?:by|to)\s+(?:two\s+|a\s+|an\s+)?$",
    re.IGNORECASE,
)


# a capitalised word shaped like a people's name ("Sudanese", "Eritrean", "Bengali", "Polish") or
# a colour said of people: in a group of the work it describes the clients, it claims nothing
_DESCRIPTOR = re.compile(
    r"\b(?:[A-Z][a-z]+(?:ese|ian|ean|an|ish|i|ic)|Black|White|Brown)\b(?!['’]s\b)"
)


def group_descriptors(text: str) -> list[tuple[int, int]]:
    """The spans of people's-name words that describe a group of the work ("Sudanese families",
    "clients are mostly Eritrean or Afghan"): no claims about the resume."""
    spans: list[tuple[int, int]] = []
    for match in _DESCRIPTOR.finditer(text):
        start, end = match.span()
        if about_a_group(text, start, end) is not None:  # the work, or the candidate via it
            spans.append((start, end))
    return spans
