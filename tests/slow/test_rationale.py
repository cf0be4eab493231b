"""Rationale flags: the labelled set, the traps one by one, and properties under Hypothesis.

The labelled set (tests/data/rationales.yaml) is synthetic: invented resumes and rationales, each
with the flags a careful human reviewer gives it. Every flag must keep precision >= 0.95 and
recall >= 0.9 on it; the assertion lists the entries it gets wrong.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_screeneval.evidence.rationale.flags import (
    ALL_FLAGS,
    CRITERION_NOT_NAMED,
    PROTECTED_ATTRIBUTE,
    TOO_LONG,
    TOO_SHORT,
    UNGROUNDED,
    criterion_named,
    rationale_findings,
    rationale_flags,
    split_sentences,
)
from pytest_screeneval.evidence.rationale.grounding import input_facts
from pytest_screeneval.evidence.rationale.protected import find_protected
from pytest_screeneval.golden.load import find_pii, load_golden_set
from pytest_screeneval.scoring.keyword import KeywordScorer

DATA = Path(__file__).parents[1] / "data" / "rationales.yaml"
MIN_PRECISION = 0.95
MIN_RECALL = 0.9

RESUME = """\
Senior Backend Engineer, Northwind Freight (2019-Present)
- Led a team of 6 engineers migrating the order pipeline to Go and Python microservices on EKS.
- Cut p95 checkout latency by 40% by redesigning the PostgreSQL schema.
- Raised uptime from 99.5% to 99.9% and ran the Black Friday load tests.
Backend Engineer, Tallow & Finch Payments (2015-2019)
- Built REST APIs in Java processing 3,000 requests per second.
Sales Development Representative, Brindle Analytics (2013-2015)
EDUCATION
B.Sc. Computer Science, University of Eastmoor
CERTIFICATIONS
Certified Kubernetes Administrator (CKA)
"""


@dataclass(frozen=True)
class Entry:
    id: str
    input_text: str
    criterion: str
    score: int
    rationale: str
    evidence: tuple[str, ...]
    expected: frozenset[str]


def _load() -> tuple[Mapping[str, str], list[Entry]]:
    data: Mapping[str, Any] = yaml.safe_load(DATA.read_text(encoding="utf-8"))
    resumes: Mapping[str, str] = data["resumes"]
    entries = [
        Entry(
            id=str(raw["id"]),
            input_text=raw["input_text"] if "input_text" in raw else resumes[raw["resume"]],
            criterion=str(raw["criterion"]),
            score=int(raw["score"]),
            rationale=str(raw["rationale"]),
            evidence=tuple(raw.get("evidence") or ()),
            expected=frozenset(raw["expected_flags"]),
        )
        for raw in data["entries"]
    ]
    return resumes, entries


RESUMES, ENTRIES = _load()


def _flags(entry: Entry) -> frozenset[str]:
    return frozenset(
        rationale_flags(
            entry.input_text, entry.criterion, entry.score, entry.rationale, entry.evidence
        )
    )


# --------------------------------------------------------------------------------------------
# The labelled set
# --------------------------------------------------------------------------------------------


def test_labelled_set_is_large_varied_and_synthetic() -> None:
    ids = [e.id for e in ENTRIES]
    assert len(ENTRIES) >= 150
    assert len(ids) == len(set(ids)), "duplicate ids in the labelled set"
    assert len(RESUMES) >= 10
    for entry in ENTRIES:
        assert entry.expected <= set(ALL_FLAGS), f"{entry.id}: unknown flag"
        assert 1 <= entry.score <= 5, f"{entry.id}: score off the 1..5 scale"
    for name, text in RESUMES.items():
        assert find_pii(text) is None, f"resume {name} holds an e-mail address or phone number"
    # every flag has positives and negatives to measure
    for flag in ALL_FLAGS:
        positives = sum(1 for e in ENTRIES if flag in e.expected)
        assert 8 <= positives < len(ENTRIES) - 8, f"{flag}: {positives} positives"


@pytest.mark.parametrize("flag", ALL_FLAGS)
def test_each_flag_meets_precision_and_recall_on_the_labelled_set(flag: str) -> None:
    got = {e.id: _flags(e) for e in ENTRIES}
    true_positives = [e for e in ENTRIES if flag in got[e.id] and flag in e.expected]
    false_positives = [e for e in ENTRIES if flag in got[e.id] and flag not in e.expected]
    false_negatives = [e for e in ENTRIES if flag not in got[e.id] and flag in e.expected]
    tp = len(true_positives)
    precision = tp / (tp + len(false_positives)) if tp + len(false_positives) else 1.0
    recall = tp / (tp + len(false_negatives)) if tp + len(false_negatives) else 1.0

    def listed(entries: Sequence[Entry]) -> str:
        return "".join(f"\n  {e.id}: {e.rationale}" for e in entries) or " none"

    message = (
        f"{flag}: precision {precision:.3f} (min {MIN_PRECISION}), recall {recall:.3f} "
        f"(min {MIN_RECALL})\nfalse positives:{listed(false_positives)}"
        f"\nfalse negatives:{listed(false_negatives)}"
    )
    assert precision >= MIN_PRECISION and recall >= MIN_RECALL, message


# --------------------------------------------------------------------------------------------
# Shape: words and sentences
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ("Strong Go skills, e.g. the EKS migration. She also led 6 engineers.", 2),
        ("She holds a B.Sc. in Computer Science. It is relevant.", 2),
        ("She holds a B.Sc. The degree is relevant. It fits. It matters.", 4),
        ("Worked with Sr. Engineer peers at St. Aldric for approx. 3.5 years.", 1),
        ("Uses Python 3.11 and Go 1.22 daily. Version 2.0 shipped.", 2),
        ("There is no Ph.D. but the M.Sc. is relevant.", 1),
        ("Latency fell 40%! Uptime rose. Was it luck? No.", 4),
        ("Strong... but narrow.", 1),
        ("A hard-wrapped sentence\nthat continues on the next line.", 1),
        ("Evidence:\n- Kafka\n- Redis\n- Go", 4),
        ("First paragraph.\n\nSecond paragraph", 2),
        ("", 0),
    ],
)
def test_sentences_are_counted_through_abbreviations_decimals_and_bullets(
    text: str, sentences: int
) -> None:
    assert len(split_sentences(text)) == sentences, split_sentences(text)


def test_too_long_starts_at_four_sentences() -> None:
    three = "Leadership is strong. She led 6 engineers at Northwind Freight. The migration shipped."
    assert TOO_LONG not in rationale_flags(RESUME, "leadership", 4, three)
    assert TOO_LONG in rationale_flags(RESUME, "leadership", 4, three + " It was on time.")


@pytest.mark.parametrize(
    ("rationale", "short"),
    [
        ("", True),
        ("   ", True),
        ("Leadership shown by leading 6 engineers well.", True),  # 7 words
        ("Leadership shown by leading 6 engineers through migration.", False),  # 8 words
        ("Leadership - strong - shown by leading engineers at Northwind.", False),  # dashes aren't
    ],
)
def test_too_short_is_fewer_than_eight_words(rationale: str, short: bool) -> None:
    assert (TOO_SHORT in rationale_flags(RESUME, "leadership", 4, rationale)) is short


def test_an_empty_rationale_is_too_short_and_names_nothing() -> None:
    assert rationale_flags(RESUME, "leadership", 3, "") == [CRITERION_NOT_NAMED, TOO_SHORT]


# --------------------------------------------------------------------------------------------
# Naming the criterion
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("criterion", "rationale", "named"),
    [
        ("system_design", "The system design is sound.", True),
        ("systemDesign", "The system design is sound.", True),
        ("system-design", "Designed the order system well.", True),
        ("system_design", "Redesigned the PostgreSQL schema.", False),
        ("communication", "She communicates clearly.", True),
        ("communication", "A good communicator.", True),
        ("communication", "She explains data well.", False),
        ("leadership", "A natural leader.", True),
        ("leadership", "Leads a team of 6.", False),
        ("reliability", "The services became more reliable.", True),
        ("testing", "Wrote 400 automated tests.", True),
        ("testing", "Gave testimony at the review.", False),
        ("technical_skills", "Tech skills are broad.", True),
        ("technical_skills", "Technical depth is broad.", False),
        ("stakeholder_management", "Managing stakeholders is a strength.", True),
        ("years_of_experience", "Nine years of backend experience.", True),
        ("data_analysis", "The database work is solid.", False),
        ("cloud_experience", "Cloud work centres on Azure.", False),
        ("knowledge_of_distributed_systems", "Her distributed systems background.", True),
    ],
)
def test_criterion_named_by_its_words_and_their_inflections(
    criterion: str, rationale: str, named: bool
) -> None:
    assert criterion_named(criterion, rationale) is named


# --------------------------------------------------------------------------------------------
# Protected attributes: the traps one by one
# --------------------------------------------------------------------------------------------

LOOK_ALIKES = [
    "She manages the stage gates and engaged every agent on the image package rollout.",
    "Fixed a race condition and a data race before the Black Friday peak.",
    "Wrote a white paper and ran whiteboard sessions on the white-label product.",
    "Introduced single sign-on and removed a single point of failure.",
    "Built the national sales team's playbook for the Southeast Asian market.",
    "Shipped native iOS and Android apps and a cloud-native platform.",
    "Replaced the team's age-old spreadsheets; the systems age well now.",
    "Patched ageing infrastructure and older Linux servers.",
    "Built marketing sites for a marriage-counselling app and a children's book publisher.",
    "Coached a coding club for children aged 11-14 and taught kids Python.",
    "Modelled disability-insurance claim durations for the insurer.",
    "Raised accessibility scores for blind and low-vision users and wheelchair users.",
    "Retired the legacy alerting rules and deprecated two services.",
    "Spawned a child process per batch and refactored the parent class.",
    "Used accent colour tokens and handled accented characters.",
    "Wrote docs in gender-neutral language.",
    "Tested man-in-the-middle attacks and read the man pages.",
    "Has a blind spot around blind SQL injection.",
    "Religiously runs 400 tests; the company was young then.",
    "Treasurer of the Eastbrook Youth Football Club.",
    "Speaks fluent Spanish and Tagalog.",
    "Integrated Visa and Mastercard payments.",
    "Took a two-year career break before rejoining.",
    "A mature, senior-level engineer who raced to fix the outage.",
    "Data broken down by age group of patients.",
    "Pushed the master branch; the minority stake was sold.",
]


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_look_alikes_are_not_protected_attributes(text: str) -> None:
    assert find_protected(text) == [], find_protected(text)


PROTECTED = [
    ("At his age he may not keep up.", "age"),
    ("She is 45 and may want a slower pace.", "age"),
    ("At 58, he is winding down.", "age"),
    ("He is in his late fifties.", "age"),
    ("A digital native who presents well.", "age"),
    ("Close to retirement, so a short tenure.", "age"),
    ("An older engineer than the rest of the team.", "age"),
    ("Born in 1975, he is steady.", "age"),
    ("He graduated in 1998.", "graduation year"),
    ("An M.Sc. from the class of 2004.", "graduation year"),
    ("The 2009 B.A. in Mathematics.", "graduation year"),
    ("A married mother of two.", "marital or family status"),
    ("Being single with no kids, she can travel.", "marital or family status"),
    ("Her husband's relocation helps.", "marital or family status"),
    ("The gap was parental leave.", "marital or family status"),
    ("Caring for her elderly mother limits evenings.", "marital or family status"),
    ("A woman with a young family.", "marital or family status"),
    ("The gap looks like maternity leave.", "pregnancy"),
    ("She mentioned being pregnant.", "pregnancy"),
    ("The candidate uses a wheelchair.", "disability or health"),
    ("He is hard of hearing.", "disability or health"),
    ("Her autism diagnosis may matter.", "disability or health"),
    ("As an immigrant he needs visa sponsorship.", "national origin or nationality"),
    ("She is a Nigerian national.", "national origin or nationality"),
    ("A native Spanish speaker.", "national origin or nationality"),
    ("Originally from India.", "national origin or nationality"),
    ("His Polish background shows.", "national origin or nationality"),
    ("A heavy foreign accent.", "accent"),
    ("His race makes him a fit.", "race or ethnicity"),
    ("As a Black woman she relates to customers.", "race or ethnicity"),
    ("Her Hispanic heritage helps.", "race or ethnicity"),
    ("A practising Muslim who needs prayer breaks.", "religion"),
    ("Volunteers at St. Brendan's Church.", "religion"),
    ("Her gender helps with rapport.", "sex, gender or sexual orientation"),
    ("As a man he brings balance.", "sex, gender or sexual orientation"),
    ("A gay man on the team.", "sex, gender or sexual orientation"),
]


@pytest.mark.parametrize(("text", "category"), PROTECTED)
def test_each_protected_category_is_found(text: str, category: str) -> None:
    categories = {match.category for match in find_protected(text)}
    assert category in categories, find_protected(text)


def test_a_negated_mention_of_a_protected_attribute_is_still_flagged() -> None:
    rationale = "Leadership is strong; the candidate's age should not count against her here."
    assert PROTECTED_ATTRIBUTE in rationale_flags(RESUME, "leadership", 5, rationale)


def test_findings_say_which_category_and_words() -> None:
    rationale = "Leadership is solid, but at his age he may not want to lead 6 engineers."
    findings = rationale_findings(RESUME, "leadership", 3, rationale)
    assert [f.detail for f in findings if f.flag == PROTECTED_ATTRIBUTE] == ['age: "at his age"']


def test_gated_matching_finds_exactly_what_trying_every_term_finds() -> None:
    from pytest_screeneval.evidence.rationale.corpus import load_corpus
    from pytest_screeneval.evidence.rationale.flags import ALL_FLAGS

    corpus = Path(__file__).resolve().parents[1] / "data" / "rationale_corpus"
    texts = [e.rationale for e in ENTRIES] + LOOK_ALIKES + [text for text, _ in PROTECTED]
    texts += [e.rationale for e in load_corpus(corpus, ALL_FLAGS)]  # both parts: no tuning here
    for text in texts:
        assert find_protected(text) == find_protected(text, gated=False), text


# --------------------------------------------------------------------------------------------
# Grounding
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rationale",
    [
        "Cloud experience: no AWS certification is listed and Azure is not mentioned.",
        "Cloud experience is thin; the resume does not mention Terraform or Ansible.",
        "Education: without a PhD or an MBA the research signal is modest.",
        "Cloud experience: she lacks any GCP or Snowflake work beyond EKS.",
        "Cloud experience: Snowflake and Airflow are not listed on the resume.",
        "Cloud experience would need Azure, which the resume does not show.",
        "Cloud experience is unclear: whether she used Datadog is never stated.",
    ],
)
def test_negated_or_hedged_mentions_are_not_claims(rationale: str) -> None:
    assert UNGROUNDED not in rationale_flags(RESUME, "cloud_experience", 3, rationale)


@pytest.mark.parametrize(
    ("rationale", "claim"),
    [
        ("Leadership: she led 6 engineers and holds the PMP certification.", "PMP"),
        ("Leadership: she led a team of 12 engineers at Northwind Freight.", "12"),
        ("Leadership: she ran the platform group at Zentrix Cloud.", "Zentrix"),
        ("Leadership: she holds an MBA and led 6 engineers.", "MBA"),
        ('Leadership: the resume says "managed 40 engineers" at Northwind.', "managed 40"),
        ("Leadership: she is 45 and may not want a startup pace.", "45"),
        ("Leadership: a Staff Engineer at Northwind Freight for years.", "Staff"),
        ("Leadership: she also deployed Kafka and dbt in production.", "Kafka"),
    ],
)
def test_claims_the_resume_does_not_support_are_ungrounded(rationale: str, claim: str) -> None:
    findings = rationale_findings(RESUME, "leadership", 4, rationale)
    details = [f.detail for f in findings if f.flag == UNGROUNDED]
    assert any(claim in detail for detail in details), details


@pytest.mark.parametrize(
    "rationale",
    [
        "Leadership: a team of six engineers at Northwind Freight through the EKS migration.",
        "Leadership: four years at Tallow & Finch Payments, then leading 6 engineers.",
        "Leadership scores 4/5: she led 6 engineers; a clear 4.",
        "Leadership: she lifted uptime 0.4 points and scaled APIs to 3k requests per second.",
        "Leadership: she moved services to Kubernetes and Amazon Web Services with 6 engineers.",
        "Leadership: as an SDR and later a Certified Kubernetes Administrator she grew fast.",
        "Leadership: her Bachelor of Science and CKA certification back a team of 6.",
        "Leadership: leading 6 engineers shows a high degree of ownership at Northwind.",
        "Leadership: leading 6 engineers on the Infrastructure as Code and DevOps work.",
    ],
)
def test_paraphrases_of_what_the_resume_says_are_grounded(rationale: str) -> None:
    findings = rationale_findings(RESUME, "leadership", 4, rationale)
    assert [f for f in findings if f.flag == UNGROUNDED] == []


def test_durations_count_between_years_and_to_present_from_the_given_year() -> None:
    resume = "Engineer, Acme Tools (2019-Present)\nAnalyst, Globex Works (2012-2016)"
    # 2019-Present seen from 2026 is six or seven years; from 2021, one or two.
    assert {6, 7} <= input_facts(resume, 2026).durations
    assert 6 not in input_facts(resume, 2021).durations
    assert {1, 2} <= input_facts(resume, 2021).durations
    assert {4, 3, 7} <= input_facts(resume, 2021).durations  # 2016-2012, 2019-2016, 2019-2012


@pytest.mark.parametrize(
    ("evidence", "grounded"),
    [
        (("Led a team of 6 engineers",), True),
        (("led  a TEAM of 6\nengineers",), True),  # whitespace and case are folded
        (('"Cut p95 checkout latency by 40%."',), True),  # quote marks and full stop trimmed
        (("Led a team of 6 engineers ... on EKS",), True),  # an elided quote
        (("Led a team of 6 engineers", "Led a team of 9 engineers"), False),
        (("Designed an event-sourced ledger",), False),
        (("",), True),  # an empty quote says nothing
    ],
)
def test_evidence_quotes_must_be_in_the_resume(evidence: tuple[str, ...], grounded: bool) -> None:
    rationale = "Leadership is shown by leading 6 engineers at Northwind Freight."
    flags = rationale_flags(RESUME, "leadership", 4, rationale, evidence)
    assert (UNGROUNDED not in flags) is grounded


# --------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------


@settings(max_examples=50, deadline=None)
@given(
    input_text=st.text(max_size=400),
    criterion=st.text(max_size=30),
    score=st.integers(min_value=1, max_value=5),
    rationale=st.text(max_size=300),
    evidence=st.lists(st.text(max_size=40), max_size=3),
)
def test_flags_are_sorted_unique_and_known(
    input_text: str, criterion: str, score: int, rationale: str, evidence: list[str]
) -> None:
    flags = rationale_flags(input_text, criterion, score, rationale, evidence)
    assert flags == sorted(set(flags))
    assert set(flags) <= set(ALL_FLAGS)


_VOCABULARY_TEXT = (
    "the candidate led a team of engineers at Northwind Freight and shipped Kafka pipelines "
    "on AWS with Kubernetes EKS Terraform Go Python Java Spring Boot PostgreSQL CKA PMP MBA "
    "B.Sc. M.Sc. Ph.D. degree certification credential certified master's bachelor's SDR "
    "Sales Development Representative Google Cloud GCP Certified Kubernetes Administrator "
    "St. e.g. approx. five years two-year 40% $3.2M 3k 1,200 2019-2023 Present no not "
    '"quoted span" Ruby on Rails SQL Server dbt Snowflake'
)
_VOCABULARY = _VOCABULARY_TEXT.split()
_WORD = st.one_of(
    st.sampled_from(_VOCABULARY),
    st.from_regex(r"[A-Z][a-z]{2,8}", fullmatch=True),
    st.from_regex(r"[a-z]{1,8}", fullmatch=True),
    st.integers(min_value=0, max_value=5000).map(str),
)
_SEPARATOR = st.sampled_from(
    [" ", " ", " ", ", ", " - ", " (", ") ", "/", "; ", ": ", "'s ", " & ", "-", '" ', ' "']
)


@st.composite
def _sentences(draw: st.DrawFn) -> str:
    """A resume-like line: vocabulary, names, numbers and punctuation, ending any way."""
    words = draw(st.lists(_WORD, min_size=1, max_size=14))
    line = words[0]
    for word in words[1:]:
        line += draw(_SEPARATOR) + word
    return line + draw(st.sampled_from([".", "", "!", "?", ")"]))


_SENTENCE = _sentences()


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sentences=st.lists(_SENTENCE, min_size=1, max_size=8),
    pick=st.integers(min_value=0),
    score=st.integers(min_value=1, max_value=5),
)
def test_a_verbatim_sentence_of_the_resume_is_never_ungrounded(
    sentences: list[str], pick: int, score: int
) -> None:
    resume = "\n".join(sentences)
    rationale = sentences[pick % len(sentences)]
    findings = rationale_findings(resume, "leadership", score, rationale, (rationale,))
    assert [f for f in findings if f.flag == UNGROUNDED] == []


@pytest.mark.parametrize("resume", sorted(RESUMES))
def test_every_line_of_a_resume_is_grounded_in_it(resume: str) -> None:
    text = RESUMES[resume]
    for line in filter(str.strip, text.splitlines()):
        findings = rationale_findings(text, "leadership", 3, line, (line,))
        assert [f for f in findings if f.flag == UNGROUNDED] == [], line


def test_the_reference_scorer_earns_no_flags_on_the_bundled_golden_set() -> None:
    """The keyword scorer's rationales quote the resume and name the criterion: no flag may
    fire on them, or ``pytest --screeneval`` on the bundled example would fail for nothing."""
    golden = load_golden_set(Path(__file__).parents[2] / "cases")
    scorer = KeywordScorer(golden.rubric)
    flagged = []
    for case in golden.cases:
        for score in scorer.score(case.input_text, golden.rubric):
            findings = rationale_findings(
                case.input_text, score.criterion, score.score, score.rationale, score.evidence
            )
            flagged.extend(f"{case.id}/{score.criterion}: {f}" for f in findings)
    assert len(golden.cases) >= 10
    assert flagged == []


def test_the_module_is_pure() -> None:
    """The rationale checks import neither pytest nor anything outside the standard library."""
    code = (
        "import sys; import pytest_screeneval.evidence.rationale.flags; "
        "assert 'pytest' not in sys.modules, 'pytest imported'"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
